// Range asymmetric numeral systems (rANS, J. Duda) with a 32-bit state,
// byte-wise renormalisation and frequencies that sum to 2^kRansScaleBits.
// The entropy stage of the delta codec (delta_entropy.cpp) codes with it.
//
// rANS is last-in first-out: the encoder takes the symbols in reverse order
// and writes its bytes backwards, so that the decoder reads forwards and
// gets them in order. Both states start at kRansLow; a decoder that
// finishes with any other state, or with bytes left over, read a damaged
// stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/hd.hpp"

namespace cudafx {

constexpr uint32_t kRansScaleBits = 12;
constexpr uint32_t kRansScale = 1u << kRansScaleBits;
constexpr uint32_t kRansLow = 1u << 23;  // the state stays in [kRansLow, kRansLow << 8)

// x / d for every x < 2^31 and d >= 1 by a multiply and a shift: m =
// ceil(2^s / d) with s = 32 + ceil(log2 d) errs by less than x / 2^s <
// 1 / (2 d), too little to cross an integer (the fraction of x / d is a
// multiple of 1 / d), and x * m < 2^64.
struct ExactReciprocal {
  uint64_t m = 0;
  uint32_t s = 0;
  ExactReciprocal() = default;
  explicit ExactReciprocal(uint32_t d) {
    uint32_t c = 0;
    while ((1u << c) < d) c++;
    s = 32 + c;
    m = ((uint64_t(1) << s) + d - 1) / d;
  }
  uint32_t divide(uint32_t x) const { return static_cast<uint32_t>((x * m) >> s); }
};

// x / d for every x < 2^44 (a 32-bit count times the scale) and d >= 1,
// for the encoder's tables (normalise, delta_tile_entropy.cpp), where a
// 64-bit division per value seen had been most of the work. With 128-bit
// integers by a multiply and a shift: m = ceil(2^s / d), s = 44 +
// ceil(log2 d), errs by less than x / 2^s < 1 / d (m d - 2^s < d <=
// 2^(s - 44)), too little to cross an integer (the fraction of x / d is a
// multiple of 1 / d); m <= 2^45 + 1, so x m < 2^90. Without them, the
// division.
struct CountDivisor {
  static constexpr int kDividendBits = 44;
#if defined(__SIZEOF_INT128__) && !defined(__CUDA_ARCH__)
  unsigned __int128 m;
  int s;
  explicit CountDivisor(uint64_t d) {
    int c = 0;
    while (c < 64 && (uint64_t(1) << c) < d) c++;
    s = kDividendBits + c;
    m = ((static_cast<unsigned __int128>(1) << s) + d - 1) / d;
  }
  uint64_t divide(uint64_t x) const { return static_cast<uint64_t>((x * m) >> s); }
#else
  uint64_t d;
  explicit CountDivisor(uint64_t d_) : d(d_) {}
  uint64_t divide(uint64_t x) const { return x / d; }
#endif
};

// ExactReciprocal's multipliers and shifts for every freq in 1..kRansScale
// (the encoder's division per symbol, x / freq for every state x < 2^31),
// from which RansSymbols are made: each multiplier without its bit 32,
// which every one has (RansSymbol below), so 20 KB in two arrays.
struct RansDivisors {
  uint32_t m_lo[kRansScale + 1];  // m - 2^32
  uint8_t s[kRansScale + 1];
  RansDivisors() {
    m_lo[0] = 0;
    s[0] = 0;
    for (uint32_t f = 1; f <= kRansScale; f++) {
      const ExactReciprocal r(f);
      m_lo[f] = static_cast<uint32_t>(r.m);
      s[f] = static_cast<uint8_t>(r.s);
    }
  }
};
inline const RansDivisors& rans_divisors() {
  static const RansDivisors d;
  return d;
}

// A symbol prepared for RansWriter: what its coding needs, all in 32 bits
// (ryg_rans's "encoder symbol"). With the state x in [kRansLow, kRansLow <<
// 8) < 2^31 and x_max = 2^19 freq <= 2^31:
//  - x >= x_max << 8 iff (x >> 8) >= x_max;
//  - ExactReciprocal's m lies in [2^32, 2^33) for every freq (freq <= 2^c
//    makes 2^(32 + c) / freq >= 2^32, freq > 2^(c - 1) makes it < 2^33;
//    freq = 1: m = 2^32), so m = 2^32 + m_lo, x m >> 32 = umulhi(x, m_lo)
//    + x (< 2^32: umulhi < x < 2^31) and x / freq = that >> (s - 32);
//  - the new state (q << 12) + (x - q freq) + start = x + q (4096 - freq) +
//    start.
// Every step is exact, so the bytes equal the 64-bit form's.
struct alignas(16) RansSymbol {
  uint32_t m_lo, x_max;
  uint16_t start, cofreq;  // cofreq: kRansScale - freq
  uint8_t shift;           // s - 32
  uint8_t unused[3] = {};
  RansSymbol() = default;
  RansSymbol(uint32_t start_, uint32_t freq, const RansDivisors& div) { set(start_, freq, div); }
  // The same in place, field by field: an entry made as a temporary and
  // copied (16 bytes loaded from five narrower stores) stalled on the store
  // forwarding, most of the tables' entry-making (perf, bikes.mp4).
  void set(uint32_t start_, uint32_t freq, const RansDivisors& div) {
    m_lo = div.m_lo[freq];
    x_max = ((kRansLow >> kRansScaleBits) << 8) * freq;
    start = static_cast<uint16_t>(start_);
    cofreq = static_cast<uint16_t>(kRansScale - freq);
    shift = static_cast<uint8_t>(div.s[freq] - 32);
    unused[0] = unused[1] = unused[2] = 0;
  }
  void clear() {
    m_lo = x_max = 0;
    start = cofreq = 0;
    shift = 0;
    unused[0] = unused[1] = unused[2] = 0;
  }
};

CUDAFX_HD uint32_t rans_mulhi(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<uint32_t>((uint64_t(a) * b) >> 32);
#endif
}

// The bytes (0, 1 or 2) that state x sheds before coding `sym`.
CUDAFX_HD uint32_t rans_shed_bytes(uint32_t x, const RansSymbol& sym) {
  return (x >= sym.x_max) + ((x >> 8) >= sym.x_max);
}
// The state after coding `sym` from x, once x has shed its bytes.
CUDAFX_HD uint32_t rans_code_step(uint32_t x, const RansSymbol& sym) {
  const uint32_t q = (rans_mulhi(x, sym.m_lo) + x) >> sym.shift;
  return x + q * sym.cofreq + sym.start;
}

// Two rANS states take turns, symbol i using state i mod 2, and share one
// byte stream: each symbol's arithmetic depends on the symbol two before
// it, not the one before, so two symbols are in flight at once (the coding
// of a single state is a chain of dependent operations; ryg_rans's
// "interleaved" coder). Writer and reader hold the state of the symbol at
// hand in cur_ and swap after every symbol.
//
// Writes backwards from `end`; the caller guarantees room (two bytes a
// symbol at most, eight for the flush). The same code runs on a CUDA device
// (the GPU coder of format 4, delta_tile_entropy_cuda.cu), from RansSymbols
// made on the host.
class RansWriter {
 public:
  // Both states start at kRansLow, so the first symbol put (the last of
  // the stream) may take either.
  CUDAFX_HD explicit RansWriter(uint8_t* end) : p_(end) {
#if !defined(__CUDA_ARCH__)
    div_ = &rans_divisors();
#endif
  }
#if !defined(__CUDA_ARCH__)
  // One symbol occupying [start, start + freq) of the scale; freq >= 1.
  // Symbols come last first.
  void put(uint32_t start, uint32_t freq) { put(RansSymbol(start, freq, *div_)); }
#endif
  CUDAFX_HD void put(const RansSymbol& sym) {
    // Renormalise: shift out 0, 1 or 2 bytes (the scale has 12 bits) until
    // x < x_max. Coded data makes that branch a coin toss, so the count is
    // computed and both bytes are stored whatever it is: the caller's room
    // of two bytes a symbol holds them, and a byte stored below the new p_
    // is overwritten by a later symbol or lies before the stream's start.
    const uint32_t n = rans_shed_bytes(cur_, sym);
    p_[-1] = static_cast<uint8_t>(cur_);
    p_[-2] = static_cast<uint8_t>(cur_ >> 8);
    p_ -= n;
    const uint32_t x = cur_ >> (8 * n);
    cur_ = other_;
    other_ = rans_code_step(x, sym);
  }
  // put(a) then put(b), the two states' arithmetic side by side: b's state
  // does not depend on a's, only where b's bytes go depends on a's count.
  // (The GPU coder, whose time is one lane's chain of dependent steps.)
  CUDAFX_HD void put2(const RansSymbol& a, const RansSymbol& b) {
    const uint32_t na = rans_shed_bytes(cur_, a), nb = rans_shed_bytes(other_, b);
    const uint32_t xa = cur_ >> (8 * na), xb = other_ >> (8 * nb);
    p_[-1] = static_cast<uint8_t>(cur_);
    p_[-2] = static_cast<uint8_t>(cur_ >> 8);
    p_ -= na;
    p_[-1] = static_cast<uint8_t>(other_);
    p_[-2] = static_cast<uint8_t>(other_ >> 8);
    p_ -= nb;
    cur_ = rans_code_step(xa, a);
    other_ = rans_code_step(xb, b);
  }
  // Writes the final states, state 0 first in memory, each most
  // significant byte first; returns the first byte of the stream.
  CUDAFX_HD uint8_t* finish() {
    // Symbol 0 came last and used state 0, which is now in other_; the same
    // holds with no symbols, both states being at their start.
    write_state(cur_);
    write_state(other_);
    return p_;
  }

