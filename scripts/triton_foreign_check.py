#!/usr/bin/env python3
"""Checks the Triton LayerNorm lock backward and softmax kernels of
binding/testdata/foreign/triton against torch in float64, and counts how
often repeated launches give the same bits (a GPU, torch and triton; no Go).

    python3 scripts/triton_foreign_check.py [--repeats 20]

The lock backward's dgamma/dbeta must differ between launches once two rows
share a lock group; its dx and both softmax kernels must be bit-stable.
"""
import argparse
import importlib.util
import os
import sys

import torch
import triton

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "binding", "testdata", "foreign", "triton")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def rel(a, b):
    return ((a.double() - b).abs().max() / b.abs().max().clamp_min(1e-300)).item()


def ln_lock(m, rows, n, group, repeats):
    torch.manual_seed(rows * 7 + n)
    x = torch.randn(rows, n, device="cuda")
    dy = torch.randn(rows, n, device="cuda")
    w = torch.randn(n, device="cuda")
    mean = x.mean(1)
    rstd = 1 / torch.sqrt(x.var(1, unbiased=False) + 1e-5)
    outs = []
    for _ in range(repeats):
        dx = torch.empty_like(x)
        pdw = torch.zeros(group, n, device="cuda")
        pdb = torch.zeros(group, n, device="cuda")
        locks = torch.zeros(2 * group, dtype=torch.int32, device="cuda")
        m.layernorm_bwd_lock_kernel[(rows,)](dx, dy, pdw, pdb, x, w, mean, rstd, locks, x.stride(0), n,
                                             GROUP=group, BLOCK=1024, num_warps=4)
        dw = torch.empty(n, device="cuda")
        db = torch.empty(n, device="cuda")
        m.layernorm_bwd_group_reduce_kernel[(triton.cdiv(n, 128),)](pdw, pdb, dw, db, group, n,
                                                                    BLOCK_M=16, BLOCK_N=128, num_warps=4)
        torch.cuda.synchronize()
        outs.append((dx.clone(), dw.clone(), db.clone()))
    xd, dyd, wd = x.double().requires_grad_(), dy.double(), w.double().requires_grad_()
    bd = torch.zeros(n, dtype=torch.float64, device="cuda", requires_grad=True)
    y = torch.nn.functional.layer_norm(xd, (n,), wd, bd, 1e-5)
    y.backward(dyd)
    same = [sum(torch.equal(o[k], outs[0][k]) for o in outs) for k in range(3)]
    print(f"layernorm lock bwd {rows}x{n} group {group}: rel err dx {rel(outs[0][0], xd.grad):.2e} "
          f"dgamma {rel(outs[0][1], wd.grad):.2e} dbeta {rel(outs[0][2], bd.grad):.2e}; "
          f"bit-identical to launch 1 in {same[0]}/{repeats} (dx) {same[1]}/{repeats} (dgamma) {same[2]}/{repeats} (dbeta)")


def softmax(m, rows, n, repeats):
    torch.manual_seed(rows + n)
    x = torch.randn(rows, n, device="cuda") * 4
    dy = torch.randn(rows, n, device="cuda")
    ys, dxs = [], []
    for _ in range(repeats):
        y = torch.empty_like(x)
        m.softmax_fwd_kernel[(rows,)](x, y, x.stride(0), y.stride(0), n, BLOCK=1024, num_warps=4)
        dx = torch.empty_like(x)
        m.softmax_bwd_kernel[(rows,)](y, dy, dx, y.stride(0), dy.stride(0), dx.stride(0), n, BLOCK=1024, num_warps=4)
        torch.cuda.synchronize()
        ys.append(y.clone())
        dxs.append(dx.clone())
    xd = x.double().requires_grad_()
    yd = torch.softmax(xd, 1)
    yd.backward(dy.double())
    print(f"softmax {rows}x{n}: rel err y {rel(ys[0], yd.detach()):.2e} dx {rel(dxs[0], xd.grad):.2e}; "
          f"bit-identical in {sum(torch.equal(y, ys[0]) for y in ys)}/{repeats} (y) "
          f"{sum(torch.equal(d, dxs[0]) for d in dxs)}/{repeats} (dx)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=20)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    lk, sm = load("layernorm_lock"), load("softmax")
    for rows, n in [(16, 1000), (300, 1000), (1000, 768), (37, 5)]:
        ln_lock(lk, rows, n, 16, a.repeats)
    for rows, n in [(64, 1000), (300, 1024), (7, 3)]:
        softmax(sm, rows, n, a.repeats)


if __name__ == "__main__":
    main()
