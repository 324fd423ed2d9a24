// cudatextoverlay benchmark (issue #14): the per-frame cost of text, a
// running time code and a clock, through the element (CUDA-memory chain,
// system memory on both backends) against the stock textoverlay,
// timeoverlay and clockoverlay, and through the blend op (GPU time of
// blend_overlay and blend_overlay_list per frame), with the targets
// judged on the run's own numbers. Not a test: prints tables and writes a
// Markdown report section.
//
// Usage: bench_textoverlay [--out FILE] [--commit SHA] [--quick]
//   --out: the report (default docs/benchmarks.md; its bench_textoverlay
//          section is replaced, the rest kept).
//   --quick: 1080p only, one round, few frames and calls (a smoke run; write
//            it elsewhere than docs/benchmarks.md).
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/overlay_blend.hpp"
#include "cudafx/parallel.hpp"
#include "gstcudafxconfig.h"
#include "gstcudafxglyphatlas.h"
#include "gstcudafxtextrender.h"
#include "report.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

using namespace cudafx;
using namespace bench;

namespace {

const Resolution kTextResolutions[] = {{"1080p", 1920, 1080}, {"2160p", 3840, 2160}};
const char* const kFormats[] = {"RGBA", "NV12"};

// "Two lines of 48 px text": 36 pt is 48 px at Pango's 96 dpi; auto-resize
// off, so the size does not follow the frame width.
const char* kFont = "DejaVu Sans 36";
const char* kStaticText = "Camera 1\nGate 4";
const char* kLabel = "Camera 1";
// The frame rate of the pushed timestamps: the buffer time changes every
// frame ("Camera 1 0:00:01.234").
constexpr int kFps = 30;

enum class CaseKind { Static, TimeCode, Clock };
struct Case {
  CaseKind kind;
  const char* name;
  const char* peer;  // the stock element that does the same
};
const Case kCases[] = {{CaseKind::Static, "static text", "textoverlay"},
                       {CaseKind::TimeCode, "time code", "timeoverlay"},
                       {CaseKind::Clock, "clock", "clockoverlay"}};

using Options = BenchOptions;

// ---- small statistics ----

struct TimeSpread {
  double median = -1, lo = -1, hi = -1;  // lo/hi: min/max or percentiles, as made
  size_t n = 0;
};
double pick(const std::vector<double>& sorted, double q) {
  const size_t i = static_cast<size_t>(std::lround(q * (sorted.size() - 1)));
  return sorted[std::min(i, sorted.size() - 1)];
}
// Median and min-max.
TimeSpread min_max(std::vector<double> t) {
  TimeSpread s;
  if (t.empty())
    return s;
  std::sort(t.begin(), t.end());
  s.median = pick(t, 0.5);
  s.lo = t.front();
  s.hi = t.back();
  s.n = t.size();
  return s;
}
// Median and the 10th-90th percentiles (thousands of samples: the extremes
// are the scheduler's, not the element's).
TimeSpread percentiles(std::vector<double> t) {
  TimeSpread s;
  if (t.empty())
    return s;
  std::sort(t.begin(), t.end());
  s.median = pick(t, 0.5);
  s.lo = pick(t, 0.1);
  s.hi = pick(t, 0.9);
  s.n = t.size();
  return s;
}
std::string spread_cell(const TimeSpread& s, const char* f = "%.1f") {
  if (s.median < 0 && s.n == 0)
    return "n/a";
  return fmt(f, s.median) + " (" + fmt(f, s.lo) + "–" + fmt(f, s.hi) + ")";
}
std::string fps_cell(double fps) {
  return fps > 0 ? fmt("%.0f", fps) + " (" + fmt("%.3f", 1e3 / fps) + ")" : std::string("n/a");
}
std::string yes_no(bool b) { return b ? "yes" : "**no**"; }
double median_of(std::vector<double> v) {
  if (v.empty())
    return -1;
  std::sort(v.begin(), v.end());
  return pick(v, 0.5);
}

// ---- element properties ----

struct Prop {
  std::string name, value;
};
using Props = std::vector<Prop>;

// The element's (ours == true) or the stock peer's properties for a case:
// the same font, size and text; every placement property at its default
// (centred, on the baseline, 25-pixel pads: the two share them).
Props case_props(const Case& c, bool ours) {
  Props p = {{"font-desc", kFont}, {"auto-resize", "false"}};
  switch (c.kind) {
    case CaseKind::Static:
      p.push_back({"text", kStaticText});
      break;
    case CaseKind::TimeCode:
      p.push_back({"text", kLabel});
      p.push_back({"time-mode", "buffer-time"});
      break;
    case CaseKind::Clock:
      p.push_back({"text", kLabel});
      if (ours)
        p.push_back({"clock", "true"});  // clockoverlay: the clock is what it is
      break;
  }
  return p;
}

bool set_props(GstElement* e, const Props& props, std::string* err) {
  for (const Prop& p : props) {
    GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), p.name.c_str());
    if (!spec) {
      *err = std::string(GST_ELEMENT_NAME(e)) + " has no property " + p.name;
      return false;
    }
    if (spec->value_type == G_TYPE_STRING)
      g_object_set(e, p.name.c_str(), p.value.c_str(), nullptr);  // verbatim: the text has a newline
    else
      gst_util_set_object_arg(G_OBJECT(e), p.name.c_str(), p.value.c_str());
  }
  return true;
}

// ---- pre-made buffers in a pool ----
//
// In-place elements (ours and the stock overlays) blend into the buffer they
// get; a buffer that someone else still holds is copied first (for CUDA
// memory a device copy). So every buffer is pushed with its only reference
// and goes back to its pool when the sink drops it: a pool of pre-made,
// pre-filled frames, acquired by the pusher (blocking while all are in
// flight).
struct Pool {
  std::string caps;
  GstVideoInfo info;
  GstBufferPool* pool = nullptr;
  GstContext* context = nullptr;  // CUDA memory: given to the pipeline
  int count = 0;
  std::string kind;  // what memory, for the report
};
void release(Pool& p);

// The frames are flat grey (RGBA 64,64,64,255; NV12 Y 64, UV 128), so that
// the first output frame tells how many pixels the element drew.
const uint8_t kFlatRGBA[4] = {64, 64, 64, 255};
constexpr uint8_t kFlatY = 64, kFlatUV = 128;

