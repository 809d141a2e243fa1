package kernels

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// BenchmarkFMAD times the committed PTX (built with -fmad=false, so every
// float instruction rounds as written and the emulator can match the GPU bit
// for bit) side by side with the same sources built with -fmad=true (ptxas
// may contract mul+add into FMA), to show what the choice costs these
// memory-bound kernels. Build the second set with
//
//	mkdir -p bin/ptx-fmad && for f in kernels/src/*.cu; do \
//	  nvcc -ptx -arch=compute_70 -fmad=true -O3 $f -o bin/ptx-fmad/$(basename $f .cu).ptx; done
//
// and run with PTXPROP_FMAD_PTX=bin/ptx-fmad (relative to the module root).
func BenchmarkFMAD(b *testing.B) {
	dir := os.Getenv("PTXPROP_FMAD_PTX")
	if dir == "" {
		b.Skip("set PTXPROP_FMAD_PTX to a directory of PTX built with -fmad=true")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir)
	}
	load := func(k *Kernel) *Kernel {
		p, err := os.ReadFile(filepath.Join(dir, filepath.Base(k.PTXFile)))
		if err != nil {
			b.Fatal(err)
		}
		return k.WithPTX(p)
	}
	dev := openDevice(b)
	if onEmulator(dev) {
		b.Skip("benchmarks need the GPU")
	}
	dev.SetOptions(cudart.Options{})
	variants := []struct {
		name string
		fwd  RMSNormForward
		bwd  RMSNormBackwardChunk
		ln   LayerNormForward
	}{
		{"fmad=false", RMSNormFwd, RMSNormBwdChunk, LayerNormFwd},
		{"fmad=true", RMSNormForward{K: load(kRMSNormFwd), KRMS: load(kRMSNormFwdRMS)},
			RMSNormBackwardChunk{K: load(kRMSNormBwdChunk), Reduce: load(kColSum)},
			LayerNormForward{K: load(kLayerNormFwd), KStats: load(kLayerNormFwdStats)}},
	}
	for _, s := range []benchShape{{4096, 1536}, {8192, 4096}} {
		for _, v := range variants {
			cases := []benchCase{
				{name: "RMSNormFwd", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
					r := rng(op.Shape{Rows: rows, Hidden: h}, 10)
					bb := RMSNormForwardBuffers{Rows: rows, Hidden: h, Eps: 1e-6, X: d.in("x", normals(r, rows, h, 0)),
						Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)), Y: d.out("y", rows*h), RMS: d.out("rms", rows)}
					return func() error { return v.fwd.Launch(dev, bb) }, f4(rows*h, h, rows*h, rows)
				}},
				{name: "RMSNormBwdChunk", setup: rmsBackwardBench(v.bwd)},
				{name: "LayerNormFwd", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
					r := rng(op.Shape{Rows: rows, Hidden: h}, 12)
					bb := LayerNormForwardBuffers{Rows: rows, Hidden: h, Eps: 1e-5, X: d.in("x", normals(r, rows, h, 0)),
						Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)), Beta: d.in("beta", uniform(r, h, -1, 1)), Y: d.out("y", rows*h)}
					return func() error { return v.ln.Launch(dev, bb) }, f4(rows*h, 2*h, rows*h)
				}},
			}
			for _, c := range cases {
				b.Run(fmt.Sprintf("%s/%s/%dx%d", c.name, v.name, s.rows, s.hidden), func(b *testing.B) { runBench(b, dev, c, s) })
			}
		}
	}
}
