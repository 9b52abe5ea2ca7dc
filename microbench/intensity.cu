// gpuwhy mixed-intensity kernels: one kernel family whose FLOPs per byte are set
// at launch (compiled at run time by NVRTC to a cubin for the device's exact
// architecture; see src/gpuwhy/engine/compile.py). `gpuwhy bench --roofline`
// sweeps it from about 1/8 to 1024 FLOP/byte to draw the measured roofline.
//
// The data are 32-bit words: an fp32 value, or a pair of fp16 or bf16 values
// (low half first). Each thread reads 16-byte vectors (uint4: four words, the
// vector's four "lanes"), runs a chain of fused multiply-adds
//
//     x <- x * mul + add        (one FFMA, or one HFMA2 = two fp16/bf16 FMAs)
//
// on every word in registers, and writes the result to the output array. Every
// input byte is read once and every output byte written once, so
//
//     bytes moved per launch = 2 * 4 * n_words         (read + write)
//     FLOPs per launch       = sum over words of steps(word) * F
//
// with F = 2 (fp32 FFMA) or 4 (HFMA2: two FMAs of two FLOPs). `fmas` (a kernel
// argument) is the number of FMA instructions per 16-byte vector: lane l of a
// vector (word index % 4 == l) runs q + (l < r) steps, q = fmas / 4,
// r = fmas % 4, so a vector costs exactly `fmas` instructions and, when n_words
// is a multiple of 4,
//
//     intensity = F * fmas / 32 FLOP/byte:   fp32 fmas / 16,   fp16/bf16 fmas / 8.
//
// fp32: fmas = 2 gives 1/8 FLOP/byte, 16384 gives 1024. The host
// (gpuwhy.bench.intensity) counts FLOPs per lane for any n_words and recomputes
// every output in numpy before timing.
//
// ILP: each thread holds GPUWHY_INT_UNROLL vectors (4 * GPUWHY_INT_UNROLL
// independent chains; 8 by default, as in compute_fma.cu) and the step loop is
// unrolled GPUWHY_INT_STEPS times, so the loop's own three issue slots cost
// 3 / (32 * 8) = 1.2% of the FMA issue rate at the compute-bound end. All loads
// of a chunk are issued before the first FMA; the chain depends on the loaded
// value, so nothing can be hoisted or folded (mul and add are kernel arguments;
// __fmaf_rn and fma.rn.* are never contracted or reassociated).
//
// Work layout as in memory.cu's vec16 kernels: chunks of blockDim.x *
// GPUWHY_INT_UNROLL vectors; thread t handles vectors t, t + blockDim.x, ...
// of a chunk (each warp access is 512 contiguous bytes); block b takes chunks
// b, b + gridDim.x, ... (correct for any grid size). The last n_words % 4
// words are done by the first threads of the grid with 4-byte accesses.
// Pointers must be 16-byte aligned (cuMemAlloc gives 256).
//
// Kernels (extern "C"):
//   intensity_f32    (const uint4* in, uint4* out, u64 n_words, unsigned mul, unsigned add, int fmas)
//   intensity_f16x2  same; mul and add are fp16 pairs (fma.rn.f16x2, sm_53+)
//   intensity_bf16x2 same; bf16 pairs (fma.rn.bf16x2), only built for sm_80 and newer
//   intensity_fill   (unsigned* a, u64 n_words, u64 seed, int format): non-zero
//                    values in [0.5, 1.5) for timing (format 0 fp32, 1 fp16
//                    pairs, 2 bf16 pairs); checks use host data instead.
//
// mul and add are passed as the raw bits of a word (an fp32 value, or a pair
// of halves), so one signature serves all three formats.
//
// Plain CUDA C++ without headers: fp16/bf16 arithmetic is inline PTX.

#ifndef GPUWHY_INT_UNROLL
#define GPUWHY_INT_UNROLL 2
#endif
#ifndef GPUWHY_INT_STEPS
#define GPUWHY_INT_STEPS 32
#endif
#define GPUWHY_INT_BLOCK 256

typedef unsigned long long u64;

// One step on one word. OP: 0 fp32, 1 fp16x2, 2 bf16x2.
template <int OP>
__device__ __forceinline__ unsigned fma_word(unsigned x, unsigned m, unsigned a) {
    if constexpr (OP == 0) {
        return __float_as_uint(__fmaf_rn(__uint_as_float(x), __uint_as_float(m), __uint_as_float(a)));
    } else if constexpr (OP == 1) {
        unsigned y;
        asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(m), "r"(a));
        return y;
    } else {
        unsigned y;
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(m), "r"(a));
        return y;
    }
}

