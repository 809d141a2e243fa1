// row_parity_order.cu — named mutant "row-parity-order".
//
// Entries (same signatures as kernels/src/rmsnorm_fwd.cu)
//   rmsnorm_fwd     (x, gamma, y,      rows, hidden, eps)
//   rmsnorm_fwd_rms (x, gamma, y, rms, rows, hidden, eps)
//
// The RMSNorm forward with a "snake" traversal: odd rows accumulate each
// thread's squares in the reverse order (last element first; float4
// components w, z, y, x) — a cache-locality tweak. Every row is still a
// correctly rounded-enough RMSNorm, within the oracle's bound, but a row's
// bits now depend on the parity of its index: permuting rows, or computing
// one alone, changes them.
#include "../../kernels/src/common.cuh"

template <bool WRITE_RMS>
__device__ __forceinline__ void rmsnorm_fwd_body(const float* __restrict__ x,
                                                 const float* __restrict__ gamma,
                                                 float* __restrict__ y,
                                                 float* __restrict__ rms_out,
                                                 unsigned rows, unsigned hidden,
                                                 float eps) {
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float* xr = x + base;
  float* yr = y + base;
  const bool vec = (hidden & 3u) == 0 && aligned16(x) && aligned16(gamma) && aligned16(y);
  const bool reverse = (row & 1u) != 0;  // THE BUG: order depends on the row index
  const unsigned T = blockDim.x, t = threadIdx.x;
  float acc = 0.0f;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    if (t < n4) {
      const unsigned last = t + ((n4 - 1 - t) / T) * T;
      for (unsigned k = 0, i = reverse ? last : t; k <= (n4 - 1 - t) / T; ++k, i = reverse ? i - T : i + T) {
        const float4 v = x4[i];
        if (reverse) {
          acc = fmaf(v.w, v.w, acc);
          acc = fmaf(v.z, v.z, acc);
          acc = fmaf(v.y, v.y, acc);
          acc = fmaf(v.x, v.x, acc);
        } else {
          acc = fmaf(v.x, v.x, acc);
          acc = fmaf(v.y, v.y, acc);
          acc = fmaf(v.z, v.z, acc);
          acc = fmaf(v.w, v.w, acc);
        }
      }
    }
  } else if (t < hidden) {
    const unsigned last = t + ((hidden - 1 - t) / T) * T;
    for (unsigned k = 0, i = reverse ? last : t; k <= (hidden - 1 - t) / T; ++k, i = reverse ? i - T : i + T) {
      const float v = xr[i];
      acc = fmaf(v, v, acc);
    }
  }
  const float ss = block_sum(acc, red);
  const float r = sqrtf(ss / (float)hidden + eps);
  const float inv = 1.0f / r;
  if (WRITE_RMS && t == 0) rms_out[row] = r;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (unsigned i = t; i < n4; i += T) {
      const float4 v = x4[i];
      const float4 g = g4[i];
      float4 o;
      o.x = (v.x * inv) * g.x;
      o.y = (v.y * inv) * g.y;
      o.z = (v.z * inv) * g.z;
      o.w = (v.w * inv) * g.w;
      y4[i] = o;
    }
  } else {
    for (unsigned i = t; i < hidden; i += T) yr[i] = (xr[i] * inv) * gamma[i];
  }
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_fwd(const float* __restrict__ x, const float* __restrict__ gamma,
            float* __restrict__ y, unsigned rows, unsigned hidden, float eps) {
  rmsnorm_fwd_body<false>(x, gamma, y, nullptr, rows, hidden, eps);
}

extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_fwd_rms(const float* __restrict__ x, const float* __restrict__ gamma,
                float* __restrict__ y, float* __restrict__ rms, unsigned rows,
                unsigned hidden, float eps) {
  rmsnorm_fwd_body<true>(x, gamma, y, rms, rows, hidden, eps);
}
