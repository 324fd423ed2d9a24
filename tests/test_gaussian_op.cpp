// The Gaussian op against cv::GaussianBlur (the oracle) on the CPU backend,
// and the CUDA backend against the CPU backend, bit for bit.
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <memory>
#include <tuple>

#include "cudafx/gaussian.hpp"
#include "support/gaussian_oracle.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "support/op_runner.hpp"
#include "support/oracle_compare.hpp"
#include "support/testdata.hpp"

using namespace cudafx;
using testing_support::HostImage;

namespace {

HostImage oracle(const HostImage& src, const GaussianParams& params) {
  return testing_support::gaussian_oracle(src, params);
}

HostImage run_cpu(const HostImage& src, const GaussianParams& params, size_t pad = 0) {
  std::unique_ptr<GaussianOp> op;
  const Status s = GaussianOp::create(Backend::Cpu, src.desc(), params, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return op ? testing_support::run_on_host(*op, src, src.desc(), pad) : HostImage(src.desc(), pad);
}

// Runs the CUDA backend: upload, filter, download, one sync.
HostImage run_cuda(const HostImage& src, const GaussianParams& params, size_t align) {
  std::unique_ptr<GaussianOp> op;
  const Status s = GaussianOp::create(Backend::Cuda, src.desc(), params, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return op ? testing_support::run_on_device(*op, src, src.desc(), align) : HostImage(src.desc());
}

const char* arithmetic_name(GaussianArithmetic a) {
  return a == GaussianArithmetic::Fixed ? "fixed" : (a == GaussianArithmetic::Float ? "float" : "auto");
}

using testing_support::kAllFormats;
using testing_support::kAllBorders;

// The CUDA backend equals the CPU backend, byte for byte, for every size x
// sigma pair x source alignment (random frames, one seed each).
template <size_t NS, size_t NG, size_t NA>
void expect_cuda_equals_cpu(PixelFormat format, BorderMode border, const int (&sizes)[NS][2],
                            const double (&sigmas)[NG][2], const size_t (&aligns)[NA],
                            uint32_t seed) {
  for (const auto& sz : sizes) {
    for (const auto& sg : sigmas) {
      for (size_t align : aligns) {
        for (GaussianArithmetic arith : {GaussianArithmetic::Auto, GaussianArithmetic::Float}) {
          GaussianParams p;
          p.sigma_x = sg[0];
          p.sigma_y = sg[1];
          p.border = border;
          p.arithmetic = arith;
          HostImage src({format, sz[0], sz[1]});
          src.fill_random(seed++);
          const HostImage cpu = run_cpu(src, p);
          const HostImage gpu = run_cuda(src, p, align);
          EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
              << sz[0] << "x" << sz[1] << " sigma " << sg[0] << "/" << sg[1] << " align "
              << align << " " << arithmetic_name(arith) << " max diff "
              << testing_support::max_abs_diff(cpu.view(), gpu.view());
        }
      }
    }
  }
}

std::string case_name(PixelFormat f, BorderMode b) {
  const char* bn[] = {"replicate", "reflect101", "constant"};
  return std::string(format_info(f).name) + "_" + bn[static_cast<int>(b)];
}

}  // namespace

TEST(GaussianTaps, NormalisedSymmetricAndSized) {
  GaussianTaps t;
  ASSERT_TRUE(gaussian_taps(1.1, 0, &t).is_ok());
  EXPECT_EQ(t.radius, 4);  // ceil(3 * 1.1)
  double sum = t.w[0];
  for (int k = 1; k <= t.radius; k++) {
    sum += 2.0 * t.w[k];
    EXPECT_LT(t.w[k], t.w[k - 1]);
  }
  EXPECT_NEAR(sum, 1.0, 1e-6);
  ASSERT_TRUE(gaussian_taps(1.1, 5, &t).is_ok());
  EXPECT_EQ(t.radius, 2);
  ASSERT_TRUE(gaussian_taps(20.0, 0, &t).is_ok());
  EXPECT_EQ(t.radius, 60);
}

TEST(GaussianTaps, RejectsBadValues) {
  GaussianTaps t;
  EXPECT_EQ(gaussian_taps(0.0, 0, &t).message(), "sigma must be a finite number > 0, got 0.000000");
  EXPECT_FALSE(gaussian_taps(-1.0, 0, &t).is_ok());
  EXPECT_FALSE(gaussian_taps(1.0, 4, &t).is_ok());
  EXPECT_FALSE(gaussian_taps(1.0, 257, &t).is_ok());
  EXPECT_FALSE(gaussian_taps(50.0, 0, &t).is_ok());
  EXPECT_TRUE(gaussian_taps(42.0, 0, &t).is_ok());
}

// Fixed-point taps as OpenCV's 8-bit path makes them (error diffusion from
// the outermost tap in; the centre takes what is left of 256).
TEST(GaussianTaps, FixedPointTaps) {
  GaussianTaps t;
  ASSERT_TRUE(gaussian_taps(1.1, 5, &t).is_ok());
  EXPECT_EQ(t.q_radius, 2);
  EXPECT_EQ(t.q, (std::vector<uint16_t>{94, 63, 18}));
  ASSERT_TRUE(gaussian_taps(0.8, 3, &t).is_ok());
  EXPECT_EQ(t.q, (std::vector<uint16_t>{134, 61}));
  // sigma 3: 19 taps, the outermost pair quantises to 0 and is dropped.
  ASSERT_TRUE(gaussian_taps(3.0, 0, &t).is_ok());
  EXPECT_EQ(t.radius, 9);
  EXPECT_EQ(t.q_radius, 8);
  EXPECT_EQ(t.q, (std::vector<uint16_t>{34, 32, 28, 20, 14, 9, 4, 3, 1}));
  EXPECT_TRUE(gaussian_fixed_keeps_shape(t));
  // sigma 42: taps alternating 2/256 and 3/256 are no Gaussian any more.
  ASSERT_TRUE(gaussian_taps(42.0, 0, &t).is_ok());
  EXPECT_FALSE(gaussian_fixed_keeps_shape(t));
}

// Auto: fixed point per plane where its taps reach at most 8 from the centre
// and keep their shape; the arithmetic can be forced either way.
TEST(GaussianPlan, ArithmeticPerPlane) {
  GaussianPlan plan;
  GaussianParams p;
  for (double sigma : {0.5, 1.1, 2.0, 3.0}) {
    p.sigma_x = sigma;
    ASSERT_TRUE(plan_gaussian({PixelFormat::RGBA, 64, 48}, p, &plan).is_ok());
    EXPECT_TRUE(plan.planes[0].fixed) << sigma;
  }
  p.sigma_x = 3.3;  // radius 9 after trimming
  ASSERT_TRUE(plan_gaussian({PixelFormat::RGBA, 64, 48}, p, &plan).is_ok());
  EXPECT_FALSE(plan.planes[0].fixed);
  // I420 at sigma 6: luma radius 15 in float, chroma (sigma 3) in fixed point.
  p.sigma_x = 6.0;
  ASSERT_TRUE(plan_gaussian({PixelFormat::I420, 64, 48}, p, &plan).is_ok());
  EXPECT_FALSE(plan.planes[0].fixed);
  EXPECT_TRUE(plan.planes[1].fixed);
  EXPECT_TRUE(plan.planes[2].fixed);
  // A wide vertical axis keeps the whole plane in float.
  p.sigma_x = 1.1;
  p.sigma_y = 5.0;
  ASSERT_TRUE(plan_gaussian({PixelFormat::GRAY8, 64, 48}, p, &plan).is_ok());
  EXPECT_FALSE(plan.planes[0].fixed);
  p.sigma_y = 0;
  p.arithmetic = GaussianArithmetic::Float;
  ASSERT_TRUE(plan_gaussian({PixelFormat::GRAY8, 64, 48}, p, &plan).is_ok());
  EXPECT_FALSE(plan.planes[0].fixed);
  p.arithmetic = GaussianArithmetic::Fixed;
  p.sigma_x = 3.3;  // Auto takes float: its taps reach 9 from the centre
  EXPECT_EQ(plan_gaussian({PixelFormat::GRAY8, 64, 48}, p, &plan).message(),
            "fixed-point Gaussian reaches at most 8 taps from the centre; plane 0 needs 9");
  p.sigma_x = 1.1;
  p.kernel_size_x = 3;  // forced: kept, though Auto takes it too
  ASSERT_TRUE(plan_gaussian({PixelFormat::GRAY8, 64, 48}, p, &plan).is_ok());
  EXPECT_TRUE(plan.planes[0].fixed);
}

TEST(GaussianPlan, ChromaSigmaScaledBySubsampling) {
  GaussianParams p;
  p.sigma_x = 4.0;
  GaussianPlan plan;
  ASSERT_TRUE(plan_gaussian({PixelFormat::I420, 64, 48}, p, &plan).is_ok());
  EXPECT_EQ(plan.planes[0].x.radius, 12);
  EXPECT_EQ(plan.planes[1].x.radius, 6);
  EXPECT_EQ(plan.planes[1].width, 32);
  p.kernel_size_x = 7;
  ASSERT_TRUE(plan_gaussian({PixelFormat::NV12, 65, 49}, p, &plan).is_ok());
  EXPECT_EQ(plan.planes[0].x.radius, 3);
  EXPECT_EQ(plan.planes[1].x.radius, 2);
  EXPECT_EQ(plan.planes[1].width, 33);
  EXPECT_EQ(plan.planes[1].height, 25);
}

TEST(GaussianOp, RejectsMismatchedViews) {
  std::unique_ptr<GaussianOp> op;
  ASSERT_TRUE(GaussianOp::create(Backend::Cpu, {PixelFormat::RGBA, 16, 16}, {}, &op).is_ok());
  HostImage a({PixelFormat::RGBA, 16, 16}), b({PixelFormat::RGBA, 17, 16});
  EXPECT_EQ(op->submit(nullptr, a.view(), b.view()).message(),
            "gaussian destination: image does not match the op's format or size");
  EXPECT_EQ(op->submit(nullptr, a.view(), a.view()).message(),
            "gaussian: source and destination must not overlap");
  ImageView bad = a.view();
  bad.pitch[0] = 10;
  HostImage c({PixelFormat::RGBA, 16, 16});
  EXPECT_EQ(op->submit(nullptr, bad, c.view()).message(),
            "gaussian source: plane 0 pitch 10 is smaller than its row of 64 bytes");
}

// Every format and border, odd sizes, padded pitches, several sigmas.
class GaussianVsOpenCV
    : public ::testing::TestWithParam<std::tuple<PixelFormat, BorderMode>> {};

TEST_P(GaussianVsOpenCV, CpuWithinOne) {
  const auto [format, border] = GetParam();
  const int sizes[][2] = {{1, 1}, {7, 5}, {173, 97}, {64, 33}};
  const double sigmas[][2] = {{0.5, 0}, {1.1, 0}, {3.0, 1.5}, {20.0, 0}};
  uint32_t seed = 1;
  for (const auto& sz : sizes) {
    for (const auto& sg : sigmas) {
      for (GaussianArithmetic arith : {GaussianArithmetic::Auto, GaussianArithmetic::Float}) {
        GaussianParams p;
        p.sigma_x = sg[0];
        p.sigma_y = sg[1];
        p.border = border;
        p.arithmetic = arith;
        HostImage src({format, sz[0], sz[1]}, 3);
        src.fill_random(seed++);
        const HostImage want = oracle(src, p);
        const HostImage got = run_cpu(src, p, 5);
        EXPECT_NEAR_ORACLE(got.view(), want.view(), testing_support::kGaussianBounds)
            << sz[0] << "x" << sz[1] << " sigma " << sg[0] << "/" << sg[1] << " "
            << arithmetic_name(arith);
      }
    }
  }
}

// Fixed point equals OpenCV's 8-bit GaussianBlur byte for byte: the same
// taps, exact integer sums, the same rounding.
TEST_P(GaussianVsOpenCV, FixedPointEqualsOpenCV8Bit) {
  const auto [format, border] = GetParam();
  const int sizes[][2] = {{1, 1}, {7, 5}, {173, 97}};
  // {sigma x, sigma y, kernel size (0: from sigma)}
  const double cases[][3] = {{0.5, 0, 0}, {0.8, 0, 3}, {1.1, 0, 5}, {1.1, 0, 0},
                             {1.5, 0, 7}, {2.0, 0.7, 0}, {3.0, 0, 0}, {3.0, 1.5, 0}};
  uint32_t seed = 40;
  for (const auto& sz : sizes) {
    for (const auto& c : cases) {
      GaussianParams p;
      p.sigma_x = c[0];
      p.sigma_y = c[1];
      p.kernel_size_x = static_cast<int>(c[2]);
      p.border = border;
      p.arithmetic = GaussianArithmetic::Fixed;
      HostImage src({format, sz[0], sz[1]}, 3);
      src.fill_random(seed++);
      const HostImage want = oracle(src, p);  // cv::GaussianBlur on the bytes
      const HostImage got = run_cpu(src, p, 5);
      EXPECT_NEAR_ORACLE(got.view(), want.view(), testing_support::kExactBounds)
          << sz[0] << "x" << sz[1] << " sigma " << c[0] << "/" << c[1] << " k " << c[2];
    }
  }
}

TEST_P(GaussianVsOpenCV, CudaEqualsCpuBitForBit) {
  SKIP_WITHOUT_GPU();
  const auto [format, border] = GetParam();
  // Sizes that cover partial tiles; sigmas that cover the small-radius kernel
  // (0.5, 1.1, and unequal radii 3/1), the fused path (3.0), the two-pass
  // path (10.7, 20) and the 65-tap requirement.
  const int sizes[][2] = {{1, 1}, {7, 5}, {173, 97}, {333, 211}};
  const double sigmas[][2] = {{0.5, 0}, {1.1, 0}, {1.0, 0.3}, {3.0, 1.5}, {10.7, 0}, {20.0, 4.0}};
  const size_t aligns[] = {256, 1, 4};
  expect_cuda_equals_cpu(format, border, sizes, sigmas, aligns, 100);
}

// The small-radius kernel makes its tiles taller on planes big enough to fill
// the GPU with them (the frames above all get 2 rows a warp): 3842x2162 runs
// 8 rows a warp (4-, 2- and 1-byte pixels alike; 4 on I420 chroma),
// 1282x722 runs 4 for 4-byte pixels, both with a ragged last tile.
TEST_P(GaussianVsOpenCV, CudaEqualsCpuOnLargeFrames) {
  SKIP_WITHOUT_GPU();
  const auto [format, border] = GetParam();
  const int sizes[][2] = {{3842, 2162}, {1282, 722}};
  const double sigmas[][2] = {{0.5, 0}, {1.1, 0}, {1.0, 0.3}};
  const size_t aligns[] = {256};
  expect_cuda_equals_cpu(format, border, sizes, sigmas, aligns, 500);
}

INSTANTIATE_TEST_SUITE_P(AllFormatsAndBorders, GaussianVsOpenCV,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats),
                                            ::testing::ValuesIn(kAllBorders)),
                         [](const auto& info) {
                           return case_name(std::get<0>(info.param), std::get<1>(info.param));
                         });

