// divprobe: what the GPU computes for div.full.f32, next to div.approx.f32,
// div.rn.f32, rcp.approx.f32 and rcp.rn.f32 (each also .ftz where it exists).
//
//   nvcc -O3 -arch=sm_90 -o divprobe divprobe.cu && ./divprobe OUTDIR
//
// Writes into OUTDIR (raw little-endian arrays, read by divanalyse.py):
//   x.bin y.bin      float32 [n]  the operand pairs (deterministic generator)
//   cat.bin          uint8   [n]  the category each pair was drawn from
//   out.bin          float32 [8][n]  per pair: div.full, div.full.ftz,
//                    div.approx, div.approx.ftz, div.rn, rcp.approx(y),
//                    rcp.approx.ftz(y), rcp.rn(y)
//   rcp_tab.bin      float32 [2][2^23]  rcp.approx, rcp.approx.ftz of every
//                    float in [1, 2) (mantissa order)
//   rcp_edge.bin     float32 [6][2][2^23]  the same for the positive floats of
//                    biased exponents 0, 1, 2, 252, 253, 254
//   rcp_counts.txt   per biased exponent and sign, over all 2^32 inputs: how
//                    often rcp.approx(.ftz) differs from rcp.rn, the largest
//                    ulp distance, and how often each differs from the [1,2)
//                    table rescaled by the exponent (where that is a normal
//                    float)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <string>
#include <vector>

#define CK(e) do { cudaError_t err_ = (e); if (err_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1); } } while (0)

