// CUDA backend of the Harris op: three kernels a frame, all on the
// caller's stream (and a copy of the list where pinned memory is not
// mapped).
//
// 1. harris_response_kernel: one pass over the frame. A block of 256
//    threads owns a 64x16 tile of responses (32x16 with 64-bit sums); the
//    first block of a row is a 32-column slice, so the wide tiles start
//    32 columns in and each side edge is one slice wide. A tile whose halo
//    lies inside the frame runs the fast stages (ResponseFastTile,
//    harris_fast_tile.hpp: 4-pixel aligned loads, runs of 4 outputs an
//    item, constant Sobel taps, products in registers, running box sums);
//    the others run, in 32-column slices, the staged tile with the border
//    rule. The staged tile: a block owns a 32x16 tile of responses; in
//    shared memory it builds, stage by stage (one barrier each;
//    ResponseTile in harris_kernels.hpp), the grey tile with a halo of
//    gradient_radius + block_radius (luma conversion and border rule
//    applied while loading), the row pass of the Sobel filters at the
//    tile's product columns, the column pass (Ix, Iy at the product
//    positions: the tile plus block_radius around it, each through the
//    border rule as the CPU does), the horizontal window sums of Ix^2,
//    IxIy, Iy^2, and finally the vertical sums and harris_response.
//    Integers up to the sums: int64, or uint32 modulo 2^32 where the plan
//    proves the sums fit (HarrisPlan::narrow), the same integers either way.
//    The block's largest response goes to the frame maximum with one
//    atomicMax on its bits (positive floats order as their bits).
// 2. harris_nms_kernel: a thread a patch of 4 pixels x 2 rows (two 16-byte
//    loads, issued together). Pixels above the threshold first meet their
//    close neighbours among the values the warp holds (registers and
//    shuffles: one row up or down, up to 4 columns aside); the rest, a
//    warp's candidates one after another, are tested against their whole
//    (2r+1)^2 square, the 32 lanes at once (in the response, mostly
//    L2-resident after kernel 1). Survivors append their sort key (score,
//    position) through one atomicAdd per warp and count it in its score
//    bucket (DeviceState::hist). The append order varies from run to run;
//    nothing downstream depends on it.
// 3. harris_select_kernel: one block of 1024 threads. One scan of the
//    bucket counts finds the bucket of the max_corners-th key; the keys up
//    to it go to their buckets' segments and each is ranked within its
//    bucket (when that takes few comparisons: kRankBudget). Otherwise all
//    n candidates are sorted when they fit the shared buffer, or a radix
//    select over the keys (8 bits a pass from the top, stopping as soon as
//    the boundary bucket is taken whole) finds the max_corners smallest,
//    which are sorted (bitonic: stages within 64 keys in registers). Keys
//    are unique, so the selected set and its order are the same whatever
//    the order of the candidates: the list is deterministic and equals the
//    CPU's. The kernel writes the header and the corners (sub-pixel
//    refinement from the response) into device memory and into the op's
//    pinned memory (mapped: no copy after), and zeroes the state for the
//    next frame (no memset a frame).
//
// Measured (H100, 2160p RGBA, g5 b5, docs/benchmarks.md): 0.171 ms a frame
// before this layout, 0.095 ms after (response 64 us, suppression 22 us,
// selection 10 us).
//
// The per-item code of all three is in harris_kernels.hpp, which
// harris_emulate.cpp also runs on the host (HarrisOp tests compare that
// emulation with the CPU backend in every build).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/block_scan.cuh"
#include "common/cuda_check.hpp"
#include "cudafx/harris.hpp"
#include "cudafx/harris_math.hpp"
#include "harris/harris_kernels.hpp"

