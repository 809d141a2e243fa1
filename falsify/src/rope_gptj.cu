// rope_gptj.cu — named mutant "rope-gptj" (upstream aprender-train 0.60.0,
// FALSIFY-CUDA-NF4-TRAIN-LOSS-PARITY-001: a GPT-J kernel where the model
// needs NeoX).
//
// Entry (same signature as kernels/src/rope.cu)
//   rope_neox_fwd_batched (x, positions, y, rows, heads, head_dim, theta)
//
// Rotates the adjacent pairs (2i, 2i+1) — the GPT-J / interleaved layout —
// instead of NeoX's split halves (i, i+head_dim/2). Same angles
// (pos·theta^(−2i/head_dim)), same op sequence, same geometry.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rope_neox_fwd_batched(const float* __restrict__ x,
                      const unsigned* __restrict__ positions,
                      float* __restrict__ y, unsigned rows, unsigned heads,
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
  size_t base = (size_t)row * heads * head_dim + 2u * i;  // THE BUG: pair (2i, 2i+1)
  for (unsigned h = 0; h < heads; ++h, base += head_dim) {
    const float a = x[base];
    const float b = x[base + 1];
    y[base] = a * c - b * s;
    y[base + 1] = a * s + b * c;
  }
}
