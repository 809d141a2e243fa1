// Arithmetic test kernels: rounding modes, conversions, integer and
// approximate instructions, each result compared bit for bit with a Go
// reference.
// Regenerate: nvcc -ptx -arch=compute_70 -fmad=false -O3 arith.cu -o arith.ptx
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define F32_OPS 28
// out[F32_OPS*i + k]: fma, add, mul, div, sqrt, rcp, sub in rn, rz, rm, rp.
extern "C" __global__ void f32_ops(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  float* o = out + F32_OPS * i;
  o[0] = __fmaf_rn(x, y, z); o[1] = __fmaf_rz(x, y, z); o[2] = __fmaf_rd(x, y, z); o[3] = __fmaf_ru(x, y, z);
  o[4] = __fadd_rn(x, y); o[5] = __fadd_rz(x, y); o[6] = __fadd_rd(x, y); o[7] = __fadd_ru(x, y);
  o[8] = __fmul_rn(x, y); o[9] = __fmul_rz(x, y); o[10] = __fmul_rd(x, y); o[11] = __fmul_ru(x, y);
  o[12] = __fdiv_rn(x, y); o[13] = __fdiv_rz(x, y); o[14] = __fdiv_rd(x, y); o[15] = __fdiv_ru(x, y);
  o[16] = __fsqrt_rn(x); o[17] = __fsqrt_rz(x); o[18] = __fsqrt_rd(x); o[19] = __fsqrt_ru(x);
  o[20] = __frcp_rn(x); o[21] = __frcp_rz(x); o[22] = __frcp_rd(x); o[23] = __frcp_ru(x);
  float s;
  asm("sub.rn.f32 %0, %1, %2;" : "=f"(s) : "f"(x), "f"(y)); o[24] = s;
  asm("sub.rz.f32 %0, %1, %2;" : "=f"(s) : "f"(x), "f"(y)); o[25] = s;
  asm("sub.rm.f32 %0, %1, %2;" : "=f"(s) : "f"(x), "f"(y)); o[26] = s;
  asm("sub.rp.f32 %0, %1, %2;" : "=f"(s) : "f"(x), "f"(y)); o[27] = s;
}

