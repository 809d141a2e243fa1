package binding

import "testing"

func TestLoadOwnBindings(t *testing.T) {
	for _, p := range []string{"testdata/rmsnorm_fwd.yaml", "testdata/rmsnorm_bwd_chunk.yaml"} {
		b, err := Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		t.Logf("%s: %s %s %d launches", p, b.Name, b.Contract, len(b.launches))
	}
}
