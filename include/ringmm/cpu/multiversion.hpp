// The CPU kernels' per-instruction-set builds. A kernel's hot function is written once, marked
// RINGMM_CPU_INLINE, and wrapped by thin functions carrying RINGMM_CPU_TARGET_AVX2 or
// RINGMM_CPU_TARGET_AVX512, into which the compiler inlines it and vectorises it for that set; the
// caller picks the wrapper for resolved_cpu_isa(Context::cpu_isa) at run time. The library is
// thus built for baseline x86-64 and still uses the running CPU's widest vectors. Elsewhere (other
// compilers, other architectures) only the generic build exists.
#pragma once

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define RINGMM_CPU_MULTIVERSION 1
#define RINGMM_CPU_INLINE [[gnu::always_inline]] inline
#define RINGMM_CPU_TARGET_AVX2 [[gnu::target("avx2,fma,bmi2")]]
#define RINGMM_CPU_TARGET_AVX512 \
  [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2,prefer-vector-width=512")]]
#else
#define RINGMM_CPU_MULTIVERSION 0
#define RINGMM_CPU_INLINE inline
#endif
