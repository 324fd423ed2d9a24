#include "common/cpu_baseline.hpp"

#include <cstdlib>
#include <cstring>

namespace cudafx {

bool cpu_baseline_forced() {
  static const bool forced = [] {
    const char* v = std::getenv("CUDAFX_CPU_BASELINE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return forced;
}

}  // namespace cudafx