namespace cudafx {
namespace {

using namespace harris_kernels;

constexpr size_t kAlign = 256;

// Programmatic dependent launch (sm_90 and later; no-ops before): the
// suppression and selection kernels are launched to start while the kernel
// before them finishes (its blocks let them once all have started), and
// wait here until it has completed and its writes are visible. Hides a
// launch's latency at each of the two boundaries.
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <int GR, int BR, class Acc>
__global__ void __launch_bounds__(kThreads)
    harris_response_kernel(const __grid_constant__ ResponseArgs a) {
  let_next_kernel_start();
  using Fast = ResponseFastTile<GR, BR, Acc>;
  using Tile = ResponseTile<GR, BR, Acc>;
  // Interior blocks run the fast stages, the others (their halo crosses an
  // edge of the frame) the staged tile with the border rule, in
  // kTileW-column slices.
  union Shared {
    Fast fast;
    Tile tile;
  };
  __shared__ Shared sm;
  __shared__ float warp_max[kThreads / 32];
  const int tid = threadIdx.x;
  float local_max = 0.0f;
  const int x0 = Fast::block_x0(blockIdx.x), bw = Fast::block_width(blockIdx.x);
  const int y0 = blockIdx.y * kFastH;

  if (bw == Fast::kFastW && Fast::fits(a, x0, y0)) {
    for (int i = tid; i < Fast::kLoadItems; i += kThreads)
      sm.fast.load(a, x0, y0, i);
    __syncthreads();
    for (int i = tid; i < Fast::kRowItems; i += kThreads)
      sm.fast.rows(i);
    __syncthreads();
    for (int i = tid; i < Fast::kColItems; i += kThreads)
      sm.fast.cols(a, i);
    __syncthreads();
    for (int i = tid; i < Fast::kOutputItems; i += kThreads)
      local_max = fmaxf(local_max, sm.fast.output(a, x0, y0, i));
  } else {
    for (int xs = x0; xs < x0 + bw && xs < a.width; xs += kTileW) {
      for (int i = tid; i < Tile::kLoadItems; i += kThreads)
        sm.tile.load(a, xs, y0, i);
      __syncthreads();
      for (int i = tid; i < Tile::kRowItems; i += kThreads)
        sm.tile.rows(a, xs, i);
      __syncthreads();
      for (int i = tid; i < Tile::kColItems; i += kThreads)
        sm.tile.cols(a, y0, i);
      __syncthreads();
      for (int i = tid; i < Tile::kHsumItems; i += kThreads)
        sm.tile.hsum(a, i);
      __syncthreads();
      for (int i = tid; i < Tile::kOutputItems; i += kThreads)
        local_max = fmaxf(local_max, sm.tile.output(a, xs, y0, i));
      __syncthreads();  // the next slice overwrites the tile
    }
  }

  if (a.max_bits) {  // the same for the whole grid
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffu, local_max, off));
    if ((tid & 31) == 0)
      warp_max[tid >> 5] = local_max;
    __syncthreads();
    if (tid == 0) {
      float m = warp_max[0];
      for (int w = 1; w < kThreads / 32; w++)
        m = fmaxf(m, warp_max[w]);
      const unsigned bits = __float_as_uint(m);
      // Skip the atomic when a larger maximum is already there.
      if (m > 0.0f && bits > *reinterpret_cast<volatile unsigned*>(a.max_bits))
        atomicMax(a.max_bits, bits);
    }
  }
}

// The suppression of one row's run of the warp (v, and cand after the
// patch test): the warp's candidates one after another, each over its
// whole square at once; survivors appended.
__device__ void nms_warp_row(const NmsArgs& a, int xw, int y, int lane, const float v[kNmsRun],
                             const bool cand[kNmsRun]) {
  const int square = (2 * a.radius + 1) * (2 * a.radius + 1);
#pragma unroll
  for (int k = 0; k < kNmsRun; k++) {
    unsigned cands = __ballot_sync(0xffffffffu, cand[k]), keep = 0;
    while (cands) {
      const int src = __ffs(cands) - 1;
      cands &= cands - 1;
      const float vc = __shfl_sync(0xffffffffu, v[k], src);
      const int xc = xw + src * kNmsRun + k;
      bool beaten = false;
      for (int j0 = 0; j0 < square && !beaten; j0 += 32) {
        const int j = j0 + lane;
        beaten = __any_sync(0xffffffffu, j < square && nms_square_beats(a, xc, y, vc, j));
      }
      if (!beaten)
        keep |= 1u << src;
    }
    if (!keep)
      continue;
    // One atomicAdd per warp and run position.
    unsigned base = 0;
    if (lane == 0)
      base = atomicAdd(&a.state->count, static_cast<unsigned>(__popc(keep)));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (keep & (1u << lane)) {
      const unsigned slot = base + __popc(keep & ((1u << lane) - 1u));
      const unsigned long long key =
          harris_key(v[k], static_cast<uint32_t>(y) * a.width + xw + lane * kNmsRun + k);
      if (slot < a.capacity) {  // never false: capacity bounds the corners of a frame
        a.keys[slot] = key;
        atomicAdd(&a.state->hist[key_bucket(key)], 1u);
      }
    }
  }
}

