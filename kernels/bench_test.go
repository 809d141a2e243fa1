package kernels

// Benchmarks: every implementation over the training shapes, timed on the
// device (dev.Elapsed: CUDA events on the GPU) with every check off. Each
// reports the bytes that must move (every input read once, every output
// written once; scratch partials are overhead, not counted) per device
// second as GB/s, and as a fraction of the device-to-device copy bandwidth
// (xcopy, when the backend measured it). The GPU backend's Elapsed queues the
// timed launches behind a hold kernel, so the device time is that of the
// kernels back to back, without the host's gaps between launches (which
// would otherwise dominate the small shapes).
//
// RMSNormBwdWarp is the upstream design (one warp per row, a [rows][hidden]
// partial dγ, then the column sum): the baseline every backward is shown
// against. The emulator is skipped: its timings mean nothing.
//
//	go test -tags cuda -run '^$' -bench . ./kernels

import (
	"fmt"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

type benchShape struct{ rows, hidden int }

var benchShapes = []benchShape{{4096, 896}, {4096, 1536}, {8192, 4096}, {16384, 8192}, {2048, 128}}

// benchHeadDim is the head size of the per-head and RoPE benchmarks:
// heads = hidden/128.
const benchHeadDim = 128

type benchCase struct {
	name string
	// extra shapes for this case; maxHidden, when set, drops wider shapes.
	extra     []benchShape
	maxHidden int
	setup     func(b *testing.B, d *deviceData, rows, hidden int) (launch func() error, bytes int64)
}

func f4(n ...int) int64 {
	var s int64
	for _, v := range n {
		s += 4 * int64(v)
	}
	return s
}

func rmsBackwardBench(f rmsBackwardImpl) func(*testing.B, *deviceData, int, int) (func() error, int64) {
	return func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		n := rows * h
		r := rng(op.Shape{Rows: rows, Hidden: h}, 11)
		rms := uniform(r, rows, 0.5, 2)
		for i := range rms {
			rms[i] = abs32(rms[i])
		}
		bb := RMSNormBackwardBuffers{Rows: rows, Hidden: h, X: d.in("x", normals(r, rows, h, 0)), Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)),
			RMS: d.in("rms", rms), DY: d.in("dy", normals(r, rows, h, 0)), DX: d.out("dx", n), DGamma: d.out("dgamma", h),
			Partial: d.out("partial", f.PartialRows(rows)*h)}
		dev := d.sc.dev
		return func() error { return f.Launch(dev, bb) }, f4(n, n, h, rows, n, h)
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

var benchCases = []benchCase{
	{name: "RMSNormFwd", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		r := rng(op.Shape{Rows: rows, Hidden: h}, 10)
		bb := RMSNormForwardBuffers{Rows: rows, Hidden: h, Eps: 1e-6, X: d.in("x", normals(r, rows, h, 0)), Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)),
			Y: d.out("y", rows*h), RMS: d.out("rms", rows)}
		dev := d.sc.dev
		return func() error { return RMSNormFwd.Launch(dev, bb) }, f4(rows*h, h, rows*h, rows)
	}},
	{name: "RMSNormBwdWarp32", extra: []benchShape{{65536, 32}}, maxHidden: 32, setup: rmsBackwardBench(RMSNormBwdWarp32)},
	{name: "RMSNormBwdWarp", extra: []benchShape{{65536, 32}}, setup: rmsBackwardBench(RMSNormBwdWarp)},
	{name: "RMSNormBwdChunk", extra: []benchShape{{65536, 32}}, setup: rmsBackwardBench(RMSNormBwdChunk)},
	{name: "FusedResidualRMSNorm", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		r := rng(op.Shape{Rows: rows, Hidden: h}, 12)
		res := d.in("residual", normals(r, rows, h, 0))
		bb := FusedResidualRMSNormBuffers{Rows: rows, Hidden: h, Eps: 1e-6, Residual: res, X: d.in("x", normals(r, rows, h, 0)),
			Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)), ResidualOut: d.out("residual_out", rows*h), Y: d.out("y", rows*h)}
		dev := d.sc.dev
		return func() error { return FusedResidualRMSNormFwd.Launch(dev, bb) }, f4(rows*h, rows*h, h, rows*h, rows*h)
	}},
	{name: "LayerNormFwd", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		r := rng(op.Shape{Rows: rows, Hidden: h}, 13)
		bb := LayerNormForwardBuffers{Rows: rows, Hidden: h, Eps: 1e-5, X: d.in("x", normals(r, rows, h, 1)), Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)),
			Beta: d.in("beta", uniform(r, h, 0, 0.5)), Y: d.out("y", rows*h), Mean: d.out("mean", rows), Rstd: d.out("rstd", rows)}
		dev := d.sc.dev
		return func() error { return LayerNormFwd.Launch(dev, bb) }, f4(rows*h, h, h, rows*h, rows, rows)
	}},
	{name: "LayerNormBwd", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		r := rng(op.Shape{Rows: rows, Hidden: h}, 14)
		n, np := rows*h, LayerNormBwd.PartialRows(rows)*h
		rstd := uniform(r, rows, 0.5, 2)
		for i := range rstd {
			rstd[i] = abs32(rstd[i])
		}
		bb := LayerNormBackwardBuffers{Rows: rows, Hidden: h, X: d.in("x", normals(r, rows, h, 0)), Gamma: d.in("gamma", uniform(r, h, 0.5, 1.5)),
			DY: d.in("dy", normals(r, rows, h, 0)), Mean: d.in("mean", uniform(r, rows, 0, 1)), Rstd: d.in("rstd", rstd),
			DX: d.out("dx", n), DGamma: d.out("dgamma", h), DBeta: d.out("dbeta", h), PartialG: d.out("partial_g", np), PartialB: d.out("partial_b", np)}
		dev := d.sc.dev
		return func() error { return LayerNormBwd.Launch(dev, bb) }, f4(n, h, n, rows, rows, n, h, h)
	}},
	{name: "PerHeadRMSNorm", setup: func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		r := rng(op.Shape{Rows: rows, Hidden: h}, 15)
		bb := PerHeadRMSNormBuffers{Rows: rows, Heads: h / benchHeadDim, HeadDim: benchHeadDim, Eps: 1e-6, X: d.in("x", normals(r, rows, h, 0)),
			Gamma: d.in("gamma", uniform(r, benchHeadDim, 0.5, 1.5)), Y: d.out("y", rows*h)}
		dev := d.sc.dev
		return func() error { return PerHeadRMSNormFwd.Launch(dev, bb) }, f4(rows*h, benchHeadDim, rows*h)
	}},
	{name: "RoPEFwd", setup: ropeBench(RoPEFwd.Launch, false)},
	{name: "RoPEFwdBatched", setup: ropeBench(RoPEFwdBatched.Launch, true)},
	{name: "RoPEBwd", setup: ropeBench(RoPEBwd.Launch, true)},
}

