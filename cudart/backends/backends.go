// Package backends registers every device backend this binary can use:
// importing it for its side effect makes cudart.Open("auto") pick the GPU
// when the binary was built with -tags cuda and a device is present, and the
// PTX emulator otherwise.
//
//	import _ "github.com/ptxprop/ptxprop/cudart/backends"
package backends

import _ "github.com/ptxprop/ptxprop/cudart/emu" // always available
