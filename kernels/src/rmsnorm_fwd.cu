// rmsnorm_fwd.cu — batched RMSNorm forward.
//
// Entries
//   rmsnorm_fwd     (x, gamma, y,      rows, hidden, eps)
//   rmsnorm_fwd_rms (x, gamma, y, rms, rows, hidden, eps)
//
// Computes, for every row r of x[rows][hidden]:
//   rms[r]  = sqrt(mean_j x[r][j]^2 + eps)          (rms INCLUDES eps)
//   y[r][j] = (x[r][j] * (1/rms[r])) * gamma[j]
//
// Launch geometry: grid (rows, 1, 1), block (256, 1, 1), no dynamic shared
// memory. Block b handles row b; T = blockDim.x = 256 threads, W = 8 warps.
//
// Vector path: when hidden % 4 == 0 and x, gamma and y are 16-byte aligned
// (checked at run time, uniform over the launch) every access is a float4;
// otherwise every access is a scalar float. Both paths compute the same
// formula with the same op sequence; only the partition of the row sum
// differs.
//
// float32 op sequence (u = 2^-24):
//   1. ss_t: thread t accumulates acc = fmaf(x, x, acc) from acc = 0 over its
//      elements, in increasing index order: scalar path elements t, t+T, …
//      (ceil(hidden/T) terms at most); vector path float4 groups t, t+T, …,
//      components .x .y .z .w in order (4*ceil(hidden/(4T)) terms at most).
//      One rounding per term.
//   2. ss = block_sum(ss_t): butterfly of depth log2(32) = 5 inside each
//      warp, then the W = 8 warp sums in a fixed tree of depth 3.
//   3. ms  = ss / (float)hidden          (div.rn)
//   4. rms = sqrtf(ms + eps)             (add.rn, sqrt.rn)
//   5. inv = 1.0f / rms                  (div.rn)
//   6. y   = (x * inv) * gamma           (mul.rn, mul.rn)
// So rms has relative error <= (depth/2 + 3)u to first order with
// depth = serial + 8, and y <= (depth/2 + 6)u relative to |y|.
//
// Outputs: y, every element written exactly once (by the thread that owns
// it); rms[r] (variant only) written once by thread 0 of block r.
#include "common.cuh"

template <bool WRITE_RMS>
__device__ __forceinline__ void rmsnorm_fwd_body(const float* __restrict__ x,
                                                 const float* __restrict__ gamma,
                                                 float* __restrict__ y,
                                                 float* __restrict__ rms_out,
                                                 unsigned rows, unsigned hidden,
                                                 float eps) {
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;  // uniform over the block
  const size_t base = (size_t)row * hidden;
  const float* xr = x + base;
  float* yr = y + base;
  const bool vec = (hidden & 3u) == 0 && aligned16(x) && aligned16(gamma) && aligned16(y);

  float acc = 0.0f;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (unsigned i = threadIdx.x; i < n4; i += blockDim.x) {
      const float4 v = x4[i];
      acc = fmaf(v.x, v.x, acc);
      acc = fmaf(v.y, v.y, acc);
      acc = fmaf(v.z, v.z, acc);
      acc = fmaf(v.w, v.w, acc);
    }
  } else {
    for (unsigned i = threadIdx.x; i < hidden; i += blockDim.x) {
      const float v = xr[i];
      acc = fmaf(v, v, acc);
    }
  }
  const float ss = block_sum(acc, red);
  const float r = sqrtf(ss / (float)hidden + eps);
  const float inv = 1.0f / r;
  if (WRITE_RMS && threadIdx.x == 0) rms_out[row] = r;

  if (vec) {
    const unsigned n4 = hidden >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (unsigned i = threadIdx.x; i < n4; i += blockDim.x) {
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
    for (unsigned i = threadIdx.x; i < hidden; i += blockDim.x) {
      yr[i] = (xr[i] * inv) * gamma[i];
    }
  }
}

// rmsnorm_fwd: y = RMSNorm(x)·gamma; see the file comment.
extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_fwd(const float* __restrict__ x, const float* __restrict__ gamma,
            float* __restrict__ y, unsigned rows, unsigned hidden, float eps) {
  rmsnorm_fwd_body<false>(x, gamma, y, nullptr, rows, hidden, eps);
}

// rmsnorm_fwd_rms: as rmsnorm_fwd, and also rms[r] = sqrt(mean(x²)+eps) for
// the backward pass.
extern "C" __global__ void __launch_bounds__(MAX_THREADS)
rmsnorm_fwd_rms(const float* __restrict__ x, const float* __restrict__ gamma,
                float* __restrict__ y, float* __restrict__ rms, unsigned rows,
                unsigned hidden, float eps) {
  rmsnorm_fwd_body<true>(x, gamma, y, rms, rows, hidden, eps);
}
