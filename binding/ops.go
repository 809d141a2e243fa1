package binding

// The contracts a binding can claim, and the roles each offers.

// tensorSpec is a tensor role: its length as an expression of the shape,
// whether the kernel reads it (input) or writes it, whether it holds
// positions (uint32) rather than values.
type tensorSpec struct {
	size      string
	input     bool
	positions bool
	// saved is the statistic a saved role holds ("rms", "rstd", "mean",
	// "std"); "" for data tensors.
	saved string
}

// opSpec describes one contract.
type opSpec struct {
	contract string
	tensors  map[string]tensorSpec
	// required are the roles every binding of the contract must bind (the
	// saved statistics of the form are added to them when saved is set).
	required []string
	// scalars are the scalar roles available (shape dimensions, eps,
	// theta, pos).
	scalars []string
	// forms are the saved-statistic forms allowed, with the roles each
	// binds; the first is the default. Empty: the contract has none.
	forms map[string][]string
	// savedOut says whether the saved statistics are outputs (forward) or
	// inputs (backward); savedRequired whether a binding must bind them
	// (a backward reads them; layernorm.forward's predictions check them).
	savedOut, savedRequired bool
}

const (
	rowsHidden = "rows * hidden"
	perRow     = "rows"
	perCol     = "hidden"
)

var rmsForms = map[string][]string{"rms_eps": {"rms"}, "rstd": {"rstd"}}
var lnForms = map[string][]string{"mean_rstd": {"mean", "rstd"}, "mean_std": {"mean", "std"}}

func stats(out bool, names ...string) map[string]tensorSpec {
	m := map[string]tensorSpec{}
	for _, n := range names {
		m[n] = tensorSpec{size: perRow, input: !out, saved: n}
	}
	return m
}

func merge(ms ...map[string]tensorSpec) map[string]tensorSpec {
	r := map[string]tensorSpec{}
	for _, m := range ms {
		for k, v := range m {
			r[k] = v
		}
	}
	return r
}

var ops = map[string]*opSpec{
	"rmsnorm.forward": {
		tensors: merge(map[string]tensorSpec{
			"x": {size: rowsHidden, input: true}, "gamma": {size: perCol, input: true}, "y": {size: rowsHidden},
		}, stats(true, "rms", "rstd")),
		required: []string{"x", "gamma", "y"},
		scalars:  []string{"rows", "hidden", "eps"},
		forms:    rmsForms, savedOut: true,
	},
	"rmsnorm.backward": {
		tensors: merge(map[string]tensorSpec{
			"x": {size: rowsHidden, input: true}, "gamma": {size: perCol, input: true}, "dy": {size: rowsHidden, input: true},
			"dx": {size: rowsHidden}, "dgamma": {size: perCol},
		}, stats(false, "rms", "rstd")),
		required: []string{"x", "gamma", "dy", "dx", "dgamma"},
		scalars:  []string{"rows", "hidden"},
		forms:    rmsForms, savedRequired: true,
	},
	"fused_residual_rmsnorm": {
		tensors: merge(map[string]tensorSpec{
			"residual": {size: rowsHidden, input: true}, "x": {size: rowsHidden, input: true}, "gamma": {size: perCol, input: true},
			"residual_out": {size: rowsHidden}, "y": {size: rowsHidden},
		}, stats(true, "rms", "rstd")),
		required: []string{"residual", "x", "gamma", "residual_out", "y"},
		scalars:  []string{"rows", "hidden", "eps"},
		forms:    rmsForms, savedOut: true,
	},
	"layernorm.forward": {
		tensors: merge(map[string]tensorSpec{
			"x": {size: rowsHidden, input: true}, "gamma": {size: perCol, input: true}, "beta": {size: perCol, input: true},
			"y": {size: rowsHidden},
		}, stats(true, "mean", "rstd", "std")),
		required: []string{"x", "gamma", "beta", "y"},
		scalars:  []string{"rows", "hidden", "eps"},
		// Its predictions (LN-FWD, LN-MOMENTS) check mean and rstd on
		// every draw: a binding must save them.
		forms: lnForms, savedOut: true, savedRequired: true,
	},
	"layernorm.backward": {
		tensors: merge(map[string]tensorSpec{
			"x": {size: rowsHidden, input: true}, "gamma": {size: perCol, input: true}, "dy": {size: rowsHidden, input: true},
			"dx": {size: rowsHidden}, "dgamma": {size: perCol}, "dbeta": {size: perCol},
		}, stats(false, "mean", "rstd", "std")),
		required: []string{"x", "gamma", "dy", "dx", "dgamma", "dbeta"},
		scalars:  []string{"rows", "hidden"},
		forms:    lnForms, savedRequired: true,
	},
	"per_head_rmsnorm": {
		tensors: map[string]tensorSpec{
			"x": {size: rowsHidden, input: true}, "gamma": {size: "head_dim", input: true}, "y": {size: rowsHidden},
		},
		required: []string{"x", "gamma", "y"},
		scalars:  []string{"rows", "heads", "head_dim", "hidden", "eps"},
	},
	"rope.neox.forward": {
		tensors: map[string]tensorSpec{
			"x": {size: rowsHidden, input: true}, "positions": {size: perRow, input: true, positions: true}, "y": {size: rowsHidden},
		},
		required: []string{"x", "y"},
		scalars:  []string{"rows", "heads", "head_dim", "hidden", "theta", "pos"},
	},
	"rope.neox.backward": {
		tensors: map[string]tensorSpec{
			"dy": {size: rowsHidden, input: true}, "positions": {size: perRow, input: true, positions: true}, "dx": {size: rowsHidden},
		},
		required: []string{"dy", "positions", "dx"},
		scalars:  []string{"rows", "heads", "head_dim", "hidden", "theta"},
	},
	"softmax.forward": {
		tensors:  map[string]tensorSpec{"x": {size: rowsHidden, input: true}, "y": {size: rowsHidden}},
		required: []string{"x", "y"},
		scalars:  []string{"rows", "hidden"},
	},
	"softmax.backward": {
		tensors: map[string]tensorSpec{
			"y": {size: rowsHidden, input: true}, "dy": {size: rowsHidden, input: true}, "dx": {size: rowsHidden},
		},
		required: []string{"y", "dy", "dx"},
		scalars:  []string{"rows", "hidden"},
	},
}

func init() {
	for name, o := range ops {
		o.contract = name
	}
}

// Contracts returns the contract names a binding may claim, sorted.
func Contracts() []string {
	return sortedKeys(ops)
}

// shapeNames are the names every expression may use; hidden is
// heads·head_dim for the per-head contracts, and heads, head_dim are 0
// elsewhere.
var shapeNames = []string{"rows", "hidden", "heads", "head_dim"}

// floatScalars are the scalar roles that are floating-point values.
var floatScalars = map[string]bool{"eps": true, "theta": true}
