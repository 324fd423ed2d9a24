// The convolution op: the kernel's text form; the plan's choices (integer,
// separable, float) and its errors; every format, border, anchor and kernel
// kind against an exact reference written here from convolve.hpp's rules
// (byte for byte: integer sums, the float path's fma order), and against
// cv::filter2D (within 1); CUDA against CPU byte for byte.
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cudafx/convolve.hpp"
#include "cudafx/convolve_math.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "support/op_runner.hpp"
#include "support/oracle_compare.hpp"

using namespace cudafx;
using testing_support::HostImage;
using testing_support::kAllBorders;
using testing_support::kAllFormats;

namespace {

ConvolveParams kernel(const char* text, double divisor = 0, double offset = 0) {
  ConvolveParams p;
  EXPECT_TRUE(parse_convolve_kernel(text, &p).is_ok()) << text;
  p.divisor = divisor;
  p.offset = offset;
  return p;
}

ConvolveParams random_kernel(int w, int h, uint32_t seed, bool integer) {
  std::mt19937 rng(seed);
  ConvolveParams p;
  p.width = w;
  p.height = h;
  for (int i = 0; i < w * h; i++)
    p.taps.push_back(integer ? static_cast<int>(rng() % 9) - 3 : (rng() % 1000) / 700.0 - 0.4);
  return p;
}

// A separable integer kernel of n x n: the outer product of 1, 2, .., 2, 1
// (n > 11 runs as two passes on the GPU).
ConvolveParams separable_kernel(int n) {
  ConvolveParams p;
  p.width = p.height = n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      p.taps.push_back((1 + std::min(i, n - 1 - i)) * (1 + std::min(j, n - 1 - j)));
  return p;
}

// A float Gaussian of n x n (sigma n/5) as a user would type it: six
// significant digits a tap, so its taps factor within the plan's tolerance
// but not exactly.
ConvolveParams float_gaussian(int n) {
  std::vector<double> g(n);
  for (int i = 0; i < n; i++) {
    const double x = i - n / 2, s = n / 5.0;
    g[i] = std::exp(-x * x / (2 * s * s));
  }
  ConvolveParams p;
  p.width = p.height = n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      char text[32];
      snprintf(text, sizeof text, "%.6g", g[i] * g[j]);
      p.taps.push_back(std::atof(text));
    }
  return p;
}

// The documented rule, plainly: every output byte of a filtered lane.
HostImage reference(const HostImage& src, const ConvolvePlan& plan) {
  HostImage out(src.desc());
  out.copy_from(src.view());
  const FormatInfo& fi = format_info(src.desc().format);
  const ConvolveParams& p = plan.params;
  for (int pl = 0; pl < fi.n_planes; pl++) {
    if (!plan.filtered[pl])
      continue;
    const PlaneView s = src.view().plane(pl), d = out.view().plane(pl);
    const int C = fi.planes[pl].channels;
    for (int y = 0; y < s.height; y++)
      for (int x = 0; x < s.width; x++)
        for (int c = 0; c < C; c++) {
          if (!((plan.lanes[pl] >> c) & 1))
            continue;
          long long is = 0;
          float fs = 0.0f;
          if (!plan.integer && plan.separable) {
            // Two passes: each row's sum by the row factors, then the
            // column factors over those sums, each in tap order.
            for (int i = 0; i < p.height; i++) {
              const int ys = border_index(y + i - plan.ay, s.height, p.border);
              float h = 0.0f;
              for (int j = 0; j < p.width; j++) {
                const int xs = border_index(x + j - plan.ax, s.width, p.border);
                const int v = ys < 0 || xs < 0 ? 0 : s.data[ys * s.pitch + xs * C + c];
                h = std::fma(plan.frow[j], static_cast<float>(v), h);
              }
              fs = std::fma(plan.fcol[i], h, fs);
            }
          }
          for (int i = 0; i < p.height && (plan.integer || !plan.separable); i++)
            for (int j = 0; j < p.width; j++) {
              const int ys = border_index(y + i - plan.ay, s.height, p.border);
              const int xs = border_index(x + j - plan.ax, s.width, p.border);
              const int v = ys < 0 || xs < 0 ? 0 : s.data[ys * s.pitch + xs * C + c];
              if (plan.integer)
                is += static_cast<long long>(p.taps[i * p.width + j]) * v;
              else
                fs = std::fma(static_cast<float>(p.taps[i * p.width + j] / plan.divisor),
                              static_cast<float>(v), fs);
            }
          double r;
          if (plan.integer) {
            long long n = is, m = plan.idivisor;
            if (m < 0)
              n = -n, m = -m;
            r = static_cast<double>(std::floor((2.0 * n + m) / (2.0 * m))) + plan.ioffset;
          } else {
            const float v = fs + static_cast<float>(p.offset);
            r = v > 0 ? std::nearbyint(v) : 0;
          }
          d.data[y * d.pitch + x * C + c] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, r)));
        }
  }
  return out;
}

