// cuda-device-id and CUDA contexts across devices (issue #19):
//  - an id past the last device is an error at start that names the id and
//    the count, with backend=cuda and backend=auto (one device is enough);
//  - every element on device 1 gives the bytes it gives on device 0, from
//    system memory and from CUDA memory (two devices);
//  - a tee whose two branches (cudagaussian ! cudaupscale ! cudadeltaenc in
//    CUDA memory) run on devices 0 and 1 gives, in each branch, the stream of
//    the same chain alone on device 0;
//  - an element whose neighbours share a context of another device keeps a
//    context of its own device and reads their frames through a copy (two
//    devices); the same rule between two contexts of one device (one device,
//    with libgstcuda).
// Which context an element uses is read from its answer to a
// "gst.cuda.context" query, as a neighbour would read it.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/cudafx/gstcudafxcornersmeta.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#if CUDAFX_TEST_GSTCUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "support/gpu.hpp"
#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/harness.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// The CUDA context `e` answers a context query with on its src pad: its
// device (-1 when it answers none) and, through `object`, the context.
int context_device(GstElement* e, gpointer* object = nullptr) {
  GstPad* pad = gst_element_get_static_pad(e, "src");
  EXPECT_NE(pad, nullptr) << GST_ELEMENT_NAME(e);
  if (!pad)
    return -1;
  GstQuery* q = gst_query_new_context("gst.cuda.context");
  int device = -1;
  if (gst_pad_query(pad, q)) {
    GstContext* c = nullptr;
    gst_query_parse_context(q, &c);
    guint id = 0;
    const GstStructure* s = c ? gst_context_get_structure(c) : nullptr;
    if (s && gst_structure_get_uint(s, "cuda-device-id", &id))
      device = static_cast<int>(id);
    if (s && object) {
      const GValue* v = gst_structure_get_value(s, "gst.cuda.context");
      *object = v && G_VALUE_HOLDS_OBJECT(v) ? g_value_get_object(v) : nullptr;
    }
  }
  gst_query_unref(q);
  gst_object_unref(pad);
  return device;
}

// `name` in the bin of a harness or a pipeline (a new reference).
GstElement* by_name(GstElement* bin, const char* name) {
  GstElement* e = gst_bin_get_by_name(GST_BIN(bin), name);
  EXPECT_NE(e, nullptr) << name;
  return e;
}

// The corners of the buffer's corners meta (x, y, score, exactly), "" when
// it has none.
std::string corners_text(GstBuffer* buf) {
  const GstCudaFxCornersMeta* m = gst_buffer_get_cuda_fx_corners_meta(buf);
  if (!m)
    return "";
  char line[96];
  std::snprintf(line, sizeof line, "|%u corners", m->n_corners);
  std::string out = line;
  for (guint i = 0; i < m->n_corners; i++) {
    std::snprintf(line, sizeof line, "|%a %a %a", m->corners[i].x, m->corners[i].y,
                  m->corners[i].score);
    out += line;
  }
  return out;
}

// The bytes of a frame of `caps`, tight rows, followed by corners_text.
std::string frame_bytes(GstBuffer* buf, GstCaps* caps) {
  GstVideoInfo info;
  EXPECT_TRUE(caps && gst_video_info_from_caps(&info, caps));
  if (!caps)
    return "";
  PixelFormat f;
  EXPECT_TRUE(format_from_name(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)), &f));
  HostImage img;
  EXPECT_TRUE(image_from_buffer(buf, {f, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info)},
                                &img));
  std::string out;
  const FormatInfo& fi = format_info(f);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    for (int y = 0; y < v.height; y++)
      out.append(reinterpret_cast<const char*>(v.data + y * v.pitch),
                 static_cast<size_t>(v.width) * fi.planes[p].channels);
  }
  return out + corners_text(buf);
}

