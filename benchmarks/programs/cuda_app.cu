// A plain CUDA program (no Python) for `gpuwhy run -- ./cuda_app` (ncu alone, issue 18):
// a float4 vector add over 2^26 floats (memory-bound), a shared-memory tiled SGEMM at
// 2048^3 (compute side), and a one-block kernel (launch-sized). Results are checked on the
// host; exit 0 only when every check passes.
//   nvcc -O3 -arch=sm_90 -o /tmp/cuda_app benchmarks/programs/cuda_app.cu && /tmp/cuda_app
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

__global__ void vecadd4(const float4* a, const float4* b, float4* c, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

#define T 32
__global__ void sgemm_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[T][T], Bs[T][T];
  int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += T) {
    As[threadIdx.y][threadIdx.x] = A[r * n + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + c];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[r * n + c] = acc;
}

__global__ void scale_small(float* x, int n, float s) {
  int i = threadIdx.x;
  if (i < n) x[i] *= s;
}

int main() {
  const size_t n = size_t(1) << 26, n4 = n / 4;
  const int m = 2048;
  std::vector<float> ha(n), hb(n), hA(size_t(m) * m), hB(size_t(m) * m);
  srand(1);
  for (size_t i = 0; i < n; ++i) { ha[i] = rand() / (float)RAND_MAX; hb[i] = rand() / (float)RAND_MAX; }
  for (size_t i = 0; i < size_t(m) * m; ++i) { hA[i] = rand() / (float)RAND_MAX - 0.5f; hB[i] = rand() / (float)RAND_MAX - 0.5f; }
  float *a, *b, *c, *A, *B, *C, *s;
  CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMalloc(&c, n * 4));
  CK(cudaMalloc(&A, size_t(m) * m * 4)); CK(cudaMalloc(&B, size_t(m) * m * 4)); CK(cudaMalloc(&C, size_t(m) * m * 4));
  CK(cudaMalloc(&s, 256 * 4));
  CK(cudaMemcpy(a, ha.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(A, hA.data(), size_t(m) * m * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hB.data(), size_t(m) * m * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(s, 0, 256 * 4));
  for (int it = 0; it < 20; ++it) {
    vecadd4<<<132 * 16, 256>>>((const float4*)a, (const float4*)b, (float4*)c, n4);
    if (it % 4 == 0) sgemm_tiled<<<dim3(m / T, m / T), dim3(T, T)>>>(A, B, C, m);
    for (int j = 0; j < 3; ++j) scale_small<<<1, 256>>>(s, 256, 1.5f);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> hc(n), hC(size_t(m) * m);
  CK(cudaMemcpy(hc.data(), c, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hC.data(), C, size_t(m) * m * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i += 4099)
    if (fabsf(hc[i] - (ha[i] + hb[i])) > 1e-6f) { fprintf(stderr, "vecadd wrong at %zu\n", i); return 2; }
  for (int t = 0; t < 16; ++t) {
    int r = (t * 131) % m, col = (t * 977) % m;
    double ref = 0;
    for (int k = 0; k < m; ++k) ref += (double)hA[size_t(r) * m + k] * hB[size_t(k) * m + col];
    if (fabs(hC[size_t(r) * m + col] - ref) > 1e-3 * (1 + fabs(ref))) { fprintf(stderr, "sgemm wrong at %d,%d\n", r, col); return 3; }
  }
  printf("cuda_app ok: 20 vecadd over 2^26 floats, 5 sgemm %d^3, 60 small launches\n", m);
  return 0;
}
