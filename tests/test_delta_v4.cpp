// Format 4 of the delta codec, stage by stage: the near-lossless quantiser
// (every threshold, prediction and source byte), the tile modes, the
// per-frame entropy stage and its validation, and the CUDA prediction stage
// against the CPU's. The stream-level tests of both formats are in
// test_delta_codec.cpp.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <random>
#include <set>

#include "cudafx/delta.hpp"
#include "cudafx/delta_entropy.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tile_entropy.hpp"
#include "cudafx/delta_tile_entropy_cuda.hpp"
#include "cudafx/delta_tiles.hpp"
#include "cudafx/parallel.hpp"
#include "delta/symbol_pairs_avx2.hpp"
#include "delta/temporal_avx2.hpp"
#include "delta/temporal_sse2.hpp"  // the CPU encoder's SSE2 temporal kernels (cuda/src)
#include "support/clip.hpp"
#include "support/delta_reseal.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using testing_support::HostImage;
using testing_support::make_clip;

namespace {

DeltaLayout layout_of(const ImageDesc& desc) {
  DeltaLayout l;
  EXPECT_TRUE(make_delta_layout(desc, &l).is_ok());
  return l;
}

// Format-4 packets of a clip: a keyframe every `key_every` frames (0: the
// first only), intra refresh over `refresh_period` frames (0: none).
std::vector<std::vector<uint8_t>> encode_v4(const std::vector<HostImage>& clip, int threshold,
                                            int key_every, int refresh_period = 0) {
  std::unique_ptr<DeltaEncoder> enc;
  EXPECT_TRUE(DeltaEncoder::create(clip[0].desc(), &enc).is_ok());
  std::vector<std::vector<uint8_t>> packets;
  for (size_t n = 0; n < clip.size(); n++) {
    DeltaEncodeSettings s;
    s.threshold = threshold;
    s.compression = DeltaCompression::Predictive;
    s.force_keyframe = key_every > 0 && n % key_every == 0;
    s.keyframes_only = key_every == 1;  // as the element with key-int-max=1
    s.refresh_period = refresh_period;
    packets.emplace_back();
    EXPECT_TRUE(enc->encode(clip[n].view(), s, &packets.back()).is_ok());
  }
  return packets;
}

// A smooth image (gradients and a disc) with sensor noise of +-3, where
// spatial prediction works and a threshold of 4 removes the noise.
void fill_smooth(const HostImage& img, int shift) {
  std::mt19937 rng(17);
  const ImageView& v = img.view();
  for (int i = 0; i < format_info(v.desc.format).n_planes; i++) {
    const PlaneView p = v.plane(i);
    for (int y = 0; y < p.height; y++)
      for (int x = 0; x < p.width * p.channels; x++) {
        const int dx = x / p.channels - p.width / 2 - shift, dy = y - p.height / 2;
        const int disc = dx * dx + dy * dy < p.height * p.height / 9 ? 60 : 0;
        const int v = (x / p.channels + 2 * y + 40 * (x % p.channels) + disc) % 200 + 20;
        p.data[static_cast<size_t>(y) * p.pitch + x] = static_cast<uint8_t>(v + rng() % 7 - 3);
      }
  }
}

// A frame's symbols and modes on the host and their copies on the device.
struct FrameSymbols {
  std::vector<uint8_t> sym, mode;
  DeviceBuffer sym_dev, mode_dev;
  Status allocate(const DeltaLayout& l) {
    sym.assign(l.frame_bytes, 0);
    mode.assign(l.tile_count(), 0);
    const Status s = sym_dev.allocate(l.frame_bytes);
    return s.is_ok() ? mode_dev.allocate(l.tile_count()) : s;
  }
  // The host's symbols and modes to the device, queued on `stream`.
  Status upload(StreamHandle stream) {
    const Status s = copy_bytes_async(sym_dev.get(), sym.data(), sym.size(), stream);
    return s.is_ok() ? copy_bytes_async(mode_dev.get(), mode.data(), mode.size(), stream) : s;
  }
};

// The GPU coder's packet for the uploaded `f` with its lanes left apart in
// pinned memory (count, wait, code) is `expected` byte for byte, head then
// lanes, and the lanes' CRC is zlib's.
::testing::AssertionResult codes_apart_as(DeltaTileEntropyCuda& gpu, int quantiser, bool key,
                                          bool reuse, const FrameSymbols& f, StreamHandle stream,
                                          const std::vector<uint8_t>& expected) {
  std::vector<uint8_t> packet;
  DeltaPayloadTail lanes;
  Status s = gpu.count(quantiser, key, f.sym_dev.bytes(), f.mode_dev.bytes(), stream);
  if (s.is_ok())
    s = gpu.wait(stream);
  if (s.is_ok())
    s = gpu.code(quantiser, key, stream, &packet, reuse, &lanes, true);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << s.message();
  if (lanes.bytes > 0 && !lanes.apart)
    return ::testing::AssertionFailure() << "the lanes are not apart";
  if (lanes.bytes > 0)
    packet.insert(packet.end(), lanes.apart, lanes.apart + lanes.bytes);
  if (packet != expected)
    return ::testing::AssertionFailure() << "the packets differ (" << packet.size() << " vs "
                                         << expected.size() << " bytes)";
  if (lanes.crc != crc32(0, lanes.apart, static_cast<uInt>(lanes.bytes)))
    return ::testing::AssertionFailure() << "the lanes' CRC is not zlib's";
  return ::testing::AssertionSuccess();
}

}  // namespace

// The guarantee of the format: for every threshold T, prediction and source
// byte, the decoder's byte is within T of the source, the symbol fits the
// alphabet, and fold/unfold are inverse.
TEST(DeltaV4Quantiser, EveryThresholdPredictionAndSourceStayWithinTheThreshold) {
  for (int t = 0; t <= 255; t++) {
    const NearLossless nl(t);
    ASSERT_LE(nl.range, 256);
    ASSERT_GT(nl.range * nl.step, 255 + 2 * t) << "T " << t;
    int worst = 0, bad_symbol = 0;
    for (int pred = 0; pred < 256; pred++)
      for (int src = 0; src < 256; src++) {
        const int k = nl.quantise(src - pred);
        const int m = delta_fold(k);
        bad_symbol += m < 0 || m >= nl.range || delta_unfold(m) != k;
        worst = std::max(worst, std::abs(src - nl.reconstruct(pred, k)));
      }
    EXPECT_LE(worst, t) << "T " << t;
    EXPECT_EQ(bad_symbol, 0) << "T " << t;
    if (t == 0) {
      EXPECT_EQ(worst, 0);
    }
  }
}

// The encoder's quantiser for a bound T: errors within T become 0 (the
// prediction stands), the others are quantised with Q = T / 2; every byte
// ends within T, and within Q where a non-zero symbol was sent.
TEST(DeltaV4Quantiser, EncoderDeadZoneKeepsEveryByteWithinTheBound) {
  for (int t = 0; t <= 255; t++) {
    const DeltaEncoderQuantiser q(t);
    ASSERT_EQ(q.nl.t, t / 2);
    int worst = 0, worst_sent = 0, bad_zero = 0;
    for (int pred = 0; pred < 256; pred++)
      for (int src = 0; src < 256; src++) {
        const int k = q.quantise(src - pred);
        const int err = std::abs(src - q.nl.reconstruct(pred, k));
        worst = std::max(worst, err);
        if (k != 0)
          worst_sent = std::max(worst_sent, err);
        bad_zero += (std::abs(src - pred) <= t) != (k == 0);
      }
    EXPECT_LE(worst, t) << "T " << t;
    EXPECT_LE(worst_sent, t / 2) << "T " << t;
    EXPECT_EQ(bad_zero, 0) << "T " << t;
  }
}

TEST(DeltaV4Quantiser, FoldMapsSmallErrorsToSmallSymbols) {
  const int want[] = {0, -1, 1, -2, 2, -3, 3};
  for (int m = 0; m < 7; m++) {
    EXPECT_EQ(delta_unfold(m), want[m]);
    EXPECT_EQ(delta_fold(want[m]), m);
  }
  EXPECT_EQ(delta_med(10, 20, 25), 10);  // c above both: the smaller
  EXPECT_EQ(delta_med(10, 20, 5), 20);   // c below both: the larger
  EXPECT_EQ(delta_med(10, 20, 15), 15);  // between: the plane a + b - c
}

// Intra-only streams (every frame a keyframe) and streams with deltas keep
// every byte within the threshold, for every threshold, in every plane
// layout the codec has (1, 2, 3, 4 bytes a pixel; 3 planes).
TEST(DeltaV4Stream, EveryThresholdHoldsOnKeyframesAndDeltas) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::NV12, PixelFormat::I420,
                        PixelFormat::GRAY8}) {
    const ImageDesc desc{f, 37, 19};
    const auto clip = make_clip(desc, 3, 7);
    for (int t = 0; t <= 255; t++) {
      for (int key_every : {1, 0}) {
        const auto packets = encode_v4(clip, t, key_every);
        std::unique_ptr<DeltaDecoder> dec;
        ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
        for (size_t n = 0; n < clip.size(); n++) {
          std::string err;
          ASSERT_EQ(dec->decode(packets[n].data(), packets[n].size(), &err),
                    DeltaDecodeResult::Frame)
              << format_info(f).name << " T " << t << " frame " << n << ": " << err;
          ASSERT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()), t)
              << format_info(f).name << " T " << t << " frame " << n;
        }
      }
    }
  }
}

// Keyframes are predicted and quantised too: on a smooth picture with
// noise, a threshold above the noise makes them much smaller than lossless,
// and lossless ones are smaller than the raw frame.
TEST(DeltaV4Stream, KeyframesHonourAndProfitFromTheThreshold) {
  const ImageDesc desc{PixelFormat::RGBA, 320, 240};
  std::vector<HostImage> clip;
  clip.emplace_back(desc);
  fill_smooth(clip[0], 0);
  const size_t lossless = encode_v4(clip, 0, 1)[0].size();
  const size_t t4 = encode_v4(clip, 4, 1)[0].size();
  DeltaLayout l = layout_of(desc);
  EXPECT_LT(lossless * 3 / 2, l.frame_bytes);
  EXPECT_LT(t4 * 3, lossless);
}

// A keyframe that delta frames follow leaves every byte within
// delta_keyframe_dead_zone(T) of its source (4T/5), so that noise in the
// frames after it crosses T less often; a stream of keyframes only uses
// the whole threshold, its keyframes smaller. Delta frames keep T.
TEST(DeltaV4Stream, KeyframesBeforeDeltaFramesKeepAFifthOfTheThreshold) {
  const ImageDesc desc{PixelFormat::I420, 96, 64};
  auto clip = make_clip(desc, 2, 11);
  for (int t : {1, 4, 10, 20}) {
    const int dead_zone = delta_keyframe_dead_zone(t);
    ASSERT_EQ(dead_zone, t * 4 / 5);
    const auto with_deltas = encode_v4(clip, t, 0);
    const auto keys_only = encode_v4(clip, t, 1);
    std::unique_ptr<DeltaDecoder> dec;
    ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    ASSERT_EQ(dec->decode(with_deltas[0].data(), with_deltas[0].size(), nullptr), DeltaDecodeResult::Frame);
    EXPECT_EQ(testing_support::max_abs_diff(dec->reconstruction(), clip[0].view()), dead_zone)
        << "T " << t;
    ASSERT_EQ(dec->decode(with_deltas[1].data(), with_deltas[1].size(), nullptr), DeltaDecodeResult::Frame);
    EXPECT_EQ(testing_support::max_abs_diff(dec->reconstruction(), clip[1].view()), t) << "T " << t;
    ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    ASSERT_EQ(dec->decode(keys_only[0].data(), keys_only[0].size(), nullptr), DeltaDecodeResult::Frame);
    EXPECT_EQ(testing_support::max_abs_diff(dec->reconstruction(), clip[0].view()), t) << "T " << t;
    EXPECT_LT(keys_only[0].size(), with_deltas[0].size()) << "T " << t;
  }
}

// Lossless, every (source, reference) byte pair once: a temporal tile's
// symbols are the folded differences, the reconstruction is the source,
// and each tile's mode follows the cost rule (temporal when its summed
// delta_symbol_cost is at most the spatial coding's), costs computed here
// from the public per-byte math (the encoder codes whole 16-byte groups of
// lossless tiles with SSE2).
TEST(DeltaV4Tiles, LosslessCodingOfEveryBytePairFollowsTheCostRule) {
  const ImageDesc desc{PixelFormat::GRAY8, 64 * kDeltaTileW, kDeltaTileH};
  const DeltaLayout l = layout_of(desc);
  HostImage cur(desc), ref(desc);
  const PlaneView c = cur.view().plane(0), r = ref.view().plane(0);
  for (int t = 0; t < 64; t++) {
    // Every pair once, scrambled (an odd multiplier is a bijection mod
    // 2^16), where temporal coding wins; in even tiles sorted by source,
    // a smooth picture where spatial coding wins.
    std::vector<int> pairs(kDeltaTileW * kDeltaTileH);
    for (size_t i = 0; i < pairs.size(); i++)
      pairs[i] = static_cast<int>((static_cast<unsigned>(t * pairs.size() + i) * 40503u) & 0xffffu);
    if (t % 2 == 0)
      std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size(); i++) {
      const size_t at = i / kDeltaTileW * c.pitch + t * kDeltaTileW + i % kDeltaTileW;
      c.data[at] = static_cast<uint8_t>(pairs[i] >> 8);
      r.data[at] = static_cast<uint8_t>(pairs[i] & 255);
    }
  }
  HostImage before(desc);
  copy_plane_host(before.view().plane(0), r);
  std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
  delta_tiles_encode_cpu(l, cur.view(), ref.view(), 0, {}, symbols.data(), modes.data());
  const NearLossless nl(0);
  int temporal_tiles = 0;
  for (int t = 0; t < 64; t++) {
    int t_cost = 0, s_cost = 0;
    for (int y = 0; y < kDeltaTileH; y++)
      for (int x = 0; x < kDeltaTileW; x++) {
        const size_t at = static_cast<size_t>(y) * c.pitch + t * kDeltaTileW + x;
        const int source = c.data[at], old = before.view().plane(0).data[at];
        t_cost += delta_symbol_cost(delta_fold(nl.quantise(source - old)));
        // Lossless: the tile's own reconstruction is the source.
        const uint8_t* row = c.data + static_cast<size_t>(y) * c.pitch + t * kDeltaTileW;
        const int left = x > 0 ? row[x - 1] : 0, above = y > 0 ? row[x - c.pitch] : 0;
        const int upper_left = (x > 0 && y > 0) ? row[x - 1 - c.pitch] : 0;
        const int pred = delta_spatial_prediction(x, y, 1, left, above, upper_left, above);
        s_cost += delta_symbol_cost(delta_fold(nl.quantise(source - pred)));
      }
    const int want = t_cost <= s_cost ? kDeltaTemporal : kDeltaSpatial;
    ASSERT_EQ(modes[t], want) << "tile " << t << ": temporal " << t_cost << ", spatial " << s_cost;
    temporal_tiles += want == kDeltaTemporal;
    for (int y = 0; y < kDeltaTileH; y++)
      for (int x = 0; x < kDeltaTileW; x++) {
        const size_t at = static_cast<size_t>(y) * c.pitch + t * kDeltaTileW + x;
        const size_t sym_at = static_cast<size_t>(y) * desc.width + t * kDeltaTileW + x;
        ASSERT_EQ(r.data[at], c.data[at]) << "tile " << t;
        if (want == kDeltaTemporal) {
          const int old = before.view().plane(0).data[at];
          ASSERT_EQ(symbols[sym_at], delta_fold(nl.quantise(c.data[at] - old))) << "tile " << t;
        }
      }
  }
  EXPECT_GT(temporal_tiles, 0);
  EXPECT_LT(temporal_tiles, 64) << "both modes should occur";
}

