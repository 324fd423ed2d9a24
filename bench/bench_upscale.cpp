// Upscale benchmark: the resize kernel and the cudaupscale element against
// peers measured in the same run. Not a test: prints tables and writes a
// Markdown report section.
//
// Usage: bench_upscale [--out FILE] [--commit SHA] [--npp PATH] [--quick]
//   --npp: the npp_resize helper (bench/npp_resize.cu), if built.
//   --quick: small frames and few iterations (a smoke run without a GPU).
#include <gst/gst.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "report.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/parallel.hpp"
#include "cudafx/resize.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudaloader.h>
#endif

using namespace cudafx;
using namespace bench;

namespace {

struct Case {
  const char* name;
  int sw, sh, dw, dh;
};
const Case kCases[] = {{"2x to 1080p", 960, 540, 1920, 1080},
                       {"2x to 2160p", 1920, 1080, 3840, 2160},
                       {"4x to 2160p", 960, 540, 3840, 2160},
                       {"1.5x to 2160p", 2560, 1440, 3840, 2160},
                       {"3x to 2160p", 1280, 720, 3840, 2160},
                       {"2160p to 1080p", 3840, 2160, 1920, 1080}};
const Case kQuickCases[] = {{"2x to 480p", 320, 240, 640, 480}};

struct Method {
  ResizeMethod m;
  const char* nick;            // cudaupscale's
  const char* videoscale;      // the nearest videoscale method
  int cv, npp;                 // cv::resize and NPP interpolation
};
// NPP: NPPI_INTER_NN = 1, NPPI_INTER_LINEAR = 2, NPPI_INTER_CUBIC = 4.
const Method kMethods[] = {
    {ResizeMethod::Nearest, "nearest-neighbour", "nearest-neighbour", cv::INTER_NEAREST, 1},
    {ResizeMethod::Bilinear, "bilinear", "bilinear", cv::INTER_LINEAR, 2},
    {ResizeMethod::Bicubic, "bicubic", "catrom", cv::INTER_CUBIC, 4}};

struct Options : BenchOptions {
  bool profile = false;  // only the 2160p kernels, for a profiler
};

struct KernelRow {
  double cpu = -1, opencv = -1;
  KernelTimes cuda;  // cold and hot
  HelperTimes npp;   // cold (ms) and hot (hot_ms)
  CopyRoof roof;     // a cold copy of the output frame's size
  std::string notes;
};

KernelRow bench_kernel(const Options& o, const DeviceFacts& dev, const Case& c, const Method& m) {
  KernelRow row;
  const ImageDesc sd{PixelFormat::RGBA, c.sw, c.sh}, dd{PixelFormat::RGBA, c.dw, c.dh};
  std::vector<uint8_t> src(packed_size(sd)), dst(packed_size(dd));
  fill(src);
  ResizeParams p;
  p.method = m.m;
  const int reps = o.quick ? 2 : 7;
  std::unique_ptr<ResizeOp> cpu;
  if (ResizeOp::create(Backend::Cpu, sd, dd, p, &cpu).is_ok()) {
    const ImageView s = packed_view(sd, src.data()), d = packed_view(dd, dst.data());
    (void)cpu->submit(nullptr, s, d);
    row.cpu = median_ms(reps, [&] { (void)cpu->submit(nullptr, s, d); });
  }
  cv::Mat ms(c.sh, c.sw, CV_8UC4, src.data()), md(c.dh, c.dw, CV_8UC4, dst.data());
  cv::resize(ms, md, md.size(), 0, 0, m.cv);
  row.opencv = median_ms(reps, [&] { cv::resize(ms, md, md.size(), 0, 0, m.cv); });

  if (dev.gpu) {
    // Device frames with rows padded to kRowAlign (NPP's cudaMallocPitch
    // layout), inputs and outputs rotated (cold) and fixed (hot).
    const size_t in_bytes = packed_size(sd, kRowAlign), out_bytes = packed_size(dd, kRowAlign);
    CudaStream stream;
    std::unique_ptr<ResizeOp> op;
    Status st = stream.create();
    if (st.is_ok())
      st = ResizeOp::create(Backend::Cuda, sd, dd, p, &op);
    if (st.is_ok()) {
      const std::vector<uint8_t> staged = padded_rows(sd, src);
      row.cuda = time_cold_hot(
          stream.get(), in_bytes, out_bytes, staged.data(), o.quick,
          [&](uint8_t* in, uint8_t* out) {
            return op->submit(stream.get(), packed_view(sd, in, kRowAlign),
                              packed_view(dd, out, kRowAlign));
          },
          &row.notes);
    } else {
      row.notes += "CUDA op: " + st.message() + "; ";
    }
    op.reset();
    // The roofline: a cold copy of the larger frame.
    row.roof = cold_copy(std::max(in_bytes, out_bytes), o.quick ? 5 : 100);
    if (!o.npp.empty())
      row.npp = helper_times(o.npp + " " + std::to_string(c.sw) + " " + std::to_string(c.sh) +
                             " " + std::to_string(c.dw) + " " + std::to_string(c.dh) + " " +
                             std::to_string(m.npp) + (o.quick ? " 5" : " 100"));
  }
  return row;
}

struct ElementRow {
  double sys_cuda = -1, sys_overlap = -1, chain_cuda = -1, sys_cpu = -1, videoscale = -1;
  std::string notes;
};

ElementRow bench_element(const Options& o, const DeviceFacts& dev, const Case& c,
                         const Method& m) {
  ElementRow row;
  const std::string in = caps_for("RGBA", c.sw, c.sh, false);
  const std::string out = "video/x-raw,width=" + std::to_string(c.dw) +
                          ",height=" + std::to_string(c.dh);
  const std::string out_cuda = "video/x-raw(memory:CUDAMemory),width=" + std::to_string(c.dw) +
                               ",height=" + std::to_string(c.dh);
  const int frames = o.quick ? 15 : 200;
  std::string err;
  const std::string method = std::string(" method=") + m.nick;
  if (dev.gpu) {
    const std::string el = "cudaupscale backend=cuda" + method;
    Feed f = system_feed(el, in, 4, out);
    row.sys_cuda = run_pipeline(el + " ! capsfilter caps=\"" + out + "\"", f, frames, &err);
    if (!err.empty())
      row.notes += "system/cuda: " + err + "; ";
    err.clear();
    row.sys_overlap =
        run_pipeline(el + " overlap=true ! capsfilter caps=\"" + out + "\"", f, frames, &err);
    if (!err.empty())
      row.notes += "system/cuda, overlap: " + err + "; ";
    release(f);
#if HAVE_GSTCUDA
    err.clear();
    if (gst_cuda_load_library()) {
      GstCudaContext* ctx = gst_cuda_context_new(0);
      if (ctx) {
        Feed cf = cuda_feed(caps_for("RGBA", c.sw, c.sh, true), 4, ctx);
        row.chain_cuda =
            run_pipeline(el + " ! capsfilter caps=\"" + out_cuda + "\"", cf, frames * 2, &err);
        if (!err.empty())
          row.notes += "CUDA chain: " + err + "; ";
        release(cf);
        gst_object_unref(ctx);
      }
    }
#endif
  }
  err.clear();
  const std::string cpu_el = "cudaupscale backend=cpu" + method;
  Feed f = system_feed(cpu_el, in, 4, out);
  row.sys_cpu = run_pipeline(cpu_el + " ! capsfilter caps=\"" + out + "\"", f, o.quick ? 13 : 40,
                             &err);
  if (!err.empty())
    row.notes += "cpu: " + err + "; ";
  release(f);
  err.clear();
  Feed v = system_feed("identity", in, 2);
  row.videoscale = run_pipeline(std::string("videoscale method=") + m.videoscale +
                                    " ! capsfilter caps=\"" + out + "\"",
                                v, o.quick ? 13 : 25, &err);
  if (!err.empty())
    row.notes += "videoscale: " + err + "; ";
  release(v);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, true, &o, {{"--profile-kernel", &o.profile}}))
    return 2;
  gst_init(&argc, &argv);
  cv::setNumThreads(std::thread::hardware_concurrency());
  if (o.profile) {
    DeviceFacts dev;
    dev.gpu = cuda_use_device(0).is_ok();
    for (const Case& c : kCases)
      for (const Method& m : kMethods) {
        if (c.dh < 2160 && c.sh < 2160)
          continue;
        const KernelRow r = bench_kernel(o, dev, c, m);
        printf("%s %s: %.4f ms cold (%d frames rotated), %.4f ms hot %s\n", m.nick, c.name,
               r.cuda.cold, r.cuda.frames, r.cuda.hot, r.notes.c_str());
      }
    return 0;
  }
  const DeviceFacts dev = measure_device();
  const std::string date = today_utc();
  const std::vector<Case> cases = o.quick ? std::vector<Case>{kQuickCases[0]}
                                          : std::vector<Case>(std::begin(kCases), std::end(kCases));

  std::ostringstream md;
  md << "## cudaupscale\n\n";
  md << "Measured " << date << " on **" << dev.name << "** with "
     << std::thread::hardware_concurrency() << " CPU threads, commit `" << o.commit
     << "`, by `bench/bench_upscale`" << (o.quick ? " (--quick)" : "") << ".\n\n";
  if (dev.gpu)
    md << "Measured in the same run: device-to-device copy " << fmt("%.0f", dev.d2d_gbs)
       << " GB/s (bytes read + written; 1 GiB buffers, warm: for reference, not the roofline "
          "below), pinned host-to-device " << fmt("%.1f", dev.h2d_pinned_gbs)
       << " GB/s, device-to-host " << fmt("%.1f", dev.d2h_pinned_gbs) << " GB/s.\n\n";
  md << "RGBA frames, noise input. *CPU*: our CPU backend (" << cpu_worker_count()
     << " threads); *OpenCV*: `cv::resize` on all cores; *CUDA*: our kernel alone (CUDA "
        "events); *NPP*: `nppiResize_8u_C4R` with the same interpolation on the same GPU, by "
        "`bench/npp_resize` (the same noise as input). Times in ms.\n\n"
        "- *cold*: every call reads and writes distinct device frames, rotated through at least "
     << (kColdBytes >> 20)
     << " MB of inputs and outputs together (over 4x the L2 of an H100 or H200), so no call "
        "finds its frames in the cache: what a stream of frames gets. *hot*: the same input and "
        "output every call (the 2x working set fits in L2), as earlier tables were measured; for "
        "reference only. "
     << (o.quick ? "Mean of 5 calls (--quick)."
                 : "Cold: mean of 100 calls or one full rotation, whichever is more, after one "
                   "rotation; hot: mean of 100.")
     << "\n"
        "- *GB/s (traffic)* counts the input read once and the output written once (the least "
        "DRAM traffic a scaler can have), cold. *copy* is a device-to-device copy of the larger "
        "frame's size, cold (its own rotation of distinct source and destination frames, at "
        "least " << (kColdBytes >> 20) << " MB), measured in this run just after the kernel; "
        "*% roof* is the kernel's cold traffic GB/s over that copy's GB/s (bytes read + "
        "written).\n"
        "- *vs NPP* is NPP's cold time over ours; *vs OpenCV* divides by our cold time.\n\n";
  md << "| case | method | CPU | OpenCV | CUDA cold | CUDA hot | GB/s (traffic, cold) | copy cold | "
        "% roof (traffic, cold) | NPP cold | NPP hot | vs NPP (cold) | vs OpenCV |\n";
  md << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::string rotation, notes;
  for (const Case& c : cases) {
    const double out_bytes = 4.0 * c.dw * c.dh, in_bytes = 4.0 * c.sw * c.sh;
    for (const Method& m : kMethods) {
      const KernelRow r = bench_kernel(o, dev, c, m);
      const double cold = r.cuda.cold;
      const double traffic = cold > 0 ? (in_bytes + out_bytes) / (cold * 1e-3) / 1e9 : -1;
      md << "| " << c.name << " | " << m.nick << " | " << cell(r.cpu) << " | " << cell(r.opencv)
         << " | " << cell(cold, "%.4f") << " | " << cell(r.cuda.hot, "%.4f") << " | "
         << cell(traffic, "%.0f") << " | " << cell(r.roof.ms, "%.4f") << " | "
         << cell(traffic > 0 && r.roof.gbs > 0 ? 100 * traffic / r.roof.gbs : -1, "%.0f%%")
         << " | " << cell(r.npp.ms, "%.4f") << " | " << cell(r.npp.hot_ms, "%.4f") << " | "
         << cell(r.npp.ms > 0 && cold > 0 ? r.npp.ms / cold : -1, "%.2fx") << " | "
         << cell(cold > 0 && r.opencv > 0 ? r.opencv / cold : -1, "%.0fx") << " |\n";
      if (dev.gpu)
        rotation += std::string(rotation.empty() ? "" : "; ") + c.name + " " + m.nick + ": " +
                    rotation_text(r.cuda, r.roof, r.npp);
      if (!r.notes.empty())
        notes += std::string("- kernel ") + c.name + " " + m.nick + ": " + r.notes + "\n";
      fprintf(stderr, "kernel %s %s done\n", c.name, m.nick);
    }
  }
  if (!rotation.empty())
    md << "\nFrames rotated, cold (input/output or source/destination pairs, and the "
            "bytes they cover): " << rotation
       << ".\n";
  md << "\n";
  write_report_section(o.out, "bench_upscale", md.str());  // partial results survive

  md << "### Element throughput, frames/s\n\n";
  md << "`appsrc ! cudaupscale ! capsfilter ! fakesink` fed with pre-filled RGBA buffers (no "
        "source cost). *system*: system memory in and out (input from the pinned pool the "
        "element proposes; the output frame crosses the bus back); *CUDA chain*: "
        "`memory:CUDAMemory` in and out; *CPU*: `backend=cpu`; *videoscale*: the stock element "
        "(its nearest method for nearest-neighbour, bilinear, and `catrom` beside bicubic). "
        "*overlap*: *system* with `overlap=true` (each frame's upload beside the previous "
        "frame's download; one frame of latency), the same feed, right after; *% pinned*: "
        "frames/s times the larger frame over the measured one-direction pinned "
        "bandwidth.\n\n";
  md << "| case | method | system (CUDA) | % pinned | system, overlap | % pinned | CUDA chain | "
        "CPU | videoscale | system vs videoscale |\n";
  md << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Case& c : cases) {
    for (const Method& m : kMethods) {
      const ElementRow r = bench_element(o, dev, c, m);
      const double out_mb = std::max(c.dw * static_cast<double>(c.dh), c.sw * static_cast<double>(c.sh)) * 4 / 1e6;
      auto pinned = [&](double fps) {
        return fps > 0 && dev.h2d_pinned_gbs > 0 ? 100 * fps * out_mb / 1e3 / dev.h2d_pinned_gbs
                                                 : -1;
      };
      md << "| " << c.name << " | " << m.nick << " | " << cell(r.sys_cuda, "%.0f") << " | "
         << cell(pinned(r.sys_cuda), "%.0f%%") << " | " << cell(r.sys_overlap, "%.0f") << " | "
         << cell(pinned(r.sys_overlap), "%.0f%%") << " | " << cell(r.chain_cuda, "%.0f") << " | " << cell(r.sys_cpu, "%.1f") << " | "
         << cell(r.videoscale, "%.1f") << " | "
         << cell(r.sys_cuda > 0 && r.videoscale > 0 ? r.sys_cuda / r.videoscale : -1, "%.0fx")
         << " |\n";
      if (!r.notes.empty())
        notes += std::string("- ") + c.name + " " + m.nick + ": " + r.notes + "\n";
      fprintf(stderr, "element %s %s done\n", c.name, m.nick);
    }
  }
  return finish_report(md, notes, o.out, "bench_upscale");
}
