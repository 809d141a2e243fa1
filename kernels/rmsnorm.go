package kernels

import (
	"fmt"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// ---------------------------------------------------------------------------
// Forward

// RMSNormForward runs the batched RMSNorm forward (src/rmsnorm_fwd.cu):
// y = x/rms·γ per row with rms = sqrt(mean(x²)+eps).
type RMSNormForward struct {
	K    *Kernel // rmsnorm_fwd: y only
	KRMS *Kernel // rmsnorm_fwd_rms: y and rms, used when rms is requested
}

// RMSNormFwd is the RMSNorm forward built from the committed PTX.
var RMSNormFwd = RMSNormForward{K: kRMSNormFwd, KRMS: kRMSNormFwdRMS}

// RMSNormForwardBuffers are the device-level arguments of RMSNormForward.
type RMSNormForwardBuffers struct {
	Rows, Hidden int
	Eps          float32
	X, Gamma, Y  cudart.Buffer
	RMS          cudart.Buffer // optional output; the zero Buffer launches rmsnorm_fwd
}

func checkRowsHidden(c *argCheck, rows, hidden int) bool {
	return c.dims(names("rows", "hidden"), rows, hidden) && c.elements("rows·hidden", rows*hidden)
}

// Launch runs the forward on device buffers.
func (f RMSNormForward) Launch(dev cudart.Device, b RMSNormForwardBuffers) error {
	var c argCheck
	checkRowsHidden(&c, b.Rows, b.Hidden)
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	s := op.Shape{Rows: b.Rows, Hidden: b.Hidden}
	rows, hidden := cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden))
	if b.RMS.Valid() {
		return f.KRMS.Launch(dev, s, cudart.In(b.X), cudart.In(b.Gamma), cudart.Out(b.Y), cudart.Out(b.RMS), rows, hidden, cudart.ScalarF32(b.Eps))
	}
	return f.K.Launch(dev, s, cudart.In(b.X), cudart.In(b.Gamma), cudart.Out(b.Y), rows, hidden, cudart.ScalarF32(b.Eps))
}

// RMSNormForward validates a, runs the forward on dev and fills a.Y (and
// a.RMS when it is not nil).
func (f RMSNormForward) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	name := f.K.Name
	if a.RMS != nil {
		name = f.KRMS.Name
	}
	return call(dev, op.RMSNormForward, name, a, func(c *argCheck) bool { return checkRowsHidden(c, a.Rows, a.Hidden) }, nil,
		func(b buffers, _ *scratch) error {
			return f.Launch(dev, RMSNormForwardBuffers{Rows: a.Rows, Hidden: a.Hidden, Eps: a.Eps, X: b["x"], Gamma: b["gamma"],
				Y: b["y"], RMS: b["rms"]})
		})
}

// joinFree frees sc's buffers and adds any failure to err.
func joinFree(err error, sc *scratch) error {
	if ferr := sc.free(); ferr != nil {
		if err == nil {
			return ferr
		}
		return fmt.Errorf("%w (and %v)", err, ferr)
	}
	return err
}

// ---------------------------------------------------------------------------
// Backward

// RMSNormBackwardBuffers are the device-level arguments of every RMSNorm
// backward design. Partial is scratch of at least PartialRows(Rows)·Hidden
// elements (its contents on return are unspecified).
type RMSNormBackwardBuffers struct {
	Rows, Hidden      int
	X, Gamma, RMS, DY cudart.Buffer
	DX, DGamma        cudart.Buffer
	Partial           cudart.Buffer
}

// rmsBwd is the common body of the three designs: kernel k writes dx and a
// [P][hidden] partial dγ, Reduce sums it over P.
type rmsBwd struct {
	k, reduce *Kernel
	chunked   bool
	maxHidden int // 0: any
}

func (r rmsBwd) partialRows(rows int) int {
	if r.chunked {
		return ChunkBlocks(rows)
	}
	return rows
}

func (r rmsBwd) check(c *argCheck, rows, hidden int) bool {
	ok := checkRowsHidden(c, rows, hidden)
	if ok && r.maxHidden > 0 && hidden > r.maxHidden {
		c.addf("hidden=%d, but %s handles hidden <= %d (one warp per row, one element per lane)", hidden, r.k.Name, r.maxHidden)
		ok = false
	}
	return ok
}

func (r rmsBwd) launch(dev cudart.Device, b RMSNormBackwardBuffers) error {
	var c argCheck
	r.check(&c, b.Rows, b.Hidden)
	if err := c.err(r.k.Name); err != nil {
		return err
	}
	s := op.Shape{Rows: b.Rows, Hidden: b.Hidden}
	args := []cudart.Param{cudart.In(b.X), cudart.In(b.Gamma), cudart.In(b.RMS), cudart.In(b.DY),
		cudart.Out(b.DX), cudart.Out(b.Partial), cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden))}
	if r.chunked {
		args = append(args, cudart.ScalarU32(uint32(ChunkRows(b.Rows))))
	}
	if err := r.k.Launch(dev, s, args...); err != nil {
		return err
	}
	p := r.partialRows(b.Rows)
	return r.reduce.Launch(dev, op.Shape{Rows: p, Hidden: b.Hidden},
		cudart.In(b.Partial), cudart.Out(b.DGamma), cudart.ScalarU32(uint32(p)), cudart.ScalarU32(uint32(b.Hidden)))
}

