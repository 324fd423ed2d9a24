// The Harris op: its response against cv::cornerHarris and against the
// exact value (the bounds harris.hpp states), its corner list against a
// plain-loop suppression, corners of synthetic shapes where they are known,
// the chessboard's grid, and the CUDA backend against the CPU backend byte
// for byte (response and list).
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cudafx/harris.hpp"
#include "cudafx/harris_math.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"
#include "support/harris_oracle.hpp"
#include "support/host_image.hpp"
#include "support/testdata.hpp"

using namespace cudafx;
using testing_support::HostImage;

namespace {

using testing_support::kAllFormats;
using testing_support::kAllBorders;
const HarrisWindow kWindows[] = {HarrisWindow::Box, HarrisWindow::Gaussian};
const int kSizes[] = {3, 5, 7};

const char* border_name(BorderMode b) {
  const char* n[] = {"replicate", "reflect101", "constant"};
  return n[static_cast<int>(b)];
}

HarrisParams make_params(int g, int b, BorderMode border = BorderMode::Reflect101,
                         HarrisWindow window = HarrisWindow::Box) {
  HarrisParams p;
  p.gradient_size = g;
  p.block_size = b;
  p.border = border;
  p.window = window;
  return p;
}

std::string describe(const HarrisParams& p) {
  return "g" + std::to_string(p.gradient_size) + " b" + std::to_string(p.block_size) +
         (p.window == HarrisWindow::Gaussian ? " gaussian " : " box ") + border_name(p.border) +
         " r" + std::to_string(p.min_distance) + " max " + std::to_string(p.max_corners) +
         (p.threshold_mode == HarrisThresholdMode::Relative ? " rel " : " abs ") +
         std::to_string(p.threshold) + (p.subpixel ? " subpixel" : "");
}

// What a submit produced: the response (CV_32F) and the list.
struct Detection {
  cv::Mat response;
  HarrisResultHeader header{};
  std::vector<HarrisCorner> corners;
};

void take_list(const HarrisOp& op, Detection* d) {
  const HarrisCornerList l = op.corners();
  d->header = {static_cast<uint32_t>(l.count), static_cast<uint32_t>(l.candidates),
               l.max_response, l.threshold};
  d->corners.assign(l.corners, l.corners + l.count);
}

// The CPU backend, the response into rows padded by `resp_pad` floats.
Detection detect_cpu(const HostImage& src, const HarrisParams& p, int resp_pad = 0) {
  Detection d;
  std::unique_ptr<HarrisOp> op;
  Status s = HarrisOp::create(Backend::Cpu, src.desc(), p, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!op)
    return d;
  const int W = src.desc().width, H = src.desc().height;
  cv::Mat padded(H, W + resp_pad, CV_32F, cv::Scalar(-7.0f));
  s = op->submit(nullptr, src.view(), {padded.ptr<float>(), padded.step});
  EXPECT_TRUE(s.is_ok()) << s.message();
  for (int y = 0; y < H; y++)
    for (int x = W; x < W + resp_pad; x++)
      EXPECT_EQ(padded.at<float>(y, x), -7.0f) << "wrote past the row at " << x << "," << y;
  d.response = padded(cv::Rect(0, 0, W, H)).clone();
  take_list(*op, &d);
  return d;
}

// The CUDA backend: the source in a device image with rows aligned to
// `align`, the response into rows padded by `resp_pad` floats.
Detection detect_cuda(const HostImage& src, const HarrisParams& p, size_t align, int resp_pad) {
  Detection d;
  std::unique_ptr<HarrisOp> op;
  Status s = HarrisOp::create(Backend::Cuda, src.desc(), p, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!op)
    return d;
  const int W = src.desc().width, H = src.desc().height;
  CudaStream stream;
  EXPECT_TRUE(stream.create().is_ok());
  testing_support::DeviceImage din(src.desc(), align);
  EXPECT_TRUE(din.status().is_ok()) << din.status().message();
  EXPECT_TRUE(din.upload(src.view(), stream.get()).is_ok());
  const size_t pitch = static_cast<size_t>(W + resp_pad) * sizeof(float);
  DeviceBuffer resp;
  EXPECT_TRUE(resp.allocate(pitch * H).is_ok());
  // NaN everywhere first: a pixel the kernel misses cannot pass as equal.
  EXPECT_TRUE(fill_bytes_async(resp.get(), 0xff, pitch * H, stream.get()).is_ok());
  s = op->submit(stream.get(), din.view(), {static_cast<float*>(resp.get()), pitch});
  EXPECT_TRUE(s.is_ok()) << s.message();
  cv::Mat host(H, W + resp_pad, CV_32F);
  EXPECT_TRUE(copy_bytes_async(host.data, resp.get(), pitch * H, stream.get()).is_ok());
  s = stream.synchronize();
  EXPECT_TRUE(s.is_ok()) << s.message();
  d.response = host(cv::Rect(0, 0, W, H)).clone();
  take_list(*op, &d);
  return d;
}

// The CUDA kernels' code run on the host (harris_cuda_emulate), the
// response into rows padded by `resp_pad` floats.
Detection detect_emulated(const HostImage& src, const HarrisParams& p, int resp_pad,
                          HarrisSelectPath* path = nullptr) {
  Detection d;
  HarrisPlan plan;
  Status s = plan_harris(src.desc(), p, &plan);
  EXPECT_TRUE(s.is_ok()) << s.message();
  const int W = src.desc().width, H = src.desc().height;
  cv::Mat padded(H, W + resp_pad, CV_32F, cv::Scalar(std::nanf("")));
  std::vector<uint8_t> result;
  s = harris_cuda_emulate(plan, src.view(), {padded.ptr<float>(), padded.step}, true, &result,
                          path);
  EXPECT_TRUE(s.is_ok()) << s.message();
  d.response = padded(cv::Rect(0, 0, W, H)).clone();
  if (result.size() >= sizeof(HarrisResultHeader)) {
    std::memcpy(&d.header, result.data(), sizeof d.header);
    d.corners.resize(d.header.count);
    std::memcpy(d.corners.data(), result.data() + sizeof d.header,
                d.header.count * sizeof(HarrisCorner));
  }
  return d;
}

::testing::AssertionResult same_detection(const Detection& a, const Detection& b) {
  if (a.response.size() != b.response.size())
    return ::testing::AssertionFailure() << "response sizes differ";
  for (int y = 0; y < a.response.rows; y++) {
    if (std::memcmp(a.response.ptr(y), b.response.ptr(y), a.response.cols * sizeof(float)) != 0) {
      int x = 0;
      while (std::memcmp(a.response.ptr<float>(y) + x, b.response.ptr<float>(y) + x, 4) == 0)
        x++;
      return ::testing::AssertionFailure()
             << "responses differ first at (" << x << "," << y << "): "
             << a.response.at<float>(y, x) << " vs " << b.response.at<float>(y, x);
    }
  }
  if (std::memcmp(&a.header, &b.header, sizeof a.header) != 0)
    return ::testing::AssertionFailure()
           << "headers differ: count " << a.header.count << "/" << b.header.count
           << ", candidates " << a.header.candidates << "/" << b.header.candidates << ", max "
           << a.header.max_response << "/" << b.header.max_response << ", threshold "
           << a.header.threshold << "/" << b.header.threshold;
  if (a.corners.size() != b.corners.size())
    return ::testing::AssertionFailure() << "lists of " << a.corners.size() << " and "
                                         << b.corners.size() << " corners";
  for (size_t i = 0; i < a.corners.size(); i++)
    if (std::memcmp(&a.corners[i], &b.corners[i], sizeof(HarrisCorner)) != 0)
      return ::testing::AssertionFailure()
             << "corner " << i << " differs: " << testing_support::corner_text(a.corners[i])
             << " vs " << testing_support::corner_text(b.corners[i]);
  return ::testing::AssertionSuccess();
}

// The op's list equals the reference suppression run over the op's own
// response: the first max_corners, the count before the cut, max, threshold.
::testing::AssertionResult list_matches_reference(const Detection& d, const HarrisParams& p) {
  const testing_support::ReferenceCorners ref = testing_support::harris_nms_reference(d.response, p);
  const size_t want = std::min(ref.corners.size(), static_cast<size_t>(p.max_corners));
  if (d.header.candidates != ref.corners.size() || d.header.count != want ||
      d.corners.size() != want)
    return ::testing::AssertionFailure()
           << "op: " << d.header.count << " of " << d.header.candidates << " candidates, reference "
           << want << " of " << ref.corners.size();
  if (d.header.max_response != ref.max_response || d.header.threshold != ref.threshold)
    return ::testing::AssertionFailure() << "max/threshold " << d.header.max_response << "/"
                                         << d.header.threshold << ", reference "
                                         << ref.max_response << "/" << ref.threshold;
  for (size_t i = 0; i < want; i++) {
    const HarrisCorner& a = d.corners[i];
    const HarrisCorner& b = ref.corners[i];
    if (a.score != b.score || std::abs(a.x - b.x) > 0.5f || std::abs(a.y - b.y) > 0.5f ||
        (!p.subpixel && (a.x != b.x || a.y != b.y)))
      return ::testing::AssertionFailure() << "corner " << i << ": "
                                           << testing_support::corner_text(a) << ", reference "
                                           << testing_support::corner_text(b);
  }
  return ::testing::AssertionSuccess();
}

// The op's corners against the reference suppression over OpenCV's
// response (which differs within the stated bounds): a corner in one list
// and not the other must be one the difference can explain -- within the
// bound of the threshold, or of a neighbour in its square.
void expect_sets_match_opencv(const Detection& d, const cv::Mat& cv_resp,
                              const testing_support::HarrisExact& exact, const HarrisParams& p,
                              const std::string& what) {
  HarrisParams all = p;
  all.max_corners = kHarrisMaxCorners;
  const auto ours = testing_support::harris_nms_reference(d.response, all);
  const auto theirs = testing_support::harris_nms_reference(cv_resp, all);
  double max_cv = 0.0;
  cv::minMaxLoc(cv::abs(cv_resp), nullptr, &max_cv);
  auto tol = [&](int x, int y) {
    return std::ldexp(exact.magnitude(x, y, p.k), -8) + std::ldexp(max_cv, -90);
  };
  const int r = p.min_distance, W = d.response.cols, H = d.response.rows;
  auto fragile = [&](int x, int y) {
    const double v = d.response.at<float>(y, x);
    const double t = std::max(ours.threshold, theirs.threshold) +
                     std::abs(static_cast<double>(ours.threshold) - theirs.threshold);
    if (v <= t + 2 * tol(x, y))
      return true;
    for (int qy = std::max(0, y - r); qy <= std::min(H - 1, y + r); qy++)
      for (int qx = std::max(0, x - r); qx <= std::min(W - 1, x + r); qx++)
        if ((qx != x || qy != y) &&
            std::abs(d.response.at<float>(qy, qx) - v) <= 2 * (tol(x, y) + tol(qx, qy)))
          return true;
    return false;
  };
  std::set<std::pair<int, int>> a, b;
  for (const auto& c : ours.corners)
    a.insert({static_cast<int>(c.x), static_cast<int>(c.y)});
  for (const auto& c : theirs.corners)
    b.insert({static_cast<int>(c.x), static_cast<int>(c.y)});
  int differ = 0;
  for (const auto* s : {&a, &b}) {
    const auto& other = s == &a ? b : a;
    for (const auto& pt : *s) {
      if (other.count(pt))
        continue;
      differ++;
      EXPECT_TRUE(fragile(pt.first, pt.second))
          << what << ": corner (" << pt.first << "," << pt.second << ") only "
          << (s == &a ? "in ours" : "in OpenCV's") << ", response "
          << d.response.at<float>(pt.second, pt.first) << ", cv "
          << cv_resp.at<float>(pt.second, pt.first);
    }
  }
  EXPECT_LE(differ, static_cast<int>(a.size() / 50) + 2) << what << ": " << a.size() << " vs "
                                                         << b.size() << " corners";
}

// A GRAY8 frame of smooth gradients plus noise (HostImage::fill_random) or
// of black and white pixels.
HostImage random_grey(int w, int h, uint32_t seed, bool binary = false, size_t pad = 0) {
  HostImage img({PixelFormat::GRAY8, w, h}, pad);
  img.fill_random(seed);
  if (binary) {
    std::mt19937 rng(seed);
    const PlaneView pl = img.view().plane(0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        pl.data[y * pl.pitch + x] = (rng() & 1) ? 255 : 0;
  }
  return img;
}

}  // namespace

// ---- per-value rules ----

TEST(HarrisMath, LumaIsOpenCVsForEveryColour) {
  cv::Mat rgb(4096, 4096, CV_8UC3);
  for (int i = 0; i < 4096 * 4096; i++) {
    uint8_t* p = rgb.data + 3 * static_cast<size_t>(i);
    p[0] = i & 255;
    p[1] = (i >> 8) & 255;
    p[2] = (i >> 16) & 255;
  }
  cv::Mat grey;
  cv::cvtColor(rgb, grey, cv::COLOR_RGB2GRAY);
  int bad = 0;
  for (int i = 0; i < 4096 * 4096; i++)
    bad += grey.data[i] != harris_luma(i & 255, (i >> 8) & 255, (i >> 16) & 255);
  EXPECT_EQ(bad, 0) << "colours whose luma differs from cv::cvtColor(RGB2GRAY)";
}

TEST(HarrisMath, GradientBoundsAreTheEnumeratedMaxima) {
  // max over 0/255 patterns of Ix^2 + Iy^2 (a convex function of the
  // pixels: its maximum over [0,255]^n is at such a vertex), walking the
  // patterns in Gray-code order so each step adds or removes one pixel.
  for (int g : {3, 5}) {
    HarrisPlan plan;
    ASSERT_TRUE(plan_harris({PixelFormat::GRAY8, 16, 16}, make_params(g, 3), &plan).is_ok());
    const int n = g * g;
    std::vector<long long> cx(n), cy(n);
    for (int j = 0; j < g; j++)
      for (int i = 0; i < g; i++) {
        cx[j * g + i] = 255LL * plan.smooth[j] * plan.deriv[i];
        cy[j * g + i] = 255LL * plan.deriv[j] * plan.smooth[i];
      }
    long long ix = 0, iy = 0, best = 0, best_ix = 0;
    uint32_t pattern = 0;
    for (uint32_t step = 1; step < (1u << n); step++) {
      const int bit = __builtin_ctz(step);
      pattern ^= 1u << bit;
      const long long sign = (pattern >> bit) & 1 ? 1 : -1;
      ix += sign * cx[bit];
      iy += sign * cy[bit];
      best = std::max(best, ix * ix + iy * iy);
      best_ix = std::max(best_ix, std::abs(ix));
    }
    EXPECT_EQ(best, harris_max_gradient_sq(g)) << g;
    EXPECT_EQ(best_ix, harris_max_derivative(g)) << g;
  }
  EXPECT_EQ(harris_max_derivative(7), 255LL * 10 * 64);
}

TEST(HarrisMath, NarrowExactlyWhereTheSumsFitIn32Bits) {
  // sum(w) * max(Ix^2 + Iy^2) < 2^32: g=3 all but the 7x7 Gaussian window,
  // g=5 with a 3x3 window or a 5x5 box (4.27e9, just under 2^32), never g=7.
  const std::set<std::string> narrow = {"g3 b3 box",      "g3 b5 box",      "g3 b7 box",
                                        "g3 b3 gaussian", "g3 b5 gaussian", "g5 b3 box",
                                        "g5 b5 box",      "g5 b3 gaussian"};
  for (int g : kSizes)
    for (int b : kSizes)
      for (HarrisWindow w : kWindows) {
        HarrisPlan plan;
        ASSERT_TRUE(plan_harris({PixelFormat::GRAY8, 8, 8}, make_params(g, b, BorderMode::Replicate, w),
                                &plan)
                        .is_ok());
        const std::string name = "g" + std::to_string(g) + " b" + std::to_string(b) +
                                 (w == HarrisWindow::Box ? " box" : " gaussian");
        EXPECT_EQ(plan.narrow, narrow.count(name) == 1) << name;
      }
}

TEST(HarrisMath, KeysSortByScoreThenRasterOrder) {
  EXPECT_LT(harris_key(2.0f, 50), harris_key(1.0f, 3));
  EXPECT_LT(harris_key(1.0f, 3), harris_key(1.0f, 4));
  EXPECT_LT(harris_key(1e-30f, 0xffffffffu), ~0ull);
  EXPECT_EQ(harris_key_score(harris_key(0.125f, 9)), 0.125f);
  EXPECT_EQ(harris_key_pos(harris_key(0.125f, 9)), 9u);
  EXPECT_TRUE(harris_beats(1.0f, 5, 1.0f, 6));
  EXPECT_FALSE(harris_beats(1.0f, 7, 1.0f, 6));
  EXPECT_TRUE(harris_beats(2.0f, 7, 1.0f, 6));
}

TEST(HarrisMath, SubpixelOffsetIsTheParabolaVertex) {
  EXPECT_EQ(harris_subpixel_offset(1.0f, 2.0f, 1.0f), 0.0f);
  // Through (-1, 0), (0, 1), (1, 0.5): vertex at 0.5 * (0 - 0.5) / (0.5 - 2) = 1/6.
  EXPECT_NEAR(harris_subpixel_offset(0.0f, 1.0f, 0.5f), 1.0 / 6.0, 1e-7);
  EXPECT_NEAR(harris_subpixel_offset(0.5f, 1.0f, 0.0f), -1.0 / 6.0, 1e-7);
  EXPECT_EQ(harris_subpixel_offset(0.0f, 1.0f, 1.0f), 0.5f);     // vertex at 0.5 exactly
  EXPECT_EQ(harris_subpixel_offset(0.0f, 1.0f, 2.0f), 0.0f);     // not a maximum: curvature >= 0
  EXPECT_EQ(harris_subpixel_offset(0.0f, 1.0f, 1.5f), 0.5f);     // 1.5, clamped
  EXPECT_EQ(harris_subpixel_offset(1.5f, 1.0f, 0.0f), -0.5f);
}

// ---- parameters ----

TEST(HarrisPlan, RejectsBadParametersWithMessages) {
  const ImageDesc d{PixelFormat::RGBA, 64, 48};
  HarrisPlan plan;
  auto msg = [&](HarrisParams p) { return plan_harris(d, p, &plan).message(); };
  HarrisParams p;
  p.gradient_size = 4;
  EXPECT_EQ(msg(p), "gradient-size must be 3, 5 or 7 (the Sobel aperture), got 4");
  p = {};
  p.block_size = 9;
  EXPECT_EQ(msg(p), "block-size must be 3, 5 or 7 (the window), got 9");
  p = {};
  p.max_corners = 0;
  EXPECT_EQ(msg(p), "max-corners must be between 1 and 8192, got 0");
  p.max_corners = 8193;
  EXPECT_EQ(msg(p), "max-corners must be between 1 and 8192, got 8193");
  p = {};
  p.min_distance = -1;
  EXPECT_EQ(msg(p), "min-distance must be between 0 and 32 pixels, got -1");
  p.min_distance = 33;
  EXPECT_FALSE(plan_harris(d, p, &plan).is_ok());
  p = {};
  p.k = -0.01f;
  EXPECT_EQ(msg(p), "k must be between 0 and 0.25 (usually 0.04 to 0.06), got -0.01");
  p.k = NAN;
  EXPECT_FALSE(plan_harris(d, p, &plan).is_ok());
  p = {};
  p.threshold = 1.5f;
  EXPECT_EQ(msg(p),
            "a relative threshold is a fraction of the frame's strongest response, between 0 and "
            "1, got 1.5");
  p.threshold_mode = HarrisThresholdMode::Absolute;
  p.threshold = -1.0f;
  EXPECT_EQ(msg(p), "an absolute threshold must be a finite response >= 0, got -1.0");
  p.threshold = INFINITY;
  EXPECT_FALSE(plan_harris(d, p, &plan).is_ok());
  p.threshold = 1000.0f;  // any finite response is fine
  EXPECT_TRUE(plan_harris(d, p, &plan).is_ok());
  EXPECT_EQ(plan_harris({PixelFormat::RGBA, 0, 4}, HarrisParams{}, &plan).message(),
            "image size must be positive, got 0x4");
  EXPECT_EQ(plan_harris({PixelFormat::GRAY8, 40000, 4}, HarrisParams{}, &plan).message(),
            "harris: image 40000x4 is larger than 32768 pixels on a side");
  std::unique_ptr<HarrisOp> op;
  p = {};
  p.gradient_size = 4;
  EXPECT_FALSE(HarrisOp::create(Backend::Cpu, d, p, &op).is_ok());
  EXPECT_EQ(op, nullptr);
}

TEST(HarrisPlan, CapacityIsOneCornerPerCell) {
  HarrisPlan plan;
  HarrisParams p;
  p.min_distance = 3;
  ASSERT_TRUE(plan_harris({PixelFormat::GRAY8, 100, 50}, p, &plan).is_ok());
  EXPECT_EQ(plan.capacity, 25u * 13u);
  p.min_distance = 0;
  ASSERT_TRUE(plan_harris({PixelFormat::GRAY8, 100, 50}, p, &plan).is_ok());
  EXPECT_EQ(plan.capacity, 5000u);
  EXPECT_EQ(plan.luma.channels, 1);
  ASSERT_TRUE(plan_harris({PixelFormat::ABGR, 10, 10}, p, &plan).is_ok());
  EXPECT_EQ(plan.luma.r, 3);
  EXPECT_EQ(plan.luma.b, 1);
}

TEST(HarrisOp, RejectsBadViews) {
  std::unique_ptr<HarrisOp> op;
  ASSERT_TRUE(HarrisOp::create(Backend::Cpu, {PixelFormat::RGBA, 16, 16}, {}, &op).is_ok());
  HostImage a({PixelFormat::RGBA, 16, 16}), b({PixelFormat::RGBA, 17, 16});
  EXPECT_EQ(op->submit(nullptr, b.view()).message(),
            "harris source: image does not match the op's format or size");
  std::vector<float> resp(16 * 16 + 1);
  EXPECT_EQ(op->submit(nullptr, a.view(), {resp.data(), 60}).message(),
            "harris response: pitch 60 is smaller than its row of 64 bytes");
  EXPECT_EQ(op->submit(nullptr, a.view(), {resp.data(), 66}).message(),
            "harris response: data and pitch must be multiples of 4 bytes");
  EXPECT_EQ(op->submit_response(nullptr, a.view(), {}).message(),
            "harris response: no memory given for the response map");
  EXPECT_TRUE(op->submit(nullptr, a.view(), {resp.data(), 64}).is_ok());
  EXPECT_EQ(op->device_list().count, nullptr);
  std::unique_ptr<HarrisOp> cuda;
  if (!cuda_built()) {
    EXPECT_EQ(HarrisOp::create(Backend::Cuda, {PixelFormat::RGBA, 16, 16}, {}, &cuda).message(),
              "gst-cudafx was built without CUDA support");
  }
}

// ---- the response against OpenCV and the exact value ----

class HarrisVsOpenCV : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(HarrisVsOpenCV, CpuResponseWithinTheStatedBounds) {
  const auto [g, b] = GetParam();
  const int sizes[][2] = {{1, 1}, {2, 3}, {7, 5}, {64, 33}, {173, 97}};
  uint32_t seed = 10 * g + b;
  double worst_exact = 0, worst_cv = 0;
  for (const auto& sz : sizes) {
    for (bool binary : {false, true}) {
      const HostImage src = random_grey(sz[0], sz[1], seed++, binary, 3);
      const cv::Mat grey = testing_support::harris_grey(src);
      for (BorderMode border : kAllBorders) {
        for (HarrisWindow w : kWindows) {
          const HarrisParams p = make_params(g, b, border, w);
          const Detection d = detect_cpu(src, p, 2);
          double we = 0, wc = 0;
          EXPECT_TRUE(testing_support::response_within_bounds(
              d.response, testing_support::harris_cv_response(grey, p),
              testing_support::harris_exact(grey, p), p.k, &we, &wc))
              << sz[0] << "x" << sz[1] << (binary ? " binary " : " ") << describe(p);
          worst_exact = std::max(worst_exact, we);
          worst_cv = std::max(worst_cv, wc);
        }
      }
    }
  }
  RecordProperty("worst_exact_log2", std::to_string(std::log2(worst_exact)));
  RecordProperty("worst_opencv_log2", std::to_string(std::log2(worst_cv)));
}

TEST_P(HarrisVsOpenCV, CpuListIsTheReferenceSuppression) {
  const auto [g, b] = GetParam();
  const HostImage src = random_grey(173, 97, 100 + g * b);
  for (int r : {0, 1, 2, 5}) {
    for (bool subpixel : {false, true}) {
      HarrisParams p = make_params(g, b);
      p.min_distance = r;
      p.subpixel = subpixel;
      p.max_corners = r == 0 ? kHarrisMaxCorners : 300;
      const Detection d = detect_cpu(src, p);
      EXPECT_TRUE(list_matches_reference(d, p)) << describe(p);
      if (r > 0) {
        const cv::Mat grey = testing_support::harris_grey(src);
        expect_sets_match_opencv(d, testing_support::harris_cv_response(grey, p),
                                 testing_support::harris_exact(grey, p), p, describe(p));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GradientAndBlock, HarrisVsOpenCV,
                         ::testing::Combine(::testing::ValuesIn(kSizes), ::testing::ValuesIn(kSizes)),
                         [](const auto& info) {
                           return "g" + std::to_string(std::get<0>(info.param)) + "_b" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Every format reads OpenCV's luma: the op on it gives exactly what the op
// gives on the GRAY8 image cv::cvtColor (or plane 0) makes.
TEST(HarrisFormats, EveryFormatReadsTheOpenCVLuma) {
  uint32_t seed = 300;
  for (PixelFormat f : kAllFormats) {
    for (const auto& sz : {std::make_pair(61, 37), std::make_pair(1, 2)}) {
      HostImage src({f, sz.first, sz.second}, 3);
      src.fill_random(seed++);
      HarrisParams p = make_params(3, 5);
      p.min_distance = 1;
      const HostImage grey = testing_support::grey_image(testing_support::harris_grey(src), 1);
      EXPECT_TRUE(same_detection(detect_cpu(src, p), detect_cpu(grey, p)))
          << format_info(f).name << " " << sz.first << "x" << sz.second;
    }
  }
}

// ---- thresholds, suppression, the list ----

TEST(HarrisOp, ThresholdModes) {
  const HostImage src = random_grey(120, 80, 5);
  HarrisParams p = make_params(3, 3);
  p.min_distance = 2;
  p.threshold = 0.2f;
  const Detection rel = detect_cpu(src, p);
  double max_r = 0;
  cv::minMaxLoc(rel.response, nullptr, &max_r);
  EXPECT_EQ(rel.header.max_response, static_cast<float>(max_r));
  EXPECT_EQ(rel.header.threshold, 0.2f * static_cast<float>(max_r));
  ASSERT_GT(rel.header.count, 0u);
  EXPECT_EQ(rel.corners[0].score, rel.header.max_response);
  for (const HarrisCorner& c : rel.corners)
    EXPECT_GT(c.score, rel.header.threshold);
  EXPECT_TRUE(list_matches_reference(rel, p));

  p.threshold_mode = HarrisThresholdMode::Absolute;
  p.threshold = rel.header.threshold;
  const Detection abs = detect_cpu(src, p);
  EXPECT_TRUE(same_detection(rel, abs));
  p.threshold = static_cast<float>(max_r);  // nothing exceeds the maximum
  const Detection none = detect_cpu(src, p);
  EXPECT_EQ(none.header.count, 0u);
  EXPECT_EQ(none.header.candidates, 0u);

  // A flat frame: no positive response, so no corners in either mode.
  HostImage flat({PixelFormat::GRAY8, 40, 30});
  std::memset(flat.view().data[0], 77, flat.view().pitch[0] * 30);
  p.threshold_mode = HarrisThresholdMode::Relative;
  p.threshold = 0.0f;
  const Detection f = detect_cpu(flat, p);
  EXPECT_EQ(f.header.count, 0u);
  EXPECT_EQ(f.header.max_response, 0.0f);
}

TEST(HarrisOp, MaxCornersKeepsTheStrongest) {
  const HostImage src = random_grey(200, 150, 8);
  HarrisParams p = make_params(5, 5);
  p.min_distance = 1;
  p.threshold = 0.0f;
  p.max_corners = kHarrisMaxCorners;
  const Detection all = detect_cpu(src, p);
  ASSERT_GT(all.header.count, 100u);
  ASSERT_EQ(all.header.count, all.header.candidates);
  for (int k : {1, 7, 100}) {
    p.max_corners = k;
    const Detection some = detect_cpu(src, p);
    EXPECT_EQ(some.header.count, static_cast<uint32_t>(k));
    EXPECT_EQ(some.header.candidates, all.header.candidates);
    EXPECT_EQ(0, std::memcmp(some.corners.data(), all.corners.data(), k * sizeof(HarrisCorner)));
  }
}

TEST(HarrisOp, MinDistanceZeroKeepsEveryPixelAboveTheThreshold) {
  const HostImage src = random_grey(50, 40, 9);
  HarrisParams p = make_params(3, 3);
  p.min_distance = 0;
  p.threshold = 0.3f;
  const Detection d = detect_cpu(src, p);
  int above = 0;
  for (int y = 0; y < 40; y++)
    for (int x = 0; x < 50; x++)
      above += d.response.at<float>(y, x) > d.header.threshold;
  EXPECT_EQ(d.header.candidates, static_cast<uint32_t>(above));
  EXPECT_TRUE(list_matches_reference(d, p));
}

// A periodic pattern gives many exactly equal responses: suppression and
// order fall back on raster order, the same on every run.
TEST(HarrisOp, TiesAreBrokenByRasterOrder) {
  HostImage src({PixelFormat::GRAY8, 96, 64});
  const PlaneView pl = src.view().plane(0);
  for (int y = 0; y < 64; y++)
    for (int x = 0; x < 96; x++)
      pl.data[y * pl.pitch + x] = ((x / 8) % 2) ^ ((y / 8) % 2) ? 200 : 30;
  for (int r : {0, 3, 8}) {
    HarrisParams p = make_params(3, 3);
    p.min_distance = r;
    p.max_corners = 50;
    const Detection d = detect_cpu(src, p);
    EXPECT_TRUE(list_matches_reference(d, p)) << r;
    int equal = 0;
    for (size_t i = 1; i < d.corners.size(); i++)
      if (d.corners[i].score == d.corners[i - 1].score) {
        equal++;
        EXPECT_TRUE(d.corners[i].y > d.corners[i - 1].y ||
                    (d.corners[i].y == d.corners[i - 1].y && d.corners[i].x > d.corners[i - 1].x));
      }
    // With r = 8 each row's first corner suppresses the equal one 8 pixels
    // on, which suppresses the next: raster order decides along the chain.
    if (r < 8) {
      EXPECT_GT(equal, 10) << "the pattern should produce ties";
    }
    EXPECT_TRUE(same_detection(d, detect_cpu(src, p)));
  }
}

TEST(HarrisOp, SubpixelRefinesWithinHalfAPixel) {
  const HostImage src = random_grey(150, 100, 12);
  HarrisParams p = make_params(3, 5);
  p.min_distance = 3;
  const Detection whole = detect_cpu(src, p);
  p.subpixel = true;
  const Detection sub = detect_cpu(src, p);
  ASSERT_EQ(whole.corners.size(), sub.corners.size());
  int moved = 0;
  for (size_t i = 0; i < sub.corners.size(); i++) {
    const HarrisCorner& w = whole.corners[i];
    const HarrisCorner& s = sub.corners[i];
    EXPECT_EQ(w.score, s.score);
    EXPECT_LE(std::abs(s.x - w.x), 0.5f);
    EXPECT_LE(std::abs(s.y - w.y), 0.5f);
    moved += s.x != w.x || s.y != w.y;
    // The parabola's vertex in double.
    const int x = static_cast<int>(w.x), y = static_cast<int>(w.y);
    auto vertex = [](double m, double c, double pl) {
      const double curv = m + pl - 2 * c;
      return curv < 0 ? std::clamp(0.5 * (m - pl) / curv, -0.5, 0.5) : 0.0;
    };
    if (x > 0 && x < 149) {
      EXPECT_NEAR(s.x - x, vertex(sub.response.at<float>(y, x - 1), s.score,
                                  sub.response.at<float>(y, x + 1)), 1e-5);
    }
    if (y > 0 && y < 99) {
      EXPECT_NEAR(s.y - y, vertex(sub.response.at<float>(y - 1, x), s.score,
                                  sub.response.at<float>(y + 1, x)), 1e-5);
    }
  }
  EXPECT_GT(moved, static_cast<int>(sub.corners.size()) / 2);
}

TEST(HarrisOp, ResponseOnlyOwnBufferAndSetParams) {
  const HostImage src = random_grey(90, 70, 13, false, 5);
  HarrisParams p = make_params(5, 3);
  std::unique_ptr<HarrisOp> op;
  ASSERT_TRUE(HarrisOp::create(Backend::Cpu, src.desc(), p, &op).is_ok());
  const Detection d = detect_cpu(src, p);
  cv::Mat resp(70, 90, CV_32F);
  ASSERT_TRUE(op->submit_response(nullptr, src.view(), {resp.ptr<float>(), resp.step}).is_ok());
  EXPECT_EQ(0, cv::norm(resp, d.response, cv::NORM_INF));
  ASSERT_TRUE(op->submit(nullptr, src.view()).is_ok());  // the op's own response buffer
  Detection own;
  own.response = d.response;
  take_list(*op, &own);
  EXPECT_TRUE(same_detection(d, own));

  p.gradient_size = 7;
  p.min_distance = 0;  // a larger capacity
  p.max_corners = 5000;
  ASSERT_TRUE(op->set_params(p).is_ok());
  EXPECT_EQ(op->corners().count, 0);
  ASSERT_TRUE(op->submit(nullptr, src.view()).is_ok());
  Detection again;
  take_list(*op, &again);
  const Detection fresh = detect_cpu(src, p);
  again.response = fresh.response;
  EXPECT_TRUE(same_detection(fresh, again));
  p.block_size = 4;
  EXPECT_FALSE(op->set_params(p).is_ok());
  EXPECT_EQ(op->plan().params.block_size, 3);
}

// ---- corners that are known ----

// White, grey and black rectangles on a grey background: each detection is
// one rectangle corner, found on the inner side of the corner's angle (as
// OpenCV's response peaks: Harris pulls the maximum inside, by about half
// the window), and within one pixel on each axis of the true position (the
// corner of the pixel squares, x0 - 0.5 ...) for a 3x3 box window or a
// Gaussian window up to 5x5 with gradients up to 5; within (b+1)/2 pixels
// for the wider windows and 7x7 gradients. Measured on this frame (per
// axis, integer / sub-pixel): 3x3 box 0.5 / 0.74 (g=3) and 0.91 (g=5);
// 5x5 box 1.5 / 1.44; 7x7 box 2.5 / 2.3; g=7 1.5 (b <= 5), 2.5 (b = 7);
// Gaussian up to 5x5 with g <= 5: 0.5 / 0.90.
TEST(HarrisSynthetic, RectangleCornersFoundWhereTheyAre) {
  struct Rect {
    int x0, y0, x1, y1, value;  // pixels [x0, x1) x [y0, y1)
  };
  const Rect rects[] = {{20, 15, 60, 45, 230}, {90, 30, 150, 52, 10}, {40, 80, 71, 121, 250},
                        {110, 75, 170, 130, 200}};
  HostImage src({PixelFormat::RGBA, 200, 150}, 4);
  const PlaneView pl = src.view().plane(0);
  for (int y = 0; y < 150; y++)
    for (int x = 0; x < 200; x++) {
      int v = 110;
      for (const Rect& r : rects)
        if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1)
          v = r.value;
      uint8_t* px = pl.data + y * pl.pitch + 4 * x;
      px[0] = px[1] = px[2] = static_cast<uint8_t>(v);
      px[3] = 255;
    }
  struct Truth {
    float x, y;
    int sx, sy;  // the inner side: the direction into the rectangle
  };
  std::vector<Truth> truth;
  for (const Rect& r : rects)
    for (int right : {0, 1})
      for (int bottom : {0, 1})
        truth.push_back({(right ? r.x1 : r.x0) - 0.5f, (bottom ? r.y1 : r.y0) - 0.5f,
                         right ? -1 : 1, bottom ? -1 : 1});
  for (int g : kSizes) {
    for (int b : kSizes) {
      for (HarrisWindow w : kWindows) {
        for (bool subpixel : {false, true}) {
          HarrisParams p = make_params(g, b, BorderMode::Reflect101, w);
          p.min_distance = 4;
          p.threshold = 0.05f;
          p.subpixel = subpixel;
          const bool tight = g <= 5 && (w == HarrisWindow::Gaussian ? b <= 5 : b == 3);
          const float tol = tight ? 1.0f : (b + 1) / 2.0f;
          const Detection d = detect_cpu(src, p);
          EXPECT_EQ(d.corners.size(), truth.size()) << describe(p);
          std::vector<int> found(truth.size(), 0);
          for (const HarrisCorner& c : d.corners) {
            size_t best = 0;
            float best_d = 1e9f;
            for (size_t i = 0; i < truth.size(); i++) {
              const float dd = std::max(std::abs(c.x - truth[i].x), std::abs(c.y - truth[i].y));
              if (dd < best_d) {
                best_d = dd;
                best = i;
              }
            }
            const Truth& t = truth[best];
            found[best]++;
            EXPECT_LE(best_d, tol) << describe(p) << ": " << testing_support::corner_text(c)
                                   << " is no corner (nearest (" << t.x << "," << t.y << "))";
            EXPECT_GT((c.x - t.x) * t.sx, 0.0f) << describe(p) << ": " << testing_support::corner_text(c);
            EXPECT_GT((c.y - t.y) * t.sy, 0.0f) << describe(p) << ": " << testing_support::corner_text(c);
          }
          for (size_t i = 0; i < truth.size(); i++)
            EXPECT_EQ(found[i], 1) << describe(p) << ": corner (" << truth[i].x << ","
                                   << truth[i].y << ")";
        }
      }
    }
  }
}

// ---- the test photos ----

namespace {

void check_photo(const HostImage& img, const HarrisParams& p, const std::string& name) {
  const cv::Mat grey = testing_support::harris_grey(img);
  const Detection d = detect_cpu(img, p);
  const cv::Mat cv_resp = testing_support::harris_cv_response(grey, p);
  const testing_support::HarrisExact exact = testing_support::harris_exact(grey, p);
  double we = 0, wc = 0;
  EXPECT_TRUE(testing_support::response_within_bounds(d.response, cv_resp, exact, p.k, &we, &wc))
      << name << " " << describe(p);
  EXPECT_TRUE(list_matches_reference(d, p)) << name << " " << describe(p);
  expect_sets_match_opencv(d, cv_resp, exact, p, name + " " + describe(p));
  EXPECT_GT(d.header.count, 10u) << name << " " << describe(p);
  if (testing_support::gpu_part_runs()) {
    EXPECT_TRUE(same_detection(d, detect_cuda(img, p, 256, 0))) << name << " " << describe(p);
    HarrisParams sub = p;
    sub.subpixel = true;
    EXPECT_TRUE(same_detection(detect_cpu(img, sub), detect_cuda(img, sub, 1, 3)))
        << name << " subpixel " << describe(p);
  }
}

}  // namespace

class HarrisOnPhotos : public ::testing::TestWithParam<const char*> {};

TEST_P(HarrisOnPhotos, MatchesOpenCVAndTheReference) {
  SKIP_WITHOUT_TESTDATA();
  HostImage img;
  ASSERT_TRUE(testing_support::load_testdata_image(GetParam(), PixelFormat::GRAY8, &img));
  const bool large = img.desc().width > 2000;
  std::vector<std::pair<int, int>> configs = {{3, 3}, {5, 5}};
  if (!large)
    configs.insert(configs.end(), {{7, 7}, {3, 7}, {5, 3}});
  for (const auto& gb : configs) {
    HarrisParams p = make_params(gb.first, gb.second);
    p.min_distance = large ? 10 : 4;
    p.max_corners = 2000;
    check_photo(img, p, GetParam());
  }
  // The colour version reads the same luma as cv::cvtColor.
  HostImage rgba;
  ASSERT_TRUE(testing_support::load_testdata_image(GetParam(), PixelFormat::RGBA, &rgba));
  HarrisParams p = make_params(5, 5);
  const HostImage grey = testing_support::grey_image(testing_support::harris_grey(rgba));
  EXPECT_TRUE(same_detection(detect_cpu(rgba, p), detect_cpu(grey, p)));
}

INSTANTIATE_TEST_SUITE_P(TestData, HarrisOnPhotos,
                         ::testing::Values("chessboard.png", "left01.jpg", "building.jpg",
                                           "box.png"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// chessboard.png is 8 x 8 squares: its 49 strongest corners are the 7 x 7
// inner corners, on a regular grid.
TEST(HarrisOnChessboard, FindsTheInnerCornerGrid) {
  SKIP_WITHOUT_TESTDATA();
  HostImage img;
  ASSERT_TRUE(testing_support::load_testdata_image("chessboard.png", PixelFormat::RGBA, &img));
  for (int g : {3, 5}) {
    HarrisParams p = make_params(g, 5);
    p.min_distance = 20;
    p.max_corners = 49;
    p.subpixel = true;
    const Detection d = detect_cpu(img, p);
    ASSERT_EQ(d.corners.size(), 49u);
    std::vector<float> xs, ys;
    for (const HarrisCorner& c : d.corners) {
      xs.push_back(c.x);
      ys.push_back(c.y);
    }
    std::sort(xs.begin(), xs.end());
    std::sort(ys.begin(), ys.end());
    // Seven columns and seven rows of seven corners each, each line within
    // 5 pixels (the board is slightly tilted in the photo: ~3 pixels over
    // its width), evenly spaced (the squares are ~450 pixels).
    for (const auto* v : {&xs, &ys}) {
      std::vector<float> lines;
      for (int i = 0; i < 7; i++) {
        const float lo = (*v)[7 * i], hi = (*v)[7 * i + 6];
        EXPECT_LE(hi - lo, 5.0f) << "line " << i;
        lines.push_back((lo + hi) / 2);
      }
      const float step = (lines[6] - lines[0]) / 6;
      EXPECT_GT(step, 400.0f);
      for (int i = 0; i < 7; i++)
        EXPECT_NEAR(lines[i], lines[0] + i * step, 0.02f * step) << "line " << i;
    }
  }
}

// ---- CUDA equals CPU, byte for byte ----

// On the GPU, and (in every build) the kernels' code emulated on the host.
enum class Kernels { Gpu, Emulated };
void PrintTo(Kernels k, std::ostream* os) { *os << (k == Kernels::Gpu ? "gpu" : "emulated"); }

class HarrisCudaKernels : public ::testing::TestWithParam<Kernels> {
 protected:
  Detection run(const HostImage& src, const HarrisParams& p, size_t align, int resp_pad) {
    return GetParam() == Kernels::Gpu ? detect_cuda(src, p, align, resp_pad)
                                      : detect_emulated(src, p, resp_pad);
  }
};

#define SKIP_UNLESS_KERNELS_RUN()   \
  do {                              \
    if (GetParam() == Kernels::Gpu) \
      SKIP_WITHOUT_GPU();           \
  } while (0)

TEST_P(HarrisCudaKernels, EqualCpuEveryFormatOddSizesAndPitches) {
  SKIP_UNLESS_KERNELS_RUN();
  const int sizes[][2] = {{1, 1}, {7, 5}, {33, 17}, {173, 97}, {333, 211}};
  const size_t aligns[] = {256, 1, 4};
  const int pads[] = {0, 1, 67};
  uint32_t seed = 1000;
  for (PixelFormat f : kAllFormats) {
    for (const auto& sz : sizes) {
      for (int i = 0; i < 3; i++) {
        HostImage src({f, sz[0], sz[1]}, static_cast<size_t>(i));
        src.fill_random(seed++);
        HarrisParams p = make_params(3 + 2 * i, 5 - 2 * (i % 2));
        p.min_distance = i;
        p.subpixel = i == 1;
        EXPECT_TRUE(same_detection(detect_cpu(src, p), run(src, p, aligns[i], pads[i])))
            << format_info(f).name << " " << sz[0] << "x" << sz[1] << " " << describe(p);
      }
    }
  }
}

TEST_P(HarrisCudaKernels, EqualCpuEveryGradientBlockWindowAndBorder) {
  SKIP_UNLESS_KERNELS_RUN();
  uint32_t seed = 2000;
  std::vector<std::pair<int, int>> sizes = {{173, 97}, {5, 3}, {2, 40}};
  if (GetParam() == Kernels::Gpu)
    sizes.push_back({1282, 722});
  for (const auto& sz : sizes) {
    HostImage src({PixelFormat::RGBA, sz.first, sz.second});
    src.fill_random(seed++);
    for (int g : kSizes)
      for (int b : kSizes)
        for (HarrisWindow w : kWindows)
          for (BorderMode border : kAllBorders) {
            const HarrisParams p = make_params(g, b, border, w);
            EXPECT_TRUE(same_detection(detect_cpu(src, p), run(src, p, 256, 0)))
                << sz.first << "x" << sz.second << " " << describe(p);
          }
  }
}

// Black-and-white patterns drive the window sums towards their bounds, where
// the 32-bit (narrow) sums of the response kernel must still be exact.
TEST_P(HarrisCudaKernels, EqualCpuOnHighContrastPatterns) {
  SKIP_UNLESS_KERNELS_RUN();
  const int W = 131, H = 77;
  std::vector<HostImage> patterns;
  std::mt19937 rng(77);
  for (int kind = 0; kind < 5; kind++) {
    HostImage img({PixelFormat::GRAY8, W, H});
    const PlaneView pl = img.view().plane(0);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        bool on;
        switch (kind) {
          case 0: on = rng() & 1; break;                          // random
          case 1: on = (x + y) & 1; break;                        // 1-pixel checkerboard
          case 2: on = ((x / 2) + (y / 2)) & 1; break;            // 2-pixel checkerboard
          case 3: on = x + y > W / 2 && x > y; break;             // diagonal edges
          default: on = ((x / 3) & 1) ^ ((y / 5) & 1) ^ (x > y); break;
        }
        pl.data[y * pl.pitch + x] = on ? 255 : 0;
      }
    patterns.push_back(std::move(img));
  }
  for (size_t i = 0; i < patterns.size(); i++)
    for (int g : kSizes)
      for (int b : kSizes)
        for (HarrisWindow w : kWindows)
          for (BorderMode border : kAllBorders) {
            HarrisParams p = make_params(g, b, border, w);
            p.min_distance = 1;
            EXPECT_TRUE(same_detection(detect_cpu(patterns[i], p), run(patterns[i], p, 1, 1)))
                << "pattern " << i << " " << describe(p);
          }
}

// The selection kernel's paths: scores spread over the buckets (the keys up
// to the max_corners-th one's bucket ranked within their buckets), equal
// scores crowding a bucket with few candidates (sorted whole) or more than
// the sort buffer (radix select of max_corners, then sorted), ties. The
// emulation tells which path each case took: all three must be.
TEST_P(HarrisCudaKernels, EqualCpuInEverySelectionPath) {
  SKIP_UNLESS_KERNELS_RUN();
  HostImage noisy({PixelFormat::GRAY8, 512, 384});
  noisy.fill_random(31);
  HostImage ties({PixelFormat::GRAY8, 512, 384});
  const PlaneView pl = ties.view().plane(0);
  for (int y = 0; y < 384; y++)
    for (int x = 0; x < 512; x++)
      pl.data[y * pl.pitch + x] = ((x / 4) % 2) ^ ((y / 4) % 2) ? 220 : 20;
  // A quarter of it: fewer equal candidates than the sort buffer holds.
  HostImage few_ties({PixelFormat::GRAY8, 128, 96});
  const PlaneView fl = few_ties.view().plane(0);
  for (int y = 0; y < 96; y++)
    std::memcpy(fl.data + y * fl.pitch, pl.data + y * pl.pitch, 128);
  std::set<HarrisSelectPath> paths;
  for (const HostImage* img : {&noisy, &ties, &few_ties}) {
    for (int r : {0, 1, 3, 32}) {
      for (int k : {1, 100, 2047, 2048, 2049, 3000, kHarrisMaxCorners}) {
        HarrisParams p = make_params(3, 3);
        p.min_distance = r;
        p.threshold = 0.0f;
        p.max_corners = k;
        p.subpixel = k == 3000;
        const Detection cpu = detect_cpu(*img, p);
        HarrisSelectPath path = HarrisSelectPath::SortAll;
        const Detection got = GetParam() == Kernels::Gpu ? detect_cuda(*img, p, 256, 0)
                                                         : detect_emulated(*img, p, 0, &path);
        paths.insert(path);
        EXPECT_TRUE(same_detection(cpu, got))
            << (img == &noisy ? "noise " : img == &ties ? "ties " : "few ties ") << describe(p) << ", "
            << cpu.header.candidates << " candidates";
      }
    }
  }
  if (GetParam() == Kernels::Emulated) {
    EXPECT_TRUE(paths.count(HarrisSelectPath::SortAll)) << "no case sorted every candidate";
    EXPECT_TRUE(paths.count(HarrisSelectPath::Buckets)) << "no case took the bucket selection";
    EXPECT_TRUE(paths.count(HarrisSelectPath::Radix)) << "no case took the radix select";
  }
}

TEST_P(HarrisCudaKernels, EqualCpuOnPhotos) {
  SKIP_UNLESS_KERNELS_RUN();
  SKIP_WITHOUT_TESTDATA();
  for (const char* name : {"building.jpg", "box.png", "left01.jpg"}) {
    HostImage img;
    ASSERT_TRUE(testing_support::load_testdata_image(name, PixelFormat::BGRx, &img));
    for (const auto& gb : {std::make_pair(5, 5), std::make_pair(3, 7)}) {
      HarrisParams p = make_params(gb.first, gb.second);
      p.subpixel = true;
      EXPECT_TRUE(same_detection(detect_cpu(img, p), run(img, p, 256, 0))) << name << " " << describe(p);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuAndEmulated, HarrisCudaKernels,
                         ::testing::Values(Kernels::Gpu, Kernels::Emulated),
                         [](const auto& info) {
                           return info.param == Kernels::Gpu ? "gpu" : "emulated";
                         });

TEST(HarrisCuda, LargeFramesEqualCpu) {
  SKIP_WITHOUT_GPU();
  HostImage src({PixelFormat::RGBA, 3842, 2162});
  src.fill_random(41);
  for (const auto& gb : {std::make_pair(3, 3), std::make_pair(5, 5), std::make_pair(7, 7)}) {
    HarrisParams p = make_params(gb.first, gb.second);
    p.min_distance = 5;
    p.max_corners = 5000;
    EXPECT_TRUE(same_detection(detect_cpu(src, p), detect_cuda(src, p, 256, 0))) << describe(p);
  }
}

// The op's own response buffer, the response alone, the device list, and
// repeated submits (atomics in another order) giving the same bytes.
TEST(HarrisCuda, OwnBufferResponseOnlyDeviceListAndRepeats) {
  SKIP_WITHOUT_GPU();
  HostImage src({PixelFormat::NV12, 641, 479});
  src.fill_random(51);
  HarrisParams p = make_params(5, 5);
  p.min_distance = 2;
  p.threshold = 0.001f;
  const Detection cpu = detect_cpu(src, p);
  std::unique_ptr<HarrisOp> op;
  ASSERT_TRUE(HarrisOp::create(Backend::Cuda, src.desc(), p, &op).is_ok());
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  testing_support::DeviceImage din(src.desc());
  ASSERT_TRUE(din.upload(src.view(), stream.get()).is_ok());
  for (int run = 0; run < 5; run++) {
    ASSERT_TRUE(op->submit(stream.get(), din.view()).is_ok());
    uint32_t count = 0;
    ASSERT_TRUE(copy_bytes_async(&count, op->device_list().count, 4, stream.get()).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    Detection d;
    d.response = cpu.response;
    take_list(*op, &d);
    EXPECT_TRUE(same_detection(cpu, d)) << "run " << run;
    EXPECT_EQ(count, cpu.header.count);
  }
  const size_t pitch = 641 * sizeof(float) + 256;
  DeviceBuffer resp;
  ASSERT_TRUE(resp.allocate(pitch * 479).is_ok());
  ASSERT_TRUE(op->submit_response(stream.get(), din.view(), {static_cast<float*>(resp.get()), pitch})
                  .is_ok());
  cv::Mat host(479, static_cast<int>(pitch / 4), CV_32F);
  ASSERT_TRUE(copy_bytes_async(host.data, resp.get(), pitch * 479, stream.get()).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(0, std::memcmp(host(cv::Rect(0, 0, 641, 479)).clone().data, cpu.response.data,
                           641 * 479 * sizeof(float)));
  // New parameters on the same op.
  p.min_distance = 0;
  p.max_corners = 6000;
  ASSERT_TRUE(op->set_params(p).is_ok());
  ASSERT_TRUE(op->submit(stream.get(), din.view()).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  Detection d;
  const Detection cpu2 = detect_cpu(src, p);
  d.response = cpu2.response;
  take_list(*op, &d);
  EXPECT_TRUE(same_detection(cpu2, d));
}
