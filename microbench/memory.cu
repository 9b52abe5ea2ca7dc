// gpuwhy memory-bandwidth kernels (compiled at run time by NVRTC to a cubin for
// the device's exact architecture; see src/gpuwhy/engine/compile.py).
//
// Four operations, each in two variants, for float (f32) and double (f64):
//
//   read    a reduction whose result is used: each block writes one partial
//           sum to partial[blockIdx.x]; the host adds the partials.
//   write   a[i] = v + (T)(i & 1023)      (index-dependent, so a wrong index shows)
//   copy    b[i] = a[i]
//   vecadd  c[i] = a[i] + b[i]
//
//   *_naive  one element per thread, 32-bit index, grid = ceil(n / blockDim.x):
//            the course's vecadd as written there, and the same shape for the
//            other three. n must be < 2^31.
//   *_vec16  16 bytes per load/store (float4 or double2), all of a thread's
//            loads of a chunk issued before the first use, chunked so any grid
//            size is correct (see below). Pointers must be 16-byte aligned
//            (every buffer gpuwhy allocates is 256-byte aligned). Any n works:
//            the last n % (16 / sizeof(T)) elements are done by the first
//            threads with scalar accesses.
//
// Kernel names are extern "C": <op>_<variant>_<f32|f64>, e.g. read_vec16_f32.
// fill_random_<f32|f64> fills a buffer on the device with non-zero values in
// [0.5, 1.5) from a counter-based hash (for timing; checks use host data).
//
// Tuning macros: 16-byte vectors per thread per chunk GPUWHY_UNROLL_READ (read),
// GPUWHY_UNROLL_WRITE (write), GPUWHY_UNROLL (copy and vecadd); GPUWHY_LOAD (0
// plain, which NVRTC emits as ld.global.nc for these const __restrict__
// pointers; 1 __ldg; 2 evict-first __ldcs); GPUWHY_STORE (0 plain, 1
// evict-first __stcs). Defaults from measurements on an H200 (fp32, 256M
// elements, one block per chunk; benchmarks/bench_memory_peers.py --tune,
// 2026-11-29): read 4 vectors per thread (at 128 threads per block: 1 vector
// 3.3 TB/s, 2-8 vectors 4.5 TB/s); copy and vecadd 1 vector per thread (copy
// 4.28 TB/s against 4.09-4.24 with 2-8; vecadd 4.37 against 4.25-4.36); write
// 4 (4.59 TB/s; other values not measured); __ldcs and __stcs never helped.
// With one vector per thread the loads in flight come from occupancy: up to
// 2048 resident threads x 16 bytes per SM.

#ifndef GPUWHY_UNROLL_READ
#define GPUWHY_UNROLL_READ 4
#endif
#ifndef GPUWHY_UNROLL_WRITE
#define GPUWHY_UNROLL_WRITE 4
#endif
#ifndef GPUWHY_UNROLL
#define GPUWHY_UNROLL 1
#endif
#ifndef GPUWHY_LOAD
#define GPUWHY_LOAD 0
#endif
#ifndef GPUWHY_STORE
#define GPUWHY_STORE 0
#endif
#define GPUWHY_MAX_BLOCK 1024

typedef unsigned long long u64;

template <typename T> struct Vec16;
template <> struct Vec16<float>  { typedef float4 type;  enum { width = 4 }; };
template <> struct Vec16<double> { typedef double2 type; enum { width = 2 }; };

__device__ __forceinline__ float vsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ double vsum(double2 v) { return v.x + v.y; }

template <typename V>
__device__ __forceinline__ V load16(const V* p) {
#if GPUWHY_LOAD == 1
    return __ldg(p);
#elif GPUWHY_LOAD == 2
    return __ldcs(p);
#else
    return *p;
#endif
}

template <typename V>
__device__ __forceinline__ void store16(V* p, V v) {
#if GPUWHY_STORE == 1
    __stcs(p, v);
#else
    *p = v;
#endif
}

