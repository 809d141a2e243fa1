#!/usr/bin/env python3
"""The same checks ptxprop's throughput benchmarks make, written with torch.

Value check: RMSNorm forward in float32 on the GPU against a float64
evaluation, torch.testing.assert_close. Gradient check:
torch.autograd.gradcheck(fast_mode=True) of RMSNorm in float64 on the GPU.
Prints one line per shape: checks/s for each, so a run can be compared side by
side with `go test ./properties -run '^$' -bench Throughput` on the same
machine.

    python3 scripts/torch_baseline.py [--seconds 5]
"""
import argparse
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
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
