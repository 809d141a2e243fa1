//go:build cuda

package gpu

// #include <cuda.h>
import "C"

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/ptxprop/ptxprop/cudart"
)

// Result is a CUDA driver API result code (CUresult). Every driver failure
// this package returns wraps one, so callers can test for a specific code
// with errors.Is(err, gpu.ErrIllegalAddress), or for a class with the cudart
// sentinels (see Is).
type Result int

// Driver result codes that callers are likely to test for. Their values are
// those of cuda.h.
const (
	success                  Result = C.CUDA_SUCCESS
	ErrInvalidValue          Result = C.CUDA_ERROR_INVALID_VALUE
	ErrOutOfMemory           Result = C.CUDA_ERROR_OUT_OF_MEMORY
	ErrNotInitialized        Result = C.CUDA_ERROR_NOT_INITIALIZED
	ErrStubLibrary           Result = C.CUDA_ERROR_STUB_LIBRARY
	ErrSystemDriverMismatch  Result = C.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
	ErrNoDevice              Result = C.CUDA_ERROR_NO_DEVICE
	ErrInvalidDevice         Result = C.CUDA_ERROR_INVALID_DEVICE
	ErrInvalidImage          Result = C.CUDA_ERROR_INVALID_IMAGE
	ErrInvalidContext        Result = C.CUDA_ERROR_INVALID_CONTEXT
	ErrNoBinaryForGPU        Result = C.CUDA_ERROR_NO_BINARY_FOR_GPU
	ErrInvalidPTX            Result = C.CUDA_ERROR_INVALID_PTX
	ErrUnsupportedPTXVersion Result = C.CUDA_ERROR_UNSUPPORTED_PTX_VERSION
	ErrInvalidHandle         Result = C.CUDA_ERROR_INVALID_HANDLE
	ErrNotFound              Result = C.CUDA_ERROR_NOT_FOUND
	ErrNotReady              Result = C.CUDA_ERROR_NOT_READY
	ErrIllegalAddress        Result = C.CUDA_ERROR_ILLEGAL_ADDRESS
	ErrLaunchOutOfResources  Result = C.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	ErrLaunchTimeout         Result = C.CUDA_ERROR_LAUNCH_TIMEOUT
	ErrHardwareStackError    Result = C.CUDA_ERROR_HARDWARE_STACK_ERROR
	ErrIllegalInstruction    Result = C.CUDA_ERROR_ILLEGAL_INSTRUCTION
	ErrMisalignedAddress     Result = C.CUDA_ERROR_MISALIGNED_ADDRESS
	ErrInvalidAddressSpace   Result = C.CUDA_ERROR_INVALID_ADDRESS_SPACE
	ErrInvalidPC             Result = C.CUDA_ERROR_INVALID_PC
	ErrLaunchFailed          Result = C.CUDA_ERROR_LAUNCH_FAILED
	ErrAssert                Result = C.CUDA_ERROR_ASSERT
	ErrNotSupported          Result = C.CUDA_ERROR_NOT_SUPPORTED
	ErrUnknown               Result = C.CUDA_ERROR_UNKNOWN
)

// resultOf converts an error from gorgonia.org/cu's package-level API into
// a Result. cu returns nil for CUDA_SUCCESS and otherwise its unexported type
// cuResult, an int holding the CUresult itself; codeOf's type parameter,
// inferred from the exported constant cu.Success, names that type for the
// assertion. cu's package-level functions return no other error; one would
// be reported as ErrUnknown.
func resultOf(err error) Result {
	if err == nil {
		return success
	}
	if r, ok := codeOf(cu.Success, err); ok {
		return r
	}
	return ErrUnknown
}

func codeOf[T ~int](_ T, err error) (Result, bool) {
	code, ok := err.(T)
	return Result(code), ok
}