bool fill_flat(const GstVideoInfo* info, GstBuffer* b) {
  GstVideoFrame f;
  if (!gst_video_frame_map(&f, info, b, GST_MAP_WRITE))  // CUDA memory: uploaded at unmap
    return false;
  const bool rgba = GST_VIDEO_FRAME_FORMAT(&f) == GST_VIDEO_FORMAT_RGBA;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&f); p++) {
    const int w = GST_VIDEO_FRAME_COMP_WIDTH(&f, p) * GST_VIDEO_FRAME_COMP_PSTRIDE(&f, p);
    for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&f, p); y++) {
      uint8_t* row = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p)) +
                     static_cast<size_t>(y) * GST_VIDEO_FRAME_PLANE_STRIDE(&f, p);
      if (rgba)
        for (int x = 0; x < w; x++)
          row[x] = kFlatRGBA[x & 3];
      else
        memset(row, p == 0 ? kFlatY : kFlatUV, w);
    }
  }
  gst_video_frame_unmap(&f);
  return true;
}

// Pixels of plane 0 (RGBA pixels, NV12 luma) that differ from the flat fill.
long changed_pixels(const GstVideoInfo* info, GstBuffer* b) {
  GstVideoFrame f;
  if (!gst_video_frame_map(&f, info, b, GST_MAP_READ))  // CUDA memory: downloaded
    return -1;
  const bool rgba = GST_VIDEO_FRAME_FORMAT(&f) == GST_VIDEO_FORMAT_RGBA;
  long n = 0;
  for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&f, 0); y++) {
    const uint8_t* row = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0)) +
                         static_cast<size_t>(y) * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0);
    for (int x = 0; x < GST_VIDEO_FRAME_COMP_WIDTH(&f, 0); x++)
      n += rgba ? memcmp(row + 4 * x, kFlatRGBA, 4) != 0 : row[x] != kFlatY;
  }
  gst_video_frame_unmap(&f);
  return n;
}

// Acquires every buffer (none may be in flight), fills it flat, returns it.
bool refill_pool(Pool& p) {
  std::vector<GstBuffer*> held;
  bool ok = true;
  GstBufferPoolAcquireParams params = {};
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  for (int i = 0; i < p.count && ok; i++) {
    GstBuffer* b = nullptr;
    ok = gst_buffer_pool_acquire_buffer(p.pool, &b, &params) == GST_FLOW_OK;
    if (ok) {
      held.push_back(b);
      ok = fill_flat(&p.info, b);
    }
  }
  for (GstBuffer* b : held)
    gst_buffer_unref(b);  // back to the pool
  return ok;
}

// Configures `pool` for `count` buffers of the caps (min = max = count: all
// allocated at activation, none beyond), activates and fills it.
bool start_pool(Pool& p, GstBufferPool* pool, int count, std::string* err) {
  GstCaps* caps = gst_caps_from_string(p.caps.c_str());
  gst_video_info_from_caps(&p.info, caps);
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&p.info), count, count);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config(pool, config)) {
    config = gst_buffer_pool_get_config(pool);  // take the pool's amendment (row padding)
    if (!gst_buffer_pool_set_config(pool, config)) {
      gst_caps_unref(caps);
      gst_object_unref(pool);
      *err = "the pool refuses its config";
      return false;
    }
  }
  gst_caps_unref(caps);
  if (!gst_buffer_pool_set_active(pool, TRUE)) {
    gst_object_unref(pool);
    *err = "cannot activate the pool";
    return false;
  }
  p.pool = pool;
  p.count = count;
  if (!refill_pool(p)) {
    *err = "cannot fill the pool";
    return false;
  }
  return true;
}

// System memory: with a GPU, the pinned pool that cudatextoverlay
// backend=cuda proposes upstream (its uploads then run at the pinned rate;
// to the CPU paths it is ordinary memory), else a plain video pool.
Pool system_pool(const std::string& caps, int count, bool gpu, std::string* err) {
  Pool p;
  p.caps = caps;
  GstBufferPool* pool = nullptr;
  if (gpu) {
    GstHarness* h = gst_harness_new_parse("cudatextoverlay backend=cuda");
    gst_harness_set_caps_str(h, caps.c_str(), caps.c_str());
    GstCaps* c = gst_caps_from_string(caps.c_str());
    GstQuery* q = gst_query_new_allocation(c, TRUE);
    if (gst_pad_peer_query(h->srcpad, q) && gst_query_get_n_allocation_pools(q) > 0)
      gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
    gst_query_unref(q);
    gst_caps_unref(c);
    gst_harness_teardown(h);
  }
  p.kind = pool ? "pinned system memory (the pool cudatextoverlay proposes)" : "system memory";
  if (!pool)
    pool = gst_video_buffer_pool_new();
  if (!start_pool(p, pool, count, err))
    release(p);
  return p;
}

#if HAVE_GSTCUDA
Pool cuda_pool(const std::string& caps, int count, GstCudaContext* ctx, std::string* err) {
  Pool p;
  p.caps = caps;
  p.kind = "memory:CUDAMemory";
  p.context = gst_context_new_cuda_context(ctx);
  if (!start_pool(p, gst_cuda_buffer_pool_new(ctx), count, err))
    release(p);
  return p;
}
#endif

void release(Pool& p) {
  if (p.pool) {
    gst_buffer_pool_set_active(p.pool, FALSE);
    gst_object_unref(p.pool);
  }
  p.pool = nullptr;
  if (p.context)
    gst_context_unref(p.context);
  p.context = nullptr;
}

// ---- one pipeline run ----

struct RunResult {
  double fps = -1;
  std::vector<double> chain_us;  // per buffer, from the element's sink pad to its src pad
  long changed = -1;             // pixels the first frame changed (when asked)
  int copied = 0;                // buffers that reached the element not writable
  std::string err;
};

struct Stamps {
  std::vector<Clock::time_point> in, out, sink;
  int not_writable = 0;
  bool count_changed = false;
  long changed = -1;
  const GstVideoInfo* info = nullptr;
};

