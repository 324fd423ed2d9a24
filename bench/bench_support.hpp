// What the benchmark programs share: timing, device facts measured in the
// same run, helper programs (NPP peers), and element pipelines fed from
// pre-filled buffers (system or CUDA memory).
#pragma once

#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "gstcudafxconfig.h"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudacontext.h>
#endif

namespace bench {

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

// Runs a helper program (command line) and returns the milliseconds it
// prints as "ms=<value>", or -1; other output goes to stderr.
double helper_ms(const std::string& cmd);

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
