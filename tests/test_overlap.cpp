// `overlap` of the filter base class: a transform element on the CUDA
// backend with system memory on both pads uploads each frame while the one
// before downloads, and gives a frame out when the next one has been queued
// (one frame of latency, reported) or at EOS or any other serialized event;
// a flush drops the frame in flight. Checked with cudagaussian and
// cudaconvolve (same size) and cudaupscale (another size): every frame
// equals the CPU backend's, in
// order with its timestamps, none lost or repeated. The CUDA cases skip
// without a GPU (fail with CUDAFX_REQUIRE_GPU=1); the property's own cases
// run everywhere.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

const ImageDesc kIn{PixelFormat::RGBA, 160, 90};

struct Element {
  const char* factory;
  const char* props;
  int out_w, out_h;
};
const Element kElements[] = {
    {"cudagaussian", "kernel-size=5 sigma=1.5", 160, 90},
    {"cudaupscale", "method=bicubic", 320, 180},
    {"cudaconvolve", "kernel=\"1 2 1; 2 4 2; 1 2 1\"", 160, 90},
};

std::string caps_at(const ImageDesc& d, int w, int h) {
  return "video/x-raw,format=" + std::string(format_info(d.format).name) +
         ",width=" + std::to_string(w) + ",height=" + std::to_string(h) + ",framerate=30/1";
}

GstHarness* make(const Element& e, const char* backend, bool overlap) {
  GstHarness* h = harness_with(e.factory, std::string(e.props) + " backend=" + backend +
                                              " overlap=" + (overlap ? "true" : "false"));
  gst_harness_set_caps_str(h, caps_at(kIn, kIn.width, kIn.height).c_str(),
                           caps_at(kIn, e.out_w, e.out_h).c_str());
  return h;
}

GstBuffer* frame(int i) {
  HostImage img(kIn);
  img.fill_random(100 + i);
  GstBuffer* b = buffer_from_image(img);
  GST_BUFFER_PTS(b) = i * GST_SECOND / 30;
  GST_BUFFER_DURATION(b) = GST_SECOND / 30;
  return b;
}

// The CPU backend's frames for frame(0..n-1).
std::vector<HostImage> cpu_frames(const Element& e, int n) {
  GstHarness* h = make(e, "cpu", false);
  std::vector<HostImage> out;
  const ImageDesc od{kIn.format, e.out_w, e.out_h};
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(gst_harness_push(h, frame(i)), GST_FLOW_OK);
    GstBuffer* b = gst_harness_pull(h);
    out.emplace_back();
    EXPECT_TRUE(b && image_from_buffer(b, od, &out.back()));
    gst_clear_buffer(&b);
  }
  gst_harness_teardown(h);
  return out;
}

void expect_frame(GstBuffer* b, const Element& e, const HostImage& want, int i) {
  ASSERT_NE(b, nullptr) << e.factory << ": frame " << i << " did not come";
  EXPECT_EQ(GST_BUFFER_PTS(b), static_cast<GstClockTime>(i * GST_SECOND / 30))
      << e.factory << ": frame " << i << " out of order";
  HostImage got;
  ASSERT_TRUE(image_from_buffer(b, ImageDesc{kIn.format, e.out_w, e.out_h}, &got));
  EXPECT_TRUE(bytes_equal(got.view(), want.view())) << e.factory << ": frame " << i;
}

}  // namespace

TEST(Overlap, PropertyDefaultsToOffAndIsSettable) {
  for (const Element& e : kElements) {
    GstElement* el = gst_element_factory_make(e.factory, nullptr);
    ASSERT_NE(el, nullptr);
    gboolean v = TRUE;
    g_object_get(el, "overlap", &v, nullptr);
    EXPECT_FALSE(v) << e.factory;
    g_object_set(el, "overlap", TRUE, nullptr);
    g_object_get(el, "overlap", &v, nullptr);
    EXPECT_TRUE(v) << e.factory;
    gst_object_unref(el);
  }
}

// The CPU backend has no bus to overlap: a frame comes out at once.
TEST(Overlap, CpuBackendGivesEachFrameAtOnce) {
  for (const Element& e : kElements) {
    const std::vector<HostImage> want = cpu_frames(e, 3);
    GstHarness* h = make(e, "cpu", true);
    for (int i = 0; i < 3; i++) {
      ASSERT_EQ(gst_harness_push(h, frame(i)), GST_FLOW_OK);
      GstBuffer* b = gst_harness_try_pull(h);
      expect_frame(b, e, want[i], i);
      gst_clear_buffer(&b);
    }
    gst_harness_teardown(h);
  }
}

// A frame leaves when the next one is queued; EOS drains the last one
// before the EOS event. Every frame is the CPU backend's, in order.
TEST(Overlap, FramesLeaveOneLateInOrderAndEqualTheCpu) {
  SKIP_WITHOUT_GPU();
  constexpr int kFrames = 8;
  for (const Element& e : kElements) {
    const std::vector<HostImage> want = cpu_frames(e, kFrames);
    GstHarness* h = make(e, "cuda", true);
    ASSERT_EQ(gst_harness_push(h, frame(0)), GST_FLOW_OK);
    EXPECT_EQ(gst_harness_buffers_in_queue(h), 0u) << e.factory << ": frame 0 came at once";
    for (int i = 1; i < kFrames; i++) {
      ASSERT_EQ(gst_harness_push(h, frame(i)), GST_FLOW_OK);
      ASSERT_EQ(gst_harness_buffers_in_queue(h), 1u) << e.factory << " after frame " << i;
      GstBuffer* b = gst_harness_pull(h);
      expect_frame(b, e, want[i - 1], i - 1);
      gst_clear_buffer(&b);
    }
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
    ASSERT_EQ(gst_harness_buffers_in_queue(h), 1u) << e.factory << ": EOS did not drain";
    GstBuffer* b = gst_harness_pull(h);
    expect_frame(b, e, want[kFrames - 1], kFrames - 1);
    gst_clear_buffer(&b);
    // the EOS event after the frame
    bool eos = false;
    while (GstEvent* ev = gst_harness_try_pull_event(h)) {
      eos = eos || GST_EVENT_TYPE(ev) == GST_EVENT_EOS;
      gst_event_unref(ev);
    }
    EXPECT_TRUE(eos) << e.factory;
    gst_harness_teardown(h);
  }
}

