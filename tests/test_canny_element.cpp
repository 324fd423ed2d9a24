// cudacanny through GstHarness: mode=edges gives the op's GRAY8 map for any
// input format (and cv::Canny's); mode=overlay the frame in its own format
// with the op's overlay blended over it; blur-sigma blurs first (the
// Gaussian op's bytes); thresholds changed while PLAYING apply from the next
// buffer; a bad aperture refused; CUDA memory in, GRAY8 or the same memory
// out, equal to the CPU backend.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <memory>
#include <string>

#include "cudafx/canny.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/overlay_blend.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// Bars and a disc: edges in every direction.
HostImage scene(const ImageDesc& d) {
  HostImage img(d);
  img.fill_random(5);
  const FormatInfo& fi = format_info(d.format);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    const int C = fi.planes[p].channels, s = fi.planes[p].x_shift;
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width * C; x++) {
        const int px = (x / C) << s, py = y << s;
        const int dx = px - d.width / 2, dy = py - d.height / 2;
        const bool disc = dx * dx + dy * dy < d.height * d.height / 9;
        v.data[y * v.pitch + x] = static_cast<uint8_t>(disc ? 220 : 40 + (px / 16) % 4 * 40 + x % C * 7);
      }
  }
  return img;
}

HostImage op_edges(const HostImage& src, const CannyParams& p) {
  std::unique_ptr<CannyOp> op;
  EXPECT_TRUE(CannyOp::create(Backend::Cpu, src.desc(), p, &op).is_ok());
  HostImage e({PixelFormat::GRAY8, src.desc().width, src.desc().height});
  EXPECT_TRUE(op->submit(nullptr, src.view(), e.view().plane(0)).is_ok());
  return e;
}

CannyParams params(double lo, double hi) {
  CannyParams p;
  p.low = lo;
  p.high = hi;
  return p;
}

HostImage pull_gray8(GstHarness* h, const HostImage& src) {
  GstBuffer* b = buffer_from_image(src);
  EXPECT_EQ(gst_harness_push(h, b), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  HostImage got;
  EXPECT_TRUE(out && image_from_buffer(out, {PixelFormat::GRAY8, src.desc().width,
                                             src.desc().height}, &got));
  if (out)
    gst_buffer_unref(out);
  return got;
}

}  // namespace

TEST(CannyElement, EdgesModeGivesTheMapAsGray8) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12, PixelFormat::GRAY8}) {
    const ImageDesc d{f, 96, 64};
    GstHarness* h = harness_with("cudacanny", "backend=cpu low-threshold=30 high-threshold=90");
    gst_harness_set_src_caps_str(h, caps_string(d).c_str());
    gst_harness_set_sink_caps_str(h, caps_string({PixelFormat::GRAY8, 96, 64}).c_str());
    const HostImage src = scene(d);
    const HostImage got = pull_gray8(h, src);
    const HostImage want = op_edges(src, params(30, 90));
    EXPECT_TRUE(bytes_equal(got.view(), want.view())) << format_info(f).name;
    EXPECT_GT(cv::countNonZero(got.plane_mat(0)), 50);
    gst_harness_teardown(h);
  }
}

TEST(CannyElement, ThresholdsWhilePlayingAndBlur) {
  const ImageDesc d{PixelFormat::GRAY8, 96, 64};
  GstHarness* h = harness_with("cudacanny", "backend=cpu low-threshold=30 high-threshold=90");
  set_caps(h, d);
  const HostImage src = scene(d);
  EXPECT_TRUE(bytes_equal(pull_gray8(h, src).view(), op_edges(src, params(30, 90)).view()));
  g_object_set(h->element, "low-threshold", 100.0, "high-threshold", 300.0, nullptr);
  EXPECT_TRUE(bytes_equal(pull_gray8(h, src).view(), op_edges(src, params(100, 300)).view()));
  g_object_set(h->element, "blur-sigma", 1.5, nullptr);
  std::unique_ptr<GaussianOp> blur;
  GaussianParams g;
  g.sigma_x = 1.5;
  ASSERT_TRUE(GaussianOp::create(Backend::Cpu, d, g, &blur).is_ok());
  HostImage blurred(d);
  ASSERT_TRUE(blur->submit(nullptr, src.view(), blurred.view()).is_ok());
  EXPECT_TRUE(bytes_equal(pull_gray8(h, src).view(), op_edges(blurred, params(100, 300)).view()));
  g_object_set(h->element, "aperture", 4, nullptr);  // warns
  gint a = 0;
  g_object_get(h->element, "aperture", &a, nullptr);
  EXPECT_EQ(a, 3);
  gst_harness_teardown(h);
}