// A tile is skipped exactly when every byte is within the threshold of the
// reference: tiles whose bytes all differ by up to T (either sign) are
// skipped, and one byte T + 1 away, anywhere (first, last, in a 16-byte
// group or in the ragged end of a tile cut at the plane's right), keeps a
// tile from it; thresholds 0 to 254.
TEST(DeltaV4Tiles, SkippedExactlyWhenEveryByteIsWithinTheThreshold) {
  const ImageDesc desc{PixelFormat::GRAY8, kDeltaTileW + 37, kDeltaTileH};
  const DeltaLayout l = layout_of(desc);
  ASSERT_EQ(l.tile_count(), 2u);
  std::mt19937 rng(77);
  for (int t : {0, 1, 2, 5, 31, 127, 200, 254}) {
    for (int trial = 0; trial < 12; trial++) {
      HostImage ref(desc, 3), cur(desc, 3);
      const PlaneView r = ref.view().plane(0), c = cur.view().plane(0);
      for (int y = 0; y < desc.height; y++)
        for (int x = 0; x < desc.width; x++) {
          const int base = static_cast<int>(rng() % 256);
          const int d = t == 0 ? 0 : static_cast<int>(rng() % (2 * t + 1)) - t;
          r.data[static_cast<size_t>(y) * r.pitch + x] = static_cast<uint8_t>(base);
          c.data[static_cast<size_t>(y) * c.pitch + x] = static_cast<uint8_t>(std::clamp(base + d, 0, 255));
        }
      // Trial 0: all within; else one byte of each tile T + 1 away.
      // (x, y) in the whole tile; x % 37 in the cut one: 16-byte groups 1, 4,
      // 3, 3, 1, 3 and 1, 2, the ragged end (32..36), 1, 1, the ragged end.
      const int spots[][2] = {{0, 0}, {63, 15}, {36, 9}, {40, 0}, {5, 15}, {33, 7}};
      if (trial > 0) {
        const int y = spots[trial % 6][1];
        for (int x : {spots[trial % 6][0], kDeltaTileW + spots[trial % 6][0] % 37}) {
          const size_t at_r = static_cast<size_t>(y) * r.pitch + x, at_c = static_cast<size_t>(y) * c.pitch + x;
          const int base = r.data[at_r];
          c.data[at_c] = static_cast<uint8_t>(base + t + 1 <= 255 ? base + t + 1 : base - t - 1);
          if (base + t + 1 > 255 && base - t - 1 < 0) {  // neither fits: move the reference
            r.data[at_r] = 0;
            c.data[at_c] = static_cast<uint8_t>(t + 1);
          }
        }
      }
      std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
      delta_tiles_encode_cpu(l, cur.view(), ref.view(), t, {}, symbols.data(), modes.data());
      for (int tile = 0; tile < 2; tile++) {
        if (trial == 0) {
          EXPECT_EQ(modes[tile], kDeltaSkip) << "T " << t << " tile " << tile;
        } else {
          EXPECT_NE(modes[tile], kDeltaSkip) << "T " << t << " trial " << trial << " tile " << tile;
        }
      }
    }
  }
}

// The modes: tiles within the threshold are skipped, a brightness change is
// coded temporally, new smooth content spatially, a keyframe all spatially;
// decoding the modes and symbols rebuilds the encoder's reference.
TEST(DeltaV4Tiles, ModesFollowTheContentAndDecodeToTheEncodersReference) {
  const ImageDesc desc{PixelFormat::GRAY8, 256, 64};
  const DeltaLayout l = layout_of(desc);
  HostImage ref(desc), cur(desc), dec_ref(desc);
  std::mt19937 rng(5);
  for (int y = 0; y < 64; y++)
    for (int x = 0; x < 256; x++) {
      const uint8_t noise = static_cast<uint8_t>(rng());
      ref.view().data[0][y * ref.view().pitch[0] + x] = noise;
      uint8_t c = noise;
      if (x < 64)
        c = static_cast<uint8_t>(std::min(255, noise + 30));  // brighter: temporal
      else if (x < 128)
        c = static_cast<uint8_t>(x + y);  // new smooth content: spatial
      else if (x < 192)
        c = static_cast<uint8_t>(std::clamp(noise + (x + y) % 5 - 2, 0, 255));  // within 2: skipped
      cur.view().data[0][y * cur.view().pitch[0] + x] = c;
    }
  dec_ref.copy_from(ref.view());
  std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
  const size_t coded =
      delta_tiles_encode_cpu(l, cur.view(), ref.view(), 2, {}, symbols.data(), modes.data());
  for (int ty = 0; ty < 4; ty++) {
    for (int tx = 0; tx < 4; tx++) {
      const int want[] = {kDeltaTemporal, kDeltaSpatial, kDeltaSkip, kDeltaSkip};
      EXPECT_EQ(modes[ty * 4 + tx], want[tx]) << "tile " << tx << "," << ty;
    }
  }
  EXPECT_EQ(coded, size_t(2 * 64 * 64));
  EXPECT_LE(testing_support::max_abs_diff(ref.view(), cur.view()), 2);
  delta_tiles_decode_cpu(l, symbols.data(), modes.data(), delta_quantiser_for(2), dec_ref.view());
  EXPECT_TRUE(testing_support::bytes_equal(dec_ref.view(), ref.view()));
  // A keyframe: every tile spatial, every symbol coded.
  EXPECT_EQ(delta_tiles_encode_cpu(l, cur.view(), ref.view(), 2, {true, 0, 0}, symbols.data(),
                                   modes.data()),
            l.frame_bytes);
  for (uint8_t m : modes) EXPECT_EQ(m, kDeltaSpatial);
}

// The eight spatial predictors are the format's formulas (written out here
// on their own, docs/delta-format.md), for every left, above, upper-left
// and upper-right byte on a grid that takes in 0, 255 and the clamps of
// predictors 1, 2 and 7; the upper right only where the format reads it
// (predictors 5-7), and which those are.
TEST(DeltaV4Quantiser, SpatialPredictorsAreTheFormatsFormulas) {
  auto floor_div = [](int n, int d) { return n >= 0 ? n / d : -((-n + d - 1) / d); };
  auto med = [](int a, int b, int c) {
    if (c >= std::max(a, b))
      return std::min(a, b);
    if (c <= std::min(a, b))
      return std::max(a, b);
    return a + b - c;
  };
  std::vector<int> grid;
  for (int v = 0; v < 256; v += 15) grid.push_back(v);
  for (int v : {1, 2, 3, 126, 127, 128, 129, 253, 254, 255}) grid.push_back(v);
  const std::vector<int> d_grid = {0, 1, 2, 64, 127, 128, 200, 254, 255};
  int clamped_low[kDeltaSpatialPredictors] = {}, clamped_high[kDeltaSpatialPredictors] = {};
  for (int a : grid)
    for (int b : grid)
      for (int c : grid)
        for (int d : d_grid) {
          const int raw[kDeltaSpatialPredictors] = {med(a, b, c),
                                                    a + b - c,
                                                    floor_div(3 * a + 3 * b - 2 * c + 2, 4),
                                                    floor_div(3 * a + b + 2, 4),
                                                    a,
                                                    floor_div(b + d + 1, 2),
                                                    floor_div(2 * a + b + d + 2, 4),
                                                    floor_div(3 * a + b - c + d + 2, 4)};
          for (int p = 0; p < kDeltaSpatialPredictors; p++) {
            clamped_low[p] += raw[p] < 0;
            clamped_high[p] += raw[p] > 255;
            const int want = std::clamp(raw[p], 0, 255);
            const int got = delta_with_predictor(
                p, [&](auto k) { return delta_intra_predictor<decltype(k)::value>(a, b, c, d); });
            ASSERT_EQ(got, want) << "predictor " << p << " a " << a << " b " << b << " c " << c
                                 << " d " << d;
            // Only 5-7 read d, and only they say so.
            const bool reads_d = delta_with_predictor(p, [&](auto k) {
              return delta_intra_predictor<decltype(k)::value>(a, b, c, 255 - d) != got;
            });
            if (reads_d) {
              ASSERT_GE(p, 5) << "predictor " << p;
            }
            ASSERT_EQ(delta_with_predictor(
                          p, [&](auto k) { return delta_predictor_uses_upper_right<decltype(k)::value>; }),
                      p >= 5);
            // Inside the tile it is the prediction; on its first row and
            // column the rule is the same for all eight.
            ASSERT_EQ(delta_with_predictor(p,
                                           [&](auto k) {
                                             return delta_spatial_prediction<decltype(k)::value>(
                                                 5, 3, 1, a, b, c, d);
                                           }),
                      want);
            ASSERT_EQ(delta_with_predictor(p,
                                           [&](auto k) {
                                             return delta_spatial_prediction<decltype(k)::value>(
                                                 5, 0, 1, a, b, c, d);
                                           }),
                      a);
            ASSERT_EQ(delta_with_predictor(p,
                                           [&](auto k) {
                                             return delta_spatial_prediction<decltype(k)::value>(
                                                 0, 3, 1, a, b, c, d);
                                           }),
                      b);
          }
        }
  for (int p : {1, 2, 7}) {
    EXPECT_GT(clamped_low[p], 0) << "predictor " << p;
    EXPECT_GT(clamped_high[p], 0) << "predictor " << p;
  }
}

namespace {
// A format-4 packet of frame `counter` (a keyframe or not, threshold `t`)
// from modes and symbols the tile coder `tiles` codes, its tables in the
// coder's form, no vectors or predictors, the reconstruction `ref`'s
// checksum; empty on failure.
std::vector<uint8_t> packet_from_tiles(const DeltaLayout& l, DeltaTileEntropy& tiles,
                                       bool keyframe, uint32_t counter, int t, size_t coded,
                                       const uint8_t* symbols, const uint8_t* modes,
                                       const ImageView& ref) {
  DeltaPacketInfo info;
  info.version = kDeltaVersion;
  info.keyframe = keyframe;
  info.compression = DeltaCompression::Predictive;
  info.counter = counter;
  info.threshold = static_cast<uint8_t>(t);
  info.scaled_tables = tiles.scaled_tables();
  info.recon_checksum = delta_checksum(l, ref);
  std::vector<uint8_t> packet;
  const Status s = write_delta_packet_v4(
      l, info, coded, nullptr, nullptr,
      [&](int q, bool k, bool reuse, std::vector<uint8_t>* out) {
        return tiles.encode(q, k, symbols, modes, out, reuse);
      },
      &packet);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return s.is_ok() ? packet : std::vector<uint8_t>{};
}

// The format's spatial prediction with predictor `p` of byte x of row y of
// a tile w bytes wide, c a pixel, from its reconstruction so far `rec` (w
// bytes a row, rebuilt in raster order): the public per-byte math with the
// neighbours as docs/delta-format.md names them.
int raster_prediction(const std::vector<uint8_t>& rec, int w, int x, int y, int c, int p) {
  const int left = x >= c ? rec[y * w + x - c] : 0;
  const int above = y > 0 ? rec[(y - 1) * w + x] : 0;
  const int upper_left = (x >= c && y > 0) ? rec[(y - 1) * w + x - c] : 0;
  const int upper_right = (x + c < w && y > 0) ? rec[(y - 1) * w + x + c] : above;
  return delta_with_predictor(p, [&](auto k) {
    return delta_spatial_prediction<decltype(k)::value>(x, y, c, left, above, upper_left,
                                                        upper_right);
  });
}

// A tile's spatial coding with predictor `p`, from the public per-byte math
// in raster order: its cost (the sum of delta_symbol_cost), symbols and
// reconstruction (w bytes a row).
int code_tile_spatially(const PlaneView& src, int x0, int y0, int w, int h, int c, int p,
                        const DeltaEncoderQuantiser& q, std::vector<uint8_t>* sym,
                        std::vector<uint8_t>* rec) {
  sym->assign(static_cast<size_t>(w) * h, 0);
  rec->assign(static_cast<size_t>(w) * h, 0);
  int cost = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int pred = raster_prediction(*rec, w, x, y, c, p);
      const int k = q.quantise(src.data[static_cast<size_t>(y0 + y) * src.pitch + x0 + x] - pred);
      (*sym)[y * w + x] = static_cast<uint8_t>(delta_fold(k));
      (*rec)[y * w + x] = static_cast<uint8_t>(q.nl.reconstruct(pred, k));
      cost += delta_symbol_cost(delta_fold(k));
    }
  return cost;
}
}  // namespace