 private:
  CUDAFX_HD void write_state(uint32_t x) {
    for (int i = 0; i < 4; i++) {
      *--p_ = static_cast<uint8_t>(x);
      x >>= 8;
    }
  }
  uint32_t cur_ = kRansLow, other_ = kRansLow;
  uint8_t* p_;
  const RansDivisors* div_ = nullptr;  // the host's (a device is given RansSymbols)
};

// Reads forwards within [begin, end). A damaged stream (a start state out of
// range, reading past the end) is remembered, never followed outside the
// buffer, and reported by finished_cleanly().
class RansReader {
 public:
  CUDAFX_HD RansReader(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {
    cur_ = read_state();
    other_ = read_state();
  }
  // The position of the next symbol in the scale.
  CUDAFX_HD uint32_t slot() const { return cur_ & (kRansScale - 1); }
  // Consumes the symbol that occupies [start, start + freq), slot() in it.
  CUDAFX_HD void take(uint32_t start, uint32_t freq) {
    uint32_t x = freq * (cur_ >> kRansScaleBits) + slot() - start;
    while (x < kRansLow) {
      if (p_ == end_) {  // a damaged stream: stop reading, keep the state sane
        damaged_ = true;
        x = kRansLow;
        break;
      }
      x = (x << 8) | *p_++;
    }
    cur_ = other_;
    other_ = x;
  }
  // True when the stream was consumed exactly and both states ended where
  // the encoder started them.
  CUDAFX_HD bool finished_cleanly() const {
    return !damaged_ && p_ == end_ && cur_ == kRansLow && other_ == kRansLow;
  }

 private:
  CUDAFX_HD uint32_t read_state() {
    uint32_t x = 0;
    for (int i = 0; i < 4; i++) {
      if (p_ == end_) {
        damaged_ = true;
        return kRansLow;
      }
      x = (x << 8) | *p_++;
    }
    if (x < kRansLow || x >= (kRansLow << 8)) {
      damaged_ = true;
      return kRansLow;
    }
    return x;
  }
  uint32_t cur_ = 0, other_ = 0;
  const uint8_t* p_;
  const uint8_t* end_;
  bool damaged_ = false;
};

}  // namespace cudafx
