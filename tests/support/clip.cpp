#include "clip.hpp"

#include <algorithm>
#include <random>

namespace testing_support {

using namespace cudafx;

std::vector<HostImage> make_clip(ImageDesc desc, int frames, uint32_t seed, bool index_stripe) {
  std::mt19937 rng(seed);
  std::vector<HostImage> clip;
  const FormatInfo& fi = format_info(desc.format);
  for (int n = 0; n < frames; n++) {
    HostImage f(desc, n == 0 ? 5 : 3);
    if (n == 0) {
      f.fill_random(seed);
    } else {
      f.copy_from(clip.back().view());
      for (int i = 0; i < fi.n_planes; i++) {
        const PlaneView p = f.view().plane(i);
        const int bx = static_cast<int>((n * 7) % std::max<size_t>(1, p.row_bytes()));
        const int by = n % std::max(1, p.height);
        for (int y = 0; y < p.height; y++) {
          for (size_t x = 0; x < p.row_bytes(); x++) {
            uint8_t& v = p.data[y * p.pitch + x];
            if (rng() % 8 == 0)
              v = static_cast<uint8_t>(v + static_cast<int>(rng() % 7) - 3);
            if (static_cast<int>(x) >= bx && static_cast<int>(x) < bx + 40 && y >= by &&
                y < by + 9)
              v = static_cast<uint8_t>(rng());
          }
        }
      }
    }
    if (index_stripe) {
      const PlaneView p = f.view().plane(0);
      std::fill(p.data, p.data + p.row_bytes(), static_cast<uint8_t>(16 * (n % 16)));
    }
    clip.push_back(std::move(f));
  }
  return clip;
}

int clip_index_mod16(const ImageView& frame) {
  const PlaneView p = frame.plane(0);
  long sum = 0;
  for (size_t x = 0; x < p.row_bytes(); x++)
    sum += p.data[x];
  const double mean = static_cast<double>(sum) / p.row_bytes();
  return static_cast<int>(mean / 16.0 + 0.5) % 16;
}

}  // namespace testing_support