TEST(GaussianOp, ExplicitKernelSizes) {
  HostImage src({PixelFormat::RGBA, 97, 61}, 1);
  src.fill_random(7);
  for (int k : {3, 5, 65, 121}) {
    GaussianParams p;
    p.sigma_x = k / 6.0;
    p.kernel_size_x = k;
    p.kernel_size_y = k == 121 ? 3 : 0;
    const HostImage want = oracle(src, p);
    EXPECT_NEAR_ORACLE(run_cpu(src, p).view(), want.view(), testing_support::kGaussianBounds)
        << k;
  }
}

namespace {

// The documented limits: sigma 42 with 255 taps an axis (kernel-size 255;
// 127 taps on I420/NV12 chroma), in every border mode, on frames larger than the
// kernel and on frames smaller than its radius (every tap reaching past a
// border, reflected more than once). Small frames keep the CPU run short.
const PixelFormat kLimitFormats[] = {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8,
                                     PixelFormat::I420, PixelFormat::NV12};
const int kLimitSizes[][2] = {{300, 262}, {61, 45}};

GaussianParams limit_params(BorderMode border) {
  GaussianParams p;
  p.sigma_x = 42.0;
  p.kernel_size_x = p.kernel_size_y = 255;
  p.border = border;
  return p;
}

}  // namespace

