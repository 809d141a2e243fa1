// mufuprobe: what the GPU computes for the approximate PTX instructions that
// lower to its multi-function unit (MUFU), over all 2^32 float32 inputs, and
// which compact model reproduces every one of them.
//
//   nvcc -O3 -arch=sm_90 -o mufuprobe mufuprobe.cu && ./mufuprobe OUTDIR
//
// For each instruction it evaluates all 2^32 inputs, with and without .ftz,
// and tests candidate models of the form
//
//     out(x) = post(T[key(x)], x)
//
// where key(x) is a small index (the mantissa and exponent parity for
// rsqrt/sqrt, the fixed-point fraction of x for ex2, the mantissa for lg2,
// the fixed-point fraction of x/2π for sin/cos, the leading bits for tanh)
// and post rescales a table entry (an exponent shift, a rounded add of the
// exponent, a sign). A model is tested in two passes over all inputs: the
// first fills T from the GPU's own outputs and counts the inputs whose
// output contradicts an earlier one of the same key ("conflicts": the
// output is not a function of the key), the second checks every input,
// specials included, against post(T[key(x)], x) ("mismatches"). A model
// with no conflicts and no mismatches reproduces the GPU on every input;
// its table is written to OUTDIR/<name>.u32 (raw little-endian) for
// mufutables.py to compress. The non-.ftz forms are checked against the
// .ftz outputs under the input and output scalings ptxas applies around
// the same MUFU operation. Everything is printed to stdout.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(e) do { cudaError_t err_ = (e); if (err_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1); } } while (0)

typedef unsigned long long u64;

// ------------------------------------------------------------ instructions

enum Op { RSQ, SQRT, EX2, LG2, SIN, COS, TANH, NOPS };
static const char* opName[NOPS] = {"rsqrt", "sqrt", "ex2", "lg2", "sin", "cos", "tanh"};

__device__ __forceinline__ float f(uint32_t u) { return __uint_as_float(u); }
__device__ __forceinline__ uint32_t b(float x) { return __float_as_uint(x); }

#define AP(NAME, INS) __device__ __forceinline__ float NAME(float a) { float d; asm volatile(INS " %0, %1;" : "=f"(d) : "f"(a)); return d; }
AP(rsq, "rsqrt.approx.f32") AP(rsq_ftz, "rsqrt.approx.ftz.f32")
AP(sqr, "sqrt.approx.f32") AP(sqr_ftz, "sqrt.approx.ftz.f32")
AP(ex2, "ex2.approx.f32") AP(ex2_ftz, "ex2.approx.ftz.f32")
AP(lg2, "lg2.approx.f32") AP(lg2_ftz, "lg2.approx.ftz.f32")
AP(sin_, "sin.approx.f32") AP(sin_ftz, "sin.approx.ftz.f32")
AP(cos_, "cos.approx.f32") AP(cos_ftz, "cos.approx.ftz.f32")
AP(tanh_, "tanh.approx.f32")
__device__ __forceinline__ double rcp64_ftz(double a) { double d; asm volatile("rcp.approx.ftz.f64 %0, %1;" : "=d"(d) : "d"(a)); return d; }

__device__ __forceinline__ float apply(int op, bool ftz, float x) {
    switch (op) {
    case RSQ: return ftz ? rsq_ftz(x) : rsq(x);
    case SQRT: return ftz ? sqr_ftz(x) : sqr(x);
    case EX2: return ftz ? ex2_ftz(x) : ex2(x);
    case LG2: return ftz ? lg2_ftz(x) : lg2(x);
    case SIN: return ftz ? sin_ftz(x) : sin_(x);
    case COS: return ftz ? cos_ftz(x) : cos_(x);
    default: return tanh_(x);
    }
}

// One instruction per kernel, for reading their SASS (cuobjdump -sass).
#define SASS(NAME) extern "C" __global__ void sass_##NAME(float* o, const float* x) { o[threadIdx.x] = NAME(x[threadIdx.x]); }
SASS(rsq) SASS(rsq_ftz) SASS(sqr) SASS(sqr_ftz) SASS(ex2) SASS(ex2_ftz) SASS(lg2) SASS(lg2_ftz)
SASS(sin_) SASS(sin_ftz) SASS(cos_) SASS(cos_ftz) SASS(tanh_)
extern "C" __global__ void sass_rcp64_ftz(double* o, const double* x) { o[threadIdx.x] = rcp64_ftz(x[threadIdx.x]); }

extern "C" __global__ void k_eval(int op, int ftz, uint32_t* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x)
        out[i] = b(apply(op, ftz, f((uint32_t)i)));
}

// ------------------------------------------------------------ models

// A model: an op, a variant and its parameters.
struct Model {
    int op;
    int F;      // fraction bits of the fixed-point key (ex2, sin, cos) or leading mantissa bits (tanh)
    int mode;   // rounding of the key: 0 nearest even, 1 toward zero, 2 toward −inf
    int mmode;  // sin/cos: rounding of x·(1/2π): 0 nearest, 1 toward zero; lg2: rounding of the add
    int sym;    // sin/cos/tanh: 1 = key on |x| (sign applied after), 0 = signed key
    uint32_t C; // sin/cos: the 1/2π constant's bits
};

#define EMPTY 0xFFFFFFFEu
#define NB 512  // bins: sign*256 + biased exponent of the input
#define NEX 8

struct Counts {
    u64 conflicts, uncovered, mism, special;
    u64 bin[NB];
    unsigned int nex;
    uint32_t ex[NEX][3];  // input, gpu, model
    unsigned int ncx;
    uint32_t cx[NEX][3];  // input, gpu, table entry it contradicts
};

