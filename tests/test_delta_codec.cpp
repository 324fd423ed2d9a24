// The delta codec's closed loop, packets and decoder state machine (CPU),
// for format 3 (compression rans, zstd, none) and format 4 (predictive):
// the error bound on every frame, exact round trips at threshold 0, and
// validation of damaged, truncated, reordered and lost packets. Format 4's
// own stages are tested in test_delta_v4.cpp.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "cudafx/delta.hpp"
#include "cudafx/delta_entropy.hpp"
#include "cudafx/delta_math.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tile_entropy.hpp"
#include "support/clip.hpp"
#include "support/delta_parts.hpp"
#include "support/delta_reseal.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "support/testdata.hpp"
#include "delta/crc32_clmul.hpp"  // the packets' CRC (cuda/src)
#include "delta/rans.hpp"  // the codec's own rANS arithmetic (cuda/src)

using namespace cudafx;
using testing_support::HostImage;

namespace {

using testing_support::make_clip;

struct Coded {
  std::vector<std::vector<uint8_t>> packets;
  std::vector<DeltaEncodeStats> stats;
};

Coded encode_clip(const std::vector<HostImage>& clip, int threshold, int key_every,
                  DeltaCompression comp = DeltaCompression::Rans) {
  std::unique_ptr<DeltaEncoder> enc;
  EXPECT_TRUE(DeltaEncoder::create(clip[0].desc(), &enc).is_ok());
  Coded c;
  for (size_t n = 0; n < clip.size(); n++) {
    DeltaEncodeSettings s;
    s.threshold = threshold;
    s.compression = comp;
    s.force_keyframe = key_every > 0 && n % key_every == 0;
    std::vector<uint8_t> pkt;
    DeltaEncodeStats st;
    const Status status = enc->encode(clip[n].view(), s, &pkt, &st);
    EXPECT_TRUE(status.is_ok()) << status.message();
    c.packets.push_back(pkt);
    c.stats.push_back(st);
  }
  return c;
}

const DeltaCompression kFormat3And4[] = {DeltaCompression::Rans, DeltaCompression::Predictive};
const char* name_of(DeltaCompression c) {
  return c == DeltaCompression::Predictive ? "predictive" : "rans";
}

const PixelFormat kFormats[] = {PixelFormat::RGBA, PixelFormat::BGRx, PixelFormat::RGB,
                                PixelFormat::BGR, PixelFormat::GRAY8, PixelFormat::I420,
                                PixelFormat::NV12, PixelFormat::ARGB, PixelFormat::Y444};

}  // namespace

class DeltaRoundTrip : public ::testing::TestWithParam<std::tuple<PixelFormat, int>> {};

TEST_P(DeltaRoundTrip, ErrorWithinThresholdEveryFrame) {
  const auto [format, threshold] = GetParam();
  for (const auto& size : {std::pair<int, int>{173, 97}, {64, 16}, {1, 1}, {130, 33}}) {
    const ImageDesc desc{format, size.first, size.second};
    const auto clip = make_clip(desc, 12, 17 + threshold);
    for (DeltaCompression comp : {DeltaCompression::Rans, DeltaCompression::Zstd,
                                  DeltaCompression::None, DeltaCompression::Predictive}) {
      const Coded coded = encode_clip(clip, threshold, 0, comp);
      std::unique_ptr<DeltaDecoder> dec;
      ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
      for (size_t n = 0; n < clip.size(); n++) {
        std::string err;
        ASSERT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
                  DeltaDecodeResult::Frame)
            << "frame " << n << ": " << err;
        const int diff = testing_support::max_abs_diff(dec->reconstruction(), clip[n].view());
        EXPECT_LE(diff, threshold) << "frame " << n;
        if (threshold == 0) {
          EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), clip[n].view()));
        }
        EXPECT_EQ(coded.stats[n].keyframe, n == 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FormatsAndThresholds, DeltaRoundTrip,
                         ::testing::Combine(::testing::ValuesIn(kFormats),
                                            ::testing::Values(0, 4, 10, 20)),
                         [](const auto& info) {
                           return std::string(format_info(std::get<0>(info.param)).name) + "_T" +
                                  std::to_string(std::get<1>(info.param));
                         });

