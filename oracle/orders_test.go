package oracle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
)

// The naive float32 evaluations use the serial order and correctly rounded
// functions. The emulators below are adversarial stand-ins for kernels:
// they sum in a tree order (Sum32 with TreeReduction), use the alternative
// operation sequences the bounds claim to cover (V1 backward, reciprocal
// multiplication instead of division, powf instead of exp2f/log2f), and
// move every approximate function (rsqrtf, exp2f, log2f, powf, sincosf) by
// a random number of ulps up to its documented CUDA maximum. The bounds for
// the same Reduction must hold for them too.

// adv moves v by up to k float32 ulps in a random direction.
type adv struct{ r *rand.Rand }

func (a adv) ulps(v float32, k int) float32 {
	j := a.r.IntN(2*k+1) - k
	for ; j > 0; j-- {
		v = math.Nextafter32(v, float32(math.Inf(1)))
	}
	for ; j < 0; j++ {
		v = math.Nextafter32(v, float32(math.Inf(-1)))
	}
	return v
}

// rsqrt is rsqrtf: within 2 ulp of the correctly rounded 1/sqrt(v).
func (a adv) rsqrt(v float32) float32 {
	return a.ulps(float32(1/math.Sqrt(float64(v))), 2)
}

// div divides by n either exactly rounded or through a rounded reciprocal.
func (a adv) div(s float32, n int) float32 {
	if a.r.IntN(2) == 0 {
		return s / float32(n)
	}
	return s * (1 / float32(n))
}

func sumSq32(x []float32, red Reduction) float32 {
	t := make([]float32, len(x))
	for i, v := range x {
		t[i] = v * v
	}
	return Sum32(t, red)
}

func rmsFwdEmu(a adv, y, x, g []float32, rows, n int, eps float32, red Reduction) {
	for r := 0; r < rows; r++ {
		xr := x[r*n : (r+1)*n]
		ri := a.rsqrt(a.div(sumSq32(xr, red), n) + eps)
		for i, v := range xr {
			if a.r.IntN(2) == 0 {
				y[r*n+i] = v * ri * g[i]
			} else {
				y[r*n+i] = v * (ri * g[i])
			}
		}
	}
}

// rmsBwdEmu is the V1 order of RMSNormBackwardTol: xh = x·ri,
// c = Σ(γ·dy)·xh / n, dx = ri·(g − xh·c); dγ summed over rows in rowRed.
func rmsBwdEmu(a adv, dx, dg, x, g, dy []float32, rows, n int, eps float32, red, rowRed Reduction) {
	parts := make([][]float32, n)
	for r := 0; r < rows; r++ {
		xr, dyr := x[r*n:(r+1)*n], dy[r*n:(r+1)*n]
		ri := a.rsqrt(a.div(sumSq32(xr, red), n) + eps)
		t := make([]float32, n)
		for j := range xr {
			t[j] = (g[j] * dyr[j]) * (xr[j] * ri)
		}
		c := a.div(Sum32(t, red), n)
		for i := range xr {
			dx[r*n+i] = ri * (g[i]*dyr[i] - (xr[i]*ri)*c)
			parts[i] = append(parts[i], dyr[i]*(xr[i]*ri))
		}
	}
	for i := range dg {
		dg[i] = Sum32(parts[i], rowRed)
	}
}

// softmaxFwdEmu is the forward as a kernel computes it: ex2.approx moved by
// up to 2 ulp (flushed to zero below 2^-126, as .ftz does), the row sum in
// order red, and the quotient by division moved by up to 2 ulp (div.full)
// or through a reciprocal moved by 1 ulp (rcp.approx) and a product.
func softmaxFwdEmu(a adv, y, x []float32, rows, n int, red Reduction) {
	const l2e = float32(math.Log2E)
	for r := 0; r < rows; r++ {
		xr, yr := x[r*n:(r+1)*n], y[r*n:(r+1)*n]
		m := xr[0]
		for _, v := range xr {
			m = max(m, v)
		}
		for j, v := range xr {
			e := a.ulps(float32(math.Exp2(float64((v-m)*l2e))), 2)
			if e < 0x1p-126 && a.r.IntN(2) == 0 {
				e = 0
			}
			yr[j] = e
		}
		s := Sum32(yr, red)
		inv := a.ulps(1/s, 1)
		for j, e := range yr {
			if a.r.IntN(2) == 0 {
				yr[j] = a.ulps(e/s, 2)
			} else {
				yr[j] = e * inv
			}
		}
	}
}

// softmaxBwdEmu is the backward in either form SoftmaxBackwardTol covers,
// with the dot product in order red.
func softmaxBwdEmu(a adv, dx, y, dy []float32, rows, n int, red Reduction) {
	t := make([]float32, n)
	for r := 0; r < rows; r++ {
		lo := r * n
		for j := range t {
			t[j] = y[lo+j] * dy[lo+j]
		}
		s := Sum32(t, red)
		two := a.r.IntN(2) == 0
		for j := lo; j < lo+n; j++ {
			if two {
				dx[j] = float32(y[j]*dy[j]) - float32(y[j]*s)
			} else {
				dx[j] = y[j] * (dy[j] - s)
			}
		}
	}
}