// Sum over the block; the result is valid in thread 0.
template <typename T>
__device__ __forceinline__ T block_sum(T v) {
    __shared__ T warp_sums[GPUWHY_MAX_BLOCK / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    T s = T(0);
    if (warp == 0) {
        const int nwarps = (blockDim.x + 31) >> 5;
        s = lane < nwarps ? warp_sums[lane] : T(0);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    }
    return s;
}

// ---------------------------------------------------------------- naive ----

template <typename T>
__device__ __forceinline__ void read_naive(const T* __restrict__ a, int n, T* __restrict__ partial) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = i < n ? a[i] : T(0);
    T s = block_sum(v);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <typename T>
__device__ __forceinline__ void write_naive(T* __restrict__ a, int n, T v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v + (T)(i & 1023);
}

template <typename T>
__device__ __forceinline__ void copy_naive(const T* __restrict__ a, T* __restrict__ b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}

template <typename T>
__device__ __forceinline__ void vecadd_naive(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// ---------------------------------------------------------------- vec16 ----
//
// Work is cut into chunks of blockDim.x * U 16-byte vectors (U: the op's
// GPUWHY_UNROLL* macro); in a chunk, thread t handles vectors t,
// t + blockDim.x, ... (each warp access is 512 contiguous bytes) and issues all
// U loads before the first use. Block b takes chunks b, b + gridDim.x, ...: the host may launch one
// block per chunk (every block does one chunk and exits) or a persistent grid
// of a few waves (each block loops over many chunks); both are correct for any
// grid size, and the bench times both and keeps the faster.

#define GPUWHY_CHUNK_LOOP(BODY_FULL, BODY_ONE)                                   \
    const u64 chunk = (u64)blockDim.x * U;                                         \
    for (u64 c = blockIdx.x; c * chunk < nv; c += gridDim.x) {                     \
        const u64 base = c * chunk + threadIdx.x;                                  \
        if (base + (u64)(U - 1) * blockDim.x < nv) {                               \
            BODY_FULL                                                              \
        } else {                                                                   \
            for (int u = 0; u < U; ++u) {                                          \
                const u64 i = base + (u64)u * blockDim.x;                          \
                if (i < nv) { BODY_ONE }                                           \
            }                                                                      \
        }                                                                          \
    }

template <typename T>
__device__ __forceinline__ void read_vec16(const T* __restrict__ a, u64 n, T* __restrict__ partial) {
    typedef typename Vec16<T>::type V;
    const int W = Vec16<T>::width;
    const int U = GPUWHY_UNROLL_READ;
    const V* __restrict__ av = reinterpret_cast<const V*>(a);
    const u64 nv = n / W;
    T acc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = T(0);
    GPUWHY_CHUNK_LOOP(
        V v[U];
        _Pragma("unroll") for (int u = 0; u < U; ++u) v[u] = load16(av + base + (u64)u * blockDim.x);
        _Pragma("unroll") for (int u = 0; u < U; ++u) acc[u] += vsum(v[u]);,
        acc[0] += vsum(load16(av + i));)
    const u64 t = nv * W + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) acc[0] += a[t];
    T s = T(0);
#pragma unroll
    for (int u = 0; u < U; ++u) s += acc[u];
    s = block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__device__ __forceinline__ float4 write_value(float v, u64 e) {
    const unsigned k = (unsigned)(e & 1023);
    return make_float4(v + (float)k, v + (float)(k + 1), v + (float)(k + 2), v + (float)(k + 3));
}
__device__ __forceinline__ double2 write_value(double v, u64 e) {
    const unsigned k = (unsigned)(e & 1023);
    return make_double2(v + (double)k, v + (double)(k + 1));
}

template <typename T>
__device__ __forceinline__ void write_vec16(T* __restrict__ a, u64 n, T v) {
    typedef typename Vec16<T>::type V;
    const int W = Vec16<T>::width;
    const int U = GPUWHY_UNROLL_WRITE;
    V* __restrict__ av = reinterpret_cast<V*>(a);
    const u64 nv = n / W;
    GPUWHY_CHUNK_LOOP(
        _Pragma("unroll") for (int u = 0; u < U; ++u) {
            const u64 i = base + (u64)u * blockDim.x;
            store16(av + i, write_value(v, i * W));
        },
        store16(av + i, write_value(v, i * W));)
    const u64 t = nv * W + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) a[t] = v + (T)(unsigned)(t & 1023);
}

template <typename T>
__device__ __forceinline__ void copy_vec16(const T* __restrict__ a, T* __restrict__ b, u64 n) {
    typedef typename Vec16<T>::type V;
    const int W = Vec16<T>::width;
    const int U = GPUWHY_UNROLL;
    const V* __restrict__ av = reinterpret_cast<const V*>(a);
    V* __restrict__ bv = reinterpret_cast<V*>(b);
    const u64 nv = n / W;
    GPUWHY_CHUNK_LOOP(
        V v[U];
        _Pragma("unroll") for (int u = 0; u < U; ++u) v[u] = load16(av + base + (u64)u * blockDim.x);
        _Pragma("unroll") for (int u = 0; u < U; ++u) store16(bv + base + (u64)u * blockDim.x, v[u]);,
        store16(bv + i, load16(av + i));)
    const u64 t = nv * W + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) b[t] = a[t];
}

