// The GStreamer idioms that GstCudaFxFilter implements for every filter,
// exercised on cudagaussian, on the CPU backend and -- in the same loop --
// on the CUDA backend when a device is usable: controlled properties that
// follow the stream time, metas kept or dropped by their tags, interlaced
// caps refused, video metas that run past their buffer refused, caps
// renegotiation mid-stream, state cycling and flushing.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/controller/gstdirectcontrolbinding.h>
#include <gst/controller/gstinterpolationcontrolsource.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cudafx/gaussian.hpp"
#include "support/gaussian_oracle.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/test_meta.hpp"
#include "support/host_image.hpp"
#include "support/oracle_compare.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// "cpu", and "cuda" when a device is usable (a failure instead, under
// CUDAFX_REQUIRE_GPU, when it is not).
std::vector<std::string> backends() {
  std::vector<std::string> b{"cpu"};
  if (gpu_part_runs())
    b.push_back("cuda");
  return b;
}

GaussianParams params_of(double sigma) {
  GaussianParams p;
  p.sigma_x = sigma;
  p.border = BorderMode::Replicate;
  return p;
}

HostImage random_image(const ImageDesc& desc, uint32_t seed) {
  HostImage img(desc);
  img.fill_random(seed);
  return img;
}

// cudagaussian in a harness: caps `in` on its input, `out` accepted on its
// output (which also pushes a TIME segment starting at 0).
GstHarness* gaussian_harness(const std::string& backend, double sigma, const std::string& in,
                             const std::string& out) {
  GstHarness* h = harness_with("cudagaussian", std::string("backend=") + backend.c_str());
  gst_util_set_object_arg(G_OBJECT(h->element), "border-mode", "replicate");
  g_object_set(h->element, "sigma", sigma, nullptr);
  gst_harness_set_caps_str(h, in.c_str(), out.c_str());
  return h;
}

GstHarness* gaussian_harness(const std::string& backend, double sigma, const ImageDesc& desc) {
  const std::string caps = caps_string(desc);
  return gaussian_harness(backend, sigma, caps, caps);
}

// The message of the next ERROR on `bus` (already posted: no waiting), and
// the name of the object that posted it; "" when there is none.
std::string pop_error(GstBus* bus, std::string* source = nullptr) {
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (!msg)
    return "";
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  std::string text = err ? err->message : "";
  if (source)
    *source = GST_MESSAGE_SRC_NAME(msg) ? GST_MESSAGE_SRC_NAME(msg) : "";
  if (err)
    g_error_free(err);
  gst_message_unref(msg);
  return text;
}

// Plays `pipeline` until its first ERROR or EOS (at most 20 s: a bound on
// waiting, not a measurement). Returns the error's message ("" at EOS) and
// the name of the element that posted it.
::testing::AssertionResult run_until_error_or_eos(const std::string& pipeline, std::string* error,
                                                  std::string* source) {
  GError* perr = nullptr;
  GstElement* p = gst_parse_launch(pipeline.c_str(), &perr);
  if (!p || perr) {
    std::string why = perr ? perr->message : "no pipeline";
    if (perr)
      g_error_free(perr);
    if (p)
      gst_object_unref(p);
    return ::testing::AssertionFailure() << "cannot build " << pipeline << ": " << why;
  }
  GstBus* bus = gst_element_get_bus(p);
  gst_element_set_state(p, GST_STATE_PLAYING);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 20 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
  ::testing::AssertionResult r = ::testing::AssertionSuccess();
  error->clear();
  source->clear();
  if (!msg) {
    r = ::testing::AssertionFailure() << pipeline << ": neither an error nor EOS";
  } else {
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      GError* err = nullptr;
      gst_message_parse_error(msg, &err, nullptr);
      *error = err ? err->message : "(no message)";
      *source = GST_MESSAGE_SRC_NAME(msg) ? GST_MESSAGE_SRC_NAME(msg) : "";
      if (err)
        g_error_free(err);
    }
    gst_message_unref(msg);
  }
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
  return r;
}

// Pulls one buffer from the harness and copies it out in `desc`.
HostImage pull_image(GstHarness* h, const ImageDesc& desc) {
  HostImage out;
  GstBuffer* buf = gst_harness_pull(h);
  EXPECT_NE(buf, nullptr);
  if (buf) {
    EXPECT_TRUE(image_from_buffer(buf, desc, &out));
    gst_buffer_unref(buf);
  }
  return out;
}

}  // namespace

