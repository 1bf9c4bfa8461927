// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/pyformat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cpprof::render {
namespace {

// Expected strings are what CPython prints for repr(x).
TEST(PyRepr, MatchesPython) {
  EXPECT_EQ(PyRepr(616060.0), "616060.0");
  EXPECT_EQ(PyRepr(1478756.5), "1478756.5");
  EXPECT_EQ(PyRepr(0.1), "0.1");
  EXPECT_EQ(PyRepr(0.0001), "0.0001");
  EXPECT_EQ(PyRepr(0.00001), "1e-05");
  EXPECT_EQ(PyRepr(1.5e-7), "1.5e-07");
  EXPECT_EQ(PyRepr(1e16), "1e+16");
  EXPECT_EQ(PyRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(PyRepr(12345678901234567.0), "1.2345678901234568e+16");
  EXPECT_EQ(PyRepr(-2.5), "-2.5");
  EXPECT_EQ(PyRepr(0.0), "0.0");
  EXPECT_EQ(PyRepr(-0.0), "-0.0");
  EXPECT_EQ(PyRepr(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(PyRepr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(PyRepr(std::nan("")), "nan");
}

// SQLite's round(x, 1) rounds the exact binary value, ties away from zero; Python then prints
// the shortest repr of the result.
TEST(PyRound1, RoundsLikeSqlite) {
  EXPECT_EQ(PyRound1(1061721.6666666667), "1061721.7");
  EXPECT_EQ(PyRound1(1234.25), "1234.3");  // exact tie: away from zero (Python's round gives .2)
  EXPECT_EQ(PyRound1(1234.75), "1234.8");
  EXPECT_EQ(PyRound1(-1234.25), "-1234.3");
  EXPECT_EQ(PyRound1(0.15), "0.1");  // 0.15 is 0.1499999... in binary
  EXPECT_EQ(PyRound1(0.35), "0.3");  // 0.34999...
  EXPECT_EQ(PyRound1(2.675), "2.7");
  EXPECT_EQ(PyRound1(5.0), "5.0");
  EXPECT_EQ(PyRound1(0.04), "0.0");
  EXPECT_EQ(PyRound1(99.96), "100.0");
  EXPECT_EQ(PyRound1(2e16), "2e+16");  // beyond the fixed range: repr of the value
}

TEST(MegabytesFixed3, ThreeDecimals) {
  EXPECT_EQ(MegabytesFixed3(17405000.0), "17.405");
  EXPECT_EQ(MegabytesFixed3(0.0), "0.000");
  EXPECT_EQ(MegabytesFixed3(8388608.0), "8.389");
}

}  // namespace
}  // namespace cpprof::render
