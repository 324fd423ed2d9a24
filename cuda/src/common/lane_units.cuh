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

// Unit `u` of a row, loaded whole (its vectors' loads issued together).
template <int C>
__device__ __forceinline__ void load_unit(const uint8_t* row, int u,
                                          uint4 (&q)[LaneUnit<C>::kVectors]) {
  const uint4* v = reinterpret_cast<const uint4*>(row + static_cast<size_t>(u) * LaneUnit<C>::kBytes);
#pragma unroll
  for (int k = 0; k < LaneUnit<C>::kVectors; k++)
    q[k] = v[k];
}

// Byte j (0..15) of a vector held as four words.
__device__ __forceinline__ unsigned unit_byte(const unsigned (&w)[4], int j) {
  return (w[j / 4] >> (8 * (j % 4))) & 0xffu;
}

__device__ __forceinline__ void set_unit_byte(unsigned (&w)[4], int j, unsigned v) {
  const int shift = 8 * (j % 4);
  w[j / 4] = (w[j / 4] & ~(0xffu << shift)) | (v << shift);
}

}  // namespace cudafx
