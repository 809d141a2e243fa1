package kernels

// Device tests over the edge grid. They run on whatever cudart.Open("")
// finds among the backends cudart/backends registers (backends_test.go):
// the GPU under -tags cuda when a device is present, else the PTX emulator,
// where rows are subsampled (emuBudget). With no backend they skip.
//
// For every kernel and shape: outputs are compared element by element with
// package oracle's float64 reference within its derived bound; outputs
// start poisoned (NaN) and the reference is finite, so an element never
// written fails; where the backend counts stores (the emulator), every
// output element must be stored exactly once; backward results must be
// bit-identical across two launches; the device checks guard bands and
// unmodified inputs around every launch.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

var (
	edgeHidden = []int{1, 31, 32, 33, 255, 256, 257, 896, 1536, 4096, 4097, 8192, 8193}
	edgeRows   = []int{1, 2, 7, 64, 1000}
	// emuBudget bounds rows·hidden per shape on the emulator (rows 1 always runs).
	emuBudget = 1 << 16
)

// openDevice opens the default device, or skips when there is none (fails
// instead when PTXPROP_REQUIRE_GPU is set, as on the GPU machine).
func openDevice(tb testing.TB) cudart.Device {
	tb.Helper()
	backend := "auto"
	if os.Getenv("PTXPROP_REQUIRE_GPU") != "" {
		backend = "gpu" // no silent fallback to the emulator
	}
	dev, err := cudart.Open(backend, cudart.DefaultOptions())
	if errors.Is(err, cudart.ErrNoDevice) && os.Getenv("PTXPROP_REQUIRE_GPU") == "" {
		tb.Skipf("no backend registered: %v", err)
	}
	if err != nil {
		tb.Fatalf("open device: %v", err)
	}
	tb.Cleanup(func() {
		if err := dev.Close(); err != nil {
			tb.Errorf("close device: %v", err)
		}
	})
	return dev
}

// eachShape runs f as a subtest for every edge shape [rows][hidden].
func eachShape(t *testing.T, dev cudart.Device, f func(t *testing.T, s op.Shape)) {
	for _, h := range edgeHidden {
		for _, rows := range rowsFor(dev, h) {
			s := op.Shape{Rows: rows, Hidden: h}
			t.Run(s.String(), func(t *testing.T) { f(t, s) })
		}
	}
}

func onEmulator(dev cudart.Device) bool { return dev.Info().Backend == "emu" }

// rowsFor returns the edge rows for a row width, subsampled on the emulator.
func rowsFor(dev cudart.Device, width int) []int {
	var out []int
	for _, r := range edgeRows {
		if !onEmulator(dev) || r == 1 || r*width <= emuBudget {
			out = append(out, r)
		}
	}
	if testing.Short() && len(out) > 2 {
		out = []int{out[0], out[len(out)-1]}
	}
	return out
}

func rng(s op.Shape, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(s.Rows)<<32|uint64(s.Hidden), uint64(s.HeadDim)<<16|salt))
}

// normals returns n values N(0,1)·scale(row) + offset(row) as float32, with
// the row scale spanning 2⁻³…2³ so that rows differ in magnitude.
func normals(r *rand.Rand, rows, width int, offset float64) []float32 {
	v := make([]float32, rows*width)
	for i := range v {
		row := i / width
		v[i] = float32(r.NormFloat64()*math.Ldexp(1, row%7-3) + offset*float64(row%3))
	}
	return v
}

func uniform(r *rand.Rand, n int, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		x := lo + (hi-lo)*r.Float64()
		if r.IntN(8) == 0 {
			x = -x
		}
		v[i] = float32(x)
	}
	return v
}

// checker compares device results with references and reports the first
// few violations with everything needed to reproduce them.
type checker struct {
	t     *testing.T
	label string
}

func (c checker) within(name string, got []float32, r ref) {
	c.t.Helper()
	want, bound := r.want, r.tol
	bad := 0
	for i := range want {
		g := f64(got[i])
		e := math.Abs(g - want[i])
		if !(e <= bound[i]) { // NaN fails
			if bad < 5 {
				c.t.Errorf("%s: %s[%d]: got %.9g, want %.9g, error %.3g > bound %.3g", c.label, name, i, g, want[i], e, bound[i])
			}
			bad++
		}
	}
	if bad > 5 {
		c.t.Errorf("%s: %s: %d of %d elements outside the bound", c.label, name, bad, len(want))
	}
}

