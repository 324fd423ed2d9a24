// The statistics filters of issue #17 (cudagreyworld, cudaautocontrast): the
// ops and the elements against peers measured in the same run, and the
// seed's CPU-vs-GPU table. Not a test: prints tables and writes a Markdown
// report section.
//
// Usage: bench_filters [--out FILE] [--commit SHA] [--npp DIR] [--quick]
//   --npp: the folder holding the npp_convolve and npp_canny helpers
//   (bench/npp_*.cu), if built.
//   --quick: small frames and few iterations (a smoke run without a GPU).
#include <gst/gst.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "cudafx/autocontrast.hpp"
#include "cudafx/canny.hpp"
#include "cudafx/convolve.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/greyworld.hpp"
#include "cudafx/parallel.hpp"
#include "report.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudaloader.h>
#endif

using namespace cudafx;
using namespace bench;

namespace {

using Options = BenchOptions;

enum class Filter { GreyWorld, ContrastPerChannel, ContrastLuma };
struct FilterCase {
  Filter f;
  const char* name;
  const char* element;  // the element and its properties
  const char* peer;     // what the OpenCV peer does
};
const FilterCase kFilters[] = {
    {Filter::GreyWorld, "grey world", "cudagreyworld",
     "`cv::mean` + `cv::multiply` by the gains"},
    {Filter::ContrastPerChannel, "auto contrast, per channel", "cudaautocontrast",
     "`cv::calcHist` per channel + levels + `cv::LUT`"},
    {Filter::ContrastLuma, "auto contrast, luma", "cudaautocontrast channels=luma",
     "`cv::cvtColor` to grey + `cv::calcHist` + levels + `cv::LUT`"},
};

// The op under test, either backend: one in-place call.
struct AnyOp {
  std::unique_ptr<GreyWorldOp> grey;
  std::unique_ptr<AutoContrastOp> contrast;
  AutoContrastParams params;
  Status create(Filter f, Backend b, const ImageDesc& d) {
    params.luma = f == Filter::ContrastLuma;
    return f == Filter::GreyWorld ? GreyWorldOp::create(b, d, &grey)
                                  : AutoContrastOp::create(b, d, &contrast);
  }
  Status submit(StreamHandle s, const ImageView& frame) {
    return grey ? grey->submit(s, frame, 1.0) : contrast->submit(s, frame, params, 1.0);
  }
};

// The levels of a 256-bin histogram with 0.5 % cut at each end, as a user
// of OpenCV would compute them.
void levels(const cv::Mat& hist, double n, int* lo, int* hi) {
  const double k = n * 0.005;
  double c = 0;
  for (*lo = 0; *lo < 255 && (c += hist.at<float>(*lo)) <= k; ++*lo) {
  }
  c = 0;
  for (*hi = 255; *hi > 0 && (c += hist.at<float>(*hi)) <= k; --*hi) {
  }
}

cv::Mat stretch_lut(int lo, int hi) {
  cv::Mat lut(1, 256, CV_8U);
  for (int v = 0; v < 256; v++)
    lut.at<uint8_t>(v) = hi > lo ? cv::saturate_cast<uint8_t>((v - lo) * 255.0 / (hi - lo)) : v;
  return lut;
}

// The OpenCV peer on an RGBA frame, in place.
void opencv_peer(Filter f, cv::Mat& m) {
  const double n = static_cast<double>(m.total());
  if (f == Filter::GreyWorld) {
    const cv::Scalar mean = cv::mean(m);
    const double grey = (mean[0] + mean[1] + mean[2]) / 3;
    cv::multiply(m, cv::Scalar(grey / mean[0], grey / mean[1], grey / mean[2], 1.0), m);
    return;
  }
  const int bins[] = {256};
  const float range[] = {0, 256};
  const float* ranges[] = {range};
  cv::Mat hist;
  if (f == Filter::ContrastLuma) {
    cv::Mat grey;
    cv::cvtColor(m, grey, cv::COLOR_RGBA2GRAY);
    const int ch[] = {0};
    cv::calcHist(&grey, 1, ch, cv::Mat(), hist, 1, bins, ranges);
    int lo, hi;
    levels(hist, n, &lo, &hi);
    cv::Mat lut1 = stretch_lut(lo, hi), lut;
    cv::Mat planes[] = {lut1, lut1, lut1, stretch_lut(0, 255)};
    cv::merge(planes, 4, lut);
    cv::LUT(m, lut, m);
    return;
  }
  cv::Mat planes[4];
  for (int c = 0; c < 3; c++) {
    const int ch[] = {c};
    cv::calcHist(&m, 1, ch, cv::Mat(), hist, 1, bins, ranges);
    int lo, hi;
    levels(hist, n, &lo, &hi);
    planes[c] = stretch_lut(lo, hi);
  }
  planes[3] = stretch_lut(0, 255);
  cv::Mat lut;
  cv::merge(planes, 4, lut);
  cv::LUT(m, lut, m);
}

struct KernelRow {
  double cpu = -1, opencv = -1;
  KernelTimes cuda;
  CopyRoof roof;
  std::string notes;
};

KernelRow bench_kernel(const Options& o, const DeviceFacts& dev, const Resolution& r,
                       const FilterCase& fc) {
  KernelRow row;
  const ImageDesc desc{PixelFormat::RGBA, r.w, r.h};
  std::vector<uint8_t> src(packed_size(desc)), work(src.size());
  fill(src);
  const int reps = o.quick ? 2 : 9;
  AnyOp cpu;
  if (cpu.create(fc.f, Backend::Cpu, desc).is_ok()) {
    const ImageView v = packed_view(desc, work.data());
    work = src;
    (void)cpu.submit(nullptr, v);
    // Each call on a fresh copy of the noise (the copy is outside the time).
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
      work = src;
      const auto t0 = Clock::now();
      (void)cpu.submit(nullptr, v);
      t.push_back(ms_since(t0));
    }
    std::sort(t.begin(), t.end());
    row.cpu = t[t.size() / 2];
  }
  {
    std::vector<double> t;
    for (int i = 0; i < reps + 1; i++) {
      work = src;
      cv::Mat m(r.h, r.w, CV_8UC4, work.data());
      const auto t0 = Clock::now();
      opencv_peer(fc.f, m);
      if (i > 0)
        t.push_back(ms_since(t0));
    }
    std::sort(t.begin(), t.end());
    row.opencv = t[t.size() / 2];
  }
  if (dev.gpu) {
    const size_t frame_bytes = packed_size(desc, kRowAlign);
    CudaStream stream;
    AnyOp op;
    Status st = stream.create();
    if (st.is_ok())
      st = op.create(fc.f, Backend::Cuda, desc);
    if (st.is_ok()) {
      const std::vector<uint8_t> staged = padded_rows(desc, src);
      // In place: the rotated input frames are the frames filtered (the
      // 16-byte outputs are unused).
      row.cuda = time_cold_hot(
          stream.get(), frame_bytes, 16, staged.data(), o.quick,
          [&](uint8_t* in, uint8_t*) {
            return op.submit(stream.get(), packed_view(desc, in, kRowAlign));
          },
          &row.notes);
    } else {
      row.notes += "CUDA op: " + st.message() + "; ";
    }
    row.roof = cold_copy(frame_bytes, o.quick ? 5 : 100);
  }
  return row;
}

