package oracle

import "math"

// rmsOf returns sqrt(mean(x²)+eps) of one row, with the sum of squares
// accumulated exactly enough (compensated, FMA-split products) that the only
// visible errors are the final division, addition and square root.
func rmsOf(row []float64, eps float64) float64 {
	return math.Sqrt(sumSquares(row)/float64(len(row)) + eps)
}

// RMSNormForward computes, for each of rows rows of length hidden,
// rms = sqrt(mean(x²)+eps) and y = x/rms·γ. rms (length rows) may be nil.
// y and x have length rows·hidden, gamma has length hidden.
func RMSNormForward(y, rms []float64, x, gamma []float64, rows, hidden int, eps float64) {
	rmsNormRows(y, rms, x, gamma, rows, hidden, func(y, x []float64) float64 {
		rr := rmsOf(x, eps)
		normalizeRow(y, x, gamma, rr)
		return rr
	})
}

// rmsNormRows checks the arguments of an RMSNorm forward over T and calls
// row with each row's y and x; row writes y and returns the row's rms,
// which is stored when rms is not nil. The reference, its complex extension
// and the float32 evaluation differ only in row.
func rmsNormRows[T scalar](y, rms []T, x, gamma []T, rows, hidden int, row func(y, x []T) T) {
	mustRMSNormForward(rmsNormOut, y, rms, x, gamma, rows, hidden)
	for r := 0; r < rows; r++ {
		lo, hi := r*hidden, (r+1)*hidden
		rr := row(y[lo:hi], x[lo:hi])
		if rms != nil {
			rms[r] = rr
		}
	}
}

// normalizeRow writes out_i = x_i/rms·γ_i.
func normalizeRow[T float64 | complex128](out, row, gamma []T, rms T) {
	out, gamma = out[:len(row)], gamma[:len(row)]
	for i, v := range row {
		out[i] = v / rms * gamma[i]
	}
}

// RMSNormRMS writes rms = sqrt(mean(x²)+eps) for each of rows rows of
// length hidden: the rms output of RMSNormForward, bit for bit, without y.
func RMSNormRMS(rms []float64, x []float64, rows, hidden int, eps float64) {
	mustShape(rows, hidden)
	mustLen("rms", rms, rows)
	mustLen("x", x, rows*hidden)
	for r := range rms {
		rms[r] = rmsOf(x[r*hidden:(r+1)*hidden], eps)
	}
}

// RMSNormRMSAlong returns sqrt(mean(z²)+eps) of the single row z with
// z_i = x_i + t·v_i (one product and one sum, each rounded to binary64, as
// DirectionalDerivativeFDErr forms its points): RMSNormRMS of z, bit for
// bit, without storing z.
func RMSNormRMSAlong(x, v []float64, t, eps float64) float64 {
	mustShape(1, len(x))
	mustLen("v", v, len(x))
	v = v[:len(x)]
	var a csum
	for i, xv := range x {
		z := xv + t*v[i]
		p := z * z
		a = a.plus(p)
		if e := prodErr(z, z, p); e != 0 {
			a = a.plus(e)
		}
	}
	ss := a.sum()
	if a.overflowed() {
		var k kbn
		for i, xv := range x {
			z := xv + t*v[i]
			k.addProd(z, z)
		}
		ss = k.sum()
	}
	return math.Sqrt(ss/float64(len(x)) + eps)
}

// RMSNormBackward computes the gradients of RMSNormForward for upstream
// gradient dy:
//
//	dx_i = (1/rms)·(γ_i·dy_i − x_i·Σ_j γ_j·dy_j·x_j / (n·rms²))
//	dγ_i = Σ_rows dy_i·x_i/rms
//
// with rms recomputed from x and eps. dx has the shape of x; dgamma has
// length hidden and may be nil.
func RMSNormBackward(dx, dgamma []float64, x, gamma, dy []float64, rows, hidden int, eps float64) {
	mustNormBackward(gradOut, dx, dgamma, nil, x, gamma, dy, rows, hidden)
	rmsBackward(dx, dgamma, nil, nil, nil, x, gamma, dy, rows, hidden, eps, SerialReduction(), SerialReduction())
}

// FusedResidualRMSNorm computes s = residual + x and y = RMSNorm(s) with
// rms = sqrt(mean(s²)+eps) per row. rms may be nil. For float32 inputs s is
// exact in float64; a float32 kernel stores fl32(s), which
// float32(s) reproduces bit for bit (double rounding through binary64 is
// innocuous for a sum of two float32 values).
func FusedResidualRMSNorm(s, y, rms []float64, residual, x, gamma []float64, rows, hidden int, eps float64) {
	residualSum(s, residual, x, rows, hidden)
	RMSNormForward(y, rms, s, gamma, rows, hidden, eps)
}

// residualSum checks the arguments of a fused residual add and writes
// s = residual + x, one rounding in T.
func residualSum[T float32 | float64](s, residual, x []T, rows, hidden int) {
	mustShape(rows, hidden)
	mustLen("s", s, rows*hidden)
	mustLen("residual", residual, rows*hidden)
	mustLen("x", x, rows*hidden)
	for i := range s {
		s[i] = residual[i] + x[i]
	}
}

// PerHeadRMSNorm normalises each head of each row separately: x is
// [rows][heads·headDim], each run of headDim values is one head, gamma has
// length headDim and is shared by all heads, and rms (length rows·heads,
// may be nil) holds sqrt(mean(head²)+eps) in row-major [rows][heads] order.
func PerHeadRMSNorm(y, rms []float64, x, gamma []float64, rows, heads, headDim int, eps float64) {
	mustShape(rows, heads*headDim)
	RMSNormForward(y, rms, x, gamma, rows*heads, headDim, eps)
}

// PerHeadRMSNormBackward is the gradient of PerHeadRMSNorm: dx per head as in
// RMSNormBackward, dγ (length headDim) summed over rows and heads.
func PerHeadRMSNormBackward(dx, dgamma []float64, x, gamma, dy []float64, rows, heads, headDim int, eps float64) {
	mustShape(rows, heads*headDim)
	RMSNormBackward(dx, dgamma, x, gamma, dy, rows*heads, headDim, eps)
}
