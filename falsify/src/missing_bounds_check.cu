// missing_bounds_check.cu — named mutant "missing-bounds-check".
//
// Entry (same signature as kernels/src/rope.cu)
//   rope_neox_fwd_batched (x, positions, y, rows, heads, head_dim, theta)
//
// The batched RoPE forward without its guard `if (q >= rows*half) return;`:
// the grid is ceil(rows*half/256) blocks of 256 threads, so unless rows*half
// is a multiple of 256 the threads of the last block past the end read
// positions[] and x past the tensor and write y past it.
#include "../../kernels/src/common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rope_neox_fwd_batched(const float* __restrict__ x,
                      const unsigned* __restrict__ positions,
                      float* __restrict__ y, unsigned rows, unsigned heads,
                      unsigned head_dim, float theta) {
  const unsigned half = head_dim >> 1;
  const unsigned q = blockIdx.x * blockDim.x + threadIdx.x;
  (void)rows;  // THE BUG: no bounds check on q
  const unsigned row = q / half, i = q % half;
  const float e = (float)(2u * i) / (float)head_dim;
  const float freq = exp2f(-(e * log2f(theta)));
  const float angle = (float)positions[row] * freq;
  float s, c;
  sincosf(angle, &s, &c);
  size_t base = (size_t)row * heads * head_dim + i;
  for (unsigned h = 0; h < heads; ++h, base += head_dim) {
    const float a = x[base];
    const float b = x[base + half];
    y[base] = a * c - b * s;
    y[base + half] = a * s + b * c;
  }
}
