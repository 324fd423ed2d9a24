// Format 4's motion-compensated tiles (delta_motion.hpp): where a moved byte
// is read, the vector section and its validation, the encoder's search on
// panning footage (the true motion found, every byte within the threshold,
// packets smaller than without), the decoder's refusals, and the CUDA
// encoder and decoder against the CPU's, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cudafx/delta.hpp"
#include "cudafx/delta_motion.hpp"
#include "cudafx/delta_tiles.hpp"
#include "support/delta_parts.hpp"
#include "support/delta_reseal.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "delta/bit_stream.hpp"  // the side information's bit streams (cuda/src)
#include "delta/motion_sad.hpp"  // the search's block sums (cuda/src)

using namespace cudafx;
using testing_support::HostImage;

namespace {

DeltaLayout layout_of(const ImageDesc& desc) {
  DeltaLayout l;
  EXPECT_TRUE(make_delta_layout(desc, &l).is_ok());
  return l;
}

// A clip whose byte of channel ch of pixel (x, y) in plane i of frame n is
// value(n, sub, x, y, ch), sub being the plane's subsampling (2 for 4:2:0
// chroma, else 1); called in raster order.
template <class F>
std::vector<HostImage> generated_clip(const ImageDesc& desc, int frames, F value) {
  std::vector<HostImage> clip;
  for (int n = 0; n < frames; n++) {
    clip.emplace_back(desc);
    const ImageView& v = clip.back().view();
    for (int i = 0; i < format_info(desc.format).n_planes; i++) {
      const PlaneView p = v.plane(i);
      const int sub = p.width < desc.width ? 2 : 1;
      for (int y = 0; y < p.height; y++)
        for (int x = 0; x < p.width; x++)
          for (int ch = 0; ch < p.channels; ch++)
            p.data[static_cast<size_t>(y) * p.pitch + x * p.channels + ch] =
                static_cast<uint8_t>(value(n, sub, x, y, ch));
    }
  }
  return clip;
}

// A camera panning over a textured scene: frame n shows the scene moved by
// n * (pan_x, pan_y) pixels of the first plane (chroma planes of 4:2:0 by
// half: pan by even numbers), with sensor noise of +-1.
std::vector<HostImage> panning_clip(const ImageDesc& desc, int frames, int pan_x, int pan_y,
                                    uint32_t seed) {
  std::mt19937 rng(seed);
  return generated_clip(desc, frames, [&](int n, int sub, int x, int y, int ch) {
    const int sx = x + n * pan_x / sub, sy = y + n * pan_y / sub;  // scene coordinates
    const int texture = ((sx * 13) ^ (sy * 7)) % 97 + (sx / 9 + sy / 5) % 3 * 40 + ch * 30 +
                        ((sx * sx + sy * 3) % 11);
    return texture + static_cast<int>(rng() % 3) - 1;
  });
}

// Content where many candidates tie: a flat background, a checkerboard of
// period 8 pixels and a bright square, the whole scene moving by (12, -6)
// pixels a frame and the square by (-5, 3) more; so vectors reach far and
// the order of equal sums decides.
std::vector<HostImage> tied_clip(const ImageDesc& desc, int frames) {
  return generated_clip(desc, frames, [](int n, int, int x, int y, int ch) {
    const int sx = x + 12 * n, sy = y - 6 * n;
    int value = 100 + ch;
    if (sx % 200 < 90 && ((sy & 1023) % 150) < 70)
      value = ((sx / 8 + (sy & 1023) / 8) % 2) ? 200 : 40;
    const int qx = x - 40 + 5 * n, qy = y - 30 - 3 * n;
    if (qx >= 0 && qx < 24 && qy >= 0 && qy < 20)
      value = 250 - ch;
    return value;
  });
}

struct Encoded {
  std::vector<std::vector<uint8_t>> packets;
  size_t bytes = 0, moved = 0;
};

Encoded encode(const std::vector<HostImage>& clip, int threshold, bool motion) {
  std::unique_ptr<DeltaEncoder> enc;
  EXPECT_TRUE(DeltaEncoder::create(clip[0].desc(), &enc).is_ok());
  Encoded out;
  for (const HostImage& frame : clip) {
    DeltaEncodeSettings s;
    s.threshold = threshold;
    s.motion_search = motion;
    DeltaEncodeStats stats;
    out.packets.emplace_back();
    EXPECT_TRUE(enc->encode(frame.view(), s, &out.packets.back(), &stats).is_ok());
    out.bytes += out.packets.back().size();
    out.moved += stats.moved_tiles;
  }
  return out;
}

// The largest |decoded - source| over a clip decoded by `dec` (every packet
// must decode to a frame).
int largest_error(DeltaDecoderBase* dec, const std::vector<HostImage>& clip,
                  const std::vector<std::vector<uint8_t>>& packets,
                  const std::function<void(HostImage*)>& fetch) {
  int worst = 0;
  for (size_t n = 0; n < clip.size(); n++) {
    std::string err;
    EXPECT_EQ(dec->decode(packets[n].data(), packets[n].size(), &err), DeltaDecodeResult::Frame)
        << "frame " << n << ": " << err;
    HostImage got(clip[n].desc());
    fetch(&got);
    worst = std::max(worst, testing_support::max_abs_diff(got.view(), clip[n].view()));
  }
  return worst;
}

// The vectors a packet carries (none without header flag 5).
std::vector<DeltaVector> vectors_of(const DeltaLayout& l, const std::vector<uint8_t>& packet) {
  std::vector<DeltaVector> v(l.tile_count());
  if (!(packet[5] & 0x20))
    return v;
  size_t used = 0;
  const Status s = read_delta_vectors(l, packet.data() + kDeltaHeaderSize + 1,
                                      packet.size() - kDeltaHeaderSize - 1, &used, v.data());
  EXPECT_TRUE(s.is_ok()) << s.message();
  return v;
}

// A packet whose vector section is replaced by `section` (resealed).
std::vector<uint8_t> with_section(const std::vector<uint8_t>& packet,
                                  const std::vector<uint8_t>& section) {
  const size_t at = kDeltaHeaderSize + 1;
  uint32_t old = 0;
  std::memcpy(&old, packet.data() + at, 4);  // little-endian hosts only, as the tests run
  std::vector<uint8_t> out(packet.begin(), packet.begin() + at);
  out.insert(out.end(), section.begin(), section.end());
  out.insert(out.end(), packet.begin() + at + 4 + old, packet.end());
  testing_support::reseal_delta_packet(out.data(), out.size());
  return out;
}

}  // namespace

