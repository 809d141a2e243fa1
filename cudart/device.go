package cudart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ptxprop/ptxprop/cudart/internal/alloc"
	"github.com/ptxprop/ptxprop/cudart/internal/staging"
)

// Device is what kernels and properties use: a Backend with guard bands,
// poisoning, input verification, a module cache and a watchdog. All methods
// are safe for concurrent use; calls are serialised.
type Device interface {
	// Info describes the device.
	Info() Info
	// Capabilities returns what the backend declared it can do.
	Capabilities() Caps
	// Stats reports counters since the device was opened.
	Stats() Stats
	// Options returns the current options.
	Options() Options
	// SetOptions replaces the checking options and the watchdog (e.g. off
	// for benchmarks); Ordinal and Backend stay as they were at open.
	SetOptions(Options)
	// Load returns the module for ptx, loading it on first use. Modules are
	// cached by name and the SHA-256 of the text. An empty text, or one the
	// backend cannot load, is an error wrapping ErrLoad.
	Load(name string, ptx []byte) (Module, error)
	// Alloc allocates n elements of kind, guarded and poisoned.
	Alloc(kind Kind, n int) (Buffer, error)
	// AllocAt is Alloc with the first element off elements past the
	// allocation's aligned start (0 ≤ off·size < MaxViewBytes): a view at
	// an offset, as a kernel gets for a tensor that starts inside a larger
	// one. Its address is misaligned by off·size bytes modulo 256; the
	// slack before it is part of the guard band before the buffer, so a
	// write there is out of bounds. AllocAt(kind, n, 0) is Alloc.
	AllocAt(kind Kind, n, off int) (Buffer, error)
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
	// inputs as Options say. A launch that outlives the watchdog fails with
	// a *TimeoutError (errors.Is(err, ErrTimeout)).
	Launch(m Module, entry string, g Geometry, params ...Param) error
	// WriteCounts returns, for the last launch, how many times each element
	// of b was stored to. ErrUnsupported without CapWriteCounts.
	WriteCounts(b Buffer) ([]uint32, error)
	// Elapsed times iters repetitions of launch on the device. Backends
	// without CapTimer fall back to the wall clock.
	Elapsed(iters int, launch func() error) (time.Duration, error)
	// SetSchedule makes later launches run threads and blocks in the order
	// seed selects (0: the canonical order). ErrUnsupported without
	// CapSchedule.
	SetSchedule(seed int64) error
	// SetInstructionLimit bounds the thread-instructions of each later
	// launch (0: the backend's bound, which grows with the launch;
	// negative: unlimited) and returns the previous bound. ErrUnsupported
	// without CapInstructionLimit.
	SetInstructionLimit(n int64) (int64, error)
	// Trace makes later Writes and Reads feed t, the dependence of
	// outputs on inputs (nil: stop). ErrUnsupported without CapDependence.
	Trace(t *Trace) error
	// TraceStored and TraceDerived tell the trace where a host slice's
	// elements lie on the device when a Write or Read does not copy them
	// as they are: an input stored converted or padded, an output
	// converted, unpadded or summed on the host (dependence.go).
	TraceStored(b Buffer, elem int, src any, at func(i int) int) error
	TraceDerived(dst any, b Buffer, elem int, from func(i int) []int) error
	// Backend returns the wrapped backend, for its own diagnostics; every
	// control a Device needs goes through the methods above.
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

// Options are how a Device is opened and what it checks around every
// launch.
type Options struct {
	GuardBytes   int           // guard band on each side of a buffer; multiple of 256; 0 disables
	Poison       bool          // fill RoleOut buffers with NaN before every launch
	CheckGuards  bool          // verify the launch's buffers' guard bands after every launch (and every buffer's at Free)
	VerifyInputs bool          // verify RoleIn buffers unchanged by every launch
	Watchdog     time.Duration // the longest a launch may take before it fails with ErrTimeout; 0: no watchdog

	// Read by Open only.
	Ordinal int            // which device of the backend (the GPU's index among the visible ones)
	Backend BackendOptions // the backend's own options (emu.Options, gpu.Config); nil: its defaults
}

// DefaultWatchdog is DefaultOptions' watchdog: far longer than any launch
// of the shipped kernels on a GPU.
const DefaultWatchdog = 30 * time.Second

// BoundedWatchdog is the watchdog for a backend that bounds each launch's
// instructions itself (CapInstructionLimit: the emulator, whose bound grows
// with the launch). Its launches' wall time depends on the host's load and
// on the shape (a 2^20-element launch takes a minute on one loaded core),
// so the wall clock only backs up the instruction bound.
const BoundedWatchdog = 10 * time.Minute

// WatchdogFor returns the watchdog for d when none was chosen: DefaultWatchdog,
// or BoundedWatchdog where d's backend bounds its launches itself.
func WatchdogFor(d Device) time.Duration {
	if d.Capabilities().Has(CapInstructionLimit) {
		return BoundedWatchdog
	}
	return DefaultWatchdog
}

// DefaultOptions are the options for property tests: everything checked,
// device 0 of the backend with its default options.
func DefaultOptions() Options {
	return Options{GuardBytes: 1024, Poison: true, CheckGuards: true, VerifyInputs: true, Watchdog: DefaultWatchdog}
}

// Canary and poison bit patterns. Guard bands hold the canary; outputs are
// poisoned with a distinct NaN so a report can tell which one leaked.
const (
	CanaryF32 uint32 = 0x7FBADBAD // a signalling NaN: copying it quiets it, so even a copy is seen
	PoisonF32 uint32 = 0x7FC0BAD0 // a quiet NaN with a payload
	CanaryI   byte   = 0xCD
	PoisonI   byte   = 0xEE
)

type device struct {
	gate    // the lock, and the launches in flight without it (lock.go)
	b       Backend
	caps    Caps
	check   checker // from the host or on the device, as caps allow
	opts    Options
	modules map[string]Module
	bufs    map[uint64]*buffer
	nextID  uint64
	stats   Stats
	// broken: the backend declared capabilities it does not implement;
	// poisoned: a launch outlived the watchdog and could not be stopped.
	broken, poisoned error
	closed           bool
	pool             alloc.Pool    // freed allocations kept for reuse
	stores           staging.Queue // canaries, poison and writes not yet made (see handoff)
	trace            *Trace        // the dependence trace Writes and Reads feed, or nil
}

// New wraps a backend into a Device with opts (Ordinal and Backend are
// Open's; New ignores them). How launches are checked follows from the
// backend's capabilities (see checkerFor). A backend that declares a
// capability without implementing its interface gives a Device whose every
// call fails with ErrInvalid.
func New(b Backend, opts Options) Device {
	opts.GuardBytes = roundGuard(opts.GuardBytes)
	d := &device{b: b, caps: b.Capabilities(), opts: opts, modules: map[string]Module{}, bufs: map[uint64]*buffer{}}
	if bad := missing(b); bad != 0 {
		d.broken = Errorf(ErrInvalid, "backend %s declares capabilities %v without implementing them", b.Info().Backend, bad)
		d.caps &^= bad
	}
	d.check = checkerFor(d)
	d.idle.L = &d.mu
	return d
}

func roundGuard(g int) int {
	if g%256 != 0 {
		g += 256 - g%256
	}
	return g
}

func (d *device) Info() Info         { return d.b.Info() }
func (d *device) Backend() Backend   { return d.b }
func (d *device) Capabilities() Caps { return d.caps }

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
	o.GuardBytes = roundGuard(o.GuardBytes)
	o.Ordinal, o.Backend = d.opts.Ordinal, d.opts.Backend
	d.opts = o
}