// 1. A GstInterpolationControlSource on `sigma` (linear, 1.0 at 0 s to 5.0 at
// 4 s): each frame is blurred with the sigma of its own stream time. Run
// twice: with a segment whose running time equals its stream time, and with
// one whose running time is 100 s ahead (base), which must not matter.
TEST(FilterIdioms, ControlledSigmaFollowsStreamTime) {
  const ImageDesc desc{PixelFormat::RGBA, 64, 48};
  const HostImage src = random_image(desc, 101);
  for (const std::string& backend : backends()) {
    for (const guint64 base : {guint64(0), guint64(100 * GST_SECOND)}) {
      SCOPED_TRACE("backend " + backend + ", segment base " + std::to_string(base / GST_SECOND) +
                   " s");
      GstHarness* h = gaussian_harness(backend, 3.0, desc);
      GstControlSource* cs = gst_interpolation_control_source_new();
      g_object_set(cs, "mode", GST_INTERPOLATION_MODE_LINEAR, nullptr);
      ASSERT_TRUE(
          gst_timed_value_control_source_set(GST_TIMED_VALUE_CONTROL_SOURCE(cs), 0, 1.0));
      ASSERT_TRUE(gst_timed_value_control_source_set(GST_TIMED_VALUE_CONTROL_SOURCE(cs),
                                                     4 * GST_SECOND, 5.0));
      ASSERT_TRUE(gst_object_add_control_binding(
          GST_OBJECT(h->element),
          gst_direct_control_binding_new_absolute(GST_OBJECT(h->element), "sigma", cs)));
      gst_object_unref(cs);

      GstSegment segment;
      gst_segment_init(&segment, GST_FORMAT_TIME);
      segment.base = base;
      ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));

      HostImage previous;
      for (int t = 0; t <= 4; t++) {
        GstBuffer* in = buffer_from_image(src);
        GST_BUFFER_PTS(in) = t * GST_SECOND;
        GST_BUFFER_DURATION(in) = GST_SECOND;
        ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK) << "t=" << t;
        HostImage got = pull_image(h, desc);
        // The value the binding set for this buffer; the oracle is built
        // with it (1 + t up to rounding, which can move ceil(3 sigma)).
        gdouble sigma = 0;
        g_object_get(h->element, "sigma", &sigma, nullptr);
        EXPECT_NEAR(sigma, 1.0 + t, 1e-6) << "t=" << t;
        EXPECT_NEAR_ORACLE(got.view(), gaussian_oracle(src, params_of(sigma)).view(),
                           kGaussianBounds)
            << "t=" << t << " s, sigma " << sigma;
        if (t > 0) {
          EXPECT_FALSE(bytes_equal(got.view(), previous.view()))
              << "the output at t=" << t << " s equals the one before: the ramp did not apply";
        }
        previous = std::move(got);
      }
      gst_harness_teardown(h);
    }
  }
}

