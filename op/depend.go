package op

import "fmt"

// Dependence declares which elements of input In an element of output Out
// is computed from: the rows Rows and the columns Cols relative to the
// output element's own. An output element may read exactly the union of
// its dependences' elements (scalars such as ε, θ and the shape are no
// tensors and always allowed); where Must is set it must read every one of
// them (a cached or constant result reads none). A dependence on an
// optional input the arguments leave nil is void.
type Dependence struct {
	Out, In string
	Rows    RowSpan
	Cols    ColSpan
	Must    bool
}

// RowSpan is the rows of an input a dependence covers.
type RowSpan uint8

// The row spans. A Shared input has one row: both name it.
const (
	SameRow  RowSpan = iota + 1 // the output element's row
	EveryRow                    // every row (a column sum)
)

// ColSpan is the columns of an input a dependence covers.
type ColSpan uint8

// The column spans, for an output element in column c.
const (
	SameCol     ColSpan = iota + 1 // column c
	EveryCol                       // every column (a row reduction; a One tensor's one column)
	SameHead                       // the columns of c's head: h·HeadDim … (h+1)·HeadDim−1
	RotatedPair                    // c and its partner c ± HeadDim/2 in its head (NeoX RoPE)
	HeadCol                        // column c mod HeadDim (a per-head weight)
)

func (r RowSpan) String() string {
	switch r {
	case SameRow:
		return "r"
	case EveryRow:
		return "·"
	}
	return "?"
}

func (c ColSpan) String() string {
	switch c {
	case SameCol:
		return "j"
	case EveryCol:
		return "·"
	case SameHead:
		return "head(j)"
	case RotatedPair:
		return "j, pair(j)"
	case HeadCol:
		return "j mod head_dim"
	}
	return "?"
}

func (d Dependence) String() string {
	must := "may"
	if d.Must {
		must = "must"
	}
	return fmt.Sprintf("%s[r][j] %s read %s[%v][%v]", d.Out, must, d.In, d.Rows, d.Cols)
}

// Elements returns the flat indices of input tensor in (of operation
// shape s) that output element (r, c) depends on through d; for a
// ColumnSum output r is 0.
func (d Dependence) Elements(s Shape, in Tensor, r, c int) []int {
	width := in.Cols.Of(s)
	var rows []int
	switch {
	case in.Layout != Row:
		rows = []int{0}
	case d.Rows == SameRow:
		rows = []int{r}
	default:
		for i := 0; i < s.Rows; i++ {
			rows = append(rows, i)
		}
	}
	var cols []int
	switch d.Cols {
	case SameCol:
		cols = []int{c}
	case EveryCol:
		for j := 0; j < width; j++ {
			cols = append(cols, j)
		}
	case SameHead:
		h := c / s.HeadDim
		for j := h * s.HeadDim; j < (h+1)*s.HeadDim; j++ {
			cols = append(cols, j)
		}
	case RotatedPair:
		half := s.HeadDim / 2
		p := c + half
		if c%s.HeadDim >= half {
			p = c - half
		}
		cols = []int{min(c, p), max(c, p)}
	case HeadCol:
		cols = []int{c % s.HeadDim}
	}
	var out []int
	for _, i := range rows {
		for _, j := range cols {
			if j >= 0 && j < width {
				out = append(out, i*width+j)
			}
		}
	}
	return out
}

// dep is a terse constructor for the table below.
func dep(out, in string, rows RowSpan, cols ColSpan, must bool) Dependence {
	return Dependence{Out: out, In: in, Rows: rows, Cols: cols, Must: must}
}

// Statistics saved by a forward (rms, mean, rstd) are a backward's "may"
// inputs: a kernel may recompute them from x instead.
var dependences = map[Operation][]Dependence{
	RMSNormForward: {
		dep("y", "x", SameRow, EveryCol, true), dep("y", "gamma", SameRow, SameCol, true),
		dep("rms", "x", SameRow, EveryCol, true)},
	RMSNormBackward: {
		dep("dx", "x", SameRow, EveryCol, true), dep("dx", "dy", SameRow, EveryCol, true),
		dep("dx", "gamma", SameRow, EveryCol, true), dep("dx", "rms", SameRow, EveryCol, false),
		dep("dgamma", "x", EveryRow, SameCol, true), dep("dgamma", "dy", EveryRow, SameCol, true),
		dep("dgamma", "rms", EveryRow, EveryCol, false)},
	FusedResidualRMSNorm: {
		dep("residual_out", "residual", SameRow, SameCol, true), dep("residual_out", "x", SameRow, SameCol, true),
		dep("y", "residual", SameRow, EveryCol, true), dep("y", "x", SameRow, EveryCol, true),
		dep("y", "gamma", SameRow, SameCol, true)},
	LayerNormForward: {
		dep("y", "x", SameRow, EveryCol, true), dep("y", "gamma", SameRow, SameCol, true),
		dep("y", "beta", SameRow, SameCol, true),
		dep("mean", "x", SameRow, EveryCol, true), dep("rstd", "x", SameRow, EveryCol, true)},
	LayerNormBackward: {
		dep("dx", "x", SameRow, EveryCol, true), dep("dx", "dy", SameRow, EveryCol, true),
		dep("dx", "gamma", SameRow, EveryCol, true),
		dep("dx", "mean", SameRow, EveryCol, false), dep("dx", "rstd", SameRow, EveryCol, false),
		dep("dgamma", "x", EveryRow, SameCol, true), dep("dgamma", "dy", EveryRow, SameCol, true),
		dep("dgamma", "mean", EveryRow, EveryCol, false), dep("dgamma", "rstd", EveryRow, EveryCol, false),
		dep("dbeta", "dy", EveryRow, SameCol, true)},
	PerHeadRMSNorm: {
		dep("y", "x", SameRow, SameHead, true), dep("y", "gamma", SameRow, HeadCol, true)},
	RoPEForward: {
		dep("y", "x", SameRow, RotatedPair, true), dep("y", "positions", SameRow, EveryCol, true)},
	RoPEBackward: {
		dep("dx", "dy", SameRow, RotatedPair, true), dep("dx", "positions", SameRow, EveryCol, true)},
	SoftmaxForward: {
		dep("y", "x", SameRow, EveryCol, true)},
	SoftmaxBackward: {
		dep("dx", "y", SameRow, EveryCol, true), dep("dx", "dy", SameRow, EveryCol, true)},
}

// DependencesOf returns what o's outputs are declared to be computed from.
func DependencesOf(o Operation) []Dependence { return append([]Dependence(nil), dependences[o]...) }