// A keyframe's tiles each take the spatial predictor whose coding costs
// least (the lowest on a tie), costs worked out here for all eight from the
// public math; their symbols and reconstruction are that predictor's, and
// decoding with the predictors rebuilds the encoder's reference (without
// them, as MED, it does not). On noisy footage several predictors win.
TEST(DeltaV4Tiles, KeyframeTilesChooseTheCheapestSpatialPredictor) {
  for (int t : {0, 4, 10}) {
    const ImageDesc desc{PixelFormat::RGB, 213, 70};  // 3 bytes a pixel; narrow, short edge tiles
    const DeltaLayout l = layout_of(desc);
    HostImage cur(desc), ref(desc), dec_ref(desc);
    fill_smooth(cur, 3);
    std::mt19937 rng(t + 1);
    const PlaneView c = cur.view().plane(0);
    // Stronger noise in the lower half, stripes on the right, lines rising
    // to the right (along which the upper-right byte predicts) in between.
    for (int y = 0; y < c.height; y++)
      for (int x = 0; x < c.width * 3; x++) {
        uint8_t& v = c.data[static_cast<size_t>(y) * c.pitch + x];
        if (y >= 32)
          v = static_cast<uint8_t>(std::clamp(v + static_cast<int>(rng() % 21) - 10, 0, 255));
        if (x >= 400)
          v = static_cast<uint8_t>((y % 4) * 50 + rng() % 3);
        else if (x >= 256 && y < 32)
          v = static_cast<uint8_t>(((x / 3 + y) % 7) * 35 + x % 3 * 5);
      }
    DeltaIntra intra;
    intra.keyframe = true;
    intra.keyframe_dead_zone = delta_keyframe_dead_zone(t);
    const DeltaEncoderQuantiser q = intra.quantiser(t);
    std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count()),
        predictors(l.tile_count(), 99);
    ASSERT_EQ(delta_tiles_encode_cpu(l, cur.view(), ref.view(), t, intra, symbols.data(),
                                     modes.data(), nullptr, predictors.data()),
              l.frame_bytes);
    std::set<int> chosen;
    const DeltaPlaneLayout& pl = l.planes[0];
    for (int ty = 0; ty < pl.tiles_y; ty++)
      for (int tx = 0; tx < pl.tiles_x; tx++) {
        const size_t tile = static_cast<size_t>(ty) * pl.tiles_x + tx;
        const int w = pl.tile_width(tx), h = pl.tile_height(ty);
        const int x0 = tx * kDeltaTileW, y0 = ty * kDeltaTileH;
        int best = -1, best_cost = 0;
        std::vector<uint8_t> sym, rec, best_sym, best_rec;
        for (int p = 0; p < kDeltaSpatialPredictors; p++) {
          const int cost = code_tile_spatially(c, x0, y0, w, h, 3, p, q, &sym, &rec);
          if (best < 0 || cost < best_cost) {
            best = p;
            best_cost = cost;
            best_sym = sym;
            best_rec = rec;
          }
        }
        ASSERT_EQ(modes[tile], kDeltaSpatial);
        ASSERT_EQ(predictors[tile], best) << "T " << t << " tile " << tx << "," << ty;
        chosen.insert(best);
        const PlaneView r = ref.view().plane(0);
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++) {
            ASSERT_EQ(symbols[static_cast<size_t>(y0 + y) * pl.row_bytes + x0 + x],
                      best_sym[y * w + x]);
            ASSERT_EQ(r.data[static_cast<size_t>(y0 + y) * r.pitch + x0 + x], best_rec[y * w + x]);
          }
      }
    EXPECT_GE(chosen.size(), 3u) << "T " << t;
    EXPECT_GE(*chosen.rbegin(), 5) << "T " << t << ": no predictor with the upper right";
    EXPECT_LE(testing_support::max_abs_diff(ref.view(), cur.view()), t);
    delta_tiles_decode_cpu(l, symbols.data(), modes.data(), delta_quantiser_for(t),
                           dec_ref.view(), nullptr, predictors.data());
    EXPECT_TRUE(testing_support::bytes_equal(dec_ref.view(), ref.view())) << "T " << t;
    delta_tiles_decode_cpu(l, symbols.data(), modes.data(), delta_quantiser_for(t),
                           dec_ref.view());
    EXPECT_FALSE(testing_support::bytes_equal(dec_ref.view(), ref.view())) << "T " << t;
    // Without somewhere to record them every tile is MED's, as delta frames'
    // spatial tiles are.
    HostImage med_ref(desc);
    std::vector<uint8_t> med_symbols(l.frame_bytes);
    delta_tiles_encode_cpu(l, cur.view(), med_ref.view(), t, intra, med_symbols.data(),
                           modes.data());
    std::vector<uint8_t> sym, rec;
    code_tile_spatially(c, 0, 0, kDeltaTileW, kDeltaTileH, 3, 0, q, &sym, &rec);
    for (int y = 0; y < kDeltaTileH; y++)
      for (int x = 0; x < kDeltaTileW; x++)
        ASSERT_EQ(med_symbols[static_cast<size_t>(y) * pl.row_bytes + x], sym[y * kDeltaTileW + x]);
  }
}

// Spatial tiles at 1, 2 (NV12's UV), 3 and 4 bytes a pixel, clipped edge
// tiles included, are the format's coding worked out here from the public
// math in raster order (symbols and reconstruction): a keyframe with its
// tiles' predictors, one without (MED), and a delta frame's spatial tiles
// (MED, a try stopped at the temporal cost), lossless (where the encoder
// codes MED a row 16 bytes at a time with SSE2) and at T = 1, 4 and 37
// (where it codes a whole tile of 1-byte pixels by diagonals as vectors).
TEST(DeltaV4Tiles, SpatialTilesAreTheFormatsAtEveryPixelSize) {
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::NV12, PixelFormat::RGB, PixelFormat::RGBA})
    for (int t : {0, 1, 4, 37}) {
      const ImageDesc desc{f, 150, 37};
      const DeltaLayout l = layout_of(desc);
      HostImage cur(desc), noise(desc);
      fill_smooth(cur, 3);
      noise.fill_random(5);
      for (int i = 0; i < l.n_planes; i++) {  // noise in the lower rows
        const PlaneView c = cur.view().plane(i), n = noise.view().plane(i);
        for (int y = c.height / 2; y < c.height; y++)
          for (int x = 0; x < l.planes[i].row_bytes; x++)
            c.data[static_cast<size_t>(y) * c.pitch + x] = static_cast<uint8_t>(
                (c.data[static_cast<size_t>(y) * c.pitch + x] + n.data[static_cast<size_t>(y) * n.pitch + x] % 9));
      }
      for (int kind = 0; kind < 3; kind++) {  // keyframe with predictors, without, delta frame
        const bool key = kind < 2;
        DeltaIntra intra;
        intra.keyframe = key;
        intra.keyframe_dead_zone = key ? delta_keyframe_dead_zone(t) : -1;
        const DeltaEncoderQuantiser q = intra.quantiser(t);
        HostImage ref(desc);
        ref.copy_from(noise.view());  // a delta frame's reference: noise, so smooth tiles go spatial
        std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count()),
            predictors(l.tile_count(), 0);
        delta_tiles_encode_cpu(l, cur.view(), ref.view(), t, intra, symbols.data(), modes.data(),
                               nullptr, kind == 0 ? predictors.data() : nullptr);
        int spatial_tiles = 0;
        for (int i = 0; i < l.n_planes; i++) {
          const DeltaPlaneLayout& pl = l.planes[i];
          const PlaneView c = cur.view().plane(i), r = ref.view().plane(i);
          for (int ty = 0; ty < pl.tiles_y; ty++)
            for (int tx = 0; tx < pl.tiles_x; tx++) {
              const size_t tile = l.first_tile[i] + static_cast<size_t>(ty) * pl.tiles_x + tx;
              if (modes[tile] != kDeltaSpatial)
                continue;
              spatial_tiles++;
              const int w = pl.tile_width(tx), h = pl.tile_height(ty);
              const int x0 = tx * kDeltaTileW, y0 = ty * kDeltaTileH;
              std::vector<uint8_t> sym, rec;
              code_tile_spatially(c, x0, y0, w, h, pl.pixel_bytes, predictors[tile], q, &sym, &rec);
              for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                  ASSERT_EQ(symbols[l.plane_offset[i] + static_cast<size_t>(y0 + y) * pl.row_bytes +
                                    x0 + x],
                            sym[y * w + x])
                      << format_info(f).name << " T " << t << " kind " << kind << " plane " << i
                      << " tile " << tx << "," << ty << " byte " << x << "," << y;
                  ASSERT_EQ(r.data[static_cast<size_t>(y0 + y) * r.pitch + x0 + x], rec[y * w + x])
                      << format_info(f).name << " T " << t << " kind " << kind << " plane " << i
                      << " tile " << tx << "," << ty << " byte " << x << "," << y;
                }
            }
        }
        EXPECT_GT(spatial_tiles, key ? static_cast<int>(l.tile_count()) - 1 : 0)
            << format_info(f).name << " T " << t << " kind " << kind;
      }
    }
}

// Near-lossless, every (source, reference) byte pair once at thresholds
// from 1 to 255: each tile's mode follows the cost rule, with both codings'
// costs worked out here from the public per-byte math (the spatial one in
// raster order), and a temporal tile's symbols and reconstruction are the
// quantiser's (the encoder codes whole 16-byte groups of temporal tiles
// with SSE2, the quantiser in 16-bit lanes; spatial tiles are checked as
// well).
TEST(DeltaV4Tiles, NearLosslessCodingOfEveryBytePairFollowsTheCostRule) {
  const ImageDesc desc{PixelFormat::GRAY8, 64 * kDeltaTileW, kDeltaTileH};
  const DeltaLayout l = layout_of(desc);
  HostImage cur(desc), ref(desc);
  const PlaneView c = cur.view().plane(0), r = ref.view().plane(0);
  for (int t = 0; t < 64; t++) {  // every pair once, scrambled (as the lossless test)
    for (int i = 0; i < kDeltaTileW * kDeltaTileH; i++) {
      const unsigned pair = (static_cast<unsigned>(t * kDeltaTileW * kDeltaTileH + i) * 40503u) & 0xffffu;
      const size_t at = static_cast<size_t>(i / kDeltaTileW) * c.pitch + t * kDeltaTileW + i % kDeltaTileW;
      c.data[at] = static_cast<uint8_t>(pair >> 8);
      r.data[at] = static_cast<uint8_t>(pair & 255);
    }
  }
  HostImage before(desc);
  copy_plane_host(before.view().plane(0), r);
  const PlaneView b = before.view().plane(0);
  for (int threshold : {1, 2, 3, 4, 5, 10, 20, 37, 64, 100, 127, 200, 254, 255}) {
    ref.copy_from(before.view());
    const DeltaEncoderQuantiser q = DeltaIntra{}.quantiser(threshold);
    std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
    delta_tiles_encode_cpu(l, cur.view(), ref.view(), threshold, {}, symbols.data(),
                           modes.data());
    int temporal_tiles = 0;
    for (int t = 0; t < 64; t++) {
      const int x0 = t * kDeltaTileW;
      int t_cost = 0;
      for (int y = 0; y < kDeltaTileH; y++)
        for (int x = 0; x < kDeltaTileW; x++) {
          const size_t at = static_cast<size_t>(y) * c.pitch + x0 + x;
          t_cost += delta_symbol_cost(delta_fold(q.quantise(c.data[at] - b.data[at])));
        }
      bool within = true;  // every byte within the bound: skipped
      for (int y = 0; y < kDeltaTileH; y++)
        for (int x = 0; x < kDeltaTileW; x++) {
          const size_t at = static_cast<size_t>(y) * c.pitch + x0 + x;
          within = within && std::abs(c.data[at] - b.data[at]) <= q.bound;
        }
      std::vector<uint8_t> s_sym, s_rec;
      const int s_cost = code_tile_spatially(c, x0, 0, kDeltaTileW, kDeltaTileH, 1, 0, q, &s_sym,
                                             &s_rec);
      const bool temporal = !within && t_cost <= s_cost;
      ASSERT_EQ(modes[t], within ? kDeltaSkip : temporal ? kDeltaTemporal : kDeltaSpatial)
          << "T " << threshold << " tile " << t << ": temporal " << t_cost << ", spatial "
          << s_cost;
      temporal_tiles += temporal;
      for (int y = 0; y < kDeltaTileH; y++)
        for (int x = 0; x < kDeltaTileW; x++) {
          const size_t at = static_cast<size_t>(y) * c.pitch + x0 + x;
          const size_t sym_at = static_cast<size_t>(y) * desc.width + x0 + x;
          const int k = q.quantise(c.data[at] - b.data[at]);
          const int want_sym =
              within ? 0 : temporal ? delta_fold(k) : s_sym[y * kDeltaTileW + x];
          const int want_rec = within     ? b.data[at]
                               : temporal ? q.nl.reconstruct(b.data[at], k)
                                          : s_rec[y * kDeltaTileW + x];
          ASSERT_EQ(symbols[sym_at], want_sym) << "T " << threshold << " tile " << t;
          ASSERT_EQ(r.data[at], want_rec) << "T " << threshold << " tile " << t;
        }
    }
    // (Above 100 random pairs go spatial or are skipped: the kernel itself
    // is checked at every threshold below.)
    if (threshold <= 100) {
      EXPECT_GT(temporal_tiles, 0) << "T " << threshold;
    }
  }
}

// Whether bytes [begin, end) of sym and rec are what the per-byte math
// gives for cur against ref under q (temporal coding: the symbol of the
// quantised error and the reference rebuilt with it); their summed cost
// into *cost.
testing::AssertionResult per_byte_math(const DeltaEncoderQuantiser& q,
                                       const std::vector<uint8_t>& cur,
                                       const std::vector<uint8_t>& ref,
                                       const std::vector<uint8_t>& sym,
                                       const std::vector<uint8_t>& rec, size_t begin, size_t end,
                                       int* cost) {
  *cost = 0;
  for (size_t i = begin; i < end; i++) {
    const int k = q.quantise(cur[i] - ref[i]);
    if (sym[i] != delta_fold(k) || rec[i] != q.nl.reconstruct(ref[i], k))
      return testing::AssertionFailure()
             << "cur " << int(cur[i]) << " ref " << int(ref[i]) << ": symbol " << int(sym[i])
             << " (want " << delta_fold(k) << "), rebuilt " << int(rec[i]) << " (want "
             << q.nl.reconstruct(ref[i], k) << ")";
    *cost += delta_symbol_cost(delta_fold(k));
  }
  return testing::AssertionSuccess();
}

