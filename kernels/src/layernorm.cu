// layernorm.cu — LayerNorm forward and backward.
//
// Entries
//   layernorm_fwd       (x, gamma, beta, y,             rows, hidden, eps)
//   layernorm_fwd_stats (x, gamma, beta, y, mean, rstd, rows, hidden, eps)
//   layernorm_bwd_chunk (x, gamma, dy, mean, rstd, dx, partial_g, partial_b,
//                        rows, hidden, chunk)
//
// Forward, for every row r of x[rows][hidden]:
//   mean = (1/hidden) sum_j x_j
//   var  = (1/hidden) sum_j (x_j - mean)^2          (two-pass: numerically sound)
//   rstd = 1 / sqrt(var + eps)
//   y_j  = (x_j - mean) * rstd * gamma_j + beta_j
// Backward, with xhat_j = (x_j - mean)·rstd and g_j = gamma_j·dy_j:
//   dx_j      = rstd · ( g_j − (1/hidden) sum_k g_k − xhat_j · (1/hidden) sum_k g_k xhat_k )
//   dgamma_j  = sum_r dy_rj · xhat_rj
//   dbeta_j   = sum_r dy_rj
// mean and rstd are those written by layernorm_fwd_stats (rstd is
// 1/sqrt(var+eps): it includes eps; the backward takes no eps).
#include "common.cuh"

// See rmsnorm_bwd.cu: layernorm_bwd_chunk keeps its 2*hidden accumulators
// in dynamic shared memory when 2*hidden <= ACC_SMEM_MAX, else in its own
// rows of partial_g / partial_b.
#define ACC_SMEM_MAX 8192u