__device__ __forceinline__ int64_t rnd(double v, int mode) {
    switch (mode) {
    case 0: return (int64_t)rint(v);
    case 1: return (int64_t)trunc(v);
    default: return (int64_t)floor(v);
    }
}

// shiftExp scales the float bits t (normal) by 2^n exactly when the result
// is normal; below 2^−126 it is flushed to ±0 (ftz), above the largest
// float it is ±inf.
__device__ __forceinline__ uint32_t shiftExp(uint32_t t, int n) {
    int e = (int)((t >> 23) & 255) + n;
    if (e < 1) return t & 0x80000000u;
    if (e > 254) return (t & 0x80000000u) | 0x7F800000u;
    return (t & 0x807FFFFFu) | ((uint32_t)e << 23);
}

// keyOf: the table index of input u under m, the shift n that post applies,
// whether the input is one the table is filled from (fill), and whether it
// is handled by the key at all (keyed; otherwise it is a special whose
// expected value special() gives).
struct Key { uint32_t idx; int n; bool keyed, fill, neg; };

__device__ Key keyOf(const Model& m, uint32_t u) {
    Key k = {0, 0, false, false, false};
    uint32_t s = u >> 31, e = (u >> 23) & 255, man = u & 0x7FFFFF;
    float x = f(u);
    switch (m.op) {
    case RSQ: case SQRT: {
        if (s || e == 0 || e == 255) return k;
        int d = (int)e - 127, p = d & 1;
        k.idx = ((uint32_t)p << 23) | man;
        k.n = (d - p) / 2;
        k.keyed = k.fill = true;
        return k;
    }
    case EX2: {
        if (e == 255 || e == 0) return k;  // NaN, inf, ±0 and subnormals (flushed): specials
        if (!(x > -127.0f && x < 128.0f)) return k;
        int64_t q = rnd((double)x * (double)(1ull << m.F), m.mode);
        k.n = (int)(q >> m.F);
        k.idx = (uint32_t)(q & ((1ll << m.F) - 1));
        k.keyed = true;
        k.fill = k.n > -120 && k.n < 120;
        return k;
    }
    case LG2: {
        if (s || e == 0 || e == 255) return k;
        k.idx = man;
        k.n = (int)e - 127;
        k.keyed = true;
        k.fill = e == 127;
        return k;
    }
    case SIN: case COS: {
        if (e == 255) return k;
        float xx = e == 0 ? 0.0f * (s ? -1.0f : 1.0f) : x;  // .ftz input flush
        float r = m.mmode == 0 ? __fmul_rn(xx, f(m.C)) : __fmul_rz(xx, f(m.C));
        bool sg = b(r) >> 31;
        // sin is odd: a sign-magnitude key applies the sign after; ±0 keep theirs either way.
        k.neg = m.op == SIN && sg && (m.sym || r == 0.0f);
        if (m.sym || r == 0.0f) r = fabsf(r);
        if (fabsf(r) >= 1073741824.0f) {  // an integer: fraction 0
            k.idx = 0;
        } else {
            int64_t q = rnd((double)r * (double)(1ull << m.F), m.mode);
            k.idx = (uint32_t)(q & ((1ll << m.F) - 1));
        }
        k.keyed = k.fill = true;
        return k;
    }
    default: {  // TANH
        if (e == 255) return k;
        uint32_t a = m.sym ? (u & 0x7FFFFFFFu) : u;
        int sh = 23 - m.F;
        uint32_t q = m.mode == 0 ? (a + ((1u << sh) >> 1) - 1 + ((a >> sh) & 1)) >> sh : a >> sh;
        k.idx = q;
        k.neg = m.sym && s;
        k.keyed = k.fill = true;
        return k;
    }
    }
}

// tableSize is the number of entries m's table has.
static u64 tableSize(const Model& m) {
    switch (m.op) {
    case RSQ: case SQRT: return 1ull << 24;
    case LG2: return 1ull << 23;
    case TANH: return 1ull << (m.sym ? 8 + m.F : 9 + m.F);
    default: return 1ull << m.F;
    }
}

// norm maps the output of a filling input to its table entry; post maps a
// table entry to the output expected for input u.
__device__ __forceinline__ uint32_t norm(const Model& m, const Key& k, uint32_t out, bool* ok) {
    *ok = true;
    uint32_t oe = (out >> 23) & 255;
    switch (m.op) {
    case RSQ: if (oe == 0 || oe == 255) { *ok = false; return 0; } return shiftExp(out, k.n);
    case SQRT: if (oe == 0 || oe == 255) { *ok = false; return 0; } return shiftExp(out, -k.n);
    case EX2: if (oe == 0 || oe == 255) { *ok = false; return 0; } return shiftExp(out, -k.n);
    case LG2: return out;
    default: return k.neg ? out ^ 0x80000000u : out;
    }
}

__device__ __forceinline__ uint32_t post(const Model& m, const Key& k, uint32_t t) {
    switch (m.op) {
    case RSQ: return shiftExp(t, -k.n);
    case SQRT: return shiftExp(t, k.n);
    case EX2: return shiftExp(t, k.n);
    case LG2: {
        double v = (double)k.n + (double)f(t);
        return b(m.mmode == 0 ? __double2float_rn(v) : __double2float_rz(v));
    }
    default: return k.neg ? t ^ 0x80000000u : t;
    }
}

