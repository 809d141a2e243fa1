package reports

import (
	"encoding/json"
	"testing"
)

// A user's implementation given to a contract in Go is a kernel of origin
// user: without PTX when it launches none it lists, else pinned as every
// kernel is. The schema and Validate agree on both and on a half-pinned one.
func TestUserKernel(t *testing.T) {
	for _, c := range []struct {
		name string
		k    Kernel
		ok   bool
	}{
		{"go implementation", Kernel{Name: "main.myRMSNorm", Origin: KernelUser}, true},
		{"its own PTX", NewKernel("mine/rms", KernelUser, "rms.ptx", "rms", []byte("x")), true},
		{"ptx without entry or hash", Kernel{Name: "mine/rms", Origin: KernelUser, PTX: "rms.ptx"}, false},
		{"ours without ptx", Kernel{Name: "rmsnorm_fwd", Origin: KernelOurs}, false},
		{"user with a binding file", Kernel{Name: "u", Origin: KernelUser, Binding: "b.yaml"}, false},
	} {
		r := minimalReport()
		r.Kernels = []Kernel{c.k}
		r.Predictions[0].Kernels = []string{c.k.Name}
		verr := r.Validate()
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		serr := schemaValidate(t, data)
		if (verr == nil) != c.ok || (serr == nil) != c.ok {
			t.Errorf("%s: Validate %v, schema %v; want valid %v", c.name, verr, serr, c.ok)
		}
	}
}