func ropeBench(launch func(cudart.Device, RoPEBuffers) error, batched bool) func(*testing.B, *deviceData, int, int) (func() error, int64) {
	return func(b *testing.B, d *deviceData, rows, h int) (func() error, int64) {
		r := rng(op.Shape{Rows: rows, Hidden: h}, 16)
		pos := make([]uint32, rows)
		for i := range pos {
			pos[i] = uint32(i)
		}
		bb := RoPEBuffers{Rows: rows, Heads: h / benchHeadDim, HeadDim: benchHeadDim, Theta: 1e6, Pos: 1234,
			X: d.in("x", normals(r, rows, h, 0)), Y: d.out("y", rows*h)}
		bytes := f4(rows*h, rows*h)
		if batched {
			bb.Positions = d.in("positions", pos)
			bytes += f4(rows)
		}
		dev := d.sc.dev
		return func() error { return launch(dev, bb) }, bytes
	}
}

func BenchmarkKernels(b *testing.B) {
	dev := openDevice(b)
	if onEmulator(dev) {
		b.Skip("benchmarks need the GPU: the emulator's timings mean nothing")
	}
	dev.SetOptions(cudart.Options{}) // no guard bands, poisoning or input checks: time the kernels alone
	for _, c := range benchCases {
		for _, s := range append(append([]benchShape(nil), benchShapes...), c.extra...) {
			if c.maxHidden > 0 && s.hidden > c.maxHidden {
				continue
			}
			b.Run(fmt.Sprintf("%s/%dx%d", c.name, s.rows, s.hidden), func(b *testing.B) { runBench(b, dev, c, s) })
		}
	}
}

// runBench times c at shape s on dev's clock and reports device µs per
// launch, GB/s and the fraction of the copy bandwidth.
func runBench(b *testing.B, dev cudart.Device, c benchCase, s benchShape) {
	d := newDeviceData(b, dev)
	launch, bytes := c.setup(b, d, s.rows, s.hidden)
	if err := launch(); err != nil { // loads the module, warms the caches
		b.Fatal(err)
	}
	b.ResetTimer()
	el, err := dev.Elapsed(b.N, launch)
	if err != nil {
		b.Fatal(err)
	}
	sec := el.Seconds() / float64(b.N)
	b.ReportMetric(sec*1e6, "dev-µs/op")
	b.ReportMetric(float64(bytes)/sec/1e9, "GB/s")
	if bw := dev.Info().CopyBandwidth; bw > 0 {
		b.ReportMetric(float64(bytes)/sec/bw, "xcopy")
	}
}