// frame_bytes with the caps `pad` negotiated.
std::string frame_bytes(GstBuffer* buf, GstPad* pad) {
  GstCaps* caps = gst_pad_get_current_caps(pad);
  std::string out = frame_bytes(buf, caps);
  if (caps)
    gst_caps_unref(caps);
  return out;
}

// corners_text of every buffer leaving an element, read where an element
// further down would drop the meta (cudadownload keeps only untagged metas).
// Also which memory each buffer was in ('C' CUDA, 'S' system): an element
// whose caps say CUDA memory must push CUDA memory.
struct CornerLog {
  std::mutex lock;
  std::vector<std::string> lines;
  std::string memory;
  std::string take(size_t n) {
    std::lock_guard<std::mutex> g(lock);
    return n < lines.size() ? lines[n] : "(no buffer " + std::to_string(n) + ")";
  }
};

void log_corners(GstElement* e, CornerLog* log) {
  GstPad* pad = gst_element_get_static_pad(e, "src");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER,
                    [](GstPad*, GstPadProbeInfo* info, gpointer u) {
                      auto* l = static_cast<CornerLog*>(u);
                      std::lock_guard<std::mutex> g(l->lock);
                      GstBuffer* b = GST_PAD_PROBE_INFO_BUFFER(info);
                      l->lines.push_back(corners_text(b));
                      l->memory += gst_buffer_n_memory(b) > 0 &&
                                           gst_memory_is_type(gst_buffer_peek_memory(b, 0),
                                                              "gst.cuda.memory")
                                       ? 'C'
                                       : 'S';
                      return GST_PAD_PROBE_OK;
                    },
                    log, nullptr);
  gst_object_unref(pad);
}

std::string packet_bytes(GstBuffer* buf) {
  GstMapInfo map;
  EXPECT_TRUE(gst_buffer_map(buf, &map, GST_MAP_READ));
  std::string out(reinterpret_cast<const char*>(map.data), map.size);
  gst_buffer_unmap(buf, &map);
  return out;
}

// Input frames that are never flat.
std::vector<HostImage> frames(const ImageDesc& d, int n) {
  std::vector<HostImage> v;
  for (int i = 0; i < n; i++) {
    v.emplace_back(d);
    v.back().fill_random(100 + i);
  }
  return v;
}

GstBuffer* timed(const HostImage& img, int n) {
  GstBuffer* b = buffer_from_image(img);
  GST_BUFFER_PTS(b) = n * GST_SECOND / 30;
  GST_BUFFER_DURATION(b) = GST_SECOND / 30;
  return b;
}

enum class Kind { Filter, Encoder, Decoder };

struct ElementCase {
  const char* factory;
  const char* props;
  PixelFormat format;
  Kind kind;
  bool cuda_out = true;  // a filter's output may be CUDA memory (cudacanny's GRAY8: never)
};

const ElementCase kElements[] = {
    {"cudagaussian", "sigma=2.5", PixelFormat::RGBA, Kind::Filter},
    {"cudaupscale", "factor=2 method=bicubic", PixelFormat::NV12, Kind::Filter},
    {"cudaharris", "draw=true draw-shape=cross", PixelFormat::RGBA, Kind::Filter},
    {"cudatextoverlay", "font-desc=\"DejaVu Sans 20\" text=\"GPU 1\"", PixelFormat::I420,
     Kind::Filter},
    {"cudaconvolve", "kernel=\"1 2 1; 2 4 2; 1 2 1\"", PixelFormat::RGBA, Kind::Filter},
    {"cudacanny", "low-threshold=30 high-threshold=90", PixelFormat::RGBA, Kind::Filter, false},
    {"cudagreyworld", "", PixelFormat::RGBA, Kind::Filter},
    {"cudaautocontrast", "", PixelFormat::RGBA, Kind::Filter},
    {"cudadeltaenc", "threshold=3", PixelFormat::NV12, Kind::Encoder},
    {"cudadeltadec", "", PixelFormat::NV12, Kind::Decoder},
};