func (d *device) usable(op, name string) error {
	switch {
	case d.closed:
		return &Error{Op: op, Name: name, Err: ErrClosed}
	case d.broken != nil:
		return &Error{Op: op, Name: name, Err: d.broken}
	case d.poisoned != nil:
		return &Error{Op: op, Name: name, Err: fmt.Errorf("%w (%w)", ErrPoisoned, d.poisoned)}
	}
	return nil
}

// PTXHash returns the hex SHA-256 of a PTX text: the module cache key.
func PTXHash(ptx []byte) string {
	h := sha256.Sum256(ptx)
	return hex.EncodeToString(h[:])
}

func (d *device) Load(name string, ptx []byte) (Module, error) {
	hash := PTXHash(ptx) // before the lock: a large module takes a while
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

func (d *device) Elapsed(iters int, launch func() error) (time.Duration, error) {
	if d.caps.Has(CapTimer) {
		return d.b.(Timer).Elapsed(iters, launch)
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := launch(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func (d *device) SetSchedule(seed int64) error {
	d.lock()
	defer d.unlock()
	if err := d.usable("set-schedule", ""); err != nil {
		return err
	}
	if !d.caps.Has(CapSchedule) {
		return &Error{Op: "set-schedule", Err: ErrUnsupported}
	}
	d.b.(Scheduler).SetSeed(seed)
	return nil
}

func (d *device) SetInstructionLimit(n int64) (int64, error) {
	d.lock()
	defer d.unlock()
	if err := d.usable("set-instruction-limit", ""); err != nil {
		return 0, err
	}
	if !d.caps.Has(CapInstructionLimit) {
		return 0, &Error{Op: "set-instruction-limit", Err: ErrUnsupported}
	}
	return d.b.(InstructionLimiter).SetInstructionLimit(n), nil
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
	if d.poisoned == nil && d.broken == nil {
		d.stores.Clear()
		bases, cerr := d.check.close()
		errs = append(errs, cerr)
		for id, buf := range d.bufs {
			bases = append(bases, buf.base)
			delete(d.bufs, id)
		}
		bases = append(bases, d.pool.Drain()...)
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
		errs = append(errs, d.check.unload())
	}
	errs = append(errs, d.b.Close())
	return wrap("close", "", errors.Join(errs...))
}
