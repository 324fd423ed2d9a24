// cudadeltaenc / cudadeltadec as GStreamer elements: round trips through
// GstHarness, keyframes on request, statistics, damaged input, the encoder's
// backends and memory types, and real RTP/UDP on 127.0.0.1 (clean, and with
// packets dropped).
#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "../examples/delta_receiver.hpp"
#include "cudafx/delta.hpp"
#include "support/clip.hpp"
#include "support/delta_reseal.hpp"
#include "support/delta_streams.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// The formats the element tests run through, each at two thresholds, and
// the test names they get.
auto formats_and_thresholds(int t0, int t1) {
  return ::testing::Combine(::testing::Values(PixelFormat::RGBA, PixelFormat::BGR,
                                              PixelFormat::GRAY8, PixelFormat::I420,
                                              PixelFormat::NV12),
                            ::testing::Values(t0, t1));
}

std::string format_and_threshold(
    const ::testing::TestParamInfo<std::tuple<PixelFormat, int>>& info) {
  return std::string(format_info(std::get<0>(info.param)).name) + "_T" +
         std::to_string(std::get<1>(info.param));
}

// True when a force-key-unit event went upstream out of the harness since
// the last call (the other upstream events are dropped).
bool keyframe_requested(GstHarness* h) {
  bool asked = false;
  while (GstEvent* e = gst_harness_try_pull_upstream_event(h)) {
    asked |= gst_video_event_is_force_key_unit(e);
    gst_event_unref(e);
  }
  return asked;
}

}  // namespace

class DeltaElementsRoundTrip : public ::testing::TestWithParam<std::tuple<PixelFormat, int>> {};

TEST_P(DeltaElementsRoundTrip, EveryFrameWithinThreshold) {
  const auto [format, threshold] = GetParam();
  const ImageDesc desc{format, 161, 93};
  const auto clip = make_clip(desc, 10, 3);
  GstHarness* h = gst_harness_new_parse(
      ("cudadeltaenc key-int-max=4 threshold=" + std::to_string(threshold) + " ! cudadeltadec")
          .c_str());
  set_caps(h, desc);
  for (int n = 0; n < static_cast<int>(clip.size()); n++) {
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(GST_BUFFER_PTS(out), static_cast<GstClockTime>(n * GST_SECOND / 30));
    HostImage got;
    ASSERT_TRUE(image_from_buffer(out, desc, &got));
    EXPECT_LE(max_abs_diff(got.view(), clip[n].view()), threshold) << "frame " << n;
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
}

INSTANTIATE_TEST_SUITE_P(Formats, DeltaElementsRoundTrip, formats_and_thresholds(0, 10),
                         format_and_threshold);

TEST(DeltaElements, ForceKeyUnitGivesAKeyframe) {
  const ImageDesc desc{PixelFormat::I420, 64, 48};
  const auto clip = make_clip(desc, 4, 8);
  GstHarness* h = gst_harness_new("cudadeltaenc");
  gst_harness_set_src_caps_str(h, caps_string(desc).c_str());
  auto push_pull_is_key = [&](int n) {
    EXPECT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    const bool key = !GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DELTA_UNIT);
    gst_buffer_unref(out);
    return key;
  };
  EXPECT_TRUE(push_pull_is_key(0));
  EXPECT_FALSE(push_pull_is_key(1));
  gst_harness_push_upstream_event(
      h, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 1));
  EXPECT_TRUE(push_pull_is_key(2));
  EXPECT_FALSE(push_pull_is_key(3));
  gst_harness_teardown(h);
}

// With key-int-max=1 every frame is a keyframe, coded for its own size with
// the whole threshold as dead zone; with delta frames after it, a keyframe
// keeps its bytes within 4T/5 (delta_keyframe_dead_zone).
TEST(DeltaElements, KeyframesOnlyUseTheWholeThreshold) {
  const ImageDesc desc{PixelFormat::I420, 96, 64};
  const auto clip = make_clip(desc, 2, 11);
  for (int key_int_max : {1, 2}) {
    GstHarness* h = gst_harness_new_parse(
        ("cudadeltaenc threshold=10 key-int-max=" + std::to_string(key_int_max) +
         " ! cudadeltadec")
            .c_str());
    set_caps(h, desc);
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[0], 0)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    HostImage got;
    ASSERT_TRUE(image_from_buffer(out, desc, &got));
    EXPECT_EQ(max_abs_diff(got.view(), clip[0].view()), key_int_max == 1 ? 10 : 8)
        << "key-int-max " << key_int_max;
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// The encoder's caps travel as a string (rtpgstpay's caps, the SDP of an
// RTSP server) to receivers that parse them: every field a plain string,
// number or fraction, none of a library's own types. GstVideoEncoder adds
// the input's multiview-mode with a GstVideoMultiviewFlagsSet, which a
// receiver whose process had not registered that type (the RTSP clients on
// the GPU machine) could not parse.
TEST(DeltaElements, CapsHoldOnlyPlainFields) {
  const ImageDesc desc{PixelFormat::I420, 64, 48};
  const auto clip = make_clip(desc, 1, 8);
  GstHarness* h = gst_harness_new("cudadeltaenc");
  gst_harness_set_src_caps_str(h, (caps_string(desc) +
                                   ", multiview-mode=(string)mono, pixel-aspect-ratio=(fraction)1/1, "
                                   "interlace-mode=(string)progressive")
                                      .c_str());
  ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[0], 0)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  gst_buffer_unref(out);
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  ASSERT_NE(caps, nullptr);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  for (int i = 0; i < gst_structure_n_fields(s); i++) {
    const char* name = gst_structure_nth_field_name(s, i);
    const GType type = gst_structure_get_field_type(s, name);
    EXPECT_TRUE(type == G_TYPE_STRING || type == G_TYPE_INT || type == GST_TYPE_FRACTION)
        << name << " is a " << g_type_name(type);
  }
  EXPECT_FALSE(gst_structure_has_field(s, "multiview-flags"));
  gchar* text = gst_caps_to_string(caps);
  EXPECT_EQ(std::string(text).find("multiview"), std::string::npos) << text;
  g_free(text);
  gst_caps_unref(caps);
  gst_harness_teardown(h);
}

// compression=predictive (the default) streams format 4, the others format
// 3; the caps say which, and a change while PLAYING renegotiates and starts
// the new format with a keyframe. A decoder takes either, frame by frame.
TEST(DeltaElements, CompressionSetsTheCapsVersionAndMayChangeWhilePlaying) {
  const ImageDesc desc{PixelFormat::I420, 64, 48};
  const auto clip = make_clip(desc, 6, 8);
  GstHarness* h = gst_harness_new("cudadeltaenc");
  g_object_set(h->element, "threshold", 3u, nullptr);
  gst_harness_set_src_caps_str(h, caps_string(desc).c_str());
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  auto push_pull = [&](int n, int want_version, bool want_key) {
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(!GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DELTA_UNIT), want_key) << "frame " << n;
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    gint version = 0;
    gst_structure_get_int(gst_caps_get_structure(caps, 0), "version", &version);
    gst_caps_unref(caps);
    EXPECT_EQ(version, want_version) << "frame " << n;
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
    EXPECT_EQ(map.data[4], want_version) << "frame " << n;
    std::string err;
    EXPECT_EQ(dec->decode(map.data, map.size, &err), DeltaDecodeResult::Frame) << err;
    gst_buffer_unmap(out, &map);
    gst_buffer_unref(out);
    EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()), 3);
  };
  push_pull(0, 4, true);
  push_pull(1, 4, false);
  gst_util_set_object_arg(G_OBJECT(h->element), "compression", "rans");
  push_pull(2, 3, true);
  push_pull(3, 3, false);
  gst_util_set_object_arg(G_OBJECT(h->element), "compression", "zstd");  // still format 3
  push_pull(4, 3, false);
  gst_util_set_object_arg(G_OBJECT(h->element), "compression", "predictive");
  push_pull(5, 4, true);
  gst_harness_teardown(h);
}

