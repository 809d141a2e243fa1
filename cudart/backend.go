package cudart

import "time"

// Backend is a raw machine that runs PTX: the GPU driver or the emulator.
// Addresses are device byte addresses. A Backend need not be safe for
// concurrent use: the Device serialises every call. New wraps a Backend into
// a Device.
type Backend interface {
	// Info describes the machine.
	Info() Info
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

// Filler is implemented by backends that fill device memory without a host
// copy (cuMemsetD32 on the GPU). Fill32 sets words consecutive 32-bit words
// from addr to v; the words count as written.
type Filler interface {
	Fill32(addr uint64, words int, v uint32) error
}

// Batcher is implemented by backends where each call has a fixed cost of
// its own (the GPU backend: taking its lock, making the context current,
// waiting for the device). Batch runs f once, inside one such call, with a
// Backend whose methods run directly, so a sequence of calls pays that cost
// once; the GPU backend also only queues the launches and uploads inside it
// and waits once. f must use only the Backend it is given, and
// must not keep it after returning. That Backend implements the same
// optional interfaces as the receiver (Filler, Timer, …).
type Batcher interface {
	Batch(f func(Backend) error) error
}

// LaterReader is implemented by a Backend that a Batcher gives its function
// when copies back may wait for the batch's end: CopyDtoHLater queues a copy
// of len(dst) bytes from src, made after everything queued before it, and
// dst holds the bytes once Batch has returned nil. Until then dst must not
// be read. The backend may then run several batches (of several callers)
// before waiting for the device once.
type LaterReader interface {
	CopyDtoHLater(dst []byte, src uint64) error
}

// Pinner is implemented by a Backend with page-locked host memory (the GPU
// backend): a copy from or into a slice that Pinned returned goes straight
// between that memory and the device, with no staging copy of its own. A
// Device builds its verify pass's upload and receives its copy back in such
// memory, so the bytes are copied by the launching goroutine, outside the
// backend's serialised calls.
type Pinner interface {
	// Pinned returns n bytes of page-locked host memory, or nil when none
	// can be had (the caller then uses Go memory). It must not be called
	// from inside a Batch's function. Inside a Batch a copy from it may only
	// be queued: its bytes must not change until Batch has returned.
	Pinned(n int) []byte
	// Unpin gives back a slice that Pinned returned, once no copy queued
	// or in progress uses it.
	Unpin(b []byte)
}

// ModuleHandle is a backend's loaded module.
type ModuleHandle any

// Protector is implemented by backends that can trap accesses to a region,
// such as the emulator: the Device marks every guard band so that a kernel
// touching one is reported at the faulting instruction, not only afterwards.
type Protector interface {
	Protect(addr uint64, n int, what string)
	Unprotect(addr uint64)
}

// Labeler is implemented by backends that name allocations in their
// diagnostics (the emulator's out-of-bounds reports).
type Labeler interface {
	Label(addr uint64, n int, name string)
}

// WriteRecorder is implemented by backends that count, per launch, how many
// times each byte range was stored to (the emulator). WriteCounts returns one
// count per element of size elem in [addr, addr+n) for the last launch.
type WriteRecorder interface {
	WriteCounts(addr uint64, n, elem int) ([]uint32, error)
}

// Timer is implemented by backends that time launches on the device itself
// (CUDA events). Elapsed runs launch iters times between two device events
// and returns the device time of all of them.
type Timer interface {
	Elapsed(iters int, launch func() error) (time.Duration, error)
}

// Aborter is implemented by backends whose running launch can be stopped
// (the emulator). After a watchdog timeout the Device calls Abort; a backend
// that cannot abort leaves the Device unusable (ErrPoisoned).
type Aborter interface {
	Abort()
}
