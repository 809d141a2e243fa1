// Package kernels holds ptxprop's CUDA kernels: their CUDA C sources
// (src/*.cu), the PTX compiled from them (ptx/*.ptx, committed and embedded),
// a descriptor for every kernel entry, and typed launchers that run them
// through a cudart.Device — the same code on the GPU and on the emulator.
//
// # Kernels
//
// A Kernel describes one PTX entry: its parameters (ParamSpec, in order),
// its launch geometry as a function of the Shape, whether it is
// deterministic, and the float32 sums it computes (Reduction: how many terms
// each thread adds serially and how deep the combining tree is), from which
// a tolerance is derived. All lists every descriptor. Kernel.Launch checks
// the arguments against the descriptor and launches with Geometry(shape);
// Kernel.WithPTX returns the same descriptor with another PTX text, which is
// what a mutant is.
//
// The sources document, at the top of each kernel, the exact float32 op
// sequence and reduction order; the descriptors restate the reduction shape
// as data. Every dimension, eps and theta is a kernel parameter: one PTX text
// serves every shape, and the device's module cache loads each family once.
// No kernel uses floating-point atomics; every result is bit-reproducible
// from launch to launch and from device to device (geometry depends on the
// shape only, never on the device).
//
// # Launchers
//
// Each operation has an implementation type holding its *Kernel(s), so that
// a mutant swaps one PTX text and keeps the rest, and an exported default
// value:
//
//	RMSNormFwd              RMSNormForward         rmsnorm_fwd, rmsnorm_fwd_rms
//	RMSNormBwdWarp32        RMSNormBackwardWarp32  rmsnorm_bwd_warp32 + colsum_f32 (hidden <= 32)
//	RMSNormBwdWarp          RMSNormBackwardRowWarp rmsnorm_bwd_rowwarp + colsum_f32 (design "warp", upstream)
//	RMSNormBwdChunk         RMSNormBackwardChunk   rmsnorm_bwd_chunk + colsum_f32 (chunks of rows, fastest)
//	FusedResidualRMSNormFwd FusedResidualRMSNorm   fused_residual_rmsnorm
//	LayerNormFwd            LayerNormForward       layernorm_fwd, layernorm_fwd_stats
//	LayerNormBwd            LayerNormBackward      layernorm_bwd_chunk + colsum_f32 (twice)
//	PerHeadRMSNormFwd       PerHeadRMSNorm         per_head_rmsnorm
//	RoPEFwd                 RoPEForward            rope_neox_fwd (one position for all rows)
//	RoPEFwdBatched          RoPEForwardBatched     rope_neox_fwd_batched (positions[rows])
//	RoPEBwd                 RoPEBackward           rope_neox_bwd_batched (R(angle)ᵀ)
//	SoftmaxFwd              SoftmaxForward         softmax_fwd (one block per row)
//	SoftmaxBwd              SoftmaxBackward        softmax_bwd (one block per row)
//	ColSum                  ColumnSum              colsum_f32
//
// Every implementation has two levels:
//
//   - a host-level method named after the operation (RMSNormForward,
//     RMSNormBackward, …) taking the operation's *op.…Args of host slices:
//     it validates the arguments, allocates device buffers, uploads,
//     launches, downloads into the caller's output slices and frees (all
//     through Host, which reads the op table) — the one-method interface a
//     property contract is written against;
//   - a device-level Launch taking a …Buffers of already allocated
//     cudart.Buffers (no copies), for benchmarks and for tests that inspect
//     device state (write counts, determinism).
//
// # Conventions
//
// Tensors are row-major float32, [rows][hidden] or [rows][heads·head_dim];
// gamma and beta are [hidden] (per-head RMSNorm: [head_dim]); per-row
// statistics (rms, mean, rstd) are [rows]; RoPE positions are uint32[rows].
// The forward RMSNorm's rms INCLUDES eps (rms = sqrt(mean(x²)+eps)); the
// backward kernels take that rms and no eps. Outputs are caller-allocated
// slices of exactly the documented length; optional outputs are nil.
//
// Invalid arguments (a length that does not match, a zero dimension,
// hidden > 32 for the single-warp kernel, an odd RoPE head_dim, a tensor of
// 2³¹ elements or more) are returned as errors wrapping cudart.ErrInvalid;
// device failures are returned wrapped with the kernel and the step
// ("kernels: rmsnorm_fwd: upload x: …"). Nothing in this package panics on
// bad input.
//
// Package kernels imports cudart and op only; it knows no test and no oracle.
package kernels