namespace {

struct StatsMessage {
  guint64 frame = 0;
  gboolean keyframe = FALSE;
  guint bytes = 0, moved = 0;
  gdouble changed = -1, bitrate = -1;
};

// Runs `settings` (cudadeltaenc's properties) on `frames` NV12 frames of
// videotestsrc at 30 frames/s (frame n stamped n/30 s) to EOS; returns the
// encoder's statistics messages and, in *sizes, every packet's size.
std::vector<StatsMessage> encoder_stats(const std::string& settings, int frames,
                                        std::vector<guint>* sizes = nullptr,
                                        const std::string& pattern = "pattern=ball") {
  std::vector<StatsMessage> out;
  GstElement* p = gst_parse_launch(
      ("videotestsrc num-buffers=" + std::to_string(frames) + " " + pattern +
       " ! video/x-raw,format=NV12,width=128,height=96,framerate=30/1 ! "
       "cudadeltaenc name=enc " + settings + " ! fakesink")
          .c_str(),
      nullptr);
  EXPECT_NE(p, nullptr);
  if (!p)
    return out;
  std::vector<guint> packet_sizes;
  GstElement* enc = gst_bin_get_by_name(GST_BIN(p), "enc");
  GstPad* pad = gst_element_get_static_pad(enc, "src");
  gst_pad_add_probe(
      pad, GST_PAD_PROBE_TYPE_BUFFER,
      [](GstPad*, GstPadProbeInfo* info, gpointer data) {
        static_cast<std::vector<guint>*>(data)->push_back(
            static_cast<guint>(gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info))));
        return GST_PAD_PROBE_OK;
      },
      &packet_sizes, nullptr);
  gst_object_unref(pad);
  gst_object_unref(enc);
  GstBus* bus = gst_element_get_bus(p);
  gst_element_set_state(p, GST_STATE_PLAYING);
  for (;;) {
    GstMessage* m = gst_bus_timed_pop_filtered(
        bus, 10 * GST_SECOND,  // a guard: the pipeline takes milliseconds
        static_cast<GstMessageType>(GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    if (!m) {
      ADD_FAILURE() << settings << ": no EOS";
      break;
    }
    if (GST_MESSAGE_TYPE(m) != GST_MESSAGE_ELEMENT) {
      EXPECT_EQ(GST_MESSAGE_TYPE(m), GST_MESSAGE_EOS);
      gst_message_unref(m);
      break;
    }
    const GstStructure* s = gst_message_get_structure(m);
    if (gst_structure_has_name(s, "cudadeltaenc-stats")) {
      StatsMessage st;
      EXPECT_TRUE(gst_structure_get_uint64(s, "frame", &st.frame));
      EXPECT_TRUE(gst_structure_get_boolean(s, "keyframe", &st.keyframe));
      EXPECT_TRUE(gst_structure_get_uint(s, "payload-bytes", &st.bytes));
      EXPECT_TRUE(gst_structure_get_double(s, "changed-fraction", &st.changed));
      EXPECT_TRUE(gst_structure_get_double(s, "bitrate", &st.bitrate));
      EXPECT_TRUE(gst_structure_get_uint(s, "moved-tiles", &st.moved));
      out.push_back(st);
    }
    gst_message_unref(m);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(p);
  EXPECT_EQ(packet_sizes.size(), static_cast<size_t>(frames)) << settings;
  if (sizes)
    *sizes = packet_sizes;
  return out;
}

}  // namespace

// Statistics are opt-in: nothing by default or with post-stats=false; with
// stats-interval=0 one message a frame.
TEST(DeltaElements, EncoderPostsStatisticsOnlyWhenAsked) {
  EXPECT_TRUE(encoder_stats("key-int-max=3", 6).empty());
  EXPECT_TRUE(encoder_stats("key-int-max=3 post-stats=false stats-interval=0", 6).empty());
  std::vector<guint> sizes;
  const auto stats = encoder_stats("key-int-max=3 post-stats=true stats-interval=0", 6, &sizes);
  ASSERT_EQ(stats.size(), 6u);
  ASSERT_EQ(sizes.size(), 6u);
  for (size_t n = 0; n < stats.size(); n++) {
    EXPECT_EQ(stats[n].frame, n);
    EXPECT_EQ(stats[n].keyframe, n % 3 == 0) << n;  // frames 0 and 3
    EXPECT_EQ(stats[n].bytes, sizes[n]);
    EXPECT_GE(stats[n].changed, 0.0);
    EXPECT_LE(stats[n].changed, 1.0);
    EXPECT_GT(stats[n].bitrate, 0.0);
  }
}

// Moving content (bars moving 4 pixels a frame) gets moved tiles, counted in
// the statistics, unless motion-search=false; keyframes never have any.
TEST(DeltaElements, EncoderMovesTilesOfMovingContent) {
  for (const char* backend : {"cpu", "auto"}) {
    const std::string common = std::string("backend=") + backend +
                               " key-int-max=4 post-stats=true stats-interval=0";
    const std::string moving = "pattern=smpte horizontal-speed=4";
    const auto with = encoder_stats(common, 6, nullptr, moving);
    const auto without = encoder_stats(common + " motion-search=false", 6, nullptr, moving);
    ASSERT_EQ(with.size(), 6u);
    ASSERT_EQ(without.size(), 6u);
    guint moved = 0;
    for (size_t n = 0; n < with.size(); n++) {
      if (with[n].keyframe) {
        EXPECT_EQ(with[n].moved, 0u) << n;
      }
      EXPECT_EQ(without[n].moved, 0u) << n;
      moved += with[n].moved;
    }
    EXPECT_GT(moved, 0u) << backend;
  }
}

// With an interval, a message when that much stream time has passed since
// the last (frame n at n/30 s); the bitrate still counts every frame of the
// last second.
TEST(DeltaElements, EncoderStatsIntervalLimitsTheMessages) {
  struct Case {
    const char* settings;
    std::vector<guint64> frames;
  };
  for (const Case& c : {Case{"post-stats=true", {0, 30, 60}},  // default: 1000 ms
                        Case{"post-stats=true stats-interval=500", {0, 15, 30, 45, 60}},
                        Case{"post-stats=true stats-interval=400", {0, 12, 24, 36, 48, 60}}}) {
    std::vector<guint> sizes;
    const auto stats = encoder_stats(c.settings, 61, &sizes);
    std::vector<guint64> frames;
    for (const auto& st : stats)
      frames.push_back(st.frame);
    EXPECT_EQ(frames, c.frames) << c.settings;
    for (const auto& st : stats) {
      ASSERT_LT(st.frame, sizes.size());
      EXPECT_EQ(st.bytes, sizes[st.frame]);
      // The frames within the last second: those stamped after
      // (frame - 30) / 30 s.
      double bits = 0;
      for (guint64 n = st.frame >= 29 ? st.frame - 29 : 0; n <= st.frame; n++)
        bits += 8.0 * sizes[n];
      EXPECT_EQ(st.bitrate, bits) << c.settings << ", frame " << st.frame;
    }
  }
}

TEST(DeltaElements, DecoderDropsDamagedFramesAndAsksForAKeyframe) {
  const ImageDesc desc{PixelFormat::RGBA, 80, 40};
  const auto clip = make_clip(desc, 5, 4);
  std::unique_ptr<DeltaEncoder> enc;
  ASSERT_TRUE(DeltaEncoder::create(desc, &enc).is_ok());
  std::vector<std::vector<uint8_t>> packets(clip.size());
  for (size_t n = 0; n < clip.size(); n++) {
    DeltaEncodeSettings s;
    s.force_keyframe = n == 4;
    ASSERT_TRUE(enc->encode(clip[n].view(), s, &packets[n]).is_ok());
  }
  GstHarness* h = gst_harness_new("cudadeltadec");
  gst_harness_set_src_caps_str(
      h, "video/x-cudafx-delta,version=4,format=RGBA,width=80,height=40,framerate=30/1");
  auto push = [&](std::vector<uint8_t> bytes, int n) {
    GstBuffer* b =
        bytes.empty() ? gst_buffer_new() : gst_buffer_new_memdup(bytes.data(), bytes.size());
    GST_BUFFER_PTS(b) = n * GST_SECOND / 30;
    return gst_harness_push(h, b);
  };
  ASSERT_EQ(push(packets[0], 0), GST_FLOW_OK);
  ASSERT_EQ(gst_harness_buffers_received(h), 1u);
  std::vector<uint8_t> damaged = packets[1];
  damaged[damaged.size() / 2] ^= 0x10;
  EXPECT_EQ(push(damaged, 1), GST_FLOW_OK);  // dropped, not an error
  EXPECT_EQ(push(packets[2], 2), GST_FLOW_OK);  // out of sync: dropped
  EXPECT_EQ(push(packets[3], 3), GST_FLOW_OK);
  EXPECT_EQ(gst_harness_buffers_received(h), 1u);
  // A keyframe request went upstream.
  EXPECT_TRUE(keyframe_requested(h));
  ASSERT_EQ(push(packets[4], 4), GST_FLOW_OK);  // the keyframe resynchronises
  ASSERT_EQ(gst_harness_buffers_received(h), 2u);
  GstBuffer* out = nullptr;
  for (int i = 0; i < 2; i++) {
    if (out)
      gst_buffer_unref(out);
    out = gst_harness_pull(h);
  }
  HostImage got;
  ASSERT_TRUE(image_from_buffer(out, desc, &got));
  EXPECT_LE(max_abs_diff(got.view(), clip[4].view()), 4);
  gst_buffer_unref(out);
  // Garbage of any size never crashes and never produces a frame.
  for (size_t len : {0, 1, 47, 48, 49, 4096}) {
    std::vector<uint8_t> junk(len, 0xC3);
    EXPECT_EQ(push(junk, 5), GST_FLOW_OK);
  }
  EXPECT_EQ(gst_harness_buffers_received(h), 2u);
  gst_harness_teardown(h);
}

// ---- undecodable streams: a warning, then an error after max-errors ----

namespace {

// Packets of `clip` from the CPU encoder, keyframes where `key(n)`.
std::vector<std::vector<uint8_t>> encode_packets(const std::vector<HostImage>& clip,
                                                 const std::function<bool(int)>& key) {
  std::unique_ptr<DeltaEncoder> enc;
  EXPECT_TRUE(DeltaEncoder::create(clip[0].desc(), &enc).is_ok());
  std::vector<std::vector<uint8_t>> packets(clip.size());
  for (size_t n = 0; n < clip.size(); n++) {
    DeltaEncodeSettings s;
    s.force_keyframe = key(static_cast<int>(n));
    EXPECT_TRUE(enc->encode(clip[n].view(), s, &packets[n]).is_ok());
  }
  return packets;
}

// A harness around one cudadeltadec (max-errors as given; INT_MIN: the
// element's default) for `caps`, whose messages go to a bus of its own:
// they are posted from within gst_harness_push, so they are on the bus when
// it returns.
struct DecoderHarness {
  GstHarness* h = nullptr;
  GstBus* bus = nullptr;
  int n = 0;  // PTS of the next packet, in frames

  DecoderHarness(const std::string& caps, int max_errors) {
    h = gst_harness_new("cudadeltadec");
    if (max_errors != INT_MIN)
      g_object_set(h->element, "max-errors", max_errors, nullptr);
    bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    gst_harness_set_src_caps_str(h, caps.c_str());
  }
  ~DecoderHarness() {
    gst_harness_teardown(h);
    gst_bus_set_flushing(bus, TRUE);
    gst_object_unref(bus);
  }
  GstFlowReturn push(const std::vector<uint8_t>& bytes, bool discont = false) {
    GstBuffer* b =
        bytes.empty() ? gst_buffer_new() : gst_buffer_new_memdup(bytes.data(), bytes.size());
    GST_BUFFER_PTS(b) = n++ * GST_SECOND / 30;
    if (discont)
      GST_BUFFER_FLAG_SET(b, GST_BUFFER_FLAG_DISCONT);
    return gst_harness_push(h, b);
  }
  // The texts of the WARNING and ERROR messages posted since the last call,
  // in order, each prefixed by "W: " or "E: ".
  std::vector<std::string> messages() {
    std::vector<std::string> out;
    while (GstMessage* m = gst_bus_pop_filtered(
               bus, static_cast<GstMessageType>(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
      GError* err = nullptr;
      const bool warning = GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
      if (warning)
        gst_message_parse_warning(m, &err, nullptr);
      else
        gst_message_parse_error(m, &err, nullptr);
      EXPECT_TRUE(g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE))
          << err->message;
      out.push_back((warning ? "W: " : "E: ") + std::string(err->message));
      g_error_free(err);
      gst_message_unref(m);
    }
    return out;
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& t : v)
    s += "[" + t + "] ";
  return s;
}

const std::vector<uint8_t> kGarbage(200, 0xC3);  // 200 bytes without the magic

}  // namespace

// Garbage: the first packet of a run warns with the cause; more than
// max-errors in a row fail the stream with it; a decoded frame in between
// starts the count again.
TEST(DeltaDecoderErrors, UndecodablePacketsWarnThenFailAfterMaxErrors) {
  const ImageDesc desc{PixelFormat::RGBA, 80, 40};
  const auto packets = encode_packets(make_clip(desc, 2, 4), [](int) { return true; });
  DecoderHarness d(stream_caps(desc), 3);
  ASSERT_EQ(d.push(packets[0]), GST_FLOW_OK);
  EXPECT_EQ(gst_harness_buffers_received(d.h), 1u);
  EXPECT_TRUE(d.messages().empty());
  // Two bad packets: one warning, naming the cause.
  EXPECT_EQ(d.push(kGarbage), GST_FLOW_OK);
  EXPECT_EQ(d.push(kGarbage), GST_FLOW_OK);
  auto m = d.messages();
  ASSERT_EQ(m.size(), 1u) << joined(m);
  EXPECT_EQ(m[0], "W: delta packet: bad magic");
  // A keyframe decodes and clears the count: three more are tolerated.
  ASSERT_EQ(d.push(packets[1]), GST_FLOW_OK);
  EXPECT_EQ(gst_harness_buffers_received(d.h), 2u);
  for (int i = 0; i < 3; i++)
    EXPECT_EQ(d.push(kGarbage), GST_FLOW_OK) << "bad packet " << i + 1 << " of max-errors 3";
  m = d.messages();
  ASSERT_EQ(m.size(), 1u) << joined(m);  // a new run: a new warning
  EXPECT_EQ(m[0], "W: delta packet: bad magic");
  // The fourth in a row is one too many.
  EXPECT_EQ(d.push(kGarbage), GST_FLOW_ERROR);
  m = d.messages();
  ASSERT_EQ(m.size(), 1u) << joined(m);
  EXPECT_EQ(m[0], "E: delta packet: bad magic");
  EXPECT_EQ(gst_harness_buffers_received(d.h), 2u);
}

// max-errors=-1: any number of bad packets, one warning and never an error;
// the element's default is 10.
TEST(DeltaDecoderErrors, MaxErrorsMinusOneOnlyWarns) {
  const ImageDesc desc{PixelFormat::I420, 64, 48};
  {
    DecoderHarness d(stream_caps(desc), INT_MIN);
    gint max_errors = 0;
    g_object_get(d.h->element, "max-errors", &max_errors, nullptr);
    EXPECT_EQ(max_errors, 10);
  }
  DecoderHarness d(stream_caps(desc), -1);
  for (int i = 0; i < 100; i++)
    ASSERT_EQ(d.push(std::vector<uint8_t>(i, 0x5A)), GST_FLOW_OK) << "packet " << i;
  const auto m = d.messages();
  ASSERT_EQ(m.size(), 1u) << joined(m);
  EXPECT_EQ(m[0], "W: delta packet: truncated header (0 bytes)");
  EXPECT_EQ(gst_harness_buffers_received(d.h), 0u);
}

// Caps that do not match the stream: every packet fails validation, which
// says so.
TEST(DeltaDecoderErrors, CapsThatDoNotMatchTheStreamFail) {
  const ImageDesc desc{PixelFormat::NV12, 96, 64};
  const auto packets = encode_packets(make_clip(desc, 4, 5), [](int n) { return n == 0; });
  DecoderHarness d(stream_caps({PixelFormat::NV12, 96, 48}), 2);
  EXPECT_EQ(d.push(packets[0]), GST_FLOW_OK);
  EXPECT_EQ(d.push(packets[1]), GST_FLOW_OK);  // checked before it could wait for a keyframe
  EXPECT_EQ(d.push(packets[2]), GST_FLOW_ERROR);
  const auto m = d.messages();
  ASSERT_EQ(m.size(), 2u) << joined(m);
  EXPECT_EQ(m[0], "W: delta packet: format or size differs from the stream's caps");
  EXPECT_EQ(m[1], "E: delta packet: format or size differs from the stream's caps");
}

// Loss is not an error: packets that wait for a keyframe (a gap in the
// counter, a DISCONT) are dropped and a keyframe requested, with
// max-errors=0 as with any other, and the keyframe brings the stream back.
// intra-refresh=true (#18): the encoder sends one keyframe and then sweeps a
// band of spatially coded tile rows over key-int-max frames; a decoder that
// joins late, or loses a packet, outputs again within one sweep without
// asking for a keyframe, every frame within the threshold, and posts
// "cudadeltadec-resynced" (via intra-refresh) when it is whole.
TEST(DeltaDecoderErrors, IntraRefreshJoinsAndRecoversWithoutKeyframes) {
  constexpr int kPeriod = 6, kThreshold = 2;
  const ImageDesc desc{PixelFormat::I420, 128, 96};
  const auto clip = make_clip(desc, 40, 13);
  GstHarness* enc = gst_harness_new("cudadeltaenc");
  g_object_set(enc->element, "threshold", static_cast<guint>(kThreshold), "key-int-max",
               static_cast<guint>(kPeriod), "intra-refresh", TRUE, nullptr);
  gst_harness_set_src_caps_str(enc, caps_string(desc).c_str());
  std::vector<std::vector<uint8_t>> packets;
  for (size_t n = 0; n < clip.size(); n++) {
    ASSERT_EQ(gst_harness_push(enc, timed_buffer(clip[n], static_cast<int>(n))), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(enc);
    EXPECT_EQ(!GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DELTA_UNIT), n == 0) << "frame " << n;
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
    packets.emplace_back(map.data, map.data + map.size);
    gst_buffer_unmap(out, &map);
    gst_buffer_unref(out);
  }
  gst_harness_teardown(enc);

  DecoderHarness d(stream_caps(desc), -1);
  auto resynced_via = [&]() {
    std::string via;
    while (GstMessage* m = gst_bus_pop_filtered(d.bus, GST_MESSAGE_ELEMENT)) {
      const GstStructure* st = gst_message_get_structure(m);
      if (gst_structure_has_name(st, "cudadeltadec-resynced"))
        via = gst_structure_get_string(st, "via");
      gst_message_unref(m);
    }
    return via;
  };
  // Joins at frame 10; frame 25 is lost; frame 33 arrives damaged (behind
  // valid CRCs: dropped with a warning, still no keyframe request).
  std::vector<int> out_frames;
  for (size_t n = 10; n < clip.size(); n++) {
    if (n == 25)
      continue;
    std::vector<uint8_t> p = packets[n];
    if (n == 33) {
      p[p.size() - 2] ^= 0x5a;
      testing_support::reseal_delta_packet(p.data(), p.size());
    }
    ASSERT_EQ(d.push(p, n == 26), GST_FLOW_OK);
    while (GstBuffer* b = gst_harness_try_pull(d.h)) {
      HostImage img(desc);
      ASSERT_TRUE(testing_support::image_from_buffer(b, desc, &img));
      EXPECT_LE(testing_support::max_abs_diff(img.view(), clip[n].view()), kThreshold)
          << "frame " << n;
      out_frames.push_back(static_cast<int>(n));
      gst_buffer_unref(b);
    }
    if (n == 10 + kPeriod - 1 || n == 26 + kPeriod - 1) {
      EXPECT_EQ(resynced_via(), "intra-refresh") << "frame " << n;
    }
  }
  EXPECT_FALSE(keyframe_requested(d.h));
  const auto warnings = d.messages();
  ASSERT_EQ(warnings.size(), 1u) << joined(warnings);
  EXPECT_EQ(warnings[0].rfind("W: ", 0), 0u) << warnings[0];
  ASSERT_FALSE(out_frames.empty());
  EXPECT_LE(out_frames.front(), 10 + kPeriod - 1);
  // Every frame from the first whole one on is output, but for those
  // rebuilding after the loss.
  int missing = 0;
  for (int n = out_frames.front(); n < static_cast<int>(clip.size()); n++)
    missing += std::find(out_frames.begin(), out_frames.end(), n) == out_frames.end();
  EXPECT_GE(missing, 2);            // the lost and the damaged one
  EXPECT_LE(missing, 2 * kPeriod);  // and at most a sweep after each
}

TEST(DeltaDecoderErrors, LossFollowedByAKeyframeRecoversWithoutAnError) {
  const ImageDesc desc{PixelFormat::RGBA, 80, 40};
  const auto clip = make_clip(desc, 8, 6);
  const auto packets = encode_packets(clip, [](int n) { return n == 0 || n == 6; });
  DecoderHarness d(stream_caps(desc), 0);
  ASSERT_EQ(d.push(packets[0]), GST_FLOW_OK);
  ASSERT_EQ(d.push(packets[1]), GST_FLOW_OK);
  // packet 2 is lost
  EXPECT_EQ(d.push(packets[3]), GST_FLOW_OK);  // the counter jumped
  EXPECT_EQ(d.push(packets[4]), GST_FLOW_OK);  // still waiting
  EXPECT_EQ(d.push(packets[5], true), GST_FLOW_OK);  // a DISCONT
  EXPECT_EQ(gst_harness_buffers_received(d.h), 2u);
  EXPECT_TRUE(keyframe_requested(d.h));
  ASSERT_EQ(d.push(packets[6]), GST_FLOW_OK);
  ASSERT_EQ(d.push(packets[7]), GST_FLOW_OK);
  EXPECT_EQ(gst_harness_buffers_received(d.h), 4u);
  const auto m = d.messages();
  EXPECT_TRUE(m.empty()) << joined(m);
  GstBuffer* out = nullptr;
  for (int i = 0; i < 4; i++) {
    if (out)
      gst_buffer_unref(out);
    out = gst_harness_pull(d.h);
  }
  HostImage got;
  ASSERT_TRUE(image_from_buffer(out, desc, &got));
  EXPECT_LE(max_abs_diff(got.view(), clip[7].view()), 4);
  gst_buffer_unref(out);
}

// A file of packets without framing (filesrc reads blocks that are not
// packets) through a real pipeline: a warning, then the error, both naming
// the cause, instead of a silent EOS.
TEST(DeltaDecoderErrors, UnframedFileEndsInAnErrorNamingTheCause) {
  gchar* path = nullptr;
  const int fd = g_file_open_tmp("cudafx-delta-XXXXXX.bin", &path, nullptr);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string caps = "video/x-cudafx-delta,version=4,format=I420,width=128,height=96,"
                           "framerate=30/1";
  auto run = [](const std::string& pipeline, std::vector<std::string>* messages) {
    GstElement* p = gst_parse_launch(pipeline.c_str(), nullptr);
    EXPECT_NE(p, nullptr) << pipeline;
    if (!p)
      return;
    GstBus* bus = gst_element_get_bus(p);
    gst_element_set_state(p, GST_STATE_PLAYING);
    for (;;) {
      GstMessage* m = gst_bus_timed_pop_filtered(
          bus, 20 * GST_SECOND,  // a guard: the pipelines take milliseconds
          static_cast<GstMessageType>(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
      if (!m) {
        ADD_FAILURE() << pipeline << ": neither EOS nor an error";
        break;
      }
      const GstMessageType type = GST_MESSAGE_TYPE(m);
      if (type != GST_MESSAGE_EOS) {
        GError* err = nullptr;
        if (type == GST_MESSAGE_WARNING)
          gst_message_parse_warning(m, &err, nullptr);
        else
          gst_message_parse_error(m, &err, nullptr);
        messages->push_back(std::string(type == GST_MESSAGE_WARNING ? "W " : "E ") +
                            GST_OBJECT_NAME(GST_MESSAGE_SRC(m)) + ": " + err->message);
        g_error_free(err);
      }
      gst_message_unref(m);
      if (type != GST_MESSAGE_WARNING)
        break;
    }
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(p);
  };
  std::vector<std::string> messages;
  run(std::string("videotestsrc num-buffers=20 pattern=snow ! "
                  "video/x-raw,format=I420,width=128,height=96 ! cudadeltaenc backend=cpu ! "
                  "filesink location=") + path,
      &messages);
  EXPECT_TRUE(messages.empty()) << joined(messages);
  messages.clear();
  run(std::string("filesrc blocksize=1000 location=") + path + " ! " + caps +
          " ! cudadeltadec name=dec backend=cpu max-errors=3 ! fakesink",
      &messages);
  g_unlink(path);
  g_free(path);
  ASSERT_EQ(messages.size(), 2u) << joined(messages);
  EXPECT_EQ(messages[0].rfind("W dec: delta packet: ", 0), 0u) << messages[0];
  EXPECT_EQ(messages[1].rfind("E dec: delta packet: ", 0), 0u) << messages[1];
}

// ---- caps changes, restarts, flushes and seeks ----

namespace {

// What passes a pad, in order: 'K' a keyframe, 'D' a delta frame, 'F' a
// FLUSH_STOP. Filled from the streaming thread: read it once that stopped.
struct PadLog {
  std::mutex lock;
  std::string events;
  std::string take() {
    std::lock_guard<std::mutex> g(lock);
    return events;
  }
};

GstPadProbeReturn log_pad(GstPad*, GstPadProbeInfo* info, gpointer data) {
  PadLog* log = static_cast<PadLog*>(data);
  std::lock_guard<std::mutex> g(log->lock);
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER)
    log->events +=
        GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT) ? 'D'
                                                                                            : 'K';
  else if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_FLUSH_STOP)
    log->events += 'F';
  return GST_PAD_PROBE_OK;
}

// Logs what leaves the element named `name` in `bin` through "src".
void log_src_pad(GstElement* bin, const char* name, PadLog* log) {
  GstElement* e = gst_bin_get_by_name(GST_BIN(bin), name);
  ASSERT_NE(e, nullptr) << name;
  GstPad* pad = gst_element_get_static_pad(e, "src");
  gst_pad_add_probe(pad,
                    static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER |
                                                 GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM |
                                                 GST_PAD_PROBE_TYPE_EVENT_FLUSH),
                    log_pad, log, nullptr);
  gst_object_unref(pad);
  gst_object_unref(e);
}

// Pushes `clip` through the encoder-decoder harness `h` from frame `first`
// on and expects each frame back within `threshold`, at the clip's size,
// with the output caps saying so.
void expect_round_trip(GstHarness* h, const std::vector<HostImage>& clip, int first,
                       int threshold) {
  const ImageDesc desc = clip[0].desc();
  for (int n = 0; n < static_cast<int>(clip.size()); n++) {
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], first + n)), GST_FLOW_OK) << n;
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr) << "frame " << first + n;
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    GstVideoInfo info;
    ASSERT_TRUE(caps && gst_video_info_from_caps(&info, caps));
    gst_caps_unref(caps);
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), desc.width);
    EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&info), desc.height);
    EXPECT_STREQ(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
                 format_info(desc.format).name);
    HostImage got;
    ASSERT_TRUE(image_from_buffer(out, desc, &got));
    EXPECT_LE(max_abs_diff(got.view(), clip[n].view()), threshold) << "frame " << first + n;
    gst_buffer_unref(out);
  }
}

