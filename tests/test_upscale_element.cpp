// cudaupscale as GStreamer sees it: GstHarness in both backends against
// cv::resize, caps negotiation (fixed and free sizes, pixel-aspect-ratio,
// factor), passthrough, property changes while playing, invalid caps, and
// chains in CUDA memory.
#include <gst/base/gstbasetransform.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <string>

#include "cudafx/resize.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/test_meta.hpp"
#include "support/host_image.hpp"
#include "support/resize_oracle.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

GstHarness* upscale_harness(const ImageDesc& in, const std::string& out_caps, const char* backend,
                            const char* method) {
  GstHarness* h = harness_with("cudaupscale", std::string("backend=") + backend);
  gst_util_set_object_arg(G_OBJECT(h->element), "method", method);
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, out_caps.c_str());
  return h;
}

// The caps the harness's sink pad negotiated.
GstStructure* negotiated(GstHarness* h) {
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  if (!caps)
    return nullptr;
  GstStructure* s = gst_structure_copy(gst_caps_get_structure(caps, 0));
  gst_caps_unref(caps);
  return s;
}

std::string sized_caps(int w, int h) {
  return "video/x-raw,width=" + std::to_string(w) + ",height=" + std::to_string(h);
}

}  // namespace

class UpscaleAllFormats : public ::testing::TestWithParam<PixelFormat> {};

TEST_P(UpscaleAllFormats, CpuBackendMatchesOpenCV) {
  const ImageDesc in{GetParam(), 174, 98};
  HostImage src(in);
  src.fill_random(11);
  const struct {
    const char* nick;
    ResizeMethod m;
    int w, h;
  } cases[] = {{"nearest-neighbour", ResizeMethod::Nearest, 522, 294},
               {"bilinear", ResizeMethod::Bilinear, 348, 196},
               {"bicubic", ResizeMethod::Bicubic, 100, 60}};
  for (const auto& c : cases) {
    GstHarness* h = upscale_harness(in, sized_caps(c.w, c.h), "cpu", c.nick);
    const HostImage got = push_pull(h, src, 3);
    ASSERT_EQ(got.desc().width, c.w);
    EXPECT_NEAR_ORACLE(got.view(), resize_oracle(src, got.desc(), c.m).view(),
                       resize_oracle_bounds(c.m))
        << c.nick;
    gst_harness_teardown(h);
  }
}

