package properties

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// Prediction is a falsifiable claim about one or more kernels. Predictions
// are data: each ID maps to one contract function that tests it, and the
// row names the operations it covers, so that a caller holding an
// implementation of an operation (a bound kernel) derives what to run from
// the registry alone.
type Prediction struct {
	ID        string   // upstream ID, e.g. "FALSIFY-DIM-001"
	Title     string   // one line
	Statement string   // the claim, precise enough to be refuted
	Kernels   []string // kernel names (kernels.Kernel.Name) the claim is about
	Tolerance string   // the tolerance formula used, or "bit-exact"
	// Device says whether the prediction needs a device backend (GPU or
	// emulator); oracle self-tests run on the CPU alone.
	Device bool
	// Ops are the operations the prediction covers: an implementation of
	// any of them may be checked by Contract. Empty for a prediction of no
	// one implementation (the oracle's self-tests, the benchmark).
	Ops []op.Operation
	// Pair, when set, is the forward operation the prediction also needs:
	// it checks an implementation of one of Ops (a backward) together with
	// one of Pair (its forward), as Subject.Forward.
	Pair op.Operation
	// Claim, when set, names the claim of the kernel's author the
	// prediction tests ("determinism"): an author who disclaims it gets the
	// prediction reported not_claimed instead of run.
	Claim string
	// Regimes are the shape regimes the claim depends on that the everyday
	// limits reach rarely or never (large row counts, on the emulator
	// above all): contracts drawing their shape with gen.Shape draw one of
	// them in one check of gen.RegimeOdds (Config.LimitsFor).
	Regimes []gen.Regime
	// Contract checks the prediction on a Subject; nil where it is run only
	// on the kernels it is written for (a design-specific prediction, a
	// run-wide one).
	Contract *Contract
	// Design, when set, checks a prediction about the designs of Kernels
	// alone: it applies to an implementation of ours that it takes and
	// whose kernels Kernels names, all of them; never to a bound kernel.
	// With Exclusive, such an implementation is checked by Design alone (a
	// design whose domain the other predictions' draws exceed).
	Design    *Contract
	Exclusive bool
}

// DesignTakes reports whether the prediction's Design applies to impl,
// whose kernels are named kernels.
func (p *Prediction) DesignTakes(impl any, kernels []string) bool {
	if p.Design == nil || len(kernels) == 0 || !p.Design.takes(p, Subject{Impl: impl}) {
		return false
	}
	for _, k := range kernels {
		if !slices.Contains(p.Kernels, k) {
			return false
		}
	}
	return true
}

// RunDesign runs the prediction's Design on impl. It must be called only
// where DesignTakes holds.
func (p *Prediction) RunDesign(t TB, impl any) {
	t.Helper()
	p.Design.run(t, Subject{Impl: impl})
}

// Subject is what a registry row's contract is run on: an implementation of
// one of the row's Ops, and for a Pair row the forward it goes with.
type Subject struct {
	Impl    any
	Forward any // Pair rows only
	// Positions says how the RoPE forward (Impl, or Forward for a Pair
	// row) takes its positions; ignored by every other operation.
	Positions Positions
}

// Contract is a registry row's contract: which subjects it takes (their
// implementations' interfaces) and how it runs on one.
type Contract struct {
	takes func(p *Prediction, s Subject) bool
	run   func(t TB, s Subject)
}

// On is the contract f over an implementation of I.
func On[I any](f func(t TB, impl I)) *Contract {
	return OnMode(func(t TB, impl I, _ Positions) { f(t, impl) })
}

// OnMode is the contract f over an implementation of I and its position
// mode.
func OnMode[I any](f func(t TB, impl I, mode Positions)) *Contract {
	return &Contract{
		takes: func(_ *Prediction, s Subject) bool { _, ok := s.Impl.(I); return ok },
		run:   func(t TB, s Subject) { f(t, s.Impl.(I), s.Positions) },
	}
}

