// rope.cu — rotary position embedding, NeoX (split-half) layout.
//
// Entries
//   rope_neox_fwd         (x,            y, rows, heads, head_dim, pos, theta)
//   rope_neox_fwd_batched (x, positions, y, rows, heads, head_dim, theta)
//   rope_neox_bwd_batched (dy, positions, dx, rows, heads, head_dim, theta)
//
// x, y, dy, dx are [rows][heads*head_dim]; positions is u32[rows]. head_dim
// is even, half = head_dim/2. Within every head the pairs are (i, i+half),
// i in [0, half), rotated by angle = p · theta^(−2i/head_dim), p the row's
// position (the pos parameter for rope_neox_fwd, positions[r] otherwise):
//   forward  R(angle):  y_i = x_i cos − x_{i+half} sin,  y_{i+half} = x_i sin + x_{i+half} cos
//   backward R(angle)ᵀ = R(−angle):
//                       dx_i = dy_i cos + dy_{i+half} sin,  dx_{i+half} = dy_{i+half} cos − dy_i sin
//
// Launch geometry: grid (ceil(rows*half/256), 1, 1), block (256, 1, 1), no
// shared memory. One thread per (row, i): q = global thread index,
// row = q / half, i = q % half. The angle depends on (position, i) only, so
// the thread computes sin/cos once and rotates pair i of every head of its
// row, heads in increasing order (consecutive threads touch consecutive i:
// coalesced). The Go launcher checks rows*heads*head_dim < 2^31.
//
// float32 op sequence per (row, i) (documented for the tolerance):
//   e     = (float)(2i) / (float)head_dim        exact conversions, div.rn
//   L     = log2f(theta)                         CUDA log2f (max 1 ulp)
//   freq  = exp2f(-(e * L))                      mul.rn, exact negation, CUDA exp2f (max 2 ulp)
//   angle = (float)p * freq                      cvt.rn (exact for p < 2^24), mul.rn
//   sincosf(angle, &s, &c)                       accurate sincosf (sinf/cosf max 2 ulp,
//                                                Payne–Hanek reduction for large angles:
//                                                uses __cudart_i2opi_f); never __sinf
//   forward:  y_i = x_i*c − x_j*s, y_j = x_i*s + x_j*c   (two mul.rn and one add/sub each)
//   backward: dx_i = dy_i*c + dy_j*s, dx_j = dy_j*c − dy_i*s
// No reductions. Outputs: y (dx), each element written exactly once, by the
// thread of its (row, i).
#include "common.cuh"

// rope_row rotates pair i of every head of one row at position posf.
__device__ __forceinline__ void rope_row(const float* __restrict__ in,
                                         float* __restrict__ out, unsigned row,
                                         unsigned i, unsigned heads,
                                         unsigned head_dim, float posf,
                                         float theta, bool inverse) {
  const unsigned half = head_dim >> 1;
  const float e = (float)(2u * i) / (float)head_dim;
  const float freq = exp2f(-(e * log2f(theta)));
  const float angle = posf * freq;
  float s, c;
  sincosf(angle, &s, &c);
  size_t base = (size_t)row * heads * head_dim + i;
  for (unsigned h = 0; h < heads; ++h, base += head_dim) {
    const float a = in[base];
    const float b = in[base + half];
    if (!inverse) {
      out[base] = a * c - b * s;
      out[base + half] = a * s + b * c;
    } else {
      out[base] = a * c + b * s;
      out[base + half] = b * c - a * s;
    }
  }
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rope_neox_fwd(const float* __restrict__ x, float* __restrict__ y, unsigned rows,
              unsigned heads, unsigned head_dim, unsigned pos, float theta) {
  const unsigned half = head_dim >> 1;
  const unsigned q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= rows * half) return;
  rope_row(x, y, q / half, q % half, heads, head_dim, (float)pos, theta, false);
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rope_neox_fwd_batched(const float* __restrict__ x,
                      const unsigned* __restrict__ positions,
                      float* __restrict__ y, unsigned rows, unsigned heads,
                      unsigned head_dim, float theta) {
  const unsigned half = head_dim >> 1;
  const unsigned q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= rows * half) return;
  const unsigned row = q / half;
  rope_row(x, y, row, q % half, heads, head_dim, (float)positions[row], theta, false);
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rope_neox_bwd_batched(const float* __restrict__ dy,
                      const unsigned* __restrict__ positions,
                      float* __restrict__ dx, unsigned rows, unsigned heads,
                      unsigned head_dim, float theta) {
  const unsigned half = head_dim >> 1;
  const unsigned q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= rows * half) return;
  const unsigned row = q / half;
  rope_row(dy, dx, row, q % half, heads, head_dim, (float)positions[row], theta, true);
}
