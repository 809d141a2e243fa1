// Package cost measures what ptxprop's kernels cost on the emulator:
// Measure launches a kernel once at each of a fixed set of shapes (Shapes),
// with fixed inputs, on a fresh emulator of its own (canonical schedule,
// exact approximations), and returns the thread-instructions and the
// global-memory bytes it counted (emu.LaunchStats), per element of the
// kernel's largest output, as the report's costs (reports.Cost). They are
// the same on every run of the same PTX, so ptxprop report diff can call
// any growth a kernel that got costlier, with no GPU and no noise. The
// shapes are fixed, not drawn, so that one night's counts compare with
// the next's.
package cost

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/reports"
)

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

// Shapes returns the fixed shapes Measure launches k at.
func Shapes(k *kernels.Kernel) []op.Shape {
	if slices.ContainsFunc(k.Params, func(p kernels.ParamSpec) bool { return p.Name == "head_dim" }) {
		return slices.Clone(headShapes)
	}
	return slices.Clone(rowShapes)
}

// Measure launches k at each of Shapes(k) on a fresh emulator and returns
// what it counted, one Cost a shape (Shape is op.Shape's String, Size the
// hidden size).
func Measure(k *kernels.Kernel) ([]reports.Cost, error) {
	b := emu.New(emu.Config{})
	opts := cudart.DefaultOptions()
	opts.Watchdog = 0 // the emulator's counts do not depend on time
	dev := cudart.New(b, opts)
	defer dev.Close()
	var out []reports.Cost
	for _, s := range Shapes(k) {
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