__global__ void __launch_bounds__(kNmsW* kNmsH) harris_nms_kernel(const __grid_constant__ NmsArgs a) {
  // blockDim.x is 32: a warp is kNmsW * kNmsRun pixels of kNmsRows
  // consecutive rows, a thread a patch of kNmsRun x kNmsRows. All the
  // patch's loads are issued before any is used.
  wait_for_previous_kernel();
  let_next_kernel_start();
  const int lane = threadIdx.x;
  const int xw = blockIdx.x * kNmsW * kNmsRun;
  const int y0 = (blockIdx.y * kNmsH + threadIdx.y) * kNmsRows;
  const float t = harris_threshold(a.relative, a.threshold, __uint_as_float(a.state->max_bits));
  float v[kNmsRows][kNmsRun];
  bool cand[kNmsRows][kNmsRun];
#pragma unroll
  for (int q = 0; q < kNmsRows; q++)
    nms_load(a, t, xw + lane * kNmsRun, y0 + q, v[q], cand[q]);
  bool any = false;
#pragma unroll
  for (int q = 0; q < kNmsRows; q++)
#pragma unroll
    for (int k = 0; k < kNmsRun; k++)
      any |= cand[q][k];
  if (!__any_sync(0xffffffffu, any))
    return;  // the whole warp: nothing above the threshold
  float left[kNmsRows][kNmsRun], right[kNmsRows][kNmsRun];
#pragma unroll
  for (int q = 0; q < kNmsRows; q++)
#pragma unroll
    for (int k = 0; k < kNmsRun; k++) {
      left[q][k] = __shfl_up_sync(0xffffffffu, v[q][k], 1);
      right[q][k] = __shfl_down_sync(0xffffffffu, v[q][k], 1);
    }
#pragma unroll
  for (int q = 0; q < kNmsRows; q++)
#pragma unroll
    for (int k = 0; k < kNmsRun; k++)
      cand[q][k] = cand[q][k] && !nms_patch_beaten(left, v, right, lane > 0, lane < 31, a.radius, q, k);
#pragma unroll
  for (int q = 0; q < kNmsRows; q++)
    nms_warp_row(a, xw, y0 + q, lane, v[q], cand[q]);
}

// Compare-exchange of stage (k, j <= 32) of the bitonic sort on the 64-key
// chunk from `base` that the warp holds in registers: key base + lane in
// x[0], base + 32 + lane in x[1]. Stage j = 32 pairs a thread's own two
// keys; smaller j pair lanes (a shuffle). Element e keeps the smaller of
// its pair when it is the pair's lower one and the run (e & k) ascends, or
// the upper one of a descending run: as bitonic_item.
__device__ void bitonic_registers(unsigned long long x[2], unsigned base, unsigned lane, unsigned k,
                                  unsigned j) {
  if (j == 32) {
    const bool ascending = ((base + lane) & k) == 0;
    const unsigned long long lo = min(x[0], x[1]), hi = max(x[0], x[1]);
    x[0] = ascending ? lo : hi;
    x[1] = ascending ? hi : lo;
    return;
  }
  const bool lower = (lane & j) == 0;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const unsigned long long y = __shfl_xor_sync(0xffffffffu, x[h], j);
    const bool ascending = ((base + 32u * h + lane) & k) == 0;
    x[h] = lower == ascending ? min(x[h], y) : max(x[h], y);
  }
}

