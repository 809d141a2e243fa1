package cudart

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// Device is what kernels and properties use: a Backend with guard bands,
// poisoning, input verification, a module cache and a watchdog. All methods
// are safe for concurrent use; calls are serialised.
type Device interface {
	// Info describes the device.
	Info() Info
	// Stats reports counters since the device was opened.
	Stats() Stats
	// Options returns the current checking options.
	Options() Options
	// SetOptions replaces the checking options (e.g. off for benchmarks).
	SetOptions(Options)
	// Load returns the module for ptx, loading it on first use. Modules are
	// cached by the SHA-256 of the text.
	Load(name string, ptx []byte) (Module, error)
	// Alloc allocates n elements of kind, guarded and poisoned.
	Alloc(kind Kind, n int) (Buffer, error)
	// Free releases b, checking its guard bands one last time.
	Free(b Buffer) error
	// Write copies a host slice ([]float32, []float64, []int32, []uint32,
	// []int64, []uint64 matching b's kind, at most b.Len() long) into b.
	Write(dst Buffer, src any) error
	// Read copies b's first len(dst) elements into a host slice.
	Read(dst any, src Buffer) error
	// Launch runs entry of m and waits for it, then checks guard bands and
	// inputs as Options say.
	Launch(m Module, entry string, g Geometry, params ...Param) error
	// WriteCounts returns, for the last launch, how many times each element
	// of b was stored to. ErrUnsupported on backends that cannot tell.
	WriteCounts(b Buffer) ([]uint32, error)
	// Elapsed times iters repetitions of launch on the device. Backends
	// without device timers fall back to the wall clock.
	Elapsed(iters int, launch func() error) (time.Duration, error)
	// Backend returns the wrapped backend, for backend-specific controls.
	Backend() Backend
	// Close frees every buffer and module and releases the backend.
	Close() error
}

// Module is a loaded PTX module.
type Module struct {
	Name string // the name given to Load, for diagnostics
	Hash string // hex SHA-256 of the PTX text
	h    ModuleHandle
}

// Options controls the checks a Device makes around every launch.
type Options struct {
	GuardBytes   int           // guard band on each side of a buffer; multiple of 256; 0 disables
	Poison       bool          // fill RoleOut buffers with NaN before every launch
	CheckGuards  bool          // verify the launch's buffers' guard bands after every launch (and every buffer's at Free)
	VerifyInputs bool          // verify RoleIn buffers unchanged by every launch
	Watchdog     time.Duration // 0: no watchdog
}

// DefaultOptions are the options for property tests: everything checked.
func DefaultOptions() Options {
	return Options{GuardBytes: 1024, Poison: true, CheckGuards: true, VerifyInputs: true, Watchdog: 30 * time.Second}
}

// Canary and poison bit patterns. Guard bands hold the canary; outputs are
// poisoned with a distinct NaN so a report can tell which one leaked.
const (
	CanaryF32 uint32 = 0x7FBADBAD // a signalling NaN: copying it quiets it, so even a copy is seen
	PoisonF32 uint32 = 0x7FC0BAD0 // a quiet NaN with a payload
	CanaryI   byte   = 0xCD
	PoisonI   byte   = 0xEE
)

type buffer struct {
	Buffer
	base  uint64 // start of the allocation (guard band included)
	addr  uint64 // first element
	bytes int    // element bytes
	guard int
	class int // allocation size (sizeClass of bytes + 2·guard)
	// shadow is a hash of the contents the host last wrote in full, valid
	// until a launch may have written the buffer: a RoleIn buffer with a
	// valid shadow needs no snapshot before a launch.
	shadow   [sha256.Size]byte
	shadowOK bool
	// checkedAt is the launch count when the guard bands were last found
	// intact; Free need not look again if no launch has run since.
	checkedAt int
}

type device struct {
	mu       sync.Mutex
	b        Backend
	opts     Options
	modules  map[string]Module
	bufs     map[uint64]*buffer
	nextID   uint64
	stats    Stats
	poisoned error
	closed   bool
	// pool keeps freed allocations by size class for reuse: allocating and
	// freeing device memory costs far more than a property check's kernel.
	pool      map[int][]uint64
	poolBytes int
}

// maxPoolBytes bounds the memory a Device keeps for reuse.
const maxPoolBytes = 1 << 30

// sizeClass rounds an allocation up to a class of at most 1/8 waste, so that
// buffers of nearby sizes share pooled allocations.
func sizeClass(n int) int {
	if n <= 4096 {
		return 4096
	}
	step := 1
	for step*16 < n {
		step *= 2
	}
	return (n + step - 1) / step * step
}

// New wraps a backend into a Device with opts.
func New(b Backend, opts Options) Device {
	if opts.GuardBytes%256 != 0 {
		opts.GuardBytes += 256 - opts.GuardBytes%256
	}
	return &device{b: b, opts: opts, modules: map[string]Module{}, bufs: map[uint64]*buffer{}}
}

