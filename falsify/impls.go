package falsify

import (
	"reflect"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
)

// set is one implementation of every operation a contract takes.
type set struct {
	rmsFwd  properties.RMSNormForwarder
	warp32  properties.RMSNormBackwarder
	rowWarp properties.RMSNormBackwarder
	chunk   properties.RMSNormBackwarder
	fused   properties.FusedResidualRMSNormer
	lnFwd   properties.LayerNormForwarder
	lnBwd   properties.LayerNormBackwarder
	perHead properties.PerHeadRMSNormer
	rope    properties.RoPEForwarder // one position for every row
	ropeB   properties.RoPEForwarder // batched, per-row positions
	ropeBwd properties.RoPEBackwarder
	smFwd   properties.SoftmaxForwarder
	smBwd   properties.SoftmaxBackwarder
}

// defaults returns package kernels' implementations.
func defaults() set { return setWith() }

// setWith returns package kernels' implementations with every use of a
// kernel named like one of ks replaced by it: a mutant kernel is swapped
// into each implementation that launches the original.
func setWith(ks ...*kernels.Kernel) set {
	return set{rmsFwd: swap(kernels.RMSNormFwd, ks), warp32: swap(kernels.RMSNormBwdWarp32, ks),
		rowWarp: swap(kernels.RMSNormBwdWarp, ks), chunk: swap(kernels.RMSNormBwdChunk, ks),
		fused: swap(kernels.FusedResidualRMSNormFwd, ks), lnFwd: swap(kernels.LayerNormFwd, ks),
		lnBwd: swap(kernels.LayerNormBwd, ks), perHead: swap(kernels.PerHeadRMSNormFwd, ks),
		rope: swap(kernels.RoPEFwd, ks), ropeB: swap(kernels.RoPEFwdBatched, ks), ropeBwd: swap(kernels.RoPEBwd, ks),
		smFwd: swap(kernels.SoftmaxFwd, ks), smBwd: swap(kernels.SoftmaxBwd, ks)}
}

// swap returns impl, a struct of *kernels.Kernel fields, with each kernel
// named like one of ks replaced by it.
func swap[T any](impl T, ks []*kernels.Kernel) T {
	v := reflect.ValueOf(&impl).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		k, ok := f.Interface().(*kernels.Kernel)
		if !ok {
			continue
		}
		for _, m := range ks {
			if k.Name == m.Name {
				f.Set(reflect.ValueOf(m))
			}
		}
	}
	return impl
}

// target is a built mutant: its implementations beside the originals, the
// probes that run contracts on them, and what identifies its launches.
type target struct {
	probes    []probe
	orig, mut *set
	// mutated matches launches of the mutated code (nil: every launch of
	// an implementation that differs from the original).
	mutated func(m cudart.Module, entry string) bool
	// check, when set, loads the mutant before any probe runs: a mutant
	// that does not load is an error of the analysis, not a kill.
	check func(dev cudart.Device) error
	// close releases what the mutant holds (e.g. goroutines blocked on its
	// lock); nil when nothing.
	close func()
	// setup, when set, changes the contracts' configuration before the
	// probes and returns the function that undoes it (e.g. a lower watchdog
	// limit).
	setup func(c *properties.Config) func()
}

// probe is one contract run: prediction id checked by contract name on
// the implementations env gives it.
type probe struct {
	id   string
	name string
	run  func(t properties.TB, e *env)
}

// env hands a probe the mutant's implementations, wrapped for tracing
// (and for comparison with the originals in differential mode).
type env struct {
	orig, mut *set
	tr        *tracer
}

// use returns the implementation a probe runs: mut itself when it is the
// original, else mut traced (and compared with orig).
func use[A, I any](e *env, o *properties.Operation[A, I], mut, orig I) I {
	if same(mut, orig) {
		return mut
	}
	return traced(e.tr, o, mut, orig)
}

