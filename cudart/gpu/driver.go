//go:build cuda

package gpu

// This file is the package's only cgo layer: a table of CUDA driver API
// entry points resolved with dlopen/dlsym, and one small Go wrapper per entry
// point that returns the raw Result. Nothing here knows about threads,
// contexts or cudart; backend.go calls these wrappers from the context thread
// only (except the device queries and error strings, which the driver allows
// from any thread).
//
// The symbols are looked up under their versioned names (cuCtxCreate_v2,
// cuMemAlloc_v2, …): those are what cuda.h's macros bind to, they are the
// ABI a binary built against a CUDA 11.8 header expects, and every later
// driver (580 / CUDA 13 included) keeps exporting them.

/*
#cgo CFLAGS: -I/usr/local/cuda/include -I/usr/local/cuda/targets/x86_64-linux/include
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	void* lib;
	CUresult (*Init)(unsigned int);
	CUresult (*DriverGetVersion)(int*);
	CUresult (*GetErrorName)(CUresult, const char**);
	CUresult (*GetErrorString)(CUresult, const char**);
	CUresult (*DeviceGetCount)(int*);
	CUresult (*DeviceGet)(CUdevice*, int);
	CUresult (*DeviceGetName)(char*, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
	CUresult (*DeviceTotalMem)(size_t*, CUdevice);
	CUresult (*CtxCreate)(CUcontext*, unsigned int, CUdevice);
	CUresult (*CtxDestroy)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadDataEx)(CUmodule*, const void*, unsigned int, CUjit_option*, void**);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
	CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
	// cuFuncGetParamInfo appeared in CUDA 12.4 (driver 550); optional.
	CUresult (*FuncGetParamInfo)(CUfunction, size_t, size_t*, size_t*);
	CUresult (*MemAlloc)(CUdeviceptr*, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t);
	CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t);
	CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
		unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
	CUresult (*EventCreate)(CUevent*, unsigned int);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float*, CUevent, CUevent);
} drv;

#define PTXPROP_SYM(field, name) \
	if ((*(void**)(&drv.field) = dlsym(drv.lib, name)) == NULL) { \
		snprintf(err, errlen, "%s: symbol %s not found", libname, name); \
		return 1; \
	}

// ptxprop_open loads libcuda and resolves every entry point. It returns 0 on
// success, or 1 with a message in err.
static int ptxprop_open(char* err, size_t errlen) {
	static const char* names[] = {"libcuda.so.1", "libcuda.so"};
	const char* libname = names[0];
	for (int i = 0; i < 2 && drv.lib == NULL; i++) {
		libname = names[i];
		drv.lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
	}
	if (drv.lib == NULL) {
		const char* e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen libcuda.so.1 failed");
		return 1;
	}
	PTXPROP_SYM(Init, "cuInit")
	PTXPROP_SYM(DriverGetVersion, "cuDriverGetVersion")
	PTXPROP_SYM(GetErrorName, "cuGetErrorName")
	PTXPROP_SYM(GetErrorString, "cuGetErrorString")
	PTXPROP_SYM(DeviceGetCount, "cuDeviceGetCount")
	PTXPROP_SYM(DeviceGet, "cuDeviceGet")
	PTXPROP_SYM(DeviceGetName, "cuDeviceGetName")
	PTXPROP_SYM(DeviceGetAttribute, "cuDeviceGetAttribute")
	PTXPROP_SYM(DeviceTotalMem, "cuDeviceTotalMem_v2")
	PTXPROP_SYM(CtxCreate, "cuCtxCreate_v2")
	PTXPROP_SYM(CtxDestroy, "cuCtxDestroy_v2")
	PTXPROP_SYM(CtxSynchronize, "cuCtxSynchronize")
	PTXPROP_SYM(ModuleLoadDataEx, "cuModuleLoadDataEx")
	PTXPROP_SYM(ModuleUnload, "cuModuleUnload")
	PTXPROP_SYM(ModuleGetFunction, "cuModuleGetFunction")
	PTXPROP_SYM(FuncSetAttribute, "cuFuncSetAttribute")
	PTXPROP_SYM(MemAlloc, "cuMemAlloc_v2")
	PTXPROP_SYM(MemFree, "cuMemFree_v2")
	PTXPROP_SYM(MemcpyHtoD, "cuMemcpyHtoD_v2")
	PTXPROP_SYM(MemcpyDtoH, "cuMemcpyDtoH_v2")
	PTXPROP_SYM(MemcpyDtoD, "cuMemcpyDtoD_v2")
	PTXPROP_SYM(LaunchKernel, "cuLaunchKernel")
	PTXPROP_SYM(EventCreate, "cuEventCreate")
	PTXPROP_SYM(EventDestroy, "cuEventDestroy_v2")
	PTXPROP_SYM(EventRecord, "cuEventRecord")
	PTXPROP_SYM(EventSynchronize, "cuEventSynchronize")
	PTXPROP_SYM(EventElapsedTime, "cuEventElapsedTime")
	*(void**)(&drv.FuncGetParamInfo) = dlsym(drv.lib, "cuFuncGetParamInfo");
	return 0;
}

static int ptxprop_loaded(void) { return drv.GetErrorName != NULL; }
static int ptxprop_has_param_info(void) { return drv.FuncGetParamInfo != NULL; }

// ptxprop_lib_path returns the file libcuda was loaded from, or NULL.
static const char* ptxprop_lib_path(void) {
	Dl_info info;
	if (drv.Init == NULL || dladdr(*(void**)(&drv.Init), &info) == 0) return NULL;
	return info.dli_fname;
}

static const char* ptxprop_error_name(CUresult r) {
	const char* s = NULL;
	if (drv.GetErrorName == NULL || drv.GetErrorName(r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}

static const char* ptxprop_error_string(CUresult r) {
	const char* s = NULL;
	if (drv.GetErrorString == NULL || drv.GetErrorString(r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}

static CUresult ptxprop_init(void) { return drv.Init(0); }
static CUresult ptxprop_driver_version(int* v) { return drv.DriverGetVersion(v); }
static CUresult ptxprop_device_count(int* n) { return drv.DeviceGetCount(n); }
static CUresult ptxprop_device_get(CUdevice* d, int ordinal) { return drv.DeviceGet(d, ordinal); }
static CUresult ptxprop_device_name(char* buf, int n, CUdevice d) { return drv.DeviceGetName(buf, n, d); }
static CUresult ptxprop_device_attr(int* v, CUdevice_attribute a, CUdevice d) { return drv.DeviceGetAttribute(v, a, d); }
static CUresult ptxprop_device_total_mem(size_t* v, CUdevice d) { return drv.DeviceTotalMem(v, d); }
static CUresult ptxprop_ctx_create(CUcontext* c, CUdevice d) { return drv.CtxCreate(c, CU_CTX_SCHED_AUTO, d); }
static CUresult ptxprop_ctx_destroy(CUcontext c) { return drv.CtxDestroy(c); }
static CUresult ptxprop_ctx_synchronize(void) { return drv.CtxSynchronize(); }

// ptxprop_module_load JIT-compiles a NUL-terminated PTX image, capturing the
// JIT's error and info logs into the caller's buffers.
static CUresult ptxprop_module_load(CUmodule* m, const void* image, char* elog, size_t elen, char* ilog, size_t ilen) {
	CUjit_option opt[4] = {
		CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
		CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
	};
	void* val[4] = {elog, (void*)(uintptr_t)elen, ilog, (void*)(uintptr_t)ilen};
	return drv.ModuleLoadDataEx(m, image, 4, opt, val);
}

static CUresult ptxprop_module_unload(CUmodule m) { return drv.ModuleUnload(m); }
static CUresult ptxprop_module_function(CUfunction* f, CUmodule m, const char* name) { return drv.ModuleGetFunction(f, m, name); }
static CUresult ptxprop_func_max_dynamic_shared(CUfunction f, int n) {
	return drv.FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, n);
}
static CUresult ptxprop_func_param_info(CUfunction f, size_t i, size_t* off, size_t* size) {
	if (drv.FuncGetParamInfo == NULL) return CUDA_ERROR_NOT_SUPPORTED;
	return drv.FuncGetParamInfo(f, i, off, size);
}
static CUresult ptxprop_mem_alloc(CUdeviceptr* p, size_t n) { return drv.MemAlloc(p, n); }
static CUresult ptxprop_mem_free(CUdeviceptr p) { return drv.MemFree(p); }
static CUresult ptxprop_memcpy_htod(CUdeviceptr dst, const void* src, size_t n) { return drv.MemcpyHtoD(dst, src, n); }
static CUresult ptxprop_memcpy_dtoh(void* dst, CUdeviceptr src, size_t n) { return drv.MemcpyDtoH(dst, src, n); }
static CUresult ptxprop_memcpy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n) { return drv.MemcpyDtoD(dst, src, n); }

// ptxprop_launch launches on the legacy default stream; params is an array of
// pointers to each parameter's bytes (C memory), as cuLaunchKernel wants.
static CUresult ptxprop_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, void** params) {
	return drv.LaunchKernel(f, gx, gy, gz, bx, by, bz, shared, (CUstream)0, params, NULL);
}

static CUresult ptxprop_event_create(CUevent* e) { return drv.EventCreate(e, CU_EVENT_DEFAULT); }
static CUresult ptxprop_event_destroy(CUevent e) { return drv.EventDestroy(e); }
static CUresult ptxprop_event_record(CUevent e) { return drv.EventRecord(e, (CUstream)0); }
static CUresult ptxprop_event_synchronize(CUevent e) { return drv.EventSynchronize(e); }
static CUresult ptxprop_event_elapsed(float* ms, CUevent a, CUevent b) { return drv.EventElapsedTime(ms, a, b); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// headerVersion is CUDA_VERSION of the cuda.h this package was compiled
// against (e.g. 11080); the ABI of the entry points it resolves.
const headerVersion = int(C.CUDA_VERSION)

// Handles owned by the context thread. They are C pointers kept in Go values;
// none points to Go memory.
type (
	cuDevice   = C.CUdevice
	cuContext  = C.CUcontext
	cuModule   = C.CUmodule
	cuFunction = C.CUfunction
	cuEvent    = C.CUevent
)

var (
	loadOnce sync.Once
	loadErr  error
)

// loadDriver resolves libcuda once per process and calls cuInit. It never
// exits the process: a missing library or a failed cuInit is an error.
func loadDriver() error {
	loadOnce.Do(func() {
		var buf [512]C.char
		if C.ptxprop_open(&buf[0], C.size_t(len(buf))) != 0 {
			loadErr = fmt.Errorf("load libcuda: %s", C.GoString(&buf[0]))
			return
		}
		if r := Result(C.ptxprop_init()); r != success {
			loadErr = fmt.Errorf("cuInit: %w", r)
		}
	})
	return loadErr
}

func driverLoaded() bool { return C.ptxprop_loaded() != 0 }
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

// libraryPath is the file libcuda was loaded from ("" if unknown).
func libraryPath() string {
	if s := C.ptxprop_lib_path(); s != nil {
		return C.GoString(s)
	}
	return ""
}

func driverVersion() (int, Result) {
	var v C.int
	r := Result(C.ptxprop_driver_version(&v))
	return int(v), r
}

func deviceCount() (int, Result) {
	var n C.int
	r := Result(C.ptxprop_device_count(&n))
	return int(n), r
}

func deviceGet(ordinal int) (cuDevice, Result) {
	var d C.CUdevice
	r := Result(C.ptxprop_device_get(&d, C.int(ordinal)))
	return d, r
}

func deviceName(d cuDevice) (string, Result) {
	var buf [256]C.char
	r := Result(C.ptxprop_device_name(&buf[0], C.int(len(buf)), d))
	return C.GoString(&buf[0]), r
}

// Device attributes read at open.
const (
	attrCCMajor         = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrCCMinor         = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	attrSMs             = C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	attrL2Bytes         = C.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
	attrSharedOptin     = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	attrSharedPerBlock  = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
	attrMaxThreadsBlock = C.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
)

func deviceAttr(d cuDevice, attr int) (int, Result) {
	var v C.int
	r := Result(C.ptxprop_device_attr(&v, C.CUdevice_attribute(attr), d))
	return int(v), r
}

func deviceTotalMem(d cuDevice) (uint64, Result) {
	var v C.size_t
	r := Result(C.ptxprop_device_total_mem(&v, d))
	return uint64(v), r
}

// ctxCreate creates a context on d and makes it current on the calling OS
// thread.
func ctxCreate(d cuDevice) (cuContext, Result) {
	var c C.CUcontext
	r := Result(C.ptxprop_ctx_create(&c, d))
	return c, r
}

func ctxDestroy(c cuContext) Result { return Result(C.ptxprop_ctx_destroy(c)) }
func ctxSynchronize() Result        { return Result(C.ptxprop_ctx_synchronize()) }

// jitLogBytes bounds each JIT log buffer.
const jitLogBytes = 64 << 10

// moduleLoad JIT-compiles ptx (copied into C memory with a terminating NUL)
// and returns the module with the JIT's error and info logs.
func moduleLoad(ptx []byte) (m cuModule, errLog, infoLog string, r Result) {
	img := C.malloc(C.size_t(len(ptx) + 1))
	defer C.free(img)
	dst := unsafe.Slice((*byte)(img), len(ptx)+1)
	copy(dst, ptx)
	dst[len(ptx)] = 0
	elog := (*C.char)(C.calloc(jitLogBytes, 1))
	defer C.free(unsafe.Pointer(elog))
	ilog := (*C.char)(C.calloc(jitLogBytes, 1))
	defer C.free(unsafe.Pointer(ilog))
	r = Result(C.ptxprop_module_load(&m, img, elog, jitLogBytes, ilog, jitLogBytes))
	return m, C.GoString(elog), C.GoString(ilog), r
}

func moduleUnload(m cuModule) Result { return Result(C.ptxprop_module_unload(m)) }

func moduleFunction(m cuModule, name string) (cuFunction, Result) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	r := Result(C.ptxprop_module_function(&f, m, cs))
	return f, r
}

func funcSetMaxDynamicShared(f cuFunction, n int) Result {
	return Result(C.ptxprop_func_max_dynamic_shared(f, C.int(n)))
}

// funcParamInfo returns the offset and size of parameter i of f
// (ErrNotSupported when the driver predates cuFuncGetParamInfo, and
// ErrInvalidValue past the last parameter).
func funcParamInfo(f cuFunction, i int) (off, size int, r Result) {
	var o, s C.size_t
	r = Result(C.ptxprop_func_param_info(f, C.size_t(i), &o, &s))
	return int(o), int(s), r
}

func memAlloc(n int) (uint64, Result) {
	var p C.CUdeviceptr
	r := Result(C.ptxprop_mem_alloc(&p, C.size_t(n)))
	return uint64(p), r
}

func memFree(p uint64) Result { return Result(C.ptxprop_mem_free(C.CUdeviceptr(p))) }

// memcpyHtoD copies src (Go memory holding no pointers; the driver does not
// keep it past the call) to dst.
func memcpyHtoD(dst uint64, src []byte) Result {
	return Result(C.ptxprop_memcpy_htod(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

func memcpyDtoH(dst []byte, src uint64) Result {
	return Result(C.ptxprop_memcpy_dtoh(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
}

func memcpyDtoD(dst, src uint64, n int) Result {
	return Result(C.ptxprop_memcpy_dtod(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}

// launchKernel marshals params into one C allocation — an array of pointers
// followed by an 8-byte-aligned slot per parameter holding exactly its bytes —
// and launches f on the default stream. cuLaunchKernel copies the values
// before it returns, so the allocation is freed at once.
func launchKernel(f cuFunction, grid, block [3]uint32, shared int, params [][]byte) Result {
	var argv *unsafe.Pointer
	if n := len(params); n > 0 {
		size := n * 8
		for _, p := range params {
			size += (len(p) + 7) &^ 7
		}
		mem := C.calloc(C.size_t(size), 1)
		if mem == nil {
			return ErrOutOfMemory
		}
		defer C.free(mem)
		ptrs := unsafe.Slice((*unsafe.Pointer)(mem), n)
		off := n * 8
		for i, p := range params {
			slot := unsafe.Add(mem, off)
			copy(unsafe.Slice((*byte)(slot), len(p)), p)
			ptrs[i] = slot
			off += (len(p) + 7) &^ 7
		}
		argv = (*unsafe.Pointer)(mem)
	}
	return Result(C.ptxprop_launch(f,
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(shared), argv))
}

func eventCreate() (cuEvent, Result) {
	var e C.CUevent
	r := Result(C.ptxprop_event_create(&e))
	return e, r
}

func eventDestroy(e cuEvent) Result     { return Result(C.ptxprop_event_destroy(e)) }
func eventRecord(e cuEvent) Result      { return Result(C.ptxprop_event_record(e)) }
func eventSynchronize(e cuEvent) Result { return Result(C.ptxprop_event_synchronize(e)) }

func eventElapsed(start, stop cuEvent) (float32, Result) {
	var ms C.float
	r := Result(C.ptxprop_event_elapsed(&ms, start, stop))
	return float32(ms), r
}
