// cudaharris as GStreamer sees it: frames pass through untouched with a
// corners meta equal to the op's list (the op itself is tested against
// OpenCV in test_harris_op), ROI metas, bus messages, drawing in place,
// properties while playing, bad values; CPU backend, and the CUDA backend
// equal to it where there is a GPU, in system and CUDA memory.
#include <gst/check/gstharness.h>
#include <gst/cudafx/gstcudafxcornersmeta.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cudafx/corner_markers.hpp"
#include "cudafx/harris.hpp"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// White rectangles on a dark, slightly noisy background: corners at known
// places, and texture enough that the list is not trivial.
HostImage rectangles(const ImageDesc& desc, uint32_t seed) {
  HostImage img(desc, 3);
  img.fill_random(seed);
  const FormatInfo& fi = format_info(desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = img.view().plane(i);
    for (int y = 0; y < p.height; y++)
      for (size_t x = 0; x < p.row_bytes(); x++) {
        uint8_t& v = p.data[y * p.pitch + x];
        v = static_cast<uint8_t>(v / 8);  // dark noise
      }
  }
  // Two rectangles in image pixels, painted white in plane 0 (and its
  // subsampled rows where the format has chroma: luma alone carries them).
  const PlaneView p0 = img.view().plane(0);
  const int rects[2][4] = {{desc.width / 8, desc.height / 6, desc.width / 3, desc.height / 2},
                           {desc.width / 2, desc.height / 2, desc.width * 7 / 8, desc.height * 5 / 6}};
  for (const auto& r : rects)
    for (int y = r[1]; y < r[3]; y++)
      for (int x = r[0]; x < r[2]; x++)
        std::memset(p0.data + y * p0.pitch + static_cast<size_t>(x) * p0.channels, 230,
                    p0.channels);
  return img;
}

// The op's own list for `img` on the CPU: what the element must attach.
std::vector<HarrisCorner> reference_corners(const HostImage& img, const HarrisParams& p) {
  std::unique_ptr<HarrisOp> op;
  EXPECT_TRUE(HarrisOp::create(Backend::Cpu, img.desc(), p, &op).is_ok());
  if (!op)
    return {};
  EXPECT_TRUE(op->submit(nullptr, img.view()).is_ok());
  const HarrisCornerList l = op->corners();
  return std::vector<HarrisCorner>(l.corners, l.corners + l.count);
}

std::vector<HarrisCorner> meta_corners(GstBuffer* buf) {
  GstCudaFxCornersMeta* m = gst_buffer_get_cuda_fx_corners_meta(buf);
  EXPECT_NE(m, nullptr) << "no corners meta";
  if (!m)
    return {};
  std::vector<HarrisCorner> out(m->n_corners);
  for (guint i = 0; i < m->n_corners; i++)
    out[i] = {m->corners[i].x, m->corners[i].y, m->corners[i].score};
  return out;
}

bool same_corners(const std::vector<HarrisCorner>& a, const std::vector<HarrisCorner>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(HarrisCorner)) == 0;
}

// A harness around a cudaharris whose properties are set from `props`
// ("name=value name=value", gst-launch syntax for the values).
GstHarness* harris_harness(const ImageDesc& desc, const char* backend, const char* props = "") {
  GstHarness* h = harness_with("cudaharris", std::string("backend=") + backend + " " + props);
  set_caps(h, desc);
  return h;
}

HostImage image_of(GstBuffer* buf, const ImageDesc& desc) {
  HostImage out;
  EXPECT_TRUE(image_from_buffer(buf, desc, &out));
  return out;
}

}  // namespace

class HarrisFormats : public ::testing::TestWithParam<PixelFormat> {};