func (e *env) rmsFwd() properties.RMSNormForwarder {
	return use(e, properties.RMSNormForwardOp, e.mut.rmsFwd, e.orig.rmsFwd)
}
func (e *env) warp32() properties.RMSNormBackwarder {
	return use(e, properties.RMSNormBackwardOp, e.mut.warp32, e.orig.warp32)
}
func (e *env) rowWarp() properties.RMSNormBackwarder {
	return use(e, properties.RMSNormBackwardOp, e.mut.rowWarp, e.orig.rowWarp)
}
func (e *env) chunk() properties.RMSNormBackwarder {
	return use(e, properties.RMSNormBackwardOp, e.mut.chunk, e.orig.chunk)
}
func (e *env) fused() properties.FusedResidualRMSNormer {
	return use(e, properties.FusedResidualRMSNormOp, e.mut.fused, e.orig.fused)
}
func (e *env) lnFwd() properties.LayerNormForwarder {
	return use(e, properties.LayerNormForwardOp, e.mut.lnFwd, e.orig.lnFwd)
}
func (e *env) lnBwd() properties.LayerNormBackwarder {
	return use(e, properties.LayerNormBackwardOp, e.mut.lnBwd, e.orig.lnBwd)
}
func (e *env) perHead() properties.PerHeadRMSNormer {
	return use(e, properties.PerHeadRMSNormOp, e.mut.perHead, e.orig.perHead)
}
func (e *env) rope() properties.RoPEForwarder {
	return use(e, properties.RoPEForwardOp, e.mut.rope, e.orig.rope)
}
func (e *env) ropeB() properties.RoPEForwarder {
	return use(e, properties.RoPEForwardOp, e.mut.ropeB, e.orig.ropeB)
}
func (e *env) ropeBwd() properties.RoPEBackwarder {
	return use(e, properties.RoPEBackwardOp, e.mut.ropeBwd, e.orig.ropeBwd)
}
func (e *env) smFwd() properties.SoftmaxForwarder {
	return use(e, properties.SoftmaxForwardOp, e.mut.smFwd, e.orig.smFwd)
}
func (e *env) smBwd() properties.SoftmaxBackwarder {
	return use(e, properties.SoftmaxBackwardOp, e.mut.smBwd, e.orig.smBwd)
}