func lnStatsEmu(a adv, x []float32, eps float32, red Reduction, alg VarianceAlgorithm) (mu, rs float32) {
	n := len(x)
	mu = a.div(Sum32(x, red), n)
	var vr float32
	if alg == OnePassVariance {
		vr = a.div(sumSq32(x, red), n) - mu*mu
		if vr < 0 {
			vr = 0
		}
	} else {
		c := make([]float32, n)
		for j, v := range x {
			c[j] = v - mu
		}
		vr = a.div(sumSq32(c, red), n)
	}
	return mu, a.rsqrt(vr + eps)
}

func lnFwdEmu(a adv, y, mean, rstd, x, g, b []float32, rows, n int, eps float32, red Reduction, alg VarianceAlgorithm) {
	for r := 0; r < rows; r++ {
		xr := x[r*n : (r+1)*n]
		mu, rs := lnStatsEmu(a, xr, eps, red, alg)
		mean[r], rstd[r] = mu, rs
		for j, v := range xr {
			y[r*n+j] = (v-mu)*(rs*g[j]) + b[j]
		}
	}
}

func lnBwdEmu(a adv, dx, dg, db, x, g, dy []float32, rows, n int, eps float32, red, rowRed Reduction) {
	pg, pb := make([][]float32, n), make([][]float32, n)
	for r := 0; r < rows; r++ {
		xr, dyr := x[r*n:(r+1)*n], dy[r*n:(r+1)*n]
		mu, rs := lnStatsEmu(a, xr, eps, red, TwoPassVariance)
		xh, gg, t := make([]float32, n), make([]float32, n), make([]float32, n)
		for j, v := range xr {
			xh[j] = (v - mu) * rs
			gg[j] = g[j] * dyr[j]
			t[j] = gg[j] * xh[j]
		}
		m1, m2 := a.div(Sum32(gg, red), n), a.div(Sum32(t, red), n)
		for j := range xr {
			dx[r*n+j] = rs * ((gg[j] - m1) - xh[j]*m2)
			pg[j] = append(pg[j], dyr[j]*xh[j])
			pb[j] = append(pb[j], dyr[j])
		}
	}
	for j := 0; j < n; j++ {
		dg[j], db[j] = Sum32(pg[j], rowRed), Sum32(pb[j], rowRed)
	}
}

// freq returns a float32 RoPE frequency by one of the documented forms,
// each approximate function moved by up to its CUDA ulp bound.
func (a adv) freq(i, d int, theta float32) float32 {
	e := float32(2*i) / float32(d)
	switch a.r.IntN(3) {
	case 0: // exp2f(−e·log2f(θ))
		l := a.ulps(float32(math.Log2(float64(theta))), 1)
		return a.ulps(float32(math.Exp2(float64(-e*l))), 2)
	case 1: // expf(−e·logf(θ))
		l := a.ulps(float32(math.Log(float64(theta))), 1)
		return a.ulps(float32(math.Exp(float64(-e*l))), 2)
	default: // powf(θ, −e)
		return a.ulps(float32(math.Pow(float64(theta), float64(-e))), 4)
	}
}

func ropeEmu(a adv, y, x []float32, pos []float64, rows, heads, d int, theta float32, style RoPEStyle, sign float32) {
	half := d / 2
	for r := 0; r < rows; r++ {
		p := float32(pos[r])
		for i := 0; i < half; i++ {
			ang := p * a.freq(i, d, theta)
			s := sign * a.ulps(float32(math.Sin(float64(ang))), 2)
			c := a.ulps(float32(math.Cos(float64(ang))), 2)
			for h := 0; h < heads; h++ {
				base := (r*heads + h) * d
				ia, ib := style.pair(i, d)
				x0, x1 := x[base+ia], x[base+ib]
				y[base+ia] = x0*c - x1*s
				y[base+ib] = x0*s + x1*c
			}
		}
	}
}

var reductions = []Reduction{SerialReduction(), WarpReduction(), TreeReduction(128), TreeReduction(256), TreeReduction(1024), {Threads: 8, Tree: 3}}