TEST_P(UpscaleAllFormats, CudaBackendEqualsCpuBackend) {
  SKIP_WITHOUT_GPU();
  const ImageDesc in{GetParam(), 333, 211};
  HostImage src(in);
  src.fill_random(12);
  for (const char* method : {"nearest-neighbour", "bilinear", "bicubic"}) {
    GstHarness* cpu = upscale_harness(in, sized_caps(777, 500), "cpu", method);
    GstHarness* gpu = upscale_harness(in, sized_caps(777, 500), "cuda", method);
    const HostImage a = push_pull(cpu, src, 5);
    const HostImage b = push_pull(gpu, src, 5);
    EXPECT_TRUE(bytes_equal(a.view(), b.view()))
        << method << " max diff " << max_abs_diff(a.view(), b.view());
    gst_harness_teardown(cpu);
    gst_harness_teardown(gpu);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, UpscaleAllFormats,
                         ::testing::Values(PixelFormat::RGBA, PixelFormat::BGRx, PixelFormat::ARGB,
                                           PixelFormat::RGB, PixelFormat::BGR, PixelFormat::GRAY8,
                                           PixelFormat::I420, PixelFormat::NV12,
                                           PixelFormat::Y444),
                         [](const auto& info) { return format_info(info.param).name; });

// Downstream's size decides; a free dimension keeps the display aspect ratio.
TEST(UpscaleCaps, NegotiatesLikeVideoscale) {
  const ImageDesc in{PixelFormat::RGBA, 320, 240};
  HostImage src(in);
  src.fill_random(3);
  const struct {
    std::string downstream;
    int w, h, par_n, par_d;
  } cases[] = {
      {"video/x-raw,width=1280,height=720", 1280, 720, 3, 4},  // both fixed: PAR adapts
      {"video/x-raw,width=640,pixel-aspect-ratio=1/1", 640, 480, 1, 1},
      {"video/x-raw,height=720", 960, 720, 1, 1},
      {"video/x-raw,width=[100,200],pixel-aspect-ratio=1/1", 200, 150, 1, 1},
      {"video/x-raw,width=1000,height=1000,pixel-aspect-ratio=1/1", 1000, 1000, 1, 1},
  };
  for (const auto& c : cases) {
    GstHarness* h = upscale_harness(in, c.downstream, "cpu", "bilinear");
    const HostImage got = push_pull(h, src);
    GstStructure* s = negotiated(h);
    ASSERT_NE(s, nullptr) << c.downstream;
    int w = 0, hh = 0, n = 0, d = 0;
    gst_structure_get_int(s, "width", &w);
    gst_structure_get_int(s, "height", &hh);
    gst_structure_get_fraction(s, "pixel-aspect-ratio", &n, &d);
    EXPECT_EQ(w, c.w) << c.downstream;
    EXPECT_EQ(hh, c.h) << c.downstream;
    EXPECT_EQ(n * c.par_d, d * c.par_n) << c.downstream << ": " << n << "/" << d;
    EXPECT_EQ(got.desc().width, c.w);
    gst_structure_free(s);
    gst_harness_teardown(h);
  }
}

TEST(UpscaleCaps, AnamorphicInputKeepsDisplayAspect) {
  // 360x240 with 2:1 pixels displays as 720x240.
  GstHarness* h = harness_with("cudaupscale", "backend=cpu");
  gst_harness_set_src_caps_str(
      h, "video/x-raw,format=RGBA,width=360,height=240,framerate=30/1,pixel-aspect-ratio=2/1");
  gst_harness_set_sink_caps_str(h, "video/x-raw,width=720,pixel-aspect-ratio=1/1");
  HostImage src({PixelFormat::RGBA, 360, 240});
  src.fill_random(4);
  ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  GstStructure* s = negotiated(h);
  ASSERT_NE(s, nullptr);
  int w = 0, hh = 0;
  gst_structure_get_int(s, "width", &w);
  gst_structure_get_int(s, "height", &hh);
  EXPECT_EQ(w, 720);
  EXPECT_EQ(hh, 240);
  gst_structure_free(s);
  gst_harness_teardown(h);
}

TEST(UpscaleCaps, FactorFixesTheOutputSize) {
  const ImageDesc in{PixelFormat::I420, 160, 90};
  HostImage src(in);
  src.fill_random(8);
  GstHarness* h = harness_with("cudaupscale", "backend=cpu");
  g_object_set(h->element, "factor", 3.0, nullptr);
  gst_util_set_object_arg(G_OBJECT(h->element), "method", "nearest-neighbour");
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, "video/x-raw");
  HostImage got = push_pull(h, src);
  ASSERT_EQ(got.desc().width, 480);
  ASSERT_EQ(got.desc().height, 270);
  EXPECT_EQ(max_abs_diff(got.view(), resize_oracle(src, got.desc(), ResizeMethod::Nearest).view()),
            0);
  // A new factor while playing renegotiates before the next frame.
  g_object_set(h->element, "factor", 1.5, nullptr);
  got = push_pull(h, src);
  EXPECT_EQ(got.desc().width, 240);
  EXPECT_EQ(got.desc().height, 135);
  gst_harness_teardown(h);
}

