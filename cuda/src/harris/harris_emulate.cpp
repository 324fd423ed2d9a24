// The Harris CUDA kernels run on the host, for tests in builds without a
// GPU: every kernel's per-item functions (harris_kernels.hpp) are called
// for every block and thread in an order a GPU could have chosen, with the
// barriers between stages kept (a stage finishes before the next begins)
// and the atomics replaced by what they compute. Candidates are appended in
// a scrambled block order and gathered in reverse, so the list must not
// depend on either.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>

#include "cudafx/harris.hpp"
#include "cudafx/harris_math.hpp"
#include "harris/harris_kernels.hpp"

namespace cudafx {
namespace {

using namespace harris_kernels;

template <int GR, int BR, class Acc>
void emulate_response(const ResponseArgs& a) {
  using Fast = ResponseFastTile<GR, BR, Acc>;
  using Tile = ResponseTile<GR, BR, Acc>;
  std::unique_ptr<Fast> fast(new Fast);
  std::unique_ptr<Tile> tile(new Tile);
  const int bx_n = Fast::blocks_x(a.width), by_n = (a.height + kFastH - 1) / kFastH;
  for (int by = by_n - 1; by >= 0; by--) {  // an order a GPU could choose
    for (int bx = 0; bx < bx_n; bx++) {
      // Stale values from the previous block, as shared memory would hold.
      const int x0 = Fast::block_x0(bx), bw = Fast::block_width(bx), y0 = by * kFastH;
      float m = 0.0f;
      if (bw == Fast::kFastW && Fast::fits(a, x0, y0)) {
        for (int i = 0; i < Fast::kLoadItems; i++)
          fast->load(a, x0, y0, i);
        for (int i = 0; i < Fast::kRowItems; i++)
          fast->rows(i);
        for (int i = 0; i < Fast::kColItems; i++)
          fast->cols(a, i);
        for (int i = 0; i < Fast::kOutputItems; i++)
          m = std::max(m, fast->output(a, x0, y0, i));
      } else {
        for (int xs = x0; xs < x0 + bw && xs < a.width; xs += kTileW) {
          for (int i = 0; i < Tile::kLoadItems; i++)
            tile->load(a, xs, y0, i);
          for (int i = 0; i < Tile::kRowItems; i++)
            tile->rows(a, xs, i);
          for (int i = 0; i < Tile::kColItems; i++)
            tile->cols(a, y0, i);
          for (int i = 0; i < Tile::kHsumItems; i++)
            tile->hsum(a, i);
          for (int i = 0; i < Tile::kOutputItems; i++)
            m = std::max(m, tile->output(a, xs, y0, i));
        }
      }
      if (a.max_bits && m > 0.0f)
        *a.max_bits = std::max(*a.max_bits, harris_float_bits(m));
    }
  }
}

template <int GR>
void emulate_response(const ResponseArgs& a, int br, bool narrow) {
  if (GR <= 2 && narrow) {
    switch (br) {
      case 1:
        return emulate_response<GR, 1, unsigned>(a);
      case 2:
        return emulate_response<GR, 2, unsigned>(a);
      default:
        return emulate_response<GR, 3, unsigned>(a);
    }
  }
  switch (br) {
    case 1:
      return emulate_response<GR, 1, long long>(a);
    case 2:
      return emulate_response<GR, 2, long long>(a);
    default:
      return emulate_response<GR, 3, long long>(a);
  }
}

void emulate_nms(const NmsArgs& a) {
  constexpr int kSpan = kNmsW * kNmsRun;  // pixels a block row
  const int bx_n = (a.width + kSpan - 1) / kSpan,
            by_n = (a.height + kNmsH * kNmsRows - 1) / (kNmsH * kNmsRows);
  const long blocks = static_cast<long>(bx_n) * by_n;
  const int square = (2 * a.radius + 1) * (2 * a.radius + 1);
  // A permutation of the blocks: a stride coprime with their number.
  long stride = blocks / 2 + 1;
  while (std::gcd(stride, blocks) != 1)
    stride++;
  for (long b = 0; b < blocks; b++) {
    const long id = (b * stride) % blocks;
    const int bx = static_cast<int>(id % bx_n), by = static_cast<int>(id / bx_n);
    const int xw = bx * kSpan;
    for (int ty = kNmsH - 1; ty >= 0; ty--) {  // the block's warps, last first
      const float t =
          harris_threshold(a.relative, a.threshold, harris_bits_float(a.state->max_bits));
      const int y0 = (by * kNmsH + ty) * kNmsRows;
      float v[32][kNmsRows][kNmsRun];
      bool cand[32][kNmsRows][kNmsRun];
      for (int lane = 0; lane < 32; lane++)
        for (int q = 0; q < kNmsRows; q++)
          nms_load(a, t, xw + lane * kNmsRun, y0 + q, v[lane][q], cand[lane][q]);
      // The patch test, from the neighbouring lanes' patches (the
      // shuffles), every test before any candidate changes.
      bool tested[32][kNmsRows][kNmsRun];
      for (int lane = 0; lane < 32; lane++)
        for (int q = 0; q < kNmsRows; q++)
          for (int k = 0; k < kNmsRun; k++)
            tested[lane][q][k] =
                cand[lane][q][k] && !nms_patch_beaten(v[lane > 0 ? lane - 1 : 0], v[lane],
                                                      v[lane < 31 ? lane + 1 : 31], lane > 0,
                                                      lane < 31, a.radius, q, k);
      for (int q = 0; q < kNmsRows; q++) {
        const int y = y0 + q;
        for (int k = 0; k < kNmsRun; k++) {
          unsigned keep = 0;
          for (int src = 0; src < 32; src++) {
            if (!tested[src][q][k])
              continue;
            // The warp's rounds: 32 positions of the square, every lane one.
            bool beaten = false;
            for (int j0 = 0; j0 < square && !beaten; j0 += 32)
              for (int lane = 0; lane < 32; lane++)
                beaten |= j0 + lane < square &&
                          nms_square_beats(a, xw + src * kNmsRun + k, y, v[src][q][k], j0 + lane);
            if (!beaten)
              keep |= 1u << src;
          }
          if (!keep)
            continue;
          const unsigned base = a.state->count;
          a.state->count += static_cast<unsigned>(__builtin_popcount(keep));
          for (int lane = 0; lane < 32; lane++) {
            if (!(keep & (1u << lane)))
              continue;
            const unsigned slot =
                base + static_cast<unsigned>(__builtin_popcount(keep & ((1u << lane) - 1u)));
            const int x = xw + lane * kNmsRun + k;
            const unsigned long long key =
                harris_key(v[lane][q][k], static_cast<uint32_t>(y) * a.width + x);
            if (slot < a.capacity) {
              a.keys[slot] = key;
              a.state->hist[key_bucket(key)]++;
            }
          }
        }
      }
    }
  }
}

// The m smallest of the n keys by the radix select, into sk: thread 0's
// steps and the block's histograms, done in turn.
unsigned emulate_radix_select(const SelectArgs& a, unsigned n, unsigned m,
                              std::vector<unsigned long long>* sk) {
  SelectShared sh{};
  sh.need = m;
  for (int shift = 56; shift >= 0; shift -= 8) {
    std::fill(sh.hist, sh.hist + 256, 0u);
    for (unsigned i = 0; i < n; i++) {
      const unsigned long long k = a.keys[i];
      if ((k & sh.mask) == sh.prefix)
        sh.hist[(k >> shift) & 0xffu]++;
    }
    radix_step(sh, shift);
    if (sh.done)
      break;
  }
  for (unsigned i = n; i-- > 0;) {  // gathered in reverse
    const unsigned long long k = a.keys[i];
    if ((k & sh.mask) <= sh.prefix) {
      const unsigned slot = sh.count++;
      if (slot < a.sort_capacity)
        (*sk)[slot] = k;
    }
  }
  return sh.count;
}

// Corner i of the list into the result.
void emulate_emit(const SelectArgs& a, unsigned i, unsigned long long key) {
  HarrisCorner c;
  harris_corner_of(key, a.resp, a.resp_pitch, a.width, a.height, a.subpixel, &c.x, &c.y, &c.score);
  std::memcpy(a.result + sizeof(HarrisResultHeader) + i * sizeof c, &c, sizeof c);
}

Status emulate_select(const SelectArgs& a, HarrisSelectPath* path) {
  std::vector<unsigned long long> sk(a.sort_capacity);
  const unsigned n = std::min(a.state->count, a.capacity);
  const unsigned m = std::min(n, a.max_corners);
  const float max_r = harris_bits_float(a.state->max_bits);
  // The bucket counts scanned into starts; the m-th key's bucket.
  std::vector<unsigned> start(kBuckets);
  unsigned boundary = 0, upto = ~0u;
  unsigned long long rank_cost = 0;
  for (unsigned b = 0, run = 0; b < static_cast<unsigned>(kBuckets); b++) {
    start[b] = run;
    const unsigned c = a.state->hist[b];
    if (run < m && m <= run + c) {
      boundary = b;
      upto = run + c;
    }
    run += c;
  }
  for (unsigned b = 0; upto != ~0u && b <= boundary; b++)
    rank_cost += static_cast<unsigned long long>(a.state->hist[b]) * a.state->hist[b];
  *a.state = DeviceState{};  // as the kernel leaves it

  if (upto <= a.sort_capacity && rank_cost <= kRankBudget) {
    *path = HarrisSelectPath::Buckets;
    for (unsigned i = n; i-- > 0;) {  // scattered in reverse
      const unsigned long long k = a.keys[i];
      const unsigned b = key_bucket(k);
      if (b <= boundary) {
        const unsigned slot = start[b]++;
        if (slot < a.sort_capacity)
          sk[slot] = k;
      }
    }
    if (start[boundary] != upto)
      return Status::error(StatusCode::Internal, "harris emulation: the bucket counts say " +
                                                     std::to_string(upto) + " keys, scattered " +
                                                     std::to_string(start[boundary]));
    for (unsigned i = 0; i < upto; i++) {
      const unsigned pos = bucket_rank_position(sk.data(), start.data(), i);
      if (pos < m)
        emulate_emit(a, pos, sk[i]);
    }
  } else {
    unsigned loaded;
    if (n <= a.sort_capacity) {
      *path = HarrisSelectPath::SortAll;
      for (unsigned i = 0; i < n; i++)
        sk[i] = a.keys[i];
      loaded = n;
    } else {
      *path = HarrisSelectPath::Radix;
      const unsigned got = emulate_radix_select(a, n, m, &sk);
      if (got != m)
        return Status::error(StatusCode::Internal,
                             "harris emulation: the radix select gathered " + std::to_string(got) +
                                 " keys, not " + std::to_string(m));
      loaded = m;
    }
    const unsigned p2 = sort_padded(loaded);
    for (unsigned i = loaded; i < p2; i++)
      sk[i] = ~0ull;
    for (unsigned k = 2; k <= p2; k <<= 1)
      for (unsigned j = k >> 1; j > 0; j >>= 1)
        for (unsigned i = 0; i < p2; i++)
          bitonic_item(sk.data(), i, j, k);
    for (unsigned i = 0; i < m; i++)
      emulate_emit(a, i, sk[i]);
  }
  HarrisResultHeader h;
  h.count = m;
  h.candidates = n;
  h.max_response = max_r;
  h.threshold = harris_threshold(a.relative, a.threshold, max_r);
  std::memcpy(a.result, &h, sizeof h);
  return Status::ok();
}

}  // namespace

Status harris_cuda_emulate(const HarrisPlan& plan, const ImageView& src,
                           const HarrisResponseView& response, bool detect,
                           std::vector<uint8_t>* result, HarrisSelectPath* path) {
  CUDAFX_TRY(validate_view(src, plan.desc, "harris source"));
  CUDAFX_TRY(harris_check_response(plan, response, "harris response"));
  // 16 KB of counts: on the heap.
  std::unique_ptr<DeviceState> owned(new DeviceState{});
  DeviceState& state = *owned;
  const ResponseArgs a =
      response_args(plan, src, response.data, response.pitch, detect ? &state.max_bits : nullptr);
  switch (plan.grad_radius) {
    case 1:
      emulate_response<1>(a, plan.block_radius, plan.narrow);
      break;
    case 2:
      emulate_response<2>(a, plan.block_radius, plan.narrow);
      break;
    default:
      emulate_response<3>(a, plan.block_radius, plan.narrow);
      break;
  }
  if (!detect)
    return Status::ok();
  std::vector<unsigned long long> keys(plan.capacity);
  emulate_nms(nms_args(plan, response.data, response.pitch, &state, keys.data()));
  result->assign(sizeof(HarrisResultHeader) +
                     static_cast<size_t>(plan.params.max_corners) * sizeof(HarrisCorner),
                 0);
  HarrisSelectPath taken;
  return emulate_select(
      select_args(plan, keys.data(), &state, response.data, response.pitch, result->data()),
      path ? path : &taken);
}

}  // namespace cudafx
