// Allowed: render uses model.
#include "model/report.h"