// The frame passes through with the very same memory and bytes, and carries
// a corners meta that is the op's list, with the parameters used.
TEST_P(HarrisFormats, PassesThroughWithTheOpsCorners) {
  const ImageDesc desc{GetParam(), 161, 97};
  const HostImage src = rectangles(desc, 3);
  HarrisParams p;
  p.gradient_size = 5;
  p.block_size = 5;
  p.min_distance = 4;
  const std::vector<HarrisCorner> want = reference_corners(src, p);
  ASSERT_GE(want.size(), 8u) << "the rectangles have 8 corners";
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = harris_harness(desc, backend, "gradient-size=5 block-size=5 min-distance=4");
    GstBuffer* in = buffer_from_image(src, 3);
    gst_buffer_ref(in);  // shared: the element must not copy the pixels
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(gst_buffer_peek_memory(out, 0), gst_buffer_peek_memory(in, 0)) << backend;
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), src.view())) << backend;
    EXPECT_TRUE(same_corners(meta_corners(out), want))
        << backend << ": " << meta_corners(out).size() << " corners, want " << want.size();
    GstCudaFxCornersMeta* m = gst_buffer_get_cuda_fx_corners_meta(out);
    ASSERT_NE(m, nullptr);
    ASSERT_NE(m->params, nullptr);
    gint g = 0, b = 0, md = 0;
    EXPECT_TRUE(gst_structure_get_int(m->params, "gradient-size", &g));
    EXPECT_TRUE(gst_structure_get_int(m->params, "block-size", &b));
    EXPECT_TRUE(gst_structure_get_int(m->params, "min-distance", &md));
    EXPECT_EQ(g, 5);
    EXPECT_EQ(b, 5);
    EXPECT_EQ(md, 4);
    EXPECT_EQ(gst_buffer_get_cuda_fx_corners_meta(in), nullptr) << "the shared input got the meta";
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_harness_teardown(h);
  }
}

// draw=true marks the op's corners in place, exactly as the marker op does
// on the CPU; the CUDA backend gives the same bytes.
TEST_P(HarrisFormats, DrawMarksTheCornersInPlace) {
  const ImageDesc desc{GetParam(), 120, 90};
  const HostImage src = rectangles(desc, 4);
  HarrisParams p;
  const std::vector<HarrisCorner> corners = reference_corners(src, p);
  ASSERT_FALSE(corners.empty());
  HostImage cpu_out;
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h =
        harris_harness(desc, backend, "draw=true draw-shape=circle draw-size=4 draw-color=0xff102030");
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    HostImage got = image_of(out, desc);
    EXPECT_TRUE(same_corners(meta_corners(out), corners)) << backend;
    EXPECT_FALSE(bytes_equal(got.view(), src.view())) << backend << ": nothing drawn";
    if (std::string(backend) == "cpu") {
      // Against the marker op run here on the source, RGB formats (their
      // colour needs no matrix): the element added nothing else.
      if (format_info(desc.format).n_planes == 1 && desc.format != PixelFormat::GRAY8) {
        HostImage want(desc);
        want.copy_from(src.view());
        MarkerStyle style;
        style.shape = MarkerShape::Circle;
        style.size = 4;
        style.rgb[0] = 0x10;
        style.rgb[1] = 0x20;
        style.rgb[2] = 0x30;
        const uint32_t n = static_cast<uint32_t>(corners.size());
        ASSERT_TRUE(draw_corner_markers(Backend::Cpu, nullptr, want.view(), corners.data(), &n,
                                        static_cast<int>(n), style)
                        .is_ok());
        EXPECT_TRUE(bytes_equal(got.view(), want.view()));
      }
      cpu_out = std::move(got);
    } else {
      EXPECT_TRUE(bytes_equal(got.view(), cpu_out.view())) << "CUDA drew other bytes than the CPU";
    }
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, HarrisFormats,
                         ::testing::Values(PixelFormat::RGBA, PixelFormat::BGRx, PixelFormat::ARGB,
                                           PixelFormat::RGB, PixelFormat::GRAY8, PixelFormat::I420,
                                           PixelFormat::NV12, PixelFormat::Y444),
                         [](const auto& info) { return format_info(info.param).name; });