TEST(GaussianLimits, Sigma42With255TapsCpuMatchesOpenCV) {
  uint32_t seed = 700;
  for (PixelFormat format : kLimitFormats) {
    for (const auto& sz : kLimitSizes) {
      for (BorderMode border : kAllBorders) {
        const GaussianParams p = limit_params(border);
        GaussianPlan plan;
        ASSERT_TRUE(plan_gaussian({format, sz[0], sz[1]}, p, &plan).is_ok());
        ASSERT_EQ(plan.planes[0].x.radius, 127);
        ASSERT_EQ(plan.planes[0].y.radius, 127);
        HostImage src({format, sz[0], sz[1]}, 3);
        src.fill_random(seed++);
        const HostImage got = run_cpu(src, p, 5);
        EXPECT_NEAR_ORACLE(got.view(), oracle(src, p).view(), testing_support::kGaussianBounds)
            << case_name(format, border) << " " << sz[0] << "x" << sz[1];
      }
    }
  }
}

TEST(GaussianLimits, Sigma42With255TapsCudaEqualsCpu) {
  SKIP_WITHOUT_GPU();
  const size_t aligns[] = {256, 1};
  uint32_t seed = 800;
  for (PixelFormat format : kLimitFormats) {
    for (const auto& sz : kLimitSizes) {
      for (BorderMode border : kAllBorders) {
        for (size_t align : aligns) {
          const GaussianParams p = limit_params(border);
          HostImage src({format, sz[0], sz[1]});
          src.fill_random(seed++);
          const HostImage cpu = run_cpu(src, p);
          const HostImage gpu = run_cuda(src, p, align);
          EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), gpu.view()))
              << case_name(format, border) << " " << sz[0] << "x" << sz[1] << " align " << align
              << " max diff " << testing_support::max_abs_diff(cpu.view(), gpu.view());
        }
      }
    }
  }
}

