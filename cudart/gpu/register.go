//go:build cuda

package gpu

import "github.com/ptxprop/ptxprop/cudart"

// init registers the backend as "gpu". Registration touches no hardware and
// loads no library: libcuda is opened by the first Open.
func init() {
	cudart.Register("gpu", func() (cudart.Backend, error) {
		b, err := Open(Config{})
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return b, nil
	})
}
