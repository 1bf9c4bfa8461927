// Not allowed: render may not use analysis.
#include <vector>
#include "model/report.h"
  #include "analysis/verdict.h"
