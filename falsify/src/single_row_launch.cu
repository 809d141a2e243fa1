// single_row_launch.cu — named mutant "single-row-launch" (upstream
// aprender-train 0.60.0, FALSIFY-CUDA-FUSED-RMSNORM-DEADLOCK-001 item 2).
//
// Entry (same signature as kernels/src/fused_residual_rmsnorm.cu)
//   fused_residual_rmsnorm (residual, x, gamma, residual_out, y, rows, hidden, eps)
//
// The old single-row fused residual + RMSNorm kernel: it has no row
// indexing (it was written for one row) but is launched with one block per
// row of a batch. Every block recomputes row 0; rows 1.. are never written.
// Scalar path only, like the upstream kernel.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
fused_residual_rmsnorm(const float* residual, const float* __restrict__ x,
                       const float* __restrict__ gamma, float* residual_out,
                       float* __restrict__ y, unsigned rows, unsigned hidden,
                       float eps) {
  __shared__ float red[MAX_WARPS];
  (void)rows;  // THE BUG: the row comes from nowhere; every block does row 0
  const float* rr = residual;
  const float* xr = x;
  float* sr = residual_out;
  float* yr = y;
  float acc = 0.0f;
  for (unsigned i = threadIdx.x; i < hidden; i += blockDim.x) {
    const float s = rr[i] + xr[i];
    sr[i] = s;
    acc = fmaf(s, s, acc);
  }
  const float ss = block_sum(acc, red);
  const float inv = 1.0f / sqrtf(ss / (float)hidden + eps);
  for (unsigned i = threadIdx.x; i < hidden; i += blockDim.x) {
    yr[i] = (sr[i] * inv) * gamma[i];
  }
}
