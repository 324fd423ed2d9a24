// Comparing a result with an oracle (OpenCV, or a plain reference) that it
// may differ from by one level: besides the largest difference, the share
// of bytes that differ and the mean signed difference are bounded, so that a
// systematic error within one level (truncating where the oracle rounds,
// +-0.5 offsets) fails instead of passing as "within one".
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cudafx/image.hpp"

namespace testing_support {

// Statistics of got - want over the pixel bytes (padding excluded).
struct OracleStats {
  size_t bytes = 0;
  size_t differing = 0;
  long long sum_signed = 0;  // sum of got - want
  int max_abs = 0;

  void add(int got, int want);
  double share_differing() const { return bytes ? double(differing) / double(bytes) : 0.0; }
  double mean_signed() const { return bytes ? double(sum_signed) / double(bytes) : 0.0; }
  std::string text() const;  // "max |d| 1, 0.410 % of 5120 bytes differ, mean d -0.00120"
};

OracleStats oracle_stats(const cudafx::ImageView& got, const cudafx::ImageView& want);

// What a comparison allows: |got - want| <= max_abs everywhere, at most
// share_differing of the bytes differing, and the mean of got - want within
// [mean_min, mean_max]. The mean's range may be lopsided where the oracle
// itself leans one way (cv::resize's 8-bit path rounds low).
//
// Small images carry little evidence: a 1x1 RGB frame with one byte off by
// one is 33 % differing. So the share and the mean are checked only from
// kOracleMinBytes bytes up; below that only max_abs holds. Every test that
// compares small frames also compares larger ones, where a truncation bug
// fails.
struct OracleBounds {
  int max_abs;
  double share_differing;
  double mean_min, mean_max;
};
constexpr size_t kOracleMinBytes = 1000;

// The bounds, from the figures of every comparison in the suite (run a test
// with CUDAFX_ORACLE_STATS=1 to print them) and of a simulated truncation;
// oracle_compare.cpp has the numbers.
//
//   kGaussianBounds: cudagaussian against gaussian_oracle (cv::GaussianBlur
//     in float, rounded).
//   kResizeBounds: bilinear and bicubic against resize_oracle (cv::resize's
//     8-bit fixed-point path).
//   kResizeReferenceBounds: the chroma siting test's double-precision
//     reference, rounded to nearest.
//   kExactBounds: nothing may differ (nearest neighbour).
extern const OracleBounds kGaussianBounds;
extern const OracleBounds kResizeBounds;
extern const OracleBounds kResizeReferenceBounds;
extern const OracleBounds kExactBounds;

::testing::AssertionResult near_oracle(const OracleStats& s, const OracleBounds& b);

// For EXPECT_PRED_FORMAT3: names the expressions and all three figures.
::testing::AssertionResult near_oracle_format(const char* got_expr, const char* want_expr,
                                              const char* bounds_expr,
                                              const cudafx::ImageView& got,
                                              const cudafx::ImageView& want,
                                              const OracleBounds& bounds);

}  // namespace testing_support

// EXPECT_NEAR_ORACLE(got.view(), want.view(), kGaussianBounds) << "context";
#define EXPECT_NEAR_ORACLE(got, want, bounds) \
  EXPECT_PRED_FORMAT3(::testing_support::near_oracle_format, got, want, bounds)
