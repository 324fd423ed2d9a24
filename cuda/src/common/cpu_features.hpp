// Which instruction sets the delta codec's CPU kernels choose at run time:
// what the CPU has, unless CUDAFX_CPU_BASELINE=1 is in the environment
// (read once per process), which holds every choice to x86-64's baseline
// (SSE2). CI's machines have AVX2, so without it the baseline paths would
// never run in its tests (meson runs the delta suites a second time with
// it); it also lets the two paths' speeds be compared. False off x86-64.
#pragma once

namespace cudafx {

bool cpu_uses_avx2();
bool cpu_uses_clmul();  // PCLMULQDQ and SSE4.1 (the folded CRC-32)

}  // namespace cudafx
