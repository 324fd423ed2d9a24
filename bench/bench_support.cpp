#include "bench_support.hpp"

#include <ctime>

#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "cudafx/cuda_resources.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudautils.h>
#endif

using namespace cudafx;

namespace bench {

bool parse_options(int argc, char** argv, bool takes_npp, BenchOptions* o,
                   std::initializer_list<std::pair<const char*, bool*>> flags) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    bool known = true;
    if (a == "--out" && i + 1 < argc) {
      o->out = argv[++i];
    } else if (a == "--commit" && i + 1 < argc) {
      o->commit = argv[++i];
    } else if (takes_npp && a == "--npp" && i + 1 < argc) {
      o->npp = argv[++i];
    } else if (a == "--quick") {
      o->quick = true;
    } else {
      known = false;
      for (const auto& f : flags)
        if (a == f.first)
          *f.second = known = true;
    }
    if (!known) {
      std::string usage = std::string("usage: ") + argv[0] + " [--out FILE] [--commit SHA]" +
                          (takes_npp ? " [--npp PATH]" : "") + " [--quick]";
      for (const auto& f : flags)
        usage += std::string(" [") + f.first + "]";
      fprintf(stderr, "%s\n", usage.c_str());
      return false;
    }
  }
  return true;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string fmt(const char* f, double v) {
  char b[64];
  snprintf(b, sizeof b, f, v);
  return b;
}

std::string today_utc() {
  const time_t now = time(nullptr);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  return date;
}

Spread spread_of(std::vector<double> v) {
  Spread s;
  if (v.empty())
    return s;
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.lo = v.front();
  s.hi = v.back();
  return s;
}

std::string spread_cell(const Spread& s, const char* f) {
  if (s.median < 0)
    return "n/a";
  return fmt(f, s.median) + " (" + fmt(f, s.lo) + "–" + fmt(f, s.hi) + ")";
}

void fill(std::vector<uint8_t>& v) {
  uint32_t s = 12345;
  for (auto& b : v) {
    s = s * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(s >> 24);
  }
}

std::string cell(double v, const char* f) { return v < 0 ? "n/a" : fmt(f, v); }


DeviceFacts measure_device() {
  DeviceFacts f;
  int n = 0;
  if (!cuda_device_count(&n).is_ok() || n == 0 || !cuda_use_device(0).is_ok())
    return f;
  f.gpu = true;
  (void)cuda_device_name(0, &f.name);
  CudaStream s;
  CudaEvent a, b;
  if (!s.create().is_ok() || !a.create().is_ok() || !b.create().is_ok())
    return f;
  const size_t big = size_t(1) << 30;
  DeviceBuffer x, y;
  if (!x.allocate(big).is_ok() || !y.allocate(big).is_ok())
    return f;
  auto timed = [&](void* dst, const void* src, size_t bytes, int reps, double counted) {
    (void)copy_bytes_async(dst, src, bytes, s.get());
    (void)a.record(s.get());
    for (int i = 0; i < reps; i++)
      (void)copy_bytes_async(dst, src, bytes, s.get());
    (void)b.record(s.get());
    (void)b.synchronize();
    float ms = 0;
    (void)b.elapsed_since(a, &ms);
    return counted * reps / (ms * 1e-3) / 1e9;
  };
  f.d2d_gbs = timed(y.get(), x.get(), big, 20, 2.0 * big);
  const size_t host = size_t(256) << 20;
  PinnedBuffer p;
  if (p.allocate(host).is_ok()) {
    f.h2d_pinned_gbs = timed(x.get(), p.get(), host, 10, host);
    f.d2h_pinned_gbs = timed(p.get(), x.get(), host, 10, host);
  }
  return f;
}

int cold_count(size_t bytes_per_frame) {
  return static_cast<int>(
      std::min<size_t>(kMaxColdFrames, (kColdBytes + bytes_per_frame - 1) / bytes_per_frame));
}

