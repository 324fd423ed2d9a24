// Range asymmetric numeral systems (rANS, J. Duda) with a 32-bit state,
// byte-wise renormalisation and frequencies that sum to 2^kRansScaleBits.
// The entropy stage of the delta codec (delta_entropy.cpp) codes with it.
//
// rANS is last-in first-out: the encoder takes the symbols in reverse order
// and writes its bytes backwards, so that the decoder reads forwards and
// gets them in order. The state starts at kRansLow; a decoder that finishes
// with any other state, or with bytes left over, read a damaged stream.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudafx {

constexpr uint32_t kRansScaleBits = 12;
constexpr uint32_t kRansScale = 1u << kRansScaleBits;
constexpr uint32_t kRansLow = 1u << 23;  // the state stays in [kRansLow, kRansLow << 8)

// x / freq for every state x < 2^31 and freq in 1..kRansScale by a multiply
// and a shift: m = ceil(2^s / freq) with s = 32 + ceil(log2 freq) errs by
// less than x / 2^s < 1 / (2 freq), too little to cross an integer (the
// fraction of x / freq is a multiple of 1 / freq), and x * m < 2^64.
struct RansDivisors {
  uint64_t m[kRansScale + 1];
  uint8_t s[kRansScale + 1];
  RansDivisors() {
    m[0] = 0;
    s[0] = 0;
    for (uint32_t f = 1; f <= kRansScale; f++) {
      uint32_t c = 0;
      while ((1u << c) < f) c++;
      s[f] = static_cast<uint8_t>(32 + c);
      m[f] = ((uint64_t(1) << s[f]) + f - 1) / f;
    }
  }
  uint32_t divide(uint32_t x, uint32_t f) const {
    return static_cast<uint32_t>((x * m[f]) >> s[f]);
  }
};
inline const RansDivisors& rans_divisors() {
  static const RansDivisors d;
  return d;
}

// Writes backwards from `end`; the caller guarantees room (two bytes a
// symbol at most, four for the flush).
class RansWriter {
 public:
  explicit RansWriter(uint8_t* end) : p_(end), div_(rans_divisors()) {}
  // One symbol occupying [start, start + freq) of the scale; freq >= 1.
  void put(uint32_t start, uint32_t freq) {
    const uint32_t x_max = ((kRansLow >> kRansScaleBits) << 8) * freq;
    while (x_ >= x_max) {
      *--p_ = static_cast<uint8_t>(x_);
      x_ >>= 8;
    }
    const uint32_t q = div_.divide(x_, freq);
    x_ = (q << kRansScaleBits) + (x_ - q * freq) + start;
  }
  // Writes the final state; returns the first byte of the stream.
  uint8_t* finish() {
    for (int i = 0; i < 4; i++) {  // most significant byte first in memory
      *--p_ = static_cast<uint8_t>(x_);
      x_ >>= 8;
    }
    return p_;
  }

 private:
  uint32_t x_ = kRansLow;
  uint8_t* p_;
  const RansDivisors& div_;
};

// Reads forwards within [begin, end). A damaged stream (a start state out of
// range, reading past the end) is remembered, never followed outside the
// buffer, and reported by finished_cleanly().
class RansReader {
 public:
  RansReader(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {
    for (int i = 0; i < 4; i++) x_ = (x_ << 8) | next();
    if (x_ < kRansLow || x_ >= (kRansLow << 8)) {
      damaged_ = true;
      x_ = kRansLow;
    }
  }
  // The position of the next symbol in the scale.
  uint32_t slot() const { return x_ & (kRansScale - 1); }
  // Consumes the symbol that occupies [start, start + freq), slot() in it.
  void take(uint32_t start, uint32_t freq) {
    x_ = freq * (x_ >> kRansScaleBits) + slot() - start;
    while (x_ < kRansLow) {
      if (p_ == end_) {  // a damaged stream: stop reading, keep the state sane
        damaged_ = true;
        x_ = kRansLow;
        break;
      }
      x_ = (x_ << 8) | *p_++;
    }
  }
  // True when the stream was consumed exactly and ended in the start state.
  bool finished_cleanly() const { return !damaged_ && p_ == end_ && x_ == kRansLow; }

 private:
  uint32_t next() {
    if (p_ == end_) {
      damaged_ = true;
      return 0;
    }
    return *p_++;
  }
  uint32_t x_ = 0;
  const uint8_t* p_;
  const uint8_t* end_;
  bool damaged_ = false;
};

}  // namespace cudafx
