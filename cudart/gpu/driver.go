//go:build cuda

package gpu

// This file is the package's driver layer: one small Go function per driver
// operation, over gorgonia.org/cu's package-level API (not cu.Ctx), each
// returning our Result (resultOf converts cu's error). Nothing here knows
// about threads, contexts or cudart; backend.go calls these functions from
// calls holding the Backend's sem only (except the device queries and error strings, which
// the driver allows from any thread).
//
// Three things cu v0.9.6 lacks are done here in a few lines of C:
//   - cuFuncSetAttribute (max dynamic shared memory) and cuGetErrorName /
//     cuGetErrorString are called directly: they are in the cuda.h compiled
//     against, and libcuda is linked anyway (cu links -lcuda).
//   - cuFuncGetParamInfo (CUDA 12.4+ drivers, not in the CUDA 11.8 header) is
//     resolved with dlsym in the libcuda already loaded, and is optional.
//   - Both take the CUfunction that cu.Function wraps in an unexported field;
//     cfunc reads it, guarded by a compile-time size check.
// cuInit is interposed in cuinit.go.

/*
#cgo CFLAGS: -I/usr/local/cuda/include -I/usr/local/cuda/targets/x86_64-linux/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64/stubs -L/usr/lib/x86_64-linux-gnu/stubs -lcuda -ldl
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>

typedef CUresult (*ptxprop_param_info_fn)(CUfunction, size_t, size_t*, size_t*);

static ptxprop_param_info_fn ptxprop_param_info;
static int ptxprop_param_info_looked;

// ptxprop_has_param_info looks cuFuncGetParamInfo up once in the loaded
// libcuda (RTLD_NOLOAD: never loads another copy).
static int ptxprop_has_param_info(void) {
	if (!__atomic_load_n(&ptxprop_param_info_looked, __ATOMIC_ACQUIRE)) {
		void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		ptxprop_param_info_fn f = NULL;
		if (lib != NULL) {
			f = (ptxprop_param_info_fn)dlsym(lib, "cuFuncGetParamInfo");
			dlclose(lib);
		}
		__atomic_store_n(&ptxprop_param_info, f, __ATOMIC_RELEASE);
		__atomic_store_n(&ptxprop_param_info_looked, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&ptxprop_param_info, __ATOMIC_ACQUIRE) != NULL;
}

static CUresult ptxprop_func_param_info(CUfunction f, size_t i, size_t* off, size_t* size) {
	if (!ptxprop_has_param_info()) return CUDA_ERROR_NOT_SUPPORTED;
	return ptxprop_param_info(f, i, off, size);
}

static CUresult ptxprop_func_max_dynamic_shared(CUfunction f, int n) {
	return cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, n);
}

static const char* ptxprop_error_name(CUresult r) {
	const char* s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}

static const char* ptxprop_error_string(CUresult r) {
	const char* s = NULL;
	if (cuGetErrorString(r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// headerVersion is CUDA_VERSION of the cuda.h this package (and cu) was
// compiled against (e.g. 11080): its macros pick the versioned entry points
// cu calls (cuCtxCreate_v2, cuMemAlloc_v2, …), which every later driver
// (580 / CUDA 13 included) keeps exporting.
const headerVersion = int(C.CUDA_VERSION)

// Handles owned by the Backend (used by calls holding its sem): cu's wrappers of the driver's handles.
// None points to Go memory.
type (
	cuDevice   = cu.Device
	cuContext  = cu.CUContext
	cuModule   = cu.Module
	cuFunction = cu.Function
	cuEvent    = cu.Event
)

// cu.Function is struct{ fn C.CUfunction } (v0.9.6, pinned in go.mod). This
// constant does not compile (a negative uintptr) if its size ever differs
// from a pointer's, so cfunc cannot silently read a changed layout.
const _ = -(unsafe.Sizeof(cu.Function{}) ^ unsafe.Sizeof(unsafe.Pointer(nil)))

// cfunc returns the driver's CUfunction that f wraps.
func cfunc(f cuFunction) C.CUfunction { return *(*C.CUfunction)(unsafe.Pointer(&f)) }

func hasParamInfo() bool { return C.ptxprop_has_param_info() != 0 }

func errorName(r Result) string {
	if s := C.ptxprop_error_name(C.CUresult(r)); s != nil {
		return C.GoString(s)
	}
	return ""
}

func errorString(r Result) string {
	if s := C.ptxprop_error_string(C.CUresult(r)); s != nil {
		return C.GoString(s)
	}
	return ""
}

// driverVersion is cuDriverGetVersion's answer. cu.Version hides the code
// of a failure (it returns -1), reported here as ErrUnknown; the call only
// fails for a null pointer.
func driverVersion() (int, Result) {
	v := cu.Version()
	if v < 0 {
		return 0, ErrUnknown
	}
	return v, success
}

func deviceCount() (int, Result) {
	n, err := cu.NumDevices()
	return n, resultOf(err)
}

func deviceGet(ordinal int) (cuDevice, Result) {
	d, err := cu.GetDevice(ordinal)
	return d, resultOf(err)
}

func deviceName(d cuDevice) (string, Result) {
	s, err := d.Name()
	return s, resultOf(err)
}

// Device attributes read at open. cu names no constant for the opt-in
// shared memory limit; its DeviceAttribute takes the cuda.h value.
const (
	attrCCMajor         = cu.ComputeCapabilityMajor
	attrCCMinor         = cu.ComputeCapabilityMinor
	attrSMs             = cu.MultiprocessorCount
	attrL2Bytes         = cu.L2CacheSize
	attrSharedOptin     = cu.DeviceAttribute(C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	attrSharedPerBlock  = cu.MaxSharedMemoryPerBlock
	attrMaxThreadsBlock = cu.MaxThreadsPerBlock
)

// deviceUUID is d's UUID as nvidia-smi and CUDA_VISIBLE_DEVICES spell it.
func deviceUUID(d cuDevice) (string, Result) {
	u, err := d.UUID()
	if err != nil {
		return "", resultOf(err)
	}
	return "GPU-" + u.String(), success
}

// pciBusID is d's PCI address as cuDeviceGetPCIBusId writes it
// (domain:bus:device.0), or "" if an attribute cannot be read.
func pciBusID(d cuDevice) string {
	var v [3]int
	for i, a := range []cu.DeviceAttribute{cu.PciDomainID, cu.PciBusID, cu.PciDeviceID} {
		var r Result
		if v[i], r = deviceAttr(d, a); r != success {
			return ""
		}
	}
	return fmt.Sprintf("%04x:%02x:%02x.0", v[0], v[1], v[2])
}

func deviceAttr(d cuDevice, attr cu.DeviceAttribute) (int, Result) {
	v, err := d.Attribute(attr)
	return v, resultOf(err)
}

func deviceTotalMem(d cuDevice) (uint64, Result) {
	v, err := d.TotalMem()
	return uint64(v), resultOf(err)
}

// ctxCreate creates a context on d (cuCtxCreate, CU_CTX_SCHED_AUTO) and makes
// it current on the calling OS thread.
func ctxCreate(d cuDevice) (cuContext, Result) {
	c, err := d.MakeContext(cu.SchedAuto)
	return c, resultOf(err)
}

func ctxDestroy(c *cuContext) Result { return resultOf(c.Destroy()) }

// ctxSetCurrent makes c the calling OS thread's current context. A context
// may be current on several threads; calls are serialised by the Backend.
func ctxSetCurrent(c cuContext) Result { return resultOf(cu.SetCurrentContext(c)) }

// ctxPop pops the calling thread's current context.
func ctxPop() Result {
	_, err := cu.PopCurrentCtx()
	return resultOf(err)
}
func ctxSynchronize() Result { return resultOf(cu.Synchronize()) }

// jitLogBytes bounds each JIT log buffer.
const jitLogBytes = 64 << 10

// moduleLoad JIT-compiles ptx (cu copies it into C memory with a terminating
// NUL) with cuModuleLoadDataEx and returns the module with the JIT's error
// and info logs. The log buffers are C memory: the driver writes them during
// the call, and cu hands their addresses over as plain integers.
func moduleLoad(ptx []byte) (m cuModule, errLog, infoLog string, r Result) {
	elog := C.calloc(jitLogBytes+1, 1) // one byte more than declared: always NUL-terminated
	defer C.free(elog)
	ilog := C.calloc(jitLogBytes+1, 1)
	defer C.free(ilog)
	m, err := cu.LoadDataEx(string(ptx),
		&cu.JITErrorLogBuffer{Buffer: unsafe.Slice((*byte)(elog), jitLogBytes)},
		&cu.JITInfoLogBuffer{Buffer: unsafe.Slice((*byte)(ilog), jitLogBytes)},
	)
	return m, C.GoString((*C.char)(elog)), C.GoString((*C.char)(ilog)), resultOf(err)
}

func moduleUnload(m cuModule) Result { return resultOf(m.Unload()) }

func moduleFunction(m cuModule, name string) (cuFunction, Result) {
	f, err := m.Function(name)
	return f, resultOf(err)
}

func funcSetMaxDynamicShared(f cuFunction, n int) Result {
	return Result(C.ptxprop_func_max_dynamic_shared(cfunc(f), C.int(n)))
}

// funcParamInfo returns the offset and size of parameter i of f
// (ErrNotSupported when the driver predates cuFuncGetParamInfo, and
// ErrInvalidValue past the last parameter).
func funcParamInfo(f cuFunction, i int) (off, size int, r Result) {
	var o, s C.size_t
	r = Result(C.ptxprop_func_param_info(cfunc(f), C.size_t(i), &o, &s))
	return int(o), int(s), r
}

func memAlloc(n int) (uint64, Result) {
	p, err := cu.MemAlloc(int64(n))
	return uint64(p), resultOf(err)
}

func memFree(p uint64) Result { return resultOf(cu.MemFree(cu.DevicePtr(p))) }

// memcpyHtoD copies src (Go memory holding no pointers; the driver does not
// keep it past the call) to dst.
func memcpyHtoD(dst uint64, src []byte) Result {
	return resultOf(cu.MemcpyHtoD(cu.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src))))
}

func memcpyDtoH(dst []byte, src uint64) Result {
	return resultOf(cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), cu.DevicePtr(src), int64(len(dst))))
}

// memHostAlloc allocates n bytes of page-locked host memory in the current
// context (cuMemHostAlloc; cu has only the matching free).
func memHostAlloc(n int) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	r := Result(C.cuMemHostAlloc(&p, C.size_t(n), 0))
	return p, r
}

func memFreeHost(p unsafe.Pointer) Result { return resultOf(cu.MemFreeHost(p)) }

// memcpyHtoDAsync queues a copy of n bytes from page-locked host memory at
// src to dst on the legacy default stream: it is ordered with the launches,
// and src must stay untouched until the stream has passed it.
func memcpyHtoDAsync(dst uint64, src unsafe.Pointer, n int) Result {
	return resultOf(cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, int64(n), cu.NoStream))
}

// memcpyDtoHPtr copies n bytes from src to host memory at dst (page-locked
// staging memory), after all work queued before it.
func memcpyDtoHPtr(dst unsafe.Pointer, src uint64, n int) Result {
	return resultOf(cu.MemcpyDtoH(dst, cu.DevicePtr(src), int64(n)))
}

// memcpyDtoHAsync queues a copy of n bytes from src to page-locked host
// memory at dst on the legacy default stream, after the work queued before
// it; dst holds them once the stream has passed it.
func memcpyDtoHAsync(dst unsafe.Pointer, src uint64, n int) Result {
	return resultOf(cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), int64(n), cu.NoStream))
}

// memcpyHtoDPtr copies n bytes from host memory at src (page-locked staging
// memory) to dst and returns once the copy is done.
func memcpyHtoDPtr(dst uint64, src unsafe.Pointer, n int) Result {
	return resultOf(cu.MemcpyHtoD(cu.DevicePtr(dst), src, int64(n)))
}

func memsetD32(dst uint64, v uint32, words int) Result {
	return resultOf(cu.MemsetD32(cu.DevicePtr(dst), v, int64(words)))
}

func memcpyDtoD(dst, src uint64, n int) Result {
	return resultOf(cu.MemcpyDtoD(cu.DevicePtr(dst), cu.DevicePtr(src), int64(n)))
}

// maxParamBytes is the largest kernel parameter launchKernel can pass: cu
// copies 8 bytes per parameter.
const maxParamBytes = 8

// launchKernel launches f on the legacy default stream with cu's
// Function.Launch, which copies 8 bytes through each kernelParams pointer
// (argv[i] = *(*uint64)(kernelParams[i])) and gives cuLaunchKernel a pointer
// to each copy; the driver then reads exactly the kernel's parameter size
// from it. paramSlots makes that pass every parameter at its real size.
func launchKernel(f cuFunction, grid, block [3]uint32, shared int, params [][]byte) Result {
	ptrs, ok := paramSlots(params)
	if !ok {
		return ErrInvalidValue // Launch refuses these first
	}
	return resultOf(f.Launch(
		int(grid[0]), int(grid[1]), int(grid[2]),
		int(block[0]), int(block[1]), int(block[2]),
		shared, cu.NoStream, ptrs))
}

// paramSlots returns kernelParams for cu's Function.Launch: one pointer per
// parameter to its own zeroed 8-byte slot, holding the parameter's bytes
// (little-endian, as cudart marshals them) at its start. cu reads each whole
// slot — never a byte past it, whatever the parameter's size — and the driver
// reads only the parameter's own bytes from cu's copy: a 4-byte parameter
// arrives as exactly its 4 bytes. It reports false for a parameter of more
// than 8 bytes, which cu cannot pass.
func paramSlots(params [][]byte) ([]unsafe.Pointer, bool) {
	slots := make([]uint64, len(params))
	ptrs := make([]unsafe.Pointer, len(params))
	for i, p := range params {
		if len(p) > maxParamBytes {
			return nil, false
		}
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&slots[i])), 8), p)
		ptrs[i] = unsafe.Pointer(&slots[i])
	}
	return ptrs, true
}

func eventCreate() (cuEvent, Result) {
	e, err := cu.MakeEvent(cu.DefaultEvent)
	return e, resultOf(err)
}

// eventCreateUntimed creates an event that records no time (cheaper to
// record and to wait for).
func eventCreateUntimed() (cuEvent, Result) {
	e, err := cu.MakeEvent(cu.DisableTiming)
	return e, resultOf(err)
}

func eventDestroy(e cuEvent) Result     { return resultOf(cu.DestroyEvent(&e)) }
func eventRecord(e cuEvent) Result      { return resultOf(e.Record(cu.NoStream)) }
func eventSynchronize(e cuEvent) Result { return resultOf(e.Synchronize()) }

// eventElapsed is the time between two recorded events in milliseconds
// (cuEventElapsedTime's float, widened by cu).
func eventElapsed(start, stop cuEvent) (float64, Result) {
	ms, err := start.Elapsed(stop)
	return ms, resultOf(err)
}
