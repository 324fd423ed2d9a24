// cudagreyworld through GstHarness: the op's bytes in frame mode; smoothing
// with the weight from the buffers' running times and the time constant;
// restart after a flush and on DISCONT; mode changed while playing; GRAY8
// refused; frames in CUDA memory equal to the CPU backend and staying there.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "cudafx/greyworld.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// A frame with a colour cast: channel means far apart.
HostImage cast_frame(const ImageDesc& d, uint32_t seed, int shift) {
  HostImage img(d);
  std::mt19937 rng(seed);
  const FormatInfo& fi = format_info(d.format);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    const int C = fi.planes[p].channels;
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width * C; x++)
        v.data[static_cast<size_t>(y) * v.pitch + x] =
            static_cast<uint8_t>(30 + 40 * ((x % C + shift) % 3) + rng() % 100);
  }
  return img;
}

// The op on the CPU, frame after frame with the given weights.
class Reference {
 public:
  explicit Reference(const ImageDesc& d) { EXPECT_TRUE(GreyWorldOp::create(Backend::Cpu, d, &op_).is_ok()); }
  HostImage run(const HostImage& src, double weight) {
    HostImage out(src.desc());
    out.copy_from(src.view());
    EXPECT_TRUE(op_->submit(nullptr, out.view(), weight).is_ok());
    return out;
  }
  void reset() { op_->reset(); }

 private:
  std::unique_ptr<GreyWorldOp> op_;
};

double weight_for(double dt, double tau) { return -std::expm1(-dt / tau); }

}  // namespace

TEST(GreyWorldElement, FrameModeIsTheOp) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGR, PixelFormat::NV12, PixelFormat::I420}) {
    const ImageDesc d{f, 67, 45};
    GstHarness* h = harness_with("cudagreyworld", "backend=cpu");
    set_caps(h, d);
    Reference ref(d);
    for (int i = 0; i < 3; i++) {
      const HostImage src = cast_frame(d, 10 + i, i);
      const HostImage got = push_pull_at(h, src, i * GST_SECOND / 30);
      EXPECT_TRUE(bytes_equal(got.view(), ref.run(src, 1.0).view())) << format_info(f).name << i;
      EXPECT_FALSE(bytes_equal(got.view(), src.view()));
    }
    gst_harness_teardown(h);
  }
}

// mode=smooth: the first frame by its own means, then each moving them by
// 1 - exp(-dt / time-constant), dt from the running times; a DISCONT buffer
// and a flush start afresh.
TEST(GreyWorldElement, SmoothModeFollowsTheRunningTime) {
  const ImageDesc d{PixelFormat::RGBx, 40, 30};
  GstHarness* h = harness_with("cudagreyworld", "backend=cpu mode=smooth time-constant=0.5");
  set_caps(h, d);
  Reference ref(d);
  const GstClockTime pts[] = {0, GST_SECOND / 10, GST_SECOND / 10 + GST_SECOND / 4};
  for (int i = 0; i < 3; i++) {
    const HostImage src = cast_frame(d, 20 + i, i);
    const double w = i == 0 ? 1.0 : weight_for(static_cast<double>(pts[i] - pts[i - 1]) / GST_SECOND, 0.5);
    EXPECT_TRUE(bytes_equal(push_pull_at(h, src, pts[i]).view(), ref.run(src, w).view())) << i;
  }
  HostImage src = cast_frame(d, 30, 1);
  ref.reset();
  EXPECT_TRUE(bytes_equal(push_pull_at(h, src, GST_SECOND, true).view(), ref.run(src, 1.0).view()))
      << "DISCONT";
  push_flush(h);
  src = cast_frame(d, 31, 2);
  ref.reset();
  EXPECT_TRUE(bytes_equal(push_pull_at(h, src, 2 * GST_SECOND).view(), ref.run(src, 1.0).view()))
      << "after a flush";
  gst_harness_teardown(h);
}

