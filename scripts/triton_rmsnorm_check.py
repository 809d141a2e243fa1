#!/usr/bin/env python3
"""Check the Triton RMSNorm test kernels against torch.autograd in float64.

Runs binding/testdata/foreign/triton/rmsnorm.py's kernels on the GPU for a
few shapes (row strides wider than hidden included), prints the largest
error of y, rstd, dx, dgamma relative to the float64 reference (scaled by
the reference's largest magnitude), and repeats each backward to show
whether dgamma is bit-identical from run to run. Exits 1 if an error exceeds
1e-4 (float32 kernels; a wrong formula gives errors of order 1) or the
deterministic backward's dgamma changes between runs.
"""
import importlib.util
import os
import sys

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "rmsnorm", os.path.join(HERE, "..", "binding", "testdata", "foreign", "triton", "rmsnorm.py"))
K = importlib.util.module_from_spec(spec)
spec.loader.exec_module(K)

RPP, BLOCK_N = 4, 256


def forward(x, w, eps):
    rows, hidden = x.shape
    y = torch.empty(rows, hidden, device=x.device)
    rstd = torch.empty(rows, device=x.device)
    K.rmsnorm_fwd_kernel[(rows,)](x, y, w, rstd, x.stride(0), y.stride(0), hidden, eps,
                                  BLOCK=triton.next_power_of_2(hidden))
    return y, rstd


def backward(dy, x, w, rstd, atomic):
    rows, hidden = x.shape
    dx = torch.empty(rows, hidden, device=x.device)
    dw = torch.empty(hidden, device=x.device)
    nparts = triton.cdiv(rows, RPP)
    block = triton.next_power_of_2(hidden)
    args = (dy.stride(0), x.stride(0), dx.stride(0), rows, hidden, RPP)
    if atomic:
        K.zero_kernel[(triton.cdiv(hidden, BLOCK_N),)](dw, hidden, BLOCK_N=BLOCK_N)
        K.rmsnorm_bwd_atomic_kernel[(nparts,)](dy, x, w, rstd, dx, dw, *args, BLOCK=block)
    else:
        part = torch.full((nparts, hidden), float("nan"), device=x.device)  # never read unwritten
        K.rmsnorm_bwd_kernel[(nparts,)](dy, x, w, rstd, dx, part, *args, BLOCK=block)
        K.rmsnorm_dgamma_reduce_kernel[(triton.cdiv(hidden, BLOCK_N),)](part, dw, nparts, hidden,
                                                                         BLOCK_N=BLOCK_N)
    return dx, dw


def rel(a, ref):
    return ((a.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-300)).item()


def main():
    torch.manual_seed(1)
    ok = True
    for rows, hidden, pad in [(1, 5, 3), (7, 33, 5), (64, 1000, 24), (300, 4096, 0), (1000, 768, 64)]:
        eps = 1e-5
        base = torch.randn(rows, hidden + pad, device="cuda")
        x = base[:, :hidden]  # row stride hidden+pad
        w = torch.randn(hidden, device="cuda")
        dy = torch.randn(rows, hidden + pad, device="cuda")[:, :hidden]
        y, rstd = forward(x, w, eps)
        xd = x.double().requires_grad_(True)
        wd = w.double().requires_grad_(True)
        r = (xd.pow(2).mean(dim=1, keepdim=True) + eps).rsqrt()
        yd = xd * r * wd
        yd.backward(dy.double())
        e = {"y": rel(y, yd.detach()), "rstd": rel(rstd, r.detach().squeeze(1))}
        for atomic in (False, True):
            tag = "atomic" if atomic else "det"
            dx, dw = backward(dy, x, w, rstd, atomic)
            e["dx_" + tag] = rel(dx, xd.grad)
            e["dgamma_" + tag] = rel(dw, wd.grad)
            same = 0
            for _ in range(20):
                _, dw2 = backward(dy, x, w, rstd, atomic)
                same += bool(torch.equal(dw2.view(torch.int32), dw.view(torch.int32)))
            e["repeat_identical_" + tag] = "%d/20" % same
            if not atomic and same != 20:
                ok = False
        bad = [k for k, v in e.items() if isinstance(v, float) and not v <= 1e-4]
        ok = ok and not bad
        print("rows %4d hidden %4d stride %4d:" % (rows, hidden, hidden + pad),
              " ".join("%s=%s" % (k, "%.2e" % v if isinstance(v, float) else v) for k, v in e.items()),
              "FAIL " + ",".join(bad) if bad else "", flush=True)
    print("triton_rmsnorm_check:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