// A moved byte keeps its channel; its pixel is clamped to the plane, also
// for 3-byte pixels cut by the 64-byte tiles.
TEST(DeltaMotionMath, MovedBytesKeepTheirChannelAndClampToThePlane) {
  EXPECT_EQ(delta_moved_column(10, 2, 3, 30), 16);   // pixel 3, channel 1 -> pixel 5
  EXPECT_EQ(delta_moved_column(10, -5, 3, 30), 1);   // pixel -2 -> 0, channel 1
  EXPECT_EQ(delta_moved_column(29, 4, 3, 30), 29);   // pixel 13 -> 9 (the last), channel 2
  EXPECT_EQ(delta_moved_column(64, 1, 4, 400), 68);  // RGBA
  EXPECT_EQ(delta_moved_column(7, -64, 1, 100), 0);
  EXPECT_EQ(delta_moved_row(3, -9, 20), 0);
  EXPECT_EQ(delta_moved_row(15, 9, 20), 19);
  EXPECT_EQ(delta_moved_row(5, 2, 20), 7);
  // The search's candidates: stage 1 as documented (the vectors before in
  // half pixels, tried at their whole pixels, rounded down), stage 2
  // around the best, stage 3 the half pixels around stage 2's.
  int dx = 0, dy = 0;
  delta_search_stage1(0, {6, -2}, {10, 10}, &dx, &dy);
  EXPECT_EQ(std::make_pair(dx, dy), std::make_pair(3, -1));
  delta_search_stage1(1, {6, -2}, {10, 10}, &dx, &dy);
  EXPECT_EQ(std::make_pair(dx, dy), std::make_pair(5, 5));
  delta_search_stage1(0, {3, -3}, {}, &dx, &dy);  // 1.5, -1.5 pixels
  EXPECT_EQ(std::make_pair(dx, dy), std::make_pair(1, -2));
  std::vector<std::pair<int, int>> ring;
  for (int k = 2; k < 10; k++) {
    delta_search_stage1(k, {}, {}, &dx, &dy);
    ring.emplace_back(dx, dy);
  }
  EXPECT_EQ(ring, (std::vector<std::pair<int, int>>{
                      {-2, -2}, {0, -2}, {2, -2}, {-2, 0}, {2, 0}, {-2, 2}, {0, 2}, {2, 2}}));
  delta_search_stage1(kDeltaSearchStage1 - 1, {}, {}, &dx, &dy);
  EXPECT_EQ(std::make_pair(dx, dy), std::make_pair(16, 16));
  delta_search_stage2(0, 7, 7, &dx, &dy);
  EXPECT_EQ(std::make_pair(dx, dy), std::make_pair(5, 5));
  delta_search_stage2(12, 7, 7, &dx, &dy);  // the centre is left out
  EXPECT_EQ(std::make_pair(dx, dy), std::make_pair(8, 7));
  std::vector<std::pair<int, int>> halves;
  for (int k = 0; k < kDeltaSearchStage3; k++) {
    delta_search_stage3(k, 3, -1, &dx, &dy);
    halves.emplace_back(dx, dy);
  }
  EXPECT_EQ(halves, (std::vector<std::pair<int, int>>{
                        {5, -3}, {6, -3}, {7, -3}, {5, -2}, {7, -2}, {5, -1}, {6, -1}, {7, -1}}));
  EXPECT_FALSE(delta_search_candidate(0, 0));
  EXPECT_FALSE(delta_search_candidate(kDeltaMaxSearch + 1, 0));
  EXPECT_TRUE(delta_search_candidate(-kDeltaMaxSearch, kDeltaMaxSearch));
  EXPECT_FALSE(delta_search_half_candidate(0, 0));
  EXPECT_FALSE(delta_search_half_candidate(0, -kDeltaMaxVector - 1));
  EXPECT_TRUE(delta_search_half_candidate(kDeltaMaxVector, -kDeltaMaxVector));
  EXPECT_EQ(2 * kDeltaMaxSearch + 1, kDeltaMaxVector);  // stage 3 stays within the format
}

// A moved byte at a half pixel is the rounded mean of the whole pixels
// around it, each clamped to the plane, its channel kept.
TEST(DeltaMotionMath, HalfPixelsAreRoundedMeansOfClampedPixels) {
  // 4 pixels of 2 bytes a row, 3 rows, values whose pair sums are odd and
  // whose four-way sums leave every remainder mod 4: a mean rounded any
  // other way (down, or +1 or +3 over four) gives other bytes.
  const uint8_t plane[3][8] = {{0, 1, 4, 9, 16, 25, 36, 49},
                               {3, 7, 12, 30, 45, 60, 71, 90},
                               {100, 101, 103, 110, 130, 131, 150, 200}};
  auto at = [&](int col, int row, int hx, int hy) {
    return delta_moved_byte(&plane[0][0], 8, col, row,
                            DeltaVector{static_cast<int8_t>(hx), static_cast<int8_t>(hy)}, 2, 8,
                            3);
  };
  EXPECT_EQ(at(2, 1, 2, 0), 45);                         // one whole pixel right: (4, 1)
  EXPECT_EQ(at(2, 1, 1, 0), (12 + 45 + 1) / 2);          // half right: pixels 1 and 2 (29)
  EXPECT_EQ(at(3, 1, -1, 0), (7 + 30 + 1) / 2);          // half left: pixels 0, 1, channel 1 (19)
  EXPECT_EQ(at(2, 1, 0, 1), (12 + 103 + 1) / 2);         // half down (58)
  EXPECT_EQ(at(2, 0, 0, -1), 4);                         // half up from row 0: rows -1 -> 0 and 0
  EXPECT_EQ(at(2, 0, 1, 1), (4 + 16 + 12 + 45 + 2) / 4);  // 77: remainder 1 -> 19
  EXPECT_EQ(at(0, 0, 1, 1), (0 + 4 + 3 + 12 + 2) / 4);    // 19: remainder 3 -> 5
  EXPECT_EQ(at(1, 1, 1, 1), (7 + 30 + 101 + 110 + 2) / 4);  // 248: remainder 0 -> 62
  EXPECT_EQ(at(2, 1, 1, 1), (12 + 45 + 103 + 130 + 2) / 4);  // 290: remainder 2 -> 73
  EXPECT_EQ(at(6, 2, 1, 1), 150);                        // past the last pixel and row: clamped
  EXPECT_EQ(at(0, 1, -3, -3), 0);  // -1.5: pixels -2, -1 -> 0, rows -1, 0 -> 0
  EXPECT_EQ(at(1, 2, -1, 1), (101 + 101 + 101 + 101 + 2) / 4);  // all clamped to (0, 2)
}

