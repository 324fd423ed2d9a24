// Rows of interleaved 8-bit channels read (and written) 16 bytes at a time.
// A byte-per-channel loop issues one load instruction per channel: C
// requests for each 4-byte pixel where one would do, which costs little in
// device memory but a bus transaction each in mapped host memory
// (memory-mode=mapped: cudagreyworld ran at 0.06x of its copy path so). A
// unit is whole 16-byte vectors in which byte j is always lane j % C: one
// vector for 1, 2 and 4 channels, three (48 bytes) for 3. Rows are read in
// units where their start is 16-byte aligned (plane pointer and pitch); the
// bytes after the last whole unit, and every row otherwise, byte by byte.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cudafx {

template <int C>
struct LaneUnit {
  static constexpr int kVectors = C == 3 ? 3 : 1;
  static constexpr int kBytes = 16 * kVectors;
};

// Whether every row of the plane starts on a 16-byte boundary.
inline bool rows_in_units(const void* data, size_t pitch) {
  return ((reinterpret_cast<uintptr_t>(data) | pitch) & 15) == 0;
}

// Byte b (0 <= b < the unit's bytes; known once the loops are unrolled) of
// a loaded unit, and its replacement.
template <int N>
__device__ __forceinline__ unsigned& unit_word(uint4 (&q)[N], int b) {
  uint4& v = q[b / 16];
  const int w = (b % 16) / 4;
  return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}
template <int N>
__device__ __forceinline__ unsigned unit_byte(uint4 (&q)[N], int b) {
  return (unit_word(q, b) >> (8 * (b % 4))) & 0xffu;
}
template <int N>
__device__ __forceinline__ void set_unit_byte(uint4 (&q)[N], int b, unsigned value) {
  const int shift = 8 * (b % 4);
  unsigned& w = unit_word(q, b);
  w = (w & ~(0xffu << shift)) | (value << shift);
}

// The whole units of a row of `width` pixels that thread `first` of
// `stride` takes, each loaded (its vectors' loads issued together) and
// handed to `f(unit_pointer, words)`; returns the first pixel after the
// whole units, where the byte-by-byte part of the row starts.
template <int C, class Byte, class F>
__device__ __forceinline__ int for_each_unit(Byte* row, int width, int first, int stride, F f) {
  constexpr int kVectors = LaneUnit<C>::kVectors, kBytes = LaneUnit<C>::kBytes;
  const int units = width * C / kBytes;
  for (int u = first; u < units; u += stride) {
    Byte* at = row + static_cast<size_t>(u) * kBytes;
    const uint4* v = reinterpret_cast<const uint4*>(at);
    uint4 q[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; k++)
      q[k] = v[k];
    f(at, q);
  }
  return units * kBytes / C;
}

}  // namespace cudafx
