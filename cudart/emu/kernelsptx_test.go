package emu

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/ptx"
)

// TestRepositoryKernels loads every committed kernel PTX (kernels/ptx) and
// launches each entry once with generic arguments: every pointer a large
// buffer of values in [0.5, 1.5), every integer 16, every float 1e-5, 256
// threads per block (the repository's convention; blockShapes lists the
// exceptions) and 48 KiB of dynamic shared memory where the module uses it.
// The typed launchers in package kernels test what the kernels compute.
func TestRepositoryKernels(t *testing.T) {
	files, _ := filepath.Glob("../../kernels/ptx/*.ptx")
	if len(files) == 0 {
		t.Skip("no kernels/ptx/*.ptx yet")
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := ptx.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, f := range mod.Entries() {
			t.Run(filepath.Base(file)+"/"+f.Name, func(t *testing.T) {
				e := newEnvSrc(t, filepath.Base(file), src, Config{})
				r := rand.New(rand.NewPCG(1, 1))
				var params []cudart.Param
				for _, p := range f.Params {
					switch p.Type {
					case "u64", "b64", "s64":
						host := make([]float32, 1<<16)
						for i := range host {
							host[i] = 0.5 + r.Float32()
						}
						params = append(params, cudart.InOut(e.in(host)))
					case "u32", "s32", "b32":
						params = append(params, cudart.ScalarI32(16))
					case "f32":
						params = append(params, cudart.ScalarF32(1e-5))
					case "f64":
						params = append(params, cudart.ScalarF64(1e-5))
					default:
						t.Skipf("parameter type .%s", p.Type)
					}
				}
				shared := 0
				for _, v := range mod.Variables() {
					if v.Space == "shared" && v.Linkage == "extern" {
						shared = 48 << 10
					}
				}
				block, ok := blockShapes[f.Name]
				if !ok {
					block = cudart.D1(256)
				}
				g := cudart.Geometry{Grid: cudart.D1(2), Block: block, SharedBytes: shared}
				if err := e.dev.Launch(e.mod, f.Name, g, params...); err != nil {
					t.Fatalf("launch: %v", err)
				}
				// Another schedule and adversarial approximations find no
				// error either.
				e.b.SetConfig(Config{Seed: 1, Approx: ApproxAdversarial, ApproxSeed: 1})
				if err := e.dev.Launch(e.mod, f.Name, g, params...); err != nil {
					t.Fatalf("launch with seed 1: %v", err)
				}
				st := e.b.Stats()
				if st.ThreadInstructions == 0 || !strings.Contains(st.String(), f.Name) {
					t.Fatalf("stats = %v", st)
				}
				t.Log(st)
			})
		}
	}
}

// blockShapes are the kernels whose block is not 256×1×1.
var blockShapes = map[string]cudart.Dim3{
	"colsum_f32": {X: 32, Y: 8, Z: 1},
}