#if defined(__SSE2__)
// The SSE2 temporal kernels (delta/temporal_sse2.hpp) are the per-byte math
// for every (source, reference) pair at every error bound 0..255 (and at
// the keyframe dead zone's 4T/5, which temporal tiles never use but the
// kernel takes): symbols, reconstruction and summed costs; the lossless
// kernel at bound 0.
TEST(DeltaV4Tiles, Sse2TemporalKernelsAreThePerByteMath) {
  std::vector<uint8_t> cur(65536), ref(65536), sym(65536), rec(65536);
  for (int i = 0; i < 65536; i++) {
    cur[i] = static_cast<uint8_t>(i >> 8);
    ref[i] = static_cast<uint8_t>(i & 255);
  }
  for (int bound = 0; bound <= 255; bound++)
    for (int dead_zone : {bound, bound * 4 / 5}) {
      if (dead_zone != bound && bound % 7 != 3)
        continue;  // a sample of the other dead zones
      const DeltaEncoderQuantiser q(bound, dead_zone);
      const NearLosslessTemporal16 coder(q);
      for (int lossless = 0; lossless < (bound == 0 ? 2 : 1); lossless++)
        for (int g = 0; g < 65536; g += 16) {
          __m128i acc = _mm_setzero_si128();
          if (lossless)
            code_lossless16(&cur[g], &ref[g], &sym[g], &rec[g], &acc);
          else
            coder.code16(&cur[g], &ref[g], &sym[g], &rec[g], &acc);
          int want_cost = 0;
          ASSERT_TRUE(per_byte_math(q, cur, ref, sym, rec, g, g + 16, &want_cost))
              << "bound " << bound << " dead zone " << dead_zone;
          ASSERT_EQ(sum_halves16(acc), want_cost)
              << "bound " << bound << " group " << g;
        }
    }
}
#endif

// The AVX2 tile kernel (delta/temporal_avx2.hpp), where the CPU runs it,
// is the same per-byte math: every (source, reference) pair, as 64 whole
// tiles, at every error bound 0..255 (lossless at 0) and a sample of
// keyframe dead zones; symbols, reconstruction and each tile's cost.
TEST(DeltaV4Tiles, Avx2TemporalTilesAreThePerByteMath) {
  const DeltaTemporalTile avx2 = delta_temporal_tile_avx2();
  if (!avx2)
    GTEST_SKIP() << "no AVX2 (this CPU, or CUDAFX_CPU_BASELINE=1)";
  std::vector<uint8_t> cur(65536), ref(65536), sym(65536), rec(65536);
  for (int i = 0; i < 65536; i++) {  // scrambled, so a tile holds all kinds of pairs
    const unsigned pair = (static_cast<unsigned>(i) * 40503u) & 0xffffu;
    cur[i] = static_cast<uint8_t>(pair >> 8);
    ref[i] = static_cast<uint8_t>(pair & 255);
  }
  constexpr int kTile = kDeltaTileW * kDeltaTileH;
  for (int bound = 0; bound <= 255; bound++)
    for (int dead_zone : {bound, bound * 4 / 5}) {
      if (dead_zone != bound && bound % 7 != 3)
        continue;
      const DeltaEncoderQuantiser q(bound, dead_zone);
      for (int t = 0; t < 65536 / kTile; t++) {
        const size_t at = static_cast<size_t>(t) * kTile;
        const int cost = avx2(&cur[at], kDeltaTileW, &ref[at], kDeltaTileW, kDeltaTileH, q,
                              &sym[at], &rec[at]);
        int want_cost = 0;
        ASSERT_TRUE(per_byte_math(q, cur, ref, sym, rec, at, at + kTile, &want_cost))
            << "bound " << bound << " dead zone " << dead_zone;
        ASSERT_EQ(cost, want_cost) << "bound " << bound << " tile " << t;
      }
    }
}

// The histogram pass's AVX2 row kernel (delta/symbol_pairs_avx2.hpp),
// where the CPU runs it, is the per-symbol math: each tile row's mask, and
// for the groups it sets each symbol's delta_symbol_coding from its left
// and upper neighbours (none in the first c bytes, none above a tile's
// first row) and its flip, in order, counted once each. Every pixel size,
// both modes, alphabets from 2 to 256, rows with zero groups anywhere.
TEST(DeltaV4Tiles, Avx2RowPairsAreThePerSymbolMath) {
  const DeltaRowPairs avx2 = delta_row_pairs_avx2();
  if (!avx2)
    GTEST_SKIP() << "no AVX2 (this CPU, or CUDAFX_CPU_BASELINE=1)";
  std::mt19937 rng(29);
  std::vector<uint32_t> counts(kDeltaContexts * 256), want_counts(kDeltaContexts * 256);
  for (int c : {1, 2, 3, 4})
    for (int range : {2, 3, 9, 21, 128, 255, 256})
      for (int base : {0, kDeltaActivityClasses})
        for (int trial = 0; trial < 24; trial++) {
          uint8_t above[kDeltaTileW], row[kDeltaTileW];
          for (int x = 0; x < kDeltaTileW; x++) {
            above[x] = static_cast<uint8_t>(rng() % range);
            row[x] = static_cast<uint8_t>(rng() % range);
          }
          const unsigned zero_groups = rng() & 0xffu;  // groups made all zero
          for (int g = 0; g < kDeltaTileW / kDeltaGroupBytes; g++)
            if (zero_groups >> g & 1u)
              std::fill_n(row + g * kDeltaGroupBytes, kDeltaGroupBytes, uint8_t{0});
          const bool first_row = trial % 3 == 0;
          const int mask_context = kDeltaMaskContext0 + trial % kDeltaMaskContexts;
          for (size_t v = 0; v < counts.size(); v++)
            counts[v] = want_counts[v] = static_cast<uint32_t>(v % 5);
          // The per-symbol math.
          std::vector<uint16_t> want;
          unsigned want_mask = 0;
          for (int g = 0; g < kDeltaTileW / kDeltaGroupBytes; g++)
            for (int x = g * kDeltaGroupBytes; x < (g + 1) * kDeltaGroupBytes; x++)
              want_mask |= (row[x] != 0 ? 1u : 0u) << g;
          want.push_back(static_cast<uint16_t>(mask_context << 8 | want_mask));
          for (int g = 0; g < kDeltaTileW / kDeltaGroupBytes; g++) {
            if (!(want_mask >> g & 1u))
              continue;
            for (int x = g * kDeltaGroupBytes; x < (g + 1) * kDeltaGroupBytes; x++) {
              const int left = x >= c ? row[x - c] : 0, upper = first_row ? 0 : above[x];
              const DeltaSymbolCoding k = delta_symbol_coding(
                  base ? kDeltaSpatial : kDeltaTemporal, delta_unfold(left), delta_unfold(upper));
              const int value = k.flip ? delta_flip_symbol(row[x], range) : row[x];
              want.push_back(static_cast<uint16_t>(k.context << 8 | value));
            }
          }
          for (uint16_t pair : want) want_counts[pair]++;
          std::vector<uint16_t> seq(1 + kDeltaTileW + 16, 0xeeee);
          unsigned mask = 0;
          const int n = avx2(row, first_row ? nullptr : above, c, mask_context, base, range,
                             seq.data(), counts.data(), &mask);
          const std::string where = "c " + std::to_string(c) + " range " +
                                    std::to_string(range) + " base " + std::to_string(base) +
                                    " trial " + std::to_string(trial);
          ASSERT_EQ(mask, want_mask) << where;
          ASSERT_EQ(n, static_cast<int>(want.size())) << where;
          for (uint16_t& pair : want) pair = static_cast<uint16_t>(2 * pair);  // as stored
          ASSERT_EQ(std::vector<uint16_t>(seq.begin(), seq.begin() + n), want) << where;
          ASSERT_EQ(counts, want_counts) << where;
        }
}

// Keyframes decode with every predictor as the format's raster-order
// rebuilding says (docs/delta-format.md, *Spatial prediction*), at 1, 2
// (NV12's UV), 3 and 4 bytes a pixel, with clipped edge tiles (RGB's last
// is 2 bytes wide, less than a pixel): a keyframe's symbols rebuilt with
// tile t's predictor (t + r) mod 8 for r = 0..7, against the same rebuilt
// here byte by byte from the public math. The CPU decoder walks tiles by
// diagonals (steeper for the predictors that read the upper right) and the
// CUDA decoder is tested against it, so this pins both to the format.
TEST(DeltaV4Tiles, KeyframesDecodeWithEveryPredictorAsTheFormatSays) {
  const int t = 4;
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::NV12, PixelFormat::RGB, PixelFormat::RGBA}) {
    const ImageDesc desc{f, 150, 37};
    const DeltaLayout l = layout_of(desc);
    HostImage cur(desc), ref(desc);
    cur.fill_random(11);
    DeltaIntra intra;
    intra.keyframe = true;
    std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
    delta_tiles_encode_cpu(l, cur.view(), ref.view(), t, intra, symbols.data(), modes.data());
    const NearLossless nl(delta_quantiser_for(t));
    for (int r = 0; r < kDeltaSpatialPredictors; r++) {
      std::vector<uint8_t> forced(l.tile_count());
      for (size_t i = 0; i < forced.size(); i++)
        forced[i] = static_cast<uint8_t>((i + r) % kDeltaSpatialPredictors);
      HostImage got(desc);
      delta_tiles_decode_cpu(l, symbols.data(), modes.data(), delta_quantiser_for(t), got.view(),
                             nullptr, forced.data());
      for (int i = 0; i < l.n_planes; i++) {
        const DeltaPlaneLayout& pl = l.planes[i];
        const int c = pl.pixel_bytes;
        const uint8_t* sym = symbols.data() + l.plane_offset[i];
        const PlaneView g = got.view().plane(i);
        for (int ty = 0; ty < pl.tiles_y; ty++)
          for (int tx = 0; tx < pl.tiles_x; tx++) {
            const size_t tile = l.first_tile[i] + static_cast<size_t>(ty) * pl.tiles_x + tx;
            const int w = pl.tile_width(tx), h = pl.tile_height(ty);
            const int x0 = tx * kDeltaTileW, y0 = ty * kDeltaTileH;
            std::vector<uint8_t> rec(static_cast<size_t>(w) * h);
            for (int y = 0; y < h; y++)
              for (int x = 0; x < w; x++) {
                const int pred = raster_prediction(rec, w, x, y, c, forced[tile]);
                const int m = sym[static_cast<size_t>(y0 + y) * pl.row_bytes + x0 + x];
                rec[y * w + x] = static_cast<uint8_t>(nl.reconstruct(pred, delta_unfold(m)));
                ASSERT_EQ(g.data[static_cast<size_t>(y0 + y) * g.pitch + x0 + x],
                          int(rec[y * w + x]))
                    << format_info(f).name << " plane " << i << " tile " << tx << "," << ty
                    << " predictor " << int(forced[tile]) << " byte " << x << "," << y;
              }
          }
      }
    }
  }
}

// The predictor section: keyframes carry one (flag bit 6), delta frames
// none; a section cut short, or the flag on a delta frame, is refused by
// name; a keyframe without a section (as format 4 streams before it)
// still decodes, every tile MED.
TEST(DeltaV4Stream, KeyframesCarryEachTilesPredictor) {
  const ImageDesc desc{PixelFormat::I420, 200, 70};
  const DeltaLayout l = layout_of(desc);
  const auto clip = make_clip(desc, 2, 4);
  const auto packets = encode_v4(clip, 6, 0);
  DeltaPacketInfo key, delta;
  ASSERT_TRUE(read_delta_header(l, packets[0].data(), packets[0].size(), &key).is_ok());
  ASSERT_TRUE(read_delta_header(l, packets[1].data(), packets[1].size(), &delta).is_ok());
  EXPECT_TRUE(key.keyframe && key.predictors);
  EXPECT_EQ(packets[0][5] & 0x40, 0x40);
  EXPECT_FALSE(delta.predictors);
  // The section as the format lays it out, read here on its own: tile t's
  // predictor in bits 3t .. 3t + 2 after the quantiser byte, least
  // significant first; they are the predictors the encoder chose.
  {
    HostImage ref(desc);
    std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count()), chosen(l.tile_count());
    DeltaIntra intra;
    intra.keyframe = true;
    intra.keyframe_dead_zone = delta_keyframe_dead_zone(6);
    delta_tiles_encode_cpu(l, clip[0].view(), ref.view(), 6, intra, symbols.data(),
                           modes.data(), nullptr, chosen.data());
    const uint8_t* section = packets[0].data() + kDeltaHeaderSize + 1;
    std::set<int> seen;
    for (size_t t = 0; t < l.tile_count(); t++) {
      int p = 0;
      for (int b = 0; b < 3; b++) {
        const size_t bit = 3 * t + b;
        p |= ((section[bit / 8] >> (bit % 8)) & 1) << b;
      }
      ASSERT_EQ(p, chosen[t]) << "tile " << t;
      seen.insert(p);
    }
    EXPECT_GE(seen.size(), 3u);  // so that a permuted layout would show
  }
  auto decode = [&](std::vector<uint8_t> p, bool first_key, std::string* err) {
    testing_support::reseal_delta_packet(p.data(), p.size());
    std::unique_ptr<DeltaDecoder> dec;
    EXPECT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    if (first_key) {
      EXPECT_EQ(dec->decode(packets[0].data(), packets[0].size(), nullptr),
                DeltaDecodeResult::Frame);
    }
    return dec->decode(p.data(), p.size(), err);
  };
  std::string err;
  std::vector<uint8_t> flagged = packets[1];
  flagged[5] |= 0x40;
  EXPECT_EQ(decode(flagged, true, &err), DeltaDecodeResult::Corrupt);
  EXPECT_EQ(err, "delta packet: spatial predictors on a delta frame");
  const size_t section = (l.tile_count() * 3 + 7) / 8;
  std::vector<uint8_t> cut(packets[0].begin(), packets[0].begin() + kDeltaHeaderSize + 1 + section - 1);
  EXPECT_EQ(decode(cut, false, &err), DeltaDecodeResult::Corrupt);
  EXPECT_EQ(err, "delta packet: v4 payload: predictor section truncated (" +
                     std::to_string(section - 1) + " of " + std::to_string(section) + " bytes)");
  // The same keyframe without predictors: every tile MED.
  HostImage ref(desc);
  std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
  DeltaIntra intra;
  intra.keyframe = true;
  intra.keyframe_dead_zone = delta_keyframe_dead_zone(6);
  const size_t coded = delta_tiles_encode_cpu(l, clip[0].view(), ref.view(), 6, intra,
                                              symbols.data(), modes.data());
  std::unique_ptr<DeltaTileEntropy> tiles;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &tiles).is_ok());
  const std::vector<uint8_t> old_form =
      packet_from_tiles(l, *tiles, true, 0, 6, coded, symbols.data(), modes.data(), ref.view());
  ASSERT_FALSE(old_form.empty());
  EXPECT_EQ(old_form[5] & 0x40, 0);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  ASSERT_EQ(dec->decode(old_form.data(), old_form.size(), &err), DeltaDecodeResult::Frame) << err;
  EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), ref.view()));
  EXPECT_FALSE(dec->last_info().predictors);
}