// Runs appsrc ! `chain` ! fakesink over `frames` buffers of `pool`, PTS
// advancing 1/30 s a frame. `chain` names the element under test "ov"; its
// properties are set from `props`. Pad probes on ov's sink and src pads
// timestamp every buffer (steady clock): the element's chain function time.
RunResult run_chain(const std::string& chain, const Pool& pool, const Props& props, int frames,
                    bool count_changed) {
  RunResult r;
  const std::string desc = "appsrc name=src format=time block=true max-bytes=0 max-buffers=4 caps=\"" +
                           pool.caps + "\" ! " + chain +
                           " ! fakesink name=sink sync=false enable-last-sample=false signal-handoffs=true";
  GError* gerr = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &gerr);
  if (!pipeline || gerr) {
    r.err = gerr ? gerr->message : "parse failed";
    g_clear_error(&gerr);
    if (pipeline)
      gst_object_unref(pipeline);
    return r;
  }
  if (pool.context)
    gst_element_set_context(pipeline, pool.context);
  GstElement* ov = gst_bin_get_by_name(GST_BIN(pipeline), "ov");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  Stamps st;
  st.in.reserve(frames);
  st.out.reserve(frames);
  st.sink.reserve(frames);
  st.count_changed = count_changed;
  st.info = &pool.info;
  if (!set_props(ov, props, &r.err)) {
    gst_object_unref(ov);
    gst_object_unref(sink);
    gst_object_unref(src);
    gst_object_unref(pipeline);
    return r;
  }
  GstPad* ov_sink = gst_element_get_static_pad(ov, "sink");
  if (!ov_sink)
    ov_sink = gst_element_get_static_pad(ov, "video_sink");  // the stock overlays
  GstPad* ov_src = gst_element_get_static_pad(ov, "src");
  gst_pad_add_probe(ov_sink, GST_PAD_PROBE_TYPE_BUFFER,
                    +[](GstPad*, GstPadProbeInfo* info, gpointer u) -> GstPadProbeReturn {
                      auto* s = static_cast<Stamps*>(u);
                      s->in.push_back(Clock::now());
                      GstBuffer* b = GST_PAD_PROBE_INFO_BUFFER(info);
                      if (b && !gst_buffer_is_writable(b))
                        s->not_writable++;
                      return GST_PAD_PROBE_OK;
                    },
                    &st, nullptr);
  gst_pad_add_probe(ov_src, GST_PAD_PROBE_TYPE_BUFFER,
                    +[](GstPad*, GstPadProbeInfo*, gpointer u) -> GstPadProbeReturn {
                      static_cast<Stamps*>(u)->out.push_back(Clock::now());
                      return GST_PAD_PROBE_OK;
                    },
                    &st, nullptr);
  g_signal_connect(sink, "handoff",
                   G_CALLBACK(+[](GstElement*, GstBuffer* b, GstPad*, gpointer u) {
                     auto* s = static_cast<Stamps*>(u);
                     s->sink.push_back(Clock::now());
                     if (s->count_changed && s->sink.size() == 1)
                       s->changed = changed_pixels(s->info, b);  // before the timed frames
                   }),
                   &st);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  std::thread pusher([&] {
    for (int i = 0; i < frames; i++) {
      GstBuffer* b = nullptr;
      if (gst_buffer_pool_acquire_buffer(pool.pool, &b, nullptr) != GST_FLOW_OK)
        break;
      GST_BUFFER_PTS(b) = gst_util_uint64_scale_int(i, GST_SECOND, kFps);
      GST_BUFFER_DURATION(b) = gst_util_uint64_scale_int(1, GST_SECOND, kFps);
      if (gst_app_src_push_buffer(GST_APP_SRC(src), b) != GST_FLOW_OK)  // takes the reference
        break;
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
  });
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* msg = gst_bus_timed_pop_filtered(bus, 300 * GST_SECOND,
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    r.err = e->message;
    g_error_free(e);
  } else if (!msg) {
    r.err = "no EOS";
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);  // returns the buffers; unblocks the pusher
  pusher.join();
  if (r.err.empty() && st.sink.size() > 12) {
    const double s = std::chrono::duration<double>(st.sink.back() - st.sink[10]).count();
    r.fps = (st.sink.size() - 11) / s;
    const size_t n = std::min(st.in.size(), st.out.size());
    for (size_t i = 10; i < n; i++)
      r.chain_us.push_back(std::chrono::duration<double, std::micro>(st.out[i] - st.in[i]).count());
  } else if (r.err.empty()) {
    r.err = "only " + std::to_string(st.sink.size()) + " frames arrived";
  }
  r.changed = st.changed;
  r.copied = st.not_writable;
  if (msg)
    gst_message_unref(msg);
  gst_object_unref(bus);
  gst_object_unref(ov_sink);
  gst_object_unref(ov_src);
  gst_object_unref(ov);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return r;
}

// ---- the element rows ----

// What is run per row (resolution, format, case), once a round.
enum Run { kIdentityChain, kOursChain, kOursSysCuda, kOursSysCpu, kStock, kRuns };
const char* const kRunNames[kRuns] = {"identity, CUDA chain", "ours, CUDA chain",
                                      "ours, system memory, backend=cuda",
                                      "ours, system memory, backend=cpu", "stock peer"};

struct ElementRow {
  std::string res, format, case_name, peer;
  std::vector<double> fps[kRuns];
  std::vector<double> chain_us[kRuns];
  std::vector<double> added_us;  // per round: ours chain - identity chain, us per frame
  long changed_ours = -1, changed_stock = -1;
  std::string notes;
  double fps_median(int run) const { return median_of(fps[run]); }
};

struct Plan {
  int rounds;
  int frames[kRuns];
};
Plan plan_for(const Options& o) {
  if (o.quick)
    return {1, {60, 60, 30, 30, 30}};
  // About 0.1-0.5 s a run on an H100 (2160p system-memory CUDA: ~1 ms a
  // frame for the two copies).
  return {5, {4000, 4000, 300, 1000, 400}};
}

struct ChainSet {
  Pool sys, cuda;
  bool gpu = false, chain = false;
};

