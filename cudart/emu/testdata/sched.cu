// Kernels for the CTA schedule and cross-CTA memory ordering tests
// (sched_test.go). Compiled with: nvcc -ptx -arch=compute_70 sched.cu -o sched.ptx

__device__ __forceinline__ int cas_acquire(int* p, int cmp, int val) {
  int old;
  asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(cmp), "r"(val) : "memory");
  return old;
}

__device__ __forceinline__ int exch_release(int* p, int val) {
  int old;
  asm volatile("atom.release.gpu.global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(val) : "memory");
  return old;
}

__device__ __forceinline__ int ld_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void st_release(int* p, int v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void st_relaxed(int* p, int v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ int ld_relaxed(const int* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// add_row adds block blockIdx.x's row of x into partial row g, or stores it
// there when counts[g] says the row holds nothing yet: the work of every
// *_accum kernel, inside its lock or without one.
__device__ __forceinline__ void add_row(const int* counts, float* partial, const float* x, int n, int g) {
  int first = counts[g] == 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float v = x[blockIdx.x * n + i];
    partial[g * n + i] = first ? v : partial[g * n + i] + v;
  }
}

// Block b adds its row of x into partial row b % groups (add_row) under that
// group's spin lock (acquire CAS, release exchange).
extern "C" __global__ void lock_accum(int* locks, int* counts, float* partial, const float* x, int n, int groups) {
  int g = blockIdx.x % groups;
  if (threadIdx.x == 0) {
    while (cas_acquire(&locks[g], 0, 1) != 0) {
    }
  }
  __syncthreads();
  add_row(counts, partial, x, n, g);
  __syncthreads();
  if (threadIdx.x == 0) {
    counts[g] = 1;
    exch_release(&locks[g], 0);
  }
}

// lock_accum with relaxed atomics and fences (the __threadfence pattern).
extern "C" __global__ void lock_fence_accum(int* locks, int* counts, float* partial, const float* x, int n, int groups) {
  int g = blockIdx.x % groups;
  if (threadIdx.x == 0) {
    while (atomicCAS(&locks[g], 0, 1) != 0) {
    }
    __threadfence();
  }
  __syncthreads();
  add_row(counts, partial, x, n, g);
  __syncthreads();
  if (threadIdx.x == 0) {
    counts[g] = 1;
    __threadfence();
    atomicExch(&locks[g], 0);
  }
}

// lock_accum without the lock: a cross-block race.
extern "C" __global__ void nolock_accum(int* locks, int* counts, float* partial, const float* x, int n, int groups) {
  int g = blockIdx.x % groups;
  add_row(counts, partial, x, n, g);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicExch(&counts[g], 1);
  }
}

// lock_accum whose lock releases nothing: the exchange is relaxed and no
// fence precedes it, so the next holder's stores race with this one's.
extern "C" __global__ void lock_relaxed_accum(int* locks, int* counts, float* partial, const float* x, int n, int groups) {
  int g = blockIdx.x % groups;
  if (threadIdx.x == 0) {
    while (cas_acquire(&locks[g], 0, 1) != 0) {
    }
  }
  __syncthreads();
  add_row(counts, partial, x, n, g);
  __syncthreads();
  if (threadIdx.x == 0) {
    counts[g] = 1;
    atomicExch(&locks[g], 0);
  }
}

// Block 0 waits for a flag that the last block sets after writing data,
// then updates data: ld.acquire / st.release order the two stores.
extern "C" __global__ void wait_later(int* flag, int* data, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (ld_acquire(flag) == 0) {
    }
    out[0] = data[0];
    data[0] += 1;
  } else if (blockIdx.x == gridDim.x - 1) {
    data[0] = 42;
    st_release(flag, 1);
  }
}

// wait_later with relaxed accesses and fences.
extern "C" __global__ void wait_later_fence(int* flag, int* data, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (ld_relaxed(flag) == 0) {
    }
    __threadfence();
    out[0] = data[0];
    data[0] += 1;
  } else if (blockIdx.x == gridDim.x - 1) {
    data[0] = 42;
    __threadfence();
    st_relaxed(flag, 1);
  }
}

// wait_later with relaxed accesses and no fence: the stores to data race.
extern "C" __global__ void wait_later_weak(int* flag, int* data, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (ld_relaxed(flag) == 0) {
    }
    out[0] = data[0];
    data[0] += 1;
  } else if (blockIdx.x == gridDim.x - 1) {
    data[0] = 42;
    st_relaxed(flag, 1);
  }
}

// Blocks take tasks from a shared counter until none is left; owner[t] is
// the block that took task t.
extern "C" __global__ void steal(int* counter, int* owner, int ntasks) {
  __shared__ int t;
  for (;;) {
    if (threadIdx.x == 0) t = atomicAdd(counter, 1);
    __syncthreads();
    int task = t;
    __syncthreads();
    if (task >= ntasks) break;
    if (threadIdx.x == 0) owner[task] = blockIdx.x;
  }
}

// Each block adds its element of x to *out with a float atomic.
extern "C" __global__ void atomic_fsum(const float* x, float* out) {
  if (threadIdx.x == 0) atomicAdd(out, x[blockIdx.x]);
}

// Every block takes the lock and none releases it: all but the first spin
// forever.
extern "C" __global__ void lock_leak(int* lock, int* out) {
  if (threadIdx.x == 0) {
    while (cas_acquire(lock, 0, 1) != 0) {
    }
    out[blockIdx.x] = 1;
  }
}

// Loops, changing memory, until a flag that nobody sets: no deadlock the
// emulator can see, so only an instruction budget or a watchdog ends it.
extern "C" __global__ void busy(volatile int* flag, int* out) {
  int i = 0;
  while (*flag == 0) {
    out[threadIdx.x] = ++i;
  }
}

// Takes group g's lock the way generated code often does: thread 0 tries,
// the block learns the outcome through shared memory and a barrier.
__device__ void lock_block(int* lock) {
  __shared__ int old;
  for (;;) {
    if (threadIdx.x == 0) old = cas_acquire(lock, 0, 1);
    __syncthreads();
    int o = old;
    __syncthreads();
    if (o == 0) break;
  }
}

// lock_accum with the block-wide lock loop of lock_block.
extern "C" __global__ void lock_block_accum(int* locks, int* counts, float* partial, const float* x, int n, int groups) {
  int g = blockIdx.x % groups;
  lock_block(&locks[g]);
  add_row(counts, partial, x, n, g);
  __syncthreads();
  if (threadIdx.x == 0) {
    counts[g] = 1;
    exch_release(&locks[g], 0);
  }
}

// lock_leak with the block-wide lock loop.
extern "C" __global__ void lock_block_leak(int* lock, int* out) {
  lock_block(lock);
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}

// lock_accum with a CTA-scoped lock: it orders nothing between blocks.
extern "C" __global__ void lock_cta_accum(int* locks, int* counts, float* partial, const float* x, int n, int groups) {
  int g = blockIdx.x % groups;
  if (threadIdx.x == 0) {
    int old;
    do {
      asm volatile("atom.acquire.cta.global.cas.b32 %0, [%1], 0, 1;" : "=r"(old) : "l"(&locks[g]) : "memory");
    } while (old != 0);
  }
  __syncthreads();
  add_row(counts, partial, x, n, g);
  __syncthreads();
  if (threadIdx.x == 0) {
    counts[g] = 1;
    asm volatile("atom.release.cta.global.exch.b32 _, [%0], 0;" : : "l"(&locks[g]) : "memory");
  }
}