// With factor set, a downstream size tells upstream which input size to make.
TEST(UpscaleCaps, FactorNegotiatesUpstreamSize) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA ! cudaupscale factor=1.5 backend=cpu"
      " ! video/x-raw,width=960,height=720 ! fakesink name=sink",
      &err);
  ASSERT_NE(p, nullptr) << (err ? err->message : "");
  ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstBus* bus = gst_element_get_bus(p);
  GstMessage* msg =
      gst_bus_timed_pop_filtered(bus, 20 * GST_SECOND, (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(GST_MESSAGE_TYPE(msg), GST_MESSAGE_EOS);
  gst_message_unref(msg);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "sink");
  GstPad* pad = gst_element_get_static_pad(sink, "sink");
  GstCaps* caps = gst_pad_get_current_caps(pad);
  ASSERT_NE(caps, nullptr);
  int w = 0;
  gst_structure_get_int(gst_caps_get_structure(caps, 0), "width", &w);
  EXPECT_EQ(w, 960);
  gst_caps_unref(caps);
  gst_object_unref(pad);
  gst_object_unref(sink);
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
}

TEST(UpscaleCaps, SameSizePassesThrough) {
  const ImageDesc in{PixelFormat::NV12, 64, 48};
  HostImage src(in);
  src.fill_random(2);
  GstHarness* h = upscale_harness(in, "video/x-raw", "cpu", "bicubic");
  GstBuffer* buf = buffer_from_image(src);
  gst_buffer_ref(buf);
  ASSERT_EQ(gst_harness_push(h, buf), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  EXPECT_TRUE(gst_base_transform_is_passthrough(GST_BASE_TRANSFORM(h->element)));
  EXPECT_EQ(out, buf);
  gst_buffer_unref(out);
  gst_buffer_unref(buf);
  gst_harness_teardown(h);
}

TEST(UpscaleElement, MethodChangesWhilePlaying) {
  const ImageDesc in{PixelFormat::RGB, 61, 47};
  HostImage src(in);
  src.fill_random(21);
  for (const char* backend : {"cpu", "cuda"}) {
    if (std::string(backend) == "cuda" && !gpu_available())
      continue;
    GstHarness* h = upscale_harness(in, sized_caps(150, 101), backend, "nearest-neighbour");
    HostImage got = push_pull(h, src);
    EXPECT_EQ(max_abs_diff(got.view(), resize_oracle(src, got.desc(), ResizeMethod::Nearest).view()),
              0)
        << backend;
    gst_util_set_object_arg(G_OBJECT(h->element), "method", "bicubic");
    got = push_pull(h, src);
    EXPECT_NEAR_ORACLE(got.view(), resize_oracle(src, got.desc(), ResizeMethod::Bicubic).view(),
                       resize_oracle_bounds(ResizeMethod::Bicubic))
        << backend;
    EXPECT_GT(max_abs_diff(got.view(), resize_oracle(src, got.desc(), ResizeMethod::Nearest).view()),
              1)
        << backend << ": the method did not change";
    gst_harness_teardown(h);
  }
}

// Caps the element cannot produce: linking or negotiation fails with an
// error, never a crash or a wrong frame.
TEST(UpscaleElement, InvalidCapsAreRejectedWithAnError) {
  const char* lines[] = {
      // a scaler does not convert formats
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=64,height=48 ! cudaupscale name=scale "
      "backend=cpu ! capsfilter name=cf caps=video/x-raw,format=NV12 ! fakesink",
      // larger than the op supports
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=64,height=48 ! cudaupscale name=scale "
      "backend=cpu ! capsfilter name=cf caps=video/x-raw,width=40000,height=48 ! fakesink",
      // a factor whose output downstream refuses
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=64,height=48 ! cudaupscale name=scale "
      "backend=cpu factor=2 ! capsfilter name=cf caps=video/x-raw,width=100,height=96 ! fakesink",
  };
  for (const char* line : lines) {
    GError* err = nullptr;
    GstElement* p = gst_parse_launch(line, &err);
    ASSERT_NE(p, nullptr) << line;
    ASSERT_NE(err, nullptr) << line << ": linked although the caps cannot match";
    EXPECT_EQ(std::string(err->message), "could not link scale to cf")
        << line;
    g_error_free(err);
    // What remains of the pipeline fails at run time with an error.
    gst_element_set_state(p, GST_STATE_PLAYING);
    GstBus* bus = gst_element_get_bus(p);
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, 20 * GST_SECOND, (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    ASSERT_NE(msg, nullptr) << line;
    EXPECT_EQ(GST_MESSAGE_TYPE(msg), GST_MESSAGE_ERROR) << line;
    gst_message_unref(msg);
    gst_object_unref(bus);
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(p);
  }
}

// A factor whose output would exceed the supported size fails negotiation
// instead of producing a size that is not factor x input.
TEST(UpscaleElement, FactorBeyondTheSizeLimitIsNotNegotiated) {
  const ImageDesc in{PixelFormat::GRAY8, 4000, 4};
  GstHarness* h = harness_with("cudaupscale", "backend=cpu");
  g_object_set(h->element, "factor", 10.0, nullptr);
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, "video/x-raw");
  HostImage src(in);
  src.fill_random(9);
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown(h);
}

// Input caps changed mid-stream to a format downstream does not take: the
// push fails as not-negotiated.
TEST(UpscaleElement, CapsChangeToAnUnacceptableFormatIsNotNegotiated) {
  const ImageDesc in{PixelFormat::RGBA, 64, 48};
  GstHarness* h = upscale_harness(in, "video/x-raw,format=RGBA,width=128,height=96", "cpu",
                                  "bilinear");
  HostImage src(in);
  src.fill_random(6);
  EXPECT_EQ(push_pull(h, src).desc().width, 128);
  const ImageDesc nv12{PixelFormat::NV12, 64, 48};
  gst_harness_set_src_caps_str(h, caps_string(nv12).c_str());
  HostImage src2(nv12);
  src2.fill_random(7);
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(src2)), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown(h);
}

