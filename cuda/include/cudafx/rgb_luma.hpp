// Where R, G and B sit in the packed RGB formats, and the luma of an RGB
// pixel as OpenCV 4.6's 8-bit cvtColor computes it (BT.601 weights in 15-bit
// fixed point, summing to 2^15, rounded half up): shared by every op that
// needs the brightness of an RGB pixel (Harris, auto-contrast).
#pragma once

#include "cudafx/hd.hpp"
#include "cudafx/image.hpp"

namespace cudafx {

constexpr int kLumaR = 9798, kLumaG = 19235, kLumaB = 3735;
constexpr int kLumaShift = 15;

CUDAFX_HD int luma_bt601(int r, int g, int b) {
  return (r * kLumaR + g * kLumaG + b * kLumaB + (1 << (kLumaShift - 1))) >> kLumaShift;
}

// Bytes a pixel and the byte of R, G and B in a packed RGB format; false
// for the others (GRAY8, YUV).
struct RgbBytes {
  int channels = 0;
  int r = -1, g = -1, b = -1;
};
inline bool rgb_bytes(PixelFormat f, RgbBytes* out) {
  switch (f) {
    case PixelFormat::RGBA:
    case PixelFormat::RGBx: *out = {4, 0, 1, 2}; return true;
    case PixelFormat::BGRA:
    case PixelFormat::BGRx: *out = {4, 2, 1, 0}; return true;
    case PixelFormat::ARGB: *out = {4, 1, 2, 3}; return true;
    case PixelFormat::ABGR: *out = {4, 3, 2, 1}; return true;
    case PixelFormat::RGB: *out = {3, 0, 1, 2}; return true;
    case PixelFormat::BGR: *out = {3, 2, 1, 0}; return true;
    default: return false;
  }
}

}  // namespace cudafx