// delta_coded_symbols counts the bytes of every tile not skipped (mode 0,
// kDeltaSkip), the narrow and short edge tiles included (against a
// tile-by-tile count).
TEST(DeltaV4Tiles, CodedSymbolsCountEveryTileNotSkipped) {
  std::mt19937 rng(5);
  for (const ImageDesc desc : {ImageDesc{PixelFormat::RGBA, 333, 211},
                               ImageDesc{PixelFormat::NV12, 1922, 1080},
                               ImageDesc{PixelFormat::GRAY8, 64, 16},
                               ImageDesc{PixelFormat::GRAY8, 1, 1},
                               ImageDesc{PixelFormat::I420, 130, 34}}) {
    const DeltaLayout l = layout_of(desc);
    for (int skipped_in_8 : {0, 1, 7, 8}) {
      std::vector<uint8_t> modes(l.tile_count());
      for (uint8_t& m : modes)
        m = static_cast<uint8_t>(static_cast<int>(rng() % 8) < skipped_in_8 ? 0 : 1 + rng() % 2);
      size_t expected = 0;
      for (int i = 0; i < l.n_planes; i++) {
        const DeltaPlaneLayout& p = l.planes[i];
        for (int ty = 0; ty < p.tiles_y; ty++)
          for (int tx = 0; tx < p.tiles_x; tx++)
            if (modes[l.first_tile[i] + static_cast<size_t>(ty) * p.tiles_x + tx] != kDeltaSkip)
              expected += static_cast<size_t>(p.tile_width(tx)) * p.tile_height(ty);
      }
      EXPECT_EQ(delta_coded_symbols(l, modes.data()), expected)
          << format_info(desc.format).name << " " << desc.width << "x" << desc.height << " "
          << skipped_in_8;
    }
  }
}

// Lanes: up to 8 tiles of one tile row of one plane, in plane, row, column
// order.
TEST(DeltaV4Entropy, LanesFollowTheFormat) {
  const DeltaLayout l = layout_of({PixelFormat::I420, 1100, 40});  // Y: 1100 bytes = 18 tiles
  const auto lanes = delta_lanes(l);
  // Y: 3 rows x 3 lanes (8, 8, 2 tiles); U, V: 550 bytes = 9 tiles, 2 rows x 2 lanes.
  ASSERT_EQ(lanes.size(), 9u + 4u + 4u);
  EXPECT_EQ(lanes[2].tiles, 2);
  EXPECT_EQ(lanes[2].tx0, 16);
  EXPECT_EQ(lanes[2].symbols, size_t(1100 - 16 * 64) * 16);
  EXPECT_EQ(lanes[8].ty, 2);
  EXPECT_EQ(lanes[8].symbols, size_t(1100 - 16 * 64) * 8);
  EXPECT_EQ(lanes[9].plane, 1);
  EXPECT_EQ(lanes[9].first_tile, l.first_tile[1]);
  EXPECT_EQ(lanes[10].tiles, 1);
}

// Damage behind valid CRCs: every payload byte flipped in turn, and cut
// payloads. The decoder rejects the packet (naming the format-4 layer or the
// reconstruction checksum), or the damage changed nothing decoded.
TEST(DeltaV4Entropy, DamageBehindValidCrcsIsCaught) {
  const ImageDesc desc{PixelFormat::I420, 96, 64};
  const auto clip = make_clip(desc, 3, 12);
  for (int t : {0, 3}) {
    const auto packets = encode_v4(clip, t, 0);
    for (size_t which : {size_t(0), size_t(1)}) {
      const std::vector<uint8_t>& p = packets[which];
      auto verdict = [&](std::vector<uint8_t> damaged, std::string* err) {
        testing_support::reseal_delta_packet(damaged.data(), damaged.size());
        std::unique_ptr<DeltaDecoder> dec;
        EXPECT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
        if (which == 1) {
          EXPECT_EQ(dec->decode(packets[0].data(), packets[0].size(), err),
                    DeltaDecodeResult::Frame);
        }
        const DeltaDecodeResult r = dec->decode(damaged.data(), damaged.size(), err);
        if (r == DeltaDecodeResult::Frame) {
          EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[which].view()), t);
          EXPECT_EQ(delta_checksum(dec->layout(), dec->reconstruction()),
                    dec->last_info().recon_checksum);
        }
        return r;
      };
      int caught = 0;
      for (size_t i = kDeltaHeaderSize; i < p.size(); i++) {
        std::vector<uint8_t> q = p;
        q[i] ^= 0x21;
        std::string err;
        if (verdict(q, &err) == DeltaDecodeResult::Corrupt) {
          caught++;
          EXPECT_TRUE(err.rfind("delta packet: v4 payload: ", 0) == 0 ||
                      err == "reconstruction checksum mismatch: decoder out of sync")
              << err;
        }
      }
      EXPECT_GT(caught, static_cast<int>(p.size() - kDeltaHeaderSize) * 9 / 10)
          << "T " << t << " packet " << which;
      for (size_t cut : {size_t(1), size_t(7), p.size() / 2}) {
        std::vector<uint8_t> q(p.begin(), p.end() - cut);
        std::string err;
        EXPECT_EQ(verdict(q, &err), DeltaDecodeResult::Corrupt) << "cut " << cut;
        EXPECT_EQ(err.rfind("delta packet: v4 payload: ", 0), 0u) << err;
      }
    }
  }
}

// A decoder whose tile decoding fails as a backend would (a CUDA error in
// the GPU lane decoder) or as a bad packet does.
class DecoderFailingTiles : public DeltaDecoderBase {
 public:
  DecoderFailingTiles(const ImageDesc& desc, Status failure) : failure_(std::move(failure)) {
    EXPECT_TRUE(init(desc).is_ok());
  }

 protected:
  Status reconstruct(bool, uint64_t*) override { return Status::ok(); }
  Status reconstruct_tiles(int, uint64_t*) override { return Status::ok(); }
  Status decode_tiles(int, bool, const uint8_t*, size_t, size_t, bool) override { return failure_; }

 private:
  Status failure_;
};

// The backend failing while it decodes the tiles is Failed (the element
// stops with an error), not Corrupt (a dropped packet and a keyframe
// request that could not help); a packet the tile decoder refuses is
// Corrupt. Both name the cause.
TEST(DeltaV4Entropy, BackendFailureIsFailedNotCorrupt) {
  const ImageDesc desc{PixelFormat::RGBA, 40, 20};
  const std::vector<uint8_t> p = encode_v4(make_clip(desc, 1, 5), 2, 0)[0];
  std::string err;
  DecoderFailingTiles cuda(desc, Status::error(StatusCode::CudaError,
                                               "lanes: an illegal memory access was encountered"));
  EXPECT_EQ(cuda.decode(p.data(), p.size(), &err), DeltaDecodeResult::Failed);
  EXPECT_EQ(err, "delta packet: lanes: an illegal memory access was encountered");
  DecoderFailingTiles memory(desc, Status::error(StatusCode::OutOfMemory, "out of memory"));
  EXPECT_EQ(memory.decode(p.data(), p.size(), &err), DeltaDecodeResult::Failed);
  DecoderFailingTiles packet(desc, Status::invalid("v4 payload: lane 3 overruns its stream"));
  EXPECT_EQ(packet.decode(p.data(), p.size(), &err), DeltaDecodeResult::Corrupt);
  EXPECT_EQ(err, "delta packet: v4 payload: lane 3 overruns its stream");
}

// The quantiser byte that starts the payload may not exceed the header's
// threshold (the bound the stream promises).
TEST(DeltaV4Entropy, QuantiserAboveTheThresholdIsRejected) {
  const ImageDesc desc{PixelFormat::RGB, 40, 20};
  const auto clip = make_clip(desc, 1, 4);
  std::vector<uint8_t> p = encode_v4(clip, 4, 0)[0];
  ASSERT_EQ(p[7], 4);
  ASSERT_EQ(p[kDeltaHeaderSize], 2);
  p[kDeltaHeaderSize] = 5;
  testing_support::reseal_delta_packet(p.data(), p.size());
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  std::string err;
  EXPECT_EQ(dec->decode(p.data(), p.size(), &err), DeltaDecodeResult::Corrupt);
  EXPECT_EQ(err, "delta packet: v4 payload: quantiser 5 above the threshold 4");
}

TEST(DeltaV4Entropy, InvalidTablesAndDirectoriesNameTheCause) {
  const ImageDesc desc{PixelFormat::GRAY8, 64, 16};  // one tile, one lane
  const DeltaLayout l = layout_of(desc);
  std::unique_ptr<DeltaTileEntropy> e;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &e).is_ok());
  e->set_scaled_tables(false);  // tables without a shift, as packets without flag bit 7
  std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
  auto decode = [&](const std::vector<uint8_t>& data, bool key, size_t coded) {
    const Status s = e->decode(0, key, data.data(), data.size(), coded, symbols.data(),
                               modes.data());
    return s.message();
  };
  EXPECT_EQ(decode({}, true, 1024), "v4 payload: truncated tables");
  // Context 0 announcing 300 entries (9 bits: 300 = 0b100101100).
  std::vector<uint8_t> big = {0x2c, 0x01};
  EXPECT_EQ(decode(big, true, 1024), "v4 payload: table 0 has 300 entries, more than its alphabet");
  // Context 0 with one entry of frequency 7 (gamma(8) = 000 1 000).
  std::vector<uint8_t> sum = {0x01, 0x10, 0x00};
  EXPECT_EQ(decode(sum, true, 1024), "v4 payload: frequencies of table 0 add up to 7");
  // Valid empty tables (22 x 9 zero bits = 25 bytes) then an empty directory.
  ASSERT_EQ(kDeltaContexts, 22);
  std::vector<uint8_t> tables(25, 0);
  EXPECT_EQ(decode(tables, true, 1024), "v4 payload: truncated lane directory");
  std::vector<uint8_t> no_lane = tables;
  no_lane.push_back(0);
  EXPECT_EQ(decode(no_lane, true, 1024), "v4 payload: keyframe without lane 0");
  EXPECT_EQ(decode(no_lane, false, 0), "");  // a delta frame skipping everything
  EXPECT_EQ(modes[0], kDeltaSkip);
  EXPECT_EQ(decode(no_lane, false, 1024),
            "v4 payload: the lanes code 0 symbols, the header says 1024");
  std::vector<uint8_t> pad = tables;
  pad.push_back(0x02);
  EXPECT_EQ(decode(pad, false, 0), "v4 payload: lane bits beyond the last lane");
  std::vector<uint8_t> lane = tables;
  lane.insert(lane.end(), {0x01, 0x04, 0x00, 1, 2, 3, 4});
  EXPECT_EQ(decode(lane, false, 0), "v4 payload: lane 0 shorter than its states");
  lane[lane.size() - 6] = 0x09;
  EXPECT_EQ(decode(lane, false, 0), "v4 payload: lane sizes add up to 9 bytes but 4 follow");
  lane.insert(lane.end(), {5, 6, 7, 8});
  lane[lane.size() - 10] = 0x08;
  EXPECT_EQ(decode(lane, false, 0), "v4 payload: lane 0 is damaged");  // no mode table
}

// Scaled tables (flag bit 7): after each sent table's size, 4 bits of
// shift s (at most 12), then each frequency divided by 2^s; they must still
// add up to 4096.
TEST(DeltaV4Entropy, ScaledTablesNameTheirShiftAndAddUp) {
  const ImageDesc desc{PixelFormat::GRAY8, 64, 16};
  const DeltaLayout l = layout_of(desc);
  std::unique_ptr<DeltaTileEntropy> e;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &e).is_ok());
  ASSERT_TRUE(e->scaled_tables());  // what encoders write
  std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
  // Bit fields, least significant bit first, as the tables are written.
  auto pack = [](std::initializer_list<std::pair<uint32_t, int>> fields) {
    std::vector<uint8_t> out;
    size_t bit = 0;
    for (const auto& [v, n] : fields)
      for (int i = 0; i < n; i++, bit++) {
        if (bit / 8 >= out.size())
          out.push_back(0);
        out[bit / 8] |= static_cast<uint8_t>(((v >> i) & 1u) << (bit % 8));
      }
    return out;
  };
  auto decode = [&](const std::vector<uint8_t>& data) {
    return e->decode(0, true, data.data(), data.size(), 1024, symbols.data(), modes.data())
        .message();
  };
  // gamma(g) for g = 2: one zero, the top one, the low bit 0 ("0 1 0");
  // for g = 3: "0 1 1".
  EXPECT_EQ(decode(pack({{1, 9}, {13, 4}})), "v4 payload: table 0 has scale shift 13, beyond 12");
  EXPECT_EQ(decode(pack({{1, 9}, {12, 4}, {0, 1}, {1, 1}, {1, 1}})),  // frequency 2 at scale 1
            "v4 payload: bad frequency in table 0");
  EXPECT_EQ(decode(pack({{2, 9}, {10, 4}, {0, 1}, {1, 1}, {0, 1}, {0, 1}, {1, 1}, {0, 1}})),
            "v4 payload: frequencies of table 0 add up to 2048");  // 1 + 1 at 2^10
  // The same two entries at 2^11 add up: the other 21 contexts empty, then
  // the directory.
  std::vector<uint8_t> two = pack({{2, 9}, {11, 4}, {0, 1}, {1, 1}, {0, 1}, {0, 1}, {1, 1},
                                   {0, 1}, {0, 21 * 9}});
  EXPECT_EQ(decode(two), "v4 payload: truncated lane directory");
  // Four empty tables and a fifth of one entry end at bit 45: its shift
  // would run past the sixth byte.
  EXPECT_EQ(decode(pack({{0, 36}, {1, 9}})), "v4 payload: truncated tables");
}

