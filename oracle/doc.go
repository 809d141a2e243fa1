// Package oracle provides float64 reference implementations, derivative
// checks and float32 forward error bounds for the normalisation, rotary
// embedding and softmax kernels ptxprop verifies: RMSNorm (forward,
// backward, fused residual, per head), LayerNorm (forward, backward), RoPE
// (NeoX and GPT-J layouts, forward and backward) and row-wise softmax
// (forward, backward; ex2.approx assumed within Ex2ApproxRelErr).
//
// # Conventions
//
//   - Tensors are flat, row-major slices: x is [rows][hidden], element (r, i)
//     at x[r*hidden+i]. Per-head tensors are [rows][heads·headDim] with
//     each head's headDim values contiguous. Per-row statistics (rms, mean,
//     rstd) have one value per row ([rows][heads] for per-head RMSNorm).
//     γ, β and dγ, dβ have length hidden (headDim for per-head RMSNorm).
//   - Destinations come first: RMSNormForward(y, rms, x, gamma, ...). An
//     optional destination (rms, mean, rstd, dgamma, dbeta, and their
//     tolerances) may be nil.
//   - Everything is float64, except the *32Naive evaluations, which take
//     and return float32 so that they are exactly what a float32 kernel
//     could compute. Inputs given to references and bounds must be the
//     float32 values the kernel sees (RoundToFloat32); eps and θ may be any
//     float64: the bounds include their rounding to float32.
//   - RoPE positions are float64, one per row (integers up to 2^24 are
//     exact in float32); angles are pos·θ^(−2i/headDim) (RoPEAngles).
//   - Functions panic on mismatched slice lengths or impossible shapes
//     (programmer errors, as in gonum/floats); they never panic on data.
//
// # References
//
// The references accumulate with a Kahan–Babuška–Neumaier sum (the
// algorithm of floats.SumCompensated) whose products are split exactly with
// an FMA, and LayerNorm carries its mean as a double-double, so their error
// is a few binary64 ulps of the magnitudes involved; the tests check them
// against math/big.Float at 256 bits to 1e-14. The RMSNorm hot loops take
// each addition's error with Knuth's branch-free TwoSum and skip product
// errors that are zero (squares of float32 values are exact): the same
// sums, bit for bit, redone with the Neumaier form where TwoSum alone would
// overflow.
//
// RMSNormForwardWithTol and RMSNormBackwardWithTol return a reference and
// its bound from one pass over the row sums they share; they write exactly
// what the separate functions write.
//
// # Derivatives
//
// DirectionalDerivativeFD (central differences with two levels of
// Richardson extrapolation and an error estimate) and ComplexStep
// (Im f(x+ihv)/h with complex128 forwards, exact to rounding because it has
// no subtraction) give ⟨∇L, v⟩ independently of the backward formulas;
// RMSNormDirectional, LayerNormDirectional, PerHeadRMSNormDirectional,
// RoPENeoXDirectional and SoftmaxDirectional return all three for L = ⟨forward(θ), w⟩.
//
// # Error bounds
//
// For every kernel a *Tol function returns a per-element bound on
// |kernel − exact| for a float32 kernel, derived by forward error analysis
// (Higham, Accuracy and Stability of Numerical Algorithms, ch. 2–4) under
// these assumptions, each stated again, with the derivation, in the
// function's comment:
//
//   - IEEE binary32 arithmetic, round to nearest: |fl(a∘b) − a∘b| ≤
//     u·|a∘b| + η with u = U32 = 2^-24 and η = Eta32 = 2^-150 for
//     underflowing products and quotients (gradual underflow, no
//     flush-to-zero; additions are exact when subnormal). FMA contraction
//     only removes roundings and is covered. Values never overflow. The
//     exception is a sum over rows (dγ, dβ) added with atom/red.add.f32
//     on global memory, which flush subnormal terms and results: its
//     Reduction says Flush, and each addition adds 2^-125 (FlushPerAddition).
//   - Every division, square root, reciprocal square root, exp2 and log2
//     is within the documented error of the instruction sm_90 kernels
//     compile it to (instr.go), not correctly rounded: div.full.f32
//     2 ulp (5u, or 5η on a subnormal quotient), sqrt.approx.f32 2^-23,
//     rsqrt.approx.f32 2^-22.9 (and CUDA rsqrtf 2 ulp), ex2.approx.f32
//     2 ulp, lg2.approx.f32 2^-22 (absolute on (0.5, 2), else relative),
//     k ulp counted from the correctly rounded result, so relative error
//     ≤ (2k+1)·u; CUDA's '/', sqrtf, expf/exp2f, logf/log2f and powf
//     (4 ulp) are within these; sinf/cosf/sincosf 2 ulp with exact range
//     reduction. Fast-math intrinsics (__expf, __sinf, __fdividef) and
//     sin.approx/cos.approx are not covered.
//   - Reductions follow a Reduction shape: each term goes through at most
//     Reduction.Depth(n) rounded additions, so a sum of n terms is within
//     γ_depth·Σ|terms| (Gamma). SerialReduction (depth n−1) is valid for
//     any order, atomics included; a kernel with a strided loop over T
//     threads and a tree gets the much smaller TreeReduction(T) bound.
//   - Each bound names the float32 operation sequences it covers
//     (e.g. 1/sqrtf or rsqrtf, x·ri·γ in either association, two-pass or
//     one-pass variance, exp2f/log2f, expf/logf or powf frequencies).
//
// The bounds are rigorous worst cases with first-order-tight constants:
// on random data a naive float32 evaluation reaches 0.3–1 of them (exactly
// 1 where a single rounding decides, e.g. s = fl(residual + x)), and
// adversarial emulators that sum in tree orders and push every approximate
// function to its ulp limit stay within them; both are what
// SoundnessCheck and the package tests measure. Bounds that grow with the
// depth of a reduction are only tight for the order they were derived for:
// a serial sum fails the bound of a 256-thread tree.
//
// # Soundness evidence
//
// RMSNormForward32Naive and the other *32Naive functions evaluate each
// formula in float32 in the naive serial order. Case, GenerateCase and
// SoundnessCheck draw random cases (edge-grid shapes, mixed scales,
// constant, zero, subnormal and offset rows, eps and θ grids, positions up
// to 131072), compare the naive float32 result to the reference and return
// the largest error/bound ratio, which must not exceed 1. The Chooser
// interface lets a property-based testing library drive the same
// distribution with labelled draws.
package oracle
