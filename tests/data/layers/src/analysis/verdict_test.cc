// Tests beside the code are exempt.
#include "render/good.h"
