// `memory-mode` of the filter base class: with mapped (zero-copy, the mode
// an integrated GPU such as Jetson's gets by default) the CUDA kernels read
// and write frames in system memory where they are -- buffers of our pinned
// pools as they are, other memory registered for the frame -- instead of
// going through device staging images. Every element shape (transform, in
// place, analysis with drawing, a shared frame written into a buffer of the
// element's own) must give the CPU backend's bytes, and the element's log
// must show the mapped path taken (or, with copy, not). The CUDA cases skip
// without a GPU (fail with CUDAFX_REQUIRE_GPU=1); the property's own cases
// run everywhere.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
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

// The base class's per-buffer log lines ("... (in host-mapped, out ...)"),
// collected while it lives.
class FilterLog {
 public:
  FilterLog() {
    gst_debug_set_active(TRUE);
    gst_debug_set_threshold_for_name("cudafxfilter", GST_LEVEL_LOG);
    gst_debug_add_log_function(&FilterLog::log, this, nullptr);
  }
  ~FilterLog() {
    gst_debug_remove_log_function_by_data(this);
    gst_debug_set_threshold_for_name("cudafxfilter", GST_LEVEL_NONE);
  }
  // The buffer lines seen so far, then forgotten.
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    out.swap(lines_);
    return out;
  }

 private:
  static void log(GstDebugCategory* cat, GstDebugLevel, const gchar*, const gchar*, gint, GObject*,
                  GstDebugMessage* msg, gpointer self) {
    if (std::strcmp(gst_debug_category_get_name(cat), "cudafxfilter") != 0)
      return;
    const gchar* text = gst_debug_message_get(msg);
    if (!text || !std::strstr(text, "us to finish"))
      return;
    auto* me = static_cast<FilterLog*>(self);
    std::lock_guard<std::mutex> lock(me->mutex_);
    me->lines_.push_back(text);
  }
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

bool all_contain(const std::vector<std::string>& lines, const char* what) {
  for (const std::string& l : lines)
    if (l.find(what) == std::string::npos)
      return false;
  return !lines.empty();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines)
    s += l + "\n";
  return s;
}

// `img` in a buffer of the pool the element proposes upstream (pinned
// memory with the CUDA backend), as an upstream element would allocate it.
GstBuffer* buffer_from_proposed_pool(GstHarness* h, const HostImage& img) {
  GstCaps* caps = gst_caps_from_string(caps_string(img.desc()).c_str());
  GstQuery* q = gst_query_new_allocation(caps, TRUE);
  EXPECT_TRUE(gst_pad_peer_query(h->srcpad, q));
  GstBufferPool* pool = nullptr;
  guint size = 0, min = 0, max = 0;
  GstBuffer* out = nullptr;
  if (gst_query_get_n_allocation_pools(q) > 0)
    gst_query_parse_nth_allocation_pool(q, 0, &pool, &size, &min, &max);
  EXPECT_NE(pool, nullptr) << "the element proposed no pool";
  if (pool) {
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, 1, 0);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    EXPECT_TRUE(gst_buffer_pool_set_config(pool, config));
    EXPECT_TRUE(gst_buffer_pool_set_active(pool, TRUE));
    EXPECT_EQ(gst_buffer_pool_acquire_buffer(pool, &out, nullptr), GST_FLOW_OK);
    GstVideoInfo info;
    gst_video_info_from_caps(&info, caps);
    GstVideoFrame frame;
    if (out && gst_video_frame_map(&frame, &info, out, GST_MAP_WRITE)) {
      const FormatInfo& fi = format_info(img.desc().format);
      for (int i = 0; i < fi.n_planes; i++) {
        const PlaneView p = img.view().plane(i);
        auto* dst = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, i));
        const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, i);
        for (int y = 0; y < p.height; y++)
          std::memcpy(dst + static_cast<size_t>(y) * stride, p.data + y * p.pitch, p.row_bytes());
      }
      gst_video_frame_unmap(&frame);
    }
    // The buffer keeps the pool alive until it is freed; the pool stays
    // active (buffers return to it).
    gst_object_unref(pool);
  }
  gst_query_unref(q);
  gst_caps_unref(caps);
  return out;
}

struct Case {
  const char* factory;
  const char* props;  // the element's own
  PixelFormat format;
  const char* out_caps;  // "" : the input's
};

