// Frames in system memory through the CUDA backend: memory-mode=copy (device
// staging images, a copy over the bus each way) beside memory-mode=mapped
// (the kernels read and write the frames where they are: the path an
// integrated GPU such as Jetson's takes by default, where host memory is the
// GPU's memory). On a discrete GPU every mapped access crosses the bus, and
// a kernel that reads a pixel more than once (halos) crosses it more than
// once: this program measures what that costs, so the choice of the default
// (copy on discrete GPUs) rests on numbers.
//
// Usage: bench_memory_mode [--out FILE] [--commit SHA] [--quick]
//
// appsrc ! element ! fakesink, fed with buffers from the pool the element
// proposes upstream (pinned memory: what a pipeline gets) and, for mapped,
// also with pageable buffers (registered a frame at a time). Rounds run the
// three feeds in alternating order; median and min-max over the rounds.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cudafx/cuda_resources.hpp"
#include "report.hpp"

using namespace cudafx;
using namespace bench;

namespace {

// `count` pageable buffers of the caps' frame size, filled with noise.
Feed pageable_feed(const std::string& caps_str, int count) {
  Feed f;
  f.caps = caps_str;
  GstCaps* caps = gst_caps_from_string(caps_str.c_str());
  GstVideoInfo info;
  if (caps && gst_video_info_from_caps(&info, caps)) {
    std::vector<uint8_t> noise(GST_VIDEO_INFO_SIZE(&info));
    fill(noise);
    for (int i = 0; i < count; i++) {
      GstBuffer* b = gst_buffer_new_allocate(nullptr, noise.size(), nullptr);
      gst_buffer_fill(b, 0, noise.data(), noise.size());
      f.buffers.push_back(b);
    }
  }
  if (caps)
    gst_caps_unref(caps);
  return f;
}

// A frame rate of 0 or less is a run that failed (its error is in the
// notes): left out of the spread.
Spread rates_spread(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return x <= 0; }), v.end());
  return spread_of(v);
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  if (!parse_options(argc, argv, false, &o))
    return 2;
  gst_init(&argc, &argv);
  const DeviceFacts dev = measure_device();
  const std::string date = today_utc();

  struct Element {
    const char* name;
    const char* desc;  // the element and its own properties
  };
  const Element elements[] = {
      {"cudagaussian 5x5 (transform)", "cudagaussian kernel-size=5 sigma=1.5"},
      {"cudagreyworld (in place)", "cudagreyworld"},
      {"cudaautocontrast (in place)", "cudaautocontrast"},
      {"cudaharris g5 b5 (analysis)", "cudaharris gradient-size=5 block-size=5"},
  };
  std::vector<Resolution> sizes;
  if (o.quick)
    sizes.push_back({"360p", 640, 360});
  else
    sizes = {kResolutions[2], kResolutions[4]};
  const int rounds = o.quick ? 1 : 5, frames = o.quick ? 13 : 50;

  std::ostringstream md;
  md << "## Memory modes (system memory, CUDA backend)\n\n";
  md << "Measured " << date << " on **" << dev.name << "**, commit `" << o.commit
     << "`, by `bench/bench_memory_mode`" << (o.quick ? " (--quick)" : "") << ".\n\n";
  md << "`appsrc ! element backend=cuda memory-mode=… ! fakesink`, RGBA frames in system memory, "
        "frames/s over the frames after the first ten. *copy*: through device staging images (the "
        "default on a discrete GPU); *mapped*: the kernels read and write the frames where they "
        "are (the default on an integrated GPU), fed from the element's proposed pool (pinned "
        "memory, as a pipeline gets it) and from pageable buffers (page-locked and mapped a frame "
        "at a time). Each round runs the three feeds, the order alternating; median (min–max) over "
        << rounds << " rounds. *mapped/copy*: the medians' ratio.\n\n";
  md << "| element | frame | copy | mapped | mapped/copy | mapped, pageable input |\n"
     << "|---|---|---:|---:|---:|---:|\n";
  std::string notes;
  for (const Element& e : elements) {
    for (const Resolution& r : sizes) {
      const std::string caps = caps_for("RGBA", r.w, r.h, false);
      const std::string copy_el = std::string(e.desc) + " backend=cuda memory-mode=copy";
      const std::string mapped_el = std::string(e.desc) + " backend=cuda memory-mode=mapped";
      Feed pinned = system_feed(copy_el, caps, 4);
      Feed pageable = pageable_feed(caps, 4);
      std::vector<double> t_copy, t_mapped, t_pageable;
      for (int round = 0; round < rounds; round++) {
        std::string err;
        auto run = [&](int which) {
          if (which == 0)
            t_copy.push_back(run_pipeline(copy_el, pinned, frames, &err));
          else if (which == 1)
            t_mapped.push_back(run_pipeline(mapped_el, pinned, frames, &err));
          else
            t_pageable.push_back(run_pipeline(mapped_el, pageable, frames, &err));
        };
        for (int k = 0; k < 3; k++)
          run(round % 2 ? 2 - k : k);
        if (!err.empty())
          notes += std::string("- ") + e.name + " " + r.name + ": " + err + "\n";
      }
      release(pinned);
      release(pageable);
      const Spread c = rates_spread(t_copy), m = rates_spread(t_mapped),
                   p = rates_spread(t_pageable);
      md << "| " << e.name << " | " << r.name << " | " << spread_cell(c, "%.0f") << " | "
         << spread_cell(m, "%.0f") << " | "
         << (c.median > 0 && m.median > 0 ? fmt("%.2fx", m.median / c.median) : "n/a") << " | "
         << spread_cell(p, "%.0f") << " |\n";
      fprintf(stderr, "%s %s done\n", e.name, r.name);
    }
  }
  return finish_report(md, notes, o.out, "bench_memory_mode");
}
