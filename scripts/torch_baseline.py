#!/usr/bin/env python3
"""The same checks ptxprop's throughput benchmarks make, written with torch.

Value check: RMSNorm forward in float32 on the GPU against a float64
evaluation, torch.testing.assert_close. Gradient check:
torch.autograd.gradcheck(fast_mode=True) of RMSNorm in float64 on the GPU.
Prints one line per shape: checks/s for each, so a run can be compared side by
side with `go test ./properties -run '^$' -bench Throughput` on the same
machine.

    python3 scripts/torch_baseline.py [--seconds 5]

With --kernels BENCH_LOG it instead times, for every case and shape of
package kernels' BenchmarkKernels in that go test -bench output (so on the
same shapes in the same run), the same operation written in torch, eager
and under torch.compile: --repeat repetitions of --iters launches each,
timed with CUDA events like the Go benchmark. One JSON object a line:
{"case", "rows", "hidden", "eager_us": [...], "compile_us": [...]}, with
"error" when the case could not be timed; ptxprop nightly-merge turns
them into ratios beside the kernel's timings.

    python3 scripts/torch_baseline.py --kernels out/gpu/bench.log [--repeat 3] [--iters 50]
"""
import argparse
import json
import re
import time

import torch
import torch.nn.functional as F


def value_checks(rows, hidden, seconds, dev):
    w = torch.randn(hidden, device=dev)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        x = torch.randn(rows, hidden, device=dev) * 10 ** (torch.rand(()).item() * 9 - 6)
        y = F.rms_norm(x, (hidden,), w, eps=1e-5)
        ref = F.rms_norm(x.double(), (hidden,), w.double(), eps=1e-5)
        torch.testing.assert_close(y.double(), ref, rtol=1.3e-6, atol=1e-5)
        n += 1
    torch.cuda.synchronize()
    return n / (time.perf_counter() - t0)


def grad_checks(rows, hidden, seconds, dev):
    w = torch.randn(hidden, device=dev, dtype=torch.float64)
    f = lambda x: F.rms_norm(x, (hidden,), w, eps=1e-5)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        x = torch.randn(rows, hidden, device=dev, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(f, (x,), fast_mode=True)
        n += 1
    torch.cuda.synchronize()
    return n / (time.perf_counter() - t0)


HEAD_DIM = 128  # kernels/bench_test.go's benchHeadDim
EPS = 1e-6


def rms_bwd(x, w, dy):
    rstd = torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS)
    xh = x * rstd
    g = dy * w
    dx = rstd * (g - xh * (g * xh).mean(-1, keepdim=True))
    return dx, (dy * xh).sum(0)


def ln_bwd(x, w, dy, mean, rstd):
    xh = (x - mean[:, None]) * rstd[:, None]
    g = dy * w
    dx = rstd[:, None] * (g - g.mean(-1, keepdim=True) - xh * (g * xh).mean(-1, keepdim=True))
    return dx, (dy * xh).sum(0), dy.sum(0)


def rope(x, pos, sign):
    rows, hidden = x.shape
    xh = x.view(rows, hidden // HEAD_DIM, HEAD_DIM // 2, 2)
    inv = 1e6 ** (-torch.arange(0, HEAD_DIM // 2, device=x.device, dtype=torch.float32) * 2 / HEAD_DIM)
    ang = pos[:, None, None].float() * inv[None, None, :]
    c, s = torch.cos(ang), sign * torch.sin(ang)
    a, b = xh[..., 0], xh[..., 1]
    return torch.stack((a * c - b * s, a * s + b * c), -1).view(rows, hidden)


def kernel_case(name, rows, h, dev):
    """The torch function of benchmark case name and its arguments."""
    r = lambda *shape: torch.randn(*shape, device=dev)
    x, w = r(rows, h), torch.rand(h, device=dev) + 0.5
    pos = torch.arange(rows, device=dev)
    cases = {
        "RMSNormFwd": (lambda x, w: F.rms_norm(x, (h,), w, eps=EPS), (x, w)),
        "FusedResidualRMSNorm": (lambda x, res, w: (lambda s: (s, F.rms_norm(s, (h,), w, eps=EPS)))(x + res), (x, r(rows, h), w)),
        "LayerNormFwd": (lambda x, w, b: F.layer_norm(x, (h,), w, b, eps=1e-5), (x, w, torch.rand(h, device=dev))),
        "LayerNormBwd": (ln_bwd, (x, w, r(rows, h), torch.rand(rows, device=dev), torch.rand(rows, device=dev) + 0.5)),
        "PerHeadRMSNorm": (lambda x, w: F.rms_norm(x.view(rows, h // HEAD_DIM, HEAD_DIM), (HEAD_DIM,), w, eps=EPS),
                           (x, torch.rand(HEAD_DIM, device=dev) + 0.5)),
        "RoPEFwd": (lambda x, p: rope(x, p, 1.0), (x, torch.full((rows,), 1234, device=dev))),
        "RoPEFwdBatched": (lambda x, p: rope(x, p, 1.0), (x, pos)),
        "RoPEBwd": (lambda x, p: rope(x, p, -1.0), (x, pos)),
    }
    if name.startswith("RMSNormBwd"):
        return rms_bwd, (x, w, r(rows, h))
    return cases.get(name)


def time_us(f, args, iters):
    f(*args)  # warm up (and compile)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        f(*args)
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / iters


def kernels(bench_log, repeat, iters):
    dev = "cuda"
    seen = []
    pat = re.compile(r"^BenchmarkKernels/([^/\s]+)/(\d+)x(\d+)(?:-\d+)?\s")
    with open(bench_log) as f:
        for line in f:
            m = pat.match(line.strip())
            if m and (m[1], int(m[2]), int(m[3])) not in seen:
                seen.append((m[1], int(m[2]), int(m[3])))
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    for name, rows, h in seen:
        out = {"case": name, "rows": rows, "hidden": h, "eager_us": [], "compile_us": []}
        try:
            c = kernel_case(name, rows, h, dev)
            if c is None:
                raise ValueError(f"no torch version of benchmark case {name}")
            fn, args = c
            with torch.no_grad():
                out["eager_us"] = [time_us(fn, args, iters) for _ in range(repeat)]
                comp = torch.compile(fn)
                out["compile_us"] = [time_us(comp, args, iters) for _ in range(repeat)]
        except Exception as e:  # one case that cannot be timed leaves the others
            out["error"] = f"{type(e).__name__}: {e}".splitlines()[0]
        print(json.dumps(out), flush=True)
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--kernels", metavar="BENCH_LOG", help="time torch on the benchmark cases and shapes of this go test -bench output")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()
    if args.kernels:
        kernels(args.kernels, args.repeat, args.iters)
        return
    dev = "cuda"
    torch.manual_seed(0)
    value_checks(16, 256, 0.5, dev)  # warm up
    grad_checks(16, 256, 0.5, dev)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for rows, hidden in ((16, 256), (64, 1024)):
        v = value_checks(rows, hidden, args.seconds, dev)
        g = grad_checks(rows, hidden, args.seconds, dev)
        print(f"torch {rows}x{hidden}: value checks/s {v:.0f}  gradchecks/s {g:.1f}")


if __name__ == "__main__":
    main()