// The search's block sums, in every version this CPU runs (portable, and
// AVX2 where there is one), are the sums of |tile - moved byte| that the
// per-byte math gives, at whole and half pixels, 1 to 4 bytes a pixel and
// 1 to 16 rows; with a limit, the exact sum below it and at least the
// limit otherwise.
TEST(DeltaMotionKernels, BlockSumsAreThePerByteMath) {
  std::vector<const DeltaBlockSad*> versions{delta_block_sad_portable(), delta_block_sad_avx2()};
  versions.erase(std::remove(versions.begin(), versions.end(), nullptr), versions.end());
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(&delta_block_sad(), versions.back());  // the fastest there is
  // A plane of 4-byte pixels large enough that nothing read clamps; the
  // tile a region of another.
  constexpr int kRowBytes = 4 * 100, kRows = 64;
  std::mt19937 rng(31);
  std::vector<uint8_t> plane(kRowBytes * kRows), cur(kRowBytes * kRows);
  for (auto& b : plane) b = static_cast<uint8_t>(rng());
  for (size_t k = 0; k < cur.size(); k++)  // near the plane, so sums are small and large
    cur[k] = static_cast<uint8_t>(k % 3 ? plane[k] + rng() % 9 : rng());
  int tried = 0;
  for (const DeltaBlockSad* v : versions)
    for (int c : {1, 2, 3, 4})
      for (int trial = 0; trial < 60; trial++) {
        const int h = 1 + trial % kDeltaTileH;
        const int x0 = c * (8 + static_cast<int>(rng() % 8)), y0 = 8 + static_cast<int>(rng() % 8);
        const DeltaVector mv{static_cast<int8_t>(static_cast<int>(rng() % 13) - 6),
                             static_cast<int8_t>(static_cast<int>(rng() % 13) - 6)};
        int expected = 0;
        for (int y = 0; y < h; y++)
          for (int x = 0; x < kDeltaTileW; x++)
            expected += std::abs(cur[(y0 + y) * kRowBytes + x0 + x] -
                                 delta_moved_byte(plane.data(), kRowBytes, x0 + x, y0 + y, mv, c,
                                                  kRowBytes, kRows));
        const uint8_t* tile = cur.data() + y0 * kRowBytes + x0;
        const uint8_t* block = plane.data() + (y0 + delta_whole_pixels(mv.dy)) * kRowBytes + x0 +
                               delta_whole_pixels(mv.dx) * c;
        const bool fx = mv.dx & 1, fy = mv.dy & 1;
        auto sum = [&](int limit) {
          return fx || fy ? v->half(tile, kRowBytes, block, kRowBytes, c, fx, fy, h, limit)
                          : v->whole(tile, kRowBytes, block, kRowBytes, h, limit);
        };
        const std::string where = std::string(v->name) + " c=" + std::to_string(c) + " h=" +
                                  std::to_string(h) + " v=(" + std::to_string(mv.dx) + "," +
                                  std::to_string(mv.dy) + ")";
        EXPECT_EQ(sum(INT_MAX), expected) << where;
        EXPECT_EQ(sum(expected + 1), expected) << where;
        EXPECT_GE(sum(expected / 3), expected / 3) << where;
        EXPECT_LE(sum(expected / 3), expected) << where;
        tried++;
      }
  EXPECT_EQ(tried, 240 * static_cast<int>(versions.size()));
}

// A stage's candidates in one call (whole_best) pick what summing them one
// by one picks: the first whose exact sum is below the best so far, in
// order, so a later tie does not take it; the best sum updated; -1 and the
// best untouched when none is below it. Lists with repeats (ties), every
// length 0..34, every version.
TEST(DeltaMotionKernels, AStagesListPicksWhatOneByOnePicks) {
  std::vector<const DeltaBlockSad*> versions{delta_block_sad_portable(), delta_block_sad_avx2()};
  versions.erase(std::remove(versions.begin(), versions.end(), nullptr), versions.end());
  constexpr int kRowBytes = 200, kRows = 64;
  std::mt19937 rng(77);
  std::vector<uint8_t> plane(kRowBytes * kRows), cur(kDeltaTileW * kDeltaTileH);
  for (auto& b : plane) b = static_cast<uint8_t>(rng());
  for (size_t k = 0; k < cur.size(); k++)  // near the block at (64, 24)
    cur[k] = static_cast<uint8_t>(plane[(24 + k / kDeltaTileW) * kRowBytes + 64 + k % kDeltaTileW] +
                                  rng() % 5);
  const uint8_t* origin = plane.data() + 24 * kRowBytes + 64;
  for (const DeltaBlockSad* v : versions)
    for (int n = 0; n <= 34; n++)
      for (int trial = 0; trial < 8; trial++) {
        std::vector<ptrdiff_t> offsets;
        for (int k = 0; k < n; k++) {
          // Vectors within +-3 (a repeat now and then: ties), the one of
          // the near block among them.
          const int dx = static_cast<int>(rng() % 7) - 3, dy = static_cast<int>(rng() % 7) - 3;
          offsets.push_back(k > 0 && rng() % 4 == 0 ? offsets[rng() % k]
                                                     : static_cast<ptrdiff_t>(dy) * kRowBytes + dx);
        }
        const int start = trial % 2 ? INT_MAX : 20 * kDeltaTileW * kDeltaTileH / 8;
        int want_best = start, want = -1;
        for (int k = 0; k < n; k++) {
          int sum = 0;
          for (int y = 0; y < kDeltaTileH; y++)
            for (int x = 0; x < kDeltaTileW; x++)
              sum += std::abs(cur[y * kDeltaTileW + x] - origin[offsets[k] + y * kRowBytes + x]);
          if (sum < want_best) {
            want_best = sum;
            want = k;
          }
        }
        int best = start;
        const int got = v->whole_best(cur.data(), kDeltaTileW, origin, kRowBytes, kDeltaTileH,
                                      offsets.data(), n, &best);
        ASSERT_EQ(got, want) << v->name << " n=" << n << " trial " << trial;
        ASSERT_EQ(best, want_best) << v->name << " n=" << n << " trial " << trial;
      }
}

// src's planes in a delta_margin_image (*view, in `storage`), its margins
// filled: the reference with margin the CPU encoder keeps.
void copy_with_margin(const DeltaLayout& l, const ImageView& src, std::vector<uint8_t>* storage,
                      ImageView* view) {
  delta_margin_image(l, storage, view);
  for (int i = 0; i < l.n_planes; i++) copy_plane_host(view->plane(i), src.plane(i));
  delta_fill_margins(l, *view);
}

// The bytes of a delta_margin_image's margins (and plane) that differ from
// the clamped reads of `src` (the per-byte math's).
int margin_bytes_wrong(const DeltaLayout& l, const ImageView& with_margin, const ImageView& src) {
  constexpr int m = kDeltaSearchMargin;
  int wrong = 0;
  for (int i = 0; i < l.n_planes; i++) {
    const DeltaPlaneLayout& p = l.planes[i];
    const int c = p.pixel_bytes, width = p.row_bytes / c;
    for (int y = -m; y < p.height + m; y++)
      for (int x = -m; x < width + m; x++)
        for (int ch = 0; ch < c; ch++) {
          const int got = with_margin.data[i][static_cast<ptrdiff_t>(y) *
                                                  static_cast<ptrdiff_t>(with_margin.pitch[i]) +
                                              x * c + ch];
          const int want = src.data[i][static_cast<size_t>(delta_moved_row(0, y, p.height)) *
                                           src.pitch[i] +
                                       delta_moved_column(ch, x, c, p.row_bytes)];
          wrong += got != want;
        }
  }
  return wrong;
}

