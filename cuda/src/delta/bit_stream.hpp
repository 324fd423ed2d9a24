// Bit streams of format 4's side information (tables, motion vectors): bit
// i of a stream is bit i mod 8 of byte i / 8, fields least significant bit
// first (docs/delta-format.md, "Version 4").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudafx {

class BitWriter {
 public:
  explicit BitWriter(std::vector<uint8_t>* out) : out_(out) {}
  // The low `bits` (0..32) bits of v.
  void put(uint32_t v, int bits) {
    append(bits < 32 ? v & ((1u << bits) - 1) : v, bits);
  }
  // Elias gamma code of v >= 1: as many 0s as v has bits after its top
  // one, a 1, then those bits, least significant first.
  void gamma(uint32_t v) {
    int n = 0;
    while (n < 31 && (v >> (n + 1)) != 0) n++;
    append(uint64_t{1} << n, n + 1);
    put(v, n);
  }
  // Pads the last byte with 0 bits.
  void flush() {
    if (fill_)
      out_->push_back(static_cast<uint8_t>(acc_));
    acc_ = 0;
    fill_ = 0;
  }

 private:
  // Fields go into a word, whole bytes out of it (bit by bit, the CUDA
  // encoder's vector section took ~0.1 ms of host time a 2160p frame).
  // `bits` <= 33, so that the word never overflows (at most 7 bits wait).
  void append(uint64_t field, int bits) {
    acc_ |= field << fill_;
    fill_ += bits;
    while (fill_ >= 8) {
      out_->push_back(static_cast<uint8_t>(acc_));
      acc_ >>= 8;
      fill_ -= 8;
    }
  }
  std::vector<uint8_t>* out_;
  uint64_t acc_ = 0;
  int fill_ = 0;
};

class BitReader {
 public:
  BitReader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool get(int bits, uint32_t* v) {
    *v = 0;
    for (int i = 0; i < bits; i++) {
      if (pos_ >= n_ * 8)
        return false;
      *v |= static_cast<uint32_t>((p_[pos_ / 8] >> (pos_ % 8)) & 1) << i;
      pos_++;
    }
    return true;
  }
  // A gamma code with at most `max_zeros` bits after its top one (false
  // beyond, or past the end).
  bool gamma(uint32_t* v, int max_zeros) {
    int n = 0;
    uint32_t b = 0;
    for (;;) {
      if (!get(1, &b))
        return false;
      if (b)
        break;
      if (++n > max_zeros)
        return false;
    }
    uint32_t low = 0;
    if (!get(n, &low))
      return false;
    *v = (1u << n) | low;
    return true;
  }
  size_t bits_read() const { return pos_; }
  size_t bytes_read() const { return (pos_ + 7) / 8; }

 private:
  const uint8_t* p_;
  size_t n_, pos_ = 0;
};

}  // namespace cudafx