// One case of each base-class shape: transform (same size, another size,
// three planes), in place, analysis that draws.
const Case kCases[] = {
    {"cudagaussian", "kernel-size=5 sigma=1.5", PixelFormat::RGBA, ""},
    {"cudagaussian", "kernel-size=3 sigma=0.8", PixelFormat::I420, ""},
    {"cudaupscale", "method=bicubic", PixelFormat::NV12, "video/x-raw,format=NV12,width=262,height=154"},
    {"cudagreyworld", "", PixelFormat::RGBA, ""},
    {"cudaharris", "draw=true gradient-size=5 block-size=5", PixelFormat::RGBA, ""},
};

HostImage run_case(const Case& c, const char* backend_props, const HostImage& src, bool pinned,
                   FilterLog* log, std::vector<std::string>* lines) {
  GstHarness* h = harness_with(c.factory, std::string(c.props) + " " + backend_props);
  const std::string in_caps = caps_string(src.desc());
  gst_harness_set_caps_str(h, in_caps.c_str(), *c.out_caps ? c.out_caps : in_caps.c_str());
  log->take();
  GstBuffer* in = pinned ? buffer_from_proposed_pool(h, src) : buffer_from_image(src, 24);
  HostImage got;
  if (in) {
    EXPECT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    EXPECT_NE(out, nullptr);
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    GstVideoInfo info;
    if (out && caps && gst_video_info_from_caps(&info, caps)) {
      const ImageDesc d{src.desc().format, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info)};
      EXPECT_TRUE(image_from_buffer(out, d, &got));
    }
    if (caps)
      gst_caps_unref(caps);
    if (out)
      gst_buffer_unref(out);
  }
  *lines = log->take();
  gst_harness_teardown(h);
  return got;
}

std::string describe(const Case& c) {
  return std::string(c.factory) + " " + c.props + " " + format_info(c.format).name;
}

}  // namespace

// The property: on every filter element, an enum read at start, auto by
// default.
TEST(MemoryMode, IsAPropertyOfEveryFilter) {
  for (const char* f : {"cudagaussian", "cudaupscale", "cudaharris", "cudagreyworld",
                        "cudaautocontrast", "cudaconvolve", "cudacanny", "cudatextoverlay"}) {
    if (!have_element(f))
      continue;
    GstElement* e = gst_element_factory_make(f, nullptr);
    ASSERT_NE(e, nullptr) << f;
    GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "memory-mode");
    ASSERT_NE(spec, nullptr) << f;
    EXPECT_TRUE(G_IS_PARAM_SPEC_ENUM(spec)) << f;
    EXPECT_TRUE(spec->flags & GST_PARAM_MUTABLE_READY) << f << ": read at start";
    GValue v = G_VALUE_INIT;
    g_value_init(&v, spec->value_type);
    g_object_get_property(G_OBJECT(e), "memory-mode", &v);
    GEnumValue* ev = g_enum_get_value(G_ENUM_CLASS(g_type_class_peek(spec->value_type)), g_value_get_enum(&v));
    ASSERT_NE(ev, nullptr);
    EXPECT_STREQ(ev->value_nick, "auto") << f;
    g_value_unset(&v);
    for (const char* nick : {"copy", "mapped", "auto"}) {
      gst_util_set_object_arg(G_OBJECT(e), "memory-mode", nick);
      g_value_init(&v, spec->value_type);
      g_object_get_property(G_OBJECT(e), "memory-mode", &v);
      ev = g_enum_get_value(G_ENUM_CLASS(g_type_class_peek(spec->value_type)), g_value_get_enum(&v));
      ASSERT_NE(ev, nullptr);
      EXPECT_STREQ(ev->value_nick, nick) << f;
      g_value_unset(&v);
    }
    gst_object_unref(e);
  }
}

// The CPU backend has no device: the mode changes nothing.
TEST(MemoryMode, CpuBackendIgnoresIt) {
  FilterLog log;
  const HostImage src = [] {
    HostImage img({PixelFormat::RGBA, 131, 77});
    img.fill_random(5);
    return img;
  }();
  std::vector<std::string> lines;
  const Case& c = kCases[0];
  const HostImage a = run_case(c, "backend=cpu memory-mode=mapped", src, false, &log, &lines);
  const HostImage b = run_case(c, "backend=cpu memory-mode=copy", src, false, &log, &lines);
  ASSERT_EQ(a.desc().width, 131);
  EXPECT_TRUE(bytes_equal(a.view(), b.view()));
}