// Both table forms decode, each as its packets say; the scaled form is the
// smaller stream (on a clip with few values in some contexts).
TEST(DeltaV4Stream, ScaledAndUnscaledTablesBothDecode) {
  const ImageDesc desc{PixelFormat::I420, 160, 96};
  const DeltaLayout l = layout_of(desc);
  const auto clip = make_clip(desc, 6, 21);
  size_t bytes[2] = {};
  for (bool scaled : {false, true}) {
    std::unique_ptr<DeltaTileEntropy> tiles;
    ASSERT_TRUE(DeltaTileEntropy::create(l, &tiles).is_ok());
    tiles->set_scaled_tables(scaled);
    HostImage ref(desc);
    std::unique_ptr<DeltaDecoder> dec;
    ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
    for (size_t n = 0; n < clip.size(); n++) {
      DeltaIntra intra;
      intra.keyframe = n == 0;
      const size_t coded = delta_tiles_encode_cpu(l, clip[n].view(), ref.view(), 4, intra,
                                                  symbols.data(), modes.data());
      const std::vector<uint8_t> packet =
          packet_from_tiles(l, *tiles, n == 0, static_cast<uint32_t>(n), 4, coded,
                            symbols.data(), modes.data(), ref.view());
      ASSERT_FALSE(packet.empty());
      EXPECT_EQ((packet[5] & 0x80) != 0, scaled);
      bytes[scaled] += packet.size();
      std::string err;
      ASSERT_EQ(dec->decode(packet.data(), packet.size(), &err), DeltaDecodeResult::Frame)
          << "scaled " << scaled << " frame " << n << ": " << err;
      EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), ref.view()));
    }
  }
  EXPECT_LT(bytes[1], bytes[0]);
}

// A context's table may be the previous frame's (9 bits: 511) where that
// codes the frame in fewer bits; a keyframe forgets them, a decoder with
// none refuses the reuse, and a reused table must fit the frame's alphabet.
TEST(DeltaV4Entropy, TablesAreReusedFromThePreviousFrameWhenCheaper) {
  const ImageDesc desc{PixelFormat::I420, 160, 96};
  const DeltaLayout l = layout_of(desc);
  const auto clip = make_clip(desc, 3, 5);
  HostImage ref(desc);
  std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
  std::unique_ptr<DeltaTileEntropy> enc, dec;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &enc).is_ok());
  ASSERT_TRUE(DeltaTileEntropy::create(l, &dec).is_ok());
  auto tables_reused = [](const std::vector<uint8_t>& p) {
    int reused = 0;
    for (int ctx = 0; ctx < kDeltaContexts; ctx++) {
      // Only the leading counts are read: a reused table has no frequencies.
      uint32_t n = 0;
      for (int b = 0; b < 9; b++) n |= ((p[(ctx * 9 + b) / 8] >> ((ctx * 9 + b) % 8)) & 1u) << b;
      if (n != 511)
        return reused;
      reused++;
    }
    return reused;
  };
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<size_t> counts;
  std::vector<uint8_t> got_sym(l.frame_bytes), got_modes(l.tile_count());
  const int q = delta_quantiser_for(4);
  for (size_t n = 0; n < 3; n++) {
    const size_t coded = delta_tiles_encode_cpu(l, clip[n].view(), ref.view(), 4, {n == 0, 0, 0},
                                                symbols.data(), modes.data());
    std::vector<uint8_t> p;
    ASSERT_TRUE(enc->encode(q, n == 0, symbols.data(), modes.data(), &p).is_ok());
    const Status s = dec->decode(q, n == 0, p.data(), p.size(), coded, got_sym.data(),
                                 got_modes.data());
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_EQ(got_modes, modes);
    payloads.push_back(p);
    counts.push_back(coded);
  }
  // The same symbols again: every table is the previous frame's.
  std::vector<uint8_t> again;
  ASSERT_TRUE(enc->encode(q, false, symbols.data(), modes.data(), &again).is_ok());
  EXPECT_EQ(tables_reused(again), kDeltaContexts);
  EXPECT_EQ(tables_reused(payloads[0]), 0);  // a keyframe
  // A decoder that saw no frame refuses a reused table ...
  std::unique_ptr<DeltaTileEntropy> fresh;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &fresh).is_ok());
  const size_t coded = delta_coded_symbols(l, modes.data());
  EXPECT_EQ(fresh->decode(q, false, again.data(), again.size(), coded, got_sym.data(),
                          got_modes.data())
                .message(),
            "v4 payload: table 0 reused, but there is none to reuse");
  // ... and so does one whose last frame was a keyframe of no such context
  // after a reset.
  dec->reset();
  EXPECT_FALSE(dec->decode(q, false, again.data(), again.size(), coded, got_sym.data(),
                           got_modes.data())
                   .is_ok());
  // A table reused under a coarser quantiser whose alphabet it exceeds.
  std::unique_ptr<DeltaTileEntropy> d2;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &d2).is_ok());
  ASSERT_TRUE(d2->decode(q, true, payloads[0].data(), payloads[0].size(), l.frame_bytes,
                         got_sym.data(), got_modes.data())
                  .is_ok());
  ASSERT_TRUE(d2->decode(q, false, payloads[1].data(), payloads[1].size(), counts[1],
                         got_sym.data(), got_modes.data())
                  .is_ok());
  std::vector<uint8_t> all_reused((kDeltaContexts * 9 + 7) / 8, 0xff);
  all_reused.push_back(0);  // no lane
  EXPECT_EQ(d2->decode(127, false, all_reused.data(), all_reused.size(), 0, got_sym.data(),
                       got_modes.data())
                .message(),
            "v4 payload: reused table 0 has more entries than its alphabet");
  // A stream with intra refresh reuses none.
  EXPECT_EQ(dec->decode(q, false, again.data(), again.size(), coded, got_sym.data(),
                        got_modes.data(), false)
                .message(),
            "v4 payload: table 0 reused in a stream with intra refresh");
}

// The histograms counted row by row in the tile pass (count_frame, then
// count_row from delta_tiles_encode_cpu's row_done, on the thread that
// coded the row) code the frame to the bytes encode() makes alone, in any
// order of the rows and from any workers; counts set up for another frame
// (here: the other keyframe flag) are not taken. row_done comes once a
// tile row, from a worker of the pool, with the row's symbols final.
TEST(DeltaV4Entropy, RowsCountedInTheTilePassCodeAsEncodeAlone) {
  const ImageDesc desc{PixelFormat::I420, 200, 96};
  const DeltaLayout l = layout_of(desc);
  int rows = 0;
  for (int i = 0; i < l.n_planes; i++) rows += l.planes[i].tiles_y;
  const int workers = cpu_worker_count();
  for (int threshold : {0, 4}) {
    SCOPED_TRACE("threshold " + std::to_string(threshold));
    const auto clip = make_clip(desc, 4, 11);
    HostImage ref(desc);
    std::vector<uint8_t> symbols(l.frame_bytes), modes(l.tile_count());
    // alone: encode() counts; in_pass: count_row from the tile pass;
    // reversed: count_row in reverse order from every worker in turn;
    // other: counts set up as a keyframe's on delta frames and the reverse.
    std::unique_ptr<DeltaTileEntropy> alone, in_pass, reversed, other;
    for (auto* e : {&alone, &in_pass, &reversed, &other})
      ASSERT_TRUE(DeltaTileEntropy::create(l, e).is_ok());
    const int q = delta_quantiser_for(threshold);
    for (size_t n = 0; n < clip.size(); n++) {
      const bool key = n == 0;
      in_pass->count_frame(q, key, symbols.data(), modes.data());
      std::vector<int> calls(rows, 0);
      std::vector<std::vector<uint8_t>> row_bytes(rows);
      std::atomic<bool> bad_worker{false};
      // Where tile row r's symbols lie (all planes' rows in order).
      const auto row_span = [&](int r, size_t* at, size_t* size) {
        int i = 0;
        while (r >= l.planes[i].tiles_y) r -= l.planes[i++].tiles_y;
        const DeltaPlaneLayout& p = l.planes[i];
        *at = l.plane_offset[i] + static_cast<size_t>(r) * kDeltaTileH * p.row_bytes;
        *size = static_cast<size_t>(p.tile_height(r)) * p.row_bytes;
      };
      delta_tiles_encode_cpu(l, clip[n].view(), ref.view(), threshold, {key, 0, 0},
                             symbols.data(), modes.data(), nullptr, nullptr, nullptr,
                             [&](int r, int worker) {
                               calls[r]++;
                               if (worker < 0 || worker >= workers)
                                 bad_worker = true;
                               size_t at, size;
                               row_span(r, &at, &size);
                               row_bytes[r].assign(symbols.begin() + at,
                                                   symbols.begin() + at + size);
                               in_pass->count_row(r, worker);
                             });
      EXPECT_EQ(calls, std::vector<int>(rows, 1));
      EXPECT_FALSE(bad_worker);
      for (int r = 0; r < rows; r++) {
        size_t at, size;
        row_span(r, &at, &size);
        ASSERT_EQ(row_bytes[r], std::vector<uint8_t>(symbols.begin() + at,
                                                     symbols.begin() + at + size))
            << "row " << r << " changed after row_done";
      }
      reversed->count_frame(q, key, symbols.data(), modes.data());
      for (int r = rows - 1; r >= 0; r--) reversed->count_row(r, r % workers);
      other->count_frame(q, !key, symbols.data(), modes.data());
      for (int r = 0; r < rows; r++) other->count_row(r, 0);
      std::vector<uint8_t> want, got;
      ASSERT_TRUE(alone->encode(q, key, symbols.data(), modes.data(), &want).is_ok());
      ASSERT_TRUE(in_pass->encode(q, key, symbols.data(), modes.data(), &got).is_ok());
      EXPECT_EQ(got, want) << "frame " << n << ": counted in the tile pass";
      got.clear();  // encode() appends
      ASSERT_TRUE(reversed->encode(q, key, symbols.data(), modes.data(), &got).is_ok());
      EXPECT_EQ(got, want) << "frame " << n << ": rows counted in reverse";
      got.clear();
      ASSERT_TRUE(other->encode(q, key, symbols.data(), modes.data(), &got).is_ok());
      EXPECT_EQ(got, want) << "frame " << n << ": counted for another frame";
    }
  }
}

// A lane whose only coded tile is one byte wide codes more masks than
// symbols: the encoder's room for its stream counts the masks (it wrote
// into the next lane's room, and the decoder refused the packet).
TEST(DeltaV4Entropy, ANarrowLoneEdgeTileFitsItsLane) {
  const DeltaLayout l = layout_of({PixelFormat::GRAY8, 513, 2048});
  std::vector<uint8_t> sym(l.frame_bytes, 0), modes(l.tile_count(), kDeltaSkip);
  const int tiles_x = l.planes[0].tiles_x;  // 9: the last 1 byte wide
  size_t coded = 0;
  for (int ty = 0; ty < l.planes[0].tiles_y; ty++)
    for (int tx = 0; tx < tiles_x; tx++) {
      const bool lone = tx == tiles_x - 1 && ty == 50;
      if (tx == tiles_x - 1 && !lone)
        continue;
      modes[ty * tiles_x + tx] = ((ty + tx) & 1) ? kDeltaTemporal : kDeltaSpatial;
      for (int y = 0; y < 16; y++)
        for (int x = 0; x < l.planes[0].tile_width(tx); x++)
          sym[static_cast<size_t>(ty * 16 + y) * 513 + tx * 64 + x] =
              static_cast<uint8_t>(lone ? 102 + 2 * y : (x < 16 ? 100 : 0));
      coded += static_cast<size_t>(l.planes[0].tile_width(tx)) * 16;
    }
  std::unique_ptr<DeltaTileEntropy> enc, dec;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &enc).is_ok());
  ASSERT_TRUE(DeltaTileEntropy::create(l, &dec).is_ok());
  std::vector<uint8_t> out;
  ASSERT_TRUE(enc->encode(0, false, sym.data(), modes.data(), &out).is_ok());
  std::vector<uint8_t> got_sym(l.frame_bytes, 7), got_modes(modes.size(), 9);
  const Status s = dec->decode(0, false, out.data(), out.size(), coded, got_sym.data(),
                               got_modes.data());
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(got_modes, modes);
  for (size_t t = 0; t < modes.size(); t++) {
    if (modes[t] == kDeltaSkip)
      continue;
    const int ty = static_cast<int>(t) / tiles_x, tx = static_cast<int>(t) % tiles_x;
    for (int y = 0; y < 16; y++)
      for (int x = 0; x < l.planes[0].tile_width(tx); x++) {
        const size_t i = static_cast<size_t>(ty * 16 + y) * 513 + tx * 64 + x;
        ASSERT_EQ(got_sym[i], sym[i]) << "tile " << tx << "," << ty;
      }
  }
}

// Intra refresh (#18): a decoder that joins a stream mid-way, or loses a
// packet, rebuilds every tile from the sweep of spatially coded bands and is
// whole again within one period, without a keyframe; from then on every
// frame is within the threshold and passes the checksum.
namespace {
std::vector<std::vector<uint8_t>> encode_refresh(const std::vector<HostImage>& clip, int threshold,
                                                 int period) {
  return encode_v4(clip, threshold, 0, period);
}
}  // namespace

