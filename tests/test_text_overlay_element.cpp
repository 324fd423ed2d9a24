// cudatextoverlay as GStreamer sees it: text placed and drawn as the stock
// textoverlay draws it (the changed pixels agree), times as timeoverlay
// writes them, upstream overlay rectangles blended exactly as the blend op
// blends them and their meta removed, properties while playing, and input
// that must not break it; CPU backend, and the CUDA backend equal to it where
// there is a GPU, in system and CUDA memory.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "cudafx/overlay_blend.hpp"
#include "gstcudafxtimetext.h"
#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

const char* const kFont = "font-desc=\"DejaVu Sans 20\"";

// A textured frame (never flat): dark noise.
HostImage background(const ImageDesc& desc, uint32_t seed) {
  HostImage img(desc, 3);
  img.fill_random(seed);
  const FormatInfo& fi = format_info(desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = img.view().plane(i);
    for (int y = 0; y < p.height; y++)
      for (size_t x = 0; x < p.row_bytes(); x++) {
        uint8_t& v = p.data[y * p.pitch + x];
        v = static_cast<uint8_t>(i == 0 ? 40 + v / 8 : 128 + (v & 7));
      }
  }
  return img;
}

// Runs `element props` (gst-launch syntax) on one frame with timestamp
// `pts` and returns the output frame.
HostImage run_once(const char* element, const std::string& props, const HostImage& src,
                   GstClockTime pts = 0, GstBuffer** out_buffer = nullptr,
                   GstBuffer* (*decorate)(GstBuffer*) = nullptr) {
  GstElement* e = gst_element_factory_make(element, nullptr);
  EXPECT_NE(e, nullptr) << element;
  gchar** argv = nullptr;
  // Property values may be quoted: split like a shell.
  EXPECT_TRUE(g_shell_parse_argv(props.empty() ? "x" : ("x " + props).c_str(), nullptr, &argv, nullptr));
  for (gchar** kv = argv + 1; argv && *kv; kv++) {
    gchar** nv = g_strsplit(*kv, "=", 2);
    if (nv[0] && nv[1])
      gst_util_set_object_arg(G_OBJECT(e), nv[0], nv[1]);
    g_strfreev(nv);
  }
  g_strfreev(argv);
  const bool stock = std::string(element) != "cudatextoverlay";
  GstHarness* h = gst_harness_new_with_element(e, stock ? "video_sink" : "sink", "src");
  gst_object_unref(e);
  set_caps(h, src.desc());
  GstBuffer* in = buffer_from_image(src);
  GST_BUFFER_PTS(in) = pts;
  GST_BUFFER_DURATION(in) = GST_SECOND / 30;
  if (decorate)
    in = decorate(in);
  EXPECT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  HostImage img;
  EXPECT_NE(out, nullptr);
  if (out) {
    EXPECT_TRUE(image_from_buffer(out, src.desc(), &img));
    if (out_buffer)
      *out_buffer = out;
    else
      gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
  return img;
}

// Whether byte c of a pixel of plane 0 is padding (the x of RGBx, BGRx),
// which the formats leave undefined: the stock element fills it, we keep it.
bool padding(const HostImage& img, int c) {
  const PixelFormat f = img.desc().format;
  return c == 3 && (f == PixelFormat::RGBx || f == PixelFormat::BGRx);
}

// Pixels (of plane 0) that differ from the source.
std::vector<bool> changed(const HostImage& src, const HostImage& out) {
  const PlaneView a = src.view().plane(0), b = out.view().plane(0);
  std::vector<bool> m(static_cast<size_t>(a.width) * a.height);
  for (int y = 0; y < a.height; y++)
    for (int x = 0; x < a.width; x++)
      for (int c = 0; c < a.channels; c++)
        if (!padding(src, c) &&
            a.data[y * a.pitch + x * a.channels + c] != b.data[y * b.pitch + x * b.channels + c])
          m[static_cast<size_t>(y) * a.width + x] = true;
  return m;
}

struct Agreement {
  double iou = 0;
  double mean_abs = 0;  // over the union of changed pixels, per byte of plane 0
  int changed_a = 0;
};

Agreement agreement(const HostImage& src, const HostImage& a, const HostImage& b) {
  const std::vector<bool> ma = changed(src, a), mb = changed(src, b);
  Agreement r;
  int inter = 0, uni = 0, bytes = 0;
  double sum = 0;
  const PlaneView pa = a.view().plane(0), pb = b.view().plane(0);
  for (size_t i = 0; i < ma.size(); i++) {
    inter += ma[i] && mb[i];
    r.changed_a += ma[i];
    if (ma[i] || mb[i]) {
      uni++;
      const int y = static_cast<int>(i / pa.width), x = static_cast<int>(i % pa.width);
      for (int c = 0; c < pa.channels; c++) {
        if (padding(src, c))
          continue;
        sum += std::abs(pa.data[y * pa.pitch + x * pa.channels + c] -
                        pb.data[y * pb.pitch + x * pb.channels + c]);
        bytes++;
      }
    }
  }
  r.iou = uni ? double(inter) / uni : 1.0;
  r.mean_abs = bytes ? sum / bytes : 0.0;
  return r;
}

// The same text, font and placement as the stock textoverlay: the pixels
// the text changes agree (IoU >= 0.95) and differ little where they do
// (mean |difference| <= 12 of 255 over the changed pixels: both draw the
// same Cairo image; the stock element blends it with its own integer
// rounding and, for YUV, its own conversion).
TEST(TextOverlay, MatchesStockTextoverlay) {
  if (!have_element("textoverlay"))
    GTEST_SKIP() << "no textoverlay (gstreamer1.0-x)";
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGRx, PixelFormat::I420, PixelFormat::NV12}) {
    const ImageDesc desc{f, 320, 240};
    const HostImage src = background(desc, 5);
    for (const char* place : {"halignment=left valignment=top", "halignment=center valignment=baseline",
                              "halignment=right valignment=bottom xpad=10 ypad=7 deltax=-3",
                              "halignment=left valignment=top shaded-background=true shading-value=60"}) {
      const std::string props = std::string(kFont) + " text=\"Camera <b>1</b> 12:34\" " + place;
      const HostImage stock = run_once("textoverlay", props, src);
      for (const char* backend : kBackends) {
        if (skip_backend(backend))
          continue;
        const HostImage ours = run_once("cudatextoverlay", props + " backend=" + backend, src);
        const Agreement a = agreement(src, ours, stock);
        EXPECT_GT(a.changed_a, 300) << format_info(f).name << " " << place << " " << backend;
        EXPECT_GE(a.iou, 0.95) << format_info(f).name << " " << place << " " << backend;
        EXPECT_LE(a.mean_abs, 12.0) << format_info(f).name << " " << place << " " << backend;
      }
    }
  }
}