func (d *device) Info() Info       { return d.b.Info() }
func (d *device) Backend() Backend { return d.b }

func (d *device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	s.LiveBuffers = len(d.bufs)
	return s
}

func (d *device) Options() Options {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opts
}

func (d *device) SetOptions(o Options) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if o.GuardBytes%256 != 0 {
		o.GuardBytes += 256 - o.GuardBytes%256
	}
	d.opts = o
}

func (d *device) usable(op, name string) error {
	if d.closed {
		return &Error{Op: op, Name: name, Err: ErrClosed}
	}
	if d.poisoned != nil {
		return &Error{Op: op, Name: name, Err: fmt.Errorf("%w (%v)", ErrPoisoned, d.poisoned)}
	}
	return nil
}

// PTXHash returns the hex SHA-256 of a PTX text: the module cache key.
func PTXHash(ptx []byte) string {
	h := sha256.Sum256(ptx)
	return hex.EncodeToString(h[:])
}

func (d *device) Load(name string, ptx []byte) (Module, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable("load", name); err != nil {
		return Module{}, err
	}
	key := PTXHash(ptx)
	if m, ok := d.modules[key]; ok {
		d.stats.CacheHits++
		return m, nil
	}
	h, err := d.b.LoadModule(name, ptx)
	if err != nil {
		return Module{}, wrap("load", name, err)
	}
	m := Module{Name: name, Hash: key, h: h}
	d.modules[key] = m
	d.stats.ModuleLoads++
	return m, nil
}

func (d *device) Alloc(kind Kind, n int) (Buffer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable("alloc", ""); err != nil {
		return Buffer{}, err
	}
	if kind.Size() == 0 || n <= 0 {
		return Buffer{}, &Error{Op: "alloc", Err: Errorf(ErrInvalid, "%d elements of %v", n, kind)}
	}
	nb := n * kind.Size()
	g := d.opts.GuardBytes
	class := sizeClass(nb + 2*g)
	var base uint64
	if free := d.pool[class]; len(free) > 0 {
		base = free[len(free)-1]
		d.pool[class] = free[:len(free)-1]
		d.poolBytes -= class
	} else {
		var err error
		if base, err = d.b.Alloc(class); err != nil {
			return Buffer{}, wrap("alloc", "", err)
		}
	}
	d.nextID++
	buf := &buffer{Buffer: Buffer{id: d.nextID, kind: kind, n: n}, base: base, addr: base + uint64(g), bytes: nb, guard: g, class: class}
	if l, ok := d.b.(Labeler); ok {
		l.Label(buf.addr, nb, buf.Buffer.String())
	}
	fill := make([]byte, nb+2*g)
	pattern(fill[:g], kind, true)
	pattern(fill[g:g+nb], kind, false)
	pattern(fill[g+nb:], kind, true)
	if err := d.b.CopyHtoD(base, fill); err != nil {
		d.b.Free(base)
		return Buffer{}, wrap("alloc", "", err)
	}
	if p, ok := d.b.(Protector); ok && g > 0 {
		p.Protect(base, g, "guard band before "+buf.Buffer.String())
		p.Protect(buf.addr+uint64(nb), g, "guard band after "+buf.Buffer.String())
	}
	d.bufs[buf.id] = buf
	d.stats.Allocs++
	return buf.Buffer, nil
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

func (d *device) lookup(op string, b Buffer) (*buffer, error) {
	if err := d.usable(op, b.String()); err != nil {
		return nil, err
	}
	buf, ok := d.bufs[b.id]
	if !ok {
		return nil, &Error{Op: op, Name: b.String(), Err: Errorf(ErrInvalid, "buffer not live on this device")}
	}
	return buf, nil
}

func (d *device) Free(b Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.lookup("free", b)
	if err != nil {
		return err
	}
	var gerr error
	if buf.checkedAt != d.stats.Launches || buf.checkedAt == 0 {
		gerr = d.checkGuards(buf)
	}
	delete(d.bufs, b.id)
	if p, ok := d.b.(Protector); ok && buf.guard > 0 {
		p.Unprotect(buf.base)
		p.Unprotect(buf.addr + uint64(buf.bytes))
	}
	if gerr == nil && d.poolBytes+buf.class <= maxPoolBytes {
		if d.pool == nil {
			d.pool = map[int][]uint64{}
		}
		d.pool[buf.class] = append(d.pool[buf.class], buf.base)
		d.poolBytes += buf.class
		return nil
	}
	if err := d.b.Free(buf.base); err != nil {
		return wrap("free", b.String(), err)
	}
	return wrap("free", b.String(), gerr)
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
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.lookup("write", dst)
	if err != nil {
		return err
	}
	raw, kind, n, err := hostBytes(src)
	if err != nil {
		return wrap("write", dst.String(), err)
	}
	if kind != dst.kind || n > dst.n {
		return &Error{Op: "write", Name: dst.String(), Err: Errorf(ErrInvalid, "%d %v elements into %v", n, kind, dst)}
	}
	buf.shadowOK = false
	if err := d.b.CopyHtoD(buf.addr, raw); err != nil {
		return wrap("write", dst.String(), err)
	}
	if n == dst.n {
		buf.shadow, buf.shadowOK = sha256.Sum256(raw), true
	}
	return nil
}

func (d *device) Read(dst any, src Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.lookup("read", src)
	if err != nil {
		return err
	}
	raw, kind, n, err := hostBytes(dst)
	if err != nil {
		return wrap("read", src.String(), err)
	}
	if kind != src.kind || n > src.n {
		return &Error{Op: "read", Name: src.String(), Err: Errorf(ErrInvalid, "%d %v elements from %v", n, kind, src)}
	}
	return wrap("read", src.String(), d.b.CopyDtoH(raw, buf.addr))
}

// marshal lays params out at their real sizes.
func (d *device) marshal(entry string, params []Param) ([][]byte, []*buffer, error) {
	out := make([][]byte, len(params))
	bufs := make([]*buffer, len(params))
	for i, p := range params {
		if p.IsBuffer() {
			buf, ok := d.bufs[p.Buf.id]
			if !ok {
				return nil, nil, Errorf(ErrInvalid, "param %d: %v is not live", i, p.Buf)
			}
			if p.Off < 0 || p.Off > buf.n {
				return nil, nil, Errorf(ErrInvalid, "param %d: offset %d outside %v", i, p.Off, p.Buf)
			}
			if p.Role < RoleIn || p.Role > RoleInOut {
				return nil, nil, Errorf(ErrInvalid, "param %d: %v has no role", i, p.Buf)
			}
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, buf.addr+uint64(p.Off*buf.kind.Size()))
			out[i], bufs[i] = b, buf
			continue
		}
		switch p.Kind.Size() {
		case 4:
			b := make([]byte, 4)
			binary.LittleEndian.PutUint32(b, uint32(p.Bits))
			out[i] = b
		case 8:
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, p.Bits)
			out[i] = b
		default:
			return nil, nil, Errorf(ErrInvalid, "param %d: invalid kind %v", i, p.Kind)
		}
	}
	return out, bufs, nil
}