// New caps in the middle of a stream: the encoder's next frame is a
// keyframe and the decoder follows.
void expect_renegotiation(const ImageDesc& a, const ImageDesc& b) {
  GstHarness* h = gst_harness_new_parse("cudadeltaenc name=enc threshold=3 ! cudadeltadec");
  PadLog log;
  log_src_pad(h->element, "enc", &log);
  gst_harness_set_src_caps_str(h, caps_string(a).c_str());
  expect_round_trip(h, make_clip(a, 4, 31), 0, 3);
  gst_harness_set_src_caps_str(h, caps_string(b).c_str());
  expect_round_trip(h, make_clip(b, 4, 32), 4, 3);
  gst_harness_set_src_caps_str(h, caps_string(a).c_str());
  expect_round_trip(h, make_clip(a, 3, 33), 8, 3);
  EXPECT_EQ(log.take(), "KDDDKDDDKDD");
  gst_harness_teardown(h);
}

}  // namespace

TEST(DeltaCodecStream, EncoderAndDecoderFollowANewSize) {
  expect_renegotiation({PixelFormat::I420, 96, 64}, {PixelFormat::I420, 161, 93});
}

TEST(DeltaCodecStream, EncoderAndDecoderFollowANewFormat) {
  expect_renegotiation({PixelFormat::NV12, 96, 64}, {PixelFormat::RGBA, 96, 64});
}

