// RMSNorm forward in CUDA C, written in a style unlike ptxprop's own
// kernels, as a foreign test kernel: output first, 64-bit row strides,
// const __restrict__ inputs, one 256-thread block per row, warp shuffles
// then shared memory across the 8 warps, rsqrtf.
//
//   inv_rms[r] = rsqrt(mean_j in[r][j]^2 + epsilon)
//   out[r][j]  = in[r][j] * inv_rms[r] * weight[j]
#define RMS_THREADS 256

extern "C" __global__ void __launch_bounds__(RMS_THREADS)
rms_norm_f32(float* __restrict__ out, float* __restrict__ inv_rms,
             const float* __restrict__ in, const float* __restrict__ weight,
             float epsilon, int cols, long long in_stride, long long out_stride)
{
    __shared__ float warp_sums[RMS_THREADS / 32];
    __shared__ float row_scale;
    const long long row = blockIdx.x;
    const float* src = in + row * in_stride;
    float* dst = out + row * out_stride;

    float ss = 0.0f;
    for (int j = threadIdx.x; j < cols; j += RMS_THREADS) {
        float v = src[j];
        ss = fmaf(v, v, ss);
    }
    for (int off = 16; off > 0; off >>= 1)
        ss += __shfl_xor_sync(0xffffffffu, ss, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = ss;
    __syncthreads();
    if (warp == 0) {
        float t = lane < RMS_THREADS / 32 ? warp_sums[lane] : 0.0f;
        for (int off = 4; off > 0; off >>= 1)
            t += __shfl_down_sync(0xffffffffu, t, off);
        if (lane == 0) {
            float s = rsqrtf(t / (float)cols + epsilon);
            row_scale = s;
            inv_rms[row] = s;
        }
    }
    __syncthreads();
    const float s = row_scale;
    for (int j = threadIdx.x; j < cols; j += RMS_THREADS)
        dst[j] = src[j] * s * weight[j];
}