TEST(DeltaV4Refresh, JoiningMidStreamIsWholeWithinOneSweep) {
  constexpr int kPeriod = 8, kThreshold = 4;
  for (PixelFormat f : {PixelFormat::I420, PixelFormat::RGBA, PixelFormat::NV12}) {
    const ImageDesc desc{f, 150, 131};  // 9 tile rows: bands of 1 or 2 rows, and empty ones
    const auto clip = make_clip(desc, 40, 3);
    const auto packets = encode_refresh(clip, kThreshold, kPeriod);
    for (size_t join : {size_t(5), size_t(13), size_t(22)}) {
      std::unique_ptr<DeltaDecoder> dec;
      ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
      size_t first = 0;
      for (size_t n = join; n < clip.size(); n++) {
        std::string err;
        const DeltaDecodeResult r = dec->decode(packets[n].data(), packets[n].size(), &err);
        if (first == 0) {
          if (r == DeltaDecodeResult::Refreshing) {
            EXPECT_EQ(err.rfind("rebuilding by intra refresh: ", 0), 0u) << err;
            continue;
          }
          ASSERT_EQ(r, DeltaDecodeResult::Frame) << "frame " << n << ": " << err;
          EXPECT_TRUE(dec->refreshed());
          first = n;
        } else {
          ASSERT_EQ(r, DeltaDecodeResult::Frame) << "frame " << n << ": " << err;
          EXPECT_FALSE(dec->refreshed());
        }
        EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()), kThreshold)
            << format_info(f).name << " frame " << n;
      }
      EXPECT_GT(first, 0u) << format_info(f).name << " joined at " << join;
      EXPECT_LE(first, join + kPeriod - 1) << format_info(f).name << " joined at " << join;
    }
  }
}

TEST(DeltaV4Refresh, LossAndDamageRecoverWithoutAKeyframe) {
  constexpr int kPeriod = 6;
  const ImageDesc desc{PixelFormat::I420, 96, 80};
  const auto clip = make_clip(desc, 30, 9);
  const auto packets = encode_refresh(clip, 0, kPeriod);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  std::vector<DeltaDecodeResult> got(clip.size(), DeltaDecodeResult::Failed);
  for (size_t n = 0; n < clip.size(); n++) {
    if (n == 8)
      continue;  // lost
    std::vector<uint8_t> p = packets[n];
    if (n == 17) {  // damaged behind valid CRCs
      p[p.size() - 3] ^= 0x5a;
      testing_support::reseal_delta_packet(p.data(), p.size());
    }
    std::string err;
    got[n] = dec->decode(p.data(), p.size(), &err);
    EXPECT_NE(got[n], DeltaDecodeResult::NeedKeyframe) << "frame " << n << ": " << err;
    if (got[n] == DeltaDecodeResult::Frame) {
      EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), clip[n].view()))
          << "frame " << n;
    }
  }
  EXPECT_EQ(got[7], DeltaDecodeResult::Frame);
  EXPECT_EQ(got[9], DeltaDecodeResult::Refreshing);  // the gap
  EXPECT_EQ(got[17], DeltaDecodeResult::Corrupt);
  for (size_t n : {size_t(9 + kPeriod - 1), size_t(18 + kPeriod - 1)})
    EXPECT_EQ(got[n], DeltaDecodeResult::Frame) << "frame " << n;
  EXPECT_EQ(got.back(), DeltaDecodeResult::Frame);
}

// Without keyframes after the first, the packets have no keyframe spikes:
// the largest refresh frame is a fraction of a keyframe; and a stream
// without refresh still needs a keyframe after a loss.
TEST(DeltaV4Refresh, NoKeyframeSpikesAndPlainStreamsStillNeedKeyframes) {
  const ImageDesc desc{PixelFormat::RGBA, 160, 128};
  const auto clip = make_clip(desc, 20, 21);
  const auto refresh = encode_refresh(clip, 4, 10);
  size_t largest = 0;
  for (size_t n = 1; n < refresh.size(); n++) largest = std::max(largest, refresh[n].size());
  EXPECT_LT(largest * 2, refresh[0].size());
  EXPECT_EQ(refresh[3][5] & 8, 8);  // the refresh flag
  const auto plain = encode_v4(clip, 4, 0);
  EXPECT_EQ(plain[3][5] & 8, 0);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  std::string err;
  EXPECT_EQ(dec->decode(plain[3].data(), plain[3].size(), &err), DeltaDecodeResult::NeedKeyframe);
  EXPECT_EQ(err, "waiting for a keyframe");
}

// The CUDA prediction stage gives the CPU's modes, symbols and
// reconstruction, on keyframes and delta frames, every plane layout, odd
// sizes (clipped tiles) and odd pitches.
class DeltaV4Cuda : public ::testing::TestWithParam<int> {};

TEST_P(DeltaV4Cuda, TilesEqualTheCpu) {
  SKIP_WITHOUT_GPU();
  const int threshold = GetParam();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  std::set<int> chosen;  // the predictors the keyframes chose, all tiles
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::BGR, PixelFormat::GRAY8,
                        PixelFormat::I420, PixelFormat::NV12, PixelFormat::Y444}) {
    for (const auto& size : {std::pair<int, int>{173, 97}, {1, 1}, {64, 16}, {333, 211}}) {
      const ImageDesc desc{f, size.first, size.second};
      const DeltaLayout l = layout_of(desc);
      const auto clip = make_clip(desc, 4, 3 + threshold);
      HostImage ref(desc);
      testing_support::DeviceImage cur_dev(desc, 3), ref_dev(desc, 5);
      DeviceBuffer sym_dev, mode_dev;
      ASSERT_TRUE(sym_dev.allocate(l.frame_bytes).is_ok());
      ASSERT_TRUE(mode_dev.allocate(l.tile_count()).is_ok());
      std::vector<uint8_t> sym(l.frame_bytes), mode(l.tile_count());
      std::vector<uint8_t> sym_gpu(l.frame_bytes), mode_gpu(l.tile_count());
      // The first keyframe chooses its tiles' predictors (as the encoders
      // do), the second codes them all with MED (none recorded).
      DeviceBuffer pred_dev;
      ASSERT_TRUE(pred_dev.allocate(l.tile_count()).is_ok());
      std::vector<uint8_t> pred(l.tile_count()), pred_gpu(l.tile_count());
      for (size_t n = 0; n < clip.size(); n++) {
        const bool key = n == 0 || n == 2;
        const bool choose = n == 0;
        ASSERT_TRUE(cur_dev.upload(clip[n].view(), stream.get()).is_ok());
        if (n == 0) {
          ASSERT_TRUE(ref_dev.upload(ref.view(), stream.get()).is_ok());
        }
        // Frames 1 and 3 with an intra-refresh band (a sweep of 3); the
        // first keyframe behind the dead zone of one before delta frames,
        // the second behind the whole bound (a stream of keyframes only).
        const DeltaIntra intra{key, 3, static_cast<int>(n % 3),
                               n == 0 ? delta_keyframe_dead_zone(threshold) : -1};
        delta_tiles_encode_cpu(l, clip[n].view(), ref.view(), threshold, intra, sym.data(),
                               mode.data(), nullptr, choose ? pred.data() : nullptr);
        const Status s = delta_tiles_encode_cuda(l, cur_dev.view(), ref_dev.view(), threshold,
                                                 intra, sym_dev.bytes(), mode_dev.bytes(),
                                                 stream.get(), nullptr,
                                                 choose ? pred_dev.bytes() : nullptr);
        ASSERT_TRUE(s.is_ok()) << s.message();
        HostImage got(desc);
        ASSERT_TRUE(ref_dev.download(got.view(), stream.get()).is_ok());
        ASSERT_TRUE(
            copy_bytes_async(sym_gpu.data(), sym_dev.get(), sym.size(), stream.get()).is_ok());
        ASSERT_TRUE(
            copy_bytes_async(mode_gpu.data(), mode_dev.get(), mode.size(), stream.get()).is_ok());
        if (choose) {
          ASSERT_TRUE(
              copy_bytes_async(pred_gpu.data(), pred_dev.get(), pred.size(), stream.get()).is_ok());
        }
        ASSERT_TRUE(stream.synchronize().is_ok());
        const std::string where = std::string(format_info(f).name) + " " +
                                  std::to_string(size.first) + "x" + std::to_string(size.second) +
                                  " frame " + std::to_string(n);
        if (choose) {
          EXPECT_EQ(pred, pred_gpu) << where;
          chosen.insert(pred.begin(), pred.end());
        }
        EXPECT_EQ(mode, mode_gpu) << where;
        EXPECT_EQ(sym, sym_gpu) << where;
        EXPECT_TRUE(testing_support::bytes_equal(got.view(), ref.view())) << where;
      }
    }
  }
  // Random keyframes: most predictors win somewhere below T = 255 (where
  // every error is within the bound and MED wins every tie), the three that
  // wait for the upper right among them.
  if (threshold < 255) {
    EXPECT_GE(chosen.size(), 6u);
    for (int p : {5, 6, 7}) EXPECT_EQ(chosen.count(p), 1u) << "predictor " << p;
  }
}

// The decoding kernel rebuilds, from modes and symbols, what the CPU decoder
// rebuilds.
TEST_P(DeltaV4Cuda, DecodingEqualsTheCpu) {
  SKIP_WITHOUT_GPU();
  const int threshold = GetParam();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8, PixelFormat::I420,
                        PixelFormat::NV12}) {
    for (const auto& size : {std::pair<int, int>{173, 97}, {1, 1}, {333, 211}}) {
      const ImageDesc desc{f, size.first, size.second};
      const DeltaLayout l = layout_of(desc);
      const auto clip = make_clip(desc, 3, 9 + threshold);
      HostImage enc_ref(desc), cpu_ref(desc);
      testing_support::DeviceImage gpu_ref(desc, 7);
      FrameSymbols syms;
      ASSERT_TRUE(syms.allocate(l).is_ok());
      auto& [sym, mode, sym_dev, mode_dev] = syms;
      ASSERT_TRUE(gpu_ref.upload(cpu_ref.view(), stream.get()).is_ok());
      // The keyframe with its tiles' predictors (uploaded beside the
      // symbols), the delta frames without.
      DeviceBuffer pred_dev;
      ASSERT_TRUE(pred_dev.allocate(l.tile_count()).is_ok());
      std::vector<uint8_t> pred(l.tile_count());
      for (size_t n = 0; n < clip.size(); n++) {
        const bool key = n == 0;
        delta_tiles_encode_cpu(l, clip[n].view(), enc_ref.view(), threshold, {key, 0, 0},
                               sym.data(), mode.data(), nullptr, key ? pred.data() : nullptr);
        delta_tiles_decode_cpu(l, sym.data(), mode.data(), delta_quantiser_for(threshold),
                               cpu_ref.view(), nullptr, key ? pred.data() : nullptr);
        ASSERT_TRUE(syms.upload(stream.get()).is_ok());
        ASSERT_TRUE(
            copy_bytes_async(pred_dev.get(), pred.data(), pred.size(), stream.get()).is_ok());
        const Status s = delta_tiles_decode_cuda(
            l, sym_dev.bytes(), mode_dev.bytes(), delta_quantiser_for(threshold), gpu_ref.view(),
            stream.get(), nullptr, nullptr, key ? pred_dev.bytes() : nullptr);
        ASSERT_TRUE(s.is_ok()) << s.message();
        HostImage got(desc);
        ASSERT_TRUE(gpu_ref.download(got.view(), stream.get()).is_ok());
        ASSERT_TRUE(stream.synchronize().is_ok());
        EXPECT_TRUE(testing_support::bytes_equal(cpu_ref.view(), enc_ref.view()));
        const std::string where = std::string(format_info(f).name) + " " +
                                  std::to_string(size.first) + "x" +
                                  std::to_string(size.second) + " frame " + std::to_string(n);
        EXPECT_TRUE(testing_support::bytes_equal(got.view(), cpu_ref.view())) << where;
        if (key) {
          // The keyframe's symbols again with every predictor in turn, tile
          // t with predictor (t + r) mod 8: the decoders are the format's
          // whatever the encoder chose (rebuilding other bytes than the
          // encoder's, the same on both).
          for (int r = 0; r < kDeltaSpatialPredictors; r++) {
            std::vector<uint8_t> forced(l.tile_count());
            for (size_t t = 0; t < forced.size(); t++)
              forced[t] = static_cast<uint8_t>((t + r) % kDeltaSpatialPredictors);
            HostImage cpu_forced(desc), gpu_forced_host(desc);
            testing_support::DeviceImage gpu_forced(desc, 3);
            delta_tiles_decode_cpu(l, sym.data(), mode.data(), delta_quantiser_for(threshold),
                                   cpu_forced.view(), nullptr, forced.data());
            ASSERT_TRUE(copy_bytes_async(pred_dev.get(), forced.data(), forced.size(),
                                         stream.get())
                            .is_ok());
            ASSERT_TRUE(delta_tiles_decode_cuda(l, sym_dev.bytes(), mode_dev.bytes(),
                                                delta_quantiser_for(threshold), gpu_forced.view(),
                                                stream.get(), nullptr, nullptr, pred_dev.bytes())
                            .is_ok());
            ASSERT_TRUE(gpu_forced.download(gpu_forced_host.view(), stream.get()).is_ok());
            ASSERT_TRUE(stream.synchronize().is_ok());
            EXPECT_TRUE(testing_support::bytes_equal(gpu_forced_host.view(), cpu_forced.view()))
                << where << " predictors rotated by " << r;
          }
        }
      }
    }
  }
}