// Probes of each family. The lists mirror the contract runs of
// properties/kernels_test.go for the implementation that launches the
// kernel, the sharpest and cheapest first (a mutant stops at its first
// kill). PARITY-001 is left out: it compares two backends running the same
// implementation, so a mutant passes it by construction.
var (
	pRMSFwd    = probe{properties.RMSFwd, "RMSNormForwardContract", func(t properties.TB, e *env) { properties.RMSNormForwardContract(t, e.rmsFwd()) }}
	pEpsParity = probe{properties.EpsParity, "EpsParityContract", func(t properties.TB, e *env) { properties.EpsParityContract(t, e.rmsFwd()) }}
	pDim       = probe{properties.DimIndependence, "DimIndependenceContract", func(t properties.TB, e *env) { properties.DimIndependenceContract(t, e.rmsFwd()) }}
	pScale     = probe{properties.ScaleInvariance, "ScaleInvarianceContract", func(t properties.TB, e *env) { properties.ScaleInvarianceContract(t, e.rmsFwd()) }}
	pRobust    = probe{properties.Robustness, "RobustnessContract", func(t properties.TB, e *env) { properties.RobustnessContract(t, e.rmsFwd(), e.chunk()) }}
	pWarp32    = probe{properties.RMSBackWarp, "RMSNormBackwardWarpContract(warp32)", func(t properties.TB, e *env) { properties.RMSNormBackwardWarpContract(t, e.warp32()) }}
	pBwdRow    = probe{properties.BRMSBack, "RMSNormBackwardContract(rowwarp)", func(t properties.TB, e *env) { properties.RMSNormBackwardContract(t, e.rowWarp()) }}
	pBwdChunk  = probe{properties.BRMSBack, "RMSNormBackwardContract(chunk)", func(t properties.TB, e *env) { properties.RMSNormBackwardContract(t, e.chunk()) }}
	pFDRow     = probe{properties.BRMSBackFD, "RMSNormBackwardFDContract(rowwarp)", func(t properties.TB, e *env) { properties.RMSNormBackwardFDContract(t, e.rowWarp()) }}
	pFDChunk   = probe{properties.BRMSBackFD, "RMSNormBackwardFDContract(chunk)", func(t properties.TB, e *env) { properties.RMSNormBackwardFDContract(t, e.chunk()) }}
	pDetRow    = probe{properties.Determinism, "DeterminismContract(rowwarp)", func(t properties.TB, e *env) { properties.DeterminismContract(t, properties.Impls{e.rowWarp()}) }}
	pDetChunk  = probe{properties.Determinism, "DeterminismContract(chunk)", func(t properties.TB, e *env) { properties.DeterminismContract(t, properties.Impls{e.chunk()}) }}
	pFused     = probe{properties.FusedRMSNorm, "FusedResidualRMSNormContract", func(t properties.TB, e *env) { properties.FusedResidualRMSNormContract(t, e.fused()) }}
	pLNFwd     = probe{properties.LNForward, "LayerNormForwardContract", func(t properties.TB, e *env) { properties.LayerNormForwardContract(t, e.lnFwd()) }}
	pLNShift   = probe{properties.LNShift, "LayerNormShiftContract", func(t properties.TB, e *env) { properties.LayerNormShiftContract(t, e.lnFwd()) }}
	pLNMoments = probe{properties.LNMoments, "LayerNormMomentsContract", func(t properties.TB, e *env) { properties.LayerNormMomentsContract(t, e.lnFwd()) }}
	pLNBwd     = probe{properties.LNBackward, "LayerNormBackwardContract", func(t properties.TB, e *env) { properties.LayerNormBackwardContract(t, e.lnBwd()) }}
	pQKN       = probe{properties.QKNForward, "PerHeadRMSNormContract", func(t properties.TB, e *env) { properties.PerHeadRMSNormContract(t, e.perHead()) }}
	pQKNHeads  = probe{properties.QKNHeads, "PerHeadIndependenceContract", func(t properties.TB, e *env) { properties.PerHeadIndependenceContract(t, e.perHead()) }}
	pThetaOne  = probe{properties.RoPEThetaCache, "RoPEThetaCacheContract(shared)", func(t properties.TB, e *env) {
		properties.RoPEThetaCacheContract(t, e.rope(), properties.SharedPosition)
	}}
	pThetaB = probe{properties.RoPEThetaCache, "RoPEThetaCacheContract(batched)", func(t properties.TB, e *env) {
		properties.RoPEThetaCacheContract(t, e.ropeB(), properties.PerRowPositions)
	}}
	pBasis = probe{properties.RoPEBasis, "RoPEBasisContract", func(t properties.TB, e *env) {
		properties.RoPEBasisContract(t, e.ropeB(), properties.PerRowPositions, e.ropeBwd())
	}}
	pBench = probe{properties.Throughput, "FixedShapeValueCheck(8×1024)", func(t properties.TB, e *env) {
		properties.FixedShapeValueCheck(t, e.rmsFwd(), 8, 1024)
	}}
	pParity = probe{properties.Parity, "ParityContract(rmsnorm_bwd)", func(t properties.TB, e *env) {
		properties.ParityContract(t, properties.Impls{e.chunk()})
	}}
	pDeviceParity = probe{properties.MultiDeviceParity, "DeviceParityContract(rmsnorm_bwd)", func(t properties.TB, e *env) {
		properties.DeviceParityContract(t, properties.Impls{e.chunk()})
	}}
	pSmFwd   = probe{properties.SoftmaxFwd, "SoftmaxForwardContract", func(t properties.TB, e *env) { properties.SoftmaxForwardContract(t, e.smFwd()) }}
	pSmShift = probe{properties.SoftmaxShift, "SoftmaxShiftContract", func(t properties.TB, e *env) { properties.SoftmaxShiftContract(t, e.smFwd()) }}
	pSmSum   = probe{properties.SoftmaxSum, "SoftmaxSumContract", func(t properties.TB, e *env) { properties.SoftmaxSumContract(t, e.smFwd()) }}
	pSmBwd   = probe{properties.SoftmaxBwd, "SoftmaxBackwardContract", func(t properties.TB, e *env) { properties.SoftmaxBackwardContract(t, e.smBwd()) }}
	pRoPEBwd = probe{properties.RoPEBackward, "RoPEBackwardContract", func(t properties.TB, e *env) { properties.RoPEBackwardContract(t, e.ropeBwd()) }}
)

