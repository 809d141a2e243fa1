package falsify

import (
	"embed"
	"fmt"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/ptx"
)

//go:embed ptx/*.ptx ptx/MANIFEST
var mutantFS embed.FS

// mutantPTX returns the committed PTX built from falsify/src/<name>.patch, or nil
// (the mutant then fails to build, and TestEmbeddedPTX fails).
func mutantPTX(name string) []byte {
	b, err := mutantFS.ReadFile("ptx/" + name + ".ptx")
	if err != nil {
		return nil
	}
	return b
}

// LockWatchdog is the watchdog limit (properties.Config.Watchdog) while the
// reentrant-cache-lock mutant runs: its first call never returns.
var LockWatchdog = 2 * time.Second

// variant returns kernel k (package kernels' descriptor) launching the
// entry of the same name from falsify/ptx/<file>.ptx.
func variant(name, file string) (*kernels.Kernel, error) {
	k, ok := kernels.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("falsify: unknown kernel %s", name)
	}
	text := mutantPTX(file)
	if text == nil {
		return nil, fmt.Errorf("falsify: falsify/ptx/%s.ptx is missing (run make falsify-ptx)", file)
	}
	m, err := ptx.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("falsify: parse falsify/ptx/%s.ptx: %w", file, err)
	}
	if m.Function(k.Entry) == nil {
		return nil, fmt.Errorf("falsify: falsify/ptx/%s.ptx has no entry %s", file, k.Entry)
	}
	return k.WithPTX(text), nil
}

