package cudart

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
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
	// cached by name and the SHA-256 of the text. An empty text, or one the
	// backend cannot load, is an error wrapping ErrLoad.
	Load(name string, ptx []byte) (Module, error)
	// Alloc allocates n elements of kind, guarded and poisoned.
	Alloc(kind Kind, n int) (Buffer, error)
	// Free releases b, checking its guard bands one last time.
	Free(b Buffer) error
	// Write copies a host slice ([]float32, []float64, []int32, []uint32,
	// []int64, []uint64 matching b's kind, at most b.Len() long) into b.
	// The slice may be reused as soon as Write returns; the copy to the
	// device is made by the next call that reaches the backend (usually the
	// launch that reads it), which reports its failure.
	Write(dst Buffer, src any) error
	// Read copies b's first len(dst) elements into a host slice. Contents
	// the host already holds (written in full, or read back with the guard
	// bands after the last launch that wrote b) come without a device call.
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
	// The buffer holds one share of it (hostCopy).
	mirror *hostCopy
	// busy: a launch that uses the buffer is in flight without the Device's
	// lock (device-checking backends); every other call on it waits.
	busy bool
}

type device struct {
	mu       sync.Mutex
	waiters  atomic.Int32 // goroutines waiting in lock (see unlock)
	lockedAt time.Time    // when mu was last taken (Stats.LockHeld)
	idle     sync.Cond    // on mu: signalled when a launch in flight ends
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
	// fills are the canaries, poison and writes not yet made, by the base
	// of the allocation they store into, each allocation's in order (stores
	// into different allocations are disjoint: their order does not
	// matter). The next call that reaches the backend makes them all first;
	// a launch's verify pass makes those of its own buffers.
	fills map[uint64][]pending
	// devCheck: large buffers are checked on the device (verify.go), with
	// the verify module and an arena for its table and input snapshots.
	devCheck bool
	verify   ModuleHandle
	arenas   []arena // not in use by a launch in flight
	// quarantine holds buffers freed since the last launch on a
	// device-checking backend: their guard bands are checked by the next
	// verify pass (or at Close) before their memory is pooled again.
	quarantine []*buffer
	// flights counts the launches in flight without the lock; active the
	// calls at the backend (flights included), busy since busySince.
	flights, active int
	busySince       time.Time
}

// arena is device memory for one launch's verify passes: their tables, the
// staged data of the pending stores, the verdicts, the gathered buffers and
// the input snapshots. Each launch in flight has its own.
type arena struct {
	addr uint64
	size int
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
	_, traps := b.(Protector)
	_, copies := b.(DeviceCopier)
	d := &device{b: b, opts: opts, modules: map[string]Module{}, bufs: map[uint64]*buffer{}, devCheck: copies && !traps}
	d.idle.L = &d.mu
	return d
}

// lock takes the Device's lock, counting the time spent waiting for it.
func (d *device) lock() {
	if d.mu.TryLock() {
		d.lockedAt = time.Now()
		return
	}
	start := time.Now()
	d.waiters.Add(1)
	d.mu.Lock()
	d.waiters.Add(-1)
	d.lockedAt = time.Now()
	d.stats.LockWait += d.lockedAt.Sub(start)
}

// waitIdle waits on d.idle (which gives the lock up meanwhile): the wait
// does not count as LockHeld.
func (d *device) waitIdle() {
	d.stats.LockHeld += time.Since(d.lockedAt)
	d.idle.Wait()
	d.lockedAt = time.Now()
}

// unlock unlocks d.mu and, when a goroutine waits for it, yields the
// processor once. Unlocking readies the waiter next in line on this
// goroutine's P, where it stays until this goroutine blocks or is
// preempted unless an idle P steals it; while checks keep every P busy with
// their CPU work, nothing does, and the waiter (often on its way to the
// device) loses a time slice. runtime.Gosched runs it at once.
func (d *device) unlock() {
	d.stats.LockHeld += time.Since(d.lockedAt)
	d.mu.Unlock()
	if d.waiters.Load() > 0 {
		runtime.Gosched()
	}
}

func (d *device) Info() Info       { return d.b.Info() }
func (d *device) Backend() Backend { return d.b }

func (d *device) Stats() Stats {
	d.lock()
	defer d.unlock()
	s := d.stats
	s.LiveBuffers = len(d.bufs)
	return s
}

func (d *device) Options() Options {
	d.lock()
	defer d.unlock()
	return d.opts
}

func (d *device) SetOptions(o Options) {
	d.lock()
	defer d.unlock()
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
	d.lock()
	defer d.unlock()
	if err := d.usable("load", name); err != nil {
		return Module{}, err
	}
	if len(bytes.TrimSpace(ptx)) == 0 {
		return Module{}, &Error{Op: "load", Name: name, Err: Errorf(ErrLoad, "empty PTX text")}
	}
	// Keyed by name as well, so that a backend's errors name the module
	// the caller loaded rather than the first to load the same text.
	hash := PTXHash(ptx)
	key := name + "\x00" + hash
	if m, ok := d.modules[key]; ok {
		d.stats.CacheHits++
		return m, nil
	}
	h, err := d.b.LoadModule(name, ptx)
	if err != nil {
		if !errors.Is(err, ErrLoad) {
			err = fmt.Errorf("%w: %w", ErrLoad, err)
		}
		return Module{}, wrap("load", name, err)
	}
	m := Module{Name: name, Hash: hash, h: h}
	d.modules[key] = m
	d.stats.ModuleLoads++
	return m, nil
}

