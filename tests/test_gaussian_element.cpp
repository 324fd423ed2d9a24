// cudagaussian as GStreamer sees it: GstHarness in both memory modes and both
// backends, compared with cv::GaussianBlur; properties; errors; allocation.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <string>

#include "cudafx/gaussian.hpp"
#include "support/gaussian_oracle.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

GstHarness* gaussian_harness(const ImageDesc& desc, const char* backend, double sigma,
                             const char* border = "replicate") {
  GstHarness* h = gst_harness_new("cudagaussian");
  gst_util_set_object_arg(G_OBJECT(h->element), "backend", backend);
  gst_util_set_object_arg(G_OBJECT(h->element), "border-mode", border);
  g_object_set(h->element, "sigma", sigma, nullptr);
  const std::string caps = caps_string(desc);
  gst_harness_set_caps_str(h, caps.c_str(), caps.c_str());
  return h;
}

GaussianParams params_of(double sigma, BorderMode border = BorderMode::Replicate) {
  GaussianParams p;
  p.sigma_x = sigma;
  p.border = border;
  return p;
}

}  // namespace

class ElementAllFormats : public ::testing::TestWithParam<PixelFormat> {};

TEST_P(ElementAllFormats, CpuBackendMatchesOpenCV) {
  const ImageDesc desc{GetParam(), 173, 97};
  HostImage src(desc);
  src.fill_random(11);
  GstHarness* h = gaussian_harness(desc, "cpu", 2.0, "reflect-101");
  const HostImage got = push_pull(h, src, 3);
  EXPECT_LE(max_abs_diff(got.view(), gaussian_oracle(src, params_of(2.0, BorderMode::Reflect101))
                                         .view()),
            1);
  gst_harness_teardown(h);
}

TEST_P(ElementAllFormats, CudaBackendEqualsCpuBackend) {
  SKIP_WITHOUT_GPU();
  const ImageDesc desc{GetParam(), 333, 211};
  HostImage src(desc);
  src.fill_random(12);
  GstHarness* cpu = gaussian_harness(desc, "cpu", 3.5);
  GstHarness* gpu = gaussian_harness(desc, "cuda", 3.5);
  const HostImage a = push_pull(cpu, src, 5);
  const HostImage b = push_pull(gpu, src, 5);
  EXPECT_TRUE(bytes_equal(a.view(), b.view())) << "max diff " << max_abs_diff(a.view(), b.view());
  EXPECT_LE(max_abs_diff(b.view(), gaussian_oracle(src, params_of(3.5)).view()), 1);
  gst_harness_teardown(cpu);
  gst_harness_teardown(gpu);
}

INSTANTIATE_TEST_SUITE_P(Formats, ElementAllFormats,
                         ::testing::Values(PixelFormat::RGBA, PixelFormat::BGRx, PixelFormat::ARGB,
                                           PixelFormat::RGB, PixelFormat::BGR, PixelFormat::GRAY8,
                                           PixelFormat::I420, PixelFormat::NV12,
                                           PixelFormat::Y444),
                         [](const auto& info) { return format_info(info.param).name; });

TEST(Element, SigmaAndBorderChangeWhilePlaying) {
  const ImageDesc desc{PixelFormat::RGBA, 64, 48};
  HostImage src(desc);
  src.fill_random(21);
  const char* backends[] = {"cpu", "cuda"};
  for (const char* backend : backends) {
    if (std::string(backend) == "cuda" && !gpu_available())
      continue;
    GstHarness* h = gaussian_harness(desc, backend, 1.0);
    EXPECT_LE(max_abs_diff(push_pull(h, src).view(), gaussian_oracle(src, params_of(1.0)).view()),
              1);
    g_object_set(h->element, "sigma", 9.0, nullptr);
    gst_util_set_object_arg(G_OBJECT(h->element), "border-mode", "constant");
    EXPECT_LE(max_abs_diff(push_pull(h, src).view(),
                           gaussian_oracle(src, params_of(9.0, BorderMode::Constant)).view()),
              1)
        << backend;
    GaussianParams p = params_of(9.0, BorderMode::Constant);
    p.kernel_size_x = p.kernel_size_y = 5;
    g_object_set(h->element, "kernel-size", 5, nullptr);
    EXPECT_LE(max_abs_diff(push_pull(h, src).view(), gaussian_oracle(src, p).view()), 1)
        << backend;
    gst_harness_teardown(h);
  }
}