void bench_row(const Options& o, ChainSet& pools, const Case& c, ElementRow* row) {
  const Plan plan = plan_for(o);
  const Props ours = case_props(c, true), stock = case_props(c, false);
  const Props none;
  const std::string cuda_caps = "capsfilter caps=\"video/x-raw(memory:CUDAMemory)\"";
  const std::string sys_caps = "capsfilter caps=video/x-raw";  // no overlay meta: peers must blend
  struct Job {
    Run run;
    std::string chain;
    Pool* pool;
    const Props* props;
  };
  std::vector<Job> jobs;
  if (pools.chain) {
    jobs.push_back({kIdentityChain, "identity name=ov ! " + cuda_caps, &pools.cuda, &none});
    jobs.push_back({kOursChain, "cudatextoverlay name=ov backend=cuda ! " + cuda_caps, &pools.cuda, &ours});
  }
  if (pools.gpu)
    jobs.push_back({kOursSysCuda, "cudatextoverlay name=ov backend=cuda ! " + sys_caps, &pools.sys, &ours});
  jobs.push_back({kOursSysCpu, "cudatextoverlay name=ov backend=cpu ! " + sys_caps, &pools.sys, &ours});
  jobs.push_back({kStock, std::string(c.peer) + " name=ov ! " + sys_caps, &pools.sys, &stock});
  for (int round = 0; round < plan.rounds; round++) {
    // The paired chains alternate their order (ABBA), so a drift hits both.
    if (pools.chain && round > 0)
      std::swap(jobs[0], jobs[1]);
    double chain_ms[2] = {-1, -1};
    for (const Job& j : jobs) {
      Pool& pool = *j.pool;
      if (!pool.pool)
        continue;
      const bool check = round == 0 && j.run != kIdentityChain;
      if (check && !refill_pool(pool))
        row->notes += std::string(kRunNames[j.run]) + ": refill failed; ";
      RunResult r = run_chain(j.chain, pool, *j.props, plan.frames[j.run], check);
      if (!r.err.empty()) {
        row->notes += std::string(kRunNames[j.run]) + ": " + r.err + "; ";
        continue;
      }
      if (r.copied > 0)
        row->notes += std::string(kRunNames[j.run]) + ": " + std::to_string(r.copied) +
                      " buffers arrived shared (copied); ";
      row->fps[j.run].push_back(r.fps);
      row->chain_us[j.run].insert(row->chain_us[j.run].end(), r.chain_us.begin(), r.chain_us.end());
      if (j.run == kIdentityChain)
        chain_ms[0] = 1e3 / r.fps;
      if (j.run == kOursChain)
        chain_ms[1] = 1e3 / r.fps;
      if (check && r.changed >= 0) {
        if (j.run == kStock)
          row->changed_stock = r.changed;
        else if (j.run == kOursChain || row->changed_ours < 0)
          row->changed_ours = r.changed;
        if (r.changed == 0)
          row->notes += std::string(kRunNames[j.run]) + ": drew nothing; ";
      }
    }
    if (chain_ms[0] > 0 && chain_ms[1] > 0)
      row->added_us.push_back(1e3 * (chain_ms[1] - chain_ms[0]));
  }
}

// ---- the blend op ----

// The element's renderer style for the benchmark's properties (the element's
// text_style with font-desc, auto-resize=false and every other default).
GstCudaFxTextStyle bench_style(int frame_width) {
  GstCudaFxTextStyle s;
  s.font_desc = kFont;
  s.scale = 1.0;
  s.max_width = frame_width;  // centred: no pad taken off
  return s;
}

struct OpCase {
  std::string what;   // "static text", ...
  std::string text;   // as drawn
  bool list = false;  // blend_overlay_list of the atlas, else blend_overlay
  int w = 0, h = 0;   // the image (static) or the glyphs' bounding box (list)
  int glyphs = 0;
  // static: the rendered image; list: the atlas
  const std::vector<uint8_t>* pixels = nullptr;
  size_t pitch = 0;
  int img_w = 0, img_h = 0;
  int x = 0, y = 0;  // static: where the image goes
  std::vector<OverlayPlacement> placements;
};

struct OpTiming {
  TimeSpread gpu_us;         // per call, event to event, stream kept busy: median (min-max)
  double gpu_mean_us = -1;
  TimeSpread host_us;        // the call itself on the host (submission): median (min-max)
  int calls = 0;
  bool starved = false;  // the GPU may have waited for the host in some batch
};

// Per-call GPU time with the host out of the picture: each batch starts
// behind a large device copy (which also flushes the L2: every call then
// finds its frame region and its overlay cold, as after the other elements
// of a pipeline streamed whole frames through), and is queued while that
// copy runs; events between the calls time each one alone. A batch whose
// queueing outlasted the copy is redone behind a longer one.
class GpuOpTimer {
 public:
  static constexpr int kBatch = 16;
  static constexpr size_t kFlushBytes = size_t(256) << 20;

  bool init(std::string* err) {
    if (!stream_.create().is_ok() || !a_.allocate(kFlushBytes).is_ok() ||
        !b_.allocate(kFlushBytes).is_ok()) {
      *err = "cannot create the stream or the flush buffers";
      return false;
    }
    ev_.reset(new CudaEvent[kBatch + 2]);
    for (int i = 0; i < kBatch + 2; i++)
      if (!ev_[i].create().is_ok()) {
        *err = "cannot create events";
        return false;
      }
    return true;
  }
  StreamHandle stream() const { return stream_.get(); }

