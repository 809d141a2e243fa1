package oracle

import "fmt"

// The reference, the complex extension, the float32 evaluation and the
// bound of one operation take arguments of the same shapes, so each
// operation's shapes are checked by one function here. A bound names its
// outputs after what they bound (tolY for y), so the output names are
// arguments; the inputs' names are the same everywhere.

// scalar is an element type of the oracle's tensors.
type scalar interface{ float32 | float64 | complex128 }

func mustLen[T scalar](name string, s []T, n int) {
	if len(s) != n {
		panic(fmt.Sprintf("oracle: len(%s) = %d, want %d", name, len(s), n))
	}
}

func mustLenOpt[T scalar](name string, s []T, n int) {
	if s != nil {
		mustLen(name, s, n)
	}
}

func mustShape(rows, hidden int) {
	if rows < 0 || hidden < 1 {
		panic(fmt.Sprintf("oracle: bad shape rows=%d hidden=%d", rows, hidden))
	}
}

func mustRoPEShape(rows, heads, headDim int) {
	if rows < 0 || heads < 1 || headDim < 2 || headDim%2 != 0 {
		panic(fmt.Sprintf("oracle: bad RoPE shape rows=%d heads=%d headDim=%d (headDim must be even)", rows, heads, headDim))
	}
}

// The output names of the references and of the bounds.
var (
	rmsNormOut    = [2]string{"y", "rms"}
	rmsNormTolOut = [2]string{"tolY", "tolRMS"}
	layerNormOut  = [3]string{"y", "mean", "rstd"}
	layerNormTol  = [3]string{"tolY", "tolMean", "tolRstd"}
	gradOut       = [3]string{"dx", "dgamma", "dbeta"}
	gradTolOut    = [3]string{"tolDX", "tolDGamma", "tolDBeta"}
	ropeOut       = [2]string{"y", "x"}
	ropeTolOut    = [2]string{"tol", "in"}
)

// mustRMSNormForward checks an RMSNorm forward: y [rows][hidden] and the
// optional rms [rows], named by out, x [rows][hidden] and gamma [hidden].
func mustRMSNormForward[T scalar](out [2]string, y, rms, x, gamma []T, rows, hidden int) {
	mustShape(rows, hidden)
	mustLen(out[0], y, rows*hidden)
	mustLenOpt(out[1], rms, rows)
	mustLen("x", x, rows*hidden)
	mustLen("gamma", gamma, hidden)
}

// mustLayerNormForward checks a LayerNorm forward: y [rows][hidden], the
// optional mean and rstd [rows], named by out, x [rows][hidden], gamma and
// beta [hidden].
// They are an RMSNorm forward's, mean in rms's place, and two more.
func mustLayerNormForward[T scalar](out [3]string, y, mean, rstd, x, gamma, beta []T, rows, hidden int) {
	mustRMSNormForward([2]string{out[0], out[1]}, y, mean, x, gamma, rows, hidden)
	mustLenOpt(out[2], rstd, rows)
	mustLen("beta", beta, hidden)
}

// mustNormBackward checks an RMSNorm or LayerNorm backward: dx
// [rows][hidden] and the optional dgamma and dbeta [hidden] (dbeta is nil
// for RMSNorm), named by out, x and dy [rows][hidden] and gamma [hidden].
func mustNormBackward[T scalar](out [3]string, dx, dgamma, dbeta, x, gamma, dy []T, rows, hidden int) {
	mustShape(rows, hidden)
	mustLen(out[0], dx, rows*hidden)
	mustLenOpt(out[1], dgamma, hidden)
	mustLenOpt(out[2], dbeta, hidden)
	mustLen("x", x, rows*hidden)
	mustLen("gamma", gamma, hidden)
	mustLen("dy", dy, rows*hidden)
}

// mustRoPE checks a rotation: its output and input [rows][heads·headDim],
// named by names, and pos [rows].
func mustRoPE[T scalar](names [2]string, y, x []T, pos []float64, rows, heads, headDim int) {
	mustRoPEShape(rows, heads, headDim)
	w := heads * headDim
	mustLen(names[0], y, rows*w)
	mustLen(names[1], x, rows*w)
	mustLen("pos", pos, rows)
}
