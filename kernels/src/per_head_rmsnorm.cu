// per_head_rmsnorm.cu — per-head RMSNorm (QK-norm), batched over rows.
//
// Entry
//   per_head_rmsnorm (x, gamma, y, rows, heads, head_dim, eps)
//
// x and y are [rows][heads*head_dim]; gamma is [head_dim], shared by every
// head. For every row r and head h, with v = x[r][h*head_dim : (h+1)*head_dim]:
//   rms       = sqrt(mean_j v_j^2 + eps)
//   y[r][h][j] = (v_j * (1/rms)) * gamma_j
//
// Launch geometry: grid (ceil(rows*heads/8), 1, 1), block (256, 1, 1), no
// dynamic shared memory. One warp per (row, head) pair: warp w of block b
// handles pair p = 8b + w, row p / heads, head p % heads. Warps past the last
// pair exit together (whole warps, so shuffles stay full-warp).
//
// Vector path when head_dim % 4 == 0 and x, gamma, y are 16-byte aligned
// (then every head's start is aligned too), else scalar.
//
// float32 op sequence:
//   1. lane l: acc = fmaf(v, v, acc) from 0 over its elements in increasing
//      order: scalar j = l, l+32, … (ceil(head_dim/32) terms); vector float4
//      groups l, l+32, …, components in order (4*ceil(head_dim/128) terms).
//   2. warp_sum: butterfly of depth log2(32) = 5 (no cross-warp stage).
//   3. ms = ss / (float)head_dim (div.rn); rms = sqrtf(ms + eps); inv = 1/rms
//   4. y = (v * inv) * gamma (two mul.rn)
// Outputs: y, every element written exactly once by its owner lane.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
per_head_rmsnorm(const float* __restrict__ x, const float* __restrict__ gamma,
                 float* __restrict__ y, unsigned rows, unsigned heads,
                 unsigned head_dim, float eps) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned p = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (p >= rows * heads) return;  // uniform over the warp
  // Pair p = row*heads + head starts at p*head_dim: rows are contiguous heads.
  const size_t base = (size_t)p * head_dim;
  const float* xr = x + base;
  float* yr = y + base;
  const bool vec = (head_dim & 3u) == 0 && aligned16(x) && aligned16(gamma) && aligned16(y);
  float acc = 0.0f;
  if (vec) {
    const unsigned n4 = head_dim >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (unsigned i = lane; i < n4; i += 32) {
      const float4 v = x4[i];
      acc = fmaf(v.x, v.x, acc);
      acc = fmaf(v.y, v.y, acc);
      acc = fmaf(v.z, v.z, acc);
      acc = fmaf(v.w, v.w, acc);
    }
  } else {
    for (unsigned i = lane; i < head_dim; i += 32) {
      const float v = xr[i];
      acc = fmaf(v, v, acc);
    }
  }
  const float ss = warp_sum(acc);
  const float inv = 1.0f / sqrtf(ss / (float)head_dim + eps);
  if (vec) {
    const unsigned n4 = head_dim >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (unsigned i = lane; i < n4; i += 32) {
      const float4 v = x4[i], g = g4[i];
      float4 o;
      o.x = (v.x * inv) * g.x;
      o.y = (v.y * inv) * g.y;
      o.z = (v.z * inv) * g.z;
      o.w = (v.w * inv) * g.w;
      y4[i] = o;
    }
  } else {
    for (unsigned i = lane; i < head_dim; i += 32) yr[i] = (xr[i] * inv) * gamma[i];
  }
}
