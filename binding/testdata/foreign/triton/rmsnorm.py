"""RMSNorm kernels written in Triton, used as foreign test data for ptxprop.

Forward, per row i of x [rows, hidden]:
    r_i = (mean_j x_ij^2 + eps)^(-1/2)
    y_ij = x_ij * r_i * gamma_j,   rstd_i = r_i (saved for the backward)

Backward, with dy = dL/dy.  d r_i / d x_ik = -r_i^3 x_ik / hidden, so
    dx_ik = r_i gamma_k dy_ik - x_ik r_i^3 (1/hidden) sum_j gamma_j dy_ij x_ij
    dgamma_j = sum_i dy_ij x_ij r_i

rmsnorm_bwd_kernel writes dx and one partial dgamma row per program (the
sum over its ROWS_PER_PROGRAM-row block, rows in order) into a scratch
buffer [programs, hidden]; rmsnorm_dgamma_reduce_kernel then sums the
partials over programs in index order, so dgamma does not depend on
scheduling.  rmsnorm_bwd_atomic_kernel adds each program's partial into
dgamma with a float atomic instead: the order of those additions, and so
the rounding of dgamma, depends on which program gets there first.

Dimensions, strides and eps are run-time arguments; the integer ones are
excluded from Triton's value specialisation (do_not_specialize) so the
compiled PTX serves every shape up to BLOCK columns.
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["stride_x", "stride_y", "n_cols"])
def rmsnorm_fwd_kernel(X, Y, W, RSTD, stride_x, stride_y, n_cols, eps,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_sq + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride_y + cols, x * rstd * w, mask=mask)
    tl.store(RSTD + row, rstd)


@triton.jit
def _row_grad(DY, X, RSTD, DX, row, stride_dy, stride_x, stride_dx,
              n_cols, cols, mask, w):
    # One row's dx; returns its dgamma term dy * x * r.
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row * stride_dy + cols, mask=mask, other=0.0)
    r = tl.load(RSTD + row)
    wdy = w * dy
    c = tl.sum(wdy * x, axis=0) / n_cols
    dx = r * wdy - x * (r * r * r * c)
    tl.store(DX + row * stride_dx + cols, dx, mask=mask)
    return dy * x * r


@triton.jit(do_not_specialize=["stride_dy", "stride_x", "stride_dx", "n_rows",
                               "n_cols", "rows_per_program"])
def rmsnorm_bwd_kernel(DY, X, W, RSTD, DX, PARTIAL, stride_dy, stride_x,
                       stride_dx, n_rows, n_cols, rows_per_program,
                       BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(W + cols, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    first = pid * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    for row in range(first, last):
        acc += _row_grad(DY, X, RSTD, DX, row, stride_dy, stride_x,
                         stride_dx, n_cols, cols, mask, w)
    tl.store(PARTIAL + pid * n_cols + cols, acc, mask=mask)


@triton.jit(do_not_specialize=["n_partials", "n_cols"])
def rmsnorm_dgamma_reduce_kernel(PARTIAL, DW, n_partials, n_cols,
                                 BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for p in range(0, n_partials):
        acc += tl.load(PARTIAL + p * n_cols + cols, mask=mask, other=0.0)
    tl.store(DW + cols, acc, mask=mask)


@triton.jit(do_not_specialize=["stride_dy", "stride_x", "stride_dx", "n_rows",
                               "n_cols", "rows_per_program"])
def rmsnorm_bwd_atomic_kernel(DY, X, W, RSTD, DX, DW, stride_dy, stride_x,
                              stride_dx, n_rows, n_cols, rows_per_program,
                              BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(W + cols, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    first = pid * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    for row in range(first, last):
        acc += _row_grad(DY, X, RSTD, DX, row, stride_dy, stride_x,
                         stride_dx, n_cols, cols, mask, w)
    tl.atomic_add(DW + cols, acc, mask=mask)


@triton.jit(do_not_specialize=["n"])
def zero_kernel(P, n, BLOCK_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(P + offs, tl.zeros([BLOCK_N], dtype=tl.float32), mask=offs < n)