func (d *device) Alloc(kind Kind, n int) (Buffer, error) {
	d.lock()
	defer d.unlock()
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
	buf := &buffer{Buffer: Buffer{id: d.nextID, kind: kind, n: n}, base: base, addr: base + uint64(g), bytes: nb, guard: g, class: class}
	if l, ok := d.b.(Labeler); ok {
		l.Label(buf.addr, nb, buf.Buffer.String())
	}
	// The canaries and the poison are written by the next call that reaches
	// the backend, before anything else it does.
	d.fill(base, base, nb+2*g, kind, true)
	d.fill(base, buf.addr, nb, kind, false)
	if p, ok := d.b.(Protector); ok && g > 0 {
		p.Protect(base, g, "guard band before "+buf.Buffer.String())
		p.Protect(buf.addr+uint64(nb), g, "guard band after "+buf.Buffer.String())
	}
	d.bufs[buf.id] = buf
	d.stats.Allocs++
	return buf.Buffer, nil
}

// pending is a store to device memory not yet made: a 32-bit pattern, or
// bytes to copy (a Write's data; a pattern that is wider, float64 canaries,
// or that the backend cannot fill).
type pending struct {
	addr  uint64
	words int
	v     uint32
	raw   []byte
	ref   *hostCopy // raw's holder share, for a Write's data: released once the store is made
}

// fill queues n bytes at addr, in the allocation at base, to be set to
// kind's canary or poison pattern.
func (d *device) fill(base, addr uint64, n int, kind Kind, canary bool) {
	if n <= 0 {
		return
	}
	if _, ok := d.b.(Filler); ok && kind != F64 {
		var v [4]byte
		pattern(v[:], kind, canary)
		d.queue(base, pending{addr: addr, words: n / 4, v: binary.LittleEndian.Uint32(v[:])})
		return
	}
	raw := make([]byte, n)
	pattern(raw, kind, canary)
	d.queue(base, pending{addr: addr, raw: raw})
}

// queue adds p to the pending stores into the allocation at base.
func (d *device) queue(base uint64, p pending) {
	if d.fills == nil {
		d.fills = map[uint64][]pending{}
	}
	d.fills[base] = append(d.fills[base], p)
}

// queuedPoison returns the index in d.fills[buf.base] of buf's queued
// poison, or -1 if none is queued or something queued after it stores into
// buf.
func (d *device) queuedPoison(buf *buffer) int {
	fills := d.fills[buf.base]
	for i := len(fills) - 1; i >= 0; i-- {
		p := fills[i]
		if p.addr == buf.addr && p.raw == nil && 4*p.words == buf.bytes {
			return i
		}
		if p.addr < buf.addr+uint64(buf.bytes) && buf.addr < p.addr+uint64(max(4*p.words, len(p.raw))) {
			return -1
		}
	}
	return -1
}

// exec runs f against the backend in one hand-off where the backend batches
// calls, after making the pending fills. Callers hold d.mu; f must not touch
// the device's state (under the watchdog it may outlive the call).
func (d *device) exec(f func(Backend) error) error {
	d.enter()
	err := d.handoff(f)()
	d.leave()
	return err
}

// enter and leave bracket a call at the backend, for Stats' Handoffs and
// Busy (the union of the calls' intervals). Callers hold d.mu.
func (d *device) enter() {
	if d.active == 0 {
		d.busySince = time.Now()
	}
	d.active++
	d.stats.Handoffs++
}

func (d *device) leave() {
	if d.active--; d.active == 0 {
		d.stats.Busy += time.Since(d.busySince)
	}
}

// batch returns the call that runs f in one hand-off, without the pending
// fills: a launch on a device-checking backend, whose own pending stores
// its verify pass makes.
func (d *device) batch(f func(Backend) error) func() error {
	if bb, ok := d.b.(Batcher); ok {
		return func() error { return bb.Batch(f) }
	}
	return func() error { return f(d.b) }
}