// q steps on every word of x, then one more on the words whose lane (j % 4) is below r.
template <int OP, int NW>
__device__ __forceinline__ void run_steps(unsigned (&x)[NW], unsigned m, unsigned a, int q, int r) {
    int s = 0;
    for (; s + GPUWHY_INT_STEPS <= q; s += GPUWHY_INT_STEPS) {
#pragma unroll
        for (int k = 0; k < GPUWHY_INT_STEPS; ++k) {
#pragma unroll
            for (int j = 0; j < NW; ++j) x[j] = fma_word<OP>(x[j], m, a);
        }
    }
    for (; s < q; ++s) {
#pragma unroll
        for (int j = 0; j < NW; ++j) x[j] = fma_word<OP>(x[j], m, a);
    }
#pragma unroll
    for (int j = 0; j < NW; ++j) {
        if ((j & 3) < r) x[j] = fma_word<OP>(x[j], m, a);
    }
}

template <int OP>
__device__ __forceinline__ void intensity_body(const uint4* __restrict__ in, uint4* __restrict__ out, u64 n_words,
                                               unsigned m, unsigned a, int fmas) {
    const int U = GPUWHY_INT_UNROLL;
    const u64 nv = n_words / 4;
    const int q = fmas >> 2, r = fmas & 3;
    const u64 chunk = (u64)blockDim.x * U;
    for (u64 c = blockIdx.x; c * chunk < nv; c += gridDim.x) {
        const u64 base = c * chunk + threadIdx.x;
        if (base + (u64)(U - 1) * blockDim.x < nv) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = in[base + (u64)u * blockDim.x];
            unsigned x[4 * U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                x[4 * u] = v[u].x; x[4 * u + 1] = v[u].y; x[4 * u + 2] = v[u].z; x[4 * u + 3] = v[u].w;
            }
            run_steps<OP>(x, m, a, q, r);
#pragma unroll
            for (int u = 0; u < U; ++u)
                out[base + (u64)u * blockDim.x] = make_uint4(x[4 * u], x[4 * u + 1], x[4 * u + 2], x[4 * u + 3]);
        } else {
            for (int u = 0; u < U; ++u) {
                const u64 i = base + (u64)u * blockDim.x;
                if (i < nv) {
                    const uint4 v = in[i];
                    unsigned x[4] = {v.x, v.y, v.z, v.w};
                    run_steps<OP>(x, m, a, q, r);
                    out[i] = make_uint4(x[0], x[1], x[2], x[3]);
                }
            }
        }
    }
    // The last n_words % 4 words: lane = word index % 4 (nv * 4 is a multiple of 4).
    const u64 t = nv * 4 + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n_words) {
        unsigned x = reinterpret_cast<const unsigned*>(in)[t];
        for (int s = 0; s < q; ++s) x = fma_word<OP>(x, m, a);
        if ((int)(t & 3) < r) x = fma_word<OP>(x, m, a);
        reinterpret_cast<unsigned*>(out)[t] = x;
    }
}

extern "C" __global__ void __launch_bounds__(GPUWHY_INT_BLOCK)
intensity_f32(const uint4* __restrict__ in, uint4* __restrict__ out, u64 n_words, unsigned mul, unsigned add, int fmas) {
    intensity_body<0>(in, out, n_words, mul, add, fmas);
}

extern "C" __global__ void __launch_bounds__(GPUWHY_INT_BLOCK)
intensity_f16x2(const uint4* __restrict__ in, uint4* __restrict__ out, u64 n_words, unsigned mul, unsigned add, int fmas) {
    intensity_body<1>(in, out, n_words, mul, add, fmas);
}

#if __CUDA_ARCH__ >= 800
extern "C" __global__ void __launch_bounds__(GPUWHY_INT_BLOCK)
intensity_bf16x2(const uint4* __restrict__ in, uint4* __restrict__ out, u64 n_words, unsigned mul, unsigned add, int fmas) {
    intensity_body<2>(in, out, n_words, mul, add, fmas);
}
#endif

// ----------------------------------------------------------------- fill ----

__device__ __forceinline__ unsigned int_hash32(u64 x) {
    // splitmix64 finaliser, upper 32 bits (as memory.cu's fill)
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (unsigned)(x >> 32);
}

__device__ __forceinline__ unsigned short f32_to_f16_bits(float v) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
}

extern "C" __global__ void intensity_fill(unsigned* __restrict__ a, u64 n_words, u64 seed, int format) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += stride) {
        const unsigned h = int_hash32(i ^ (seed << 40));
        const float lo = 0.5f + (float)(h & 0xFFFFu) * (1.0f / 65536.0f);
        const float hi = 0.5f + (float)(h >> 16) * (1.0f / 65536.0f);
        unsigned w;
        if (format == 0) {
            w = __float_as_uint(0.5f + (float)(h >> 8) * (1.0f / 16777216.0f));
        } else if (format == 1) {
            w = (unsigned)f32_to_f16_bits(lo) | ((unsigned)f32_to_f16_bits(hi) << 16);
        } else {
            // bf16: the upper 16 bits of the fp32 value (truncation keeps it in [0.5, 1.5)).
            w = (__float_as_uint(lo) >> 16) | (__float_as_uint(hi) & 0xFFFF0000u);
        }
        a[i] = w;
    }
}