// emuTable evaluates the kernel emulator of each Kernel for c in the
// order red (and rowRed over rows). A Kernel without a row fails
// TestEveryKernelEmulated rather than pass unchecked.
var emuTable = map[Kernel]func(c Case, a adv, red, rowRed Reduction) outputs32{
	KernelRMSNormForward: rmsFwdCase,
	KernelPerHeadRMSNorm: rmsFwdCase,
	KernelFusedResidualRMSNorm: func(c Case, a adv, red, _ Reduction) (got outputs32) {
		n := c.Rows * c.Hidden
		got.s, got.y = f32(n), f32(n)
		res32, x32 := to32(c.Residual), to32(c.X)
		for i := range got.s {
			got.s[i] = res32[i] + x32[i]
		}
		rmsFwdEmu(a, got.y, got.s, to32(c.Gamma), c.Rows, c.Hidden, float32(c.Eps), red)
		return
	},
	KernelRMSNormBackward: func(c Case, a adv, red, rowRed Reduction) (got outputs32) {
		got.dx, got.dgamma = f32(c.Rows*c.Hidden), f32(c.Hidden)
		rmsBwdEmu(a, got.dx, got.dgamma, to32(c.X), to32(c.Gamma), to32(c.DY), c.Rows, c.Hidden, float32(c.Eps), red, rowRed)
		return
	},
	KernelLayerNormForward:        lnFwdCase,
	KernelLayerNormForwardOnePass: lnFwdCase,
	KernelLayerNormBackward: func(c Case, a adv, red, rowRed Reduction) (got outputs32) {
		got.dx, got.dgamma, got.dbeta = f32(c.Rows*c.Hidden), f32(c.Hidden), f32(c.Hidden)
		lnBwdEmu(a, got.dx, got.dgamma, got.dbeta, to32(c.X), to32(c.Gamma), to32(c.DY), c.Rows, c.Hidden, float32(c.Eps), red, rowRed)
		return
	},
	KernelSoftmaxForward: func(c Case, a adv, red, _ Reduction) (got outputs32) {
		got.y = f32(c.Rows * c.Hidden)
		softmaxFwdEmu(a, got.y, to32(c.X), c.Rows, c.Hidden, red)
		return
	},
	KernelSoftmaxBackward: func(c Case, a adv, red, _ Reduction) (got outputs32) {
		got.dx = f32(c.Rows * c.Hidden)
		softmaxBwdEmu(a, got.dx, to32(c.X), to32(c.DY), c.Rows, c.Hidden, red)
		return
	},
	KernelRoPENeoXForward:  ropeCase,
	KernelRoPENeoXBackward: ropeCase,
	KernelRoPEGPTJForward:  ropeCase,
}

func rmsFwdCase(c Case, a adv, red, _ Reduction) (got outputs32) {
	rows, hid := c.normShape()
	got.y = f32(c.Rows * c.Hidden)
	rmsFwdEmu(a, got.y, to32(c.X), to32(c.Gamma), rows, hid, float32(c.Eps), red)
	return
}

func lnFwdCase(c Case, a adv, red, _ Reduction) (got outputs32) {
	got.y, got.mean, got.rstd = f32(c.Rows*c.Hidden), f32(c.Rows), f32(c.Rows)
	lnFwdEmu(a, got.y, got.mean, got.rstd, to32(c.X), to32(c.Gamma), to32(c.Beta), c.Rows, c.Hidden, float32(c.Eps), red, c.variance())
	return
}

func ropeCase(c Case, a adv, _, _ Reduction) (got outputs32) {
	style, sign, in := c.rotation()
	y := f32(c.Rows * c.Hidden)
	ropeEmu(a, y, to32(in), c.Pos, c.Rows, c.Heads, c.HeadDim, float32(c.Theta), style, float32(sign))
	if sign < 0 {
		got.dx = y
	} else {
		got.y = y
	}
	return
}

// checkEmu evaluates the kernel emulator for c in the order red (and rowRed
// over rows) and returns the worst element against the bounds for red.
func checkEmu(c Case, a adv, red, rowRed Reduction) Outcome {
	return c.compare(emuTable[c.Kernel](c, a, red, rowRed), red, rowRed)
}

// TestEveryKernelEmulated: every Kernel has its adversarial emulator, and
// every operation of the op table its soundness row.
func TestEveryKernelEmulated(t *testing.T) {
	ops := map[string]bool{}
	for _, k := range Kernels() {
		if emuTable[k] == nil {
			t.Errorf("%v has no emulator in emuTable", k)
		}
		ops[k.Op()] = true
	}
	for _, o := range op.All() {
		if !ops[o.Name()] {
			t.Errorf("operation %s has no soundness row (kernelTable)", o.Name())
		}
	}
}

// TestSoundnessKernelOrders checks every bound against the adversarial
// emulators in tree orders (run with Sound in -run, like TestSoundness).
func TestSoundnessKernelOrders(t *testing.T) {
	checkSoundness(t, false, func(rt *rapid.T, c Case) (Outcome, string) {
		red := rapid.SampledFrom(reductions).Draw(rt, "red")
		rowRed := rapid.SampledFrom(reductions).Draw(rt, "rowRed")
		a := adv{rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "adv.seed"), 1))}
		return checkEmu(c, a, red, rowRed), fmt.Sprintf("bound for %v", red)
	})
}