// special is the expected .ftz output of an input the key does not handle.
__device__ uint32_t special(int op, uint32_t u) {
    uint32_t s = u >> 31, e = (u >> 23) & 255, man = u & 0x7FFFFF;
    bool nan = e == 255 && man;
    const uint32_t NaN = 0x7FFFFFFFu, INF = 0x7F800000u;
    if (nan) return NaN;
    switch (op) {
    case RSQ:
        if (e == 0) return (s << 31) | INF;
        if (s) return NaN;
        return 0;  // +inf
    case SQRT:
        if (e == 0) return s << 31;
        if (s) return NaN;
        return INF;
    case EX2:
        if (e == 0) return 0x3F800000u;
        if (e == 255) return s ? 0 : INF;
        return s ? 0 : INF;  // x ≤ −127: 0; x ≥ 128: inf
    case LG2:
        if (e == 0) return 0xFF800000u;
        if (s) return NaN;
        return INF;
    default:
        return NaN;  // sin, cos, tanh of ±inf
    }
}

__device__ void addEx(Counts* c, uint32_t u, uint32_t g, uint32_t m, bool conflict) {
    // Read first: a bad model has billions of these, and one contended
    // atomic each would serialise the pass.
    if (*(volatile unsigned int*)(conflict ? &c->ncx : &c->nex) >= NEX) return;
    if (conflict) {
        unsigned int i = atomicAdd(&c->ncx, 1u);
        if (i < NEX) { c->cx[i][0] = u; c->cx[i][1] = g; c->cx[i][2] = m; }
    } else {
        unsigned int i = atomicAdd(&c->nex, 1u);
        if (i < NEX) { c->ex[i][0] = u; c->ex[i][1] = g; c->ex[i][2] = m; }
    }
}

extern "C" __global__ void k_clear(uint32_t* T, u64 n) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) T[i] = EMPTY;
}

extern "C" __global__ void k_fill(Model m, const uint32_t* out, uint32_t* T, Counts* c) {
    u64 conf = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i;
        Key k = keyOf(m, u);
        if (!k.fill) continue;
        bool ok;
        uint32_t v = norm(m, k, out[u], &ok);
        if (!ok) { conf++; addEx(c, u, out[u], 0xFFFFFFFFu, true); continue; }
        uint32_t t = T[k.idx];
        if (t == EMPTY) t = atomicCAS(&T[k.idx], EMPTY, v);
        if (t != EMPTY && t != v) { conf++; addEx(c, u, out[u], t, true); }
    }
    if (conf) atomicAdd(&c->conflicts, conf);
}

extern "C" __global__ void k_check(Model m, const uint32_t* out, const uint32_t* T, Counts* c) {
    __shared__ unsigned int bins[NB];
    for (int i = threadIdx.x; i < NB; i += blockDim.x) bins[i] = 0;
    __syncthreads();
    u64 mis = 0, unc = 0, spec = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i, want;
        Key k = keyOf(m, u);
        if (k.keyed) {
            uint32_t t = T[k.idx];
            if (t == EMPTY) { unc++; continue; }
            want = post(m, k, t);
        } else {
            spec++;
            want = special(m.op, u);
        }
        uint32_t g = out[u];
        bool gn = (g & 0x7FFFFFFFu) > 0x7F800000u, wn = (want & 0x7FFFFFFFu) > 0x7F800000u;
        if (g != want && !(gn && wn && !k.keyed)) {  // NaN payloads are checked on keyed inputs only
            mis++;
            atomicAdd(&bins[u >> 23], 1u);
            addEx(c, u, g, want, false);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < NB; i += blockDim.x)
        if (bins[i]) atomicAdd(&c->bin[i], (u64)bins[i]);
    atomicAdd(&c->mism, mis);
    atomicAdd(&c->uncovered, unc);
    atomicAdd(&c->special, spec);
}

// k_scaled checks the non-.ftz outputs B against the .ftz outputs A:
// counts per input bin where B != A, and where B differs from each
// candidate scaling around A (see the printout for what each is).
#define NCAND 4
extern "C" __global__ void k_scaled(int op, const uint32_t* A, const uint32_t* B, u64* cnt /* [NB][1+NCAND] */, uint32_t* ex /* [1+NCAND][NEX][3] */, unsigned int* nex) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i, bb = B[u], aa = A[u];
        if (bb == aa) continue;
        float x = f(u);
        uint32_t cand[NCAND];
        for (int j = 0; j < NCAND; j++) cand[j] = 0xDEADBEEFu;
        switch (op) {
        case RSQ: cand[0] = b(__fmul_rn(f(A[b(__fmul_rn(x, 16777216.0f))]), 4096.0f)); break;
        case SQRT: cand[0] = b(__fmul_rn(f(A[b(__fmul_rn(x, 16777216.0f))]), 1.0f / 4096.0f)); break;
        case LG2: cand[0] = b(__fadd_rn(f(A[b(__fmul_rn(x, 16777216.0f))]), -24.0f)); break;
        case EX2: {
            float h = f(A[b(__fmul_rn(x, 0.5f))]);
            cand[0] = b(__fmul_rn(h, h));
            cand[1] = b(__fmul_rn(f(A[b(__fadd_rn(x, 24.0f))]), 1.0f / 16777216.0f));
            cand[2] = b(__fmul_rn(f(A[b(__fadd_rn(x, 64.0f))]), 5.421010862427522e-20f));
            break;
        }
        default:
            cand[0] = u;  // sin(x) = x for subnormal x
            cand[1] = 0x3F800000u;
            break;
        }
        atomicAdd(&cnt[(u >> 23) * (1 + NCAND)], 1ull);
        unsigned int k = atomicAdd(&nex[0], 1u);
        if (k < NEX) { ex[k * 3] = u; ex[k * 3 + 1] = bb; ex[k * 3 + 2] = aa; }
        for (int j = 0; j < NCAND; j++)
            if (cand[j] != bb) {
                atomicAdd(&cnt[(u >> 23) * (1 + NCAND) + 1 + j], 1ull);
                unsigned int q = atomicAdd(&nex[1 + j], 1u);
                if (q < NEX) { uint32_t* e = ex + ((1 + j) * NEX + q) * 3; e[0] = u; e[1] = bb; e[2] = cand[j]; }
            }
    }
}