// The same operations with .ftz (and .sat on fma).
extern "C" __global__ void f32_ftz(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i], r;
  float* o = out + 6 * i;
  asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(y), "f"(z)); o[0] = r;
  asm("add.rz.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[1] = r;
  asm("mul.rm.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[2] = r;
  asm("div.rp.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[3] = r;
  asm("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(y), "f"(z)); o[4] = r;
  asm("sqrt.rn.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); o[5] = r;
}

#define F64_OPS 20
extern "C" __global__ void f64_ops(const double* a, const double* b, const double* c, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i], z = c[i];
  double* o = out + F64_OPS * i;
  o[0] = __fma_rn(x, y, z); o[1] = __fma_rz(x, y, z); o[2] = __fma_rd(x, y, z); o[3] = __fma_ru(x, y, z);
  o[4] = __dadd_rn(x, y); o[5] = __dadd_rz(x, y); o[6] = __dadd_rd(x, y); o[7] = __dadd_ru(x, y);
  o[8] = __dmul_rn(x, y); o[9] = __dmul_rz(x, y); o[10] = __dmul_rd(x, y); o[11] = __dmul_ru(x, y);
  o[12] = __ddiv_rn(x, y); o[13] = __ddiv_rz(x, y); o[14] = __ddiv_rd(x, y); o[15] = __ddiv_ru(x, y);
  o[16] = __dsqrt_rn(x); o[17] = __dsqrt_rz(x); o[18] = __dsqrt_rd(x); o[19] = __dsqrt_ru(x);
}

// Conversions from a float (f) and a double (d) and integers (s, u).
// oi: 16 ints per thread, ol: 8 long longs, of: 16 floats, od: 4 doubles, oh: 4 shorts.
extern "C" __global__ void cvt_ops(const float* f, const double* d, const long long* s, const unsigned long long* u,
                                   int* oi, long long* ol, float* of, double* od, unsigned short* oh, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = f[i];
  double y = d[i];
  long long sv = s[i];
  unsigned long long uv = u[i];
  int* pi = oi + 16 * i;
  pi[0] = __float2int_rn(x); pi[1] = __float2int_rz(x); pi[2] = __float2int_rd(x); pi[3] = __float2int_ru(x);
  pi[4] = __float2uint_rn(x); pi[5] = __float2uint_rz(x); pi[6] = __float2uint_rd(x); pi[7] = __float2uint_ru(x);
  pi[8] = __double2int_rn(y); pi[9] = __double2int_rz(y); pi[10] = __double2int_rd(y); pi[11] = __double2int_ru(y);
  pi[12] = (int)(short)sv; pi[13] = (unsigned char)uv; pi[14] = (int)(signed char)(sv >> 3); pi[15] = (int)x;
  long long* pl = ol + 8 * i;
  pl[0] = __float2ll_rn(x); pl[1] = __float2ll_rz(x); pl[2] = __float2ll_rd(x); pl[3] = __float2ll_ru(x);
  pl[4] = __double2ll_rn(y); pl[5] = __double2ull_rz(y); pl[6] = (long long)(int)sv; pl[7] = (long long)(unsigned)uv;
  float* pf = of + 16 * i;
  pf[0] = __ll2float_rn(sv); pf[1] = __ll2float_rz(sv); pf[2] = __ll2float_rd(sv); pf[3] = __ll2float_ru(sv);
  pf[4] = __ull2float_rn(uv); pf[5] = __ull2float_rz(uv); pf[6] = __ull2float_rd(uv); pf[7] = __ull2float_ru(uv);
  pf[8] = __double2float_rn(y); pf[9] = __double2float_rz(y); pf[10] = __double2float_rd(y); pf[11] = __double2float_ru(y);
  pf[12] = rintf(x); pf[13] = truncf(x); pf[14] = floorf(x); pf[15] = ceilf(x);
  double* pd = od + 4 * i;
  pd[0] = __ll2double_rn(sv); pd[1] = __ll2double_rz(sv); pd[2] = __ull2double_rd(uv); pd[3] = __ull2double_ru(uv);
  unsigned short* ph = oh + 4 * i;
  ph[0] = __half_as_ushort(__float2half_rn(x)); ph[1] = __half_as_ushort(__float2half_rz(x));
  ph[2] = __half_as_ushort(__float2half_rd(x)); ph[3] = __half_as_ushort(__float2half_ru(x));
}

// Half arithmetic: out[4*i]: hadd, hmul, hfma, and the f32 value of a back.
extern "C" __global__ void half_ops(const unsigned short* a, const unsigned short* b, const unsigned short* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half(a[i]), y = __ushort_as_half(b[i]), z = __ushort_as_half(c[i]);
  out[4 * i] = __half2float(__hadd(x, y));
  out[4 * i + 1] = __half2float(__hmul(x, y));
  out[4 * i + 2] = __half2float(__hfma(x, y, z));
  out[4 * i + 3] = __half2float(x);
}

// Integer operations: out[16*i + k].
extern "C" __global__ void int_ops(const int* a, const int* b, const long long* c, const long long* d, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  long long p = c[i], q = d[i];
  long long* o = out + 16 * i;
  o[0] = y ? x / y : 0; o[1] = y ? x % y : 0;
  o[2] = y ? (unsigned)x / (unsigned)y : 0; o[3] = y ? (unsigned)x % (unsigned)y : 0;
  o[4] = q ? p / q : 0; o[5] = q ? p % q : 0;
  o[6] = __mulhi(x, y); o[7] = __umulhi(x, y); o[8] = __mul64hi(p, q); o[9] = (long long)__umul64hi(p, q);
  o[10] = __brev(x) ^ ((long long)__popc(x) << 32) ^ ((long long)__clz(y) << 40) ^ ((long long)__ffs(y) << 48);
  o[11] = __byte_perm(x, y, (unsigned)p & 0x7777);
  o[12] = __funnelshift_l(x, y, q & 63) ^ ((long long)__funnelshift_rc(x, y, p & 63) << 32);
  o[13] = __sad(x, y, 7) ^ ((long long)__dp4a(x, y, 5) << 32);
  o[14] = (long long)x * y + (p >> (q & 63)) + ((unsigned long long)p >> (x & 63));
  o[15] = min(x, y) ^ ((long long)max((unsigned)x, (unsigned)y) << 32) ^ abs(x);
}

// Approximate instructions: out[8*i + k].
extern "C" __global__ void approx_ops(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], r;
  float* o = out + 8 * i;
  o[0] = __sinf(x); o[1] = __cosf(x); o[2] = exp2f(x); o[3] = __log2f(fabsf(x));
  o[4] = rsqrtf(fabsf(x)); o[5] = __fdividef(x, y);
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); o[6] = r;
  asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(fabsf(x))); o[7] = r;
}