// NULL -> PLAYING -> NULL -> PLAYING: the second run works like the first
// and starts with a keyframe.
TEST(DeltaCodecStream, SecondRunAfterAStateCycleStartsWithAKeyframe) {
  const ImageDesc desc{PixelFormat::I420, 128, 96};
  GstElement* p = gst_parse_launch(("appsrc name=src format=time caps=\"" + caps_string(desc) +
                                    "\" ! cudadeltaenc name=enc threshold=2 ! cudadeltadec ! "
                                    "appsink name=sink sync=false")
                                       .c_str(),
                                   nullptr);
  ASSERT_NE(p, nullptr);
  PadLog log;
  log_src_pad(p, "enc", &log);
  GstElement* src = gst_bin_get_by_name(GST_BIN(p), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "sink");
  for (int run = 0; run < 2; run++) {
    ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    const auto clip = make_clip(desc, 4, 40 + run);
    for (int n = 0; n < static_cast<int>(clip.size()); n++) {
      ASSERT_EQ(gst_app_src_push_buffer(GST_APP_SRC(src), timed_buffer(clip[n], n)), GST_FLOW_OK);
      // a guard: the frame comes back in milliseconds
      GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
      ASSERT_NE(s, nullptr) << "run " << run << ", frame " << n;
      HostImage got;
      EXPECT_TRUE(image_from_buffer(gst_sample_get_buffer(s), desc, &got));
      EXPECT_LE(max_abs_diff(got.view(), clip[n].view()), 2) << "run " << run << ", frame " << n;
      gst_sample_unref(s);
    }
    ASSERT_EQ(gst_element_set_state(p, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  }
  EXPECT_EQ(log.take(), "KDDDKDDD");
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(p);
}

// After a flush the encoder starts again with a keyframe.
TEST(DeltaCodecStream, EncoderSendsAKeyframeAfterAFlush) {
  const ImageDesc desc{PixelFormat::RGBA, 80, 40};
  const auto clip = make_clip(desc, 4, 42);
  GstHarness* h = gst_harness_new("cudadeltaenc");
  gst_harness_set_src_caps_str(h, caps_string(desc).c_str());
  std::string keys;
  auto push_pull = [&](int n) {
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    keys += GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DELTA_UNIT) ? 'D' : 'K';
    gst_buffer_unref(out);
  };
  push_pull(0);
  push_pull(1);
  push_flush(h);
  push_pull(2);
  push_pull(3);
  EXPECT_EQ(keys, "KDKD");
  gst_harness_teardown(h);
}

// After a flush the decoder drops its reference: a delta frame that would
// have followed is dropped and a keyframe requested; the keyframe decodes.
TEST(DeltaCodecStream, DecoderWaitsForAKeyframeAfterAFlush) {
  const ImageDesc desc{PixelFormat::NV12, 96, 64};
  const auto clip = make_clip(desc, 5, 43);
  const auto packets = encode_packets(clip, [](int n) { return n == 0 || n == 3; });
  DecoderHarness d(stream_caps(desc), 0);
  ASSERT_EQ(d.push(packets[0]), GST_FLOW_OK);
  ASSERT_EQ(d.push(packets[1]), GST_FLOW_OK);
  ASSERT_EQ(gst_harness_buffers_received(d.h), 2u);
  push_flush(d.h);
  while (GstEvent* e = gst_harness_try_pull_upstream_event(d.h))
    gst_event_unref(e);
  ASSERT_EQ(d.push(packets[2]), GST_FLOW_OK);  // the counter follows, but after a flush
  EXPECT_EQ(gst_harness_buffers_received(d.h), 2u);
  EXPECT_TRUE(keyframe_requested(d.h));
  ASSERT_EQ(d.push(packets[3]), GST_FLOW_OK);
  ASSERT_EQ(d.push(packets[4]), GST_FLOW_OK);
  EXPECT_EQ(gst_harness_buffers_received(d.h), 4u);
  const auto m = d.messages();
  EXPECT_TRUE(m.empty()) << joined(m);  // waiting is not an error
  GstBuffer* out = nullptr;
  while (GstBuffer* b = gst_harness_try_pull(d.h)) {
    if (out)
      gst_buffer_unref(out);
    out = b;
  }
  ASSERT_NE(out, nullptr);
  HostImage got;
  ASSERT_TRUE(image_from_buffer(out, desc, &got));
  EXPECT_LE(max_abs_diff(got.view(), clip[4].view()), 4);
  gst_buffer_unref(out);
}

// A flushing seek in a pipeline: the encoder's first frame after it is a
// keyframe, and the first frame out of the decoder is the seek target's,
// within the threshold of what went in.
TEST(DeltaCodecStream, SeekRestartsAtAKeyframeAndDecodes) {
  GstElement* p = gst_parse_launch(
      "videotestsrc pattern=ball ! video/x-raw,format=I420,width=128,height=96,framerate=30/1 ! "
      "cudadeltaenc name=enc threshold=3 ! cudadeltadec ! appsink name=sink sync=false "
      "max-buffers=2",
      nullptr);
  ASSERT_NE(p, nullptr);
  PadLog log;
  log_src_pad(p, "enc", &log);
  // The encoder's input, by timestamp.
  struct Inputs {
    std::mutex lock;
    std::map<GstClockTime, GstBuffer*> frames;
  } inputs;
  GstElement* enc = gst_bin_get_by_name(GST_BIN(p), "enc");
  GstPad* enc_sink = gst_element_get_static_pad(enc, "sink");
  gst_pad_add_probe(
      enc_sink, GST_PAD_PROBE_TYPE_BUFFER,
      [](GstPad*, GstPadProbeInfo* info, gpointer data) {
        Inputs* in = static_cast<Inputs*>(data);
        GstBuffer* b = GST_PAD_PROBE_INFO_BUFFER(info);
        std::lock_guard<std::mutex> g(in->lock);
        if (!in->frames.count(GST_BUFFER_PTS(b)))
          in->frames[GST_BUFFER_PTS(b)] = gst_buffer_ref(b);
        return GST_PAD_PROBE_OK;
      },
      &inputs, nullptr);
  gst_object_unref(enc_sink);
  gst_object_unref(enc);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "sink");
  const ImageDesc desc{PixelFormat::I420, 128, 96};
  auto pull_and_check = [&](GstClockTime* pts) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);  // a guard
    ASSERT_NE(s, nullptr);
    GstBuffer* out = gst_sample_get_buffer(s);
    *pts = GST_BUFFER_PTS(out);
    HostImage got, want;
    ASSERT_TRUE(image_from_buffer(out, desc, &got));
    {
      std::lock_guard<std::mutex> g(inputs.lock);
      ASSERT_TRUE(inputs.frames.count(*pts)) << *pts;
      ASSERT_TRUE(image_from_buffer(inputs.frames[*pts], desc, &want));
    }
    EXPECT_LE(max_abs_diff(got.view(), want.view()), 3) << "frame at " << *pts;
    gst_sample_unref(s);
  };
  ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  for (int n = 0; n < 5; n++) {
    pull_and_check(&pts);
    EXPECT_EQ(pts, static_cast<GstClockTime>(n * GST_SECOND / 30));
  }
  ASSERT_TRUE(gst_element_seek_simple(p, GST_FORMAT_TIME,
                                      static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH), GST_SECOND));
  for (int n = 0; n < 3; n++) {
    pull_and_check(&pts);
    EXPECT_EQ(pts, GST_SECOND + n * GST_SECOND / 30);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  const std::string events = log.take();
  const size_t flush = events.rfind('F');
  ASSERT_NE(flush, std::string::npos) << events;
  EXPECT_EQ(events.substr(flush, 2), "FK") << events;
  EXPECT_EQ(events[0], 'K') << events;
  for (auto& [t, b] : inputs.frames)
    gst_buffer_unref(b);
  gst_object_unref(sink);
  gst_object_unref(p);
}

