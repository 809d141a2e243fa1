#!/usr/bin/env python3
"""ptx_corpus.py — build a corpus of real Triton-emitted PTX for ptxprop's emulator.

Usage:
    python3 ptx_corpus.py OUT_DIR [--only NAME[,NAME...]] [--jobs N] [--inprocess] [--list]

For every case (a Triton kernel in the style of the Triton tutorials, Liger-Kernel, unsloth,
FlashAttention's layer_norm.py, vLLM) it launches the kernel once on the GPU on a small
non-power-of-two shape and writes
    OUT/<name>.ptx    kernel.asm['ptx'] of the compiled kernel returned by the launch
    OUT/<name>.ttgir  kernel.asm['ttgir'] (layouts; small, for reading)
    OUT/<name>.json   entry, grid, block, num_warps, shared bytes, PTX params, launch args
    OUT/<name>.npz    in.<arg> for every tensor arg before the launch, out.<arg> after it
                      (only for tensors whose bits changed); float32 also as <key>.u32 bit views,
                      bf16 as <key>.u16 bit views plus a float32 widening under <key>.
then prints (and writes OUT/summary.txt, OUT/summary.json) a table of the special/approximate
instructions each PTX uses and an opcode histogram over the corpus.

By default each case runs in its own child process (a kernel that faults cannot poison the CUDA
context of the others); --inprocess runs them all in this process. Progress goes to stderr.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time
import traceback
from collections import Counter, OrderedDict

M_ROWS = 5          # rows of every row-wise case: small, not a power of two
N_COLS = 1000       # columns: not a power of two, so masks matter
SEED = 1234


def log(msg):
    print(f"[ptx_corpus {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# PTX analysis (no torch/triton needed: the parent uses it for the summary)
# --------------------------------------------------------------------------------------------

SPECIAL = [
    ("sqrt.approx", r"\bsqrt\.approx"),
    ("sqrt.rn", r"\bsqrt\.rn"),
    ("rsqrt.approx", r"\brsqrt\.approx"),
    ("ex2.approx", r"\bex2\.approx"),
    ("lg2.approx", r"\blg2\.approx"),
    ("sin.approx", r"\bsin\.approx"),
    ("cos.approx", r"\bcos\.approx"),
    ("tanh.approx", r"\btanh\.approx"),
    ("div.full", r"\bdiv\.full"),
    ("div.rn", r"\bdiv\.rn"),
    ("div.approx", r"\bdiv\.approx"),
    ("rcp.approx", r"\brcp\.approx"),
    ("rcp.rn", r"\brcp\.rn"),
    ("atom.", r"\batom\."),
    ("atom.v", r"\batom\.\S*\.v[248]\."),
    ("red.", r"\bred\."),
    ("ld.global.v4", r"\bld\.global\S*\.v4"),
    ("ld.global.v2", r"\bld\.global\S*\.v2"),
    ("st.global.v4", r"\bst\.global\S*\.v4"),
    ("ld.shared", r"\bld\.shared"),
    ("st.shared", r"\bst\.shared"),
    ("cp.async", r"\bcp\.async"),
    ("bar.sync", r"\bbar\.sync"),
    ("barrier", r"\bbarrier\."),
    ("shfl.sync", r"\bshfl\.sync"),
    ("redux", r"\bredux\."),
    ("mbarrier", r"\bmbarrier\."),
    ("fence", r"\bfence\."),
    ("membar", r"\bmembar\."),
    ("cvt.*bf16", r"\bcvt\.\S*bf16"),
    ("fma.rn", r"\bfma\.rn"),
    ("ex2.approx.ftz", r"\bex2\.approx\.ftz"),
    ("ftz", r"\.ftz\."),
    ("selp", r"\bselp\."),
    ("prmt", r"\bprmt\."),
    ("brev/bfe/bfi", r"\b(brev|bfe|bfi)\."),
    ("mul.wide", r"\bmul\.wide"),
    ("createpolicy", r"\bcreatepolicy"),
    ("L2::cache_hint", r"L2::cache_hint"),
    ("griddepcontrol", r"\bgriddepcontrol"),
    ("setmaxnreg", r"\bsetmaxnreg"),
]


def ptx_instructions(ptx):
    """Yield the opcode (with modifiers) of every instruction in a PTX text.

    Skips comments, directives (.reg, .param, .loc, ...), labels, braces, and strips a guard
    predicate (@%p1 / @!%p1). Statements are split on ';' so inline-asm blocks
    ({ .reg ...; mov ...; }) count each instruction.
    """
    text = re.sub(r"/\*.*?\*/", " ", ptx, flags=re.S)
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        for stmt in line.split(";"):
            s = stmt.strip()
            while s and s[0] in "{}":
                s = s[1:].strip()
            while s and s[-1] in "{}":
                s = s[:-1].strip()
            if not s:
                continue
            # labels, possibly followed by an instruction on the same line
            m = re.match(r"^([$A-Za-z_][\w$]*):\s*(.*)$", s)
            if m and not s.startswith("@"):
                s = m.group(2).strip()
                if not s:
                    continue
            if s.startswith("@"):
                parts = s.split(None, 1)
                if len(parts) < 2:
                    continue
                s = parts[1].strip()
            if s.startswith(".") or s.startswith(")") or s.startswith("("):
                continue
            tok = s.split(None, 1)[0].rstrip(",")
            if not re.match(r"^[a-z][\w.:]*$", tok):
                continue
            yield tok


def ptx_entries(ptx):
    return re.findall(r"\.entry\s+([\w$]+)", ptx)


def ptx_params(ptx):
    """The .param lines of the first .entry, in order, as strings."""
    m = re.search(r"\.entry\s+[\w$]+\s*\((.*?)\)", ptx, flags=re.S)
    if not m:
        return []
    out = []
    for line in m.group(1).splitlines():
        line = line.strip().rstrip(",")
        if line.startswith(".param"):
            out.append(line)
    return out


def special_counts(ptx):
    body = re.sub(r"//[^\n]*", "", ptx)
    res = OrderedDict()
    for label, pat in SPECIAL:
        n = len(re.findall(pat, body))
        if n:
            res[label] = n
    return res


def summarize(out_dir, names=None, stream=sys.stdout):
    files = sorted(f for f in os.listdir(out_dir) if f.endswith(".ptx"))
    if names is not None:
        files = [f for f in files if f[:-4] in names]
    hist = Counter()
    per_kernel = OrderedDict()
    lines = []
    lines.append(f"{'kernel':44s} {'instrs':>6s}  special/approximate instructions")
    lines.append("-" * 110)
    for f in files:
        name = f[:-4]
        with open(os.path.join(out_dir, f)) as fh:
            ptx = fh.read()
        ops = list(ptx_instructions(ptx))
        hist.update(ops)
        sc = special_counts(ptx)
        per_kernel[name] = {"instructions": len(ops), "special": sc,
                            "opcodes": dict(Counter(ops).most_common())}
        desc = ", ".join(f"{k}x{v}" for k, v in sc.items()) or "-"
        lines.append(f"{name:44s} {len(ops):6d}  {desc}")
    lines.append("")
    lines.append(f"opcode histogram over {len(files)} PTX files ({sum(hist.values())} instructions, "
                 f"{len(hist)} distinct opcodes):")
    for op, n in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {n:7d}  {op}")
    text = "\n".join(lines) + "\n"
    stream.write(text)
    stream.flush()
    try:
        with open(os.path.join(out_dir, "summary.txt"), "w") as fh:
            fh.write(text)
        with open(os.path.join(out_dir, "summary.json"), "w") as fh:
            json.dump({"histogram": dict(hist.most_common()), "kernels": per_kernel}, fh, indent=1)
    except OSError as e:
        log(f"could not write summary files: {e}")
    return hist


# --------------------------------------------------------------------------------------------
# Kernels and cases (need torch + triton; defined lazily so --list/summary work without them)
# --------------------------------------------------------------------------------------------

try:
    import torch
    import triton
    import triton.language as tl
    HAVE_TRITON = True
    _IMPORT_ERROR = None
except Exception as _e:  # the parent/summary paths work without them
    HAVE_TRITON = False
    _IMPORT_ERROR = _e

# Kernels are module-level so that Triton resolves tl, libdevice, ... as module globals.
if HAVE_TRITON:
    libdevice = None
    for modname in ("triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice"):
        try:
            import importlib
            libdevice = importlib.import_module(modname)
            break
        except Exception:
            libdevice = None
    if libdevice is None:
        try:
            libdevice = tl.extra.cuda.libdevice
        except Exception:
            libdevice = None

    # ---------------- RMSNorm (Liger / unsloth style) ----------------
    @triton.jit
    def rmsnorm_fwd_kernel(Y, X, W, RSTD, stride_y, stride_x, n_cols, eps,
                           BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
        x_f = x.to(tl.float32)
        mean_sq = tl.sum(x_f * x_f, axis=0) / n_cols
        rstd = tl.rsqrt(mean_sq + eps)
        tl.store(RSTD + row, rstd)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x_f * rstd) * w
        tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)

    @triton.jit
    def rmsnorm_bwd_kernel(DY, X, W, RSTD, DX, DW_PART, stride, n_rows, n_cols,
                           rows_per_program, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(0)
        row_start = pid * rows_per_program
        row_end = tl.minimum(row_start + rows_per_program, n_rows)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        dw_acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for row in range(row_start, row_end):
            x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
            rstd = tl.load(RSTD + row)
            x_hat = x * rstd
            w_dy = w * dy
            dw_acc += dy * x_hat
            c = tl.sum(x_hat * w_dy, axis=0) / n_cols
            dx = (w_dy - x_hat * c) * rstd
            tl.store(DX + row * stride + cols, dx, mask=mask)
        tl.store(DW_PART + pid * n_cols + cols, dw_acc, mask=mask)

    @triton.jit
    def fused_add_rmsnorm_kernel(X, RESIDUAL, W, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
        # vLLM fused_add_rms_norm: residual += x; x = rmsnorm(residual) * w, both in place.
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(RESIDUAL + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        h = x + r
        tl.store(RESIDUAL + row * stride + cols, h, mask=mask)
        var = tl.sum(h * h, axis=0) / n_cols
        rstd = 1.0 / tl.sqrt(var + eps)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(X + row * stride + cols, h * rstd * w, mask=mask)

    # ---------------- LayerNorm (Triton tutorial / FlashAttention layer_norm.py) ----------------
    @triton.jit
    def layernorm_fwd_loop_kernel(X, Y, W, B, MEAN, RSTD, stride, N, eps,
                                  BLOCK_SIZE: tl.constexpr):
        # Tutorial 05 style: loop over the row in BLOCK_SIZE chunks, 1/sqrt.
        row = tl.program_id(0)
        Y += row * stride
        X += row * stride
        _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for off in range(0, N, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
            _mean += a
        mean = tl.sum(_mean, axis=0) / N
        _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for off in range(0, N, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
            x = tl.where(cols < N, x - mean, 0.)
            _var += x * x
        var = tl.sum(_var, axis=0) / N
        rstd = 1 / tl.sqrt(var + eps)
        tl.store(MEAN + row, mean)
        tl.store(RSTD + row, rstd)
        for off in range(0, N, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            mask = cols < N
            w = tl.load(W + cols, mask=mask)
            b = tl.load(B + cols, mask=mask)
            x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
            x_hat = (x - mean) * rstd
            y = x_hat * w + b
            tl.store(Y + cols, y, mask=mask)

    @triton.jit
    def layernorm_fwd_kernel(X, Y, W, B, MEAN, RSTD, stride, N, eps,
                             BLOCK_N: tl.constexpr, MODE: tl.constexpr):
        # Single block per row. MODE 0: 1/tl.sqrt, 1: tl.rsqrt, 2: tl.div_rn(1, tl.sqrt_rn).
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xbar = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xbar * xbar, axis=0) / N
        if MODE == 0:
            rstd = 1 / tl.sqrt(var + eps)
        elif MODE == 1:
            rstd = tl.rsqrt(var + eps)
        else:
            rstd = tl.div_rn(1.0, tl.sqrt_rn(var + eps))
        tl.store(MEAN + row, mean)
        tl.store(RSTD + row, rstd)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        y = xbar * rstd * w + b
        tl.store(Y + row * stride + cols, y, mask=mask)

    @triton.jit
    def layernorm_bwd_atomic_kernel(DX, DY, DW, DB, X, W, MEAN, RSTD, stride, N,
                                    BLOCK_N: tl.constexpr, RELAXED: tl.constexpr):
        # dx per row; dW/dB accumulated with tl.atomic_add of a float32 BLOCK vector.
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0).to(tl.float32)
        dy = tl.load(DY + row * stride + cols, mask=mask, other=0).to(tl.float32)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        mean = tl.load(MEAN + row)
        rstd = tl.load(RSTD + row)
        xhat = (x - mean) * rstd
        wdy = w * dy
        xhat = tl.where(mask, xhat, 0.)
        wdy = tl.where(mask, wdy, 0.)
        c1 = tl.sum(xhat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(DX + row * stride + cols, dx, mask=mask)
        if RELAXED:
            tl.atomic_add(DW + cols, dy * xhat, mask=mask, sem="relaxed")
            tl.atomic_add(DB + cols, dy, mask=mask, sem="relaxed")
        else:
            tl.atomic_add(DW + cols, dy * xhat, mask=mask)
            tl.atomic_add(DB + cols, dy, mask=mask)

    @triton.jit
    def layernorm_bwd_lock_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                                  GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
        # Tutorial 05 _layer_norm_bwd_dx_fused: partial dW/dB per lock group under a spin lock.
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE_N)
        mask = cols < N
        X += row * stride
        DY += row * stride
        DX += row * stride
        lock_id = row % GROUP_SIZE_M
        Lock += lock_id
        Count = Lock + GROUP_SIZE_M
        DW = DW + lock_id * N + cols
        DB = DB + lock_id * N + cols
        x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
        dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        xhat = (x - mean) * rstd
        wdy = w * dy
        xhat = tl.where(mask, xhat, 0.)
        wdy = tl.where(mask, wdy, 0.)
        c1 = tl.sum(xhat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(DX + cols, dx, mask=mask)
        partial_dw = (dy * xhat).to(w.dtype)
        partial_db = (dy).to(w.dtype)
        while tl.atomic_cas(Lock, 0, 1) == 1:
            pass
        count = tl.load(Count)
        if count == 0:
            tl.atomic_xchg(Count, 1)
        else:
            partial_dw += tl.load(DW, mask=mask)
            partial_db += tl.load(DB, mask=mask)
        tl.store(DW, partial_dw, mask=mask)
        tl.store(DB, partial_db, mask=mask)
        tl.debug_barrier()
        tl.atomic_xchg(Lock, 0)

    @triton.jit
    def layernorm_bwd_dwdb_kernel(DW, DB, FINAL_DW, FINAL_DB, M, N,
                                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
        # Tutorial 05 _layer_norm_bwd_dwdb: 2-D tiles summed over rows (a column reduction).
        pid = tl.program_id(0)
        cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for i in range(0, M, BLOCK_SIZE_M):
            rows = i + tl.arange(0, BLOCK_SIZE_M)
            mask = (rows[:, None] < M) & (cols[None, :] < N)
            offs = rows[:, None] * N + cols[None, :]
            dw += tl.load(DW + offs, mask=mask, other=0.)
            db += tl.load(DB + offs, mask=mask, other=0.)
        sum_dw = tl.sum(dw, axis=0)
        sum_db = tl.sum(db, axis=0)
        tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
        tl.store(FINAL_DB + cols, sum_db, mask=cols < N)

    # ---------------- Softmax family ----------------
    @triton.jit
    def softmax_fwd_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                           BLOCK_SIZE: tl.constexpr):
        # Tutorial 02 style, persistent over rows (grid smaller than n_rows).
        row_start = tl.program_id(0)
        row_step = tl.num_programs(0)
        for row_idx in range(row_start, n_rows, row_step):
            row_ptr = in_ptr + row_idx * in_row_stride
            cols = tl.arange(0, BLOCK_SIZE)
            mask = cols < n_cols
            row = tl.load(row_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
            row_minus_max = row - tl.max(row, axis=0)
            numerator = tl.exp(row_minus_max)
            denominator = tl.sum(numerator, axis=0)
            sm = numerator / denominator
            tl.store(out_ptr + row_idx * out_row_stride + cols,
                     sm.to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def softmax_bwd_kernel(DX, DY, Y, stride, n_cols, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        y = tl.load(Y + row * stride + cols, mask=mask, other=0.0)
        dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0)
        dot = tl.sum(y * dy, axis=0)
        dx = y * (dy - dot)
        tl.store(DX + row * stride + cols, dx, mask=mask)

    @triton.jit
    def online_softmax_kernel(OUT, X, stride, n_cols, BLOCK_SIZE: tl.constexpr,
                              USE_EXP2: tl.constexpr):
        # Running max and sum over column blocks (Liger cross-entropy / flash style), then a
        # second pass writing exp(x - m) / d.
        row = tl.program_id(0)
        X += row * stride
        OUT += row * stride
        m = float("-inf")
        d = 0.0
        for off in range(0, n_cols, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            x = tl.load(X + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            block_max = tl.max(x, axis=0)
            m_new = tl.maximum(m, block_max)
            if USE_EXP2:
                d = d * tl.exp2((m - m_new) * 1.4426950408889634) + \
                    tl.sum(tl.exp2((x - m_new) * 1.4426950408889634), axis=0)
            else:
                d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        inv_d = 1.0 / d
        for off in range(0, n_cols, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            mask = cols < n_cols
            x = tl.load(X + cols, mask=mask, other=float("-inf")).to(tl.float32)
            if USE_EXP2:
                p = tl.exp2((x - m) * 1.4426950408889634) * inv_d
            else:
                p = tl.exp(x - m) * inv_d
            tl.store(OUT + cols, p, mask=mask)

    @triton.jit
    def log_softmax_kernel(OUT, X, stride, n_cols, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x_max = tl.max(x, axis=0)
        z = x - x_max
        lse = tl.log(tl.sum(tl.exp(z), axis=0))
        tl.store(OUT + row * stride + cols, z - lse, mask=mask)

    # ---------------- Cross-entropy (Liger style, online over vocab blocks) ----------------
    @triton.jit
    def cross_entropy_fwd_kernel(LOSS, LSE, X, Y, stride, n_cols, n_non_ignore, ignore_index,
                                 BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        X += row * stride
        y = tl.load(Y + row)
        ignored = y == ignore_index
        m = float("-inf")
        d = 0.0
        for off in range(0, n_cols, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            x = tl.load(X + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            block_max = tl.max(x, axis=0)
            m_new = tl.maximum(m, block_max)
            d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        lse = m + tl.log(d)
        y_safe = tl.where(ignored, 0, y)
        x_y = tl.load(X + y_safe).to(tl.float32)
        loss = (lse - x_y) / n_non_ignore
        loss = tl.where(ignored, 0.0, loss)
        tl.store(LOSS + row, loss)
        tl.store(LSE + row, lse)

    @triton.jit
    def cross_entropy_bwd_kernel(DX, X, Y, LSE, DLOSS, stride, n_cols, n_non_ignore, ignore_index,
                                 BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        X += row * stride
        DX += row * stride
        y = tl.load(Y + row)
        lse = tl.load(LSE + row)
        dloss = tl.load(DLOSS + row)
        ignored = y == ignore_index
        scale = tl.where(ignored, 0.0, dloss / n_non_ignore)
        for off in range(0, n_cols, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            mask = cols < n_cols
            x = tl.load(X + cols, mask=mask, other=float("-inf")).to(tl.float32)
            p = tl.exp(x - lse)
            p = tl.where(cols == y, p - 1.0, p)
            tl.store(DX + cols, p * scale, mask=mask)

    # ---------------- RoPE NeoX (unsloth / Liger / vLLM style, in place on Q) ----------------
    @triton.jit
    def rope_neox_inkernel_kernel(Q, POS, stride_s, stride_h, n_heads, half, theta,
                                  BLOCK_H: tl.constexpr, BLOCK_D2: tl.constexpr,
                                  USE_EXP2: tl.constexpr):
        s = tl.program_id(0)
        pos = tl.load(POS + s).to(tl.float32)
        i = tl.arange(0, BLOCK_D2)
        dmask = i < half
        frac = i.to(tl.float32) / half
        if USE_EXP2:
            inv_freq = tl.exp2(-frac * tl.log2(theta))
        else:
            inv_freq = tl.exp(-frac * tl.log(theta))
        ang = pos * inv_freq
        c = tl.cos(ang)
        sn = tl.sin(ang)
        h = tl.arange(0, BLOCK_H)
        m2 = (h[:, None] < n_heads) & dmask[None, :]
        base = Q + s * stride_s + h[:, None] * stride_h + i[None, :]
        x1 = tl.load(base, mask=m2, other=0.0)
        x2 = tl.load(base + half, mask=m2, other=0.0)
        tl.store(base, x1 * c[None, :] - x2 * sn[None, :], mask=m2)
        tl.store(base + half, x2 * c[None, :] + x1 * sn[None, :], mask=m2)

    @triton.jit
    def rope_neox_table_kernel(Q, COS, SIN, POS, stride_s, stride_h, stride_cs, n_heads, half,
                               BLOCK_H: tl.constexpr, BLOCK_D2: tl.constexpr):
        s = tl.program_id(0)
        pos = tl.load(POS + s)
        i = tl.arange(0, BLOCK_D2)
        dmask = i < half
        c = tl.load(COS + pos * stride_cs + i, mask=dmask, other=0.0)
        sn = tl.load(SIN + pos * stride_cs + i, mask=dmask, other=0.0)
        h = tl.arange(0, BLOCK_H)
        m2 = (h[:, None] < n_heads) & dmask[None, :]
        base = Q + s * stride_s + h[:, None] * stride_h + i[None, :]
        x1 = tl.load(base, mask=m2, other=0.0)
        x2 = tl.load(base + half, mask=m2, other=0.0)
        tl.store(base, x1 * c[None, :] - x2 * sn[None, :], mask=m2)
        tl.store(base + half, x2 * c[None, :] + x1 * sn[None, :], mask=m2)

    # ---------------- GELU tanh (unsloth / Liger geglu style) ----------------
    gelu_libdevice_kernel = None
    if libdevice is not None and hasattr(libdevice, "tanh"):
        @triton.jit
        def gelu_libdevice_kernel(Y, X, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
            s2pi = 0.7978845608028654
            inner = s2pi * (x + 0.044715 * x * x * x)
            y = 0.5 * x * (1.0 + libdevice.tanh(inner))
            tl.store(Y + offs, y, mask=mask)

    @triton.jit
    def gelu_exp_kernel(Y, X, n_elements, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = 1.0 - 2.0 / (1.0 + tl.exp(2.0 * inner))  # tanh(inner)
        y = 0.5 * x * (1.0 + t)
        tl.store(Y + offs, y, mask=mask)

    # ---------------- Reductions ----------------
    @triton.jit
    def row_sum_kernel(OUT, X, stride, n_cols, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for off in range(0, n_cols, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            acc += tl.load(X + row * stride + cols, mask=cols < n_cols, other=0.0)
        tl.store(OUT + row, tl.sum(acc, axis=0))

    @triton.jit
    def col_sum_kernel(OUT, X, stride, n_rows, n_cols, BLOCK_N: tl.constexpr):
        pid = tl.program_id(0)
        cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for r in range(0, n_rows):
            acc += tl.load(X + r * stride + cols, mask=mask, other=0.0)
        tl.store(OUT + cols, acc, mask=mask)



def define_cases():
    if not HAVE_TRITON:
        raise RuntimeError(f"torch/triton not importable: {_IMPORT_ERROR!r}")

    # ---------------- Case table ----------------
    # Each builder returns dict(kernel, grid, args=[(name, value)], constexprs={}, num_warps,
    # notes). Tensors are created on the GPU from a seeded generator.
    dev = "cuda"
    M, N = M_ROWS, N_COLS
    f32 = torch.float32
    bf16 = torch.bfloat16
    npow2 = triton.next_power_of_2

    def gen(seed):
        g = torch.Generator(device=dev)
        g.manual_seed(seed)
        return g

    def randn(g, *shape, dtype=f32, scale=1.0):
        return (torch.randn(*shape, device=dev, dtype=f32, generator=g) * scale).to(dtype)

    cases = OrderedDict()

    def case(name):
        def deco(fn):
            cases[name] = fn
            return fn
        return deco

    def rmsnorm_fwd(dtype):
        def build():
            g = gen(SEED)
            x = randn(g, M, N, dtype=dtype)
            w = randn(g, N, dtype=dtype, scale=0.5) + 1.0
            y = torch.zeros(M, N, device=dev, dtype=dtype)
            rstd = torch.zeros(M, device=dev, dtype=f32)
            return dict(kernel=rmsnorm_fwd_kernel, grid=(M,),
                        args=[("Y", y), ("X", x), ("W", w), ("RSTD", rstd), ("stride_y", y.stride(0)),
                              ("stride_x", x.stride(0)), ("n_cols", N), ("eps", 1e-6)],
                        constexprs={"BLOCK_SIZE": npow2(N)}, num_warps=4)
        return build

    cases["rmsnorm_fwd_f32"] = rmsnorm_fwd(f32)
    cases["rmsnorm_fwd_bf16"] = rmsnorm_fwd(bf16)

    @case("rmsnorm_bwd_f32")
    def _():
        g = gen(SEED + 1)
        x = randn(g, M, N)
        dy = randn(g, M, N)
        w = randn(g, N, scale=0.5) + 1.0
        rstd = torch.rsqrt((x * x).mean(dim=1) + 1e-6).contiguous()
        dx = torch.zeros(M, N, device=dev, dtype=f32)
        n_prog = 2
        rows_per_program = (M + n_prog - 1) // n_prog
        dw_part = torch.zeros(n_prog, N, device=dev, dtype=f32)
        return dict(kernel=rmsnorm_bwd_kernel, grid=(n_prog,),
                    args=[("DY", dy), ("X", x), ("W", w), ("RSTD", rstd), ("DX", dx),
                          ("DW_PART", dw_part), ("stride", x.stride(0)), ("n_rows", M),
                          ("n_cols", N), ("rows_per_program", rows_per_program)],
                    constexprs={"BLOCK_SIZE": npow2(N)}, num_warps=8)

    @case("fused_add_rmsnorm_f32")
    def _():
        g = gen(SEED + 2)
        x = randn(g, M, N)
        res = randn(g, M, N)
        w = randn(g, N, scale=0.5) + 1.0
        return dict(kernel=fused_add_rmsnorm_kernel, grid=(M,),
                    args=[("X", x), ("RESIDUAL", res), ("W", w), ("stride", x.stride(0)),
                          ("n_cols", N), ("eps", 1e-5)],
                    constexprs={"BLOCK_SIZE": npow2(N)}, num_warps=4)

    def ln_inputs(seed, n):
        g = gen(seed)
        x = randn(g, M, n, scale=2.0) + 0.5
        w = randn(g, n, scale=0.5) + 1.0
        b = randn(g, n, scale=0.1)
        return g, x, w, b

    @case("layernorm_fwd_loop_sqrt")
    def _():
        g, x, w, b = ln_inputs(SEED + 3, N)
        y = torch.zeros_like(x)
        mean = torch.zeros(M, device=dev, dtype=f32)
        rstd = torch.zeros(M, device=dev, dtype=f32)
        return dict(kernel=layernorm_fwd_loop_kernel, grid=(M,),
                    args=[("X", x), ("Y", y), ("W", w), ("B", b), ("MEAN", mean), ("RSTD", rstd),
                          ("stride", x.stride(0)), ("N", N), ("eps", 1e-5)],
                    constexprs={"BLOCK_SIZE": 256}, num_warps=4)

    def ln_fwd(mode):
        def build():
            g, x, w, b = ln_inputs(SEED + 4, N)
            y = torch.zeros_like(x)
            mean = torch.zeros(M, device=dev, dtype=f32)
            rstd = torch.zeros(M, device=dev, dtype=f32)
            return dict(kernel=layernorm_fwd_kernel, grid=(M,),
                        args=[("X", x), ("Y", y), ("W", w), ("B", b), ("MEAN", mean),
                              ("RSTD", rstd), ("stride", x.stride(0)), ("N", N), ("eps", 1e-5)],
                        constexprs={"BLOCK_N": npow2(N), "MODE": mode}, num_warps=4)
        return build

    cases["layernorm_fwd_sqrt"] = ln_fwd(0)
    cases["layernorm_fwd_rsqrt"] = ln_fwd(1)
    cases["layernorm_fwd_sqrt_rn"] = ln_fwd(2)

    def ln_bwd_inputs(seed, n):
        g, x, w, b = ln_inputs(seed, n)
        dy = randn(g, M, n)
        mean = x.mean(dim=1).contiguous()
        rstd = torch.rsqrt(x.var(dim=1, unbiased=False) + 1e-5).contiguous()
        dx = torch.zeros_like(x)
        return x, w, dy, mean, rstd, dx

    def ln_bwd_atomic(n, relaxed):
        def build():
            x, w, dy, mean, rstd, dx = ln_bwd_inputs(SEED + 5, n)
            dw = torch.zeros(n, device=dev, dtype=f32)
            db = torch.zeros(n, device=dev, dtype=f32)
            return dict(kernel=layernorm_bwd_atomic_kernel, grid=(M,),
                        args=[("DX", dx), ("DY", dy), ("DW", dw), ("DB", db), ("X", x), ("W", w),
                              ("MEAN", mean), ("RSTD", rstd), ("stride", x.stride(0)), ("N", n)],
                        constexprs={"BLOCK_N": npow2(n), "RELAXED": relaxed}, num_warps=4,
                        notes="dW/dB summed with float atomics: the order of the row "
                              "contributions, and so the bits, may differ run to run")
        return build

    # N=768 is a multiple of 16, so Triton specialises it and the mask keeps 4-wide
    # constancy: the atomics can vectorise (atom...v4.f32). N=1000 is only a multiple of 8.
    cases["layernorm_bwd_atomic_n768"] = ln_bwd_atomic(768, False)
    cases["layernorm_bwd_atomic_n1000"] = ln_bwd_atomic(N, False)
    cases["layernorm_bwd_atomic_relaxed_n768"] = ln_bwd_atomic(768, True)

    @case("layernorm_bwd_lock")
    def _():
        x, w, dy, mean, rstd, dx = ln_bwd_inputs(SEED + 6, N)
        group = 2
        lock = torch.zeros(2 * group, device=dev, dtype=torch.int32)
        dw = torch.zeros(group, N, device=dev, dtype=f32)
        db = torch.zeros(group, N, device=dev, dtype=f32)
        return dict(kernel=layernorm_bwd_lock_kernel, grid=(M,),
                    args=[("DX", dx), ("DY", dy), ("DW", dw), ("DB", db), ("X", x), ("W", w),
                          ("Mean", mean), ("Rstd", rstd), ("Lock", lock), ("stride", x.stride(0)),
                          ("N", N)],
                    constexprs={"GROUP_SIZE_M": group, "BLOCK_SIZE_N": npow2(N)}, num_warps=8,
                    notes="spin lock with atomic_cas/atomic_xchg; partial sums in lock order, "
                          "which may differ run to run")

    @case("layernorm_bwd_dwdb")
    def _():
        g = gen(SEED + 7)
        rows = 6
        dw = randn(g, rows, N)
        db = randn(g, rows, N)
        fdw = torch.zeros(N, device=dev, dtype=f32)
        fdb = torch.zeros(N, device=dev, dtype=f32)
        bn = 128
        return dict(kernel=layernorm_bwd_dwdb_kernel, grid=((N + bn - 1) // bn,),
                    args=[("DW", dw), ("DB", db), ("FINAL_DW", fdw), ("FINAL_DB", fdb),
                          ("M", rows), ("N", N)],
                    constexprs={"BLOCK_SIZE_M": 4, "BLOCK_SIZE_N": bn}, num_warps=4)

    def softmax_fwd(dtype):
        def build():
            g = gen(SEED + 8)
            x = randn(g, M, N, dtype=dtype, scale=3.0)
            y = torch.zeros(M, N, device=dev, dtype=dtype)
            return dict(kernel=softmax_fwd_kernel, grid=(3,),
                        args=[("out_ptr", y), ("in_ptr", x), ("in_row_stride", x.stride(0)),
                              ("out_row_stride", y.stride(0)), ("n_rows", M), ("n_cols", N)],
                        constexprs={"BLOCK_SIZE": npow2(N)}, num_warps=8)
        return build

    cases["softmax_fwd_f32"] = softmax_fwd(f32)
    cases["softmax_fwd_bf16"] = softmax_fwd(bf16)

    @case("softmax_bwd_f32")
    def _():
        g = gen(SEED + 9)
        y = torch.softmax(randn(g, M, N, scale=3.0), dim=1).contiguous()
        dy = randn(g, M, N)
        dx = torch.zeros_like(y)
        return dict(kernel=softmax_bwd_kernel, grid=(M,),
                    args=[("DX", dx), ("DY", dy), ("Y", y), ("stride", y.stride(0)),
                          ("n_cols", N)],
                    constexprs={"BLOCK_SIZE": npow2(N)}, num_warps=4)

    def online_softmax(use_exp2):
        def build():
            g = gen(SEED + 10)
            x = randn(g, M, N, scale=4.0)
            y = torch.zeros_like(x)
            return dict(kernel=online_softmax_kernel, grid=(M,),
                        args=[("OUT", y), ("X", x), ("stride", x.stride(0)), ("n_cols", N)],
                        constexprs={"BLOCK_SIZE": 256, "USE_EXP2": use_exp2}, num_warps=4)
        return build

    cases["online_softmax_exp"] = online_softmax(False)
    cases["online_softmax_exp2"] = online_softmax(True)

    @case("log_softmax_f32")
    def _():
        g = gen(SEED + 11)
        x = randn(g, M, N, scale=3.0)
        y = torch.zeros_like(x)
        return dict(kernel=log_softmax_kernel, grid=(M,),
                    args=[("OUT", y), ("X", x), ("stride", x.stride(0)), ("n_cols", N)],
                    constexprs={"BLOCK_SIZE": npow2(N)}, num_warps=4)

    def ce_inputs(seed):
        g = gen(seed)
        x = randn(g, M, N, scale=3.0)
        y = torch.randint(0, N, (M,), device=dev, generator=g, dtype=torch.int64)
        y[1] = -100  # one ignored row
        n_non_ignore = float(int((y != -100).sum().item()))
        return g, x, y, n_non_ignore

    @case("cross_entropy_fwd")
    def _():
        g, x, y, nni = ce_inputs(SEED + 12)
        loss = torch.zeros(M, device=dev, dtype=f32)
        lse = torch.zeros(M, device=dev, dtype=f32)
        return dict(kernel=cross_entropy_fwd_kernel, grid=(M,),
                    args=[("LOSS", loss), ("LSE", lse), ("X", x), ("Y", y),
                          ("stride", x.stride(0)), ("n_cols", N), ("n_non_ignore", nni),
                          ("ignore_index", -100)],
                    constexprs={"BLOCK_SIZE": 256}, num_warps=4)

    @case("cross_entropy_bwd")
    def _():
        g, x, y, nni = ce_inputs(SEED + 13)
        lse = torch.logsumexp(x, dim=1).contiguous()
        dloss = randn(g, M, scale=0.5) + 1.0
        dx = torch.zeros_like(x)
        return dict(kernel=cross_entropy_bwd_kernel, grid=(M,),
                    args=[("DX", dx), ("X", x), ("Y", y), ("LSE", lse), ("DLOSS", dloss),
                          ("stride", x.stride(0)), ("n_cols", N), ("n_non_ignore", nni),
                          ("ignore_index", -100)],
                    constexprs={"BLOCK_SIZE": 256}, num_warps=4)

    SEQ, HEADS, HEAD_DIM = 7, 3, 96

    def rope_q(g):
        return randn(g, SEQ, HEADS, HEAD_DIM)

    def rope_inkernel(use_exp2):
        def build():
            g = gen(SEED + 14)
            q = rope_q(g)
            pos = torch.randint(0, 4096, (SEQ,), device=dev, generator=g, dtype=torch.int32)
            pos[0] = 0
            half = HEAD_DIM // 2
            return dict(kernel=rope_neox_inkernel_kernel, grid=(SEQ,),
                        args=[("Q", q), ("POS", pos), ("stride_s", q.stride(0)),
                              ("stride_h", q.stride(1)), ("n_heads", HEADS), ("half", half),
                              ("theta", 10000.0)],
                        constexprs={"BLOCK_H": npow2(HEADS), "BLOCK_D2": npow2(half),
                                    "USE_EXP2": use_exp2}, num_warps=4,
                        notes="in place on Q; positions up to 4095 (large angles)")
        return build

    cases["rope_neox_inkernel_exp2"] = rope_inkernel(True)
    cases["rope_neox_inkernel_exp_log"] = rope_inkernel(False)

    @case("rope_neox_table")
    def _():
        g = gen(SEED + 15)
        q = rope_q(g)
        max_pos = 64
        half = HEAD_DIM // 2
        pos = torch.randint(0, max_pos, (SEQ,), device=dev, generator=g, dtype=torch.int32)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, half, device=dev, dtype=torch.float64) / half))
        ang = torch.arange(max_pos, device=dev, dtype=torch.float64)[:, None] * inv_freq[None, :]
        cos = ang.cos().to(f32).contiguous()
        sin = ang.sin().to(f32).contiguous()
        return dict(kernel=rope_neox_table_kernel, grid=(SEQ,),
                    args=[("Q", q), ("COS", cos), ("SIN", sin), ("POS", pos),
                          ("stride_s", q.stride(0)), ("stride_h", q.stride(1)),
                          ("stride_cs", cos.stride(0)), ("n_heads", HEADS), ("half", half)],
                    constexprs={"BLOCK_H": npow2(HEADS), "BLOCK_D2": npow2(half)}, num_warps=4,
                    notes="in place on Q")

    def gelu(kern):
        def build():
            if kern is None:
                raise RuntimeError("libdevice.tanh is not importable in this Triton")
            g = gen(SEED + 16)
            x = randn(g, M, N, scale=3.0)
            y = torch.zeros_like(x)
            n = x.numel()
            bs = 1024
            return dict(kernel=kern, grid=((n + bs - 1) // bs,),
                        args=[("Y", y), ("X", x), ("n_elements", n)],
                        constexprs={"BLOCK_SIZE": bs}, num_warps=4)
        return build

    cases["gelu_tanh_libdevice"] = gelu(gelu_libdevice_kernel)
    cases["gelu_tanh_exp"] = gelu(gelu_exp_kernel)

    @case("row_sum_f32")
    def _():
        g = gen(SEED + 17)
        x = randn(g, M, N)
        out = torch.zeros(M, device=dev, dtype=f32)
        return dict(kernel=row_sum_kernel, grid=(M,),
                    args=[("OUT", out), ("X", x), ("stride", x.stride(0)), ("n_cols", N)],
                    constexprs={"BLOCK_SIZE": 256}, num_warps=4)

    @case("col_sum_f32")
    def _():
        g = gen(SEED + 18)
        rows = 7
        x = randn(g, rows, N)
        out = torch.zeros(N, device=dev, dtype=f32)
        bn = 256
        return dict(kernel=col_sum_kernel, grid=((N + bn - 1) // bn,),
                    args=[("OUT", out), ("X", x), ("stride", x.stride(0)), ("n_rows", rows),
                          ("n_cols", N)],
                    constexprs={"BLOCK_N": bn}, num_warps=2)

    return cases


# --------------------------------------------------------------------------------------------
# Running one case
# --------------------------------------------------------------------------------------------

def _jsonable(v):
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return repr(v)


def _tensor_arrays(prefix, t, arrays):
    """Add t (a CUDA tensor) to arrays under prefix, with bit views."""
    import torch
    c = t.detach().contiguous().cpu()
    if c.dtype == torch.bfloat16:
        arrays[prefix] = c.to(torch.float32).numpy()
        arrays[prefix + ".u16"] = c.view(torch.int16).numpy().view("uint16")
    elif c.dtype == torch.float16:
        arrays[prefix] = c.numpy()
        arrays[prefix + ".u16"] = c.view(torch.int16).numpy().view("uint16")
    elif c.dtype == torch.float32:
        arrays[prefix] = c.numpy()
        arrays[prefix + ".u32"] = c.view(torch.int32).numpy().view("uint32")
    else:
        arrays[prefix] = c.numpy()


def run_case(name, build, out_dir):
    import numpy as np
    import torch
    import triton

    spec = build()
    kern = spec["kernel"]
    grid = tuple(spec["grid"])
    args = spec["args"]
    constexprs = spec.get("constexprs", {})
    num_warps = spec.get("num_warps", 4)
    num_stages = spec.get("num_stages", None)

    arrays = {}
    before = {}
    arg_desc = []
    for i, (an, v) in enumerate(args):
        if isinstance(v, torch.Tensor):
            before[an] = v.detach().clone()
            _tensor_arrays("in." + an, v, arrays)
            arg_desc.append({"index": i, "name": an, "kind": "tensor", "dtype": str(v.dtype),
                             "shape": list(v.shape), "stride": list(v.stride()),
                             "data_ptr_mod_16": int(v.data_ptr() % 16), "constexpr": False})
        elif isinstance(v, bool):
            arg_desc.append({"index": i, "name": an, "kind": "scalar", "type": "i1",
                             "value": v, "constexpr": False})
        elif isinstance(v, int):
            ty = "i32" if -2**31 <= v < 2**31 else "i64"
            arg_desc.append({"index": i, "name": an, "kind": "scalar", "type": ty, "value": v,
                             "constexpr": False,
                             "triton_specialisation": ("==1" if v == 1 else
                                                       "div16" if v % 16 == 0 else None)})
        elif isinstance(v, float):
            arg_desc.append({"index": i, "name": an, "kind": "scalar", "type": "fp32",
                             "value": v, "value_fp32_bits": int(np.array(v, dtype=np.float32)
                                                                .view(np.uint32)),
                             "constexpr": False})
        else:
            arg_desc.append({"index": i, "name": an, "kind": "other", "value": repr(v),
                             "constexpr": False})
    for cn, cv in constexprs.items():
        arg_desc.append({"name": cn, "kind": "constexpr", "value": _jsonable(cv),
                         "constexpr": True})

    launch_kw = dict(constexprs)
    launch_kw["num_warps"] = num_warps
    if num_stages is not None:
        launch_kw["num_stages"] = num_stages
    t0 = time.time()
    k = kern[grid](*[v for _, v in args], **launch_kw)
    torch.cuda.synchronize()
    dt = time.time() - t0
    if k is None or not hasattr(k, "asm"):
        raise RuntimeError(f"launch returned {type(k).__name__}, not a compiled kernel")

    ptx = k.asm["ptx"]
    if isinstance(ptx, bytes):
        ptx = ptx.decode()
    with open(os.path.join(out_dir, name + ".ptx"), "w") as fh:
        fh.write(ptx)
    try:
        ttgir = k.asm.get("ttgir") if hasattr(k.asm, "get") else None
        if ttgir:
            with open(os.path.join(out_dir, name + ".ttgir"), "w") as fh:
                fh.write(ttgir if isinstance(ttgir, str) else ttgir.decode())
    except Exception as e:
        log(f"{name}: no ttgir ({e})")

    changed = []
    for an, v in args:
        if isinstance(v, torch.Tensor):
            if not torch.equal(v.detach().view(torch.uint8) if v.dtype != torch.bool else v,
                               before[an].view(torch.uint8) if v.dtype != torch.bool
                               else before[an]):
                changed.append(an)
                _tensor_arrays("out." + an, v, arrays)
    np.savez_compressed(os.path.join(out_dir, name + ".npz"), **arrays)

    meta = {}
    md = getattr(k, "metadata", None)
    if md is not None:
        if hasattr(md, "_asdict"):
            meta = _jsonable(md._asdict())
        elif isinstance(md, dict):
            meta = _jsonable(md)
        else:
            meta = {f: _jsonable(getattr(md, f)) for f in dir(md)
                    if not f.startswith("_") and not callable(getattr(md, f, None))}
    shared = meta.get("shared") if isinstance(meta, dict) else None
    for attr in ("n_regs", "n_spills", "n_max_threads"):
        try:
            meta["kernel_" + attr] = _jsonable(getattr(k, attr))
        except Exception:
            pass

    entries = ptx_entries(ptx)
    info = OrderedDict(
        name=name,
        entry=entries[0] if entries else None,
        entries=entries,
        kernel_fn=getattr(getattr(kern, "fn", None), "__name__", None),
        grid=list(grid) + [1] * (3 - len(grid)),
        block=[32 * num_warps, 1, 1],
        num_warps=num_warps,
        num_stages=meta.get("num_stages") if isinstance(meta, dict) else None,
        shared_bytes=shared,
        ptx_params=ptx_params(ptx),
        args=arg_desc,
        tensors_written=changed,
        npz_keys="in.<arg> before launch; out.<arg> after launch, only for tensors whose bits "
                 "changed; float32 also as <key>.u32, bf16/f16 as <key>.u16 (bf16 <key> is "
                 "the float32 widening)",
        notes=spec.get("notes", ""),
        launch_seconds_incl_compile=round(dt, 3),
        metadata=meta,
        versions={"triton": triton.__version__, "torch": torch.__version__,
                  "cuda": torch.version.cuda, "python": sys.version.split()[0],
                  "device": torch.cuda.get_device_name(0),
                  "capability": list(torch.cuda.get_device_capability(0))},
        special_instructions=special_counts(ptx),
    )
    with open(os.path.join(out_dir, name + ".json"), "w") as fh:
        json.dump(info, fh, indent=1)
    return info


def run_inprocess(out_dir, names):
    """Run the named cases in this process; returns {name: 'ok' | error string}."""
    results = OrderedDict()
    try:
        cases = define_cases()
    except Exception:
        tb = traceback.format_exc()
        log("defining the kernels failed:\n" + tb)
        return {n: "define failed" for n in names}
    for n in names:
        if n not in cases:
            results[n] = "unknown case"
            log(f"{n}: unknown case")
            continue
        log(f"{n}: compiling and launching")
        try:
            info = run_case(n, cases[n], out_dir)
            sc = ", ".join(f"{a}x{b}" for a, b in info["special_instructions"].items())
            log(f"{n}: ok entry={info['entry']} shared={info['shared_bytes']} "
                f"wrote {info['tensors_written']} | {sc}")
            results[n] = "ok"
        except Exception as e:
            log(f"{n}: FAILED {type(e).__name__}: {e}\n{traceback.format_exc()}")
            results[n] = f"{type(e).__name__}: {str(e)[:300]}"
    return results


CASE_NAMES = [
    "rmsnorm_fwd_f32", "rmsnorm_fwd_bf16", "rmsnorm_bwd_f32", "fused_add_rmsnorm_f32",
    "layernorm_fwd_loop_sqrt", "layernorm_fwd_sqrt", "layernorm_fwd_rsqrt",
    "layernorm_fwd_sqrt_rn", "layernorm_bwd_atomic_n768", "layernorm_bwd_atomic_n1000",
    "layernorm_bwd_atomic_relaxed_n768", "layernorm_bwd_lock", "layernorm_bwd_dwdb",
    "softmax_fwd_f32", "softmax_fwd_bf16", "softmax_bwd_f32", "online_softmax_exp",
    "online_softmax_exp2", "log_softmax_f32", "cross_entropy_fwd", "cross_entropy_bwd",
    "rope_neox_inkernel_exp2", "rope_neox_inkernel_exp_log", "rope_neox_table",
    "gelu_tanh_libdevice", "gelu_tanh_exp", "row_sum_f32", "col_sum_f32",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--jobs", type=int, default=4, help="child processes at once (default 4)")
    ap.add_argument("--inprocess", action="store_true", help="run all cases in this process")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per child (default 300)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--summary-only", action="store_true",
                    help="only print the table/histogram of the PTX already in out_dir")
    a = ap.parse_args()

    if a.list:
        print("\n".join(CASE_NAMES))
        return 0
    if not a.out_dir:
        ap.error("out_dir is required")
    os.makedirs(a.out_dir, exist_ok=True)
    if a.summary_only:
        summarize(a.out_dir)
        return 0
    names = [n for n in a.only.split(",") if n] or list(CASE_NAMES)

    if a.child or a.inprocess:
        res = run_inprocess(a.out_dir, names)
        if a.child:
            return 0 if all(v == "ok" for v in res.values()) else 1
    else:
        res = OrderedDict()
        script = os.path.abspath(__file__)
        log(f"running {len(names)} cases, {a.jobs} child processes at once, output {a.out_dir}")

        def one(n):
            t0 = time.time()
            try:
                p = subprocess.run([sys.executable, script, a.out_dir, "--child", "--only", n],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=a.timeout, text=True)
                tail = p.stdout[-4000:]
                status = "ok" if p.returncode == 0 else f"exit {p.returncode}"
            except subprocess.TimeoutExpired as e:
                out = e.stdout or ""
                if isinstance(out, bytes):
                    out = out.decode(errors="replace")
                tail = out[-4000:]
                status = f"timeout after {a.timeout}s"
            return n, status, tail, time.time() - t0

        with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = [ex.submit(one, n) for n in names]
            for f in cf.as_completed(futs):
                n, status, tail, dt = f.result()
                res[n] = status
                if status == "ok":
                    log(f"{n}: ok ({dt:.1f}s)")
                else:
                    log(f"{n}: {status} ({dt:.1f}s); child output tail:\n{tail}")
        res = OrderedDict((n, res[n]) for n in names)

    ok = [n for n, v in res.items() if v == "ok"]
    bad = [(n, v) for n, v in res.items() if v != "ok"]
    total = 0
    for f in os.listdir(a.out_dir):
        p = os.path.join(a.out_dir, f)
        if os.path.isfile(p):
            total += os.path.getsize(p)
    print(f"cases ok: {len(ok)}/{len(res)}; output {total / 1e6:.2f} MB in {a.out_dir}")
    for n, v in bad:
        print(f"  FAILED {n}: {v}")
    print()
    summarize(a.out_dir, names=set(ok) if not a.inprocess else None)
    with open(os.path.join(a.out_dir, "results.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