// OnPair is the contract f over a forward F and a backward B, with the
// forward's position mode.
func OnPair[F, B any](f func(t TB, fwd F, mode Positions, bwd B)) *Contract {
	return &Contract{
		takes: func(_ *Prediction, s Subject) bool {
			_, okF := s.Forward.(F)
			_, okB := s.Impl.(B)
			return okF && okB
		},
		run: func(t TB, s Subject) { f(t, s.Forward.(F), s.Positions, s.Impl.(B)) },
	}
}

// OnImpls is the contract f over Impls, for the predictions that hold of
// any operation (determinism, batch independence, parity): it takes an
// implementation of any operation among the row's Ops.
func OnImpls(f func(t TB, im Impls)) *Contract {
	return &Contract{
		takes: func(p *Prediction, s Subject) bool {
			for _, fam := range operations() {
				if p.covers(fam.operation().Name()) {
					if _, ok := fam.family(s.Impl, gen.EmuLimits); ok {
						return true
					}
				}
			}
			return false
		},
		run: func(t TB, s Subject) { f(t, Impls{s.Impl}) },
	}
}

// covers reports whether the prediction names the operation called name.
func (p *Prediction) covers(name string) bool {
	for _, o := range p.Ops {
		if o.Name() == name {
			return true
		}
	}
	return false
}

// Covers reports whether the prediction's contract applies to an
// implementation of the operation called name.
func (p *Prediction) Covers(name string) bool { return p.Contract != nil && p.covers(name) }

// Takes reports whether the prediction's contract can run on s: s's
// implementations have the interfaces it calls (false without a contract).
func (p *Prediction) Takes(s Subject) bool {
	if p.Contract == nil || (p.Pair != nil) != (s.Forward != nil) {
		return false
	}
	return p.Contract.takes(p, s)
}

// Run runs the prediction's contract on s. It must be called only where
// Takes(s) holds.
func (p *Prediction) Run(t TB, s Subject) {
	t.Helper()
	p.Contract.run(t, s)
}

// Every returns the operations of the op table, for a prediction that holds
// of every operation.
func Every() []op.Operation { return op.All() }

// RowWise returns the operations of the op table with a row-wise output:
// row r of it depends on row r of the inputs alone, so batch independence
// and row permutation hold of it.
func RowWise() []op.Operation {
	var out []op.Operation
	for _, o := range op.All() {
		for _, t := range o.Tensors() {
			if t.Role == op.Out && t.Layout == op.Row {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

func ops(o ...op.Operation) []op.Operation { return o }

var (
	regMu    sync.Mutex
	registry = map[string]*Prediction{}
	regOrder []*Prediction
)

// Register adds p to the registry. Registering an ID twice, or a row whose
// contract covers no operation, is a programming error and panics at init
// time.
func Register(p Prediction) *Prediction {
	regMu.Lock()
	defer regMu.Unlock()
	if p.ID == "" || p.Title == "" || p.Statement == "" {
		panic(fmt.Sprintf("properties: prediction %q needs an ID, a title and a statement", p.ID))
	}
	if _, dup := registry[p.ID]; dup {
		panic(fmt.Sprintf("properties: prediction %q registered twice", p.ID))
	}
	if p.Contract != nil && len(p.Ops) == 0 {
		panic(fmt.Sprintf("properties: prediction %q has a contract but covers no operation", p.ID))
	}
	q := p
	registry[p.ID] = &q
	regOrder = append(regOrder, &q)
	return &q
}

// Lookup returns the prediction registered under id.
func Lookup(id string) (*Prediction, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	p, ok := registry[id]
	return p, ok
}

// All returns every registered prediction, sorted by ID.
func All() []*Prediction {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]*Prediction, 0, len(registry))
	for _, p := range registry {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// InOrder returns every registered prediction in the order registered:
// an operation's own predictions before the ones that hold of every
// operation.
func InOrder() []*Prediction {
	regMu.Lock()
	defer regMu.Unlock()
	return append([]*Prediction(nil), regOrder...)
}