func (r rmsBwd) run(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	return call(dev, op.RMSNormBackward, r.k.Name, a, func(c *argCheck) bool { return r.check(c, a.Rows, a.Hidden) }, nil,
		func(b buffers, sc *scratch) error {
			partial, err := sc.alloc("partial", cudart.F32, r.partialRows(a.Rows)*a.Hidden)
			if err != nil {
				return err
			}
			return r.launch(dev, RMSNormBackwardBuffers{Rows: a.Rows, Hidden: a.Hidden, X: b["x"], Gamma: b["gamma"],
				RMS: b["rms"], DY: b["dy"], DX: b["dx"], DGamma: b["dgamma"], Partial: partial})
		})
}

// reductions combines the row kernel's sums with the column reduction.
func (r rmsBwd) reductions(s op.Shape) []op.Reduction {
	p := r.partialRows(s.Rows)
	red := r.k.Reductions(op.Shape{Rows: s.Rows, Hidden: s.Hidden})
	col := r.reduce.Reductions(op.Shape{Rows: p, Hidden: s.Hidden})[0]
	dg := op.Reduction{Name: "dγ: Σ_rows dy·x̂ per column", Terms: s.Rows, Serial: col.Serial, Tree: col.Tree}
	if r.chunked {
		dg.Serial += red[1].Serial // serial fmaf over the chunk, then colsum
		red = red[:1]
	}
	return append(red, dg)
}

// RMSNormBackwardWarp32 is the single-warp backward (hidden <= 32): kernel
// rmsnorm_bwd_warp32, one warp per row, then colsum_f32 over the rows.
type RMSNormBackwardWarp32 struct{ K, Reduce *Kernel }

// RMSNormBackwardRowWarp is design "warp", the upstream design: kernel
// rmsnorm_bwd_rowwarp, one warp per row for any hidden, writing a per-row
// partial dγ [rows][hidden], then colsum_f32 over the rows.
type RMSNormBackwardRowWarp struct{ K, Reduce *Kernel }

// RMSNormBackwardChunk is the chunked design, the fastest: kernel
// rmsnorm_bwd_chunk, each block owns ChunkRows(rows) contiguous rows and
// writes one partial dγ row, then colsum_f32 over ChunkBlocks(rows) rows.
type RMSNormBackwardChunk struct{ K, Reduce *Kernel }

// The RMSNorm backward designs built from the committed PTX.
var (
	RMSNormBwdWarp32 = RMSNormBackwardWarp32{K: kRMSNormBwdWarp32, Reduce: kColSum}
	RMSNormBwdWarp   = RMSNormBackwardRowWarp{K: kRMSNormBwdRowWarp, Reduce: kColSum}
	RMSNormBwdChunk  = RMSNormBackwardChunk{K: kRMSNormBwdChunk, Reduce: kColSum}
)

func (f RMSNormBackwardWarp32) impl() rmsBwd  { return rmsBwd{k: f.K, reduce: f.Reduce, maxHidden: 32} }
func (f RMSNormBackwardRowWarp) impl() rmsBwd { return rmsBwd{k: f.K, reduce: f.Reduce} }
func (f RMSNormBackwardChunk) impl() rmsBwd   { return rmsBwd{k: f.K, reduce: f.Reduce, chunked: true} }

// RMSNormBackward validates a, runs the backward on dev and fills a.DX and a.DGamma.
func (f RMSNormBackwardWarp32) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	return f.impl().run(dev, a)
}

// RMSNormBackward validates a, runs the backward on dev and fills a.DX and a.DGamma.
func (f RMSNormBackwardRowWarp) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	return f.impl().run(dev, a)
}

// RMSNormBackward validates a, runs the backward on dev and fills a.DX and a.DGamma.
func (f RMSNormBackwardChunk) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	return f.impl().run(dev, a)
}

// Launch runs the backward on device buffers (two launches).
func (f RMSNormBackwardWarp32) Launch(dev cudart.Device, b RMSNormBackwardBuffers) error {
	return f.impl().launch(dev, b)
}

// Launch runs the backward on device buffers (two launches).
func (f RMSNormBackwardRowWarp) Launch(dev cudart.Device, b RMSNormBackwardBuffers) error {
	return f.impl().launch(dev, b)
}

// Launch runs the backward on device buffers (two launches).
func (f RMSNormBackwardChunk) Launch(dev cudart.Device, b RMSNormBackwardBuffers) error {
	return f.impl().launch(dev, b)
}

// PartialRows returns the rows of the Partial scratch buffer: rows.
func (f RMSNormBackwardWarp32) PartialRows(rows int) int { return f.impl().partialRows(rows) }

// PartialRows returns the rows of the Partial scratch buffer: rows.
func (f RMSNormBackwardRowWarp) PartialRows(rows int) int { return f.impl().partialRows(rows) }

// PartialRows returns the rows of the Partial scratch buffer: ChunkBlocks(rows).
func (f RMSNormBackwardChunk) PartialRows(rows int) int { return f.impl().partialRows(rows) }

// Reductions returns the float32 sums of the whole backward for s: the
// per-row Σγ·dy·x̂ and the dγ column sum (kernel plus colsum_f32).
func (f RMSNormBackwardWarp32) Reductions(s op.Shape) []op.Reduction { return f.impl().reductions(s) }

// Reductions returns the float32 sums of the whole backward for s: the
// per-row Σγ·dy·x̂ and the dγ column sum (kernel plus colsum_f32).
func (f RMSNormBackwardRowWarp) Reductions(s op.Shape) []op.Reduction { return f.impl().reductions(s) }

// Reductions returns the float32 sums of the whole backward for s: the
// per-row Σγ·dy·x̂ and the dγ column sum (serial over the chunk, then
// colsum_f32 over the blocks).
func (f RMSNormBackwardChunk) Reductions(s op.Shape) []op.Reduction { return f.impl().reductions(s) }