// The CUDA backend writes the same bytes as the CPU backend, in every
// format, in system memory (where it blends on the host: process_ip_host).
TEST(TextOverlay, CudaEqualsCpu) {
  SKIP_WITHOUT_GPU();
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::RGB, PixelFormat::GRAY8,
                        PixelFormat::I420, PixelFormat::NV12, PixelFormat::Y444}) {
    const ImageDesc desc{f, 203, 117};
    const HostImage src = background(desc, 9);
    const std::string props = std::string(kFont) + " text=\"GPU 0:00:01.000\" valignment=top";
    const HostImage cpu = run_once("cudatextoverlay", props + " backend=cpu", src);
    const HostImage cuda = run_once("cudatextoverlay", props + " backend=cuda", src);
    EXPECT_TRUE(bytes_equal(cpu.view(), cuda.view())) << format_info(f).name;
  }
}

// timeoverlay's strings.
TEST(TextOverlay, TimeStrings) {
  EXPECT_EQ(gst_cuda_fx_format_stream_time(0), "0:00:00.000");
  EXPECT_EQ(gst_cuda_fx_format_stream_time(3723 * GST_SECOND + 4 * GST_MSECOND + 999 * GST_USECOND),
            "1:02:03.004");
  EXPECT_EQ(gst_cuda_fx_format_stream_time(100 * 3600 * GST_SECOND), "100:00:00.000");
  EXPECT_EQ(gst_cuda_fx_format_stream_time(GST_CLOCK_TIME_NONE), "");
  EXPECT_EQ(gst_cuda_fx_join_text("Cam", "0:00:01.000", "", false), "Cam 0:00:01.000");
  EXPECT_EQ(gst_cuda_fx_join_text("Cam", "0:00:01.000", "12:00:00", true), "0:00:01.000 12:00:00 Cam");
  EXPECT_EQ(gst_cuda_fx_join_text("", "", "", false), "");
  GDateTime* t = g_date_time_new_utc(2026, 11, 23, 7, 8, 9);
  EXPECT_EQ(gst_cuda_fx_format_clock(t, "%H:%M:%S"), "07:08:09");
  EXPECT_EQ(gst_cuda_fx_format_clock(t, "%Y-%m-%d"), "2026-11-23");
  EXPECT_EQ(gst_cuda_fx_format_clock(t, ""), "");
  g_date_time_unref(t);
  GstBuffer* b = gst_buffer_new();
  EXPECT_EQ(gst_cuda_fx_format_time_code(b), "");
  GstVideoTimeCode* tc = gst_video_time_code_new(25, 1, nullptr, GST_VIDEO_TIME_CODE_FLAGS_NONE,
                                                 10, 20, 30, 12, 0);
  gst_buffer_add_video_time_code_meta(b, tc);
  EXPECT_EQ(gst_cuda_fx_format_time_code(b), "10:20:30:12");
  gst_video_time_code_free(tc);
  gst_buffer_unref(b);
}

