// perhead_row_rms.cu — named mutant "perhead-row-rms".
//
// Entry (same signature as kernels/src/per_head_rmsnorm.cu)
//   per_head_rmsnorm (x, gamma, y, rows, heads, head_dim, eps)
//
// QK-norm that normalises every head by the rms of the WHOLE row (all
// heads·head_dim values) instead of its own head's rms — full-row RMSNorm
// with the shared per-head γ. Identical to the real thing when heads = 1;
// otherwise a head's output depends on the other heads' inputs.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
per_head_rmsnorm(const float* __restrict__ x, const float* __restrict__ gamma,
                 float* __restrict__ y, unsigned rows, unsigned heads,
                 unsigned head_dim, float eps) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned p = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (p >= rows * heads) return;
  const unsigned row = p / heads;
  const unsigned width = heads * head_dim;
  const float* xrow = x + (size_t)row * width;  // THE BUG: the whole row
  float acc = 0.0f;
  for (unsigned i = lane; i < width; i += 32) {
    const float v = xrow[i];
    acc = fmaf(v, v, acc);
  }
  const float ss = warp_sum(acc);
  const float inv = 1.0f / sqrtf(ss / (float)width + eps);
  const size_t base = (size_t)p * head_dim;
  for (unsigned i = lane; i < head_dim; i += 32) y[base + i] = (x[base + i] * inv) * gamma[i];
}