func (c checker) same(name string, a, b []float32) {
	c.t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			c.t.Errorf("%s: %s[%d] differs between two launches: %#08x then %#08x (non-deterministic)", c.label, name, i, math.Float32bits(a[i]), math.Float32bits(b[i]))
			return
		}
	}
}

// writtenOnce checks the store counts of the last launch, when the backend
// can tell.
func (c checker) writtenOnce(dev cudart.Device, name string, b cudart.Buffer) {
	c.t.Helper()
	counts, err := dev.WriteCounts(b)
	if errors.Is(err, cudart.ErrUnsupported) {
		return
	}
	if err != nil {
		c.t.Errorf("%s: write counts of %s: %v", c.label, name, err)
		return
	}
	for i, n := range counts {
		if n != 1 {
			c.t.Errorf("%s: %s[%d] stored %d times, want exactly once", c.label, name, i, n)
			return
		}
	}
}

type deviceData struct {
	t  testing.TB
	sc *scratch
}

func newDeviceData(t testing.TB, dev cudart.Device) *deviceData {
	d := &deviceData{t: t, sc: newScratch(dev, "edge")}
	t.Cleanup(func() {
		if err := d.sc.free(); err != nil {
			t.Errorf("free: %v", err)
		}
	})
	return d
}

func (d *deviceData) in(name string, v any) cudart.Buffer {
	b, err := d.sc.upload(name, v)
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

func (d *deviceData) out(name string, n int) cudart.Buffer {
	b, err := d.sc.alloc(name, cudart.F32, n)
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

func (d *deviceData) read(b cudart.Buffer) []float32 {
	v := make([]float32, b.Len())
	if err := d.sc.dev.Read(v, b); err != nil {
		d.t.Fatal(err)
	}
	return v
}

// rmsEps is the ε of the rms the backward tests give the kernels.
const rmsEps = 1e-5

// ---------------------------------------------------------------------------

func TestEdgeRMSNormForward(t *testing.T) {
	dev := openDevice(t)
	eachShape(t, dev, func(t *testing.T, s op.Shape) {
		rows, h := s.Rows, s.Hidden
		r := rng(s, 1)
		x, g := normals(r, rows, h, 0), uniform(r, h, 0.5, 1.5)
		eps := float32(1e-5)
		c := checker{t, fmt.Sprintf("rmsnorm_fwd %v eps=%g", s, eps)}
		d := newDeviceData(t, dev)
		b := RMSNormForwardBuffers{Rows: rows, Hidden: h, Eps: eps, X: d.in("x", x), Gamma: d.in("gamma", g),
			Y: d.out("y", rows*h), RMS: d.out("rms", rows)}
		if err := RMSNormFwd.Launch(dev, b); err != nil {
			t.Fatal(err)
		}
		c.writtenOnce(dev, "y", b.Y)
		c.writtenOnce(dev, "rms", b.RMS)
		y, rms := d.read(b.Y), d.read(b.RMS)
		wy, wrms := refRMSNorm(x, g, eps, rows, 0, h, kRMSNormFwdRMS.Reductions(s)[0])
		c.within("y", y, wy)
		c.within("rms", rms, wrms)
		// Without the rms output: the other entry, the same y bits.
		b.RMS = cudart.Buffer{}
		if err := RMSNormFwd.Launch(dev, b); err != nil {
			t.Fatal(err)
		}
		c.same("y (rmsnorm_fwd vs rmsnorm_fwd_rms)", y, d.read(b.Y))
	})
}

// TestEdgeMisaligned drives the vector-capable kernels with a pointer off
// 16-byte alignment while hidden % 4 == 0: they must take the scalar path.
func TestEdgeMisaligned(t *testing.T) {
	dev := openDevice(t)
	s := op.Shape{Rows: 3, Hidden: 256}
	r := rng(s, 9)
	x, g := normals(r, s.Rows, s.Hidden, 0), uniform(r, s.Hidden, 0.5, 1.5)
	d := newDeviceData(t, dev)
	xb := d.in("x", append([]float32{0}, x...))
	yb := d.out("y", s.Rows*s.Hidden+1)
	err := kRMSNormFwd.Launch(dev, s, cudart.In(xb).At(1), cudart.In(d.in("gamma", g)), cudart.Out(yb).At(1),
		cudart.ScalarU32(uint32(s.Rows)), cudart.ScalarU32(uint32(s.Hidden)), cudart.ScalarF32(1e-6))
	if err != nil {
		t.Fatal(err)
	}
	y := d.read(yb)[1:]
	want, _ := refRMSNorm(x, g, 1e-6, s.Rows, 0, s.Hidden, kRMSNormFwd.Reductions(s)[0])
	checker{t, "rmsnorm_fwd misaligned x,y " + s.String()}.within("y", y, want)
}

func TestEdgeFusedResidualRMSNorm(t *testing.T) {
	dev := openDevice(t)
	eachShape(t, dev, func(t *testing.T, s op.Shape) {
		rows, h := s.Rows, s.Hidden
		r := rng(s, 2)
		res, x, g := normals(r, rows, h, 0), normals(r, rows, h, 0), uniform(r, h, 0.5, 1.5)
		eps := float32(1e-6)
		sum := make([]float32, len(x))
		for i := range x {
			sum[i] = res[i] + x[i] // float32 add: what residual_out must hold exactly
		}
		_, want := refFused(res, x, g, eps, rows, h, kFusedResidualRMSNorm.Reductions(s)[0])
		for _, alias := range []bool{false, true} {
			c := checker{t, fmt.Sprintf("fused_residual_rmsnorm %v alias=%v", s, alias)}
			d := newDeviceData(t, dev)
			b := FusedResidualRMSNormBuffers{Rows: rows, Hidden: h, Eps: eps, Residual: d.in("residual", res),
				X: d.in("x", x), Gamma: d.in("gamma", g), Y: d.out("y", rows*h)}
			b.ResidualOut = b.Residual
			if !alias {
				b.ResidualOut = d.out("residual_out", rows*h)
			}
			if err := FusedResidualRMSNormFwd.Launch(dev, b); err != nil {
				t.Fatal(err)
			}
			c.writtenOnce(dev, "y", b.Y)
			c.writtenOnce(dev, "residual_out", b.ResidualOut)
			c.same("residual_out vs fl32(residual + x)", sum, d.read(b.ResidualOut))
			c.within("y", d.read(b.Y), want)
		}
	})
}

// rmsBackwardImpl is what the backward edge test needs of a design.
type rmsBackwardImpl interface {
	Launch(cudart.Device, RMSNormBackwardBuffers) error
	RMSNormBackward(cudart.Device, *op.RMSNormBackwardArgs) error
	PartialRows(int) int
	Reductions(op.Shape) []op.Reduction
	impl() rmsBwd
}

func TestEdgeRMSNormBackward(t *testing.T) {
	dev := openDevice(t)
	designs := []struct {
		name string
		f    rmsBackwardImpl
	}{{"warp32", RMSNormBwdWarp32}, {"warp", RMSNormBwdWarp}, {"chunk", RMSNormBwdChunk}}
	for _, h := range edgeHidden {
		for _, rows := range rowsFor(dev, h) {
			s := op.Shape{Rows: rows, Hidden: h}
			r := rng(s, 3)
			x, g, dy := normals(r, rows, h, 0), uniform(r, h, 0.5, 1.5), normals(r, rows, h, 0)
			rms := make([]float32, rows)
			for i := range rms {
				ss := 0.0
				for _, v := range x[i*h : (i+1)*h] {
					ss += f64(v) * f64(v)
				}
				rms[i] = float32(math.Sqrt(ss/float64(h) + rmsEps))
			}
			for _, ds := range designs {
				if ds.name == "warp32" && h > 32 {
					continue
				}
				t.Run(ds.name+"/"+s.String(), func(t *testing.T) {
					c := checker{t, fmt.Sprintf("rmsnorm backward %q (%s) %v", ds.name, ds.f.impl().k.Name, s)}
					red := ds.f.Reductions(s)
					wdx, wdg := refRMSNormBwd(x, g, dy, rmsEps, rows, h, red[0], red[1])
					d := newDeviceData(t, dev)
					b := RMSNormBackwardBuffers{Rows: rows, Hidden: h, X: d.in("x", x), Gamma: d.in("gamma", g), RMS: d.in("rms", rms),
						DY: d.in("dy", dy), DX: d.out("dx", rows*h), DGamma: d.out("dgamma", h), Partial: d.out("partial", ds.f.PartialRows(rows)*h)}
					if err := ds.f.Launch(dev, b); err != nil {
						t.Fatal(err)
					}
					dx1, dg1 := d.read(b.DX), d.read(b.DGamma)
					c.within("dx", dx1, wdx)
					c.within("dgamma", dg1, wdg)
					if err := ds.f.Launch(dev, b); err != nil {
						t.Fatal(err)
					}
					c.same("dx", dx1, d.read(b.DX))
					c.same("dgamma", dg1, d.read(b.DGamma))
					// The host-level path gives the same bits.
					a := &op.RMSNormBackwardArgs{Rows: rows, Hidden: h, X: x, Gamma: g, RMS: rms, DY: dy, DX: make([]float32, rows*h), DGamma: make([]float32, h)}
					if err := ds.f.RMSNormBackward(dev, a); err != nil {
						t.Fatal(err)
					}
					c.same("dx (host-level)", dx1, a.DX)
					c.same("dgamma (host-level)", dg1, a.DGamma)
					// Stage by stage, for the store counts.
					im := ds.f.impl()
					args := []cudart.Param{cudart.In(b.X), cudart.In(b.Gamma), cudart.In(b.RMS), cudart.In(b.DY), cudart.Out(b.DX), cudart.Out(b.Partial),
						cudart.ScalarU32(uint32(rows)), cudart.ScalarU32(uint32(h))}
					if im.chunked {
						args = append(args, cudart.ScalarU32(uint32(ChunkRows(rows))))
					}
					if err := im.k.Launch(dev, s, args...); err != nil {
						t.Fatal(err)
					}
					c.writtenOnce(dev, "dx", b.DX)
					if !im.chunked || h <= AccSharedMax { // the global-accumulator path updates its partial row per row
						c.writtenOnce(dev, "partial", b.Partial)
					}
				})
			}
		}
	}
}

func TestEdgeColumnSum(t *testing.T) {
	dev := openDevice(t)
	for _, cols := range []int{1, 31, 32, 33, 257, 896} {
		for _, rows := range []int{1, 7, 8, 9, 1000} {
			if onEmulator(dev) && rows*cols > emuBudget {
				continue
			}
			s := op.Shape{Rows: rows, Hidden: cols}
			r := rng(s, 4)
			p := normals(r, rows, cols, 0)
			// The sum of float32 terms in depth-d order: |ŝ − s| ≤ γ(d)·Σ|term|.
			want := newRef(cols)
			dep := kColSum.Reductions(s)[0].Depth()
			for j := 0; j < cols; j++ {
				a := 0.0
				for i := 0; i < rows; i++ {
					want.want[j] += f64(p[i*cols+j])
					a += math.Abs(f64(p[i*cols+j]))
				}
				want.tol[j] = oracle.Gamma(dep) * a
			}
			c := checker{t, "colsum_f32 " + s.String()}
			d := newDeviceData(t, dev)
			b := ColumnSumBuffers{Rows: rows, Cols: cols, Partial: d.in("partial", p), Out: d.out("out", cols)}
			if err := ColSum.Launch(dev, b); err != nil {
				t.Fatal(err)
			}
			c.writtenOnce(dev, "out", b.Out)
			c.within("out", d.read(b.Out), want)
		}
	}
}

func TestEdgeLayerNorm(t *testing.T) {
	dev := openDevice(t)
	eachShape(t, dev, func(t *testing.T, s op.Shape) {
		rows, h := s.Rows, s.Hidden
		r := rng(s, 5)
		// Rows 1 and 2 of every 3 are offset by 8 and 16: the mean is
		// large against the spread, which tests the two-pass variance.
		x, g, beta, dy := normals(r, rows, h, 8), uniform(r, h, 0.5, 1.5), uniform(r, h, 0, 0.5), normals(r, rows, h, 0)
		eps := float32(1e-5)
		c := checker{t, fmt.Sprintf("layernorm %v eps=%g", s, eps)}
		d := newDeviceData(t, dev)
		fb := LayerNormForwardBuffers{Rows: rows, Hidden: h, Eps: eps, X: d.in("x", x), Gamma: d.in("gamma", g), Beta: d.in("beta", beta),
			Y: d.out("y", rows*h), Mean: d.out("mean", rows), Rstd: d.out("rstd", rows)}
		if err := LayerNormFwd.Launch(dev, fb); err != nil {
			t.Fatal(err)
		}
		c.writtenOnce(dev, "y", fb.Y)
		c.writtenOnce(dev, "mean", fb.Mean)
		c.writtenOnce(dev, "rstd", fb.Rstd)
		wy, wm, wr := refLayerNorm(x, g, beta, eps, rows, h, kLayerNormFwdStats.Reductions(s)[0])
		y, mean, rstd := d.read(fb.Y), d.read(fb.Mean), d.read(fb.Rstd)
		c.within("y", y, wy)
		c.within("mean", mean, wm)
		c.within("rstd", rstd, wr)
		fb.Mean, fb.Rstd = cudart.Buffer{}, cudart.Buffer{}
		if err := LayerNormFwd.Launch(dev, fb); err != nil {
			t.Fatal(err)
		}
		c.same("y (layernorm_fwd vs layernorm_fwd_stats)", y, d.read(fb.Y))

		// Backward, with the kernel's own mean and rstd as inputs.
		wdx, wdg, wdb := refLayerNormBwd(x, g, dy, eps, rows, h, LayerNormBwd.Reductions(s))
		np := LayerNormBwd.PartialRows(rows) * h
		bb := LayerNormBackwardBuffers{Rows: rows, Hidden: h, X: fb.X, Gamma: fb.Gamma, DY: d.in("dy", dy), Mean: d.in("mean", mean), Rstd: d.in("rstd", rstd),
			DX: d.out("dx", rows*h), DGamma: d.out("dgamma", h), DBeta: d.out("dbeta", h), PartialG: d.out("partial_g", np), PartialB: d.out("partial_b", np)}
		if err := LayerNormBwd.Launch(dev, bb); err != nil {
			t.Fatal(err)
		}
		c.writtenOnce(dev, "dbeta", bb.DBeta)
		dx1, dg1, db1 := d.read(bb.DX), d.read(bb.DGamma), d.read(bb.DBeta)
		c.within("dx", dx1, wdx)
		c.within("dgamma", dg1, wdg)
		c.within("dbeta", db1, wdb)
		if err := LayerNormBwd.Launch(dev, bb); err != nil {
			t.Fatal(err)
		}
		c.same("dx", dx1, d.read(bb.DX))
		c.same("dgamma", dg1, d.read(bb.DGamma))
		c.same("dbeta", db1, d.read(bb.DBeta))
		err := kLayerNormBwdChunk.Launch(dev, s, cudart.In(bb.X), cudart.In(bb.Gamma), cudart.In(bb.DY), cudart.In(bb.Mean), cudart.In(bb.Rstd),
			cudart.Out(bb.DX), cudart.Out(bb.PartialG), cudart.Out(bb.PartialB), cudart.ScalarU32(uint32(rows)), cudart.ScalarU32(uint32(h)),
			cudart.ScalarU32(uint32(ChunkRows(rows))))
		if err != nil {
			t.Fatal(err)
		}
		c.writtenOnce(dev, "dx", bb.DX)
	})
}

var (
	headDims = []int{1, 2, 31, 32, 33, 64, 128, 256, 257}
	headsSet = []int{1, 2, 14}
)

func TestEdgePerHeadRMSNorm(t *testing.T) {
	dev := openDevice(t)
	for _, hd := range headDims {
		for _, heads := range headsSet {
			for _, rows := range rowsFor(dev, hd*heads) {
				s := op.Shape{Rows: rows, Hidden: heads * hd, Heads: heads, HeadDim: hd}
				r := rng(s, 6)
				n := rows * heads * hd
				x, g := normals(r, rows*heads, hd, 0), uniform(r, hd, 0.5, 1.5)
				eps := float32(1e-6)
				c := checker{t, fmt.Sprintf("per_head_rmsnorm %v eps=%g", s, eps)}
				want, _ := refRMSNorm(x, g, eps, rows, heads, hd, kPerHeadRMSNorm.Reductions(s)[0])
				d := newDeviceData(t, dev)
				b := PerHeadRMSNormBuffers{Rows: rows, Heads: heads, HeadDim: hd, Eps: eps, X: d.in("x", x), Gamma: d.in("gamma", g), Y: d.out("y", n)}
				if err := PerHeadRMSNormFwd.Launch(dev, b); err != nil {
					t.Fatal(err)
				}
				c.writtenOnce(dev, "y", b.Y)
				c.within("y", d.read(b.Y), want)
			}
		}
	}
}

// ropePositions spans small, typical and large positions; 200000 takes
// sincosf past its fast path (Payne–Hanek reduction, __cudart_i2opi_f).
var ropePositions = []uint32{0, 1, 7, 100, 1000, 4095, 65535, 200000}

func TestEdgeRoPE(t *testing.T) {
	dev := openDevice(t)
	for _, hd := range []int{2, 4, 6, 32, 64, 128, 256} {
		for _, heads := range []int{1, 3, 14} {
			for _, rows := range rowsFor(dev, hd*heads) {
				s := op.Shape{Rows: rows, Hidden: heads * hd, Heads: heads, HeadDim: hd}
				r := rng(s, 7)
				n := rows * heads * hd
				theta := []float32{10000, 1e6}[rows%2]
				x := normals(r, rows*heads, hd, 0)
				pos := make([]uint32, rows)
				for i := range pos {
					pos[i] = ropePositions[(i+hd)%len(ropePositions)]
				}
				d := newDeviceData(t, dev)
				xb := d.in("x", x)
				posb := d.in("positions", pos)
				for _, kind := range []string{"single", "batched", "backward"} {
					c := checker{t, fmt.Sprintf("rope %s %v theta=%g", kind, s, theta)}
					at := pos
					if kind == "single" {
						at = make([]uint32, rows)
						for i := range at {
							at[i] = pos[0]
						}
					}
					want := refRoPE(x, at, rows, heads, hd, theta, kind == "backward")
					b := RoPEBuffers{Rows: rows, Heads: heads, HeadDim: hd, Theta: theta, X: xb, Y: d.out("y", n)}
					var err error
					switch kind {
					case "single":
						b.Pos = pos[0]
						err = RoPEFwd.Launch(dev, b)
					case "batched":
						b.Positions = posb
						err = RoPEFwdBatched.Launch(dev, b)
					case "backward":
						b.Positions = posb
						err = RoPEBwd.Launch(dev, b)
					}
					if err != nil {
						t.Fatal(err)
					}
					c.writtenOnce(dev, "y", b.Y)
					c.within("y", d.read(b.Y), want)
				}
			}
		}
	}
}

// TestEdgeSoftmax runs softmax_fwd on the edge grid with rows of large
// magnitude (offset 300: exp without the max subtracted overflows), then
// softmax_bwd on its output, each against the oracle's bound.
func TestEdgeSoftmax(t *testing.T) {
	dev := openDevice(t)
	eachShape(t, dev, func(t *testing.T, s op.Shape) {
		rows, h := s.Rows, s.Hidden
		r := rng(s, 8)
		x, dy := normals(r, rows, h, 300), normals(r, rows, h, 0)
		c := checker{t, fmt.Sprintf("softmax %v", s)}
		d := newDeviceData(t, dev)
		b := SoftmaxBuffers{Rows: rows, Hidden: h, X: d.in("x", x), Y: d.out("y", rows*h)}
		if err := SoftmaxFwd.Launch(dev, b); err != nil {
			t.Fatal(err)
		}
		c.writtenOnce(dev, "y", b.Y)
		y := d.read(b.Y)
		wy := newRef(rows * h)
		oracle.SoftmaxForward(wy.want, widen(x), rows, h)
		oracle.SoftmaxForwardTol(wy.tol, widen(x), rows, h, orderOf(kSoftmaxFwd.Reductions(s)[0]))
		c.within("y", y, wy)
		bb := SoftmaxBuffers{Rows: rows, Hidden: h, Y: d.in("y", y), DY: d.in("dy", dy), DX: d.out("dx", rows*h)}
		if err := SoftmaxBwd.Launch(dev, bb); err != nil {
			t.Fatal(err)
		}
		c.writtenOnce(dev, "dx", bb.DX)
		wdx := newRef(rows * h)
		oracle.SoftmaxBackward(wdx.want, widen(y), widen(dy), rows, h)
		oracle.SoftmaxBackwardTol(wdx.tol, widen(y), widen(dy), rows, h, orderOf(kSoftmaxBwd.Reductions(s)[0]))
		c.within("dx", d.read(bb.DX), wdx)
	})
}