// handoff returns the call exec makes, taking the pending fills with it: the
// watchdog runs it on another goroutine, which must not touch the device.
func (d *device) handoff(f func(Backend) error) func() error {
	var fills []pending
	for _, l := range d.fills {
		fills = append(fills, l...)
	}
	d.fills = nil
	run := d.batch(func(b Backend) error {
		for _, p := range fills {
			var err error
			if f, ok := b.(Filler); ok && p.raw == nil {
				err = f.Fill32(p.addr, p.words, p.v)
			} else {
				raw := p.raw
				if raw == nil {
					raw = make([]byte, 4*p.words)
					for i := 0; i < len(raw); i += 4 {
						binary.LittleEndian.PutUint32(raw[i:], p.v)
					}
				}
				err = b.CopyHtoD(p.addr, raw)
			}
			if err != nil {
				return err
			}
		}
		return f(b)
	})
	// The Writes' data go back once the batch has ended (the backend may
	// copy from them until then), by whoever ran it: under the watchdog a
	// call that timed out may still be running.
	return func() error {
		err := run()
		for _, p := range fills {
			p.ref.release()
		}
		return err
	}
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

// lookup returns b's state once no launch in flight uses it. Callers hold
// d.mu (which waiting gives up meanwhile).
func (d *device) lookup(op string, b Buffer) (*buffer, error) {
	for {
		if err := d.usable(op, b.String()); err != nil {
			return nil, err
		}
		buf, ok := d.bufs[b.id]
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
	buf.mirror.release()
	buf.mirror = nil
	p, traps := d.b.(Protector)
	if traps && buf.guard > 0 {
		// The backend trapped every access to the guard bands as it
		// happened: there is nothing left to look at.
		p.Unprotect(buf.base)
		p.Unprotect(buf.addr + uint64(buf.bytes))
	}
	check := !traps && (buf.checkedAt != d.stats.Launches || buf.checkedAt == 0)
	release := d.poolBytes+buf.class > maxPoolBytes
	if check && d.devCheck && !release {
		d.quarantine = append(d.quarantine, buf) // checked by the next launch's verify pass
		return nil
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
		d.toPool(buf)
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
	raw, kind, n, herr := hostBytes(src)
	var data *hostCopy
	if herr == nil && kind == dst.kind && n <= dst.n {
		data = newHostCopy(raw) // before taking the lock: other calls go on meanwhile
	}
	d.lock()
	defer d.unlock()
	buf, err := d.lookup("write", dst)
	if err != nil {
		data.release()
		return err
	}
	if herr != nil {
		return wrap("write", dst.String(), herr)
	}
	if kind != dst.kind || n > dst.n {
		return &Error{Op: "write", Name: dst.String(), Err: Errorf(ErrInvalid, "%d %v elements into %v", n, kind, dst)}
	}
	buf.mirror.release()
	buf.shadowOK, buf.mirror = false, nil
	if i := d.queuedPoison(buf); i >= 0 && n == dst.n { // overwritten in full
		l := d.fills[buf.base]
		d.fills[buf.base] = append(l[:i], l[i+1:]...)
	}
	if n == dst.n {
		buf.shadowOK, buf.mirror = true, data.hold()
	}
	d.queue(buf.base, pending{addr: buf.addr, raw: data.b, ref: data})
	return nil
}

func (d *device) Read(dst any, src Buffer) error {
	raw, mirror, err := d.read(dst, src)
	if mirror != nil {
		copy(raw, mirror.b) // without the lock: a mirror is never changed, only replaced
		mirror.release()
	}
	return err
}

// read reads src into raw, dst's bytes, from the device, or returns the
// mirror, with a share held, to copy into them once the lock is given back.
func (d *device) read(dst any, src Buffer) (raw []byte, mirror *hostCopy, err error) {
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
		return raw, buf.mirror.hold(), nil
	}
	return raw, nil, wrap("read", src.String(), d.exec(func(b Backend) error { return b.CopyDtoH(raw, buf.addr) }))
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

// launchBuf is one buffer of a launch and what the launch does to it.
type launchBuf struct {
	*buffer
	role Role
	snap []byte // an input's contents before the launch, where the host holds no copy of them (allocated before)
	now  []byte // after the launch: a small buffer's contents (read with its guard bands) or an input's
	// nowCopy holds now where parse copied it out of page-locked memory
	// (one share: it becomes the mirror, or goes back after the check).
	nowCopy *hostCopy
	gerr    error // its guard bands after the launch
	// Checked on the device: the guard bands (devGuards) and, for an input,
	// the contents against a snapshot at snapAt in the arena (devInput).
	devGuards, devInput bool
	snapAt              uint64
	// staged: the input's contents before the kernel are the words the pre
	// pass scattered into it from stagedAt (an offset in the staged data),
	// and snapAt is their address in the arena: no snapshot is taken.
	staged   bool
	stagedAt int
	inErr    error
	// gathered: the buffer and its guard bands come back in the verify
	// pass's copy (small buffers on a device-checking backend).
	gathered bool
	// freed: not a parameter but a buffer freed since the last launch,
	// whose guard bands this launch's verify pass checks one last time.
	freed bool
}

func (d *device) Launch(m Module, entry string, g Geometry, params ...Param) error {
	d.lock()
	defer d.unlock()
	if err := d.usable("launch", entry); err != nil {
		return err
	}
	if m.h == nil {
		return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInvalid, "module not loaded")}
	}
	if g.Grid.Count() <= 0 || g.Block.Count() <= 0 || g.Block.Count() > 1024 || g.SharedBytes < 0 {
		return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInvalid, "bad geometry %v", g)}
	}
	var raw [][]byte
	var bufs []*buffer
	for { // until no launch in flight uses any of the buffers
		var err error
		if raw, bufs, err = d.marshal(entry, params); err != nil {
			return wrap("launch", entry, err)
		}
		busy := false
		for _, buf := range bufs {
			busy = busy || buf != nil && buf.busy
		}
		if !busy {
			break
		}
		d.waitIdle()
		if err := d.usable("launch", entry); err != nil {
			return err
		}
	}
	// The launch's buffers, each once with the widest role it is passed in.
	var lbs []*launchBuf
	seen := map[uint64]*launchBuf{}
	for i, buf := range bufs {
		if buf == nil {
			continue
		}
		if lb := seen[buf.id]; lb != nil {
			if lb.role != params[i].Role {
				lb.role = RoleInOut
			}
			continue
		}
		lb := &launchBuf{buffer: buf, role: params[i].Role}
		seen[buf.id] = lb
		lbs = append(lbs, lb)
	}
	opts := d.opts
	for _, lb := range lbs {
		switch {
		case lb.role != RoleIn:
			lb.mirror.release()
			lb.shadowOK, lb.mirror = false, nil
			if lb.role == RoleOut && opts.Poison && d.queuedPoison(lb.buffer) < 0 {
				d.fill(lb.base, lb.addr, lb.bytes, lb.kind, false)
			}
		case opts.VerifyInputs && !lb.shadowOK && !d.largeInput(lb):
			lb.snap = make([]byte, lb.bytes)
		}
	}
	pl, err := d.plan(lbs, opts)
	if err != nil {
		return wrap("launch", entry, err)
	}
	d.stats.Launches++
	// Launches started meanwhile, or still in flight from before, may store
	// into this launch's buffers' guard bands after its check.
	seq, alone := d.stats.Launches, d.flights == 0
	// One hand-off does it all: poison the outputs, snapshot the inputs
	// whose contents the host does not already know, launch, then read back
	// the guard bands of the launch's buffers and its inputs.
	f := func(b Backend) error {
		if err := pl.before(b); err != nil {
			return err
		}
		for _, lb := range lbs {
			if lb.devInput && !lb.staged {
				if err := b.(DeviceCopier).CopyDtoD(lb.snapAt, lb.addr, lb.bytes); err != nil {
					return err
				}
			}
			if lb.snap != nil {
				if err := b.CopyDtoH(lb.snap, lb.addr); err != nil {
					return err
				}
			}
		}
		if err := b.Launch(m.h, entry, g, raw); err != nil {
			return err
		}
		if err := pl.after(b); err != nil {
			return err
		}
		for _, lb := range lbs {
			if lb.gathered {
				continue
			}
			if opts.CheckGuards && !lb.devGuards {
				// Inputs to verify and outputs up to mirrorMax come back
				// whole, guard bands included: one copy serves both checks,
				// or the check and the Read that usually follows.
				whole := lb.role == RoleIn && opts.VerifyInputs || lb.role != RoleIn && lb.bytes <= mirrorMax
				var err error
				if lb.now, lb.gerr, err = readGuarded(b, lb.buffer, whole); err != nil {
					return err
				}
			}
			if lb.role == RoleIn && opts.VerifyInputs && lb.now == nil && !lb.devInput {
				lb.now = make([]byte, lb.bytes)
				if err := b.CopyDtoH(lb.now, lb.addr); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var timedOut bool
	d.enter()
	if pl != nil {
		// In flight without the lock: other goroutines' calls go on
		// meanwhile, except on this launch's buffers, and this launch's own
		// pending stores travel in its plan. The backend orders the device
		// work; nothing here touches the device's state.
		for _, lb := range lbs {
			lb.busy = true
		}
		d.flights++
		d.stats.MaxFlights = max(d.stats.MaxFlights, d.flights)
		d.unlock()
		pl.build(d.b)
		pl.releaseStaged()
		err, timedOut = run(d.b, entry, g, opts.Watchdog, d.batch(f))
		if err == nil {
			// Still without the lock: parse copies what it keeps out of
			// page-locked memory, which then goes back (after a failure
			// or a timeout it is not known to be unused: it is not).
			pl.parse()
			pl.unpin()
		}
		d.lock()
		d.flights--
		for _, lb := range lbs {
			lb.busy = false
		}
		d.idle.Broadcast()
		if !timedOut {
			d.arenas = append(d.arenas, pl.arena)
		}
	} else {
		err, timedOut = run(d.b, entry, g, opts.Watchdog, d.handoff(f))
	}
	d.leave()
	if timedOut {
		d.poisoned = err
	}
	if err != nil {
		if pl != nil { // unchecked: Close checks them
			d.quarantine = append(d.quarantine, pl.freed...)
		}
		return wrap("launch", entry, err)
	}
	if err := d.release(pl); err != nil {
		return wrap("launch", entry, err)
	}
	for _, lb := range lbs {
		if lb.gerr != nil && opts.CheckGuards {
			return wrap("launch", entry, lb.gerr)
		}
		if opts.CheckGuards && alone && d.stats.Launches == seq {
			lb.checkedAt = seq
		}
		if lb.role != RoleIn && lb.now != nil { // its mirror was dropped before the launch
			if lb.mirror = lb.nowCopy; lb.mirror == nil {
				lb.mirror = keep(lb.now)
			}
		}
	}
	if !opts.VerifyInputs {
		return nil
	}
	for _, lb := range lbs {
		if lb.role != RoleIn {
			continue
		}
		if lb.devInput {
			if lb.inErr != nil {
				return &Error{Op: "launch", Name: entry, Err: lb.inErr}
			}
			continue
		}
		if lb.snap != nil {
			if !bytes.Equal(lb.now, lb.snap) {
				k := firstDiff(lb.now, lb.snap) / lb.kind.Size()
				return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInputModified, "%v element %d changed", lb.Buffer, k)}
			}
			continue
		}
		// shadowOK: the mirror holds what the host wrote in full.
		if !bytes.Equal(lb.now, lb.mirror.bytes()) {
			k := firstDiff(lb.now, lb.mirror.bytes()) / lb.kind.Size()
			return &Error{Op: "launch", Name: entry, Err: Errorf(ErrInputModified, "%v element %d changed", lb.Buffer, k)}
		}
		lb.nowCopy.release()
	}
	return nil
}