// A flush drops the frame in flight; frames after it come as before.
TEST(Overlap, FlushDropsTheFrameInFlight) {
  SKIP_WITHOUT_GPU();
  const Element& e = kElements[0];
  const std::vector<HostImage> want = cpu_frames(e, 4);
  GstHarness* h = make(e, "cuda", true);
  ASSERT_EQ(gst_harness_push(h, frame(0)), GST_FLOW_OK);
  push_flush(h);
  EXPECT_EQ(gst_harness_buffers_in_queue(h), 0u) << "the flushed frame came out";
  for (int i = 1; i < 4; i++)
    ASSERT_EQ(gst_harness_push(h, frame(i)), GST_FLOW_OK);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  ASSERT_EQ(gst_harness_buffers_in_queue(h), 3u);
  for (int i = 1; i < 4; i++) {
    GstBuffer* b = gst_harness_pull(h);
    expect_frame(b, e, want[i], i);
    gst_clear_buffer(&b);
  }
  gst_harness_teardown(h);
}

// The latency query says one frame (1/30 s) more with overlapped frames.
TEST(Overlap, LatencyQueryAddsOneFrame) {
  SKIP_WITHOUT_GPU();
  const Element& e = kElements[0];
  GstClockTime latency[2] = {0, 0};
  for (int overlap = 0; overlap < 2; overlap++) {
    GstHarness* h = make(e, "cuda", overlap != 0);
    gst_harness_set_upstream_latency(h, 10 * GST_MSECOND);
    ASSERT_EQ(gst_harness_push(h, frame(0)), GST_FLOW_OK);  // caps set
    latency[overlap] = gst_harness_query_latency(h);
    gst_harness_teardown(h);
  }
  EXPECT_EQ(latency[0], 10 * GST_MSECOND);
  EXPECT_EQ(latency[1], 10 * GST_MSECOND + gst_util_uint64_scale_int(GST_SECOND, 1, 30));
}

// New caps drain the frames of the old ones first: a frame in flight comes
// out at its own size before the first frame of the new size goes in.
TEST(Overlap, NewCapsDrainTheOldFrames) {
  SKIP_WITHOUT_GPU();
  const Element& e = kElements[0];
  const std::vector<HostImage> want = cpu_frames(e, 1);
  GstHarness* h = make(e, "cuda", true);
  ASSERT_EQ(gst_harness_push(h, frame(0)), GST_FLOW_OK);
  gst_harness_set_caps_str(h, caps_at(kIn, 80, 60).c_str(), caps_at(kIn, 80, 60).c_str());
  ASSERT_EQ(gst_harness_buffers_in_queue(h), 1u) << "the caps event did not drain";
  GstBuffer* b = gst_harness_pull(h);
  expect_frame(b, e, want[0], 0);
  gst_clear_buffer(&b);
  gst_harness_teardown(h);
}

// A drain query (upstream about to free or change its pool) gives the
// frame in flight back before it is answered.
TEST(Overlap, DrainQueryGivesTheFrameInFlightBack) {
  SKIP_WITHOUT_GPU();
  const Element& e = kElements[0];
  const std::vector<HostImage> want = cpu_frames(e, 1);
  GstHarness* h = make(e, "cuda", true);
  ASSERT_EQ(gst_harness_push(h, frame(0)), GST_FLOW_OK);
  ASSERT_EQ(gst_harness_buffers_in_queue(h), 0u);
  GstQuery* q = gst_query_new_drain();
  (void) gst_pad_peer_query(h->srcpad, q);
  gst_query_unref(q);
  ASSERT_EQ(gst_harness_buffers_in_queue(h), 1u) << "the drain query did not drain";
  GstBuffer* b = gst_harness_pull(h);
  expect_frame(b, e, want[0], 0);
  gst_clear_buffer(&b);
  gst_harness_teardown(h);
}

// An in-place element has nothing to overlap: frames come at once and the
// latency stays the upstream's.
TEST(Overlap, InPlaceElementIgnoresIt) {
  SKIP_WITHOUT_GPU();
  GstHarness* h = harness_with("cudagreyworld", "backend=cuda overlap=true");
  const std::string caps = caps_at(kIn, kIn.width, kIn.height);
  gst_harness_set_caps_str(h, caps.c_str(), caps.c_str());
  gst_harness_set_upstream_latency(h, 10 * GST_MSECOND);
  ASSERT_EQ(gst_harness_push(h, frame(0)), GST_FLOW_OK);
  EXPECT_EQ(gst_harness_buffers_in_queue(h), 1u);
  EXPECT_EQ(gst_harness_query_latency(h), 10 * GST_MSECOND);
  gst_harness_teardown(h);
}