// time-mode=buffer-time draws what timeoverlay draws for the same
// timestamp (it puts the time after the text, as we do).
TEST(TextOverlay, BufferTimeMatchesTimeoverlay) {
  if (!have_element("timeoverlay"))
    GTEST_SKIP() << "no timeoverlay (gstreamer1.0-x)";
  const ImageDesc desc{PixelFormat::RGBA, 320, 240};
  const HostImage src = background(desc, 11);
  const GstClockTime pts = 3723 * GST_SECOND + 4 * GST_MSECOND;
  const std::string place = std::string(kFont) + " text=Cam halignment=left valignment=top";
  const HostImage stock = run_once("timeoverlay", place, src, pts);
  const HostImage ours = run_once("cudatextoverlay", place + " time-mode=buffer-time backend=cpu", src, pts);
  const Agreement a = agreement(src, ours, stock);
  EXPECT_GE(a.iou, 0.95);
  EXPECT_LE(a.mean_abs, 12.0);
  // A different time ("2:13:14.115": every digit another) draws other
  // pixels.
  const HostImage later = run_once("cudatextoverlay", place + " time-mode=buffer-time backend=cpu", src,
                                   pts + 4271 * GST_SECOND + 111 * GST_MSECOND);
  EXPECT_LT(agreement(src, later, stock).iou, 0.95);
}

GstBuffer* with_composition(GstBuffer* b) {
  // A 20x10 half-transparent red rectangle (premultiplied B, G, R, A) at
  // (30, 40), and a 5x5 opaque green one at (-2, 200).
  auto rect = [](int w, int h, const uint8_t bgra[4], int x, int y) {
    GstBuffer* px = gst_buffer_new_allocate(nullptr, w * h * 4, nullptr);
    GstMapInfo m;
    gst_buffer_map(px, &m, GST_MAP_WRITE);
    for (int i = 0; i < w * h; i++)
      std::copy(bgra, bgra + 4, m.data + i * 4);
    gst_buffer_unmap(px, &m);
    gst_buffer_add_video_meta(px, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_OVERLAY_COMPOSITION_FORMAT_RGB,
                              w, h);
    GstVideoOverlayRectangle* r = gst_video_overlay_rectangle_new_raw(
        px, x, y, w, h, GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED_ALPHA);
    gst_buffer_unref(px);
    return r;
  };
  const uint8_t red[4] = {0, 0, 128, 128}, green[4] = {0, 255, 0, 255};
  GstVideoOverlayRectangle* r1 = rect(20, 10, red, 30, 40);
  GstVideoOverlayRectangle* r2 = rect(5, 5, green, -2, 200);
  GstVideoOverlayComposition* c = gst_video_overlay_composition_new(r1);
  gst_video_overlay_composition_add_rectangle(c, r2);
  gst_video_overlay_rectangle_unref(r1);
  gst_video_overlay_rectangle_unref(r2);
  b = gst_buffer_make_writable(b);
  gst_buffer_add_video_overlay_composition_meta(b, c);
  gst_video_overlay_composition_unref(c);
  return b;
}

