package cudart

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/ptxprop/ptxprop/cudart/internal/alloc"
	"github.com/ptxprop/ptxprop/cudart/internal/staging"
)

// Buffers: allocation from the pool, the canaries and poison queued as
// pending stores, writes kept as mirrors, reads served from them.

type buffer struct {
	Buffer
	base  uint64 // start of the allocation (guard band included)
	addr  uint64 // first element
	bytes int    // element bytes
	guard int    // guard band after the elements (Options.GuardBytes)
	// pre is the guard band before the first element: guard, and the
	// slack of a view at an element offset (AllocAt), so a write into the
	// slack is a write outside the buffer.
	pre   int
	class int // allocation size (alloc.SizeClass of pre + bytes + guard); 0: damaged, never pooled
	// shadowOK: mirror holds the contents the host last wrote in full,
	// until a launch may have written the buffer; a RoleIn buffer with it
	// needs no snapshot before a launch: what comes back is compared with
	// the mirror.
	shadowOK bool
	// checkedAt is the launch count when the guard bands were last found
	// intact; Free need not look again if no launch has run since.
	checkedAt int
	// mirror is a host copy of the buffer's contents, valid until a launch
	// may write it or a partial Write: Read serves it without a device call.
	// The buffer holds one share of it.
	mirror *staging.Copy
	// busy: a launch that uses the buffer is in flight without the Device's
	// lock (device checks); every other call on it waits.
	busy bool
}

func (d *device) Alloc(kind Kind, n int) (Buffer, error) { return d.AllocAt(kind, n, 0) }

// MaxViewBytes bounds the misalignment AllocAt gives: off·size < MaxViewBytes
// (allocations start 256-byte aligned).
const MaxViewBytes = 256

func (d *device) AllocAt(kind Kind, n, off int) (Buffer, error) {
	d.lock()
	defer d.unlock()
	if err := d.usable("alloc", ""); err != nil {
		return Buffer{}, err
	}
	if kind.Size() == 0 || n <= 0 {
		return Buffer{}, &Error{Op: "alloc", Err: Errorf(ErrInvalid, "%d elements of %v", n, kind)}
	}
	if off < 0 || off*kind.Size() >= MaxViewBytes {
		return Buffer{}, &Error{Op: "alloc", Err: Errorf(ErrInvalid, "view at element %d of %v: want 0 ≤ offset·%d < %d bytes", off, kind, kind.Size(), MaxViewBytes)}
	}
	nb := n * kind.Size()
	g := d.opts.GuardBytes
	pre := g + off*kind.Size()
	class := alloc.SizeClass(pre + nb + g)
	base, ok := d.pool.Get(class)
	if !ok {
		err := d.exec(func(b Backend) error {
			var err error
			base, err = b.Alloc(class)
			return err
		})
		if err != nil {
			return Buffer{}, wrap("alloc", "", err)
		}
	}
	d.nextID++
	buf := &buffer{Buffer: Buffer{id: d.nextID, kind: kind, n: n, owner: d}, base: base, addr: base + uint64(pre), bytes: nb, guard: g, pre: pre, class: class}
	// The canaries and the poison are written by the next call that reaches
	// the backend, before anything else it does.
	d.fill(base, base, pre+nb+g, kind, true)
	d.fill(base, buf.addr, nb, kind, false)
	if d.caps.Has(CapProtect) {
		p := d.b.(Protector)
		p.Label(buf.addr, nb, buf.Buffer.String())
		if g > 0 {
			p.Protect(base, pre, "guard band before "+buf.Buffer.String())
			p.Protect(buf.addr+uint64(nb), g, "guard band after "+buf.Buffer.String())
		}
	}
	d.bufs[buf.id] = buf
	d.stats.Allocs++
	return buf.Buffer, nil
}

// fill queues n bytes at addr, in the allocation at base, to be set to
// kind's canary or poison pattern.
func (d *device) fill(base, addr uint64, n int, kind Kind, canary bool) {
	if n <= 0 {
		return
	}
	if d.caps.Has(CapFill) && kind != F64 {
		var v [4]byte
		pattern(v[:], kind, canary)
		d.stores.Add(base, staging.Store{Addr: addr, Words: n / 4, V: binary.LittleEndian.Uint32(v[:])})
		return
	}
	raw := make([]byte, n)
	pattern(raw, kind, canary)
	d.stores.Add(base, staging.Store{Addr: addr, Raw: raw})
}

// queuedPoison returns the index among buf's allocation's pending stores of
// its queued poison, or -1 if none is queued or something queued after it
// stores into buf.
func (d *device) queuedPoison(buf *buffer) int {
	return d.stores.LastFill(buf.base, buf.addr, buf.bytes)
}

// pattern fills b with the canary (guard) or poison pattern for kind.
func pattern(b []byte, kind Kind, canary bool) {
	switch kind {
	case F32:
		v := PoisonF32
		if canary {
			v = CanaryF32
		}
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], v)
		}
	case F64:
		v := uint64(0x7FF8_0000_0BAD_0BAD)
		if canary {
			v = 0x7FF4_BADB_ADBA_DBAD
		}
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], v)
		}
	default:
		v := PoisonI
		if canary {
			v = CanaryI
		}
		for i := range b {
			b[i] = v
		}
	}
}

// live returns b's state, and whether b is a live buffer of d (not freed,
// not another Device's).
func (d *device) live(b Buffer) (*buffer, bool) {
	buf, ok := d.bufs[b.id]
	return buf, ok && b.owner == d
}

