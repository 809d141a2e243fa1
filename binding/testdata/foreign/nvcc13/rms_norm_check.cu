// Runs rms_norm.cu's kernel on a few shapes and compares it with a double
// precision reference on the host; prints the largest relative errors and
// exits 1 if one exceeds 1e-5.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "rms_norm.cu"

static unsigned long long st = 0x9e3779b97f4a7c15ull;
static float urand() {  // uniform in (-1, 1)
    st ^= st >> 12; st ^= st << 25; st ^= st >> 27;
    return (float)((double)((st * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

int main() {
    int shapes[][3] = {{1, 5, 3}, {7, 33, 0}, {64, 1000, 24}, {300, 4096, 0}, {16, 40000, 7}};
    int bad = 0;
    for (auto& s : shapes) {
        int rows = s[0], cols = s[1];
        long long stride = cols + s[2];
        std::vector<float> in(rows * stride), w(cols), out(rows * stride, 0.f), rs(rows);
        for (auto& v : in) v = 3.0f * urand();
        for (auto& v : w) v = urand();
        float *din, *dw, *dout, *drs;
        cudaMalloc(&din, in.size() * 4); cudaMalloc(&dw, w.size() * 4);
        cudaMalloc(&dout, out.size() * 4); cudaMalloc(&drs, rs.size() * 4);
        cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice);
        const float eps = 1e-6f;
        rms_norm_f32<<<rows, RMS_THREADS>>>(dout, drs, din, dw, eps, cols, stride, stride);
        cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) { printf("launch: %s\n", cudaGetErrorString(err)); return 1; }
        cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(rs.data(), drs, rs.size() * 4, cudaMemcpyDeviceToHost);
        double ey = 0, er = 0;
        for (int r = 0; r < rows; r++) {
            double ss = 0;
            for (int j = 0; j < cols; j++) ss += (double)in[r * stride + j] * in[r * stride + j];
            double inv = 1.0 / std::sqrt(ss / cols + eps);
            er = std::fmax(er, std::fabs(rs[r] - inv) / inv);
            for (int j = 0; j < cols; j++) {
                double ref = in[r * stride + j] * inv * w[j];
                ey = std::fmax(ey, std::fabs(out[r * stride + j] - ref) / (std::fabs(in[r * stride + j] * inv) + 1e-30));
            }
        }
        int fail = !(ey <= 1e-5 && er <= 1e-5);
        bad |= fail;
        printf("rows %d cols %d stride %lld: max rel err y %.3g inv_rms %.3g%s\n", rows, cols, stride, ey, er,
               fail ? " FAIL" : "");
        cudaFree(din); cudaFree(dw); cudaFree(dout); cudaFree(drs);
    }
    printf("rms_norm_check: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
