"""A Triton kernel left to Triton's default value specialisation, to show
what scripts/triton_export.py reports: exported with n_cols == 1 the
argument is compiled in as a constant and is no .param of the entry; an
int argument divisible by 16 (the row stride here) keeps its .param but is
assumed divisible by 16 by the compiled code."""
import triton
import triton.language as tl


@triton.jit
def scale_rows_kernel(X, Y, stride, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride + cols, x * scale, mask=mask)
