package op

// Offsets places tensors of a call at an element offset: Offsets[name] = k
// passes the tensor called name (Tensor.Name) to the kernel k elements past
// an aligned start, as a view into a larger buffer would (a row slice, a
// column block of a packed QKV tensor), so its first element is misaligned
// by 4·k bytes. A name it does not hold, or a nil Offsets, passes that
// tensor aligned. Implementations that allocate device buffers honour it;
// Op.Offset reads it, Op.CheckOffsets names its problems.
type Offsets map[string]int

// MaxOffset is the largest element offset the contracts draw: with 4-byte
// elements, 0..3 covers every misalignment of a 16-byte vector access.
const MaxOffset = 3

// RMSNormForwardArgs are the arguments of rmsnorm.forward:
// y = x/rms·γ per row with rms = sqrt(mean(x²)+eps).
type RMSNormForwardArgs struct {
	Rows, Hidden int
	Eps          float32
	X            []float32 // [Rows·Hidden]
	Gamma        []float32 // [Hidden]
	Y            []float32 // output [Rows·Hidden]
	RMS          []float32 // optional output [Rows]: sqrt(mean(x²)+eps), eps included; nil: not computed
	Offsets      Offsets   // element offset of each tensor's device view; nil: all aligned
}

// RMSNormBackwardArgs are the arguments of rmsnorm.backward. RMS is the
// forward's per-row rms, which INCLUDES eps (rms = sqrt(mean(x²)+eps)); the
// backward takes no eps.
type RMSNormBackwardArgs struct {
	Rows, Hidden int
	X            []float32 // [Rows·Hidden] forward input
	Gamma        []float32 // [Hidden]
	RMS          []float32 // [Rows] from the forward, eps included
	DY           []float32 // [Rows·Hidden] upstream gradient ∂L/∂y
	DX           []float32 // output [Rows·Hidden]: ∂L/∂x
	DGamma       []float32 // output [Hidden]: ∂L/∂γ = Σ_rows dy·x/rms
	Offsets      Offsets   // element offset of each tensor's device view; nil: all aligned
}

// FusedResidualRMSNormArgs are the arguments of fused_residual_rmsnorm:
// residual_out = residual + x, y = RMSNorm(residual_out)·γ.
type FusedResidualRMSNormArgs struct {
	Rows, Hidden int
	Eps          float32
	Residual     []float32 // [Rows·Hidden]
	X            []float32 // [Rows·Hidden]
	Gamma        []float32 // [Hidden]
	// Alias makes residual_out the same device buffer as residual (the
	// in-place residual stream). The host slice Residual is never modified;
	// ResidualOut receives the sum either way.
	Alias       bool
	ResidualOut []float32 // output [Rows·Hidden]: residual + x
	Y           []float32 // output [Rows·Hidden]
	Offsets     Offsets   // element offset of each tensor's device view; nil: all aligned
}

// LayerNormForwardArgs are the arguments of layernorm.forward:
// y = (x−mean)·rstd·γ + β per row, rstd = 1/sqrt(var+eps).
// Mean and Rstd are optional outputs, both nil or both set.
type LayerNormForwardArgs struct {
	Rows, Hidden int
	Eps          float32
	X            []float32 // [Rows·Hidden]
	Gamma, Beta  []float32 // [Hidden]
	Y            []float32 // output [Rows·Hidden]
	Mean, Rstd   []float32 // optional outputs [Rows]; rstd = 1/sqrt(var+eps)
	Offsets      Offsets   // element offset of each tensor's device view; nil: all aligned
}

// LayerNormBackwardArgs are the arguments of layernorm.backward. Mean and
// Rstd are the forward's, rstd including eps.
type LayerNormBackwardArgs struct {
	Rows, Hidden  int
	X             []float32 // [Rows·Hidden] forward input
	Gamma         []float32 // [Hidden]
	DY            []float32 // [Rows·Hidden]
	Mean, Rstd    []float32 // [Rows]
	DX            []float32 // output [Rows·Hidden]
	DGamma, DBeta []float32 // outputs [Hidden]
	Offsets       Offsets   // element offset of each tensor's device view; nil: all aligned
}

// PerHeadRMSNormArgs are the arguments of per_head_rmsnorm (QK-norm): every
// head of every row normalised on its own, γ [HeadDim] shared by the heads.
type PerHeadRMSNormArgs struct {
	Rows, Heads, HeadDim int
	Eps                  float32
	X                    []float32 // [Rows·Heads·HeadDim]
	Gamma                []float32 // [HeadDim]
	Y                    []float32 // output [Rows·Heads·HeadDim]
	Offsets              Offsets   // element offset of each tensor's device view; nil: all aligned
}

// RoPEForwardArgs are the arguments of rope.neox.forward. Layout
// [Rows][Heads·HeadDim]; within a head the pairs are (i, i+HeadDim/2) and
// pair i turns by pos·Theta^(−2i/HeadDim). With Positions nil every row
// turns at Pos; otherwise row r turns at Positions[r] ([Rows]) and Pos is
// ignored.
type RoPEForwardArgs struct {
	Rows, Heads, HeadDim int // HeadDim even
	Theta                float32
	Pos                  uint32
	Positions            []uint32
	X                    []float32 // [Rows·Heads·HeadDim]
	Y                    []float32 // output [Rows·Heads·HeadDim]
	Offsets              Offsets   // element offset of each tensor's device view; nil: all aligned
}

// RoPEBackwardArgs are the arguments of rope.neox.backward, the transpose
// rotation R(angle)ᵀ = R(−angle) of the forward's.
type RoPEBackwardArgs struct {
	Rows, Heads, HeadDim int // HeadDim even
	Theta                float32
	Positions            []uint32  // [Rows]
	DY                   []float32 // [Rows·Heads·HeadDim] gradient w.r.t. the forward's output
	DX                   []float32 // output [Rows·Heads·HeadDim]: R(angle)ᵀ·dy
	Offsets              Offsets   // element offset of each tensor's device view; nil: all aligned
}

// SoftmaxForwardArgs are the arguments of softmax.forward: for every row,
// y_j = exp(x_j − max x)/Σ_k exp(x_k − max x) over the Hidden columns.
type SoftmaxForwardArgs struct {
	Rows, Hidden int
	X            []float32 // [Rows·Hidden] logits
	Y            []float32 // output [Rows·Hidden]
	Offsets      Offsets   // element offset of each tensor's device view; nil: all aligned
}

// SoftmaxBackwardArgs are the arguments of softmax.backward: for every row,
// dx_j = y_j·(dy_j − Σ_k y_k·dy_k), y being the forward's output.
type SoftmaxBackwardArgs struct {
	Rows, Hidden int
	Y            []float32 // [Rows·Hidden] the forward's output
	DY           []float32 // [Rows·Hidden] upstream gradient ∂L/∂y
	DX           []float32 // output [Rows·Hidden]: ∂L/∂x
	Offsets      Offsets   // element offset of each tensor's device view; nil: all aligned
}
