// Package cudart is ptxprop's device runtime: the one interface through which
// kernels are loaded, buffers allocated and copied, and launches made, whatever
// runs them.
//
// A Backend is the raw machine: the GPU driver (package cudart/gpu, build tag
// cuda) or the PTX emulator (package cudart/emu). It deals in byte addresses
// and knows nothing of guard bands. It declares what it can do beyond the
// Backend interface as a set of capabilities (Caps: fills, device-to-device
// copies, batches, page-locked memory, guard-band traps, store counts,
// timers, abort, schedule seeds, instruction limits), each with the
// interface it then implements; a Device uses exactly those. New wraps a
// Backend into a Device, which adds what every backend and every kernel
// must get:
//
//   - module cache keyed by the module's name and the SHA-256 of the PTX
//     text (a specialised PTX — a constant substituted into the text —
//     therefore has its own key);
//   - typed buffers surrounded by guard bands filled with a canary pattern
//     (NaN for floats), checked after every launch;
//   - output buffers poisoned (NaN) before every launch, so an element that
//     a kernel never writes is seen;
//   - input buffers verified unmodified after every launch;
//   - a watchdog (Options.Watchdog) that turns a launch that never returns
//     into a *TimeoutError, and leaves the Device failing every later call
//     with ErrPoisoned (both match ErrTimeout) unless the backend can abort;
//   - kernel parameters marshalled at their real size and alignment.
//
// Launch runs in phases: admit (arguments, marshalling, waiting for
// buffers in flight), prepare (poison, snapshots), plan (the checker's
// work), fly (one hand-off under the watchdog) and verdict. The checks are
// made from the host (each buffer read back), or, on a backend that copies
// device memory to device memory and does not trap guard bands (the GPU),
// by a verify kernel around the kernel under test, in the same hand-off,
// with the lock given up while it flies.
//
// Errors are *Error values wrapping one of the sentinel errors (ErrTimeout,
// ErrGuardBand, …) so callers test them with errors.Is. Nothing in this
// package panics on a runtime failure or exits the process.
//
// Backends register themselves by name (Register); Open picks one, opens
// device Options.Ordinal, and hands it Options.Backend, the backend's own
// typed options (emu.Options, gpu.Config).
package cudart