// largeInput reports whether lb is an input verified on the device.
func (d *device) largeInput(lb *launchBuf) bool {
	return d.devCheck && lb.role == RoleIn && d.opts.VerifyInputs && lb.bytes > smallBuffer
}

// verifyPlan is a launch's work for ptxprop_verify on a device-checking
// backend, laid out in the arena: one upload carries both passes' tables
// and the pending stores' data; the pass before the kernel (pre) makes the
// pending fills and writes, the pass after it (post) compares and gathers,
// and one copy brings the verdicts and the gathered buffers back.
//
//	arena: pre table | pre verdicts | staged data | post table | post verdicts | gathered | snapshots
type verifyPlan struct {
	m              ModuleHandle
	arena          arena
	freed          []*buffer // the quarantined buffers whose guard bands post checks
	pre, post      []comparison
	upload         []byte // the arena's first len(upload) bytes (build)
	stageAt        int    // offset of the staged data
	postAt, backAt int    // offsets of the post table and of the copy back
	backLen        int
	back           []byte      // the copy back, once the batch has ended
	pinner         Pinner      // gave upload (upPinned) or back (backPinned)
	staged         []*hostCopy // the shares of the Writes' data staged in the upload (releaseStaged)
	upPinned       bool
	backPinned     bool
}

// plan decides how a launch's buffers are checked on a device-checking
// backend (nil elsewhere): guard bands and large inputs compared on the
// device (inputs against snapshots in the arena), small buffers gathered
// with their guard bands into the copy that brings the verdicts back, the
// guard bands of buffers freed since the last launch, and the pending
// stores to the launch's buffers (and to the quarantined ones) made by the
// pre pass. It takes those pending stores and the quarantine, and an arena,
// allocating one (and loading the verify module) in a call of its own when
// none is free and large enough.
func (d *device) plan(lbs []*launchBuf, opts Options) (*verifyPlan, error) {
	if !d.devCheck {
		return nil, nil
	}
	var cs, gathers []comparison
	var snaps []*launchBuf
	guards := func(lb *launchBuf) {
		p := canary64(lb.kind)
		cs = append(cs, comparison{addr: lb.base, words: lb.guard / 4, pattern: p, lb: lb, what: guardBefore},
			comparison{addr: lb.addr + uint64(lb.bytes), words: lb.guard / 4, pattern: p, lb: lb, what: guardAfter})
	}
	for _, lb := range lbs {
		lb.devInput = d.largeInput(lb)
		large := lb.bytes+2*lb.guard > smallBuffer
		if lb.role != RoleIn {
			large = lb.bytes > mirrorMax
		}
		switch {
		case lb.devInput || large:
			lb.devGuards = opts.CheckGuards && lb.guard > 0
			if lb.devGuards {
				guards(lb)
			}
			if lb.devInput {
				lb.stagedAt = -1
				snaps = append(snaps, lb)
			}
		case opts.CheckGuards || lb.role == RoleIn && opts.VerifyInputs:
			if lb.snap != nil {
				continue // read before and after from the host
			}
			lb.gathered = true
			gathers = append(gathers, comparison{addr: lb.base, words: (lb.bytes + 2*lb.guard) / 4, lb: lb, what: gather})
		}
	}
	freed := d.quarantine
	for _, buf := range freed {
		guards(&launchBuf{buffer: buf, freed: true})
	}
	for _, lb := range snaps {
		cs = append(cs, comparison{addr: lb.addr, words: lb.bytes / 4, lb: lb, what: inputChanged})
	}
	cs = append(cs, gathers...)
	// The pending stores to these buffers' allocations, reduced to disjoint
	// segments: fills, and data staged in the upload. The others stay
	// pending: the launches of other goroutines make them.
	mine := d.pendingFor(lbs, freed)
	var pre []comparison
	staged := 0
	for _, sg := range paint(mine) {
		if sg.raw == nil {
			pre = append(pre, comparison{addr: sg.addr, words: sg.n / 4, pattern: uint64(sg.v) | uint64(sg.v)<<32, what: fill})
			continue
		}
		// A large input that this upload writes in full is compared, after
		// the kernel, with the staged words the pre pass copied into it:
		// they are its contents before the kernel, so it needs no snapshot.
		for _, lb := range snaps {
			if sg.addr == lb.addr && sg.n == lb.bytes {
				lb.stagedAt = staged
			}
		}
		pre = append(pre, comparison{ref: sg.addr, words: sg.n / 4, at: staged, data: sg.raw, what: scatter})
		staged += (sg.n + 255) &^ 255
	}
	if len(cs) == 0 && len(pre) == 0 {
		return nil, nil
	}
	pl := &verifyPlan{pre: pre, post: cs, freed: freed}
	stage := (40*len(pre) + 255) &^ 255
	pl.postAt = stage + staged
	pl.backAt = pl.postAt + 32*len(cs)
	at := pl.backAt + 8*len(cs)
	for i := range cs {
		if cs[i].what == gather {
			cs[i].at = at - pl.backAt // offset in the copy back
			cs[i].ref = uint64(at)    // an offset until the arena is known
			at += 4 * cs[i].words
		}
	}
	pl.backLen = at - pl.backAt
	need := (at + 255) &^ 255
	for _, lb := range snaps {
		lb.snapAt = uint64(need)
		need += (lb.bytes + 255) &^ 255
	}
	k := -1 // the smallest free arena that is large enough
	for i, a := range d.arenas {
		if a.size >= need && (k < 0 || a.size < d.arenas[k].size) {
			k = i
		}
	}
	if k >= 0 {
		pl.arena = d.arenas[k]
		d.arenas = append(d.arenas[:k], d.arenas[k+1:]...)
	}
	if d.verify == nil || k < 0 {
		size := max(1<<20, 1<<bits.Len(uint(need-1)))
		err := d.exec(func(b Backend) error { // makes all the pending stores the old way
			if d.verify == nil {
				m, err := b.LoadModule("ptxprop_verify", []byte(verifyPTX))
				if err != nil {
					return err
				}
				d.verify = m
			}
			if k < 0 {
				if len(d.arenas) > 0 { // too small: one fewer to keep
					if err := b.Free(d.arenas[0].addr); err != nil {
						return err
					}
					d.arenas = d.arenas[1:]
				}
				a, err := b.Alloc(size)
				if err != nil {
					return err
				}
				pl.arena = arena{addr: a, size: size}
			}
			return nil
		})
		if err != nil {
			if k >= 0 {
				d.arenas = append(d.arenas, pl.arena)
			}
			return nil, err
		}
		pl.pre = nil // made by that call, which released their data
	} else {
		for _, p := range mine {
			if p.ref != nil {
				pl.staged = append(pl.staged, p.ref)
			}
		}
	}
	d.quarantine = nil
	pl.m = d.verify
	pl.stageAt = stage
	for i := range pl.pre {
		if c := &pl.pre[i]; c.what == scatter {
			c.addr = pl.arena.addr + uint64(stage+c.at)
		}
	}
	for _, lb := range lbs { // taken: by the pre pass, or by the call above
		delete(d.fills, lb.base)
	}
	for _, buf := range freed {
		delete(d.fills, buf.base)
	}
	for _, lb := range snaps {
		lb.snapAt += pl.arena.addr
		if lb.stagedAt >= 0 && pl.pre != nil { // else the stores were made by the call above, not staged
			lb.snapAt = pl.arena.addr + uint64(stage+lb.stagedAt)
			lb.staged = true
		}
	}
	for i := range cs {
		switch cs[i].what {
		case inputChanged:
			cs[i].ref = cs[i].lb.snapAt
		case gather:
			cs[i].ref += pl.arena.addr
		}
	}
	return pl, nil
}