// delta_checksum against the formula of docs/delta-format.md written out
// plainly (words numbered across rows and planes, the last word of a row
// zero-extended), on sizes whose rows end mid-word; the CUDA kernel is held
// to the same bytes by the CUDA tests.
TEST(DeltaCodec, ChecksumFollowsTheDocumentedFormula) {
  for (const ImageDesc& desc : {ImageDesc{PixelFormat::I420, 173, 97},
                                ImageDesc{PixelFormat::RGB, 13, 5},
                                ImageDesc{PixelFormat::GRAY8, 1, 1}}) {
    DeltaLayout layout;
    ASSERT_TRUE(make_delta_layout(desc, &layout).is_ok());
    HostImage img(desc, 5);
    img.fill_random(9);
    uint64_t want = 0, pos = 0;
    for (int i = 0; i < layout.n_planes; i++) {
      const DeltaPlaneLayout& p = layout.planes[i];
      for (int y = 0; y < p.height; y++) {
        const uint8_t* row = img.view().data[i] + static_cast<size_t>(y) * img.view().pitch[i];
        for (int w = 0; w * 8 < p.row_bytes; w++, pos++) {
          uint64_t v = 0;
          for (int b = 0; b < 8 && w * 8 + b < p.row_bytes; b++)
            v |= static_cast<uint64_t>(row[w * 8 + b]) << (8 * b);
          const uint64_t m = (v ^ (pos * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
          want += m ^ (m >> 31);
        }
      }
    }
    EXPECT_EQ(delta_checksum(layout, img.view()), want) << format_info(desc.format).name;
  }
}

// delta_checksum_rows over any split of every plane's rows adds up (mod
// 2^64) to delta_checksum (the CPU encoder sums a frame's checksum tile row
// by tile row).
TEST(DeltaCodec, ChecksumRowsAddUpToTheChecksum) {
  for (const ImageDesc& desc : {ImageDesc{PixelFormat::I420, 173, 97},
                                ImageDesc{PixelFormat::RGBA, 70, 33}}) {
    DeltaLayout layout;
    ASSERT_TRUE(make_delta_layout(desc, &layout).is_ok());
    HostImage img(desc, 3);
    img.fill_random(11);
    std::mt19937 rng(4);
    for (int trial = 0; trial < 5; trial++) {
      uint64_t sum = 0;
      for (int i = 0; i < layout.n_planes; i++)
        for (int y = 0; y < layout.planes[i].height;) {
          const int rows = 1 + static_cast<int>(rng() % 20);
          const int y1 = std::min(layout.planes[i].height, y + rows);
          sum += delta_checksum_rows(layout, img.view(), i, y, y1);
          y = y1;
        }
      EXPECT_EQ(sum, delta_checksum(layout, img.view())) << format_info(desc.format).name;
    }
  }
}

// The packets' CRC-32 (delta_crc32: folded with carry-less multiplication
// where the CPU has it) against zlib's crc32 on every length up to 1100
// bytes (below, at and past the 64 bytes folding starts at, every tail
// of 0..15 bytes), at unaligned starts, continuing a CRC, and on 1 MB.
TEST(DeltaCodec, PacketCrcIsZlibsCrc32) {
  std::vector<uint8_t> bytes((1 << 20) + 64);
  std::mt19937 rng(17);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  int wrong = 0;
  for (size_t n = 0; n <= 1100; n++)
    for (size_t at : {0, 1, 13})
      for (uLong before : {0ul, 0x12345678ul}) {
        const uLong want = crc32(before, bytes.data() + at, static_cast<uInt>(n));
        wrong += delta_crc32(static_cast<uint32_t>(before), bytes.data() + at, n) != want;
        wrong += delta_crc32_zlib(static_cast<uint32_t>(before), bytes.data() + at, n) != want;
      }
  EXPECT_EQ(wrong, 0) << (delta_crc32_folds() ? "folded" : "zlib only");
  EXPECT_EQ(delta_crc32(0, bytes.data() + 3, 1 << 20),
            crc32(0L, bytes.data() + 3, static_cast<uInt>(1 << 20)));
}

// The CPU encoder's fast paths (rows with nothing beyond the threshold,
// lossless rows, the quantiser in 16-bit lanes) against the per-byte rule of
// delta_math.hpp, on every (current, reference) pair of byte values and
// every threshold, with the pairs spread so that some tiles change and some
// do not.
TEST(DeltaCodec, ResidualsFollowThePerByteRuleForEveryPair) {
  const ImageDesc desc{PixelFormat::GRAY8, 256, 512};
  DeltaLayout layout;
  ASSERT_TRUE(make_delta_layout(desc, &layout).is_ok());
  HostImage cur(desc), ref(desc);
  for (int t = 0; t <= 255; t++) {
    // Rows 0..255: ref = the row, cur = the column (every pair once); rows
    // 256..511: cur = ref (unchanged tiles) but for a few bytes.
    for (int y = 0; y < desc.height; y++)
      for (int x = 0; x < desc.width; x++) {
        const int r = y % 256;
        ref.view().data[0][y * ref.view().pitch[0] + x] = static_cast<uint8_t>(r);
        cur.view().data[0][y * cur.view().pitch[0] + x] =
            static_cast<uint8_t>(y < 256 ? x : ((x * 7 + y) % 97 == 0 ? 255 - r : r));
      }
    HostImage before(desc);
    before.copy_from(ref.view());
    DeltaScratch scratch;
    std::vector<uint8_t> raw;
    delta_encode_cpu(layout, cur.view(), ref.view(), t, false, &scratch, &raw, nullptr);
    int wrong = 0;
    for (int y = 0; y < desc.height; y++)
      for (int x = 0; x < desc.width; x++) {
        const int c = cur.view().data[0][y * cur.view().pitch[0] + x];
        const int r0 = before.view().data[0][y * before.view().pitch[0] + x];
        const int q = delta_residual(c, r0, t);
        wrong += scratch.residual[static_cast<size_t>(y) * desc.width + x] != static_cast<uint8_t>(q);
        wrong += ref.view().data[0][y * ref.view().pitch[0] + x] != static_cast<uint8_t>(r0 + q);
      }
    EXPECT_EQ(wrong, 0) << "threshold " << t;
  }
}

// The quantiser's division by the step in 16-bit arithmetic, which the
// CPU encoder relies on, is exact for every threshold and every dividend.
TEST(DeltaCodec, StepDivisorIsExactForEveryThreshold) {
  for (int t = 1; t <= 255; t++) {
    const DeltaStepDivisor d = delta_step_divisor(t);
    ASSERT_GT(d.mul, 0u) << "threshold " << t;
    ASSERT_LE(d.mul, 0xffffu);
    const unsigned s = 2 * t + 1;
    for (unsigned n = 0; n <= 255u + t; n++)
      ASSERT_EQ((n * d.mul) >> 16 >> d.shift, n / s) << "threshold " << t << ", n " << n;
  }
}

// Payloads of several MB are compressed by parallel zstd jobs: still one
// frame the decoder takes, the same bytes on every run.
TEST(DeltaCodec, LargePayloadsCompressInParallelJobsAndRoundTrip) {
  const ImageDesc desc{PixelFormat::RGBA, 1280, 960};  // 4.9 MB a frame
  std::vector<HostImage> clip;
  for (uint32_t seed : {1u, 2u, 3u}) {
    clip.emplace_back(desc);
    clip.back().fill_random(seed);  // noise: changes everywhere, incompressible
  }
  const Coded a = encode_clip(clip, 0, 0), b = encode_clip(clip, 0, 0);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  for (size_t n = 0; n < clip.size(); n++) {
    EXPECT_GT(a.stats[n].raw_bytes, size_t(4) << 20);
    EXPECT_TRUE(a.packets[n] == b.packets[n]) << "frame " << n;
    // The payload's CRC (header bytes 28-31, little-endian) is zlib's CRC-32
    // of the whole payload, also when computed in pieces (large payloads).
    const std::vector<uint8_t>& p = a.packets[n];
    const uint32_t want = static_cast<uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), p.data() + kDeltaHeaderSize,
              static_cast<uInt>(p.size() - kDeltaHeaderSize)));
    EXPECT_EQ(p[28] | p[29] << 8 | p[30] << 16 | static_cast<uint32_t>(p[31]) << 24, want);
    std::string why;
    ASSERT_EQ(dec->decode(a.packets[n].data(), a.packets[n].size(), &why),
              DeltaDecodeResult::Frame)
        << why;
    EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), clip[n].view()));
  }
}