// ------------------------------------------------------------ rcp.approx.ftz.f64

struct C64 { u64 conflicts, mism, lo_nonzero, dep_lo, special; uint32_t ex[NEX][4]; unsigned int nex; };

__device__ __forceinline__ double mk(uint32_t hi, uint32_t lo) { return __hiloint2double((int)hi, (int)lo); }

// k_rcp64: out hi words for lo = 0, whether any output's lo word is
// non-zero, and whether lo = 0xFFFFFFFF or a hash of hi changes the output.
extern "C" __global__ void k_rcp64(uint32_t* hiOut, C64* c) {
    u64 lonz = 0, dep = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i;
        double r0 = rcp64_ftz(mk(u, 0)), r1 = rcp64_ftz(mk(u, 0xFFFFFFFFu)), r2 = rcp64_ftz(mk(u, u * 2654435761u));
        u64 b0 = __double_as_longlong(r0), b1 = __double_as_longlong(r1), b2 = __double_as_longlong(r2);
        hiOut[u] = (uint32_t)(b0 >> 32);
        if ((uint32_t)b0) lonz++;
        if (b1 != b0 || b2 != b0) {
            dep++;
            unsigned int k = atomicAdd(&c->nex, 1u);
            if (k < NEX) { c->ex[k][0] = u; c->ex[k][1] = (uint32_t)(b0 >> 32); c->ex[k][2] = (uint32_t)(b1 >> 32); c->ex[k][3] = (uint32_t)b1; }
        }
    }
    atomicAdd(&c->lo_nonzero, lonz);
    atomicAdd(&c->dep_lo, dep);
}

// Model: normal hi (exponent 1..2046): T[top 20 mantissa bits] with the
// exponent shifted, flushed to ±0 when the result exponent is below 1.
extern "C" __global__ void k_rcp64_model(const uint32_t* hiOut, uint32_t* T, C64* c, int pass) {
    u64 conf = 0, mis = 0, spec = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i, g = hiOut[u];
        uint32_t e = (u >> 20) & 2047, man = u & 0xFFFFF;
        if (e == 0 || e == 2047) { spec++; continue; }
        int n = (int)e - 1023;
        if (pass == 0) {
            uint32_t ge = (g >> 20) & 2047;
            if (ge == 0 || ge == 2047) continue;
            uint32_t v = (g & 0x800FFFFFu) | ((uint32_t)(ge + n) << 20);  // T = out·2^n
            v &= 0x7FFFFFFFu;
            uint32_t t = T[man];
            if (t == EMPTY) t = atomicCAS(&T[man], EMPTY, v);
            if (t != EMPTY && t != v) conf++;
        } else {
            uint32_t t = T[man];
            if (t == EMPTY) { mis++; continue; }
            int re = (int)((t >> 20) & 2047) - n;
            uint32_t want = re < 1 ? 0 : (re > 2046 ? 0x7FF00000u : ((t & 0xFFFFFu) | ((uint32_t)re << 20)));
            want |= u & 0x80000000u;
            if (want != g) {
                mis++;
                unsigned int k = atomicAdd(&c->nex, 1u);
                if (k < NEX) { c->ex[k][0] = u; c->ex[k][1] = g; c->ex[k][2] = want; c->ex[k][3] = 1; }
            }
        }
    }
    atomicAdd(&c->conflicts, conf);
    atomicAdd(&c->mism, mis);
    atomicAdd(&c->special, spec);
}

// ------------------------------------------------------------ host

static const int G = 132 * 16, BS = 256;

static void put(const std::string& path, const void* p, size_t n) {
    FILE* fp = fopen(path.c_str(), "wb");
    if (!fp || fwrite(p, 1, n, fp) != n) { perror(path.c_str()); exit(1); }
    fclose(fp);
}

static std::string modelName(const Model& m) {
    char s[160];
    switch (m.op) {
    case RSQ: case SQRT: snprintf(s, sizeof s, "%s.ftz key=(exp parity, mantissa)", opName[m.op]); break;
    case EX2: snprintf(s, sizeof s, "ex2.ftz key=fixed(x, F=%d, %s)", m.F, m.mode == 0 ? "rn" : m.mode == 1 ? "rz" : "rd"); break;
    case LG2: snprintf(s, sizeof s, "lg2.ftz key=mantissa, exp + T rounded %s", m.mmode == 0 ? "rn" : "rz"); break;
    case TANH: snprintf(s, sizeof s, "tanh key=%s top %d mantissa bits %s", m.sym ? "|x|" : "x", m.F, m.mode == 0 ? "rn" : "rz"); break;
    default: snprintf(s, sizeof s, "%s.ftz key=fixed(frac(x*C %s), F=%d, %s) %s", opName[m.op], m.mmode == 0 ? "rn" : "rz", m.F,
                      m.mode == 0 ? "rn" : m.mode == 1 ? "rz" : "rd", m.sym ? "sign-magnitude" : "signed"); break;
    }
    return s;
}