const ImageDesc kSize{PixelFormat::RGBA, 333, 211};
constexpr int kFrames = 3;

// The packets of `clip` from the CPU encoder, and the caps of its stream.
std::vector<GstBuffer*> encoded(const std::vector<HostImage>& clip, std::string* caps) {
  GstHarness* h = harness_with("cudadeltaenc", "backend=cpu threshold=3");
  const std::string in = caps_string(clip[0].desc());
  gst_harness_set_src_caps_str(h, in.c_str());
  std::vector<GstBuffer*> packets;
  for (int n = 0; n < static_cast<int>(clip.size()); n++) {
    EXPECT_EQ(gst_harness_push(h, timed(clip[n], n)), GST_FLOW_OK);
    packets.push_back(gst_harness_pull(h));
  }
  GstCaps* c = gst_pad_get_current_caps(h->sinkpad);
  gchar* text = gst_caps_to_string(c);
  *caps = text;
  g_free(text);
  gst_caps_unref(c);
  gst_harness_teardown(h);
  return packets;
}

// What `c` makes of kFrames frames on `device`, its input in CUDA memory
// (cudaupload on the same device) when `cuda_memory`; every output frame
// as frame_bytes / packet_bytes gives it. The element must answer for a
// context of `device`.
std::string output_on(const ElementCase& c, int device, bool cuda_memory) {
  const ImageDesc d{c.format, kSize.width, kSize.height};
  const auto clip = frames(d, kFrames);
  const std::string id = " cuda-device-id=" + std::to_string(device);
  const std::string element = std::string(c.factory) + " name=e backend=cuda" + id + " " + c.props;
  std::string in_caps = caps_string(d);
  std::vector<GstBuffer*> packets;
  if (c.kind == Kind::Decoder)
    packets = encoded(clip, &in_caps);
  std::string launch;
  if (c.kind == Kind::Decoder)
    launch = element + (cuda_memory ? " ! video/x-raw(memory:CUDAMemory) ! cudadownload" + id : "");
  else if (cuda_memory)
    launch = "cudaupload" + id + " ! video/x-raw(memory:CUDAMemory) ! " + element +
             (c.kind == Kind::Filter && c.cuda_out ? " ! cudadownload" + id : "");
  else
    launch = element;
  GstHarness* h = harness_parse(launch);
  if (!GST_IS_BIN(h->element)) {  // harness_parse failed (and said why)
    gst_harness_teardown(h);
    return "";
  }
  gst_harness_set_src_caps_str(h, in_caps.c_str());
  if (std::string(c.factory) == "cudaupscale")
    gst_harness_set_sink_caps_str(h, "video/x-raw");
  GstElement* e = by_name(h->element, "e");
  CornerLog corners;
  const bool downloaded = cuda_memory && c.kind == Kind::Filter && c.cuda_out;
  if (downloaded)
    log_corners(e, &corners);
  std::string out;
  for (int n = 0; n < kFrames; n++) {
    GstBuffer* in = c.kind == Kind::Decoder ? packets[n] : timed(clip[n], n);
    EXPECT_EQ(gst_harness_push(h, in), GST_FLOW_OK) << c.factory << " frame " << n;
    GstBuffer* got = gst_harness_pull(h);
    EXPECT_NE(got, nullptr) << c.factory << " frame " << n;
    if (!got)
      break;
    out += c.kind == Kind::Encoder ? packet_bytes(got) : frame_bytes(got, h->sinkpad);
    if (downloaded)
      out += corners.take(n);
    out += "\n";
    gst_buffer_unref(got);
  }
  EXPECT_EQ(context_device(e), device) << c.factory << (cuda_memory ? " (CUDA memory)" : "");
  gst_object_unref(e);
  gst_harness_teardown(h);
  return out;
}