// meta returns the batch-independence and row-permutation probes over the
// one implementation pick takes from env.
func meta[I any](family string, pick func(e *env) I) []probe {
	im := func(e *env) properties.Impls { return properties.Impls{pick(e)} }
	return []probe{
		{properties.BatchIndependence, "BatchIndependenceContract(" + family + ")", func(t properties.TB, e *env) { properties.BatchIndependenceContract(t, im(e)) }},
		{properties.RowPermutation, "RowPermutationContract(" + family + ")", func(t properties.TB, e *env) { properties.RowPermutationContract(t, im(e)) }},
	}
}

func join(ps ...[]probe) []probe {
	var out []probe
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

// probeTable lists, for every kernel, the contract runs that launch it.
var probeTable = map[string][]probe{
	"rmsnorm_fwd": join([]probe{pRMSFwd, pEpsParity, pDim, pScale, pRobust},
		meta("rmsnorm_fwd", (*env).rmsFwd)),
	"rmsnorm_fwd_rms": join([]probe{pRMSFwd, pEpsParity, pDim, pScale, pRobust},
		meta("rmsnorm_fwd", (*env).rmsFwd), []probe{pBench}),
	"rmsnorm_bwd_warp32":  {pWarp32},
	"rmsnorm_bwd_rowwarp": {pBwdRow, pFDRow, pDetRow},
	"rmsnorm_bwd_chunk": join([]probe{pBwdChunk, pFDChunk, pDetChunk, pRobust},
		meta("rmsnorm_bwd", (*env).chunk)),
	// colsum_f32 only sums dγ and dβ: the predictions that compare them.
	"colsum_f32": {pBwdChunk, pBwdRow, pWarp32, pLNBwd, pDetChunk},
	"fused_residual_rmsnorm": join([]probe{pFused},
		meta("fused_residual_rmsnorm", (*env).fused)),
	// layernorm_fwd (no statistics) runs under the shift and moments
	// properties; layernorm_fwd_stats under the oracle and the metamorphic ones.
	"layernorm_fwd": {pLNShift, pLNMoments},
	"layernorm_fwd_stats": join([]probe{pLNFwd},
		meta("layernorm_fwd", (*env).lnFwd)),
	"layernorm_bwd_chunk": join([]probe{pLNBwd},
		meta("layernorm_bwd", (*env).lnBwd)),
	"per_head_rmsnorm": join([]probe{pQKN, pQKNHeads},
		meta("per_head_rmsnorm", (*env).perHead)),
	"rope_neox_fwd": {pThetaOne},
	"rope_neox_fwd_batched": join([]probe{pBasis, pThetaB},
		meta("rope_neox_fwd_batched", (*env).ropeB)),
	"rope_neox_bwd_batched": join([]probe{pRoPEBwd, pBasis},
		meta("rope_neox_bwd_batched", (*env).ropeBwd)),
	"softmax_fwd": join([]probe{pSmFwd, pSmShift, pSmSum},
		meta("softmax_fwd", (*env).smFwd)),
	"softmax_bwd": join([]probe{pSmBwd},
		meta("softmax_bwd", (*env).smBwd)),
}

// kernelProbes returns the probes of kernel name.
func kernelProbes(name string) []probe { return probeTable[name] }

// ordered returns ps with the probes of the predictions in first moved to
// the front (in first's order), the rest after them in their order.
func ordered(ps []probe, first []string) []probe {
	var out, rest []probe
	for _, id := range first {
		for _, p := range ps {
			if p.id == id {
				out = append(out, p)
			}
		}
	}
	for _, p := range ps {
		if !contains(first, p.id) {
			rest = append(rest, p)
		}
	}
	return append(out, rest...)
}