// A frame equal to its reference costs only the packet's skeleton.
// Format 3: header, bitmaps, and per slice its size and a rANS stream of no
// symbols (the two bare 4-byte states). Format 4: header, the quantiser, the
// tables (every context unused, 9 bits each: the modes of absent lanes are
// not coded) and the lane directory with no lane present.
TEST(DeltaCodec, UnchangedFramesCostOnlyTheSkeleton) {
  const ImageDesc desc{PixelFormat::NV12, 640, 480};
  HostImage f(desc);
  f.fill_random(3);
  for (DeltaCompression comp : kFormat3And4) {
    SCOPED_TRACE(name_of(comp));
    std::unique_ptr<DeltaEncoder> enc;
    ASSERT_TRUE(DeltaEncoder::create(desc, &enc).is_ok());
    std::vector<uint8_t> pkt;
    DeltaEncodeStats st;
    DeltaEncodeSettings s;
    s.compression = comp;
    ASSERT_TRUE(enc->encode(f.view(), s, &pkt, &st).is_ok());
    EXPECT_TRUE(st.keyframe);
    ASSERT_TRUE(enc->encode(f.view(), s, &pkt, &st).is_ok());
    EXPECT_FALSE(st.keyframe);
    EXPECT_EQ(st.changed_bytes, 0u);
    const DeltaLayout& l = enc->layout();
    if (comp == DeltaCompression::Rans) {
      EXPECT_EQ(st.raw_bytes, l.bitmap_bytes);
      EXPECT_EQ(pkt.size(),
                kDeltaHeaderSize + l.bitmap_bytes + 12u * DeltaEntropyCoder::slice_count(l));
    } else {
      const size_t table_bytes = (kDeltaContexts * 9 + 7) / 8;
      EXPECT_EQ(pkt.size(),
                kDeltaHeaderSize + 1 + table_bytes + (delta_lanes(l).size() + 7) / 8);
    }
  }
}

TEST(DeltaCodec, KeyframeOnDemandResynchronises) {
  const ImageDesc desc{PixelFormat::RGBA, 96, 40};
  const auto clip = make_clip(desc, 10, 5);
  for (DeltaCompression comp : kFormat3And4) {
  SCOPED_TRACE(name_of(comp));
  const Coded coded = encode_clip(clip, 4, 4, comp);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  std::string err;
  // Joining late: deltas are refused until the keyframe at frame 4.
  for (size_t n = 1; n < 4; n++)
    EXPECT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
              DeltaDecodeResult::NeedKeyframe);
  EXPECT_EQ(err, "waiting for a keyframe");
  for (size_t n = 4; n < clip.size(); n++) {
    ASSERT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
              DeltaDecodeResult::Frame)
        << err;
    EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()), 4);
  }
  }
}

TEST(DeltaCodec, LostPacketStopsDeltasUntilKeyframe) {
  const ImageDesc desc{PixelFormat::I420, 80, 48};
  const auto clip = make_clip(desc, 12, 9);
  for (DeltaCompression comp : kFormat3And4) {
  SCOPED_TRACE(name_of(comp));
  const Coded coded = encode_clip(clip, 0, 8, comp);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  std::string err;
  for (size_t n = 0; n < 3; n++)
    ASSERT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
              DeltaDecodeResult::Frame);
  // Packet 3 is lost.
  EXPECT_EQ(dec->decode(coded.packets[4].data(), coded.packets[4].size(), &err),
            DeltaDecodeResult::NeedKeyframe);
  EXPECT_EQ(err, "frame counter jumped from 2 to 4");
  for (size_t n = 5; n < 8; n++)
    EXPECT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
              DeltaDecodeResult::NeedKeyframe);
  for (size_t n = 8; n < clip.size(); n++) {
    ASSERT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
              DeltaDecodeResult::Frame);
    EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), clip[n].view()));
  }
  }
}

TEST(DeltaCodec, DamagedPacketsAreRejectedWithReasons) {
  const ImageDesc desc{PixelFormat::RGB, 70, 35};
  const auto clip = make_clip(desc, 3, 11);
  for (DeltaCompression comp : kFormat3And4) {
  SCOPED_TRACE(name_of(comp));
  const Coded coded = encode_clip(clip, 0, 0, comp);
  auto decode_first_then = [&](std::vector<uint8_t> pkt) {
    std::unique_ptr<DeltaDecoder> dec;
    EXPECT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    std::string err;
    EXPECT_EQ(dec->decode(coded.packets[0].data(), coded.packets[0].size(), &err),
              DeltaDecodeResult::Frame);
    err.clear();
    EXPECT_EQ(dec->decode(pkt.data(), pkt.size(), &err), DeltaDecodeResult::Corrupt);
    // Out of sync afterwards: the next delta is refused.
    std::string err2;
    EXPECT_EQ(dec->decode(coded.packets[2].data(), coded.packets[2].size(), &err2),
              DeltaDecodeResult::NeedKeyframe);
    return err;
  };
  std::vector<uint8_t> p = coded.packets[1];
  EXPECT_EQ(decode_first_then({p.begin(), p.begin() + 20}),
            "delta packet: truncated header (20 bytes)");
  std::vector<uint8_t> q = p;
  q[0] = 'X';
  EXPECT_EQ(decode_first_then(q), "delta packet: bad magic");
  for (uint8_t version : {2, 5}) {
    q = p;
    q[4] = version;
    EXPECT_EQ(decode_first_then(q), "delta packet: unsupported version " + std::to_string(version));
  }
  q = p;
  q[10] ^= 1;
  EXPECT_EQ(decode_first_then(q), "delta packet: header checksum mismatch");
  q = p;
  q.back() ^= 0x40;
  EXPECT_EQ(decode_first_then(q), "delta packet: payload checksum mismatch");
  q = p;
  q.pop_back();
  EXPECT_EQ(decode_first_then(q).rfind("delta packet: payload size", 0), 0u);
  q = p;
  q.push_back(0);
  EXPECT_EQ(decode_first_then(q).rfind("delta packet: payload size", 0), 0u);
  }
}