// Convolution: a k x k kernel of small integers (not separable), the one
// npp_convolve builds, divided by its sum.
ConvolveParams convolve_params(int k) {
  ConvolveParams p;
  p.width = p.height = k;
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++)
      p.taps.push_back((i * 7 + j * 3) % 9 - 3);
  return p;
}

// One row of an op timed beside its peers: our CPU backend, OpenCV, our
// CUDA op (cold and hot), NPP by its helper, and the cold-copy roofline.
struct PeerRow {
  double cpu = -1, opencv = -1;
  KernelTimes cuda;
  HelperTimes npp;
  CopyRoof roof;
  std::string notes;
};

PeerRow bench_convolve(const Options& o, const DeviceFacts& dev, const Resolution& r, int k) {
  PeerRow row;
  const ImageDesc desc{PixelFormat::RGBA, r.w, r.h};
  std::vector<uint8_t> src(packed_size(desc)), dst(src.size());
  fill(src);
  const ConvolveParams p = convolve_params(k);
  const int reps = o.quick ? 2 : (k > 9 ? 3 : 7);
  std::unique_ptr<ConvolveOp> cpu;
  if (ConvolveOp::create(Backend::Cpu, desc, p, &cpu).is_ok()) {
    const ImageView s = packed_view(desc, src.data()), d = packed_view(desc, dst.data());
    (void)cpu->submit(nullptr, s, d);
    row.cpu = median_ms(reps, [&] { (void)cpu->submit(nullptr, s, d); });
  }
  ConvolvePlan plan;
  (void)plan_convolve(desc, p, &plan);
  cv::Mat kern(k, k, CV_32F);
  for (int i = 0; i < k * k; i++)
    kern.at<float>(i / k, i % k) = static_cast<float>(p.taps[i] / plan.divisor);
  cv::Mat ms(r.h, r.w, CV_8UC4, src.data()), md(r.h, r.w, CV_8UC4, dst.data());
  cv::filter2D(ms, md, -1, kern, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE);
  row.opencv = median_ms(reps, [&] {
    cv::filter2D(ms, md, -1, kern, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE);
  });
  if (dev.gpu) {
    const size_t frame_bytes = packed_size(desc, kRowAlign);
    CudaStream stream;
    std::unique_ptr<ConvolveOp> op;
    Status st = stream.create();
    if (st.is_ok())
      st = ConvolveOp::create(Backend::Cuda, desc, p, &op);
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
    row.roof = cold_copy(frame_bytes, o.quick ? 5 : 100);
    if (!o.npp.empty())
      row.npp = helper_times(o.npp + "/npp_convolve " + std::to_string(r.w) + " " +
                             std::to_string(r.h) + " " + std::to_string(k) +
                             (o.quick ? " 5" : " 50"));
  }
  return row;
}