// Frames in CUDA memory, and mixes, against the CPU backend in system memory.
struct Chain {
  const char* name;
  const char* pipeline;
  // what negotiated_memory must find around the cudaupscale (named g0)
  const char* memory;
};

class UpscaleCudaMemory : public ::testing::TestWithParam<Chain> {};

TEST_P(UpscaleCudaMemory, MatchesCpuBackend) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  const ImageDesc in{PixelFormat::NV12, 333, 211};
  HostImage src(in);
  src.fill_random(31);
  const std::string out = sized_caps(1000, 634);
  GstHarness* ref = upscale_harness(in, out, "cpu", "bicubic");
  const HostImage want = push_pull(ref, src);
  gst_harness_teardown(ref);

  GstHarness* h = gst_harness_new_parse(GetParam().pipeline);
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, out.c_str());
  const HostImage got = push_pull(h, src, 7);
  ASSERT_EQ(got.desc().width, 1000);
  EXPECT_EQ(negotiated_memory(h), GetParam().memory) << GetParam().pipeline;
  EXPECT_TRUE(bytes_equal(got.view(), want.view())) << GetParam().pipeline;
  gst_harness_teardown(h);
}

const Chain kChains[] = {
    {"CudaToCuda",
     "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudaupscale name=g0 method=bicubic "
     "backend=cuda ! capsfilter caps=video/x-raw(memory:CUDAMemory),width=1000,height=634 ! "
     "cudadownload",
     "CC"},
    {"CudaToSystem",
     "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudaupscale name=g0 method=bicubic "
     "backend=cuda ! capsfilter caps=video/x-raw,width=1000,height=634",
     "CS"},
    {"SystemToCuda",
     "cudaupscale name=g0 method=bicubic backend=cuda ! "
     "capsfilter caps=video/x-raw(memory:CUDAMemory),width=1000,height=634 ! cudadownload",
     "SC"},
};

INSTANTIATE_TEST_SUITE_P(Chains, UpscaleCudaMemory, ::testing::ValuesIn(kChains),
                         [](const ::testing::TestParamInfo<Chain>& info) {
                           return std::string(info.param.name);
                         });

// ---- metas across the scale ----

