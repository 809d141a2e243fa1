package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/reports"
)

// The cost probe: every kernel of ptxprop's own the report lists is
// launched once more, on a fresh emulator of its own, at each of a fixed set
// of shapes (CostShapes), with fixed inputs, on the canonical schedule and
// exact approximations. What it counts there (thread-instructions and
// global bytes, per element of the kernel's largest output) is the same on
// every run of the same PTX, so report diff can call any growth a kernel
// that got costlier, with no GPU and no noise. The checks' own launches are
// not what is counted: their shapes are drawn at random and differ night to
// night. The probe runs when the suite runs on the emulator (a GPU run
// records no costs) and, in a sharded run, on shard 0 alone (merge refuses
// one cost from two shards).

// rowShapes are the cost shapes of a kernel over rows of hidden elements:
// the vector path with the row in shared memory, the scalar path with a
// partial warp, and the scalar path past the shared-memory row copy
// (kernels.FwdSharedMax) and accumulators (kernels.AccSharedMax).
var rowShapes = []op.Shape{
	{Rows: 8, Hidden: 1024},
	{Rows: 3, Hidden: 33},
	{Rows: 2, Hidden: 9001},
}

// headShapes are the cost shapes of a kernel over heads (a parameter named
// head_dim: per-head RMSNorm, RoPE); hidden is heads × head_dim.
var headShapes = []op.Shape{
	{Rows: 4, Hidden: 1024, Heads: 8, HeadDim: 128},
	{Rows: 3, Hidden: 102, Heads: 3, HeadDim: 34},
	{Rows: 2, Hidden: 8196, Heads: 2, HeadDim: 4098},
}

// costScalars are the values of the free scalars the probe passes, by
// parameter name; another free scalar is 1.
var costScalars = map[string]float64{"eps": 1e-5, "theta": 10000, "pos": 7}

// CostShapes returns the fixed shapes KernelCosts launches k at.
func CostShapes(k *kernels.Kernel) []op.Shape {
	if slices.ContainsFunc(k.Params, func(p kernels.ParamSpec) bool { return p.Name == "head_dim" }) {
		return slices.Clone(headShapes)
	}
	return slices.Clone(rowShapes)
}