// ---------------------------------------------------------------------------
// layernorm_fwd / layernorm_fwd_stats
//
// Launch geometry: grid (rows, 1, 1), block (256, 1, 1), no dynamic shared
// memory; block b handles row b. Vector path (float4) when hidden % 4 == 0
// and x, gamma, beta, y are 16-byte aligned, else scalar.
//
// float32 op sequence (three passes over the row, re-read from global/L1):
//   1. thread t: acc = acc + x from 0 over its elements (scalar: elements
//      t, t+256, …, ceil(hidden/256) terms; vector: float4 groups, components
//      in order, 4*ceil(hidden/1024) terms); block_sum (butterfly depth 5,
//      tree depth 3 over 8 warps); mean = sum / (float)hidden (div.rn).
//   2. d = x - mean (sub.rn); thread t: acc = fmaf(d, d, acc) from 0 over
//      the same elements in the same order; block_sum (same order);
//      var = sum / (float)hidden (div.rn).
//   3. rstd = 1.0f / sqrtf(var + eps)   (add.rn, sqrt.rn, rcp.rn)
//   4. y = fmaf((x - mean) * rstd, gamma, beta)   (sub.rn, mul.rn, fma.rn)
// Outputs: y (each element once, by its owner thread); mean[r], rstd[r]
// (stats variant) once by thread 0.
template <bool STATS>
__device__ __forceinline__ void layernorm_fwd_body(
    const float* __restrict__ x, const float* __restrict__ gamma,
    const float* __restrict__ beta, float* __restrict__ y,
    float* __restrict__ mean_out, float* __restrict__ rstd_out, unsigned rows,
    unsigned hidden, float eps) {
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float* xr = x + base;
  float* yr = y + base;
  const unsigned T = blockDim.x, t = threadIdx.x;
  const bool vec = (hidden & 3u) == 0 && aligned16(x) && aligned16(gamma) &&
                   aligned16(beta) && aligned16(y);
  const unsigned n4 = hidden >> 2;
  const float4* x4 = reinterpret_cast<const float4*>(xr);

  float acc = 0.0f;
  if (vec) {
    for (unsigned i = t; i < n4; i += T) {
      const float4 v = x4[i];
      acc = acc + v.x;
      acc = acc + v.y;
      acc = acc + v.z;
      acc = acc + v.w;
    }
  } else {
    for (unsigned i = t; i < hidden; i += T) acc = acc + xr[i];
  }
  const float mu = block_sum(acc, red) / (float)hidden;

  acc = 0.0f;
  if (vec) {
    for (unsigned i = t; i < n4; i += T) {
      const float4 v = x4[i];
      float d;
      d = v.x - mu; acc = fmaf(d, d, acc);
      d = v.y - mu; acc = fmaf(d, d, acc);
      d = v.z - mu; acc = fmaf(d, d, acc);
      d = v.w - mu; acc = fmaf(d, d, acc);
    }
  } else {
    for (unsigned i = t; i < hidden; i += T) {
      const float d = xr[i] - mu;
      acc = fmaf(d, d, acc);
    }
  }
  const float var = block_sum(acc, red) / (float)hidden;
  const float rs = 1.0f / sqrtf(var + eps);
  if (STATS && t == 0) {
    mean_out[row] = mu;
    rstd_out[row] = rs;
  }

  if (vec) {
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (unsigned i = t; i < n4; i += T) {
      const float4 v = x4[i], g = g4[i], b = b4[i];
      float4 o;
      o.x = fmaf((v.x - mu) * rs, g.x, b.x);
      o.y = fmaf((v.y - mu) * rs, g.y, b.y);
      o.z = fmaf((v.z - mu) * rs, g.z, b.z);
      o.w = fmaf((v.w - mu) * rs, g.w, b.w);
      y4[i] = o;
    }
  } else {
    for (unsigned i = t; i < hidden; i += T) {
      yr[i] = fmaf((xr[i] - mu) * rs, gamma[i], beta[i]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
layernorm_fwd(const float* __restrict__ x, const float* __restrict__ gamma,
              const float* __restrict__ beta, float* __restrict__ y,
              unsigned rows, unsigned hidden, float eps) {
  layernorm_fwd_body<false>(x, gamma, beta, y, nullptr, nullptr, rows, hidden, eps);
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
layernorm_fwd_stats(const float* __restrict__ x, const float* __restrict__ gamma,
                    const float* __restrict__ beta, float* __restrict__ y,
                    float* __restrict__ mean, float* __restrict__ rstd,
                    unsigned rows, unsigned hidden, float eps) {
  layernorm_fwd_body<true>(x, gamma, beta, y, mean, rstd, rows, hidden, eps);
}

// ---------------------------------------------------------------------------
// layernorm_bwd_chunk
//
// Same structure as rmsnorm_bwd_chunk (rmsnorm_bwd.cu): block b owns rows
// [b·chunk, min((b+1)·chunk, rows)), the whole block works on one row at a
// time, thread t owns the same columns in every row and accumulates
//   accg[j] = fmaf(dy, xhat, accg[j]),  accb[j] = accb[j] + dy
// from 0 over its chunk, rows in increasing order; at the end
// partial_g[b][j] = accg[j], partial_b[b][j] = accb[j]; colsum_f32 sums
// each over the P = gridDim.x block rows in a fixed order.
//
// Launch geometry (chosen by the Go descriptor from rows and hidden only):
//   block (T, 1, 1), T = min(256, max(32, roundup32(ceil(hidden/4))))
//   chunk = max(4, ceil(rows/512)), grid (ceil(rows/chunk), 1, 1)
//   dynamic shared = 2*hidden*4 bytes if 2*hidden <= ACC_SMEM_MAX else 0.
//
// float32 op sequence per row (mu = mean[r], rs = rstd[r]):
//   xhat = (x - mu) * rs                   sub.rn, mul.rn
//   g    = gamma * dy                      mul.rn
//   s1   = row sum of (acc + g)            thread-serial from 0, then block_sum
//   s2   = row sum of fmaf(g, xhat, acc)   thread-serial from 0, then block_sum
//          (both: scalar ceil(hidden/T) terms or vector 4*ceil(hidden/(4T))
//           per thread, butterfly depth 5, tree depth 3)
//   c1 = s1 / hidden, c2 = s2 / hidden     div.rn
//   dx = ((g - c1) - xhat * c2) * rs       sub.rn, mul.rn, sub.rn, mul.rn
// dgamma/dbeta depth: chunk (serial per block) + ceil(P/8) + 3 (colsum).
// Outputs: dx (each element once by its owner thread); partial_g[b][j] and
// partial_b[b][j] (each once at the end by its owner; in the global path the
// owner also updates it once per row before).
template <bool SMEM>
__device__ __forceinline__ void layernorm_bwd_body(
    const float* __restrict__ x, const float* __restrict__ gamma,
    const float* __restrict__ dy, const float* __restrict__ mean,
    const float* __restrict__ rstd, float* __restrict__ dx,
    float* __restrict__ pg, float* __restrict__ pb, float* accg, float* accb,
    unsigned r0, unsigned r1, unsigned hidden, bool vec, float* red) {
  const unsigned T = blockDim.x, t = threadIdx.x;
  const float fh = (float)hidden;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    float4* ag4 = reinterpret_cast<float4*>(accg);
    float4* ab4 = reinterpret_cast<float4*>(accb);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    for (unsigned i = t; i < n4; i += T) {
      ag4[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      ab4[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    for (unsigned r = r0; r < r1; ++r) {
      const size_t base = (size_t)r * hidden;
      const float4* x4 = reinterpret_cast<const float4*>(x + base);
      const float4* d4 = reinterpret_cast<const float4*>(dy + base);
      float4* o4 = reinterpret_cast<float4*>(dx + base);
      const float mu = mean[r], rs = rstd[r];
      float a1 = 0.0f, a2 = 0.0f;
      for (unsigned i = t; i < n4; i += T) {
        const float4 xv = x4[i], dv = d4[i], gv = g4[i];
        float g;
        g = gv.x * dv.x; a1 = a1 + g; a2 = fmaf(g, (xv.x - mu) * rs, a2);
        g = gv.y * dv.y; a1 = a1 + g; a2 = fmaf(g, (xv.y - mu) * rs, a2);
        g = gv.z * dv.z; a1 = a1 + g; a2 = fmaf(g, (xv.z - mu) * rs, a2);
        g = gv.w * dv.w; a1 = a1 + g; a2 = fmaf(g, (xv.w - mu) * rs, a2);
      }
      const float2 s = block_sum2(a1, a2, red);
      const float c1 = s.x / fh, c2 = s.y / fh;
      for (unsigned i = t; i < n4; i += T) {
        const float4 xv = x4[i], dv = d4[i], gv = g4[i];
        float4 sg = ag4[i], sb = ab4[i], o;
        float xh, g;
        xh = (xv.x - mu) * rs; g = gv.x * dv.x; o.x = ((g - c1) - xh * c2) * rs;
        sg.x = fmaf(dv.x, xh, sg.x); sb.x = sb.x + dv.x;
        xh = (xv.y - mu) * rs; g = gv.y * dv.y; o.y = ((g - c1) - xh * c2) * rs;
        sg.y = fmaf(dv.y, xh, sg.y); sb.y = sb.y + dv.y;
        xh = (xv.z - mu) * rs; g = gv.z * dv.z; o.z = ((g - c1) - xh * c2) * rs;
        sg.z = fmaf(dv.z, xh, sg.z); sb.z = sb.z + dv.z;
        xh = (xv.w - mu) * rs; g = gv.w * dv.w; o.w = ((g - c1) - xh * c2) * rs;
        sg.w = fmaf(dv.w, xh, sg.w); sb.w = sb.w + dv.w;
        o4[i] = o;
        ag4[i] = sg;
        ab4[i] = sb;
      }
    }
    if (SMEM) {
      float4* pg4 = reinterpret_cast<float4*>(pg);
      float4* pb4 = reinterpret_cast<float4*>(pb);
      for (unsigned i = t; i < n4; i += T) {
        pg4[i] = ag4[i];
        pb4[i] = ab4[i];
      }
    }
  } else {
    for (unsigned j = t; j < hidden; j += T) {
      accg[j] = 0.0f;
      accb[j] = 0.0f;
    }
    for (unsigned r = r0; r < r1; ++r) {
      const size_t base = (size_t)r * hidden;
      const float mu = mean[r], rs = rstd[r];
      float a1 = 0.0f, a2 = 0.0f;
      for (unsigned j = t; j < hidden; j += T) {
        const float g = gamma[j] * dy[base + j];
        a1 = a1 + g;
        a2 = fmaf(g, (x[base + j] - mu) * rs, a2);
      }
      const float2 s = block_sum2(a1, a2, red);
      const float c1 = s.x / fh, c2 = s.y / fh;
      for (unsigned j = t; j < hidden; j += T) {
        const float dv = dy[base + j];
        const float xh = (x[base + j] - mu) * rs;
        const float g = gamma[j] * dv;
        dx[base + j] = ((g - c1) - xh * c2) * rs;
        accg[j] = fmaf(dv, xh, accg[j]);
        accb[j] = accb[j] + dv;
      }
    }
    if (SMEM) {
      for (unsigned j = t; j < hidden; j += T) {
        pg[j] = accg[j];
        pb[j] = accb[j];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
layernorm_bwd_chunk(const float* __restrict__ x, const float* __restrict__ gamma,
                    const float* __restrict__ dy, const float* __restrict__ mean,
                    const float* __restrict__ rstd, float* __restrict__ dx,
                    float* __restrict__ partial_g, float* __restrict__ partial_b,
                    unsigned rows, unsigned hidden, unsigned chunk) {
  extern __shared__ float4 acc_smem4[];
  __shared__ float red[2 * MAX_WARPS];
  const unsigned r0 = blockIdx.x * chunk;
  const unsigned r1 = min(r0 + chunk, rows);
  float* pg = partial_g + (size_t)blockIdx.x * hidden;
  float* pb = partial_b + (size_t)blockIdx.x * hidden;
  const bool vec = (hidden & 3u) == 0 && aligned16(x) && aligned16(gamma) &&
                   aligned16(dy) && aligned16(dx) && aligned16(partial_g) &&
                   aligned16(partial_b);
  if (2u * hidden <= ACC_SMEM_MAX) {
    float* s = reinterpret_cast<float*>(acc_smem4);
    layernorm_bwd_body<true>(x, gamma, dy, mean, rstd, dx, pg, pb, s, s + hidden,
                             r0, r1, hidden, vec, red);
  } else {
    layernorm_bwd_body<false>(x, gamma, dy, mean, rstd, dx, pg, pb, pg, pb, r0,
                              r1, hidden, vec, red);
  }
}