namespace {

int count_metas(GstBuffer* buf, GType api) {
  int n = 0;
  gpointer state = nullptr;
  while (gst_buffer_iterate_meta_filtered(buf, &state, api))
    n++;
  return n;
}

}  // namespace

// Region metas are scaled with the frame (exactly one, at twice the
// coordinates), metas tagged only "video" are kept, others dropped.
TEST(UpscaleMeta, RegionsAreScaledVideoMetasKeptOthersDropped) {
  const ImageDesc in{PixelFormat::RGBA, 64, 48};
  HostImage src(in);
  src.fill_random(40);
  GstHarness* h = harness_with("cudaupscale", "backend=cpu");
  g_object_set(h->element, "factor", 2.0, nullptr);
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, "video/x-raw");
  GstBuffer* buf = buffer_from_image(src);
  gst_buffer_add_video_region_of_interest_meta(buf, "face", 3, 5, 10, 7);
  add_test_meta(buf, video_test_meta(), 17);
  add_test_meta(buf, colorspace_test_meta(), 23);
  ASSERT_EQ(gst_harness_push(h, buf), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(count_metas(out, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE), 1);
  GstVideoRegionOfInterestMeta* roi = gst_buffer_get_video_region_of_interest_meta(out);
  ASSERT_NE(roi, nullptr) << "the region meta was dropped";
  EXPECT_EQ(roi->roi_type, g_quark_from_string("face"));
  EXPECT_EQ(roi->x, 6u);
  EXPECT_EQ(roi->y, 10u);
  EXPECT_EQ(roi->w, 20u);
  EXPECT_EQ(roi->h, 14u);
  EXPECT_EQ(test_meta_value(out, video_test_meta()), 17)
      << "the meta tagged only \"video\" was dropped";
  EXPECT_EQ(test_meta_value(out, colorspace_test_meta()), -1)
      << "the meta tagged \"colorspace\" went through";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// ---- navigation ----

// Pointer coordinates travelling upstream are mapped from the output's
// pixels to the input's (x by 64/160, y by 48/96).
TEST(UpscaleElement, NavigationCoordinatesMapToTheInput) {
  const ImageDesc in{PixelFormat::RGBA, 64, 48};
  HostImage src(in);
  src.fill_random(41);
  GstHarness* h = upscale_harness(in, sized_caps(160, 96), "cpu", "bilinear");
  ASSERT_EQ(push_pull(h, src).desc().width, 160);
#if GST_CHECK_VERSION(1, 22, 0)
  GstEvent* move = gst_navigation_event_new_mouse_move(100.0, 30.0, GST_NAVIGATION_MODIFIER_NONE);
#else  // 1.20: the event as gst_navigation_send_mouse_event makes it
  GstEvent* move = gst_event_new_navigation(
      gst_structure_new("application/x-gst-navigation", "event", G_TYPE_STRING, "mouse-move",
                        "button", G_TYPE_INT, 0, "pointer_x", G_TYPE_DOUBLE, 100.0, "pointer_y",
                        G_TYPE_DOUBLE, 30.0, nullptr));
#endif
  ASSERT_TRUE(gst_harness_push_upstream_event(h, move));
  GstEvent* nav = nullptr;
  while (GstEvent* e = gst_harness_try_pull_upstream_event(h)) {
    if (!nav && GST_EVENT_TYPE(e) == GST_EVENT_NAVIGATION)
      nav = e;
    else
      gst_event_unref(e);
  }
  ASSERT_NE(nav, nullptr) << "the navigation event did not reach upstream";
  gdouble x = 0, y = 0;
#if GST_CHECK_VERSION(1, 22, 0)
  ASSERT_TRUE(gst_navigation_event_get_coordinates(nav, &x, &y));
#else
  ASSERT_TRUE(gst_navigation_event_parse_mouse_move_event(nav, &x, &y));
#endif
  EXPECT_DOUBLE_EQ(x, 40.0);
  EXPECT_DOUBLE_EQ(y, 15.0);
  gst_event_unref(nav);
  gst_harness_teardown(h);
}

// ---- a factor whose output is outside the size range ----

namespace {

// The message of the first error on `bus` ("" when none was posted).
std::string pop_error(GstBus* bus) {
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (!msg)
    return "";
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  std::string text = err->message;
  EXPECT_TRUE(g_error_matches(err, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION)) << text;
  g_error_free(err);
  gst_message_unref(msg);
  return text;
}

// A harnessed element has no bus: give it one to read its errors from.
GstBus* attach_bus(GstHarness* h) {
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  return bus;
}

}  // namespace

// A factor whose output falls outside 1..32768 says so when the caps arrive.
TEST(UpscaleElement, FactorOutOfRangeNamesTheCauseWhenCapsArrive) {
  const ImageDesc in{PixelFormat::GRAY8, 4000, 4};
  GstHarness* h = harness_with("cudaupscale", "backend=cpu");
  GstBus* bus = attach_bus(h);
  g_object_set(h->element, "factor", 10.0, nullptr);
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, "video/x-raw");
  HostImage src(in);
  src.fill_random(42);
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_NOT_NEGOTIATED);
  EXPECT_EQ(pop_error(bus), "factor 10 makes 40000x40 from 4000x4: outside 1..32768");
  // Once: the retry with the next buffer posts nothing new.
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_NOT_NEGOTIATED);
  EXPECT_EQ(pop_error(bus), "");
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

