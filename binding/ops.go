package binding

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptxprop/ptxprop/op"
)

// The contracts a binding can claim, and the roles each offers: derived
// from the op table (package op), one contract per operation.

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
	// binds. Empty: the contract has none.
	forms map[string][]string
	// savedOut says whether the saved statistics are outputs (forward) or
	// inputs (backward); savedRequired whether a binding must bind them
	// (a backward reads them; a forward's are optional outputs).
	savedOut, savedRequired bool
	perHead                 bool
	// traits are the operation's facts beyond its tensors (op.TraitsOf).
	traits op.Traits
	// optionalPositions: a positional operation whose per-row positions
	// may be replaced by the scalar pos.
	optionalPositions bool
}

const (
	rowsHidden = "rows * hidden"
	perRow     = "rows"
	perCol     = "hidden"
)

// statForms are the forms in which a kernel may keep saved statistics,
// keyed by the statistics of an operation in the op table (its per-row
// float tensors, names joined by "+"); each form lists the roles it binds.
// A role that is not a statistic of the op table is the reciprocal of one
// (rstd = 1/rms, std = 1/rstd; see contractRole).
var statForms = map[string]map[string][]string{
	"rms":       {"rms_eps": {"rms"}, "rstd": {"rstd"}},
	"mean+rstd": {"mean_rstd": {"mean", "rstd"}, "mean_std": {"mean", "std"}},
}

// isStat reports whether t is a saved statistic: a float per row.
func isStat(t op.Tensor) bool { return t.Layout == op.Row && t.Cols == op.One && t.Kind == "f32" }

// size is t's length as an expression of the shape names.
func size(t op.Tensor) string {
	switch {
	case t.Layout == op.Row && t.Cols == op.Hidden:
		return rowsHidden
	case t.Layout == op.Row && t.Cols == op.One:
		return perRow
	case t.Cols == op.HeadDim:
		return "head_dim"
	}
	return perCol
}

// specOf derives o's contract from the op table.
func specOf(o op.Operation) *opSpec {
	s := &opSpec{contract: o.Name(), tensors: map[string]tensorSpec{}, scalars: o.Scalars(), perHead: o.PerHead(), traits: op.TraitsOf(o)}
	var stats []string
	statIn, statOptional := false, false
	for _, t := range o.Tensors() {
		if isStat(t) {
			stats = append(stats, t.Name)
			statIn, statOptional = t.Role == op.In, t.Optional
			continue
		}
		s.tensors[t.Name] = tensorSpec{size: size(t), input: t.Role == op.In, positions: t.Kind == "u32"}
		if t.Kind == "u32" && t.Optional && s.traits.Positional {
			s.optionalPositions = true
		}
		if !t.Optional {
			s.required = append(s.required, t.Name)
		}
	}
	if d := s.traits.MaySave; len(d) > 0 && len(stats) == 0 {
		stats, statOptional = d, true
	}
	if len(stats) == 0 {
		return s
	}
	s.forms = statForms[strings.Join(stats, "+")]
	if s.forms == nil {
		panic(fmt.Sprintf("binding: %s saves statistics %v, which have no saved: forms", o.Name(), stats))
	}
	s.savedOut, s.savedRequired = !statIn, !statOptional
	for _, roles := range s.forms {
		for _, r := range roles {
			s.tensors[r] = tensorSpec{size: perRow, input: statIn, saved: r}
		}
	}
	return s
}

var ops = func() map[string]*opSpec {
	m := map[string]*opSpec{}
	for _, o := range op.All() {
		m[o.Name()] = specOf(o)
	}
	return m
}()

// Contracts returns the contract names a binding may claim, sorted.
func Contracts() []string {
	return sortedKeys(ops)
}

// perHead reports whether contract's shape is heads·head_dim.
func perHead(contract string) bool {
	o := ops[contract]
	return o != nil && o.perHead
}

// pairedHeadDim reports whether contract's head_dim is even (op.Traits).
func pairedHeadDim(contract string) bool {
	o := ops[contract]
	return o != nil && o.traits.PairedHeadDim
}

// forwardOf returns the forward a backward binding may name (forward:):
// the operation of the same name with .forward for .backward, when the
// backward reads a per-row input the forward has too (its saved
// statistics, the positions); "" otherwise.
func forwardOf(contract string) string {
	name, ok := strings.CutSuffix(contract, ".backward")
	if !ok {
		return ""
	}
	bwd, _ := op.Lookup(contract)
	fwd, ok := op.Lookup(name + ".forward")
	if !ok {
		return ""
	}
	for _, t := range bwd.Tensors() {
		if t.Role == op.In && t.Layout == op.Row && t.Cols == op.One &&
			slices.ContainsFunc(fwd.Tensors(), func(u op.Tensor) bool { return u.Name == t.Name }) {
			return fwd.Name()
		}
	}
	return ""
}

// shapeNames are the names every expression may use; hidden is
// heads·head_dim for the per-head contracts, and heads, head_dim are 0
// elsewhere.
var shapeNames = []string{"rows", "hidden", "heads", "head_dim"}

// floatScalars are the scalar roles that are floating-point values.
var floatScalars = map[string]bool{"eps": true, "theta": true}