// Sorts sk[0 .. p2) ascending (p2 a power of two, at least 64): the
// stages that pair keys 64 or more apart in shared memory with a barrier
// each, the others in registers a warp a chunk (a barrier per merge).
// For 2048 keys: 21 barriers instead of the 66 of a shared-memory network.
__device__ void bitonic_sort(unsigned long long* sk, unsigned p2) {
  const unsigned tid = threadIdx.x, nt = blockDim.x, lane = tid & 31u;
  const unsigned warp = tid >> 5, warps = nt >> 5, chunks = p2 / 64;
  auto register_stages = [&](unsigned k_first, unsigned k_last, unsigned j_first) {
    for (unsigned c = warp; c < chunks; c += warps) {
      unsigned long long x[2] = {sk[c * 64 + lane], sk[c * 64 + 32 + lane]};
      for (unsigned k = k_first; k <= k_last; k <<= 1)
        for (unsigned j = min(k >> 1, j_first); j > 0; j >>= 1)
          bitonic_registers(x, c * 64, lane, k, j);
      sk[c * 64 + lane] = x[0];
      sk[c * 64 + 32 + lane] = x[1];
    }
    __syncthreads();
  };
  register_stages(2, 64, 32);  // runs of up to 64 keys
  for (unsigned k = 128; k <= p2; k <<= 1) {
    for (unsigned j = k >> 1; j >= 64; j >>= 1) {
      for (unsigned i = tid; i < p2; i += nt)
        bitonic_item(sk, i, j, k);
      __syncthreads();
    }
    register_stages(k, k, 32);
  }
}

// The m smallest of the n keys into sk (in any order), by a radix select:
// the prefix of the m-th smallest, 8 bits at a time from the top, until
// every key with the prefix is wanted.
__device__ void radix_select(const SelectArgs& a, unsigned n, unsigned m, unsigned long long* sk,
                             SelectShared& sh) {
  const unsigned tid = threadIdx.x, nt = blockDim.x;
  if (tid == 0) {
    sh.prefix = 0;
    sh.mask = 0;
    sh.need = m;
    sh.done = 0;
    sh.count = 0;
  }
  __syncthreads();
  for (int shift = 56; shift >= 0; shift -= 8) {
    for (unsigned i = tid; i < 256; i += nt)
      sh.hist[i] = 0;
    __syncthreads();
    const unsigned long long prefix = sh.prefix, mask = sh.mask;
    for (unsigned i = tid; i < n; i += nt) {
      const unsigned long long k = a.keys[i];
      if ((k & mask) == prefix)
        atomicAdd(&sh.hist[(k >> shift) & 0xffu], 1u);
    }
    __syncthreads();
    if (tid == 0)
      radix_step(sh, shift);
    __syncthreads();
    if (sh.done)
      break;
  }
  // Keys whose top bits (under the mask) are at most the prefix: exactly m
  // of them (keys are unique).
  const unsigned long long prefix = sh.prefix, mask = sh.mask;
  for (unsigned i = tid; i < n; i += nt) {
    const unsigned long long k = a.keys[i];
    if ((k & mask) <= prefix) {
      const unsigned slot = atomicAdd(&sh.count, 1u);
      if (slot < a.sort_capacity)
        sk[slot] = k;
    }
  }
}

// Corner i of the list, from its key: into the device result and, where
// the op's pinned memory is mapped, straight into it (no copy after).
__device__ void emit_corner(const SelectArgs& a, unsigned i, unsigned long long key) {
  HarrisCorner c;
  harris_corner_of(key, a.resp, a.resp_pitch, a.width, a.height, a.subpixel, &c.x, &c.y, &c.score);
  reinterpret_cast<HarrisCorner*>(a.result + sizeof(HarrisResultHeader))[i] = c;
  if (a.host_result)
    reinterpret_cast<HarrisCorner*>(a.host_result + sizeof(HarrisResultHeader))[i] = c;
}

