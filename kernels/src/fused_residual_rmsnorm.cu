// fused_residual_rmsnorm.cu — fused residual add + RMSNorm forward.
//
// Entry
//   fused_residual_rmsnorm (residual, x, gamma, residual_out, y, rows, hidden, eps)
//
// Computes, for every row r:
//   s[j]               = residual[r][j] + x[r][j]            (add.rn, exact check)
//   residual_out[r][j] = s[j]
//   rms                = sqrt(mean_j s[j]^2 + eps)
//   y[r][j]            = (s[j] * (1/rms)) * gamma[j]
//
// residual_out MAY ALIAS residual (the in-place residual stream): neither
// pointer is __restrict__, each thread reads residual[i] and x[i] before it
// writes residual_out[i], and only that thread ever touches element i; the
// second pass reads s back from residual_out (the thread's own store, a
// coherent ld.global, never the non-coherent path). x and y must not alias
// anything.
//
// Launch geometry: grid (rows, 1, 1), block (256, 1, 1), no dynamic shared
// memory. Block b handles row b (the row comes from blockIdx.x: an upstream
// single-row kernel launched over many blocks wrote row 0 again and again).
//
// Vector path when hidden % 4 == 0 and all five pointers are 16-byte
// aligned (checked at run time), else scalar.
//
// float32 op sequence: as rmsnorm_fwd.cu with x replaced by s:
//   1. s = residual + x (one rounding; residual_out holds exactly fl(r + x))
//   2. thread t: acc = fmaf(s, s, acc) from 0 over its elements (scalar:
//      ceil(hidden/256) terms; vector: 4*ceil(hidden/1024), components in order)
//   3. block_sum: butterfly depth 5, then tree depth 3 over 8 warps
//   4. ms = ss / hidden (div.rn); rms = sqrtf(ms + eps); inv = 1/rms (rcp.rn)
//   5. y = (s * inv) * gamma (two mul.rn)
//
// Outputs: residual_out and y, every element written exactly once by the
// thread that owns it.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
fused_residual_rmsnorm(const float* residual, const float* __restrict__ x,
                       const float* __restrict__ gamma, float* residual_out,
                       float* __restrict__ y, unsigned rows, unsigned hidden,
                       float eps) {
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float* rr = residual + base;
  const float* xr = x + base;
  float* sr = residual_out + base;
  float* yr = y + base;
  const bool vec = (hidden & 3u) == 0 && aligned16(residual) && aligned16(x) &&
                   aligned16(gamma) && aligned16(residual_out) && aligned16(y);

  float acc = 0.0f;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    for (unsigned i = threadIdx.x; i < n4; i += blockDim.x) {
      const float4 a = reinterpret_cast<const float4*>(rr)[i];
      const float4 b = reinterpret_cast<const float4*>(xr)[i];
      float4 s;
      s.x = a.x + b.x;
      s.y = a.y + b.y;
      s.z = a.z + b.z;
      s.w = a.w + b.w;
      reinterpret_cast<float4*>(sr)[i] = s;
      acc = fmaf(s.x, s.x, acc);
      acc = fmaf(s.y, s.y, acc);
      acc = fmaf(s.z, s.z, acc);
      acc = fmaf(s.w, s.w, acc);
    }
  } else {
    for (unsigned i = threadIdx.x; i < hidden; i += blockDim.x) {
      const float s = rr[i] + xr[i];
      sr[i] = s;
      acc = fmaf(s, s, acc);
    }
  }
  const float ss = block_sum(acc, red);
  const float inv = 1.0f / sqrtf(ss / (float)hidden + eps);

  if (vec) {
    const unsigned n4 = hidden >> 2;
    for (unsigned i = threadIdx.x; i < n4; i += blockDim.x) {
      const float4 s = reinterpret_cast<const float4*>(sr)[i];
      const float4 g = reinterpret_cast<const float4*>(gamma)[i];
      float4 o;
      o.x = (s.x * inv) * g.x;
      o.y = (s.y * inv) * g.y;
      o.z = (s.z * inv) * g.z;
      o.w = (s.w * inv) * g.w;
      reinterpret_cast<float4*>(yr)[i] = o;
    }
  } else {
    for (unsigned i = threadIdx.x; i < hidden; i += blockDim.x) {
      yr[i] = (sr[i] * inv) * gamma[i];
    }
  }
}
