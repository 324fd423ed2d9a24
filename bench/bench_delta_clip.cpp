// The delta codec on real footage (../shared/testdata/vtest.avi: a static
// camera, 768x576 I420, 10 fps, 795 frames), at each threshold, against raw
// RTP video (RFC 4175, rtpvrawpay payloads) and x264 (tune=zerolatency,
// speed-preset=ultrafast, constant quantiser), all measured in this run on
// the CPU. Prints a table and writes its section of docs/benchmarks.md.
//
// Encoding speeds are the fastest of --runs passes over the clip (3 by
// default), for our encoder and x264 alike: machines that share their cores
// vary by tens of percent from one pass to the next.
//
// Usage: bench_delta_clip [--clip PATH] [--frames N] [--out FILE] [--commit SHA] [--runs N]
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "report.hpp"
#include "cudafx/delta.hpp"
#include "cudafx/parallel.hpp"

using namespace cudafx;
using Clock = std::chrono::steady_clock;

namespace {

struct Clip {
  GstCaps* caps = nullptr;
  GstVideoInfo info;
  std::vector<GstBuffer*> frames;
};

bool load_clip(const std::string& path, int max_frames, Clip* clip) {
  const std::string desc = "filesrc location=\"" + path +
                           "\" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! appsink "
                           "name=out sync=false";
  GstElement* p = gst_parse_launch(desc.c_str(), nullptr);
  if (!p)
    return false;
  GstElement* out = gst_bin_get_by_name(GST_BIN(p), "out");
  gst_element_set_state(p, GST_STATE_PLAYING);
  while (static_cast<int>(clip->frames.size()) < max_frames) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 30 * GST_SECOND);
    if (!s)
      break;
    if (!clip->caps) {
      clip->caps = gst_caps_copy(gst_sample_get_caps(s));
      gst_video_info_from_caps(&clip->info, clip->caps);
    }
    clip->frames.push_back(gst_buffer_ref(gst_sample_get_buffer(s)));
    gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(out);
  gst_object_unref(p);
  return !clip->frames.empty();
}

// The fastest of `runs` passes (seconds), each pass starting afresh; a
// negative value as soon as a pass fails.
double fastest_of(int runs, const std::function<double()>& pass) {
  double best = INFINITY;
  for (int run = 0; run < runs; run++) {
    const double t = pass();
    if (t < 0)
      return t;
    best = std::min(best, t);
  }
  return best;
}

// Pushes `in` through "appsrc name=in ! <chain> ! appsink name=out" and hands
// every output buffer to `sink`. Returns the wall time in seconds.
double run_chain(const std::string& chain, GstCaps* caps, const std::vector<GstBuffer*>& in,
                 const std::function<void(GstBuffer*)>& sink) {
  gchar* c = gst_caps_to_string(caps);
  const std::string desc = std::string("appsrc name=in format=time block=true max-buffers=8 caps=\"") +
                           c + "\" ! " + chain + " ! appsink name=out sync=false";
  g_free(c);
  GstElement* p = gst_parse_launch(desc.c_str(), nullptr);
  if (!p)
    return -1;
  GstElement* src = gst_bin_get_by_name(GST_BIN(p), "in");
  GstElement* out = gst_bin_get_by_name(GST_BIN(p), "out");
  gst_element_set_state(p, GST_STATE_PLAYING);
  const auto t0 = Clock::now();
  std::thread pusher([&] {
    for (size_t i = 0; i < in.size(); i++) {
      GstBuffer* b = gst_buffer_copy(in[i]);  // shallow: shares the memory
      GST_BUFFER_PTS(b) = i * GST_SECOND / 10;
      GST_BUFFER_DURATION(b) = GST_SECOND / 10;
      if (gst_app_src_push_buffer(GST_APP_SRC(src), b) != GST_FLOW_OK)
        break;
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
  });
  while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 60 * GST_SECOND)) {
    sink(gst_sample_get_buffer(s));
    gst_sample_unref(s);
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  pusher.join();
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(out);
  gst_object_unref(p);
  return secs;
}

// Accumulates squared error and the largest error of frames against the clip.
struct Error {
  double sq = 0, n = 0;
  int max = 0;
  void add(const GstVideoInfo& info, GstBuffer* a, GstBuffer* b) {
    GstVideoFrame fa, fb;
    if (!gst_video_frame_map(&fa, &info, a, GST_MAP_READ))
      return;
    if (!gst_video_frame_map(&fb, &info, b, GST_MAP_READ)) {
      gst_video_frame_unmap(&fa);
      return;
    }
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&fa); p++) {
      const int w = GST_VIDEO_FRAME_COMP_WIDTH(&fa, p), h = GST_VIDEO_FRAME_COMP_HEIGHT(&fa, p);
      for (int y = 0; y < h; y++) {
        const guint8* ra = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&fa, p)) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, p);
        const guint8* rb = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&fb, p)) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, p);
        for (int x = 0; x < w; x++) {
          const int d = std::abs(ra[x] - rb[x]);
          max = std::max(max, d);
          sq += d * d;
        }
        n += w;
      }
    }
    gst_video_frame_unmap(&fa);
    gst_video_frame_unmap(&fb);
  }
  double psnr() const { return sq > 0 ? 10 * std::log10(255.0 * 255.0 * n / sq) : INFINITY; }
};

