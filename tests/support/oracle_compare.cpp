#include "oracle_compare.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace testing_support {

using namespace cudafx;

// How the bounds were chosen (CPU backend; the CUDA backend equals it byte
// for byte). "Measured" is the worst comparison of at least kOracleMinBytes
// bytes in the suite as of this change; "truncation" is the same code
// flooring where it rounds, simulated in two ways: (a) the suite run against
// oracles that floor their float results (every comparison then fails), (b)
// floor(cv::resize in float) against cv::resize in 8 bits, for the resize
// tests' sizes in 1, 3 and 4 channels.
//
// Gaussian: measured share 0.031 % (1 byte of 3200), mean -0.0003; the
//   oracle rounds a float result as the op does, so they differ only where
//   float sums fall either side of .5. Truncation: share 37-53 %, mean
//   +-(0.37-0.53). Bounds 1 % and +-0.01: 30x the measured figures, 37x
//   below truncation.
// Resize against cv::resize, 8-bit: cv's fixed-point path rounds low, so our
//   correctly rounded result is often one above it. Measured: bilinear
//   share up to 13.75 %, mean +0.000..+0.1375 (always >= 0); bicubic up to
//   8.8 %, mean -0.023..+0.088. Truncation (b): share 25-50 %, mean -0.25 to
//   -0.52 (the least, 25 %, on the x3 bilinear upscale); rounding up
//   instead would move the mean by about +0.5. Bounds: share 20 %
//   (1.45x the measured), mean -0.05..+0.20 (1.45x above, 2x below the
//   measured; a truncation's -0.25 is 5x beyond -0.05).
// Resize chroma against the siting test's double reference: measured share
//   up to 3.4 %, mean -0.017..+0.003. Bounds 10 % and +-0.05; truncation
//   there differs on about half the bytes, mean about -0.5.
const OracleBounds kGaussianBounds{1, 0.01, -0.01, 0.01};
const OracleBounds kResizeBounds{1, 0.20, -0.05, 0.20};
const OracleBounds kResizeReferenceBounds{1, 0.10, -0.05, 0.05};
const OracleBounds kExactBounds{0, 0.0, 0.0, 0.0};

void OracleStats::add(int got, int want) {
  const int d = got - want;
  bytes++;
  differing += d != 0;
  sum_signed += d;
  max_abs = std::max(max_abs, d < 0 ? -d : d);
}

std::string OracleStats::text() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "max |d| %d, %.3f %% of %zu bytes differ, mean d %+.5f",
                max_abs, 100.0 * share_differing(), bytes, mean_signed());
  return buf;
}

OracleStats oracle_stats(const ImageView& got, const ImageView& want) {
  OracleStats s;
  const FormatInfo& fi = format_info(got.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView a = got.plane(i), b = want.plane(i);
    for (int y = 0; y < a.height; y++) {
      const uint8_t* ra = a.data + y * a.pitch;
      const uint8_t* rb = b.data + y * b.pitch;
      for (size_t x = 0; x < a.row_bytes(); x++)
        s.add(ra[x], rb[x]);
    }
  }
  return s;
}

::testing::AssertionResult near_oracle(const OracleStats& s, const OracleBounds& b) {
  if (std::getenv("CUDAFX_ORACLE_STATS")) {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    std::fprintf(stderr, "oracle-stats %s.%s bounds %d/%g/%g/%g: %zu %zu %lld %d\n",
                 t ? t->test_suite_name() : "?", t ? t->name() : "?", b.max_abs,
                 b.share_differing, b.mean_min, b.mean_max, s.bytes, s.differing, s.sum_signed,
                 s.max_abs);
  }
  std::ostringstream why;
  if (s.max_abs > b.max_abs)
    why << "max |d| " << s.max_abs << " > " << b.max_abs << "; ";
  if (s.bytes >= kOracleMinBytes) {
    if (s.share_differing() > b.share_differing)
      why << "share differing " << 100.0 * s.share_differing() << " % > "
          << 100.0 * b.share_differing << " %; ";
    const double m = s.mean_signed();
    if (m < b.mean_min || m > b.mean_max)
      why << "mean d " << m << " outside [" << b.mean_min << ", " << b.mean_max << "]; ";
  }
  if (why.str().empty())
    return ::testing::AssertionSuccess() << s.text();
  return ::testing::AssertionFailure() << why.str() << "got " << s.text();
}

::testing::AssertionResult near_oracle_format(const char* got_expr, const char* want_expr,
                                              const char* bounds_expr, const ImageView& got,
                                              const ImageView& want, const OracleBounds& bounds) {
  const ::testing::AssertionResult r = near_oracle(oracle_stats(got, want), bounds);
  if (r)
    return r;
  return ::testing::AssertionFailure() << got_expr << " against " << want_expr << " beyond "
                                       << bounds_expr << ": " << r.message();
}

}  // namespace testing_support
