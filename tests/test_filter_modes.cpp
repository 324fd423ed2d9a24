// GstCudaFxFilter's modes, through the test-only elements of mode_filter.hpp:
// TRANSFORM writes a new buffer, IN_PLACE writes the incoming one (copied
// only when shared), ANALYSIS passes it through untouched (never a pixel
// copy) and attaches results in `finish`; separate format lists per pad;
// caps features other than the memory kept. Both backends; the CUDA cases
// skip without a GPU (fail with CUDAFX_REQUIRE_GPU=1).
#include <gst/app/gstappsink.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "gstcudafxfilter.h"
#include "mode_filter.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

GstHarness* mode_harness(const char* element, const char* backend, const char* mode,
                         const std::string& in_caps, const std::string& out_caps) {
  register_mode_filters();
  GstHarness* h = gst_harness_new(element);
  gst_util_set_object_arg(G_OBJECT(h->element), "backend", backend);
  if (mode)
    gst_util_set_object_arg(G_OBJECT(h->element), "op-mode", mode);
  gst_harness_set_caps_str(h, in_caps.c_str(), out_caps.c_str());
  return h;
}

// `img` with row 0 of plane 0 set to `mark`.
HostImage marked(const HostImage& img, guint8 mark) {
  HostImage out(img.desc());
  out.copy_from(img.view());
  const PlaneView p = out.view().plane(0);
  memset(p.data, mark, p.row_bytes());
  return out;
}

guint64 row0_sum(const HostImage& img) {
  const PlaneView p = img.view().plane(0);
  guint64 sum = 0;
  for (size_t i = 0; i < p.row_bytes(); i++)
    sum += p.data[i];
  return sum;
}

// The "sum" of the row-sum ROI meta `finish` attached; -1 when there is none.
gint64 meta_sum(GstBuffer* buf) {
  gpointer state = nullptr;
  GstMeta* m;
  while ((m = gst_buffer_iterate_meta_filtered(buf, &state,
                                               GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(m);
    GstStructure* s = gst_video_region_of_interest_meta_get_param(roi, "row-sum");
    guint64 sum = 0;
    if (s && gst_structure_get_uint64(s, "sum", &sum))
      return static_cast<gint64>(sum);
  }
  return -1;
}

HostImage image_of(GstBuffer* buf, const ImageDesc& desc) {
  HostImage out;
  EXPECT_TRUE(image_from_buffer(buf, desc, &out));
  return out;
}


}  // namespace

class FilterModes : public ::testing::TestWithParam<PixelFormat> {};

TEST_P(FilterModes, TransformWritesANewBuffer) {
  const ImageDesc desc{GetParam(), 67, 41};
  HostImage src(desc);
  src.fill_random(3);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = mode_harness("cudafxtestfilter", backend, "transform", caps_string(desc),
                                 caps_string(desc));
    GstBuffer* in = buffer_from_image(src, 3);
    gst_buffer_ref(in);
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_NE(gst_buffer_peek_memory(out, 0), gst_buffer_peek_memory(in, 0)) << backend;
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), marked(src, kTransformMark).view()))
        << backend;
    EXPECT_TRUE(bytes_equal(image_of(in, desc).view(), src.view())) << backend << ": input changed";
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_harness_teardown(h);
  }
}

TEST_P(FilterModes, InPlaceWritesTheIncomingBufferWithoutACopy) {
  const ImageDesc desc{GetParam(), 67, 41};
  HostImage src(desc);
  src.fill_random(4);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = mode_harness("cudafxtestfilter", backend, "in-place", caps_string(desc),
                                 caps_string(desc));
    GstBuffer* in = buffer_from_image(src, 1);
    // Only the address, to compare: the harness holds the one reference, so
    // the buffer is writable and must be used as it is.
    const GstMemory* in_mem = gst_buffer_peek_memory(in, 0);
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(gst_buffer_peek_memory(out, 0), in_mem) << backend << ": the frame was copied";
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), marked(src, kInPlaceMark).view()))
        << backend;
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

TEST_P(FilterModes, InPlaceCopiesASharedBufferFirst) {
  const ImageDesc desc{GetParam(), 40, 22};
  HostImage src(desc);
  src.fill_random(5);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = mode_harness("cudafxtestfilter", backend, "in-place", caps_string(desc),
                                 caps_string(desc));
    GstBuffer* in = buffer_from_image(src);
    gst_buffer_ref(in);  // someone else holds it: it must not be written
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), marked(src, kInPlaceMark).view()))
        << backend;
    EXPECT_TRUE(bytes_equal(image_of(in, desc).view(), src.view())) << backend << ": shared input written";
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_harness_teardown(h);
  }
}

