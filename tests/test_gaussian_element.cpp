// cudagaussian as GStreamer sees it: GstHarness in both memory modes and both
// backends, compared with cv::GaussianBlur; properties; errors; allocation.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudafx/gaussian.hpp"
#include "support/gaussian_oracle.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"
#include "support/oracle_compare.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

GstHarness* gaussian_harness(const ImageDesc& desc, const char* backend, double sigma,
                             const char* border = "replicate") {
  GstHarness* h = harness_with("cudagaussian", std::string("backend=") + backend);
  gst_util_set_object_arg(G_OBJECT(h->element), "border-mode", border);
  g_object_set(h->element, "sigma", sigma, nullptr);
  set_caps(h, desc);
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
  EXPECT_NEAR_ORACLE(got.view(),
                     gaussian_oracle(src, params_of(2.0, BorderMode::Reflect101)).view(),
                     kGaussianBounds);
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
  EXPECT_NEAR_ORACLE(b.view(), gaussian_oracle(src, params_of(3.5)).view(), kGaussianBounds);
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
    if (std::string(backend) == "cuda" && !gpu_part_runs())
      continue;
    GstHarness* h = gaussian_harness(desc, backend, 1.0);
    EXPECT_NEAR_ORACLE(push_pull(h, src).view(), gaussian_oracle(src, params_of(1.0)).view(),
                       kGaussianBounds)
        << backend;
    g_object_set(h->element, "sigma", 9.0, nullptr);
    gst_util_set_object_arg(G_OBJECT(h->element), "border-mode", "constant");
    EXPECT_NEAR_ORACLE(push_pull(h, src).view(),
                       gaussian_oracle(src, params_of(9.0, BorderMode::Constant)).view(),
                       kGaussianBounds)
        << backend;
    GaussianParams p = params_of(9.0, BorderMode::Constant);
    p.kernel_size_x = p.kernel_size_y = 5;
    g_object_set(h->element, "kernel-size", 5, nullptr);
    EXPECT_NEAR_ORACLE(push_pull(h, src).view(), gaussian_oracle(src, p).view(), kGaussianBounds)
        << backend;
    gst_harness_teardown(h);
  }
}

namespace {

// The documented limits through the element: sigma 42 and kernel-size 255
// (255 taps an axis), small frames so that the CPU run stays short.
GstHarness* limits_harness(const ImageDesc& desc, const char* backend) {
  GstHarness* h = gaussian_harness(desc, backend, 42.0, "reflect-101");
  g_object_set(h->element, "kernel-size", 255, nullptr);
  return h;
}

GaussianParams limits_params() {
  GaussianParams p = params_of(42.0, BorderMode::Reflect101);
  p.kernel_size_x = p.kernel_size_y = 255;
  return p;
}

const ImageDesc kLimitDescs[] = {{PixelFormat::RGBA, 300, 262}, {PixelFormat::I420, 300, 262},
                                 {PixelFormat::GRAY8, 61, 45}};

}  // namespace

TEST(Element, Sigma42With255TapsCpuBackendMatchesOpenCV) {
  uint32_t seed = 61;
  for (const ImageDesc& desc : kLimitDescs) {
    HostImage src(desc);
    src.fill_random(seed++);
    GstHarness* h = limits_harness(desc, "cpu");
    EXPECT_NEAR_ORACLE(push_pull(h, src, 3).view(), gaussian_oracle(src, limits_params()).view(),
                       kGaussianBounds)
        << format_info(desc.format).name;
    gst_harness_teardown(h);
  }
}

