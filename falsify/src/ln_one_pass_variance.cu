// ln_one_pass_variance.cu — named mutant "ln-one-pass-variance".
//
// Entries (same signatures as kernels/src/layernorm.cu)
//   layernorm_fwd       (x, gamma, beta, y,             rows, hidden, eps)
//   layernorm_fwd_stats (x, gamma, beta, y, mean, rstd, rows, hidden, eps)
//
// LayerNorm forward with the textbook one-pass variance
//   var = mean(x²) − mean(x)²
// instead of the two-pass mean((x − mean)²): one reduction pass fewer, and
// catastrophic cancellation when |mean| ≫ std (var can even come out
// negative). Scalar path only; the op sequence is otherwise layernorm.cu's.
#include "../../kernels/src/common.cuh"

template <bool STATS>
__device__ __forceinline__ void layernorm_fwd_body(
    const float* __restrict__ x, const float* __restrict__ gamma,
    const float* __restrict__ beta, float* __restrict__ y,
    float* __restrict__ mean_out, float* __restrict__ rstd_out, unsigned rows,
    unsigned hidden, float eps) {
  __shared__ float red[2 * MAX_WARPS];
  const unsigned row = blockIdx.x;
  if (row >= rows) return;
  const size_t base = (size_t)row * hidden;
  const float* xr = x + base;
  float* yr = y + base;
  const unsigned T = blockDim.x, t = threadIdx.x;
  float s1 = 0.0f, s2 = 0.0f;
  for (unsigned i = t; i < hidden; i += T) {
    const float v = xr[i];
    s1 = s1 + v;
    s2 = fmaf(v, v, s2);
  }
  const float2 s = block_sum2(s1, s2, red);
  const float mu = s.x / (float)hidden;
  const float var = s.y / (float)hidden - mu * mu;  // THE BUG: one-pass variance
  const float rs = 1.0f / sqrtf(var + eps);
  if (STATS && t == 0) {
    mean_out[row] = mu;
    rstd_out[row] = rs;
  }
  for (unsigned i = t; i < hidden; i += T) {
    yr[i] = fmaf((xr[i] - mu) * rs, gamma[i], beta[i]);
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
