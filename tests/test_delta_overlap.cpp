// cudadeltaenc / cudadeltadec with overlap=true (gst/gstcudafxcodecoverlap.h):
// on the CUDA backend with system memory, a frame's upload runs beside the
// previous frame's encoding and a frame's download beside the next frame's
// decoding, one frame late. The streams must be the ones the elements give
// without overlap, byte for byte, with the same timestamps; the frame kept
// back goes out at EOS and new caps and is dropped by a flush; the latency
// query says one frame. Elsewhere (CPU backend) the setting changes nothing.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cudafx/delta.hpp"
#include "support/clip.hpp"
#include "support/delta_streams.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

constexpr GstClockTime kFrame = GST_SECOND / 30;

struct Packet {
  std::vector<uint8_t> bytes;
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  bool delta = false;
};

// Everything the harness has output so far.
std::vector<Packet> pull_packets(GstHarness* h) {
  std::vector<Packet> out;
  while (GstBuffer* b = gst_harness_try_pull(h)) {
    Packet p;
    GstMapInfo map;
    EXPECT_TRUE(gst_buffer_map(b, &map, GST_MAP_READ));
    p.bytes.assign(map.data, map.data + map.size);
    gst_buffer_unmap(b, &map);
    p.pts = GST_BUFFER_PTS(b);
    p.delta = GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT);
    gst_buffer_unref(b);
    out.push_back(std::move(p));
  }
  return out;
}

struct Frame {
  HostImage image;
  GstClockTime pts = GST_CLOCK_TIME_NONE;
};

std::vector<Frame> pull_frames(GstHarness* h, const ImageDesc& desc) {
  std::vector<Frame> out;
  while (GstBuffer* b = gst_harness_try_pull(h)) {
    Frame f;
    EXPECT_TRUE(image_from_buffer(b, desc, &f.image));
    f.pts = GST_BUFFER_PTS(b);
    gst_buffer_unref(b);
    out.push_back(std::move(f));
  }
  return out;
}

// The encoder's packets for `clip` without overlap (CPU backend: the bytes
// of every backend).
std::vector<Packet> reference_packets(const std::vector<HostImage>& clip,
                                      const std::string& settings) {
  GstHarness* h = gst_harness_new_parse(("cudadeltaenc backend=cpu " + settings).c_str());
  gst_harness_set_src_caps_str(h, caps_string(clip[0].desc()).c_str());
  std::vector<Packet> out;
  for (size_t n = 0; n < clip.size(); n++) {
    EXPECT_EQ(gst_harness_push(h, timed_buffer(clip[n], static_cast<int>(n))), GST_FLOW_OK);
    for (Packet& p : pull_packets(h))
      out.push_back(std::move(p));
  }
  gst_harness_teardown(h);
  return out;
}

void expect_same_packet(const Packet& got, const Packet& want, size_t n) {
  EXPECT_TRUE(got.bytes == want.bytes) << "packet " << n << ": " << got.bytes.size() << " vs "
                                       << want.bytes.size() << " bytes";
  EXPECT_EQ(got.pts, want.pts) << "packet " << n;
  EXPECT_EQ(got.delta, want.delta) << "packet " << n;
}

GstBuffer* packet_buffer(const std::vector<uint8_t>& p, size_t n) {
  GstBuffer* b = gst_buffer_new_memdup(p.data(), p.size());
  GST_BUFFER_PTS(b) = n * kFrame;
  GST_BUFFER_DURATION(b) = kFrame;
  return b;
}

// The decoder's frames for `packets` without overlap (CPU backend), in order.
std::vector<Frame> reference_frames(const ImageDesc& desc,
                                    const std::vector<std::vector<uint8_t>>& packets) {
  GstHarness* h = gst_harness_new_parse("cudadeltadec backend=cpu");
  gst_harness_set_caps_str(h, stream_caps(desc).c_str(), caps_string(desc).c_str());
  std::vector<Frame> out;
  for (size_t n = 0; n < packets.size(); n++) {
    EXPECT_EQ(gst_harness_push(h, packet_buffer(packets[n], n)), GST_FLOW_OK);
    for (Frame& f : pull_frames(h, desc))
      out.push_back(std::move(f));
  }
  gst_harness_teardown(h);
  return out;
}

void expect_same_frame(const Frame& got, const Frame& want, size_t n) {
  EXPECT_TRUE(bytes_equal(got.image.view(), want.image.view())) << "frame " << n;
  EXPECT_EQ(got.pts, want.pts) << "frame " << n;
}

}  // namespace

