// gpuwhy cache-bandwidth kernels: L2 read, L2 read+write, shared memory, L1
// (compiled at run time by NVRTC to a cubin for the device's exact architecture;
// src/gpuwhy/bench/cache_bandwidth.py drives them).
//
// Every kernel moves 16-byte vectors of 32-bit words and adds what it reads in
// 32-bit integer arithmetic (wrapping), so the host can check the result
// exactly: no kernel figure is reported unless it matched.
//
//   l2_read_u<U>(buf, nvec, passes, shift, partial)
//       `passes` sweeps over nvec vectors with ld.global.cg (cached in L2 only,
//       so L1 never serves them). Thread g (of T = gridDim.x * blockDim.x) reads
//       vectors g, g + T, g + 2T, ... (a warp reads 512 contiguous bytes), U
//       loads issued before the first use. Pass p reads vector (i + p * shift)
//       mod nvec instead of i: a rotation, so every vector is read once per pass
//       while each thread meets different data from pass to pass. Each block
//       writes the 32-bit sum of what it read to partial[blockIdx.x]; the sum of
//       the partials is passes x (sum of every word) mod 2^32.
//   l2_copy_u<U>(a, b, nvec, passes, shift)
//       the same sweep, reading a at the rotated index and storing
//       b[i] = a[(i + p * shift) mod nvec] + p (each word) with st.global.cg at
//       the thread's OWN index i: 16 bytes read and 16 written per vector and
//       pass. Vector i of b is written by thread i mod T and by no other, so its
//       passes land in program order whatever the other blocks do, and afterwards
//       b[i] = a[(i + r) mod nvec] + (passes - 1), r = ((passes - 1) * shift) mod nvec.
//       (Storing at the rotated index would hand b[j] to a different thread in
//       every pass: a slow block's pass p - 1 could land after a fast block's
//       pass p, and the result would depend on scheduling.)
//   smem_read_b<B>(out, reps, seed, zero)
//       blocks of B threads (B = 256, 512 or 1024) fill 2048 vectors (32 KiB:
//       64 chunks of 32 vectors) of shared memory with fill_word(i, c, seed);
//       then, rep after rep, lane l of warp w loads vector 32 (j + 8k) + l for
//       k = 0..7 with ld.shared.v4 (8 distinct chunks: a warp reads 512
//       contiguous bytes per load, four conflict-free 128-byte wavefronts), where
//       j = (w + r + d) mod 8 at rep r and d = (first word of the previous rep's
//       first load) AND zero. The host passes zero = 0, so d = 0 when it runs,
//       but no compiler can know that: every load's address depends on the rep
//       counter and on a value loaded before, so no load can be hoisted out of
//       the loop, merged with another or dropped (ptxas does all three to
//       loop-invariant loads, asm volatile or not). out[global thread] = the
//       sum of the words it read.
//   l1_read_b<B>(buf, out, reps, zero)
//       the same reads from a 1024-vector (16 KiB: 32 chunks) global buffer with
//       plain ld.global (weak, L1-cached by default since Volta; ptxas makes
//       .ca a strong SM-scope load): chunks j + 4k, k = 0..7, j = (w + r + d)
//       mod 4. Every block of an SM reads the same 16 KiB, which stays in that
//       SM's L1 after the first touch.
//
// The rep loops are not unrolled (#pragma unroll 1): the machine code has
// exactly 8 shared (or L1) loads, all inside the loop; tests/test_cache_bandwidth.py
// counts them in the cubin.

typedef unsigned int u32;
typedef unsigned long long u64;

#define GPUWHY_SMEM_VECS 2048
#define GPUWHY_L1_VECS 1024
#define GPUWHY_MAX_BLOCK 1024

