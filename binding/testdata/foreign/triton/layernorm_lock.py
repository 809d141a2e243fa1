"""LayerNorm backward written in Triton the way most tutorials write it, used
as foreign test data for ptxprop: its dgamma/dbeta are NOT deterministic.

Per row i of x [rows, hidden], with mean_i and rstd_i saved by the forward,
xhat_ij = (x_ij - mean_i) * rstd_i and g_ij = gamma_j * dy_ij:
    dx_ij = rstd_i * (g_ij - (xhat_ij * mean_j(xhat_ij g_ij) + mean_j(g_ij)))
    dgamma_j = sum_i dy_ij xhat_ij,    dbeta_j = sum_i dy_ij

layernorm_bwd_lock_kernel (one program per row) writes dx, then adds its
row's dgamma/dbeta contribution into one of GROUP partial rows (row % GROUP)
while holding that group's spin lock; the first program to arrive stores
instead of adding (a per-group counter says which).  The order in which the
programs of one group take the lock decides the order of the additions, so
once two rows share a group (rows > GROUP) the partial sums, and dgamma and
dbeta after layernorm_bwd_group_reduce_kernel sums the GROUP partial rows,
change bits from run to run.

Dimensions and strides are run-time arguments (do_not_specialize), so one
PTX serves every shape up to BLOCK columns.
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["stride", "n_cols"])
def layernorm_bwd_lock_kernel(DX, DY, PDW, PDB, X, W, MEAN, RSTD, LOCKS, stride, n_cols,
                              GROUP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0)
    w = tl.load(W + cols, mask=mask, other=0.0)
    mean = tl.load(MEAN + row)
    rstd = tl.load(RSTD + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    g = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * g, axis=0) / n_cols
    c2 = tl.sum(g, axis=0) / n_cols
    tl.store(DX + row * stride + cols, (g - (xhat * c1 + c2)) * rstd, mask=mask)
    pdw = dy * xhat
    pdb = dy
    group = row % GROUP
    lock = LOCKS + group
    count = LOCKS + GROUP + group
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    seen = tl.load(count)
    if seen == 0:
        tl.atomic_xchg(count, 1)
    else:
        pdw += tl.load(PDW + group * n_cols + cols, mask=mask, other=0.0)
        pdb += tl.load(PDB + group * n_cols + cols, mask=mask, other=0.0)
    tl.store(PDW + group * n_cols + cols, pdw, mask=mask)
    tl.store(PDB + group * n_cols + cols, pdb, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit(do_not_specialize=["n_groups", "n_cols"])
def layernorm_bwd_group_reduce_kernel(PDW, PDB, DW, DB, n_groups, n_cols,
                                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc_w = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_groups, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        m = (rows[:, None] < n_groups) & (cols[None, :] < n_cols)
        offs = rows[:, None] * n_cols + cols[None, :]
        acc_w += tl.load(PDW + offs, mask=m, other=0.0)
        acc_b += tl.load(PDB + offs, mask=m, other=0.0)
    tl.store(DW + cols, tl.sum(acc_w, axis=0), mask=cols < n_cols)
    tl.store(DB + cols, tl.sum(acc_b, axis=0), mask=cols < n_cols)
