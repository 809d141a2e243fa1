// atomic_dgamma.cu — named mutant "atomic-dgamma" (upstream trueno-gpu 0.4.29,
// the bug FALSIFY-GPUTRAIN-006 was written against).
//
// Entry
//   rmsnorm_bwd_atomic (x, gamma, rms, dy, dx, dgamma, rows, hidden)
//
// The batched RMSNorm backward of rmsnorm_bwd_rowwarp (one warp per row, any
// hidden), except that dgamma[hidden] is accumulated directly with
// atomicAdd on float instead of per-row partials summed by colsum_f32 in a
// fixed order. dgamma must be zeroed before the launch. Each value is
// correct to within rounding, but the order of the float additions depends
// on which warp reaches the atomic first: the bits of dgamma change from
// launch to launch (upstream observed |Δ| = 1.19e-3 in a training loss).
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_bwd_atomic(const float* __restrict__ x, const float* __restrict__ gamma,
                   const float* __restrict__ rms, const float* __restrict__ dy,
                   float* __restrict__ dx, float* dgamma, unsigned rows,
                   unsigned hidden) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float inv = 1.0f / rms[row];
  float acc = 0.0f;
  for (unsigned j = lane; j < hidden; j += 32) {
    const float xhat = x[base + j] * inv;
    const float g = gamma[j] * dy[base + j];
    acc = fmaf(g, xhat, acc);
  }
  const float m = warp_sum(acc) / (float)hidden;
  for (unsigned j = lane; j < hidden; j += 32) {
    const float dv = dy[base + j];
    const float xhat = x[base + j] * inv;
    const float g = gamma[j] * dv;
    dx[base + j] = (g - xhat * m) * inv;
    atomicAdd(&dgamma[j], dv * xhat);  // THE BUG: schedule-dependent float sum
  }
}
