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
// the lengths of a's slices are checked against the table. call uploads
// the inputs, allocates the outputs a requests (an output that alias maps
// to an input shares that input's buffer), runs launch and downloads the
// outputs. Every problem is reported at once, before anything is allocated.
func call[A any](dev cudart.Device, o *op.Op[A], name string, a *A, check func(c *argCheck) bool,
	alias map[string]string, launch func(b buffers, sc *scratch) error) (err error) {
	var c argCheck
	if check(&c) {
		c.problems = append(c.problems, o.Lengths(a)...)
	}
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
			b[t.Name], err = sc.upload(t.Name, *o.U32(a, i))
		case t.Role == op.In:
			b[t.Name], err = sc.upload(t.Name, *o.F32(a, i))
		case alias[t.Name] != "":
			b[t.Name] = b[alias[t.Name]]
		default:
			b[t.Name], err = sc.alloc(t.Name, cudart.F32, o.Len(a, i))
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
