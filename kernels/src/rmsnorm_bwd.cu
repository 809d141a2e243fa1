// rmsnorm_bwd.cu — RMSNorm backward, three deterministic designs.
//
// All three take the per-row rms written by the forward (rmsnorm_fwd_rms):
//
//     rms[r] = sqrt(mean_j x[r][j]^2 + eps)      — rms ALREADY INCLUDES eps.
//
// None of them takes eps, and none adds eps again (an upstream kernel
// computed sqrt(rms^2 + eps), counting eps twice). With inv = 1/rms and
// g = gamma·dy they compute
//
//     dx[r][j]  = gamma_j dy_j / rms − x_j · (sum_k gamma_k dy_k x_k) / (hidden · rms^3)
//               = (g_j − xhat_j · m) · inv,   xhat = x·inv,  m = (sum_k g_k xhat_k) / hidden
//     dgamma[j] = sum_r dy[r][j] · xhat[r][j]
//
// dgamma is never accumulated with atomics. Each design writes a partial
// dgamma buffer partial[P][hidden] with plain stores, and colsum_f32
// (colsum.cu) sums it over P in a fixed order. P = rows for the first two
// designs, P = number of blocks for the third.
//
// Shared float32 op sequence (per element, per row):
//   inv  = 1.0f / rms[r]                     rcp.rn
//   xhat = x * inv                           mul.rn
//   g    = gamma * dy                        mul.rn
//   dot  = row sum of fmaf(g, xhat, acc)     (order: per kernel, below)
//   m    = dot / (float)hidden               div.rn
//   t    = xhat * m                          mul.rn
//   dx   = (g - t) * inv                     sub.rn, mul.rn
// The dgamma term differs by design (stated per kernel).
#include "common.cuh"

// ACC_SMEM_MAX is the largest hidden for which rmsnorm_bwd_chunk keeps its
// dgamma accumulators in dynamic shared memory (hidden*4 bytes, <= 32 KiB).
// It is a capacity, not a shape: larger rows use the global partial row as
// the accumulator (same arithmetic, same order, same bits). The Go
// descriptor (kernels.AccSharedMax) requests shared memory by the same rule.
#define ACC_SMEM_MAX 8192u

// BWD_REG_F4 is how many float4 groups of x and of dy each thread of
// rmsnorm_bwd_chunk keeps in registers between the two passes over a row
// (vector path): rows of up to 4*BWD_REG_F4*T floats (8192 at T = 256) are
// read from memory once. A capacity, not a shape; longer rows re-read.
#define BWD_REG_F4 8u

// ---------------------------------------------------------------------------
// rmsnorm_bwd_warp32 (x, gamma, rms, dy, dx, partial, rows, hidden)
//
// Single-warp backward for hidden <= 32: one warp per row, lane j owns
// element j (lanes j >= hidden hold zeros and write nothing).
// Launch geometry: grid (ceil(rows/8), 1, 1), block (256, 1, 1): warp w of
// block b handles row 8b + w; warps past the last row exit together.
// Reduction of dot: one term per lane (fmaf(g, xhat, 0), one rounding), then
// warp_sum: a butterfly of depth log2(32) = 5 over all 32 lanes, always; the
// loop is over the warp width, never over hidden, so it is correct for every
// hidden <= 32 with one PTX text.
// dgamma term: partial[r][j] = dy * xhat (mul.rn); colsum_f32 over P = rows.
// Outputs: dx[r][j] and partial[r][j] for j < hidden, each written once by
// lane j of row r's warp.
extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_bwd_warp32(const float* __restrict__ x, const float* __restrict__ gamma,
                   const float* __restrict__ rms, const float* __restrict__ dy,
                   float* __restrict__ dx, float* __restrict__ partial,
                   unsigned rows, unsigned hidden) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;  // uniform over the warp: shuffles stay full-warp
  const bool active = lane < hidden;
  const size_t i = (size_t)row * hidden + lane;
  const float inv = 1.0f / rms[row];
  const float xv = active ? x[i] : 0.0f;
  const float dv = active ? dy[i] : 0.0f;
  const float gm = active ? gamma[lane] : 0.0f;
  const float xhat = xv * inv;
  const float g = gm * dv;
  const float dot = warp_sum(fmaf(g, xhat, 0.0f));
  const float m = dot / (float)hidden;
  if (active) {
    dx[i] = (g - xhat * m) * inv;
    partial[i] = dv * xhat;
  }
}