TEST(DeltaCodec, StreamOfAnotherFormatIsRejected) {
  const auto clip = make_clip({PixelFormat::RGBA, 32, 32}, 1, 1);
  const Coded coded = encode_clip(clip, 0, 0);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create({PixelFormat::BGRA, 32, 32}, &dec).is_ok());
  std::string err;
  EXPECT_EQ(dec->decode(coded.packets[0].data(), coded.packets[0].size(), &err),
            DeltaDecodeResult::Corrupt);
  EXPECT_EQ(err, "delta packet: format or size differs from the stream's caps");
}

// Random bytes, and valid packets with random damage: never a crash, never a
// frame whose checksum does not hold.
TEST(DeltaCodec, SurvivesRandomDamage) {
  const ImageDesc desc{PixelFormat::NV12, 66, 34};
  const auto clip = make_clip(desc, 6, 21);
  for (DeltaCompression comp : kFormat3And4) {
  SCOPED_TRACE(name_of(comp));
  const Coded coded = encode_clip(clip, 2, 3, comp);
  std::mt19937 rng(99);
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  int frames = 0;
  for (int iter = 0; iter < 3000; iter++) {
    std::vector<uint8_t> pkt = coded.packets[rng() % coded.packets.size()];
    switch (rng() % 4) {
      case 0:
        for (int k = 0; k < 1 + static_cast<int>(rng() % 4); k++)
          pkt[rng() % pkt.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        pkt.resize(rng() % pkt.size());
        break;
      case 2:
        pkt.assign(rng() % 200, 0);
        for (auto& b : pkt) b = static_cast<uint8_t>(rng());
        break;
      default:
        break;  // intact, possibly out of order
    }
    std::string err;
    if (dec->decode(pkt.data(), pkt.size(), &err) == DeltaDecodeResult::Frame) {
      frames++;
      EXPECT_EQ(delta_checksum(dec->layout(), dec->reconstruction()),
                dec->last_info().recon_checksum);
    }
  }
  EXPECT_GT(frames, 0);
  }
}

// Real footage: a static surveillance camera (../shared/testdata/vtest.avi).
// Decoding it needs avdec_msmpeg4 (gstreamer1.0-libav, which the README's
// test command installs); the GPU machine reads the raw copy that
// scripts/pack-gpu-runtime.sh makes instead.
TEST(DeltaCodec, RealFootageStaysWithinThreshold) {
  SKIP_WITHOUT_TESTDATA();
  std::vector<HostImage> clip;
  std::string err;
  ASSERT_TRUE(testing_support::load_testdata_clip("vtest.avi", 40, &clip))
      << "(decoding vtest.avi needs gstreamer1.0-libav for avdec_msmpeg4)";
  ASSERT_EQ(clip.size(), 40u);
  for (int threshold : {0, 10}) {
    size_t bytes[4] = {0, 0, 0, 0};
    for (DeltaCompression comp :
         {DeltaCompression::Rans, DeltaCompression::Zstd, DeltaCompression::Predictive}) {
      const Coded coded = encode_clip(clip, threshold, 0, comp);
      std::unique_ptr<DeltaDecoder> dec;
      ASSERT_TRUE(DeltaDecoder::create(clip[0].desc(), &dec).is_ok());
      for (size_t n = 0; n < clip.size(); n++) {
        ASSERT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
                  DeltaDecodeResult::Frame)
            << err;
        EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()),
                  threshold);
        bytes[static_cast<int>(comp) - 1] += coded.packets[n].size();
      }
    }
    const double raw = static_cast<double>(clip[0].view().plane(0).width) *
                       clip[0].view().plane(0).height * 1.5 * clip.size();
    // Information for the reader; the benchmark measures the whole clip.
    const size_t zstd = bytes[0], rans = bytes[1], predictive = bytes[2];
    std::printf("vtest.avi, %zu frames, T=%d: predictive %.1fx, rans %.1fx, zstd %.1fx smaller "
                "than raw I420\n",
                clip.size(), threshold, raw / predictive, raw / rans, raw / zstd);
    EXPECT_GT(raw / rans, threshold == 0 ? 2.0 : 5.0);
    // The context models must earn their keep on real footage.
    EXPECT_LT(rans, zstd);
    EXPECT_LT(predictive, zstd);
  }
}

// -- the rans entropy stage --

// Frames large enough to be cut into several slices, each with its own
// models and stream, at both kinds of thresholds and with keyframes between.
// RansSymbol's 32-bit coding step (the host's and the GPU coder's) equals
// the wide form with a true division, for every frequency and states at
// every boundary of the renormalisation and random ones.
TEST(DeltaRans, SymbolStepEqualsTheWideArithmetic) {
  const RansDivisors& div = rans_divisors();
  std::mt19937 rng(5);
  for (uint32_t freq = 1; freq <= kRansScale; freq++) {
    const uint32_t start = kRansScale - freq;  // the largest start this frequency allows
    const RansSymbol sym(start, freq, div);
    // The step adds x for the reciprocal's bit 32, which every frequency's has.
    ASSERT_EQ(ExactReciprocal(freq).m >> 32, 1u) << "freq " << freq;
    const uint64_t x_max = uint64_t((kRansLow >> kRansScaleBits) << 8) * freq;
    std::vector<uint64_t> states = {kRansLow, (uint64_t(kRansLow) << 8) - 1, x_max - 1, x_max,
                                    (x_max << 8) - 1, x_max << 8};
    for (int i = 0; i < 16; i++) states.push_back(kRansLow + rng() % (kRansLow * 255u));
    for (uint64_t x64 : states) {
      if (x64 < kRansLow || x64 >= (uint64_t(kRansLow) << 8))
        continue;
      const uint32_t x = static_cast<uint32_t>(x64);
      const uint32_t n = (x64 >= x_max) + (x64 >= (x_max << 8));
      const uint32_t y = static_cast<uint32_t>(x64 >> (8 * n));
      const uint32_t want = ((y / freq) << kRansScaleBits) + (y % freq) + start;
      ASSERT_EQ(rans_shed_bytes(x, sym), n) << "freq " << freq << " state " << x;
      ASSERT_EQ(rans_code_step(y, sym), want) << "freq " << freq << " state " << x;
    }
  }
}

