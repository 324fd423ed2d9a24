// The resize op against cv::resize (the oracle) on the CPU backend, chroma
// siting against a double-precision reference, and the CUDA backend against
// the CPU backend, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <memory>
#include <tuple>

#include "cudafx/resize.hpp"
#include "cudafx/resize_math.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "support/op_runner.hpp"
#include "support/oracle_compare.hpp"
#include "support/resize_oracle.hpp"
#include "support/testdata.hpp"

using namespace cudafx;
using testing_support::HostImage;

namespace {

using testing_support::kAllFormats;
const ResizeMethod kAllMethods[] = {ResizeMethod::Nearest, ResizeMethod::Bilinear,
                                    ResizeMethod::Bicubic};

bool subsampled(PixelFormat f) { return f == PixelFormat::I420 || f == PixelFormat::NV12; }

HostImage oracle(const HostImage& src, const ImageDesc& dst_desc, ResizeMethod m) {
  return testing_support::resize_oracle(src, dst_desc, m);
}

HostImage run_cpu(const HostImage& src, const ImageDesc& dst_desc, const ResizeParams& p,
                  size_t pad = 0) {
  std::unique_ptr<ResizeOp> op;
  const Status s = ResizeOp::create(Backend::Cpu, src.desc(), dst_desc, p, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return op ? testing_support::run_on_host(*op, src, dst_desc, pad) : HostImage(dst_desc, pad);
}

HostImage run_cuda(const HostImage& src, const ImageDesc& dst_desc, const ResizeParams& p,
                   size_t align) {
  std::unique_ptr<ResizeOp> op;
  const Status s = ResizeOp::create(Backend::Cuda, src.desc(), dst_desc, p, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return op ? testing_support::run_on_device(*op, src, dst_desc, align) : HostImage(dst_desc);
}

// Source and destination sizes: upscales by 1.5, 2, 3 and 4, downscales, odd
// sizes, and degenerate ones.
const int kSizes[][4] = {
    {64, 48, 96, 72},     // x1.5
    {173, 97, 346, 194},  // x2, odd source
    {41, 29, 123, 87},    // x3
    {37, 23, 148, 92},    // x4
    {160, 120, 80, 60},   // /2
    {173, 97, 64, 35},    // arbitrary downscale
    {200, 150, 57, 41},   // strong downscale (filter window restarts)
    {30, 20, 77, 53},     // non-integer upscale, different factors an axis
    {97, 41, 40, 90},     // down across, up down the image
    {3, 2, 10, 9},        // narrower than the bicubic window (taps clamped one by one)
    {1, 1, 7, 5},         // a single pixel
    {9, 7, 1, 1},         // to a single pixel
};

std::string sizes_text(const int* s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "->" + std::to_string(s[2]) + "x" +
         std::to_string(s[3]);
}

}  // namespace

TEST(ResizePlan, RejectsBadRequests) {
  ResizePlan plan;
  EXPECT_EQ(plan_resize({PixelFormat::RGBA, 16, 16}, {PixelFormat::NV12, 32, 32}, {}, &plan)
                .message(),
            "resize: source and destination formats differ (RGBA vs NV12)");
  EXPECT_EQ(plan_resize({PixelFormat::RGBA, 0, 16}, {PixelFormat::RGBA, 32, 32}, {}, &plan)
                .message(),
            "resize: sizes must be 1..32768 on a side, got 0x16 -> 32x32");
  EXPECT_FALSE(
      plan_resize({PixelFormat::RGBA, 16, 16}, {PixelFormat::RGBA, 40000, 32}, {}, &plan).is_ok());
  ResizeParams bad;
  bad.method = static_cast<ResizeMethod>(7);
  EXPECT_EQ(plan_resize({PixelFormat::RGBA, 16, 16}, {PixelFormat::RGBA, 32, 32}, bad, &plan)
                .message(),
            "resize: unknown method");
}

TEST(ResizePlan, WeightsSumToOneAndTapsAsDocumented) {
  ResizePlan plan;
  ResizeParams p;
  p.method = ResizeMethod::Bicubic;
  ASSERT_TRUE(plan_resize({PixelFormat::I420, 100, 60}, {PixelFormat::I420, 250, 90}, p, &plan)
                  .is_ok());
  EXPECT_EQ(plan.planes[1].dst_width, 125);
  EXPECT_EQ(plan.planes[0].x.taps, 4);
  for (int i = 0; i < plan.n_planes; i++) {
    for (const ResizeAxis* ax : {&plan.planes[i].x, &plan.planes[i].y}) {
      for (const ResizeTap& t : ax->tap) {
        int sum = 0;
        for (int k = 0; k < ax->taps; k++)
          sum += t.w[k];
        EXPECT_EQ(sum, 1 << kResizeCoefBits);
      }
    }
  }
  // Every window lies inside its source (the kernels read taps unclamped).
  for (int i = 0; i < plan.n_planes; i++)
    for (const ResizeAxis* ax : {&plan.planes[i].x, &plan.planes[i].y})
      for (const ResizeTap& t : ax->tap) {
        EXPECT_GE(t.base, 0);
        EXPECT_LE(t.base + ax->taps, ax->src_size);
      }
  // x2.5 bicubic: output 0 sits at source -0.3, so its taps would be samples
  // -2..1; -2, -1 and 0 all read sample 0, so the window starts at 0 with
  // their weights summed, and the last slot is empty.
  const ResizeTap& t0 = plan.planes[0].x.tap[0];
  EXPECT_EQ(t0.base, 0);
  EXPECT_EQ(t0.w[2], 0);
  EXPECT_EQ(t0.w[3], 0);
  // The mirror case at the right edge: the window ends at the last sample.
  const ResizeTap& tn = plan.planes[0].x.tap[249];
  EXPECT_EQ(tn.base, 96);
  EXPECT_EQ(tn.w[0], 0);
  // A source narrower than the window keeps the clamped form: output 0 of
  // 3 -> 7 sits at -0.29, taps from -2.
  ASSERT_TRUE(plan_resize({PixelFormat::GRAY8, 3, 3}, {PixelFormat::GRAY8, 7, 7}, p, &plan).is_ok());
  EXPECT_EQ(plan.planes[0].x.tap[0].base, -2);
  p.method = ResizeMethod::Nearest;
  ASSERT_TRUE(plan_resize({PixelFormat::GRAY8, 10, 10}, {PixelFormat::GRAY8, 4, 30}, p, &plan)
                  .is_ok());
  EXPECT_EQ(plan.planes[0].x.tap[3].base, 7);  // floor(3 * 2.5)
  EXPECT_EQ(plan.planes[0].y.tap[29].base, 9);
}

// exact_up (resize.hpp) marks the nearest and bilinear upscales by exactly 2
// and 4, and nothing else: the CUDA backend then uses their formulas instead
// of the taps.
TEST(ResizePlan, ExactUpscaleFactors) {
  const auto factors = [](PixelFormat f, int sw, int sh, int dw, int dh, ResizeMethod m) {
    ResizePlan plan;
    ResizeParams p;
    p.method = m;
    EXPECT_TRUE(plan_resize({f, sw, sh}, {f, dw, dh}, p, &plan).is_ok());
    return std::make_pair(plan.planes[0].x.exact_up, plan.planes[0].y.exact_up);
  };
  using P = std::pair<int, int>;
  const ResizeMethod bl = ResizeMethod::Bilinear;
  EXPECT_EQ(factors(PixelFormat::RGBA, 173, 97, 346, 194, bl), P(2, 2));
  EXPECT_EQ(factors(PixelFormat::RGBA, 37, 23, 148, 92, bl), P(4, 4));
  EXPECT_EQ(factors(PixelFormat::RGBA, 37, 23, 74, 92, bl), P(2, 4));
  EXPECT_EQ(factors(PixelFormat::RGBA, 1, 1, 2, 4, bl), P(2, 4));
  EXPECT_EQ(factors(PixelFormat::RGBA, 41, 29, 123, 87, bl), P(0, 0));      // x3
  EXPECT_EQ(factors(PixelFormat::RGBA, 64, 48, 96, 72, bl), P(0, 0));       // x1.5
  EXPECT_EQ(factors(PixelFormat::RGBA, 160, 120, 80, 60, bl), P(0, 0));     // /2
  EXPECT_EQ(factors(PixelFormat::RGBA, 173, 97, 347, 194, bl), P(0, 2));    // 1 short of x2
  EXPECT_EQ(factors(PixelFormat::RGBA, 173, 97, 346, 194, ResizeMethod::Bicubic), P(0, 0));
  const ResizeMethod nn = ResizeMethod::Nearest;
  EXPECT_EQ(factors(PixelFormat::RGBA, 173, 97, 346, 194, nn), P(2, 2));
  EXPECT_EQ(factors(PixelFormat::RGBA, 37, 23, 148, 92, nn), P(4, 4));
  EXPECT_EQ(factors(PixelFormat::RGBA, 173, 97, 347, 194, nn), P(0, 2));
  EXPECT_EQ(factors(PixelFormat::RGBA, 41, 29, 123, 87, nn), P(0, 0));
  // The taps of x2, as the constants say: output 0 is source 0 alone (its
  // left tap clamped), output 1 is 3/4 of source 0 and 1/4 of source 1.
  ResizePlan plan;
  ASSERT_TRUE(plan_resize({PixelFormat::GRAY8, 5, 5}, {PixelFormat::GRAY8, 10, 10}, {}, &plan)
                  .is_ok());
  const ResizeTap& t1 = plan.planes[0].x.tap[1];
  EXPECT_EQ(t1.base, 0);
  EXPECT_EQ(t1.w[0], 1536);
  EXPECT_EQ(t1.w[1], 512);
}

// period (resize.hpp) marks the axes whose taps repeat, Q output samples
// every P source samples, with Q and P up to 4, for every method; the CUDA
// backend then runs bilinear and bicubic 4-byte pixels from the period.
TEST(ResizePlan, PeriodicAxes) {
  struct Want {
    int sw, sh, dw, dh, qx, px, qy, py;
  };
  const Want cases[] = {
      {173, 97, 346, 194, 2, 1, 2, 1},   // x2, odd source
      {37, 23, 148, 92, 4, 1, 4, 1},     // x4
      {41, 29, 123, 87, 3, 1, 3, 1},     // x3
      {64, 48, 96, 72, 3, 2, 3, 2},      // x1.5
      {160, 120, 80, 60, 1, 2, 1, 2},    // /2
      {99, 60, 66, 40, 2, 3, 2, 3},      // x2/3
      {173, 97, 347, 194, 0, 0, 2, 1},   // 1 short of x2 across
      {30, 20, 77, 53, 0, 0, 0, 0},      // x2.57, x2.65
      {200, 150, 40, 30, 0, 0, 0, 0},    // /5: P > 4
      {3840, 2160, 1920, 1080, 1, 2, 1, 2},
      {1280, 720, 3840, 2160, 3, 1, 3, 1},
      {2560, 1440, 3840, 2160, 3, 2, 3, 2},
  };
  for (ResizeMethod m : kAllMethods) {
    for (const Want& c : cases) {
      ResizePlan plan;
      ResizeParams p;
      p.method = m;
      ASSERT_TRUE(plan_resize({PixelFormat::RGBA, c.sw, c.sh}, {PixelFormat::RGBA, c.dw, c.dh}, p,
                              &plan)
                      .is_ok());
      const ResizePlanePlan& pp = plan.planes[0];
      const std::string what = std::string(resize_method_name(m)) + " " + std::to_string(c.sw) +
                               "x" + std::to_string(c.sh) + "->" + std::to_string(c.dw) + "x" +
                               std::to_string(c.dh);
      EXPECT_EQ(pp.x.period, c.qx) << what;
      EXPECT_EQ(pp.y.period, c.qy) << what;
      EXPECT_EQ(pp.x.period_step, c.qx ? c.px : 0) << what;
      EXPECT_EQ(pp.y.period_step, c.qy ? c.py : 0) << what;
      // Coordinates exact in binary (x2, x4, /2): one set of weights a phase.
      const auto binary = [](int q, int p) { return q > 0 && (q == 2 * p || q == 4 * p || p == 2 * q); };
      if (binary(c.qx, c.px)) {
        EXPECT_TRUE(pp.x.period_fixed) << what;
      }
      if (binary(c.qy, c.py)) {
        EXPECT_TRUE(pp.y.period_fixed) << what;
      }
      EXPECT_EQ(pp.x.period_tap.size(), c.qx ? static_cast<size_t>(c.dw) : 0u) << what;
    }
  }
  // Bicubic x2 by its formula: output 2k sits at source k - 1/4 (weights of
  // Keys' cubic at f = 3/4 on samples k - 2 .. k + 1), output 2k + 1 at
  // k + 1/4 (f = 1/4 on k - 1 .. k + 2), in 2048ths.
  ResizePlan plan;
  ResizeParams p;
  p.method = ResizeMethod::Bicubic;
  ASSERT_TRUE(plan_resize({PixelFormat::RGBA, 40, 40}, {PixelFormat::RGBA, 80, 80}, p, &plan)
                  .is_ok());
  const ResizeAxis& x = plan.planes[0].x;
  EXPECT_EQ(resize_periodic_base(4, 2, 1, 0), -2);
  EXPECT_EQ(resize_periodic_base(4, 2, 1, 1), -1);
  const int16_t phase0[4] = {-72, 536, 1800, -216}, phase1[4] = {-216, 1800, 536, -72};
  for (int k = 0; k < 4; k++) {
    EXPECT_EQ(x.period_w[0][k], phase0[k]) << k;
    EXPECT_EQ(x.period_w[1][k], phase1[k]) << k;
  }
  // At 3x to 2160p cv::resize's float coordinates (0.0001 apart in a pixel
  // 1 000 samples in) move some bicubic weights by one from a period to the
  // next: the windows still repeat, the weights come from period_tap.
  ASSERT_TRUE(plan_resize({PixelFormat::RGBA, 1280, 720}, {PixelFormat::RGBA, 3840, 2160}, p, &plan)
                  .is_ok());
  EXPECT_EQ(plan.planes[0].x.period, 3);
  EXPECT_FALSE(plan.planes[0].x.period_fixed);
  ASSERT_TRUE(plan_resize({PixelFormat::RGBA, 40, 40}, {PixelFormat::RGBA, 80, 80}, p, &plan)
                  .is_ok());
  // The tap of output 41 (= 2 * 20 + 1), which starts at 20 - 1.
  EXPECT_EQ(x.tap[41].base, 19);
  EXPECT_EQ(x.tap[41].w[1], 1800);
}

TEST(ResizeOp, RejectsMismatchedViews) {
  std::unique_ptr<ResizeOp> op;
  ASSERT_TRUE(ResizeOp::create(Backend::Cpu, {PixelFormat::RGBA, 16, 16},
                               {PixelFormat::RGBA, 32, 32}, {}, &op)
                  .is_ok());
  HostImage a({PixelFormat::RGBA, 16, 16}), b({PixelFormat::RGBA, 16, 16});
  EXPECT_EQ(op->submit(nullptr, a.view(), b.view()).message(),
            "resize destination: image does not match the op's format or size");
  EXPECT_EQ(op->submit(nullptr, a.view(), a.view()).message(),
            "resize: source and destination must not overlap");
}

class ResizeVsOpenCV : public ::testing::TestWithParam<std::tuple<PixelFormat, ResizeMethod>> {};

TEST_P(ResizeVsOpenCV, CpuMatchesOpenCV) {
  const auto [format, method] = GetParam();
  ResizeParams p;
  p.method = method;
  uint32_t seed = 1;
  for (const auto& sz : kSizes) {
    int s[4] = {sz[0], sz[1], sz[2], sz[3]};
    // cv::resize on a chroma plane scales by the plane's own ratio; with even
    // sizes that is the luma ratio our siting uses.
    if (subsampled(format) && method != ResizeMethod::Nearest) {
      for (int& v : s)
        v += v % 2;
    }
    HostImage src({format, s[0], s[1]}, 3);
    src.fill_random(seed++);
    const ImageDesc dd{format, s[2], s[3]};
    const HostImage got = run_cpu(src, dd, p, 5);
    const HostImage want = oracle(src, dd, method);
    EXPECT_NEAR_ORACLE(got.view(), want.view(), testing_support::resize_oracle_bounds(method))
        << sizes_text(s);
  }
}

TEST_P(ResizeVsOpenCV, CudaEqualsCpuBitForBit) {
  SKIP_WITHOUT_GPU();
  const auto [format, method] = GetParam();
  ResizeParams p;
  p.method = method;
  p.chroma_cosited_h = true;
  const size_t aligns[] = {256, 1, 4};
  uint32_t seed = 100;
  for (const auto& s : kSizes) {
    for (size_t align : aligns) {
      HostImage src({format, s[0], s[1]});
      src.fill_random(seed++);
      const ImageDesc dd{format, s[2], s[3]};
      const HostImage cpu = run_cpu(src, dd, p);
      const HostImage gpu = run_cuda(src, dd, p, align);
      EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
          << sizes_text(s) << " align " << align << " max diff "
          << testing_support::max_abs_diff(cpu.view(), gpu.view());
    }
  }
}

// Frames as large as the benchmark's: the CUDA kernels give each thread a
// strip of rows as long as one wave of blocks allows, which on the frames
// above is a single row. Odd sizes leave ragged strips and a ragged edge.
TEST_P(ResizeVsOpenCV, CudaEqualsCpuOnLargeFrames) {
  SKIP_WITHOUT_GPU();
  const auto [format, method] = GetParam();
  ResizeParams p;
  p.method = method;
  // The periodic kernels' cases (x2, x4, x1.5, x3, /2; resize_periodic.cuh),
  // then sizes just off a period (the general kernels).
  const int sizes[][4] = {{1921, 1081, 3842, 2162}, {961, 541, 3844, 2164}, {2560, 1440, 3840, 2160},
                          {1283, 721, 3849, 2163},  {3842, 2162, 1921, 1081}, {1921, 1081, 3841, 2162}};
  uint32_t seed = 900;
  for (const auto& s : sizes) {
    HostImage src({format, s[0], s[1]});
    src.fill_random(seed++);
    const ImageDesc dd{format, s[2], s[3]};
    const HostImage cpu = run_cpu(src, dd, p);
    const HostImage gpu = run_cuda(src, dd, p, 256);
    EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
        << sizes_text(s) << " max diff " << testing_support::max_abs_diff(cpu.view(), gpu.view());
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormatsAndMethods, ResizeVsOpenCV,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats),
                                            ::testing::ValuesIn(kAllMethods)),
                         [](const auto& info) {
                           std::string m = resize_method_name(std::get<1>(info.param));
                           m = m.substr(0, m.find('-'));
                           return std::string(format_info(std::get<0>(info.param)).name) + "_" + m;
                         });

// Chroma siting, at odd sizes too: each chroma sample against a direct
// evaluation in double of the documented rule (sample i of a plane
// subsampled by 2 sits at luma 2i + 0.5, or 2i when co-sited; the source
// coordinate follows the luma scale).
namespace {

double cubic(double x) {
  const double a = -0.75;
  x = std::fabs(x);
  if (x < 1)
    return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2)
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Weights of one output sample on one axis, as (index, weight) pairs.
std::vector<std::pair<int, double>> reference_taps(ResizeMethod m, int full_src, int full_dst,
                                                   int src, int i, int shift, bool cosited) {
  const double sub = 1 << shift, off = (shift && !cosited) ? (sub - 1) / 2 : 0;
  double u = ((sub * i + off + 0.5) * full_src / full_dst - 0.5 - off) / sub;
  std::vector<std::pair<int, double>> t;
  if (m == ResizeMethod::Bilinear) {
    u = std::min(std::max(u, 0.0), src - 1.0);
    const int s = static_cast<int>(std::floor(u));
    const double f = u - s;
    t.push_back({s, 1 - f});
    t.push_back({std::min(s + 1, src - 1), f});
  } else {
    const int s = static_cast<int>(std::floor(u));
    for (int k = -1; k <= 2; k++)
      t.push_back({std::min(std::max(s + k, 0), src - 1), cubic(u - (s + k))});
  }
  return t;
}

}  // namespace

class ResizeChromaSiting
    : public ::testing::TestWithParam<std::tuple<PixelFormat, ResizeMethod, bool, bool>> {};

TEST_P(ResizeChromaSiting, MatchesDoubleReference) {
  const auto [format, method, cosited_h, cosited_v] = GetParam();
  ResizeParams p;
  p.method = method;
  p.chroma_cosited_h = cosited_h;
  p.chroma_cosited_v = cosited_v;
  const int sizes[][4] = {{173, 97, 301, 211}, {64, 48, 96, 72}, {99, 71, 40, 33}};
  uint32_t seed = 9;
  for (const auto& s : sizes) {
    HostImage src({format, s[0], s[1]}, 1);
    src.fill_random(seed++);
    const ImageDesc dd{format, s[2], s[3]};
    const HostImage got = run_cpu(src, dd, p);
    const FormatInfo& fi = format_info(format);
    testing_support::OracleStats stats;
    for (int pl = 1; pl < fi.n_planes; pl++) {
      const cv::Mat in = src.plane_mat(pl), out = got.plane_mat(pl);
      const int C = fi.planes[pl].channels;
      const int sw = plane_width(fi, pl, s[0]), sh = plane_height(fi, pl, s[1]);
      for (int y = 0; y < out.rows; y++) {
        const auto ty = reference_taps(method, s[1], s[3], sh, y, 1, cosited_v);
        for (int x = 0; x < out.cols; x++) {
          const auto tx = reference_taps(method, s[0], s[2], sw, x, 1, cosited_h);
          for (int c = 0; c < C; c++) {
            double v = 0;
            for (const auto& [iy, wy] : ty)
              for (const auto& [ix, wx] : tx)
                v += wy * wx * in.ptr<uint8_t>(iy)[ix * C + c];
            const int want = static_cast<int>(std::lround(std::min(std::max(v, 0.0), 255.0)));
            stats.add(out.ptr<uint8_t>(y)[x * C + c], want);
          }
        }
      }
    }
    EXPECT_TRUE(testing_support::near_oracle(stats, testing_support::kResizeReferenceBounds))
        << sizes_text(s);
  }
}

INSTANTIATE_TEST_SUITE_P(Subsampled, ResizeChromaSiting,
                         ::testing::Combine(::testing::Values(PixelFormat::I420, PixelFormat::NV12),
                                            ::testing::Values(ResizeMethod::Bilinear,
                                                              ResizeMethod::Bicubic),
                                            ::testing::Bool(), ::testing::Bool()));

// Real photographs from ../shared/testdata, x2 and x0.6 in every method.
class ResizeOnPhotos : public ::testing::TestWithParam<const char*> {};

TEST_P(ResizeOnPhotos, CpuMatchesOpenCVAndCudaMatchesCpu) {
  SKIP_WITHOUT_TESTDATA();
  HostImage img;
  ASSERT_TRUE(testing_support::load_testdata_image(GetParam(), PixelFormat::RGBA, &img));
  const bool gpu = testing_support::gpu_part_runs();
  for (ResizeMethod m : kAllMethods) {
    for (double f : {2.0, 0.6}) {
      ResizeParams p;
      p.method = m;
      const ImageDesc dd{PixelFormat::RGBA, static_cast<int>(img.desc().width * f),
                         static_cast<int>(img.desc().height * f)};
      const HostImage cpu = run_cpu(img, dd, p);
      EXPECT_NEAR_ORACLE(cpu.view(), oracle(img, dd, m).view(),
                         testing_support::resize_oracle_bounds(m))
          << resize_method_name(m) << " x" << f;
      if (gpu) {
        EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), run_cuda(img, dd, p, 256).view()))
            << resize_method_name(m) << " x" << f;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TestData, ResizeOnPhotos,
                         ::testing::Values("fruits.jpg", "building.jpg", "box.png"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });
