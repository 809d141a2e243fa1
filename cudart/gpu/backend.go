//go:build cuda

package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"gorgonia.org/cu"

	"github.com/ptxprop/ptxprop/cudart"
	ptxast "github.com/ptxprop/ptxprop/ptx"
)

// Config selects and tunes a GPU backend. The zero value opens device 0,
// measures the copy bandwidth with 1 GiB copies and waits up to 10 s in Close.
type Config struct {
	// Ordinal is the device index among those CUDA_VISIBLE_DEVICES leaves.
	Ordinal int
	// CopyBytes is the size of each device-to-device copy that measures
	// Info().CopyBandwidth at open: 0 means 1 GiB; negative skips the
	// measurement (CopyBandwidth stays 0).
	CopyBytes int
	// CloseWait bounds how long Close waits for the driver call in progress
	// to finish (a launch that never completes) before giving up
	// on destroying the context. 0 means 10 s.
	CloseWait time.Duration
}

// Properties are device facts beyond cudart.Info.
type Properties struct {
	Ordinal             int
	Name                string
	CCMajor, CCMinor    int
	SMs                 int
	TotalMemory         uint64 // bytes
	L2Bytes             int
	SharedPerBlock      int    // bytes of shared memory a block gets without opting in
	SharedPerBlockOptin int    // the most a block can get (Launch opts in on demand)
	MaxThreadsPerBlock  int    //
	CUDAVersion         int    // cuDriverGetVersion, e.g. 13000
	KernelDriver        string // kernel module version, e.g. "580.159.03"; "" if unknown
	HeaderVersion       int    // CUDA_VERSION of the cuda.h compiled against, e.g. 11080
	Library             string // the libcuda file loaded
	ParamInfo           bool   // the driver reports kernel parameter sizes, so Launch checks them
	UUID                string // "GPU-…", as nvidia-smi names it; "" if the driver could not tell
	PCIBusID            string // domain:bus:device.function, e.g. "0000:19:00.0"; "" if unknown
	CopyBandwidth       float64
	CopyBytes           int // size of each measuring copy; 0 if unmeasured
	CopyError           string
}

// Backend is a cudart.Backend with the capabilities Caps lists, over one
// CUDA context. All
// methods are safe for concurrent use: every driver call runs on the one
// goroutine that owns the context (locked to its OS thread), in the order the
// calls arrive. Open one with Open, or through cudart.Open("gpu", …).
type Backend struct {
	// sem is held (a value in it) by the goroutine making driver calls: every
	// call runs with it, on the caller's own OS thread (locked for the call)
	// with the context made current there.
	sem       chan struct{}
	quit      chan struct{} // closed by Close
	exited    chan struct{} // closed once the context is destroyed
	closeOnce sync.Once
	closeWait time.Duration
	closeErr  error // set before exited is closed
	async     atomic.Int32
	held      atomic.Int64 // nanoseconds sem has been held (Held)
	waiting   atomic.Int32 // goroutines waiting for sem (see holding)
	semWait   atomic.Int64 // nanoseconds callers of do waited for sem (SemWait)
	info      cudart.Info
	props     Properties

	// Owned by whoever holds sem.
	dev      cuDevice
	ctx      cuContext
	hold     *module   // the hold kernel of Elapsed, loaded on first use
	batching bool      // inside Batch: launches are only queued
	queued   bool      // inside Batch: work queued since the batch began or last waited
	stage    stage     // pinned host memory that copies go through
	pins     pins      // pinned host memory handed out (Pinned); its own lock
	comp     completer // waits for batches' ends outside sem; its own lock
}

// fault is the first sticky fault (Result.Sticky) seen in this process. The
// driver makes such a fault process-wide: every later call in every context
// fails with the same code, and even cuCtxCreate does, so only a new process
// recovers. (Seen on the H200, driver 580: after an illegal address in one
// context, creating another failed with CUDA_ERROR_ILLEGAL_ADDRESS.)
var fault atomic.Pointer[error]

// Fault returns the kernel fault that left CUDA unusable in this process,
// or nil.
func Fault() error {
	if p := fault.Load(); p != nil {
		return *p
	}
	return nil
}

var (
	_ cudart.Backend = (*Backend)(nil)
	_ cudart.Timer   = (*Backend)(nil)
)