// names are used when the driver cannot name a code itself.
var names = map[Result]string{
	ErrInvalidValue: "CUDA_ERROR_INVALID_VALUE", ErrOutOfMemory: "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized: "CUDA_ERROR_NOT_INITIALIZED", ErrStubLibrary: "CUDA_ERROR_STUB_LIBRARY",
	ErrSystemDriverMismatch: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", ErrNoDevice: "CUDA_ERROR_NO_DEVICE",
	ErrInvalidDevice: "CUDA_ERROR_INVALID_DEVICE", ErrInvalidImage: "CUDA_ERROR_INVALID_IMAGE",
	ErrInvalidContext: "CUDA_ERROR_INVALID_CONTEXT", ErrNoBinaryForGPU: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrInvalidPTX: "CUDA_ERROR_INVALID_PTX", ErrUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrInvalidHandle: "CUDA_ERROR_INVALID_HANDLE", ErrNotFound: "CUDA_ERROR_NOT_FOUND",
	ErrNotReady: "CUDA_ERROR_NOT_READY", ErrIllegalAddress: "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrLaunchOutOfResources: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", ErrLaunchTimeout: "CUDA_ERROR_LAUNCH_TIMEOUT",
	ErrHardwareStackError: "CUDA_ERROR_HARDWARE_STACK_ERROR", ErrIllegalInstruction: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	ErrMisalignedAddress: "CUDA_ERROR_MISALIGNED_ADDRESS", ErrInvalidAddressSpace: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	ErrInvalidPC: "CUDA_ERROR_INVALID_PC", ErrLaunchFailed: "CUDA_ERROR_LAUNCH_FAILED",
	ErrAssert: "CUDA_ERROR_ASSERT", ErrNotSupported: "CUDA_ERROR_NOT_SUPPORTED", ErrUnknown: "CUDA_ERROR_UNKNOWN",
}

// Error returns the driver's name and description of the code:
// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered".
func (r Result) Error() string {
	name, desc := errorName(r), errorString(r)
	if name == "" {
		name = names[r]
	}
	if name == "" {
		name = "CUresult"
	}
	if desc == "" {
		return fmt.Sprintf("%s (%d)", name, int(r))
	}
	return fmt.Sprintf("%s (%d): %s", name, int(r), desc)
}

// Sticky reports whether r leaves the context unusable: after a kernel
// fault every later call in the context fails with the same code, and only
// destroying the context recovers.
func (r Result) Sticky() bool {
	switch r {
	case ErrIllegalAddress, ErrLaunchTimeout, ErrHardwareStackError, ErrIllegalInstruction,
		ErrMisalignedAddress, ErrInvalidAddressSpace, ErrInvalidPC, ErrLaunchFailed, ErrAssert:
		return true
	}
	return false
}

// Is maps driver codes onto the cudart sentinels, so backend-neutral callers
// need not know CUDA codes:
//
//	every code                                   cudart.ErrDriver
//	NO_DEVICE, INVALID_DEVICE, STUB_LIBRARY,
//	SYSTEM_DRIVER_MISMATCH                       cudart.ErrNoDevice
//	a kernel fault (Sticky), LAUNCH_OUT_OF_RESOURCES cudart.ErrLaunch
//	ILLEGAL_ADDRESS                              cudart.ErrOutOfBounds (too)
//	LAUNCH_TIMEOUT                               cudart.ErrTimeout (too)
//	INVALID_VALUE, INVALID_HANDLE, NOT_FOUND,
//	INVALID_PTX, INVALID_IMAGE,
//	UNSUPPORTED_PTX_VERSION                      cudart.ErrInvalid
func (r Result) Is(target error) bool {
	switch target {
	case cudart.ErrDriver:
		return r != success
	case cudart.ErrNoDevice:
		return r == ErrNoDevice || r == ErrInvalidDevice || r == ErrStubLibrary || r == ErrSystemDriverMismatch
	case cudart.ErrLaunch:
		return r.Sticky() || r == ErrLaunchOutOfResources
	case cudart.ErrOutOfBounds:
		return r == ErrIllegalAddress
	case cudart.ErrTimeout:
		return r == ErrLaunchTimeout
	case cudart.ErrInvalid:
		switch r {
		case ErrInvalidValue, ErrInvalidHandle, ErrNotFound, ErrInvalidPTX, ErrInvalidImage, ErrUnsupportedPTXVersion:
			return true
		}
	}
	return false
}

// JITError is a failed module load: the driver's code and the JIT
// compiler's log (ptxas messages with PTX line numbers).
type JITError struct {
	Code Result
	Log  string
}

func (e *JITError) Error() string {
	if e.Log == "" {
		return "cuModuleLoadDataEx: " + e.Code.Error()
	}
	return fmt.Sprintf("cuModuleLoadDataEx: %v; JIT log:\n%s", e.Code, e.Log)
}

// Unwrap returns the driver code.
func (e *JITError) Unwrap() error { return e.Code }