// build writes the upload (the pre table, its verdict words, the staged
// data, the post table and its verdict words) and makes room for the copy
// back, both in the backend's page-locked memory where it has some (then
// the backend copies neither: see Pinner). It runs without d.mu: it reads
// only the plan and the pending stores' data, which nothing changes.
func (pl *verifyPlan) build(b Backend) {
	size := pl.backAt + 8*len(pl.post)
	if p, ok := b.(Pinner); ok {
		pl.pinner = p
		pl.upload = p.Pinned(size)
		pl.upPinned = pl.upload != nil
		if len(pl.post) > 0 {
			pl.back = p.Pinned(pl.backLen)
			pl.backPinned = pl.back != nil
		}
	}
	if pl.upload == nil {
		pl.upload = make([]byte, size)
	}
	if pl.back == nil && len(pl.post) > 0 {
		pl.back = make([]byte, pl.backLen)
	}
	for _, c := range pl.pre {
		if c.what == scatter {
			copy(pl.upload[pl.stageAt+c.at:], c.data)
		}
	}
	putVerifyTable(pl.upload, pl.pre)
	putVerifyTable(pl.upload[pl.postAt:], pl.post)
}

// releaseStaged lets go of the Writes' data once build has copied them into
// the upload (those that paint found overwritten included: made or not,
// they are done with).
func (pl *verifyPlan) releaseStaged() {
	for _, h := range pl.staged {
		h.release()
	}
	pl.staged = nil
}