// Mapped: the CPU's bytes from pageable memory (registered for the frame)
// and from the element's proposed (pinned) pool, each buffer logged as
// mapped on the way in and, for a new buffer, on the way out.
TEST(MemoryMode, MappedGivesTheCpuBytesInEveryShape) {
  SKIP_WITHOUT_GPU();
  FilterLog log;
  uint32_t seed = 100;
  for (const Case& c : kCases) {
    HostImage src({c.format, 131, 77});
    src.fill_random(seed++);
    std::vector<std::string> lines;
    const HostImage cpu = run_case(c, "backend=cpu", src, false, &log, &lines);
    ASSERT_GT(cpu.desc().width, 0) << describe(c);
    for (bool pinned : {false, true}) {
      const HostImage got = run_case(c, "backend=cuda memory-mode=mapped", src, pinned, &log, &lines);
      EXPECT_TRUE(bytes_equal(got.view(), cpu.view()))
          << describe(c) << (pinned ? ", pinned" : ", pageable");
      EXPECT_TRUE(all_contain(lines, "(in host-mapped,"))
          << describe(c) << (pinned ? ", pinned" : ", pageable") << ": not mapped\n" << joined(lines);
      if (*c.out_caps || std::string(c.factory) == "cudagaussian") {  // a new buffer
        EXPECT_TRUE(all_contain(lines, "out host-mapped")) << describe(c) << "\n" << joined(lines);
      }
    }
  }
}

// Copy (the default on a discrete GPU): the same bytes through device
// staging images; nothing mapped.
TEST(MemoryMode, CopyAndAutoOnADiscreteGpuCopy) {
  SKIP_WITHOUT_GPU();
  bool integrated = false;
  {
    ASSERT_TRUE(cuda_use_device(0).is_ok());
    ASSERT_TRUE(cuda_device_integrated(&integrated).is_ok());
  }
  FilterLog log;
  HostImage src({PixelFormat::RGBA, 131, 77});
  src.fill_random(7);
  const Case& c = kCases[0];
  std::vector<std::string> lines;
  const HostImage cpu = run_case(c, "backend=cpu", src, false, &log, &lines);
  for (const char* mode : {"copy", "auto"}) {
    const HostImage got =
        run_case(c, std::string("backend=cuda memory-mode=").append(mode).c_str(), src, true, &log, &lines);
    EXPECT_TRUE(bytes_equal(got.view(), cpu.view())) << mode;
    const bool expect_mapped = std::string(mode) == "auto" && integrated;
    EXPECT_EQ(all_contain(lines, "(in host-mapped,"), expect_mapped) << mode << "\n" << joined(lines);
    EXPECT_TRUE(all_contain(lines, expect_mapped ? "(in host-mapped," : "(in host,"))
        << mode << "\n" << joined(lines);
  }
}

// A frame others hold too, in place: the element writes its result into a
// buffer of its own (pinned) where it is, and leaves the shared frame as it
// was.
TEST(MemoryMode, MappedSharedFrameIsLeftAlone) {
  SKIP_WITHOUT_GPU();
  FilterLog log;
  const ImageDesc d{PixelFormat::RGBA, 131, 77};
  HostImage src(d);
  src.fill_random(9);
  std::vector<std::string> lines;
  const HostImage cpu = run_case(kCases[3], "backend=cpu", src, false, &log, &lines);
  GstHarness* h = harness_with("cudagreyworld", "backend=cuda memory-mode=mapped");
  set_caps(h, d);
  log.take();
  GstBuffer* in = buffer_from_image(src);
  gst_buffer_ref(in);  // ours too: not writable
  ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  EXPECT_NE(out, in);
  HostImage got, kept;
  ASSERT_TRUE(image_from_buffer(out, d, &got));
  ASSERT_TRUE(image_from_buffer(in, d, &kept));
  EXPECT_TRUE(bytes_equal(got.view(), cpu.view()));
  EXPECT_TRUE(bytes_equal(kept.view(), src.view())) << "the shared frame was written";
  lines = log.take();
  EXPECT_TRUE(all_contain(lines, "shared frame:")) << joined(lines);
  EXPECT_TRUE(all_contain(lines, ", mapped)")) << joined(lines);
  gst_buffer_unref(out);
  gst_buffer_unref(in);
  gst_harness_teardown(h);
}
