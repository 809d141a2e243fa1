package cudart

import (
	"fmt"
	"strings"
	"time"
)

// Backend is a raw machine that runs PTX: the GPU driver or the emulator.
// Addresses are device byte addresses. A Backend need not be safe for
// concurrent use: the Device serialises every call. New wraps a Backend into
// a Device.
type Backend interface {
	// Info describes the machine.
	Info() Info
	// Capabilities declares what the backend can do beyond this interface:
	// for each capability it has, it implements the interface named with
	// it (see Caps). The Device decides how it checks launches from these,
	// and asserts no interface the backend has not declared.
	Capabilities() Caps
	// LoadModule loads (JIT-compiles, or parses) a PTX module.
	LoadModule(name string, ptx []byte) (ModuleHandle, error)
	// UnloadModule releases a module.
	UnloadModule(m ModuleHandle) error
	// Alloc returns the address of a new allocation of n bytes, aligned to at
	// least 256 bytes.
	Alloc(n int) (uint64, error)
	// Free releases an allocation made by Alloc.
	Free(addr uint64) error
	// CopyHtoD copies src to device address dst.
	CopyHtoD(dst uint64, src []byte) error
	// CopyDtoH copies len(dst) bytes from device address src.
	CopyDtoH(dst []byte, src uint64) error
	// Launch runs entry of m with params, each marshalled at its real size
	// (4 or 8 bytes, little-endian; pointers as 8-byte addresses), and
	// returns once the kernel has completed or failed.
	Launch(m ModuleHandle, entry string, g Geometry, params [][]byte) error
	// Close releases the machine.
	Close() error
}

// ModuleHandle is a backend's loaded module.
type ModuleHandle any

// Caps is a set of capabilities a backend declares (Backend.Capabilities).
type Caps uint32

// The capabilities, each with the interface a backend that declares it
// implements.
const (
	// CapFill: Filler. Canaries and poison are written without a host copy.
	CapFill Caps = 1 << iota
	// CapCopyDtoD: DeviceCopier. Unless the backend also traps guard-band
	// accesses (CapProtect), a Device checks large buffers on the device,
	// with the verify kernel (verify.go), in one hand-off with the launch.
	CapCopyDtoD
	// CapBatch: Batcher. A sequence of calls runs in one hand-off.
	CapBatch
	// CapPinned: Pinner. Page-locked host memory for the verify passes'
	// uploads and copies back.
	CapPinned
	// CapProtect: Protector. Guard bands are trapped as they are touched
	// (and allocations named in diagnostics).
	CapProtect
	// CapWriteCounts: WriteRecorder. Per-element store counts of the last
	// launch.
	CapWriteCounts
	// CapTimer: Timer. Launches timed on the device.
	CapTimer
	// CapAbort: Aborter. A launch that outlives the watchdog can be stopped.
	CapAbort
	// CapSchedule: Scheduler. The order threads and blocks run in follows a
	// seed.
	CapSchedule
	// CapInstructionLimit: InstructionLimiter. A launch fails with
	// ErrTimeout after a number of thread-instructions.
	CapInstructionLimit
	// CapDependence: DependenceTracker. Which input elements each stored
	// value was computed from (the emulator).
	CapDependence
)

var capNames = []string{"fill", "copy-dtod", "batch", "pinned", "protect", "write-counts", "timer", "abort", "schedule", "instruction-limit", "dependence"}

// Has reports whether c includes every capability of x.
func (c Caps) Has(x Caps) bool { return c&x == x }

func (c Caps) String() string {
	var names []string
	for i, n := range capNames {
		if c&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if rest := c &^ (1<<len(capNames) - 1); rest != 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(rest)))
	}
	return "{" + strings.Join(names, ",") + "}"
}

// missing returns the capabilities b declares without implementing their
// interfaces.
func missing(b Backend) Caps {
	caps := b.Capabilities()
	var bad Caps
	for _, c := range []struct {
		cap Caps
		ok  bool
	}{
		{CapFill, is[Filler](b)}, {CapCopyDtoD, is[DeviceCopier](b)}, {CapBatch, is[Batcher](b)},
		{CapPinned, is[Pinner](b)}, {CapProtect, is[Protector](b)}, {CapWriteCounts, is[WriteRecorder](b)},
		{CapTimer, is[Timer](b)}, {CapAbort, is[Aborter](b)}, {CapSchedule, is[Scheduler](b)},
		{CapInstructionLimit, is[InstructionLimiter](b)},
		{CapDependence, is[DependenceTracker](b)},
	} {
		if caps.Has(c.cap) && !c.ok {
			bad |= c.cap
		}
	}
	return bad
}