std::string fmt(const char* f, double v) {
  char b[64];
  snprintf(b, sizeof b, f, v);
  return b;
}


}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  std::string clip_path = "../shared/testdata/vtest.avi", out_path = "docs/benchmarks.md",
              commit = "unknown";
  int max_frames = 100000, runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--clip") clip_path = argv[i + 1];
    else if (a == "--frames") max_frames = atoi(argv[i + 1]);
    else if (a == "--out") out_path = argv[i + 1];
    else if (a == "--commit") commit = argv[i + 1];
    else if (a == "--runs") runs = std::max(1, atoi(argv[i + 1]));
  }
  Clip clip;
  if (!load_clip(clip_path, max_frames, &clip)) {
    fprintf(stderr, "bench_delta_clip: cannot decode %s\n", clip_path.c_str());
    return 1;
  }
  const int n = static_cast<int>(clip.frames.size());
  const int w = GST_VIDEO_INFO_WIDTH(&clip.info), h = GST_VIDEO_INFO_HEIGHT(&clip.info);

  // Raw RTP video: the RFC 4175 payload bytes (RTP headers excluded).
  double rtp_raw = 0;
  run_chain("rtpvrawpay mtu=1400", clip.caps, clip.frames,
            [&](GstBuffer* b) { rtp_raw += gst_buffer_get_size(b) - 12; });
  rtp_raw /= n;

  char date[32];
  const time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  std::ostringstream md;
  md << "## Delta codec on vtest.avi\n\nMeasured " << date << " on this CPU ("
     << std::thread::hardware_concurrency() << " threads), commit `" << commit
     << "`, by `bench/bench_delta_clip`: " << n << " frames of " << w << "x" << h
     << " I420 at 10 fps; raw RTP (RFC 4175, rtpvrawpay payloads) "
     << fmt("%.0f", rtp_raw * 8 / 1000) << " kbit a frame. *fps*: encoding speed on this machine "
     << "(pre-decoded frames in memory), the fastest of " << runs << " passes: *cudadeltaenc "
     << "(CPU)* the encoder's calls alone, *element* and *x264enc* a pipeline from appsrc to "
     << "appsink.\n\n";
  md << "| encoder | setting | kbit/frame | vs raw RTP | PSNR dB | max error | fps |\n";
  md << "|---|---|---:|---:|---:|---:|---:|\n";

  double psnr_t10 = 0;
  std::map<int, std::pair<double, int>> quality;  // rans rows: PSNR and max error by threshold
  for (int threshold : {0, 4, 10, 20})
  for (DeltaCompression comp : {DeltaCompression::Rans, DeltaCompression::Zstd}) {
    const char* comp_name = comp == DeltaCompression::Rans ? "rans" : "zstd 3";
    const ImageDesc desc{PixelFormat::I420, w, h};
    std::unique_ptr<DeltaEncoder> enc;
    std::unique_ptr<DeltaDecoder> dec;
    if (!DeltaDecoder::create(desc, &dec).is_ok())
      return 1;
    std::vector<std::vector<uint8_t>> packets(n);
    double bytes = 0;
    // One pass of a fresh encoder over the clip: the seconds spent in encode().
    auto encode_clip = [&]() -> double {
      if (!DeltaEncoder::create(desc, &enc).is_ok())
        return -1;
      double secs = 0;
      bytes = 0;
      for (int i = 0; i < n; i++) {
        GstVideoFrame f;
        gst_video_frame_map(&f, &clip.info, clip.frames[i], GST_MAP_READ);
        ImageView v;
        v.desc = desc;
        for (int p = 0; p < 3; p++) {
          v.data[p] = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p));
          v.pitch[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&f, p);
        }
        DeltaEncodeSettings s;
        s.threshold = threshold;
        s.compression = comp;
        const auto t0 = Clock::now();
        (void)enc->encode(v, s, &packets[i]);
        secs += std::chrono::duration<double>(Clock::now() - t0).count();
        gst_video_frame_unmap(&f);
        bytes += packets[i].size();
      }
      return secs;
    };
    const double secs = fastest_of(runs, encode_clip);  // every pass makes the same packets
    if (secs < 0)
      return 1;
    Error err;
    for (int i = 0; i < n; i++) {
      std::string why;
      if (dec->decode(packets[i].data(), packets[i].size(), &why) != DeltaDecodeResult::Frame) {
        fprintf(stderr, "frame %d: %s\n", i, why.c_str());
        return 1;
      }
      const ImageView& r = dec->reconstruction();
      GstBuffer* b = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&clip.info), nullptr);
      GstVideoFrame f;
      gst_video_frame_map(&f, &clip.info, b, GST_MAP_WRITE);
      for (int p = 0; p < 3; p++)
        for (int y = 0; y < dec->layout().planes[p].height; y++)
          memcpy(static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p)) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, p),
                 r.data[p] + y * r.pitch[p], dec->layout().planes[p].row_bytes);
      gst_video_frame_unmap(&f);
      err.add(clip.info, clip.frames[i], b);
      gst_buffer_unref(b);
    }
    if (threshold == 10)
      psnr_t10 = err.psnr();
    if (comp == DeltaCompression::Rans)
      quality[threshold] = {err.psnr(), err.max};
    md << "| cudadeltaenc (CPU) | threshold " << threshold << ", " << comp_name << " | "
       << fmt("%.1f", bytes * 8 / n / 1000)
       << " | " << fmt("%.1fx", rtp_raw * n / bytes) << " | "
       << (std::isinf(err.psnr()) ? std::string("lossless") : fmt("%.1f", err.psnr())) << " | "
       << err.max << " | " << fmt("%.0f", n / secs) << " |\n";
    fprintf(stderr, "delta T=%d %s done\n", threshold, comp_name);
  }

  // The element, where GST_PLUGIN_PATH finds it: the same encoder in a
  // pipeline, timed as x264 is below (appsrc to appsink, wall clock).
  if (GstElementFactory* f = gst_element_factory_find("cudadeltaenc")) {
    gst_object_unref(f);
    for (int threshold : {0, 10}) {
      double bytes = 0;
      const double secs = fastest_of(runs, [&] {
        bytes = 0;
        return run_chain(
            "cudadeltaenc backend=cpu compression=rans threshold=" + std::to_string(threshold),
            clip.caps, clip.frames, [&](GstBuffer* b) { bytes += gst_buffer_get_size(b); });
      });
      if (secs < 0 || bytes == 0)
        continue;
      const auto& q = quality[threshold];
      md << "| cudadeltaenc element, backend=cpu | threshold " << threshold << ", rans | "
         << fmt("%.1f", bytes * 8 / n / 1000) << " | " << fmt("%.1fx", rtp_raw * n / bytes)
         << " | " << (std::isinf(q.first) ? std::string("lossless") : fmt("%.1f", q.first))
         << " | " << q.second << " | " << fmt("%.0f", n / secs) << " |\n";
      fprintf(stderr, "element T=%d done\n", threshold);
    }
  }

  for (int qp : {0, 14, 18, 22, 26}) {
    std::vector<GstBuffer*> coded;
    GstCaps* h264_caps = nullptr;
    double bytes = 0;
    const double secs = fastest_of(runs, [&] {
      for (GstBuffer* b : coded)
        gst_buffer_unref(b);
      coded.clear();
      bytes = 0;
      return run_chain("x264enc tune=zerolatency speed-preset=ultrafast pass=quant quantizer=" +
                           std::to_string(qp) +
                           " key-int-max=1000 ! video/x-h264,stream-format=byte-stream",
                       clip.caps, clip.frames, [&](GstBuffer* b) {
                         bytes += gst_buffer_get_size(b);
                         coded.push_back(gst_buffer_ref(b));
                       });
    });
    if (secs < 0 || coded.empty()) {
      md << "| x264enc | qp " << qp << " | n/a | | | | |\n";
      continue;
    }
    h264_caps = gst_caps_from_string("video/x-h264,stream-format=byte-stream,alignment=au");
    Error err;
    int i = 0;
    run_chain("h264parse ! avdec_h264 ! videoconvert ! video/x-raw,format=I420", h264_caps, coded,
              [&](GstBuffer* b) {
                if (i < n)
                  err.add(clip.info, clip.frames[i], b);
                i++;
              });
    for (GstBuffer* b : coded)
      gst_buffer_unref(b);
    gst_caps_unref(h264_caps);
    const bool near = std::fabs(err.psnr() - psnr_t10) < 1.5;
    md << "| x264enc ultrafast | qp " << qp << (qp == 0 ? " (lossless)" : "")
       << (near ? " (≈ PSNR of threshold 10)" : "") << " | " << fmt("%.1f", bytes * 8 / n / 1000)
       << " | " << fmt("%.1fx", rtp_raw * n / bytes) << " | "
       << (std::isinf(err.psnr()) ? std::string("lossless") : fmt("%.1f", err.psnr())) << " | "
       << err.max << " | " << fmt("%.0f", n / secs) << " |\n";
    fprintf(stderr, "x264 qp=%d done (%d frames decoded)\n", qp, i);
  }
  md << "\n";
  fputs(md.str().c_str(), stdout);
  for (GstBuffer* b : clip.frames)
    gst_buffer_unref(b);
  gst_caps_unref(clip.caps);
  return write_report_section(out_path, "bench_delta_clip", md.str()) ? 0 : 1;
}