  // submit(i) queues call i (its own frame) on the stream.
  OpTiming time(int batches, const std::function<Status(int)>& submit, std::string* err) {
    OpTiming t;
    std::vector<double> gpu, host;
    double total_ms = 0;
    int call = 0;
    for (int b = -1; b < batches;) {  // batch -1: warm-up
      std::vector<double> g, h;
      (void)ev_[kBatch + 1].record(stream_.get());
      for (int k = 0; k < copies_; k++)
        (void)copy_bytes_async(b_.get(), a_.get(), kFlushBytes, stream_.get());
      const auto t0 = Clock::now();
      (void)ev_[0].record(stream_.get());
      for (int i = 0; i < kBatch; i++) {
        const auto c0 = Clock::now();
        const Status s = submit(call++);
        h.push_back(1e3 * ms_since(c0));
        if (!s.is_ok()) {
          *err = s.message();
          (void)stream_.synchronize();
          return t;
        }
        (void)ev_[i + 1].record(stream_.get());
      }
      const double queued_ms = ms_since(t0);
      float blocker = 0;
      if (!ev_[kBatch].synchronize().is_ok() ||
          !ev_[0].elapsed_since(ev_[kBatch + 1], &blocker).is_ok()) {
        *err = "event timing failed";
        return t;
      }
      // A margin for the copy's own start: queueing must end well before it does.
      if (queued_ms > 0.8 * blocker && copies_ < 64) {
        copies_ *= 2;  // the GPU may have caught up with the host: redo behind a longer copy
        continue;
      }
      if (queued_ms > 0.8 * blocker)
        t.starved = true;
      for (int i = 0; i < kBatch; i++) {
        float ms = 0;
        (void)ev_[i + 1].elapsed_since(ev_[i], &ms);
        g.push_back(1e3 * ms);
      }
      if (b >= 0) {
        for (double v : g)
          total_ms += v / 1e3;
        gpu.insert(gpu.end(), g.begin(), g.end());
        host.insert(host.end(), h.begin(), h.end());
      }
      b++;
    }
    t.gpu_us = min_max(gpu);
    t.host_us = min_max(host);
    t.calls = static_cast<int>(gpu.size());
    t.gpu_mean_us = t.calls ? 1e3 * total_ms / t.calls : -1;
    return t;
  }

 private:
  CudaStream stream_;
  DeviceBuffer a_, b_;
  std::unique_ptr<CudaEvent[]> ev_;
  int copies_ = 2;
};

struct OpRow {
  std::string res, format;
  OpCase c;
  OpTiming gpu;
  TimeSpread cpu_us;
  std::string notes;
};

constexpr size_t kRowAlign = 256;

OverlayColorimetry bench_colour() {
  OverlayColorimetry c;  // GStreamer's default for HD and UHD NV12 caps: BT.709, limited range
  c.matrix = ColorMatrix::BT709;
  c.range = ColorRange::Limited;
  return c;
}

// The op cases at a frame size: the two-line static text (the image the
// element renders), and the glyph lists the element blends for the time
// code and the clock strings.
std::vector<OpCase> op_cases(const Resolution& r, GstCudaFxTextRenderer& renderer,
                             GstCudaFxTextImage* static_img, GstCudaFxGlyphAtlas* atlas,
                             std::string* err) {
  std::vector<OpCase> out;
  const GstCudaFxTextStyle style = bench_style(r.w);
  if (!renderer.render(kStaticText, style, static_img, err))
    return out;
  OpCase s;
  s.what = "static text, two lines (blend_overlay)";
  s.text = "Camera 1 / Gate 4";
  s.pixels = &static_img->pixels;
  s.pitch = static_img->pitch;
  s.img_w = s.w = static_img->width;
  s.img_h = s.h = static_img->height;
  // About where textoverlay puts it (centred, near the bottom); even, so
  // 4:2:0 chroma samples line up the same at both sizes.
  s.x = ((r.w - s.w) / 2) & ~1;
  s.y = (r.h - s.h - 25) & ~1;
  out.push_back(s);

  const std::string time_code = std::string(kLabel) + " 0:00:01.234";
  const std::string clock = std::string(kLabel) + " 12:34:56";
  // The element's charset: its fixed set, the text, the string.
  if (!atlas->build(renderer, style, std::string("0123456789:;.-/ ") + kLabel + time_code + clock, err))
    return out;
  for (const std::string& text : {time_code, clock}) {
    GstCudaFxComposedText composed;
    atlas->compose(text, &composed);
    OpCase l;
    l.what = text == time_code ? "time code (blend_overlay_list)" : "clock (blend_overlay_list)";
    l.text = text;
    l.list = true;
    l.pixels = &atlas->pixels();
    l.pitch = atlas->pitch();
    l.img_w = atlas->width();
    l.img_h = atlas->height();
    const int x0 = ((r.w - composed.metrics.width) / 2) & ~1;
    const int y0 = (r.h - composed.metrics.height - 25) & ~1;
    int x1 = r.w, y1 = r.h, x2 = 0, y2 = 0;
    for (const GstCudaFxGlyphPlacement& g : composed.glyphs) {
      l.placements.push_back({g.src_x, g.src_y, g.width, g.height, x0 + g.x, y0 + g.y});
      x1 = std::min(x1, x0 + g.x);
      y1 = std::min(y1, y0 + g.y);
      x2 = std::max(x2, x0 + g.x + g.width);
      y2 = std::max(y2, y0 + g.y + g.height);
    }
    l.glyphs = static_cast<int>(l.placements.size());
    l.w = std::max(0, x2 - x1);
    l.h = std::max(0, y2 - y1);
    out.push_back(l);
  }
  return out;
}

