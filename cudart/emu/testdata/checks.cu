// Kernels with bugs that a GPU hides and the emulator must report.
// Regenerate: nvcc -ptx -arch=compute_70 -fmad=false -O3 checks.cu -o checks.ptx
#include <cuda_runtime.h>

// __syncthreads inside a divergent branch: threads below 16 wait at the
// first barrier, the others at the second; neither can complete.
extern "C" __global__ void deadlock_bar(float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x < 16) {
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x ^ 1];
  } else {
    out[threadIdx.x] = 1.f;
  }
  __syncthreads();
  out[threadIdx.x] += s[63 - threadIdx.x];
}

// Lanes 16-31 wait in a full-warp shuffle for lanes 0-15, which wait at a
// barrier for lanes 16-31.
extern "C" __global__ void deadlock_shfl(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    v = __shfl_sync(0xffffffffu, v, 0);
  }
  out[threadIdx.x] = v;
}

// Off by one: writes out[n].
extern "C" __global__ void oob_write(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.f;
}

// Reads in[-1].
extern "C" __global__ void oob_read(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i - 1];
}

// Shared array overrun into the next shared variable.
extern "C" __global__ void oob_shared(const int* idx, int* out) {
  __shared__ int a[32];
  __shared__ int b[32];
  a[threadIdx.x] = threadIdx.x;
  b[threadIdx.x] = -1;
  __syncthreads();
  out[threadIdx.x] = a[idx[threadIdx.x]] + b[threadIdx.x];
}

// Missing __syncthreads: warp 1 reads what warp 0 writes.
extern "C" __global__ void race_missing_sync(const float* in, float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = s[(threadIdx.x + 32) & 63];
}

// The same exchange with the barrier: no race.
extern "C" __global__ void race_fixed(const float* in, float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 32) & 63];
}

// Lanes of one warp exchange through shared memory; with sync=1 a
// __syncwarp orders them.
extern "C" __global__ void warp_exchange(const float* in, float* out, int sync) {
  __shared__ float s[32];
  s[threadIdx.x] = in[threadIdx.x];
  if (sync) __syncwarp();
  out[threadIdx.x] = s[threadIdx.x ^ 1];
}

// Every lane stores its own id to one shared word: lanes of one instruction
// write different values.
extern "C" __global__ void lockstep_conflict(int* out, int same) {
  __shared__ int s;
  s = same ? 7 : (int)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s;
}

// Every block stores to out[0].
extern "C" __global__ void cross_block_write(int* out) {
  if (threadIdx.x == 0) out[0] = blockIdx.x;
}

// Every block adds to out[0] atomically: no race.
extern "C" __global__ void cross_block_atomic(int* out) {
  if (threadIdx.x == 0) atomicAdd(out, (int)blockIdx.x);
}

// Reads shared memory no thread wrote.
extern "C" __global__ void uninit_shared(float* out) {
  __shared__ float s[64];
  if (threadIdx.x < 32) s[threadIdx.x] = 1.f;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}

// Spins until a flag that nobody sets.
extern "C" __global__ void spin(volatile int* flag, int* out) {
  while (*flag == 0) {
  }
  out[threadIdx.x] = 1;
}

// The compiler loads red[w] for every w < 8 and discards the values of
// missing warps with a select: not an uninitialised read.
extern "C" __global__ void speculative_load(float* out) {
  __shared__ float red[8];
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = 1.0f + (threadIdx.x >> 5);
  __syncthreads();
  unsigned nw = blockDim.x >> 5;
  float s = 0.f;
#pragma unroll
  for (unsigned w = 0; w < 8; w++) s += w < nw ? red[w] : 0.0f;
  out[threadIdx.x] = s;
}

// Branches on shared memory nobody wrote.
extern "C" __global__ void uninit_branch(int* out) {
  __shared__ int s[64];
  __syncthreads();
  if (s[threadIdx.x] > 0) out[threadIdx.x] = 1;
}

// Reads a local array element that was never written.
extern "C" __global__ void uninit_local(const int* idx, int* out) {
  int a[8];
  for (int k = 0; k < 4; k++) a[k] = k;
  out[threadIdx.x] = a[idx[threadIdx.x] & 7];
}
