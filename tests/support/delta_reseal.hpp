// Re-seals a delta packet after deliberate damage: its payload-size field
// and both CRCs recomputed (docs/delta-format.md: offsets 24, 28 and 44), so
// that the damage reaches the payload decoders instead of failing the CRC.
// Header-only (zlib), shared by the codec tests and the fuzz target.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>

#include "cudafx/delta.hpp"

namespace testing_support {

// `p` holds `size` bytes, at least a header's worth.
inline void reseal_delta_packet(uint8_t* p, size_t size) {
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) p[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  const size_t payload = size - cudafx::kDeltaHeaderSize;
  put32(24, static_cast<uint32_t>(payload));
  put32(28, static_cast<uint32_t>(
                crc32(0, p + cudafx::kDeltaHeaderSize, static_cast<uInt>(payload))));
  put32(44, static_cast<uint32_t>(crc32(0, p, 44)));
}

}  // namespace testing_support