// A start that must fail: the message of the error.
std::string error_of(const std::string& element, const char* backend, int device_id) {
  const std::string settings =
      std::string(" backend=") + backend + " cuda-device-id=" + std::to_string(device_id);
  const std::string src = "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=64,height=48";
  if (element == "cudadeltadec")
    return start_error(src + " ! cudadeltaenc backend=cpu ! cudadeltadec" + settings +
                       " ! fakesink");
  return start_error(src + " ! " + element + settings + " ! fakesink");
}

}  // namespace

// One device is enough: the id past the last one is refused, on either
// backend that would use a device, with the id and the count in words.
TEST(CudaDeviceId, PastTheLastDeviceIsAnErrorNamingIdAndCount) {
  SKIP_WITHOUT_GPU();
  const int count = gpu_count();
  const std::string expected = "cuda-device-id " + std::to_string(count) + " does not exist: " +
                               std::to_string(count) +
                               (count == 1 ? " CUDA device found" : " CUDA devices found");
  for (const ElementCase& c : kElements) {
    if (!have_element(c.factory))
      continue;  // cudatextoverlay is a build option
    for (const char* backend : {"cuda", "auto"})
      EXPECT_EQ(error_of(c.factory, backend, count), expected) << c.factory << " " << backend;
  }
  EXPECT_EQ(error_of("cudagaussian", "cuda", count + 40),
            "cuda-device-id " + std::to_string(count + 40) + " does not exist: " +
                std::to_string(count) + (count == 1 ? " CUDA device found" : " CUDA devices found"));
}

// backend=cpu uses no device: any id is left alone (and nothing is asked
// of the driver), on any machine.
TEST(CudaDeviceId, CpuBackendIgnoresIt) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=64,height=48 ! "
      "cudagaussian backend=cpu cuda-device-id=97 ! fakesink",
      &err);
  ASSERT_NE(p, nullptr) << (err ? err->message : "");
  ASSERT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstBus* bus = gst_element_get_bus(p);
  GstMessage* m = gst_bus_timed_pop_filtered(
      bus, 20 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(GST_MESSAGE_TYPE(m), GST_MESSAGE_EOS);
  gst_message_unref(m);
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
}

class OnSecondDevice : public ::testing::TestWithParam<ElementCase> {};

// Device 1 gives device 0's bytes, from system memory and from CUDA memory
// (cudaupload on the element's device).
TEST_P(OnSecondDevice, GivesTheBytesOfDevice0) {
  const ElementCase& c = GetParam();
  if (!have_element(c.factory))
    GTEST_SKIP() << c.factory << " is not in this build";
  SKIP_WITHOUT_GPUS(2);
  for (const bool cuda_memory : {false, true}) {
    if (cuda_memory && !(have_element("cudaupload") && have_element("cudadownload"))) {
      ADD_FAILURE() << "nvcodec's cudaupload/cudadownload are not available";
      continue;
    }
    const std::string d0 = output_on(c, 0, cuda_memory);
    const std::string d1 = output_on(c, 1, cuda_memory);
    EXPECT_FALSE(d0.empty());
    EXPECT_TRUE(d0 == d1) << c.factory << (cuda_memory ? " from CUDA memory" : "")
                          << ": device 1 differs (" << d1.size() << " vs " << d0.size()
                          << " bytes)";
  }
}

INSTANTIATE_TEST_SUITE_P(Elements, OnSecondDevice, ::testing::ValuesIn(kElements),
                         [](const ::testing::TestParamInfo<ElementCase>& i) {
                           return std::string(i.param.factory);
                         });