TEST_P(FilterModes, AnalysisPassesTheFrameThroughAndAttachesResults) {
  const ImageDesc desc{GetParam(), 67, 41};
  HostImage src(desc);
  src.fill_random(6);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = mode_harness("cudafxtestfilter", backend, "analysis", caps_string(desc),
                                 caps_string(desc));
    GstBus* bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    GstBuffer* in = buffer_from_image(src, 2);
    gst_buffer_ref(in);  // shared: metadata must go on a new GstBuffer, pixels never copied
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(gst_buffer_peek_memory(out, 0), gst_buffer_peek_memory(in, 0))
        << backend << ": the pixels were copied";
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), src.view())) << backend;
    EXPECT_EQ(meta_sum(out), static_cast<gint64>(row0_sum(src))) << backend;
    EXPECT_EQ(meta_sum(in), -1) << backend << ": the shared input got the meta";
    GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
    ASSERT_NE(msg, nullptr) << backend;
    guint64 sum = 0;
    EXPECT_TRUE(gst_structure_get_uint64(gst_message_get_structure(msg), "sum", &sum));
    EXPECT_EQ(sum, row0_sum(src)) << backend;
    gst_message_unref(msg);
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_element_set_bus(h->element, nullptr);
    gst_object_unref(bus);
    gst_harness_teardown(h);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, FilterModes,
                         ::testing::Values(PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8,
                                           PixelFormat::NV12, PixelFormat::I420),
                         [](const auto& info) { return format_info(info.param).name; });

TEST(FilterModes, ModeChangesWhilePlaying) {
  const ImageDesc desc{PixelFormat::BGRx, 48, 32};
  HostImage src(desc);
  src.fill_random(7);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = mode_harness("cudafxtestfilter", backend, "analysis", caps_string(desc),
                                 caps_string(desc));
    const char* modes[] = {"analysis", "in-place", "transform", "analysis", "transform"};
    for (const char* mode : modes) {
      gst_util_set_object_arg(G_OBJECT(h->element), "op-mode", mode);
      ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK) << mode;
      GstBuffer* out = gst_harness_pull(h);
      ASSERT_NE(out, nullptr) << mode;
      const HostImage got = image_of(out, desc);
      const std::string m = mode;
      if (m == "analysis") {
        EXPECT_TRUE(bytes_equal(got.view(), src.view())) << backend << " " << mode;
        EXPECT_EQ(meta_sum(out), static_cast<gint64>(row0_sum(src))) << backend;
      } else {
        const guint8 mark = m == "in-place" ? kInPlaceMark : kTransformMark;
        EXPECT_TRUE(bytes_equal(got.view(), marked(src, mark).view())) << backend << " " << mode;
        EXPECT_EQ(meta_sum(out), -1) << backend << " " << mode;
      }
      gst_buffer_unref(out);
    }
    gst_harness_teardown(h);
  }
}

TEST(FilterModes, SeparateFormatListsPerPad) {
  const ImageDesc in_desc{PixelFormat::RGBA, 50, 30};
  const ImageDesc out_desc{PixelFormat::GRAY8, 50, 30};
  HostImage src(in_desc);
  src.fill_random(8);
  HostImage want(out_desc);
  for (int y = 0; y < 30; y++)
    memcpy(want.view().data[0] + y * want.view().pitch[0], src.view().data[0] + y * src.view().pitch[0], 50);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    register_mode_filters();
    GstHarness* h = harness_with("cudafxtestgrey", std::string("backend=") + backend);
    // Downstream leaves the format open: the src template decides (GRAY8).
    gst_harness_set_caps_str(h, caps_string(in_desc).c_str(), "video/x-raw");
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src, 4)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    ASSERT_NE(caps, nullptr);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, caps));
    EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_GRAY8) << backend;
    EXPECT_TRUE(bytes_equal(image_of(out, out_desc).view(), want.view())) << backend;
    gst_caps_unref(caps);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// Caps features other than the memory travel with the caps: an overlay
