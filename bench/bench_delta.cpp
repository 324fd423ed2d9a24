// Delta codec benchmark: the CUDA kernels alone (residuals, reference
// update, tile flags, checksum; CUDA events), the CUDA encoder end to end
// (kernels, copies back, packing, entropy stage), the CPU encoder, the cudadeltaenc
// element on each backend and memory type (appsrc ! cudadeltaenc ! fakesink
// on pre-made buffers), and the decoder, on frames where about 5 % of the
// bytes changed. Not a test: prints a table and writes its section of
// docs/benchmarks.md.
//
// Usage: bench_delta [--out FILE] [--commit SHA] [--case NAME]
// (--case: only the frame named, e.g. "2160p RGBA"; nothing is written then)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gst/gst.h>

#include "bench_support.hpp"
#include "report.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/delta.hpp"
#include "cudafx/delta_tiles.hpp"
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudaloader.h>
#endif

using namespace cudafx;
using namespace bench;

namespace {

// CPU time of the whole process (every thread), seconds.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::string rate(double v) { return v < 0 ? "n/a" : fmt("%.0f", v); }

// The element on `frames` alternating frames a, b (4 buffers, round robin),
// frames per second; -1 where the feed or the pipeline cannot be made.
double element_fps(const std::string& chain, Feed feed, const std::vector<uint8_t>& a,
                   const std::vector<uint8_t>& b, int frames) {
  double fps = -1;
  std::string err;
  if (feed.buffers.size() == 4 && refill(feed, 0, 2, a.data()) && refill(feed, 1, 2, b.data()))
    fps = run_pipeline(chain, feed, frames, &err);
  if (!err.empty())
    fprintf(stderr, "%s: %s\n", chain.c_str(), err.c_str());
  release(feed);
  return fps;
}

// The cudadeltadec element (`chain` starts with it) on `packets` (each
// pushed once: a stream), frames per second; -1 where it cannot run.
double decoder_element_fps(const std::string& chain, const std::string& caps,
                           const std::vector<std::vector<uint8_t>>& packets) {
  if (packets.size() < 20)
    return -1;
  Feed feed;
  feed.caps = caps;
  for (const auto& p : packets)
    feed.buffers.push_back(gst_buffer_new_memdup(p.data(), p.size()));
  std::string err;
  const double fps = run_pipeline(chain, feed, static_cast<int>(packets.size()), &err);
  if (!err.empty())
    fprintf(stderr, "%s: %s\n", chain.c_str(), err.c_str());
  release(feed);
  return fps;
}

// `count` packets of the CUDA encoder on alternating frames a, b (a
// keyframe first); empty on failure.
std::vector<std::vector<uint8_t>> cuda_packets(const ImageDesc& desc, const std::vector<uint8_t>& a,
                                               const std::vector<uint8_t>& b,
                                               const DeltaEncodeSettings& s, int count) {
  std::vector<std::vector<uint8_t>> packets;
  CudaStream stream;
  DeviceBuffer da, db;
  std::unique_ptr<DeltaEncoderCuda> enc;
  if (!stream.create().is_ok() || !da.allocate(a.size()).is_ok() ||
      !db.allocate(b.size()).is_ok() || !DeltaEncoderCuda::create(desc, &enc).is_ok())
    return packets;
  (void)copy_bytes_async(da.get(), a.data(), a.size(), stream.get());
  (void)copy_bytes_async(db.get(), b.data(), b.size(), stream.get());
  packets.resize(count);
  for (int i = 0; i < count; i++)
    if (!enc->encode(packed_view(desc, (i & 1) ? db.bytes() : da.bytes()), s, stream.get(),
                     &packets[i])
             .is_ok())
      return {};
  return packets;
}

// The CPU encoder's stream of a keyframe and `iters` delta frames.
std::vector<std::vector<uint8_t>> delta_packets(const ImageDesc& desc, const std::vector<uint8_t>& a,
                                                const std::vector<uint8_t>& b,
                                                const DeltaEncodeSettings& s, int iters) {
  std::unique_ptr<DeltaEncoder> enc;
  if (!DeltaEncoder::create(desc, &enc).is_ok())
    return {};
  std::vector<std::vector<uint8_t>> packets(iters + 1);
  for (int i = 0; i <= iters; i++)
    (void)enc->encode(packed_view(desc, const_cast<uint8_t*>((i & 1) ? b.data() : a.data())), s,
                      &packets[i]);
  return packets;
}

// A decoder on such a stream (the keyframe first, not timed), frames per
// second.
// Frames/s of `dec` over `packets` (a keyframe, then delta frames), timed
// from the second packet: one untimed pass first (what a decoder allocates
// on the way, its pinned room and the motion buffers, is made there: in a
// single timed pass of 29 frames those first-use costs had read 622 and 831
// frames/s beside 1 032 and 1 058 for the same path at 2160p NV12), then
// five passes, each restarting at the keyframe (untimed); the median.
double decode_fps(DeltaDecoderBase* dec, const std::vector<std::vector<uint8_t>>& packets) {
  std::string why;
  if (!dec || packets.size() < 2)
    return -1;
  std::vector<double> passes;
  for (int pass = 0; pass < 6; pass++) {
    if (dec->decode(packets[0].data(), packets[0].size(), &why) != DeltaDecodeResult::Frame)
      return -1;
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 1; i < packets.size(); i++)
      if (dec->decode(packets[i].data(), packets[i].size(), &why) != DeltaDecodeResult::Frame)
        return -1;
    if (pass > 0)
      passes.push_back((packets.size() - 1) /
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(passes.begin(), passes.end());
  return passes[passes.size() / 2];
}

// The CUDA decoder with its lanes decoded from `gpu_lanes_from` bytes a
// frame on (DeltaDecoderCuda::create; 0: always on the GPU).
double cuda_decode_fps(const ImageDesc& desc, const std::vector<std::vector<uint8_t>>& packets,
                       size_t gpu_lanes_from) {
  CudaStream stream;
  std::unique_ptr<DeltaDecoderCuda> dec;
  if (!stream.create().is_ok() ||
      !DeltaDecoderCuda::create(desc, stream.get(), &dec, gpu_lanes_from).is_ok())
    return -1;
  return decode_fps(dec.get(), packets);
}

// Format 4 keyframes (every frame one, threshold 10, on frame `a`): the
// prediction kernel trying the eight spatial predictors on every tile and
// with MED alone (cold, CUDA events; the encoders always try all eight,
// MED alone is what a keyframe cost before the predictor section), the CUDA
// encoder end to end and the CUDA decoder, the CPU encoder and decoder.
// Frames/s; a row of the keyframe table.
std::string keyframe_row(const char* name, const ImageDesc& desc, const std::vector<uint8_t>& a,
                         bool gpu) {
  double choose_fps = -1, med_fps = -1, enc_fps = -1, dec_fps = -1, cpu_enc = -1, cpu_dec = -1;
  const size_t size = a.size();
  DeltaLayout layout;
  if (!make_delta_layout(desc, &layout).is_ok())
    return "";
  DeltaEncodeSettings s;
  s.threshold = 10;
  s.compression = DeltaCompression::Predictive;
  s.force_keyframe = true;
  const ImageView host_a = packed_view(desc, const_cast<uint8_t*>(a.data()));
  {
    std::unique_ptr<DeltaEncoder> enc;
    std::vector<std::vector<uint8_t>> packets(4);
    if (DeltaEncoder::create(desc, &enc).is_ok() && enc->encode(host_a, s, &packets[0]).is_ok()) {
      const auto t0 = std::chrono::steady_clock::now();
      bool ok = true;
      for (size_t i = 1; i < packets.size(); i++) ok &= enc->encode(host_a, s, &packets[i]).is_ok();
      if (ok)
        cpu_enc = (packets.size() - 1) /
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::unique_ptr<DeltaDecoder> dec;
      if (ok && DeltaDecoder::create(desc, &dec).is_ok())
        cpu_dec = decode_fps(dec.get(), packets);
    }
  }
  if (gpu) {
    CudaStream stream;
    DeviceBuffer res, modes, pred;
    CudaEvent e0, e1;
    DeviceFrames frames, refs;
    const int count = cold_count(2 * size);
    if (stream.create().is_ok() && res.allocate(layout.frame_bytes).is_ok() &&
        modes.allocate(layout.tile_count()).is_ok() && pred.allocate(layout.tile_count()).is_ok() &&
        e0.create().is_ok() && e1.create().is_ok() &&
        make_frames(&frames, size, count, a.data(), stream.get()) &&
        make_frames(&refs, size, count, nullptr, stream.get())) {
      DeltaIntra intra;
      intra.keyframe = true;
      intra.keyframe_dead_zone = delta_keyframe_dead_zone(s.threshold);
      const int uses = std::max(20, 2 * count);
      for (bool choose : {false, true}) {
        (void)e0.record(stream.get());
        for (int i = 0; i < uses; i++)
          (void)delta_tiles_encode_cuda(layout, packed_view(desc, frames.frame(i)),
                                        packed_view(desc, refs.frame(i)), s.threshold, intra,
                                        res.bytes(), modes.bytes(), stream.get(), nullptr,
                                        choose ? pred.bytes() : nullptr);
        (void)e1.record(stream.get());
        float ms = 0;
        if (e1.synchronize().is_ok() && e1.elapsed_since(e0, &ms).is_ok())
          (choose ? choose_fps : med_fps) = uses / (ms * 1e-3);
      }
      std::unique_ptr<DeltaEncoderCuda> enc;
      const ImageView dev_a = packed_view(desc, frames.frame(0));
      std::vector<std::vector<uint8_t>> packets(21);
      if (DeltaEncoderCuda::create(desc, &enc).is_ok() &&
          enc->encode(dev_a, s, stream.get(), &packets[0]).is_ok()) {
        const auto t0 = std::chrono::steady_clock::now();
        bool ok = true;
        for (size_t i = 1; i < packets.size(); i++)
          ok &= enc->encode(dev_a, s, stream.get(), &packets[i]).is_ok();
        if (ok) {
          enc_fps = (packets.size() - 1) /
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          dec_fps = cuda_decode_fps(desc, packets, kDeltaGpuLanesFrom);
        }
      }
    }
  }
  return std::string("| ") + name + " | " + rate(med_fps) + " | " + rate(choose_fps) + " | " +
         rate(enc_fps) + " | " + rate(dec_fps) + " | " + rate(cpu_enc) + " | " + rate(cpu_dec) +
         " |\n";
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  std::string out_path = "docs/benchmarks.md", commit = "unknown", only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--out") out_path = argv[i + 1];
    else if (std::string(argv[i]) == "--commit") commit = argv[i + 1];
    else if (std::string(argv[i]) == "--case") only = argv[i + 1];
  }
  const DeviceFacts facts = measure_device();
  const bool gpu = facts.gpu;
  const std::string device = facts.name;
  // frames/s at `bytes` a frame as a share of one direction of pinned bandwidth
  auto pinned_share = [&](double fps, size_t bytes, double gbs) {
    return fps <= 0 || gbs <= 0 ? std::string("n/a") : fmt("%.0f %%", 100.0 * fps * bytes / (gbs * 1e9));
  };
  std::ostringstream dec_md;
  const std::string date = today_utc();
  std::ostringstream md;
  md << "## cudadeltaenc (encode side)\n\nMeasured " << date << " on **" << device
     << "**, commit `" << commit << "`, by `bench/bench_delta`. Random frames where 5 % of "
     << "the bytes changed by more than the threshold (10), so that every tile changes and "
     << "nothing compresses: the worst case for speed. Each format: 4 (compression=predictive:"
     << " tiles predicted on the GPU; per-frame tables chosen on the host and the lanes coded "
     << "on the GPU by the CUDA encoder, on the host's threads by the CPU encoder and the "
     << "decoders) "
     << "and 3 (compression=rans: context models and rANS, every plane in slices of at least "
     << "128 KiB, at most 16 a frame, coded on the host's threads). *kernels*: format 4 the "
     << "prediction stage, format 3 residuals, reference update and tile flags, both with the "
     << "checksum, on the GPU (CUDA events), *cold* on frames and references "
     << "rotated through 256 MB (none in L2), *hot* alternating two frames over one reference "
     << "(at 1080p all in L2: an upper bound; format 4's motion search, which the encoder "
     << "runs by default, is not in these columns); *CUDA encoder*: the median (and range) of "
     << "seven passes of at least 0.25 s, "
     << "those plus the motion search, the copies back, packing and the entropy stage "
     << "(every tile changes, so every tile is searched), and the same with "
     << "motion-search=false, the packet handed out in two parts as cudadeltaenc takes it "
     << "(DeltaPacketParts: the coded lanes left in the encoder's pinned memory); *pipelined*: "
     << "the same encoder through submit(), each frame's entropy coding on a second stream "
     << "beside the next frame's search and prediction (the same packets, one frame of "
     << "latency); *host ms*: "
     << "the host CPU "
     << "time the CUDA encoder takes a frame (all its threads), called one frame at a time and "
     << "pipelined; *CPU encoder*: our CPU "
     << "backend; *element*: `appsrc ! cudadeltaenc ! fakesink` on pre-made buffers, CUDA "
     << "backend with frames in pinned system memory (the pool the element proposes), the "
     << "same with `overlap=true` (one frame of latency: format 4 pipelined as *pipelined* "
     << "above, each frame's upload beside the frame before; format 3 the upload only), or in "
     << "CUDA memory (without and with `overlap=true`), and CPU backend; *% pinned*: the "
     << "overlapped "
     << "element's input bytes a second over the one-direction pinned bandwidth measured in "
     << "this run (" << fmt("%.1f", facts.h2d_pinned_gbs) << " GB/s host to device); *decoder*: our decoders on the CPU encoder's stream of the same "
     << "frames (the median of five passes after an untimed one; CUDA: tables and lane directory read and checked on the host, the lanes "
     << "decoded on the GPU from " << (kDeltaGpuLanesFrom >> 20) << " MB a frame and on the "
     << "host's threads below, the payload applied and checked on the GPU). "
     << "Frames/s.\n\n";
  md << "| frame | format | kernels cold | kernels hot | CUDA encoder | CUDA encoder, pipelined | "
     << "CUDA encoder, no motion search | host ms | host ms, pipelined | CPU encoder | "
     << "element CUDA, system memory | element CUDA, system memory, overlap | % pinned | "
     << "element CUDA, CUDA memory | element CUDA, CUDA memory, overlap | element CPU | "
     << "CUDA decoder | CPU decoder |\n"
     << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  dec_md << "The CUDA decoder (API, as in the table above), format 4, with its lanes forced "
         << "onto the host's threads and onto the GPU (whichever is faster at a frame size "
         << "decides kDeltaGpuLanesFrom); the decoder element on a stream of the CUDA "
         << "encoder's packets (each "
         << "pushed once, `appsrc ! cudadeltadec ! fakesink`), CUDA backend: frames out in "
         << "pinned system memory (the decoder's pool), the same with `overlap=true` (each "
         << "frame downloaded while the next decodes; one frame of latency), and in CUDA memory "
         << "(`! video/x-raw(memory:CUDAMemory)`); *% pinned*: output bytes a second over the "
         << "one-direction pinned bandwidth measured in this run ("
         << fmt("%.1f", facts.d2h_pinned_gbs) << " GB/s device to host). Frames/s.\n\n"
         << "| frame | CUDA decoder (API) | lanes on the host | lanes on the GPU | "
         << "element, system memory | % pinned | "
         << "element, system memory, overlap | % pinned | element, CUDA memory |\n"
         << "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
#if HAVE_GSTCUDA
  GstCudaContext* ctx = gpu && gst_cuda_load_library() ? gst_cuda_context_new(0) : nullptr;
#endif
  struct Case { const char* name; const char* format; PixelFormat f; int w, h; };
  const Case cases[] = {{"1080p RGBA", "RGBA", PixelFormat::RGBA, 1920, 1080},
                        {"1080p NV12", "NV12", PixelFormat::NV12, 1920, 1080},
                        {"2160p RGBA", "RGBA", PixelFormat::RGBA, 3840, 2160},
                        {"2160p NV12", "NV12", PixelFormat::NV12, 3840, 2160}};
  for (const Case& c : cases)
  for (DeltaCompression comp : {DeltaCompression::Predictive, DeltaCompression::Rans}) {
    if (!only.empty() && only != c.name)
      continue;
    const bool v4 = comp == DeltaCompression::Predictive;
    const ImageDesc desc{c.f, c.w, c.h};
    const size_t size = packed_size(desc);
    std::vector<uint8_t> a(size), b;
    std::mt19937 rng(7);
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    b = a;
    for (size_t i = 0; i < size / 20; i++) b[rng() % size] ^= 0x80;  // ~5 % changed
    DeltaEncodeSettings s;
    s.threshold = 10;
    s.compression = comp;
    const int iters = 30;
    // CPU encoder
    double cpu_fps = -1;
    {
      std::unique_ptr<DeltaEncoder> enc;
      std::vector<uint8_t> pkt;
      if (DeltaEncoder::create(desc, &enc).is_ok()) {
        (void)enc->encode(packed_view(desc, a.data()), s, &pkt);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; i++)
          (void)enc->encode(packed_view(desc, (i & 1) ? a.data() : b.data()), s, &pkt);
        cpu_fps = iters / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
    }
    double kernel_fps = -1, cold_fps = -1, enc_fps = -1, host_ms = -1, piped_host_ms = -1;
    Spread enc_spread, still_spread, piped_spread;
    if (gpu) {
      CudaStream stream;
      DeviceBuffer da, db;
      std::unique_ptr<DeltaEncoderCuda> enc;
      if (stream.create().is_ok() && da.allocate(size).is_ok() && db.allocate(size).is_ok() &&
          DeltaEncoderCuda::create(desc, &enc).is_ok()) {
        (void)copy_bytes_async(da.get(), a.data(), size, stream.get());
        (void)copy_bytes_async(db.get(), b.data(), size, stream.get());
        const ImageView va = packed_view(desc, da.bytes()), vb = packed_view(desc, db.bytes());
        std::vector<uint8_t> pkt;
        (void)enc->encode(va, s, stream.get(), &pkt);
        // Kernels alone, on the encoder's own reference.
        DeviceBuffer res, flags, sum;
        DeltaLayout layout;
        (void)make_delta_layout(desc, &layout);
        CudaEvent e0, e1;
        if (res.allocate(layout.frame_bytes).is_ok() && flags.allocate(1 << 20).is_ok() &&
            sum.allocate(8).is_ok() && e0.create().is_ok() && e1.create().is_ok()) {
          (void)e0.record(stream.get());
          for (int i = 0; i < iters; i++) {
            if (v4)
              (void)delta_tiles_encode_cuda(layout, (i & 1) ? va : vb, enc->reference(), 10,
                                            DeltaIntra{}, res.bytes(), flags.bytes(), stream.get());
            else
              (void)delta_residual_cuda(layout, (i & 1) ? va : vb, enc->reference(), 10,
                                        res.bytes(), flags.bytes(), stream.get());
            (void)delta_checksum_cuda(layout, enc->reference(),
                                      static_cast<uint64_t*>(sum.get()), stream.get());
          }
          (void)e1.record(stream.get());
          (void)e1.synchronize();
          float ms = 0;
          if (e1.elapsed_since(e0, &ms).is_ok())
            kernel_fps = iters / (ms * 1e-3);
          // Cold: the same kernels over triples (frame a, frame b, a
          // reference) rotated through kColdBytes, none found in L2; a
          // triple's frames alternate between its uses, as above, its
          // reference starting at b, so that every use finds the 5 % of
          // changes the hot loop does (a first use of a over a reference
          // of a would skip every tile).
          const int triples = cold_count(3 * size);
          DeviceFrames fa, fb, refs;
          if (make_frames(&fa, size, triples, a.data(), stream.get()) &&
              make_frames(&fb, size, triples, b.data(), stream.get()) &&
              make_frames(&refs, size, triples, b.data(), stream.get())) {
            const int uses = std::max(iters, 2 * triples);
            (void)e0.record(stream.get());
            for (int i = 0; i < uses; i++) {
              const int k = i % triples;
              const ImageView cur = packed_view(desc, ((i / triples) & 1) ? fb.frame(k) : fa.frame(k));
              const ImageView ref = packed_view(desc, refs.frame(k));
              if (v4)
                (void)delta_tiles_encode_cuda(layout, cur, ref, 10, DeltaIntra{}, res.bytes(),
                                              flags.bytes(), stream.get());
              else
                (void)delta_residual_cuda(layout, cur, ref, 10, res.bytes(), flags.bytes(),
                                          stream.get());
              (void)delta_checksum_cuda(layout, ref, static_cast<uint64_t*>(sum.get()),
                                        stream.get());
            }
            (void)e1.record(stream.get());
            (void)e1.synchronize();
            if (e1.elapsed_since(e0, &ms).is_ok())
              cold_fps = uses / (ms * 1e-3);
          }
        }
        // Seven passes of at least a quarter second each (one pass of 30
        // frames varied 2x between runs at 1080p): the median and range.
        // The packets in two parts, as cudadeltaenc takes them (the coded
        // lanes left in the encoder's pinned memory).
        DeltaPacketParts parts;
        // `piped`: submit() (a frame's coding beside the next frame's
        // prediction, one frame of latency), flushed after the passes.
        auto run_passes = [&](const DeltaEncodeSettings& settings, double* host,
                              bool piped = false) {
          std::vector<double> passes;
          const double cpu0 = process_cpu_seconds();
          int coded = 0;
          for (int pass = 0; pass < 7; pass++) {
            const auto t0 = std::chrono::steady_clock::now();
            int n = 0;
            double seconds = 0;
            do {
              if (piped) {
                bool got = false;
                (void)enc->submit((n & 1) ? va : vb, settings, stream.get(), &parts, &got);
              } else {
                (void)enc->encode((n & 1) ? va : vb, settings, stream.get(), &parts);
              }
              n++;
              seconds =
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            } while (n < iters || seconds < 0.25);
            passes.push_back(n / seconds);
            coded += n;
          }
          *host = (process_cpu_seconds() - cpu0) * 1e3 / coded;
          if (piped) {
            bool got = false;
            (void)enc->flush(&parts, &got);
          }
          return spread_of(passes);
        };
        enc_spread = run_passes(s, &host_ms);
        enc_fps = enc_spread.median;
        if (v4)
          piped_spread = run_passes(s, &piped_host_ms, true);
        if (v4) {  // format 4 without its motion search (which every changed tile takes)
          DeltaEncodeSettings still = s;
          still.motion_search = false;
          (void)enc->encode(va, still, stream.get(), &pkt);
          double unused = 0;
          still_spread = run_passes(still, &unused);
        }
      }
    }
    // The element: about two seconds of frames at each backend's speed.
    const int frames = 10 + std::max(30, static_cast<int>(2 * enc_fps));
    const int cpu_frames = 10 + std::max(30, static_cast<int>(2 * cpu_fps));
    const std::string sys_caps = caps_for(c.format, c.w, c.h, false);
    // what the encoder gives (the feed's allocation query needs caps the
    // encoder can produce downstream)
    const std::string coded_caps = std::string("video/x-cudafx-delta,version=") + (v4 ? "4" : "3") +
                                   ",format=" + c.format + ",width=" + std::to_string(c.w) +
                                   ",height=" + std::to_string(c.h) + ",framerate=30/1";
    const std::string settings =
        std::string(" threshold=10 post-stats=false compression=") + (v4 ? "predictive" : "rans");
    double el_sys = -1, el_overlap = -1, el_cuda = -1, el_cuda_overlap = -1, el_cpu = -1;
    if (gpu) {
      el_sys = element_fps("cudadeltaenc backend=cuda" + settings,
                           system_feed("cudadeltaenc backend=cuda", sys_caps, 4, coded_caps), a, b, frames);
      el_overlap = element_fps("cudadeltaenc backend=cuda overlap=true" + settings,
                               system_feed("cudadeltaenc backend=cuda", sys_caps, 4, coded_caps), a,
                               b, frames);
    }
#if HAVE_GSTCUDA
    if (ctx)
      el_cuda = element_fps("cudadeltaenc backend=cuda" + settings,
                            cuda_feed(caps_for(c.format, c.w, c.h, true), 4, ctx), a, b, frames);
    if (ctx)
      el_cuda_overlap = element_fps("cudadeltaenc backend=cuda overlap=true" + settings,
                                    cuda_feed(caps_for(c.format, c.w, c.h, true), 4, ctx), a, b,
                                    frames);
#endif
    el_cpu = element_fps("cudadeltaenc backend=cpu" + settings,
                         system_feed("cudadeltaenc backend=cpu", sys_caps, 4, coded_caps), a, b, cpu_frames);
    std::unique_ptr<DeltaDecoder> cpu_dec;
    double dec_fps = -1, cuda_dec_fps = -1, host_lanes_fps = -1, gpu_lanes_fps = -1;
    const auto dec_packets = delta_packets(desc, a, b, s, iters);
    if (DeltaDecoder::create(desc, &cpu_dec).is_ok())
      dec_fps = decode_fps(cpu_dec.get(), dec_packets);
    if (gpu) {
      cuda_dec_fps = cuda_decode_fps(desc, dec_packets, kDeltaGpuLanesFrom);
      if (v4) {
        host_lanes_fps = cuda_decode_fps(desc, dec_packets, SIZE_MAX);
        gpu_lanes_fps = cuda_decode_fps(desc, dec_packets, 0);
      }
    }
    if (gpu && v4) {
      // about two seconds at the decoder's speed, at most 600 packets
      const int count = std::min(600, 10 + std::max(30, static_cast<int>(2 * cuda_dec_fps)));
      const auto packets = cuda_packets(desc, a, b, s, count);
      const std::string caps = std::string("video/x-cudafx-delta,version=4,format=") + c.format +
                               ",width=" + std::to_string(c.w) + ",height=" + std::to_string(c.h) +
                               ",framerate=30/1";
      const double sys = decoder_element_fps("cudadeltadec backend=cuda", caps, packets);
      const double over = decoder_element_fps("cudadeltadec backend=cuda overlap=true", caps, packets);
      const double cuda = decoder_element_fps(
          "cudadeltadec backend=cuda ! video/x-raw(memory:CUDAMemory)", caps, packets);
      dec_md << "| " << c.name << " | " << rate(cuda_dec_fps) << " | " << rate(host_lanes_fps)
             << " | " << rate(gpu_lanes_fps) << " | " << rate(sys) << " | "
             << pinned_share(sys, size, facts.d2h_pinned_gbs) << " | " << rate(over) << " | "
             << pinned_share(over, size, facts.d2h_pinned_gbs) << " | " << rate(cuda) << " |\n";
    }
    md << "| " << c.name << " | " << (v4 ? "4 (predictive)" : "3 (rans)") << " | "
       << rate(cold_fps) << " | " << rate(kernel_fps) << " | " << spread_cell(enc_spread, "%.0f") << " | "
       << (v4 && enc_fps > 0 ? spread_cell(piped_spread, "%.0f") : std::string("n/a")) << " | "
       << (v4 && enc_fps > 0 ? spread_cell(still_spread, "%.0f") : std::string("n/a")) << " | "
       << (host_ms < 0 ? std::string("n/a") : fmt("%.2f", host_ms)) << " | "
       << (piped_host_ms < 0 ? std::string("n/a") : fmt("%.2f", piped_host_ms)) << " | " << rate(cpu_fps) << " | " << rate(el_sys) << " | " << rate(el_overlap) << " | "
       << pinned_share(el_overlap, size, facts.h2d_pinned_gbs) << " | " << rate(el_cuda) << " | " << rate(el_cuda_overlap) << " | "
       << rate(el_cpu) << " | " << rate(cuda_dec_fps) << " | " << rate(dec_fps) << " |\n";
    fprintf(stderr, "%s format %d done\n", c.name, v4 ? 4 : 3);
  }
  md << "\n" << dec_md.str() << "\n";
  // Keyframes: random frames (incompressible: the slowest case), every
  // frame a keyframe.
  md << "Format 4 keyframes (every frame one, threshold 10, on the random frames above: "
     << "incompressible, the slowest case): *prediction, MED only* the prediction kernel with "
     << "every tile coded with MED (the keyframes before the predictor section), *prediction, "
     << "8 predictors* the same trying all eight spatial predictors on each tile and keeping "
     << "the cheapest (what the encoders do), both cold as above (CUDA events); *CUDA "
     << "encoder* and *CUDA decoder* end to end (20 keyframes; the decoder the median of five "
     << "passes); *CPU encoder* (3 keyframes) and *CPU decoder*. Frames/s.\n\n"
     << "| frame | prediction, MED only | prediction, 8 predictors | CUDA encoder | "
     << "CUDA decoder | CPU encoder | CPU decoder |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Case& c : cases) {
    if (!only.empty() && only != c.name)
      continue;
    const ImageDesc desc{c.f, c.w, c.h};
    std::vector<uint8_t> a(packed_size(desc));
    std::mt19937 rng(7);
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    md << keyframe_row(c.name, desc, a, gpu);
    fprintf(stderr, "%s keyframes done\n", c.name);
  }
  md << "\n";
#if HAVE_GSTCUDA
  if (ctx)
    gst_object_unref(ctx);
#endif
  fputs(md.str().c_str(), stdout);
  if (!only.empty())
    return 0;  // a part of the table: not written
  return write_report_section(out_path, "bench_delta", md.str()) ? 0 : 1;
}