// Upstream rectangles are blended exactly as the blend op blends them, and
// the meta leaves with them; nothing else changes without text.
TEST(TextOverlay, BlendsUpstreamCompositions) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    const ImageDesc desc{f, 96, 240};
    const HostImage src = background(desc, 13);
    HostImage want(desc);
    want.copy_from(src.view());
    const uint8_t red[4] = {0, 0, 128, 128}, green[4] = {0, 255, 0, 255};
    std::vector<uint8_t> r1(20 * 10 * 4), r2(5 * 5 * 4);
    for (size_t i = 0; i < r1.size(); i += 4)
      std::copy(red, red + 4, &r1[i]);
    for (size_t i = 0; i < r2.size(); i += 4)
      std::copy(green, green + 4, &r2[i]);
    OverlayColorimetry col;  // BT.601 limited: what caps_string's caps say for YUV
    ASSERT_TRUE(blend_overlay(Backend::Cpu, nullptr, want.view(), OverlayImage{r1.data(), 80, 20, 10},
                              30, 40, col).is_ok());
    ASSERT_TRUE(blend_overlay(Backend::Cpu, nullptr, want.view(), OverlayImage{r2.data(), 20, 5, 5},
                              -2, 200, col).is_ok());
    for (const char* backend : kBackends) {
      if (skip_backend(backend))
        continue;
      GstBuffer* out = nullptr;
      const HostImage got = run_once("cudatextoverlay", std::string("backend=") + backend, src, 0, &out,
                                     with_composition);
      EXPECT_TRUE(bytes_equal(got.view(), want.view())) << format_info(f).name << " " << backend;
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(gst_buffer_get_video_overlay_composition_meta(out), nullptr) << "meta not removed";
      gst_buffer_unref(out);
    }
  }
}

// silent=true: frame and meta pass unchanged.
TEST(TextOverlay, SilentPassesEverything) {
  const ImageDesc desc{PixelFormat::RGBA, 96, 64};
  const HostImage src = background(desc, 17);
  GstBuffer* out = nullptr;
  const HostImage got = run_once("cudatextoverlay", "backend=cpu silent=true text=Hello", src, 0, &out,
                                 with_composition);
  EXPECT_TRUE(bytes_equal(got.view(), src.view()));
  ASSERT_NE(out, nullptr);
  EXPECT_NE(gst_buffer_get_video_overlay_composition_meta(out), nullptr);
  gst_buffer_unref(out);
}

// The element asks upstream for overlay metas instead of blended pixels.
TEST(TextOverlay, OffersTheCompositionMeta) {
  const ImageDesc desc{PixelFormat::RGBA, 64, 48};
  GstHarness* h = harness_with("cudatextoverlay", "backend=cpu");
  set_caps(h, desc);
  GstCaps* c = gst_caps_from_string(caps_string(desc).c_str());
  GstQuery* q = gst_query_new_allocation(c, TRUE);
  ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q));
  EXPECT_TRUE(gst_query_find_allocation_meta(q, GST_VIDEO_OVERLAY_COMPOSITION_META_API_TYPE, nullptr));
  gst_query_unref(q);
  gst_caps_unref(c);
  GstPad* sink = gst_element_get_static_pad(h->element, "sink");
  GstCaps* tmpl = gst_pad_get_pad_template_caps(sink);
  bool has_feature = false;
  for (guint i = 0; i < gst_caps_get_size(tmpl); i++)
    has_feature |= gst_caps_features_contains(gst_caps_get_features(tmpl, i),
                                              GST_CAPS_FEATURE_META_GST_VIDEO_OVERLAY_COMPOSITION);
  EXPECT_TRUE(has_feature);
  gst_caps_unref(tmpl);
  gst_object_unref(sink);
  gst_harness_teardown(h);
}

