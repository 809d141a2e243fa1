// softmax.cu — row-wise softmax, forward and backward.
//
// Entries
//   softmax_fwd (x,      y,  rows, hidden)
//   softmax_bwd (y, dy,  dx, rows, hidden)
//
// For every row r of [rows][hidden]:
//   forward   m = max_j x_j,  e_j = 2^((x_j − m)·log2 e),  s = Σ_j e_j,  y_j = e_j / s
//   backward  S = Σ_j y_j·dy_j,  dx_j = y_j·(dy_j − S)   (y is the forward's output)
//
// Launch geometry: grid (rows, 1, 1), block (256, 1, 1), no dynamic shared
// memory; block b handles row b. Thread t owns the elements t, t+256, …
// (ceil(hidden/256) of them); the loops run over hidden, which is a
// parameter.
//
// float32 op sequence (documented for the tolerance, oracle.SoftmaxForwardTol
// and oracle.SoftmaxBackwardTol):
//   forward, three passes over the row:
//     1. thread max over its elements, then block_max (max.f32: exact, any
//        order gives the same bits).
//     2. e = exp2f((x − m) * L), L = 0f3FB8AA3B = fl(log2 e)
//        (sub.rn, mul.rn, ex2.approx.f32: CUDA exp2f, ≤ 2 ulp);
//        thread t: acc = acc + e from 0 over its elements in increasing
//        order; block_sum (butterfly depth 5, tree8 depth 3).
//     3. e recomputed as in 2 (the same instructions: the same bits), then
//        y = e / s (div.rn).
//   backward, two passes:
//     1. thread t: acc = fmaf(y, dy, acc) from 0 over its elements in
//        increasing order; block_sum (same order).
//     2. dx = y * (dy − S)   (sub.rn, mul.rn)
// Depth of each row sum: ceil(hidden/256) − 1 serial + 8 tree.
// Outputs: y (dx), each element written exactly once, by its owner thread.
// The order depends on hidden and the block size only, never on rows or the
// grid: a row's bits are the same alone and in any batch.
#include "common.cuh"

#define LOG2E_F 1.44269504088896340736f

// warp_max returns the max of v over the 32 lanes (butterfly, every lane
// ends with the same value: max is exact and commutative).
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int k = 16; k >= 1; k >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, k));
  return v;
}

// block_max returns the max of v over the block, the same bits in every
// thread (see block_sum for the shape and the barriers); missing warps read
// as −Inf.
__device__ __forceinline__ float block_max(float v, float* red) {
  v = warp_max(v);
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  const unsigned nw = blockDim.x >> 5;
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float r = -INFINITY;
#pragma unroll
  for (unsigned w = 0; w < MAX_WARPS; ++w) r = fmaxf(r, w < nw ? red[w] : -INFINITY);
  __syncthreads();
  return r;
}

// softmax_exp is e = 2^((x − m)·fl(log2 e)): one sub, one mul, ex2.approx.
__device__ __forceinline__ float softmax_exp(float x, float m) {
  return exp2f((x - m) * LOG2E_F);
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
softmax_fwd(const float* __restrict__ x, float* __restrict__ y, unsigned rows,
            unsigned hidden) {
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float* xr = x + base;
  float* yr = y + base;
  const unsigned T = blockDim.x, t = threadIdx.x;

  float m = -INFINITY;
  for (unsigned i = t; i < hidden; i += T) m = fmaxf(m, xr[i]);
  m = block_max(m, red);

  float acc = 0.0f;
  for (unsigned i = t; i < hidden; i += T) acc = acc + softmax_exp(xr[i], m);
  const float s = block_sum(acc, red);

  for (unsigned i = t; i < hidden; i += T) yr[i] = softmax_exp(xr[i], m) / s;
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
softmax_bwd(const float* __restrict__ y, const float* __restrict__ dy,
            float* __restrict__ dx, unsigned rows, unsigned hidden) {
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float* yr = y + base;
  const float* dyr = dy + base;
  float* dxr = dx + base;
  const unsigned T = blockDim.x, t = threadIdx.x;

  float acc = 0.0f;
  for (unsigned i = t; i < hidden; i += T) acc = fmaf(yr[i], dyr[i], acc);
  const float S = block_sum(acc, red);

  for (unsigned i = t; i < hidden; i += T) dxr[i] = yr[i] * (dyr[i] - S);
}
