// Writes valid packet sequences (the fuzz target's input format) for the
// caps that fuzz_delta_decoder.cpp decodes: the seed corpus.
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cudafx/delta.hpp"

using namespace cudafx;

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const ImageDesc caps[] = {
      {PixelFormat::NV12, 66, 34}, {PixelFormat::RGBA, 64, 16}, {PixelFormat::GRAY8, 1, 1}};
  std::mt19937 rng(1);
  int file = 0;
  for (const ImageDesc& desc : caps) {
    // Variant 4: format 4 with intra refresh (a sweep of 2 frames); 5:
    // format 4 on a panning texture, so that its delta frames carry motion
    // vectors.
    for (int variant = 0; variant < 6; variant++) {
      const DeltaCompression comp =
          variant < 4 ? std::array<DeltaCompression, 4>{DeltaCompression::Rans,
                                                        DeltaCompression::Zstd,
                                                        DeltaCompression::None,
                                                        DeltaCompression::Predictive}[variant]
                      : DeltaCompression::Predictive;
      const bool pan = variant == 5;
      std::unique_ptr<DeltaEncoder> enc;
      if (!DeltaEncoder::create(desc, &enc).is_ok())
        return 1;
      std::vector<uint8_t> frame(packed_size(desc));
      for (auto& b : frame) b = static_cast<uint8_t>(rng());
      // The panning texture: smooth enough that a moved tile beats a plain one.
      std::vector<uint8_t> texture(packed_size(desc) + 64);
      for (size_t i = 0; i < texture.size(); i++)
        texture[i] = static_cast<uint8_t>((i * 7 + (i / 13) * 5) ^ (rng() & 3));
      std::vector<uint8_t> seq;
      for (int n = 0; n < 4; n++) {
        if (pan)
          std::copy(texture.begin() + 4 * n, texture.begin() + 4 * n + frame.size(), frame.begin());
        else
          for (int k = 0; k < 20; k++) frame[rng() % frame.size()] = static_cast<uint8_t>(rng());
        DeltaEncodeSettings s;
        s.threshold = n;
        s.compression = comp;
        s.refresh_period = variant == 4 ? 2 : 0;
        s.force_keyframe = n == 2 && variant != 4 && !pan;
        std::vector<uint8_t> pkt;
        if (!enc->encode(packed_view(desc, frame.data()), s, &pkt).is_ok())
          return 1;
        if (pkt.size() >= 0x8000)
          return 1;
        if (pan && n > 0 && desc.width > 1 && !(pkt[5] & 0x20))  // 1x1 cannot move; flag 5: vectors
          fprintf(stderr, "make_delta_seeds: no motion vectors in a panning %dx%d frame\n",
                  desc.width, desc.height);
        // Rans and format-4 streams ask the target to reseal their packets:
        // mutations then reach the entropy decoders instead of failing the CRC.
        const bool reseal = comp == DeltaCompression::Rans || comp == DeltaCompression::Predictive;
        seq.push_back(pkt.size() & 0xff);
        seq.push_back(((pkt.size() >> 8) & 0x7f) | (reseal ? 0x80 : 0));
        seq.insert(seq.end(), pkt.begin(), pkt.end());
      }
      const std::string path = std::string(argv[1]) + "/seed" + std::to_string(file++);
      FILE* f = fopen(path.c_str(), "wb");
      if (!f || fwrite(seq.data(), 1, seq.size(), f) != seq.size())
        return 1;
      fclose(f);
    }
  }
  return 0;
}
