// A packet the CUDA encoder handed out in two parts (DeltaPacketParts), as
// one vector of bytes, for comparison with whole packets.
#pragma once

#include <cstdint>
#include <vector>

#include "cudafx/delta.hpp"

namespace testing_support {

inline std::vector<uint8_t> joined(const cudafx::DeltaPacketParts& parts) {
  std::vector<uint8_t> v = parts.head;
  if (parts.tail_size > 0)
    v.insert(v.end(), parts.tail, parts.tail + parts.tail_size);
  return v;
}

}  // namespace testing_support