// ---- the encoder's backends ----

namespace {

// The packets `pipeline` (ending in cudadeltaenc) makes of `clip`, pushed as
// system memory.
// `check`, when given, looks at the harness's bin once every frame went
// through.
// `late`: each packet comes that many frames after its frame (overlap), the
// last at EOS.
std::vector<std::vector<uint8_t>> encode_clip(
    const std::string& pipeline, const std::vector<HostImage>& clip,
    const std::function<void(GstElement*)>& check = nullptr, int late = 0) {
  std::vector<std::vector<uint8_t>> packets;
  GstHarness* h = gst_harness_new_parse(pipeline.c_str());
  gst_harness_set_src_caps_str(h, caps_string(clip[0].desc()).c_str());
  for (int n = 0; n < static_cast<int>(clip.size()) + late; n++) {
    if (n < static_cast<int>(clip.size())) {
      EXPECT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK) << pipeline;
    } else if (n == static_cast<int>(clip.size())) {
      EXPECT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    }
    if (n < late) {
      EXPECT_EQ(gst_harness_buffers_in_queue(h), 0u) << pipeline << ": a packet early";
      continue;
    }
    GstBuffer* out = gst_harness_pull(h);
    if (!out) {
      ADD_FAILURE() << pipeline << ": no packet for frame " << n;
      break;
    }
    GstMapInfo map;
    EXPECT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
    packets.emplace_back(map.data, map.data + map.size);
    gst_buffer_unmap(out, &map);
    gst_buffer_unref(out);
  }
  if (check)
    check(h->element);
  gst_harness_teardown(h);
  return packets;
}

// The current caps of pad `pad` of element `name` in `bin`, "" if none.
std::string current_caps(GstElement* bin, const char* name, const char* pad) {
  GstElement* e = gst_bin_get_by_name(GST_BIN(bin), name);
  if (!e)
    return "";
  GstPad* p = gst_element_get_static_pad(e, pad);
  GstCaps* caps = p ? gst_pad_get_current_caps(p) : nullptr;
  std::string text;
  if (caps) {
    gchar* c = gst_caps_to_string(caps);
    text = c;
    g_free(c);
    gst_caps_unref(caps);
  }
  if (p)
    gst_object_unref(p);
  gst_object_unref(e);
  return text;
}

// Expects memory:CUDAMemory negotiated on the link from `from`'s src pad to
// `to`'s sink pad in `bin` (both pads' current caps).
void expect_cuda_memory_between(GstElement* bin, const char* from, const char* to) {
  for (const auto& [name, pad] : {std::pair<const char*, const char*>{from, "src"}, {to, "sink"}}) {
    const std::string caps = current_caps(bin, name, pad);
    EXPECT_EQ(caps.rfind("video/x-raw(memory:CUDAMemory)", 0), 0u)
        << name << "." << pad << " negotiated \"" << caps << "\"";
  }
}

}  // namespace

class DeltaEncoderBackends : public ::testing::TestWithParam<std::tuple<PixelFormat, int>> {};

// The same frames give the same packets, byte for byte, on either backend
// (odd sizes: tiles clipped at both edges, rows not multiples of 16).
TEST_P(DeltaEncoderBackends, CudaGivesTheSameBytesAsCpu) {
  SKIP_WITHOUT_GPU();
  const auto [format, threshold] = GetParam();
  const ImageDesc desc{format, 161, 93};
  const auto clip = make_clip(desc, 12, 21);
  const std::string settings = " key-int-max=5 threshold=" + std::to_string(threshold);
  const auto cpu = encode_clip("cudadeltaenc backend=cpu" + settings, clip);
  const auto cuda = encode_clip("cudadeltaenc backend=cuda" + settings, clip);
  ASSERT_EQ(cpu.size(), clip.size());
  ASSERT_EQ(cuda.size(), clip.size());
  for (size_t n = 0; n < clip.size(); n++)
    EXPECT_TRUE(cpu[n] == cuda[n]) << "frame " << n << ": " << cpu[n].size() << " vs "
                                   << cuda[n].size() << " bytes";
}

