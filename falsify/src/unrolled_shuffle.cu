// unrolled_shuffle.cu — named mutant "unrolled-shuffle" (upstream
// aprender-gpu 0.32.0 single-warp backward: its shuffle loop was unrolled
// against the hidden_dim the kernel was built for, while the bounds checks
// read the runtime parameter).
//
// Entry (same signature as kernels/src/rmsnorm_bwd.cu)
//   rmsnorm_bwd_warp32 (x, gamma, rms, dy, dx, partial, rows, hidden)
//
// Built for BUILT_HIDDEN = 16: the butterfly keeps only the offsets k that
// are < 16 (8, 4, 2, 1), so lanes 16..31 never meet lanes 0..15. Correct for
// every hidden <= 16 (the module it was built for), wrong for 17..32.
#include "../../kernels/src/common.cuh"

#define BUILT_HIDDEN 16

__device__ __forceinline__ float warp_sum_unrolled(float v) {
#pragma unroll
  for (int k = 16; k >= 1; k >>= 1) {
    if (k < BUILT_HIDDEN) v = v + __shfl_xor_sync(FULL_MASK, v, k);  // THE BUG
  }
  return v;
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_bwd_warp32(const float* __restrict__ x, const float* __restrict__ gamma,
                   const float* __restrict__ rms, const float* __restrict__ dy,
                   float* __restrict__ dx, float* __restrict__ partial,
                   unsigned rows, unsigned hidden) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  const bool active = lane < hidden;
  const size_t i = (size_t)row * hidden + lane;
  const float inv = 1.0f / rms[row];
  const float xv = active ? x[i] : 0.0f;
  const float dv = active ? dy[i] : 0.0f;
  const float gm = active ? gamma[lane] : 0.0f;
  const float xhat = xv * inv;
  const float g = gm * dv;
  const float dot = warp_sum_unrolled(fmaf(g, xhat, 0.0f));
  const float m = dot / (float)hidden;
  if (active) {
    dx[i] = (g - xhat * m) * inv;
    partial[i] = dv * xhat;
  }
}