// unpin gives the plan's page-locked memory back, once the batch that used
// it has ended and parse has copied what it keeps out of it.
func (pl *verifyPlan) unpin() {
	if pl == nil {
		return
	}
	if pl.upPinned {
		pl.pinner.Unpin(pl.upload)
	}
	if pl.backPinned {
		pl.pinner.Unpin(pl.back)
	}
	pl.upload, pl.back, pl.upPinned, pl.backPinned = nil, nil, false, false
}

// verifyRows is the number of blocks ptxprop_verify gives each
// comparison (blockIdx.y; its threads stride over the words): enough that
// no thread handles more than verifyWordsPerThread words of the largest one,
// at least 8. The kernel's loop has one dependent global load per word (two
// when comparing), so a thread's time is that count times the memory
// latency: with 8 blocks always, a 64×1024 tensor's scatter, comparison and
// gather each cost a thread 32 round trips to memory.
func verifyRows(cs []comparison) uint32 {
	most := 0
	for _, c := range cs {
		most = max(most, c.words)
	}
	const perBlock = 256 * verifyWordsPerThread
	return uint32(min(max(8, (most+perBlock-1)/perBlock), 65535))
}

const verifyWordsPerThread = 4

// before uploads the plan and runs the pre pass: the pending stores.
func (pl *verifyPlan) before(b Backend) error {
	if pl == nil {
		return nil
	}
	if err := b.CopyHtoD(pl.arena.addr, pl.upload); err != nil {
		return err
	}
	return pl.pass(b, 0, pl.pre)
}