size_t align_row(size_t v) { return (v + kRowAlign - 1) / kRowAlign * kRowAlign; }

bool make_frames(DeviceFrames* f, size_t frame_bytes, int count, const uint8_t* first,
                 StreamHandle s) {
  f->frame_bytes = frame_bytes;
  f->count = count;
  if (!f->mem.allocate(frame_bytes * count).is_ok())
    return false;
  if (first && !copy_bytes_async(f->frame(0), first, frame_bytes, s).is_ok())
    return false;
  for (int i = 1; first && i < count; i++)
    if (!copy_bytes_async(f->frame(i), f->frame(0), frame_bytes, s).is_ok())
      return false;
  return synchronize_stream(s).is_ok();
}

std::vector<uint8_t> padded_rows(const ImageDesc& desc, const std::vector<uint8_t>& packed) {
  std::vector<uint8_t> out(packed_size(desc, kRowAlign));
  const size_t row = static_cast<size_t>(desc.width) * format_info(desc.format).planes[0].channels;
  const size_t pitch = packed_view(desc, out.data(), kRowAlign).pitch[0];
  for (int y = 0; y < desc.height; y++)
    memcpy(out.data() + y * pitch, packed.data() + y * row, row);
  return out;
}

CopyRoof cold_copy(size_t frame_bytes, int iters) {
  CopyRoof r;
  const int count = cold_count(2 * frame_bytes);
  CudaStream s;
  DeviceFrames src, dst;
  if (!s.create().is_ok() || !make_frames(&src, frame_bytes, count, nullptr, s.get()) ||
      !make_frames(&dst, frame_bytes, count, nullptr, s.get()))
    return r;
  // Defined bytes (the copy does not care; a checker would).
  if (!fill_bytes_async(src.mem.get(), 0x5a, frame_bytes * count, s.get()).is_ok())
    return r;
  int next = 0;
  r.ms = cuda_ms_per_call(s.get(), count, std::max(iters, count), [&] {
    const int i = next++;
    (void)copy_bytes_async(dst.frame(i), src.frame(i), frame_bytes, s.get());
  });
  r.frames = count;
  r.bytes = 2 * frame_bytes * count;
  if (r.ms > 0)
    r.gbs = 2.0 * frame_bytes / (r.ms * 1e-3) / 1e9;
  return r;
}

HelperTimes helper_times(const std::string& cmd) {
  HelperTimes t;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return t;
  char line[256];
  while (fgets(line, sizeof line, p)) {
    if (sscanf(line, "ms=%lf", &t.ms) != 1 && sscanf(line, "hot_ms=%lf", &t.hot_ms) != 1 &&
        sscanf(line, "frames=%d", &t.frames) != 1)
      fprintf(stderr, "%s: %s", cmd.c_str(), line);
  }
  pclose(p);
  return t;
}

double helper_ms(const std::string& cmd) { return helper_times(cmd).ms; }

std::string rotation_text(const KernelTimes& k, const CopyRoof& c, const HelperTimes& npp) {
  auto mb = [](size_t b) { return fmt("%.0f MB", b / 1e6); };
  return "CUDA " + std::to_string(k.frames) + " pairs (" + mb(k.bytes) + "), copy " +
         std::to_string(c.frames) + " (" + mb(c.bytes) + "), NPP " +
         (npp.frames > 0 ? std::to_string(npp.frames) : std::string("n/a"));
}

