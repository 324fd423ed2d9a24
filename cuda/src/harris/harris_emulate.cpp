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
  const int bx_n = (a.width + Fast::kFastW - 1) / Fast::kFastW, by_n = (a.height + kFastH - 1) / kFastH;
  for (int by = by_n - 1; by >= 0; by--) {  // an order a GPU could choose
    for (int bx = 0; bx < bx_n; bx++) {
      // Stale values from the previous block, as shared memory would hold.
      const int x0 = bx * Fast::kFastW, y0 = by * kFastH;
      float m = 0.0f;
      if (Fast::fits(a, x0, y0)) {
        for (int i = 0; i < Fast::kLoadItems; i++)
          fast->load(a, x0, y0, i);
        for (int i = 0; i < Fast::kRowItems; i++)
          fast->rows(i);
        for (int i = 0; i < Fast::kColItems; i++)
          fast->cols(i);
        for (int i = 0; i < Fast::kHsumItems; i++)
          fast->hsum(a, i);
        for (int i = 0; i < Fast::kOutputItems; i++)
          m = std::max(m, fast->output(a, x0, y0, i));
      } else {
        for (int xs = x0; xs < x0 + Fast::kFastW && xs < a.width; xs += kTileW) {
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
  const int bx_n = (a.width + kSpan - 1) / kSpan, by_n = (a.height + kNmsH - 1) / kNmsH;
  const long blocks = static_cast<long>(bx_n) * by_n;
  // A permutation of the blocks: a stride coprime with their number.
  long stride = blocks / 2 + 1;
  while (std::gcd(stride, blocks) != 1)
    stride++;
  for (long b = 0; b < blocks; b++) {
    const long id = (b * stride) % blocks;
    const int bx = static_cast<int>(id % bx_n), by = static_cast<int>(id / bx_n);
    for (int ty = kNmsH - 1; ty >= 0; ty--) {  // the block's warps, last first
      const float t =
          harris_threshold(a.relative, a.threshold, harris_bits_float(a.state->max_bits));
      bool keep[32][kNmsRun];
      float v[32][kNmsRun];
      const int y = by * kNmsH + ty;
      for (int lane = 0; lane < 32; lane++)
        nms_run(a, t, (bx * kNmsW + lane) * kNmsRun, y, v[lane], keep[lane]);
      for (int k = 0; k < kNmsRun; k++) {
        unsigned mask = 0;
        for (int lane = 0; lane < 32; lane++)
          mask |= keep[lane][k] ? 1u << lane : 0u;
        if (!mask)
          continue;
        const unsigned base = a.state->count;
        a.state->count += static_cast<unsigned>(__builtin_popcount(mask));
        for (int lane = 0; lane < 32; lane++) {
          if (!keep[lane][k])
            continue;
          const unsigned slot =
              base + static_cast<unsigned>(__builtin_popcount(mask & ((1u << lane) - 1u)));
          const int x = (bx * kNmsW + lane) * kNmsRun + k;
          if (slot < a.capacity)
            a.keys[slot] = harris_key(v[lane][k], static_cast<uint32_t>(y) * a.width + x);
        }
      }
    }
  }
}

Status emulate_select(const SelectArgs& a) {
  std::vector<unsigned long long> sk(a.sort_capacity);
  SelectShared sh{};
  const unsigned n = std::min(a.state->count, a.capacity);
  const unsigned m = std::min(n, a.max_corners);
  unsigned loaded;
  if (n <= a.sort_capacity) {
    for (unsigned i = 0; i < n; i++)
      sk[i] = a.keys[i];
    loaded = n;
  } else {
    sh.prefix = 0;
    sh.mask = 0;
    sh.need = m;
    sh.done = 0;
    sh.count = 0;
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
    for (unsigned i = n; i-- > 0;) {
      const unsigned long long k = a.keys[i];
      if ((k & sh.mask) <= sh.prefix) {
        const unsigned slot = sh.count++;
        if (slot < a.sort_capacity)
          sk[slot] = k;
      }
    }
    if (sh.count != m)
      return Status::error(StatusCode::Internal,
                           "harris emulation: the radix select gathered " +
                               std::to_string(sh.count) + " keys, not " + std::to_string(m));
    loaded = m;
  }
  unsigned p2 = 1;
  while (p2 < loaded)
    p2 <<= 1;
  for (unsigned i = loaded; i < p2; i++)
    sk[i] = ~0ull;
  for (unsigned k = 2; k <= p2; k <<= 1)
    for (unsigned j = k >> 1; j > 0; j >>= 1)
      for (unsigned i = 0; i < p2; i++)
        bitonic_item(sk.data(), i, j, k);
  const float max_r = harris_bits_float(a.state->max_bits);
  HarrisResultHeader h;
  h.count = m;
  h.candidates = n;
  h.max_response = max_r;
  h.threshold = harris_threshold(a.relative, a.threshold, max_r);
  std::memcpy(a.result, &h, sizeof h);
  for (unsigned i = 0; i < m; i++) {
    HarrisCorner c;
    harris_corner_of(sk[i], a.resp, a.resp_pitch, a.width, a.height, a.subpixel, &c.x, &c.y,
                     &c.score);
    std::memcpy(a.result + sizeof h + i * sizeof c, &c, sizeof c);
  }
  return Status::ok();
}

}  // namespace

Status harris_cuda_emulate(const HarrisPlan& plan, const ImageView& src,
                           const HarrisResponseView& response, bool detect,
                           std::vector<uint8_t>* result) {
  CUDAFX_TRY(validate_view(src, plan.desc, "harris source"));
  CUDAFX_TRY(harris_check_response(plan, response, "harris response"));
  DeviceState state{0, 0};
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
  return emulate_select(
      select_args(plan, keys.data(), &state, response.data, response.pitch, result->data()));
}

}  // namespace cudafx
