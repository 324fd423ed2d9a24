// Two branches on two GPUs against the same two on one (issue #19). Not a
// test: prints a table and writes a Markdown report section.
//
// Usage: bench_multi_gpu [--out FILE] [--commit SHA] [--quick]
//
// Each branch is a camera's stream: appsrc (pre-filled buffers in CUDA
// memory of its device's context) ! chain ! fakesink, one pipeline holding
// the branches, each pushed from its own thread. Configurations: one branch
// on GPU 0; two on GPU 0; two on GPUs 0 and 1. Rounds of the three (order
// alternating a round), total frames/s (the branches' rates over the frames
// after the first ten, added), median and spread over the rounds.
//
// Chains:
//  - "camera": 1080p NV12 ! cudagaussian ! cudaupscale x2 ! cudadeltaenc
//    (the chain of the two-device test), frames changing in 5 % of their
//    bytes from one to the next;
//  - "heavy filter": 2160p RGBA ! cudaconvolve 15x15 (not separable): a
//    chain whose GPU work (about 1.3 ms a frame on an H100) outweighs the
//    host's, to show what a second GPU gives when the GPU is the bound.
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "cudafx/cuda_resources.hpp"
#include "report.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudaloader.h>
#endif

using namespace cudafx;
using namespace bench;

namespace {

struct ChainSpec {
  const char* name;
  const char* format;
  int w, h;
  std::vector<std::string> links;  // "video/..." are caps; the rest our elements
  bool changing;                   // frames differ by 5 % (else noise, all alike)
};

std::string conv15() {
  std::string k;
  for (int y = 0; y < 15; y++) {
    for (int x = 0; x < 15; x++)
      k += std::to_string((x * 7 + y * 3) % 5 + 1) + (x < 14 ? " " : "");
    k += y < 14 ? "; " : "";
  }
  return "cudaconvolve kernel=\"" + k + "\"";
}

struct Placement {
  const char* name;
  std::vector<int> devices;  // a branch each
};
const Placement kPlacements[] = {
    {"1 branch, GPU 0", {0}},
    {"2 branches, GPU 0", {0, 0}},
    {"2 branches, GPUs 0 + 1", {0, 1}},
};

double median(std::vector<double> v) {
  if (v.empty())
    return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#if HAVE_GSTCUDA

// The branches of `c`, branch k on devices[k] fed from feeds[k]; total
// frames/s (each branch's rate after its first ten frames, added), -1 on
// an error (in *err).
double run_branches(const ChainSpec& c, const std::vector<int>& devices,
                    const std::vector<const Feed*>& feeds, int frames, std::string* err) {
  std::string desc;
  for (size_t k = 0; k < devices.size(); k++) {
    const std::string b = "b" + std::to_string(k);
    desc += "appsrc name=" + b + "src format=time block=true max-bytes=0 max-buffers=4 caps=\"" +
            feeds[k]->caps + "\"";
    int i = 0;
    for (const std::string& link : c.links) {
      desc += " ! " + link;
      if (link.rfind("video/", 0) != 0)
        desc += " name=" + b + "_" + std::to_string(i++) + " backend=cuda cuda-device-id=" +
                std::to_string(devices[k]);
    }
    desc += " ! fakesink name=" + b + "sink sync=false signal-handoffs=true ";
  }
  GError* gerr = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &gerr);
  if (!pipeline) {
    *err = gerr ? gerr->message : "parse failed";
    g_clear_error(&gerr);
    return -1;
  }
  const size_t n = devices.size();
  std::vector<std::vector<Clock::time_point>> stamps(n);
  std::vector<GstElement*> srcs(n);
  for (size_t k = 0; k < n; k++) {
    const std::string b = "b" + std::to_string(k);
    // the branch's elements get its feed's context, as an application
    // would hand it (they would also find it by query)
    for (int i = 0;; i++) {
      GstElement* e = gst_bin_get_by_name(GST_BIN(pipeline), (b + "_" + std::to_string(i)).c_str());
      if (!e)
        break;
      gst_element_set_context(e, feeds[k]->context);
      gst_object_unref(e);
    }
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), (b + "sink").c_str());
    g_signal_connect(sink, "handoff",
                     G_CALLBACK(+[](GstElement*, GstBuffer*, GstPad*, gpointer u) {
                       static_cast<std::vector<Clock::time_point>*>(u)->push_back(Clock::now());
                     }),
                     &stamps[k]);
    gst_object_unref(sink);
    srcs[k] = gst_bin_get_by_name(GST_BIN(pipeline), (b + "src").c_str());
  }
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  std::vector<std::thread> pushers;
  for (size_t k = 0; k < n; k++)
    pushers.emplace_back([&, k] {
      const Feed& f = *feeds[k];
      for (int i = 0; i < frames; i++) {
        // by reference: the feed keeps its buffers (untimed, as bench_chain's)
        GstBuffer* b = gst_buffer_ref(f.buffers[i % f.buffers.size()]);
        if (gst_app_src_push_buffer(GST_APP_SRC(srcs[k]), b) != GST_FLOW_OK)
          break;
      }
      gst_app_src_end_of_stream(GST_APP_SRC(srcs[k]));
    });
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 300 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  double total = -1;
  if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    *err = e->message;
    g_error_free(e);
  } else if (msg) {
    total = 0;
    for (size_t k = 0; k < n; k++) {
      if (stamps[k].size() < 12) {
        *err = "branch " + std::to_string(k) + " gave " + std::to_string(stamps[k].size()) +
               " frames";
        total = -1;
        break;
      }
      const double s = std::chrono::duration<double>(stamps[k].back() - stamps[k][10]).count();
      total += (stamps[k].size() - 11) / s;
    }
  } else {
    *err = "no EOS";
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);  // unblocks the pushers on error
  for (std::thread& t : pushers)
    t.join();
  if (msg)
    gst_message_unref(msg);
  gst_object_unref(bus);
  for (GstElement* s : srcs)
    gst_object_unref(s);
  gst_object_unref(pipeline);
  return total;
}