TEST(Element, InvalidPropertyValuesAreRejected) {
  GstElement* e = gst_element_factory_make("cudagaussian", nullptr);
  ASSERT_NE(e, nullptr);
  // Out-of-range values: GObject refuses them and keeps the old value.
  const guint handler = g_log_set_handler(
      "GLib-GObject", G_LOG_LEVEL_WARNING, [](const gchar*, GLogLevelFlags, const gchar*, gpointer) {},
      nullptr);
  const guint handler2 = g_log_set_handler(
      "cudafx", G_LOG_LEVEL_WARNING, [](const gchar*, GLogLevelFlags, const gchar*, gpointer) {},
      nullptr);
  g_object_set(e, "sigma", 100.0, nullptr);
  g_object_set(e, "sigma", 0.0, nullptr);
  g_object_set(e, "kernel-size", 4, nullptr);
  g_object_set(e, "kernel-size", 301, nullptr);
  g_log_remove_handler("GLib-GObject", handler);
  g_log_remove_handler("cudafx", handler2);
  gdouble sigma = 0;
  gint ksize = -1;
  g_object_get(e, "sigma", &sigma, "kernel-size", &ksize, nullptr);
  EXPECT_DOUBLE_EQ(sigma, 1.0);
  EXPECT_EQ(ksize, 0);
  g_object_set(e, "kernel-size", 7, nullptr);
  g_object_get(e, "kernel-size", &ksize, nullptr);
  EXPECT_EQ(ksize, 7);
  gst_object_unref(e);
}

TEST(Element, CudaBackendWithoutDeviceFailsWithClearError) {
  std::string why;
  if (gpu_available(&why))
    GTEST_SKIP() << "a CUDA device is present";
  const std::string text =
      start_error("videotestsrc num-buffers=2 ! cudagaussian backend=cuda ! fakesink");
  EXPECT_EQ(text.rfind("backend=cuda but no usable CUDA device: ", 0), 0u) << text;
  EXPECT_GT(text.size(), std::string("backend=cuda but no usable CUDA device: ").size());
}

TEST(Element, AutoBackendFallsBackToCpuWithWarning) {
  std::string why;
  if (gpu_available(&why))
    GTEST_SKIP() << "a CUDA device is present";
  const ImageDesc desc{PixelFormat::RGBA, 32, 16};
  HostImage src(desc);
  src.fill_random(5);
  GstHarness* h = gaussian_harness(desc, "auto", 1.5);
  EXPECT_LE(max_abs_diff(push_pull(h, src).view(), gaussian_oracle(src, params_of(1.5)).view()), 1);
  gst_harness_teardown(h);
}

// The pool proposed upstream: pinned memory on the CUDA backend, a video
// pool with video meta on the CPU backend.
TEST(Element, ProposesAllocation) {
  const ImageDesc desc{PixelFormat::NV12, 320, 240};
  for (const char* backend : {"cpu", "cuda"}) {
    const bool cuda = std::string(backend) == "cuda";
    if (cuda && !gpu_available())
      continue;
    GstHarness* h = gaussian_harness(desc, backend, 1.0);
    GstCaps* caps = gst_caps_from_string(caps_string(desc).c_str());
    GstQuery* q = gst_query_new_allocation(caps, TRUE);
    ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q)) << backend;
    EXPECT_TRUE(gst_query_find_allocation_meta(q, GST_VIDEO_META_API_TYPE, nullptr));
    ASSERT_GE(gst_query_get_n_allocation_pools(q), 1u);
    GstBufferPool* pool = nullptr;
    guint size = 0;
    gst_query_parse_nth_allocation_pool(q, 0, &pool, &size, nullptr, nullptr);
    ASSERT_NE(pool, nullptr);
    EXPECT_GE(size, 320u * 240 * 3 / 2);
    GstStructure* config = gst_buffer_pool_get_config(pool);
    GstAllocator* alloc = nullptr;
    gst_buffer_pool_config_get_allocator(config, &alloc, nullptr);
    if (cuda) {
      ASSERT_NE(alloc, nullptr);
      EXPECT_STREQ(alloc->mem_type, "CudaFxPinnedMemory");
      // The pool hands out pinned buffers that work as system memory.
      ASSERT_TRUE(gst_buffer_pool_set_active(pool, TRUE));
      GstBuffer* b = nullptr;
      ASSERT_EQ(gst_buffer_pool_acquire_buffer(pool, &b, nullptr), GST_FLOW_OK);
      GstMapInfo map;
      ASSERT_TRUE(gst_buffer_map(b, &map, GST_MAP_WRITE));
      memset(map.data, 7, map.size);
      gst_buffer_unmap(b, &map);
      EXPECT_STREQ(gst_buffer_peek_memory(b, 0)->allocator->mem_type, "CudaFxPinnedMemory");
      gst_buffer_unref(b);
      gst_buffer_pool_set_active(pool, FALSE);
    }
    gst_structure_free(config);
    gst_object_unref(pool);
    gst_query_unref(q);
    gst_caps_unref(caps);
    gst_harness_teardown(h);
  }
}

