// partial_warp_reduce.cu — named mutant "partial-warp-reduce".
//
// Entry (same signature as kernels/src/rmsnorm_bwd.cu)
//   rmsnorm_bwd_rowwarp (x, gamma, rms, dy, dx, partial, rows, hidden)
//
// The upstream-style warp-per-row backward whose row reduction only covers
// whole warp-widths of the row: the dot product Σ γ·dy·x̂ strides over
// hidden rounded down to a multiple of 32 (rounded up to 32 when hidden < 32,
// where the loads are guarded), so the lanes holding the tail columns
// hidden % 32 never contribute. Correct exactly when hidden % 32 == 0
// (and for hidden < 32); the second pass writes every column.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_bwd_rowwarp(const float* __restrict__ x, const float* __restrict__ gamma,
                    const float* __restrict__ rms, const float* __restrict__ dy,
                    float* __restrict__ dx, float* __restrict__ partial,
                    unsigned rows, unsigned hidden) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float inv = 1.0f / rms[row];
  // THE BUG: whole warp-widths only; the tail lanes are skipped.
  const unsigned span = hidden < 32u ? hidden : (hidden & ~31u);
  float acc = 0.0f;
  for (unsigned j = lane; j < span; j += 32) {
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
    partial[base + j] = dv * xhat;
  }
}