// element's meta:GstVideoOverlayComposition is offered in both memories.
TEST(FilterCaps, AnyMemoryKeepsOtherFeatures) {
  GstCaps* caps = gst_caps_from_string(
      "video/x-raw(meta:GstVideoOverlayComposition), format=RGBA, width=64, height=48");
  GstCaps* any = gst_cuda_fx_filter_caps_any_memory(caps);
  gst_caps_unref(caps);
  ASSERT_GE(gst_caps_get_size(any), 1u);
  GstCapsFeatures* first = gst_caps_get_features(any, 0);
  EXPECT_TRUE(gst_caps_features_contains(first, "meta:GstVideoOverlayComposition"));
  EXPECT_FALSE(gst_caps_features_contains(first, "memory:CUDAMemory"));
#if HAVE_GSTCUDA
  ASSERT_EQ(gst_caps_get_size(any), 2u);
  GstCapsFeatures* second = gst_caps_get_features(any, 1);
  EXPECT_TRUE(gst_caps_features_contains(second, "meta:GstVideoOverlayComposition"));
  EXPECT_TRUE(gst_caps_features_contains(second, "memory:CUDAMemory"));
#endif
  gst_caps_unref(any);

  GstCaps* plain = gst_caps_from_string("video/x-raw, format=RGBA");
  GstCaps* plain_any = gst_cuda_fx_filter_caps_any_memory(plain);
  gst_caps_unref(plain);
  EXPECT_TRUE(gst_caps_features_is_equal(gst_caps_get_features(plain_any, 0),
                                         GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY));
  gst_caps_unref(plain_any);
}

TEST(FilterCaps, FreeFormatDropsFormatFieldsOnly) {
  GstCaps* caps = gst_caps_from_string(
      "video/x-raw, format=RGBA, width=64, height=48, colorimetry=bt709, chroma-site=mpeg2, "
      "framerate=30/1");
  caps = gst_cuda_fx_caps_free_format(caps);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  EXPECT_FALSE(gst_structure_has_field(s, "format"));
  EXPECT_FALSE(gst_structure_has_field(s, "colorimetry"));
  EXPECT_FALSE(gst_structure_has_field(s, "chroma-site"));
  EXPECT_TRUE(gst_structure_has_field(s, "width"));
  EXPECT_TRUE(gst_structure_has_field(s, "framerate"));
  gst_caps_unref(caps);
}

// Frames that arrive in CUDA memory are analysed on the device and pass
// through in CUDA memory: the pipeline must negotiate memory:CUDAMemory on
// both sides of the element, and the result matches the frame.
TEST(FilterModes, AnalysisOfCudaMemoryStaysOnTheDevice) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  register_mode_filters();
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(
      "videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=RGBA,width=96,height=64 ! "
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudafxtestfilter name=f backend=cuda op-mode=analysis ! "
      "cudadownload ! video/x-raw,format=RGBA ! appsink name=out sync=false",
      &err);
  ASSERT_NE(p, nullptr) << (err ? err->message : "");
  GstElement* f = gst_bin_get_by_name(GST_BIN(p), "f");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "out");
  // The results as the element attached them, in order (cudadownload need
  // not carry region metas on).
  struct Seen {
    std::mutex lock;
    std::vector<gint64> sums;
  } seen;
  GstPad* fsrc = gst_element_get_static_pad(f, "src");
  gst_pad_add_probe(
      fsrc, GST_PAD_PROBE_TYPE_BUFFER,
      [](GstPad*, GstPadProbeInfo* info, gpointer data) {
        auto* s = static_cast<Seen*>(data);
        std::lock_guard<std::mutex> g(s->lock);
        s->sums.push_back(meta_sum(GST_PAD_PROBE_INFO_BUFFER(info)));
        return GST_PAD_PROBE_OK;
      },
      &seen, nullptr);
  gst_object_unref(fsrc);
  ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  int frames = 0;
  const ImageDesc desc{PixelFormat::RGBA, 96, 64};
  while (GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)) {
    if (frames == 0) {
      for (const char* pad : {"sink", "src"}) {
        GstPad* fp = gst_element_get_static_pad(f, pad);
        GstCaps* caps = gst_pad_get_current_caps(fp);
        ASSERT_NE(caps, nullptr);
        EXPECT_TRUE(gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory"))
            << pad << ": " << gst_caps_to_string(caps);
        gst_caps_unref(caps);
        gst_object_unref(fp);
      }
    }
    const HostImage img = image_of(gst_sample_get_buffer(sample), desc);
    {
      std::lock_guard<std::mutex> g(seen.lock);
      ASSERT_GT(seen.sums.size(), static_cast<size_t>(frames));
      EXPECT_EQ(seen.sums[frames], static_cast<gint64>(row0_sum(img))) << "frame " << frames;
    }
    frames++;
    gst_sample_unref(sample);
  }
  EXPECT_EQ(frames, 3);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(f);
  gst_object_unref(sink);
  gst_object_unref(p);
}

