"""Row-wise softmax written in Triton, used as foreign test data for ptxprop.

Forward, per row i of x [rows, n]:   y_ij = exp(x_ij - max_k x_ik) / sum_k exp(x_ik - max_k x_ik)
Backward, with dy = dL/dy:           dx_ij = y_ij * (dy_ij - sum_k y_ik dy_ik)

tl.exp lowers to ex2.approx.f32 of x·log2(e).  One program per row; the
row must fit in BLOCK columns.  Dimensions and strides are run-time
arguments (do_not_specialize).
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["stride_x", "stride_y", "n_cols"])
def softmax_fwd_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    s = tl.sum(e, axis=0)
    tl.store(Y + row * stride_y + cols, e / s, mask=mask)


@triton.jit(do_not_specialize=["stride_y", "stride_dy", "stride_dx", "n_cols"])
def softmax_bwd_kernel(Y, DY, DX, stride_y, stride_dy, stride_dx, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    y = tl.load(Y + row * stride_y + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row * stride_dy + cols, mask=mask, other=0.0)
    dot = tl.sum(y * dy, axis=0)
    tl.store(DX + row * stride_dx + cols, y * (dy - dot), mask=mask)