// The CPU encoder's reference with margin (delta_margin_image,
// delta_fill_margins) repeats each plane's edge pixels (every channel)
// into a margin of kDeltaSearchMargin pixels and rows, so a read there is
// the clamped read of the per-byte math.
TEST(DeltaMotionMath, MarginRepeatsThePlanesEdges) {
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGB, PixelFormat::RGBA,
                        PixelFormat::I420, PixelFormat::NV12}) {
    const ImageDesc desc{f, 70, 38};
    const DeltaLayout l = layout_of(desc);
    HostImage src(desc, 5);
    src.fill_random(4);
    std::vector<uint8_t> storage;
    ImageView copy;
    copy_with_margin(l, src.view(), &storage, &copy);
    copy_with_margin(l, src.view(), &storage, &copy);  // again, into the same storage
    EXPECT_EQ(margin_bytes_wrong(l, copy, src.view()), 0) << format_info(f).name;
  }
}

// The encoder's search reads its copy of the reference through the margin
// without clamping; with a copy without margin (DeltaMotionSearch::margin
// 0) every read clamps. Both give the same tiles, vectors and
// reconstruction, frame after frame (the vectors before feeding the next
// search), on content whose vectors reach past the planes' sides, tiles
// cut at the right and bottom included; and on a pan of 63 pixels a frame
// that the vectors before start at (63, -63) whole pixels, the farthest a
// whole-pixel candidate goes, so that stage 3 reads the margin's last
// pixels.
TEST(DeltaMotionStream, SearchThroughTheMarginEqualsTheClampedSearch) {
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGBA, PixelFormat::RGB,
                        PixelFormat::I420, PixelFormat::NV12})
   for (bool far : {false, true}) {
    const ImageDesc desc{f, 300, 150};
    const DeltaLayout l = layout_of(desc);
    const auto clip = far ? panning_clip(desc, 3, kDeltaMaxSearch, -kDeltaMaxSearch, 12)
                          : tied_clip(desc, 4);
    const DeltaVector start = far ? DeltaVector{2 * kDeltaMaxSearch, -2 * kDeltaMaxSearch}
                                  : DeltaVector{};
    for (int threshold : {0, 6}) {
      const std::string where = std::string(format_info(f).name) + " T=" +
                                std::to_string(threshold) + (far ? " far" : "");
      struct Run {
        HostImage ref;
        std::vector<DeltaVector> previous, vectors;
        std::vector<uint8_t> symbols, modes, storage;
      };
      Run runs[2];
      for (Run& r : runs) {
        r.ref = HostImage(desc);
        r.ref.copy_from(clip[0].view());
        r.previous.assign(l.tile_count(), start);
        r.vectors.assign(l.tile_count(), DeltaVector{});
        r.symbols.assign(l.frame_bytes, 0);
        r.modes.assign(l.tile_count(), 0);
      }
      size_t moved = 0, near_side = 0, farthest = 0;
      for (size_t n = 1; n < clip.size(); n++) {
        HostImage plain(desc);
        for (int k = 0; k < 2; k++) {
          Run& r = runs[k];
          DeltaMotionSearch m;
          if (k == 0) {
            plain.copy_from(r.ref.view());
            m.prev = plain.view();
          } else {
            copy_with_margin(l, r.ref.view(), &r.storage, &m.prev);
            m.margin = kDeltaSearchMargin;
          }
          m.previous = r.previous.data();
          delta_global_vectors(l, r.previous.data(), m.global);
          m.vectors = r.vectors.data();
          DeltaIntra intra;
          delta_tiles_encode_cpu(l, clip[n].view(), r.ref.view(), threshold, intra,
                                 r.symbols.data(), r.modes.data(), &m);
          r.previous.swap(r.vectors);
        }
        EXPECT_EQ(runs[0].symbols, runs[1].symbols) << where << " frame " << n;
        EXPECT_EQ(runs[0].modes, runs[1].modes) << where << " frame " << n;
        EXPECT_EQ(testing_support::max_abs_diff(runs[0].ref.view(), runs[1].ref.view()), 0)
            << where << " frame " << n;
        for (size_t t = 0; t < l.tile_count(); t++) {
          const DeltaVector a = runs[0].previous[t], b = runs[1].previous[t];
          EXPECT_TRUE(a.dx == b.dx && a.dy == b.dy) << where << " frame " << n << " tile " << t;
          moved += delta_vector_set(a);
          farthest += std::abs(delta_whole_pixels(a.dx)) >= kDeltaMaxSearch ||
                      std::abs(delta_whole_pixels(a.dy)) >= kDeltaMaxSearch;
        }
        // Vectors whose block reaches past a side: what the margin serves.
        for (int i = 0; i < l.n_planes; i++) {
          const DeltaPlaneLayout& p = l.planes[i];
          for (int ty = 0; ty < p.tiles_y; ty++)
            for (int tx = 0; tx < p.tiles_x; tx++) {
              const DeltaVector v = runs[0].previous[l.first_tile[i] + static_cast<size_t>(ty) * p.tiles_x + tx];
              const int px0 = tx * kDeltaTileW / p.pixel_bytes + delta_whole_pixels(v.dx);
              const int py0 = ty * kDeltaTileH + delta_whole_pixels(v.dy);
              near_side += delta_vector_set(v) &&
                           (px0 < 0 || py0 < 0 ||
                            px0 + kDeltaTileW / p.pixel_bytes >= p.row_bytes / p.pixel_bytes ||
                            py0 + kDeltaTileH >= p.height);
            }
        }
      }
      EXPECT_GT(moved, l.tile_count() / 4) << where;
      EXPECT_GT(near_side, 0u) << where;
      if (far) {
        EXPECT_GT(farthest, 0u) << where;
      }
    }
   }
}