// ... when the factor changes while playing ...
TEST(UpscaleElement, FactorOutOfRangeNamesTheCauseWhenTheFactorChanges) {
  const ImageDesc in{PixelFormat::GRAY8, 4000, 4};
  GstHarness* h = harness_with("cudaupscale", "backend=cpu");
  GstBus* bus = attach_bus(h);
  g_object_set(h->element, "factor", 4.0, nullptr);
  gst_harness_set_src_caps_str(h, caps_string(in).c_str());
  gst_harness_set_sink_caps_str(h, "video/x-raw");
  HostImage src(in);
  src.fill_random(43);
  EXPECT_EQ(push_pull(h, src).desc().width, 16000);
  EXPECT_EQ(pop_error(bus), "");
  g_object_set(h->element, "factor", 10.0, nullptr);
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_NOT_NEGOTIATED);
  EXPECT_EQ(pop_error(bus), "factor 10 makes 40000x40 from 4000x4: outside 1..32768");
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

// ... and when upstream negotiates a fixed size with it. (With the factor on
// the launch line the pipeline does not even link: gst_parse_launch says
// "could not link"; set afterwards, linking succeeds and negotiation fails.)
TEST(UpscaleElement, FactorOutOfRangeNamesTheCauseWhenUpstreamNegotiates) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(
      "videotestsrc num-buffers=1 ! video/x-raw,width=4096,height=64 ! cudaupscale name=scale "
      "backend=cpu ! fakesink",
      &err);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(err, nullptr) << err->message;
  GstElement* scale = gst_bin_get_by_name(GST_BIN(p), "scale");
  g_object_set(scale, "factor", 16.0, nullptr);
  gst_object_unref(scale);
  gst_element_set_state(p, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(p);
  GstMessage* msg = gst_bus_timed_pop_filtered(bus, 20 * GST_SECOND,
                                               (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  ASSERT_NE(msg, nullptr);
  ASSERT_EQ(GST_MESSAGE_TYPE(msg), GST_MESSAGE_ERROR);
  // The first error is the element's, before upstream's not-negotiated.
  EXPECT_EQ(GST_MESSAGE_SRC_NAME(msg), std::string("scale"));
  GError* gerr = nullptr;
  gst_message_parse_error(msg, &gerr, nullptr);
  EXPECT_EQ(std::string(gerr->message), "factor 16 makes 65536x1024 from 4096x64: outside 1..32768");
  g_error_free(gerr);
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
}

// ---- renegotiation and state changes ----

// New input caps mid-stream (another size, then another format): every
// frame is right for the caps it came with.
TEST(UpscaleElement, RenegotiatesToANewSizeAndFormat) {
  const ImageDesc steps[] = {{PixelFormat::RGBA, 64, 48},
                             {PixelFormat::RGBA, 90, 34},
                             {PixelFormat::I420, 90, 34},
                             {PixelFormat::NV12, 50, 50}};
  for (const char* backend : {"cpu", "cuda"}) {
    if (std::string(backend) == "cuda" && !gpu_available())
      continue;
    GstHarness* h = harness_with("cudaupscale", std::string("backend=") + backend);
    gst_util_set_object_arg(G_OBJECT(h->element), "method", "nearest-neighbour");
    g_object_set(h->element, "factor", 2.0, nullptr);
    gst_harness_set_sink_caps_str(h, "video/x-raw");
    int seed = 50;
    for (const ImageDesc& d : steps) {
      const std::string caps = caps_string(d);
      gst_harness_set_src_caps_str(h, caps.c_str());
      for (int frame = 0; frame < 2; frame++) {
        HostImage src(d);
        src.fill_random(seed++);
        const HostImage got = push_pull(h, src);
        ASSERT_EQ(got.desc().width, 2 * d.width) << backend << " " << caps;
        ASSERT_EQ(got.desc().height, 2 * d.height) << backend << " " << caps;
        EXPECT_EQ(max_abs_diff(got.view(),
                               resize_oracle(src, got.desc(), ResizeMethod::Nearest).view()),
                  0)
            << backend << " " << caps << " frame " << frame;
      }
    }
    gst_harness_teardown(h);
  }
}

// NULL -> PLAYING -> NULL -> PLAYING ...: the element starts again and
// scales as the first time.
TEST(UpscaleElement, PlaysAgainAfterStateCycles) {
  const ImageDesc in{PixelFormat::RGBA, 64, 48};
  const ImageDesc out{PixelFormat::RGBA, 128, 96};
  for (const char* backend : {"cpu", "cuda"}) {
    if (std::string(backend) == "cuda" && !gpu_available())
      continue;
    const std::string line =
        std::string("appsrc name=src format=time ! cudaupscale factor=2 "
                    "method=nearest-neighbour backend=") +
        backend + " ! appsink name=sink sync=false";
    GError* err = nullptr;
    GstElement* p = gst_parse_launch(line.c_str(), &err);
    ASSERT_NE(p, nullptr) << line;
    ASSERT_EQ(err, nullptr) << err->message;
    GstElement* appsrc = gst_bin_get_by_name(GST_BIN(p), "src");
    GstElement* appsink = gst_bin_get_by_name(GST_BIN(p), "sink");
    GstCaps* caps = gst_caps_from_string(caps_string(in).c_str());
    g_object_set(appsrc, "caps", caps, nullptr);
    gst_caps_unref(caps);
    for (int cycle = 0; cycle < 3; cycle++) {
      ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE)
          << backend << " cycle " << cycle;
      HostImage src(in);
      src.fill_random(60 + cycle);
      GstFlowReturn ret = GST_FLOW_ERROR;
      g_signal_emit_by_name(appsrc, "push-buffer", buffer_from_image(src), &ret);
      EXPECT_EQ(ret, GST_FLOW_OK);
      GstSample* sample = nullptr;
      g_signal_emit_by_name(appsink, "try-pull-sample", 20 * GST_SECOND, &sample);
      ASSERT_NE(sample, nullptr) << backend << " cycle " << cycle;
      HostImage got;
      const bool mapped = image_from_buffer(gst_sample_get_buffer(sample), out, &got);
      gst_sample_unref(sample);
      ASSERT_TRUE(mapped) << backend << " cycle " << cycle;
      EXPECT_EQ(max_abs_diff(got.view(), resize_oracle(src, out, ResizeMethod::Nearest).view()),
                0)
          << backend << " cycle " << cycle;
      ASSERT_EQ(gst_element_set_state(p, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    }
    gst_object_unref(appsrc);
    gst_object_unref(appsink);
    gst_object_unref(p);
  }
}