func is[I any](b Backend) bool { _, ok := b.(I); return ok }

// Filler (CapFill) fills device memory without a host copy (cuMemsetD32 on
// the GPU). Fill32 sets words consecutive 32-bit words from addr to v; the
// words count as written.
type Filler interface {
	Fill32(addr uint64, words int, v uint32) error
}

// DeviceCopier (CapCopyDtoD) copies device memory to device memory.
type DeviceCopier interface {
	CopyDtoD(dst, src uint64, n int) error
}

// Batcher (CapBatch) is a backend where each call has a fixed cost of its
// own (the GPU backend: taking its lock, making the context current,
// waiting for the device). Batch runs f once, inside one such call, with a
// Backend whose methods run directly, so a sequence of calls pays that cost
// once; the GPU backend also only queues the launches and uploads inside it
// and waits once. f must use only the Backend it is given, and must not
// keep it after returning. That Backend declares the receiver's
// capabilities except CapBatch, CapPinned and CapTimer, and implements
// their interfaces.
type Batcher interface {
	Batch(f func(Backend) error) error
}

// Pinner (CapPinned) is a backend with page-locked host memory (the GPU
// backend): a copy from or into a slice that Pinned returned goes straight
// between that memory and the device, with no staging copy of its own. A
// Device builds its verify pass's upload and receives its copy back in such
// memory, so the bytes are copied by the launching goroutine, outside the
// backend's serialised calls.
type Pinner interface {
	// Pinned returns n bytes of page-locked host memory, or nil when none
	// can be had (the caller then uses Go memory). It must not be called
	// from inside a Batch's function. Inside a Batch a copy from or into it
	// may only be queued: its bytes must not change, and a copy's bytes are
	// not there, until Batch has returned.
	Pinned(n int) []byte
	// Unpin gives back a slice that Pinned returned, once no copy queued
	// or in progress uses it.
	Unpin(b []byte)
}

// Protector (CapProtect) traps accesses to a region, such as the emulator:
// the Device marks every guard band so that a kernel touching one is
// reported at the faulting instruction, not only afterwards, and names its
// buffers for the backend's diagnostics.
type Protector interface {
	Protect(addr uint64, n int, what string)
	Unprotect(addr uint64)
	// Label names the buffer at [addr, addr+n) in diagnostics (the
	// emulator's out-of-bounds reports).
	Label(addr uint64, n int, name string)
}

// WriteRecorder (CapWriteCounts) counts, per launch, how many times each
// byte range was stored to (the emulator). WriteCounts returns one count per
// element of size elem in [addr, addr+n) for the last launch.
type WriteRecorder interface {
	WriteCounts(addr uint64, n, elem int) ([]uint32, error)
}

// Timer (CapTimer) times launches on the device itself (CUDA events).
// Elapsed runs launch iters times between two device events and returns the
// device time of all of them.
type Timer interface {
	Elapsed(iters int, launch func() error) (time.Duration, error)
}

// Aborter (CapAbort) stops a running launch (the emulator). After a
// watchdog timeout the Device calls Abort; a backend that cannot abort
// leaves the Device unusable (ErrPoisoned).
type Aborter interface {
	Abort()
}

// Scheduler (CapSchedule) runs threads and blocks in an order that follows
// a seed (the emulator): 0 is the canonical order.
type Scheduler interface {
	SetSeed(seed int64)
}

// InstructionLimiter (CapInstructionLimit) bounds the thread-instructions
// of one launch (0: the backend's own bound, grown from the launch;
// negative: unlimited); a launch past the bound fails with
// ErrTimeout. SetInstructionLimit returns the previous bound.
type InstructionLimiter interface {
	SetInstructionLimit(n int64) int64
}

// BackendOptions are a backend's own options, given to Open in
// Options.Backend (emu.Options, gpu.Config). BackendName names the backend
// they are for.
type BackendOptions interface {
	BackendName() string
}
