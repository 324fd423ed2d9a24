// cudaautocontrast through GstHarness: the op's bytes for the properties
// given, in both RGB modes and on GRAY8/YUV; clip levels and channels
// changed while PLAYING apply from the next buffer; smoothing from the
// running times; frames in CUDA memory equal to the CPU backend and staying
// there.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "cudafx/autocontrast.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// A dull frame: bytes in [lo, lo + 100).
HostImage dull_frame(const ImageDesc& d, uint32_t seed, int lo) {
  HostImage img(d);
  std::mt19937 rng(seed);
  const FormatInfo& fi = format_info(d.format);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width * fi.planes[p].channels; x++)
        v.data[static_cast<size_t>(y) * v.pitch + x] = static_cast<uint8_t>(lo + x % 5 + rng() % 95);
  }
  return img;
}

// The op on the CPU, frame after frame.
class Reference {
 public:
  explicit Reference(const ImageDesc& d) {
    EXPECT_TRUE(AutoContrastOp::create(Backend::Cpu, d, &op_).is_ok());
  }
  HostImage run(const HostImage& src, const AutoContrastParams& p, double weight) {
    HostImage out(src.desc());
    out.copy_from(src.view());
    EXPECT_TRUE(op_->submit(nullptr, out.view(), p, weight).is_ok());
    return out;
  }

 private:
  std::unique_ptr<AutoContrastOp> op_;
};

AutoContrastParams params(double lo, double hi, bool luma) {
  AutoContrastParams p;
  p.clip_low = lo;
  p.clip_high = hi;
  p.luma = luma;
  return p;
}

}  // namespace

TEST(AutoContrastElement, FrameModeIsTheOp) {
  struct Case {
    PixelFormat f;
    const char* props;
    AutoContrastParams p;
  } cases[] = {
      {PixelFormat::RGBA, "", params(0.5, 0.5, false)},
      {PixelFormat::BGR, "channels=luma clip-low=2 clip-high=0", params(2, 0, true)},
      {PixelFormat::GRAY8, "clip-high=5", params(0.5, 5, false)},
      {PixelFormat::NV12, "channels=luma", params(0.5, 0.5, true)},
      {PixelFormat::I420, "", params(0.5, 0.5, false)},
  };
  for (const Case& c : cases) {
    const ImageDesc d{c.f, 67, 45};
    GstHarness* h = harness_with("cudaautocontrast", std::string("backend=cpu ") + c.props);
    set_caps(h, d);
    Reference ref(d);
    for (int i = 0; i < 2; i++) {
      const HostImage src = dull_frame(d, 10 + i, 40 + 30 * i);
      const HostImage got = push_pull_at(h, src, i * GST_SECOND / 30);
      EXPECT_TRUE(bytes_equal(got.view(), ref.run(src, c.p, 1.0).view()))
          << format_info(c.f).name << " " << c.props << " " << i;
      EXPECT_FALSE(bytes_equal(got.view(), src.view()));
    }
    gst_harness_teardown(h);
  }
}

// Properties set while PLAYING apply from the next buffer; a change of
// channels restarts the averaged levels (they were of other histograms).
TEST(AutoContrastElement, PropertiesWhilePlayingAndSmoothing) {
  const ImageDesc d{PixelFormat::RGBx, 40, 30};
  GstHarness* h = harness_with("cudaautocontrast", "backend=cpu mode=smooth time-constant=0.5");
  set_caps(h, d);
  Reference ref(d);
  const double w = -std::expm1(-0.1 / 0.5);
  HostImage a = dull_frame(d, 20, 30), b = dull_frame(d, 21, 120);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, a, 0).view(), ref.run(a, params(0.5, 0.5, false), 1.0).view()));
  EXPECT_TRUE(bytes_equal(push_pull_at(h, b, GST_SECOND / 10).view(),
                          ref.run(b, params(0.5, 0.5, false), w).view()));
  g_object_set(h->element, "clip-low", 3.0, nullptr);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, a, 2 * GST_SECOND / 10).view(),
                          ref.run(a, params(3, 0.5, false), w).view()));
  g_object_set(h->element, "channels", 1, nullptr);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, b, 3 * GST_SECOND / 10).view(),
                          ref.run(b, params(3, 0.5, true), w).view()));
  gst_harness_teardown(h);
}

TEST(AutoContrastElement, ClipRangeKeepsTheSumBelow100) {
  GstElement* e = gst_element_factory_make("cudaautocontrast", nullptr);
  ASSERT_NE(e, nullptr);
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "clip-low");
  ASSERT_NE(spec, nullptr);
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_TYPE_DOUBLE);
  g_value_set_double(&v, 60.0);
  EXPECT_TRUE(g_param_value_validate(spec, &v)) << "60 % is outside the range (clamped)";
  g_value_unset(&v);
  gst_object_unref(e);
}

TEST(AutoContrastElement, CudaMemoryChain) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    const ImageDesc d{f, 333, 211};
    GstHarness* h = harness_parse(
        "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudaautocontrast name=g0 backend=cuda "
        "mode=smooth channels=luma ! cudadownload");
    set_caps(h, d);
    Reference ref(d);
    for (int i = 0; i < 3; i++) {
      const HostImage src = dull_frame(d, 50 + i, 30 + 40 * i);
      const double w = i == 0 ? 1.0 : -std::expm1(-(1.0 / 30) / 1.0);
      EXPECT_TRUE(bytes_equal(push_pull_at(h, src, i * GST_SECOND / 30).view(),
                              ref.run(src, params(0.5, 0.5, true), w).view()))
          << format_info(f).name << " " << i;
    }
    EXPECT_EQ(negotiated_memory(h), "CC");
    gst_harness_teardown(h);
  }
}

// The CUDA backend on frames in system memory gives the CPU backend's
// bytes, frame after frame in smooth mode (per channel on RGBA, by luma on
// NV12).
TEST(AutoContrastElement, CudaBackendInSystemMemoryMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    const ImageDesc d{f, 333, 211};
    const std::string props =
        std::string("mode=smooth time-constant=0.2 clip-low=2 clip-high=3") +
        (f == PixelFormat::RGBA ? " channels=per-channel" : "");
    GstHarness* gpu = harness_with("cudaautocontrast", "backend=cuda " + props);
    GstHarness* cpu = harness_with("cudaautocontrast", "backend=cpu " + props);
    for (GstHarness* h : {gpu, cpu})
      set_caps(h, d);
    for (int n = 0; n < 3; n++) {
      const HostImage src = dull_frame(d, 30 + n, 40 + 10 * n);
      EXPECT_TRUE(bytes_equal(push_pull(gpu, src).view(), push_pull(cpu, src).view()))
          << format_info(f).name << " frame " << n;
    }
    gst_harness_teardown(gpu);
    gst_harness_teardown(cpu);
  }
}