INSTANTIATE_TEST_SUITE_P(Formats, DeltaEncoderBackends, formats_and_thresholds(0, 6),
                         format_and_threshold);

// Frames already in CUDA memory (from nvcodec's cudaupload, sharing the
// context) are encoded in place, to the same bytes; with overlap=true one
// frame late (the encoder pipelined: each frame read in place until the
// next one's submission).
TEST(DeltaEncoderMemory, CudaMemoryInputGivesTheSameBytes) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload"), "nvcodec's cudaupload is not available");
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::RGBA}) {
    const auto clip = make_clip({f, 333, 211}, 8, 22);
    const auto cpu = encode_clip("cudadeltaenc backend=cpu threshold=3", clip);
    for (const bool overlap : {false, true}) {
      const auto cuda = encode_clip(
          std::string("cudaupload name=up ! capsfilter name=cf "
                      "caps=video/x-raw(memory:CUDAMemory) ! cudadeltaenc name=enc "
                      "backend=cuda threshold=3") +
              (overlap ? " overlap=true" : ""),
          clip,
          [](GstElement* bin) {
            // the frames really came in CUDA memory
            expect_cuda_memory_between(bin, "up", "cf");
            expect_cuda_memory_between(bin, "cf", "enc");
          },
          overlap ? 1 : 0);
      ASSERT_EQ(cuda.size(), clip.size());
      for (size_t n = 0; n < clip.size(); n++)
        EXPECT_TRUE(cpu[n] == cuda[n])
            << format_info(f).name << (overlap ? " overlap" : "") << " frame " << n;
    }
  }
}

// A buffer whose GstVideoMeta puts a plane past the buffer's end is refused
// with an error naming the cause (never read out of bounds), on either
// backend.
TEST(DeltaEncoderMemory, PlanePastTheBufferEndIsAnErrorNamingIt) {
  for (const bool cuda : {false, true}) {
    if (cuda && !gpu_part_runs())
      continue;
    GstHarness* h = gst_harness_new_parse(cuda ? "cudadeltaenc backend=cuda"
                                               : "cudadeltaenc backend=cpu");
    GstBus* bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    gst_harness_set_src_caps_str(h, caps_string({PixelFormat::I420, 64, 48}).c_str());
    // I420 64x48 is 4608 bytes: Y 64x48 at 0, U 32x24 at 3072, V 32x24 at
    // 3840; the meta puts V at 3900, so it would end at 4668.
    GstBuffer* b = gst_buffer_new_allocate(nullptr, 4608, nullptr);
    gst_buffer_memset(b, 0, 0x80, 4608);
    gsize offset[GST_VIDEO_MAX_PLANES] = {0, 3072, 3900, 0};
    gint stride[GST_VIDEO_MAX_PLANES] = {64, 32, 32, 0};
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420, 64, 48,
                                   3, offset, stride);
    GST_BUFFER_PTS(b) = 0;
    EXPECT_EQ(gst_harness_push(h, b), GST_FLOW_ERROR) << (cuda ? "cuda" : "cpu");
    EXPECT_EQ(gst_harness_buffers_received(h), 0u);
    GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    ASSERT_NE(m, nullptr) << (cuda ? "cuda" : "cpu");
    GError* err = nullptr;
    gst_message_parse_error(m, &err, nullptr);
    EXPECT_STREQ(err->message,
                 "video meta plane 2 ends at byte 4668, past the end of the 4608-byte buffer");
    g_error_free(err);
    gst_message_unref(m);
    gst_harness_teardown(h);
    gst_bus_set_flushing(bus, TRUE);
    gst_object_unref(bus);
  }
}

// Upstream is offered pinned memory on the CUDA backend (its frames are
// copied to the device), a plain video pool on the CPU backend.
TEST(DeltaEncoderMemory, ProposesPinnedMemoryOnTheCudaBackend) {
  const ImageDesc desc{PixelFormat::I420, 320, 240};
  for (const bool cuda : {false, true}) {
    if (cuda && !gpu_part_runs())
      continue;
    GstHarness* h = gst_harness_new_parse(cuda ? "cudadeltaenc backend=cuda"
                                               : "cudadeltaenc backend=cpu");
    gst_harness_set_src_caps_str(h, caps_string(desc).c_str());
    GstCaps* caps = gst_caps_from_string(caps_string(desc).c_str());
    GstQuery* q = gst_query_new_allocation(caps, TRUE);
    ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q));
    EXPECT_TRUE(gst_query_find_allocation_meta(q, GST_VIDEO_META_API_TYPE, nullptr));
    ASSERT_GE(gst_query_get_n_allocation_pools(q), 1u);
    GstBufferPool* pool = nullptr;
    gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
    ASSERT_NE(pool, nullptr);
    GstStructure* config = gst_buffer_pool_get_config(pool);
    GstAllocator* alloc = nullptr;
    gst_buffer_pool_config_get_allocator(config, &alloc, nullptr);
    const std::string type = alloc ? alloc->mem_type : "";
    EXPECT_EQ(type == "CudaFxPinnedMemory", cuda) << type;
    gst_structure_free(config);
    gst_object_unref(pool);
    gst_query_unref(q);
    gst_caps_unref(caps);
    gst_harness_teardown(h);
  }
}

// Once the CPU backend is chosen, the sink no longer offers CUDA memory.
TEST(DeltaEncoderMemory, CpuBackendOffersSystemMemoryOnly) {
  GstHarness* h = gst_harness_new_parse("cudadeltaenc backend=cpu");
  gst_harness_play(h);
  GstCaps* caps = gst_pad_peer_query_caps(h->srcpad, nullptr);
  ASSERT_NE(caps, nullptr);
  EXPECT_FALSE(gst_caps_is_empty(caps));
  for (guint i = 0; i < gst_caps_get_size(caps); i++) {
    GstCapsFeatures* f = gst_caps_get_features(caps, i);
    EXPECT_FALSE(f && gst_caps_features_contains(f, "memory:CUDAMemory"))
        << gst_caps_to_string(caps);
  }
  gst_caps_unref(caps);
  gst_harness_teardown(h);
}

TEST(DeltaEncoderMemory, CudaBackendWithoutDeviceFailsWithClearError) {
  std::string why;
  if (gpu_available(&why))
    GTEST_SKIP() << "a CUDA device is present";
  const std::string text = start_error(
      "videotestsrc num-buffers=2 ! video/x-raw,format=I420 ! cudadeltaenc backend=cuda ! "
      "fakesink");
  EXPECT_EQ(text.rfind("backend=cuda but no usable CUDA device: ", 0), 0u) << text;
}

// ---- the decoder's backends ----

namespace {

// The frames `pipeline` (starting with cudadeltadec) outputs for `packets`,
// in system memory; null images for packets that gave none.
// `check`, when given, looks at the harness's bin once every packet went
// through.
std::vector<HostImage> decode_stream(const std::string& pipeline, const ImageDesc& desc,
                                     const std::vector<std::vector<uint8_t>>& packets,
                                     std::string* memory_type = nullptr,
                                     const std::function<void(GstElement*)>& check = nullptr) {
  std::vector<HostImage> frames;
  GstHarness* h = gst_harness_new_parse(pipeline.c_str());
  gst_harness_set_caps_str(h, stream_caps(desc).c_str(), caps_string(desc).c_str());
  for (size_t n = 0; n < packets.size(); n++) {
    GstBuffer* b = gst_buffer_new_memdup(packets[n].data(), packets[n].size());
    GST_BUFFER_PTS(b) = n * GST_SECOND / 30;
    EXPECT_EQ(gst_harness_push(h, b), GST_FLOW_OK) << pipeline << " packet " << n;
    HostImage img;
    if (GstBuffer* out = gst_harness_try_pull(h)) {
      EXPECT_TRUE(image_from_buffer(out, desc, &img));
      if (memory_type)
        *memory_type = gst_buffer_peek_memory(out, 0)->allocator->mem_type;
      gst_buffer_unref(out);
    }
    frames.push_back(std::move(img));
  }
  if (check)
    check(h->element);
  gst_harness_teardown(h);
  return frames;
}

void expect_same_frames(const std::vector<HostImage>& a, const std::vector<HostImage>& b) {
  ASSERT_EQ(a.size(), b.size());
  int frames = 0;
  for (size_t n = 0; n < a.size(); n++) {
    const bool fa = a[n].desc().width > 0, fb = b[n].desc().width > 0;
    ASSERT_EQ(fa, fb) << "packet " << n;
    if (!fa)
      continue;
    frames++;
    EXPECT_TRUE(bytes_equal(a[n].view(), b[n].view())) << "packet " << n;
  }
  EXPECT_EQ(frames, 9);  // 12 packets: 7 truncated, 8 and 9 wait for 10
}

}  // namespace

class DeltaDecoderBackends : public ::testing::TestWithParam<std::tuple<PixelFormat, int>> {};

// Both backends output the same frames and drop the same ones.
TEST_P(DeltaDecoderBackends, CudaDecodesToTheSameFramesAsCpu) {
  SKIP_WITHOUT_GPU();
  const auto [format, threshold] = GetParam();
  const ImageDesc desc{format, 161, 93};
  const auto packets = damaged_delta_stream(make_clip(desc, 12, 23), threshold);
  const auto cpu = decode_stream("cudadeltadec backend=cpu", desc, packets);
  std::string type;
  const auto cuda = decode_stream("cudadeltadec backend=cuda", desc, packets, &type);
  expect_same_frames(cpu, cuda);
  // Allocated by the decoder: pinned, so the download runs at full speed.
  EXPECT_EQ(type, "CudaFxPinnedMemory");
}