namespace {

using PipelineFn = std::function<void(GstElement*)>;

// A pipeline fed from appsrc "src", whose appsinks are named in `sinks`:
// every frame of `clip` pushed, EOS, and each sink's buffers as
// frame_bytes (raw video) or packet_bytes (a stream). `prepare` runs before the pipeline starts, `check` while it
// still has its caps (after the last sample).
std::vector<std::vector<std::string>> run_pipeline(const std::string& launch,
                                                   const std::vector<HostImage>& clip,
                                                   const std::vector<std::string>& sinks,
                                                   const PipelineFn& check,
                                                   const PipelineFn& prepare = nullptr) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(launch.c_str(), &err);
  EXPECT_NE(p, nullptr) << launch << ": " << (err ? err->message : "");
  if (err)
    g_error_free(err);
  std::vector<std::vector<std::string>> out(sinks.size());
  if (!p)
    return out;
  GstElement* src = by_name(p, "src");
  if (prepare)
    prepare(p);
  EXPECT_NE(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE) << launch;
  for (int n = 0; n < static_cast<int>(clip.size()); n++)
    EXPECT_EQ(gst_app_src_push_buffer(GST_APP_SRC(src), timed(clip[n], n)), GST_FLOW_OK);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  for (size_t i = 0; i < sinks.size(); i++) {
    GstElement* sink = by_name(p, sinks[i].c_str());
    // a guard, not a wait: EOS comes after the last frame
    while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND)) {
      GstCaps* caps = gst_sample_get_caps(s);
      const bool video = caps && gst_structure_has_name(gst_caps_get_structure(caps, 0),
                                                        "video/x-raw");
      out[i].push_back(video ? frame_bytes(gst_sample_get_buffer(s), caps)
                             : packet_bytes(gst_sample_get_buffer(s)));
      gst_sample_unref(s);
    }
    EXPECT_TRUE(gst_app_sink_is_eos(GST_APP_SINK(sink))) << sinks[i];
    gst_object_unref(sink);
  }
  GstBus* bus = gst_element_get_bus(p);
  if (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* e = nullptr;
    gst_message_parse_error(m, &e, nullptr);
    ADD_FAILURE() << launch << ": " << e->message;
    g_error_free(e);
    gst_message_unref(m);
  }
  gst_object_unref(bus);
  if (check)
    check(p);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(p);
  return out;
}

// The chain of one branch on `device`, its elements named <name>up, <name>g,
// <name>u, <name>e, ending in appsink <name>.
std::string branch(const std::string& name, int device) {
  const std::string id = " backend=cuda cuda-device-id=" + std::to_string(device);
  return "queue ! cudaupload name=" + name + "up cuda-device-id=" + std::to_string(device) +
         " ! video/x-raw(memory:CUDAMemory) ! cudagaussian name=" + name + "g sigma=1.5" + id +
         " ! cudaupscale name=" + name + "u factor=2 method=bilinear" + id +
         " ! video/x-raw(memory:CUDAMemory) ! cudadeltaenc name=" + name + "e threshold=2" + id +
         " ! appsink name=" + name + " sync=false";
}

// Every element of the branch on `device`, and its links in CUDA memory.
void expect_branch_on(GstElement* p, const std::string& name, int device) {
  for (const char* suffix : {"g", "u", "e"}) {
    GstElement* e = by_name(p, (name + suffix).c_str());
    EXPECT_EQ(context_device(e), device) << name << suffix;
    EXPECT_EQ(pad_memory(e, "sink"), 'C') << name << suffix;
    gst_object_unref(e);
  }
}

std::string appsrc(const ImageDesc& d) {
  return "appsrc name=src format=time caps=\"" + caps_string(d) + "\" ! ";
}

}  // namespace

// A tee, one branch a device: each branch's stream is the chain's stream
// alone on device 0, every element on its branch's device, in CUDA memory.
TEST(TwoDevices, TeeBranchesOnDevices0And1GiveTheSingleDeviceStream) {
  SKIP_WITHOUT_GPUS(2);
  ASSERT_TRUE(have_element("cudaupload")) << "nvcodec's cudaupload is not available";
  const ImageDesc d{PixelFormat::NV12, 480, 270};
  const auto clip = frames(d, 6);
  const auto alone = run_pipeline(appsrc(d) + branch("a", 0), clip, {"a"},
                                  [](GstElement* p) { expect_branch_on(p, "a", 0); });
  ASSERT_EQ(alone[0].size(), clip.size());
  const auto split =
      run_pipeline(appsrc(d) + "tee name=t t. ! " + branch("b0", 0) + " t. ! " + branch("b1", 1),
                   clip, {"b0", "b1"}, [](GstElement* p) {
                     expect_branch_on(p, "b0", 0);
                     expect_branch_on(p, "b1", 1);
                   });
  for (int b = 0; b < 2; b++) {
    ASSERT_EQ(split[b].size(), clip.size()) << "branch " << b;
    for (size_t n = 0; n < clip.size(); n++)
      EXPECT_TRUE(split[b][n] == alone[0][n]) << "branch " << b << ", frame " << n;
  }
}

