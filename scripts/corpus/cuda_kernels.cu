// cuda_kernels.cu — CUDA C kernels in the styles common in the field, compiled only to
// collect the PTX nvcc 13 emits for sm_90 (scripts/corpus/nvcc_corpus.sh). Not launched.
//
// rmsnorm_warp_rsqrtf     one warp per row, __shfl_xor_sync reduction, rsqrtf
// rmsnorm_float4          one block per row, float4 loads/stores when aligned, rsqrtf
// layernorm_fdividef      one block per row, block reduction in shared memory,
//                         __fdividef for the means and 1/sqrtf(var+eps)
// softmax_fast_expf       one block per row, __expf
// softmax_expf            one block per row, expf, and 1.0f/sum
// rope_neox_fast_sincos   NeoX RoPE in place, powf for inv_freq, __sinf/__cosf
// rope_neox_sincosf       NeoX RoPE in place, exp2f/log2f for inv_freq, sincosf
// layernorm_bwd_dgamma_atomic  dx per row and atomicAdd(float) into dgamma/dbeta
// rowsum_reduce_sync      integer count with __reduce_add_sync and a float sum
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define FULL 0xffffffffu

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

// block_sum: every thread gets the sum over the block (blockDim.x a multiple of 32, <= 1024).
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float s[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) s[warp] = v;
    __syncthreads();
    const int nw = blockDim.x >> 5;
    v = (threadIdx.x < nw) ? s[threadIdx.x] : 0.0f;
    if (warp == 0) v = warp_sum(v);
    if (threadIdx.x == 0) s[0] = v;
    __syncthreads();
    return s[0];
}

__device__ __forceinline__ float block_max(float v) {
    __shared__ float s[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) s[warp] = v;
    __syncthreads();
    const int nw = blockDim.x >> 5;
    v = (threadIdx.x < nw) ? s[threadIdx.x] : -INFINITY;
    if (warp == 0) v = warp_max(v);
    if (threadIdx.x == 0) s[0] = v;
    __syncthreads();
    return s[0];
}

// One warp per row: blockDim = (32, warps_per_block).
extern "C" __global__ void rmsnorm_warp_rsqrtf(float* __restrict__ y, const float* __restrict__ x,
                                               const float* __restrict__ w, int rows, int n,
                                               float eps) {
    const int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * n;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < n; j += 32) ss += xr[j] * xr[j];
    ss = warp_sum(ss);
    const float r = rsqrtf(ss / n + eps);
    for (int j = threadIdx.x; j < n; j += 32) y[(size_t)row * n + j] = xr[j] * r * w[j];
}

extern "C" __global__ void rmsnorm_float4(float* __restrict__ y, const float* __restrict__ x,
                                          const float* __restrict__ w, int n, float eps) {
    const size_t base = (size_t)blockIdx.x * n;
    const float* xr = x + base;
    float* yr = y + base;
    const bool vec = (n % 4 == 0) && (((uintptr_t)xr | (uintptr_t)yr | (uintptr_t)w) % 16 == 0);
    float ss = 0.0f;
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        for (int j = threadIdx.x; j < n / 4; j += blockDim.x) {
            const float4 v = x4[j];
            ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
    } else {
        for (int j = threadIdx.x; j < n; j += blockDim.x) ss += xr[j] * xr[j];
    }
    const float r = rsqrtf(block_sum(ss) / n + eps);
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const float4* w4 = reinterpret_cast<const float4*>(w);
        float4* y4 = reinterpret_cast<float4*>(yr);
        for (int j = threadIdx.x; j < n / 4; j += blockDim.x) {
            const float4 v = __ldg(&x4[j]);
            const float4 g = __ldg(&w4[j]);
            y4[j] = make_float4(v.x * r * g.x, v.y * r * g.y, v.z * r * g.z, v.w * r * g.w);
        }
    } else {
        for (int j = threadIdx.x; j < n; j += blockDim.x) yr[j] = xr[j] * r * w[j];
    }
}

extern "C" __global__ void layernorm_fdividef(float* __restrict__ y, float* __restrict__ mean_out,
                                              float* __restrict__ rstd_out,
                                              const float* __restrict__ x,
                                              const float* __restrict__ w,
                                              const float* __restrict__ b, int n, float eps) {
    const float* xr = x + (size_t)blockIdx.x * n;
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];
    const float mean = __fdividef(block_sum(s), (float)n);
    float v = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const float d = xr[j] - mean;
        v += d * d;
    }
    const float var = __fdividef(block_sum(v), (float)n);
    const float rstd = __fdividef(1.0f, sqrtf(var + eps));
    if (threadIdx.x == 0) {
        mean_out[blockIdx.x] = mean;
        rstd_out[blockIdx.x] = rstd;
    }
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        y[(size_t)blockIdx.x * n + j] = (xr[j] - mean) * rstd * w[j] + b[j];
}

