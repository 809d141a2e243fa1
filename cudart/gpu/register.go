//go:build cuda

package gpu

import (
	"os"

	"github.com/ptxprop/ptxprop/cudart"
)

// init registers the backend as "gpu". Registration touches no hardware:
// the first Open creates a context. (libcuda is loaded with the program and
// cuInit already ran in gorgonia.org/cu's init; see cuinit.go.)
func init() {
	cudart.Register("gpu", func() (cudart.Backend, error) {
		b, err := Open(Config{Combine: os.Getenv("PTXPROP_GPU_COMBINE") == "1"})
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return b, nil
	})
}
