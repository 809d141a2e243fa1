package kernels

import "github.com/ptxprop/ptxprop/op"

// Every implementation describes itself: Kernels lists the descriptors it
// launches (static predictions read their PTX) and Reductions the float32
// sums it computes for a shape (tolerances are derived from their depth).

// Kernels returns the kernels f launches.
func (f RMSNormForward) Kernels() []*Kernel { return []*Kernel{f.K, f.KRMS} }

// Reductions returns the sums of rmsnorm_fwd_rms (rmsnorm_fwd's are the same).
func (f RMSNormForward) Reductions(s op.Shape) []op.Reduction { return f.KRMS.Reductions(s) }

// Kernels returns the kernels f launches.
func (f RMSNormBackwardWarp32) Kernels() []*Kernel { return []*Kernel{f.K, f.Reduce} }

// Kernels returns the kernels f launches.
func (f RMSNormBackwardRowWarp) Kernels() []*Kernel { return []*Kernel{f.K, f.Reduce} }

// Kernels returns the kernels f launches.
func (f RMSNormBackwardChunk) Kernels() []*Kernel { return []*Kernel{f.K, f.Reduce} }

// Kernels returns the kernels f launches.
func (f FusedResidualRMSNorm) Kernels() []*Kernel { return []*Kernel{f.K} }

// Reductions returns the sums of fused_residual_rmsnorm.
func (f FusedResidualRMSNorm) Reductions(s op.Shape) []op.Reduction { return f.K.Reductions(s) }

// Kernels returns the kernels f launches.
func (f LayerNormForward) Kernels() []*Kernel { return []*Kernel{f.K, f.KStats} }

// Reductions returns the sums of layernorm_fwd_stats (layernorm_fwd's are the same).
func (f LayerNormForward) Reductions(s op.Shape) []op.Reduction { return f.KStats.Reductions(s) }

// Kernels returns the kernels f launches.
func (f LayerNormBackward) Kernels() []*Kernel { return []*Kernel{f.K, f.Reduce} }

// Kernels returns the kernels f launches.
func (f PerHeadRMSNorm) Kernels() []*Kernel { return []*Kernel{f.K} }

// Reductions returns the sums of per_head_rmsnorm.
func (f PerHeadRMSNorm) Reductions(s op.Shape) []op.Reduction { return f.K.Reductions(s) }

// Kernels returns the kernels f launches.
func (f RoPEForward) Kernels() []*Kernel { return []*Kernel{f.K} }

// Kernels returns the kernels f launches.
func (f RoPEForwardBatched) Kernels() []*Kernel { return []*Kernel{f.K} }

// Kernels returns the kernels f launches.
func (f RoPEBackward) Kernels() []*Kernel { return []*Kernel{f.K} }

// Kernels returns the kernels f launches.
func (f ColumnSum) Kernels() []*Kernel { return []*Kernel{f.K} }
