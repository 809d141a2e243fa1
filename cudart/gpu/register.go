//go:build cuda

package gpu

import "github.com/ptxprop/ptxprop/cudart"

// init registers the backend as "gpu". Registration touches no hardware:
// the first Open creates a context. (libcuda is loaded with the program and
// cuInit already ran in gorgonia.org/cu's init; see cuinit.go.)
func init() {
	cudart.Register("gpu", func(ordinal int, opts cudart.BackendOptions) (cudart.Backend, error) {
		cfg, ok := opts.(Config)
		if opts != nil && !ok {
			return nil, cudart.Errorf(cudart.ErrInvalid, "GPU options of type %T, want gpu.Config", opts)
		}
		cfg.Ordinal = ordinal
		b, err := Open(cfg)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return b, nil
	})
}
