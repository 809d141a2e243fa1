// End-to-end test kernels for the PTX emulator (cudart/emu).
// Regenerate: nvcc -ptx -arch=compute_70 -fmad=false -O3 kernels.cu -o kernels.ptx
#include <cuda_runtime.h>

// Block sum: shuffles within warps, shared memory across warps.
extern "C" __global__ void reduce_sum(const float* in, float* out, int n) {
  __shared__ float warp_sums[32];
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + 31) / 32 ? warp_sums[lane] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

// sinf of large arguments uses the Payne-Hanek path: a local array and
// the __cudart_i2opi_f global table.
extern "C" __global__ void sin_kernel(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sinf(in[i]);
}

// Data-dependent divergence, loops with different trip counts per lane, and
// a full-warp shuffle after reconvergence.
extern "C" __global__ void divergent(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int acc = 0;
  if (v % 3 == 0) {
    for (int k = 0; k < v % 7; k++) acc += k * v;
  } else if (v % 3 == 1) {
    acc = v;
    while (acc < 5000) acc = acc * 2 + 3;
  } else {
    switch (v & 3) {
      case 0: acc = 1; break;
      case 1: acc = v << 2; break;
      default: acc = v ^ 0x55;
    }
  }
  int left = __shfl_up_sync(0xffffffffu, acc, 1);
  if (i < n) out[i] = acc + ((threadIdx.x & 31) ? left : 0);
}

extern "C" __global__ void atomic_sum(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

// Element i is written by thread i, and elements below k a second time.
extern "C" __global__ void write_twice(float* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
  if (i < k) out[i] = 2 * i;
}

// Reverses each block's chunk through dynamic shared memory.
extern "C" __global__ void dyn_reverse(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) out[j] = buf[threadIdx.x];
}

// A per-thread array indexed dynamically lives in local memory.
extern "C" __global__ void local_array(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int a[16];
  for (int k = 0; k < 16; k++) a[k] = in[i] * k;
  out[i] = a[in[i] & 15] + a[(in[i] >> 4) & 15];
}

__device__ __noinline__ float axpy_one(float a, float x, float y) { return a * x + y; }

extern "C" __global__ void call_kernel(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = axpy_one(a, x[i], y[i]);
}

// __syncthreads_count / _and / _or.
extern "C" __global__ void bar_red(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  int c = __syncthreads_count(v > 0);
  int a = __syncthreads_and(v > 0);
  int o = __syncthreads_or(v > 0);
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = c;
    out[3 * blockIdx.x + 1] = a;
    out[3 * blockIdx.x + 2] = o;
  }
}

// Threads past n return before the barrier: exited threads count as arrived.
extern "C" __global__ void early_exit(const float* in, float* out, int n) {
  __shared__ float s[256];
  int i = threadIdx.x;
  if (i >= n) return;
  s[i] = in[i];
  __syncthreads();
  out[i] = s[n - 1 - i];
}

// A 2D launch: out[y][x] = x + 1000*y + blockIdx.z.
extern "C" __global__ void grid2d(int* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = x + 1000 * y + blockIdx.z;
}

// RMSNorm backward, one warp per row: the benchmark kernel.
extern "C" __global__ void rmsnorm_bwd(const float* __restrict__ x, const float* __restrict__ g,
                                       const float* __restrict__ dy, float* __restrict__ dx,
                                       int rows, int hidden, float eps) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * hidden;
  const float* dyr = dy + (size_t)row * hidden;
  float ss = 0.f, dot = 0.f;
  for (int i = lane; i < hidden; i += 32) {
    float v = xr[i];
    ss += v * v;
    dot += v * dyr[i] * g[i];
  }
  for (int o = 16; o > 0; o >>= 1) {
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
    dot += __shfl_xor_sync(0xffffffffu, dot, o);
  }
  float r = rsqrtf(ss / hidden + eps);
  float c = r * r * r * dot / hidden;
  for (int i = lane; i < hidden; i += 32) dx[(size_t)row * hidden + i] = r * g[i] * dyr[i] - c * xr[i];
}

// Producer/consumer with named barriers: warp 0 writes and arrives at
// barrier 1 (64 threads), warp 1 waits there and reads.
extern "C" __global__ void named_barrier(int* out) {
  __shared__ int s[32];
  int lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
    s[lane] = lane * lane;
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    out[lane] = s[31 - lane];
  }
}

// Each block takes a ticket: the order in which blocks ran.
extern "C" __global__ void block_order(unsigned* counter, unsigned* order) {
  if (threadIdx.x == 0) order[blockIdx.x] = atomicAdd(counter, 1u);
}
