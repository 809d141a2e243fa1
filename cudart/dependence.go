package cudart

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
	"unsafe"
)

// Source is one input element a value was computed from: element Index of
// the Trace's input Tensor, or StaleSource (Index 0) for device memory that
// no input names and that nothing wrote while the trace ran.
type Source struct {
	Tensor, Index int32
}

// StaleSource is the Tensor of memory that held no input and was not
// written by the host or a launch during the trace: scratch left by an
// earlier launch, a buffer never initialised.
const StaleSource int32 = -1

// DependenceTracker (CapDependence) records which input elements every
// value stored to device memory was computed from (the emulator; see
// emu's taint.go for what it follows). TrackDependence(true) starts afresh:
// every byte then holds StaleSource until the host writes it (a constant,
// no source), an input mark names it, or a launch stores to it.
type DependenceTracker interface {
	TrackDependence(on bool)
	// MarkSource marks [addr, addr+n) as input tensor: byte i holds
	// element first + i/elem. Host writes keep the mark.
	MarkSource(addr uint64, n, elem int, tensor, first int32) error
	// Sources returns the sources of each element of size elem in
	// [addr, addr+n), in ascending order.
	Sources(addr uint64, n, elem int) ([][]Source, error)
}

// Trace collects the dependence of a computation's outputs on its inputs,
// both given as host slices: a Device that traces marks every Write from
// an input slice (or part of one) as that input's elements, and records
// the sources of every Read. Outputs are matched to Reads by the host
// slice they were read into, or else by their contents (an implementation
// that reads into a slice of its own and copies it out).
type Trace struct {
	mu       sync.Mutex
	inputs   []hostRange
	outputs  []hostRange
	uploaded []bool
	reads    []readBack
	err      error // the first failure to read sources
}

type hostRange struct {
	lo, hi uintptr
	elem   int
	raw    []byte
}

type readBack struct {
	at      hostRange
	content []byte
	sources [][]Source
}

// NewTrace returns an empty trace.
func NewTrace() *Trace { return &Trace{} }

func rangeOf(s any) (hostRange, error) {
	raw, kind, _, err := hostBytes(s)
	if err != nil {
		return hostRange{}, err
	}
	var lo uintptr
	if len(raw) > 0 {
		lo = uintptr(unsafe.Pointer(&raw[0]))
	}
	return hostRange{lo: lo, hi: lo + uintptr(len(raw)), elem: kind.Size(), raw: raw}, nil
}

// Input registers host slice s as input tensor number len(inputs so far)
// and returns that number.
func (t *Trace) Input(s any) (int32, error) {
	r, err := rangeOf(s)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inputs = append(t.inputs, r)
	t.uploaded = append(t.uploaded, false)
	return int32(len(t.inputs) - 1), nil
}

// Output registers host slice s as an output and returns its number.
func (t *Trace) Output(s any) (int, error) {
	r, err := rangeOf(s)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.outputs = append(t.outputs, r)
	return len(t.outputs) - 1, nil
}

// Uploaded reports whether input i reached the device, whole or in part,
// from its own host slice.
func (t *Trace) Uploaded(i int32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.uploaded[i]
}

// Sources returns the sources of each element of output i, as the last
// Read into its slice found them, or else as the one Read whose contents
// equal the output's; false when no Read matches.
func (t *Trace) Sources(i int) ([][]Source, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.outputs[i]
	for k := len(t.reads) - 1; k >= 0; k-- {
		if r := t.reads[k]; r.at.lo == o.lo && r.at.hi == o.hi && o.lo != 0 {
			return r.sources, true
		}
	}
	var found [][]Source
	n := 0
	for _, r := range t.reads {
		if len(r.content) == len(o.raw) && r.at.elem == o.elem && bytes.Equal(r.content, o.raw) {
			found, n = r.sources, n+1
		}
	}
	return found, n == 1
}

// marks returns the inputs that host range w lies in: (tensor, first
// element) pairs.
func (t *Trace) marks(w hostRange) (tensors, firsts []int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, in := range t.inputs {
		if w.lo >= in.lo && w.hi <= in.hi && w.lo < w.hi && in.elem == w.elem {
			tensors = append(tensors, int32(i))
			firsts = append(firsts, int32((w.lo-in.lo)/uintptr(in.elem)))
			t.uploaded[i] = true
		}
	}
	return tensors, firsts
}

func (t *Trace) read(at hostRange, sources [][]Source) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reads = append(t.reads, readBack{at: at, content: bytes.Clone(at.raw), sources: sources})
}

// Trace makes later Writes and Reads feed t (nil: stop tracing), with the
// backend's dependence tracking started afresh. ErrUnsupported without
// CapDependence.
func (d *device) Trace(t *Trace) error {
	d.lock()
	defer d.unlock()
	if err := d.usable("trace", ""); err != nil {
		return err
	}
	if !d.caps.Has(CapDependence) {
		return &Error{Op: "trace", Err: ErrUnsupported}
	}
	d.trace = t
	return wrap("trace", "", d.exec(func(b Backend) error {
		b.(DependenceTracker).TrackDependence(t != nil)
		return nil
	}))
}