TEST(GaussianOp, SetParamsReplans) {
  HostImage src({PixelFormat::RGB, 50, 40});
  src.fill_random(3);
  std::unique_ptr<GaussianOp> op;
  GaussianParams p;
  ASSERT_TRUE(GaussianOp::create(Backend::Cpu, src.desc(), p, &op).is_ok());
  p.sigma_x = 6.0;
  p.border = BorderMode::Reflect101;
  ASSERT_TRUE(op->set_params(p).is_ok());
  HostImage got(src.desc());
  ASSERT_TRUE(op->submit(nullptr, src.view(), got.view()).is_ok());
  EXPECT_NEAR_ORACLE(got.view(), oracle(src, p).view(), testing_support::kGaussianBounds);
  p.sigma_x = -1;
  EXPECT_FALSE(op->set_params(p).is_ok());
}

// Real photographs from ../shared/testdata.
class GaussianOnPhotos : public ::testing::TestWithParam<const char*> {};

TEST_P(GaussianOnPhotos, CpuMatchesOpenCVAndCudaMatchesCpu) {
  SKIP_WITHOUT_TESTDATA();
  HostImage img;
  ASSERT_TRUE(testing_support::load_testdata_image(GetParam(), PixelFormat::RGBA, &img));
  const bool gpu = testing_support::gpu_part_runs();
  for (double sigma : {1.1, 3.0, 8.0}) {
    GaussianParams p;
    p.sigma_x = sigma;
    const HostImage cpu = run_cpu(img, p);
    EXPECT_NEAR_ORACLE(cpu.view(), oracle(img, p).view(), testing_support::kGaussianBounds)
        << sigma;
    EXPECT_FALSE(testing_support::bytes_equal(cpu.view(), img.view())) << "blur changed nothing";
    if (gpu) {
      EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), run_cuda(img, p, 256).view())) << sigma;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TestData, GaussianOnPhotos,
                         ::testing::Values("fruits.jpg", "building.jpg", "box.png", "sudoku.png"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });
