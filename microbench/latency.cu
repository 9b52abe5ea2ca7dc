// gpuwhy memory-latency kernels (compiled at run time by NVRTC to a cubin for
// the device's exact architecture; see src/gpuwhy/engine/compile.py).
//
// A dependent pointer chase: every load's address is the value the previous
// load returned, so one load cannot start before the last one finished and
// the time per step is the load-to-use latency of wherever the data sits
// (L1, L2, DRAM). The chain is built on the host (src/gpuwhy/bench/latency.py):
// a random cyclic permutation of nodes, one node per 128-byte cache line,
// consecutive nodes never neighbouring lines, each node holding the 64-bit
// device address of the next. No arithmetic sits between two loads.
//
//   chase_ca  plain loads, `ld.global.u64`: the PTX default cache operator .ca
//             (cached in L1 and L2), the weak LDG.E.64 that compiled C++ emits.
//             (An explicit `ld.global.ca` is not used: ptxas turns it into a
//             strong SM-scope load, LDG.E.64.STRONG.SM, which user code never gets.)
//   chase_cg  `ld.global.cg` (cached in L2 only, bypassing L1; LDG.E.64.STRONG.GPU)
//
// Launched as one block of one thread (one warp, one active lane). Arguments:
//   state  state[0] holds the address to start from; the kernel writes the
//          address it stopped at back, so successive launches continue the
//          walk around the cycle (the working set stays the whole cycle).
//   warm   untimed steps first (fill L1 and the TLBs; L1 does not survive
//          from one launch to the next, and a launch may land on another SM).
//   steps  timed steps, a multiple of GPUWHY_CHASE_UNROLL.
//   rec    rec[0] = SM clock cycles of the timed steps (clock64),
//          rec[1] = nanoseconds of the timed steps (%globaltimer),
//          rec[2] = the final address (the host checks it against the cycle,
//          which also keeps the loads from being optimised away).
//
// The timer reads do not wait for loads in flight: the reads before the loop
// happen while the last warm-up load is still out (its tail is counted) and
// the reads after it while the last timed load is still out (its tail is not),
// so the two errors cancel to within one latency in `steps` (under 0.01% at
// 16,384 steps). In the SASS the timed loop is LDG.E.64 after LDG.E.64, each
// on the previous one's result register, with no other instruction between.
//
// touch_nodes: many threads read one 8-byte word of each node in address
// order (bandwidth-bound, microseconds), so a working set that fits in the L2
// is resident before the chase starts instead of paying one DRAM miss per
// node on its first pass. The XOR of the words is written only if it equals
// a constant it never equals, which keeps the loads without a store per thread.

#ifndef GPUWHY_CHASE_UNROLL
#define GPUWHY_CHASE_UNROLL 8
#endif

typedef unsigned long long u64;

__device__ __forceinline__ u64 load_ca(u64 p) {
    u64 q;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
    return q;
}

__device__ __forceinline__ u64 load_cg(u64 p) {
    u64 q;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
    return q;
}

__device__ __forceinline__ u64 sm_clock() {
    u64 c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
}

__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

template <int CG>
__device__ __forceinline__ u64 step(u64 p) {
    return CG ? load_cg(p) : load_ca(p);
}

template <int CG>
__device__ __forceinline__ void chase(u64* state, u64 warm, u64 steps, u64* rec) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    u64 p = state[0];
    for (u64 i = 0; i < warm; ++i) p = step<CG>(p);
    const u64 c0 = sm_clock();
    const u64 t0 = global_ns();
    for (u64 i = 0; i < steps; i += GPUWHY_CHASE_UNROLL) {
#pragma unroll
        for (int u = 0; u < GPUWHY_CHASE_UNROLL; ++u) p = step<CG>(p);
    }
    const u64 t1 = global_ns();
    const u64 c1 = sm_clock();
    state[0] = p;
    rec[0] = c1 - c0;
    rec[1] = t1 - t0;
    rec[2] = p;
}

extern "C" __global__ void chase_ca(u64* state, u64 warm, u64 steps, u64* rec) { chase<0>(state, warm, steps, rec); }

extern "C" __global__ void chase_cg(u64* state, u64 warm, u64 steps, u64* rec) { chase<1>(state, warm, steps, rec); }

extern "C" __global__ void touch_nodes(const u64* __restrict__ a, u64 nodes, u64 stride, u64* __restrict__ sink) {
    u64 acc = 0;
    const u64 step_ = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nodes; i += step_) acc ^= a[i * stride];
    if (acc == 0x9E3779B97F4A7C15ull) sink[0] = acc;
}
