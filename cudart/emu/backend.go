package emu

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

// ApproxMode selects what approximate instructions return.
type ApproxMode uint8

const (
	// ApproxExact returns the correctly rounded value of the exact function.
	ApproxExact ApproxMode = iota
	// ApproxAdversarial returns a value anywhere inside the PTX ISA's
	// documented error bound, chosen deterministically from the seed and
	// the input.
	ApproxAdversarial
)

func (m ApproxMode) String() string {
	if m == ApproxAdversarial {
		return "adversarial"
	}
	return "exact"
}

// Config controls the emulator. The zero value is the default: canonical
// schedule, exact approximations, every check on except uninitialised
// global reads (cudart.Device initialises every buffer anyway).
type Config struct {
	// Seed randomises the schedule (CTA order, warp interleaving, lane order
	// of atomics). 0 is the canonical order.
	Seed int64
	// Approx selects the values of approximate instructions.
	Approx ApproxMode
	// ApproxSeed chooses, under ApproxAdversarial, the value each
	// approximate instruction returns for its operands and which mul/add
	// pairs are fused. It is apart from Seed because a GPU's approximate
	// values and contractions are fixed by its hardware and its compiler,
	// never by the schedule: the same operands give the same bits under
	// every schedule, so determinism is judged on the schedule alone.
	ApproxSeed int64
	// AllowUninitShared and AllowUninitLocal turn off the errors for reads
	// of shared or local bytes no thread of the CTA has written.
	AllowUninitShared, AllowUninitLocal bool
	// CheckUninitGlobal reports reads of global bytes never written by
	// CopyHtoD or a kernel.
	CheckUninitGlobal bool
	// NoRaceCheck turns off shared-memory and cross-CTA race detection
	// (write counts are still recorded).
	NoRaceCheck bool
	// MaxInstructions bounds the thread-instructions of one launch; 0: a
	// bound that grows with the launch's threads and the global memory
	// allocated (sched.go, autoBudget), so a kernel that never finishes
	// fails whatever the machine's load; negative: unlimited. Exceeding it
	// fails the launch with cudart.ErrTimeout.
	MaxInstructions int64
	// Coverage, when set, accumulates which basic blocks, branch
	// directions and guards every launch executed (cover.go).
	Coverage *Coverage
}

// LaunchStats describes the last launch.
type LaunchStats struct {
	Kernel             string
	ThreadInstructions int64 // instructions executed, counted per active lane
	WarpInstructions   int64 // instructions executed, counted per warp
	CTAs               int
	Duration           time.Duration
	// Global-memory bytes the launch's threads accessed, each access
	// counted once per lane at its width (a v4.f32 load is 16 bytes a
	// lane), whatever the state space the instruction named (a generic
	// address that resolves to global memory counts): loads (cp.async's
	// source included), stores, and atomics and reductions. Like the
	// instruction counts they depend on the schedule only through what
	// the kernel computes, so a launch on the canonical schedule (seed 0)
	// gives the same counts every time.
	GlobalLoadBytes, GlobalStoreBytes, GlobalAtomicBytes int64
}

// GlobalBytes returns the global-memory bytes the launch moved: loads,
// stores and atomics.
func (s LaunchStats) GlobalBytes() int64 {
	return s.GlobalLoadBytes + s.GlobalStoreBytes + s.GlobalAtomicBytes
}

// Options are the emulator's options at open, given to cudart.Open in
// cudart.Options.Backend:
//
//	opts := cudart.DefaultOptions()
//	opts.Backend = emu.Options{Config: emu.Config{Approx: emu.ApproxAdversarial, ApproxSeed: 7}}
//	dev, err := cudart.Open("emu", opts)
type Options struct {
	// Config is the emulator's initial configuration.
	Config Config
	// DeviceChecks presents the emulator as a Device sees a GPU (Checked):
	// a Device over it checks launches with the verify kernel, which the
	// emulator then runs, so the GPU's checking path runs on any machine.
	DeviceChecks bool
}