// variants returns variant(name, file) for each name.
func variants(file string, names ...string) ([]*kernels.Kernel, error) {
	var ks []*kernels.Kernel
	for _, n := range names {
		k, err := variant(n, file)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// edited returns kernel name with its entry edited by f.
func edited(name string, f func(k *kernels.Kernel, fn *ptx.Function) error) (*kernels.Kernel, error) {
	k, ok := kernels.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("falsify: unknown kernel %s", name)
	}
	text, err := edit(k, []string{k.Entry}, func(fn *ptx.Function) error { return f(k, fn) })
	if err != nil {
		return nil, err
	}
	return k.WithPTX(text), nil
}

// kernelTarget is the target of a mutant that swaps kernels ks into the
// default implementations and runs the probes of the named kernels, the
// expected killers first.
func kernelTarget(killers []string, probeKernels []string, ks ...*kernels.Kernel) *target {
	orig, mut := defaults(), setWith(ks...)
	var ps []probe
	for _, k := range probeKernels {
		ps = append(ps, kernelProbes(k)...)
	}
	return &target{probes: ordered(dedup(ps), killers), orig: &orig, mut: &mut, mutated: launchOf(ks...)}
}

// launcherTarget is the target of a mutant implementation replacing one
// of the defaults: every implementation that launches probeKernel
// becomes impl.
func launcherTarget(killers []string, probeKernel string, impl any) *target {
	orig := defaults()
	mut := orig.with(probeKernel, impl)
	return &target{probes: ordered(kernelProbes(probeKernel), killers), orig: &orig, mut: &mut}
}

func dedup(ps []probe) []probe {
	seen := map[string]bool{}
	var out []probe
	for _, p := range ps {
		if !seen[p.name] {
			seen[p.name] = true
			out = append(out, p)
		}
	}
	return out
}

// rmsTail finds, in an RMSNorm forward entry, the end of the row
// statistics: ε's register, `div M, S, N` (the mean of squares) and
// `add T, M, ε`.
func rmsTail(k *kernels.Kernel, fn *ptx.Function) (eps string, div, add site, err error) {
	pname, err := paramName(k, fn, "eps")
	if err != nil {
		return "", site{}, site{}, err
	}
	loads := paramLoads(fn, pname)
	if len(loads) != 1 {
		return "", site{}, site{}, fmt.Errorf("%d loads of eps, want 1", len(loads))
	}
	eps = loads[0].in.Operands[0].Name
	u := uses(fn, eps)
	if len(u) != 1 || u[0].in.Op != "add" {
		return "", site{}, site{}, fmt.Errorf("eps (%s) is used %d times, want once by an add", eps, len(u))
	}
	add = u[0]
	m := add.in.Operands[1]
	if m.Name == eps {
		m = add.in.Operands[2]
	}
	d := defs(fn, m.Name)
	if len(d) != 1 || d[0].in.Op != "div" {
		return "", site{}, site{}, fmt.Errorf("the mean of squares %s is not defined by one div", m.Name)
	}
	return eps, d[0], add, nil
}

// The edits of the PTX-text named mutants.

// epsHardcoded: every read of the eps parameter becomes the immediate 1e-5.
func epsHardcoded(k *kernels.Kernel, fn *ptx.Function) error {
	pname, err := paramName(k, fn, "eps")
	if err != nil {
		return err
	}
	loads := paramLoads(fn, pname)
	if len(loads) == 0 {
		return fmt.Errorf("eps is never read")
	}
	for _, s := range loads {
		*s.in = *ins("mov.f32", s.in.Operands[0], f32imm(1e-5))
	}
	return nil
}

// epsInsideMean: rms = sqrt((Σx² + ε)/n) instead of sqrt(Σx²/n + ε).
func epsInsideMean(k *kernels.Kernel, fn *ptx.Function) error {
	eps, div, add, err := rmsTail(k, fn)
	if err != nil {
		return err
	}
	m, s, n := div.in.Operands[0], div.in.Operands[1], div.in.Operands[2]
	*div.in = *ins("add.rn.f32", m, s, ptx.Reg(eps))
	*add.in = *ins("div.rn.f32", add.in.Operands[0], m, n)
	return nil
}

// sumNotMean: rms = sqrt(Σx² + ε), the division by n forgotten.
func sumNotMean(k *kernels.Kernel, fn *ptx.Function) error {
	_, div, _, err := rmsTail(k, fn)
	if err != nil {
		return err
	}
	*div.in = *ins("mov.f32", div.in.Operands[0], div.in.Operands[1])
	return nil
}

// doubleEps: the single-warp backward turns the rms it is given (ε
// included) into sqrt(rms² + ε) with a baked ε = 1e-5 before inverting it,
// as upstream aprender-gpu's rms_norm_backward did.
func doubleEps(k *kernels.Kernel, fn *ptx.Function) error {
	for _, s := range instructions(fn) {
		if s.in.Op != "rcp" {
			continue
		}
		r := s.in.Operands[1]
		d := defs(fn, r.Name)
		if len(d) != 1 || d[0].in.Op != "ld" || !d[0].in.HasMod("global") {
			return fmt.Errorf("the first rcp's operand %s is not the loaded rms", r.Name)
		}
		s.insertBefore(ins("mul.rn.f32", r, r, r), ins("add.rn.f32", r, r, f32imm(1e-5)), ins("sqrt.rn.f32", r, r))
		return nil
	}
	return fmt.Errorf("no rcp of the rms found")
}

// noProjection: the chunked backward drops the projection term of dx,
// dx = γ·dy/rms instead of (γ·dy − x̂·mean(γ·dy·x̂))/rms — every div.f32 of
// the entry (the mean m of γ·dy·x̂, one per path) becomes mov 0.
func noProjection(k *kernels.Kernel, fn *ptx.Function) error {
	n := 0
	for _, s := range instructions(fn) {
		if s.in.Op == "div" && s.in.HasMod("f32") {
			*s.in = *ins("mov.f32", s.in.Operands[0], f32imm(0))
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no div.f32 (the mean of γ·dy·x̂) found")
	}
	return nil
}

// chunkBoundBaked: the chunked backward's row loop ends at
// min(r0 + ChunkMinRows, rows) — the chunk it was written for, compiled in —
// instead of min(r0 + chunk, rows), while its first row r0 = block·chunk
// still follows the chunk parameter. Up to 2048 rows the chunk is
// kernels.ChunkMinRows and nothing changes; beyond, every block skips its
// rows past the fourth: their dx is never written and dγ misses their
// terms. The edit: of the two uses of the loaded chunk (block·chunk and
// r0 + chunk), the add whose sum goes to a min becomes r0 + ChunkMinRows.
func chunkBoundBaked(k *kernels.Kernel, fn *ptx.Function) error {
	pname, err := paramName(k, fn, "chunk")
	if err != nil {
		return err
	}
	loads := paramLoads(fn, pname)
	if len(loads) != 1 {
		return fmt.Errorf("%d loads of chunk, want 1", len(loads))
	}
	chunk := loads[0].in.Operands[0].Name
	n := 0
	for _, u := range uses(fn, chunk) {
		if u.in.Op != "add" {
			continue
		}
		sum := u.in.Operands[0].Name
		bounded := false
		for _, v := range uses(fn, sum) {
			bounded = bounded || v.in.Op == "min"
		}
		if !bounded {
			continue
		}
		for i := 1; i < len(u.in.Operands); i++ {
			if u.in.Operands[i].Name == chunk {
				u.in.Operands[i] = ptx.Imm(kernels.ChunkMinRows)
				n++
			}
		}
	}
	if n != 1 {
		return fmt.Errorf("%d adds of chunk bounded by a min (the row loop's end), want 1", n)
	}
	return nil
}

// besselVariance: LayerNorm divides the sum of squared deviations by
// hidden−1 (the unbiased estimator, torch.var's default) instead of hidden.
func besselVariance(k *kernels.Kernel, fn *ptx.Function) error {
	_, div, _, err := rmsTail(k, fn)
	if err != nil {
		return err
	}
	const tmp = "%f_bessel"
	n := div.in.Operands[2]
	div.in.Operands[2] = ptx.Reg(tmp)
	div.insertBefore(ins("sub.rn.f32", ptx.Reg(tmp), n, f32imm(1)))
	fn.Body = append([]ptx.Statement{&ptx.Variable{Space: "reg", Type: "f32", Name: tmp}}, fn.Body...)
	return nil
}

// nanClamp: the mean of squares is clamped with max(ms, 0) "against
// rounding below zero" — max.f32 returns the number when the other operand
// is NaN, so a NaN in the row is swallowed and the row comes out finite.
func nanClamp(k *kernels.Kernel, fn *ptx.Function) error {
	_, div, add, err := rmsTail(k, fn)
	if err != nil {
		return err
	}
	m := div.in.Operands[0]
	add.insertBefore(ins("max.f32", m, m, f32imm(0)))
	return nil
}

// swapParams returns an edit that makes the entry read parameter a where
// it read b and the other way round: two pointers passed in the wrong order.
func swapParams(a, b string) func(k *kernels.Kernel, fn *ptx.Function) error {
	return func(k *kernels.Kernel, fn *ptx.Function) error {
		pa, err := paramName(k, fn, a)
		if err != nil {
			return err
		}
		pb, err := paramName(k, fn, b)
		if err != nil {
			return err
		}
		la, lb := paramLoads(fn, pa), paramLoads(fn, pb)
		if len(la) == 0 || len(lb) == 0 {
			return fmt.Errorf("%s or %s is never read", a, b)
		}
		for _, s := range la {
			s.in.Operands[1].Name = pb
		}
		for _, s := range lb {
			s.in.Operands[1].Name = pa
		}
		return nil
	}
}

// firstBarrierRemoved deletes the entry's first bar.sync: in the RMSNorm
// forward, block_sum's barrier between the warps' stores of their sums to
// shared memory and everyone's reads of them.
func firstBarrierRemoved(k *kernels.Kernel, fn *ptx.Function) error {
	for _, s := range instructions(fn) {
		if s.in.Op == "bar" && s.in.HasMod("sync") {
			s.remove()
			return nil
		}
	}
	return fmt.Errorf("no bar.sync found")
}

// gammaFirstColumns: every load of γ reads from γ's start instead of its
// column's (the address of each ld.global from the global base of the
// gamma parameter plus an offset becomes the base itself): y[r][j] =
// x̂[r][j]·γ[j mod w] for the load's width w (4 on the vector path, 1 on
// the scalar one), γ[j] itself never read for j ≥ w — an output that
// ignores an input it must depend on.
func gammaFirstColumns(k *kernels.Kernel, fn *ptx.Function) error {
	pname, err := paramName(k, fn, "gamma")
	if err != nil {
		return err
	}
	n := 0
	for _, l := range paramLoads(fn, pname) {
		for _, c := range uses(fn, l.in.Operands[0].Name) {
			if c.in.Op != "cvta" {
				continue
			}
			base := c.in.Operands[0].Name
			for _, a := range uses(fn, base) {
				if a.in.Op != "add" {
					continue
				}
				addr := a.in.Operands[0].Name
				for _, s := range instructions(fn) {
					if s.in.Op == "ld" && s.in.HasMod("global") && len(s.in.Operands) == 2 &&
						s.in.Operands[1].Kind == ptx.Address && s.in.Operands[1].Name == addr {
						s.in.Operands[1].Name, s.in.Operands[1].Int = base, 0
						n++
					}
				}
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("no load of gamma through its global base plus an offset found")
	}
	return nil
}

// editedAll returns the PTX edit f of each of the kernels names.
func editedAll(f func(*kernels.Kernel, *ptx.Function) error, names ...string) ([]*kernels.Kernel, error) {
	var ks []*kernels.Kernel
	for _, n := range names {
		k, err := edited(n, f)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	return ks, nil
}

var rmsFwdKernels = []string{"rmsnorm_fwd", "rmsnorm_fwd_rms"}

// fromSource returns the swap of a mutant compiled from falsify/src/<file>.patch
// (a shipped kernel source plus the bug) in place of the kernels names.
func fromSource(file string, names ...string) func() ([]*kernels.Kernel, error) {
	return func() ([]*kernels.Kernel, error) { return variants(file, names...) }
}

// fromEdit returns the swap of a mutant made by the PTX edit f of the
// kernels names.
func fromEdit(f func(*kernels.Kernel, *ptx.Function) error, names ...string) func() ([]*kernels.Kernel, error) {
	return func() ([]*kernels.Kernel, error) { return editedAll(f, names...) }
}

// named is the list of named mutants.
var named = []Named{
	{Name: "atomic-dgamma", Kernel: "rmsnorm_bwd_rowwarp", Killers: []string{properties.Determinism},
		What: "batched RMSNorm backward accumulating dγ with atomicAdd on float (upstream trueno-gpu); implementation does not list its PTX, so only launches under other schedules can tell",
		make: func() (*target, error) {
			if kAtomic.PTX == nil {
				return nil, fmt.Errorf("falsify/ptx/atomic_dgamma.ptx missing")
			}
			t := launcherTarget([]string{properties.Determinism}, "rmsnorm_bwd_rowwarp", atomicBackward{kAtomic})
			t.mutated = launchOf(kAtomic)
			return t, nil
		}},
	{Name: "atomic-dgamma-static", Kernel: "rmsnorm_bwd_rowwarp", Killers: []string{properties.Determinism},
		What: "atomic-dgamma with its PTX listed (KernelLister): the static half of the determinism prediction sees the float atomic",
		make: func() (*target, error) {
			if kAtomic.PTX == nil {
				return nil, fmt.Errorf("falsify/ptx/atomic_dgamma.ptx missing")
			}
			t := launcherTarget([]string{properties.Determinism}, "rmsnorm_bwd_rowwarp", atomicBackwardListed{atomicBackward{kAtomic}})
			t.mutated = launchOf(kAtomic)
			return t, nil
		}},
	{Name: "baked-dims", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.DimIndependence},
		What: "rows and hidden compiled into the forward's PTX as immediates (the .params declared, never read), one module per shape (upstream trueno-gpu)",
		make: func() (*target, error) {
			return launcherTarget([]string{properties.DimIndependence}, "rmsnorm_fwd_rms", &bakedDims{cache: map[[2]int]kernels.RMSNormForward{}}), nil
		}},
	{Name: "double-eps", Kernel: "rmsnorm_bwd_warp32", Killers: []string{properties.RMSBackWarp},
		What: "single-warp backward computes sqrt(rms² + ε) from an rms that already includes ε (ε = 1e-5 baked, upstream aprender-gpu)",
		swap: fromEdit(doubleEps, "rmsnorm_bwd_warp32")},
	{Name: "eps-hardcoded", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.EpsParity},
		What: "forward ignores its ε parameter and uses 1e-5 (ld.param of eps replaced by mov 1e-5; upstream rms_norm_forward)",
		swap: fromEdit(epsHardcoded, rmsFwdKernels...)},
	{Name: "single-row-launch", Kernel: "fused_residual_rmsnorm", Killers: []string{properties.FusedRMSNorm},
		What: "fused residual + RMSNorm kernel without row indexing launched with one block per row: every block does row 0 (upstream FusedResidualRmsNormKernel)",
		swap: fromSource("single_row_launch", "fused_residual_rmsnorm")},
	{Name: "reentrant-cache-lock", Kernel: "fused_residual_rmsnorm", Killers: []string{properties.FusedRMSNorm},
		What: "fused launcher holds the module-cache lock while calling the residual-add launcher, which takes it again: self-deadlock (upstream aprender-train)",
		make: func() (*target, error) {
			r := newReentrantFused()
			t := launcherTarget([]string{properties.FusedRMSNorm}, "fused_residual_rmsnorm", r)
			t.close = r.close
			t.setup = func(c *properties.Config) func() {
				old := c.Watchdog
				c.Watchdog = LockWatchdog
				return func() { c.Watchdog = old }
			}
			return t, nil
		}},
	{Name: "stale-theta-cache", Kernel: "rope_neox_fwd", Killers: []string{properties.RoPEThetaCache},
		What: "RoPE forward with θ baked into the PTX text and the module cache keyed by (heads, head_dim) without θ: the first θ wins (upstream aprender-train)",
		make: func() (*target, error) {
			return launcherTarget([]string{properties.RoPEThetaCache}, "rope_neox_fwd", &staleTheta{cache: map[[2]int]kernels.RoPEForward{}}), nil
		}},
	{Name: "stale-eps-cache", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.EpsParity},
		What: "RMSNorm forward with ε baked into the PTX text and the module cache keyed by hidden without ε (upstream before PMAT-698k)",
		make: func() (*target, error) {
			return launcherTarget([]string{properties.EpsParity}, "rmsnorm_fwd_rms", &staleEps{cache: map[int]kernels.RMSNormForward{}}), nil
		}},
	{Name: "rope-gptj", Kernel: "rope_neox_fwd_batched", Killers: []string{properties.RoPEBasis},
		What: "batched RoPE rotating adjacent pairs (2i, 2i+1) (GPT-J) instead of NeoX's (i, i+d/2)",
		swap: fromSource("rope_gptj", "rope_neox_fwd_batched")},
	{Name: "rope-bwd-forward-rotation", Kernel: "rope_neox_bwd_batched", Killers: []string{properties.RoPEBackward, properties.RoPEBasis},
		What: "RoPE backward rotates dy by +angle (R) instead of −angle (Rᵀ): not the adjoint of the forward",
		swap: fromSource("rope_bwd_forward_rotation", "rope_neox_bwd_batched")},
	{Name: "partial-warp-reduce", Kernel: "rmsnorm_bwd_rowwarp", Killers: []string{properties.BRMSBack, properties.BRMSBackFD},
		What: "warp-per-row backward whose row reduction skips the tail lanes when hidden is not a multiple of 32",
		swap: fromSource("partial_warp_reduce", "rmsnorm_bwd_rowwarp")},
	{Name: "missing-bounds-check", Kernel: "rope_neox_fwd_batched", Faults: true,
		Killers: []string{properties.RoPEBasis, properties.RoPEThetaCache, properties.BatchIndependence, properties.RowPermutation},
		What:    "batched RoPE without its `q < rows·half` guard: the last block reads positions/x and writes y past the end",
		swap:    fromSource("missing_bounds_check", "rope_neox_fwd_batched")},
	{Name: "no-barrier", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.RMSFwd},
		What: "RMSNorm forward's block reduction without the bar.sync between the warps' shared-memory stores of their sums and the reads (PTX edit)",
		swap: fromEdit(firstBarrierRemoved, rmsFwdKernels...)},
	{Name: "unrolled-shuffle", Kernel: "rmsnorm_bwd_warp32", Killers: []string{properties.RMSBackWarp},
		What: "single-warp backward whose butterfly was unrolled for the hidden it was built for (16): lanes 16..31 never meet 0..15 (upstream aprender-gpu)",
		swap: fromSource("unrolled_shuffle", "rmsnorm_bwd_warp32")},
	{Name: "eps-inside-mean", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.ScaleInvariance, properties.RMSFwd, properties.EpsParity},
		What: "forward computes sqrt((Σx² + ε)/n) instead of sqrt(Σx²/n + ε): ε's weight depends on the scale of x (PTX edit)",
		swap: fromEdit(epsInsideMean, rmsFwdKernels...)},
	{Name: "sum-not-mean", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.Throughput, properties.RMSFwd},
		What: "forward computes sqrt(Σx² + ε): the division by hidden forgotten (PTX edit)",
		swap: fromEdit(sumNotMean, rmsFwdKernels...)},
	{Name: "nan-swallowing-clamp", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.Robustness},
		What: "forward clamps the mean of squares with max(ms, 0), which turns a NaN row finite (PTX edit)",
		swap: fromEdit(nanClamp, rmsFwdKernels...)},
	{Name: "batch-dependent-block", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.BatchIndependence},
		What: "forward launched with 256 threads per row for one row and 128 for a batch: a row's bits depend on the batch size",
		swap: func() ([]*kernels.Kernel, error) { return batchDependentBlock(), nil }},
	{Name: "row-parity-order", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.RowPermutation, properties.BatchIndependence},
		What: "forward whose odd rows sum their squares in reverse order (a snake traversal): a row's bits depend on its index",
		swap: fromSource("row_parity_order", rmsFwdKernels...)},
	{Name: "bwd-no-projection", Kernel: "rmsnorm_bwd_chunk", Killers: []string{properties.BRMSBackFD, properties.BRMSBack},
		What: "chunked backward drops the projection term: dx = γ·dy/rms, not (γ·dy − x̂·mean(γ·dy·x̂))/rms (PTX edit)",
		swap: fromEdit(noProjection, "rmsnorm_bwd_chunk")},
	{Name: "chunk-bound-baked", Kernel: "rmsnorm_bwd_chunk", Killers: []string{properties.BRMSBack, properties.BRMSBackFD},
		What: "chunked backward's row loop ends after ChunkMinRows (4) rows, the chunk it was written for, not after its chunk parameter: above 2048 rows each block skips its rows past the fourth, so their dx is never written and dγ misses them (PTX edit)",
		swap: fromEdit(chunkBoundBaked, "rmsnorm_bwd_chunk")},
	{Name: "sm-count-chunking", Kernel: "rmsnorm_bwd_chunk", Killers: []string{properties.Parity}, GPU: true,
		What: "chunked backward partitions rows by the device's SM count: dγ's summation order, hence its bits, differ from device to device",
		make: func() (*target, error) {
			t := launcherTarget([]string{properties.Parity}, "rmsnorm_bwd_chunk", smCountChunked{})
			t.probes = append([]probe{implProbe(properties.Parity, "rmsnorm_bwd_chunk", properties.ParityContract)}, t.probes...)
			return t, nil
		}},
	{Name: "device-tuned-chunking", Kernel: "rmsnorm_bwd_chunk", Killers: []string{properties.MultiDeviceParity}, Devices: true,
		What: "chunked backward partitions rows by a per-device tuning (3 chunks per device ordinal): dγ's bits differ between devices of one run",
		make: func() (*target, error) {
			t := launcherTarget([]string{properties.MultiDeviceParity}, "rmsnorm_bwd_chunk",
				smCountChunked{perDevice: func(i cudart.Info) int { return 3 * i.Ordinal }})
			t.probes = append([]probe{implProbe(properties.MultiDeviceParity, "rmsnorm_bwd_chunk", properties.DeviceParityContract)}, t.probes...)
			return t, nil
		}},
	{Name: "gamma-by-head", Kernel: "per_head_rmsnorm", Killers: []string{properties.QKNForward}, Faults: true,
		What: "per-head RMSNorm indexing γ as [heads·head_dim] (gamma[h·head_dim + j]) instead of the shared [head_dim]",
		swap: fromSource("gamma_by_head", "per_head_rmsnorm")},
	{Name: "ln-one-pass-variance", Kernel: "layernorm_fwd_stats",
		Killers: []string{properties.LNShift, properties.LNForward, properties.LNMoments},
		What:    "LayerNorm forward with the one-pass variance mean(x²) − mean(x)² (cancellation when |mean| ≫ std)",
		swap:    fromSource("ln_one_pass_variance", "layernorm_fwd", "layernorm_fwd_stats")},
	{Name: "ln-bessel-variance", Kernel: "layernorm_fwd_stats", Killers: []string{properties.LNMoments, properties.LNForward, properties.LNShift},
		What: "LayerNorm divides the squared deviations by hidden−1 (the unbiased variance) instead of hidden (PTX edit)",
		swap: fromEdit(besselVariance, "layernorm_fwd", "layernorm_fwd_stats")},
	{Name: "ln-gamma-beta-swapped", Kernel: "layernorm_fwd_stats", Killers: []string{properties.LNForward},
		What: "LayerNorm forward reads γ where it should read β and the other way round (PTX edit of the two ld.param)",
		swap: fromEdit(swapParams("gamma", "beta"), "layernorm_fwd", "layernorm_fwd_stats")},
	{Name: "ln-bwd-swapped-grads", Kernel: "layernorm_bwd_chunk", Killers: []string{properties.LNBackward},
		What: "LayerNorm backward writes its dγ partials where dβ's go and the other way round (PTX edit of the two ld.param)",
		swap: fromEdit(swapParams("partial_g", "partial_b"), "layernorm_bwd_chunk")},
	{Name: "softmax-no-max", Kernel: "softmax_fwd", Killers: []string{properties.SoftmaxShift, properties.SoftmaxFwd, properties.SoftmaxSum},
		What: "softmax forward without the max subtraction: exp overflows for x > 88.7 (Inf/Inf = NaN) and rows far below zero give 0/0",
		swap: fromSource("softmax_no_max", "softmax_fwd")},
	{Name: "softmax-no-log2e", Kernel: "softmax_fwd", Killers: []string{properties.SoftmaxFwd},
		What: "softmax forward computing ex2(x − max) without the log2(e) scale: a normalised 2^x, which sums to 1 and is shift invariant",
		swap: fromSource("softmax_no_log2e", "softmax_fwd")},
	{Name: "softmax-warp-sum", Kernel: "softmax_fwd", Killers: []string{properties.SoftmaxSum, properties.SoftmaxFwd},
		What: "softmax forward dividing by its warp's partial sum instead of the row's (no combine across warps): rows of more than 32 sum to more than 1",
		swap: fromSource("softmax_warp_sum", "softmax_fwd")},
	{Name: "softmax-bwd-no-dot", Kernel: "softmax_bwd", Killers: []string{properties.SoftmaxBwd},
		What: "softmax backward dropping the Σ y·dy term: dx = y·dy, the Jacobian's diagonal only",
		swap: fromSource("softmax_bwd_no_dot", "softmax_bwd")},
	{Name: "softmax-grid-order", Kernel: "softmax_fwd", Killers: []string{properties.BatchIndependence},
		What: "softmax forward whose row sum combines the warps serially in a one-block launch and by a tree otherwise: a row's bits depend on the grid",
		swap: fromSource("softmax_grid_order", "softmax_fwd")},
	{Name: "neighbour-row-zero", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.Dependence}, Dependence: true,
		What: "forward whose 1/rms subtracts min(|x[r+1][0]|, 0) = +0: bit-identical outputs, but every row reads the next row (only DEPEND-001 can kill it)",
		swap: fromSource("neighbour_row_zero", rmsFwdKernels...)},
	{Name: "gamma-first-columns", Kernel: "rmsnorm_fwd_rms", Killers: []string{properties.Dependence, properties.RMSFwd},
		What: "forward reading γ from its start for every column (γ[j mod 4] on the vector path, γ[0] on the scalar one): y ignores γ[j], which DEPEND-001 names (PTX edit)",
		swap: fromEdit(gammaFirstColumns, rmsFwdKernels...)},
	{Name: "perhead-row-rms", Kernel: "per_head_rmsnorm", Killers: []string{properties.QKNHeads, properties.QKNForward},
		What: "QK-norm normalising every head by the rms of the whole row instead of its own: heads depend on each other",
		swap: fromSource("perhead_row_rms", "per_head_rmsnorm")},
}