// The tables' division by the context's total (CountDivisor) is the true
// quotient for every dividend a count times the scale can be, at divisors
// around every power of two and random ones.
TEST(DeltaRans, CountDivisorEqualsTheDivision) {
  std::mt19937_64 rng(13);
  std::vector<uint64_t> divisors = {1, 2, 3, 4095, 4096, 4097, 0xffffffffu, uint64_t(1) << 32,
                                    (uint64_t(1) << 40) + 7, (uint64_t(1) << 44) - 1,
                                    uint64_t(1) << 44, uint64_t(1) << 63, ~uint64_t(0)};
  for (int b = 1; b < 40; b++)
    for (int64_t off : {-1, 0, 1}) divisors.push_back((uint64_t(1) << b) + off);
  for (int i = 0; i < 200; i++) divisors.push_back(1 + rng() % 0xffffffffu);
  const uint64_t top = (uint64_t(1) << CountDivisor::kDividendBits) - 1;
  for (uint64_t d : divisors) {
    const CountDivisor div(d);
    std::vector<uint64_t> xs = {0, 1, d - 1, d, d + 1, top, top - 1, top / d * d, top / d * d - 1};
    for (int i = 0; i < 500; i++) xs.push_back(rng() & top);
    for (uint64_t x : xs) {
      if (x > top)
        continue;
      ASSERT_EQ(div.divide(x), x / d) << x << " / " << d;
    }
  }
}

// put2(a, b) writes what put(a); put(b) writes (the GPU coder codes pairs
// of symbols with it).
TEST(DeltaRans, PairedPutsEqualSinglePuts) {
  const RansDivisors& div = rans_divisors();
  std::mt19937 rng(9);
  for (int trial = 0; trial < 50; trial++) {
    std::vector<RansSymbol> syms;
    for (int i = 0; i < 2 * (1 + trial * 7); i++) {
      const uint32_t freq = 1 + rng() % (trial % 2 ? kRansScale : 64);
      syms.emplace_back(rng() % (kRansScale - freq + 1), freq, div);
    }
    std::vector<uint8_t> one(4 * syms.size() + 16), two(one.size());
    RansWriter w1(one.data() + one.size()), w2(two.data() + two.size());
    for (size_t i = 0; i < syms.size(); i += 2) {
      w1.put(syms[i]);
      w1.put(syms[i + 1]);
      w2.put2(syms[i], syms[i + 1]);
    }
    const uint8_t* b1 = w1.finish();
    const uint8_t* b2 = w2.finish();
    ASSERT_EQ(one.data() + one.size() - b1, two.data() + two.size() - b2) << trial;
    EXPECT_TRUE(std::equal(b1, static_cast<const uint8_t*>(one.data() + one.size()), b2)) << trial;
  }
}

TEST(DeltaRans, LargeFramesRoundTripInSlices) {
  const ImageDesc desc{PixelFormat::RGBA, 1000, 300};
  std::unique_ptr<DeltaEncoder> enc;
  ASSERT_TRUE(DeltaEncoder::create(desc, &enc).is_ok());
  ASSERT_GT(DeltaEntropyCoder::slice_count(enc->layout()), 2);
  const auto clip = make_clip(desc, 7, 5);
  for (int threshold : {0, 7}) {
    const Coded coded = encode_clip(clip, threshold, 4);
    std::unique_ptr<DeltaDecoder> dec;
    ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    for (size_t n = 0; n < clip.size(); n++) {
      std::string err;
      ASSERT_EQ(dec->decode(coded.packets[n].data(), coded.packets[n].size(), &err),
                DeltaDecodeResult::Frame)
          << "frame " << n << ": " << err;
      EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()), threshold);
      EXPECT_EQ(dec->last_info().compression,
                n % 4 == 0 ? DeltaCompression::Zstd : DeltaCompression::Rans);
    }
  }
}

// The encoder may change its entropy stage, format 3 or 4 (and threshold),
// on any frame: the models learn only from rans frames, on both sides alike.
// Slices as docs/delta-format.md counts them: per plane, one per 128 KiB
// of the plane (rounded up), at most its share of 16 by size (rounded
// down), at least one.
TEST(DeltaRans, SlicesFollowTheFormat) {
  auto slices = [](PixelFormat f, int w, int h) {
    DeltaLayout layout;
    EXPECT_TRUE(make_delta_layout(ImageDesc{f, w, h}, &layout).is_ok());
    return DeltaEntropyCoder::slice_count(layout);
  };
  EXPECT_EQ(slices(PixelFormat::I420, 768, 576), 4 + 1 + 1);  // 432 KiB of Y, 108 of U and V
  EXPECT_EQ(slices(PixelFormat::NV12, 1920, 1080), 10 + 5);   // 1.98 MiB of Y, 0.99 of UV
  EXPECT_EQ(slices(PixelFormat::I420, 3840, 2160), 10 + 2 + 2);
  EXPECT_EQ(slices(PixelFormat::RGBA, 3840, 2160), 16);
  EXPECT_EQ(slices(PixelFormat::RGBA, 64, 16), 1);
  EXPECT_EQ(slices(PixelFormat::GRAY8, 1, 1), 1);
  EXPECT_EQ(slices(PixelFormat::GRAY8, 128, 2048), 2);     // 256 KiB
  EXPECT_EQ(slices(PixelFormat::GRAY8, 128, 2049), 3);     // 128 bytes more
}

TEST(DeltaRans, CompressionMayChangeEveryFrame) {
  const ImageDesc desc{PixelFormat::NV12, 130, 66};
  const auto clip = make_clip(desc, 12, 8);
  std::unique_ptr<DeltaEncoder> enc;
  std::unique_ptr<DeltaDecoder> dec;
  ASSERT_TRUE(DeltaEncoder::create(desc, &enc).is_ok());
  ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
  const DeltaCompression order[] = {DeltaCompression::Rans, DeltaCompression::Zstd,
                                    DeltaCompression::Predictive, DeltaCompression::Rans,
                                    DeltaCompression::None, DeltaCompression::Predictive};
  for (size_t n = 0; n < clip.size(); n++) {
    DeltaEncodeSettings s;
    s.compression = order[n % 6];
    s.threshold = static_cast<int>(n % 3) * 2;
    std::vector<uint8_t> pkt;
    ASSERT_TRUE(enc->encode(clip[n].view(), s, &pkt).is_ok());
    std::string err;
    ASSERT_EQ(dec->decode(pkt.data(), pkt.size(), &err), DeltaDecodeResult::Frame)
        << "frame " << n << ": " << err;
    EXPECT_LE(testing_support::max_abs_diff(dec->reconstruction(), clip[n].view()), s.threshold);
  }
}

