package properties

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// OffsetTaker is implemented by an implementation that says whether it
// passes its tensors to the kernel at the element offsets of its
// arguments' op.Offsets (misaligned views). Contracts draw offsets only
// for an implementation that takes them; one without the method takes
// them (our launchers do, through kernels' call layer and kernels.Host;
// an implementation that ignores op.Offsets is merely checked aligned).
// A bound kernel takes them only where its binding allows views.
type OffsetTaker interface {
	TakesOffsets() bool
}

// takesOffsets reports whether impl takes op.Offsets.
func takesOffsets(impl any) bool {
	t, ok := impl.(OffsetTaker)
	return !ok || t.TakesOffsets()
}

// drawOffsets draws the offsets of o's tensors for one call
// (gen.Limits.DrawOffsets, each steered as NAME.off): nil when impl takes
// none or every tensor is aligned.
func drawOffsets(rt *rapid.T, lim gen.Limits, impl any, o op.Operation) op.Offsets {
	if !takesOffsets(impl) {
		return nil
	}
	ts := o.Tensors()
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	var off op.Offsets
	for i, k := range lim.DrawOffsets(rt, names) {
		if k != 0 {
			if off == nil {
				off = op.Offsets{}
			}
			off[names[i]] = k
		}
	}
	return off
}

// offsets returns the tensor offsets of the check's calls of operation o
// to impl: drawn at the first call and the same for every later call of o
// in the check, so that two launches a check compares bit for bit take
// the same paths. They are added to the check's context.
func (ob *Obs) offsets(impl any, o op.Operation) op.Offsets {
	if off, ok := ob.offs[o.Name()]; ok {
		return off
	}
	off := drawOffsets(ob.rt, ob.lim, impl, o)
	if ob.offs == nil {
		ob.offs = map[string]op.Offsets{}
	}
	ob.offs[o.Name()] = off
	if off != nil {
		ob.ctx += fmt.Sprintf(" %s offsets=%v", o.Name(), off)
	}
	return off
}
