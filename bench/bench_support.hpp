// What the benchmark programs share: timing, device facts measured in the
// same run, helper programs (NPP peers), and element pipelines fed from
// pre-filled buffers (system or CUDA memory).
#pragma once

#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <utility>
#include <string>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "gstcudafxconfig.h"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudacontext.h>
#endif

namespace bench {

// A frame size, named as the tables' rows are.
struct Resolution {
  const char* name;
  int w, h;
};
// The kernel tables' rows, 480p to 2160p.
inline constexpr Resolution kResolutions[] = {
    {"480p", 640, 480}, {"720p", 1280, 720}, {"1080p", 1920, 1080},
    {"1440p", 2560, 1440}, {"2160p", 3840, 2160}};

// The options every benchmark program takes: --out FILE (the report,
// default docs/benchmarks.md), --commit SHA (named in it), --npp PATH (the
// NPP helper or their folder, where the program has NPP peers) and --quick
// (small frames, few iterations: a smoke run without a GPU).
struct BenchOptions {
  std::string out = "docs/benchmarks.md";
  std::string commit = "unknown";
  std::string npp;
  bool quick = false;
};
// Parses argv into `o` and the program's own flags (name, where to set
// true); prints a usage line naming them and returns false on anything else.
bool parse_options(int argc, char** argv, bool takes_npp, BenchOptions* o,
                   std::initializer_list<std::pair<const char*, bool*>> flags = {});

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0);

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

std::string fmt(const char* f, double v);
// A table cell: "n/a" for negative (not measured) values.
std::string cell(double v, const char* f = "%.3f");
// Today's date (UTC), "2026-11-26", for a report's "Measured ... on" line.
std::string today_utc();

// The median and range of repeated measurements (-1: none).
struct Spread {
  double median = -1, lo = -1, hi = -1;
};
Spread spread_of(std::vector<double> v);
// "512 (498–530)": a median and its range; "n/a" when there is none.
std::string spread_cell(const Spread& s, const char* f = "%.2f");
// Deterministic noise.
void fill(std::vector<uint8_t>& v);

struct DeviceFacts {
  bool gpu = false;
  std::string name = "no GPU";
  double d2d_gbs = 0;     // read + written bytes per second
  double h2d_pinned_gbs = 0;
  double d2h_pinned_gbs = 0;
};
// Makes device 0 current and measures its copy bandwidths.
DeviceFacts measure_device();

// Mean milliseconds per call of submit() (which queues work on `stream`),
// by CUDA events over `iters` calls after `warmup` calls; -1 on failure.
template <class F>
double cuda_ms_per_call(cudafx::StreamHandle stream, int warmup, int iters, F submit) {
  cudafx::CudaEvent a, b;
  if (!a.create().is_ok() || !b.create().is_ok())
    return -1;
  for (int i = 0; i < warmup; i++)
    submit();
  (void)a.record(stream);
  for (int i = 0; i < iters; i++)
    submit();
  (void)b.record(stream);
  float ms = 0;
  if (!b.synchronize().is_ok() || !b.elapsed_since(a, &ms).is_ok())
    return -1;
  return ms / iters;
}

// Cold buffers: a kernel timing rotates through distinct frames whose inputs
// and outputs together cover at least kColdBytes (over 4x the 50 MB L2 of an
// H100, the 60 MB of an H200), so no call finds its data in the cache.
constexpr size_t kColdBytes = size_t(256) << 20;
constexpr int kMaxColdFrames = 512;
// How many frames (of `bytes_per_frame`: inputs plus outputs of one call) a
// cold timing rotates through.
int cold_count(size_t bytes_per_frame);
// Rows padded to 256 bytes, as cudaMallocPitch and the NPP peers lay them.
constexpr size_t kRowAlign = 256;
size_t align_row(size_t v);

// Device frames rotated per call (cold_count of them), in one allocation.
struct DeviceFrames {
  cudafx::DeviceBuffer mem;
  size_t frame_bytes = 0;
  int count = 0;
  uint8_t* frame(int i) const { return mem.bytes() + static_cast<size_t>(i % count) * frame_bytes; }
};
// Allocates `count` frames of `frame_bytes` and copies `first` (frame_bytes,
// in the frames' layout; host memory; null: left unfilled) into each.
bool make_frames(DeviceFrames* f, size_t frame_bytes, int count, const uint8_t* first,
                 cudafx::StreamHandle s);
// A tightly packed one-plane image (GRAY8, RGBA) with its rows padded to
// kRowAlign: the layout of the device frames, so one linear copy fills one.
std::vector<uint8_t> padded_rows(const cudafx::ImageDesc& desc, const std::vector<uint8_t>& packed);