TEST(Element, Sigma42With255TapsCudaBackendEqualsCpuBackend) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 71;
  for (const ImageDesc& desc : kLimitDescs) {
    HostImage src(desc);
    src.fill_random(seed++);
    GstHarness* cpu = limits_harness(desc, "cpu");
    GstHarness* gpu = limits_harness(desc, "cuda");
    const HostImage a = push_pull(cpu, src, 5);
    const HostImage b = push_pull(gpu, src, 5);
    EXPECT_TRUE(bytes_equal(a.view(), b.view()))
        << format_info(desc.format).name << " max diff " << max_abs_diff(a.view(), b.view());
    gst_harness_teardown(cpu);
    gst_harness_teardown(gpu);
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

namespace {

// The warnings a pipeline posted before it ended (EOS or an error; the
// error's text is appended as "error: ...").
std::vector<std::string> warnings_of(const std::string& line) {
  std::vector<std::string> texts;
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(line.c_str(), &err);
  EXPECT_NE(p, nullptr) << (err ? err->message : "");
  g_clear_error(&err);
  if (!p)
    return texts;
  EXPECT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE) << line;
  GstBus* bus = gst_element_get_bus(p);
  for (;;) {
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, 20 * GST_SECOND,
        (GstMessageType)(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    EXPECT_NE(msg, nullptr) << line << ": neither EOS nor an error within 20 s";
    if (!msg)
      break;
    const GstMessageType type = GST_MESSAGE_TYPE(msg);
    if (type != GST_MESSAGE_EOS) {
      GError* e = nullptr;
      if (type == GST_MESSAGE_WARNING)
        gst_message_parse_warning(msg, &e, nullptr);
      else
        gst_message_parse_error(msg, &e, nullptr);
      texts.push_back((type == GST_MESSAGE_ERROR ? "error: " : "") + std::string(e->message));
      g_error_free(e);
    }
    gst_message_unref(msg);
    if (type != GST_MESSAGE_WARNING)
      break;
  }
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
  return texts;
}

}  // namespace

TEST(Element, AutoBackendFallsBackToCpuWithWarning) {
  std::string why;
  if (gpu_available(&why))
    GTEST_SKIP() << "a CUDA device is present";
  // The warning gst/gstcudafxdevice.cpp posts when it starts, once.
  const std::string prefix = "No usable CUDA device, running on the CPU: ";
  const std::vector<std::string> texts = warnings_of(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=32,height=16 ! "
      "cudagaussian backend=auto sigma=1.5 ! fakesink");
  ASSERT_EQ(texts.size(), 1u) << (texts.empty() ? "no warning" : texts.back());
  EXPECT_EQ(texts[0].rfind(prefix, 0), 0u) << texts[0];
  EXPECT_GT(texts[0].size(), prefix.size()) << "the warning gives no reason";
  // and the frames are the CPU backend's
  const ImageDesc desc{PixelFormat::RGBA, 32, 16};
  HostImage src(desc);
  src.fill_random(5);
  GstHarness* h = gaussian_harness(desc, "auto", 1.5);
  EXPECT_NEAR_ORACLE(push_pull(h, src).view(), gaussian_oracle(src, params_of(1.5)).view(),
                     kGaussianBounds);
  gst_harness_teardown(h);
}

// backend=cpu starts without that warning.
TEST(Element, CpuBackendStartsWithoutWarning) {
  const std::vector<std::string> texts = warnings_of(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=32,height=16 ! "
      "cudagaussian backend=cpu sigma=1.5 ! fakesink");
  EXPECT_TRUE(texts.empty()) << texts[0];
}

// The pool proposed upstream: pinned memory on the CUDA backend, a video
// pool with video meta on the CPU backend.
TEST(Element, ProposesAllocation) {
  const ImageDesc desc{PixelFormat::NV12, 320, 240};
  for (const char* backend : {"cpu", "cuda"}) {
    const bool cuda = std::string(backend) == "cuda";
    if (cuda && !gpu_part_runs())
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
  SKIP_UNLESS_GPU_READY(have_element("cudaupload"), "nvcodec's cudaupload is not available");
  const ImageDesc desc{PixelFormat::NV12, 64, 48};
  const std::string sys = caps_string(desc), cuda = caps_string(desc, true);
  for (const bool in_cuda : {false, true}) {
    GstHarness* h = gst_harness_new_parse(
        in_cuda ? "cudaupload ! capsfilter caps=video/x-raw(memory:CUDAMemory) ! cudagaussian "
                  "name=g0 backend=cuda"
                : "cudagaussian name=g0 backend=cuda");
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
    EXPECT_EQ(negotiated_memory(h), in_cuda ? "CC" : "SS");
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
  // What negotiated_memory must find around the cudagaussian elements
  // (named g0, g1): a chain that fell back to system memory fails.
  const char* memory;
};

class ElementCudaMemory : public ::testing::TestWithParam<Chain> {};

TEST_P(ElementCudaMemory, MatchesCpuBackend) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
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
  EXPECT_EQ(negotiated_memory(h), GetParam().memory) << GetParam().pipeline;
  EXPECT_TRUE(bytes_equal(got.view(), want.view())) << GetParam().pipeline;
  EXPECT_FALSE(bytes_equal(got.view(), src.view())) << "blur changed nothing";
  gst_harness_teardown(h);
}

const Chain kChains[] = {
    {"CudaToCuda", "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudagaussian name=g0 sigma=2.5 backend=cuda ! cudadownload",
     "cudagaussian sigma=2.5 backend=cpu", "CC"},
    {"CudaToSystem",
     "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudagaussian name=g0 sigma=2.5 backend=cuda ! capsfilter caps=video/x-raw",
     "cudagaussian sigma=2.5 backend=cpu", "CS"},
    {"SystemToCuda",
     "cudagaussian name=g0 sigma=2.5 backend=cuda ! "
     "capsfilter caps=video/x-raw(memory:CUDAMemory) ! cudadownload",
     "cudagaussian sigma=2.5 backend=cpu", "SC"},
    {"TwoInCuda",
     "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudagaussian name=g0 sigma=1.0 backend=cuda ! "
     "cudagaussian name=g1 sigma=2.0 backend=cuda ! cudadownload",
     "cudagaussian sigma=1.0 backend=cpu ! cudagaussian sigma=2.0 backend=cpu", "CCCC"},
};

INSTANTIATE_TEST_SUITE_P(Chains, ElementCudaMemory, ::testing::ValuesIn(kChains),
                         [](const ::testing::TestParamInfo<Chain>& info) {
                           return std::string(info.param.name);
                         });