// process_ip_host: with the CUDA backend a system-memory frame is written
// on the host (no trip to the device), a CUDA-memory frame on the device;
// the CPU backend always uses process_ip.
TEST(FilterModes, InPlaceHostPathForSystemMemory) {
  register_mode_filters();
  const ImageDesc desc{PixelFormat::RGBA, 48, 16};
  HostImage src(desc);
  src.fill_random(3);
  struct Case {
    const char* backend;
    guint8 mark;
  };
  for (const Case& c : {Case{"cpu", kInPlaceMark}, Case{"cuda", kHostMark}}) {
    if (std::string(c.backend) == "cuda" && !gpu_part_runs())
      continue;
    GstHarness* h = harness_with("cudafxtesthostip", std::string("backend=") + c.backend);
    set_caps(h, desc);
    const HostImage out = push_pull(h, src);
    const PlaneView p = out.view().plane(0);
    for (size_t x = 0; x < p.row_bytes(); x++)
      ASSERT_EQ(p.data[x], c.mark) << c.backend << " byte " << x;
    EXPECT_EQ(std::memcmp(p.data + p.pitch, src.view().plane(0).data + src.view().pitch[0],
                          p.row_bytes()),
              0)
        << c.backend << ": row 1 changed";
    gst_harness_teardown(h);
  }
  if (!gpu_part_runs() || !have_element("cudaupload") || !have_element("cudadownload"))
    return;
  GstHarness* h = gst_harness_new_parse(
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudafxtesthostip name=g0 backend=cuda ! "
      "cudadownload");
  set_caps(h, desc);
  const HostImage out = push_pull(h, src);
  EXPECT_EQ(negotiated_memory(h), "CC");
  EXPECT_EQ(out.view().plane(0).data[0], kInPlaceMark) << "a CUDA-memory frame went to the host";
  gst_harness_teardown(h);
}

namespace {
void mark_released(gpointer data, GObject*) { *static_cast<bool*>(data) = true; }
}  // namespace

// An element that creates its CUDA context (no neighbour shares one) must
// release it with the element: each context holds hundreds of megabytes of
// device memory, and a leak of one a start exhausted the GPU after about a
// hundred starts in one process. The context is found through the element's
// answer to a "gst.cuda.context" query, and watched with a weak reference.
TEST(FilterModes, ReleasesItsCudaContext) {
  SKIP_WITHOUT_GPU();
#if HAVE_GSTCUDA
  const ImageDesc desc{PixelFormat::RGBA, 32, 16};
  HostImage src(desc);
  src.fill_random(9);
  for (int round = 0; round < 3; round++) {
    GstHarness* h = mode_harness("cudafxtestfilter", "cuda", "transform", caps_string(desc),
                                 caps_string(desc));
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    GstQuery* q = gst_query_new_context("gst.cuda.context");
    ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q));
    GstContext* ctx = nullptr;
    gst_query_parse_context(q, &ctx);
    ASSERT_NE(ctx, nullptr);
    const GValue* v = gst_structure_get_value(gst_context_get_structure(ctx), "gst.cuda.context");
    ASSERT_TRUE(v && G_VALUE_HOLDS_OBJECT(v)) << "no GstCudaContext in the element's answer";
    GObject* cuda_ctx = G_OBJECT(g_value_dup_object(v));
    gst_query_unref(q);
    bool released = false;
    g_object_weak_ref(cuda_ctx, mark_released, &released);
    g_object_unref(cuda_ctx);
    EXPECT_FALSE(released) << "the element lost its context while running";
    gst_harness_teardown(h);
    EXPECT_TRUE(released) << "round " << round << ": the CUDA context outlived its element";
    if (!released)
      g_object_weak_unref(cuda_ctx, mark_released, &released);
  }
#else
  GTEST_SKIP() << "built without libgstcuda: no GstCudaContext";
#endif
}