namespace {

// The bytes of `element` (one per mode: transform, in place, analysis, the
// encoder) on the CPU backend, frame by frame.
std::vector<std::string> cpu_stream(const std::string& element, const std::vector<HostImage>& clip,
                                    bool encoder) {
  const ImageDesc d = clip[0].desc();
  const auto out = run_pipeline(
      appsrc(d) + element + " backend=cpu ! " +
          (encoder ? "" : "video/x-raw,format=" + std::string(format_info(d.format).name) + " ! ") +
          "appsink name=s sync=false",
      clip, {"s"}, nullptr);
  return out[0];
}

// `got`, the stream of `element` on the CUDA backend behind a foreign
// context, equals its CPU backend's stream; for a filter, `corners` (logged
// at its src pad) completes the frames that cudadownload stripped of their
// corners meta and shows that every frame left in CUDA memory.
void expect_cpu_stream(const std::string& element, bool encoder,
                       const std::vector<HostImage>& clip, std::vector<std::string>& got,
                       CornerLog* corners) {
  const auto want = cpu_stream(element, clip, encoder);
  ASSERT_EQ(got.size(), clip.size()) << element;
  ASSERT_EQ(want.size(), clip.size()) << element;
  for (size_t n = 0; n < clip.size(); n++) {
    if (!encoder)
      got[n] += corners->take(n);  // cudadownload dropped the meta
    EXPECT_TRUE(got[n] == want[n]) << element << ", frame " << n;
  }
  if (!encoder) {  // the frames left it in CUDA memory, as its caps say
    EXPECT_EQ(corners->memory, std::string(clip.size(), 'C')) << element;
  }
}

}  // namespace

// Frames in CUDA memory of a context of device 0 (cudaupload on device 0),
// shared with another branch by a tee (so not writable), into elements
// told to use device 1: each keeps a context of device 1 (the upstream
// context is refused: libgstcuda's rule for an explicit id), reads the frames
// through a copy and gives the CPU backend's bytes.
TEST(TwoDevices, ElementBesideAContextOfAnotherDeviceKeepsItsOwn) {
  SKIP_WITHOUT_GPUS(2);
  ASSERT_TRUE(have_element("cudaupload") && have_element("cudadownload"))
      << "nvcodec's cudaupload/cudadownload are not available";
  const ImageDesc d{PixelFormat::RGBA, 320, 180};
  const auto clip = frames(d, 4);
  struct Mode {
    const char* element;
    bool encoder;
  };
  // transform, in place, analysis, analysis drawing (in place), encoder
  for (const Mode m : {Mode{"cudagaussian sigma=2", false}, Mode{"cudagreyworld", false},
                       Mode{"cudaharris", false}, Mode{"cudaharris draw=true", false},
                       Mode{"cudadeltaenc threshold=2", true}}) {
    CornerLog corners;
    const std::string el = std::string(m.element) + " name=x backend=cuda cuda-device-id=1";
    const std::string tail =
        m.encoder ? " ! appsink name=s sync=false"
                  : " ! cudadownload ! video/x-raw,format=RGBA ! appsink name=s sync=false";
    auto got = run_pipeline(
        appsrc(d) + "cudaupload name=up cuda-device-id=0 ! video/x-raw(memory:CUDAMemory) ! "
                    "tee name=t ! queue ! " + el + tail + " t. ! queue ! fakesink",
        clip, {"s"}, [&](GstElement* p) {
          GstElement* up = by_name(p, "up");
          GstElement* x = by_name(p, "x");
          EXPECT_EQ(context_device(up), 0) << m.element;
          EXPECT_EQ(context_device(x), 1) << m.element;
          EXPECT_EQ(pad_memory(x, "sink"), 'C') << m.element;
          gst_object_unref(up);
          gst_object_unref(x);
        },
        [&](GstElement* p) {
          GstElement* x = by_name(p, "x");
          log_corners(x, &corners);
          gst_object_unref(x);
        });
    expect_cpu_stream(m.element, m.encoder, clip, got[0], &corners);
  }
}