// 2. A region of interest (tags video, size, orientation) survives the blur;
// a meta tagged "colorspace" is dropped; untagged and video-only metas are
// kept.
TEST(FilterIdioms, MetasKeptOrDroppedByTags) {
  const ImageDesc desc{PixelFormat::NV12, 96, 40};
  const HostImage src = random_image(desc, 202);
  GstCaps* ref_caps = gst_caps_from_string("timestamp/x-cudafx-test");
  for (const std::string& backend : backends()) {
    SCOPED_TRACE("backend " + backend);
    GstHarness* h = gaussian_harness(backend, 2.0, desc);
    GstBuffer* in = buffer_from_image(src);
    GST_BUFFER_PTS(in) = 0;
    GstVideoRegionOfInterestMeta* roi =
        gst_buffer_add_video_region_of_interest_meta(in, "face", 11, 7, 30, 20);
    ASSERT_NE(roi, nullptr);
    roi->id = 42;
    gst_buffer_add_reference_timestamp_meta(in, ref_caps, 123 * GST_MSECOND, GST_CLOCK_TIME_NONE);
    add_test_meta(in, colorspace_test_meta(), 7);
    add_test_meta(in, untagged_test_meta(), 8);
    add_test_meta(in, video_test_meta(), 9);
    ASSERT_EQ(test_meta_value(in, colorspace_test_meta()), 7);

    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    HostImage got;
    ASSERT_TRUE(image_from_buffer(out, desc, &got));
    EXPECT_NEAR_ORACLE(got.view(), gaussian_oracle(src, params_of(2.0)).view(), kGaussianBounds);

    GstVideoRegionOfInterestMeta* out_roi = gst_buffer_get_video_region_of_interest_meta(out);
    ASSERT_NE(out_roi, nullptr) << "the region of interest was dropped";
    EXPECT_STREQ(g_quark_to_string(out_roi->roi_type), "face");
    EXPECT_EQ(out_roi->x, 11u);
    EXPECT_EQ(out_roi->y, 7u);
    EXPECT_EQ(out_roi->w, 30u);
    EXPECT_EQ(out_roi->h, 20u);
    EXPECT_EQ(out_roi->id, 42);

    GstReferenceTimestampMeta* ts = gst_buffer_get_reference_timestamp_meta(out, ref_caps);
    ASSERT_NE(ts, nullptr) << "the (untagged) reference timestamp meta was dropped";
    EXPECT_EQ(ts->timestamp, 123 * GST_MSECOND);

    EXPECT_EQ(test_meta_value(out, colorspace_test_meta()), -1)
        << "a meta tagged \"colorspace\" came through a filter that keeps only the geometry";
    EXPECT_EQ(test_meta_value(out, untagged_test_meta()), 8) << "the untagged test meta";
    EXPECT_EQ(test_meta_value(out, video_test_meta()), 9) << "the video-only test meta";
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
  gst_caps_unref(ref_caps);
}

// 3. Interlaced caps: an element error that says so (and what to do), posted
// by cudagaussian; the same pipeline with progressive caps plays to EOS.
TEST(FilterIdioms, InterlacedInputRefusedWithClearError) {
  for (const std::string& backend : backends()) {
    for (const char* mode : {"interleaved", "progressive"}) {
      SCOPED_TRACE("backend " + backend + ", interlace-mode " + mode);
      const std::string pipeline =
          std::string("videotestsrc num-buffers=3 ! video/x-raw,format=RGBA,width=64,height=48,"
                      "framerate=30/1,interlace-mode=") +
          mode + " ! cudagaussian name=blur backend=" + backend + " ! fakesink";
      std::string error, source;
      ASSERT_TRUE(run_until_error_or_eos(pipeline, &error, &source));
      if (std::string(mode) == "progressive") {
        EXPECT_EQ(error, "") << "from " << source;
        continue;
      }
      EXPECT_EQ(source, "blur") << error;
      EXPECT_EQ(error.rfind("Interlaced video is not supported", 0), 0u) << error;
    }
  }
}

// 4. A GstVideoMeta whose plane runs past the end of its buffer, or whose
// stride is shorter than a row, is refused with an element error naming the
// cause; nothing is output, and the next good buffer goes through.
struct BadLayout {
  const char* name;
  ImageDesc desc;
  gsize buffer_size;
  gsize offsets[GST_VIDEO_MAX_PLANES];
  gint strides[GST_VIDEO_MAX_PLANES];
  const char* expected;  // in the error's message ("": any error)
};

TEST(FilterIdioms, VideoMetaOutsideTheBufferRefused) {
  const BadLayout cases[] = {
      // RGBA 64x48: 12288 bytes; 1024 + 256 * 47 + 256 = 13312
      {"offset past the end", {PixelFormat::RGBA, 64, 48}, 12288, {1024}, {256},
       "video meta plane 0 ends at byte 13312, past the end of the 12288-byte buffer"},
      // a stride larger than a row that the buffer cannot hold: 300 * 47 + 256
      {"stride past the end", {PixelFormat::RGBA, 64, 48}, 12288, {0}, {300},
       "video meta plane 0 ends at byte 14356, past the end of the 12288-byte buffer"},
      {"stride below a row", {PixelFormat::RGBA, 64, 48}, 12288, {0}, {200},
       "video meta plane 0 stride 200 is smaller than its row of 256 bytes"},
      // an offset whose sum with the plane's extent wraps around 64 bits: refused
      // (the layout check lets it through today; gst_video_frame_map refuses
      // it, "cannot map the frame"), so only an error is required
      {"offset that wraps around", {PixelFormat::RGBA, 64, 48}, 12288, {G_MAXSIZE - 10}, {256},
       ""},
      // NV12 96x40: 5760 bytes; the chroma plane from 4352: 4352 + 96 * 19 + 96
      {"chroma plane past the end", {PixelFormat::NV12, 96, 40}, 5760, {0, 4352}, {96, 96},
       "video meta plane 1 ends at byte 6272, past the end of the 5760-byte buffer"},
      {"chroma stride below a row", {PixelFormat::NV12, 96, 40}, 5760, {0, 3840}, {96, 64},
       "video meta plane 1 stride 64 is smaller than its row of 96 bytes"},
  };
  for (const std::string& backend : backends()) {
    for (const BadLayout& c : cases) {
      SCOPED_TRACE("backend " + backend + ", " + c.name);
      GstHarness* h = gaussian_harness(backend, 1.5, c.desc);
      GstBus* bus = gst_bus_new();
      gst_element_set_bus(h->element, bus);

      const FormatInfo& fi = format_info(c.desc.format);
      GstBuffer* bad = gst_buffer_new_allocate(nullptr, c.buffer_size, nullptr);
      gst_buffer_memset(bad, 0, 0x40, c.buffer_size);
      gst_buffer_add_video_meta_full(bad, GST_VIDEO_FRAME_FLAG_NONE,
                                     gst_video_format_from_string(fi.name), c.desc.width,
                                     c.desc.height, fi.n_planes,
                                     const_cast<gsize*>(c.offsets), const_cast<gint*>(c.strides));
      EXPECT_EQ(gst_harness_push(h, bad), GST_FLOW_ERROR);
      std::string source;
      const std::string error = pop_error(bus, &source);
      EXPECT_FALSE(error.empty()) << "no error posted";
      EXPECT_NE(error.find(c.expected), std::string::npos)
          << "error: \"" << error << "\", expected it to contain \"" << c.expected << "\"";
      EXPECT_EQ(source, GST_ELEMENT_NAME(h->element));
      EXPECT_EQ(gst_harness_buffers_in_queue(h), 0u);

      // The element is not left broken: a good frame goes through.
      const HostImage src = random_image(c.desc, 303);
      const HostImage got = push_pull(h, src, 3);
      EXPECT_NEAR_ORACLE(got.view(), gaussian_oracle(src, params_of(1.5)).view(),
                         kGaussianBounds);
      EXPECT_EQ(pop_error(bus), "");

      gst_element_set_bus(h->element, nullptr);
      gst_object_unref(bus);
      gst_harness_teardown(h);
    }
  }
}

// 5. New caps mid-stream (another format and size, then back): every
// output matches the oracle for its own format and size.
TEST(FilterIdioms, CapsRenegotiationMidStream) {
  const ImageDesc descs[] = {{PixelFormat::RGBA, 64, 48},
                             {PixelFormat::NV12, 96, 40},
                             {PixelFormat::RGBA, 64, 48}};
  for (const std::string& backend : backends()) {
    SCOPED_TRACE("backend " + backend);
    // Downstream takes any raw video in system memory.
    GstHarness* h = gaussian_harness(backend, 2.5, caps_string(descs[0]), "video/x-raw");
    uint32_t seed = 400;
    for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
      const ImageDesc& d = descs[i];
      SCOPED_TRACE(std::string("stage ") + std::to_string(i) + ": " + caps_string(d));
      if (i > 0)
        gst_harness_set_src_caps_str(h, caps_string(d).c_str());
      for (int n = 0; n < 2; n++) {
        const HostImage src = random_image(d, seed++);
        const HostImage got = push_pull(h, src, n);
        ASSERT_EQ(got.desc().width, d.width);
        ASSERT_EQ(got.desc().height, d.height);
        EXPECT_NEAR_ORACLE(got.view(), gaussian_oracle(src, params_of(2.5)).view(),
                           kGaussianBounds)
            << "frame " << n;
      }
      GstCaps* out_caps = gst_pad_get_current_caps(h->sinkpad);
      ASSERT_NE(out_caps, nullptr);
      GstVideoInfo info;
      ASSERT_TRUE(gst_video_info_from_caps(&info, out_caps));
      EXPECT_STREQ(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
                   format_info(d.format).name);
      EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), d.width);
      EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&info), d.height);
      gst_caps_unref(out_caps);
    }
    gst_harness_teardown(h);
  }
}

