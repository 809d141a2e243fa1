// cuda_atomic_v4.cu — dgamma accumulation with the sm_90 vector float atomics
// (atomicAdd on float4/float2, CUDA 12.1+, compute capability 9.x, global memory).
// Kept apart from cuda_kernels.cu so that a toolkit without them fails only this file.
#include <cuda_runtime.h>

extern "C" __global__ void dgamma_atomic_float4(float* __restrict__ dgamma,
                                                const float* __restrict__ dy,
                                                const float* __restrict__ xhat, int n) {
    const size_t base = (size_t)blockIdx.x * n;
    const float4* dy4 = reinterpret_cast<const float4*>(dy + base);
    const float4* xh4 = reinterpret_cast<const float4*>(xhat + base);
    for (int j = threadIdx.x; j < n / 4; j += blockDim.x) {
        const float4 a = dy4[j], b = xh4[j];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDACC_VER_MAJOR__ >= 12
        atomicAdd(reinterpret_cast<float4*>(dgamma) + j,
                  make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w));
#else
        atomicAdd(&dgamma[4 * j + 0], a.x * b.x);
        atomicAdd(&dgamma[4 * j + 1], a.y * b.y);
        atomicAdd(&dgamma[4 * j + 2], a.z * b.z);
        atomicAdd(&dgamma[4 * j + 3], a.w * b.w);
#endif
    }
}

extern "C" __global__ void dgamma_atomic_float2(float* __restrict__ dgamma,
                                                const float* __restrict__ dy,
                                                const float* __restrict__ xhat, int n) {
    const size_t base = (size_t)blockIdx.x * n;
    const float2* dy2 = reinterpret_cast<const float2*>(dy + base);
    const float2* xh2 = reinterpret_cast<const float2*>(xhat + base);
    for (int j = threadIdx.x; j < n / 2; j += blockDim.x) {
        const float2 a = dy2[j], b = xh2[j];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDACC_VER_MAJOR__ >= 12
        atomicAdd(reinterpret_cast<float2*>(dgamma) + j, make_float2(a.x * b.x, a.y * b.y));
#else
        atomicAdd(&dgamma[2 * j + 0], a.x * b.x);
        atomicAdd(&dgamma[2 * j + 1], a.y * b.y);
#endif
    }
}