// pass launches ptxprop_verify over cs, whose table is at offset at.
func (pl *verifyPlan) pass(b Backend, at int, cs []comparison) error {
	if len(cs) == 0 {
		return nil
	}
	tab := pl.arena.addr + uint64(at)
	params := [][]byte{
		binary.LittleEndian.AppendUint64(nil, tab),
		binary.LittleEndian.AppendUint32(nil, uint32(len(cs))),
		binary.LittleEndian.AppendUint64(nil, tab+uint64(32*len(cs))),
	}
	if err := b.Launch(pl.m, verifyEntry, Geometry{Grid: Dim3{X: uint32(len(cs)), Y: verifyRows(cs), Z: 1}, Block: D1(256)}, params); err != nil {
		return fmt.Errorf("%s: %w", verifyEntry, err)
	}
	return nil
}

// after runs the post pass and brings the verdicts and the gathered
// buffers back in one copy, into pl.back: at once, or when the batch ends
// where the backend can wait (LaterReader).
func (pl *verifyPlan) after(b Backend) error {
	if pl == nil || len(pl.post) == 0 {
		return nil
	}
	if err := pl.pass(b, pl.postAt, pl.post); err != nil {
		return err
	}
	src := pl.arena.addr + uint64(pl.backAt)
	if lr, ok := b.(LaterReader); ok {
		return lr.CopyDtoHLater(pl.back, src)
	}
	return b.CopyDtoH(pl.back, src)
}

// parse records on each comparison's buffer what the post pass found, once
// the copy back has arrived: a guard band's damage in gerr, an input's
// change in inErr, a gathered buffer's contents in now (and its guard
// bands' damage in gerr).
func (pl *verifyPlan) parse() {
	if pl == nil || pl.back == nil {
		return
	}
	out := pl.back
	for i, c := range pl.post {
		lb := c.lb
		if c.what == gather {
			all := out[c.at : c.at+4*c.words]
			lb.now = all[lb.guard : lb.guard+lb.bytes]
			if pl.backPinned { // kept (as a mirror) after unpin
				lb.nowCopy = newHostCopy(lb.now)
				lb.now = lb.nowCopy.b
			}
			if lb.guard > 0 {
				lb.gerr = guardError(lb.buffer, all[:lb.guard], all[lb.guard+lb.bytes:])
			}
			continue
		}
		err := c.verdict(binary.LittleEndian.Uint32(out[8*i:]), binary.LittleEndian.Uint32(out[8*i+4:]))
		switch {
		case err == nil:
		case c.what == inputChanged:
			lb.inErr = err
		case lb.gerr == nil:
			lb.gerr = err
		}
	}
}

// release returns the quarantined buffers checked by pl's verify pass to
// the pool, and reports the first whose guard bands were found damaged
// (that buffer's memory is not reused).
func (d *device) release(pl *verifyPlan) error {
	if pl == nil || len(pl.freed) == 0 {
		return nil
	}
	var first error
	for _, c := range pl.post {
		if c.lb.freed && c.lb.gerr != nil {
			if first == nil {
				first = c.lb.gerr
			}
			c.lb.buffer.class = 0 // damaged: never pooled again
		}
	}
	for _, buf := range pl.freed {
		if buf.class > 0 {
			d.toPool(buf)
		}
	}
	return first
}