struct Result { Model m; u64 conflicts, mism, uncovered; };

static Result runModel(const Model& m, const uint32_t* dOut, uint32_t* dT, Counts* dC, bool verbose) {
    u64 n = tableSize(m);
    k_clear<<<G, BS>>>(dT, n);
    CK(cudaMemset(dC, 0, sizeof(Counts)));
    k_fill<<<G, BS>>>(m, dOut, dT, dC);
    k_check<<<G, BS>>>(m, dOut, dT, dC);
    CK(cudaDeviceSynchronize());
    Counts c;
    CK(cudaMemcpy(&c, dC, sizeof c, cudaMemcpyDeviceToHost));
    printf("  %-72s conflicts %llu mismatches %llu uncovered %llu specials %llu\n", modelName(m).c_str(), c.conflicts, c.mism, c.uncovered, c.special);
    if (verbose || (c.conflicts == 0 && c.mism > 0 && c.mism < 100000000)) {
        for (unsigned i = 0; i < c.ncx && i < NEX; i++)
            printf("    conflict x=%08x gpu=%08x table=%08x (%.9g -> %.9g vs %.9g)\n", c.cx[i][0], c.cx[i][1], c.cx[i][2],
                   *(float*)&c.cx[i][0], *(float*)&c.cx[i][1], *(float*)&c.cx[i][2]);
        for (unsigned i = 0; i < c.nex && i < NEX; i++)
            printf("    mismatch x=%08x gpu=%08x model=%08x (%.9g -> %.9g vs %.9g)\n", c.ex[i][0], c.ex[i][1], c.ex[i][2],
                   *(float*)&c.ex[i][0], *(float*)&c.ex[i][1], *(float*)&c.ex[i][2]);
        int shown = 0;
        for (int i = 0; i < NB && shown < 24; i++)
            if (c.bin[i]) { printf("    bin sign %d exp %3d: %llu\n", i >> 8, i & 255, c.bin[i]); shown++; }
    }
    return {m, c.conflicts, c.mism, c.uncovered};
}

static void dumpTable(const std::string& dir, const char* name, const Result& r, const uint32_t* dOut, uint32_t* dT, Counts* dC) {
    runModel(r.m, dOut, dT, dC, true);
    u64 n = tableSize(r.m);
    std::vector<uint32_t> t(n);
    CK(cudaMemcpy(t.data(), dT, n * 4, cudaMemcpyDeviceToHost));
    put(dir + "/" + name + ".u32", t.data(), n * 4);
    printf("  wrote %s.u32 (%llu entries) for %s\n", name, n, modelName(r.m).c_str());
}

static void scaled(int op, const uint32_t* dA, const uint32_t* dB) {
    u64* dcnt; uint32_t* dex; unsigned int* dnex;
    CK(cudaMalloc(&dcnt, NB * (1 + NCAND) * 8)); CK(cudaMemset(dcnt, 0, NB * (1 + NCAND) * 8));
    CK(cudaMalloc(&dex, (1 + NCAND) * NEX * 3 * 4)); CK(cudaMalloc(&dnex, (1 + NCAND) * 4)); CK(cudaMemset(dnex, 0, (1 + NCAND) * 4));
    k_scaled<<<G, BS>>>(op, dA, dB, dcnt, dex, dnex);
    CK(cudaDeviceSynchronize());
    std::vector<u64> cnt(NB * (1 + NCAND));
    std::vector<uint32_t> ex((1 + NCAND) * NEX * 3);
    unsigned int nex[1 + NCAND];
    CK(cudaMemcpy(cnt.data(), dcnt, cnt.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ex.data(), dex, ex.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(nex, dnex, sizeof nex, cudaMemcpyDeviceToHost));
    u64 tot[1 + NCAND] = {0};
    for (int i = 0; i < NB; i++) for (int j = 0; j <= NCAND; j++) tot[j] += cnt[i * (1 + NCAND) + j];
    printf("  %s (non-ftz) differs from .ftz on %llu inputs; candidate misses:", opName[op], tot[0]);
    for (int j = 1; j <= NCAND; j++) printf(" c%d=%llu", j - 1, tot[j]);
    printf("\n");
    int shown = 0;
    for (int i = 0; i < NB && shown < 40; i++)
        if (cnt[i * (1 + NCAND)]) {
            printf("    bin sign %d exp %3d: differ %llu", i >> 8, i & 255, cnt[i * (1 + NCAND)]);
            for (int j = 1; j <= NCAND; j++) printf(" c%d %llu", j - 1, cnt[i * (1 + NCAND) + j]);
            printf("\n");
            shown++;
        }
    for (int j = 0; j <= NCAND; j++)
        for (unsigned k = 0; k < nex[j] && k < NEX && k < 4; k++) {
            uint32_t* e = &ex[(j * NEX + k) * 3];
            printf("    %s x=%08x nonftz=%08x %s=%08x (%.9g: %.9g vs %.9g)\n", j == 0 ? "differ" : "cand", e[0], e[1], j == 0 ? "ftz" : "cand", e[2],
                   *(float*)&e[0], *(float*)&e[1], *(float*)&e[2]);
        }
    cudaFree(dcnt); cudaFree(dex); cudaFree(dnex);
}

// Recorded outputs: for a fixed list of inputs (specials and a
// deterministic pseudo-random sample), every instruction's output, for
// tests of the models against the GPU.
extern "C" __global__ void k_sample(const uint32_t* in, int n, uint32_t* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f(in[i]);
    uint32_t* o = out + (size_t)i * 14;
    o[0] = b(rsq(x)); o[1] = b(rsq_ftz(x)); o[2] = b(sqr(x)); o[3] = b(sqr_ftz(x));
    o[4] = b(ex2(x)); o[5] = b(ex2_ftz(x)); o[6] = b(lg2(x)); o[7] = b(lg2_ftz(x));
    o[8] = b(sin_(x)); o[9] = b(sin_ftz(x)); o[10] = b(cos_(x)); o[11] = b(cos_ftz(x)); o[12] = b(tanh_(x));
    u64 r = __double_as_longlong(rcp64_ftz(mk(in[i], in[i] * 2654435761u)));
    o[13] = (uint32_t)(r >> 32);
}

// ------------------------------------------------------------ ex2 and lg2, second models

// ex2 on sign and magnitude: |x| = i + r (i an integer, r in [0, 1) cut to
// F fraction bits by mode), ex2(x) = T[sign][r] · 2^(±i).
__device__ __forceinline__ bool ex2smKey(int F, int mode, uint32_t u, uint32_t* idx, int* n) {
    uint32_t s = u >> 31, e = (u >> 23) & 255;
    float x = f(u);
    if (e == 255 || e == 0 || !(x > -127.0f && x < 128.0f)) return false;
    int64_t q = rnd((double)fabsf(x) * (double)(1ull << F), mode);
    int i = (int)(q >> F);
    *idx = (s << F) | (uint32_t)(q & ((1ll << F) - 1));
    *n = s ? -i : i;
    return true;
}

extern "C" __global__ void k_ex2sm(int F, int mode, int pass, const uint32_t* out, uint32_t* T, Counts* c) {
    u64 conf = 0, mis = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i, idx, g = out[u];
        int n;
        if (!ex2smKey(F, mode, u, &idx, &n)) continue;
        if (pass == 0) {
            uint32_t oe = (g >> 23) & 255;
            if (oe == 0 || oe == 255 || n < -120 || n > 120) continue;
            uint32_t v = shiftExp(g, -n), t = T[idx];
            if (t == EMPTY) t = atomicCAS(&T[idx], EMPTY, v);
            if (t != EMPTY && t != v) { conf++; addEx(c, u, g, t, true); }
        } else {
            uint32_t t = T[idx];
            if (t == EMPTY) { atomicAdd(&c->uncovered, 1ull); continue; }
            uint32_t want = shiftExp(t, n);
            if (want != g) { mis++; addEx(c, u, g, want, false); }
        }
    }
    atomicAdd(&c->conflicts, conf);
    atomicAdd(&c->mism, mis);
}

