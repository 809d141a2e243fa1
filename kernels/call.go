package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// buffers are the device buffers of one host-level call, by tensor name
// (op.Tensor.Name).
type buffers map[string]cudart.Buffer

// call runs one host-level call of operation o with kernel name for its
// errors. check adds the problems with a's dimensions (and any rule of the
// implementation's own) to c and reports whether the shape is sound; then
// the lengths of a's slices and its offsets are checked against the table.
// call uploads the inputs, allocates the outputs a requests (an output that
// alias maps to an input shares that input's buffer), each as a view at its
// offset in a (op.Offsets), runs launch and downloads the outputs. Every
// problem is reported at once, before anything is allocated.
func call[A any](dev cudart.Device, o *op.Op[A], name string, a *A, check func(c *argCheck) bool,
	alias map[string]string, launch func(b buffers, sc *scratch) error) (err error) {
	var c argCheck
	if check(&c) {
		c.problems = append(c.problems, o.Lengths(a)...)
	}
	c.problems = append(c.problems, o.CheckOffsets(a)...)
	if err := c.err(name); err != nil {
		return err
	}
	sc := newScratch(dev, name)
	defer func() { err = joinFree(err, sc) }()
	b := buffers{}
	ts := o.Tensors()
	for i, t := range ts {
		switch {
		case o.IsNil(a, i):
		case t.Role == op.In && t.Kind == "u32":
			b[t.Name], err = sc.uploadAt(t.Name, *o.U32(a, i), o.Offset(a, i))
		case t.Role == op.In:
			b[t.Name], err = sc.uploadAt(t.Name, *o.F32(a, i), o.Offset(a, i))
		case alias[t.Name] != "":
			b[t.Name] = b[alias[t.Name]]
		default:
			b[t.Name], err = sc.allocAt(t.Name, cudart.F32, o.Len(a, i), o.Offset(a, i))
		}
		if err != nil {
			return err
		}
	}
	if err := launch(b, sc); err != nil {
		return err
	}
	for i, t := range ts {
		if t.Role == op.Out && !o.IsNil(a, i) {
			if err := sc.download(t.Name, *o.F32(a, i), b[t.Name]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Buffers are the device buffers of one Host call.
type Buffers struct {
	b  buffers
	sc *scratch
}

// Get returns the buffer of the tensor called name (op.Tensor.Name); the
// zero Buffer for an optional tensor a call leaves nil.
func (b Buffers) Get(name string) cudart.Buffer { return b.b[name] }

// Scratch allocates n elements of kind for the call; Host frees them with
// the rest.
func (b Buffers) Scratch(name string, kind cudart.Kind, n int) (cudart.Buffer, error) {
	return b.sc.alloc(name, kind, n)
}

// Host runs one host-level call of operation o for an implementation of
// one's own: it checks a's dimensions and the lengths of its slices
// against the op table, uploads the inputs, allocates the outputs a
// requests, calls launch and downloads the outputs into a. name labels
// the errors. Every buffer is freed before Host returns.
func Host[A any](dev cudart.Device, o *op.Op[A], name string, a *A, launch func(b Buffers) error) error {
	check := func(c *argCheck) bool {
		s := o.Shape(a)
		if o.PerHead() {
			return checkHeads(c, s.Rows, s.Heads, s.HeadDim)
		}
		return checkRowsHidden(c, s.Rows, s.Hidden)
	}
	return call(dev, o, name, a, check, nil, func(b buffers, sc *scratch) error { return launch(Buffers{b, sc}) })
}