// Damage that the CRCs do not catch (a sender's bug, a collision): every
// byte of a rans payload flipped in turn, and the payload cut short. The
// decoder rejects it (rans layer or reconstruction checksum), never
// returning a frame that differs from the source.
TEST(DeltaRans, DamageBehindValidCrcsIsCaught) {
  const ImageDesc desc{PixelFormat::I420, 96, 64};
  const auto clip = make_clip(desc, 3, 12);
  const Coded coded = encode_clip(clip, 0, 0);
  ASSERT_EQ(coded.packets[1][5] >> 1 & 3, static_cast<int>(DeltaCompression::Rans));
  auto verdict = [&](std::vector<uint8_t> damaged, std::string* err) {
    testing_support::reseal_delta_packet(damaged.data(), damaged.size());
    std::unique_ptr<DeltaDecoder> dec;
    EXPECT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    EXPECT_EQ(dec->decode(coded.packets[0].data(), coded.packets[0].size(), err),
              DeltaDecodeResult::Frame);
    const DeltaDecodeResult r = dec->decode(damaged.data(), damaged.size(), err);
    if (r == DeltaDecodeResult::Frame) {  // only if the damage changed nothing decoded
      EXPECT_TRUE(testing_support::bytes_equal(dec->reconstruction(), clip[1].view()));
    }
    return r;
  };
  const std::vector<uint8_t>& p = coded.packets[1];
  int caught = 0;
  for (size_t i = kDeltaHeaderSize; i < p.size(); i++) {
    std::vector<uint8_t> q = p;
    q[i] ^= 0x21;
    std::string err;
    if (verdict(q, &err) == DeltaDecodeResult::Corrupt) {
      caught++;
      EXPECT_TRUE(err.rfind("delta packet: rans payload: ", 0) == 0 ||
                  err.rfind("delta packet: tile", 0) == 0 ||
                  err == "reconstruction checksum mismatch: decoder out of sync")
          << err;
    }
  }
  EXPECT_GT(caught, static_cast<int>(p.size() - kDeltaHeaderSize) * 9 / 10);
  std::vector<uint8_t> cut(p.begin(), p.end() - 1);
  std::string err;
  EXPECT_EQ(verdict(cut, &err), DeltaDecodeResult::Corrupt);
  // One slice a plane: the last (V) runs short.
  DeltaLayout layout;
  ASSERT_TRUE(make_delta_layout(desc, &layout).is_ok());
  ASSERT_EQ(DeltaEntropyCoder::slice_count(layout), 3);
  EXPECT_EQ(err, "delta packet: rans payload: slice 2 runs past the payload");
}

// The CUDA encoder gives the same packets as the CPU encoder, byte for byte,
// also handed out in two parts (the coded lanes left in pinned memory).
class DeltaCudaEncoder : public ::testing::TestWithParam<std::tuple<PixelFormat, int>> {};

TEST_P(DeltaCudaEncoder, PacketsEqualTheCpuEncoders) {
  SKIP_WITHOUT_GPU();
  const auto [format, threshold] = GetParam();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  for (const auto& size :
       {std::pair<int, int>{173, 97}, {64, 16}, {1, 1}, {333, 211}, {1280, 720}}) {
    const ImageDesc desc{format, size.first, size.second};
    const auto clip = make_clip(desc, size.first == 1280 ? 5 : 8, 31 + threshold);
    std::unique_ptr<DeltaEncoder> cpu;
    std::unique_ptr<DeltaEncoderCuda> gpu, gpu_parts;
    ASSERT_TRUE(DeltaEncoder::create(desc, &cpu).is_ok());
    const Status s = DeltaEncoderCuda::create(desc, &gpu);
    ASSERT_TRUE(s.is_ok()) << s.message();
    ASSERT_TRUE(DeltaEncoderCuda::create(desc, &gpu_parts).is_ok());
    testing_support::DeviceImage dev(desc, 4);  // odd pitches on the device too
    DeltaPacketParts parts;
    size_t tails = 0;
    for (size_t n = 0; n < clip.size(); n++) {
      DeltaEncodeSettings settings;
      settings.threshold = threshold;
      settings.force_keyframe = n == 5;
      // Format 4 and 3 in turns (a keyframe at 5 either way).
      settings.compression = (n / 3) % 2 ? DeltaCompression::Rans : DeltaCompression::Predictive;
      // Frame 7 of a stream with intra refresh (tables never reused).
      settings.refresh_period = n == 7 ? 4 : 0;
      std::vector<uint8_t> a, b;
      ASSERT_TRUE(cpu->encode(clip[n].view(), settings, &a).is_ok());
      ASSERT_TRUE(dev.upload(clip[n].view(), stream.get()).is_ok());
      const Status e = gpu->encode(dev.view(), settings, stream.get(), &b);
      ASSERT_TRUE(e.is_ok()) << e.message();
      EXPECT_EQ(a, b) << size.first << "x" << size.second << " frame " << n;
      DeltaEncodeStats stats;
      ASSERT_TRUE(gpu_parts->encode(dev.view(), settings, stream.get(), &parts, &stats).is_ok());
      EXPECT_EQ(a, testing_support::joined(parts))
          << size.first << "x" << size.second << " frame " << n << " in parts";
      EXPECT_EQ(stats.packet_bytes, a.size());
      if (settings.compression != DeltaCompression::Predictive) {
        EXPECT_EQ(parts.tail_size, 0u);  // format 3 has no lanes
      }
      tails += parts.tail_size > 0;
    }
    if (size.first >= 173) {
      EXPECT_GT(tails, 0u) << "no packet had lanes apart";
    }
  }
}