// Frames for a changing stream: noise, then 5 % of the bytes redrawn from
// one frame to the next.
std::vector<std::vector<uint8_t>> changing_frames(size_t bytes, int count) {
  std::vector<std::vector<uint8_t>> v(count);
  std::mt19937 rng(19);
  v[0].resize(bytes);
  for (uint8_t& b : v[0])
    b = static_cast<uint8_t>(rng());
  for (int i = 1; i < count; i++) {
    v[i] = v[i - 1];
    for (size_t j = 0; j < bytes / 20; j++)
      v[i][rng() % bytes] = static_cast<uint8_t>(rng());
  }
  return v;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  if (!parse_options(argc, argv, false, &o))
    return 2;
  gst_init(&argc, &argv);
  const DeviceFacts dev = measure_device();
  int count = 0;
  if (!cuda_device_count(&count).is_ok())
    count = 0;
  const std::string date = today_utc();

  const std::vector<ChainSpec> chains = {
      {"camera: cudagaussian ! cudaupscale x2 ! cudadeltaenc", "NV12", o.quick ? 640 : 1920,
       o.quick ? 360 : 1080,
       {"cudagaussian sigma=1.5", "cudaupscale factor=2 method=bilinear",
        "video/x-raw(memory:CUDAMemory)", "cudadeltaenc threshold=2"},
       true},
      {"heavy filter: cudaconvolve 15x15", "RGBA", o.quick ? 640 : 3840, o.quick ? 360 : 2160,
       {conv15()}, false},
  };

  std::ostringstream md;
  md << "## Two GPUs\n\n";
  md << "Measured " << date << " on **" << count << " x " << dev.name << "**, commit `"
     << o.commit << "`, by `bench/bench_multi_gpu`" << (o.quick ? " (--quick)" : "") << ".\n\n";
  md << "Branches of one pipeline, each `appsrc ! chain ! fakesink` fed from its own pre-filled "
        "buffers in CUDA memory of its device's context and pushed from its own thread; every "
        "element given `backend=cuda cuda-device-id=` its branch's device. *frames/s*: the "
        "branches' rates over the frames after their first ten, added (each feed rotates through "
        "at least 256 MB of buffers: cold, past L2); median over the rounds "
        "(each round runs the three placements, the order alternating), *spread* min–max. "
        "*vs 1 GPU*: the two-GPU placement over two branches on GPU 0.\n\n";
  std::string notes;
#if HAVE_GSTCUDA
  if (count < 2 || !gst_cuda_load_library()) {
    md << "Needs two GPUs and libgstcuda (found " << count << " GPU(s)): not measured.\n\n";
  } else {
    GstCudaContext* ctx[2] = {gst_cuda_context_new(0), gst_cuda_context_new(1)};
    md << "| chain | frame | placement | frames/s | spread | per branch | vs 1 GPU |\n"
          "|---|---|---|---:|---:|---:|---:|\n";
    const int rounds = o.quick ? 1 : 3;
    for (const ChainSpec& c : chains) {
      // two feeds a device: two branches on one device read their own buffers
      const std::string caps = caps_for(c.format, c.w, c.h, true);
      const size_t frame_bytes = std::string(c.format) == "NV12" ? size_t(c.w) * c.h * 3 / 2
                                                                 : size_t(c.w) * c.h * 4;
      // Each feed rotates through >= 256 MB (cold: past the L2 cache); a
      // changing stream repeats 8 frames, refilled every 8th buffer.
      const int count = (std::max(8, cold_count(frame_bytes)) + 7) / 8 * 8;
      std::vector<std::vector<uint8_t>> changing;  // made once, copied into every feed
      if (c.changing)
        changing = changing_frames(frame_bytes, 8);
      Feed feeds[2][2];
      for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) {
          feeds[d][k] = cuda_feed(caps, count, ctx[d]);
          for (size_t i = 0; i < changing.size(); i++)
            refill(feeds[d][k], static_cast<int>(i), 8, changing[i].data());
        }
      const int frames = o.quick ? 40 : (c.changing ? 250 : 1500);
      std::vector<std::vector<double>> fps(std::size(kPlacements));
      for (int round = 0; round < rounds; round++)
        for (size_t j = 0; j < std::size(kPlacements); j++) {
          const size_t p = round % 2 ? std::size(kPlacements) - 1 - j : j;
          std::vector<const Feed*> f;
          for (size_t k = 0; k < kPlacements[p].devices.size(); k++)
            f.push_back(&feeds[kPlacements[p].devices[k]][k]);
          std::string err;
          const double r = run_branches(c, kPlacements[p].devices, f, frames, &err);
          if (!err.empty())
            notes += std::string("- ") + c.name + ", " + kPlacements[p].name + ": " + err + "\n";
          if (r > 0)
            fps[p].push_back(r);
          fprintf(stderr, "%s, %s: %.1f frames/s\n", c.name, kPlacements[p].name, r);
        }
      const double one_gpu = median(fps[1]);
      for (size_t p = 0; p < std::size(kPlacements); p++) {
        const double m = median(fps[p]);
        const auto mm = std::minmax_element(fps[p].begin(), fps[p].end());
        const std::string spread = fps[p].empty() ? "–"
                                                  : fmt("%.0f", *mm.first) + "–" +
                                                        fmt("%.0f", *mm.second);
        const double per = m > 0 ? m / kPlacements[p].devices.size() : -1;
        md << "| " << (p == 0 ? c.name : "") << " | "
           << (p == 0 ? std::to_string(c.w) + "x" + std::to_string(c.h) + " " + c.format : "")
           << " | " << kPlacements[p].name << " | " << cell(m, "%.0f") << " | " << spread
           << " | " << cell(per, "%.0f") << " | "
           << (p == 2 && m > 0 && one_gpu > 0 ? fmt("%.2fx", m / one_gpu) : "") << " |\n";
      }
      for (auto& row : feeds)
        for (Feed& f : row)
          release(f);
    }
    gst_object_unref(ctx[0]);
    gst_object_unref(ctx[1]);
  }
#else
  md << "Built without libgstcuda: not measured.\n\n";
#endif
  return finish_report(md, notes, o.out, "bench_multi_gpu");
}
