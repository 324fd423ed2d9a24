// Gaussian benchmark: kernel and element throughput against peers measured
// in the same run. Not a test: prints tables and writes a Markdown report.
//
// Usage: bench_gaussian [--out FILE] [--commit SHA] [--npp PATH] [--quick]
//   --npp: the npp_gaussian helper (bench/npp_gaussian.cu), if built.
//   --quick: fewer sizes and iterations (for a smoke run without a GPU).
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "report.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/parallel.hpp"
#include "gstcudafxconfig.h"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

using namespace cudafx;
using Clock = std::chrono::steady_clock;

namespace {

struct Resolution {
  const char* name;
  int w, h;
};
const Resolution kResolutions[] = {
    {"480p", 640, 480}, {"720p", 1280, 720}, {"1080p", 1920, 1080},
    {"1440p", 2560, 1440}, {"2160p", 3840, 2160}};

struct KernelCase {
  const char* name;
  int ksize;  // 0: from sigma
  double sigma;
};
const KernelCase kKernels[] = {{"3x3 (σ=0.8)", 3, 0.8}, {"5x5 (σ=1.1)", 5, 1.1}, {"σ=3 (19x19)", 0, 3.0}};

struct Options {
  std::string out = "docs/benchmarks.md";
  std::string commit = "unknown";
  std::string npp;
  bool quick = false;
  bool profile = false;  // only the 5x5 2160p kernel, for a profiler
  bool profile_element = false;  // only the 2160p system-memory element run
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Median of `reps` timings of fn().
template <class F>
double median_ms(int reps, F fn) {
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string fmt(const char* f, double v) {
  char b[64];
  snprintf(b, sizeof b, f, v);
  return b;
}

void fill(std::vector<uint8_t>& v) {
  uint32_t s = 12345;
  for (auto& b : v) {
    s = s * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(s >> 24);
  }
}

struct DeviceFacts {
  bool gpu = false;
  std::string name = "no GPU";
  double d2d_gbs = 0;     // read + written bytes per second
  double h2d_pinned_gbs = 0;
  double d2h_pinned_gbs = 0;
};

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

double npp_ms(const Options& o, int w, int h, int ksize, double sigma) {
  if (o.npp.empty())
    return -1;
  const std::string cmd = o.npp + " " + std::to_string(w) + " " + std::to_string(h) + " " +
                          std::to_string(ksize) + " " + std::to_string(sigma) + " 50 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p)
    return -1;
  char line[256];
  double ms = -1;
  while (fgets(line, sizeof line, p)) {
    if (sscanf(line, "ms=%lf", &ms) != 1)
      fprintf(stderr, "npp_gaussian: %s", line);
  }
  pclose(p);
  return ms;
}

struct KernelRow {
  std::string res;
  double cpu = -1, opencv = -1, cuda = -1, npp = -1;
  size_t bytes = 0;
};

KernelRow bench_kernel(const Options& o, const DeviceFacts& dev, const Resolution& r,
                       const KernelCase& k) {
  KernelRow row;
  row.res = r.name;
  const ImageDesc desc{PixelFormat::RGBA, r.w, r.h};
  const size_t size = packed_size(desc);
  row.bytes = 2 * size;
  std::vector<uint8_t> src(size), dst(size);
  fill(src);
  GaussianParams p;
  p.sigma_x = k.sigma;
  p.kernel_size_x = k.ksize;
  const int reps = o.quick ? 2 : 5;

  std::unique_ptr<GaussianOp> cpu;
  if (GaussianOp::create(Backend::Cpu, desc, p, &cpu).is_ok()) {
    const ImageView s = packed_view(desc, src.data()), d = packed_view(desc, dst.data());
    (void)cpu->submit(nullptr, s, d);
    row.cpu = median_ms(reps, [&] { (void)cpu->submit(nullptr, s, d); });
  }
  GaussianPlan plan;
  (void)plan_gaussian(desc, p, &plan);
  const int ks = 2 * plan.planes[0].x.radius + 1;
  cv::Mat ms(r.h, r.w, CV_8UC4, src.data()), md(r.h, r.w, CV_8UC4, dst.data());
  cv::GaussianBlur(ms, md, cv::Size(ks, ks), k.sigma, k.sigma, cv::BORDER_REPLICATE);
  row.opencv = median_ms(reps, [&] {
    cv::GaussianBlur(ms, md, cv::Size(ks, ks), k.sigma, k.sigma, cv::BORDER_REPLICATE);
  });

  if (dev.gpu) {
    CudaStream stream;
    CudaEvent a, b;
    DeviceBuffer din, dout;
    std::unique_ptr<GaussianOp> op;
    if (stream.create().is_ok() && a.create().is_ok() && b.create().is_ok() &&
        din.allocate(size).is_ok() && dout.allocate(size).is_ok() &&
        GaussianOp::create(Backend::Cuda, desc, p, &op).is_ok()) {
      const ImageView vi = packed_view(desc, din.bytes()), vo = packed_view(desc, dout.bytes());
      (void)copy_image_async(vi, packed_view(desc, src.data()), stream.get());
      const int iters = o.quick ? 5 : 100;
      for (int i = 0; i < 5; i++)
        (void)op->submit(stream.get(), vi, vo);
      (void)a.record(stream.get());
      for (int i = 0; i < iters; i++)
        (void)op->submit(stream.get(), vi, vo);
      (void)b.record(stream.get());
      (void)b.synchronize();
      float ms = 0;
      if (b.elapsed_since(a, &ms).is_ok())
        row.cuda = ms / iters;
    }
    row.npp = npp_ms(o, r.w, r.h, ks, k.sigma);
  }
  return row;
}

// ---- element throughput ----

struct Feed {
  std::string caps;
  std::vector<GstBuffer*> buffers;  // pushed round-robin, by reference
  GstContext* context = nullptr;    // given to every element of the pipeline
};

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
Feed system_feed(const std::string& element_desc, const std::string& caps_str, int count) {
  Feed feed;
  feed.caps = caps_str;
  GstHarness* h = gst_harness_new_parse(element_desc.c_str());
  gst_harness_set_caps_str(h, caps_str.c_str(), caps_str.c_str());
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

std::string caps_for(const char* format, int w, int h, bool cuda) {
  return std::string("video/x-raw") + (cuda ? "(memory:CUDAMemory)" : "") + ",format=" + format +
         ",width=" + std::to_string(w) + ",height=" + std::to_string(h) + ",framerate=30/1";
}

struct ElementRow {
  std::string res;
  double frame_mb = 0;
  double sys_cuda = -1, chain_cuda = -1, sys_cpu = -1, stock = -1;
  std::string notes;
};

ElementRow bench_element(const Options& o, const DeviceFacts& dev, const Resolution& r) {
  ElementRow row;
  row.res = r.name;
  row.frame_mb = r.w * r.h * 4 / 1e6;
  const std::string sys = caps_for("RGBA", r.w, r.h, false);
  const int frames = o.quick ? 15 : 200;
  std::string err;
  if (dev.gpu) {
    const std::string el = "cudagaussian backend=cuda sigma=1.1 kernel-size=5";
    Feed f = system_feed(el, sys, 4);
    row.sys_cuda = run_pipeline(el, f, frames, &err);
    if (!err.empty())
      row.notes += "system/cuda: " + err + "; ";
    release(f);
#if HAVE_GSTCUDA
    err.clear();
    if (gst_cuda_load_library()) {
      GstCudaContext* ctx = gst_cuda_context_new(0);
      if (ctx) {
        Feed c = cuda_feed(caps_for("RGBA", r.w, r.h, true), 4, ctx);
        row.chain_cuda = run_pipeline(
            el + " ! capsfilter caps=video/x-raw(memory:CUDAMemory)", c, frames * 2, &err);
        if (!err.empty())
          row.notes += "CUDA chain: " + err + "; ";
        release(c);
        gst_object_unref(ctx);
      }
    }
#endif
  }
  err.clear();
  const std::string cpu_el = "cudagaussian backend=cpu sigma=1.1 kernel-size=5";
  Feed f = system_feed(cpu_el, sys, 4);
  row.sys_cpu = run_pipeline(cpu_el, f, o.quick ? 13 : 40, &err);
  if (!err.empty())
    row.notes += "cpu: " + err + "; ";
  release(f);
  // The stock element (gst-plugins-bad gaudieffects) takes AYUV only.
  if (GstElementFactory* fac = gst_element_factory_find("gaussianblur")) {
    gst_object_unref(fac);
    err.clear();
    Feed a = system_feed("identity", caps_for("AYUV", r.w, r.h, false), 2);
    row.stock = run_pipeline("gaussianblur sigma=1.1", a, 13, &err);
    if (!err.empty())
      row.notes += "gaussianblur: " + err + "; ";
    release(a);
  }
  return row;
}

std::string cell(double v, const char* f = "%.3f") { return v < 0 ? "n/a" : fmt(f, v); }

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) o.out = argv[++i];
    else if (a == "--commit" && i + 1 < argc) o.commit = argv[++i];
    else if (a == "--npp" && i + 1 < argc) o.npp = argv[++i];
    else if (a == "--quick") o.quick = true;
    else if (a == "--profile-kernel") o.profile = true;
    else if (a == "--profile-element") o.profile_element = true;
    else {
      fprintf(stderr, "usage: %s [--out FILE] [--commit SHA] [--npp PATH] [--quick]\n", argv[0]);
      return 2;
    }
  }
  gst_init(&argc, &argv);
  cv::setNumThreads(std::thread::hardware_concurrency());
  if (o.profile) {
    DeviceFacts dev;
    dev.gpu = cuda_use_device(0).is_ok();
    const KernelRow row = bench_kernel(o, dev, kResolutions[4], kKernels[1]);
    printf("5x5 2160p: %.4f ms\n", row.cuda);
    return 0;
  }
  if (o.profile_element) {
    const Resolution& r = kResolutions[4];
    const std::string el = "cudagaussian backend=cuda sigma=1.1 kernel-size=5";
    Feed f = system_feed(el, caps_for("RGBA", r.w, r.h, false), 4);
    // How fast the feed's memory crosses the bus on its own.
    if (cuda_use_device(0).is_ok()) {
      GstMapInfo map;
      gst_buffer_map(f.buffers[0], &map, GST_MAP_READ);
      GstMemory* mem = gst_buffer_peek_memory(f.buffers[0], 0);
      DeviceBuffer d;
      CudaStream st;
      CudaEvent a, b;
      if (d.allocate(map.size).is_ok() && st.create().is_ok() && a.create().is_ok() &&
          b.create().is_ok()) {
        for (int dir = 0; dir < 2; dir++) {
          (void)a.record(st.get());
          for (int i = 0; i < 10; i++)
            (void)(dir == 0 ? copy_bytes_async(d.get(), map.data, map.size, st.get())
                            : copy_bytes_async(map.data, d.get(), map.size, st.get()));
          (void)b.record(st.get());
          (void)b.synchronize();
          float ms = 0;
          (void)b.elapsed_since(a, &ms);
          printf("feed memory (%s) %s: %.1f GB/s\n", mem->allocator->mem_type,
                 dir == 0 ? "H2D" : "D2H", 10 * map.size / (ms * 1e-3) / 1e9);
        }
      }
      gst_buffer_unmap(f.buffers[0], &map);
    }
    std::string err;
    printf("element 2160p system memory: %.1f frames/s %s\n", run_pipeline(el, f, 100, &err),
           err.c_str());
    release(f);
    return 0;
  }
  const DeviceFacts dev = measure_device();
  const time_t now = time(nullptr);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));

  std::ostringstream md;
  md << "## cudagaussian\n\n";
  md << "Measured " << date << " on **" << dev.name << "** with "
     << std::thread::hardware_concurrency() << " CPU threads, commit `" << o.commit
     << "`, by `bench/bench_gaussian`" << (o.quick ? " (--quick)" : "") << ".\n\n";
  if (dev.gpu)
    md << "Measured in the same run: device-to-device copy " << fmt("%.0f", dev.d2d_gbs)
       << " GB/s (bytes read + written), pinned host-to-device " << fmt("%.1f", dev.h2d_pinned_gbs)
       << " GB/s, device-to-host " << fmt("%.1f", dev.d2h_pinned_gbs) << " GB/s.\n\n";
  md << "RGBA frames, replicate border. *CPU* is our CPU backend (" << cpu_worker_count()
     << " threads), *OpenCV* `cv::GaussianBlur` on all cores, *CUDA* our kernel alone (CUDA "
        "events, mean of 100), *NPP* `nppiFilterGaussBorder` (3x3, 5x5) or "
        "`nppiFilterGaussAdvancedBorder` (19 taps) on the same GPU. GB/s counts the frame read "
        "once and written once; *% roof* is that over the measured device-to-device bandwidth. "
        "Times in ms.\n\n";

  for (const KernelCase& k : kKernels) {
    md << "### " << k.name << "\n\n";
    md << "| resolution | CPU | OpenCV | CUDA | GB/s | % roof | NPP | vs NPP | vs CPU | vs OpenCV |\n";
    md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Resolution& r : kResolutions) {
      if (o.quick && r.h > 720)
        continue;
      const KernelRow row = bench_kernel(o, dev, r, k);
      const double gbs = row.cuda > 0 ? row.bytes / (row.cuda * 1e-3) / 1e9 : -1;
      md << "| " << row.res << " | " << cell(row.cpu) << " | " << cell(row.opencv) << " | "
         << cell(row.cuda, "%.4f") << " | " << cell(gbs, "%.0f") << " | "
         << cell(gbs > 0 && dev.d2d_gbs > 0 ? 100 * gbs / dev.d2d_gbs : -1, "%.0f%%") << " | "
         << cell(row.npp, "%.4f") << " | "
         << cell(row.npp > 0 && row.cuda > 0 ? row.npp / row.cuda : -1, "%.2fx") << " | "
         << cell(row.cuda > 0 ? row.cpu / row.cuda : -1, "%.0fx") << " | "
         << cell(row.cuda > 0 ? row.opencv / row.cuda : -1, "%.0fx") << " |\n";
      fprintf(stderr, "%s %s done\n", k.name, r.name);
    }
    md << "\n";
    write_report_section(o.out, "bench_gaussian", md.str());  // partial results survive a crash later on
  }

  md << "### Element throughput (5x5, σ=1.1), frames/s\n\n";
  md << "`appsrc ! cudagaussian ! fakesink` fed with pre-filled buffers (no source cost). "
        "*system* : system memory in and out, input buffers from the pinned pool the element "
        "proposes; *CUDA chain*: `memory:CUDAMemory` in and out (shared context); *CPU*: "
        "`backend=cpu`; *gaussianblur*: the stock gst-plugins-bad element (AYUV, its own "
        "kernel), for scale. *% pinned* is the system-memory frame rate times the frame size over "
        "the measured one-direction pinned bandwidth (each frame crosses the bus twice).\n\n";
  md << "| resolution | frame MB | system (CUDA) | GB/s | % pinned | CUDA chain | CPU | gaussianblur |\n";
  md << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::string notes;
  for (const Resolution& r : kResolutions) {
    if (o.quick && r.h > 480)
      continue;
    const ElementRow row = bench_element(o, dev, r);
    const double gbs = row.sys_cuda > 0 ? row.sys_cuda * row.frame_mb / 1e3 : -1;
    md << "| " << row.res << " | " << fmt("%.1f", row.frame_mb) << " | " << cell(row.sys_cuda, "%.0f")
       << " | " << cell(gbs, "%.1f") << " | "
       << cell(gbs > 0 && dev.h2d_pinned_gbs > 0 ? 100 * gbs / dev.h2d_pinned_gbs : -1, "%.0f%%")
       << " | " << cell(row.chain_cuda, "%.0f") << " | " << cell(row.sys_cpu, "%.1f") << " | "
       << cell(row.stock, "%.2f") << " |\n";
    if (!row.notes.empty())
      notes += "- " + row.res + ": " + row.notes + "\n";
    fprintf(stderr, "element %s done\n", r.name);
  }
  if (!notes.empty())
    md << "\nErrors seen:\n" << notes;
  md << "\n";
  const std::string text = md.str();
  fputs(text.c_str(), stdout);
  return write_report_section(o.out, "bench_gaussian", text) ? 0 : 1;
}