// The CPU encoder's two references (DeltaRebuild): the frame rebuilt into
// the other one, margins filled and checksum summed row band by row band,
// gives what rebuilding in place after a copy with margin gives -- the
// same symbols, modes, vectors and reconstruction, the reconstruction's
// margins repeating its edges, the checksum delta_checksum's -- and leaves
// the reference it read as it was. Frame after frame, the two references
// taking turns, on content that moves past the sides (vectors into the
// margins), with a frame repeated (every tile skipped: copied across) and
// a flat background (some tiles skipped in every frame).
TEST(DeltaMotionStream, TwoReferencesEqualACopyAndARebuildInPlace) {
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGBA, PixelFormat::RGB,
                        PixelFormat::I420, PixelFormat::NV12})
    for (bool far : {false, true}) {
      const ImageDesc desc{f, 300, 150};
      const DeltaLayout l = layout_of(desc);
      auto clip = far ? panning_clip(desc, 4, kDeltaMaxSearch, -kDeltaMaxSearch, 13)
                      : tied_clip(desc, 4);
      clip.emplace_back(desc);
      clip.back().copy_from(clip[clip.size() - 2].view());  // a frame repeated
      for (int threshold : {0, 6}) {
        const std::string where = std::string(format_info(f).name) + " T=" +
                                  std::to_string(threshold) + (far ? " far" : "");
        // In place: the reference and its copy with margin.
        HostImage ref(desc);
        ref.copy_from(clip[0].view());
        std::vector<uint8_t> copy_storage;
        // Two references with margins, the first holding clip[0].
        std::vector<uint8_t> storage[2];
        ImageView refs[2];
        copy_with_margin(l, clip[0].view(), &storage[0], &refs[0]);
        delta_margin_image(l, &storage[1], &refs[1]);
        ASSERT_EQ(margin_bytes_wrong(l, refs[0], clip[0].view()), 0) << where;
        int at = 0;
        std::vector<DeltaVector> previous[2], vectors[2];
        std::vector<uint8_t> symbols[2], modes[2];
        // As the clamped search's test: the far pan's vectors start there.
        const DeltaVector start = far ? DeltaVector{2 * kDeltaMaxSearch, -2 * kDeltaMaxSearch}
                                      : DeltaVector{};
        for (int k = 0; k < 2; k++) {
          previous[k].assign(l.tile_count(), start);
          vectors[k].assign(l.tile_count(), DeltaVector{});
          symbols[k].assign(l.frame_bytes, 0);
          modes[k].assign(l.tile_count(), 0);
        }
        size_t skipped = 0, moved = 0;
        for (size_t n = 1; n < clip.size(); n++) {
          DeltaMotionSearch m[2];
          copy_with_margin(l, ref.view(), &copy_storage, &m[0].prev);
          m[1].prev = refs[at];
          for (int k = 0; k < 2; k++) {
            m[k].margin = kDeltaSearchMargin;
            m[k].previous = previous[k].data();
            delta_global_vectors(l, previous[k].data(), m[k].global);
            m[k].vectors = vectors[k].data();
          }
          HostImage before(desc);
          before.copy_from(refs[at]);
          delta_tiles_encode_cpu(l, clip[n].view(), ref.view(), threshold, {}, symbols[0].data(),
                                 modes[0].data(), &m[0]);
          DeltaRebuild rebuild;
          rebuild.out = refs[1 - at];
          rebuild.checksum = 12345;
          delta_tiles_encode_cpu(l, clip[n].view(), refs[at], threshold, {}, symbols[1].data(),
                                 modes[1].data(), &m[1], nullptr, &rebuild);
          EXPECT_EQ(testing_support::max_abs_diff(before.view(), refs[at]), 0)
              << where << " frame " << n << ": the reference read was written";
          at = 1 - at;
          EXPECT_EQ(symbols[0], symbols[1]) << where << " frame " << n;
          EXPECT_EQ(modes[0], modes[1]) << where << " frame " << n;
          EXPECT_EQ(testing_support::max_abs_diff(ref.view(), refs[at]), 0)
              << where << " frame " << n;
          EXPECT_EQ(margin_bytes_wrong(l, refs[at], ref.view()), 0) << where << " frame " << n;
          EXPECT_EQ(rebuild.checksum, delta_checksum(l, ref.view())) << where << " frame " << n;
          for (size_t t = 0; t < l.tile_count(); t++) {
            EXPECT_TRUE(vectors[0][t].dx == vectors[1][t].dx && vectors[0][t].dy == vectors[1][t].dy)
                << where << " frame " << n << " tile " << t;
            skipped += modes[0][t] == kDeltaSkip;
            moved += delta_vector_set(vectors[0][t]);
          }
          for (int k = 0; k < 2; k++) previous[k].swap(vectors[k]);
        }
        EXPECT_GE(skipped, l.tile_count()) << where;  // the repeated frame's at least
        EXPECT_GT(moved, l.tile_count() / 4) << where;
      }
    }
}

// Frames whose every byte is the rounded mean of the frame before and its
// right neighbour (a half-pixel pan): the search finds (1, 0) half pixels
// for the tiles inside the plane, which then code to nothing but their
// modes (lossless: every symbol 0), and the decoder rebuilds the frames.
TEST(DeltaMotionStream, HalfPixelMotionIsFoundAndPredictsExactly) {
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGBA}) {
    const ImageDesc desc{f, 320, 96};
    const DeltaLayout l = layout_of(desc);
    const int c = format_info(f).planes[0].channels;
    std::vector<HostImage> clip;
    clip.emplace_back(desc);
    std::mt19937 rng(21);
    for (int y = 0; y < desc.height; y++)
      for (int x = 0; x < desc.width * c; x++)
        clip[0].view().data[0][y * clip[0].view().pitch[0] + x] = static_cast<uint8_t>(rng());
    for (int n = 1; n < 3; n++) {
      clip.emplace_back(desc);
      const ImageView& a = clip[n - 1].view();
      const ImageView& b = clip[n].view();
      for (int y = 0; y < desc.height; y++)
        for (int x = 0; x < desc.width * c; x++) {
          const int right = std::min(x + c, (desc.width - 1) * c + x % c);  // clamped
          b.data[0][y * b.pitch[0] + x] = static_cast<uint8_t>(
              (a.data[0][y * a.pitch[0] + x] + a.data[0][y * a.pitch[0] + right] + 1) >> 1);
        }
    }
    const Encoded moved = encode(clip, 0, true);
    for (size_t n = 1; n < clip.size(); n++) {
      const auto v = vectors_of(l, moved.packets[n]);
      const DeltaPlaneLayout& p = l.planes[0];
      size_t inside = 0, half = 0;
      for (int ty = 0; ty < p.tiles_y; ty++)
        for (int tx = 0; tx < p.tiles_x; tx++) {  // the right edge clamps as the frames do
          inside++;
          const DeltaVector& t = v[static_cast<size_t>(ty) * p.tiles_x + tx];
          half += t.dx == 1 && t.dy == 0;
        }
      EXPECT_EQ(half, inside) << format_info(f).name << " frame " << n;
    }
    std::unique_ptr<DeltaDecoder> dec;
    ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
    EXPECT_EQ(largest_error(dec.get(), clip, moved.packets,
                            [&](HostImage* got) { got->copy_from(dec->reconstruction()); }),
              0)
        << format_info(f).name;
  }
}

// Each plane's global candidate is its most frequent vector, the earliest
// on a tie.
TEST(DeltaMotionMath, GlobalVectorsAreEachPlanesMostFrequent) {
  const DeltaLayout l = layout_of({PixelFormat::I420, 256, 64});  // Y 4x4 tiles, U/V 2x2
  std::vector<DeltaVector> v(l.tile_count());
  v[1] = {1, 1};
  v[2] = {2, 0};
  v[3] = {2, 0};
  v[5] = {1, 1};
  v[l.first_tile[1] + 2] = {-3, 4};
  v[l.first_tile[1] + 1] = {5, 0};  // tie: the earlier tile's wins
  DeltaVector g[kMaxPlanes];
  delta_global_vectors(l, v.data(), g);
  EXPECT_EQ(g[0].dx, 1);  // {1,1} (tiles 1, 5) ties {2,0} (2, 3): tile 1 is earlier
  EXPECT_EQ(g[0].dy, 1);
  EXPECT_EQ(g[1].dx, 5);
  EXPECT_EQ(g[1].dy, 0);
  EXPECT_EQ(g[2].dx, 0);
  EXPECT_EQ(g[2].dy, 0);
  EXPECT_TRUE(delta_any_vector(l, v.data()));
}