// The roofline of a kernel that reads and writes frames of `frame_bytes`: a
// device-to-device copy of that size, cold (distinct source and destination
// frames rotated as the kernels' are: cold_count(2 * frame_bytes) pairs), in
// this process. Mean of max(iters, one rotation) copies after one rotation.
struct CopyRoof {
  double ms = -1;   // per copy; -1: not measured
  double gbs = -1;  // bytes read + written per second, 1e9
  int frames = 0;   // source/destination pairs rotated
  size_t bytes = 0; // the rotation: sources and destinations together
};
CopyRoof cold_copy(size_t frame_bytes, int iters);

// A kernel from one device frame to another timed both ways: *cold*, rotating
// through cold_count(in_bytes + out_bytes) distinct input and output frames
// (one full rotation of warm-up, then the mean of max(100, one rotation)
// calls; 5 with `quick`), and *hot*, the same input and output every call
// (5 calls of warm-up, mean of 100; 5 with `quick`), as earlier tables were
// measured. submit(in, out) queues one call on `stream` and returns a
// cudafx::Status; `staged_in` (in_bytes, the frames' layout) fills every
// input frame. Failures: -1 and a note.
struct KernelTimes {
  double cold = -1, hot = -1;  // mean ms per call
  int frames = 0;              // input/output pairs rotated
  size_t bytes = 0;            // the rotation: inputs and outputs together
};
template <class Submit>
KernelTimes time_cold_hot(cudafx::StreamHandle stream, size_t in_bytes, size_t out_bytes,
                          const uint8_t* staged_in, bool quick, Submit submit, std::string* note) {
  KernelTimes t;
  const int count = cold_count(in_bytes + out_bytes);
  DeviceFrames in, out;
  if (!make_frames(&in, in_bytes, count, staged_in, stream) ||
      !make_frames(&out, out_bytes, count, nullptr, stream)) {
    *note += "out of device memory; ";
    return t;
  }
  cudafx::Status st = submit(in.frame(0), out.frame(0));
  if (st.is_ok())
    st = cudafx::synchronize_stream(stream);
  if (!st.is_ok()) {
    *note += st.message() + "; ";
    return t;
  }
  t.frames = count;
  t.bytes = (in_bytes + out_bytes) * count;
  int next = 0;
  t.cold = cuda_ms_per_call(stream, count, quick ? 5 : std::max(100, count), [&] {
    const int i = next++;
    (void)submit(in.frame(i), out.frame(i));
  });
  t.hot = cuda_ms_per_call(stream, 5, quick ? 5 : 100,
                           [&] { (void)submit(in.frame(0), out.frame(0)); });
  return t;
}

// Runs a helper program (command line) and returns the milliseconds it
// prints as "ms=<value>", or -1; other output goes to stderr.
double helper_ms(const std::string& cmd);
// The same, also reading "hot_ms=<value>" (the same buffers every call) and
// "frames=<n>" (the frames its cold timing rotated) where printed.
struct HelperTimes {
  double ms = -1, hot_ms = -1;
  int frames = 0;
};
HelperTimes helper_times(const std::string& cmd);
// "CUDA 109 pairs (256 MB), copy 109 (256 MB), NPP 109": a row's rotation
// for a report's "Frames rotated" line (NPP: pairs as its helper printed).
std::string rotation_text(const KernelTimes& k, const CopyRoof& c, const HelperTimes& npp);

struct Feed {
  std::string caps;
  std::vector<GstBuffer*> buffers;  // pushed round-robin, by reference
  GstContext* context = nullptr;    // given to every element of the pipeline
};

// Runs appsrc ! `chain` ! fakesink over `frames` buffers; frames per second
// over the frames after the first ten (pool and context set-up excluded).
double run_pipeline(const std::string& chain, const Feed& feed, int frames, std::string* err);
// Input buffers from the pool that `element_desc` proposes upstream once
// negotiated from `caps_str` to `out_caps_str` (empty: the same), filled with
// noise.
Feed system_feed(const std::string& element_desc, const std::string& caps_str, int count,
                 const std::string& out_caps_str = "");
#if HAVE_GSTCUDA
Feed cuda_feed(const std::string& caps_str, int count, GstCudaContext* ctx);
#endif
void release(Feed& f);
// Writes the packed image `packed` (planes and rows tight, the caps' format
// and size) into every `step`-th buffer of `feed` from `first` (system or
// CUDA memory), so that consecutive frames can differ.
bool refill(Feed& feed, int first, int step, const uint8_t* packed);
std::string caps_for(const char* format, int w, int h, bool cuda);

}  // namespace bench