// KernelCosts launches k at each of CostShapes(k) on a fresh emulator and
// returns what it counted, one Cost a shape (Shape is op.Shape's String).
func KernelCosts(k *kernels.Kernel) ([]reports.Cost, error) {
	b := emu.New(emu.Config{})
	opts := cudart.DefaultOptions()
	opts.Watchdog = 0 // the emulator's counts do not depend on time
	dev := cudart.New(b, opts)
	defer dev.Close()
	var out []reports.Cost
	for _, s := range CostShapes(k) {
		c, err := kernelCost(dev, b, k, s)
		if err != nil {
			return nil, fmt.Errorf("cost of %s at %v: %w", k.Name, s, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// kernelCost launches k at s on dev, over emulator b.
func kernelCost(dev cudart.Device, b *emu.Backend, k *kernels.Kernel, s op.Shape) (reports.Cost, error) {
	args := make([]cudart.Param, len(k.Params))
	var bufs []cudart.Buffer
	defer func() {
		for _, buf := range bufs {
			dev.Free(buf)
		}
	}()
	elems := 0
	for i, p := range k.Params {
		if !p.IsPointer() {
			args[i] = costScalar(p, s)
			continue
		}
		if p.Elems == nil {
			return reports.Cost{}, fmt.Errorf("parameter %s has no length", p.Name)
		}
		n := p.Elems(s)
		buf, err := dev.Alloc(p.Kind, n)
		if err != nil {
			return reports.Cost{}, err
		}
		bufs = append(bufs, buf)
		if p.Role != cudart.RoleOut {
			if err := dev.Write(buf, costInput(p.Kind, n)); err != nil {
				return reports.Cost{}, err
			}
		}
		if p.Role != cudart.RoleIn {
			elems = max(elems, n)
		}
		args[i] = cudart.Param{Buf: buf, Role: p.Role}
	}
	if elems == 0 {
		return reports.Cost{}, fmt.Errorf("no output buffer")
	}
	if err := k.Launch(dev, s, args...); err != nil {
		return reports.Cost{}, err
	}
	st := b.Stats()
	if st.Kernel != k.Entry {
		return reports.Cost{}, fmt.Errorf("the emulator's last launch was %q, not %q", st.Kernel, k.Entry)
	}
	return reports.Cost{Kernel: k.Name, Shape: s.String(), Size: s.Hidden, Elements: int64(elems),
		InstructionsPerElement: float64(st.ThreadInstructions) / float64(elems),
		BytesPerElement:        float64(st.GlobalBytes()) / float64(elems)}, nil
}

// costScalar is scalar parameter p at s: its shape value, else
// costScalars' value for its name, else 1.
func costScalar(p kernels.ParamSpec, s op.Shape) cudart.Param {
	if p.Value != nil {
		return cudart.Param{Kind: p.Kind, Bits: p.Value(s)}
	}
	v, ok := costScalars[p.Name]
	if !ok {
		v = 1
	}
	switch p.Kind {
	case cudart.F32:
		return cudart.ScalarF32(float32(v))
	case cudart.F64:
		return cudart.Param{Kind: p.Kind, Bits: math.Float64bits(v)}
	}
	return cudart.Param{Kind: p.Kind, Bits: uint64(v)}
}

// costInput is the fixed content of an input buffer of n elements: floats
// spread over [−1, 1] (k·0.618… mod 1, a low-discrepancy sequence), integers
// k mod 4096 (positions).
func costInput(kind cudart.Kind, n int) any {
	switch kind {
	case cudart.F32:
		x := make([]float32, n)
		for k := range x {
			_, f := math.Modf(float64(k) * 0.6180339887498949)
			x[k] = float32(2*f - 1)
		}
		return x
	case cudart.F64:
		x := make([]float64, n)
		for k := range x {
			_, f := math.Modf(float64(k) * 0.6180339887498949)
			x[k] = 2*f - 1
		}
		return x
	case cudart.I32:
		x := make([]int32, n)
		for k := range x {
			x[k] = int32(k % 4096)
		}
		return x
	}
	x := make([]uint32, n)
	for k := range x {
		x[k] = uint32(k % 4096)
	}
	return x
}

// costMemo keeps the probe's counts by kernel name and PTX hash for the
// process: they are a function of the two, and the suite's own tests build
// many reports.
var costMemo struct {
	sync.Mutex
	m map[string][]reports.Cost
}

// probeCosts returns the costs of the kernels of ks that are ptxprop's
// own, with the committed PTX (a kernel of that name with other PTX is
// not the one the probe would launch: it gets none), measuring each once
// a process; a kernel the probe cannot launch is named in the returned
// notes.
func probeCosts(ks []reports.Kernel) (costs []reports.Cost, notes []string) {
	costMemo.Lock()
	defer costMemo.Unlock()
	if costMemo.m == nil {
		costMemo.m = map[string][]reports.Cost{}
	}
	for _, rk := range ks {
		if rk.Origin != reports.KernelOurs {
			continue
		}
		k, ok := kernels.Lookup(rk.Name)
		if !ok {
			continue
		}
		if sum := sha256.Sum256(k.PTX); rk.PTXSHA256 != hex.EncodeToString(sum[:]) {
			continue
		}
		key := rk.Name + "@" + rk.PTXSHA256
		cs, ok := costMemo.m[key]
		if !ok {
			var err error
			if cs, err = KernelCosts(k); err != nil {
				notes = append(notes, err.Error())
			}
			costMemo.m[key] = cs
		}
		costs = append(costs, cs...)
	}
	return costs, notes
}

// addCosts adds to rep the cost probe's counts of its kernels when the run
// is on the emulator (info, of the run's first device) and is not a shard
// other than shard 0; a kernel the probe could not launch is a note of the
// run.
func (r *runner) addCosts(rep *reports.Report, info cudart.Info) {
	if len(r.devs) == 0 || info.Backend != "emu" || r.shard != nil && r.shard.Index != 0 {
		return
	}
	costs, notes := probeCosts(rep.Kernels)
	rep.Costs = append(rep.Costs, costs...)
	for _, n := range notes {
		rep.Run.Notes = append(rep.Run.Notes, "cost probe: "+n)
	}
}

// mergeCosts puts costs into old, replacing its count of the same kernel
// and shape: a merge joins reports of one commit, whose counts agree.
func mergeCosts(old *reports.Report, costs []reports.Cost) {
	for _, c := range costs {
		if o := old.Cost(c.Kernel, c.Shape); o != nil {
			*o = c
		} else {
			old.Costs = append(old.Costs, c)
		}
	}
}