__global__ void __launch_bounds__(kSelectThreads)
    harris_select_kernel(const __grid_constant__ SelectArgs a) {
  extern __shared__ unsigned long long sk[];  // sort_capacity keys
  __shared__ SelectShared sh;
  wait_for_previous_kernel();
  const unsigned tid = threadIdx.x, nt = blockDim.x;
  const unsigned n = min(a.state->count, a.capacity);
  const unsigned m = min(n, a.max_corners);
  const float max_r = __uint_as_float(a.state->max_bits);

  // The bucket counts (zeroed for the next frame once read), scanned into
  // the buckets' starts; the bucket of the m-th key and the keys up to it.
  static_assert(kBuckets % kSelectThreads == 0, "buckets split evenly");
  constexpr unsigned kPer = kBuckets / kSelectThreads;
  static_assert(kPer == 4, "a thread's counts are one 16-byte word");
  const uint4 c4 = reinterpret_cast<const uint4*>(a.state->hist)[tid];
  reinterpret_cast<uint4*>(a.state->hist)[tid] = make_uint4(0, 0, 0, 0);
  const unsigned c[kPer] = {c4.x, c4.y, c4.z, c4.w};
  const unsigned total = c4.x + c4.y + c4.z + c4.w;
  if (tid == 0) {
    sh.upto = ~0u;  // stays so when m is 0 or the counts disagree with n
    sh.rank_cost = 0;
  }
  unsigned run = block_exclusive_scan(total, sh.warp_sums);
  // Every thread has read count and max_bits (the scan has barriers).
  if (tid == 0) {
    a.state->count = 0;
    a.state->max_bits = 0;
  }
#pragma unroll
  for (unsigned j = 0; j < kPer; j++) {
    sh.start[tid * kPer + j] = run;
    if (run < m && m <= run + c[j]) {
      sh.boundary = tid * kPer + j;
      sh.upto = run + c[j];
    }
    run += c[j];
  }
  __syncthreads();
  const unsigned boundary = sh.boundary, upto = sh.upto;
  if (upto != ~0u) {
    unsigned long long cost = 0;
#pragma unroll
    for (unsigned j = 0; j < kPer; j++)
      if (tid * kPer + j <= boundary)
        cost += static_cast<unsigned long long>(c[j]) * c[j];
    if (cost)
      atomicAdd(&sh.rank_cost, cost);
  }
  __syncthreads();

  if (upto <= a.sort_capacity && sh.rank_cost <= kRankBudget) {
    // Each key up to the boundary bucket into its bucket's segment of sk
    // (the starts become the ends), then ranked within the segment: the
    // buckets order the segments, the rank the keys inside one.
    constexpr unsigned kBatch = 8;  // keys loaded at once: their latencies overlap
    for (unsigned i0 = tid; i0 < n; i0 += kBatch * nt) {
      unsigned long long k[kBatch];
#pragma unroll
      for (unsigned u = 0; u < kBatch; u++)
        k[u] = i0 + u * nt < n ? a.keys[i0 + u * nt] : 0ull;
#pragma unroll
      for (unsigned u = 0; u < kBatch; u++) {
        const unsigned b = key_bucket(k[u]);
        if (i0 + u * nt < n && b <= boundary) {
          const unsigned slot = atomicAdd(&sh.start[b], 1u);
          if (slot < a.sort_capacity)
            sk[slot] = k[u];
        }
      }
    }
    __syncthreads();
    for (unsigned i = tid; i < upto; i += nt) {
      const unsigned pos = bucket_rank_position(sk, sh.start, i);
      if (pos < m)
        emit_corner(a, pos, sk[i]);
    }
  } else {
    // Sorted whole when they fit; else the radix select of the m smallest.
    unsigned loaded;
    if (n <= a.sort_capacity) {
      for (unsigned i = tid; i < n; i += nt)
        sk[i] = a.keys[i];
      loaded = n;
    } else {
      radix_select(a, n, m, sk, sh);
      loaded = m;
    }
    // Bitonic sort, padded to a power of two with keys above any real one.
    const unsigned p2 = sort_padded(loaded);
    __syncthreads();
    for (unsigned i = loaded + tid; i < p2; i += nt)
      sk[i] = ~0ull;
    __syncthreads();
    bitonic_sort(sk, p2);
    for (unsigned i = tid; i < m; i += nt)
      emit_corner(a, i, sk[i]);
  }

  if (tid == 0) {
    HarrisResultHeader h;
    h.count = m;
    h.candidates = n;
    h.max_response = max_r;
    h.threshold = harris_threshold(a.relative, a.threshold, max_r);
    *reinterpret_cast<HarrisResultHeader*>(a.result) = h;
    if (a.host_result)
      *reinterpret_cast<HarrisResultHeader*>(a.host_result) = h;
  }
}

