//go:build cuda

package kernels

// With -tags cuda the device tests and benchmarks run on the GPU backend.
import _ "github.com/ptxprop/ptxprop/cudart/gpu"
