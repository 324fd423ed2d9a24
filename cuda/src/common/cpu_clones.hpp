// CUDAFX_CPU_CLONES: marks a hot CPU loop to be compiled twice, for
// x86-64-v3 (AVX2 + FMA) and the baseline, the clone chosen at load time.
// Both clones compute the same values: the library is built with
// -ffp-contract=off, and std::fma is exact on both.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CUDAFX_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CUDAFX_CPU_CLONES
#endif