size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

size_t result_bytes(const HarrisPlan& plan) {
  return sizeof(HarrisResultHeader) +
         static_cast<size_t>(plan.params.max_corners) * sizeof(HarrisCorner);
}

using ResponseKernel = void (*)(ResponseArgs);

// The response kernel for the plan, and its tiles across a row.
template <int GR, int BR, class Acc>
ResponseKernel response_kernel_of(int width, int* tiles_x) {
  *tiles_x = ResponseFastTile<GR, BR, Acc>::blocks_x(width);
  return harris_response_kernel<GR, BR, Acc>;
}

template <int GR, int BR>
ResponseKernel response_kernel_of(bool narrow, int width, int* tiles_x) {
  if constexpr (GR <= 2) {
    if (narrow)
      return response_kernel_of<GR, BR, unsigned>(width, tiles_x);
  }
  return response_kernel_of<GR, BR, long long>(width, tiles_x);
}

template <int GR>
ResponseKernel response_kernel_of(int br, bool narrow, int width, int* tiles_x) {
  switch (br) {
    case 1:
      return response_kernel_of<GR, 1>(narrow, width, tiles_x);
    case 2:
      return response_kernel_of<GR, 2>(narrow, width, tiles_x);
    default:
      return response_kernel_of<GR, 3>(narrow, width, tiles_x);
  }
}

ResponseKernel response_kernel(const HarrisPlan& plan, int* tiles_x) {
  const int w = plan.desc.width;
  switch (plan.grad_radius) {
    case 1:
      return response_kernel_of<1>(plan.block_radius, plan.narrow, w, tiles_x);
    case 2:
      return response_kernel_of<2>(plan.block_radius, plan.narrow, w, tiles_x);
    default:
      return response_kernel_of<3>(plan.block_radius, plan.narrow, w, tiles_x);
  }
}

}  // namespace

