package binding

import (
	"errors"
	"fmt"
	"math"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

// call is one host-level invocation in the contract's terms: the saved
// statistics are named as the contract's argument types hold them (rms,
// mean, rstd), whatever form the kernel uses.
type call struct {
	shape     Shape
	eps       float32
	theta     float32
	pos       uint32
	in        map[string][]float32
	positions []uint32
	// out holds a destination per output role the caller wants; outputs
	// the kernel writes that are not here are computed and dropped.
	out map[string][]float32
	// alias adds output → input aliases for this call (fused residual's
	// in-place mode) to the binding's own.
	alias map[string]string
	// offsets are the contract's tensor offsets (op.Offsets), in 32-bit
	// words of storage; nil unless the binding takes views.
	offsets op.Offsets
}

// contractRole returns the role in the contract's argument types that a
// kernel's saved role r stands for, and whether the value is the
// reciprocal (rstd for rms, std for rstd).
func (b *Binding) contractRole(r string) (string, bool) {
	switch r {
	case "rstd":
		if b.op.forms["rms_eps"] != nil {
			return "rms", true
		}
		return "rstd", false
	case "std":
		return "rstd", true
	}
	return r, false
}

// reciprocal returns 1/v per element, rounded once to float32.
func reciprocal(v []float32) []float32 {
	r := make([]float32, len(v))
	for i, x := range v {
		r[i] = float32(1 / float64(x))
	}
	return r
}

// uninitializedBits fills uninitialized scratch: a quiet NaN with a payload
// for float32, so that a kernel reading scratch it never wrote produces NaN
// (and an integer counter starts far from 0).
const uninitializedBits = 0x7fc0dead

// deviceTensor is a tensor's buffer and how its elements are stored.
type deviceTensor struct {
	buf     cudart.Buffer
	storage oracle.Storage
	n       int // elements on the device (16-bit ones are packed two to a 32-bit word)
	role    cudart.Role
	// rows, cols, stride lay out a padded row tensor: row r at r·stride,
	// the stride−cols elements after it a gap that must keep gapBits.
	// stride == cols: contiguous.
	rows, cols, stride int
}

// at returns the device element that holds element i of the tensor's
// rows (past the gaps of a padded one).
func (t *deviceTensor) at(i int) int {
	if t.stride == t.cols {
		return i
	}
	return i/t.cols*t.stride + i%t.cols
}

// elemBytes is the size of one stored element: 2 for the 16-bit storages.
func (t *deviceTensor) elemBytes() int {
	if t.storage == oracle.StorageFloat32 {
		return 4
	}
	return 2
}

// gapBits fill the gaps between padded rows and the outputs before a
// launch: a quiet NaN (float32) or all ones (a NaN in bf16 and f16).
func gapBits(s oracle.Storage) uint32 {
	if s == oracle.StorageFloat32 {
		return uninitializedBits
	}
	return 0xffff
}

// pad lays rows of cols values out at stride, the gaps filled with NaN.
func (t *deviceTensor) pad(v []float32) []float32 {
	if t.stride == t.cols {
		return v
	}
	g := gap(t.storage)
	out := make([]float32, t.n)
	for i := range out {
		out[i] = g
	}
	for r := 0; r < t.rows; r++ {
		copy(out[r*t.stride:], v[r*t.cols:(r+1)*t.cols])
	}
	return out
}

func gap(s oracle.Storage) float32 {
	if s == oracle.StorageFloat32 {
		return math.Float32frombits(uninitializedBits)
	}
	return s.FromBits(0xffff)
}

// unpad returns the rows of a padded tensor, and an error naming the first
// gap element the kernel wrote (bits holds the stored encodings).
func (t *deviceTensor) unpad(v []float32, bits func(i int) uint32, name string) ([]float32, error) {
	if t.stride == t.cols {
		return v, nil
	}
	want := gapBits(t.storage)
	out := make([]float32, t.rows*t.cols)
	for r := 0; r < t.rows; r++ {
		copy(out[r*t.cols:], v[r*t.stride:r*t.stride+t.cols])
		for c := t.cols; c < t.stride && r*t.stride+c < t.n; c++ {
			if i := r*t.stride + c; bits(i) != want {
				return nil, fmt.Errorf("%s: the kernel wrote between rows: element %d of the gap after row %d (row stride %d, hidden %d)", name, c-t.cols, r, t.stride, t.cols)
			}
		}
	}
	return out, nil
}

// run executes the launch sequence for c on dev and fills c.out.
// A binding error (the file at fault at this shape) is recorded for Verify.
func (b *Binding) run(dev cudart.Device, c *call) (err error) {
	defer func() { b.fault(err) }()
	p, err := b.plan(c.shape)
	if err != nil {
		return err
	}
	var bufs []cudart.Buffer
	defer func() {
		var errs []error
		for _, x := range bufs {
			errs = append(errs, dev.Free(x))
		}
		if ferr := errors.Join(errs...); ferr != nil && err == nil {
			err = fmt.Errorf("binding %s: %w", b.Name, ferr)
		}
	}()
	alloc := func(kind cudart.Kind, n, off int) (cudart.Buffer, error) {
		x, err := dev.AllocAt(kind, max(n, 1), off)
		if err == nil {
			bufs = append(bufs, x)
		}
		return x, err
	}

	alias, aliasOf := map[string]string{}, map[string]string{}
	for _, m := range []map[string]string{b.alias, c.alias} {
		for o, i := range m {
			alias[o], aliasOf[i] = i, o
		}
	}
	tensors := map[string]*deviceTensor{}
	env := b.env(c.shape, nil)
	for _, role := range sortedKeys(b.bound) {
		spec, ok := b.op.tensors[role]
		if !ok {
			continue
		}
		n64, err := parseAndEval(spec.size, env)
		if err != nil {
			return err
		}
		n := int(n64)
		t := &deviceTensor{storage: b.storage[role], n: n, rows: 1, cols: n, stride: n}
		if b.strided[role] && spec.size == rowsHidden {
			t.rows, t.cols, t.stride = c.shape.Rows, c.shape.Hidden, p.stride
			t.n = t.rows * t.stride
		}
		kind := cudart.F32
		words := t.n
		if spec.positions {
			kind = cudart.U32
		} else if t.storage != oracle.StorageFloat32 {
			kind, words = cudart.U32, (t.n+1)/2
		}
		if _, ok := aliasOf[role]; ok && spec.input {
			t.role = cudart.RoleInOut // an output is written over it
		} else if spec.input {
			t.role = cudart.RoleIn
		} else if t.storage != oracle.StorageFloat32 || t.stride != t.cols {
			// Filled here with NaN: the device's poison is 32-bit, and a
			// padded output's gaps must keep their pattern.
			t.role = cudart.RoleInOut
		} else {
			t.role = cudart.RoleOut
		}
		if _, ok := alias[role]; ok {
			continue // written over an input: its buffer, set below
		}
		if b.hostOut[role] {
			continue // ptxprop's sum writes it, after the launches
		}
		if t.buf, err = alloc(kind, words, c.offsets[role]); err != nil {
			return fmt.Errorf("binding %s: alloc %s: %w", b.Name, role, err)
		}
		tensors[role] = t
		switch {
		case spec.positions:
			pos := c.positions
			if pos == nil { // one position for every row
				pos = make([]uint32, n)
				for i := range pos {
					pos[i] = c.pos
				}
			}
			if len(pos) != n {
				return fmt.Errorf("binding %s: %d positions, want %d: %w", b.Name, len(pos), n, ErrInvalid)
			}
			err = dev.Write(t.buf, pos)
		case spec.input:
			v, err2 := b.inputValues(role, c, n)
			if err2 != nil {
				return err2
			}
			if err = writeStored(dev, t, t.pad(v)); err == nil {
				cr, _ := b.contractRole(role)
				err = dev.TraceStored(t.buf, t.elemBytes(), c.in[cr], t.at)
			}
		case t.storage != oracle.StorageFloat32:
			fill := make([]uint32, words)
			for i := range fill {
				fill[i] = 0xffffffff // NaN in both halves (bf16 and f16)
			}
			err = dev.Write(t.buf, fill)
		case t.stride != t.cols:
			fill := make([]float32, words)
			for i := range fill {
				fill[i] = gap(t.storage)
			}
			err = dev.Write(t.buf, fill)
		}
		if err != nil {
			return fmt.Errorf("binding %s: upload %s: %w", b.Name, role, err)
		}
	}
	// Outputs written over inputs share their buffer.
	for out, in := range alias {
		if t := tensors[in]; t != nil {
			tensors[out] = t
		}
	}

	scratch := map[string]cudart.Buffer{}
	for i, sc := range b.scratch {
		x, err := alloc(sc.kind, p.scratch[i], 0)
		if err != nil {
			return fmt.Errorf("binding %s: alloc scratch %s: %w", b.Name, sc.name, err)
		}
		fill := make([]uint32, p.scratch[i])
		if !sc.zeroed {
			for j := range fill {
				fill[j] = uninitializedBits
			}
		}
		var data any = fill
		switch sc.kind {
		case cudart.F32:
			f := make([]float32, len(fill))
			for j, w := range fill {
				f[j] = math.Float32frombits(w)
			}
			data = f
		case cudart.I32:
			f := make([]int32, len(fill))
			for j, w := range fill {
				f[j] = int32(w)
			}
			data = f
		}
		if err := dev.Write(x, data); err != nil {
			return fmt.Errorf("binding %s: initialise scratch %s: %w", b.Name, sc.name, err)
		}
		scratch[sc.name] = x
	}

	inputs, err := b.uploadInputs(dev, c, p, func(kind cudart.Kind, n int) (cudart.Buffer, error) { return alloc(kind, n, 0) })
	if err != nil {
		return err
	}

	mods := map[string]cudart.Module{}
	written := map[string]bool{} // outputs an earlier launch wrote: read-write from then on
	for li, ln := range b.launches {
		m, ok := mods[ln.ptxPath]
		if !ok {
			if m, err = dev.Load(b.Name, ln.ptx); err != nil {
				return fmt.Errorf("binding %s: load %s: %w", b.Name, ln.ptxPath, err)
			}
			mods[ln.ptxPath] = m
		}
		args := make([]cudart.Param, len(ln.params))
		for i, pr := range ln.params {
			switch pr.kind {
			case pTensor:
				t := tensors[pr.name]
				role := t.role
				if role == cudart.RoleOut && written[pr.name] {
					role = cudart.RoleInOut // e.g. zeroed by one launch, accumulated by the next
				}
				args[i] = cudart.Param{Buf: t.buf, Role: role}
			case pScratch:
				args[i] = cudart.InOut(scratch[pr.name])
			case pInput:
				args[i] = cudart.In(inputs[pr.name])
			case pScalar:
				switch pr.name {
				case "eps", "theta":
					v := c.eps
					if pr.name == "theta" {
						v = c.theta
					}
					args[i] = floatParam(pr.kindC, v)
				case "pos":
					args[i] = cudart.Param{Kind: pr.kindC, Bits: uint64(c.pos)}
				default:
					args[i] = cudart.Param{Kind: pr.kindC, Bits: p.values[li][i]}
				}
			case pIgnore:
				args[i] = cudart.Param{Kind: pr.kindC, Bits: pr.bits}
			default: // pStride, pValue
				args[i] = cudart.Param{Kind: pr.kindC, Bits: p.values[li][i]}
			}
		}
		if err := dev.Launch(m, ln.entry, p.geometry[li], args...); err != nil {
			return fmt.Errorf("binding %s: launch %d (%s) at %v: %w", b.Name, li, ln.entry, c.shape, err)
		}
		for _, pr := range ln.params {
			if pr.kind == pTensor {
				written[pr.name] = true
			}
		}
	}

	if err := b.sumOnHost(dev, c, p, scratch); err != nil {
		return err
	}

	// Outputs, widened and converted to the contract's form.
	for _, role := range sortedKeys(tensors) {
		spec := b.op.tensors[role]
		if spec.input {
			continue
		}
		cr, recip := b.contractRole(role)
		dst, want := c.out[cr]
		if !want || dst == nil {
			continue
		}
		t := tensors[role]
		v, bits, err := readStored(dev, t)
		if err != nil {
			return fmt.Errorf("binding %s: read %s: %w", b.Name, role, err)
		}
		if v, err = t.unpad(v, bits, role); err != nil {
			return fmt.Errorf("binding %s at %v: %v", b.Name, c.shape, err)
		}
		if recip {
			v = reciprocal(v)
		}
		if len(dst) != len(v) {
			return fmt.Errorf("binding %s: %s: the caller's slice holds %d elements, the kernel wrote %d: %w", b.Name, cr, len(dst), len(v), ErrInvalid)
		}
		copy(dst, v)
		if err := dev.TraceDerived(dst, t.buf, t.elemBytes(), func(i int) []int { return []int{t.at(i)} }); err != nil {
			return fmt.Errorf("binding %s: trace %s: %w", b.Name, role, err)
		}
	}
	return nil
}

// uploadInputs allocates and fills the extra tables (inputs:) for c. A
// rope table holds, in row p, cos or sin of p·θ^(−2j/head_dim) for column
// j (the float64 value rounded once to float32) for each position p the
// call uses, and NaN in every other row, so that a kernel that reads
// another position's row reads NaN. A position past the table's rows is a
// binding error (the prediction's status is error): the generators draw
// none (Config.MaxPosition).
func (b *Binding) uploadInputs(dev cudart.Device, c *call, p *plan, alloc func(cudart.Kind, int) (cudart.Buffer, error)) (map[string]cudart.Buffer, error) {
	if len(b.inputs) == 0 {
		return nil, nil
	}
	pos := c.positions
	if pos == nil {
		pos = []uint32{c.pos}
	}
	out := map[string]cudart.Buffer{}
	for _, name := range sortedKeys(b.inputs) {
		in, rc := b.inputs[name], p.inputs[name]
		rows, cols := rc[0], rc[1]
		v := make([]float32, rows*cols)
		nan := float32(math.NaN())
		for i := range v {
			v[i] = nan
		}
		for _, q := range pos {
			if int64(q) >= int64(rows) {
				// The generators draw positions below the rows
				// (Config.MaxPosition): a prediction that passes one past
				// them cannot be judged on this kernel.
				return nil, &Error{File: b.Path, Line: in.line, Msg: fmt.Sprintf("position %d is past the %d rows of %s", q, rows, name)}
			}
			row := v[int(q)*cols : (int(q)+1)*cols]
			for j := range row {
				a := float64(q) * math.Pow(float64(c.theta), -2*float64(j)/float64(c.shape.HeadDim))
				if in.value == "rope.sin" {
					row[j] = float32(math.Sin(a))
				} else {
					row[j] = float32(math.Cos(a))
				}
			}
		}
		x, err := alloc(cudart.F32, len(v))
		if err != nil {
			return nil, fmt.Errorf("binding %s: alloc input %s: %w", b.Name, name, err)
		}
		if err := dev.Write(x, v); err != nil {
			return nil, fmt.Errorf("binding %s: upload input %s: %w", b.Name, name, err)
		}
		out[name] = x
	}
	return out, nil
}

// sumOnHost performs the host sums (host_sums) after the launches: into[j]
// = Σ from[r·n + j] for r = 0, 1, …, rows−1 in that order, accumulated in
// float32 from +0 (n: into's length), as torch's dW.sum(0) on a
// contiguous [rows][n] tensor does on a CPU, one serial chain per column.
func (b *Binding) sumOnHost(dev cudart.Device, c *call, p *plan, scratch map[string]cudart.Buffer) error {
	for i, h := range b.hostSums {
		cr, _ := b.contractRole(h.into)
		dst, want := c.out[cr]
		if !want || dst == nil {
			continue
		}
		var size int
		for k, sc := range b.scratch {
			if sc.name == h.from {
				size = p.scratch[k]
			}
		}
		part := make([]float32, size)
		if err := dev.Read(part, scratch[h.from]); err != nil {
			return fmt.Errorf("binding %s: read scratch %s: %w", b.Name, h.from, err)
		}
		n := len(dst)
		for j := 0; j < n; j++ {
			var s float32
			for r := 0; r < p.hostRows[i]; r++ {
				s += part[r*n+j]
			}
			dst[j] = s
		}
		rows := p.hostRows[i]
		if err := dev.TraceDerived(dst, scratch[h.from], 4, func(j int) []int {
			from := make([]int, rows)
			for r := range from {
				from[r] = r*n + j
			}
			return from
		}); err != nil {
			return fmt.Errorf("binding %s: trace %s: %w", b.Name, h.into, err)
		}
	}
	return nil
}

// Prepare loads every module of the binding on dev, so that what the
// backend cannot run (an instruction the emulator lacks) is reported before
// any launch. The device caches modules: the launches reuse them.
func (b *Binding) Prepare(dev cudart.Device) error {
	seen := map[string]bool{}
	for _, ln := range b.launches {
		if seen[ln.ptxPath] {
			continue
		}
		seen[ln.ptxPath] = true
		if _, err := dev.Load(b.Name, ln.ptx); err != nil {
			return fmt.Errorf("binding %s: %s does not load on %s: %w", b.Name, ln.ptxPath, dev.Info().Backend, err)
		}
	}
	return nil
}

// inputValues returns the values of input role in the kernel's form.
func (b *Binding) inputValues(role string, c *call, n int) ([]float32, error) {
	cr, recip := b.contractRole(role)
	v, ok := c.in[cr]
	if !ok {
		return nil, fmt.Errorf("binding %s: the contract passes no %s: %w", b.Name, cr, ErrInvalid)
	}
	if len(v) != n {
		return nil, fmt.Errorf("binding %s: %s has %d elements, %v needs %d: %w", b.Name, cr, len(v), c.shape, n, ErrInvalid)
	}
	if recip {
		v = reciprocal(v)
	}
	return v, nil
}

func floatParam(k cudart.Kind, v float32) cudart.Param {
	if k == cudart.F64 {
		return cudart.ScalarF64(float64(v))
	}
	return cudart.ScalarF32(v)
}

// parseAndEval evaluates one of the op table's size expressions.
func parseAndEval(src string, env func(string) (int64, error)) (int64, error) {
	e, err := parseExpr(src, false)
	if err != nil {
		return 0, err
	}
	return e.eval(env)
}

// writeStored uploads v into t's buffer in t's storage format (rounded to
// nearest even for the 16-bit formats, two elements per 32-bit word, the
// first in the low half).
func writeStored(dev cudart.Device, t *deviceTensor, v []float32) error {
	if t.storage == oracle.StorageFloat32 {
		return dev.Write(t.buf, v)
	}
	return dev.Write(t.buf, pack16(t.storage, v))
}

// readStored reads t back, widened to float32, with the stored encoding of
// each element.
func readStored(dev cudart.Device, t *deviceTensor) ([]float32, func(int) uint32, error) {
	if t.storage == oracle.StorageFloat32 {
		v := make([]float32, t.n)
		err := dev.Read(v, t.buf)
		return v, func(i int) uint32 { return math.Float32bits(v[i]) }, err
	}
	w := make([]uint32, (t.n+1)/2)
	if err := dev.Read(w, t.buf); err != nil {
		return nil, nil, err
	}
	return unpack16(t.storage, w, t.n), func(i int) uint32 { return w[i/2] >> (16 * (i % 2)) & 0xffff }, nil
}

// pack16 rounds v to a 16-bit storage format and packs it two to a word,
// element 2i in the low half of word i (the little-endian layout of a
// 16-bit array).
func pack16(s oracle.Storage, v []float32) []uint32 {
	w := make([]uint32, (len(v)+1)/2)
	for i, x := range v {
		w[i/2] |= s.Bits(x) << (16 * (i % 2))
	}
	return w
}

// unpack16 widens n packed 16-bit elements to float32, exactly.
func unpack16(s oracle.Storage, w []uint32, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = s.FromBits(w[i/2] >> (16 * (i % 2)) & 0xffff)
	}
	return v
}