// ---------------------------------------------------------------------------
// rmsnorm_bwd_rowwarp (x, gamma, rms, dy, dx, partial, rows, hidden)
//
// Design (a), the upstream design, for any hidden: one warp per row, scalar
// loads, each lane strides over the row by 32.
// Launch geometry: grid (ceil(rows/8), 1, 1), block (256, 1, 1): warp w of
// block b handles row 8b + w.
// Reduction of dot: lane l accumulates acc = fmaf(g, xhat, acc) from 0 over
// j = l, l+32, … (ceil(hidden/32) terms serially), then warp_sum (depth 5).
// Pass 2 re-reads x, dy and gamma and writes dx and the per-row partial
// dgamma term partial[r][j] = dy * xhat (mul.rn); colsum_f32 over P = rows.
// Outputs: dx[r][j], partial[r][j], each written once by lane j % 32.
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
  float acc = 0.0f;
  for (unsigned j = lane; j < hidden; j += 32) {
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

// ---------------------------------------------------------------------------
// rmsnorm_bwd_chunk (x, gamma, rms, dy, dx, partial, rows, hidden, chunk)
//
// Design (b), the fast design, for any hidden: block b owns the contiguous
// rows [b·chunk, min((b+1)·chunk, rows)) — a mapping fixed by the launch
// parameters, independent of scheduling — and processes them one after the
// other, the whole block on one row. Thread t owns the same columns in every
// row, so it accumulates its dgamma columns privately over the chunk:
//   acc[j] = fmaf(dy, xhat, acc[j]) from 0, rows in increasing order.
// The accumulators live in dynamic shared memory (hidden floats) when
// hidden <= ACC_SMEM_MAX, else in the block's own row of partial (global,
// only ever touched by the owning thread). Either way, at the end
// partial[b][j] = acc[j]; colsum_f32 then sums P = gridDim.x block rows.
//
// Launch geometry (chosen by the Go descriptor from rows and hidden only):
//   block (T, 1, 1), T = min(256, max(32, roundup32(ceil(hidden/4))))
//   chunk = max(4, ceil(rows/512)), grid (ceil(rows/chunk), 1, 1)
//   dynamic shared = hidden*4 bytes if hidden <= ACC_SMEM_MAX else 0.
// The kernel reads the partition from gridDim, blockDim and chunk, so any
// launch with grid = ceil(rows/chunk) is correct.
//
// Column ownership: vector path (hidden % 4 == 0 and x, gamma, dy, dx,
// partial 16-byte aligned) float4 groups t, t+T, …; scalar path elements
// t, t+T, ….
// Memory: on the vector path, when a thread's groups of a row fit in
// registers (T = 256 and hidden <= 4*BWD_REG_F4*256 = 8192, or at most one
// group per thread; both capacities, hidden stays a run-time parameter),
// rmsnorm_bwd_chunk_rows_cached loads x and dy once per row and keeps xhat
// and g in registers across the block reduction: per element x and dy are
// read from HBM once and dx written once (12 bytes; gamma and the dgamma
// accumulators stay on chip), plus one partial row per block. Otherwise
// (scalar path, hidden > 8192) pass 2 re-reads x, dy and gamma. The dgamma
// accumulation does not depend on m, so the cached path does it in pass 1;
// every path performs the same ops in the same order: the same bits.
// Reduction of dot per row: each thread fmaf-accumulates its columns from 0
// (scalar: ceil(hidden/T) terms; vector: 4*ceil(hidden/(4T)), components in
// order), then block_sum (butterfly depth 5 + tree depth 3 over W = T/32
// warps).
// dgamma: depth chunk (serial fmaf per block) + colsum's ceil(P/8) + 3.
// Outputs: dx (each element once, by its owner thread), partial[b][j] (each
// once at the end, by its owner; in the global-accumulator path the owner
// also updates it once per row before).
// rmsnorm_bwd_chunk_rows_cached is the vector path of rmsnorm_bwd_chunk for
// rows whose float4 groups t, t+S, …, t+(K-1)S cover the row (S = blockDim.x,
// passed as the constant STRIDE when K > 1): each thread loads its groups of
// x and dy once per row and keeps them in registers. Pass 1 computes
// xhat = x*inv and g = gamma*dy, accumulates the row dot and its dgamma
// columns (acc = fmaf(dy, xhat, acc); it does not depend on m); pass 2 writes
// dx = (g - xhat*m)*inv from the registers. Same ops, same order as the
// re-reading loop below, so the same bits.
template <unsigned K, unsigned STRIDE>
__device__ __forceinline__ void rmsnorm_bwd_chunk_rows_cached(
    const float* __restrict__ x, const float4* __restrict__ g4,
    const float* __restrict__ rms, const float* __restrict__ dy,
    float* __restrict__ dx, float4* acc4, unsigned r0, unsigned r1,
    unsigned hidden, float* red) {
  const unsigned t = threadIdx.x, n4 = hidden >> 2;
  const float fh = (float)hidden;
  for (unsigned r = r0; r < r1; ++r) {
    const size_t base = (size_t)r * hidden;
    const float4* x4 = reinterpret_cast<const float4*>(x + base);
    const float4* d4 = reinterpret_cast<const float4*>(dy + base);
    float4* o4 = reinterpret_cast<float4*>(dx + base);
    const float inv = 1.0f / rms[r];
    // xc: x, then xhat; dc: dy, then g = gamma*dy. All loads first.
    float4 xc[K], dc[K];
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
      const unsigned i = t + k * STRIDE;
      if (i < n4) {
        xc[k] = x4[i];
        dc[k] = d4[i];
      }
    }
    float a = 0.0f;
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
      const unsigned i = t + k * STRIDE;
      if (i < n4) {
        const float4 gv = g4[i];
        float4 s = acc4[i];
        float xh, g;
        xh = xc[k].x * inv; g = gv.x * dc[k].x; a = fmaf(g, xh, a); s.x = fmaf(dc[k].x, xh, s.x); xc[k].x = xh; dc[k].x = g;
        xh = xc[k].y * inv; g = gv.y * dc[k].y; a = fmaf(g, xh, a); s.y = fmaf(dc[k].y, xh, s.y); xc[k].y = xh; dc[k].y = g;
        xh = xc[k].z * inv; g = gv.z * dc[k].z; a = fmaf(g, xh, a); s.z = fmaf(dc[k].z, xh, s.z); xc[k].z = xh; dc[k].z = g;
        xh = xc[k].w * inv; g = gv.w * dc[k].w; a = fmaf(g, xh, a); s.w = fmaf(dc[k].w, xh, s.w); xc[k].w = xh; dc[k].w = g;
        acc4[i] = s;
      }
    }
    const float m = block_sum(a, red) / fh;
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
      const unsigned i = t + k * STRIDE;
      if (i < n4) {
        float4 o;
        o.x = (dc[k].x - xc[k].x * m) * inv;
        o.y = (dc[k].y - xc[k].y * m) * inv;
        o.z = (dc[k].z - xc[k].z * m) * inv;
        o.w = (dc[k].w - xc[k].w * m) * inv;
        o4[i] = o;
      }
    }
  }
}