// Caps are the GPU backend's capabilities: memset fills, device-to-device
// copies (so a Device checks launches on the device), batches, page-locked
// memory and event timers. It has no trap on guard bands, no store counts,
// no abort (no driver call stops a running kernel) and no schedule seed.
const Caps = cudart.CapFill | cudart.CapCopyDtoD | cudart.CapBatch | cudart.CapPinned | cudart.CapTimer

// Capabilities returns Caps.
func (b *Backend) Capabilities() cudart.Caps { return Caps }

// BackendName is "gpu": a Config is a GPU backend's options at cudart.Open
// (cudart.Options.Ordinal overrides its Ordinal there).
func (Config) BackendName() string { return "gpu" }

// Open creates a CUDA context on the configured device. It returns an error wrapping
// cudart.ErrNoDevice when cuInit failed (in gorgonia.org/cu's init; see
// cuinit.go), or there is no such device.
func Open(cfg Config) (*Backend, error) {
	fail := func(err error) (*Backend, error) { return nil, &cudart.Error{Op: "open", Name: "gpu", Err: err} }
	if err := Fault(); err != nil {
		return fail(fmt.Errorf("%w: CUDA unusable in this process since an earlier kernel fault (restart the process): %w", cudart.ErrNoDevice, err))
	}
	if err := loadDriver(); err != nil {
		return fail(fmt.Errorf("%w: %w", cudart.ErrNoDevice, err))
	}
	n, r := deviceCount()
	if r != success {
		return fail(fmt.Errorf("%w: cuDeviceGetCount: %w", cudart.ErrNoDevice, r))
	}
	if n == 0 {
		return fail(cudart.Errorf(cudart.ErrNoDevice, "the driver reports no CUDA device"))
	}
	if cfg.Ordinal < 0 || cfg.Ordinal >= n {
		return fail(cudart.Errorf(cudart.ErrNoDevice, "no device %d (%d present)", cfg.Ordinal, n))
	}
	dev, r := deviceGet(cfg.Ordinal)
	if r != success {
		return fail(fmt.Errorf("%w: cuDeviceGet(%d): %w", cudart.ErrNoDevice, cfg.Ordinal, r))
	}
	p, err := properties(cfg.Ordinal, dev)
	if err != nil {
		return fail(err)
	}
	b := &Backend{
		sem:       make(chan struct{}, 1),
		quit:      make(chan struct{}),
		exited:    make(chan struct{}),
		closeWait: cfg.CloseWait,
		dev:       dev,
		props:     p,
	}
	if b.closeWait <= 0 {
		b.closeWait = 10 * time.Second
	}
	if err := b.create(); err != nil {
		return fail(err)
	}
	if cfg.CopyBytes >= 0 {
		size := cfg.CopyBytes
		if size == 0 {
			size = 1 << 30
		}
		err := b.do(func() error {
			bw, used, err := measureCopy(size)
			b.props.CopyBandwidth, b.props.CopyBytes = bw, used
			return err
		})
		if err != nil {
			b.props.CopyError = err.Error()
		}
	}
	b.info = cudart.Info{
		Backend:           "gpu",
		Name:              p.Name,
		Ordinal:           cfg.Ordinal,
		UUID:              p.UUID,
		PCIBusID:          p.PCIBusID,
		ComputeCapability: fmt.Sprintf("%d.%d", p.CCMajor, p.CCMinor),
		SMs:               p.SMs,
		Driver:            p.KernelDriver,
		CUDA:              formatVersion(p.CUDAVersion),
		CopyBandwidth:     b.props.CopyBandwidth,
	}
	if b.info.Driver == "" {
		b.info.Driver = b.info.CUDA
	}
	return b, nil
}

// properties reads the device facts that need no context.
func properties(ordinal int, dev cuDevice) (Properties, error) {
	p := Properties{Ordinal: ordinal, HeaderVersion: headerVersion, Library: libraryPath(), ParamInfo: hasParamInfo()}
	var r Result
	if p.Name, r = deviceName(dev); r != success {
		return p, fmt.Errorf("cuDeviceGetName: %w", r)
	}
	for _, a := range []struct {
		dst  *int
		attr cu.DeviceAttribute
		name string
	}{
		{&p.CCMajor, attrCCMajor, "compute capability major"},
		{&p.CCMinor, attrCCMinor, "compute capability minor"},
		{&p.SMs, attrSMs, "multiprocessor count"},
		{&p.L2Bytes, attrL2Bytes, "L2 size"},
		{&p.SharedPerBlock, attrSharedPerBlock, "shared memory per block"},
		{&p.SharedPerBlockOptin, attrSharedOptin, "opt-in shared memory per block"},
		{&p.MaxThreadsPerBlock, attrMaxThreadsBlock, "threads per block"},
	} {
		if *a.dst, r = deviceAttr(dev, a.attr); r != success {
			return p, fmt.Errorf("cuDeviceGetAttribute(%s): %w", a.name, r)
		}
	}
	if p.TotalMemory, r = deviceTotalMem(dev); r != success {
		return p, fmt.Errorf("cuDeviceTotalMem: %w", r)
	}
	if p.CUDAVersion, r = driverVersion(); r != success {
		return p, fmt.Errorf("cuDriverGetVersion: %w", r)
	}
	p.KernelDriver = kernelDriverVersion(p.Library)
	if u, r := deviceUUID(dev); r == success { // facts for telling devices apart: not worth failing Open over
		p.UUID = u
	}
	p.PCIBusID = pciBusID(dev)
	return p, nil
}

// formatVersion turns 13000 into "13.0" and 12040 into "12.4".
func formatVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

var versionRE = regexp.MustCompile(`([0-9]+\.[0-9]+(\.[0-9]+)?)`)

// kernelDriverVersion reads the NVIDIA kernel module's version from /proc,
// else from the name the libcuda file resolves to (libcuda.so.580.159.03).
func kernelDriverVersion(lib string) string {
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		if m := regexp.MustCompile(`Kernel Module(?:\s+for\s+\S+)?\s+([0-9][0-9.]+)`).FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	if lib == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(lib); err == nil {
		lib = real
	}
	base := filepath.Base(lib)
	const prefix = "libcuda.so."
	if len(base) > len(prefix) && base[:len(prefix)] == prefix && base != prefix+"1" {
		return versionRE.FindString(base[len(prefix):])
	}
	return ""
}

// create creates the context (cuCtxCreate makes it current on the calling
// thread) and pops it again, leaving the thread as it was: every call makes
// it current on its own thread (do).
func (b *Backend) create() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx, r := ctxCreate(b.dev)
	if r != success {
		return fmt.Errorf("%w: cuCtxCreate: %w", cudart.ErrNoDevice, r)
	}
	b.ctx = ctx
	if r := ctxPop(); r != success {
		_ = ctxDestroy(&b.ctx)
		return fmt.Errorf("cuCtxPopCurrent: %w", r)
	}
	return nil
}

// call runs f, turning a panic into an error so that a bug in a request
// does not leave sem held.
func call(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in a driver call: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// do runs f with the context current on the calling goroutine's OS thread
// (locked to it meanwhile), one call at a time, and returns its error, or
// cudart.ErrClosed once Close has been called. Calls wait for sem in arrival
// order. Running on the caller's thread, not on a thread of the backend's
// own, spares every call two wake-ups of another OS thread, which cost more
// than a small launch.
func (b *Backend) do(f func() error) error {
	select {
	case b.sem <- struct{}{}: // free: no clock read
	default:
		start := time.Now()
		b.waiting.Add(1)
		select {
		case b.sem <- struct{}{}:
			b.waiting.Add(-1)
			b.semWait.Add(int64(time.Since(start)))
		case <-b.quit:
			b.waiting.Add(-1)
			return cudart.ErrClosed
		}
	}
	return b.holding(func() error { return call(f) })
}

// holding runs f for a caller that has taken sem, and gives sem back: after
// Close it returns cudart.ErrClosed; otherwise f runs on the caller's OS
// thread (locked to it meanwhile) with the context current there. The time
// counts in Held.
//
// Giving sem back readies the goroutine waiting longest for it, and Go puts
// a readied goroutine next in line on the releasing goroutine's P, where it
// waits until that goroutine blocks or is preempted (up to a 10 ms time
// slice) unless an idle P steals it. When every P is busy with checks' CPU
// work, nothing steals it, and the device idles with callers queued: on the
// H200 at 64×1024 sem was held 56% of the time while 64 goroutines left
// 3.4 of 16 CPUs idle (a block profile put about 45 of them waiting for
// sem). So a caller that gives sem back to a waiter yields its P once
// (runtime.Gosched), which runs the waiter at once: measured side by side
// there, three runs each, 8804/7855/7945 value checks/s against
// 7835/8043/7343 without.
func (b *Backend) holding(f func() error) error {
	start := time.Now()
	defer func() {
		b.held.Add(int64(time.Since(start)))
		<-b.sem
		if b.waiting.Load() > 0 {
			runtime.Gosched()
		}
	}()
	select {
	case <-b.quit:
		return cudart.ErrClosed
	default:
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := ctxSetCurrent(b.ctx); r != success {
		return b.check("cuCtxSetCurrent", r)
	}
	return f()
}

// Held returns how long calls have held sem so far: the time the backend
// was running one call or a launch's whole batch.
// Beside the wall time it tells how close the one-at-a-time section is to
// limiting a run.
func (b *Backend) Held() time.Duration { return time.Duration(b.held.Load()) }

// SemWait returns how long calls have waited for sem so far, summed over
// the waiting goroutines.
// Beside Held it tells whether callers queue for a section that is itself
// often idle: the hand-off from one holder to the next is then what limits.
func (b *Backend) SemWait() time.Duration { return time.Duration(b.semWait.Load()) }

// check turns a driver result into an error naming the driver function, and
// remembers a sticky fault: the context is unusable from then on. Only
// calls holding sem call it.
func (b *Backend) check(fn string, r Result) error {
	if r == success {
		return nil
	}
	err := fmt.Errorf("%s: %w", fn, r)
	if r.Sticky() {
		fault.CompareAndSwap(nil, &err)
	}
	return err
}

// checkf is check with the driver function's description formatted only on
// failure: formatting it for every successful call cost more than some of
// the calls.
func (b *Backend) checkf(r Result, format string, args ...any) error {
	if r == success {
		return nil
	}
	return b.check(fmt.Sprintf(format, args...), r)
}

// Usable reports the sticky kernel fault that left CUDA unusable in this
// process, if any, without a driver call. Every call checks it first; a
// caller that ran untrusted kernels (a mutant) asks it to know whether the
// process must be replaced.
func (b *Backend) Usable() error {
	if err := Fault(); err != nil {
		return fmt.Errorf("CUDA unusable in this process since an earlier kernel fault (restart the process): %w", err)
	}
	return nil
}

func opErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &cudart.Error{Op: op, Name: name, Err: err}
}

// Info describes the device. It makes no driver call.
func (b *Backend) Info() cudart.Info { return b.info }

// Properties returns device facts beyond Info. It makes no driver call.
func (b *Backend) Properties() Properties { return b.props }

// module is a loaded module; its fields are owned by whoever holds sem.
type module struct {
	owner    *Backend
	name     string
	h        cuModule
	funcs    map[string]*function
	unloaded bool
	// nparams is each entry's parameter count as its PTX declares it, so
	// that the driver is asked for exactly those parameters' sizes and never
	// probed past the last one (an API error under compute-sanitizer). nil
	// when the PTX does not parse here: then sizes are not checked.
	nparams map[string]int
}

// function is a kernel entry, with its parameter sizes when the driver can
// tell them (nil otherwise).
type function struct {
	h         cuFunction
	params    []int
	maxShared int // dynamic shared memory opted in so far
}

// LoadModule JIT-compiles PTX text with cuModuleLoadDataEx. On failure the
// error is a *JITError carrying the compiler's log.
func (b *Backend) LoadModule(name string, ptx []byte) (cudart.ModuleHandle, error) {
	return b.loadModule(b.do, name, ptx)
}

func (b *Backend) loadModule(run runner, name string, ptx []byte) (cudart.ModuleHandle, error) {
	if len(ptx) == 0 {
		return nil, opErr("load", name, cudart.Errorf(cudart.ErrInvalid, "empty PTX"))
	}
	var m *module
	err := run(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		h, elog, ilog, r := moduleLoad(ptx)
		if r != success {
			log := elog
			if ilog != "" {
				log += "\n" + ilog
			}
			_ = b.check("cuModuleLoadDataEx", r)
			return &JITError{Code: r, Log: log}
		}
		m = &module{owner: b, name: name, h: h, funcs: map[string]*function{}, nparams: entryParams(ptx)}
		return nil
	})
	if err != nil {
		return nil, opErr("load", name, err)
	}
	return m, nil
}

// entryParams returns each entry's parameter count declared in src, or nil
// when src does not parse.
func entryParams(src []byte) map[string]int {
	mod, err := ptxast.Parse(src)
	if err != nil {
		return nil
	}
	n := map[string]int{}
	for _, f := range mod.Entries() {
		n[f.Name] = len(f.Params)
	}
	return n
}