__device__ __forceinline__ float div_full(float a, float b) { float d; asm("div.full.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float div_full_ftz(float a, float b) { float d; asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float div_approx(float a, float b) { float d; asm("div.approx.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float div_approx_ftz(float a, float b) { float d; asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float div_rn(float a, float b) { float d; asm("div.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float rcp_approx(float a) { float d; asm("rcp.approx.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }
__device__ __forceinline__ float rcp_approx_ftz(float a) { float d; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }
__device__ __forceinline__ float rcp_rn(float a) { float d; asm("rcp.rn.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }

// One instruction each, for reading their SASS (cuobjdump -sass -fun NAME).
extern "C" __global__ void sass_div_full(float* o, const float* x, const float* y) { int i = threadIdx.x; o[i] = div_full(x[i], y[i]); }
extern "C" __global__ void sass_div_full_ftz(float* o, const float* x, const float* y) { int i = threadIdx.x; o[i] = div_full_ftz(x[i], y[i]); }
extern "C" __global__ void sass_div_approx(float* o, const float* x, const float* y) { int i = threadIdx.x; o[i] = div_approx(x[i], y[i]); }
extern "C" __global__ void sass_rcp_approx(float* o, const float* x, const float* y) { int i = threadIdx.x; o[i] = rcp_approx(y[i]); }
extern "C" __global__ void sass_rcp_approx_ftz(float* o, const float* x, const float* y) { int i = threadIdx.x; o[i] = rcp_approx_ftz(y[i]); }

extern "C" __global__ void k_pairs(const float* x, const float* y, size_t n, float* o) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float a = x[i], b = y[i];
        o[0 * n + i] = div_full(a, b);
        o[1 * n + i] = div_full_ftz(a, b);
        o[2 * n + i] = div_approx(a, b);
        o[3 * n + i] = div_approx_ftz(a, b);
        o[4 * n + i] = div_rn(a, b);
        o[5 * n + i] = rcp_approx(b);
        o[6 * n + i] = rcp_approx_ftz(b);
        o[7 * n + i] = rcp_rn(b);
    }
}

__constant__ int edge_exps[6] = {0, 1, 2, 252, 253, 254};

extern "C" __global__ void k_table(float* tab, float* edge) {
    uint32_t m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= (1u << 23)) return;
    float v = __uint_as_float((127u << 23) | m);
    tab[m] = rcp_approx(v);
    tab[(1u << 23) + m] = rcp_approx_ftz(v);
    for (int k = 0; k < 6; k++) {
        float w = __uint_as_float(((uint32_t)edge_exps[k] << 23) | m);
        edge[(size_t)(2 * k) << 23 | m] = rcp_approx(w);
        edge[(size_t)(2 * k + 1) << 23 | m] = rcp_approx_ftz(w);
    }
}

__device__ __forceinline__ int64_t ord(uint32_t b) {  // order-preserving map of float bits
    return (b & 0x80000000u) ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
}
__device__ __forceinline__ bool isnanb(uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }

// Counters per bin (sign*256 + biased exponent), NC each:
// 0 a!=rn  1 af!=rn  2 max|a-rn| ulp  3 max|af-rn| ulp  4 model applicable
// 5 a!=model  6 af!=model  7 a NaN not 0x7fffffff  8 a!=af
#define NC 9
extern "C" __global__ void k_exhaustive(const float* tab, unsigned long long* cnt) {
    uint32_t base = (blockIdx.x * blockDim.x + threadIdx.x) * 256u;
    uint32_t bin = base >> 23;  // 256 consecutive inputs share sign and exponent
    unsigned long long c[NC] = {0};
    for (uint32_t k = 0; k < 256; k++) {
        uint32_t u = base + k;
        float b = __uint_as_float(u);
        uint32_t a = __float_as_uint(rcp_approx(b)), af = __float_as_uint(rcp_approx_ftz(b)),
                 rn = __float_as_uint(rcp_rn(b));
        bool nan = isnanb(rn);
        if (a != rn && !(nan && isnanb(a))) c[0]++;
        if (af != rn && !(nan && isnanb(af))) c[1]++;
        if (!nan && !isnanb(a) && (a & 0x7fffffffu) <= 0x7f800000u) {
            int64_t d = ord(a) - ord(rn); d = d < 0 ? -d : d; if ((unsigned long long)d > c[2]) c[2] = d;
        }
        if (!nan && !isnanb(af)) {
            int64_t d = ord(af) - ord(rn); d = d < 0 ? -d : d; if ((unsigned long long)d > c[3]) c[3] = d;
        }
        uint32_t e = (u >> 23) & 255u, m = u & 0x7fffffu;
        if (e >= 1 && e <= 254) {
            uint32_t t = __float_as_uint(tab[(1u << 23) + m]);  // rcp.approx.ftz of 1.m
            int te = (int)((t >> 23) & 255u) + 127 - (int)e;
            if (te >= 1 && te <= 254) {
                uint32_t model = (u & 0x80000000u) | ((uint32_t)te << 23) | (t & 0x7fffffu);
                c[4]++;
                if (a != model) c[5]++;
                if (af != model) c[6]++;
            }
        }
        if (isnanb(a) && a != 0x7fffffffu) c[7]++;
        if (a != af) c[8]++;
    }
    for (int i = 0; i < NC; i++) {
        if (i == 2 || i == 3) atomicMax(&cnt[bin * NC + i], c[i]);
        else if (c[i]) atomicAdd(&cnt[bin * NC + i], c[i]);
    }
}

// ---------------------------------------------------------------- host

static uint64_t rs = 0x243F6A8885A308D3ull;
static uint64_t next64() {  // splitmix64
    uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif() { return (next64() >> 11) * (1.0 / 9007199254740992.0); }
static float bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static float normal() { return (float)(std::sqrt(-2.0 * std::log(1.0 - unif())) * std::cos(6.283185307179586 * unif())); }
// |v| log-uniform over [2^lo, 2^hi), random sign and mantissa; subnormal where below 2^-126.
static float logu(double lo, double hi) {
    double e = lo + (hi - lo) * unif();
    double v = std::ldexp(1.0 + unif(), (int)std::floor(e) - 1) * 1.0;
    float f = (float)v;
    if (!std::isfinite(f)) f = bits(0x7f7fffffu);
    return (next64() & 1) ? -f : f;
}

static void put(const std::string& path, const void* p, size_t n) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(p, 1, n, f) != n) { perror(path.c_str()); exit(1); }
    fclose(f);
}

int main(int argc, char** argv) {
    if (argc != 2) { fprintf(stderr, "usage: divprobe OUTDIR\n"); return 2; }
    std::string dir = argv[1];
    std::vector<float> x, y;
    std::vector<uint8_t> cat;
    auto add = [&](float a, float b, int c) { x.push_back(a); y.push_back(b); cat.push_back((uint8_t)c); };
    for (int i = 0; i < 2000000; i++) add(normal(), normal(), 0);                         // N(0,1) both
    for (int i = 0; i < 2000000; i++) add(bits((uint32_t)next64()), bits((uint32_t)next64()), 1);  // random bits
    for (int i = 0; i < 2000000; i++) add(normal() * (float)std::ldexp(1.0, (int)(40 * unif()) - 20), logu(-149, 128), 2);
    for (int i = 0; i < 1000000; i++) add(logu(-149, 128), logu(125, 128), 3);            // |y| near 2^126..2^128
    for (int i = 0; i < 1000000; i++) add(logu(-149, 128), logu(-149, -124), 4);          // tiny / subnormal y
    for (int i = 0; i < 1000000; i++) {                                                    // quotient near the ends
        float b = logu(-100, 100);
        double q = (unif() < 0.5) ? std::ldexp(1.0 + unif(), -150 + (int)(30 * unif())) : std::ldexp(1.0 + unif(), 118 + (int)(10 * unif()));
        float a = (float)(q * (double)b);
        if (!std::isfinite(a) || a == 0) { i--; continue; }
        add(a, b, 5);
    }
    for (int i = 0; i < 500000; i++) add(1.0f, logu(-149, 128), 6);                        // 1/y
    for (int i = 0; i < 500000; i++) { float b = logu(-30, 30); add(b * (1.0f + (float)std::ldexp(unif() - 0.5, -20)), b, 7); }  // x close to y
    const float S[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 3.0f, 0.1f,
                       bits(1), bits(0x007fffffu), bits(0x00800000u), bits(0x00400000u), bits(0x00c00000u),
                       bits(0x7e800000u) /*2^126*/, bits(0x7e800001u), bits(0x7ec00000u), bits(0x7f000000u) /*2^127*/,
                       bits(0x7f7fffffu), bits(0x7e7fffffu), bits(0x01000000u) /*2^-125*/, bits(0x3f7fffffu), bits(0x3f800001u)};
    const int ns = sizeof(S) / sizeof(S[0]);
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < ns; j++) add(S[i], S[j], 8);
    size_t n = x.size();
    printf("divprobe: %zu pairs\n", n);

    float *dx, *dy, *dout, *dtab, *dedge;
    unsigned long long* dcnt;
    CK(cudaMalloc(&dx, n * 4)); CK(cudaMalloc(&dy, n * 4)); CK(cudaMalloc(&dout, 8 * n * 4));
    CK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice));
    k_pairs<<<4096, 256>>>(dx, dy, n, dout);
    CK(cudaDeviceSynchronize());
    std::vector<float> out(8 * n);
    CK(cudaMemcpy(out.data(), dout, 8 * n * 4, cudaMemcpyDeviceToHost));
    put(dir + "/x.bin", x.data(), n * 4);
    put(dir + "/y.bin", y.data(), n * 4);
    put(dir + "/cat.bin", cat.data(), n);
    put(dir + "/out.bin", out.data(), 8 * n * 4);

    CK(cudaMalloc(&dtab, 2 * (1u << 23) * 4)); CK(cudaMalloc(&dedge, 12 * (size_t)(1u << 23) * 4));
    k_table<<<(1u << 23) / 256, 256>>>(dtab, dedge);
    CK(cudaDeviceSynchronize());
    std::vector<float> tab(2 * (1u << 23)), edge(12 * (size_t)(1u << 23));
    CK(cudaMemcpy(tab.data(), dtab, tab.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(edge.data(), dedge, edge.size() * 4, cudaMemcpyDeviceToHost));
    put(dir + "/rcp_tab.bin", tab.data(), tab.size() * 4);
    put(dir + "/rcp_edge.bin", edge.data(), edge.size() * 4);

    CK(cudaMalloc(&dcnt, 512 * NC * 8)); CK(cudaMemset(dcnt, 0, 512 * NC * 8));
    k_exhaustive<<<(1u << 24) / 256, 256>>>(dtab, dcnt);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> cnt(512 * NC);
    CK(cudaMemcpy(cnt.data(), dcnt, cnt.size() * 8, cudaMemcpyDeviceToHost));
    FILE* f = fopen((dir + "/rcp_counts.txt").c_str(), "w");
    fprintf(f, "# sign exp a!=rn af!=rn max_ulp_a max_ulp_af model_applicable a!=model af!=model a_nan_noncanon a!=af\n");
    unsigned long long tot[NC] = {0};
    for (int b = 0; b < 512; b++) {
        fprintf(f, "%d %d", b >> 8, b & 255);
        for (int i = 0; i < NC; i++) {
            fprintf(f, " %llu", cnt[b * NC + i]);
            if (i == 2 || i == 3) tot[i] = tot[i] > cnt[b * NC + i] ? tot[i] : cnt[b * NC + i]; else tot[i] += cnt[b * NC + i];
        }
        fprintf(f, "\n");
    }
    fclose(f);
    printf("rcp over all 2^32 inputs: a!=rn %llu, af!=rn %llu, max ulp a %llu af %llu, model applicable %llu, "
           "a!=model %llu, af!=model %llu, a NaN non-canonical %llu, a!=af %llu\n",
           tot[0], tot[1], tot[2], tot[3], tot[4], tot[5], tot[6], tot[7], tot[8]);
    return 0;
}