// Switching to smooth while playing applies from the next buffer on, with
// the average continuing from the frames before.
TEST(GreyWorldElement, ModeChangedWhilePlaying) {
  const ImageDesc d{PixelFormat::Y444, 24, 16};
  GstHarness* h = harness_with("cudagreyworld", "backend=cpu time-constant=1");
  set_caps(h, d);
  Reference ref(d);
  HostImage a = cast_frame(d, 40, 0), b = cast_frame(d, 41, 2);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, a, 0).view(), ref.run(a, 1.0).view()));
  g_object_set(h->element, "mode", 1, nullptr);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, b, GST_SECOND / 2).view(),
                          ref.run(b, weight_for(0.5, 1.0)).view()));
  gst_harness_teardown(h);
}

// A new time-constant while playing weighs the next buffer by it, the
// average carrying on from the frames before.
TEST(GreyWorldElement, TimeConstantChangedWhilePlaying) {
  const ImageDesc d{PixelFormat::RGBA, 24, 16};
  GstHarness* h = harness_with("cudagreyworld", "backend=cpu mode=smooth time-constant=1");
  set_caps(h, d);
  Reference ref(d);
  HostImage a = cast_frame(d, 42, 0), b = cast_frame(d, 43, 2), c = cast_frame(d, 44, 1);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, a, 0).view(), ref.run(a, 1.0).view()));
  EXPECT_TRUE(bytes_equal(push_pull_at(h, b, GST_SECOND / 2).view(),
                          ref.run(b, weight_for(0.5, 1.0)).view()));
  g_object_set(h->element, "time-constant", 4.0, nullptr);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, c, GST_SECOND).view(),
                          ref.run(c, weight_for(0.5, 4.0)).view()));
  gst_harness_teardown(h);
}

TEST(GreyWorldElement, Gray8IsRefused) {
  GstHarness* h = harness_with("cudagreyworld", "backend=cpu");
  const ImageDesc d{PixelFormat::GRAY8, 8, 8};
  const std::string caps = caps_string(d);
  gst_harness_set_src_caps_str(h, caps.c_str());
  HostImage img(d);
  img.fill_random(1);
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(img)), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown(h);
}

// CUDA memory in and out: the CPU backend's bytes, frame after frame
// (smoothed state on the device), the frames never leaving the GPU.
TEST(GreyWorldElement, CudaMemoryChain) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12, PixelFormat::I420}) {
    const ImageDesc d{f, 333, 211};
    GstHarness* h = harness_parse(
        "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudagreyworld name=g0 backend=cuda "
        "mode=smooth ! cudadownload");
    set_caps(h, d);
    Reference ref(d);
    for (int i = 0; i < 3; i++) {
      const HostImage src = cast_frame(d, 50 + i, i);
      const double w = i == 0 ? 1.0 : weight_for(1.0 / 30, 1.0);
      EXPECT_TRUE(bytes_equal(push_pull_at(h, src, i * GST_SECOND / 30).view(), ref.run(src, w).view()))
          << format_info(f).name << " " << i;
    }
    EXPECT_EQ(negotiated_memory(h), "CC");
    gst_harness_teardown(h);
  }
}

// A frame in system memory that others hold too (a tee, an application):
// with the CUDA backend the element writes its result into a buffer of its
// own (pinned, through the device) and leaves the shared one as it was,
// timestamps and flags carried over. Also the CPU backend (GstBaseTransform's
// copy) for comparison.
TEST(GreyWorldElement, SharedFrameIsLeftAlone) {
  for (const char* backend : {"cpu", "cuda"}) {
    if (skip_backend(backend))
      continue;
    for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
      const ImageDesc d{f, 131, 77};
      GstHarness* h = harness_with("cudagreyworld", std::string("backend=") + backend);
      set_caps(h, d);
      Reference ref(d);
      const HostImage src = cast_frame(d, 70, 1);
      GstBuffer* in = buffer_from_image(src);
      GST_BUFFER_PTS(in) = 5 * GST_SECOND;
      GST_BUFFER_FLAG_SET(in, GST_BUFFER_FLAG_DISCONT);
      gst_buffer_ref(in);  // ours too: not writable
      ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
      GstBuffer* out = gst_harness_pull(h);
      ASSERT_NE(out, nullptr);
      EXPECT_NE(out, in);
      EXPECT_EQ(GST_BUFFER_PTS(out), 5 * GST_SECOND);
      EXPECT_TRUE(GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DISCONT));
      HostImage got, kept;
      ASSERT_TRUE(image_from_buffer(out, d, &got));
      ASSERT_TRUE(image_from_buffer(in, d, &kept));
      EXPECT_TRUE(bytes_equal(got.view(), ref.run(src, 1.0).view())) << backend << " " << format_info(f).name;
      EXPECT_TRUE(bytes_equal(kept.view(), src.view())) << backend << ": the shared frame was written";
      gst_buffer_unref(out);
      gst_buffer_unref(in);
      gst_harness_teardown(h);
    }
  }
}

