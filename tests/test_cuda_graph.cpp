// CudaGraphCache: work captured once per key and launched again reads its
// buffers at launch (not at capture), a new key captures anew, and a
// capture that fails leaves the work queued call by call.
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/delta_tile_entropy_cuda.hpp"
#include "support/gpu.hpp"

using namespace cudafx;

namespace {

constexpr size_t kBytes = 4096;

// Pinned source and destination, a device buffer between them.
struct Buffers {
  PinnedBuffer in, out;
  DeviceBuffer dev;
  bool make() {
    return in.allocate(kBytes).is_ok() && out.allocate(kBytes).is_ok() &&
           dev.allocate(kBytes).is_ok();
  }
  // in -> dev, the first `filled` device bytes set to `value`, dev -> out.
  Status queue(StreamHandle s, int value, size_t filled) {
    CUDAFX_TRY(copy_bytes_async(dev.get(), in.get(), kBytes, s));
    CUDAFX_TRY(fill_bytes_async(dev.get(), value, filled, s));
    return copy_bytes_async(out.get(), dev.get(), kBytes, s);
  }
  void set_in(uint8_t seed) {
    for (size_t i = 0; i < kBytes; i++) in.bytes()[i] = static_cast<uint8_t>(seed + i * 7);
  }
  // What queue(value, filled) leaves in out for the current in.
  bool out_is(int value, size_t filled) const {
    for (size_t i = 0; i < kBytes; i++)
      if (out.bytes()[i] != (i < filled ? static_cast<uint8_t>(value) : in.bytes()[i]))
        return false;
    return true;
  }
};

// A stream, the buffers and an empty cache of two graphs.
class CudaGraphCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(stream.create().is_ok());
    ASSERT_TRUE(b.make());
  }
  CudaStream stream;
  Buffers b;
  CudaGraphCache<std::array<uintptr_t, 1>, 2> cache;
};

}  // namespace

TEST_F(CudaGraphCacheTest, LaunchesReadTheBuffersNowAndKeysCaptureAnew) {
  int captures = 0;
  for (int round = 0; round < 6; round++) {
    const size_t filled = round % 3 == 2 ? 100 : 10;  // the key
    b.set_in(static_cast<uint8_t>(round * 31 + 1));
    const Status st = cache.launch({filled}, stream.get(), [&](StreamHandle s) {
      captures++;
      return b.queue(s, 0xab, filled);
    });
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_TRUE(b.out_is(0xab, filled)) << "round " << round;
  }
  EXPECT_EQ(captures, 2) << "one capture a key";
}

TEST_F(CudaGraphCacheTest, AFailedCaptureQueuesTheWorkCallByCall) {
  int captured = 0, direct = 0;
  for (int round = 0; round < 3; round++) {
    b.set_in(static_cast<uint8_t>(round + 5));
    const Status st = cache.launch({1}, stream.get(), [&](StreamHandle s) -> Status {
      if (s != stream.get()) {  // being captured: refuse
        captured++;
        return Status::invalid("no graphs here");
      }
      direct++;
      return b.queue(s, 0x3c, 64);
    });
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_TRUE(b.out_is(0x3c, 64)) << "round " << round;
  }
  EXPECT_EQ(captured, 1) << "capture is tried once";
  EXPECT_EQ(direct, 3);
  // An error of the work itself still comes back.
  const Status st = cache.launch({2}, stream.get(), [&](StreamHandle) {
    return Status::invalid("the work failed");
  });
  EXPECT_EQ(st.message(), "the work failed");
}

// A capture that CUDA itself refuses (a stream synchronised while it is
// captured) leaves no error behind: the kernel queued call by call after it
// (the CRC pieces, whose launch checks cudaGetLastError) runs and is right.
TEST_F(CudaGraphCacheTest, ACaptureCudaRefusesLeavesNoErrorForTheWorkAfter) {
  b.set_in(42);
  const uint32_t size = static_cast<uint32_t>(kBytes);
  std::memcpy(b.out.bytes(), &size, sizeof size);
  DeviceBuffer size_dev, crc_dev;
  ASSERT_TRUE(size_dev.allocate(sizeof size).is_ok());
  ASSERT_TRUE(crc_dev.allocate(sizeof(uint32_t)).is_ok());
  ASSERT_TRUE(copy_bytes_async(size_dev.get(), b.out.get(), sizeof size, stream.get()).is_ok());
  ASSERT_TRUE(copy_bytes_async(b.dev.get(), b.in.get(), kBytes, stream.get()).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  int refused = 0;
  const Status st = cache.launch({3}, stream.get(), [&](StreamHandle s) -> Status {
    if (s != stream.get()) {
      refused++;
      return synchronize_stream(s);  // not allowed while capturing
    }
    CUDAFX_TRY(delta_crc_pieces_cuda(b.dev.bytes(), static_cast<const uint32_t*>(size_dev.get()),
                                     kBytes, static_cast<uint32_t*>(crc_dev.get()), s));
    return copy_bytes_async(b.out.get(), crc_dev.get(), sizeof(uint32_t), s);
  });
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(refused, 1);
  uint32_t got = 0;
  std::memcpy(&got, b.out.bytes(), sizeof got);
  EXPECT_EQ(got, static_cast<uint32_t>(crc32(0L, b.in.bytes(), static_cast<uInt>(kBytes))));
}
