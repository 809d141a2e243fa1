// Package cudart is ptxprop's device runtime: the one interface through which
// kernels are loaded, buffers allocated and copied, and launches made, whatever
// runs them.
//
// A Backend is the raw machine: the GPU driver (package cudart/gpu, build tag
// cuda) or the PTX emulator (package cudart/emu). It deals in byte addresses
// and knows nothing of guard bands. New wraps a Backend into a Device, which
// adds what every backend and every kernel must get:
//
//   - module cache keyed by the module's name and the SHA-256 of the PTX
//     text (a specialised PTX — a constant substituted into the text —
//     therefore has its own key);
//   - typed buffers surrounded by guard bands filled with a canary pattern
//     (NaN for floats), checked after every launch;
//   - output buffers poisoned (NaN) before every launch, so an element that
//     a kernel never writes is seen;
//   - input buffers verified unmodified after every launch;
//   - a watchdog that turns a launch that never returns into ErrTimeout;
//   - kernel parameters marshalled at their real size and alignment.
//
// Errors are *Error values wrapping one of the sentinel errors (ErrTimeout,
// ErrGuardBand, …) so callers test them with errors.Is. Nothing in this
// package panics on a runtime failure or exits the process.
//
// Backends register themselves by name (Register); Open picks one.
package cudart