Status harris_cuda_prepare(const HarrisPlan& plan, HarrisCudaBuffers* b) {
  // The fast stages compile the Sobel taps in: they must be the plan's.
  for (int t = 0; t <= 2 * plan.grad_radius; t++)
    if (plan.deriv[t] != sobel_deriv(plan.grad_radius, t) ||
        plan.smooth[t] != sobel_smooth(plan.grad_radius, t))
      return Status::error(StatusCode::Internal, "harris: the kernels' Sobel taps differ from the plan's");
  const int W = plan.desc.width, H = plan.desc.height;
  const size_t res = result_bytes(plan);
  b->response_pitch = align_up(static_cast<size_t>(W) * sizeof(float));
  b->result_at = align_up(sizeof(DeviceState));
  b->keys_at = b->result_at + align_up(res);
  b->response_at = b->keys_at + align_up(plan.capacity * sizeof(unsigned long long));
  const size_t total = b->response_at + b->response_pitch * static_cast<size_t>(H);
  if (b->device.size() < total)
    CUDAFX_TRY(b->device.allocate(total));
  b->state_zero = false;
  if (b->host.size() < res)
    CUDAFX_TRY(b->host.allocate(res));
  // With unified addressing (every 64-bit platform CUDA 12 runs on) pinned
  // host memory is accessible to kernels at its host address, whatever the
  // allocation's flags: the selection kernel writes the list straight into
  // it, which saves the copy's place in the stream (a few microseconds a
  // frame). Elsewhere the list is copied after the kernel.
  int device = 0, unified = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, device));
  b->host_mapped = unified ? b->host.bytes() : nullptr;
  *reinterpret_cast<HarrisResultHeader*>(b->host.get()) = HarrisResultHeader{0, 0, 0.0f, 0.0f};

  const unsigned capacity = sort_capacity(plan.params.max_corners);
  const size_t shared = capacity * sizeof(unsigned long long);
  int optin = 0, major = 0;
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  b->early_launch = major >= 9;
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr;
  CUDAFX_CUDA_TRY(cudaFuncGetAttributes(&attr, harris_select_kernel));
  if (shared + attr.sharedSizeBytes > static_cast<size_t>(optin)) {
    const size_t fit = (static_cast<size_t>(optin) - attr.sharedSizeBytes) / sizeof(unsigned long long);
    size_t most = kMinSortCapacity;
    while (most * 2 <= fit)
      most *= 2;
    return Status::error(StatusCode::Unsupported,
                         "max-corners " + std::to_string(plan.params.max_corners) +
                             " needs " + std::to_string(shared) +
                             " bytes of shared memory to sort; this GPU allows " +
                             std::to_string(optin) + ": use at most " + std::to_string(most));
  }
  CUDAFX_CUDA_TRY(cudaFuncSetAttribute(harris_select_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
  b->sort_capacity = static_cast<int>(capacity);

  return Status::ok();
}

Status harris_cuda(const HarrisPlan& plan, const ImageView& src, const HarrisResponseView& response,
                   bool detect, HarrisCudaBuffers* b, StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, plan.desc, "harris source"));
  if (response.data)
    CUDAFX_TRY(harris_check_response(plan, response, "harris response"));
  const size_t res = result_bytes(plan);
  if (!b->device.get() || b->sort_capacity < plan.params.max_corners || b->host.size() < res)
    return Status::invalid("harris: the CUDA buffers were not prepared for this plan");
  cudaStream_t s = stream;
  const int W = plan.desc.width, H = plan.desc.height;
  uint8_t* base = b->device.bytes();
  auto* state = reinterpret_cast<DeviceState*>(base);
  float* resp = response.data ? response.data : reinterpret_cast<float*>(base + b->response_at);
  const size_t resp_pitch = response.data ? response.pitch : b->response_pitch;

  if (detect) {
    if (!b->state_zero)
      CUDAFX_CUDA_TRY(cudaMemsetAsync(state, 0, sizeof(DeviceState), s));
    b->state_zero = false;  // until the selection kernel is queued
  }

  const ResponseArgs a =
      response_args(plan, src, resp, resp_pitch, detect ? &state->max_bits : nullptr);
  int tiles_x = 0;
  const ResponseKernel kernel = response_kernel(plan, &tiles_x);
  kernel<<<dim3(tiles_x, (H + kFastH - 1) / kFastH), kThreads, 0, s>>>(a);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  if (!detect)
    return Status::ok();

  auto* keys = reinterpret_cast<unsigned long long*>(base + b->keys_at);
  const dim3 nms_grid((W + kNmsW * kNmsRun - 1) / (kNmsW * kNmsRun),
                      (H + kNmsH * kNmsRows - 1) / (kNmsH * kNmsRows));
  cudaLaunchAttribute early;
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = nms_grid;
  cfg.blockDim = dim3(kNmsW, kNmsH);
  cfg.stream = s;
  cfg.attrs = &early;
  cfg.numAttrs = b->early_launch ? 1 : 0;
  CUDAFX_CUDA_TRY(cudaLaunchKernelEx(&cfg, harris_nms_kernel, nms_args(plan, resp, resp_pitch, state, keys)));
  const SelectArgs sa =
      select_args(plan, keys, state, resp, resp_pitch, base + b->result_at, b->host_mapped);
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(kSelectThreads);
  cfg.dynamicSmemBytes = sa.sort_capacity * sizeof(unsigned long long);
  CUDAFX_CUDA_TRY(cudaLaunchKernelEx(&cfg, harris_select_kernel, sa));
  b->state_zero = true;
  if (!b->host_mapped)
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(b->host.get(), base + b->result_at, res,
                                    cudaMemcpyDeviceToHost, s));
  return Status::ok();
}

}  // namespace cudafx
