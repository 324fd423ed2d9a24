// Synthetic video for codec tests: a noisy gradient whose later frames
// change a little everywhere (sensor noise) and a lot inside a moving
// rectangle. With `index_stripe`, row 0 of plane 0 carries the frame index
// (16 * (n % 16) in every byte), so a receiver can tell frames apart.
#pragma once

#include <vector>

#include "host_image.hpp"

namespace testing_support {

std::vector<HostImage> make_clip(cudafx::ImageDesc desc, int frames, uint32_t seed,
                                 bool index_stripe = false);
// The frame index (mod 16) a frame of such a clip carries, when its bytes
// are within 7 of the source.
int clip_index_mod16(const cudafx::ImageView& frame);

}  // namespace testing_support