void bench_ops(const Options& o, const DeviceFacts& dev, const Resolution& r, const char* format,
               GstCudaFxTextRenderer& renderer, GpuOpTimer* timer, std::vector<OpRow>* rows) {
  PixelFormat pf;
  format_from_name(format, &pf);
  const ImageDesc desc{pf, r.w, r.h};
  const OverlayColorimetry colour = bench_colour();
  GstCudaFxTextImage static_img;
  GstCudaFxGlyphAtlas atlas;
  std::string err;
  const std::vector<OpCase> cases = op_cases(r, renderer, &static_img, &atlas, &err);
  if (cases.empty()) {
    OpRow row;
    row.res = r.name;
    row.format = format;
    row.notes = "rendering failed: " + err;
    rows->push_back(row);
    return;
  }
  if (!err.empty()) {
    OpRow row;
    row.res = r.name;
    row.format = format;
    row.notes = "glyph atlas failed: " + err;
    rows->push_back(row);
  }
  const size_t frame_bytes = packed_size(desc, kRowAlign);
  // CPU backend: one host frame (warm: the op touches only the text's
  // rectangle), median of many calls.
  std::vector<uint8_t> host(frame_bytes, kFlatY);
  const ImageView host_view = packed_view(desc, host.data(), kRowAlign);
  // CUDA: one frame per call of a batch, the overlays on the device.
  DeviceBuffer frames;
  const bool gpu = dev.gpu && timer && frames.allocate(frame_bytes * GpuOpTimer::kBatch).is_ok();
  if (gpu)
    (void)fill_bytes_async(frames.get(), kFlatY, frame_bytes * GpuOpTimer::kBatch, timer->stream());
  for (const OpCase& c : cases) {
    OpRow row;
    row.res = r.name;
    row.format = format;
    row.c = c;
    const OverlayImage ov_host{c.pixels->data(), c.pitch, c.img_w, c.img_h};
    auto call = [&](Backend b, StreamHandle s, const ImageView& v, const OverlayImage& ov) {
      return c.list ? blend_overlay_list(b, s, v, ov, c.placements.data(), static_cast<int>(c.placements.size()), colour)
                    : blend_overlay(b, s, v, ov, c.x, c.y, colour);
    };
    Status st = call(Backend::Cpu, nullptr, host_view, ov_host);
    if (!st.is_ok()) {
      row.notes += "CPU: " + st.message() + "; ";
    } else {
      std::vector<double> t;
      for (int i = 0; i < (o.quick ? 20 : 500); i++) {
        const auto t0 = Clock::now();
        (void)call(Backend::Cpu, nullptr, host_view, ov_host);
        t.push_back(1e3 * ms_since(t0));
      }
      row.cpu_us = min_max(t);
    }
    if (gpu) {
      DeviceBuffer ov_dev;
      const size_t ov_bytes = c.pitch * c.img_h;
      if (!ov_dev.allocate(ov_bytes).is_ok() ||
          !copy_bytes_async(ov_dev.get(), c.pixels->data(), ov_bytes, timer->stream()).is_ok() ||
          !synchronize_stream(timer->stream()).is_ok()) {
        row.notes += "CUDA: cannot upload the overlay; ";
      } else {
        const OverlayImage ov{ov_dev.bytes(), c.pitch, c.img_w, c.img_h};
        std::string e;
        row.gpu = timer->time(o.quick ? 3 : 40, [&](int i) {
          const ImageView v = packed_view(desc, frames.bytes() + (i % GpuOpTimer::kBatch) * frame_bytes, kRowAlign);
          return call(Backend::Cuda, timer->stream(), v, ov);
        }, &e);
        if (!e.empty())
          row.notes += "CUDA: " + e + "; ";
        if (row.gpu.starved)
          row.notes += "CUDA: some batch was queued slower than the GPU ran it (times may include waits); ";
      }
    }
    rows->push_back(row);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, false, &o))
    return 2;
  gst_init(&argc, &argv);
  for (const char* f : {"cudatextoverlay", "textoverlay", "timeoverlay", "clockoverlay", "identity"}) {
    GstElementFactory* fac = gst_element_factory_find(f);
    if (!fac) {
      fprintf(stderr, "element %s not found (GST_PLUGIN_PATH? gstreamer1.0-x?)\n", f);
      return 1;
    }
    gst_object_unref(fac);
  }

  const DeviceFacts dev = measure_device();
  const Plan plan = plan_for(o);
  const std::string date = today_utc();

  std::ostringstream head;
  head << "## cudatextoverlay\n\n";
  head << "Measured " << date << " on **" << dev.name << "** with "
       << std::thread::hardware_concurrency() << " CPU threads, commit `" << o.commit
       << "`, by `bench/bench_textoverlay`" << (o.quick ? " (--quick: 1080p only, one round, few frames)" : "")
       << ".";
  if (dev.gpu)
    head << " Measured in the same run: device-to-device copy " << fmt("%.0f", dev.d2d_gbs)
         << " GB/s (bytes read + written), pinned host-to-device " << fmt("%.1f", dev.h2d_pinned_gbs)
         << " GB/s, device-to-host " << fmt("%.1f", dev.d2h_pinned_gbs) << " GB/s.";
  head << "\n\n";

  std::ostringstream intro;
  intro << "Text: font `" << kFont << "` (36 pt = 48 px at 96 dpi) with `auto-resize=false`, every "
           "other property at its default (white, outline and shadow, centred on the baseline, "
           "25-pixel pads), the same on our element and on the stock peers. Cases: *static text* "
           "`Camera 1\\nGate 4` (two lines; peer `textoverlay`); *time code* `Camera 1` plus the "
           "buffer time (`time-mode=buffer-time`, PTS advancing 1/30 s a frame, so the string "
           "changes every frame: `Camera 1 0:00:01.234`; peer `timeoverlay`); *clock* `Camera 1` "
           "plus the local time (`clock=true`, `%H:%M:%S`, changing once a second; peer "
           "`clockoverlay`). Our element draws the time code and the clock from its glyph atlas "
           "(one `blend_overlay_list` call a frame), the static text as one rendered image (one "
           "`blend_overlay` call a frame).\n\n";

  // ---- op level ----
  std::vector<OpRow> op_rows;
  {
    GstCudaFxTextRenderer renderer;
    std::unique_ptr<GpuOpTimer> timer;
    std::string note;
    if (dev.gpu) {
      timer.reset(new GpuOpTimer);
      if (!timer->init(&note)) {
        fprintf(stderr, "GPU op timer: %s\n", note.c_str());
        timer.reset();
      }
    }
    for (const Resolution& r : kTextResolutions) {
      if (o.quick && r.h > 1080)
        continue;
      for (const char* f : kFormats) {
        bench_ops(o, dev, r, f, renderer, timer.get(), &op_rows);
        fprintf(stderr, "op %s %s done\n", r.name, f);
      }
    }
  }

  std::ostringstream ops;
  ops << "### Blend op per frame (GPU and CPU), µs\n\n"
         "What the element queues per frame, alone: `blend_overlay` of the rendered static text "
         "(the element's image: its renderer with the element's style), `blend_overlay_list` of "
         "the glyphs the atlas composes for the time code and the clock strings (one call, one "
         "launch), onto a frame placed about where the element places them (centred, near the "
         "bottom); NV12 as BT.709 limited range. *GPU per call*: CUDA events between consecutive "
         "calls on a stream kept busy (each batch of "
      << GpuOpTimer::kBatch
      << " calls is queued behind a 256 MB+ device copy, so the host's submission is not in the "
         "time, and that copy flushes the L2: every call finds its frame region and its overlay "
         "cold), one frame per call; median (min–max) over "
      << (o.quick ? 3 : 40) << " batches, and the mean. *host per call*: the call's own time on "
         "the host (validation and launch). *CPU backend*: the op on a host frame, median (min–max) of "
      << (o.quick ? 20 : 500) << " calls (warm).\n\n";
  ops << "| resolution | format | what | string | overlay (px) | GPU per call | GPU mean | host per "
         "call (CUDA) | CPU backend |\n";
  ops << "|---|---|---|---|---|---:|---:|---:|---:|\n";
  std::string notes;
  double static_gpu_2160[2] = {-1, -1};  // RGBA, NV12: median per call
  for (const OpRow& row : op_rows) {
    const OpCase& c = row.c;
    std::string size = c.w > 0 ? std::to_string(c.w) + "x" + std::to_string(c.h) : "n/a";
    if (c.list)
      size += ", " + std::to_string(c.glyphs) + " glyphs";
    ops << "| " << row.res << " | " << row.format << " | " << (c.what.empty() ? "n/a" : c.what) << " | `"
        << c.text << "` | " << size << " | " << spread_cell(row.gpu.gpu_us, "%.1f") << " | "
        << cell(row.gpu.gpu_mean_us, "%.1f") << " | " << spread_cell(row.gpu.host_us, "%.1f") << " | "
        << spread_cell(row.cpu_us, "%.1f") << " |\n";
    if (!c.list && !c.what.empty() && row.res == std::string("2160p"))
      static_gpu_2160[row.format == std::string("RGBA") ? 0 : 1] = row.gpu.gpu_us.n ? row.gpu.gpu_us.median : -1;
    if (!row.notes.empty())
      notes += "- op " + row.res + " " + row.format + " " + c.what + ": " + row.notes + "\n";
  }
  ops << "\n";

  // ---- element level ----
  std::vector<ElementRow> rows;
  std::string pool_kinds;