// Runs appsrc ! `chain` ! fakesink over `frames` buffers; frames per second
// over the frames after the first ten (pool and context set-up excluded).
double run_pipeline(const std::string& chain, const Feed& feed, int frames, std::string* err) {
  if (feed.buffers.empty()) {
    *err = "no input buffers";
    return -1;
  }
  const std::string desc = "appsrc name=src format=time block=true max-bytes=0 max-buffers=4 caps=\"" +
                           feed.caps + "\" ! " + chain +
                           " ! fakesink name=sink sync=false signal-handoffs=true";
  GError* gerr = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &gerr);
  if (!pipeline) {
    *err = gerr ? gerr->message : "parse failed";
    g_clear_error(&gerr);
    return -1;
  }
  if (feed.context)
    gst_element_set_context(pipeline, feed.context);
  struct Stamps {
    std::vector<Clock::time_point> t;
  } stamps;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_signal_connect(sink, "handoff",
                   G_CALLBACK(+[](GstElement*, GstBuffer*, GstPad*, gpointer u) {
                     static_cast<Stamps*>(u)->t.push_back(Clock::now());
                   }),
                   &stamps);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  std::thread pusher([&] {
    for (int i = 0; i < frames; i++) {
      if (gst_app_src_push_buffer(GST_APP_SRC(src),
                                  gst_buffer_ref(feed.buffers[i % feed.buffers.size()])) !=
          GST_FLOW_OK)
        break;
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
  });
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* msg = gst_bus_timed_pop_filtered(bus, 300 * GST_SECOND,
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  double fps = -1;
  if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    *err = e->message;
    g_error_free(e);
  } else if (msg && stamps.t.size() > 12) {
    const double s =
        std::chrono::duration<double>(stamps.t.back() - stamps.t[10]).count();
    fps = (stamps.t.size() - 11) / s;
  } else {
    *err = "no EOS";
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);  // unblocks the pusher on error
  pusher.join();
  if (msg)
    gst_message_unref(msg);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return fps;
}

// Input buffers from the pool that `element_desc` proposes upstream once
// negotiated (pinned memory for the CUDA backend), filled with noise.
Feed system_feed(const std::string& element_desc, const std::string& caps_str, int count,
                 const std::string& out_caps_str) {
  Feed feed;
  feed.caps = caps_str;
  GstHarness* h = gst_harness_new_parse(element_desc.c_str());
  gst_harness_set_caps_str(h, caps_str.c_str(),
                           (out_caps_str.empty() ? caps_str : out_caps_str).c_str());
  GstCaps* caps = gst_caps_from_string(caps_str.c_str());
  GstVideoInfo info;
  gst_video_info_from_caps(&info, caps);
  GstBufferPool* pool = nullptr;
  GstQuery* q = gst_query_new_allocation(caps, TRUE);
  if (gst_pad_peer_query(h->srcpad, q) && gst_query_get_n_allocation_pools(q) > 0)
    gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
  gst_query_unref(q);
  if (pool && !gst_buffer_pool_set_active(pool, TRUE))
    gst_clear_object(&pool);
  // Said aloud: a feed the element did not allocate (a failed query, e.g.
  // output caps the element cannot produce) is pageable memory, and the
  // numbers would time the pageable bus, not the element (bench_delta's
  // encoder rows did until 2026-11-26).
  if (!pool)
    fprintf(stderr, "system_feed(%s): no pool from the element, feeding plain system memory\n",
            element_desc.c_str());
  std::vector<uint8_t> noise(GST_VIDEO_INFO_SIZE(&info));
  fill(noise);
  for (int i = 0; i < count; i++) {
    GstBuffer* b = nullptr;
    if (!pool || gst_buffer_pool_acquire_buffer(pool, &b, nullptr) != GST_FLOW_OK)
      b = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
    gst_buffer_fill(b, 0, noise.data(), noise.size());
    // Detach from the pool so that the pool can go; the memory stays pinned.
    GstBuffer* copy = gst_buffer_new();
    gst_buffer_copy_into(copy, b,
                         static_cast<GstBufferCopyFlags>(GST_BUFFER_COPY_METADATA | GST_BUFFER_COPY_MEMORY),
                         0, -1);
    gst_buffer_unref(b);
    feed.buffers.push_back(copy);
  }
  if (pool) {
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
  }
  gst_caps_unref(caps);
  gst_harness_teardown(h);
  return feed;
}