#if CUDAFX_TEST_GSTCUDA
// The same rule on one device: two GstCudaContexts of device 0, the
// upstream cudaupload given one and our element the other. Frames of the
// other context are not "ours" (never written in place, nor mapped as our
// device memory): the element copies them and gives the CPU backend's
// bytes, and keeps the context it was given.
TEST(TwoContexts, ElementKeepsTheContextItWasGivenAndCopiesForeignFrames) {
  SKIP_WITHOUT_GPU();
  SKIP_UNLESS_GPU_READY(have_element("cudaupload") && have_element("cudadownload"),
                        "nvcodec's cudaupload/cudadownload are not available");
  ASSERT_TRUE(gst_cuda_load_library());
  GstCudaContext* mine = gst_cuda_context_new(0);
  GstCudaContext* theirs = gst_cuda_context_new(0);
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(theirs, nullptr);
  ASSERT_NE(mine, theirs);
  const ImageDesc d{PixelFormat::RGBA, 320, 180};
  const auto clip = frames(d, 4);
  for (const char* element : {"cudagaussian sigma=2", "cudagreyworld", "cudaharris",
                              "cudaharris draw=true", "cudadeltaenc threshold=2"}) {
    const bool encoder = std::string(element).rfind("cudadeltaenc", 0) == 0;
    const std::string launch =
        appsrc(d) + "cudaupload name=up ! video/x-raw(memory:CUDAMemory) ! tee name=t ! queue ! " +
        element + " name=x backend=cuda" +
        (encoder ? " ! appsink name=s sync=false"
                 : " ! cudadownload ! video/x-raw,format=RGBA ! appsink name=s sync=false") +
        " t. ! queue ! fakesink";
    CornerLog corners;
    auto got = run_pipeline(
        launch, clip, {"s"},
        [&](GstElement* p) {
          GstElement* up = by_name(p, "up");
          GstElement* x = by_name(p, "x");
          gpointer up_ctx = nullptr, x_ctx = nullptr;
          EXPECT_EQ(context_device(up, &up_ctx), 0) << element;
          EXPECT_EQ(context_device(x, &x_ctx), 0) << element;
          EXPECT_EQ(up_ctx, static_cast<gpointer>(theirs)) << element;
          EXPECT_EQ(x_ctx, static_cast<gpointer>(mine)) << element;
          EXPECT_EQ(pad_memory(x, "sink"), 'C') << element;
          gst_object_unref(up);
          gst_object_unref(x);
        },
        [&](GstElement* p) {
          // the contexts are given before start, as an application would
          GstElement* up = by_name(p, "up");
          GstElement* x = by_name(p, "x");
          GstContext* c = gst_context_new_cuda_context(theirs);
          gst_element_set_context(up, c);
          gst_context_unref(c);
          c = gst_context_new_cuda_context(mine);
          gst_element_set_context(x, c);
          gst_context_unref(c);
          log_corners(x, &corners);
          gst_object_unref(up);
          gst_object_unref(x);
        });
    expect_cpu_stream(element, encoder, clip, got[0], &corners);
  }
  gst_object_unref(mine);
  gst_object_unref(theirs);
}
#endif
