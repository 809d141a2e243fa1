package properties

import "github.com/ptxprop/ptxprop/op"

// The IDs of the predictions, as upstream spells them. Each maps to one
// contract function (XxxContract) that checks it; the table in init below
// states each claim.
const (
	// RMSNorm forward and backward, fused residual + RMSNorm.
	RMSFwd       = "RMS-FWD-001"
	RMSBackWarp  = "P-RMS-BACK-001"
	BRMSBack     = "P-BRMS-BACK-001"
	BRMSBackFD   = "C-BRMS-BACK-001"
	EpsParity    = "FALSIFY-CUDA-RMSNORM-EPS-PARITY-001"
	FusedRMSNorm = "FALSIFY-CUDA-FUSED-RMSNORM-DEADLOCK-001"

	// LayerNorm and per-head RMSNorm.
	LNForward  = "LN-FWD-001"
	LNBackward = "LN-BWD-001"
	LNShift    = "LN-SHIFT-001"
	LNMoments  = "LN-MOMENTS-001"
	QKNForward = "QKN-FWD-001"
	QKNHeads   = "QKN-HEAD-001"

	// RoPE (NeoX).
	RoPEThetaCache = "FALSIFY-CUDA-ROPE-THETA-CACHE-KEY-001"
	RoPEBasis      = "FALSIFY-CUDA-NF4-TRAIN-LOSS-PARITY-001"
	RoPEBackward   = "ROPE-BWD-001"

	// Row-wise softmax.
	SoftmaxFwd   = "SOFTMAX-FWD-001"
	SoftmaxBwd   = "SOFTMAX-BWD-001"
	SoftmaxShift = "SOFTMAX-SHIFT-001"
	SoftmaxSum   = "SOFTMAX-SUM-001"

	// Metamorphic relations, determinism, dimension independence,
	// robustness, GPU/emulator parity and the parity of a run's devices.
	BatchIndependence = "META-BATCH-001"
	RowPermutation    = "META-PERM-001"
	ScaleInvariance   = "META-SCALE-001"
	Determinism       = "FALSIFY-GPUTRAIN-006"
	DimIndependence   = "FALSIFY-DIM-001"
	Robustness        = "ROBUST-001"
	Parity            = "PARITY-001"
	MultiDeviceParity = "MULTI-DEVICE-PARITY-001"
	Dependence        = "DEPEND-001"

	// The oracle's own claims: they run on the CPU alone and are the first
	// evidence that the tolerances every other prediction uses are sound.
	OracleSound    = "ORACLE-SOUND-001"
	OracleGradient = "ORACLE-GRAD-001"

	// Throughput is the prediction the fixed-shape benchmarks record into;
	// it is registered so their checks are reported like any other.
	Throughput = "BENCH-THROUGHPUT"
)

// The tolerance formulas the predictions state.
const (
	rmsFwdTolNote = "oracle.RMSNormForwardTol: |y|·((d+4)/2+7)·u to first order, d = Σx² reduction depth"
	rmsBwdTolNote = "oracle.RMSNormBackwardTol: path errors of γ·dy·ri and x·ri³·S/n with S's error γ_{d+3}·Σ|γ·dy·x|"
	fdTolNote     = "Σ_i |v_i|·tolDX_i + FD error estimate (Richardson, oracle.DirectionalDerivativeFD)"
	fusedTolNote  = "residual_out bit-exact (one float32 add); y: oracle.FusedResidualRMSNormTol"
	epsParityNote = "oracle.RMSNormForwardTol at the drawn ε; the ε'=10ε oracle must lie outside it"
	lnTolNote     = "oracle.LayerNormForwardTol (two-pass variance; bounds in Σ|x|, not in the mean, so cancellation is covered)"
	lnBwdNote     = "oracle.LayerNormBackwardTol"
	qknTolNote    = "oracle.PerHeadRMSNormTol (RMSNormForwardTol per head)"
	lnShiftNote   = "tolY(x) + tolY(x+c), with x+c exact in float32"
	lnMomNote     = "Σ tolY/n for the mean; (2Σ|y|·tolY + Σ tolY²)/n for the variance, against the exact var/(var+ε)"
	smFwdTolNote  = "oracle.SoftmaxForwardTol: (E_j + y_j·E_s)/(s − E_s) + 5u·(y_j + ·) + 2^-126, E_j = e_j·((1+ρ_j)(1+5u) − 1) + 2^-126, ρ_j = exp(γ₃|x_j − max|) − 1 (ex2.approx 2 ulp), E_s = ΣE + γ_k(s + ΣE)"
	smBwdTolNote  = "oracle.SoftmaxBackwardTol: |y|·E_g + u(|dx| + |y|·E_g), E_g = E_S + u(|dy| + |S| + E_S), E_S = γ_{k+1}Σ|y·dy|"
	ropeTolNote   = "oracle.RoPETol: (|x_p|+|x_q|)·(|A|·(5u·|ln f|+11u) + 6u) to first order, A = pos·freq (the float32 angle error dominates at large positions)"
)