// Text changed while playing is drawn on the next frame; empty text draws
// nothing.
TEST(TextOverlay, PropertiesWhilePlaying) {
  const ImageDesc desc{PixelFormat::RGBA, 160, 90};
  const HostImage src = background(desc, 19);
  GstHarness* h = harness_with("cudatextoverlay", std::string("backend=cpu ") + kFont + " text=One");
  set_caps(h, desc);
  const HostImage one = push_pull(h, src);
  g_object_set(h->element, "text", "Two", nullptr);
  const HostImage two = push_pull(h, src);
  g_object_set(h->element, "text", "", nullptr);
  const HostImage none = push_pull(h, src);
  g_object_set(h->element, "text", "One", nullptr);
  const HostImage again = push_pull(h, src);
  EXPECT_FALSE(bytes_equal(one.view(), two.view()));
  EXPECT_TRUE(bytes_equal(none.view(), src.view()));
  EXPECT_TRUE(bytes_equal(again.view(), one.view()));
  gst_harness_teardown(h);
}

// Odd input: no crash, a frame out, and the documented behaviour.
TEST(TextOverlay, OddInputs) {
  struct Case {
    ImageDesc desc;
    std::string props;
  };
  const std::string long_text(5000, 'w');
  const Case cases[] = {
      {{PixelFormat::RGBA, 1, 1}, "text=Hello"},
      {{PixelFormat::I420, 3, 3}, "text=Hello"},
      {{PixelFormat::NV12, 64, 32}, "text=\"" + long_text + "\""},
      {{PixelFormat::RGBA, 64, 32}, "font-desc=\"DejaVu Sans 200\" text=Huge"},
      {{PixelFormat::GRAY8, 64, 32}, "text=\"\xff\xfe bad <b\""},
      {{PixelFormat::Y444, 64, 32}, "text=\"x\" deltax=-1000 deltay=5000"},
      {{PixelFormat::RGB, 64, 32}, "text=\"x\" time-mode=time-code clock=true time-format=\"%Q\""},
  };
  for (const Case& c : cases) {
    const HostImage src = background(c.desc, 23);
    const HostImage out = run_once("cudatextoverlay", "backend=cpu " + c.props, src);
    EXPECT_EQ(out.desc().width, c.desc.width) << c.props.substr(0, 40);
  }
}

// In a chain, the element's unlinked text_sink pad is not where the video
// goes (gst_harness_new_parse() would push it there: not-negotiated); the
// chain's bytes are the lone element's.
TEST(TextOverlay, InAChainWithTheTextPadUnlinked) {
  const ImageDesc desc{PixelFormat::NV12, 160, 90};
  const HostImage src = background(desc, 37);
  const std::string props = std::string(kFont) + " text=Chain backend=cpu";
  const HostImage alone = run_once("cudatextoverlay", props, src);
  GstHarness* h = harness_parse("identity ! cudatextoverlay " + props + " ! identity");
  set_caps(h, desc);
  GstBuffer* in = buffer_from_image(src);
  GST_BUFFER_PTS(in) = 0;
  GST_BUFFER_DURATION(in) = GST_SECOND / 30;
  ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  HostImage got;
  ASSERT_TRUE(image_from_buffer(out, desc, &got));
  gst_buffer_unref(out);
  EXPECT_TRUE(bytes_equal(got.view(), alone.view()));
  EXPECT_FALSE(bytes_equal(got.view(), src.view()));
  gst_harness_teardown(h);
}

// Frames in CUDA memory stay there and get the CPU backend's bytes: whole
// text images (blend_overlay) and atlas glyphs (blend_overlay_list), every
// format CUDA memory carries.
TEST(TextOverlay, CudaMemoryChain) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::I420, PixelFormat::NV12,
                        PixelFormat::Y444}) {
    const ImageDesc desc{f, 320, 180};
    const HostImage src = background(desc, 29);
    for (const char* text : {"text=\"On the <i>GPU</i>\"", "text=Cam time-mode=buffer-time"}) {
      const std::string props = std::string(kFont) + " " + text;
      const HostImage cpu = run_once("cudatextoverlay", props + " backend=cpu", src, GST_SECOND);
      GstHarness* h = harness_parse(
          "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudatextoverlay name=g0 backend=cuda " +
          props + " ! cudadownload");
      set_caps(h, desc);
      GstBuffer* in = buffer_from_image(src);
      GST_BUFFER_PTS(in) = GST_SECOND;
      ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
      GstBuffer* out = gst_harness_pull(h);
      HostImage got;
      ASSERT_TRUE(image_from_buffer(out, desc, &got));
      gst_buffer_unref(out);
      EXPECT_EQ(negotiated_memory(h), "CC") << format_info(f).name;
      EXPECT_TRUE(bytes_equal(got.view(), cpu.view())) << format_info(f).name << " " << text;
      gst_harness_teardown(h);
    }
  }
}

}  // namespace