// With the CUDA backend, system-memory outputs come from pinned memory so the
// device-to-host copy runs at full speed and asynchronously.
TEST(Element, CudaBackendOutputsPinnedMemory) {
  SKIP_WITHOUT_GPU();
  const ImageDesc desc{PixelFormat::RGBA, 64, 48};
  HostImage src(desc);
  src.fill_random(41);
  GstHarness* h = gaussian_harness(desc, "cuda", 1.0);
  ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  EXPECT_STREQ(gst_buffer_peek_memory(out, 0)->allocator->mem_type, "CudaFxPinnedMemory");
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// When downstream takes either memory, the output stays in the input's.
TEST(Element, OutputKeepsTheInputsMemoryType) {
  SKIP_WITHOUT_GPU();
  if (!have_element("cudaupload"))
    GTEST_SKIP() << "nvcodec's cudaupload is not available";
  const ImageDesc desc{PixelFormat::NV12, 64, 48};
  const std::string sys = caps_string(desc), cuda = caps_string(desc, true);
  for (const bool in_cuda : {false, true}) {
    GstHarness* h = gst_harness_new_parse(
        in_cuda ? "cudaupload ! capsfilter caps=video/x-raw(memory:CUDAMemory) ! cudagaussian "
                  "backend=cuda"
                : "cudagaussian backend=cuda");
    gst_harness_set_src_caps_str(h, sys.c_str());
    gst_harness_set_sink_caps_str(h, (cuda + ";" + sys).c_str());
    HostImage src(desc);
    src.fill_random(51);
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    ASSERT_NE(caps, nullptr);
    const bool out_cuda = gst_caps_features_contains(gst_caps_get_features(caps, 0),
                                                     "memory:CUDAMemory");
    EXPECT_EQ(out_cuda, in_cuda) << gst_caps_to_string(caps);
    gst_caps_unref(caps);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// Frames that stay in CUDA memory, and every mix of memory types, against
// the same filters on the CPU backend in system memory.
struct Chain {
  const char* name;
  const char* pipeline;
  const char* reference;
};

class ElementCudaMemory : public ::testing::TestWithParam<Chain> {};

TEST_P(ElementCudaMemory, MatchesCpuBackend) {
  SKIP_WITHOUT_GPU();
  if (!have_element("cudaupload") || !have_element("cudadownload"))
    GTEST_SKIP() << "nvcodec's cudaupload/cudadownload are not available";
  const ImageDesc desc{PixelFormat::NV12, 333, 211};
  HostImage src(desc);
  src.fill_random(31);
  const std::string caps = caps_string(desc);
  GstHarness* ref = gst_harness_new_parse(GetParam().reference);
  gst_harness_set_caps_str(ref, caps.c_str(), caps.c_str());
  const HostImage want = push_pull(ref, src);
  gst_harness_teardown(ref);

  GstHarness* h = gst_harness_new_parse(GetParam().pipeline);
  gst_harness_set_caps_str(h, caps.c_str(), caps.c_str());
  const HostImage got = push_pull(h, src, 7);
  EXPECT_TRUE(bytes_equal(got.view(), want.view())) << GetParam().pipeline;
  EXPECT_FALSE(bytes_equal(got.view(), src.view())) << "blur changed nothing";
  gst_harness_teardown(h);
}

const Chain kChains[] = {
    {"CudaToCuda", "cudaupload ! cudagaussian sigma=2.5 backend=cuda ! cudadownload",
     "cudagaussian sigma=2.5 backend=cpu"},
    {"CudaToSystem",
     "cudaupload ! cudagaussian sigma=2.5 backend=cuda ! capsfilter caps=video/x-raw",
     "cudagaussian sigma=2.5 backend=cpu"},
    {"SystemToCuda",
     "cudagaussian sigma=2.5 backend=cuda ! capsfilter caps=video/x-raw(memory:CUDAMemory)"
     " ! cudadownload",
     "cudagaussian sigma=2.5 backend=cpu"},
    {"TwoInCuda",
     "cudaupload ! cudagaussian sigma=1.0 backend=cuda ! cudagaussian sigma=2.0 backend=cuda"
     " ! cudadownload",
     "cudagaussian sigma=1.0 backend=cpu ! cudagaussian sigma=2.0 backend=cpu"},
};

INSTANTIATE_TEST_SUITE_P(Chains, ElementCudaMemory, ::testing::ValuesIn(kChains),
                         [](const ::testing::TestParamInfo<Chain>& info) {
                           return std::string(info.param.name);
                         });