#if HAVE_GSTCUDA
  GstCudaContext* ctx = dev.gpu && gst_cuda_load_library() ? gst_cuda_context_new(0) : nullptr;
#endif
  for (const Resolution& r : kTextResolutions) {
    if (o.quick && r.h > 1080)
      continue;
    for (const char* f : kFormats) {
      ChainSet pools;
      pools.gpu = dev.gpu;
      std::string err;
      const int count = 16;
      pools.sys = system_pool(caps_for(f, r.w, r.h, false), count, dev.gpu, &err);
      if (!pools.sys.pool)
        notes += std::string("- ") + r.name + " " + f + ": system pool: " + err + "\n";
      pool_kinds = pools.sys.kind;
#if HAVE_GSTCUDA
      if (ctx) {
        err.clear();
        pools.cuda = cuda_pool(caps_for(f, r.w, r.h, true), count, ctx, &err);
        pools.chain = pools.cuda.pool != nullptr;
        if (!pools.chain)
          notes += std::string("- ") + r.name + " " + f + ": CUDA pool: " + err + "\n";
      }
#endif
      for (const Case& c : kCases) {
        ElementRow row;
        row.res = r.name;
        row.format = f;
        row.case_name = c.name;
        row.peer = c.peer;
        bench_row(o, pools, c, &row);
        if (!row.notes.empty())
          notes += "- " + row.res + " " + row.format + " " + row.case_name + ": " + row.notes + "\n";
        rows.push_back(row);
        fprintf(stderr, "element %s %s %s done\n", r.name, f, c.name);
      }
      release(pools.sys);
      release(pools.cuda);
    }
  }
#if HAVE_GSTCUDA
  if (ctx)
    gst_object_unref(ctx);