#if HAVE_GSTCUDA
Feed cuda_feed(const std::string& caps_str, int count, GstCudaContext* ctx) {
  Feed feed;
  feed.caps = caps_str;
  // The CUDA allocator the pool takes is registered here; where no element
  // of ours has been loaded yet (bench_chain builds its feed first) the
  // pool would refuse every config without it.
  gst_cuda_memory_init_once();
  feed.context = gst_context_new_cuda_context(ctx);
  GstCaps* caps = gst_caps_from_string(caps_str.c_str());
  GstVideoInfo info;
  gst_video_info_from_caps(&info, caps);
  GstBufferPool* pool = gst_cuda_buffer_pool_new(ctx);
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), 0, 0);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config(pool, config)) {
    // The pool may amend the config (row padding); take its amendment.
    config = gst_buffer_pool_get_config(pool);
    if (!gst_buffer_pool_set_config(pool, config))
      fprintf(stderr, "cuda_feed: the CUDA pool refuses its config\n");
  }
  if (!gst_buffer_pool_set_active(pool, TRUE))
    fprintf(stderr, "cuda_feed: cannot activate the CUDA pool\n");
  std::vector<uint8_t> noise(GST_VIDEO_INFO_SIZE(&info));
  fill(noise);
  for (int i = 0; i < count; i++) {
    GstBuffer* b = nullptr;
    const GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool, &b, nullptr);
    if (ret != GST_FLOW_OK) {
      fprintf(stderr, "cuda_feed: acquire failed: %s\n", gst_flow_get_name(ret));
      break;
    }
    GstVideoFrame f;
    if (gst_video_frame_map(&f, &info, b, GST_MAP_WRITE)) {  // uploaded at unmap
      for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&f); p++)
        for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&f, p); y++)
          memcpy(static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p)) +
                     y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, p),
                 noise.data(), GST_VIDEO_FRAME_COMP_WIDTH(&f, p) * GST_VIDEO_FRAME_COMP_PSTRIDE(&f, p));
      gst_video_frame_unmap(&f);
    }
    feed.buffers.push_back(b);  // stays the pool's; released before the pool goes
  }
  gst_buffer_pool_set_active(pool, FALSE);  // outstanding buffers keep it alive
  gst_object_unref(pool);
  gst_caps_unref(caps);
  return feed;
}
#endif

void release(Feed& f) {
  for (GstBuffer* b : f.buffers)
    gst_buffer_unref(b);
  f.buffers.clear();
  if (f.context)
    gst_context_unref(f.context);
  f.context = nullptr;
}

bool refill(Feed& feed, int first, int step, const uint8_t* packed) {
  GstCaps* caps = gst_caps_from_string(feed.caps.c_str());
  GstVideoInfo info;
  const bool ok = gst_video_info_from_caps(&info, caps);
  gst_caps_unref(caps);
  if (!ok)
    return false;
  for (size_t i = first; i < feed.buffers.size(); i += step) {
    GstVideoFrame f;
    if (!gst_video_frame_map(&f, &info, feed.buffers[i], GST_MAP_WRITE))  // CUDA: uploaded at unmap
      return false;
    const uint8_t* src = packed;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&f); p++) {
      const size_t row = static_cast<size_t>(GST_VIDEO_FRAME_COMP_WIDTH(&f, p)) *
                         GST_VIDEO_FRAME_COMP_PSTRIDE(&f, p);
      for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&f, p); y++, src += row)
        memcpy(static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p)) +
                   y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, p),
               src, row);
    }
    gst_video_frame_unmap(&f);
  }
  return true;
}

std::string caps_for(const char* format, int w, int h, bool cuda) {
  return std::string("video/x-raw") + (cuda ? "(memory:CUDAMemory)" : "") + ",format=" + format +
         ",width=" + std::to_string(w) + ",height=" + std::to_string(h) + ",framerate=30/1";
}

}  // namespace bench