// The GPU coder writes the CPU coder's bytes from the same modes and
// symbols (also with its lanes left apart in pinned memory that starts too
// small), and the GPU decoder decodes them (and damaged copies) as the CPU
// decoder does: keyframes, delta frames with tables reused or not, frames whose
// lanes are all absent, streams with intra refresh (no reuse), every plane
// layout, odd sizes and many lanes; and it refuses what the CPU refuses.
TEST_P(DeltaV4Cuda, CoderEqualsTheCpu) {
  SKIP_WITHOUT_GPU();
  const int threshold = GetParam();
  const int quantiser = delta_quantiser_for(threshold);
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8, PixelFormat::I420,
                        PixelFormat::NV12}) {
    for (const auto& size :
         {std::pair<int, int>{173, 97}, {1, 1}, {65, 17}, {333, 211}, {1280, 720}}) {
      if (size.first == 1280 && f != PixelFormat::RGBA && f != PixelFormat::NV12)
        continue;
      const ImageDesc desc{f, size.first, size.second};
      const DeltaLayout l = layout_of(desc);
      const auto clip = make_clip(desc, 7, 5 + threshold);
      std::unique_ptr<DeltaTileEntropy> cpu, cpu_dec, gpu_tables;
      std::unique_ptr<DeltaTileEntropyCuda> gpu, gpu_small;
      // The decoder with its tables where the device keeps them (shared
      // memory on sm_80 and sm_90) and in global memory.
      std::unique_ptr<DeltaTileDecoderCuda> gpu_decs[2];
      ASSERT_TRUE(DeltaTileEntropy::create(l, &cpu).is_ok());
      ASSERT_TRUE(DeltaTileEntropy::create(l, &cpu_dec).is_ok());
      ASSERT_TRUE(DeltaTileEntropy::create(l, &gpu_tables).is_ok());
      const Status made = DeltaTileEntropyCuda::create(l, &gpu);
      ASSERT_TRUE(made.is_ok()) << made.message();
      // A coder whose pinned room for the coded frame starts at 16 bytes:
      // frames that do not fit come down by a copy, and the room grows.
      ASSERT_TRUE(DeltaTileEntropyCuda::create(l, &gpu_small, 16).is_ok());
      ASSERT_TRUE(DeltaTileDecoderCuda::create(l, &gpu_decs[0]).is_ok());
      ASSERT_TRUE(DeltaTileDecoderCuda::create(l, &gpu_decs[1], true).is_ok());
      std::unique_ptr<DeltaTileEntropy> gpu_tables_global;
      ASSERT_TRUE(DeltaTileEntropy::create(l, &gpu_tables_global).is_ok());
      PinnedBuffer modes_host;
      ASSERT_TRUE(modes_host.allocate(l.tile_count()).is_ok());
      HostImage ref(desc);
      FrameSymbols syms;
      ASSERT_TRUE(syms.allocate(l).is_ok());
      auto& [sym, mode, sym_dev, mode_dev] = syms;
      for (size_t n = 0; n < clip.size(); n++) {
        const bool key = n == 0 || n == 4;
        // Frame 3 repeats frame 2: every tile skipped, every lane absent.
        const HostImage& frame = clip[n == 3 ? 2 : n];
        delta_tiles_encode_cpu(l, frame.view(), ref.view(), threshold, {key, 0, 0}, sym.data(),
                               mode.data());
        ASSERT_TRUE(syms.upload(stream.get()).is_ok());
        const bool reuse = n < 5;  // then as a stream with intra refresh
        std::vector<uint8_t> a, b;
        ASSERT_TRUE(cpu->encode(quantiser, key, sym.data(), mode.data(), &a, reuse).is_ok());
        const Status s = gpu->encode(quantiser, key, sym_dev.bytes(), mode_dev.bytes(),
                                     stream.get(), &b, reuse);
        ASSERT_TRUE(s.is_ok()) << s.message();
        EXPECT_EQ(a, b) << format_info(f).name << " " << size.first << "x" << size.second
                        << " frame " << n << " (" << a.size() << " vs " << b.size() << " bytes)";
        // The same in two steps, the lanes left apart with their CRC.
        EXPECT_TRUE(codes_apart_as(*gpu_small, quantiser, key, reuse, syms, stream.get(), a))
            << "frame " << n;
        // The GPU decoder decodes it as the CPU decoder does; frames that
        // reuse no table also with one byte flipped (the same verdict and
        // message).
        const size_t coded = delta_coded_symbols(l, mode.data());
        for (int global = 0; global < 2; global++)
        for (int damage = 0; damage < (reuse ? 1 : 8); damage++) {
          SCOPED_TRACE(global ? "tables in global memory" : "tables where the device keeps them");
          DeltaTileDecoderCuda& gpu_dec = *gpu_decs[global];
          DeltaTileEntropy& dec_tables = global ? *gpu_tables_global : *gpu_tables;
          std::vector<uint8_t> payload = a;
          if (damage)
            payload[payload.size() - 1 - (damage * 7919u) % payload.size()] ^= 0x5a;
          std::vector<uint8_t> sym_cpu(l.frame_bytes, 7), mode_cpu(l.tile_count(), 9);
          std::vector<uint8_t> sym_gpu(l.frame_bytes, 7), mode_gpu(l.tile_count(), 9);
          ASSERT_TRUE(
              copy_bytes_async(sym_dev.get(), sym_gpu.data(), sym.size(), stream.get()).is_ok());
          const Status dc = cpu_dec->decode(quantiser, key, payload.data(), payload.size(), coded,
                                            sym_cpu.data(), mode_cpu.data(), reuse);
          const Status dg = gpu_dec.decode(dec_tables, quantiser, key, payload.data(),
                                            payload.size(), coded, sym_dev.bytes(),
                                            mode_dev.bytes(), modes_host.bytes(), stream.get(),
                                            reuse);
          EXPECT_EQ(dc.message(), dg.message()) << "frame " << n << " damage " << damage;
          if (!damage) {
            ASSERT_TRUE(dc.is_ok()) << dc.message();
          }
          if (!dc.is_ok() || !dg.is_ok())
            continue;
          ASSERT_TRUE(
              copy_bytes_async(sym_gpu.data(), sym_dev.get(), sym.size(), stream.get()).is_ok());
          ASSERT_TRUE(stream.synchronize().is_ok());
          std::copy(modes_host.bytes(), modes_host.bytes() + l.tile_count(), mode_gpu.begin());
          EXPECT_EQ(mode_cpu, mode_gpu) << "frame " << n << " damage " << damage;
          EXPECT_EQ(sym_cpu, sym_gpu) << "frame " << n << " damage " << damage;
          if (!damage) {
            EXPECT_EQ(mode_cpu, mode) << "frame " << n;
          }
        }
      }
      // A symbol beyond the quantiser's alphabet: both refuse it alike.
      if (quantiser > 0 && l.frame_bytes > 1) {
        std::fill(mode.begin(), mode.end(), static_cast<uint8_t>(kDeltaSpatial));
        sym[0] = 255;
        sym[1] = 255;
        ASSERT_TRUE(syms.upload(stream.get()).is_ok());
        std::vector<uint8_t> a, b;
        const Status ca = cpu->encode(quantiser, false, sym.data(), mode.data(), &a);
        const Status cb =
            gpu->encode(quantiser, false, sym_dev.bytes(), mode_dev.bytes(), stream.get(), &b);
        EXPECT_FALSE(ca.is_ok());
        EXPECT_EQ(ca.message(), cb.message());
      }
    }
  }
}

// The GPU coder's lane places are the sizes before each lane summed, the
// total after the last, for lane counts around the one-block scan's 1 024
// threads (a thread then sums several lanes, as at 2160p: ~4 000); and a
// frame of more than 1 024 lanes codes to the CPU coder's bytes.
TEST(DeltaV4CudaCoder, ManyLanesArePlacedAndCodedAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  std::mt19937 rng(9);
  for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1023}, size_t{1024}, size_t{1025},
                   size_t{2049}, size_t{4050}}) {
    std::vector<uint32_t> sizes(std::max<size_t>(n, 1));
    for (uint32_t& v : sizes) v = rng() % 3 == 0 ? 0u : static_cast<uint32_t>(rng() % 5000);
    DeviceBuffer sizes_dev, offsets_dev;
    ASSERT_TRUE(sizes_dev.allocate(sizes.size() * 4).is_ok());
    ASSERT_TRUE(offsets_dev.allocate((n + 1) * 4).is_ok());
    ASSERT_TRUE(copy_bytes_async(sizes_dev.get(), sizes.data(), sizes.size() * 4, stream.get())
                    .is_ok());
    ASSERT_TRUE(delta_lanes_offsets_cuda(static_cast<const uint32_t*>(sizes_dev.get()), n,
                                         static_cast<uint32_t*>(offsets_dev.get()), stream.get())
                    .is_ok());
    std::vector<uint32_t> got(n + 1, 7);
    ASSERT_TRUE(copy_bytes_async(got.data(), offsets_dev.get(), (n + 1) * 4, stream.get()).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    uint32_t before = 0;
    for (size_t i = 0; i < n; i++) {
      ASSERT_EQ(got[i], before) << "lane " << i << " of " << n;
      before += sizes[i];
    }
    EXPECT_EQ(got[n], before) << "the total of " << n << " lanes";
  }
  // 4 096 x 520 RGBA: 32 lanes a tile row, 33 rows, 1 056 lanes.
  const ImageDesc desc{PixelFormat::RGBA, 4096, 520};
  const DeltaLayout l = layout_of(desc);
  std::unique_ptr<DeltaTileEntropy> cpu;
  std::unique_ptr<DeltaTileEntropyCuda> gpu;
  ASSERT_TRUE(DeltaTileEntropy::create(l, &cpu).is_ok());
  ASSERT_TRUE(DeltaTileEntropyCuda::create(l, &gpu).is_ok());
  ASSERT_GT(cpu->lanes().size(), 1024u);
  const auto clip = make_clip(desc, 2, 3);
  HostImage ref(desc);
  FrameSymbols syms;
  ASSERT_TRUE(syms.allocate(l).is_ok());
  for (size_t n = 0; n < clip.size(); n++) {
    const int q = delta_quantiser_for(4);
    delta_tiles_encode_cpu(l, clip[n].view(), ref.view(), 4, {n == 0, 0, 0}, syms.sym.data(),
                           syms.mode.data());
    ASSERT_TRUE(syms.upload(stream.get()).is_ok());
    std::vector<uint8_t> a;
    ASSERT_TRUE(cpu->encode(q, n == 0, syms.sym.data(), syms.mode.data(), &a).is_ok());
    EXPECT_TRUE(codes_apart_as(*gpu, q, n == 0, true, syms, stream.get(), a)) << "frame " << n;
  }
}

// Each piece's CRC is zlib's crc32 of those bytes, for sizes around the
// parts (256 bytes) and pieces (64 KB) a block joins, the last piece
// short or whole; pieces past the size are not written.
TEST(DeltaV4CudaCoder, CrcPiecesAreZlibsForEverySize) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  const size_t most = 5 * kDeltaCrcPieceBytes + 4099;
  std::vector<uint8_t> data(most);
  std::mt19937 rng(11);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  DeviceBuffer data_dev, size_dev, crcs_dev;
  const size_t max_pieces = most / kDeltaCrcPieceBytes + 1;
  ASSERT_TRUE(data_dev.allocate(most).is_ok());
  ASSERT_TRUE(size_dev.allocate(4).is_ok());
  ASSERT_TRUE(crcs_dev.allocate(max_pieces * 4).is_ok());
  ASSERT_TRUE(copy_bytes_async(data_dev.get(), data.data(), most, stream.get()).is_ok());
  for (size_t size : {size_t{1}, size_t{7}, size_t{255}, size_t{256}, size_t{257}, size_t{4095},
                      size_t{4096}, size_t{4097}, kDeltaCrcPieceBytes - 1, kDeltaCrcPieceBytes,
                      kDeltaCrcPieceBytes + 1, 3 * kDeltaCrcPieceBytes + 777, most}) {
    const uint32_t size32 = static_cast<uint32_t>(size);
    std::vector<uint32_t> got(max_pieces, 0x5a5a5a5au);
    ASSERT_TRUE(copy_bytes_async(crcs_dev.get(), got.data(), got.size() * 4, stream.get()).is_ok());
    ASSERT_TRUE(copy_bytes_async(size_dev.get(), &size32, 4, stream.get()).is_ok());
    ASSERT_TRUE(delta_crc_pieces_cuda(data_dev.bytes(), static_cast<const uint32_t*>(size_dev.get()),
                                      most, static_cast<uint32_t*>(crcs_dev.get()), stream.get())
                    .is_ok());
    ASSERT_TRUE(copy_bytes_async(got.data(), crcs_dev.get(), got.size() * 4, stream.get()).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    const size_t pieces = (size + kDeltaCrcPieceBytes - 1) / kDeltaCrcPieceBytes;
    for (size_t i = 0; i < max_pieces; i++) {
      if (i >= pieces) {
        EXPECT_EQ(got[i], 0x5a5a5a5au) << "piece " << i << " past " << size << " bytes";
        continue;
      }
      const size_t n = std::min(kDeltaCrcPieceBytes, size - i * kDeltaCrcPieceBytes);
      const uLong want = crc32(0L, data.data() + i * kDeltaCrcPieceBytes, static_cast<uInt>(n));
      EXPECT_EQ(got[i], static_cast<uint32_t>(want)) << "piece " << i << " of " << size << " bytes";
    }
  }
}

// The decoder keeps its tables in shared memory on the devices that offer
// a block that much (sm_80 and sm_90: 163 and 227 KB; sm_75, sm_86 and sm_89
// offer 64-99 KB and read them through the cache): on the GPU machine's
// H100 or H200 the shared path is the one its tests ran.
TEST(DeltaV4CudaDecoder, TablesInSharedMemoryOnHopper) {
  SKIP_WITHOUT_GPU();
  int device = 0;
  std::string name;
  ASSERT_TRUE(cuda_current_device(&device).is_ok());
  ASSERT_TRUE(cuda_device_name(device, &name).is_ok());
  if (name.find("H100") == std::string::npos && name.find("H200") == std::string::npos)
    GTEST_SKIP() << name << " is not an H100 or H200";
  EXPECT_TRUE(delta_lanes_decode_shared_tables_fit()) << name;
}

INSTANTIATE_TEST_SUITE_P(Thresholds, DeltaV4Cuda, ::testing::Values(0, 1, 10, 255),
                         [](const auto& info) { return "T" + std::to_string(info.param); });
