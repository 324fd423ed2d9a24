// CRC-32 (zlib's: reflected polynomial 0xEDB88320, as crc32() computes it)
// with carry-less multiplication where the CPU has it, zlib's otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudafx {

// The CRC of the bytes before, continued over n more bytes: crc32(crc, p,
// n) as zlib gives it (0 for none before), for any n.
uint32_t delta_crc32(uint32_t crc, const uint8_t* p, size_t n);

// The same with zlib's function alone, and whether delta_crc32 folds with
// carry-less multiplication on this CPU (for the tests).
uint32_t delta_crc32_zlib(uint32_t crc, const uint8_t* p, size_t n);
bool delta_crc32_folds();

}  // namespace cudafx