// Pipelined encoding is format 4's and does not mix with encode() while a
// frame is submitted; after flush() the stream goes on with encode(), the
// packets still the CPU encoder's.
TEST(DeltaCudaEncoderPipeline, RefusesFormat3AndEncodeWhileAFrameIsSubmitted) {
  SKIP_WITHOUT_GPU();
  const ImageDesc desc{PixelFormat::NV12, 333, 211};
  const auto clip = make_clip(desc, 4, 5);
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  std::unique_ptr<DeltaEncoder> cpu;
  std::unique_ptr<DeltaEncoderCuda> gpu;
  ASSERT_TRUE(DeltaEncoder::create(desc, &cpu).is_ok());
  ASSERT_TRUE(DeltaEncoderCuda::create(desc, &gpu).is_ok());
  testing_support::DeviceImage in0(desc), in1(desc);
  DeltaEncodeSettings s;
  s.threshold = 4;
  std::vector<std::vector<uint8_t>> want(clip.size());
  for (size_t n = 0; n < clip.size(); n++)
    ASSERT_TRUE(cpu->encode(clip[n].view(), s, &want[n]).is_ok());
  DeltaPacketParts parts;
  bool got = true;
  DeltaEncodeSettings rans = s;
  rans.compression = DeltaCompression::Rans;
  ASSERT_TRUE(in0.upload(clip[0].view(), stream.get()).is_ok());
  Status st = gpu->submit(in0.view(), rans, stream.get(), &parts, &got);
  EXPECT_EQ(st.message(), "delta encoder: submit() is format 4's (compression=predictive)");
  EXPECT_FALSE(got);
  ASSERT_TRUE(gpu->submit(in0.view(), s, stream.get(), &parts, &got).is_ok());
  EXPECT_FALSE(got);
  ASSERT_TRUE(in1.upload(clip[1].view(), stream.get()).is_ok());
  ASSERT_TRUE(gpu->submit(in1.view(), s, stream.get(), &parts, &got).is_ok());
  ASSERT_TRUE(got);
  EXPECT_EQ(testing_support::joined(parts), want[0]);
  std::vector<uint8_t> pkt;
  st = gpu->encode(in1.view(), s, stream.get(), &pkt);
  EXPECT_EQ(st.message(), "delta encoder: encode() with a frame submitted (flush() it first)");
  ASSERT_TRUE(gpu->flush(&parts, &got).is_ok());
  ASSERT_TRUE(got);
  EXPECT_EQ(testing_support::joined(parts), want[1]);
  for (size_t n = 2; n < clip.size(); n++) {
    ASSERT_TRUE(in0.upload(clip[n].view(), stream.get()).is_ok());
    ASSERT_TRUE(gpu->encode(in0.view(), s, stream.get(), &pkt).is_ok());
    EXPECT_EQ(pkt, want[n]) << "frame " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(FormatsAndThresholds, DeltaCudaEncoder,
                         ::testing::Combine(::testing::ValuesIn(kFormats),
                                            ::testing::Values(0, 10)),
                         [](const auto& info) {
                           return std::string(format_info(std::get<0>(info.param)).name) + "_T" +
                                  std::to_string(std::get<1>(info.param));
                         });

// The CUDA decoder reaches the CPU decoder's verdict on every packet of a
// damaged stream (a truncated packet, a lost one, a flipped payload byte, a
// delta before any keyframe), and the same reconstruction after each frame.
class DeltaCudaDecoder : public ::testing::TestWithParam<std::tuple<PixelFormat, int>> {};

namespace {
// The CUDA decoder's reconstruction, brought down, is the CPU decoder's.
::testing::AssertionResult same_reconstruction(const DeltaDecoderCuda& gpu,
                                               const DeltaDecoder& cpu, const ImageDesc& desc,
                                               StreamHandle stream) {
  HostImage got(desc);
  if (!copy_image_async(got.view(), gpu.reconstruction(), stream).is_ok() ||
      !synchronize_stream(stream).is_ok())
    return ::testing::AssertionFailure() << "the reconstruction did not come down";
  if (!testing_support::bytes_equal(got.view(), cpu.reconstruction()))
    return ::testing::AssertionFailure() << "the reconstructions differ";
  return ::testing::AssertionSuccess();
}
}  // namespace

TEST_P(DeltaCudaDecoder, SameVerdictsAndFramesAsTheCpuDecoder) {
  SKIP_WITHOUT_GPU();
  const auto [format, threshold] = GetParam();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  for (const auto& size : {std::pair<int, int>{173, 97}, {1, 1}, {333, 211}}) {
    const ImageDesc desc{format, size.first, size.second};
    const auto clip = make_clip(desc, 16, 41 + threshold);
    for (DeltaCompression comp : kFormat3And4) {
    SCOPED_TRACE(name_of(comp));
    const Coded coded = encode_clip(clip, threshold, 6, comp);
    std::vector<std::vector<uint8_t>> stream_packets;
    stream_packets.push_back(coded.packets[1]);  // a delta before any keyframe
    for (size_t n = 0; n < coded.packets.size(); n++) {
      std::vector<uint8_t> p = coded.packets[n];
      if (n == 3)
        continue;  // lost
      if (n == 8)
        p.resize(p.size() / 2);  // truncated
      if (n == 14 || n == 10)
        p[p.size() - 1] ^= 0x40;  // damaged payload (10: while waiting for a keyframe)
      stream_packets.push_back(p);
    }
    // Format 4's lanes decoded, forced, on the host and on the GPU.
    for (size_t gpu_lanes_from : {SIZE_MAX, size_t(0)}) {
    SCOPED_TRACE(gpu_lanes_from ? "lanes on the host" : "lanes on the GPU");
    std::unique_ptr<DeltaDecoder> cpu;
    std::unique_ptr<DeltaDecoderCuda> gpu;
    ASSERT_TRUE(DeltaDecoder::create(desc, &cpu).is_ok());
    const Status s = DeltaDecoderCuda::create(desc, stream.get(), &gpu, gpu_lanes_from);
    ASSERT_TRUE(s.is_ok()) << s.message();
    int frames = 0;
    for (size_t n = 0; n < stream_packets.size(); n++) {
      const auto& p = stream_packets[n];
      std::string why_cpu, why_gpu;
      const DeltaDecodeResult a = cpu->decode(p.data(), p.size(), &why_cpu);
      const DeltaDecodeResult b = gpu->decode(p.data(), p.size(), &why_gpu);
      ASSERT_EQ(static_cast<int>(a), static_cast<int>(b))
          << "packet " << n << ": " << why_cpu << " / " << why_gpu;
      EXPECT_EQ(why_cpu, why_gpu) << "packet " << n;
      if (a != DeltaDecodeResult::Frame)
        continue;
      frames++;
      EXPECT_TRUE(same_reconstruction(*gpu, *cpu, desc, stream.get()))
          << size.first << "x" << size.second << " packet " << n;
    }
    // Keyframes at 0, 6, 12: frames 0-2 (3 lost, 4-5 wait), 6-7 (8 truncated,
    // 9-11 wait), 12-13 (14 damaged, 15 waits).
    EXPECT_EQ(frames, 7);
    }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FormatsAndThresholds, DeltaCudaDecoder,
                         ::testing::Combine(::testing::ValuesIn(kFormats),
                                            ::testing::Values(0, 10)),
                         [](const auto& info) {
                           return std::string(format_info(std::get<0>(info.param)).name) + "_T" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Damage behind valid CRCs (resealed: a sender's bug, a collision) reaches
// the lane decoder: single bit flips and cuts all through format-4 delta
// packets. The CUDA decoder with its lanes on the GPU gives the CPU
// decoder's verdict and message every time, and its frame when it gives
// one (the GPU lane decoder reads ahead of a damaged lane's end and checks
// it at group ends: this is where that must hold).
TEST(DeltaCudaDecoderDamage, LanesOnTheGpuAgreeWithTheCpuOnDamage) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    SCOPED_TRACE(format_info(f).name);
    const ImageDesc desc{f, 320, 200};
    const auto clip = make_clip(desc, 3, 29);
    const Coded coded = encode_clip(clip, 4, 0, DeltaCompression::Predictive);
    std::mt19937 rng(11);
    int frames = 0, corrupt = 0;
    for (int trial = 0; trial < 150; trial++) {
      const size_t n = 1 + trial % 2;  // the damaged delta frame
      std::vector<uint8_t> p = coded.packets[n];
      const size_t at = kDeltaHeaderSize + rng() % (p.size() - kDeltaHeaderSize);
      if (trial % 10 == 9)
        p.resize(at);
      else
        p[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      testing_support::reseal_delta_packet(p.data(), p.size());
      std::unique_ptr<DeltaDecoder> cpu;
      std::unique_ptr<DeltaDecoderCuda> gpu;
      ASSERT_TRUE(DeltaDecoder::create(desc, &cpu).is_ok());
      ASSERT_TRUE(DeltaDecoderCuda::create(desc, stream.get(), &gpu, 0).is_ok());
      std::string why_cpu, why_gpu;
      for (size_t k = 0; k < n; k++) {
        ASSERT_EQ(cpu->decode(coded.packets[k].data(), coded.packets[k].size(), &why_cpu),
                  DeltaDecodeResult::Frame);
        ASSERT_EQ(gpu->decode(coded.packets[k].data(), coded.packets[k].size(), &why_gpu),
                  DeltaDecodeResult::Frame);
      }
      const DeltaDecodeResult a = cpu->decode(p.data(), p.size(), &why_cpu);
      const DeltaDecodeResult b = gpu->decode(p.data(), p.size(), &why_gpu);
      ASSERT_EQ(static_cast<int>(a), static_cast<int>(b))
          << "trial " << trial << " byte " << at << ": " << why_cpu << " / " << why_gpu;
      if (a != DeltaDecodeResult::Frame) {
        EXPECT_EQ(why_cpu, why_gpu) << "trial " << trial << " byte " << at;
        corrupt++;
        continue;
      }
      frames++;
      EXPECT_TRUE(same_reconstruction(*gpu, *cpu, desc, stream.get()))
          << "trial " << trial << " byte " << at;
    }
    // Most damage is caught (a lane's state, the checksum); a flip in a
    // table entry's unused bits or the like may leave the frame as it was.
    EXPECT_GT(corrupt, 100) << frames << " frames";
  }
}

// A packet of a stream with intra refresh whose payload CRC fails, after a
// stream without: the CUDA decoder, which checks the CRC beside its GPU
// lanes, leaves refresh_stream() as the CPU decoder (which checks first)
// does, so the element's keyframe request is the same.
TEST(DeltaCudaDecoderDamage, BadPayloadCrcLeavesTheRefreshStateAlone) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  const ImageDesc desc{PixelFormat::RGBA, 320, 200};
  const auto clip = make_clip(desc, 2, 5);
  const Coded plain = encode_clip(clip, 4, 0, DeltaCompression::Predictive);
  std::unique_ptr<DeltaEncoder> enc;
  ASSERT_TRUE(DeltaEncoder::create(desc, &enc).is_ok());
  DeltaEncodeSettings s;
  s.threshold = 4;
  s.compression = DeltaCompression::Predictive;
  s.refresh_period = 4;
  std::vector<uint8_t> refresh;
  ASSERT_TRUE(enc->encode(clip[0].view(), s, &refresh).is_ok());
  ASSERT_TRUE(enc->encode(clip[1].view(), s, &refresh).is_ok());
  refresh.back() ^= 0x01;  // the payload's CRC fails; the header's holds
  std::unique_ptr<DeltaDecoder> cpu;
  std::unique_ptr<DeltaDecoderCuda> gpu;
  ASSERT_TRUE(DeltaDecoder::create(desc, &cpu).is_ok());
  ASSERT_TRUE(DeltaDecoderCuda::create(desc, stream.get(), &gpu, 0).is_ok());
  std::string why_cpu, why_gpu;
  for (const auto& p : plain.packets) {
    ASSERT_EQ(cpu->decode(p.data(), p.size(), &why_cpu), DeltaDecodeResult::Frame);
    ASSERT_EQ(gpu->decode(p.data(), p.size(), &why_gpu), DeltaDecodeResult::Frame);
  }
  EXPECT_EQ(cpu->decode(refresh.data(), refresh.size(), &why_cpu), DeltaDecodeResult::Corrupt);
  EXPECT_EQ(gpu->decode(refresh.data(), refresh.size(), &why_gpu), DeltaDecodeResult::Corrupt);
  EXPECT_EQ(why_cpu, "delta packet: payload checksum mismatch");
  EXPECT_EQ(why_gpu, why_cpu);
  EXPECT_FALSE(cpu->refresh_stream());
  EXPECT_FALSE(gpu->refresh_stream());
}
