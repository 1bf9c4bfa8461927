// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Number formatting that reproduces what `nsys stats --format csv` prints: its report scripts
// compute values in SQLite (round(x, 1) rounds half away from zero) and write them with Python's
// csv module (floats as repr(), the shortest string that reads back to the same double).
#pragma once

#include <string>

namespace cpprof::render {

// Python's repr(float): "616060.0", "0.1", "1e-05", "1.5e+16", "inf", "nan".
std::string PyRepr(double x);

// repr(round(x, 1)) as SQLite computes round(): the exact binary value of x rounded to one
// decimal, ties away from zero.
std::string PyRound1(double x);

// nsys's unit conversion of a byte count to MB (1e6 bytes) with 3 decimals ("17.405").
std::string MegabytesFixed3(double bytes);

}  // namespace cpprof::render