namespace {

struct LogCounts {
  int rendered = 0, atlas = 0;
};

void count_log(GstDebugCategory* cat, GstDebugLevel, const gchar*, const gchar*, gint, GObject*,
               GstDebugMessage* message, gpointer data) {
  if (std::string(gst_debug_category_get_name(cat)) != "cudatextoverlay")
    return;
  const std::string m = gst_debug_message_get(message);
  auto* c = static_cast<LogCounts*>(data);
  c->rendered += m.rfind("rendered '", 0) == 0;
  c->atlas += m.rfind("glyph atlas", 0) == 0;
}

// A time that changes every frame is drawn from the glyph atlas: built
// once, no Pango rendering per frame; each frame's pixels are those of the
// frame's own time (equal frames for equal times, different otherwise).
TEST(TextOverlay, ChangingTimeUsesTheGlyphAtlas) {
  const ImageDesc desc{PixelFormat::NV12, 320, 180};
  const HostImage src = background(desc, 31);
  LogCounts counts;
  gst_debug_set_threshold_for_name("cudatextoverlay", GST_LEVEL_LOG);
  gst_debug_add_log_function(count_log, &counts, nullptr);
  GstHarness* h = harness_with("cudatextoverlay", std::string("backend=cpu ") + kFont +
                                                      " text=Cam time-mode=buffer-time");
  set_caps(h, desc);
  std::vector<HostImage> frames;
  for (int i = 0; i < 12; i++) {
    GstBuffer* in = buffer_from_image(src);
    GST_BUFFER_PTS(in) = (i % 6) * 137 * GST_MSECOND;  // six times, twice
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    HostImage img;
    ASSERT_TRUE(image_from_buffer(out, desc, &img));
    gst_buffer_unref(out);
    frames.push_back(std::move(img));
  }
  gst_harness_teardown(h);
  gst_debug_remove_log_function(count_log);
  gst_debug_set_threshold_for_name("cudatextoverlay", GST_LEVEL_NONE);
  EXPECT_EQ(counts.rendered, 0) << "Pango rendered a frame's string";
  EXPECT_EQ(counts.atlas, 1) << "the atlas was built more than once";
  for (int i = 0; i < 6; i++) {
    EXPECT_TRUE(bytes_equal(frames[i].view(), frames[i + 6].view())) << i;
    EXPECT_FALSE(bytes_equal(frames[i].view(), frames[(i + 1) % 6].view())) << i;
  }
}

}  // namespace