extern "C" __global__ void softmax_fast_expf(float* __restrict__ y, const float* __restrict__ x,
                                             int n) {
    const float* xr = x + (size_t)blockIdx.x * n;
    float* yr = y + (size_t)blockIdx.x * n;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_max(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) s += __expf(xr[j] - m);
    s = block_sum(s);
    for (int j = threadIdx.x; j < n; j += blockDim.x) yr[j] = __fdividef(__expf(xr[j] - m), s);
}

extern "C" __global__ void softmax_expf(float* __restrict__ y, const float* __restrict__ x, int n) {
    const float* xr = x + (size_t)blockIdx.x * n;
    float* yr = y + (size_t)blockIdx.x * n;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_max(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) s += expf(xr[j] - m);
    const float inv = 1.0f / block_sum(s);
    for (int j = threadIdx.x; j < n; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
}

// q[seq][heads][head_dim], grid (seq), block covers heads*half pairs.
extern "C" __global__ void rope_neox_fast_sincos(float* __restrict__ q, const int* __restrict__ pos,
                                                 int heads, int head_dim, float theta) {
    const int s = blockIdx.x, half = head_dim / 2;
    const float p = (float)pos[s];
    for (int t = threadIdx.x; t < heads * half; t += blockDim.x) {
        const int h = t / half, i = t % half;
        const float inv_freq = powf(theta, -2.0f * i / head_dim);
        const float a = p * inv_freq;
        const float c = __cosf(a), sn = __sinf(a);
        float* qh = q + ((size_t)s * heads + h) * head_dim;
        const float x1 = qh[i], x2 = qh[i + half];
        qh[i] = x1 * c - x2 * sn;
        qh[i + half] = x2 * c + x1 * sn;
    }
}

extern "C" __global__ void rope_neox_sincosf(float* __restrict__ q, const int* __restrict__ pos,
                                             int heads, int head_dim, float theta) {
    const int s = blockIdx.x, half = head_dim / 2;
    const float p = (float)pos[s];
    const float l2t = log2f(theta);
    for (int t = threadIdx.x; t < heads * half; t += blockDim.x) {
        const int h = t / half, i = t % half;
        const float inv_freq = exp2f(-(2.0f * i / head_dim) * l2t);
        float sn, c;
        sincosf(p * inv_freq, &sn, &c);
        float* qh = q + ((size_t)s * heads + h) * head_dim;
        const float x1 = qh[i], x2 = qh[i + half];
        qh[i] = x1 * c - x2 * sn;
        qh[i + half] = x2 * c + x1 * sn;
    }
}

extern "C" __global__ void layernorm_bwd_dgamma_atomic(float* __restrict__ dx,
                                                       float* __restrict__ dgamma,
                                                       float* __restrict__ dbeta,
                                                       const float* __restrict__ dy,
                                                       const float* __restrict__ x,
                                                       const float* __restrict__ w,
                                                       const float* __restrict__ mean,
                                                       const float* __restrict__ rstd, int n) {
    const size_t base = (size_t)blockIdx.x * n;
    const float mu = mean[blockIdx.x], r = rstd[blockIdx.x];
    float c1 = 0.0f, c2 = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const float xh = (x[base + j] - mu) * r, wdy = w[j] * dy[base + j];
        c1 += xh * wdy;
        c2 += wdy;
        atomicAdd(&dgamma[j], dy[base + j] * xh);
        atomicAdd(&dbeta[j], dy[base + j]);
    }
    c1 = block_sum(c1) / n;
    c2 = block_sum(c2) / n;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const float xh = (x[base + j] - mu) * r, wdy = w[j] * dy[base + j];
        dx[base + j] = (wdy - (xh * c1 + c2)) * r;
    }
}

extern "C" __global__ void rowsum_reduce_sync(float* __restrict__ sums, int* __restrict__ nonzero,
                                              const float* __restrict__ x, int n) {
    const float* xr = x + (size_t)blockIdx.x * n;
    float s = 0.0f;
    unsigned cnt = 0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        s += xr[j];
        cnt += xr[j] != 0.0f;
    }
    cnt = __reduce_add_sync(FULL, cnt);
    s = block_sum(s);
    if ((threadIdx.x & 31) == 0) atomicAdd(&nonzero[blockIdx.x], (int)cnt);
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
}