func (d *device) Launch(m Module, entry string, g Geometry, params ...Param) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable("launch", entry); err != nil {
		return err
	}
	if m.h == nil {
		return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInvalid, "module not loaded")}
	}
	if g.Grid.Count() <= 0 || g.Block.Count() <= 0 || g.Block.Count() > 1024 || g.SharedBytes < 0 {
		return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInvalid, "bad geometry %v", g)}
	}
	raw, bufs, err := d.marshal(entry, params)
	if err != nil {
		return wrap("launch", entry, err)
	}
	// Poison outputs and snapshot the inputs whose contents the host does
	// not already know.
	seen := map[uint64]bool{}
	var inputs []*buffer
	snaps := map[uint64][]byte{}
	for i, buf := range bufs {
		if buf == nil || seen[buf.id] {
			continue
		}
		role := params[i].Role
		for j := i + 1; j < len(params); j++ { // a buffer passed twice takes the widest role
			if bufs[j] == buf && params[j].Role != role {
				role = RoleInOut
			}
		}
		seen[buf.id] = true
		switch role {
		case RoleOut:
			buf.shadowOK = false
			if d.opts.Poison {
				fill := make([]byte, buf.bytes)
				pattern(fill, buf.kind, false)
				if err := d.b.CopyHtoD(buf.addr, fill); err != nil {
					return wrap("launch", entry, err)
				}
			}
		case RoleInOut:
			buf.shadowOK = false
		case RoleIn:
			if d.opts.VerifyInputs {
				inputs = append(inputs, buf)
				if !buf.shadowOK {
					s := make([]byte, buf.bytes)
					if err := d.b.CopyDtoH(s, buf.addr); err != nil {
						return wrap("launch", entry, err)
					}
					snaps[buf.id] = s
				}
			}
		}
	}
	d.stats.Launches++
	if err := d.run(m, entry, g, raw); err != nil {
		return wrap("launch", entry, err)
	}
	// After the launch: the guard bands of its buffers (every buffer's once
	// more when it is freed, if a launch ran since), then its inputs. A small
	// buffer comes back in one copy that serves both checks.
	data := map[uint64][]byte{}
	if d.opts.CheckGuards {
		for id := range seen {
			buf := d.bufs[id]
			body, err := d.readGuarded(buf)
			if err != nil {
				return wrap("launch", entry, err)
			}
			data[id] = body
			buf.checkedAt = d.stats.Launches
		}
	}
	for _, buf := range inputs {
		now := data[buf.id]
		if now == nil {
			now = make([]byte, buf.bytes)
			if err := d.b.CopyDtoH(now, buf.addr); err != nil {
				return wrap("launch", entry, err)
			}
		}
		if snap, ok := snaps[buf.id]; ok {
			if !bytes.Equal(now, snap) {
				k := firstDiff(now, snap) / buf.kind.Size()
				return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInputModified, "%v element %d changed", buf.Buffer, k)}
			}
			continue
		}
		if sha256.Sum256(now) != buf.shadow {
			return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInputModified, "%v changed (its contents no longer match what was written)", buf.Buffer)}
		}
	}
	return nil
}

