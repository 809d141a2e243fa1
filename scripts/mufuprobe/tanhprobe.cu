// tanhprobe: tanh.approx.f32 over all 2^32 inputs, and the half-precision
// approximate instructions (ex2, tanh; .f16, .bf16) over all 2^16 inputs.
//
//   nvcc -O3 -arch=sm_90 -o tanhprobe tanhprobe.cu && ./tanhprobe OUTDIR
//
// It prints, over every input: how many break odd symmetry
// (tanh(−x) = −tanh(x), NaN payloads aside), the output of NaN, and per
// positive binade (biased exponent E) how many inputs give x itself, 1, or
// something else. It writes OUTDIR/tanh_E<E>.u32, the raw little-endian
// outputs of every positive binade with "something else" (2^23 each; for
// mufutables.py and mktables, which derives and checks the key of each
// binade), and OUTDIR/<op>_<type>.u16, the outputs of ex2.approx.f16,
// tanh.approx.f16, ex2.approx.ftz.bf16 and tanh.approx.bf16 for every
// 16-bit input. The .x2 forms are checked against them lane by lane.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <string>
#include <vector>
#define CK(e) do { cudaError_t err_ = (e); if (err_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1); } } while (0)
typedef unsigned long long u64;
__device__ __forceinline__ float tanhf_(float a) { float d; asm volatile("tanh.approx.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }
__global__ void k_eval(uint32_t* out) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x)
    out[i] = __float_as_uint(tanhf_(__uint_as_float((uint32_t)i)));
}
struct St { u64 odd, ident[256], one[256], other[256], nan; unsigned minOther, maxOther; };
__global__ void k_stat(const uint32_t* out, St* s) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 31); i += (u64)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i, o = out[x], on = out[x | 0x80000000u];
    bool nan = (x & 0x7fffffff) > 0x7f800000;
    if (nan) { if (o != on) atomicAdd(&s->odd, 1ull); atomicAdd(&s->nan, 1ull); continue; }
    if (on != (o ^ 0x80000000u)) atomicAdd(&s->odd, 1ull);
    unsigned e = x >> 23;
    if (o == x) atomicAdd(&s->ident[e], 1ull);
    else if (o == 0x3f800000u) atomicAdd(&s->one[e], 1ull);
    else { atomicAdd(&s->other[e], 1ull); atomicMin(&s->minOther, x); atomicMax(&s->maxOther, x); }
  }
}
#define H1(NAME, T, INS, C) __global__ void NAME(uint16_t* o) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= 65536) return; \
  unsigned short a = i, d; asm volatile(INS " %0, %1;" : "=h"(d) : "h"(a)); o[i] = d; }
H1(k_ex2h, __half, "ex2.approx.f16", 0)
H1(k_tanhh, __half, "tanh.approx.f16", 0)
H1(k_ex2b, __nv_bfloat16, "ex2.approx.ftz.bf16", 0)
H1(k_tanhb, __nv_bfloat16, "tanh.approx.bf16", 0)
// x2 forms: lane pairs (i, i*40503+7 mod 2^16); count disagreements with the scalar tables.
#define H2(NAME, INS) __global__ void NAME(const uint16_t* t, unsigned* bad) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= 65536) return; \
  unsigned j = (i * 40503u + 7u) & 0xffff; unsigned a = i | (j << 16), d; asm volatile(INS " %0, %1;" : "=r"(d) : "r"(a)); \
  if ((d & 0xffff) != t[i] || (d >> 16) != t[j]) atomicAdd(bad, 1u); }
H2(k_ex2h2, "ex2.approx.f16x2")
H2(k_tanhh2, "tanh.approx.f16x2")
H2(k_ex2b2, "ex2.approx.ftz.bf16x2")
H2(k_tanhb2, "tanh.approx.bf16x2")
static void put(const std::string& p, const void* d, size_t n) { FILE* f = fopen(p.c_str(), "wb"); fwrite(d, 1, n, f); fclose(f); }
int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: tanhprobe OUTDIR\n"); return 2; }
  std::string dir = argv[1];
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("tanhprobe on %s (sm_%d%d)\n", p.name, p.major, p.minor);
  uint32_t* dA; St* dS; CK(cudaMalloc(&dA, 4ull << 32)); CK(cudaMalloc(&dS, sizeof(St)));
  St s0 = {}; s0.minOther = ~0u; CK(cudaMemcpy(dS, &s0, sizeof s0, cudaMemcpyHostToDevice));
  k_eval<<<4096, 256>>>(dA); k_stat<<<4096, 256>>>(dA, dS); CK(cudaDeviceSynchronize());
  St s; CK(cudaMemcpy(&s, dS, sizeof s, cudaMemcpyDeviceToHost));
  printf("odd violations %llu, nan inputs %llu, other range %08x..%08x\n", s.odd, s.nan, s.minOther, s.maxOther);
  std::vector<uint32_t> nanOut(4); CK(cudaMemcpy(nanOut.data(), dA + 0x7fc00000u, 4, cudaMemcpyDeviceToHost));
  printf("tanh(0x7fc00000)=%08x\n", nanOut[0]);
  for (int e = 0; e < 256; e++) if (s.other[e] || s.one[e]) printf("E %3d ident %llu one %llu other %llu\n", e, s.ident[e], s.one[e], s.other[e]);
  std::vector<uint32_t> h(1u << 23);
  for (int e = 0; e < 255; e++) if (s.other[e]) {
    CK(cudaMemcpy(h.data(), dA + ((u64)e << 23), 4u << 23, cudaMemcpyDeviceToHost));
    char nm[64]; snprintf(nm, sizeof nm, "/tanh_E%03d.u32", e); put(dir + nm, h.data(), 4u << 23);
  }
  uint16_t* dh; unsigned* dbad; CK(cudaMalloc(&dh, 4 * 65536 * 2)); CK(cudaMalloc(&dbad, 16)); CK(cudaMemset(dbad, 0, 16));
  k_ex2h<<<256, 256>>>(dh); k_tanhh<<<256, 256>>>(dh + 65536); k_ex2b<<<256, 256>>>(dh + 2 * 65536); k_tanhb<<<256, 256>>>(dh + 3 * 65536);
  k_ex2h2<<<256, 256>>>(dh, dbad); k_tanhh2<<<256, 256>>>(dh + 65536, dbad + 1); k_ex2b2<<<256, 256>>>(dh + 2 * 65536, dbad + 2); k_tanhb2<<<256, 256>>>(dh + 3 * 65536, dbad + 3);
  CK(cudaDeviceSynchronize());
  std::vector<uint16_t> ht(4 * 65536); CK(cudaMemcpy(ht.data(), dh, ht.size() * 2, cudaMemcpyDeviceToHost));
  unsigned bad[4]; CK(cudaMemcpy(bad, dbad, 16, cudaMemcpyDeviceToHost));
  printf("x2 disagreements with scalar: ex2.f16x2 %u tanh.f16x2 %u ex2.ftz.bf16x2 %u tanh.bf16x2 %u\n", bad[0], bad[1], bad[2], bad[3]);
  const char* names[4] = {"ex2_f16", "tanh_f16", "ex2_bf16", "tanh_bf16"};
  for (int k = 0; k < 4; k++) put(dir + "/" + names[k] + ".u16", ht.data() + k * 65536, 65536 * 2);
  printf("done\n");
}