#endif

  std::ostringstream elem;
  elem << "### Element per frame, frames/s (ms/frame)\n\n"
          "`appsrc ! ELEMENT ! capsfilter ! fakesink sync=false`, fed from a pool of 16 pre-made "
          "flat grey frames, each pushed with its only reference (in-place elements blend into it "
          "without a copy; a copy would be noted below) and back in the pool once the sink drops "
          "it; frames/s over the frames after the first ten, ms/frame = 1000 / frames/s. "
          "*CUDA chain*: `memory:CUDAMemory` in and out (shared context), `backend=cuda`; "
          "*identity*: the same chain with `identity` in the element's place. *added*: per round, "
          "ms/frame of the element's chain minus the identity chain's, in µs: median (min–max). "
          "*system*: "
       << pool_kinds
       << " for every system-memory pipeline, ours with `backend=cuda` (the in-place mode "
          "uploads and downloads the whole frame) and `backend=cpu`, and the stock peer (a "
          "capsfilter `video/x-raw` after every system-memory element, so the peers blend rather "
          "than attach a composition meta). "
       << plan.rounds << (plan.rounds == 1 ? " round" : " rounds")
       << ", each running every pipeline of a row once (the two chains in alternating order); "
          "frames per run: chains "
       << plan.frames[kOursChain] << ", system CUDA " << plan.frames[kOursSysCuda] << ", system CPU "
       << plan.frames[kOursSysCpu] << ", stock " << plan.frames[kStock]
       << "; medians over the rounds. *vs stock*: the stock peer's ms/frame over ours (above 1: "
          "ours faster). *text px*: pixels (RGBA) or luma samples (NV12) the first output frame "
          "changed, ours (CUDA chain, else CPU backend) / the peer's: both drew comparable text. "
          "Pad probes on the element (see the next table) run in every pipeline, the identity "
          "chain's included.\n\n";
  elem << "| resolution | format | case | CUDA chain | identity chain | added µs | system, CUDA | "
          "system, CPU | stock peer | vs stock (CPU / CUDA chain) | text px |\n";
  elem << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  double worst_added = -1e300;
  std::string worst_added_where;
  bool added_all = true;
  // The same from the probes: the element's chain function time minus
  // identity's (medians), a check on the throughput difference (which a
  // pusher-bound identity chain would understate).
  double worst_probe_added = -1e300;
  std::string worst_probe_where;
  std::ostringstream host;
  host << "### Element host time per frame, µs\n\n"
          "The element's chain function per buffer: pad probes on its sink and src pads stamp "
          "each buffer (steady clock) when it arrives and when the element pushes it downstream "
          "(base class, time or clock string, atlas composition, the blend's launch, the stream's "
          "synchronisation for the CUDA backend, map and unmap); the same pipelines as above, "
          "frames after the first ten of every round: median (p10–p90). *identity*: the same "
          "probes around `identity` in the CUDA chain (the probes' and GStreamer's own share).\n\n";
  host << "| resolution | format | case | ours, CUDA chain | identity, CUDA chain | ours, system, CPU "
          "backend | stock peer, system |\n";
  host << "|---|---|---|---:|---:|---:|---:|\n";
  std::vector<std::pair<std::string, double>> host_timecode;  // where, median us (CUDA chain)
  for (const ElementRow& row : rows) {
    const double chain = row.fps_median(kOursChain), id = row.fps_median(kIdentityChain);
    const double cpu = row.fps_median(kOursSysCpu), stock = row.fps_median(kStock);
    const TimeSpread added = min_max(row.added_us);
    std::string vs = cpu > 0 && stock > 0 ? fmt("%.2f", cpu / stock) : std::string("n/a");
    vs += " / " + (chain > 0 && stock > 0 ? fmt("%.2f", chain / stock) : std::string("n/a"));
    elem << "| " << row.res << " | " << row.format << " | " << row.case_name << " | " << fps_cell(chain)
         << " | " << fps_cell(id) << " | " << (added.n ? spread_cell(added, "%.1f") : std::string("n/a"))
         << " | " << fps_cell(row.fps_median(kOursSysCuda)) << " | " << fps_cell(cpu) << " | `"
         << row.peer << "` " << fps_cell(stock) << " | " << vs << " | "
         << (row.changed_ours >= 0 ? std::to_string(row.changed_ours) : std::string("n/a")) << " / "
         << (row.changed_stock >= 0 ? std::to_string(row.changed_stock) : std::string("n/a")) << " |\n";
    if (added.n) {
      if (added.median > worst_added) {
        worst_added = added.median;
        worst_added_where = row.res + " " + row.format + " " + row.case_name;
      }
    } else {
      added_all = false;
    }
    auto pc = [&](int run) {
      const TimeSpread s = percentiles(row.chain_us[run]);
      return s.n ? spread_cell(s, "%.1f") : std::string("n/a");
    };
    host << "| " << row.res << " | " << row.format << " | " << row.case_name << " | " << pc(kOursChain)
         << " | " << pc(kIdentityChain) << " | " << pc(kOursSysCpu) << " | `" << row.peer << "` "
         << pc(kStock) << " |\n";
    if (!row.chain_us[kOursChain].empty() && !row.chain_us[kIdentityChain].empty()) {
      const double d = percentiles(row.chain_us[kOursChain]).median -
                       percentiles(row.chain_us[kIdentityChain]).median;
      if (d > worst_probe_added) {
        worst_probe_added = d;
        worst_probe_where = row.res + " " + row.format + " " + row.case_name;
      }
    }
    if (row.case_name == std::string("time code"))
      host_timecode.push_back({row.res + " " + row.format,
                               row.chain_us[kOursChain].empty() ? -1 : percentiles(row.chain_us[kOursChain]).median});
  }
  elem << "\n";
  host << "\n";

  // ---- targets, judged on this run ----
  std::ostringstream targets;
  targets << "| target (issue #14) | measured | met |\n|---|---|---|\n";
  targets << "| GPU work per frame ≤ 20 µs at 2160p, two lines of 48 px text (`blend_overlay` of the "
             "static text, median per call, cold) | ";
  if (static_gpu_2160[0] > 0 || static_gpu_2160[1] > 0) {
    targets << "RGBA " << cell(static_gpu_2160[0], "%.1f") << " µs, NV12 " << cell(static_gpu_2160[1], "%.1f")
            << " µs | ";
    const bool both = static_gpu_2160[0] > 0 && static_gpu_2160[1] > 0;
    targets << (both ? yes_no(static_gpu_2160[0] <= 20 && static_gpu_2160[1] <= 20)
                     : yes_no(false) + " (not both measured)")
            << " |\n";
  } else {
    targets << "not measured" << (o.quick ? " (--quick: no 2160p)" : "") << " | n/a |\n";
  }
  targets << "| host work per frame for a changing time code ≤ 30 µs (the element's chain function "
             "in a CUDA chain, median) | ";
  double worst_host = -1;
  bool host_all = !host_timecode.empty();
  std::string host_list;
  for (const auto& h : host_timecode) {
    host_list += (host_list.empty() ? "" : ", ") + h.first + " " + cell(h.second, "%.1f") + " µs";
    host_all = host_all && h.second > 0;
    worst_host = std::max(worst_host, h.second);
  }
  if (worst_host > 0)
    targets << host_list << " | " << yes_no(worst_host <= 30) << (host_all ? "" : " (not every case measured)")
            << " |\n";
  else
    targets << "not measured | n/a |\n";
  targets << "| element added to a CUDA-memory chain ≤ 50 µs per frame (vs `identity`: paired "
             "throughput difference, median, worst row; checked by the probes' chain-function "
             "difference, both must hold) | ";
  if (!worst_added_where.empty()) {
    targets << "throughput: " << fmt("%.1f", worst_added) << " µs (" << worst_added_where << ")";
    if (!worst_probe_where.empty())
      targets << "; chain function, element − identity: " << fmt("%.1f", worst_probe_added) << " µs ("
              << worst_probe_where << ")";
    const bool probe_ok = worst_probe_where.empty() || worst_probe_added <= 50;
    targets << " | " << yes_no(worst_added <= 50 && probe_ok)
            << (worst_added <= 50 && !probe_ok ? " (by the chain-function check)" : "")
            << (added_all ? "" : " (not every row measured)") << " |\n";
  } else
    targets << "not measured | n/a |\n";
  targets << "\n";

  std::string text = head.str() + targets.str() + intro.str() + ops.str() + elem.str() + host.str();
  if (!notes.empty())
    text += "Errors and remarks:\n" + notes + "\n";
  fputs(text.c_str(), stdout);
  return write_report_section(o.out, "bench_textoverlay", text) ? 0 : 1;
}