INSTANTIATE_TEST_SUITE_P(Formats, DeltaDecoderBackends, formats_and_thresholds(0, 6),
                         format_and_threshold);

// With CUDA memory downstream (cudadownload), frames leave the decoder in
// CUDA memory and are the same.
TEST(DeltaDecoderMemory, CudaMemoryOutGivesTheSameFrames) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudadownload"), "nvcodec's cudadownload is not available");
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::RGBA}) {
    const ImageDesc desc{f, 333, 211};
    const auto packets = damaged_delta_stream(make_clip(desc, 12, 24), 3);
    const auto cpu = decode_stream("cudadeltadec backend=cpu", desc, packets);
    const auto cuda = decode_stream("cudadeltadec name=dec backend=cuda ! cudadownload name=down",
                                    desc, packets, nullptr, [](GstElement* bin) {
                                      expect_cuda_memory_between(bin, "dec", "down");
                                    });
    expect_same_frames(cpu, cuda);
  }
}

TEST(DeltaDecoderMemory, CudaBackendWithoutDeviceFailsWithClearError) {
  std::string why;
  if (gpu_available(&why))
    GTEST_SKIP() << "a CUDA device is present";
  const std::string text = start_error(
      "videotestsrc num-buffers=2 ! video/x-raw,format=I420 ! cudadeltaenc backend=cpu ! "
      "cudadeltadec backend=cuda ! fakesink");
  EXPECT_EQ(text.rfind("backend=cuda but no usable CUDA device: ", 0), 0u) << text;
}

// backend=auto (the default) without a usable device: both elements run on
// the CPU and say so, once each, with a warning naming the cause.
TEST(DeltaCodecBackend, AutoWithoutDeviceWarnsAndRunsOnTheCpu) {
  if (gpu_available())
    GTEST_SKIP() << "a CUDA device is present: nothing to fall back from";
  GstElement* p = gst_parse_launch(
      "videotestsrc num-buffers=3 ! video/x-raw,format=I420,width=64,height=48 ! "
      "cudadeltaenc name=enc ! cudadeltadec name=dec ! fakesink",
      nullptr);
  ASSERT_NE(p, nullptr);
  GstBus* bus = gst_element_get_bus(p);
  gst_element_set_state(p, GST_STATE_PLAYING);
  std::map<std::string, std::vector<std::string>> warnings;
  for (;;) {
    GstMessage* m = gst_bus_timed_pop_filtered(
        bus, 10 * GST_SECOND,  // a guard: the pipeline takes milliseconds
        static_cast<GstMessageType>(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    ASSERT_NE(m, nullptr) << "neither EOS nor an error";
    const GstMessageType type = GST_MESSAGE_TYPE(m);
    if (type == GST_MESSAGE_WARNING) {
      GError* err = nullptr;
      gst_message_parse_warning(m, &err, nullptr);
      warnings[GST_OBJECT_NAME(GST_MESSAGE_SRC(m))].push_back(err->message);
      g_error_free(err);
    }
    EXPECT_NE(type, GST_MESSAGE_ERROR);
    gst_message_unref(m);
    if (type != GST_MESSAGE_WARNING)
      break;
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(p);
  EXPECT_EQ(warnings.size(), 2u);
  for (const char* name : {"enc", "dec"}) {
    ASSERT_EQ(warnings[name].size(), 1u) << name;
    EXPECT_EQ(warnings[name][0].rfind("No usable CUDA device, running on the CPU: ", 0), 0u)
        << name << ": " << warnings[name][0];
  }
}

// ---- over RTP/UDP on 127.0.0.1 ----

namespace {

struct UdpLink {
  GstElement* sender = nullptr;
  GstElement* receiver = nullptr;
  GstElement* src = nullptr;   // appsrc
  GstElement* sink = nullptr;  // appsink
  std::atomic<int> packets{0};
  int drop_from = -1, drop_to = -1;  // RTP packets [from, to) are lost
  std::atomic<int> keyframes{0};     // encoded by the sender(s)
  delta_receiver::Ports ports;       // through rtpbin: RTP, RTCP and RTCP back
};

// Counts RTP packets on their way to udpsink and loses the chosen ones;
// rtpgstpay sends buffer lists, so lists are thinned packet by packet.
GstPadProbeReturn maybe_drop(GstPad*, GstPadProbeInfo* info, gpointer data) {
  UdpLink* link = static_cast<UdpLink*>(data);
  auto lost = [link] {
    const int n = link->packets++;
    return n >= link->drop_from && n < link->drop_to;
  };
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER)
    return lost() ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
  GstBufferList* list = gst_buffer_list_make_writable(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
  GST_PAD_PROBE_INFO_DATA(info) = list;
  for (guint i = 0; i < gst_buffer_list_length(list);) {
    if (lost())
      gst_buffer_list_remove(list, i, 1);
    else
      i++;
  }
  return gst_buffer_list_length(list) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP;
}

// Puts maybe_drop on the sender's RTP udpsink (named "udp").
void watch_rtp_packets(UdpLink* link) {
  GstElement* usink = gst_bin_get_by_name(GST_BIN(link->sender), "udp");
  GstPad* pad = gst_element_get_static_pad(usink, "sink");
  gst_pad_add_probe(
      pad, static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
      maybe_drop, link, nullptr);
  gst_object_unref(pad);
  gst_object_unref(usink);
}

// Builds receiver and sender; the receiver's socket picks a free port.
// `network`: elements between the payloader and udpsink (e.g. netsim), or "".
bool open_link(UdpLink* link, const ImageDesc& desc, int threshold, int key_int_max,
               const std::string& network = "") {
  link->receiver = gst_parse_launch(
      "udpsrc name=udp port=0 address=127.0.0.1 buffer-size=8388608 "
      "caps=\"application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST\" "
      "! rtpgstdepay ! cudadeltadec ! appsink name=sink sync=false max-buffers=1000",
      nullptr);
  if (!link->receiver)
    return false;
  gst_element_set_state(link->receiver, GST_STATE_PLAYING);
  GstElement* udp = gst_bin_get_by_name(GST_BIN(link->receiver), "udp");
  gint port = 0;
  g_object_get(udp, "port", &port, nullptr);
  gst_object_unref(udp);
  link->sink = gst_bin_get_by_name(GST_BIN(link->receiver), "sink");
  const std::string sender =
      "appsrc name=src format=time caps=\"" + caps_string(desc) +
      "\" ! cudadeltaenc threshold=" + std::to_string(threshold) +
      " key-int-max=" + std::to_string(key_int_max) +
      " ! rtpgstpay config-interval=1 mtu=1400 ! " + (network.empty() ? "" : network + " ! ") +
      "udpsink name=udp host=127.0.0.1 port=" + std::to_string(port) + " sync=false";
  link->sender = gst_parse_launch(sender.c_str(), nullptr);
  if (!link->sender || port == 0)
    return false;
  link->src = gst_bin_get_by_name(GST_BIN(link->sender), "src");
  watch_rtp_packets(link);
  gst_element_set_state(link->sender, GST_STATE_PLAYING);
  return true;
}

// A UDP port on 127.0.0.1 that is free now.
int free_udp_port() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

GstPadProbeReturn count_keyframe(GstPad*, GstPadProbeInfo* info, gpointer data) {
  if (!GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT))
    static_cast<UdpLink*>(data)->keyframes++;
  return GST_PAD_PROBE_OK;
}

// The sender of examples/delta-sender.sh (rtpbin, AVPF, RTCP both ways)
// with an appsrc, on the link's ports; started. The encoder makes keyframes
// only on request (key-int-max=0). A new one is a new RTP stream (SSRC).
bool start_rtpbin_sender(UdpLink* link, const ImageDesc& desc, int threshold) {
  const std::string sender =
      "rtpbin name=rtp rtp-profile=avpf "
      "appsrc name=src format=time caps=\"" + caps_string(desc) +
      "\" ! cudadeltaenc name=enc key-int-max=0 threshold=" + std::to_string(threshold) +
      " ! rtpgstpay config-interval=1 mtu=1400 ! rtp.send_rtp_sink_0 "
      "rtp.send_rtp_src_0 ! udpsink name=udp host=127.0.0.1 port=" +
      std::to_string(link->ports.rtp) + " sync=false rtp.send_rtcp_src_0 ! udpsink "
      "host=127.0.0.1 port=" + std::to_string(link->ports.rtcp) +
      " sync=false async=false udpsrc address=127.0.0.1 port=" +
      std::to_string(link->ports.rtcp_back) + " ! rtp.recv_rtcp_sink_0";
  link->sender = gst_parse_launch(sender.c_str(), nullptr);
  if (!link->sender)
    return false;
  link->src = gst_bin_get_by_name(GST_BIN(link->sender), "src");
  watch_rtp_packets(link);
  GstElement* enc = gst_bin_get_by_name(GST_BIN(link->sender), "enc");
  GstPad* pad = gst_element_get_static_pad(enc, "src");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_keyframe, link, nullptr);
  gst_object_unref(pad);
  gst_object_unref(enc);
  return gst_element_set_state(link->sender, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
}

void stop_sender(UdpLink* link) {
  gst_element_set_state(link->sender, GST_STATE_NULL);
  gst_object_unref(link->src);
  gst_object_unref(link->sender);
  link->src = link->sender = nullptr;
}

// Both ends through rtpbin with the AVPF profile and RTCP both ways, so that
// the decoder's keyframe requests travel back to the encoder as RTCP PLI:
// the receiver is examples/delta_receiver's pipeline (delta_receiver.hpp).
bool open_rtpbin_link(UdpLink* link, const ImageDesc& desc, int threshold) {
  link->ports.rtp = free_udp_port();
  link->ports.rtcp = free_udp_port();
  link->ports.rtcp_back = free_udp_port();
  if (!link->ports.rtp || !link->ports.rtcp || !link->ports.rtcp_back)
    return false;
  GError* err = nullptr;
  link->receiver = delta_receiver::make_pipeline(
      "127.0.0.1", link->ports, "appsink name=sink sync=false max-buffers=1000", "127.0.0.1",
      &err);
  EXPECT_NE(link->receiver, nullptr) << (err ? err->message : "");
  if (err)
    g_error_free(err);
  if (!link->receiver)
    return false;
  link->sink = gst_bin_get_by_name(GST_BIN(link->receiver), "sink");
  gst_element_set_state(link->receiver, GST_STATE_PLAYING);
  return start_rtpbin_sender(link, desc, threshold);
}

void close_link(UdpLink* link) {
  for (GstElement* p : {link->sender, link->receiver})
    if (p)
      gst_element_set_state(p, GST_STATE_NULL);
  for (GstElement* e : {link->src, link->sink, link->sender, link->receiver})
    if (e)
      gst_object_unref(e);
}

// Sends the clip frame by frame and collects, by clip index, the frames the
// receiver outputs. After each frame it waits until that frame arrives, or
// for a bounded time when it does not (a lost packet); a frame that arrives
// late is still counted where it belongs.
std::map<int, HostImage> run_link(UdpLink* link, const std::vector<HostImage>& clip,
                                  const ImageDesc& desc,
                                  const std::function<void(int)>& before_frame = nullptr,
                                  int fps = 30) {
  std::map<int, HostImage> got;
  auto pull = [&](int n, GstClockTime timeout) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(link->sink), timeout);
    if (!s)
      return -1;
    HostImage img;
    EXPECT_TRUE(image_from_buffer(gst_sample_get_buffer(s), desc, &img));
    gst_sample_unref(s);
    // The newest possible frame carrying this index (frames are never 16 late).
    const int index = n - ((n - clip_index_mod16(img.view())) % 16 + 16) % 16;
    EXPECT_EQ(got.count(index), 0u) << "frame " << index << " received twice";
    got.emplace(index, std::move(img));
    return index;
  };
  for (int n = 0; n < static_cast<int>(clip.size()); n++) {
    if (before_frame)
      before_frame(n);
    EXPECT_EQ(gst_app_src_push_buffer(GST_APP_SRC(link->src), timed_buffer(clip[n], n, fps)),
              GST_FLOW_OK);
    for (;;) {
      const int index = pull(n, GST_SECOND / 2);
      if (index < 0 || index == n)
        break;
    }
  }
  while (pull(static_cast<int>(clip.size()) - 1, GST_SECOND) >= 0) {
  }
  return got;
}

}  // namespace