// Each packet comes one frame late, the last at EOS, the same bytes,
// timestamps and keyframes as without overlap; the latency query says so.
TEST(DeltaEncoderOverlap, SamePacketsOneFrameLate) {
  SKIP_WITHOUT_GPU();
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12, PixelFormat::I420}) {
    SCOPED_TRACE(format_info(f).name);
    const auto clip = make_clip({f, 333, 211}, 10, 31);
    const std::string settings = "key-int-max=4 threshold=3";
    const auto want = reference_packets(clip, settings);
    ASSERT_EQ(want.size(), clip.size());
    GstHarness* h =
        gst_harness_new_parse(("cudadeltaenc backend=cuda overlap=true " + settings).c_str());
    gst_harness_set_src_caps_str(h, caps_string(clip[0].desc()).c_str());
    std::vector<Packet> got;
    for (size_t n = 0; n < clip.size(); n++) {
      ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], static_cast<int>(n))), GST_FLOW_OK);
      auto out = pull_packets(h);
      ASSERT_EQ(out.size(), n == 0 ? 0u : 1u) << "after frame " << n;
      for (Packet& p : out)
        got.push_back(std::move(p));
      if (n == 0) {
        EXPECT_EQ(gst_harness_query_latency(h), kFrame);
      }
    }
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    for (Packet& p : pull_packets(h))
      got.push_back(std::move(p));
    ASSERT_EQ(got.size(), want.size());
    for (size_t n = 0; n < got.size(); n++)
      expect_same_packet(got[n], want[n], n);
    gst_harness_teardown(h);
  }
}

// New caps: the frame kept back is encoded at the old size first; then the
// stream goes on as without overlap (a keyframe at the new size).
TEST(DeltaEncoderOverlap, NewCapsEncodeTheFrameKeptBackFirst) {
  SKIP_WITHOUT_GPU();
  const auto a = make_clip({PixelFormat::RGBA, 200, 120}, 4, 32);
  const auto b = make_clip({PixelFormat::RGBA, 96, 64}, 3, 33);
  auto run = [&](const std::string& element) {
    GstHarness* h = gst_harness_new_parse((element + " threshold=2").c_str());
    gst_harness_set_src_caps_str(h, caps_string(a[0].desc()).c_str());
    std::vector<Packet> got;
    int n = 0;
    for (const auto& img : a)
      EXPECT_EQ(gst_harness_push(h, timed_buffer(img, n++)), GST_FLOW_OK);
    gst_harness_set_src_caps_str(h, caps_string(b[0].desc()).c_str());
    for (const auto& img : b)
      EXPECT_EQ(gst_harness_push(h, timed_buffer(img, n++)), GST_FLOW_OK);
    EXPECT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    got = pull_packets(h);
    gst_harness_teardown(h);
    return got;
  };
  const auto want = run("cudadeltaenc backend=cpu");
  const auto got = run("cudadeltaenc backend=cuda overlap=true");
  ASSERT_EQ(want.size(), a.size() + b.size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t n = 0; n < got.size(); n++)
    expect_same_packet(got[n], want[n], n);
  EXPECT_FALSE(got[a.size()].delta);  // the first at the new size is a keyframe
}

// compression=predictive pipelines the encoder (a frame's coding beside
// the next frame's prediction), the others upload ahead: a stream that
// switches between them while PLAYING (each switch a new bitstream version
// and a keyframe) gives the packets it gives without overlap, the frame in
// flight at each switch out first. key-int-max counts across the switches.
TEST(DeltaEncoderOverlap, CompressionSwitchesGiveTheSamePackets) {
  SKIP_WITHOUT_GPU();
  const auto clip = make_clip({PixelFormat::NV12, 200, 120}, 14, 36);
  const char* order[] = {"predictive", "predictive", "predictive", "predictive", "rans",
                         "rans",       "zstd",       "predictive", "predictive", "predictive",
                         "predictive", "predictive", "rans",       "predictive"};
  auto run = [&](const std::string& element) {
    GstHarness* h = gst_harness_new_parse((element + " threshold=3 key-int-max=5").c_str());
    gst_harness_set_src_caps_str(h, caps_string(clip[0].desc()).c_str());
    GstElement* enc = gst_harness_find_element(h, "cudadeltaenc");
    for (size_t n = 0; n < clip.size(); n++) {
      gst_util_set_object_arg(G_OBJECT(enc), "compression", order[n]);
      EXPECT_EQ(gst_harness_push(h, timed_buffer(clip[n], static_cast<int>(n))), GST_FLOW_OK);
    }
    gst_object_unref(enc);
    EXPECT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    const auto got = pull_packets(h);
    gst_harness_teardown(h);
    return got;
  };
  const auto want = run("cudadeltaenc backend=cpu");
  const auto got = run("cudadeltaenc backend=cuda overlap=true");
  ASSERT_EQ(want.size(), clip.size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t n = 0; n < got.size(); n++)
    expect_same_packet(got[n], want[n], n);
  // Keyframes: the first, every switch of version, and key-int-max between.
  for (size_t n : {0u, 4u, 7u, 12u, 13u})
    EXPECT_FALSE(want[n].delta) << "packet " << n;
}

