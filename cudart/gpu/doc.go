// Package gpu is ptxprop's GPU backend: a cudart.Backend over the CUDA
// driver API, with the capabilities Caps lists (fills, device-to-device
// copies, batches, page-locked memory, event timers). Its code is built
// only with the build tag cuda (this documentation always); it registers
// itself as "gpu" with cudart.Register in its init, and registering
// touches no hardware. cudart.Open("gpu", opts) opens device opts.Ordinal,
// with a Config in opts.Backend for the rest. (The driver itself is loaded with the program and
// initialised by gorgonia.org/cu's init, which cannot fail the program: see
// below.)
//
// # Over gorgonia.org/cu
//
// The driver calls go through gorgonia.org/cu v0.9.6, by its package-level
// API only (driver.go: cu.GetDevice, Device.MakeContext, LoadDataEx with the
// JIT log options, Module.Function, MemAlloc, MemcpyHtoD, Function.Launch,
// Synchronize, MakeEvent, Event.Elapsed, …), each call on a locked OS
// thread with the context made current there (see Thread model). cu's Ctx is
// not used: it keeps errors in a field that the next call overwrites and
// panics when context creation fails, and its design — one goroutine locked
// to an OS thread owns the context and serves closures — costs two thread
// wake-ups per call. Every cu error is its
// cuResult, an int holding the CUresult; resultOf turns it into this
// package's Result.
//
// Where cu falls short, a few lines of C fill in:
//
//   - cu's Function.Launch copies 8 bytes through every kernelParams pointer,
//     whatever the parameter's size. Each parameter is therefore given its
//     own zeroed 8-byte slot holding its little-endian bytes at the start
//     (paramSlots), so nothing is over-read and the driver receives exactly
//     the parameter's bytes; parameters are 1 to 8 bytes (cudart.Backend's
//     contract), a larger one is refused with cudart.ErrInvalid.
//   - cu has no cuFuncSetAttribute (the dynamic shared memory opt-in) and no
//     cuGetErrorName/cuGetErrorString: they are called directly, as cu links
//     libcuda anyway. cuFuncGetParamInfo (CUDA 12.4+ drivers; absent from the
//     CUDA 11.8 header) is looked up with dlsym in the libcuda already loaded
//     and used only when present. Both function calls need the CUfunction in
//     cu.Function's unexported field; a compile-time size check guards the
//     read.
//
// # cu's init, and why a binary built with it still runs without a GPU
//
// cu's package init calls cuInit and, when that fails, prints a message and
// calls os.Exit(1) — before main, in every program that links cu, on every
// machine with the driver library but no usable device (a CI node, a
// container without the device, CUDA_VISIBLE_DEVICES=""). A library that must
// report "no device" as an error, and test binaries that must fall back to
// the emulator, cannot allow that. So this package defines cuInit itself
// (cuinit.go), with hidden visibility: linked into the same executable as
// cu's C code, the definition binds cu's call (an object's definition wins
// over a shared library's at link time, with the external and the Go
// internal linker alike) without being exported to libcuda or any other
// library. It calls the driver's cuInit (found with dlsym(RTLD_NEXT)),
// records the result and returns CUDA_SUCCESS, so cu's init returns and the
// process lives. Open reports a recorded failure as an error wrapping
// cudart.ErrNoDevice and the driver's code, e.g. "cudart: open gpu: no
// device: cuInit (called by gorgonia.org/cu's init): CUDA_ERROR_NO_DEVICE
// (100): no CUDA-capable device is detected". TestInitInterposed checks that
// cu's call went through the interposer, TestNoDevice that Open then fails
// cleanly; both need no GPU. Nothing in this package exits the process or
// panics on a runtime failure; the remaining ways to lose the process are a
// missing libcuda.so.1 at start (below) and a broken driver crashing inside
// a driver call.
//
// # Thread model
//
// Open creates the context with cuCtxCreate (cu's Device.MakeContext; not
// the device's primary context: each Backend owns its modules, allocations
// and lifetime, and Close destroys exactly what it made) and pops it from the
// creating thread. A CUDA context is current per OS thread, and may be
// current on several. Every driver call that needs it runs in do: the caller
// takes the backend's one-slot semaphore (waiting in arrival order; Close
// makes waiters return cudart.ErrClosed), locks its goroutine to its OS
// thread, makes the context current there with cuCtxSetCurrent, runs the
// call, then unlocks and gives the semaphore back. So calls run one at a
// time, each with its own error, from any number of goroutines, and none
// needs another thread to wake up: an earlier design ran them all on one
// goroutine locked to its thread, and the two thread wake-ups per call (the
// request, the reply) cost more on the H200 machine than a small checked
// launch's device work. Close takes the semaphore for good (after the call
// in progress), frees the staging memory and destroys the context.
//
// Copies between host and device go through page-locked staging memory
// (stage.go), except those from or into page-locked buffers that Pinned
// handed out (pin.go, cudart.Pinner), which go directly: a Device builds a
// checked launch's upload and receives its copy back in those, so the
// copying is done by the launching goroutine, not inside the one-at-a-time
// section. Inside Batch uploads, and copies back into those buffers, are
// only queued, so a checked launch waits for the device once, at its end,
// and not holding the semaphore: the batch records an event behind its
// work, gives the semaphore back, and one goroutine of the Backend waits
// for the batches' events in order (complete.go), so the device runs one
// batch while the host queues the next.
//
// # Launches
//
// Launch puts each of the cudart wrapper's parameters (1 to 8 bytes) in its
// own 8-byte slot, launches with cu's Function.Launch (cuLaunchKernel) on the
// legacy default stream, and waits with cuCtxSynchronize, so the launch that
// faulted reports the fault. Inside Batch (a Device's launch with its
// checks: fills, copies, the kernel, the verify pass, in one hand-off)
// launches are only queued, a copy back into Go memory waits for them and
// reports a fault, and the batch ends with a wait for its event, which
// reports a fault of the work queued after that. Where the
// driver has cuFuncGetParamInfo (CUDA 12.4+ drivers) the parameter count and
// every size are checked against the kernel's signature first: the count
// comes from the module's PTX, and the driver is asked for the size of each
// declared parameter only, so the check provokes no API error. Dynamic
// shared memory is opted into on demand. Elapsed records a CUDA event, runs
// its launch function with launches only queued (no synchronisation), records
// a second event, waits once, and returns the device time between them;
// meanwhile every Launch on the backend is asynchronous, whoever makes it.
//
// # Errors
//
// Driver failures wrap a Result (the CUresult) that names the code and the
// driver's description, e.g. "cudart: launch store: cuCtxSynchronize:
// CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was
// encountered". Test a code with errors.Is(err, gpu.ErrIllegalAddress), or a
// class with the cudart sentinels (Result.Is maps every code to
// cudart.ErrDriver, kernel faults to cudart.ErrLaunch, ILLEGAL_ADDRESS also to
// cudart.ErrOutOfBounds, …). A failed module load is a *JITError holding the
// JIT compiler's log. Launch, LoadModule, Alloc, Elapsed and Close return
// *cudart.Error values named after the operation; Free, CopyHtoD, CopyDtoH
// return the bare driver error naming the driver function and address, which
// the cudart Device wraps with the buffer's name.
//
// A kernel fault (Result.Sticky: illegal address, trap, misaligned access, …)
// leaves CUDA unusable in the whole process, not only in the faulting
// context: on the H200 with driver 580, after an illegal address in one
// context, cuCtxCreate for a new one failed with the same code. The package
// records the first fault (Fault); from then on every call of every Backend
// fails with it, Open fails with an error wrapping both cudart.ErrNoDevice
// and the fault, Free and UnloadModule become no-ops, and Close still
// destroys its context. Only a new process recovers: a test that provokes a
// fault must run in a child process (as this package's own tests do).
//
// # Watchdog and hung kernels
//
// The backend declares no cudart.CapAbort: no driver call stops a
// running kernel. When the cudart Device's watchdog fires, the Device is
// marked poisoned while the call is still waiting in cuCtxSynchronize (on
// the watchdog's goroutine, holding the semaphore). Close then waits up to Config.CloseWait for the kernel to
// end; if it does not, Close returns an error wrapping cudart.ErrTimeout
// without blocking further, and the context is destroyed when the kernel
// ends, or by the driver at process exit.
//
// # Device facts
//
// Info reports the device name, its ordinal, UUID and PCI address (the
// latter two left empty where the driver cannot tell), compute capability, SM count, the CUDA
// version of the driver API (cuDriverGetVersion, "13.0") as CUDA, and the
// kernel driver's version ("580.159.03", from /proc/driver/nvidia/version or
// else the file name libcuda.so.1 resolves to) as Driver, which falls back to
// the CUDA version when neither is readable. CopyBandwidth is measured once
// at Open: device-to-device cuMemcpyDtoD copies of 1 GiB (Config.CopyBytes),
// best of five after a warm-up, timed with CUDA events, reported as bytes
// read plus bytes written per second. Properties has the rest (memory, L2,
// shared memory limits, library path, the header version compiled against).
//
// # Building and linking
//
// cgo needs cuda.h: the #cgo directives look in /usr/local/cuda/include, and
// the compiler's default paths find the Debian toolkit's /usr/include/cuda.h;
// set CGO_CFLAGS=-I… for any other place (make gpu-bin does). It is built
// and tested against the CUDA 11.8 header (Debian's), whose macros bind cu's
// calls to versioned entry points (cuCtxCreate_v2, cuMemAlloc_v2, …) that
// later drivers keep exporting; cu v0.9.6 predates CUDA 12, and building it
// against a newer header is untried.
//
// cu links -lcuda, so a binary built with this package records libcuda.so.1
// as needed and the dynamic loader refuses to start it where no driver
// library is installed at all; where the library is present but no GPU is
// usable it starts, and Open fails as described above. Linking needs a
// libcuda.so: the toolkit's stub (…/lib64/stubs or
// /usr/lib/x86_64-linux-gnu/stubs, both searched by the #cgo directives,
// and what make gpu-bin links against) serves, since it carries the same
// soname; no driver is needed to build. Nothing else of ptxprop imports cu:
// without the cuda tag no file of this package is built, and nothing needs
// cuda.h or libcuda.
package gpu