// lg2 with the mantissa's logarithm L(m) known to more bits than one float
// holds: from x in [1, 2) where L < 0.5, else from x in [0.5, 1) (out = −1 + L);
// out(x) = round(n + L(m)) for x = 1.m · 2^n.
extern "C" __global__ void k_lg2b(const uint32_t* out, int mode, Counts* c) {
    u64 mis = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i, e = (u >> 23) & 255, m = u & 0x7FFFFF;
        if ((u >> 31) || e == 0 || e == 255) continue;
        double t1 = (double)f(out[(127u << 23) | m]), t0 = (double)f(out[(126u << 23) | m]);
        double L = t1 < 0.5 ? t1 : 1.0 + t0;
        double v = (double)((int)e - 127) + L;
        uint32_t want = b(mode == 0 ? __double2float_rn(v) : mode == 1 ? __double2float_rz(v) : __double2float_rd(v));
        if (want != out[u]) { mis++; addEx(c, u, out[u], want, false); }
    }
    atomicAdd(&c->mism, mis);
}

// lg2 split by the sign of the result: x = 1.m·2^n, out = RZ(n + T127[m])
// for n ≥ 0 and RZ(n + 1 + T126[m]) for n < 0 (T127, T126: the outputs for x
// in [1, 2) and [0.5, 1)); specials as special(LG2). Every input.
extern "C" __global__ void k_lg2split(const uint32_t* out, Counts* c) {
    u64 mis = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)i, e = (u >> 23) & 255, m = u & 0x7FFFFF, want;
        if ((u >> 31) || e == 0 || e == 255) {
            want = special(LG2, u);
        } else {
            int n = (int)e - 127;
            double v = n >= 0 ? (double)n + (double)f(out[(127u << 23) | m]) : (double)(n + 1) + (double)f(out[(126u << 23) | m]);
            want = b(__double2float_rz(v));
        }
        if (want != out[u]) { mis++; addEx(c, u, out[u], want, false); }
    }
    atomicAdd(&c->mism, mis);
}

