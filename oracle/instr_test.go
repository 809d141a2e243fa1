package oracle

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptxprop/ptxprop/ptx"
)

// TestArith32WithinDocumentedError checks that Arith32's adversarial
// instructions stay within the PTX ISA's documented errors, reach their
// extremes, depend only on operands and seed, and that the zero value
// rounds correctly.
func TestArith32WithinDocumentedError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 24))
	f := func() float32 {
		return float32(math.Ldexp(r.Float64()+0.5, r.IntN(80)-40))
	}
	adv := Arith32{Adversarial: true, Seed: 5}
	var at2 [4]int // operations at their extreme: div, exp2, sqrt, lg2
	for range 20000 {
		a, b := f(), f()
		if r.IntN(2) == 0 {
			a = -a
		}
		if got, cr := adv.Div(a, b), a/b; ULPDistance32(got, cr) > 2 {
			t.Fatalf("Div(%g, %g) = %g is %d ulp from %g", a, b, got, ULPDistance32(got, cr), cr)
		} else if ULPDistance32(got, cr) == 2 {
			at2[0]++
		}
		x := float32(r.Float64()*250 - 125)
		if got, cr := adv.Exp2(x), float32(math.Exp2(float64(x))); ULPDistance32(got, cr) > 2 {
			t.Fatalf("Exp2(%g) = %g is %d ulp from %g", x, got, ULPDistance32(got, cr), cr)
		} else if ULPDistance32(got, cr) == 2 {
			at2[1]++
		}
		y := math.Sqrt(float64(b))
		if g := adv.Sqrt(b); math.Abs(float64(g)-y) > SqrtApproxRelErr*y {
			t.Fatalf("Sqrt(%g): relative error %g > 2^-23", b, math.Abs(float64(g)-y)/y)
		} else if atEdge(g, y, SqrtApproxRelErr*y) {
			at2[2]++
		}
		l := math.Log2(float64(b))
		bound := Lg2ApproxRelErr * math.Abs(l)
		if b > 0.5 && b < 2 {
			bound = Lg2ApproxAbsErr
		}
		if g := adv.Lg2(b); math.Abs(float64(g)-l) > bound {
			t.Fatalf("Lg2(%g): error %g > %g", b, math.Abs(float64(g)-l), bound)
		} else if atEdge(g, l, bound) {
			at2[3]++
		}
		if adv.Div(a, b) != adv.Div(a, b) || (Arith32{}).Div(a, b) != a/b || (Arith32{}).Sqrt(b) != float32(y) {
			t.Fatalf("Div or Sqrt of (%g, %g) not deterministic or not correctly rounded", a, b)
		}
	}
	for i, n := range at2 {
		if n < 20000/4 {
			t.Errorf("instruction %d reached the edge of its bound %d times in 20000, want most", i, n)
		}
	}
	// Subnormal quotients move by whole subnormal spacings, and a quotient
	// that rounds to zero can still become a subnormal.
	tiny := float32(math.Ldexp(1, -149))
	seen := map[float32]bool{}
	for seed := range uint64(64) {
		q := Arith32{Adversarial: true, Seed: seed}.Div(7*tiny, 3)
		if ULPDistance32(q, 2*tiny) > 2 {
			t.Fatalf("Div(7·2^-149, 3) = %g, more than 2 ulp from 2·2^-149", q)
		}
		seen[q] = true
		if z := (Arith32{Adversarial: true, Seed: seed}).Div(tiny, 4); z != 0 && z != 2*tiny && z != -2*tiny {
			t.Fatalf("Div(2^-149, 4) = %g, want 0 or ±2 spacings", z)
		}
	}
	if !seen[0] || !seen[4*tiny] || !seen[2*tiny] {
		t.Errorf("Div(7·2^-149, 3) over 64 seeds gave %v, want 0, 2 and 4 spacings", seen)
	}
}

// atEdge reports whether g, within a of y, is the last float32 in that
// direction: the next one away from y is not within a.
func atEdge(g float32, y, a float64) bool {
	away := float32(math.Inf(1))
	if float64(g) < y {
		away = float32(math.Inf(-1))
	}
	return math.Abs(float64(math.Nextafter32(g, away))-y) > a
}

// TestLayerNormSubnormalMeanWorstCase is the failure LN-FWD-001 showed
// under -ptxprop.emu-adversarial on a Triton LayerNorm forward: a row whose
// mean is subnormal, computed by div.full.f32 two ulp from the correctly
// rounded quotient. The mean's error then exceeds the bound a correctly
// rounded division would give (γ_{d+2}·M1 + 2η) and stays within the one
// for div.full (γ_{d+6}·M1 + 5η).
func TestLayerNormSubnormalMeanWorstCase(t *testing.T) {
	const s = 0x1p-149 // the subnormal spacing
	c := Case{Kernel: KernelLayerNormForward, Rows: 1, Hidden: 3, Eps: 1e-5,
		X: []float64{3 * s, 2 * s, 2 * s}, Gamma: []float64{1, 1, 1}, Beta: []float64{0, 0, 0}}
	mean := 7.0 / 3 * s // exact; correctly rounded: 2·2^-149
	m1 := mean
	oldBound := Gamma(2+2)*m1 + 2*Eta32
	found := false
	for seed := range uint64(64) {
		ar := Arith32{Adversarial: true, Seed: seed}
		got := make([]float32, 3)
		mu := make([]float32, 1)
		layerNormForward32(got, mu, make([]float32, 1), to32(c.X), to32(c.Gamma), to32(c.Beta), 1, 3, float32(c.Eps), false, ar)
		o := c.CheckWith(ar)
		if !(o.MaxRatio <= 1) {
			t.Fatalf("seed %d: %v", seed, o)
		}
		if float64(mu[0]) == 4*s {
			found = true
			if e := 4*s - mean; e <= oldBound {
				t.Fatalf("mean error %g within the correctly rounded bound %g: not the worst case", e, oldBound)
			}
		}
	}
	if !found {
		t.Fatal("no seed of 64 put the mean two ulp above its correctly rounded value")
	}
}

// TestBoundsCoverCommittedKernels checks that every approximate
// instruction in the PTX ptxprop ships (its own kernels and the committed
// foreign Triton and nvcc kernels) is one the bounds are derived for.
func TestBoundsCoverCommittedKernels(t *testing.T) {
	files, err := filepath.Glob("../kernels/ptx/*.ptx")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := filepath.Glob("../binding/testdata/foreign/*/*.ptx")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, foreign...)
	if len(files) < 10 {
		t.Fatalf("found %d PTX files, want the committed kernels", len(files))
	}
	seen := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		as, err := ptx.Approximations(src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, a := range as {
			seen[a.Inst] = true
			if ok, why := Covers(a.Inst); !ok {
				t.Errorf("%s: %v: %s", f, a, why)
			}
		}
	}
	for _, inst := range []string{"div.full.f32", "sqrt.approx.ftz.f32", "ex2.approx.f32"} {
		if !seen[inst] {
			t.Errorf("no committed kernel uses %s: the test no longer looks at the kernels it was written for", inst)
		}
	}
	for _, inst := range []string{"div.full.ftz.f32", "div.approx.f32", "sin.approx.f32", "tanh.approx.f32", "ex2.approx.f16"} {
		if ok, _ := Covers(inst); ok {
			t.Errorf("Covers(%s) = true", inst)
		}
	}
}