// A new, writable buffer over memory that another buffer holds too (what a
// source that timestamps a frame it shares hands on: basesrc's
// make_writable): the memory is left as it was, the result is the op's,
// and with the CUDA backend it comes in the element's own pinned memory
// (before, mapping the buffer for writing made GStreamer copy the memory
// into a fresh allocation every frame).
TEST(GreyWorldElement, WritableBufferOverSharedMemory) {
  for (const char* backend : {"cpu", "cuda"}) {
    if (skip_backend(backend))
      continue;
    const ImageDesc d{PixelFormat::RGBA, 131, 77};
    GstHarness* h = harness_with("cudagreyworld", std::string("backend=") + backend);
    set_caps(h, d);
    Reference ref(d);
    const HostImage src = cast_frame(d, 60, 3);
    GstBuffer* owner = buffer_from_image(src);
    GstBuffer* in = gst_buffer_copy(owner);  // shares owner's memory
    ASSERT_TRUE(gst_buffer_is_writable(in));
    ASSERT_FALSE(gst_memory_is_writable(gst_buffer_peek_memory(in, 0)));
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    HostImage got, kept;
    ASSERT_TRUE(image_from_buffer(out, d, &got));
    ASSERT_TRUE(image_from_buffer(owner, d, &kept));
    EXPECT_TRUE(bytes_equal(got.view(), ref.run(src, 1.0).view())) << backend;
    EXPECT_TRUE(bytes_equal(kept.view(), src.view())) << backend << ": the shared memory was written";
    if (std::string(backend) == "cuda") {
      EXPECT_STREQ(gst_buffer_peek_memory(out, 0)->allocator->mem_type, "CudaFxPinnedMemory");
    }
    gst_buffer_unref(out);
    gst_buffer_unref(owner);
    gst_harness_teardown(h);
  }
}

// The same in a CUDA-memory chain: a probe holds every frame that reaches
// the element (so it may not write it); the element's result, made in a
// buffer of its own CUDA pool, is the op's, and the held frame is unchanged.
TEST(GreyWorldElement, SharedCudaFrameIsLeftAlone) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  const ImageDesc d{PixelFormat::RGBA, 200, 101};
  GstHarness* h = harness_parse(
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudagreyworld name=g0 backend=cuda ! "
      "cudadownload");
  set_caps(h, d);
  GstElement* g0 = gst_bin_get_by_name(GST_BIN(h->element), "g0");
  ASSERT_NE(g0, nullptr);
  GstPad* sink = gst_element_get_static_pad(g0, "sink");
  GstBuffer* held = nullptr;
  gst_pad_add_probe(
      sink, GST_PAD_PROBE_TYPE_BUFFER,
      [](GstPad*, GstPadProbeInfo* info, gpointer slot) {
        gst_buffer_replace(static_cast<GstBuffer**>(slot), GST_PAD_PROBE_INFO_BUFFER(info));
        return GST_PAD_PROBE_OK;
      },
      &held, nullptr);
  Reference ref(d);
  const HostImage src = cast_frame(d, 80, 2);
  EXPECT_TRUE(bytes_equal(push_pull_at(h, src, 0).view(), ref.run(src, 1.0).view()));
  ASSERT_NE(held, nullptr);
  HostImage kept;
  ASSERT_TRUE(image_from_buffer(held, d, &kept));
  EXPECT_TRUE(bytes_equal(kept.view(), src.view())) << "the held CUDA frame was written";
  EXPECT_EQ(negotiated_memory(h), "CC");
  gst_buffer_unref(held);
  gst_object_unref(sink);
  gst_object_unref(g0);
  gst_harness_teardown(h);
}
