// Warp-level primitives for the PTX emulator tests.
// Regenerate: nvcc -ptx -arch=compute_80 -fmad=false -O3 warp.cu -o warp.ptx
#include <cuda_runtime.h>

// Each shuffle flavour with a runtime width (segments of width lanes).
// out has 8 ints per thread.
extern "C" __global__ void shfl_modes(const int* in, int* out, int delta, int src, int width, unsigned mask) {
  int t = threadIdx.x;
  int v = in[t];
  int* o = out + 8 * t;
  if ((mask >> (t & 31)) & 1) {
    o[0] = __shfl_sync(mask, v, src, width);
    o[1] = __shfl_up_sync(mask, v, delta, width);
    o[2] = __shfl_down_sync(mask, v, delta, width);
    o[3] = __shfl_xor_sync(mask, v, delta, width);
  }
}

// Raw shfl.sync with explicit b and c operands: d and the predicate.
extern "C" __global__ void shfl_raw(const int* in, int* out, int b, int c) {
  int t = threadIdx.x, v = in[t], r, p;
  asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, %3, %4, -1; selp.b32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(b), "r"(c));
  out[8 * t + 0] = r; out[8 * t + 1] = p;
  asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, %3, %4, -1; selp.b32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(b), "r"(c));
  out[8 * t + 2] = r; out[8 * t + 3] = p;
  asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, %3, %4, -1; selp.b32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(b), "r"(c));
  out[8 * t + 4] = r; out[8 * t + 5] = p;
  asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, %3, %4, -1; selp.b32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(b), "r"(c));
  out[8 * t + 6] = r; out[8 * t + 7] = p;
}

// Votes inside a divergent branch: lanes with in[t] >= 0 vote on in[t] > k.
extern "C" __global__ void votes(const int* in, unsigned* out, int k) {
  int t = threadIdx.x;
  unsigned m = __activemask();
  if (in[t] >= 0) {
    unsigned g = __activemask();
    bool p = in[t] > k;
    out[8 * t + 0] = __ballot_sync(g, p);
    out[8 * t + 1] = __all_sync(g, p);
    out[8 * t + 2] = __any_sync(g, p);
    out[8 * t + 3] = __uni_sync(g, p);
    out[8 * t + 4] = g;
  }
  out[8 * t + 5] = m;
  out[8 * t + 6] = __match_any_sync(0xffffffffu, in[t] & 3);
  int pred;
  out[8 * t + 7] = __match_all_sync(0xffffffffu, in[t] & 1, &pred) | (pred ? 0x100 : 0);
}

// Lanes reach a full-warp shuffle from two different instructions.
extern "C" __global__ void shfl_divergent(const int* in, int* out) {
  int t = threadIdx.x, v = in[t], r;
  if (t & 1)
    r = __shfl_sync(0xffffffffu, v * 10, 0);
  else
    r = __shfl_sync(0xffffffffu, v * 100, 3);
  out[t] = r;
}

// Lanes 16-31 have exited; lanes 0-15 shuffle with a full mask.
extern "C" __global__ void shfl_after_exit(const int* in, int* out) {
  int t = threadIdx.x;
  if (t >= 16) return;
  out[t] = __shfl_xor_sync(0xffffffffu, in[t], 1);
}

// Reduction with redux.sync (sm_80) written as inline PTX.
extern "C" __global__ void redux(const int* in, int* out) {
  int t = threadIdx.x, v = in[t], s, mn, mx;
  asm volatile("redux.sync.add.s32 %0, %1, -1;" : "=r"(s) : "r"(v));
  asm volatile("redux.sync.min.s32 %0, %1, -1;" : "=r"(mn) : "r"(v));
  asm volatile("redux.sync.max.s32 %0, %1, -1;" : "=r"(mx) : "r"(v));
  out[3 * t] = s; out[3 * t + 1] = mn; out[3 * t + 2] = mx;
}

// After a divergent if/else and a loop with per-lane trip counts the lanes
// run together again: __activemask() is the full warp.
extern "C" __global__ void reconverge(const int* in, unsigned* out) {
  int t = threadIdx.x, v = in[t];
  if (v & 1) {
    v = v * 3 + 1;
  } else {
    v >>= 1;
  }
  unsigned m1 = __activemask();
  for (int i = 0; i < (v & 7); i++) v += i * t;
  unsigned m2 = __activemask();
  out[3 * t] = m1;
  out[3 * t + 1] = m2;
  out[3 * t + 2] = v;
}
