// CUDA-memory chains (issue #15, item 5): what each element adds to a frame
// beyond its kernel when frames stay on the GPU. Not a test: prints a table
// and writes a Markdown report section.
//
// Usage: bench_chain [--out FILE] [--commit SHA] [--quick]
//
// appsrc (CUDA memory, 2160p RGBA, pre-filled buffers) ! N x ELEMENT !
// fakesink for N = 0 (identity) to 5, frames/s over the frames after the
// first ten, paired rounds (every N once a round, the order alternating),
// medians. Per element: (ms/frame at N - ms/frame at 0) / N. The kernel: the
// element's op alone on cold frames (time_cold_hot), so the overhead is the
// element's time beyond its own GPU work: mapping, the stream's
// synchronisation before the push, GStreamer's per-buffer cost.
#include <gst/gst.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/greyworld.hpp"
#include "report.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudaloader.h>
#endif

using namespace cudafx;
using namespace bench;

namespace {

using Options = BenchOptions;

constexpr int kMaxChain = 5;

struct Chain {
  const char* name;
  const char* element;  // one link of the chain
  bool gaussian;        // its op: the 5x5 Gaussian (else grey world)
};
const Chain kChains[] = {
    {"cudagaussian 5x5", "cudagaussian backend=cuda sigma=1.1 kernel-size=5", true},
    {"cudagreyworld", "cudagreyworld backend=cuda", false},
};

double median(std::vector<double> v) {
  if (v.empty())
    return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The op of a chain's element alone, cold, ms per frame.
double kernel_ms(const Chain& c, const ImageDesc& d, bool quick, std::string* note) {
  CudaStream stream;
  if (!stream.create().is_ok())
    return -1;
  const size_t bytes = packed_size(d, kRowAlign);
  std::vector<uint8_t> noise(packed_size(d));
  fill(noise);
  const std::vector<uint8_t> staged = padded_rows(d, noise);
  if (c.gaussian) {
    GaussianParams p;
    p.sigma_x = 1.1;
    p.kernel_size_x = 5;
    std::unique_ptr<GaussianOp> op;
    if (!GaussianOp::create(Backend::Cuda, d, p, &op).is_ok())
      return -1;
    return time_cold_hot(stream.get(), bytes, bytes, staged.data(), quick,
                         [&](uint8_t* in, uint8_t* out) {
                           return op->submit(stream.get(), packed_view(d, in, kRowAlign),
                                             packed_view(d, out, kRowAlign));
                         },
                         note)
        .cold;
  }
  std::unique_ptr<GreyWorldOp> op;
  if (!GreyWorldOp::create(Backend::Cuda, d, &op).is_ok())
    return -1;
  return time_cold_hot(stream.get(), bytes, 16, staged.data(), quick,
                       [&](uint8_t* in, uint8_t*) {
                         return op->submit(stream.get(), packed_view(d, in, kRowAlign), 1.0);
                       },
                       note)
      .cold;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, false, &o))
    return 2;
  gst_init(&argc, &argv);
  const DeviceFacts dev = measure_device();
  const std::string date = today_utc();
  const Resolution r = o.quick ? kResolutions[0] : kResolutions[4];
  const ImageDesc desc{PixelFormat::RGBA, r.w, r.h};

  std::ostringstream md;
  md << "## CUDA-memory chains\n\n";
  md << "Measured " << date << " on **" << dev.name << "**, commit `" << o.commit
     << "`, by `bench/bench_chain`" << (o.quick ? " (--quick)" : "") << ".\n\n";
  md << "`appsrc ! N x ELEMENT ! fakesink`, " << r.name
     << " RGBA in `memory:CUDAMemory` (pre-filled buffers, one shared context), N = 0 "
        "(`identity`) to " << kMaxChain
     << "; frames/s over the frames after the first ten; rounds of every N (order alternating "
        "a round), medians over the rounds. *per element*: (ms/frame at N − at 0) / N, µs. "
        "*kernel*: the element's op alone on cold frames, µs. *overhead*: per element − "
        "kernel: the element's cost beyond its GPU work (issue #15's target: ≤ 20 µs).\n\n";
  std::string notes;
#if HAVE_GSTCUDA
  if (!dev.gpu || !gst_cuda_load_library()) {
    md << "No GPU or no libgstcuda: not measured.\n\n";
  } else {
    GstCudaContext* ctx = gst_cuda_context_new(0);
    Feed feed = cuda_feed(caps_for("RGBA", r.w, r.h, true), 8, ctx);
    md << "| chain | N | frames/s | ms/frame | per element µs | kernel µs | overhead µs | ≤ 20 µs |\n"
          "|---|---:|---:|---:|---:|---:|---:|---|\n";
    const int rounds = o.quick ? 1 : 5, frames = o.quick ? 30 : 2000;
    for (const Chain& c : kChains) {
      std::vector<std::vector<double>> fps(kMaxChain + 1);
      for (int round = 0; round < rounds; round++) {
        for (int k = 0; k <= kMaxChain; k++) {
          const int n = round % 2 ? kMaxChain - k : k;
          std::string chain = "identity";
          for (int i = 0; i < n; i++)
            chain += std::string(" ! ") + c.element + " name=g" + std::to_string(i);
          std::string err;
          const double f = run_pipeline(chain, feed, frames, &err);
          if (!err.empty())
            notes += std::string("- ") + c.name + " N=" + std::to_string(n) + ": " + err + "\n";
          if (f > 0)
            fps[n].push_back(f);
        }
      }
      std::string note;
      const double kernel_us = 1000 * kernel_ms(c, desc, o.quick, &note);
      if (!note.empty())
        notes += std::string("- ") + c.name + " kernel: " + note + "\n";
      const double base_ms = 1000.0 / median(fps[0]);
      for (int n = 0; n <= kMaxChain; n++) {
        const double f = median(fps[n]);
        const double ms = f > 0 ? 1000.0 / f : -1;
        const double per = n > 0 && ms > 0 ? 1000 * (ms - base_ms) / n : -1;
        const double over = per > 0 && kernel_us > 0 ? per - kernel_us : -1;
        md << "| " << (n == 0 ? "identity" : c.name) << " | " << n << " | " << cell(f, "%.0f")
           << " | " << cell(ms, "%.4f") << " | " << cell(per, "%.1f") << " | "
           << cell(n > 0 ? kernel_us : -1, "%.1f") << " | " << cell(over, "%.1f") << " | "
           << (over < 0 ? "" : over <= 20 ? "yes" : "**no**") << " |\n";
      }
      fprintf(stderr, "chain %s done\n", c.name);
    }
    release(feed);
    gst_object_unref(ctx);
  }
#else
  md << "Built without libgstcuda: not measured.\n\n";
#endif
  return finish_report(md, notes, o.out, "bench_chain");
}