TEST(CannyElement, OverlayModeBlendsTheEdgesOverTheFrame) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    const ImageDesc d{f, 96, 64};
    GstHarness* h = harness_with("cudacanny", "backend=cpu mode=overlay color=0xffff0000 "
                                              "low-threshold=30 high-threshold=90");
    set_caps(h, d);
    const HostImage src = scene(d);
    const HostImage got = push_pull(h, src);
    // The expected frame: the op's overlay blended over a copy.
    std::unique_ptr<CannyOp> op;
    ASSERT_TRUE(CannyOp::create(Backend::Cpu, d, params(30, 90), &op).is_ok());
    HostImage ov({PixelFormat::RGBA, 96, 64});
    ASSERT_TRUE(op->submit_overlay(nullptr, src.view(), ov.view().plane(0), 0xffff0000u).is_ok());
    HostImage want(d);
    want.copy_from(src.view());
    ASSERT_TRUE(blend_overlay(Backend::Cpu, nullptr, want.view(),
                              OverlayImage{ov.view().plane(0).data, ov.view().plane(0).pitch, 96, 64},
                              0, 0, OverlayColorimetry{})
                    .is_ok());
    EXPECT_TRUE(bytes_equal(got.view(), want.view())) << format_info(f).name;
    EXPECT_FALSE(bytes_equal(got.view(), src.view()));
    gst_harness_teardown(h);
  }
}

TEST(CannyElement, CudaMemoryMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  const ImageDesc d{PixelFormat::NV12, 320, 180};
  const HostImage src = scene(d);
  // Edges: CUDA memory in, GRAY8 (system memory) out.
  GstHarness* h = harness_parse(
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudacanny name=g0 backend=cuda "
      "low-threshold=30 high-threshold=90");
  gst_harness_set_src_caps_str(h, caps_string(d).c_str());
  gst_harness_set_sink_caps_str(h, caps_string({PixelFormat::GRAY8, 320, 180}).c_str());
  EXPECT_TRUE(bytes_equal(pull_gray8(h, src).view(), op_edges(src, params(30, 90)).view()));
  EXPECT_EQ(negotiated_memory(h), "CS");
  gst_harness_teardown(h);
  // Overlay: CUDA memory through.
  h = harness_parse(
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudacanny name=g0 backend=cuda "
      "mode=overlay ! cudadownload");
  GstHarness* ref = harness_with("cudacanny", "backend=cpu mode=overlay");
  set_caps(h, d);
  set_caps(ref, d);
  EXPECT_TRUE(bytes_equal(push_pull(h, src).view(), push_pull(ref, src).view()));
  EXPECT_EQ(negotiated_memory(h), "CC");
  gst_harness_teardown(ref);
  gst_harness_teardown(h);
}

// The CUDA backend on frames in system memory (the element's pinned pool
// and the device in between) gives the CPU backend's bytes: edges as GRAY8,
// and the overlay after a blur on the GPU.
TEST(CannyElement, CudaBackendInSystemMemoryMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const ImageDesc d{PixelFormat::RGBA, 333, 211};
  const HostImage src = scene(d);
  GstHarness* gpu = harness_with("cudacanny", "backend=cuda low-threshold=30 high-threshold=90");
  GstHarness* cpu = harness_with("cudacanny", "backend=cpu low-threshold=30 high-threshold=90");
  const ImageDesc gray{PixelFormat::GRAY8, d.width, d.height};
  for (GstHarness* h : {gpu, cpu}) {
    gst_harness_set_src_caps_str(h, caps_string(d).c_str());
    gst_harness_set_sink_caps_str(h, caps_string(gray).c_str());
  }
  EXPECT_TRUE(bytes_equal(pull_gray8(gpu, src).view(), pull_gray8(cpu, src).view()));
  gst_harness_teardown(gpu);
  gst_harness_teardown(cpu);
  const std::string overlay = " mode=overlay blur-sigma=1.5 aperture=5 l2-gradient=true";
  gpu = harness_with("cudacanny", "backend=cuda" + overlay);
  cpu = harness_with("cudacanny", "backend=cpu" + overlay);
  for (GstHarness* h : {gpu, cpu}) {
    set_caps(h, d);
  }
  EXPECT_TRUE(bytes_equal(push_pull(gpu, src).view(), push_pull(cpu, src).view()));
  gst_harness_teardown(gpu);
  gst_harness_teardown(cpu);
}
