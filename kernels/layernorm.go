package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// LayerNormForward runs the LayerNorm forward (src/layernorm.cu):
// y = (x−mean)·rstd·γ + β per row, rstd = 1/sqrt(var+eps), two-pass variance.
type LayerNormForward struct {
	K      *Kernel // layernorm_fwd: y only
	KStats *Kernel // layernorm_fwd_stats: y, mean and rstd
}

// LayerNormFwd is the LayerNorm forward built from the committed PTX.
var LayerNormFwd = LayerNormForward{K: kLayerNormFwd, KStats: kLayerNormFwdStats}

// LayerNormForwardBuffers are the device-level arguments. Mean and Rstd are
// both the zero Buffer (layernorm_fwd) or both valid (layernorm_fwd_stats).
type LayerNormForwardBuffers struct {
	Rows, Hidden   int
	Eps            float32
	X, Gamma, Beta cudart.Buffer
	Y              cudart.Buffer
	Mean, Rstd     cudart.Buffer
}

// Launch runs the forward on device buffers.
func (f LayerNormForward) Launch(dev cudart.Device, b LayerNormForwardBuffers) error {
	var c argCheck
	checkRowsHidden(&c, b.Rows, b.Hidden)
	if b.Mean.Valid() != b.Rstd.Valid() {
		c.addf("Mean and Rstd must be both set or both zero")
	}
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	s := op.Shape{Rows: b.Rows, Hidden: b.Hidden}
	rows, hidden, eps := cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden)), cudart.ScalarF32(b.Eps)
	if b.Mean.Valid() {
		return f.KStats.Launch(dev, s, cudart.In(b.X), cudart.In(b.Gamma), cudart.In(b.Beta), cudart.Out(b.Y),
			cudart.Out(b.Mean), cudart.Out(b.Rstd), rows, hidden, eps)
	}
	return f.K.Launch(dev, s, cudart.In(b.X), cudart.In(b.Gamma), cudart.In(b.Beta), cudart.Out(b.Y), rows, hidden, eps)
}

// LayerNormForward validates a, runs the forward on dev and fills a.Y (and
// a.Mean, a.Rstd when set).
func (f LayerNormForward) LayerNormForward(dev cudart.Device, a *op.LayerNormForwardArgs) error {
	name := f.K.Name
	if a.Mean != nil || a.Rstd != nil {
		name = f.KStats.Name
	}
	check := func(c *argCheck) bool {
		if !checkRowsHidden(c, a.Rows, a.Hidden) {
			return false
		}
		if (a.Mean == nil) != (a.Rstd == nil) {
			c.addf("Mean and Rstd must be both nil or both set")
		}
		return true
	}
	return call(dev, op.LayerNormForward, name, a, check, nil, func(b buffers, _ *scratch) error {
		return f.Launch(dev, LayerNormForwardBuffers{Rows: a.Rows, Hidden: a.Hidden, Eps: a.Eps, X: b["x"], Gamma: b["gamma"],
			Beta: b["beta"], Y: b["y"], Mean: b["mean"], Rstd: b["rstd"]})
	})
}

// LayerNormBackward runs the LayerNorm backward: layernorm_bwd_chunk
// (dx, and per-block partial dγ, dβ) then colsum_f32 twice.
type LayerNormBackward struct{ K, Reduce *Kernel }

// LayerNormBwd is the LayerNorm backward built from the committed PTX.
var LayerNormBwd = LayerNormBackward{K: kLayerNormBwdChunk, Reduce: kColSum}

// LayerNormBackwardBuffers are the device-level arguments. PartialG and
// PartialB are scratch of at least PartialRows(Rows)·Hidden elements each.
type LayerNormBackwardBuffers struct {
	Rows, Hidden       int
	X, Gamma, DY       cudart.Buffer
	Mean, Rstd         cudart.Buffer
	DX, DGamma, DBeta  cudart.Buffer
	PartialG, PartialB cudart.Buffer
}

// PartialRows returns the rows of each partial scratch buffer: ChunkBlocks(rows).
func (f LayerNormBackward) PartialRows(rows int) int { return ChunkBlocks(rows) }

// Launch runs the backward on device buffers (three launches).
func (f LayerNormBackward) Launch(dev cudart.Device, b LayerNormBackwardBuffers) error {
	var c argCheck
	checkRowsHidden(&c, b.Rows, b.Hidden)
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	rows, hidden := cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden))
	err := f.K.Launch(dev, op.Shape{Rows: b.Rows, Hidden: b.Hidden},
		cudart.In(b.X), cudart.In(b.Gamma), cudart.In(b.DY), cudart.In(b.Mean), cudart.In(b.Rstd),
		cudart.Out(b.DX), cudart.Out(b.PartialG), cudart.Out(b.PartialB), rows, hidden,
		cudart.ScalarU32(uint32(ChunkRows(b.Rows))))
	if err != nil {
		return err
	}
	p := f.PartialRows(b.Rows)
	ps := op.Shape{Rows: p, Hidden: b.Hidden}
	if err := f.Reduce.Launch(dev, ps, cudart.In(b.PartialG), cudart.Out(b.DGamma), cudart.ScalarU32(uint32(p)), hidden); err != nil {
		return err
	}
	return f.Reduce.Launch(dev, ps, cudart.In(b.PartialB), cudart.Out(b.DBeta), cudart.ScalarU32(uint32(p)), hidden)
}

// LayerNormBackward validates a, runs the backward on dev and fills a.DX,
// a.DGamma and a.DBeta.
func (f LayerNormBackward) LayerNormBackward(dev cudart.Device, a *op.LayerNormBackwardArgs) error {
	return call(dev, op.LayerNormBackward, f.K.Name, a, func(c *argCheck) bool { return checkRowsHidden(c, a.Rows, a.Hidden) }, nil,
		func(b buffers, sc *scratch) error {
			np := f.PartialRows(a.Rows) * a.Hidden
			pg, err := sc.alloc("partial_dgamma", cudart.F32, np)
			if err != nil {
				return err
			}
			pb, err := sc.alloc("partial_dbeta", cudart.F32, np)
			if err != nil {
				return err
			}
			return f.Launch(dev, LayerNormBackwardBuffers{Rows: a.Rows, Hidden: a.Hidden, X: b["x"], Gamma: b["gamma"], DY: b["dy"],
				Mean: b["mean"], Rstd: b["rstd"], DX: b["dx"], DGamma: b["dgamma"], DBeta: b["dbeta"], PartialG: pg, PartialB: pb})
		})
}

// Reductions returns the float32 sums of the whole backward for s: the two
// per-row sums and the dγ, dβ column sums (serial over the chunk, then
// colsum_f32 over the blocks).
func (f LayerNormBackward) Reductions(s op.Shape) []op.Reduction {
	red := f.K.Reductions(s)
	col := f.Reduce.Reductions(op.Shape{Rows: f.PartialRows(s.Rows), Hidden: s.Hidden})[0]
	chunk := red[2].Serial
	return []op.Reduction{red[0], red[1],
		{Name: "dγ: Σ_rows dy·x̂ per column", Terms: s.Rows, Serial: chunk + col.Serial, Tree: col.Tree},
		{Name: "dβ: Σ_rows dy per column", Terms: s.Rows, Serial: chunk + col.Serial, Tree: col.Tree},
	}
}
