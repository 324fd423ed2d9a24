// Whether the CPU kernels' run-time choices keep to x86-64's baseline
// (SSE2) whatever the CPU has: CUDAFX_CPU_BASELINE=1 in the environment,
// read once per process. CI's machines have AVX2, so without it the
// baseline paths would never run in its tests (meson runs the delta suites
// a second time with it); it also lets the two paths' speeds be compared.
#pragma once

namespace cudafx {

bool cpu_baseline_forced();

}  // namespace cudafx
