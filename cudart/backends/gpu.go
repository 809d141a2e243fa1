//go:build cuda

package backends

import _ "github.com/ptxprop/ptxprop/cudart/gpu" // only with -tags cuda