TEST(DeltaOverUdp, CleanPathDeliversEveryFrameWithinThreshold) {
  const ImageDesc desc{PixelFormat::I420, 320, 240};
  const auto clip = make_clip(desc, 30, 12, true);
  for (int threshold : {0, 4}) {
    UdpLink link;
    ASSERT_TRUE(open_link(&link, desc, threshold, 0));
    const auto got = run_link(&link, clip, desc);
    EXPECT_EQ(got.size(), clip.size());
    for (const auto& [n, img] : got)
      EXPECT_LE(max_abs_diff(img.view(), clip[n].view()), threshold) << "frame " << n;
    close_link(&link);
  }
}

TEST(DeltaOverUdp, LostPacketsNeverGiveWrongFramesAndTheStreamRecovers) {
  const ImageDesc desc{PixelFormat::NV12, 320, 240};
  const auto clip = make_clip(desc, 40, 13, true);
  const int key_int_max = 8;
  UdpLink link;
  // The keyframe is about 60 packets, each delta a few: lose a handful in
  // the middle of the clip.
  link.drop_from = 100;
  link.drop_to = 106;
  ASSERT_TRUE(open_link(&link, desc, 4, key_int_max));
  const auto got = run_link(&link, clip, desc);
  for (const auto& [n, img] : got)
    EXPECT_LE(max_abs_diff(img.view(), clip[n].view()), 4) << "frame " << n;
  EXPECT_LT(got.size(), clip.size()) << "no frame was lost: the drop window missed";
  // Back in sync within one keyframe interval after the loss, for good.
  int first_missing = -1, last_missing = -1;
  for (int n = 0; n < static_cast<int>(clip.size()); n++) {
    if (!got.count(n)) {
      if (first_missing < 0)
        first_missing = n;
      last_missing = n;
    }
  }
  ASSERT_GE(first_missing, 0);
  EXPECT_LE(last_missing - first_missing, key_int_max) << "recovery took too long";
  close_link(&link);
}

// Random loss, delay and reordering from netsim (gst-plugins-bad) between
// payloader and socket for the first frames, then a clean network: never a
// frame outside the threshold, and every frame once both what the receiver
// needs has come again after the loss stopped: a keyframe (every
// key-int-max frames) and rtpgstpay's stream config (caps, every
// config-interval = 1 s, which it may have lost too). At 5 frames/s that
// is at most 6 + 5 frames.
TEST(DeltaOverUdp, RandomLossAndReorderingThenRecovery) {
  if (!have_element("netsim"))
    GTEST_SKIP() << "netsim (gst-plugins-bad) is not available";
  const ImageDesc desc{PixelFormat::I420, 320, 240};
  const auto clip = make_clip(desc, 40, 15, true);
  const int key_int_max = 6, fps = 5, lossy_frames = 10;
  UdpLink link;
  ASSERT_TRUE(open_link(&link, desc, 4, key_int_max,
                        "netsim name=net drop-probability=0.1 delay-probability=0.2 "
                        "min-delay=1 max-delay=4 allow-reordering=true"));
  GstElement* net = gst_bin_get_by_name(GST_BIN(link.sender), "net");
  ASSERT_NE(net, nullptr);
  const auto got = run_link(
      &link, clip, desc,
      [&](int n) {
        if (n == lossy_frames)
          g_object_set(net, "drop-probability", 0.0f, "delay-probability", 0.0f, nullptr);
      },
      fps);
  gst_object_unref(net);
  for (const auto& [n, img] : got)
    EXPECT_LE(max_abs_diff(img.view(), clip[n].view()), 4) << "frame " << n;
  int lost = 0;
  for (int n = 0; n < lossy_frames; n++)
    lost += got.count(n) == 0;
  // A tenth of the lossy frames' 100-odd packets (60 for each keyframe)
  // dropped: none lost is a chance of about 1 in 30 000.
  EXPECT_GT(lost, 0) << "netsim lost nothing";
  std::string received;
  for (const auto& [n, img] : got)
    received += std::to_string(n) + " ";
  SCOPED_TRACE("received: " + received);
  for (int n = lossy_frames + key_int_max + fps; n < static_cast<int>(clip.size()); n++)
    EXPECT_TRUE(got.count(n)) << "frame " << n << " missing after the loss stopped";
  close_link(&link);
}

TEST(DeltaOverRtpbin, LossIsRepairedByAKeyframeRequestedThroughRtcpPli) {
  const ImageDesc desc{PixelFormat::I420, 320, 240};
  const auto clip = make_clip(desc, 40, 14, true);
  UdpLink link;
  link.drop_from = 100;  // a few packets in the middle (the keyframe is ~60)
  link.drop_to = 104;
  ASSERT_TRUE(open_rtpbin_link(&link, desc, 4));
  const auto got = run_link(&link, clip, desc);
  for (const auto& [n, img] : got)
    EXPECT_LE(max_abs_diff(img.view(), clip[n].view()), 4) << "frame " << n;
  int first_missing = -1;
  for (int n = 0; n < static_cast<int>(clip.size()); n++)
    if (!got.count(n) && first_missing < 0)
      first_missing = n;
  ASSERT_GE(first_missing, 0) << "no frame was lost: the drop window missed";
  // key-int-max=0: only a PLI can have made the encoder send a second
  // keyframe, and only that keyframe can have brought the frames after the
  // loss back.
  EXPECT_GE(link.keyframes.load(), 2);
  EXPECT_TRUE(got.count(static_cast<int>(clip.size()) - 1)) << "the stream never recovered";
  close_link(&link);
}

// The sender stops and a new one (a new RTP stream, SSRC) starts on the same
// ports: examples/delta_receiver links the new stream in place of the old
// and goes on producing frames within the threshold (a gst-launch receiver
// stops with not-linked).
TEST(DeltaOverRtpbin, ReceiverFollowsARestartedSender) {
  const ImageDesc desc{PixelFormat::I420, 320, 240};
  const auto clip = make_clip(desc, 40, 16, true);
  const int restart = 20;
  UdpLink link;
  ASSERT_TRUE(open_rtpbin_link(&link, desc, 4));
  const auto got = run_link(&link, clip, desc, [&](int n) {
    if (n != restart)
      return;
    stop_sender(&link);
    ASSERT_TRUE(start_rtpbin_sender(&link, desc, 4));
  });
  for (const auto& [n, img] : got)
    EXPECT_LE(max_abs_diff(img.view(), clip[n].view()), 4) << "frame " << n;
  std::string missing;
  for (int n = 0; n < static_cast<int>(clip.size()); n++)
    if (!got.count(n))
      missing += std::to_string(n) + " ";
  // Loopback loses nothing: every frame of both senders, the second's from
  // its first, a keyframe.
  EXPECT_EQ(missing, "") << "frames missing";
  EXPECT_EQ(delta_receiver::ssrc_pads(link.receiver), 2);
  EXPECT_GE(link.keyframes.load(), 2);
  GstMessage* error = gst_bus_pop_filtered(GST_ELEMENT_BUS(link.receiver), GST_MESSAGE_ERROR);
  EXPECT_EQ(error, nullptr) << "the receiver posted an error";
  if (error)
    gst_message_unref(error);
  close_link(&link);
}
