// gpuwhy compute ceilings: Hopper tensor-core throughput with wgmma (sm_90a only).
//
// Build for sm_90a (NVRTC arch "sm_90a"): wgmma exists only in the
// architecture-specific target. For any other target this file compiles to a
// module holding one empty stub kernel (wgmma_needs_sm_90a; everything else is
// inside the #if below), so a "compile every bundled kernel" pass does not
// break; gpuwhy only ever loads the wgmma kernels on sm_90, built for sm_90a.
//
// What is measured: the instruction-issue peak of the tensor cores, not a GEMM.
// Each block copies one A tile (64 rows x 128 bytes of K) and one B tile
// (256 rows x 128 bytes of K) into shared memory once, in the 128-byte-swizzled
// K-major layout (the host writes the swizzled bytes, see
// gpuwhy.bench.compute.swizzle_128b), then every warpgroup (128 threads, 4
// consecutive warps) loops over wgmma.mma_async with the same shared-memory
// operands and its accumulators in registers. No global-memory traffic inside
// the loop, so a real GEMM, which must also stream its operands, reaches less.
//
// Operands:
//   *_ss_*: A and B from shared memory (two matrix descriptors).
//   *_rs_*: A from registers (each thread loads its fragments once from
//           a_frag[(t * WG_KSTEPS + k) * 4 + r], t = thread in warpgroup, in
//           the PTX ISA's register-fragment order), B from shared memory.
// Shapes (one wgmma covers 64 x N x 32 bytes of K):
//   bf16, fp16 -> f32: m64nNk16;  tf32 -> f32: m64nNk8;
//   fp8 e4m3 -> f32: m64nNk32;    int8 -> s32: m64nNk32.
//   *_n256:   N = 256, one accumulator (128 registers) per warpgroup.
//   *_n128x2: N = 128, two independent accumulators (2 x 64 registers).
// FLOPs per wgmma = 2 * 64 * N * K; per loop step every accumulator gets
// WG_KSTEPS wgmmas (the four 32-byte K slices of the 128-byte swizzle row).
//
// Descriptors (PTX ISA, "matrix descriptor"): bits 0-13 start address >> 4,
// 16-29 leading-dimension byte offset >> 4 (unused for swizzled K-major
// layouts; 16 bytes by convention), 32-45 stride-dimension byte offset >> 4
// (1024 bytes: one 8-row x 128-byte swizzle atom to the next), 49-51 base
// offset (0: tiles are 1024-byte aligned), 62-63 swizzle mode (1 = 128 bytes).
// Moving to the k-th 32-byte K slice adds 32 * k bytes to the start address
// (2 * k in the descriptor); the hardware applies the XOR swizzle on the
// address bits, which is why the tiles must start 1024-byte aligned.
//
// Synchronisation: wgmma.fence once after the accumulators (and A fragments)
// are written by ordinary instructions; by default each loop step is one commit
// group and wgmma.wait_group 1 keeps one group queued behind the running one
// (WG_PASSES / WG_INFLIGHT below change that); wait_group 0 before the
// accumulators are read and stored:
//   out[((block * warpgroups + wg) * regs + r) * 128 + t]   (t = thread in warpgroup)
// regs = 128 per warpgroup (n256) or 2 x 64 (n128x2: accumulator 0's
// registers, then accumulator 1's). After `iters` steps each accumulator holds
// iters * WG_PASSES * (A . B^T) (B is stored N x K), which the host checks in
// float64.
//
// How the file is written: every kernel is one template body (wg_run) over the
// precision, the A source and the shape; the inline PTX is assembled by macros
// from one operand layout per A source x shape (WG_MMA) and each precision's
// two instruction strings (WG_PRECISION); WG_KERNELS(p) stamps out one
// precision's four extern "C" kernels.

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

#define WG_TILE_A_BYTES 8192
#define WG_TILE_B_BYTES 32768
#define WG_TILES_BYTES (WG_TILE_A_BYTES + WG_TILE_B_BYTES)
#define WG_KSTEPS 4
// __launch_bounds__: A-in-smem kernels allow 3 warpgroups a block (168 registers
// a thread, enough for one 128-register accumulator); A-in-registers kernels
// need the 16 A registers on top and allow 2 (255 registers).
#define WG_MAX_THREADS_SS 384
#define WG_MAX_THREADS_RS 256

// Tuning knobs (NVRTC -D; gpuwhy.bench.compute passes them, part of the cubin cache key):
// WG_PASSES: passes over the 4 K slices per commit group (more wgmmas per group).
// WG_INFLIGHT: wgmma.wait_group depth inside the loop; -1 = no commit/wait inside
//   the loop at all (one group for the whole loop, waited for at the end).
// WG_PRECISIONS: bit mask of the precisions to build (1 bf16, 2 fp16, 4 tf32,
//   8 fp8, 16 int8), to keep exploratory builds short.
#ifndef WG_PASSES
#define WG_PASSES 1
#endif
#ifndef WG_INFLIGHT
#define WG_INFLIGHT 1
#endif
#ifndef WG_PRECISIONS
#define WG_PRECISIONS 31
#endif