// The bit writer (a word at a time) writes what the format's definition
// says bit by bit (docs/delta-format.md: bit i is bit i mod 8 of byte i / 8,
// fields least significant bit first), and the reader reads it back.
TEST(DeltaBitStream, WriterFollowsTheBitByBitDefinition) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; round++) {
    std::vector<uint8_t> got, want;
    size_t want_bits = 0;
    const auto bit = [&](uint32_t b) {
      if (want_bits % 8 == 0)
        want.push_back(0);
      want.back() = static_cast<uint8_t>(want.back() | b << (want_bits % 8));
      want_bits++;
    };
    struct Field { bool gamma; uint32_t v; int bits; };
    std::vector<Field> fields;
    BitWriter w(&got);
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; i++) {
      if (rng() % 2) {
        const uint32_t v = std::max<uint32_t>(1, static_cast<uint32_t>(rng() >> (rng() % 32)));
        w.gamma(v);
        int top = 31;
        while (!(v >> top)) top--;
        for (int k = 0; k < top; k++) bit(0);
        bit(1);
        for (int k = 0; k < top; k++) bit(v >> k & 1);
        fields.push_back({true, v, top});
      } else {
        const int bits = static_cast<int>(rng() % 33);
        const uint32_t v = static_cast<uint32_t>(rng());
        w.put(v, bits);
        for (int k = 0; k < bits; k++) bit(v >> k & 1);
        fields.push_back({false, bits < 32 ? v & ((1u << bits) - 1) : v, bits});
      }
    }
    w.flush();
    ASSERT_EQ(got, want) << "round " << round;
    BitReader r(got.data(), got.size());
    for (const Field& f : fields) {
      uint32_t v = 0;
      ASSERT_TRUE(f.gamma ? r.gamma(&v, 31) : r.get(f.bits, &v));
      EXPECT_EQ(v, f.v);
    }
    EXPECT_EQ(r.bits_read(), want_bits);
  }
}

// The section reads back what was written, and refuses every violation of
// the format by name.
TEST(DeltaMotionSection, RoundTripsAndRefusesWhatTheFormatForbids) {
  const DeltaLayout l = layout_of({PixelFormat::I420, 333, 211});
  std::mt19937 rng(5);
  std::vector<DeltaVector> v(l.tile_count());
  for (auto& x : v)
    if (rng() % 3 == 0)
      x = {static_cast<int8_t>(static_cast<int>(rng() % 255) - 127),
           static_cast<int8_t>(static_cast<int>(rng() % 255) - 127)};
  v.back() = {-127, 127};  // the last tile, the largest vector
  std::vector<uint8_t> section;
  write_delta_vectors(l, v.data(), &section);
  std::vector<DeltaVector> back(l.tile_count(), DeltaVector{9, 9});
  size_t used = 0;
  section.push_back(0xab);  // what follows the section is not its business
  ASSERT_TRUE(read_delta_vectors(l, section.data(), section.size(), &used, back.data()).is_ok());
  EXPECT_EQ(used, section.size() - 1);
  for (size_t t = 0; t < v.size(); t++) {
    EXPECT_EQ(back[t].dx, v[t].dx) << t;
    EXPECT_EQ(back[t].dy, v[t].dy) << t;
  }
  section.pop_back();

  auto refuse = [&](const std::vector<uint8_t>& bytes, const std::string& why) {
    size_t u = 0;
    const Status s = read_delta_vectors(l, bytes.data(), bytes.size(), &u, back.data());
    EXPECT_EQ(s.code(), StatusCode::InvalidArgument) << why;
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  };
  refuse({1, 0}, "truncated size");
  std::vector<uint8_t> cut(section.begin(), section.end() - 1);
  refuse(cut, "bytes announced");
  std::vector<uint8_t> longer = section;
  longer.push_back(0);
  longer[0]++;  // one byte more announced than coded
  refuse(longer, "coded");
  // Hand-made streams (bits least significant first): a run then a vector.
  auto stream = [](std::vector<int> bits) {
    std::vector<uint8_t> out(4, 0);
    for (size_t i = 0; i < bits.size(); i++) {
      if (i % 8 == 0)
        out.push_back(0);
      out.back() |= static_cast<uint8_t>(bits[i] << (i % 8));
    }
    const uint32_t n = static_cast<uint32_t>(out.size() - 4);
    std::memcpy(out.data(), &n, 4);
    return out;
  };
  // run 0 (gamma 1: "1"), dx 0 ("1"), dy 0 ("1"): the vector (0, 0).
  refuse(stream({1, 1, 1}), "vector (0, 0) given for tile 0");
  // Only a run to the end: no vector.
  std::vector<DeltaVector> none(l.tile_count());
  std::vector<uint8_t> empty;
  write_delta_vectors(l, none.data(), &empty);
  refuse(empty, "no vector");
  // run 0, dx = +128 half pixels (code 255: gamma 256 = 8 zeros, 1, then
  // 00000000), dy 0.
  refuse(stream({1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1}), "beyond");
  // A run past the last tile: gamma of tile_count + 2.
  {
    std::vector<uint8_t> out(4, 0);
    std::vector<int> bits;
    const uint32_t g = static_cast<uint32_t>(l.tile_count()) + 2;
    int z = 0;
    while ((g >> (z + 1)) != 0) z++;
    for (int i = 0; i < z; i++) bits.push_back(0);
    bits.push_back(1);
    for (int i = 0; i < z; i++) bits.push_back((g >> i) & 1);
    refuse(stream(bits), "passes the last tile");
  }
  refuse(stream({0, 0, 0, 0}), "truncated or overlong run");
  // run 0, then a difference whose gamma code has 9 zeros (|d| >= 256:
  // no vector within the bound needs it).
  refuse(stream({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}),
         "truncated or overlong vector");
}

