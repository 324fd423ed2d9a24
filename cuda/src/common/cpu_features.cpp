#include "common/cpu_features.hpp"

#include <cstdlib>
#include <cstring>

namespace cudafx {
namespace {

bool baseline_forced() {
  static const bool forced = [] {
    const char* v = std::getenv("CUDAFX_CPU_BASELINE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return forced;
}

}  // namespace

bool cpu_uses_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool uses = !baseline_forced() && __builtin_cpu_supports("avx2");
  return uses;
#else
  return false;
#endif
}

bool cpu_uses_clmul() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool uses =
      !baseline_forced() && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return uses;
#else
  return false;
#endif
}

}  // namespace cudafx