__device__ __forceinline__ unsigned long long wg_desc(unsigned saddr)
{
    return (unsigned long long)((saddr & 0x3FFFFu) >> 4)
         | ((unsigned long long)(16u >> 4) << 16)
         | ((unsigned long long)(1024u >> 4) << 32)
         | (1ull << 62);
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void reg_fence(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void reg_fence(int& r) { asm volatile("" : "+r"(r)::"memory"); }
__device__ __forceinline__ void reg_fence(unsigned& r) { asm volatile("" : "+r"(r)::"memory"); }

// Copy the pre-swizzled tiles into 1024-byte-aligned shared memory and make
// them visible to the tensor cores (async proxy). Returns the tiles' address.
__device__ __forceinline__ unsigned wg_load_tiles(unsigned char* smem_raw, const uint4* __restrict__ tiles)
{
    const unsigned raw = (unsigned)__cvta_generic_to_shared(smem_raw);
    const unsigned base = (raw + 1023u) & ~1023u;
    uint4* dst = (uint4*)(smem_raw + (base - raw));
    for (unsigned i = threadIdx.x; i < WG_TILES_BYTES / 16u; i += blockDim.x) dst[i] = tiles[i];
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    return base;
}

// Accumulator operand lists of the inline PTX: WG_D64_STR / WG_D128_STR are the
// "%0, %1, ..." texts for 64 / 128 registers, WG_D64(C, d) / WG_D128(C, d) the
// matching operands d[0], d[1], ... with constraint C ("+f" float, "+r" int).
#define WG_D64_STR \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_D128_STR WG_D64_STR ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WG_D8(C, d, i) \
    C(d[i]), C(d[i + 1]), C(d[i + 2]), C(d[i + 3]), C(d[i + 4]), C(d[i + 5]), C(d[i + 6]), C(d[i + 7])
#define WG_D64(C, d) \
    WG_D8(C, d, 0), WG_D8(C, d, 8), WG_D8(C, d, 16), WG_D8(C, d, 24), \
    WG_D8(C, d, 32), WG_D8(C, d, 40), WG_D8(C, d, 48), WG_D8(C, d, 56)
#define WG_D128(C, d) \
    WG_D64(C, d), WG_D8(C, d, 64), WG_D8(C, d, 72), WG_D8(C, d, 80), WG_D8(C, d, 88), \
    WG_D8(C, d, 96), WG_D8(C, d, 104), WG_D8(C, d, 112), WG_D8(C, d, 120)

// One wgmma.mma_async on accumulator d (R = 64 or 128 registers, constraint C):
//   OP   the instruction, e.g. "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16";
//   AB   the A and B operands' text: "%R, %R+1" (two descriptors) or
//        "{%R, ..., %R+3}, %R+4" (A in four registers, B descriptor);
//   PRED the scale-d operand's number (always 1: D = A.B + D), tested into p;
//   TAIL the immediates after p (scale-a, scale-b, then transpose flags where
//        the type has them), with a leading ", "; empty for int8;
//   ...  the A/B input operands.
#define WG_MMA(R, C, AB, PRED, OP, TAIL, ...) \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n" \
        OP " {" WG_D##R##_STR "}, " AB ", p" TAIL ";\n}\n" \
        : WG_D##R(C, d) \
        : __VA_ARGS__, "r"(1))

// One precision: struct wg_<P> with the accumulator type T and four mma()
// overloads, one per (A in smem: two descriptors | A in registers) x
// (d[128]: N = 256 | d[64]: N = 128). OP256/OP128 are the instructions,
// TAIL_SS/TAIL_RS their immediates (A in registers has no transpose-A flag).
#define WG_PRECISION(P, T, C, OP256, OP128, TAIL_SS, TAIL_RS) \
    struct wg_##P { \
        typedef T acc; \
        static __device__ __forceinline__ void mma(T (&d)[128], unsigned long long da, unsigned long long db) \
        { \
            WG_MMA(128, C, "%128, %129", "%130", OP256, TAIL_SS, "l"(da), "l"(db)); \
        } \
        static __device__ __forceinline__ void mma(T (&d)[128], const unsigned (&a)[4], unsigned long long db) \
        { \
            WG_MMA(128, C, "{%128, %129, %130, %131}, %132", "%133", OP256, TAIL_RS, \
                   "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)); \
        } \
        static __device__ __forceinline__ void mma(T (&d)[64], unsigned long long da, unsigned long long db) \
        { \
            WG_MMA(64, C, "%64, %65", "%66", OP128, TAIL_SS, "l"(da), "l"(db)); \
        } \
        static __device__ __forceinline__ void mma(T (&d)[64], const unsigned (&a)[4], unsigned long long db) \
        { \
            WG_MMA(64, C, "{%64, %65, %66, %67}, %68", "%69", OP128, TAIL_RS, \
                   "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)); \
        } \
    };

