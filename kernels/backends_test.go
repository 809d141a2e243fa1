package kernels

// The device tests and benchmarks run on whatever cudart/backends registers:
// the GPU under -tags cuda when a device is present, else the PTX emulator.
import _ "github.com/ptxprop/ptxprop/cudart/backends"