// A flush drops the frame kept back (it never comes out); the next frame is
// a keyframe, and what follows decodes within the threshold.
TEST(DeltaEncoderOverlap, FlushDropsTheFrameKeptBack) {
  SKIP_WITHOUT_GPU();
  const ImageDesc desc{PixelFormat::NV12, 160, 96};
  const auto clip = make_clip(desc, 6, 34);
  GstHarness* h = gst_harness_new_parse("cudadeltaenc backend=cuda overlap=true threshold=2");
  gst_harness_set_src_caps_str(h, caps_string(desc).c_str());
  for (int n = 0; n < 4; n++)
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
  EXPECT_EQ(pull_packets(h).size(), 3u);  // frame 3 kept back
  push_flush(h);
  for (int n = 4; n < 6; n++)
    ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  const auto after = pull_packets(h);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].pts, 4 * GST_SECOND / 30);  // timed_buffer's stamp of frame 4
  EXPECT_FALSE(after[0].delta);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  for (size_t i = 0; i < after.size(); i++) {
    std::string why;
    ASSERT_EQ(dec->decode(after[i].bytes.data(), after[i].bytes.size(), &why),
              DeltaDecodeResult::Frame)
        << why;
    EXPECT_LE(max_abs_diff(dec->reconstruction(), clip[4 + i].view()), 2) << "frame " << 4 + i;
  }
  gst_harness_teardown(h);
}

// Each frame comes out when the next has decoded (the frame before a dropped
// packet at once), the last at EOS, the same frames and timestamps as
// without overlap; the latency query says one frame.
TEST(DeltaDecoderOverlap, SameFramesOneFrameLate) {
  SKIP_WITHOUT_GPU();
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    SCOPED_TRACE(format_info(f).name);
    const ImageDesc desc{f, 333, 211};
    const auto packets = damaged_delta_stream(make_clip(desc, 12, 35), 3);
    const auto want = reference_frames(desc, packets);
    ASSERT_EQ(want.size(), 9u);  // 7 dropped as damaged, 8 and 9 waiting for 10
    GstHarness* h = gst_harness_new_parse("cudadeltadec backend=cuda overlap=true");
    gst_harness_set_caps_str(h, stream_caps(desc).c_str(), caps_string(desc).c_str());
    std::vector<Frame> got;
    for (size_t n = 0; n < packets.size(); n++) {
      ASSERT_EQ(gst_harness_push(h, packet_buffer(packets[n], n)), GST_FLOW_OK);
      auto out = pull_frames(h, desc);
      // out: the frame before this packet's, once this one decoded or failed
      const size_t expected = n == 0 ? 0 : (n == 8 || n == 9 || n == 10) ? 0 : 1;
      EXPECT_EQ(out.size(), expected) << "after packet " << n;
      for (Frame& fr : out)
        got.push_back(std::move(fr));
      if (n == 0) {
        EXPECT_EQ(gst_harness_query_latency(h), kFrame);
      }
    }
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    for (Frame& fr : pull_frames(h, desc))
      got.push_back(std::move(fr));
    ASSERT_EQ(got.size(), want.size());
    for (size_t n = 0; n < got.size(); n++)
      expect_same_frame(got[n], want[n], n);
    gst_harness_teardown(h);
  }
}

// A flush drops the frame kept back; decoding resumes at the next keyframe.
TEST(DeltaDecoderOverlap, FlushDropsTheFrameKeptBack) {
  SKIP_WITHOUT_GPU();
  const ImageDesc desc{PixelFormat::RGBA, 120, 80};
  const auto packets = damaged_delta_stream(make_clip(desc, 8, 36), 3);  // 0..6 pushed
  const auto want = reference_frames(desc, packets);
  GstHarness* h = gst_harness_new_parse("cudadeltadec backend=cuda overlap=true");
  gst_harness_set_caps_str(h, stream_caps(desc).c_str(), caps_string(desc).c_str());
  for (size_t n = 0; n < 4; n++)
    ASSERT_EQ(gst_harness_push(h, packet_buffer(packets[n], n)), GST_FLOW_OK);
  EXPECT_EQ(pull_frames(h, desc).size(), 3u);  // frame 3 kept back
  push_flush(h);
  // 4 is a delta frame: after a flush the decoder waits for the keyframe, 5
  for (size_t n = 4; n < 7; n++)
    ASSERT_EQ(gst_harness_push(h, packet_buffer(packets[n], n)), GST_FLOW_OK);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  const auto after = pull_frames(h, desc);
  ASSERT_EQ(after.size(), 2u);
  expect_same_frame(after[0], want[5], 5);
  expect_same_frame(after[1], want[6], 6);
  gst_harness_teardown(h);
}