__device__ __forceinline__ uint4 ld_cg(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ uint4 ld_l1(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ void st_cg(uint4* p, uint4 v) {
    asm volatile("st.global.cg.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

__device__ __forceinline__ uint4 ld_shared(u32 addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}

// The word c (0..3) of vector i of the shared-memory pattern (the host computes the same).
__device__ __forceinline__ u32 fill_word(u32 i, u32 c, u32 seed) { return (i * 4u + c) * 2654435761u + seed; }

// Sum over the block (wrapping); valid in thread 0.
__device__ __forceinline__ u32 block_sum_u32(u32 v) {
    __shared__ u32 warp_sums[GPUWHY_MAX_BLOCK / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    u32 s = 0;
    if (warp == 0) {
        const int nwarps = (blockDim.x + 31) >> 5;
        s = lane < nwarps ? warp_sums[lane] : 0u;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    }
    return s;
}

// ------------------------------------------------------------------- L2 ----

// Vector i of a pass rotated by rot (both < nvec): (i + rot) mod nvec.
__device__ __forceinline__ u64 rotated(u64 i, u64 rot, u64 nvec) {
    const u64 j = i + rot;
    return j >= nvec ? j - nvec : j;
}

template <int U>
__device__ __forceinline__ void l2_read(const uint4* __restrict__ buf, u64 nvec, u32 passes, u64 shift,
                                        u32* __restrict__ partial) {
    const u64 T = (u64)gridDim.x * blockDim.x;
    const u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 acc0 = 0, acc1 = 0;
    for (u32 p = 0; p < passes; ++p) {
        const u64 rot = ((u64)p * shift) % nvec;
        for (u64 k = g; k < nvec; k += T * U) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 i = k + (u64)u * T;
                v[u] = i < nvec ? ld_cg(buf + rotated(i, rot, nvec)) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                acc0 += v[u].x + v[u].y;
                acc1 += v[u].z + v[u].w;
            }
        }
    }
    const u32 s = block_sum_u32(acc0 + acc1);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <int U>
__device__ __forceinline__ void l2_copy(const uint4* __restrict__ a, uint4* __restrict__ b, u64 nvec, u32 passes,
                                        u64 shift) {
    const u64 T = (u64)gridDim.x * blockDim.x;
    const u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (u32 p = 0; p < passes; ++p) {
        const u64 rot = ((u64)p * shift) % nvec;
        for (u64 k = g; k < nvec; k += T * U) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 i = k + (u64)u * T;
                v[u] = i < nvec ? ld_cg(a + rotated(i, rot, nvec)) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 i = k + (u64)u * T;  // this thread's own vector: no other thread writes b[i]
                if (i < nvec) st_cg(b + i, make_uint4(v[u].x + p, v[u].y + p, v[u].z + p, v[u].w + p));
            }
        }
    }
}

// ------------------------------------------------------- shared and L1 ----

// Chunks of 32 vectors (512 bytes: one warp's 16-byte loads) and the loads per rep.
#define GPUWHY_CHUNK_VECS 32
#define GPUWHY_LOADS_PER_REP 8

template <int B>
__device__ __forceinline__ void smem_read(u32* __restrict__ out, u32 reps, u32 seed, u32 zero) {
    constexpr u32 GROUPS = GPUWHY_SMEM_VECS / GPUWHY_CHUNK_VECS / GPUWHY_LOADS_PER_REP;  // 8
    constexpr u32 STEP = GROUPS * GPUWHY_CHUNK_VECS * 16u;                              // 4096 bytes
    __shared__ uint4 s[GPUWHY_SMEM_VECS];
    for (u32 i = threadIdx.x; i < GPUWHY_SMEM_VECS; i += B)
        s[i] = make_uint4(fill_word(i, 0u, seed), fill_word(i, 1u, seed), fill_word(i, 2u, seed), fill_word(i, 3u, seed));
    __syncthreads();
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const u32 base = (u32)__cvta_generic_to_shared(s) + lane * 16u;
    u32 acc0 = 0, acc1 = 0, d = 0;
#pragma unroll 1
    for (u32 r = 0; r < reps; ++r) {
        const u32 at = base + ((warp + r + d) & (GROUPS - 1u)) * (GPUWHY_CHUNK_VECS * 16u);
        uint4 v[GPUWHY_LOADS_PER_REP];
#pragma unroll
        for (int k = 0; k < GPUWHY_LOADS_PER_REP; ++k) v[k] = ld_shared(at + k * STEP);
#pragma unroll
        for (int k = 0; k < GPUWHY_LOADS_PER_REP; ++k) {
            acc0 += v[k].x + v[k].y;
            acc1 += v[k].z + v[k].w;
        }
        d = v[0].x & zero;  // 0 at run time (the host passes zero = 0); unknown to the compiler
    }
    out[(u64)blockIdx.x * B + threadIdx.x] = acc0 + acc1;
}

template <int B>
__device__ __forceinline__ void l1_read(const uint4* __restrict__ buf, u32* __restrict__ out, u32 reps, u32 zero) {
    constexpr u32 GROUPS = GPUWHY_L1_VECS / GPUWHY_CHUNK_VECS / GPUWHY_LOADS_PER_REP;  // 4
    constexpr u32 STEP = GROUPS * GPUWHY_CHUNK_VECS;                                  // 128 vectors
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const uint4* base = buf + lane;
    u32 acc0 = 0, acc1 = 0, d = 0;
#pragma unroll 1
    for (u32 r = 0; r < reps; ++r) {
        const uint4* at = base + ((warp + r + d) & (GROUPS - 1u)) * GPUWHY_CHUNK_VECS;
        uint4 v[GPUWHY_LOADS_PER_REP];
#pragma unroll
        for (int k = 0; k < GPUWHY_LOADS_PER_REP; ++k) v[k] = ld_l1(at + k * STEP);
#pragma unroll
        for (int k = 0; k < GPUWHY_LOADS_PER_REP; ++k) {
            acc0 += v[k].x + v[k].y;
            acc1 += v[k].z + v[k].w;
        }
        d = v[0].x & zero;
    }
    out[(u64)blockIdx.x * B + threadIdx.x] = acc0 + acc1;
}

// ---------------------------------------------------------- entry points ----

#define GPUWHY_L2_KERNELS(U)                                                                                       \
    extern "C" __global__ void l2_read_u##U(const uint4* __restrict__ buf, u64 nvec, u32 passes, u64 shift,       \
                                            u32* __restrict__ partial) {                                          \
        l2_read<U>(buf, nvec, passes, shift, partial);                                                             \
    }                                                                                                              \
    extern "C" __global__ void l2_copy_u##U(const uint4* __restrict__ a, uint4* __restrict__ b, u64 nvec,          \
                                            u32 passes, u64 shift) {                                               \
        l2_copy<U>(a, b, nvec, passes, shift);                                                                     \
    }

#define GPUWHY_SM_KERNELS(B)                                                                                       \
    extern "C" __global__ void __launch_bounds__(B) smem_read_b##B(u32* __restrict__ out, u32 reps, u32 seed,     \
                                                                   u32 zero) {                                     \
        smem_read<B>(out, reps, seed, zero);                                                                       \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(B) l1_read_b##B(const uint4* __restrict__ buf,                   \
                                                                 u32* __restrict__ out, u32 reps, u32 zero) {      \
        l1_read<B>(buf, out, reps, zero);                                                                          \
    }

GPUWHY_L2_KERNELS(2)
GPUWHY_L2_KERNELS(4)
GPUWHY_L2_KERNELS(8)
GPUWHY_SM_KERNELS(256)
GPUWHY_SM_KERNELS(512)
GPUWHY_SM_KERNELS(1024)
