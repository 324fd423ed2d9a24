// The value sets the op tests sweep: every pixel format and border mode.
#pragma once

#include "cudafx/border.hpp"
#include "cudafx/image.hpp"

namespace testing_support {

inline constexpr cudafx::PixelFormat kAllFormats[] = {
    cudafx::PixelFormat::RGBA,  cudafx::PixelFormat::BGRA, cudafx::PixelFormat::RGBx,
    cudafx::PixelFormat::BGRx,  cudafx::PixelFormat::ARGB, cudafx::PixelFormat::ABGR,
    cudafx::PixelFormat::RGB,   cudafx::PixelFormat::BGR,  cudafx::PixelFormat::GRAY8,
    cudafx::PixelFormat::I420,  cudafx::PixelFormat::NV12, cudafx::PixelFormat::Y444};

inline constexpr cudafx::BorderMode kAllBorders[] = {
    cudafx::BorderMode::Replicate, cudafx::BorderMode::Reflect101, cudafx::BorderMode::Constant};

}  // namespace testing_support
