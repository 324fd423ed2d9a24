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

#include "bench_support.hpp"
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
using namespace bench;

namespace {

struct KernelCase {
  const char* name;
  int ksize;  // 0: from sigma
  double sigma;
};
const KernelCase kKernels[] = {{"3x3 (σ=0.8)", 3, 0.8}, {"5x5 (σ=1.1)", 5, 1.1}, {"σ=3 (19x19)", 0, 3.0}};

struct Options : BenchOptions {
  bool profile = false;  // only the 5x5 2160p kernel, for a profiler
  bool profile_element = false;  // only the 2160p system-memory element run
};

HelperTimes npp_times(const Options& o, int w, int h, int ksize, double sigma) {
  if (o.npp.empty())
    return {};
  return helper_times(o.npp + " " + std::to_string(w) + " " + std::to_string(h) + " " +
                      std::to_string(ksize) + " " + std::to_string(sigma) +
                      (o.quick ? " 5" : " 100"));
}

struct KernelRow {
  std::string res;
  double cpu = -1, opencv = -1;
  KernelTimes cuda;  // cold and hot
  HelperTimes npp;   // cold (ms) and hot (hot_ms)
  CopyRoof roof;     // a cold copy of the same frame
  size_t bytes = 0;  // read + written by one call
  std::string notes;
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
    // Device frames with rows padded to kRowAlign (NPP's cudaMallocPitch
    // layout), inputs and outputs rotated (cold) and fixed (hot).
    const size_t frame_bytes = packed_size(desc, kRowAlign);
    CudaStream stream;
    std::unique_ptr<GaussianOp> op;
    Status st = stream.create();
    if (st.is_ok())
      st = GaussianOp::create(Backend::Cuda, desc, p, &op);
    if (st.is_ok()) {
      const std::vector<uint8_t> staged = padded_rows(desc, src);
      row.cuda = time_cold_hot(
          stream.get(), frame_bytes, frame_bytes, staged.data(), o.quick,
          [&](uint8_t* in, uint8_t* out) {
            return op->submit(stream.get(), packed_view(desc, in, kRowAlign),
                              packed_view(desc, out, kRowAlign));
          },
          &row.notes);
    } else {
      row.notes += "CUDA op: " + st.message() + "; ";
    }
    op.reset();
    row.roof = cold_copy(frame_bytes, o.quick ? 5 : 100);
    row.npp = npp_times(o, r.w, r.h, ks, k.sigma);
  }
  return row;
}