// Canny from RGBA (the grey conversion included), L2, thresholds 50/100.
PeerRow bench_canny(const Options& o, const DeviceFacts& dev, const Resolution& r) {
  PeerRow row;
  const ImageDesc desc{PixelFormat::RGBA, r.w, r.h};
  std::vector<uint8_t> src(packed_size(desc)), edges(static_cast<size_t>(r.w) * r.h);
  fill(src);
  CannyParams p;
  p.low = 50;
  p.high = 100;
  p.l2 = true;
  const int reps = o.quick ? 2 : 7;
  const PlaneView e{edges.data(), static_cast<size_t>(r.w), r.w, r.h, 1};
  std::unique_ptr<CannyOp> cpu;
  if (CannyOp::create(Backend::Cpu, desc, p, &cpu).is_ok()) {
    const ImageView s = packed_view(desc, src.data());
    (void)cpu->submit(nullptr, s, e);
    row.cpu = median_ms(reps, [&] { (void)cpu->submit(nullptr, s, e); });
  }
  cv::Mat ms(r.h, r.w, CV_8UC4, src.data()), grey, out;
  auto opencv = [&] {
    cv::cvtColor(ms, grey, cv::COLOR_RGBA2GRAY);
    cv::Canny(grey, out, p.low, p.high, 3, true);
  };
  opencv();
  row.opencv = median_ms(reps, opencv);
  if (dev.gpu) {
    const size_t in_bytes = packed_size(desc, kRowAlign), out_bytes = align_row(r.w) * r.h;
    CudaStream stream;
    std::unique_ptr<CannyOp> op;
    Status st = stream.create();
    if (st.is_ok())
      st = CannyOp::create(Backend::Cuda, desc, p, &op);
    if (st.is_ok()) {
      const std::vector<uint8_t> staged = padded_rows(desc, src);
      row.cuda = time_cold_hot(
          stream.get(), in_bytes, out_bytes, staged.data(), o.quick,
          [&](uint8_t* in, uint8_t* out) {
            return op->submit(stream.get(), packed_view(desc, in, kRowAlign),
                              PlaneView{out, align_row(r.w), r.w, r.h, 1});
          },
          &row.notes);
    } else {
      row.notes += "CUDA op: " + st.message() + "; ";
    }
    row.roof = cold_copy(in_bytes, o.quick ? 5 : 100);
    if (!o.npp.empty())
      row.npp = helper_times(o.npp + "/npp_canny " + std::to_string(r.w) + " " +
                             std::to_string(r.h) + " 50 100" + (o.quick ? " 5" : " 50"));
  }
  return row;
}

