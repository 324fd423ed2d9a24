// The per-value arithmetic of the Harris op, shared by the CPU and CUDA
// paths (harris.hpp states the rules): the luma of an RGB pixel, the
// response formula with its roundings, the sub-pixel offset, and the sort
// key and suppression order of candidates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cudafx/hd.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {

// The grey value of an RGB pixel: OpenCV 4.6's 8-bit RGB -> grey.
CUDAFX_HD int harris_luma(int r, int g, int b) { return luma_bt601(r, g, b); }

// Integer to float, rounded to nearest (ties to even) on both sides.
CUDAFX_HD float harris_to_float(long long v) {
#if defined(__CUDA_ARCH__)
  return __ll2float_rn(v);
#else
  return static_cast<float>(v);
#endif
}

CUDAFX_HD float harris_div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// R = (a*c - b*b) - (k*(a+c))*(a+c), with a, b, c the window sums times
// `norm`; every operation rounded once, in this order.
CUDAFX_HD float harris_response(float sxx, float sxy, float syy, float norm, float k) {
  const float a = mul_rn(sxx, norm);
  const float b = mul_rn(sxy, norm);
  const float c = mul_rn(syy, norm);
  const float det = add_rn(mul_rn(a, c), -mul_rn(b, b));
  const float tr = add_rn(a, c);
  return add_rn(det, -mul_rn(mul_rn(k, tr), tr));
}

// The threshold a corner's response must exceed.
CUDAFX_HD float harris_threshold(bool relative, float threshold, float max_response) {
  return relative ? mul_rn(threshold, max_response) : threshold;
}

// The vertex of the parabola through (-1, rm), (0, r0), (1, rp), clamped to
// +-0.5; 0 when the curvature is not negative.
CUDAFX_HD float harris_subpixel_offset(float rm, float r0, float rp) {
  const float curv = add_rn(add_rn(rm, rp), -mul_rn(2.0f, r0));
  if (!(curv < 0.0f))
    return 0.0f;
  const float off = harris_div_rn(mul_rn(0.5f, add_rn(rm, -rp)), curv);
  return off < -0.5f ? -0.5f : (off > 0.5f ? 0.5f : off);
}

CUDAFX_HD uint32_t harris_float_bits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}

CUDAFX_HD float harris_bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

// A candidate's sort key: ascending keys are descending scores, then
// ascending raster positions (pos = y * width + x). score > 0, so its bits
// grow with it; keys are unique because positions are.
CUDAFX_HD uint64_t harris_key(float score, uint32_t pos) {
  return (static_cast<uint64_t>(0xffffffffu - harris_float_bits(score)) << 32) | pos;
}
CUDAFX_HD float harris_key_score(uint64_t key) {
  return harris_bits_float(0xffffffffu - static_cast<uint32_t>(key >> 32));
}
CUDAFX_HD uint32_t harris_key_pos(uint64_t key) { return static_cast<uint32_t>(key); }

// Whether q (response rq at raster position qpos) suppresses p: a higher
// response, or the same response earlier in raster order.
CUDAFX_HD bool harris_beats(float rq, uint32_t qpos, float rp, uint32_t ppos) {
  return rq > rp || (rq == rp && qpos < ppos);
}

CUDAFX_HD float harris_response_at(const float* resp, size_t pitch, int x, int y) {
  return reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(resp) +
                                        static_cast<size_t>(y) * pitch)[x];
}

// Whether pixel (x, y), response v, survives suppression: no other
// in-frame pixel of its (2r+1) x (2r+1) square beats it.
CUDAFX_HD bool harris_is_local_max(const float* resp, size_t pitch, int width, int height, int r,
                                   int x, int y, float v) {
  const uint32_t w = static_cast<uint32_t>(width);
  const uint32_t pos = static_cast<uint32_t>(y) * w + x;
  const int ylo = y - r < 0 ? 0 : y - r, yhi = y + r >= height ? height - 1 : y + r;
  const int xlo = x - r < 0 ? 0 : x - r, xhi = x + r >= width ? width - 1 : x + r;
  for (int qy = ylo; qy <= yhi; qy++) {
    const float* row = reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(resp) +
                                                      static_cast<size_t>(qy) * pitch);
    for (int qx = xlo; qx <= xhi; qx++) {
      const uint32_t qpos = static_cast<uint32_t>(qy) * w + qx;
      if (qpos != pos && harris_beats(row[qx], qpos, v, pos))
        return false;
    }
  }
  return true;
}

// The corner a key stands for: its pixel, refined on each axis by
// harris_subpixel_offset when `subpixel` and both neighbours on that axis
// are in the frame; its score.
CUDAFX_HD void harris_corner_of(uint64_t key, const float* resp, size_t pitch, int width,
                                int height, bool subpixel, float* x, float* y, float* score) {
  const uint32_t pos = harris_key_pos(key);
  const int px = static_cast<int>(pos % static_cast<uint32_t>(width));
  const int py = static_cast<int>(pos / static_cast<uint32_t>(width));
  const float r0 = harris_key_score(key);
  float fx = static_cast<float>(px), fy = static_cast<float>(py);
  if (subpixel) {
    if (px > 0 && px < width - 1)
      fx = add_rn(fx, harris_subpixel_offset(harris_response_at(resp, pitch, px - 1, py), r0,
                                             harris_response_at(resp, pitch, px + 1, py)));
    if (py > 0 && py < height - 1)
      fy = add_rn(fy, harris_subpixel_offset(harris_response_at(resp, pitch, px, py - 1), r0,
                                             harris_response_at(resp, pitch, px, py + 1)));
  }
  *x = fx;
  *y = fy;
  *score = r0;
}

}  // namespace cudafx