// BackendName is "emu": Options are for the emulator.
func (Options) BackendName() string { return "emu" }

// Open returns a new emulator, device ordinal of its kind: each is a
// distinct device with its own memory and modules.
func Open(ordinal int, opts Options) cudart.Backend {
	b := New(opts.Config)
	b.ordinal = ordinal
	if opts.DeviceChecks {
		return Checked{b}
	}
	return b
}

// Backend is the emulator: a cudart.Backend with the capabilities Caps
// lists.
type Backend struct {
	mu      sync.Mutex
	ordinal int
	cfg     Config
	mem     globalMem
	modules map[*module]bool
	stats   LaunchStats
	abort   atomic.Bool
	closed  bool

	// workers bounds the CTAs a launch runs at once (0: GOMAXPROCS); ref
	// runs every launch one CTA at a time without the warp-wide memory
	// paths. Tests set them to compare the paths.
	workers  int
	ref      bool
	specPool []specBuf // private pages of parallel runs (spec.go)
	// specPages and specSums are page structures and summaries of
	// parallel runs, kept for reuse.
	specPages []*specPage
	specSums  [][]specSum
	// parallelRuns counts the launches that ran their CTAs in parallel.
	parallelRuns int
	// taint is the dependence tracking (taint.go), nil while off.
	taint *taintState
}

// New returns an emulator with cfg.
func New(cfg Config) *Backend {
	return &Backend{cfg: cfg, mem: globalMem{next: globalBase}, modules: map[*module]bool{}}
}

// Caps are the emulator's capabilities: it fills and copies device memory,
// traps guard bands (so a Device checks its launches from the host),
// records stores, aborts, and takes a schedule seed and an instruction
// limit.
const Caps = cudart.CapFill | cudart.CapCopyDtoD | cudart.CapProtect | cudart.CapWriteCounts |
	cudart.CapAbort | cudart.CapSchedule | cudart.CapInstructionLimit | cudart.CapDependence

// Capabilities returns Caps.
func (b *Backend) Capabilities() cudart.Caps { return Caps }

func init() {
	cudart.Register("emu", func(ordinal int, opts cudart.BackendOptions) (cudart.Backend, error) {
		o, ok := opts.(Options)
		if opts != nil && !ok {
			return nil, cudart.Errorf(cudart.ErrInvalid, "emulator options of type %T, want emu.Options", opts)
		}
		return Open(ordinal, o), nil
	})
}

// Config returns the current configuration.
func (b *Backend) Config() Config {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg
}

// SetConfig replaces the configuration for later launches.
func (b *Backend) SetConfig(cfg Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg = cfg
}

// SetSeed sets the schedule seed for later launches; the adversarial
// approximation seed (Config.ApproxSeed) is left as it is.
func (b *Backend) SetSeed(seed int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg.Seed = seed
}

// SetInstructionLimit sets Config.MaxInstructions for later launches and
// returns its previous value.
func (b *Backend) SetInstructionLimit(n int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.cfg.MaxInstructions
	b.cfg.MaxInstructions = n
	return old
}

// Stats returns the statistics of the last launch.
func (b *Backend) Stats() LaunchStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Info describes the emulator, naming the GPU whose approximate
// instructions it reproduces (its models are measured on an sm_90 H200;
// mufu.go, mufu_models.go) or the adversarial seed that replaces them.
func (b *Backend) Info() cudart.Info {
	b.mu.Lock()
	cfg := b.cfg
	b.mu.Unlock()
	approx := "approximate instructions as sm_90"
	if cfg.Approx == ApproxAdversarial {
		approx = fmt.Sprintf("approximate instructions adversarial, seed %d", cfg.ApproxSeed)
	}
	return cudart.Info{Backend: "emu", Name: "ptxprop PTX emulator (warp 32, " + approx + ")", Ordinal: b.ordinal, Driver: "emu", CUDA: "PTX ISA 8.x"}
}

