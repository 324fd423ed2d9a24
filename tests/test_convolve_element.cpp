// cudaconvolve through GstHarness: the op's bytes for the kernel given as
// text; the kernel changed while PLAYING applies from the next buffer; a
// bad kernel refused at once with the old one kept; frames in CUDA memory
// equal to the CPU backend and staying there.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cudafx/convolve.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

HostImage op_output(const HostImage& src, const char* text, double divisor = 0,
                    double offset = 0) {
  ConvolveParams p;
  EXPECT_TRUE(parse_convolve_kernel(text, &p).is_ok());
  p.divisor = divisor;
  p.offset = offset;
  std::unique_ptr<ConvolveOp> op;
  EXPECT_TRUE(ConvolveOp::create(Backend::Cpu, src.desc(), p, &op).is_ok());
  HostImage out(src.desc());
  EXPECT_TRUE(op->submit(nullptr, src.view(), out.view()).is_ok());
  return out;
}

}  // namespace

TEST(ConvolveElement, IsTheOpAndFollowsTheKernelWhilePlaying) {
  const ImageDesc d{PixelFormat::NV12, 64, 36};
  GstHarness* h = harness_with("cudaconvolve",
                               "backend=cpu kernel=\"-1 0 1; -2 0 2; -1 0 1\" divisor=1 offset=128");
  set_caps(h, d);
  HostImage src(d);
  src.fill_random(3);
  EXPECT_TRUE(bytes_equal(push_pull(h, src).view(),
                          op_output(src, "-1 0 1; -2 0 2; -1 0 1", 1, 128).view()));
  g_object_set(h->element, "kernel", "1 1 1; 1 1 1; 1 1 1", "divisor", 0.0, "offset", 0.0,
               nullptr);
  EXPECT_TRUE(bytes_equal(push_pull(h, src).view(), op_output(src, "1 1 1; 1 1 1; 1 1 1").view()));
  gst_harness_teardown(h);
}

TEST(ConvolveElement, BadKernelIsRefusedAndTheOldKept) {
  GstElement* e = gst_element_factory_make("cudaconvolve", nullptr);
  ASSERT_NE(e, nullptr);
  g_object_set(e, "kernel", "1 2 1", nullptr);
  for (const char* bad : {"1 2", "1 x 1", "1 2; 3", ""}) {
    g_object_set(e, "kernel", bad, nullptr);  // warns
    gchar* k = nullptr;
    g_object_get(e, "kernel", &k, nullptr);
    EXPECT_STREQ(k, "1 2 1") << bad;
    g_free(k);
  }
  gst_object_unref(e);
}

// The kernel as a GStreamer array (gst-launch syntax): the same kernel, its
// text form in `kernel`; a non-square array refused.
TEST(ConvolveElement, KernelAsAGStreamerArray) {
  GstElement* e = gst_element_factory_make("cudaconvolve", nullptr);
  ASSERT_NE(e, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "kernel-array", "<1, 2, 1, 2, 4, 2, 1, 2, 1>");
  gchar* k = nullptr;
  g_object_get(e, "kernel", &k, nullptr);
  EXPECT_STREQ(k, "1 2 1; 2 4 2; 1 2 1");
  g_free(k);
  gst_util_set_object_arg(G_OBJECT(e), "kernel-array", "<1, 2>");  // warns
  g_object_get(e, "kernel", &k, nullptr);
  EXPECT_STREQ(k, "1 2 1; 2 4 2; 1 2 1");
  g_free(k);
  gst_object_unref(e);

  const ImageDesc d{PixelFormat::GRAY8, 40, 20};
  GstHarness* h = harness_with("cudaconvolve", "backend=cpu kernel-array=\"<0, -1, 0, -1, 5, -1, 0, -1, 0>\"");
  set_caps(h, d);
  HostImage src(d);
  src.fill_random(4);
  EXPECT_TRUE(bytes_equal(push_pull(h, src).view(), op_output(src, "0 -1 0; -1 5 -1; 0 -1 0").view()));
  gst_harness_teardown(h);
}

TEST(ConvolveElement, CudaMemoryChain) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::I420}) {
    const ImageDesc d{f, 333, 211};
    GstHarness* h = harness_parse(
        "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudaconvolve name=g0 backend=cuda "
        "kernel=\"0 -1 0; -1 5 -1; 0 -1 0\" ! cudadownload");
    set_caps(h, d);
    HostImage src(d);
    src.fill_random(9);
    EXPECT_TRUE(bytes_equal(push_pull(h, src).view(),
                            op_output(src, "0 -1 0; -1 5 -1; 0 -1 0").view()))
        << format_info(f).name;
    EXPECT_EQ(negotiated_memory(h), "CC");
    gst_harness_teardown(h);
  }
}

// The CUDA backend on frames in system memory gives the CPU backend's
// bytes: a 5x5 integer kernel (the tensor-core path on sm_80+), a float
// kernel, and NV12 with its chroma filtered.
TEST(ConvolveElement, CudaBackendInSystemMemoryMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  struct Case {
    PixelFormat f;
    const char* props;
  } cases[] = {
      {PixelFormat::RGBA,
       "kernel=\"1 2 3 2 1; 2 4 6 4 2; 3 6 -9 6 3; 2 4 6 4 2; 1 2 3 2 1\" divisor=60"},
      {PixelFormat::RGBA, "kernel=\"0.1 0.2 0.1; 0.2 -0.25 0.2; 0.1 0.2 0.1\" offset=3.5"},
      {PixelFormat::NV12, "kernel=\"1 2 1; 2 4 2; 1 2 1\" divisor=16 filter-chroma=true"},
  };
  for (const Case& c : cases) {
    const ImageDesc d{c.f, 333, 211};
    HostImage src(d);
    src.fill_random(21);
    GstHarness* gpu = harness_with("cudaconvolve", std::string("backend=cuda ") + c.props);
    GstHarness* cpu = harness_with("cudaconvolve", std::string("backend=cpu ") + c.props);
    for (GstHarness* h : {gpu, cpu}) {
    set_caps(h, d);
  }
    EXPECT_TRUE(bytes_equal(push_pull(gpu, src).view(), push_pull(cpu, src).view()))
        << c.props;
    gst_harness_teardown(gpu);
    gst_harness_teardown(cpu);
  }
}