// cv::filter2D per filtered plane (kernel t / divisor, delta the offset),
// unfiltered lanes and planes copied.
HostImage opencv(const HostImage& src, const ConvolvePlan& plan) {
  HostImage out(src.desc());
  out.copy_from(src.view());
  const FormatInfo& fi = format_info(src.desc().format);
  const ConvolveParams& p = plan.params;
  cv::Mat k(p.height, p.width, CV_32F);
  for (int i = 0; i < p.width * p.height; i++)
    k.at<float>(i / p.width, i % p.width) = static_cast<float>(p.taps[i] / plan.divisor);
  const int border = p.border == BorderMode::Replicate ? cv::BORDER_REPLICATE
                     : p.border == BorderMode::Reflect101 ? cv::BORDER_REFLECT_101
                                                          : cv::BORDER_CONSTANT;
  for (int pl = 0; pl < fi.n_planes; pl++) {
    if (!plan.filtered[pl])
      continue;
    cv::Mat f;
    cv::filter2D(src.plane_mat(pl), f, -1, k, cv::Point(plan.ax, plan.ay), p.offset, border);
    const int C = fi.planes[pl].channels;
    const PlaneView d = out.view().plane(pl);
    for (int y = 0; y < d.height; y++)
      for (int x = 0; x < d.width * C; x++)
        if ((plan.lanes[pl] >> (x % C)) & 1)
          d.data[y * d.pitch + x] = f.ptr<uint8_t>(y)[x];
  }
  return out;
}

HostImage run_cpu(const HostImage& src, const ConvolveParams& p, ConvolvePlan* plan = nullptr) {
  std::unique_ptr<ConvolveOp> op;
  const Status s = ConvolveOp::create(Backend::Cpu, src.desc(), p, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!op)
    return HostImage(src.desc());
  if (plan)
    *plan = op->plan();
  return testing_support::run_on_host(*op, src, src.desc(), 3);
}

const testing_support::OracleBounds kFilter2DBounds{1, 0.05, -0.05, 0.05};

}  // namespace

