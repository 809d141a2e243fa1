// colsum.cu — fixed-order column sum, the second stage of every backward
// that produces a weight gradient (dgamma, dbeta) without atomics.
//
// Entry
//   colsum_f32 (partial, out, nrows, ncols)
//
// Computes out[c] = sum_r partial[r][c] for partial[nrows][ncols] (row-major),
// c in [0, ncols).
//
// Launch geometry: grid (ceil(ncols/32), 1, 1), block (32, 8, 1), no dynamic
// shared memory. Block b owns columns [32b, 32b+32); thread (tx, ty) owns
// column c = 32b + tx and the row group ty (G = 8 groups).
//
// float32 op sequence and order (depends on nrows and ncols only):
//   1. thread (tx, ty) sums acc = acc + partial[r][c] from acc = 0 over
//      r = ty, ty+8, ty+16, … in increasing order: ceil(nrows/8) terms
//      serially, one rounding per term (the first is exact).
//   2. the 8 group sums of a column are combined as
//      ((g0+g1)+(g2+g3))+((g4+g5)+(g6+g7)): depth 3.
//   Depth of every term: ceil(nrows/8) + 3, so
//   |out[c] - sum| <= gamma(ceil(nrows/8)+3) * sum_r |partial[r][c]|.
//
// Memory: a warp (fixed ty, 32 consecutive columns) reads 128 contiguous
// bytes per row, coalesced.
//
// Outputs: out[c], written exactly once, by thread (tx, 0).
#include "common.cuh"

#define COLSUM_GROUPS 8
#define COLSUM_COLS 32

extern "C" __global__ void __launch_bounds__(COLSUM_COLS * COLSUM_GROUPS)
colsum_f32(const float* __restrict__ partial, float* __restrict__ out,
           unsigned nrows, unsigned ncols) {
  __shared__ float red[COLSUM_GROUPS][COLSUM_COLS + 1];
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  const unsigned c = blockIdx.x * COLSUM_COLS + tx;
  float acc = 0.0f;
  if (c < ncols) {
    for (unsigned r = ty; r < nrows; r += COLSUM_GROUPS) {
      acc = acc + partial[(size_t)r * ncols + c];
    }
  }
  red[ty][tx] = acc;
  __syncthreads();
  if (ty == 0 && c < ncols) {
    out[c] = tree8(red[0][tx], red[1][tx], red[2][tx], red[3][tx],
                   red[4][tx], red[5][tx], red[6][tx], red[7][tx]);
  }
}