static void ex2lg2(const std::string& dir, uint32_t* dA, uint32_t* dT, Counts* dC) {
    printf("ex2 (sign-magnitude models):\n");
    k_eval<<<G, BS>>>(EX2, 1, dA);
    CK(cudaDeviceSynchronize());
    int bestF = -1, bestMode = 0; u64 bestBad = ~0ull;
    for (int F = 22; F <= 28; F++)
        for (int mode = 0; mode < 2; mode++) {
            u64 n = 2ull << F;
            k_clear<<<G, BS>>>(dT, n);
            CK(cudaMemset(dC, 0, sizeof(Counts)));
            k_ex2sm<<<G, BS>>>(F, mode, 0, dA, dT, dC);
            k_ex2sm<<<G, BS>>>(F, mode, 1, dA, dT, dC);
            CK(cudaDeviceSynchronize());
            Counts c; CK(cudaMemcpy(&c, dC, sizeof c, cudaMemcpyDeviceToHost));
            printf("  ex2.ftz sign-magnitude F=%d %s: conflicts %llu mismatches %llu uncovered %llu\n", F, mode ? "rz" : "rn", c.conflicts, c.mism, c.uncovered);
            for (unsigned i = 0; i < c.ncx && i < 4; i++)
                printf("    conflict x=%08x gpu=%08x table=%08x (%.9g -> %.9g)\n", c.cx[i][0], c.cx[i][1], c.cx[i][2], *(float*)&c.cx[i][0], *(float*)&c.cx[i][1]);
            for (unsigned i = 0; i < c.nex && i < 4; i++)
                printf("    mismatch x=%08x gpu=%08x model=%08x (%.9g -> %.9g)\n", c.ex[i][0], c.ex[i][1], c.ex[i][2], *(float*)&c.ex[i][0], *(float*)&c.ex[i][1]);
            fflush(stdout);
            if (c.conflicts + c.mism < bestBad) { bestBad = c.conflicts + c.mism; bestF = F; bestMode = mode; }
        }
    if (bestBad == 0 && bestF <= 25) {
        u64 n = 2ull << bestF;
        k_clear<<<G, BS>>>(dT, n);
        k_ex2sm<<<G, BS>>>(bestF, bestMode, 0, dA, dT, dC);
        std::vector<uint32_t> t(n);
        CK(cudaMemcpy(t.data(), dT, n * 4, cudaMemcpyDeviceToHost));
        put(dir + "/ex2sm_ftz.u32", t.data(), n * 4);
        printf("  wrote ex2sm_ftz.u32: F=%d %s\n", bestF, bestMode ? "rz" : "rn");
    }
    printf("lg2 (L from two binades):\n");
    k_eval<<<G, BS>>>(LG2, 1, dA);
    for (int mode = 0; mode < 3; mode++) {
        CK(cudaMemset(dC, 0, sizeof(Counts)));
        k_lg2b<<<G, BS>>>(dA, mode, dC);
        CK(cudaDeviceSynchronize());
        Counts c; CK(cudaMemcpy(&c, dC, sizeof c, cudaMemcpyDeviceToHost));
        printf("  lg2.ftz round %s (n + L): mismatches %llu\n", mode == 0 ? "rn" : mode == 1 ? "rz" : "rd", c.mism);
        for (unsigned i = 0; i < c.nex && i < 6; i++)
            printf("    mismatch x=%08x gpu=%08x model=%08x (%.9g -> %.9g vs %.9g)\n", c.ex[i][0], c.ex[i][1], c.ex[i][2], *(float*)&c.ex[i][0], *(float*)&c.ex[i][1], *(float*)&c.ex[i][2]);
    }
    CK(cudaMemset(dC, 0, sizeof(Counts)));
    k_lg2split<<<G, BS>>>(dA, dC);
    CK(cudaDeviceSynchronize());
    {
        Counts c; CK(cudaMemcpy(&c, dC, sizeof c, cudaMemcpyDeviceToHost));
        printf("  lg2.ftz split by the result's sign, every input, specials included: mismatches %llu\n", c.mism);
        for (unsigned i = 0; i < c.nex && i < 6; i++)
            printf("    mismatch x=%08x gpu=%08x model=%08x\n", c.ex[i][0], c.ex[i][1], c.ex[i][2]);
    }
    std::vector<uint32_t> t(1u << 24);
    CK(cudaMemcpy(t.data(), dA + (126u << 23), (1u << 24) * 4, cudaMemcpyDeviceToHost));
    put(dir + "/lg2_binades_126_127.u32", t.data(), t.size() * 4);
}