struct ElementRow {
  double sys_cuda = -1, chain_cuda = -1, sys_cpu = -1;
  std::string notes;
};

ElementRow bench_element(const Options& o, const DeviceFacts& dev, const Resolution& r,
                         const FilterCase& fc) {
  ElementRow row;
  const std::string caps = caps_for("RGBA", r.w, r.h, false);
  const int frames = o.quick ? 15 : 300;
  std::string err;
  if (dev.gpu) {
    const std::string el = std::string(fc.element) + " backend=cuda";
    Feed f = system_feed(el, caps, 4);
    row.sys_cuda = run_pipeline(el, f, frames, &err);
    if (!err.empty())
      row.notes += "system/cuda: " + err + "; ";
    release(f);
#if HAVE_GSTCUDA
    err.clear();
    if (gst_cuda_load_library()) {
      GstCudaContext* ctx = gst_cuda_context_new(0);
      if (ctx) {
        Feed cf = cuda_feed(caps_for("RGBA", r.w, r.h, true), 4, ctx);
        row.chain_cuda = run_pipeline(el, cf, frames * 4, &err);
        if (!err.empty())
          row.notes += "CUDA chain: " + err + "; ";
        release(cf);
        gst_object_unref(ctx);
      }
    }
#endif
  }
  err.clear();
  const std::string cpu_el = std::string(fc.element) + " backend=cpu";
  Feed f = system_feed(cpu_el, caps, 4);
  row.sys_cpu = run_pipeline(cpu_el, f, o.quick ? 13 : 60, &err);
  if (!err.empty())
    row.notes += "cpu: " + err + "; ";
  release(f);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  // --skip-*: leave a section out (a quicker run while working on one op;
  // the report then says which sections it lacks).
  bool skip_stats = false, skip_convolve = false, skip_canny = false, skip_elements = false;
  if (!parse_options(argc, argv, true, &o,
                     {{"--skip-stats", &skip_stats},
                      {"--skip-convolve", &skip_convolve},
                      {"--skip-canny", &skip_canny},
                      {"--skip-elements", &skip_elements}}))
    return 2;
  gst_init(&argc, &argv);
  cv::setNumThreads(std::thread::hardware_concurrency());
  const DeviceFacts dev = measure_device();
  const std::string date = today_utc();
  std::vector<Resolution> res;
  for (const Resolution& r : kResolutions)
    if (!o.quick || r.w <= 640)
      res.push_back(r);

  std::ostringstream md;
  md << "## The seed-001 filters: cudagreyworld, cudaautocontrast, cudaconvolve, cudacanny\n\n";
  md << "Measured " << date << " on **" << dev.name << "** with "
     << std::thread::hardware_concurrency() << " CPU threads, commit `" << o.commit
     << "`, by `bench/bench_filters`" << (o.quick ? " (--quick)" : "")
     << (skip_stats ? " --skip-stats" : "") << (skip_convolve ? " --skip-convolve" : "")
     << (skip_canny ? " --skip-canny" : "") << (skip_elements ? " --skip-elements" : "")
     << ".\n\n";
  if (dev.gpu)
    md << "Measured in the same run: device-to-device copy " << fmt("%.0f", dev.d2d_gbs)
       << " GB/s (1 GiB buffers, warm), pinned host-to-device " << fmt("%.1f", dev.h2d_pinned_gbs)
       << " GB/s, device-to-host " << fmt("%.1f", dev.d2h_pinned_gbs) << " GB/s.\n\n";
  md << "RGBA frames of noise, every op in place, one frame's statistics (frame mode), 0.5 % "
        "clipped at each end for auto contrast. *CPU*: our CPU backend ("
     << cpu_worker_count()
     << " threads), median of calls on fresh copies of the frame; *OpenCV*: what an OpenCV "
        "user writes for the same job (below), on all cores, the same way; *CUDA*: our op "
        "alone (sums or histogram, the tables, the lookup: three or four launches), CUDA "
        "events, *cold* rotating through at least "
     << (kColdBytes >> 20)
     << " MB of frames (no call finds its frame in L2), *hot* one frame every call. *GB/s*: "
        "the frame read once and written once, cold (the op reads it twice: the statistics, "
        "then the lookup); *copy*: a cold device copy of the frame in the same run, whose "
        "GB/s is the roofline of *% roof*. *GPU vs CPU* and *GPU vs OpenCV*: their time over "
        "our cold CUDA time (the seed's table). NPP has none of these functions. Times in ms.\n\n";
  for (const FilterCase& fc : kFilters)
    md << "- " << fc.name << ": OpenCV peer " << fc.peer << ".\n";
  md << "\n";
  std::string notes;
  for (const FilterCase& fc : kFilters) {
    if (skip_stats)
      break;
    md << "### " << fc.name << " (`" << fc.element << "`)\n\n";
    md << "| resolution | CPU | OpenCV | CUDA cold | CUDA hot | GB/s (cold) | copy cold | % roof | "
          "GPU vs CPU | GPU vs OpenCV |\n";
    md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Resolution& r : res) {
      const KernelRow k = bench_kernel(o, dev, r, fc);
      const double bytes = 2.0 * 4 * r.w * r.h;
      const double gbs = k.cuda.cold > 0 ? bytes / (k.cuda.cold * 1e-3) / 1e9 : -1;
      md << "| " << r.name << " | " << cell(k.cpu) << " | " << cell(k.opencv) << " | "
         << cell(k.cuda.cold, "%.4f") << " | " << cell(k.cuda.hot, "%.4f") << " | "
         << cell(gbs, "%.0f") << " | " << cell(k.roof.ms, "%.4f") << " | "
         << cell(gbs > 0 && k.roof.gbs > 0 ? 100 * gbs / k.roof.gbs : -1, "%.0f%%") << " | "
         << cell(k.cuda.cold > 0 ? k.cpu / k.cuda.cold : -1, "%.0fx") << " | "
         << cell(k.cuda.cold > 0 ? k.opencv / k.cuda.cold : -1, "%.0fx") << " |\n";
      if (!k.notes.empty())
        notes += std::string("- ") + fc.name + " " + r.name + ": " + k.notes + "\n";
      fprintf(stderr, "kernel %s %s done\n", fc.name, r.name);
    }
    md << "\n";
    write_report_section(o.out, "bench_filters", md.str());  // partial results survive
  }
  // Convolution (cudaconvolve's op): issue #17's targets at 2160p.
  md << "### convolution (`cudaconvolve`), k x k integer kernel, not separable\n\n"
        "Taps (i * 7 + j * 3) % 9 - 3 over their sum (exact integer path, two-dimensional: no "
        "column x row split), RGBA, replicate border; *NPP*: `nppiFilterBorder_8u_C4R` with the "
        "same taps and divisor by `bench/npp_convolve`; *OpenCV*: `cv::filter2D` with the taps "
        "over the divisor as floats. Cold and hot as above; *% roof* counts the frame read "
        "once and written once. "
     << (dev.gpu && [] {
          ConvolvePlan plan;
          return plan_convolve({PixelFormat::RGBA, 64, 64}, convolve_params(15), &plan).is_ok() &&
                 convolve_cuda_tensor_cores(plan, 0);
        }()
             ? "Our CUDA op runs these kernels on the integer tensor cores (u8 x s8 MMA, "
               "exact 32-bit sums).\n\n"
             : "Our CUDA op runs these kernels on the CUDA cores (no integer tensor cores of "
               "sm_80's kind here).\n\n");
  md << "| kernel | resolution | CPU | OpenCV | CUDA cold | CUDA hot | % roof | NPP cold | "
        "vs NPP | GPU vs CPU | GPU vs OpenCV |\n";
  md << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  double vs_npp[2] = {-1, -1};
  const int ksizes[] = {5, 15};
  for (int ki = 0; ki < 2 && !skip_convolve; ki++) {
    for (const Resolution& r : res) {
      const PeerRow c = bench_convolve(o, dev, r, ksizes[ki]);
      const double bytes = 2.0 * 4 * r.w * r.h;
      const double gbs = c.cuda.cold > 0 ? bytes / (c.cuda.cold * 1e-3) / 1e9 : -1;
      const double ratio = c.npp.ms > 0 && c.cuda.cold > 0 ? c.npp.ms / c.cuda.cold : -1;
      if (r.w == 3840)
        vs_npp[ki] = ratio;
      md << "| " << ksizes[ki] << "x" << ksizes[ki] << " | " << r.name << " | " << cell(c.cpu)
         << " | " << cell(c.opencv) << " | " << cell(c.cuda.cold, "%.4f") << " | "
         << cell(c.cuda.hot, "%.4f") << " | "
         << cell(gbs > 0 && c.roof.gbs > 0 ? 100 * gbs / c.roof.gbs : -1, "%.0f%%") << " | "
         << cell(c.npp.ms, "%.4f") << " | " << cell(ratio, "%.2fx") << " | "
         << cell(c.cuda.cold > 0 ? c.cpu / c.cuda.cold : -1, "%.0fx") << " | "
         << cell(c.cuda.cold > 0 ? c.opencv / c.cuda.cold : -1, "%.0fx") << " |\n";
      if (!c.notes.empty())
        notes += std::string("- convolution ") + r.name + ": " + c.notes + "\n";
      fprintf(stderr, "convolution %dx%d %s done\n", ksizes[ki], ksizes[ki], r.name);
    }
  }
  md << "\n| target (2160p, issue #17) | measured | met |\n|---|---|---|\n"
     << "| 5x5 >= 3x NPP | " << cell(vs_npp[0], "%.2fx") << " | "
     << (vs_npp[0] < 0 ? "not measured" : vs_npp[0] >= 3 ? "yes" : "**no**") << " |\n"
     << "| 15x15 >= 5x NPP | " << cell(vs_npp[1], "%.2fx") << " | "
     << (vs_npp[1] < 0 ? "not measured" : vs_npp[1] >= 5 ? "yes" : "**no**") << " |\n\n";
  write_report_section(o.out, "bench_filters", md.str());

  md << "### Canny (`cudacanny`'s op), from RGBA\n\n"
        "The grey conversion, Sobel 3x3, L2 norm, thresholds 50 and 100, hysteresis: our op "
        "from an RGBA frame to the edge map (three launches, no host round trip), *OpenCV* `cv::cvtColor` + `cv::Canny`, *NPP* "
        "`nppiRGBToGray_8u_AC4C1R` + `nppiFilterCannyBorder_8u_C1R` by `bench/npp_canny`.\n\n";
  md << "| resolution | CPU | OpenCV | CUDA cold | CUDA hot | NPP cold | vs NPP | GPU vs CPU | "
        "GPU vs OpenCV |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  double canny_vs_npp = -1;
  for (const Resolution& r : res) {
    if (skip_canny)
      break;
    const PeerRow c = bench_canny(o, dev, r);
    const double ratio = c.npp.ms > 0 && c.cuda.cold > 0 ? c.npp.ms / c.cuda.cold : -1;
    if (r.w == 3840)
      canny_vs_npp = ratio;
    md << "| " << r.name << " | " << cell(c.cpu) << " | " << cell(c.opencv) << " | "
       << cell(c.cuda.cold, "%.4f") << " | " << cell(c.cuda.hot, "%.4f") << " | "
       << cell(c.npp.ms, "%.4f") << " | " << cell(ratio, "%.2fx") << " | "
       << cell(c.cuda.cold > 0 ? c.cpu / c.cuda.cold : -1, "%.0fx") << " | "
       << cell(c.cuda.cold > 0 ? c.opencv / c.cuda.cold : -1, "%.0fx") << " |\n";
    if (!c.notes.empty())
      notes += std::string("- canny ") + r.name + ": " + c.notes + "\n";
    fprintf(stderr, "canny %s done\n", r.name);
  }
  md << "\n| target (2160p, issue #17) | measured | met |\n|---|---|---|\n"
     << "| Canny from RGBA >= 2x NPP | " << cell(canny_vs_npp, "%.2fx") << " | "
     << (canny_vs_npp < 0 ? "not measured" : canny_vs_npp >= 2 ? "yes" : "**no**") << " |\n\n";
  write_report_section(o.out, "bench_filters", md.str());

  md << "### Element throughput, frames/s\n\n"
        "`appsrc ! ELEMENT ! fakesink` fed with pre-filled RGBA buffers (no source cost). "
        "*system*: system memory (the pinned pool the element proposes; `backend=cuda` "
        "uploads and downloads the whole frame); *CUDA chain*: `memory:CUDAMemory`; *CPU*: "
        "`backend=cpu`.\n\n";
  md << "| filter | resolution | system (CUDA) | CUDA chain | CPU |\n|---|---|---:|---:|---:|\n";
  // The statistics filters, and the two others of issue #17 (their op rows
  // are above): a 5x5 convolution and Canny drawn over the frame.
  std::vector<FilterCase> elements(std::begin(kFilters), std::end(kFilters));
  elements.push_back({Filter::GreyWorld, "convolution 5x5",
                      "cudaconvolve kernel=\"1 4 6 4 1; 4 16 24 16 4; 6 24 36 24 6; 4 16 24 16 "
                      "4; 1 4 6 4 1\"",
                      ""});
  elements.push_back({Filter::GreyWorld, "canny overlay",
                      "cudacanny mode=overlay low-threshold=50 high-threshold=100", ""});
  for (const FilterCase& fc : elements) {
    if (skip_elements)
      break;
    for (const Resolution& r : res) {
      if (!o.quick && r.w < 1920)
        continue;  // the element rows: 1080p and up
      const ElementRow e = bench_element(o, dev, r, fc);
      md << "| " << fc.name << " | " << r.name << " | " << cell(e.sys_cuda, "%.0f") << " | "
         << cell(e.chain_cuda, "%.0f") << " | " << cell(e.sys_cpu, "%.1f") << " |\n";
      if (!e.notes.empty())
        notes += std::string("- element ") + fc.name + " " + r.name + ": " + e.notes + "\n";
      fprintf(stderr, "element %s %s done\n", fc.name, r.name);
    }
  }
  return finish_report(md, notes, o.out, "bench_filters");
}
