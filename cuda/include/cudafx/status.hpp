// Status: how every cudafx call reports failure. The library never aborts,
// exits or prints; the caller (a GStreamer element, a test, a benchmark)
// decides what an error means and how to show it.
#pragma once

#include <string>
#include <utility>

namespace cudafx {

enum class StatusCode {
  Ok = 0,
  InvalidArgument,   // the caller asked for something the op cannot do
  Unsupported,       // a valid request this build or device cannot serve
  CudaError,         // the CUDA runtime reported an error
  OutOfMemory,
  Internal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }
  static Status invalid(std::string message) {
    return error(StatusCode::InvalidArgument, std::move(message));
  }

  bool is_ok() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

// Propagates a failed status to the caller.
#define CUDAFX_TRY(expr)                      \
  do {                                        \
    ::cudafx::Status cudafx_try_s_ = (expr);  \
    if (!cudafx_try_s_.is_ok())               \
      return cudafx_try_s_;                   \
  } while (0)

}  // namespace cudafx