__device__ __forceinline__ float4 vadd(float4 x, float4 y) { return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
__device__ __forceinline__ double2 vadd(double2 x, double2 y) { return make_double2(x.x + y.x, x.y + y.y); }

template <typename T>
__device__ __forceinline__ void vecadd_vec16(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, u64 n) {
    typedef typename Vec16<T>::type V;
    const int W = Vec16<T>::width;
    const int U = GPUWHY_UNROLL;
    const V* __restrict__ av = reinterpret_cast<const V*>(a);
    const V* __restrict__ bv = reinterpret_cast<const V*>(b);
    V* __restrict__ cv = reinterpret_cast<V*>(c);
    const u64 nv = n / W;
    GPUWHY_CHUNK_LOOP(
        V x[U]; V y[U];
        _Pragma("unroll") for (int u = 0; u < U; ++u) x[u] = load16(av + base + (u64)u * blockDim.x);
        _Pragma("unroll") for (int u = 0; u < U; ++u) y[u] = load16(bv + base + (u64)u * blockDim.x);
        _Pragma("unroll") for (int u = 0; u < U; ++u) store16(cv + base + (u64)u * blockDim.x, vadd(x[u], y[u]));,
        store16(cv + i, vadd(load16(av + i), load16(bv + i)));)
    const u64 t = nv * W + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) c[t] = a[t] + b[t];
}

// ----------------------------------------------------------------- fill ----

__device__ __forceinline__ unsigned hash32(u64 x) {
    // splitmix64 finaliser, upper 32 bits
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (unsigned)(x >> 32);
}

template <typename T>
__device__ __forceinline__ void fill_random(T* __restrict__ a, u64 n, u64 seed) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        a[i] = T(0.5) + (T)(hash32(i ^ (seed << 40)) >> 8) * (T)(1.0 / 16777216.0);
}

// ---------------------------------------------------------- entry points ----

#define GPUWHY_MEMORY_KERNELS(T, SFX)                                                                          \
    extern "C" __global__ void read_naive_##SFX(const T* __restrict__ a, int n, T* __restrict__ partial) {    \
        read_naive<T>(a, n, partial);                                                                          \
    }                                                                                                          \
    extern "C" __global__ void write_naive_##SFX(T* __restrict__ a, int n, T v) { write_naive<T>(a, n, v); }  \
    extern "C" __global__ void copy_naive_##SFX(const T* __restrict__ a, T* __restrict__ b, int n) {          \
        copy_naive<T>(a, b, n);                                                                                \
    }                                                                                                          \
    extern "C" __global__ void vecadd_naive_##SFX(const T* __restrict__ a, const T* __restrict__ b,           \
                                                  T* __restrict__ c, int n) {                                  \
        vecadd_naive<T>(a, b, c, n);                                                                           \
    }                                                                                                          \
    extern "C" __global__ void read_vec16_##SFX(const T* __restrict__ a, u64 n, T* __restrict__ partial) {    \
        read_vec16<T>(a, n, partial);                                                                          \
    }                                                                                                          \
    extern "C" __global__ void write_vec16_##SFX(T* __restrict__ a, u64 n, T v) { write_vec16<T>(a, n, v); }  \
    extern "C" __global__ void copy_vec16_##SFX(const T* __restrict__ a, T* __restrict__ b, u64 n) {          \
        copy_vec16<T>(a, b, n);                                                                                \
    }                                                                                                          \
    extern "C" __global__ void vecadd_vec16_##SFX(const T* __restrict__ a, const T* __restrict__ b,           \
                                                  T* __restrict__ c, u64 n) {                                  \
        vecadd_vec16<T>(a, b, c, n);                                                                           \
    }                                                                                                          \
    extern "C" __global__ void fill_random_##SFX(T* __restrict__ a, u64 n, u64 seed) { fill_random<T>(a, n, seed); }

GPUWHY_MEMORY_KERNELS(float, f32)
GPUWHY_MEMORY_KERNELS(double, f64)