TEST(ConvolveKernel, ParsesRowsAndRefusesBadText) {
  ConvolveParams p;
  ASSERT_TRUE(parse_convolve_kernel("1 2 1; 2,4,2\n 1 2 1", &p).is_ok());
  EXPECT_EQ(p.width, 3);
  EXPECT_EQ(p.height, 3);
  EXPECT_EQ(p.taps, (std::vector<double>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
  ASSERT_TRUE(parse_convolve_kernel("-0.5 1e-1 .25", &p).is_ok());
  EXPECT_EQ(p.taps, (std::vector<double>{-0.5, 0.1, 0.25}));
  EXPECT_EQ(parse_convolve_kernel("1 2; 3", &p).message(),
            "convolution kernel: rows of different lengths (2 and 1)");
  EXPECT_EQ(parse_convolve_kernel("1 x 2", &p).message(),
            "convolution kernel: not a number at \"x 2\"");
  EXPECT_EQ(parse_convolve_kernel(" ; ", &p).message(), "convolution kernel: empty");
  EXPECT_FALSE(parse_convolve_kernel("1 inf 1", &p).is_ok());
}

TEST(ConvolvePlan, ChoosesTheArithmetic) {
  ConvolvePlan plan;
  const ImageDesc d{PixelFormat::RGBA, 32, 32};
  ASSERT_TRUE(plan_convolve(d, kernel("1 2 1; 2 4 2; 1 2 1"), &plan).is_ok());
  EXPECT_TRUE(plan.integer && plan.separable);
  EXPECT_EQ(plan.idivisor, 16);
  EXPECT_EQ(plan.col, (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(plan.row, (std::vector<int>{1, 2, 1}));
  ASSERT_TRUE(plan_convolve(d, kernel("-1 0 1; -2 0 2; -1 0 1", 1, 128), &plan).is_ok());
  EXPECT_TRUE(plan.integer && plan.separable);
  EXPECT_EQ(plan.row, (std::vector<int>{-1, 0, 1}));
  ASSERT_TRUE(plan_convolve(d, kernel("0 1 0; 1 -4 1; 0 1 0"), &plan).is_ok());
  EXPECT_TRUE(plan.integer);
  EXPECT_FALSE(plan.separable);
  EXPECT_EQ(plan.idivisor, 1) << "taps summing to 0 divide by 1";
  ASSERT_TRUE(plan_convolve(d, kernel("0.5 0.5 0.5"), &plan).is_ok());
  EXPECT_FALSE(plan.integer);
  ASSERT_TRUE(plan_convolve(d, kernel("1 1 1", 2.5), &plan).is_ok());
  EXPECT_FALSE(plan.integer) << "a fractional divisor";
  // Float kernels of more than 15x15 taps that factor run as two passes;
  // smaller ones (2D on both backends) and ones that do not factor, not.
  ASSERT_TRUE(plan_convolve(d, float_gaussian(17), &plan).is_ok());
  EXPECT_TRUE(!plan.integer && plan.separable);
  ASSERT_EQ(plan.frow.size(), 17u);
  ASSERT_EQ(plan.fcol.size(), 17u);
  EXPECT_FLOAT_EQ(plan.fcol[8], 1.0f) << "the column through the largest tap, divided by it";
  double deviation = 0;
  for (int i = 0; i < 17; i++)
    for (int j = 0; j < 17; j++)
      deviation += std::fabs(plan.fcol[i] * plan.frow[j] - plan.ftaps[i * 17 + j]);
  EXPECT_LE(deviation, kConvolveFloatFactorTolerance);
  ASSERT_TRUE(plan_convolve(d, float_gaussian(15), &plan).is_ok());
  EXPECT_FALSE(plan.separable) << "15x15 and smaller stay 2D";
  ConvolveParams bent = float_gaussian(17);
  bent.taps[3 * 17 + 4] += 0.1 * bent.taps[8 * 17 + 8];  // off the product by over 1/4 level
  ASSERT_TRUE(plan_convolve(d, bent, &plan).is_ok());
  EXPECT_FALSE(plan.separable);
  ConvolveParams big = kernel("9000000 1 1");
  ASSERT_TRUE(plan_convolve(d, big, &plan).is_ok());
  EXPECT_FALSE(plan.integer) << "sums past 32 bits";
}

TEST(ConvolvePlan, Errors) {
  ConvolvePlan plan;
  const ImageDesc d{PixelFormat::RGBA, 32, 32};
  EXPECT_EQ(plan_convolve(d, kernel("1 1"), &plan).message(),
            "convolution kernel must be odd by odd, 1 to 31 a side, got 2x1");
  ConvolveParams p = kernel("1 1 1");
  p.anchor_x = 3;
  EXPECT_EQ(plan_convolve(d, p, &plan).message(),
            "convolution anchor (3, -1) is outside the kernel");
  p = random_kernel(33, 1, 1, true);
  EXPECT_FALSE(plan_convolve(d, p, &plan).is_ok());
  p = kernel("1 1 1");
  p.taps.pop_back();
  EXPECT_EQ(plan_convolve(d, p, &plan).message(), "convolution kernel: 2 taps for 3x1");
  p = kernel("1e300 1 1", 1e-300);
  EXPECT_EQ(plan_convolve(d, p, &plan).message(),
            "convolution: a tap divided by the divisor is out of float range");
}

// Every format and border; kernels of every kind; an anchor off the centre.
class ConvolveVsReference : public ::testing::TestWithParam<std::tuple<PixelFormat, BorderMode>> {};

TEST_P(ConvolveVsReference, CpuEqualsTheRuleAndIsNearFilter2D) {
  const auto [format, border] = GetParam();
  std::vector<ConvolveParams> kernels = {
      kernel("0 -1 0; -1 5 -1; 0 -1 0"),               // sharpen, integer
      kernel("1 1 1 1 1; 1 1 1 1 1; 1 1 1 1 1; 1 1 1 1 1; 1 1 1 1 1"),  // box, separable
      kernel("-2 -1 0; -1 1 1; 0 1 2", 1, 128),        // emboss: offset, sum 1
      random_kernel(7, 5, 3, false),                   // float
      random_kernel(15, 15, 4, true),                  // integer, not separable
      float_gaussian(17),                              // float, separable: two passes
  };
  kernels.back().divisor = 37;
  ConvolveParams anchored = kernel("1 2 3; 4 5 6; 7 8 9");
  anchored.anchor_x = 0;
  anchored.anchor_y = 2;
  kernels.push_back(anchored);
  ConvolveParams chroma = kernel("1 2 1; 2 4 2; 1 2 1");
  chroma.filter_chroma = true;
  kernels.push_back(chroma);
  uint32_t seed = 7;
  for (const auto& sz : {std::pair<int, int>{37, 23}, {1, 1}, {5, 40}}) {
    for (ConvolveParams k : kernels) {
      k.border = border;
      HostImage src({format, sz.first, sz.second}, 3);
      src.fill_random(seed++);
      ConvolvePlan plan;
      const HostImage got = run_cpu(src, k, &plan);
      EXPECT_TRUE(testing_support::bytes_equal(got.view(), reference(src, plan).view()))
          << format_info(format).name << " " << sz.first << "x" << sz.second << " "
          << k.width << "x" << k.height << (plan.integer ? " integer" : " float")
          << (plan.separable ? " separable" : "");
      EXPECT_NEAR_ORACLE(got.view(), opencv(src, plan).view(), kFilter2DBounds)
          << format_info(format).name << " " << k.width << "x" << k.height;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormatsAndBorders, ConvolveVsReference,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats),
                                            ::testing::ValuesIn(kAllBorders)));

// The GPU's division (a double reciprocal, corrected) gives the integer
// path's byte exactly: sums around every multiple of the divisor, at the
// ends of the range, both signs of divisor and offset.
TEST(ConvolveDivisionRule, EqualsTheIntegerResult) {
  std::mt19937 rng(11);
  for (int d : {1, -1, 2, 3, -7, 16, 20, 255, 1000, -65535, 8388607, -8388607}) {
    for (int offset : {0, 3, -128, 255}) {
      const ConvolveDivision fast(d, offset);
      std::vector<long long> sums = {0, 1, -1, 2147483647LL, -2147483647LL, 1 << 24, -(1 << 24)};
      for (int k = -300; k <= 300; k++)
        for (int e = -2; e <= 2; e++) {
          sums.push_back(static_cast<long long>(k) * d + e);          // around multiples
          sums.push_back(static_cast<long long>(k) * d + d / 2 + e);  // and halves
        }
      for (int i = 0; i < 20000; i++) {
        sums.push_back(static_cast<int>(rng()));
        sums.push_back(static_cast<int>(rng() % (1 << 25)) - (1 << 24));
      }
      for (long long s : sums) {
        if (s < -2147483647LL || s > 2147483647LL)
          continue;
        const uint8_t want = convolve_integer_result(static_cast<int>(s), d, offset);
        ASSERT_EQ(fast(static_cast<int>(s)), want) << "s " << s << " d " << d << " offset " << offset;
        if (s >= -(1 << 24) && s <= (1 << 24)) {
          ASSERT_EQ(fast.small(static_cast<int>(s)), want)
              << "small: s " << s << " d " << d << " offset " << offset;
        }
      }
    }
  }
}

// The tensor-core kernel's division (ConvolveMagicDivision) is the integer
// rule for every sum within 2^25 and divisor within 2^24: divisors of every
// size class (powers of two and their neighbours, where the multiplier is
// largest), sums at the ends of the range, around multiples and halves.
TEST(ConvolveDivisionRule, MagicEqualsTheIntegerResult) {
  std::mt19937 rng(12);
  std::vector<int> divisors = {1, -1, 2, 3, -7, 20, 255, 1000, -65535, 1 << 24, -(1 << 24)};
  for (int b = 1; b < 24; b++)
    for (int e : {-1, 0, 1})
      divisors.push_back((rng() & 1 ? 1 : -1) * ((1 << b) + e));
  for (int i = 0; i < 40; i++)
    divisors.push_back(static_cast<int>(rng() % (1 << 24)) + 1);
  EXPECT_FALSE(ConvolveMagicDivision::applies(0));
  EXPECT_FALSE(ConvolveMagicDivision::applies((1 << 24) + 1));
  for (int d : divisors) {
    ASSERT_TRUE(ConvolveMagicDivision::applies(d)) << d;
    for (int offset : {0, 3, -128, 255}) {
      const ConvolveMagicDivision magic(d, offset);
      constexpr int kMax = static_cast<int>(ConvolveMagicDivision::kMaxSum);
      std::vector<int> sums = {0, 1, -1, kMax, -kMax, kMax - 1, -kMax + 1, 1 << 24, -(1 << 24)};
      for (long long k = -200; k <= 200; k++)
        for (int e = -2; e <= 2; e++)
          for (long long v : {k * d + e, k * d + d / 2 + e, kMax - k * d - e, -kMax + k * d + e})
            if (v >= -kMax && v <= kMax)
              sums.push_back(static_cast<int>(v));
      for (int i = 0; i < 5000; i++)
        sums.push_back(static_cast<int>(rng() % (2u * kMax + 1)) - kMax);
      for (int s : sums)
        ASSERT_EQ(magic(s), convolve_integer_result(s, d, offset))
            << "s " << s << " d " << d << " offset " << offset;
    }
  }
}

// The largest kernels, single rows and columns, corner anchors, frames
// smaller than the kernel.
TEST(ConvolveCuda, LargeAndOddKernelsEqualCpu) {
  SKIP_WITHOUT_GPU();
  std::vector<ConvolveParams> kernels = {random_kernel(31, 31, 5, true),
                                         random_kernel(31, 31, 6, false),
                                         random_kernel(31, 1, 7, true),
                                         random_kernel(1, 31, 8, true),
                                         random_kernel(3, 15, 9, false),
                                         separable_kernel(31),
                                         float_gaussian(15),
                                         float_gaussian(31)};
  kernels[0].anchor_x = 30;
  kernels[0].anchor_y = 0;
  kernels[4].anchor_x = 2;
  kernels[4].anchor_y = 14;
  uint32_t seed = 90;
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8,
                        PixelFormat::NV12}) {
    for (const auto& size : {std::pair<int, int>{45, 37}, {20, 9}}) {
      for (ConvolveParams k : kernels) {
        k.filter_chroma = f == PixelFormat::NV12;
        k.border = static_cast<BorderMode>(seed % 3);
        HostImage src({f, size.first, size.second});
        src.fill_random(seed++);
        const HostImage cpu = run_cpu(src, k);
        std::unique_ptr<ConvolveOp> op;
        ASSERT_TRUE(ConvolveOp::create(Backend::Cuda, src.desc(), k, &op).is_ok());
        const HostImage gpu = testing_support::run_on_device(*op, src, src.desc(), 1);
        EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
            << format_info(f).name << " " << size.first << "x" << size.second << " kernel "
            << k.width << "x" << k.height << " border " << static_cast<int>(k.border);
      }
    }
  }
}

// The CUDA backend equals the CPU byte for byte: every kind of kernel,
// formats of 1 to 4 bytes a pixel, rows aligned and not.
TEST(ConvolveCuda, EqualsCpu) {
  SKIP_WITHOUT_GPU();
  std::vector<ConvolveParams> kernels = {kernel("0 -1 0; -1 5 -1; 0 -1 0"),
                                         kernel("1 4 6 4 1"),
                                         kernel("1 2 1; 2 4 2; 1 2 1", 0, 3),
                                         random_kernel(7, 5, 3, false),
                                         random_kernel(15, 15, 4, true),
                                         kernel("1; 2; 3; 2; 1"),
                                         // sum |t| = 257: the packed path's limit
                                         kernel("-64 129 -64", 1),
                                         // 258: just past it, sums in exact float
                                         kernel("-64 130 -64", 2),
                                         // 255 * sum |t| >= 2^24: 32-bit integer sums
                                         kernel("-40000 80001 -40000", 1),
                                         separable_kernel(13)};
  kernels[3].anchor_x = 0;  // off the centre
  kernels[3].anchor_y = 4;
  uint32_t seed = 70;
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8,
                        PixelFormat::NV12, PixelFormat::I420}) {
    for (size_t align : {size_t{256}, size_t{1}}) {
      for (ConvolveParams k : kernels) {
        k.filter_chroma = f == PixelFormat::NV12;
        k.border = static_cast<BorderMode>(seed % 3);
        HostImage src({f, 173, 97});
        src.fill_random(seed++);
        const HostImage cpu = run_cpu(src, k);
        std::unique_ptr<ConvolveOp> op;
        ASSERT_TRUE(ConvolveOp::create(Backend::Cuda, src.desc(), k, &op).is_ok());
        const HostImage gpu = testing_support::run_on_device(*op, src, src.desc(), align);
        EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
            << format_info(f).name << " " << k.width << "x" << k.height << " align " << align;
      }
    }
  }
}