// On a panning camera the search finds the pan for the tiles inside the
// frame, every byte stays within the threshold, and the stream is much
// smaller than without motion; on every plane layout, odd sizes included.
TEST(DeltaMotionStream, PanningFootageIsFoundAndStaysWithinTheThreshold) {
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGBA, PixelFormat::RGB,
                        PixelFormat::I420, PixelFormat::NV12}) {
    const ImageDesc desc{f, 333, 211};
    const DeltaLayout l = layout_of(desc);
    const auto clip = panning_clip(desc, 5, 4, -2, 3);
    for (int threshold : {0, 4, 10}) {
      const std::string where =
          std::string(format_info(f).name) + " T=" + std::to_string(threshold);
      const Encoded moved = encode(clip, threshold, true), plain = encode(clip, threshold, false);
      EXPECT_EQ(plain.moved, 0u) << where;
      EXPECT_GT(moved.moved, l.tile_count()) << where;  // over 4 delta frames
      EXPECT_LT(moved.bytes * 5, plain.bytes * 4) << where << ": " << moved.bytes << " vs "
                                                   << plain.bytes;
      // Tiles whose moved place lies inside the frame got the pan (the
      // scene moves left and down by (4, -2): a tile is predicted from
      // (+4, -2) of the frame before), in half pixels of their plane.
      for (size_t n = 1; n < clip.size(); n++) {
        ASSERT_TRUE(moved.packets[n][5] & 0x20) << where << " frame " << n;
        const auto v = vectors_of(l, moved.packets[n]);
        size_t inside = 0, right = 0;
        for (int i = 0; i < l.n_planes; i++) {
          const DeltaPlaneLayout& p = l.planes[i];
          const int sub = (f == PixelFormat::I420 || f == PixelFormat::NV12) && i > 0 ? 2 : 1;
          for (int ty = 1; ty + 1 < p.tiles_y; ty++)
            for (int tx = 1; tx + 1 < p.tiles_x; tx++) {
              const DeltaVector& t = v[l.first_tile[i] + static_cast<size_t>(ty) * p.tiles_x + tx];
              inside++;
              right += t.dx == 2 * (4 / sub) && t.dy == 2 * (-2 / sub);
            }
        }
        // The first delta frame has no previous vectors to start from: the
        // rings of stage 1 lead to the pan in most tiles of this texture
        // (80-99 %); from the second on, the last frame's vectors are tried
        // first.
        if (n >= 2) {
          EXPECT_GE(right * 10, inside * 9) << where << " frame " << n;
        } else {
          EXPECT_GE(right * 10, inside * 7) << where << " frame " << n;
        }
      }
      std::unique_ptr<DeltaDecoder> dec;
      ASSERT_TRUE(DeltaDecoder::create(desc, &dec).is_ok());
      EXPECT_LE(largest_error(dec.get(), clip, moved.packets,
                              [&](HostImage* got) {
                                got->copy_from(dec->reconstruction());
                              }),
                threshold)
          << where;
    }
  }
}

// Motion search is off in streams with intra refresh (a moved tile could
// read tiles a joining decoder has not rebuilt), and off for keyframes.
TEST(DeltaMotionStream, NoVectorsWithIntraRefreshOrOnKeyframes) {
  const ImageDesc desc{PixelFormat::I420, 200, 120};
  const auto clip = panning_clip(desc, 4, 2, 2, 8);
  std::unique_ptr<DeltaEncoder> enc;
  ASSERT_TRUE(DeltaEncoder::create(desc, &enc).is_ok());
  for (size_t n = 0; n < clip.size(); n++) {
    DeltaEncodeSettings s;
    s.threshold = 2;
    s.refresh_period = 3;
    DeltaEncodeStats stats;
    std::vector<uint8_t> pkt;
    ASSERT_TRUE(enc->encode(clip[n].view(), s, &pkt, &stats).is_ok());
    EXPECT_EQ(stats.moved_tiles, 0u);
    EXPECT_FALSE(pkt[5] & 0x20);
  }
  const Encoded keyed = encode(clip, 2, true);
  EXPECT_FALSE(keyed.packets[0][5] & 0x20);
}

// What a decoder refuses (the CPU's, and the CUDA decoder's with its lanes
// on the GPU): a vector on a tile that is not temporal, the flag on a
// keyframe or with intra refresh, a damaged section; each Corrupt with its
// reason, and the decoder waits for a keyframe after.
TEST(DeltaMotionDecoder, BadVectorsAreCorruptAndNamed) {
  const ImageDesc desc{PixelFormat::RGBA, 160, 64};
  const DeltaLayout l = layout_of(desc);
  auto clip = panning_clip(desc, 3, 2, 0, 4);
  // Frame 2's top-left tile repeats frame 1's: skipped.
  for (int y = 0; y < kDeltaTileH; y++)
    std::memcpy(clip[2].view().data[0] + y * clip[2].view().pitch[0],
                clip[1].view().data[0] + y * clip[1].view().pitch[0], kDeltaTileW);
  const Encoded e = encode(clip, 0, true);
  ASSERT_TRUE(e.packets[2][5] & 0x20);
  // The CPU decoder, and where a GPU is, the CUDA decoder with its lanes
  // on the GPU (the modes come back to the host for the check).
  const bool gpu = testing_support::gpu_part_runs();
  CudaStream stream;
  if (gpu) {
    ASSERT_TRUE(stream.create().is_ok());
  }
  auto expect_corrupt = [&](const std::vector<uint8_t>& bad, const std::string& why) {
    for (int backend = 0; backend < (gpu ? 2 : 1); backend++) {
      std::unique_ptr<DeltaDecoderBase> dec;
      if (backend == 0) {
        std::unique_ptr<DeltaDecoder> cpu;
        ASSERT_TRUE(DeltaDecoder::create(desc, &cpu).is_ok());
        dec = std::move(cpu);
      } else {
        std::unique_ptr<DeltaDecoderCuda> cuda;
        ASSERT_TRUE(DeltaDecoderCuda::create(desc, stream.get(), &cuda, 0).is_ok());
        dec = std::move(cuda);
      }
      std::string err;
      for (int n = 0; n < 2; n++)
        ASSERT_EQ(dec->decode(e.packets[n].data(), e.packets[n].size(), &err),
                  DeltaDecodeResult::Frame);
      EXPECT_EQ(dec->decode(bad.data(), bad.size(), &err), DeltaDecodeResult::Corrupt) << why;
      EXPECT_NE(err.find(why), std::string::npos) << err;
      EXPECT_EQ(dec->decode(e.packets[2].data(), e.packets[2].size(), &err),
                DeltaDecodeResult::NeedKeyframe);
    }
  };
  auto v = vectors_of(l, e.packets[2]);
  ASSERT_FALSE(delta_vector_set(v[0]));
  v[0] = {1, 0};  // the skipped tile
  std::vector<uint8_t> section;
  write_delta_vectors(l, v.data(), &section);
  expect_corrupt(with_section(e.packets[2], section),
                 "tile 0 has a motion vector but is not temporal");

  std::vector<uint8_t> truncated = e.packets[2];
  truncated[kDeltaHeaderSize + 1] = 0xff;  // a section longer than the packet
  testing_support::reseal_delta_packet(truncated.data(), truncated.size());
  expect_corrupt(truncated, "vector section: ");

  std::vector<uint8_t> keyed = e.packets[2];
  keyed[5] |= 1;  // keyframe with vectors
  testing_support::reseal_delta_packet(keyed.data(), keyed.size());
  expect_corrupt(keyed, "motion vectors on a keyframe or in a stream with intra refresh");
  std::vector<uint8_t> refresh = e.packets[2];
  refresh[5] |= 8;
  testing_support::reseal_delta_packet(refresh.data(), refresh.size());
  expect_corrupt(refresh, "motion vectors on a keyframe or in a stream with intra refresh");
  // A development stream's whole-pixel vectors (flag 4): refused by name.
  std::vector<uint8_t> whole = e.packets[2];
  whole[5] = static_cast<uint8_t>((whole[5] & ~0x20) | 0x10);
  testing_support::reseal_delta_packet(whole.data(), whole.size());
  expect_corrupt(whole, "whole-pixel motion vectors (flag 4, a development form of format 4)");
}