template <bool SMEM>
__device__ __forceinline__ void rmsnorm_bwd_chunk_body(
    const float* __restrict__ x, const float* __restrict__ gamma,
    const float* __restrict__ rms, const float* __restrict__ dy,
    float* __restrict__ dx, float* __restrict__ prow, float* acc,
    unsigned r0, unsigned r1, unsigned hidden, bool vec, float* red) {
  const unsigned T = blockDim.x, t = threadIdx.x;
  const float fh = (float)hidden;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    float4* acc4 = reinterpret_cast<float4*>(acc);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    for (unsigned i = t; i < n4; i += T) acc4[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // Uniform over the launch: the thread's part of a row fits in registers.
    if (T == MAX_THREADS && n4 <= BWD_REG_F4 * MAX_THREADS) {
      rmsnorm_bwd_chunk_rows_cached<BWD_REG_F4, MAX_THREADS>(x, g4, rms, dy, dx, acc4, r0, r1, hidden, red);
    } else if (n4 <= T) {
      rmsnorm_bwd_chunk_rows_cached<1, 0>(x, g4, rms, dy, dx, acc4, r0, r1, hidden, red);
    } else {
    for (unsigned r = r0; r < r1; ++r) {
      const size_t base = (size_t)r * hidden;
      const float4* x4 = reinterpret_cast<const float4*>(x + base);
      const float4* d4 = reinterpret_cast<const float4*>(dy + base);
      float4* o4 = reinterpret_cast<float4*>(dx + base);
      const float inv = 1.0f / rms[r];
      float a = 0.0f;
      for (unsigned i = t; i < n4; i += T) {
        const float4 xv = x4[i], dv = d4[i], gv = g4[i];
        a = fmaf(gv.x * dv.x, xv.x * inv, a);
        a = fmaf(gv.y * dv.y, xv.y * inv, a);
        a = fmaf(gv.z * dv.z, xv.z * inv, a);
        a = fmaf(gv.w * dv.w, xv.w * inv, a);
      }
      const float m = block_sum(a, red) / fh;
      for (unsigned i = t; i < n4; i += T) {
        const float4 xv = x4[i], dv = d4[i], gv = g4[i];
        float4 s = acc4[i], o;
        float xh, g;
        xh = xv.x * inv; g = gv.x * dv.x; o.x = (g - xh * m) * inv; s.x = fmaf(dv.x, xh, s.x);
        xh = xv.y * inv; g = gv.y * dv.y; o.y = (g - xh * m) * inv; s.y = fmaf(dv.y, xh, s.y);
        xh = xv.z * inv; g = gv.z * dv.z; o.z = (g - xh * m) * inv; s.z = fmaf(dv.z, xh, s.z);
        xh = xv.w * inv; g = gv.w * dv.w; o.w = (g - xh * m) * inv; s.w = fmaf(dv.w, xh, s.w);
        o4[i] = o;
        acc4[i] = s;
      }
    }
    }
    if (SMEM) {
      float4* p4 = reinterpret_cast<float4*>(prow);
      for (unsigned i = t; i < n4; i += T) p4[i] = acc4[i];
    }
  } else {
    for (unsigned j = t; j < hidden; j += T) acc[j] = 0.0f;
    for (unsigned r = r0; r < r1; ++r) {
      const size_t base = (size_t)r * hidden;
      const float inv = 1.0f / rms[r];
      float a = 0.0f;
      for (unsigned j = t; j < hidden; j += T) {
        a = fmaf(gamma[j] * dy[base + j], x[base + j] * inv, a);
      }
      const float m = block_sum(a, red) / fh;
      for (unsigned j = t; j < hidden; j += T) {
        const float dv = dy[base + j];
        const float xh = x[base + j] * inv;
        const float g = gamma[j] * dv;
        dx[base + j] = (g - xh * m) * inv;
        acc[j] = fmaf(dv, xh, acc[j]);
      }
    }
    if (SMEM) {
      for (unsigned j = t; j < hidden; j += T) prow[j] = acc[j];
    }
  }
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_bwd_chunk(const float* __restrict__ x, const float* __restrict__ gamma,
                  const float* __restrict__ rms, const float* __restrict__ dy,
                  float* __restrict__ dx, float* __restrict__ partial,
                  unsigned rows, unsigned hidden, unsigned chunk) {
  extern __shared__ float4 acc_smem4[];
  __shared__ float red[MAX_WARPS];
  const unsigned r0 = blockIdx.x * chunk;
  const unsigned r1 = min(r0 + chunk, rows);
  float* prow = partial + (size_t)blockIdx.x * hidden;
  const bool vec = (hidden & 3u) == 0 && aligned16(x) && aligned16(gamma) &&
                   aligned16(dy) && aligned16(dx) && aligned16(partial);
  if (hidden <= ACC_SMEM_MAX) {
    rmsnorm_bwd_chunk_body<true>(x, gamma, rms, dy, dx, prow,
                                 reinterpret_cast<float*>(acc_smem4), r0, r1,
                                 hidden, vec, red);
  } else {
    rmsnorm_bwd_chunk_body<false>(x, gamma, rms, dy, dx, prow, prow, r0, r1,
                                  hidden, vec, red);
  }
}
