// gpuwhy compute ceilings: tensor-core throughput with warp-level mma.sync.
// gpuwhy: needs sm_80 (mma.sync m16n8k16 and m16n8k32 shapes)
//
// For sm_80, sm_86, sm_89, sm_90 and sm_120 (it also builds for sm_100, where
// mma.sync still exists but tcgen05 is the fast path; gpuwhy does not measure
// that). On sm_90 this is NOT the tensor-core peak: mma.sync issues from one
// warp at a time and stops well below it there; compute_wgmma.cu measures the
// Hopper peak. Here it is the peak path for the other architectures.
//
// Operands stay in registers: each warp loads one A fragment (16 x K) and one
// B fragment (K x 8) once, from a_frag[lane * 4 + r] and b_frag[lane * 2 + r]
// (the host packs them in the fragment order of the PTX ISA, see
// gpuwhy.bench.compute), then issues MMA_ACC independent mma.sync per loop
// step into MMA_ACC separate accumulators, so the tensor pipe always has
// independent work. No memory traffic inside the loop. Each accumulator is
// stored once at the end:
//   out[((global_warp * MMA_ACC + j) * 32 + lane) * 4 + r]
// so after `iters` steps every accumulator holds iters * (A . B), which the
// host checks against a float64 reference.
//
// Shapes and FLOPs per instruction (2 * M * N * K):
//   fp16, bf16 -> fp32  m16n8k16   4096
//   tf32       -> fp32  m16n8k8    2048
//   int8       -> s32   m16n8k32   8192 (integer ops)
//   fp8 e4m3   -> fp32  m16n8k32   8192 (sm_89 and newer only)
// FLOPs per launch = warps * iters * MMA_UNROLL * MMA_ACC * flops_per_instruction.

#define MMA_ACC 8
#define MMA_UNROLL 2

__device__ __forceinline__ void mma_fp16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_int8(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
__device__ __forceinline__ void mma_fp8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

#define GPUWHY_MMA_KERNEL(NAME, FN, ACC_T)                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                              \
    NAME(const unsigned* __restrict__ a_frag, const unsigned* __restrict__ b_frag,                 \
         ACC_T* __restrict__ out, int iters)                                                       \
    {                                                                                              \
        const unsigned lane = threadIdx.x & 31u;                                                   \
        unsigned a[4], b[2];                                                                       \
        _Pragma("unroll") for (int r = 0; r < 4; ++r) a[r] = a_frag[lane * 4u + r];                \
        _Pragma("unroll") for (int r = 0; r < 2; ++r) b[r] = b_frag[lane * 2u + r];                \
        ACC_T d[MMA_ACC][4];                                                                       \
        _Pragma("unroll") for (int j = 0; j < MMA_ACC; ++j)                                        \
            _Pragma("unroll") for (int r = 0; r < 4; ++r) d[j][r] = (ACC_T)0;                      \
        for (int i = 0; i < iters; ++i) {                                                          \
            _Pragma("unroll") for (int u = 0; u < MMA_UNROLL; ++u)                                 \
                _Pragma("unroll") for (int j = 0; j < MMA_ACC; ++j) FN(d[j], a, b);                \
        }                                                                                          \
        const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;                        \
        _Pragma("unroll") for (int j = 0; j < MMA_ACC; ++j)                                        \
            _Pragma("unroll") for (int r = 0; r < 4; ++r)                                          \
                out[((warp * MMA_ACC + j) * 32u + lane) * 4u + r] = d[j][r];                       \
    }

GPUWHY_MMA_KERNEL(mma_fp16_f32, mma_fp16, float)
GPUWHY_MMA_KERNEL(mma_bf16_f32, mma_bf16, float)
GPUWHY_MMA_KERNEL(mma_tf32_f32, mma_tf32, float)
GPUWHY_MMA_KERNEL(mma_int8_s32, mma_int8, int)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
GPUWHY_MMA_KERNEL(mma_fp8_f32, mma_fp8, float)
#endif