// The CUDA encoder finds the CPU's vectors and writes the CPU's packets, and
// the CUDA decoder (lanes on the host and on the GPU) rebuilds them: every
// plane layout, odd sizes (3-byte pixels cut by the tiles, moved tiles
// across the plane's edges), thresholds 0/4/10, a pan and content where
// candidates tie and vectors reach far, a keyframe and a frame without
// search in the middle (the candidates start again after either). The
// pipelined encoder (submit(): a frame's coding beside the next one's
// search, each frame's vectors the next one's candidates across its two
// slots) writes the same packets.
class DeltaMotionCuda : public ::testing::TestWithParam<int> {};

TEST_P(DeltaMotionCuda, EncoderAndDecoderEqualTheCpu) {
  SKIP_WITHOUT_GPU();
  const int threshold = GetParam();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGB, PixelFormat::GRAY8, PixelFormat::I420,
                        PixelFormat::NV12}) {
    for (const auto& size : {std::pair<int, int>{333, 211}, {64, 16}, {1, 1}, {250, 97}}) {
      for (int content = 0; content < 2; content++) {
        const ImageDesc desc{f, size.first, size.second};
        const auto clip = content == 0 ? panning_clip(desc, 8, 4, 2, 11 + threshold)
                                       : tied_clip(desc, 8);
        std::unique_ptr<DeltaEncoder> cpu;
        std::unique_ptr<DeltaEncoderCuda> gpu, piped;
        ASSERT_TRUE(DeltaEncoder::create(desc, &cpu).is_ok());
        ASSERT_TRUE(DeltaEncoderCuda::create(desc, &gpu).is_ok());
        ASSERT_TRUE(DeltaEncoderCuda::create(desc, &piped).is_ok());
        // A submitted frame stays unchanged until the next submit() returns.
        testing_support::DeviceImage piped_in0(desc, 3), piped_in1(desc, 3);
        testing_support::DeviceImage* piped_in[2] = {&piped_in0, &piped_in1};
        std::vector<std::vector<uint8_t>> cpu_packets;
        std::vector<size_t> cpu_moved;
        size_t piped_next = 0;  // the frame whose packet submit() gives next
        const auto take_piped = [&](const DeltaPacketParts& parts, const DeltaEncodeStats& st) {
          const std::vector<uint8_t> joined = testing_support::joined(parts);
          ASSERT_LT(piped_next, cpu_packets.size());
          EXPECT_EQ(cpu_packets[piped_next], joined)
              << format_info(f).name << " " << size.first << "x" << size.second
              << (content ? " tied" : " pan") << " frame " << piped_next << " submitted";
          EXPECT_EQ(cpu_moved[piped_next], st.moved_tiles);
          EXPECT_EQ(st.packet_bytes, joined.size());
          piped_next++;
        };
        std::unique_ptr<DeltaDecoderCuda> dec_host_lanes, dec_gpu_lanes;
        ASSERT_TRUE(DeltaDecoderCuda::create(desc, stream.get(), &dec_host_lanes).is_ok());
        ASSERT_TRUE(DeltaDecoderCuda::create(desc, stream.get(), &dec_gpu_lanes, 0).is_ok());
        testing_support::DeviceImage cur(desc, 3);
        size_t moved = 0;
        for (size_t n = 0; n < clip.size(); n++) {
          const std::string where = std::string(format_info(f).name) + " " +
                                    std::to_string(size.first) + "x" +
                                    std::to_string(size.second) + (content ? " tied" : " pan") +
                                    " frame " + std::to_string(n);
          DeltaEncodeSettings s;
          s.threshold = threshold;
          s.force_keyframe = n == 4;
          s.motion_search = n != 6;
          std::vector<uint8_t> a, b;
          DeltaEncodeStats sa, sb;
          ASSERT_TRUE(cpu->encode(clip[n].view(), s, &a, &sa).is_ok());
          ASSERT_TRUE(cur.upload(clip[n].view(), stream.get()).is_ok());
          const Status st = gpu->encode(cur.view(), s, stream.get(), &b, &sb);
          ASSERT_TRUE(st.is_ok()) << st.message();
          EXPECT_EQ(a, b) << where << " (" << a.size() << " vs " << b.size() << " bytes)";
          EXPECT_EQ(sa.moved_tiles, sb.moved_tiles) << where;
          moved += sa.moved_tiles;
          cpu_packets.push_back(a);
          cpu_moved.push_back(sa.moved_tiles);
          ASSERT_TRUE(piped_in[n % 2]->upload(clip[n].view(), stream.get()).is_ok());
          DeltaPacketParts parts;
          DeltaEncodeStats sp;
          bool got = false;
          const Status sub = piped->submit(piped_in[n % 2]->view(), s, stream.get(), &parts, &got, &sp);
          ASSERT_TRUE(sub.is_ok()) << where << ": " << sub.message();
          EXPECT_EQ(got, n > 0) << where;
          if (got)
            take_piped(parts, sp);
          for (DeltaDecoderCuda* dec : {dec_host_lanes.get(), dec_gpu_lanes.get()}) {
            std::string err;
            EXPECT_EQ(dec->decode(a.data(), a.size(), &err), DeltaDecodeResult::Frame)
                << where << ": " << err;
            HostImage got(desc), want(desc);
            ASSERT_TRUE(copy_image_async(got.view(), dec->reconstruction(), stream.get()).is_ok());
            ASSERT_TRUE(stream.synchronize().is_ok());
            want.copy_from(cpu->reference());
            EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view())) << where;
          }
        }
        DeltaPacketParts last;
        DeltaEncodeStats sl;
        bool got = false;
        ASSERT_TRUE(piped->flush(&last, &got, &sl).is_ok());
        ASSERT_TRUE(got);
        take_piped(last, sl);
        EXPECT_EQ(piped_next, clip.size());
        ASSERT_TRUE(piped->flush(&last, &got, &sl).is_ok());
        EXPECT_FALSE(got);  // nothing left
        if (size.first > 64) {
          EXPECT_GT(moved, 0u) << format_info(f).name;
        }
    }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Thresholds, DeltaMotionCuda, ::testing::Values(0, 4, 10));