int main(int argc, char** argv) {
    if (argc < 2) { fprintf(stderr, "usage: mufuprobe OUTDIR [ops…]\n"); return 2; }
    std::string dir = argv[1];
    bool want[NOPS + 1];
    for (int i = 0; i <= NOPS; i++) want[i] = argc == 2;
    for (int a = 2; a < argc; a++) {
        for (int i = 0; i < NOPS; i++) if (!strcmp(argv[a], opName[i])) want[i] = true;
        if (!strcmp(argv[a], "rcp64")) want[NOPS] = true;
    }
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    int drv; CK(cudaDriverGetVersion(&drv));
    printf("mufuprobe on %s (sm_%d%d), driver API %d\n", p.name, p.major, p.minor, drv);
    uint32_t *dA, *dB, *dT;
    Counts* dC;
    CK(cudaMalloc(&dA, 4ull << 32)); CK(cudaMalloc(&dB, 4ull << 32));
    CK(cudaMalloc(&dT, 4ull << 29)); CK(cudaMalloc(&dC, sizeof(Counts)));
    const uint32_t C1 = 0x3E22F983u;  // RN(1/2π)
    if (argc == 3 && !strcmp(argv[2], "ex2lg2")) { ex2lg2(dir, dA, dT, dC); printf("done\n"); return 0; }
    for (int op = 0; op < NOPS; op++) {
        if (!want[op]) continue;
        printf("%s:\n", opName[op]);
        fflush(stdout);
        k_eval<<<G, BS>>>(op, 1, dA);
        if (op != TANH) k_eval<<<G, BS>>>(op, 0, dB);
        CK(cudaDeviceSynchronize());
        std::vector<Model> ms;
        switch (op) {
        case RSQ: case SQRT: ms.push_back({op, 0, 0, 0, 0, 0}); break;
        case EX2: for (int F = 20; F <= 26; F++) for (int mode = 0; mode < 3; mode++) ms.push_back({op, F, mode, 0, 0, 0}); break;
        case LG2: for (int mm = 0; mm < 2; mm++) ms.push_back({op, 0, 0, mm, 0, 0}); break;
        case SIN: case COS:
            for (int mm = 0; mm < 2; mm++) for (int F = 19; F <= 25; F++) for (int mode = 0; mode < 3; mode++) for (int sym = 0; sym < 2; sym++)
                ms.push_back({op, F, mode, mm, sym, C1});
            break;
        case TANH: for (int F = 6; F <= 17; F++) for (int mode = 0; mode < 2; mode++) for (int sym = 0; sym < 2; sym++) ms.push_back({op, F, mode, 0, sym, 0}); break;
        }
        Result best = {ms[0], ~0ull, ~0ull, ~0ull};
        for (auto& m : ms) {
            Result r = runModel(m, dA, dT, dC, false);
            if (r.conflicts + r.mism < best.conflicts + best.mism ||
                (r.conflicts + r.mism == best.conflicts + best.mism && tableSize(r.m) < tableSize(best.m))) best = r;
            fflush(stdout);
        }
        printf("  best: %s: conflicts %llu mismatches %llu\n", modelName(best.m).c_str(), best.conflicts, best.mism);
        dumpTable(dir, (std::string(opName[op]) + "_ftz").c_str(), best, dA, dT, dC);
        if (op != TANH) scaled(op, dA, dB);
        fflush(stdout);
    }
    if (want[NOPS]) {
        printf("rcp.approx.ftz.f64 (inputs: every high word, low word 0, all ones, or a hash):\n");
        C64* dc; CK(cudaMalloc(&dc, sizeof(C64))); CK(cudaMemset(dc, 0, sizeof(C64)));
        k_rcp64<<<G, BS>>>(dA, dc);
        k_clear<<<G, BS>>>(dT, 1u << 20);
        k_rcp64_model<<<G, BS>>>(dA, dT, dc, 0);
        k_rcp64_model<<<G, BS>>>(dA, dT, dc, 1);
        CK(cudaDeviceSynchronize());
        C64 c; CK(cudaMemcpy(&c, dc, sizeof c, cudaMemcpyDeviceToHost));
        printf("  output low word non-zero %llu; output depends on the input low word %llu; model conflicts %llu mismatches %llu specials %llu\n",
               c.lo_nonzero, c.dep_lo, c.conflicts, c.mism, c.special);
        for (unsigned k = 0; k < c.nex && k < NEX; k++) printf("    ex hi=%08x a=%08x b=%08x c=%08x\n", c.ex[k][0], c.ex[k][1], c.ex[k][2], c.ex[k][3]);
        std::vector<uint32_t> t(1u << 20);
        CK(cudaMemcpy(t.data(), dT, t.size() * 4, cudaMemcpyDeviceToHost));
        put(dir + "/rcp64_ftz.u32", t.data(), t.size() * 4);
    }
    // Recorded sample.
    {
        std::vector<uint32_t> in;
        const uint32_t S[] = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7FFFFFFFu, 0xFFC00001u, 1, 0x80000001u, 0x007FFFFFu,
                              0x00800000u, 0x3F800000u, 0xBF800000u, 0x3F7FFFFFu, 0x3F800001u, 0x7F7FFFFFu, 0x42FE0000u, 0x43000000u,
                              0xC2FC0000u, 0xC2FE0000u, 0xC3000000u, 0x40C90FDBu, 0x40490FDBu, 0x3FC90FDBu, 0x49742400u, 0x4B800000u};
        for (uint32_t s : S) in.push_back(s);
        u64 z = 0x9E3779B97F4A7C15ull;
        while (in.size() < 4096) {
            z += 0x9E3779B97F4A7C15ull;
            u64 y = z; y = (y ^ (y >> 30)) * 0xBF58476D1CE4E5B9ull; y = (y ^ (y >> 27)) * 0x94D049BB133111EBull; y ^= y >> 31;
            uint32_t u = (uint32_t)y;
            // Half uniform over bits, half with exponents where the functions are interesting.
            if (in.size() & 1) u = (u & 0x807FFFFFu) | ((uint32_t)(100 + (y >> 40) % 60) << 23);
            in.push_back(u);
        }
        uint32_t *din, *dout;
        CK(cudaMalloc(&din, in.size() * 4)); CK(cudaMalloc(&dout, in.size() * 14 * 4));
        CK(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
        k_sample<<<(int)(in.size() + 255) / 256, 256>>>(din, (int)in.size(), dout);
        std::vector<uint32_t> out(in.size() * 14);
        CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
        FILE* fp = fopen((dir + "/sample.txt").c_str(), "w");
        fprintf(fp, "# %s sm_%d%d driver %d: input rsqrt rsqrt.ftz sqrt sqrt.ftz ex2 ex2.ftz lg2 lg2.ftz sin sin.ftz cos cos.ftz tanh rcp64.ftz(hi word of rcp(double(hi=input, lo=input*2654435761)))\n", p.name, p.major, p.minor, drv);
        for (size_t i = 0; i < in.size(); i++) {
            fprintf(fp, "%08x", in[i]);
            for (int j = 0; j < 14; j++) fprintf(fp, " %08x", out[i * 14 + j]);
            fprintf(fp, "\n");
        }
        fclose(fp);
    }
    printf("done\n");
    return 0;
}
