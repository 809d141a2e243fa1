// rope_bwd_forward_rotation.cu — named mutant "rope-bwd-forward-rotation".
//
// Entry (same signature as kernels/src/rope.cu)
//   rope_neox_bwd_batched (dy, positions, dx, rows, heads, head_dim, theta)
//
// The backward applies the forward rotation R(angle) to dy instead of its
// transpose R(angle)ᵀ = R(−angle): the sign of sin is wrong in both outputs.
// Forward and backward then agree with each other's formula but the
// backward is not the adjoint of the forward.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rope_neox_bwd_batched(const float* __restrict__ dy,
                      const unsigned* __restrict__ positions,
                      float* __restrict__ dx, unsigned rows, unsigned heads,
                      unsigned head_dim, float theta) {
  const unsigned half = head_dim >> 1;
  const unsigned q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= rows * half) return;
  const unsigned row = q / half, i = q % half;
  const float e = (float)(2u * i) / (float)head_dim;
  const float freq = exp2f(-(e * log2f(theta)));
  const float angle = (float)positions[row] * freq;
  float s, c;
  sincosf(angle, &s, &c);
  size_t base = (size_t)row * heads * head_dim + i;
  for (unsigned h = 0; h < heads; ++h, base += head_dim) {
    const float a = dy[base];
    const float b = dy[base + half];
    dx[base] = a * c - b * s;         // THE BUG: R(angle), not R(angle)ᵀ
    dx[base + half] = a * s + b * c;
  }
}
