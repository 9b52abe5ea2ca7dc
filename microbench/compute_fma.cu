// gpuwhy compute ceilings: CUDA-core FMA throughput (FP32, FP64, FP16 half2).
//
// Each thread runs FMA_CHAINS independent recurrences x <- x * mul + add, so
// the scheduler always has FMA_CHAINS independent instructions to issue (ILP);
// the inner loop is unrolled UNROLL times so loop bookkeeping is a few
// instructions per UNROLL * FMA_CHAINS FMAs (under 1%). Nothing is read
// from or written to memory inside the loop: the initial values come from the
// thread index, `mul` and `add` are kernel arguments (so the compiler cannot
// fold the chain), and each chain's final value is stored once at the end, at
// out[j * total_threads + tid] (coalesced), so nothing is optimised away and
// the host can check every value.
//
// FLOPs per launch = total_threads * iters * UNROLL * FMA_CHAINS * 2
// (x2 again for half2: two fp16 FMAs per instruction).
//
// Initial value of chain j of thread tid: ((tid * FMA_CHAINS + j) % 61) * init_step
// (the fp16 kernel: that value in the low half and its negation in the high half).
// The host's reference (gpuwhy.bench.compute) recomputes exactly this.
//
// Plain CUDA C++ without headers, so NVRTC compiles it for any sm_XX.

#define FMA_CHAINS 8
// Unroll depth of the inner loop, per kernel. The loop's own instructions
// (counter, compare, branch: three issue slots) cost 3 / (UNROLL * 8) of the
// issue rate: 0.6% at 64. FFMA and HFMA2 issue one warp-instruction per cycle
// per scheduler on sm_90, so every non-FMA slot counts; DFMA issues every other
// cycle on sm_80/sm_90, so the loop's slots hide there and 32 is enough.
// gpuwhy.bench.compute repeats these numbers (a test keeps them in step).
#define FP32_UNROLL 64
#define FP64_UNROLL 32
#define FP16_UNROLL 64

extern "C" __global__ void __launch_bounds__(256)
fma_fp32(float* __restrict__ out, float mul, float add, float init_step, int iters)
{
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int total = gridDim.x * blockDim.x;
    float x[FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        x[j] = (float)((tid * FMA_CHAINS + j) % 61u) * init_step;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < FP32_UNROLL; ++u) {
#pragma unroll
            for (int j = 0; j < FMA_CHAINS; ++j)
                x[j] = __fmaf_rn(x[j], mul, add);
        }
    }
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        out[j * total + tid] = x[j];
}

extern "C" __global__ void __launch_bounds__(256)
fma_fp64(double* __restrict__ out, double mul, double add, double init_step, int iters)
{
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int total = gridDim.x * blockDim.x;
    double x[FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        x[j] = (double)((tid * FMA_CHAINS + j) % 61u) * init_step;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < FP64_UNROLL; ++u) {
#pragma unroll
            for (int j = 0; j < FMA_CHAINS; ++j)
                x[j] = __fma_rn(x[j], mul, add);
        }
    }
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        out[j * total + tid] = x[j];
}

// half2: mul2 and add2 are packed pairs of fp16 (low half = first lane).
// fma.rn.f16x2 through inline PTX, so no cuda_fp16.h is needed.
extern "C" __global__ void __launch_bounds__(256)
fma_fp16x2(unsigned int* __restrict__ out, unsigned int mul2, unsigned int add2, float init_step, int iters)
{
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int total = gridDim.x * blockDim.x;
    unsigned int x[FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j) {
        const float v = (float)((tid * FMA_CHAINS + j) % 61u) * init_step;
        unsigned short lo, hi;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(lo) : "f"(v));
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(hi) : "f"(-v));
        x[j] = (unsigned int)lo | ((unsigned int)hi << 16);
    }
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < FP16_UNROLL; ++u) {
#pragma unroll
            for (int j = 0; j < FMA_CHAINS; ++j)
                asm("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x[j]) : "r"(mul2), "r"(add2));
        }
    }
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        out[j * total + tid] = x[j];
}
