// libFuzzer target: the delta decoder's parser, entropy decoders (format 3:
// zstd, rans; format 4: tables, lane directory, lanes) and state machine. The input is a sequence of packets, each prefixed by a 2-byte
// little-endian word: the packet's length in its low 15 bits and, in the
// top bit, "reseal": the packet's size field and both CRCs are recomputed
// before decoding, so that mutations reach the payload decoders (zstd,
// rans) instead of stopping at the CRC. Packets go to decoders of a few
// caps; a reconstruction that the decoder reports as a frame must match
// the checksum its packet carried.
//
// Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cudafx/delta.hpp"
#include "../support/delta_reseal.hpp"

using namespace cudafx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ImageDesc kCaps[] = {
      {PixelFormat::NV12, 66, 34}, {PixelFormat::RGBA, 64, 16}, {PixelFormat::GRAY8, 1, 1}};
  for (const ImageDesc& desc : kCaps) {
    std::unique_ptr<DeltaDecoder> dec;
    if (!DeltaDecoder::create(desc, &dec).is_ok())
      abort();
    size_t pos = 0;
    std::vector<uint8_t> sealed;
    while (pos + 2 <= size) {
      const bool reseal = data[pos + 1] & 0x80;
      const size_t n = std::min<size_t>(data[pos] | ((data[pos + 1] & 0x7f) << 8), size - pos - 2);
      pos += 2;
      const uint8_t* packet = data + pos;
      if (reseal && n >= kDeltaHeaderSize) {
        sealed.assign(packet, packet + n);
        testing_support::reseal_delta_packet(sealed.data(), n);
        packet = sealed.data();
      }
      std::string err;
      if (dec->decode(packet, n, &err) == DeltaDecodeResult::Frame &&
          delta_checksum(dec->layout(), dec->reconstruction()) != dec->last_info().recon_checksum)
        abort();
      pos += n;
    }
  }
  return 0;
}