// lookup returns b's state once no launch in flight uses it. Callers hold
// d.mu (which waiting gives up meanwhile).
func (d *device) lookup(op string, b Buffer) (*buffer, error) {
	for {
		if err := d.usable(op, b.String()); err != nil {
			return nil, err
		}
		buf, ok := d.live(b)
		if !ok {
			return nil, &Error{Op: op, Name: b.String(), Err: Errorf(ErrInvalid, "buffer not live on this device")}
		}
		if !buf.busy {
			return buf, nil
		}
		d.waitIdle()
	}
}

func (d *device) Free(b Buffer) error {
	d.lock()
	defer d.unlock()
	buf, err := d.lookup("free", b)
	if err != nil {
		return err
	}
	delete(d.bufs, b.id)
	buf.mirror.Release()
	buf.mirror = nil
	traps := d.caps.Has(CapProtect)
	if traps && buf.guard > 0 {
		// The backend trapped every access to the guard bands as it
		// happened: there is nothing left to look at.
		p := d.b.(Protector)
		p.Unprotect(buf.base)
		p.Unprotect(buf.addr + uint64(buf.bytes))
	}
	check := !traps && (buf.checkedAt != d.stats.Launches || buf.checkedAt == 0)
	release := !d.pool.Fits(buf.class)
	if check && !release && d.check.retire(buf) {
		return nil // checked later, then pooled
	}
	var gerr error
	if check || release {
		gerr = d.exec(func(be Backend) error {
			var gerr error
			if check {
				gerr = checkGuards(be, buf)
			}
			if gerr != nil || release {
				if err := be.Free(buf.base); err != nil {
					return errors.Join(gerr, err)
				}
			}
			return gerr
		})
	}
	if gerr == nil && !release {
		d.pool.Put(buf.class, buf.base)
	}
	return wrap("free", b.String(), gerr)
}

// HostKind returns the Kind and length of a host slice that Write and Read
// take: []float32, []float64, []int32, []uint32, []int64 or []uint64. Any
// other value is an ErrInvalid error.
func HostKind(s any) (Kind, int, error) {
	_, kind, n, err := hostBytes(s)
	return kind, n, err
}

// hostBytes views a supported host slice as bytes, with its kind and length.
func hostBytes(s any) ([]byte, Kind, int, error) {
	switch v := s.(type) {
	case []float32:
		return asBytes(v), F32, len(v), nil
	case []float64:
		return asBytes(v), F64, len(v), nil
	case []int32:
		return asBytes(v), I32, len(v), nil
	case []uint32:
		return asBytes(v), U32, len(v), nil
	case []int64:
		return asBytes(v), I64, len(v), nil
	case []uint64:
		return asBytes(v), U64, len(v), nil
	}
	return nil, 0, 0, Errorf(ErrInvalid, "unsupported host slice type %T", s)
}

func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

func (d *device) Write(dst Buffer, src any) error {
	raw, kind, n, herr := hostBytes(src)
	var data *staging.Copy
	if herr == nil && kind == dst.kind && n <= dst.n {
		data = staging.New(raw) // before taking the lock: other calls go on meanwhile
	}
	d.lock()
	defer d.unlock()
	buf, err := d.lookup("write", dst)
	if err != nil {
		data.Release()
		return err
	}
	if herr != nil {
		return wrap("write", dst.String(), herr)
	}
	if kind != dst.kind || n > dst.n {
		return &Error{Op: "write", Name: dst.String(), Err: Errorf(ErrInvalid, "%d %v elements into %v", n, kind, dst)}
	}
	buf.mirror.Release()
	buf.shadowOK, buf.mirror = false, nil
	if i := d.queuedPoison(buf); i >= 0 && n == dst.n { // overwritten in full
		d.stores.Remove(buf.base, i)
	}
	if n == dst.n {
		buf.shadowOK, buf.mirror = true, data.Hold()
	}
	d.stores.Add(buf.base, staging.Store{Addr: buf.addr, Raw: data.Bytes(), Ref: data})
	if d.trace != nil {
		return wrap("write", dst.String(), d.traceWrite(buf, src))
	}
	return nil
}

func (d *device) Read(dst any, src Buffer) error {
	raw, mirror, err := d.read(dst, src)
	if mirror != nil {
		copy(raw, mirror.Bytes()) // without the lock: a mirror is never changed, only replaced
		mirror.Release()
	}
	if err == nil {
		err = d.traceRead(dst, src)
	}
	return err
}

// read reads src into raw, dst's bytes, from the device, or returns the
// mirror, with a share held, to copy into them once the lock is given back.
func (d *device) read(dst any, src Buffer) (raw []byte, mirror *staging.Copy, err error) {
	d.lock()
	defer d.unlock()
	buf, err := d.lookup("read", src)
	if err != nil {
		return nil, nil, err
	}
	raw, kind, n, err := hostBytes(dst)
	if err != nil {
		return nil, nil, wrap("read", src.String(), err)
	}
	if kind != src.kind || n > src.n {
		return nil, nil, &Error{Op: "read", Name: src.String(), Err: Errorf(ErrInvalid, "%d %v elements from %v", n, kind, src)}
	}
	if buf.mirror != nil {
		return raw, buf.mirror.Hold(), nil
	}
	return raw, nil, wrap("read", src.String(), d.exec(func(b Backend) error { return b.CopyDtoH(raw, buf.addr) }))
}

func (d *device) WriteCounts(b Buffer) ([]uint32, error) {
	d.lock()
	defer d.unlock()
	buf, err := d.lookup("write-counts", b)
	if err != nil {
		return nil, err
	}
	if !d.caps.Has(CapWriteCounts) {
		return nil, &Error{Op: "write-counts", Name: b.String(), Err: ErrUnsupported}
	}
	c, err := d.b.(WriteRecorder).WriteCounts(buf.addr, buf.bytes, buf.kind.Size())
	return c, wrap("write-counts", b.String(), err)
}
