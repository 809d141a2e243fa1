package oracle

import "math"

// centered writes c_j = x_j − μ for one row and returns μ and the biased
// variance Σc²/n. The mean is carried as a double-double (hi+lo) so that
// c_j is accurate to a few binary64 ulps of |c_j| even when |μ| ≫ |c_j|.
func centered(c, row []float64) (mean, variance float64) {
	n := float64(len(row))
	var acc kbn
	for _, v := range row {
		acc.add(v)
	}
	sHi := acc.s
	sLo := acc.c
	hi := (sHi + sLo) / n
	// lo = (S − hi·n)/n with S = sHi + sLo, using an FMA for hi·n.
	lo := ((sHi - hi*n) + sLo + -math.FMA(hi, n, -hi*n)) / n
	var sq kbn
	for j, v := range row {
		d := (v - hi) - lo
		c[j] = d
		sq.addProd(d, d)
	}
	return hi + lo, sq.sum() / n
}

// lnStats writes c_j = x_j − μ for one row (centered) and returns μ and
// rstd = 1/sqrt(var+eps).
func lnStats(c, row []float64, eps float64) (mean, rstd float64) {
	mu, vr := centered(c, row)
	return mu, 1 / math.Sqrt(vr+eps)
}

// LayerNormForward computes, for each row, mean μ = Σx/n, biased variance
// var = Σ(x−μ)²/n, rstd = 1/sqrt(var+eps) and y = (x−μ)·rstd·γ + β.
// mean and rstd (length rows) may be nil; gamma and beta have length hidden.
func LayerNormForward(y, mean, rstd []float64, x, gamma, beta []float64, rows, hidden int, eps float64) {
	layerNormRows(y, mean, rstd, x, gamma, beta, rows, hidden, func(y, x, c []float64) (mu, rs float64) {
		mu, rs = lnStats(c, x, eps)
		affineRow(y, c, rs, gamma, beta)
		return mu, rs
	})
}

// layerNormRows checks the arguments of a LayerNorm forward over T and
// calls row with each row's y and x and a scratch row c; row writes y and
// returns the row's mean and rstd, which are stored when mean and rstd are
// not nil. The reference, its complex extension and the float32 evaluation
// differ only in row.
func layerNormRows[T scalar](y, mean, rstd []T, x, gamma, beta []T, rows, hidden int, row func(y, x, c []T) (mu, rs T)) {
	mustLayerNormForward(layerNormOut, y, mean, rstd, x, gamma, beta, rows, hidden)
	c := make([]T, hidden)
	for r := 0; r < rows; r++ {
		lo, hi := r*hidden, (r+1)*hidden
		mu, rs := row(y[lo:hi], x[lo:hi], c)
		if mean != nil {
			mean[r] = mu
		}
		if rstd != nil {
			rstd[r] = rs
		}
	}
}

// affineRow writes y_j = c_j·rstd·γ_j + β_j.
func affineRow[T float64 | complex128](y, c []T, rstd T, gamma, beta []T) {
	for j := range y {
		y[j] = c[j]*rstd*gamma[j] + beta[j]
	}
}

// LayerNormBackward computes the gradients of LayerNormForward for upstream
// gradient dy, with x̂ = (x−μ)·rstd and g = γ·dy:
//
//	dx_i = rstd·(g_i − mean(g) − x̂_i·mean(g·x̂))
//	dγ_i = Σ_rows dy_i·x̂_i
//	dβ_i = Σ_rows dy_i
//
// dgamma and dbeta (length hidden) may be nil.
func LayerNormBackward(dx, dgamma, dbeta []float64, x, gamma, dy []float64, rows, hidden int, eps float64) {
	mustNormBackward(gradOut, dx, dgamma, dbeta, x, gamma, dy, rows, hidden)
	n := float64(hidden)
	c := make([]float64, hidden)
	xh := make([]float64, hidden)
	dg := make([]kbn, hidden)
	db := make([]kbn, hidden)
	for r := 0; r < rows; r++ {
		_, rs := lnStats(c, x[r*hidden:(r+1)*hidden], eps)
		dyr := dy[r*hidden : (r+1)*hidden]
		var m1, m2 kbn
		for j := range c {
			xh[j] = c[j] * rs
			g := gamma[j] * dyr[j]
			m1.add(g)
			m2.addProd(g, xh[j])
		}
		a := m1.sum() / n
		b := m2.sum() / n
		out := dx[r*hidden : (r+1)*hidden]
		for j := range out {
			out[j] = rs * ((gamma[j]*dyr[j] - a) - xh[j]*b)
			dg[j].addProd(dyr[j], xh[j])
			db[j].add(dyr[j])
		}
	}
	for j := 0; j < hidden; j++ {
		if dgamma != nil {
			dgamma[j] = dg[j].sum()
		}
		if dbeta != nil {
			dbeta[j] = db[j].sum()
		}
	}
}