// Abort stops the running launch as soon as possible; it fails with
// cudart.ErrTimeout. Launches started later run normally.
func (b *Backend) Abort() { b.abort.Store(true) }

// Close releases all memory.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.mem = globalMem{next: globalBase}
	b.modules = map[*module]bool{}
	return nil
}

func (b *Backend) usable() error {
	if b.closed {
		return cudart.ErrClosed
	}
	return nil
}

// Alloc allocates n bytes, 256-byte aligned.
func (b *Backend) Alloc(n int) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, cudart.Errorf(cudart.ErrInvalid, "alloc of %d bytes", n)
	}
	a := b.mem.alloc(n, b.cfg.CheckUninitGlobal)
	return a.base, nil
}

// Free releases an allocation.
func (b *Backend) Free(addr uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return err
	}
	if b.taint != nil {
		if a := b.mem.find(addr); a != nil {
			delete(b.taint.global, a)
		}
	}
	if !b.mem.free(addr) {
		return cudart.Errorf(cudart.ErrInvalid, "free of %#x: not the start of a live allocation", addr)
	}
	return nil
}

// usableSpan is span on a backend that is still usable.
func (b *Backend) usableSpan(addr uint64, n int, op string) (*allocation, int, error) {
	if err := b.usable(); err != nil {
		return nil, 0, err
	}
	return b.span(addr, n, op)
}

func (b *Backend) span(addr uint64, n int, op string) (*allocation, int, error) {
	a := b.mem.find(addr)
	if a == nil || addr+uint64(n) > a.end {
		return nil, 0, cudart.Errorf(cudart.ErrInvalid, "%s of %d bytes at %#x: outside every allocation", op, n, addr)
	}
	return a, int(addr - a.base), nil
}

// CopyHtoD copies src to device address dst; the bytes count as written.
func (b *Backend) CopyHtoD(dst uint64, src []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, off, err := b.usableSpan(dst, len(src), "copy to device")
	if err != nil {
		return err
	}
	copy(a.data[off:], src)
	a.markInit(off, len(src))
	if b.taint != nil {
		b.taint.hostWrote(a, off, len(src))
	}
	return nil
}

// Fill32 sets words 32-bit words from addr to v; the bytes count as written.
func (b *Backend) Fill32(addr uint64, words int, v uint32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 4 * words
	a, off, err := b.usableSpan(addr, n, "fill")
	if err != nil {
		return err
	}
	dst := a.data[off : off+n]
	for i := 0; i < n; i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], v)
	}
	a.markInit(off, n)
	if b.taint != nil {
		b.taint.hostWrote(a, off, n)
	}
	return nil
}

// CopyDtoD copies n bytes from device address src to dst; the bytes count
// as written.
func (b *Backend) CopyDtoD(dst, src uint64, n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	sa, soff, err := b.usableSpan(src, n, "copy from device")
	if err != nil {
		return err
	}
	da, doff, err := b.span(dst, n, "copy to device")
	if err != nil {
		return err
	}
	copy(da.data[doff:doff+n], sa.data[soff:soff+n])
	da.markInit(doff, n)
	if t := b.taint; t != nil {
		copy(t.bytes(da)[doff:doff+n], t.bytes(sa)[soff:soff+n])
	}
	return nil
}

// CopyDtoH copies from device address src into dst.
func (b *Backend) CopyDtoH(dst []byte, src uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, off, err := b.usableSpan(src, len(dst), "copy to host")
	if err != nil {
		return err
	}
	copy(dst, a.data[off:])
	return nil
}

// Protect makes accesses to [addr, addr+n) fail with ErrOutOfBounds, naming
// what.
func (b *Backend) Protect(addr uint64, n int, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.mem.find(addr); a != nil {
		a.guards = append(a.guards, guard{lo: addr, hi: addr + uint64(n), what: what})
	}
}

