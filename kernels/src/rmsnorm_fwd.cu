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
// Launch geometry: grid (rows, 1, 1), block (256, 1, 1); dynamic shared
// memory hidden*4 bytes when hidden <= FWD_SMEM_MAX (8192 floats, 32 KiB),
// else none (the Go descriptor, kernels.FwdSharedMax, follows the same rule).
// Block b handles row b; T = blockDim.x = 256 threads, W = 8 warps.
//
// Memory: when the launch provides at least hidden*4 bytes of dynamic shared
// memory (read from %dynamic_smem_size, so any launch is correct), pass 1
// copies each element of x that a thread loads into shared memory, and
// pass 2 reads it back from there — the same thread, the same slot, so no
// barrier is needed beyond block_sum's. x is then read from HBM once and y
// written once: 8 bytes per element (plus gamma, hot in L2). Without the
// shared memory (hidden > FWD_SMEM_MAX) pass 2 re-reads x from global memory.
// Both variants perform the same ops in the same order: the same bits.
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

// FWD_SMEM_MAX is the largest hidden for which the forward is launched with
// a shared-memory copy of the row (hidden*4 bytes). A capacity, not a shape.
#define FWD_SMEM_MAX 8192u
// FWD_UNROLL1 (pass 1) and FWD_UNROLL2 (pass 2) are how many of its
// elements a thread loads before using them (memory-level parallelism at
// 32 registers, 8 blocks per SM); they change no order.
#define FWD_UNROLL1 4u
#define FWD_UNROLL2 2u

// dynamic_smem_bytes returns the dynamic shared memory of this launch.
__device__ __forceinline__ unsigned dynamic_smem_bytes() {
  unsigned r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

template <bool WRITE_RMS>
__device__ __forceinline__ void rmsnorm_fwd_body(const float* __restrict__ x,
                                                 const float* __restrict__ gamma,
                                                 float* __restrict__ y,
                                                 float* __restrict__ rms_out,
                                                 unsigned rows, unsigned hidden,
                                                 float eps) {
  extern __shared__ float4 xs4[];  // the row of x, when cached
  __shared__ float red[MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;  // uniform over the block
  const unsigned T = blockDim.x, t = threadIdx.x;
  const size_t base = (size_t)row * hidden;
  const float* xr = x + base;
  float* yr = y + base;
  const bool vec = (hidden & 3u) == 0 && aligned16(x) && aligned16(gamma) && aligned16(y);
  // Uniform over the launch: the row fits in this launch's shared memory.
  const bool cached = (unsigned long long)hidden * 4ull <= dynamic_smem_bytes();
  float* xs = reinterpret_cast<float*>(xs4);

  // Both passes visit a thread's elements i = t, t+T, … in increasing order,
  // a group of FWD_UNROLL1 (pass 2: FWD_UNROLL2) at a time, all loads of a
  // group issued before their uses.
  float acc = 0.0f;
  if (vec) {
    const unsigned n4 = hidden >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (unsigned i0 = t; i0 < n4; i0 += FWD_UNROLL1 * T) {
      float4 v[FWD_UNROLL1];
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL1; ++u) {
        const unsigned i = i0 + u * T;
        if (i < n4) v[u] = x4[i];
      }
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL1; ++u) {
        const unsigned i = i0 + u * T;
        if (i < n4) {
          if (cached) xs4[i] = v[u];
          acc = fmaf(v[u].x, v[u].x, acc);
          acc = fmaf(v[u].y, v[u].y, acc);
          acc = fmaf(v[u].z, v[u].z, acc);
          acc = fmaf(v[u].w, v[u].w, acc);
        }
      }
    }
  } else {
    for (unsigned i0 = t; i0 < hidden; i0 += FWD_UNROLL1 * T) {
      float v[FWD_UNROLL1];
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL1; ++u) {
        const unsigned i = i0 + u * T;
        if (i < hidden) v[u] = xr[i];
      }
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL1; ++u) {
        const unsigned i = i0 + u * T;
        if (i < hidden) {
          if (cached) xs[i] = v[u];
          acc = fmaf(v[u], v[u], acc);
        }
      }
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
    for (unsigned i0 = t; i0 < n4; i0 += FWD_UNROLL2 * T) {
      float4 v[FWD_UNROLL2], g[FWD_UNROLL2];
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL2; ++u) {
        const unsigned i = i0 + u * T;
        if (i < n4) {
          v[u] = cached ? xs4[i] : x4[i];
          g[u] = g4[i];
        }
      }
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL2; ++u) {
        const unsigned i = i0 + u * T;
        if (i < n4) {
          float4 o;
          o.x = (v[u].x * inv) * g[u].x;
          o.y = (v[u].y * inv) * g[u].y;
          o.z = (v[u].z * inv) * g[u].z;
          o.w = (v[u].w * inv) * g[u].w;
          y4[i] = o;
        }
      }
    }
  } else {
    for (unsigned i0 = t; i0 < hidden; i0 += FWD_UNROLL2 * T) {
      float v[FWD_UNROLL2], g[FWD_UNROLL2];
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL2; ++u) {
        const unsigned i = i0 + u * T;
        if (i < hidden) {
          v[u] = cached ? xs[i] : xr[i];
          g[u] = gamma[i];
        }
      }
#pragma unroll
      for (unsigned u = 0; u < FWD_UNROLL2; ++u) {
        const unsigned i = i0 + u * T;
        if (i < hidden) yr[i] = (v[u] * inv) * g[u];
      }
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
