// Border handling shared by the CPU and CUDA paths of every filter.
#pragma once

#include "cudafx/hd.hpp"

namespace cudafx {

enum class BorderMode {
  Replicate,   // aaa|abcd|ddd   (OpenCV BORDER_REPLICATE)
  Reflect101,  // cb|abcd|cb     (OpenCV BORDER_REFLECT_101)
  Constant,    // 000|abcd|000   (OpenCV BORDER_CONSTANT, value 0)
};

// Maps a coordinate outside [0, len) to the one inside it that supplies its
// value, exactly as OpenCV's borderInterpolate does (reflection repeats when
// the radius exceeds the image). Returns -1 for Constant: the value is 0.
CUDAFX_HD int border_index(int p, int len, BorderMode mode) {
  if (static_cast<unsigned>(p) < static_cast<unsigned>(len))
    return p;
  switch (mode) {
    case BorderMode::Replicate:
      return p < 0 ? 0 : len - 1;
    case BorderMode::Reflect101:
      if (len == 1)
        return 0;
      do {
        p = p < 0 ? -p : 2 * len - 2 - p;
      } while (static_cast<unsigned>(p) >= static_cast<unsigned>(len));
      return p;
    case BorderMode::Constant:
    default:
      return -1;
  }
}

}  // namespace cudafx