// The tensor-core kernel (4-byte pixels, integer taps within -128..127, up
// to 17 wide) equals the CPU byte for byte: every border, anchors off the
// centre, tiles cut at both edges (sizes not multiples of its 64 x 32 tile,
// frames smaller than one), the widest and tallest kernels it takes, taps at
// the s8 limits, sums past 2^24 (the wide division), negative divisors and
// offsets, the unfiltered byte last (RGBA) or first (ARGB).
TEST(ConvolveCuda, TensorCoreKernelEqualsCpu) {
  SKIP_WITHOUT_GPU();
  {
    ConvolvePlan probe;
    ASSERT_TRUE(plan_convolve({PixelFormat::RGBA, 8, 8}, kernel("1 2 1"), &probe).is_ok());
    if (!convolve_cuda_tensor_cores(probe, 0))
      GTEST_SKIP() << "the device has no integer tensor cores of sm_80's kind";
  }
  auto extreme = [](int w, int h, uint32_t seed) {
    std::mt19937 rng(seed);
    ConvolveParams p;
    p.width = w;
    p.height = h;
    for (int i = 0; i < w * h; i++)
      p.taps.push_back(rng() % 2 ? 127 : -128);
    p.divisor = 1;
    p.offset = 128;
    return p;
  };
  std::vector<ConvolveParams> kernels = {random_kernel(5, 5, 11, true),
                                         random_kernel(15, 15, 12, true),
                                         random_kernel(17, 31, 13, true),
                                         random_kernel(1, 1, 14, true),
                                         kernel("0 -1 0; -1 5 -1; 0 -1 0", -3, 17),
                                         kernel("1 4 6 4 1; 4 16 24 16 4; 6 24 36 24 6; "
                                                "4 16 24 16 4; 1 4 6 4 1"),
                                         extreme(17, 31, 15),  // 255 * sum |t| > 2^24
                                         extreme(3, 3, 16),
                                         random_kernel(9, 3, 17, true),
                                         // centred: staging shifted by 1, 2, 3 pixels
                                         random_kernel(15, 15, 18, true),
                                         random_kernel(13, 5, 19, true),
                                         random_kernel(11, 3, 20, true)};
  kernels[1].anchor_x = 0;
  kernels[1].anchor_y = 14;
  kernels[8].anchor_x = 8;
  kernels[8].anchor_y = 0;
  uint32_t seed = 120;
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::ARGB}) {
    for (const auto& size : {std::pair<int, int>{173, 97}, {64, 32}, {65, 33}, {7, 5},
                             {1, 1}, {300, 70}}) {
      for (ConvolveParams k : kernels) {
        k.border = static_cast<BorderMode>(seed % 3);
        HostImage src({f, size.first, size.second});
        src.fill_random(seed++);
        ConvolvePlan plan;
        const HostImage cpu = run_cpu(src, k, &plan);
        ASSERT_TRUE(convolve_cuda_tensor_cores(plan, 0))
            << k.width << "x" << k.height << ": not on the tensor cores";
        std::unique_ptr<ConvolveOp> op;
        ASSERT_TRUE(ConvolveOp::create(Backend::Cuda, src.desc(), k, &op).is_ok());
        const HostImage gpu = testing_support::run_on_device(*op, src, src.desc(), 256);
        EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
            << format_info(f).name << " " << size.first << "x" << size.second << " kernel "
            << k.width << "x" << k.height << " anchor " << plan.ax << "," << plan.ay
            << " border " << static_cast<int>(k.border);
      }
    }
  }
  // What it does not take runs as before: a float kernel, taps past s8, a
  // kernel wider than 17 (or 17 wide with its staging shifted), planes of
  // other than 4 bytes.
  ConvolvePlan plan;
  ASSERT_TRUE(plan_convolve({PixelFormat::RGBA, 64, 64}, random_kernel(5, 5, 1, false), &plan).is_ok());
  EXPECT_FALSE(convolve_cuda_tensor_cores(plan, 0));
  ASSERT_TRUE(plan_convolve({PixelFormat::RGBA, 64, 64}, kernel("-64 130 -64", 2), &plan).is_ok());
  EXPECT_FALSE(convolve_cuda_tensor_cores(plan, 0));
  ASSERT_TRUE(plan_convolve({PixelFormat::RGBA, 64, 64}, random_kernel(19, 3, 2, true), &plan).is_ok());
  EXPECT_FALSE(convolve_cuda_tensor_cores(plan, 0));
  ASSERT_TRUE(plan_convolve({PixelFormat::RGB, 64, 64}, random_kernel(5, 5, 3, true), &plan).is_ok());
  EXPECT_FALSE(convolve_cuda_tensor_cores(plan, 0));
  ConvolveParams shifted = random_kernel(17, 3, 4, true);
  shifted.anchor_x = 7;
  ASSERT_TRUE(plan_convolve({PixelFormat::RGBA, 64, 64}, shifted, &plan).is_ok());
  EXPECT_FALSE(convolve_cuda_tensor_cores(plan, 0));
}
