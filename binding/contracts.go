package binding

import (
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// Job is one prediction to run against a binding: its ID and the contract
// call that checks it.
type Job struct {
	ID       string // prediction ID, e.g. RMS-FWD-001
	Binding  string // the binding's name (and the forward's, for pairs)
	Contract func(t properties.TB)
	bindings []*Binding // the bindings it launches
}

// Jobs returns the predictions that apply to the bindings' contracts, each
// a contract call over the bound implementation. A backward that names its
// forward (forward:) also gets the predictions that need both (robustness
// of the RMSNorm pair, the RoPE adjoint).
func Jobs(bs ...*Binding) []Job {
	var js []Job
	for _, b := range bs {
		js = append(js, b.jobs()...)
	}
	return js
}

func (b *Binding) jobs() []Job {
	j := func(id string, f func(t properties.TB)) Job {
		return Job{ID: id, Binding: b.Name, bindings: []*Binding{b}, Contract: func(t properties.TB) {
			t.Helper()
			if !b.prepared(t, id) {
				return
			}
			f(b.narrow(t))
		}}
	}
	// Every registry row that covers the claimed operation and whose
	// contract takes the bound implementation applies: the operation's own
	// predictions, and those that hold of every (row-wise) operation. A
	// Pair row applies to a backward that names its forward.
	var js []Job
	for _, p := range properties.InOrder() {
		if !p.Covers(b.Contract) {
			continue
		}
		s := properties.Subject{Impl: b.Impl(), Positions: b.positionMode()}
		if p.Pair != nil {
			if b.Forward == nil || b.Forward.Contract != p.Pair.Name() {
				continue
			}
			s.Forward, s.Positions = b.Forward.Impl(), b.Forward.positionMode()
		}
		if !p.Takes(s) {
			continue
		}
		job := j(p.ID, func(t properties.TB) { p.Run(t, s) })
		if p.Pair != nil {
			job.Binding, job.bindings = b.Forward.Name+"+"+b.Name, []*Binding{b.Forward, b}
		}
		if reason := b.disclaims(p.Claim); reason != "" {
			// The file says its kernel does not make this claim: the
			// prediction is reported not_claimed, without loading anything.
			id := p.ID
			job.Contract = func(t properties.TB) {
				t.Helper()
				properties.NotClaimed(t, id, reason)
			}
		}
		js = append(js, job)
	}
	return js
}

// disclaims returns where the file says its kernel does not make claim
// ("" when it makes it, or claim is "").
func (b *Binding) disclaims(claim string) string { return b.disclaimed[claim] }

// prepared loads the binding's modules (and its forward's) on the run's
// device before prediction id runs. A module the backend cannot load (an
// instruction the emulator does not execute) is the harness's failure,
// recorded as an error with the backend's reason, not a falsification.
func (b *Binding) prepared(t properties.TB, id string) bool {
	t.Helper()
	cfg := t.Config()
	if cfg.Device == nil {
		return true // the contract skips with the reason
	}
	for _, x := range []*Binding{b, b.Forward} {
		if x == nil {
			continue
		}
		if err := x.Prepare(cfg.Device); err != nil {
			cfg.Recorder.Record(outcome.Outcome{ID: id, Status: outcome.Errored, Reason: err.Error(), Runs: []string{t.Name()}})
			t.Fatalf("%s: %v", id, err)
			return false
		}
	}
	return true
}

// narrowed is a TB whose Config narrows the generators to the shapes a
// binding's constraints allow.
type narrowed struct {
	properties.TB
	cfg properties.Config
}

func (n *narrowed) Config() *properties.Config { return &n.cfg }

// narrow returns t with its generators limited by MaxShape (constraints
// rows <= N, hidden <= N) and HiddenMultiple (hidden % N == 0), and drawing
// within Domain: a shape drawn as usual that fails a constraint is replaced
// by one of the feasible shapes the load-time search found. A shape that
// still fails one (none fits the run's caps) is refused with
// properties.ErrShapeRefused: an invalid draw, and too many of them end the
// prediction with the status error and rapid's reason.
func (b *Binding) narrow(t properties.TB) properties.TB {
	rows, hidden := b.MaxShape()
	mult := b.HiddenMultiple()
	if perHead(b.Contract) {
		mult = 1 // head_dim is drawn apart from hidden there
	}
	storage := b.contractStorage()
	if rows == 0 && hidden == 0 && mult == 1 && storage == nil && len(b.constraints) == 0 && b.maxPosition == 0 {
		return t
	}
	c := *t.Config()
	c.Storage = storage
	c.Domain = b.Domain()
	if b.maxPosition > 0 {
		c.MaxPosition = b.maxPosition // the rows of its rope tables
	}
	pick := func(cur, lim int) int {
		if lim > 0 && (cur == 0 || lim < cur) {
			return lim
		}
		return cur
	}
	c.MaxRows, c.MaxHidden = pick(c.MaxRows, rows), pick(c.MaxHidden, hidden)
	if mult > 1 {
		c.HiddenMultiple = mult
	}
	return &narrowed{TB: t, cfg: c}
}

// Domain returns the shapes b's constraints allow, for the generators
// (properties.Config.Domain): what AcceptShape accepts, and the feasible
// shapes Load found, smallest first. Nil when b has no constraints.
func (b *Binding) Domain() *gen.Domain {
	if len(b.constraints) == 0 {
		return nil
	}
	return &gen.Domain{Accepts: func(s op.Shape) bool { return b.accepts(s) == nil }, Feasible: b.feasible}
}

// contractStorage maps the contract's roles that b stores in 16 bits to
// their format, for properties.Config.Storage (nil: all float32). A saved
// statistic the contract holds as the reciprocal of the stored one (rms
// from a stored rstd) is the float32 reciprocal of a 16-bit value, not a
// 16-bit value itself, and is left out.
func (b *Binding) contractStorage() map[string]oracle.Storage {
	var m map[string]oracle.Storage
	for role, s := range b.storage {
		cr, recip := b.contractRole(role)
		if s == oracle.StorageFloat32 || recip {
			continue
		}
		if m == nil {
			m = map[string]oracle.Storage{}
		}
		m[cr] = s
	}
	return m
}

// positionMode says how a bound RoPE forward takes its positions.
func (b *Binding) positionMode() properties.Positions {
	if b.bound["positions"] {
		return properties.PerRowPositions
	}
	return properties.SharedPosition
}