// traceWrite marks the bytes of buf that a Write from host slice src
// filled when src is (part of) an input of the trace. Callers hold d.mu.
func (d *device) traceWrite(buf *buffer, src any) error {
	w, err := rangeOf(src)
	if err != nil {
		return err
	}
	tensors, firsts := d.trace.marks(w)
	if len(tensors) == 0 {
		return nil
	}
	return d.exec(func(b Backend) error {
		for i := range tensors {
			if err := b.(DependenceTracker).MarkSource(buf.addr, len(w.raw), w.elem, tensors[i], firsts[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// traceRead records the sources of the elements a Read copied into dst.
func (d *device) traceRead(dst any, src Buffer) error {
	d.lock()
	defer d.unlock()
	t := d.trace
	if t == nil {
		return nil
	}
	buf, err := d.lookup("read", src)
	if err != nil {
		return err
	}
	at, err := rangeOf(dst)
	if err != nil || len(at.raw) == 0 {
		return err
	}
	var sources [][]Source
	err = d.exec(func(b Backend) error {
		var err error
		sources, err = b.(DependenceTracker).Sources(buf.addr, len(at.raw), at.elem)
		return err
	})
	if err != nil {
		t.fail(wrap("read", src.String(), err))
		return nil
	}
	t.read(at, sources)
	return nil
}

func (t *Trace) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

// Err returns the first failure to find the sources of a Read (a launch
// ran an instruction whose dependence the backend does not track).
func (t *Trace) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// TraceStored tells the trace that src, a host slice holding (part of) one
// of its inputs, lies in b otherwise than a Write of it would put it there
// (converted to another storage or to its reciprocal, its rows padded):
// element i of src is device element at(i) of b, elements of elem bytes.
// Nothing happens while no trace runs or when src is no input of it.
func (d *device) TraceStored(b Buffer, elem int, src any, at func(i int) int) error {
	d.lock()
	defer d.unlock()
	t := d.trace
	if t == nil {
		return nil
	}
	buf, err := d.lookup("trace stored", b)
	if err != nil {
		return err
	}
	w, err := rangeOf(src)
	if err != nil || w.lo == w.hi {
		return wrap("trace stored", b.String(), err)
	}
	n := len(w.raw) / w.elem
	if elem <= 0 {
		return &Error{Op: "trace stored", Name: b.String(), Err: Errorf(ErrInvalid, "elements of %d bytes", elem)}
	}
	for i := 0; i < n; i++ {
		if p := at(i); p < 0 || (p+1)*elem > buf.bytes {
			return &Error{Op: "trace stored", Name: b.String(), Err: Errorf(ErrInvalid,
				"element %d of the host slice at device element %d, past the buffer's %d bytes", i, p, buf.bytes)}
		}
	}
	tensors, firsts := t.marks(w)
	return wrap("trace stored", b.String(), d.exec(func(be Backend) error {
		tr := be.(DependenceTracker)
		for k := range tensors {
			// One mark per run of consecutive device elements.
			for i := 0; i < n; {
				j := i + 1
				for j < n && at(j) == at(j-1)+1 {
					j++
				}
				if err := tr.MarkSource(buf.addr+uint64(at(i)*elem), (j-i)*elem, elem, tensors[k], firsts[k]+int32(i)); err != nil {
					return err
				}
				i = j
			}
		}
		return nil
	}))
}

// TraceDerived tells the trace that host slice dst was computed on the host
// from b: element i of dst from device elements from(i) of b, elements of
// elem bytes (a conversion, the rows of a padded tensor, a host-side sum).
// dst is then matched to an output as a Read into it would be. Nothing
// happens while no trace runs.
func (d *device) TraceDerived(dst any, b Buffer, elem int, from func(i int) []int) error {
	d.lock()
	defer d.unlock()
	t := d.trace
	if t == nil {
		return nil
	}
	buf, err := d.lookup("trace derived", b)
	if err != nil {
		return err
	}
	at, err := rangeOf(dst)
	if err != nil || len(at.raw) == 0 {
		return wrap("trace derived", b.String(), err)
	}
	if elem <= 0 || buf.bytes%elem != 0 {
		return &Error{Op: "trace derived", Name: b.String(), Err: Errorf(ErrInvalid, "elements of %d bytes in %d", elem, buf.bytes)}
	}
	var all [][]Source
	err = d.exec(func(be Backend) error {
		var err error
		all, err = be.(DependenceTracker).Sources(buf.addr, buf.bytes, elem)
		return err
	})
	if err != nil {
		t.fail(wrap("trace derived", b.String(), err))
		return nil
	}
	sources := make([][]Source, len(at.raw)/at.elem)
	for i := range sources {
		seen := map[Source]bool{}
		for _, p := range from(i) {
			if p < 0 || p >= len(all) {
				return &Error{Op: "trace derived", Name: b.String(), Err: Errorf(ErrInvalid,
					"element %d of the host slice from device element %d, past the buffer's %d", i, p, len(all))}
			}
			for _, s := range all[p] {
				if !seen[s] {
					seen[s] = true
					sources[i] = append(sources[i], s)
				}
			}
		}
		slices.SortFunc(sources[i], func(a, b Source) int {
			return cmp.Or(cmp.Compare(a.Tensor, b.Tensor), cmp.Compare(a.Index, b.Index))
		})
	}
	t.read(at, sources)
	return nil
}
