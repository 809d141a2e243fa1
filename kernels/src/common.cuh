// common.cuh — helpers shared by every ptxprop kernel family.
//
// Conventions for every kernel in kernels/src:
//   * Tensors are row-major float32: [rows][hidden], or [rows][heads*head_dim].
//   * Every dimension, eps and theta is a kernel parameter; nothing about a
//     shape is a compile-time constant. The only constants are launch
//     capacities (threads per block, warps per block, the shared-memory
//     accumulator capacity), which the Go descriptors use too.
//   * Reductions have a fixed order that depends only on the shape and the
//     launch geometry, which is itself a function of the shape only: results
//     are bit-identical from launch to launch, on every GPU and on the
//     emulator. No floating-point atomics anywhere.
//   * Compiled with -fmad=false: a*b+c is a rounded multiply then a rounded
//     add. Every fused multiply-add is an explicit fmaf().
//   * "u" below is the float32 unit roundoff 2^-24.
#pragma once

#include <stdint.h>

#define FULL_MASK 0xffffffffu
#define MAX_WARPS 8    // block sizes are at most 256 threads
#define MAX_THREADS 256

// aligned16 reports whether p is 16-byte aligned (a float4 load is legal).
__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// warp_sum returns the sum of v over the 32 lanes of the warp, the same bits
// in every lane. Butterfly of depth 5: at level k = 16, 8, 4, 2, 1 each lane
// adds the value of lane (lane ^ k). Float addition is commutative, so lanes
// l and l^k compute the same rounded sum and every lane ends identical.
// The loop runs over the warp width, never over a tensor dimension: lanes
// without data contribute +0.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int k = 16; k >= 1; k >>= 1) v = v + __shfl_xor_sync(FULL_MASK, v, k);
  return v;
}

// tree8 sums s[0..7] as ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)): depth 3.
__device__ __forceinline__ float tree8(float s0, float s1, float s2, float s3,
                                       float s4, float s5, float s6, float s7) {
  return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

// block_sum returns the sum of v over the block, the same bits in every
// thread. blockDim.x must be a multiple of 32 and at most 256 (W <= 8 warps).
// Order: warp_sum (depth 5), then lane 0 of warp w stores its sum in red[w];
// after a barrier every thread reads the W warp sums (missing warps read as
// +0) and combines them with tree8 (depth 3). Total tree depth 8 on top of
// each thread's serial sum. Ends with a barrier so red may be reused at once.
// Every thread of the block must call it (it contains __syncthreads).
__device__ __forceinline__ float block_sum(float v, float* red) {
  v = warp_sum(v);
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  const unsigned nw = blockDim.x >> 5;
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float s[MAX_WARPS];
#pragma unroll
  for (unsigned w = 0; w < MAX_WARPS; ++w) s[w] = w < nw ? red[w] : 0.0f;
  const float r = tree8(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
  __syncthreads();
  return r;
}

// block_sum2 is block_sum for two independent values at once (same order
// for each); red must hold 2*MAX_WARPS floats.
__device__ __forceinline__ float2 block_sum2(float a, float b, float* red) {
  a = warp_sum(a);
  b = warp_sum(b);
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  const unsigned nw = blockDim.x >> 5;
  if (lane == 0) {
    red[warp] = a;
    red[MAX_WARPS + warp] = b;
  }
  __syncthreads();
  float s[MAX_WARPS], t[MAX_WARPS];
#pragma unroll
  for (unsigned w = 0; w < MAX_WARPS; ++w) {
    s[w] = w < nw ? red[w] : 0.0f;
    t[w] = w < nw ? red[MAX_WARPS + w] : 0.0f;
  }
  float2 r;
  r.x = tree8(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
  r.y = tree8(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
  __syncthreads();
  return r;
}