func init() {
	for _, p := range []Prediction{
		{ID: RMSFwd, Ops: ops(op.RMSNormForward), Contract: On(RMSNormForwardContract),
			Title:     "RMSNorm forward matches the float64 oracle",
			Statement: "y = x/rms·γ and rms = sqrt(mean(x²)+ε) agree with the float64 oracle within the derived per-element bound for every shape, ε and value distribution; every output element is written",
			Kernels:   []string{"rmsnorm_fwd", "rmsnorm_fwd_rms"}, Tolerance: rmsFwdTolNote, Device: true},
		// The single-warp design alone (hidden ≤ 32): no contract
		// for other backwards, bound ones included.
		{ID: RMSBackWarp, Ops: ops(op.RMSNormBackward), Design: On(RMSNormBackwardWarpContract), Exclusive: true,
			Title:     "single-warp RMSNorm backward matches finite differences",
			Statement: "for hidden ≤ 32, ⟨dx, v⟩ equals the Richardson finite difference of L(x) = ⟨RMSNorm(x), dy⟩ along random v, and dx, dγ match the analytic float64 gradient, within the derived bound; the rms input already includes ε and ε is not added again",
			Kernels:   []string{"rmsnorm_bwd_warp32", "colsum_f32"}, Tolerance: rmsBwdTolNote + "; " + fdTolNote, Device: true},
		{ID: BRMSBack, Ops: ops(op.RMSNormBackward), Contract: On(RMSNormBackwardContract),
			Title:     "batched RMSNorm backward matches the analytic gradient",
			Statement: "for every hidden (1..16384) and rows, dx and dγ of both deterministic designs agree with the float64 analytic gradient within the derived bound",
			Kernels:   []string{"rmsnorm_bwd_rowwarp", "rmsnorm_bwd_chunk", "colsum_f32"}, Tolerance: rmsBwdTolNote, Device: true,
			Regimes: rowSumRegimes},
		{ID: BRMSBackFD, Ops: ops(op.RMSNormBackward), Contract: On(RMSNormBackwardFDContract),
			Title:     "batched RMSNorm backward matches finite differences",
			Statement: "⟨dx, v⟩ and ⟨dγ, w⟩ of both batched designs equal Richardson finite differences of the float64 forward loss along random directions",
			Kernels:   []string{"rmsnorm_bwd_rowwarp", "rmsnorm_bwd_chunk", "colsum_f32"}, Tolerance: fdTolNote, Device: true,
			Regimes: wideChunkRegimes},
		{ID: EpsParity, Ops: ops(op.RMSNormForward), Contract: On(EpsParityContract),
			Title:     "RMSNorm forward honours ε",
			Statement: "with ε drawn over [1e-8, 1e-2] and rows where mean(x²) is comparable to ε, the forward matches the oracle at that ε and not the oracle at 10ε (which tells ε=1e-5 from 1e-6)",
			Kernels:   []string{"rmsnorm_fwd", "rmsnorm_fwd_rms"}, Tolerance: epsParityNote, Device: true},
		{ID: FusedRMSNorm, Ops: ops(op.FusedResidualRMSNorm), Contract: On(FusedResidualRMSNormContract),
			Title:     "fused residual + RMSNorm completes and is correct, aliased or not",
			Statement: "with a distinct and with an aliased residual_out the launcher returns within the watchdog, residual_out == residual + x bit for bit, y matches the oracle, and every row is written",
			Kernels:   []string{"fused_residual_rmsnorm"}, Tolerance: fusedTolNote, Device: true},
		{ID: LNForward, Ops: ops(op.LayerNormForward), Contract: On(LayerNormForwardContract),
			Title:     "LayerNorm forward matches the float64 oracle",
			Statement: "y = (x−μ)·rstd·γ + β, and μ and rstd where the kernel saves them, agree with the float64 oracle within the derived bound",
			Kernels:   []string{"layernorm_fwd", "layernorm_fwd_stats"}, Tolerance: lnTolNote, Device: true},
		{ID: LNBackward, Ops: ops(op.LayerNormBackward), Contract: On(LayerNormBackwardContract),
			Title:     "LayerNorm backward matches the analytic gradient",
			Statement: "dx, dγ and dβ agree with the float64 analytic gradient within the derived bound",
			Kernels:   []string{"layernorm_bwd_chunk", "colsum_f32"}, Tolerance: lnBwdNote, Device: true,
			Regimes: lnBwdRegimes},
		{ID: LNShift, Ops: ops(op.LayerNormForward), Contract: On(LayerNormShiftContract),
			Title:     "LayerNorm is shift invariant",
			Statement: "LN(x + c) = LN(x) for a constant c (x + c exact in float32), within the two inputs' bounds",
			Kernels:   []string{"layernorm_fwd"}, Tolerance: lnShiftNote, Device: true},
		{ID: LNMoments, Ops: ops(op.LayerNormForward), Contract: On(LayerNormMomentsContract),
			Title:     "LayerNorm output is standardised",
			Statement: "with γ = 1, β = 0 each output row has mean 0 and variance var/(var+ε) (1 when var ≫ ε), within the bound",
			Kernels:   []string{"layernorm_fwd"}, Tolerance: lnMomNote, Device: true},
		{ID: QKNForward, Ops: ops(op.PerHeadRMSNorm), Contract: On(PerHeadRMSNormContract),
			Title:     "per-head RMSNorm matches the oracle",
			Statement: "each head of head_dim values is RMS-normalised with the shared γ[head_dim], within the derived bound",
			Kernels:   []string{"per_head_rmsnorm"}, Tolerance: qknTolNote, Device: true},
		{ID: QKNHeads, Ops: ops(op.PerHeadRMSNorm), Contract: On(PerHeadIndependenceContract),
			Title:     "per-head RMSNorm heads are independent",
			Statement: "changing one head's input leaves every other head's output bit-identical",
			Kernels:   []string{"per_head_rmsnorm"}, Tolerance: "bit-exact", Device: true},
		{ID: RoPEThetaCache, Ops: ops(op.RoPEForward), Contract: OnMode(RoPEThetaCacheContract),
			Title:     "RoPE never runs with a stale θ",
			Statement: "calling the forward with θ alternating between 1e4, 5e5, 1e6 and random values in one process, every call matches the NeoX oracle at its own θ (and the oracles at the other θ are refuted by the same bound)",
			Kernels:   []string{"rope_neox_fwd", "rope_neox_fwd_batched"}, Tolerance: ropeTolNote, Device: true},
		{ID: RoPEBasis, Ops: ops(op.RoPEBackward), Pair: op.RoPEForward, Contract: OnPair(RoPEBasisContract),
			Title:     "RoPE is NeoX split-half, not GPT-J, and its backward is the adjoint",
			Statement: "the forward matches the NeoX oracle (pairs (i, i+d/2)) and is refuted as GPT-J (pairs (2i, 2i+1)) on the same inputs; the backward is the adjoint of the forward as computed: ⟨R̂ x, w⟩ = ⟨x, R̂ᵀ w⟩ up to the rounding of the rotation alone (both turn by the same float32 angles), and R̂ᵀ(R̂ x) = x element by element; position 0 is the identity; each pair's norm is preserved — all within the derived bound",
			Kernels:   []string{"rope_neox_fwd_batched", "rope_neox_bwd_batched"}, Tolerance: ropeTolNote, Device: true},
		{ID: RoPEBackward, Ops: ops(op.RoPEBackward), Contract: On(RoPEBackwardContract),
			Title:     "RoPE backward is the transpose rotation",
			Statement: "the backward matches R(−angle)·dy from the float64 oracle within the derived bound",
			Kernels:   []string{"rope_neox_bwd_batched"}, Tolerance: ropeTolNote, Device: true},
		{ID: SoftmaxFwd, Ops: ops(op.SoftmaxForward), Contract: On(SoftmaxForwardContract),
			Title:     "softmax forward matches the float64 oracle",
			Statement: "y = exp(x − max)/Σexp(x − max) per row agrees with the float64 oracle within the derived per-element bound for every shape, including rows far above exp's overflow (x ≫ 88) and below its underflow; every output element is written",
			Kernels:   []string{"softmax_fwd"}, Tolerance: smFwdTolNote, Device: true},
		{ID: SoftmaxBwd, Ops: ops(op.SoftmaxBackward), Contract: On(SoftmaxBackwardContract),
			Title:     "softmax backward matches the analytic gradient and finite differences",
			Statement: "dx = y·(dy − Σy·dy) agrees with the float64 analytic backward at the given y within the derived bound, and ⟨dx, v⟩ with the complex-step and Richardson finite-difference derivative of ⟨softmax(x), dy⟩ along random v",
			Kernels:   []string{"softmax_bwd"}, Tolerance: smBwdTolNote + "; " + fdTolNote, Device: true},
		{ID: SoftmaxShift, Ops: ops(op.SoftmaxForward), Contract: On(SoftmaxShiftContract),
			Title:     "softmax is shift invariant",
			Statement: "softmax(x + c) = softmax(x) for a constant c with x + c exact in float32, within the two inputs' bounds, for rows up to 2^18 in magnitude",
			Kernels:   []string{"softmax_fwd"}, Tolerance: "tolY(x) + tolY(x+c), with x+c exact in float32", Device: true},
		{ID: SoftmaxSum, Ops: ops(op.SoftmaxForward), Contract: On(SoftmaxSumContract),
			Title:     "softmax rows sum to 1",
			Statement: "every output is nonnegative within its bound and each output row sums to 1 within the sum of its elements' bounds",
			Kernels:   []string{"softmax_fwd"}, Tolerance: "Σ_j oracle.SoftmaxForwardTol_j (the exact row sums to 1)", Device: true},
		{ID: BatchIndependence, Ops: RowWise(), Contract: OnImpls(BatchIndependenceContract),
			Title:     "row-wise kernels are batch independent",
			Statement: "a row's row-wise outputs are bit-identical whether it is computed alone or inside any batch, for every row-wise kernel (forwards, per-head, RoPE, softmax, and the dx of the backwards)",
			Tolerance: "bit-exact", Device: true},
		{ID: RowPermutation, Ops: RowWise(), Contract: OnImpls(RowPermutationContract),
			Title:     "row-wise kernels commute with row permutations",
			Statement: "permuting the input rows permutes the row-wise outputs, bit for bit",
			Tolerance: "bit-exact", Device: true},
		{ID: ScaleInvariance, Ops: ops(op.RMSNormForward), Contract: On(ScaleInvarianceContract),
			Title:     "RMSNorm is scale invariant up to ε",
			Statement: "y(αx) = y(x)·(exact ε effect) for α a power of two: |y(αx) − y(x)| ≤ tol(x) + tol(αx) + |y*(αx) − y*(x)| with y* the float64 oracle",
			Kernels:   []string{"rmsnorm_fwd_rms"}, Tolerance: "tol(x) + tol(αx) + oracle difference (the part ε explains)", Device: true},
		{ID: Determinism, Ops: Every(), Claim: "determinism", Contract: OnImpls(DeterminismContract),
			Title:     "results are bit-reproducible",
			Statement: "every output of every operation (forwards, backwards, per-head, RoPE, softmax; bound kernels included) is bit-identical across repeated launches of the same inputs with fresh outputs and scratch, with another launch interleaved, under another schedule (emulator seed), and on a freshly loaded module; statically, no float atomic appears in the PTX launched",
			Tolerance: "bit-exact", Device: true},
		{ID: DimIndependence, Ops: ops(op.RMSNormForward), Contract: On(DimIndependenceContract),
			Title:     "one module serves every shape",
			Statement: "the shapes drawn in a check launch every entry from the same module (the same PTX text) as the first shape, and each matches the oracle; every declared .param is read by its entry",
			Kernels:   []string{"rmsnorm_fwd", "rmsnorm_fwd_rms"}, Tolerance: rmsFwdTolNote, Device: true},
		{ID: Robustness, Ops: ops(op.RMSNormBackward), Pair: op.RMSNormForward, Contract: OnPair(func(t TB, f RMSNormForwarder, _ Positions, g RMSNormBackwarder) { RobustnessContract(t, f, g) }),
			Title:     "RMSNorm handles zeros, subnormals, huge values and IEEE specials",
			Statement: "zero rows give finite output and gradients when ε > 0; subnormal rows match the oracle; for magnitudes near float32 overflow and for ±Inf/NaN inputs the output is finite exactly where the float64 oracle's is, NaN where it is NaN and infinite where it is infinite",
			Kernels:   []string{"rmsnorm_fwd_rms", "rmsnorm_bwd_chunk"}, Tolerance: rmsFwdTolNote + " for zero/subnormal rows; class equality otherwise", Device: true},
		{ID: Parity, Ops: Every(), Contract: OnImpls(ParityContract),
			Title:     "the emulator reproduces the GPU",
			Statement: "on the same inputs every kernel gives bit-identical outputs on the GPU and on the PTX emulator when all its float instructions are correctly rounded, and outputs within twice the oracle bound otherwise (RoPE's and softmax's ex2.approx)",
			Tolerance: "bit-exact; RoPE: 2·oracle.RoPETol; softmax forward: 2·oracle.SoftmaxForwardTol", Device: true},
		{ID: Dependence, Ops: Every(), Contract: OnImpls(DependenceContract),
			Title:     "every output is computed from the inputs its operation declares",
			Statement: "on the emulator, which tracks the input elements each value is computed from (through registers, predicates, guards, selects, shuffles, loads with their addresses, shared, local and global memory; branches are not followed), every output element of every operation depends on exactly the elements op.DependencesOf declares: none outside them (another row, another head's γ, stale scratch), all it must read (no cached or constant result); skipped on the GPU",
			Tolerance: "exact (sets of input elements)", Device: true},
		{ID: MultiDeviceParity, Title: "every device of a run computes the same bits",
			Statement: "on the same inputs every kernel gives bit-identical outputs on each device of the run as on its first, when all its float instructions are correctly rounded, and outputs within twice the oracle bound otherwise (RoPE's and softmax's ex2.approx, which the PTX ISA bounds but does not pin)",
			Tolerance: "bit-exact; RoPE: 2·oracle.RoPETol; softmax forward: 2·oracle.SoftmaxForwardTol", Device: true},
		{ID: OracleSound, Title: "the derived bounds hold for a naive float32 evaluation",
			Statement: "for every kernel formula, a float32 CPU evaluation in naive serial order stays within the tolerance derived by forward error analysis (serial-order reduction) over generated shapes, magnitudes, ε, θ and positions",
			Tolerance: "each kernel's oracle.*Tol with oracle.SerialReduction()"},
		{ID: OracleGradient, Title: "analytic gradients agree with complex step and finite differences",
			Statement: "⟨∇L, v⟩ from the oracle's analytic backward agrees with the complex-step derivative to 1e-11 of the gradient's term scale and with Richardson finite differences within their error estimate, for RMSNorm, per-head RMSNorm, LayerNorm, RoPE and softmax",
			Tolerance: "complex step: 1e-11·Scale; FD: its own error estimate + 1e-11·Scale"},
		{ID: Throughput, Title: "fixed-shape check throughput (benchmark)",
			Statement: "RMSNorm forward value checks and backward gradient checks at fixed shapes pass (run by BenchmarkThroughput only)",
			Design:    On(func(t TB, f RMSNormForwarder) { FixedShapeValueCheck(t, f, 8, 1024) }),
			Kernels:   []string{"rmsnorm_fwd", "rmsnorm_fwd_rms", "rmsnorm_bwd_chunk"}, Tolerance: rmsFwdTolNote, Device: true},
	} {
		Register(p)
	}
	// The predictions over every (row-wise) operation name the kernels of
	// ours they run on, derived.
	for _, p := range InOrder() {
		if p.Kernels == nil && len(p.Ops) > 1 {
			p.Kernels = ownKernels(p)
		}
	}
}