struct ElementRow {
  std::string res;
  double frame_mb = 0;
  double sys_cuda = -1, sys_overlap = -1, chain_cuda = -1, sys_cpu = -1, stock = -1;
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
    err.clear();
    row.sys_overlap = run_pipeline(el + " overlap=true", f, frames, &err);
    if (!err.empty())
      row.notes += "system/cuda, overlap: " + err + "; ";
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

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, true, &o,
                     {{"--profile-kernel", &o.profile}, {"--profile-element", &o.profile_element}}))
    return 2;
  gst_init(&argc, &argv);
  cv::setNumThreads(std::thread::hardware_concurrency());
  if (o.profile) {
    DeviceFacts dev;
    dev.gpu = cuda_use_device(0).is_ok();
    const KernelRow row = bench_kernel(o, dev, kResolutions[4], kKernels[1]);
    printf("5x5 2160p: %.4f ms cold (%d frames rotated), %.4f ms hot %s\n", row.cuda.cold,
           row.cuda.frames, row.cuda.hot, row.notes.c_str());
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
  const std::string date = today_utc();

  std::ostringstream md;
  md << "## cudagaussian\n\n";
  md << "Measured " << date << " on **" << dev.name << "** with "
     << std::thread::hardware_concurrency() << " CPU threads, commit `" << o.commit
     << "`, by `bench/bench_gaussian`" << (o.quick ? " (--quick)" : "") << ".\n\n";
  if (dev.gpu)
    md << "Measured in the same run: device-to-device copy " << fmt("%.0f", dev.d2d_gbs)
       << " GB/s (bytes read + written; 1 GiB buffers, warm: for reference, not the roofline "
          "below), pinned host-to-device " << fmt("%.1f", dev.h2d_pinned_gbs)
       << " GB/s, device-to-host " << fmt("%.1f", dev.d2h_pinned_gbs) << " GB/s.\n\n";
  md << "RGBA frames, replicate border, noise input. *CPU* is our CPU backend (" << cpu_worker_count()
     << " threads), *OpenCV* `cv::GaussianBlur` on all cores, *CUDA* our kernel alone (CUDA "
        "events), *NPP* `nppiFilterGaussBorder` (3x3, 5x5) or `nppiFilterGaussAdvancedBorder` "
        "(19 taps) on the same GPU by `bench/npp_gaussian` (the same noise as input). Times in ms.\n\n"
        "- *cold*: every call reads and writes distinct device frames, rotated through at least "
     << (kColdBytes >> 20)
     << " MB of inputs and outputs together (over 4x the L2 of an H100 or H200), so no call "
        "finds its frame in the cache: what a stream of frames gets. *hot*: the same input and "
        "output every call (the frame may sit in L2), as earlier tables were measured; for "
        "reference only. "
     << (o.quick ? "Mean of 5 calls (--quick)."
                 : "Cold: mean of 100 calls or one full rotation, whichever is more, after one "
                   "rotation; hot: mean of 100.")
     << "\n"
        "- *GB/s* counts the frame read once and written once, cold. *copy* is a "
        "device-to-device copy of the same frame, cold (its own rotation of distinct source and "
        "destination frames, at least " << (kColdBytes >> 20) << " MB), measured in this run just "
        "after the kernel; *% roof* is the kernel's cold GB/s over that copy's.\n"
        "- *vs NPP* is NPP's cold time over ours; *vs CPU* and *vs OpenCV* divide by our cold "
        "time.\n\n";

  std::string notes;
  for (const KernelCase& k : kKernels) {
    md << "### " << k.name << "\n\n";
    md << "| resolution | CPU | OpenCV | CUDA cold | CUDA hot | GB/s (cold) | copy cold | % roof "
          "(cold) | NPP cold | NPP hot | vs NPP (cold) | vs CPU | vs OpenCV |\n";
    md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    std::string rotation;
    for (const Resolution& r : kResolutions) {
      if (o.quick && r.h > 720)
        continue;
      const KernelRow row = bench_kernel(o, dev, r, k);
      const double cold = row.cuda.cold;
      const double gbs = cold > 0 ? row.bytes / (cold * 1e-3) / 1e9 : -1;
      md << "| " << row.res << " | " << cell(row.cpu) << " | " << cell(row.opencv) << " | "
         << cell(cold, "%.4f") << " | " << cell(row.cuda.hot, "%.4f") << " | "
         << cell(gbs, "%.0f") << " | " << cell(row.roof.ms, "%.4f") << " | "
         << cell(gbs > 0 && row.roof.gbs > 0 ? 100 * gbs / row.roof.gbs : -1, "%.0f%%") << " | "
         << cell(row.npp.ms, "%.4f") << " | " << cell(row.npp.hot_ms, "%.4f") << " | "
         << cell(row.npp.ms > 0 && cold > 0 ? row.npp.ms / cold : -1, "%.2fx") << " | "
         << cell(cold > 0 && row.cpu > 0 ? row.cpu / cold : -1, "%.0fx") << " | "
         << cell(cold > 0 && row.opencv > 0 ? row.opencv / cold : -1, "%.0fx") << " |\n";
      if (dev.gpu)
        rotation += std::string(rotation.empty() ? "" : "; ") + row.res + ": " +
                    rotation_text(row.cuda, row.roof, row.npp);
      if (!row.notes.empty())
        notes += "- " + std::string(k.name) + " " + row.res + ": " + row.notes + "\n";
      fprintf(stderr, "%s %s done\n", k.name, r.name);
    }
    if (!rotation.empty())
      md << "\nFrames rotated, cold (input/output or source/destination pairs, and the "
            "bytes they cover): "
         << rotation << ".\n";
    md << "\n";
    write_report_section(o.out, "bench_gaussian", md.str());  // partial results survive a crash later on
  }

  md << "### Element throughput (5x5, σ=1.1), frames/s\n\n";
  md << "`appsrc ! cudagaussian ! fakesink` fed with pre-filled buffers (no source cost). "
        "*system* : system memory in and out, input buffers from the pinned pool the element "
        "proposes; *CUDA chain*: `memory:CUDAMemory` in and out (shared context); *CPU*: "
        "`backend=cpu`; *gaussianblur*: the stock gst-plugins-bad element (AYUV, its own "
        "kernel), for scale. *% pinned* is the system-memory frame rate times the frame size over "
        "the measured one-direction pinned bandwidth (each frame crosses the bus twice). "
        "*overlap*: the same with `overlap=true` (each frame's upload beside the previous "
        "frame's download; one frame of latency), the same feed, right after.\n\n";
  md << "| resolution | frame MB | system (CUDA) | GB/s | % pinned | system, overlap | % pinned | "
        "CUDA chain | CPU | gaussianblur |\n";
  md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Resolution& r : kResolutions) {
    if (o.quick && r.h > 480)
      continue;
    const ElementRow row = bench_element(o, dev, r);
    const double gbs = row.sys_cuda > 0 ? row.sys_cuda * row.frame_mb / 1e3 : -1;
    const double ogbs = row.sys_overlap > 0 ? row.sys_overlap * row.frame_mb / 1e3 : -1;
    md << "| " << row.res << " | " << fmt("%.1f", row.frame_mb) << " | " << cell(row.sys_cuda, "%.0f")
       << " | " << cell(gbs, "%.1f") << " | "
       << cell(gbs > 0 && dev.h2d_pinned_gbs > 0 ? 100 * gbs / dev.h2d_pinned_gbs : -1, "%.0f%%")
       << " | " << cell(row.sys_overlap, "%.0f") << " | "
       << cell(ogbs > 0 && dev.h2d_pinned_gbs > 0 ? 100 * ogbs / dev.h2d_pinned_gbs : -1, "%.0f%%")
       << " | " << cell(row.chain_cuda, "%.0f") << " | " << cell(row.sys_cpu, "%.1f") << " | "
       << cell(row.stock, "%.2f") << " |\n";
    if (!row.notes.empty())
      notes += "- " + row.res + ": " + row.notes + "\n";
    fprintf(stderr, "element %s done\n", r.name);
  }
  return finish_report(md, notes, o.out, "bench_gaussian");
}