// smallBuffer is the size under which a buffer and its guard bands come back
// in one copy.
const smallBuffer = 64 << 10

// readGuarded checks buf's guard bands and, for a small buffer, returns its
// contents read in the same copy (nil otherwise).
func (d *device) readGuarded(buf *buffer) ([]byte, error) {
	if buf.guard == 0 {
		return nil, nil
	}
	if buf.bytes+2*buf.guard > smallBuffer {
		return nil, d.checkGuards(buf)
	}
	all := make([]byte, buf.bytes+2*buf.guard)
	if err := d.b.CopyDtoH(all, buf.base); err != nil {
		return nil, err
	}
	if err := guardError(buf, all[:buf.guard], all[buf.guard+buf.bytes:]); err != nil {
		return nil, err
	}
	return all[buf.guard : buf.guard+buf.bytes], nil
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// run launches under the watchdog.
func (d *device) run(m Module, entry string, g Geometry, raw [][]byte) error {
	if d.opts.Watchdog <= 0 {
		return d.b.Launch(m.h, entry, g, raw)
	}
	done := make(chan error, 1)
	go func() { done <- d.b.Launch(m.h, entry, g, raw) }()
	t := time.NewTimer(d.opts.Watchdog)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	err := Errorf(ErrTimeout, "%s did not complete within %v (%v)", entry, d.opts.Watchdog, g)
	if a, ok := d.b.(Aborter); ok {
		a.Abort()
		select {
		case <-done:
			return err
		case <-time.After(5 * time.Second):
		}
	}
	d.poisoned = err
	return err
}

func (d *device) checkGuards(buf *buffer) error {
	if buf.guard == 0 {
		return nil
	}
	before, after := make([]byte, buf.guard), make([]byte, buf.guard)
	if err := d.b.CopyDtoH(before, buf.base); err != nil {
		return err
	}
	if err := d.b.CopyDtoH(after, buf.addr+uint64(buf.bytes)); err != nil {
		return err
	}
	return guardError(buf, before, after)
}

// guardError reports the first overwritten element of buf's guard bands,
// given their contents.
func guardError(buf *buffer, before, after []byte) error {
	want := make([]byte, buf.guard)
	pattern(want, buf.kind, true)
	for j := len(before) - 1; j >= 0; j-- { // the byte nearest the start first
		if before[j] != want[j] {
			return Errorf(ErrGuardBand, "%v: guard band before the buffer overwritten, %d element(s) before its start", buf.Buffer, (buf.guard-j+buf.kind.Size()-1)/buf.kind.Size())
		}
	}
	if i := firstDiff(after, want); i >= 0 {
		return Errorf(ErrGuardBand, "%v: guard band after the buffer overwritten at element %d (%d past its end)", buf.Buffer, buf.n+i/buf.kind.Size(), i/buf.kind.Size()+1)
	}
	return nil
}

func (d *device) WriteCounts(b Buffer) ([]uint32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.lookup("write-counts", b)
	if err != nil {
		return nil, err
	}
	r, ok := d.b.(WriteRecorder)
	if !ok {
		return nil, &Error{Op: "write-counts", Name: b.String(), Err: ErrUnsupported}
	}
	c, err := r.WriteCounts(buf.addr, buf.bytes, buf.kind.Size())
	return c, wrap("write-counts", b.String(), err)
}

func (d *device) Elapsed(iters int, launch func() error) (time.Duration, error) {
	if t, ok := d.b.(Timer); ok {
		return t.Elapsed(iters, launch)
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := launch(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if d.poisoned == nil {
		for id, buf := range d.bufs {
			errs = append(errs, d.b.Free(buf.base))
			delete(d.bufs, id)
		}
		for class, free := range d.pool {
			for _, base := range free {
				errs = append(errs, d.b.Free(base))
			}
			delete(d.pool, class)
		}
		for k, m := range d.modules {
			errs = append(errs, d.b.UnloadModule(m.h))
			delete(d.modules, k)
		}
	}
	errs = append(errs, d.b.Close())
	return wrap("close", "", errors.Join(errs...))
}
