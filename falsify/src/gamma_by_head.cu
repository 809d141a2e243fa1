// gamma_by_head.cu — named mutant "gamma-by-head".
//
// Entry (same signature as kernels/src/per_head_rmsnorm.cu)
//   per_head_rmsnorm (x, gamma, y, rows, heads, head_dim, eps)
//
// Per-head RMSNorm that indexes gamma as if it were [heads*head_dim] (one
// weight per element of the row, as in a full-row RMSNorm) instead of the
// shared [head_dim]: head h reads gamma[h*head_dim + j]. Head 0 is right;
// every other head reads past the end of gamma. Scalar path only.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
per_head_rmsnorm(const float* __restrict__ x, const float* __restrict__ gamma,
                 float* __restrict__ y, unsigned rows, unsigned heads,
                 unsigned head_dim, float eps) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned p = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (p >= rows * heads) return;
  const size_t base = (size_t)p * head_dim;
  const float* xr = x + base;
  float* yr = y + base;
  const float* gh = gamma + (size_t)(p % heads) * head_dim;  // THE BUG
  float acc = 0.0f;
  for (unsigned i = lane; i < head_dim; i += 32) {
    const float v = xr[i];
    acc = fmaf(v, v, acc);
  }
  const float ss = warp_sum(acc);
  const float inv = 1.0f / sqrtf(ss / (float)head_dim + eps);
  for (unsigned i = lane; i < head_dim; i += 32) yr[i] = (xr[i] * inv) * gh[i];
}