namespace {

// A cudatextoverlay with harnesses on its video pads and on text_sink.
struct TextPadRig {
  GstElement* element = nullptr;
  GstHarness* video = nullptr;
  GstHarness* text = nullptr;
  TextPadRig(const ImageDesc& desc, const std::string& props, const char* text_format) {
    GstHarness* tmp = harness_with("cudatextoverlay", props);  // properties set before start
    element = GST_ELEMENT(gst_object_ref(tmp->element));
    gst_harness_teardown(tmp);
    video = gst_harness_new_with_element(element, "sink", "src");
    text = gst_harness_new_with_element(element, "text_sink", nullptr);
    const std::string caps = caps_string(desc);
    gst_harness_set_caps_str(video, caps.c_str(), caps.c_str());
    gst_harness_set_src_caps_str(text, (std::string("text/x-raw,format=") + text_format).c_str());
  }
  ~TextPadRig() {
    gst_harness_teardown(text);
    gst_harness_teardown(video);
    gst_object_unref(element);
  }
  void push_text(const char* s, GstClockTime pts, GstClockTime dur) {
    GstBuffer* b = gst_buffer_new_memdup(s, strlen(s));
    GST_BUFFER_PTS(b) = pts;
    GST_BUFFER_DURATION(b) = dur;
    ASSERT_EQ(gst_harness_push(text, b), GST_FLOW_OK);
  }
  HostImage frame(const HostImage& src, GstClockTime pts) {
    GstBuffer* in = buffer_from_image(src);
    GST_BUFFER_PTS(in) = pts;
    GST_BUFFER_DURATION(in) = GST_SECOND / 30;
    EXPECT_EQ(gst_harness_push(video, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(video);
    HostImage img;
    EXPECT_TRUE(out && image_from_buffer(out, src.desc(), &img));
    if (out)
      gst_buffer_unref(out);
    return img;
  }
};

// Timed text from text_sink shows on the frames its time overlaps, in place
// of the text property; utf8 text is not markup; after the text stream's
// end, frames do not wait.
TEST(TextOverlay, TextPadShowsTimedText) {
  const ImageDesc desc{PixelFormat::RGBA, 200, 100};
  const HostImage src = background(desc, 37);
  const std::string props = std::string("backend=cpu ") + kFont + " text=Property";
  const HostImage want = run_once("cudatextoverlay", props + " text=\"1 &lt; 2\"", src, GST_SECOND);
  TextPadRig rig(desc, props, "utf8");
  rig.push_text("1 < 2\n", GST_SECOND / 2, GST_SECOND);
  ASSERT_TRUE(gst_harness_push_event(rig.text, gst_event_new_eos()));
  const HostImage before = rig.frame(src, 0);
  const HostImage during = rig.frame(src, GST_SECOND);
  const HostImage after = rig.frame(src, 2 * GST_SECOND);
  EXPECT_TRUE(bytes_equal(before.view(), src.view())) << "text shown before its time";
  EXPECT_TRUE(bytes_equal(during.view(), want.view())) << "the text pad's text not shown as written";
  EXPECT_TRUE(bytes_equal(after.view(), src.view())) << "text shown after its end";
}

// pango-markup text is markup.
TEST(TextOverlay, TextPadMarkup) {
  const ImageDesc desc{PixelFormat::NV12, 200, 100};
  const HostImage src = background(desc, 41);
  const std::string props = std::string("backend=cpu ") + kFont;
  const HostImage want = run_once("cudatextoverlay", props + " text=\"<b>Bold</b>\"", src, 0);
  TextPadRig rig(desc, props, "pango-markup");
  rig.push_text("<b>Bold</b>", 0, GST_SECOND);
  ASSERT_TRUE(gst_harness_push_event(rig.text, gst_event_new_eos()));
  EXPECT_TRUE(bytes_equal(rig.frame(src, GST_SECOND / 2).view(), want.view()));
}

// wait-text=false: frames pass with what has arrived (nothing), at once.
TEST(TextOverlay, TextPadWithoutWaiting) {
  const ImageDesc desc{PixelFormat::RGBA, 64, 32};
  const HostImage src = background(desc, 43);
  TextPadRig rig(desc, std::string("backend=cpu wait-text=false ") + kFont, "utf8");
  EXPECT_TRUE(bytes_equal(rig.frame(src, 0).view(), src.view()));
}

// A frame waiting for text (wait-text, no text, no end of stream) is
// released when the element stops: no hang.
TEST(TextOverlay, WaitingFrameReleasedOnStop) {
  const ImageDesc desc{PixelFormat::RGBA, 64, 32};
  const HostImage src = background(desc, 47);
  TextPadRig rig(desc, std::string("backend=cpu ") + kFont, "utf8");
  GstBuffer* in = buffer_from_image(src);
  GST_BUFFER_PTS(in) = 0;
  GstFlowReturn ret = GST_FLOW_OK;
  std::thread pusher([&] { ret = gst_harness_push(rig.video, in); });
  // Whether the push has begun waiting yet or not, stopping must end it.
  EXPECT_EQ(gst_element_set_state(rig.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  pusher.join();
  EXPECT_TRUE(ret == GST_FLOW_FLUSHING || ret == GST_FLOW_OK) << gst_flow_get_name(ret);
}

}  // namespace