// On the CPU backend there is no bus to overlap: frames go out at once and
// no latency is added.
TEST(DeltaCodecOverlap, CpuBackendAddsNoLatency) {
  const ImageDesc desc{PixelFormat::I420, 64, 48};
  const auto clip = make_clip(desc, 3, 37);
  GstHarness* enc = gst_harness_new_parse("cudadeltaenc backend=cpu overlap=true");
  gst_harness_set_src_caps_str(enc, caps_string(desc).c_str());
  std::vector<std::vector<uint8_t>> packets;
  for (int n = 0; n < 3; n++) {
    ASSERT_EQ(gst_harness_push(enc, timed_buffer(clip[n], n)), GST_FLOW_OK);
    auto out = pull_packets(enc);
    ASSERT_EQ(out.size(), 1u) << "frame " << n;
    packets.push_back(out[0].bytes);
  }
  EXPECT_EQ(gst_harness_query_latency(enc), 0u);
  gst_harness_teardown(enc);

  GstHarness* dec = gst_harness_new_parse("cudadeltadec backend=cpu overlap=true");
  gst_harness_set_caps_str(dec, stream_caps(desc).c_str(), caps_string(desc).c_str());
  for (size_t n = 0; n < packets.size(); n++) {
    ASSERT_EQ(gst_harness_push(dec, packet_buffer(packets[n], n)), GST_FLOW_OK);
    EXPECT_EQ(pull_frames(dec, desc).size(), 1u) << "packet " << n;
  }
  EXPECT_EQ(gst_harness_query_latency(dec), 0u);
  gst_harness_teardown(dec);
}

namespace {

// What leaves the harnessed element, in order: 'B' a buffer, 'G' a GAP.
struct Order {
  std::string seen;
};

GstPadProbeReturn note_order(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* o = static_cast<Order*>(data);
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER)
    o->seen += 'B';
  else if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_GAP)
    o->seen += 'G';
  return GST_PAD_PROBE_OK;
}

void watch_order(GstHarness* h, Order* o) {
  gst_pad_add_probe(h->sinkpad,
                    static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER |
                                                 GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
                    note_order, o, nullptr);
}

}  // namespace

// Buffers and a GAP keep their order with a frame kept back: GstVideoEncoder
// holds serialized events until the frames before them are out;
// GstVideoDecoder forwards a GAP at once, so cudadeltadec puts its kept
// frame out first.
TEST(DeltaCodecOverlap, FrameKeptBackLeavesBeforeAGap) {
  SKIP_WITHOUT_GPU();
  const ImageDesc desc{PixelFormat::RGBA, 96, 64};
  const auto clip = make_clip(desc, 8, 38);
  {
    GstHarness* h = gst_harness_new_parse("cudadeltaenc backend=cuda overlap=true threshold=2");
    gst_harness_set_src_caps_str(h, caps_string(desc).c_str());
    Order o;
    watch_order(h, &o);
    for (int n = 0; n < 3; n++)
      ASSERT_EQ(gst_harness_push(h, timed_buffer(clip[n], n)), GST_FLOW_OK);
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_gap(3 * kFrame, kFrame)));
    EXPECT_EQ(o.seen, "BB") << "encoder: frame 2 kept back, the GAP waits behind it";
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    EXPECT_EQ(o.seen, "BBBG") << "encoder";
    gst_harness_teardown(h);
  }
  {
    const auto packets = damaged_delta_stream(clip, 3);
    GstHarness* h = gst_harness_new_parse("cudadeltadec backend=cuda overlap=true");
    gst_harness_set_caps_str(h, stream_caps(desc).c_str(), caps_string(desc).c_str());
    Order o;
    watch_order(h, &o);
    for (size_t n = 0; n < 3; n++)
      ASSERT_EQ(gst_harness_push(h, packet_buffer(packets[n], n)), GST_FLOW_OK);
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_gap(3 * kFrame, kFrame)));
    EXPECT_EQ(o.seen, "BBBG") << "decoder";
    gst_harness_teardown(h);
  }
}