// Unprotect removes the protection starting at addr.
func (b *Backend) Unprotect(addr uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.mem.find(addr); a != nil {
		for i, g := range a.guards {
			if g.lo == addr {
				a.guards = append(a.guards[:i], a.guards[i+1:]...)
				break
			}
		}
	}
}

// Label names the buffer at [addr, addr+n) in diagnostics. It is also the
// buffer's exact extent: a kernel access to the rest of its allocation (size
// class padding, guard bands) is out of bounds.
func (b *Backend) Label(addr uint64, n int, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.mem.find(addr); a != nil {
		a.label, a.lbase, a.lend = name, addr, addr+uint64(n)
		a.lo, a.hi = a.lbase, min(a.lend, a.end)
	}
}

// WriteCounts returns how many times the last launch stored to each element
// of size elem in [addr, addr+n): the most stores to any byte of the element.
func (b *Backend) WriteCounts(addr uint64, n, elem int) ([]uint32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if elem <= 0 || n%elem != 0 {
		return nil, cudart.Errorf(cudart.ErrInvalid, "write counts of %d bytes in elements of %d", n, elem)
	}
	a, off, err := b.span(addr, n, "write counts")
	if err != nil {
		return nil, err
	}
	out := make([]uint32, n/elem)
	for i := range out {
		var c uint32
		for j := 0; j < elem; j++ {
			c = max(c, a.writeCount(off+i*elem+j, b.mem.launch))
		}
		out[i] = c
	}
	return out, nil
}

// LoadModule parses and decodes a PTX module; its .global and .const
// variables are allocated and initialised.
func (b *Backend) LoadModule(name string, src []byte) (cudart.ModuleHandle, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return nil, err
	}
	m, err := loadModule(&b.mem, name, src)
	if err != nil {
		return nil, err
	}
	m.sum = sha256.Sum256(src) // names the module's kernels in a Coverage
	b.modules[m] = true
	return m, nil
}

// UnloadModule releases a module and its global variables.
func (b *Backend) UnloadModule(h cudart.ModuleHandle) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := h.(*module)
	if !ok || !b.modules[m] {
		return cudart.Errorf(cudart.ErrInvalid, "unload of an unknown module")
	}
	for _, a := range m.globals {
		b.mem.free(a.base)
	}
	delete(b.modules, m)
	return nil
}

// Launch runs entry of module h over geometry g with the marshalled params.
func (b *Backend) Launch(h cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return err
	}
	m, ok := h.(*module)
	if !ok || !b.modules[m] {
		return cudart.Errorf(cudart.ErrInvalid, "launch of %s: unknown module", entry)
	}
	k := m.kernels[entry]
	if k == nil {
		names := make([]string, 0, len(m.kernels))
		for n := range m.kernels {
			names = append(names, n)
		}
		sort.Strings(names)
		return cudart.Errorf(cudart.ErrInvalid, "module %s has no kernel %q (kernels: %v)", m.name, entry, names)
	}
	b.abort.Store(false)
	start := time.Now()
	l, err := newLaunch(b, m, k, g, params)
	if err != nil {
		return err
	}
	l.startCoverage(l.cfg.Coverage)
	err = l.run()
	l.endCoverage(l.cfg.Coverage)
	k.lastInsts = l.threadInsts
	b.stats = LaunchStats{Kernel: entry, ThreadInstructions: l.threadInsts, WarpInstructions: l.warpInsts, CTAs: l.ctasRun, Duration: time.Since(start),
		GlobalLoadBytes: l.gbytes[accRead], GlobalStoreBytes: l.gbytes[accWrite], GlobalAtomicBytes: l.gbytes[accAtomic]}
	return err
}

func (s LaunchStats) String() string {
	rate := 0.0
	if s.Duration > 0 {
		rate = float64(s.ThreadInstructions) / s.Duration.Seconds()
	}
	return fmt.Sprintf("%s: %d thread-instructions (%d warp) in %d CTAs, %v, %.3g thread-inst/s", s.Kernel, s.ThreadInstructions, s.WarpInstructions, s.CTAs, s.Duration, rate)
}