// pendingFor returns the pending stores into the allocations of lbs and
// freed, each allocation's in order; the others stay pending: the launches
// of other goroutines make them.
func (d *device) pendingFor(lbs []*launchBuf, freed []*buffer) []pending {
	var mine []pending
	for _, lb := range lbs {
		mine = append(mine, d.fills[lb.base]...)
	}
	for _, buf := range freed {
		mine = append(mine, d.fills[buf.base]...)
	}
	return mine
}

// toPool keeps buf's allocation for reuse.
func (d *device) toPool(buf *buffer) {
	if d.pool == nil {
		d.pool = map[int][]uint64{}
	}
	d.pool[buf.class] = append(d.pool[buf.class], buf.base)
	d.poolBytes += buf.class
}

// smallBuffer is the size under which a buffer and its guard bands always
// come back in one copy; mirrorMax the largest output read back whole after
// a launch (and kept for Read).
const (
	smallBuffer = 64 << 10
	mirrorMax   = 1 << 20
)

// readGuarded checks buf's guard bands and, for a small buffer or when whole
// is set, returns its contents read in the same copy (nil otherwise). A
// damaged guard band is gerr; err is a failure to read.
func readGuarded(b Backend, buf *buffer, whole bool) (body []byte, gerr, err error) {
	if buf.guard == 0 {
		return nil, nil, nil
	}
	if !whole && buf.bytes+2*buf.guard > smallBuffer {
		before, after := make([]byte, buf.guard), make([]byte, buf.guard)
		if err := b.CopyDtoH(before, buf.base); err != nil {
			return nil, nil, err
		}
		if err := b.CopyDtoH(after, buf.addr+uint64(buf.bytes)); err != nil {
			return nil, nil, err
		}
		return nil, guardError(buf, before, after), nil
	}
	all := make([]byte, buf.bytes+2*buf.guard)
	if err := b.CopyDtoH(all, buf.base); err != nil {
		return nil, nil, err
	}
	return all[buf.guard : buf.guard+buf.bytes], guardError(buf, all[:buf.guard], all[buf.guard+buf.bytes:]), nil
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// run makes call, which launches entry, under the watchdog wd (none if 0),
// and returns its error and whether the watchdog fired. It touches no
// device state: a Launch in flight runs it without the lock.
func run(b Backend, entry string, g Geometry, wd time.Duration, call func() error) (err error, timedOut bool) {
	if wd <= 0 {
		return call(), false
	}
	done := make(chan error, 1)
	goRun(func() { done <- call() })
	t := time.NewTimer(wd)
	defer t.Stop()
	select {
	case err := <-done:
		return err, false
	case <-t.C:
	}
	err = Errorf(ErrTimeout, "%s did not complete within %v (%v)", entry, wd, g)
	if a, ok := b.(Aborter); ok {
		a.Abort()
		select {
		case <-done:
			return err, false
		case <-time.After(5 * time.Second):
		}
	}
	return err, true
}

// runners are goroutines kept to make the watchdog's calls: a new
// goroutine's stack would grow to the depth of a checked launch on every
// call.
var runners = make(chan func())

// goRun runs f on an idle runner, or on a new one, which stays for further
// calls until it has been idle for a second.
func goRun(f func()) {
	select {
	case runners <- f:
		return
	default:
	}
	go func() {
		f()
		t := time.NewTimer(time.Second)
		defer t.Stop()
		for {
			select {
			case f := <-runners:
				f()
				t.Reset(time.Second)
			case <-t.C:
				return
			}
		}
	}()
}

// checkGuards reads buf's guard bands and reports the first damage.
func checkGuards(b Backend, buf *buffer) error {
	_, gerr, err := readGuarded(b, buf, false)
	if err != nil {
		return err
	}
	return gerr
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
	d.lock()
	defer d.unlock()
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
	d.lock()
	defer d.unlock()
	for d.flights > 0 && !d.closed { // launches in flight end first (a hung one has left)
		d.waitIdle()
	}
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if d.poisoned == nil {
		d.fills = nil
		var bases []uint64
		for _, buf := range d.quarantine {
			errs = append(errs, wrap("free", buf.Buffer.String(), d.exec(func(b Backend) error { return checkGuards(b, buf) })))
			bases = append(bases, buf.base)
		}
		d.quarantine = nil
		for id, buf := range d.bufs {
			bases = append(bases, buf.base)
			delete(d.bufs, id)
		}
		for class, free := range d.pool {
			bases = append(bases, free...)
			delete(d.pool, class)
		}
		for _, a := range d.arenas {
			bases = append(bases, a.addr)
		}
		d.arenas = nil
		errs = append(errs, d.exec(func(b Backend) error {
			var errs []error
			for _, base := range bases {
				errs = append(errs, b.Free(base))
			}
			return errors.Join(errs...)
		}))
		for k, m := range d.modules {
			errs = append(errs, d.b.UnloadModule(m.h))
			delete(d.modules, k)
		}
		if d.verify != nil {
			errs = append(errs, d.b.UnloadModule(d.verify))
		}
	}
	errs = append(errs, d.b.Close())
	return wrap("close", "", errors.Join(errs...))
}