WG_PRECISION(bf16, float, "+f",
             "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
             "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", ", 1, 1, 0, 0", ", 1, 1, 0")
WG_PRECISION(fp16, float, "+f",
             "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
             "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", ", 1, 1, 0, 0", ", 1, 1, 0")
WG_PRECISION(tf32, float, "+f",
             "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32",
             "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", ", 1, 1", ", 1, 1")
WG_PRECISION(fp8, float, "+f",
             "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3",
             "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", ", 1, 1", ", 1, 1")
WG_PRECISION(int8, int, "+r",
             "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8",
             "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8", "", "")

// The body of every kernel. P: the precision (wg_bf16, ...); NACC: independent
// accumulators of 128 / NACC registers each (1: N = 256, 2: N = 128); RS: A from
// registers (loaded once from a_frag), else A from shared memory. smem_raw is
// the kernel's own shared array (WG_TILES_BYTES + 1024 bytes).
template <class P, int NACC, bool RS>
__device__ __forceinline__ void wg_run(unsigned char* smem_raw, const uint4* __restrict__ tiles,
                                       const unsigned* __restrict__ a_frag, typename P::acc* __restrict__ out, int iters)
{
    typedef typename P::acc T;
    constexpr int R = 128 / NACC;  // registers per accumulator (N / 2)
    const unsigned base = wg_load_tiles(smem_raw, tiles);
    const unsigned wg = threadIdx.x >> 7, t = threadIdx.x & 127u;
    const unsigned long long da = wg_desc(base), db = wg_desc(base + WG_TILE_A_BYTES);
    unsigned a[WG_KSTEPS][4];
    if constexpr (RS) {
#pragma unroll
        for (int k = 0; k < WG_KSTEPS; ++k)
#pragma unroll
            for (int r = 0; r < 4; ++r) { a[k][r] = a_frag[(t * WG_KSTEPS + k) * 4u + r]; reg_fence(a[k][r]); }
    }
    T d[NACC][R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int j = 0; j < NACC; ++j) { d[j][r] = (T)0; reg_fence(d[j][r]); }
    }
    wg_fence();
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int p = 0; p < WG_PASSES; ++p) {
#pragma unroll
            for (int k = 0; k < WG_KSTEPS; ++k) {
#pragma unroll
                for (int j = 0; j < NACC; ++j) {
                    if constexpr (RS) P::mma(d[j], a[k], db + 2ull * k);
                    else P::mma(d[j], da + 2ull * k, db + 2ull * k);
                }
            }
        }
#if WG_INFLIGHT >= 0
        wg_commit();
        wg_wait<WG_INFLIGHT>();
#endif
    }
#if WG_INFLIGHT < 0
    wg_commit();
#endif
    wg_wait<0>();
    const unsigned slot = blockIdx.x * (blockDim.x >> 7) + wg;
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int j = 0; j < NACC; ++j) reg_fence(d[j][r]);
#pragma unroll
        for (int j = 0; j < NACC; ++j) out[(slot * 128u + j * R + r) * 128u + t] = d[j][r];
    }
}

// One kernel: wgmma_<P>_<SRC>_<SHAPE>(tiles, a_frag, out, iters); out is float*
// (int* for int8). The shared tile buffer is declared here, in the kernel.
#define WG_KERNEL(P, SRC, SHAPE, NACC, RS, MAX_THREADS) \
    extern "C" __global__ void __launch_bounds__(MAX_THREADS, 1) \
    wgmma_##P##_##SRC##_##SHAPE(const uint4* __restrict__ tiles, const unsigned* __restrict__ a_frag, \
                                wg_##P::acc* __restrict__ out, int iters) \
    { \
        __shared__ __align__(1024) unsigned char smem_raw[WG_TILES_BYTES + 1024]; \
        wg_run<wg_##P, NACC, RS>(smem_raw, tiles, a_frag, out, iters); \
    }

// One precision's four kernels.
#define WG_KERNELS(P) \
    WG_KERNEL(P, ss, n256, 1, false, WG_MAX_THREADS_SS) \
    WG_KERNEL(P, ss, n128x2, 2, false, WG_MAX_THREADS_SS) \
    WG_KERNEL(P, rs, n256, 1, true, WG_MAX_THREADS_RS) \
    WG_KERNEL(P, rs, n128x2, 2, true, WG_MAX_THREADS_RS)

#if WG_PRECISIONS & 1  // bf16
WG_KERNELS(bf16)
#endif
#if WG_PRECISIONS & 2  // fp16
WG_KERNELS(fp16)
#endif
#if WG_PRECISIONS & 4  // tf32
WG_KERNELS(tf32)
#endif
#if WG_PRECISIONS & 8  // fp8
WG_KERNELS(fp8)
#endif
#if WG_PRECISIONS & 16  // int8
WG_KERNELS(int8)
#endif

#else  // not sm_90a

// Built for any other target, the file holds only this stub, so a pass that
// compiles every bundled source for one architecture still gets a valid cubin.
extern "C" __global__ void wgmma_needs_sm_90a() {}

#endif  // sm_90a
