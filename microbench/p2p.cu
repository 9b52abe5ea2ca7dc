// gpuwhy GPU-to-GPU kernels (compiled at run time by NVRTC to a cubin for the
// device's exact architecture; see src/gpuwhy/engine/compile.py), for
// `gpuwhy bench --p2p` (src/gpuwhy/bench/p2p.py).
//
// p2p_copy   the SM copy: each thread loads GPUWHY_P2P_UNROLL 16-byte vectors
//            (uint4: one LDG.E.128 each) a grid-stride apart, then stores them,
//            so every thread keeps UNROLL x 16 bytes in flight and the whole
//            grid (all SMs, full occupancy) many megabytes: enough to cover the
//            latency of loads that cross NVLink or PCIe. Launched on the GPU that
//            receives the data, reading the other GPU's memory by its address
//            (peer access on): the receiving GPU pulls. n is in 16-byte vectors.
// p2p_fill   writes the check pattern: word i of a buffer is pattern(i, seed),
//            a 32-bit hash of the index and a per-GPU seed (a copy from the wrong
//            GPU, at the wrong offset, or not at all does not match).
// p2p_check  counts the words of a buffer that differ from pattern(i, seed) and
//            adds the count to bad[0] (the host reads it after every copy).
//
// The hash is mirrored in numpy by gpuwhy.model.p2p.pattern_words (the tests
// compare the two).

#ifndef GPUWHY_P2P_UNROLL
#define GPUWHY_P2P_UNROLL 4
#endif

typedef unsigned long long u64;
typedef unsigned int u32;

extern "C" __global__ void p2p_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (GPUWHY_P2P_UNROLL - 1) * stride < n; i += GPUWHY_P2P_UNROLL * stride) {
        uint4 v[GPUWHY_P2P_UNROLL];
#pragma unroll
        for (int u = 0; u < GPUWHY_P2P_UNROLL; ++u) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < GPUWHY_P2P_UNROLL; ++u) dst[i + u * stride] = v[u];
    }
    for (; i < n; i += stride) dst[i] = src[i];
}

__device__ __forceinline__ u32 pattern(u64 i, u32 seed) {
    u32 x = (u32)i ^ ((u32)(i >> 32) * 0x9E3779B9u) ^ seed;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

extern "C" __global__ void p2p_fill(u32* __restrict__ p, u64 n, u32 seed) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = pattern(i, seed);
}

extern "C" __global__ void p2p_check(const u32* __restrict__ p, u64 n, u32 seed, u64* __restrict__ bad) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 wrong = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) wrong += (p[i] != pattern(i, seed));
    if (wrong) atomicAdd(bad, wrong);
}