// The rectangles' eight corners are found where they are.
TEST(Harris, FindsTheRectanglesCorners) {
  const ImageDesc desc{PixelFormat::GRAY8, 160, 120};
  const HostImage src = rectangles(desc, 5);
  GstHarness* h = harris_harness(desc, "cpu", "min-distance=5 threshold=0.05");
  ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  const std::vector<HarrisCorner> got = meta_corners(out);
  // Corner pixels of the two rectangles (inclusive ends).
  const int xs[2][2] = {{160 / 8, 160 / 3 - 1}, {160 / 2, 160 * 7 / 8 - 1}};
  const int ys[2][2] = {{120 / 6, 120 / 2 - 1}, {120 / 2, 120 * 5 / 6 - 1}};
  for (int r = 0; r < 2; r++)
    for (int cx : xs[r])
      for (int cy : ys[r]) {
        bool found = false;
        for (const HarrisCorner& c : got)
          found |= std::abs(c.x - cx) <= 2 && std::abs(c.y - cy) <= 2;
        EXPECT_TRUE(found) << "no corner near (" << cx << ", " << cy << ")";
      }
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// roi-meta adds one GstVideoRegionOfInterestMeta "corner" per corner, at its
// pixel, with the exact position and score as a param.
TEST(Harris, RoiMetasOnRequest) {
  const ImageDesc desc{PixelFormat::RGBA, 96, 64};
  const HostImage src = rectangles(desc, 6);
  const std::vector<HarrisCorner> want = reference_corners(src, HarrisParams{});
  for (const char* roi : {"false", "true"}) {
    GstHarness* h = harris_harness(desc, "cpu", (std::string("roi-meta=") + roi).c_str());
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    std::vector<GstVideoRegionOfInterestMeta*> rois;
    gpointer state = nullptr;
    while (GstMeta* m = gst_buffer_iterate_meta_filtered(out, &state,
                                                          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
      rois.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(m));
    if (std::string(roi) == "false") {
      EXPECT_TRUE(rois.empty());
    } else {
      ASSERT_EQ(rois.size(), want.size());
      for (size_t i = 0; i < rois.size(); i++) {
        EXPECT_EQ(rois[i]->roi_type, g_quark_from_string("corner"));
        EXPECT_EQ(rois[i]->x, static_cast<guint>(std::floor(want[i].x + 0.5f)));
        EXPECT_EQ(rois[i]->y, static_cast<guint>(std::floor(want[i].y + 0.5f)));
        GstStructure* s = gst_video_region_of_interest_meta_get_param(rois[i], "cudaharris");
        ASSERT_NE(s, nullptr);
        gfloat score = 0;
        EXPECT_TRUE(gst_structure_get(s, "score", G_TYPE_FLOAT, &score, nullptr));
        EXPECT_EQ(score, want[i].score);
      }
    }
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// message-interval=2: frames 0, 2 and 4 of five are reported, each with its
// count and strongest corners; none with the default (0).
TEST(Harris, BusMessageEveryNFrames) {
  const ImageDesc desc{PixelFormat::I420, 96, 64};
  const HostImage src = rectangles(desc, 7);
  const std::vector<HarrisCorner> want = reference_corners(src, HarrisParams{});
  for (guint interval : {0u, 2u}) {
    GstHarness* h = harris_harness(desc, "cpu",
                                   ("message-interval=" + std::to_string(interval)).c_str());
    GstBus* bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    for (int i = 0; i < 5; i++) {
      ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
      gst_buffer_unref(gst_harness_pull(h));
    }
    std::vector<guint64> frames;
    while (GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
      const GstStructure* s = gst_message_get_structure(msg);
      if (gst_structure_has_name(s, "cudaharris")) {
        guint64 f = 0;
        gint count = -1;
        EXPECT_TRUE(gst_structure_get_uint64(s, "frame", &f));
        EXPECT_TRUE(gst_structure_get_int(s, "count", &count));
        EXPECT_EQ(count, static_cast<gint>(want.size()));
        const GValue* corners = gst_structure_get_value(s, "corners");
        ASSERT_NE(corners, nullptr);
        ASSERT_GE(gst_value_array_get_size(corners), 1u);
        const GstStructure* c0 =
            gst_value_get_structure(gst_value_array_get_value(corners, 0));
        gfloat x = -1;
        EXPECT_TRUE(gst_structure_get(c0, "x", G_TYPE_FLOAT, &x, nullptr));
        EXPECT_EQ(x, want[0].x);
        frames.push_back(f);
      }
      gst_message_unref(msg);
    }
    if (interval == 0)
      EXPECT_TRUE(frames.empty());
    else
      EXPECT_EQ(frames, (std::vector<guint64>{0, 2, 4}));
    gst_element_set_bus(h->element, nullptr);
    gst_object_unref(bus);
    gst_harness_teardown(h);
  }
}

// Parameters changed while playing apply from the next frame; draw toggles
// between passing the frame through and marking it.
TEST(Harris, PropertiesChangeWhilePlaying) {
  const ImageDesc desc{PixelFormat::RGBx, 128, 80};
  const HostImage src = rectangles(desc, 8);
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    GstHarness* h = harris_harness(desc, backend);
    HarrisParams p;
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    EXPECT_TRUE(same_corners(meta_corners(out), reference_corners(src, p))) << backend;
    gst_buffer_unref(out);

    g_object_set(h->element, "gradient-size", 7, "block-size", 7, "min-distance", 8, "k", 0.06,
                 "max-corners", 5, nullptr);
    gst_util_set_object_arg(G_OBJECT(h->element), "window", "gaussian");
    p.gradient_size = 7;
    p.block_size = 7;
    p.min_distance = 8;
    p.k = 0.06f;
    p.max_corners = 5;
    p.window = HarrisWindow::Gaussian;
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    EXPECT_TRUE(same_corners(meta_corners(out), reference_corners(src, p))) << backend;
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), src.view())) << backend;
    gst_buffer_unref(out);

    g_object_set(h->element, "draw", TRUE, nullptr);
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    EXPECT_FALSE(bytes_equal(image_of(out, desc).view(), src.view())) << backend << ": not drawn";
    gst_buffer_unref(out);

    g_object_set(h->element, "draw", FALSE, nullptr);
    ASSERT_EQ(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    EXPECT_TRUE(bytes_equal(image_of(out, desc).view(), src.view())) << backend << ": drawn";
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// Sizes other than 3, 5, 7 are refused at the property (the old value
// stays); a relative threshold above 1 is refused when the op is built, with
// the op's message as the element error.
// The analysis mode is a passthrough: the allocation query goes downstream.
// Where downstream offers no pool, the CUDA backend offers its pinned pool
// (each system-memory frame is uploaded: pinned memory crosses the bus ~4x
// faster than pageable), without claiming the video meta for downstream;
// the CPU backend adds nothing.
TEST(Harris, AnalysisOffersPinnedPoolWhereDownstreamHasNone) {
  const ImageDesc desc{PixelFormat::RGBA, 320, 240};
  for (const char* backend : kBackends) {
    if (skip_backend(backend))
      continue;
    const bool cuda = std::string(backend) == "cuda";
    GstHarness* h = harris_harness(desc, backend);
    GstCaps* caps = gst_caps_from_string(caps_string(desc).c_str());
    GstQuery* q = gst_query_new_allocation(caps, TRUE);
    ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q)) << backend;
    EXPECT_FALSE(gst_query_find_allocation_meta(q, GST_VIDEO_META_API_TYPE, nullptr)) << backend;
    ASSERT_EQ(gst_query_get_n_allocation_pools(q), cuda ? 1u : 0u) << backend;
    if (cuda) {
      GstBufferPool* pool = nullptr;
      guint size = 0;
      gst_query_parse_nth_allocation_pool(q, 0, &pool, &size, nullptr, nullptr);
      ASSERT_NE(pool, nullptr);
      EXPECT_GE(size, 320u * 240 * 4);
      GstStructure* config = gst_buffer_pool_get_config(pool);
      GstAllocator* alloc = nullptr;
      gst_buffer_pool_config_get_allocator(config, &alloc, nullptr);
      ASSERT_NE(alloc, nullptr);
      EXPECT_STREQ(alloc->mem_type, "CudaFxPinnedMemory");
      gst_structure_free(config);
      gst_object_unref(pool);
    }
    gst_query_unref(q);
    gst_caps_unref(caps);
    gst_harness_teardown(h);
  }
}

TEST(Harris, BadValuesAreRefused) {
  GstElement* e = gst_element_factory_make("cudaharris", nullptr);
  ASSERT_NE(e, nullptr);
  const guint handler = g_log_set_handler(
      "cudafx", G_LOG_LEVEL_WARNING, [](const gchar*, GLogLevelFlags, const gchar*, gpointer) {},
      nullptr);
  g_object_set(e, "gradient-size", 4, "block-size", 6, nullptr);
  g_log_remove_handler("cudafx", handler);
  gint g = 0, b = 0;
  g_object_get(e, "gradient-size", &g, "block-size", &b, nullptr);
  EXPECT_EQ(g, HarrisParams{}.gradient_size);
  EXPECT_EQ(b, HarrisParams{}.block_size);
  gst_object_unref(e);

  const ImageDesc desc{PixelFormat::GRAY8, 64, 48};
  const HostImage src = rectangles(desc, 10);
  GstHarness* h = harris_harness(desc, "cpu", "threshold=2.0");
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  EXPECT_NE(gst_harness_push(h, buffer_from_image(src)), GST_FLOW_OK);
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  ASSERT_NE(msg, nullptr) << "no error for a relative threshold of 2";
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  EXPECT_NE(std::string(err->message).find("threshold"), std::string::npos) << err->message;
  g_error_free(err);
  gst_message_unref(msg);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

// Frames in CUDA memory are analysed on the device and stay in CUDA memory;
// the corners are the CPU backend's.
TEST(Harris, CudaMemoryChain) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  const ImageDesc desc{PixelFormat::NV12, 160, 96};
  const HostImage src = rectangles(desc, 9);
  const std::vector<HarrisCorner> want = reference_corners(src, HarrisParams{});
  // draw=true draws on the device, in the CUDA memory: the same bytes as
  // the CPU backend drawing in system memory.
  const char* const draw_props = "draw=true draw-shape=cross draw-size=3 draw-color=0xff20c040";
  GstHarness* cpu = harris_harness(desc, "cpu", draw_props);
  ASSERT_EQ(gst_harness_push(cpu, buffer_from_image(src)), GST_FLOW_OK);
  GstBuffer* cpu_out = gst_harness_pull(cpu);
  ASSERT_NE(cpu_out, nullptr);
  const HostImage drawn = image_of(cpu_out, desc);
  gst_buffer_unref(cpu_out);
  gst_harness_teardown(cpu);
  for (const bool draw : {false, true}) {
    const std::string launch =
        std::string("cudaupload ! video/x-raw(memory:CUDAMemory) ! cudaharris name=g0 backend=cuda ") +
        (draw ? draw_props : "") + " ! cudadownload";
    GstHarness* h = gst_harness_new_parse(launch.c_str());
    set_caps(h, desc);
    GstElement* harris = gst_bin_get_by_name(GST_BIN(h->element), "g0");
    std::vector<HarrisCorner> seen;
    GstPad* pad = gst_element_get_static_pad(harris, "src");
    gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_BUFFER,
        [](GstPad*, GstPadProbeInfo* info, gpointer data) {
          *static_cast<std::vector<HarrisCorner>*>(data) =
              meta_corners(GST_PAD_PROBE_INFO_BUFFER(info));
          return GST_PAD_PROBE_OK;
        },
        &seen, nullptr);
    gst_object_unref(pad);
    const HostImage got = push_pull(h, src, 5);
    EXPECT_EQ(negotiated_memory(h), "CC") << "draw=" << draw;
    EXPECT_TRUE(bytes_equal(got.view(), draw ? drawn.view() : src.view())) << "draw=" << draw;
    EXPECT_TRUE(same_corners(seen, want)) << seen.size() << " corners, want " << want.size();
    gst_object_unref(harris);
    gst_harness_teardown(h);
  }
}