// 6a. appsrc ! cudagaussian ! appsink, NULL -> PLAYING -> NULL three times,
// another sigma each time: every run blurs correctly.
TEST(FilterIdioms, StateCyclingKeepsWorking) {
  const ImageDesc desc{PixelFormat::I420, 80, 60};
  const std::string caps = caps_string(desc);
  for (const std::string& backend : backends()) {
    SCOPED_TRACE("backend " + backend);
    const std::string launch = "appsrc name=src format=time caps=\"" + caps +
                               "\" ! cudagaussian name=blur backend=" + backend +
                               " ! appsink name=sink sync=false";
    GError* perr = nullptr;
    GstElement* p = gst_parse_launch(launch.c_str(), &perr);
    ASSERT_NE(p, nullptr) << (perr ? perr->message : "");
    ASSERT_EQ(perr, nullptr) << perr->message;
    GstElement* appsrc = gst_bin_get_by_name(GST_BIN(p), "src");
    GstElement* blur = gst_bin_get_by_name(GST_BIN(p), "blur");
    GstElement* appsink = gst_bin_get_by_name(GST_BIN(p), "sink");
    GstBus* bus = gst_element_get_bus(p);
    const double sigmas[] = {1.5, 4.0, 2.0};
    uint32_t seed = 500;
    for (int cycle = 0; cycle < 3; cycle++) {
      SCOPED_TRACE("cycle " + std::to_string(cycle));
      g_object_set(blur, "sigma", sigmas[cycle], nullptr);
      ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
      for (int n = 0; n < 2; n++) {
        const HostImage src = random_image(desc, seed++);
        GstBuffer* in = buffer_from_image(src);
        GST_BUFFER_PTS(in) = n * GST_SECOND / 30;
        GST_BUFFER_DURATION(in) = GST_SECOND / 30;
        ASSERT_EQ(gst_app_src_push_buffer(GST_APP_SRC(appsrc), in), GST_FLOW_OK);
        GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(appsink), 20 * GST_SECOND);
        ASSERT_NE(sample, nullptr) << "no output for frame " << n << ": "
                                   << pop_error(bus);
        HostImage got;
        EXPECT_TRUE(image_from_buffer(gst_sample_get_buffer(sample), desc, &got));
        gst_sample_unref(sample);
        EXPECT_NEAR_ORACLE(got.view(), gaussian_oracle(src, params_of(sigmas[cycle])).view(),
                           kGaussianBounds)
            << "frame " << n << ", sigma " << sigmas[cycle];
      }
      EXPECT_EQ(pop_error(bus), "");
      ASSERT_EQ(gst_element_set_state(p, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    }
    gst_object_unref(bus);
    gst_object_unref(appsink);
    gst_object_unref(blur);
    gst_object_unref(appsrc);
    gst_object_unref(p);
  }
}

// 6b. FLUSH_START / FLUSH_STOP (and the new segment a seek brings) between
// frames: the next frame is blurred correctly, and only it comes out.
TEST(FilterIdioms, FlushBetweenFramesKeepsWorking) {
  const ImageDesc desc{PixelFormat::BGRx, 72, 50};
  for (const std::string& backend : backends()) {
    SCOPED_TRACE("backend " + backend);
    GstHarness* h = gaussian_harness(backend, 3.0, desc);
    const HostImage a = random_image(desc, 601), b = random_image(desc, 602);
    EXPECT_NEAR_ORACLE(push_pull(h, a).view(), gaussian_oracle(a, params_of(3.0)).view(),
                       kGaussianBounds);
    for (int round = 0; round < 2; round++) {
      SCOPED_TRACE("flush " + std::to_string(round));
      push_flush(h);
      const HostImage& src = round ? a : b;
      EXPECT_NEAR_ORACLE(push_pull(h, src, 5).view(), gaussian_oracle(src, params_of(3.0)).view(),
                         kGaussianBounds);
      EXPECT_EQ(gst_harness_buffers_in_queue(h), 0u);
    }
    gst_harness_teardown(h);
  }
}