func (b *Backend) module(h cudart.ModuleHandle) (*module, error) {
	m, ok := h.(*module)
	if !ok || m == nil || m.owner != b {
		return nil, cudart.Errorf(cudart.ErrInvalid, "module handle %T is not from this GPU backend", h)
	}
	return m, nil
}

// UnloadModule unloads a module. After a kernel fault it only forgets it:
// the module goes with the context.
func (b *Backend) UnloadModule(h cudart.ModuleHandle) error { return b.unloadModule(b.do, h) }

func (b *Backend) unloadModule(run runner, h cudart.ModuleHandle) error {
	m, err := b.module(h)
	if err != nil {
		return opErr("unload", "", err)
	}
	return opErr("unload", m.name, run(func() error {
		if m.unloaded {
			return cudart.Errorf(cudart.ErrInvalid, "module already unloaded")
		}
		m.unloaded = true
		if Fault() != nil {
			return nil
		}
		return b.check("cuModuleUnload", moduleUnload(m.h))
	}))
}

// Alloc allocates n bytes of device memory (cuMemAlloc aligns to at least
// 256 bytes).
func (b *Backend) Alloc(n int) (uint64, error) { return b.alloc(b.do, n) }

func (b *Backend) alloc(run runner, n int) (uint64, error) {
	if n <= 0 {
		return 0, opErr("alloc", "", cudart.Errorf(cudart.ErrInvalid, "%d bytes", n))
	}
	var addr uint64
	err := run(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		var r Result
		addr, r = memAlloc(n)
		if r != success {
			return b.checkf(r, "cuMemAlloc(%d bytes)", n)
		}
		return nil
	})
	return addr, opErr("alloc", "", err)
}

// Free releases an allocation. After a kernel fault it does nothing: the
// memory goes with the context.
func (b *Backend) Free(addr uint64) error { return b.free(b.do, addr) }

func (b *Backend) free(run runner, addr uint64) error {
	return run(func() error {
		if Fault() != nil {
			return nil
		}
		return b.checkf(memFree(addr), "cuMemFree(%#x)", addr)
	})
}

// CopyHtoD copies src to device address dst and returns once src may be
// reused (through page-locked staging memory: see stage).
func (b *Backend) CopyHtoD(dst uint64, src []byte) error { return b.copyHtoD(b.do, dst, src) }

func (b *Backend) copyHtoD(run runner, dst uint64, src []byte) error {
	return b.transfer(run, len(src), func() error { return b.upload(dst, src) })
}

// CopyDtoH copies len(dst) bytes from device address src, after all work
// queued before it (a pending kernel's fault is reported here).
func (b *Backend) CopyDtoH(dst []byte, src uint64) error { return b.copyDtoH(b.do, dst, src) }

func (b *Backend) copyDtoH(run runner, dst []byte, src uint64) error {
	return b.transfer(run, len(dst), func() error { return b.download(dst, src) })
}

// transfer runs move, a copy of n bytes, through run while the backend is
// usable; an empty copy does nothing.
func (b *Backend) transfer(run runner, n int, move func() error) error {
	if n == 0 {
		return nil
	}
	return run(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		return move()
	})
}

// Close frees the staging memory and destroys the context. It waits up to
// Config.CloseWait for a call in progress (a kernel that never finishes); if
// that call is still running then, Close returns an error wrapping
// cudart.ErrTimeout and the context is destroyed when the call returns, or
// at process exit. Calling Close again returns the same result; every other
// method returns an error wrapping cudart.ErrClosed after Close.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		close(b.quit)
		go func() {
			b.sem <- struct{}{} // after the call in progress; never given back
			b.comp.stop()       // after the batches in flight
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if r := ctxSetCurrent(b.ctx); r == success {
				b.stage.free()
				b.pins.close()
			}
			if r := ctxDestroy(&b.ctx); r != success {
				b.closeErr = fmt.Errorf("cuCtxDestroy: %w", r)
			}
			close(b.exited)
		}()
	})
	t := time.NewTimer(b.closeWait)
	defer t.Stop()
	select {
	case <-b.exited:
		return opErr("close", "gpu", b.closeErr)
	case <-t.C:
		return opErr("close", "gpu", cudart.Errorf(cudart.ErrTimeout,
			"a driver call is still running after %v (a launch that does not complete?); the context is destroyed when that call returns, or at process exit", b.closeWait))
	}
}
