package binding

import (
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
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
	im := b.Impl()
	j := func(id string, f func(t properties.TB)) Job {
		return Job{ID: id, Binding: b.Name, bindings: []*Binding{b}, Contract: func(t properties.TB) {
			t.Helper()
			if !b.prepared(t, id) {
				return
			}
			f(b.narrow(t))
		}}
	}
	js := b.claimedJobs(im, j)
	// Bit determinism holds of every operation, unless the file says its
	// kernel claims none: then the prediction is reported not_claimed,
	// without loading anything.
	if b.NoDeterminism != "" {
		js = append(js, Job{ID: properties.Determinism, Binding: b.Name, bindings: []*Binding{b}, Contract: func(t properties.TB) {
			t.Helper()
			properties.NotClaimed(t, properties.Determinism, b.NoDeterminism)
		}})
	} else {
		js = append(js, j(properties.Determinism, func(t properties.TB) { properties.DeterminismContract(t, properties.Impls{im}) }))
	}
	if rowWise(b.Contract) {
		// Batch independence and row permutation hold of any row-wise
		// operation alone: the binding is the one member of its family.
		js = append(js,
			j(properties.BatchIndependence, func(t properties.TB) { properties.BatchIndependenceContract(t, properties.Impls{im}) }),
			j(properties.RowPermutation, func(t properties.TB) { properties.RowPermutationContract(t, properties.Impls{im}) }))
	}
	// GPU/emulator parity: the same problem on the run's GPU and on the
	// emulator (skipped with the reason on a run without a GPU).
	js = append(js, j(properties.Parity, func(t properties.TB) { properties.ParityContract(t, properties.Impls{im}) }))
	return js
}

// rowWise reports whether the op table lays an output of contract out by
// rows: row r of it then depends on row r of the inputs alone.
func rowWise(contract string) bool {
	o, ok := op.Lookup(contract)
	if !ok {
		return false
	}
	for _, t := range o.Tensors() {
		if t.Role == op.Out && t.Layout == op.Row {
			return true
		}
	}
	return false
}

// claimedJobs are the predictions of the contract b claims.
func (b *Binding) claimedJobs(im any, j func(id string, f func(t properties.TB)) Job) []Job {
	switch b.Contract {
	case "rmsnorm.forward":
		f := im.(properties.RMSNormForwarder)
		return []Job{
			j(properties.RMSFwd, func(t properties.TB) { properties.RMSNormForwardContract(t, f) }),
			j(properties.EpsParity, func(t properties.TB) { properties.EpsParityContract(t, f) }),
			j(properties.ScaleInvariance, func(t properties.TB) { properties.ScaleInvarianceContract(t, f) }),
			j(properties.DimIndependence, func(t properties.TB) { properties.DimIndependenceContract(t, f) }),
		}
	case "rmsnorm.backward":
		g := im.(properties.RMSNormBackwarder)
		js := []Job{
			j(properties.BRMSBack, func(t properties.TB) { properties.RMSNormBackwardContract(t, g) }),
			j(properties.BRMSBackFD, func(t properties.TB) { properties.RMSNormBackwardFDContract(t, g) }),
		}
		if b.Forward != nil {
			f := b.Forward.Impl().(properties.RMSNormForwarder)
			pair := j(properties.Robustness, func(t properties.TB) { properties.RobustnessContract(t, f, g) })
			pair.Binding, pair.bindings = b.Forward.Name+"+"+b.Name, []*Binding{b.Forward, b}
			js = append(js, pair)
		}
		return js
	case "fused_residual_rmsnorm":
		f := im.(properties.FusedResidualRMSNormer)
		return []Job{j(properties.FusedRMSNorm, func(t properties.TB) { properties.FusedResidualRMSNormContract(t, f) })}
	case "layernorm.forward":
		f := im.(properties.LayerNormForwarder)
		return []Job{
			j(properties.LNForward, func(t properties.TB) { properties.LayerNormForwardContract(t, f) }),
			j(properties.LNShift, func(t properties.TB) { properties.LayerNormShiftContract(t, f) }),
			j(properties.LNMoments, func(t properties.TB) { properties.LayerNormMomentsContract(t, f) }),
		}
	case "layernorm.backward":
		g := im.(properties.LayerNormBackwarder)
		return []Job{j(properties.LNBackward, func(t properties.TB) { properties.LayerNormBackwardContract(t, g) })}
	case "per_head_rmsnorm":
		f := im.(properties.PerHeadRMSNormer)
		return []Job{
			j(properties.QKNForward, func(t properties.TB) { properties.PerHeadRMSNormContract(t, f) }),
			j(properties.QKNHeads, func(t properties.TB) { properties.PerHeadIndependenceContract(t, f) }),
		}
	case "rope.neox.forward":
		f := im.(properties.RoPEForwarder)
		return []Job{j(properties.RoPEThetaCache, func(t properties.TB) { properties.RoPEThetaCacheContract(t, f, b.positionMode()) })}
	case "rope.neox.backward":
		g := im.(properties.RoPEBackwarder)
		js := []Job{j(properties.RoPEBackward, func(t properties.TB) { properties.RoPEBackwardContract(t, g) })}
		if b.Forward != nil {
			f := b.Forward.Impl().(properties.RoPEForwarder)
			mode := b.Forward.positionMode()
			pair := j(properties.RoPEBasis, func(t properties.TB) { properties.RoPEBasisContract(t, f, mode, g) })
			pair.Binding, pair.bindings = b.Forward.Name+"+"+b.Name, []*Binding{b.Forward, b}
			js = append(js, pair)
		}
		return js
	case "softmax.forward":
		f := im.(properties.SoftmaxForwarder)
		return []Job{
			j(properties.SoftmaxFwd, func(t properties.TB) { properties.SoftmaxForwardContract(t, f) }),
			j(properties.SoftmaxShift, func(t properties.TB) { properties.SoftmaxShiftContract(t, f) }),
			j(properties.SoftmaxSum, func(t properties.TB) { properties.SoftmaxSumContract(t, f) }),
		}
	case "softmax.backward":
		g := im.(properties.SoftmaxBackwarder)
		return []Job{j(properties.SoftmaxBwd, func(t properties.TB) { properties.SoftmaxBackwardContract(t, g) })}
	}
	return nil
}

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
// rows <= N, hidden <= N) and HiddenMultiple (hidden % N == 0). A shape
// that still fails a constraint is refused with properties.ErrShapeRefused:
// an invalid draw.
func (b *Binding) narrow(t properties.TB) properties.TB {
	rows, hidden := b.MaxShape()
	mult := b.HiddenMultiple()
	if perHead(b.Contract) {
		mult = 1 // head_dim is drawn apart from hidden there
	}
	storage := b.contractStorage()
	if rows == 0 && hidden == 0 && mult == 1 && storage == nil {
		return t
	}
	c := *t.Config()
	c.Storage = storage
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
