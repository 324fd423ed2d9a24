// libFuzzer target: the delta decoder's parser and state machine. The input
// is a sequence of packets, each prefixed by a 2-byte little-endian length,
// fed to decoders of a few caps; a reconstruction that the decoder reports
// as a frame must match the checksum its packet carried.
//
// Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "cudafx/delta.hpp"

using namespace cudafx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ImageDesc kCaps[] = {
      {PixelFormat::NV12, 66, 34}, {PixelFormat::RGBA, 64, 16}, {PixelFormat::GRAY8, 1, 1}};
  for (const ImageDesc& desc : kCaps) {
    std::unique_ptr<DeltaDecoder> dec;
    if (!DeltaDecoder::create(desc, &dec).is_ok())
      abort();
    size_t pos = 0;
    while (pos + 2 <= size) {
      const size_t n = std::min<size_t>(data[pos] | (data[pos + 1] << 8), size - pos - 2);
      pos += 2;
      std::string err;
      if (dec->decode(data + pos, n, &err) == DeltaDecodeResult::Frame &&
          delta_checksum(dec->layout(), dec->reconstruction()) != dec->last_info().recon_checksum)
        abort();
      pos += n;
    }
  }
  return 0;
}
