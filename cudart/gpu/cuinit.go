//go:build cuda

package gpu

// This file keeps gorgonia.org/cu's package init from ending the process.
//
// cu's init calls cuInit(0) and, when it fails, prints a message and calls
// os.Exit(1) (cu.go, v0.9.6) — on every machine that has the driver library
// but no usable GPU, before main runs. The C function cuInit below is linked
// into the executable together with cu's C code, and an object file's
// definition takes precedence over a shared library's when the linker binds a
// reference, so cu's call to cuInit lands here (with both the external and
// the Go internal linker; TestInitInterposed checks that it did). It calls
// the driver's real cuInit, found with dlsym(RTLD_NEXT) — the next definition
// after the executable's, which is libcuda's — records the result, and
// returns CUDA_SUCCESS, so cu's init lets the process live. Open then
// reports a recorded failure as an error wrapping cudart.ErrNoDevice and the
// real code (CUDA_ERROR_NO_DEVICE, …).
//
// The definition has hidden visibility: it binds the references inside this
// executable (cu's) but is not exported to the dynamic symbol table, so
// libcuda itself and any library loaded later still see the driver's own
// cuInit.

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>

typedef CUresult (*ptxprop_cuinit_fn)(unsigned int);

static ptxprop_cuinit_fn ptxprop_real_cuinit;
static int ptxprop_cuinit_calls;
static CUresult ptxprop_cuinit_result = CUDA_ERROR_NOT_INITIALIZED;

// ptxprop_find_cuinit returns libcuda's cuInit: the next definition after
// this executable's, or, should that lookup fail, the one in libcuda.so.1.
static ptxprop_cuinit_fn ptxprop_find_cuinit(void) {
	ptxprop_cuinit_fn f = (ptxprop_cuinit_fn)dlsym(RTLD_NEXT, "cuInit");
	if (f == NULL) {
		void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (lib != NULL) f = (ptxprop_cuinit_fn)dlsym(lib, "cuInit");
	}
	return f;
}

__attribute__((visibility("hidden"))) CUresult CUDAAPI cuInit(unsigned int flags) {
	ptxprop_cuinit_fn f = __atomic_load_n(&ptxprop_real_cuinit, __ATOMIC_ACQUIRE);
	if (f == NULL) {
		f = ptxprop_find_cuinit();
		__atomic_store_n(&ptxprop_real_cuinit, f, __ATOMIC_RELEASE);
	}
	CUresult r = f != NULL ? f(flags) : CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
	__atomic_store_n(&ptxprop_cuinit_result, r, __ATOMIC_RELEASE);
	__atomic_add_fetch(&ptxprop_cuinit_calls, 1, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

static int ptxprop_init_calls(void) { return __atomic_load_n(&ptxprop_cuinit_calls, __ATOMIC_ACQUIRE); }
static CUresult ptxprop_init_result(void) { return __atomic_load_n(&ptxprop_cuinit_result, __ATOMIC_ACQUIRE); }

// ptxprop_lib_path returns the file the real cuInit was found in, or NULL.
static const char* ptxprop_lib_path(void) {
	Dl_info info;
	ptxprop_cuinit_fn f = __atomic_load_n(&ptxprop_real_cuinit, __ATOMIC_ACQUIRE);
	if (f == NULL) f = ptxprop_find_cuinit();
	if (f == NULL || dladdr(*(void**)(&f), &info) == 0) return NULL;
	return info.dli_fname;
}
*/
import "C"

import "fmt"

// initCalls is how many times cuInit went through the interposer (1 after
// cu's init; 0 would mean the linker bound cu's call to the driver directly).
func initCalls() int { return int(C.ptxprop_init_calls()) }

// initResult is the real cuInit's result as cu's init got it.
func initResult() Result { return Result(C.ptxprop_init_result()) }

// loadDriver reports whether the driver initialised in this process. It
// never exits the process and makes no driver call: cuInit already ran in
// cu's init.
func loadDriver() error {
	if initCalls() == 0 {
		// cu's call bypassed the interposer and succeeded: had it failed,
		// cu's init would have ended the process.
		return nil
	}
	if r := initResult(); r != success {
		return fmt.Errorf("cuInit (called by gorgonia.org/cu's init): %w", r)
	}
	return nil
}

// libraryPath is the file the driver's cuInit was found in ("" if unknown).
func libraryPath() string {
	if s := C.ptxprop_lib_path(); s != nil {
		return C.GoString(s)
	}
	return ""
}
