package properties

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/ptx"
	"github.com/ptxprop/ptxprop/reports"
)

// BatchIndependenceContract checks META-BATCH-001 over every family in im.
func BatchIndependenceContract(t TB, im Impls) {
	t.Helper()
	dev, lim := onDevice(t, BatchIndependence)
	check(t, BatchIndependence, ImplKernels(im), func(rt *rapid.T, o *Obs) {
		p := drawProblem(rt, im, lim)
		r := rapid.IntRange(0, p.rows-1).Draw(rt, "row")
		o.Context(p.outCols, "%v row %d", p, r)
		all, err := p.run(dev)
		o.Check("batch", err)
		o.finiteOutputs(p, "batch", all, nil)
		one, err := p.selectRows([]int{r}).run(dev)
		if errors.Is(err, ErrShapeRefused) {
			// The implementation handles no batch of one row (a binding's
			// constraints): row r leads a batch of the same size instead,
			// its other rows drawn from the batch, so its neighbours change.
			others := rapid.SliceOfN(rapid.IntRange(0, p.rows-1), p.rows-1, p.rows-1).Draw(rt, "others")
			one, err = p.selectRows(append([]int{r}, others...)).run(dev)
		}
		o.Check("row alone", err)
		o.Identical(fmt.Sprintf("row %d alone vs in the batch", r), one[:p.outCols], all[r*p.outCols:(r+1)*p.outCols])
	})
}

// RowPermutationContract checks META-PERM-001 over every family in im.
func RowPermutationContract(t TB, im Impls) {
	t.Helper()
	dev, lim := onDevice(t, RowPermutation)
	check(t, RowPermutation, ImplKernels(im), func(rt *rapid.T, o *Obs) {
		p := drawProblem(rt, im, lim)
		perm := rapid.Permutation(seq(p.rows)).Draw(rt, "perm")
		o.Context(p.outCols, "%v perm %v", p, perm)
		all, err := p.run(dev)
		o.Check("batch", err)
		o.finiteOutputs(p, "batch", all, nil)
		got, err := p.selectRows(perm).run(dev)
		o.Check("permuted batch", err)
		want := make([]float32, 0, p.rows*p.outCols)
		for _, r := range perm {
			want = append(want, all[r*p.outCols:(r+1)*p.outCols]...)
		}
		o.Identical("permuted output vs permuted rows of the output", got[:len(want)], want)
	})
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// ScaleInvarianceContract checks META-SCALE-001.
func ScaleInvarianceContract(t TB, impl RMSNormForwarder) {
	t.Helper()
	dev, lim := onDevice(t, ScaleInvariance)
	check(t, ScaleInvariance, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawRMSCase(rt, lim, gen.Normal, gen.MixedScale, gen.Constant)
		k := rapid.IntRange(-20, 20).Draw(rt, "log2(alpha)")
		alpha := math.Ldexp(1, k)
		cs := c
		cs.x.Data = make([]float32, len(c.x.Data))
		for i, v := range c.x.Data {
			cs.x.Data[i] = float32(float64(v) * alpha)
		}
		lim.Round("x", cs.x.Data) // float16's range is narrower than float32's
		if maxAbs(cs.x.Data) > 1e18 || (maxAbs(c.x.Data) > 0 && maxAbs(cs.x.Data) < 1e-18) {
			return // keep αx and its squares normal: the relation is about ε, not range
		}
		o.Context(c.hidden, "%v alpha=2^%d", c, k)
		c.keep, cs.keep = true, true
		f1 := checkRMSForward(o, dev, impl, c)
		f2 := checkRMSForward(o, dev, impl, cs)
		tol := make([]float64, len(f1.tol))
		for i := range tol {
			tol[i] = f1.tol[i] + f2.tol[i] + math.Abs(f2.want[i]-f1.want[i])
		}
		o.Within("y(αx) vs y(x)", f2.y, gen.F64(f1.y), tol)
	})
}

// DeterminismContract checks FALSIFY-GPUTRAIN-006 over every family in im
// (any operation): a drawn problem launched again with fresh outputs (and,
// for a binding, fresh scratch: it is allocated per launch) after another
// drawn problem was launched, under another schedule seed on the emulator,
// and on a fresh device (so a freshly loaded module), must give every
// output bit for bit as the first launch did. Statically, no kernel im
// lists may use a floating-point atomic. The report credits the kernels
// the contract launched.
func DeterminismContract(t TB, im Impls) {
	t.Helper()
	shared := deviceFor(t, Determinism)
	if shared == nil {
		return
	}
	// Where the backend's schedule can be seeded (the emulator), a private
	// device: the schedules set below are then this contract's alone,
	// whatever runs on the run's device in parallel (else a failure found
	// under one schedule need not replay). A GPU has no seeded schedule, and
	// another context on it would time-slice every launch of the run.
	var dev cudart.Device = shared
	if shared.Capabilities().Has(cudart.CapSchedule) {
		d := openPrivate(t, Determinism, shared.Info().Backend)
		if d == nil {
			return
		}
		defer d.Close()
		dev = d
	}
	// A second context on the device, whose module cache is empty: the
	// "freshly loaded module" of GPUTRAIN-006. Its own, so that its
	// schedule (set before each launch) is this contract's alone too.
	fresh := openPrivate(t, Determinism, shared.Info().Backend)
	if fresh == nil {
		return
	}
	defer fresh.Close()
	launched := &launchSet{seen: map[[2]string]bool{}}
	type pair struct{ onDev, onFresh *launchLog }
	pairs := &perLoop[pair]{first: pair{&launchLog{Device: dev, set: launched}, &launchLog{Device: fresh, set: launched}},
		close: func(p pair) { p.onDev.Device.Close(); p.onFresh.Device.Close() }}
	if shared.Capabilities().Has(cudart.CapSchedule) {
		// Each rapid loop of the run sets the schedules of its checks: two
		// devices of its own.
		backend := shared.Info().Backend
		pairs.make = func() (pair, error) {
			d, err := t.Config().open(backend)
			if err != nil {
				return pair{}, err
			}
			f, err := t.Config().open(backend)
			if err != nil {
				d.Close()
				return pair{}, err
			}
			return pair{&launchLog{Device: d, set: launched}, &launchLog{Device: f, set: launched}}, nil
		}
	}
	defer pairs.closeMade()
	lim := t.Config().Limits()
	static := staticNoFloatAtomics(im) // a fact of the PTX: read once, reported by the first check
	credit := func() []reports.Kernel { return launched.credit(ImplKernels(im), static != nil) }
	checkCredited(t, Determinism, credit, func(rt *rapid.T, o *Obs) {
		if static != nil {
			o.Context(0, "the PTX launched")
			o.Fatalf("%v", static)
		}
		// A sum that CTAs add into a shared accumulator in the order they
		// arrive (under a lock, by atomics) changes bits only when several
		// CTAs share one: half the checks draw many rows.
		plim := lim
		if rapid.Bool().Draw(rt, "many rows") {
			plim.MinRows = contendRows
		}
		p := drawProblem(rt, im, plim)
		o.Context(p.outCols, "%v", p)
		devs := pairs.of(o, "this rapid loop's devices")
		onDev, onFresh := devs.onDev, devs.onFresh
		setSchedule(onDev, 0) // each check's launches are scheduled alike, whatever came before
		first, err := p.outputs(onDev)
		o.Check("first launch", err)
		for _, f := range first {
			o.finiteOutputs(p, "first launch", f.data, func(i int) string { return fmt.Sprintf("%s[%d]", f.name, i) })
		}
		seed := rapid.Int64().Draw(rt, "schedule.seed")
		setSchedule(onDev, seed)
		other := drawProblem(rt, im, lim) // interleaved: another problem, maybe of another family
		_, err = other.outputs(onDev)
		o.Check("interleaved launch ("+other.String()+")", err)
		second, err := p.outputs(onDev)
		o.Check("second launch", err)
		o.identicalOutputs(fmt.Sprintf("second launch (schedule seed %d, after %s)", seed, other), second, first)
		freshSeed := rapid.Int64().Draw(rt, "fresh.schedule.seed")
		setSchedule(onFresh, freshSeed)
		third, err := p.outputs(onFresh)
		o.Check("launch on a fresh device", err)
		o.identicalOutputs(fmt.Sprintf("fresh module (schedule seed %d)", freshSeed), third, first)
	})
}

// contendRows is the least row count half of FALSIFY-GPUTRAIN-006's checks
// draw, where the elements allow: with a CTA a row, as row-wise kernels
// launch, 64 CTAs put at least three on each of up to 21 shared
// accumulators (three terms, unlike two, sum differently in another order).
const contendRows = 64

// identicalOutputs requires every output of got to equal want's bit for
// bit; a difference names the output, the element (row and column of a
// row-wise output) and both values with their bits.
func (o *Obs) identicalOutputs(what string, got, want []output) {
	o.rt.Helper()
	if len(got) != len(want) {
		o.Fatalf("%s: %d outputs vs %d", what, len(got), len(want))
	}
	defer func(cols int) { o.cols = cols }(o.cols)
	for i, w := range want {
		o.cols = w.cols
		o.Identical(w.name+", "+what+" vs the first launch", got[i].data, w.data)
	}
}

// launchSet is the set of (entry, module hash) a contract launched.
type launchSet struct {
	mu   sync.Mutex
	seen map[[2]string]bool
}

// credit returns the kernels of ks that were launched (ks as ImplKernels
// describes them), and those that name no PTX (a user's implementation
// that lists none: what it launches is not known). With all, or when
// nothing was launched (the static check ended every check first), all of
// ks: the static check read them.
func (s *launchSet) credit(ks []reports.Kernel, all bool) []reports.Kernel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if all || len(s.seen) == 0 {
		return ks
	}
	var out []reports.Kernel
	for _, k := range ks {
		if k.Entry == "" || s.seen[[2]string{k.Entry, k.PTXSHA256}] {
			out = append(out, k)
		}
	}
	return out
}

// launchLog is a Device that adds every entry it launches to set.
type launchLog struct {
	cudart.Device
	set *launchSet
}

func (l *launchLog) Launch(m cudart.Module, entry string, g cudart.Geometry, params ...cudart.Param) error {
	l.set.mu.Lock()
	l.set.seen[[2]string{entry, m.Hash}] = true
	l.set.mu.Unlock()
	return l.Device.Launch(m, entry, g, params...)
}

// setSchedule varies the schedule where the backend can (the emulator:
// cudart.CapSchedule); FALSIFY-GPUTRAIN-006 runs under several.
func setSchedule(dev cudart.Device, seed int64) {
	if dev.Capabilities().Has(cudart.CapSchedule) {
		_ = dev.SetSchedule(seed) // fails only on a closed or unusable device, which the launches report
	}
}

// floatAtomic matches an atom or red instruction on a floating-point type
// (f16, f16x2, bf16, bf16x2, f32, f64), whatever its qualifiers
// (.global.gpu.acq_rel.add.noftz.bf16x2, .v4.f32, …).
var floatAtomic = regexp.MustCompile(`\b(?:atom|red)(?:\.\w+)*?\.(?:f16|f16x2|bf16|bf16x2|f32|f64)\b`)

// entryBody returns the text of entry's body in a PTX module.
func entryBody(ptx []byte, entry string) []byte {
	i := bytes.Index(ptx, []byte(".entry "+entry+"("))
	if i < 0 {
		return nil
	}
	rest := ptx[i:]
	if j := bytes.Index(rest[1:], []byte(".entry ")); j >= 0 {
		return rest[:j+1]
	}
	return rest
}

// PTXEntryLister is implemented by implementations that launch PTX which
// is not package kernels' (a binding's kernels): the static predictions
// inspect each entry they list as they do a KernelLister's kernels.
type PTXEntryLister interface {
	PTXEntries() []PTXEntry
}

// PTXEntry is one entry an implementation launches, with its PTX text.
type PTXEntry struct {
	Entry string
	PTX   []byte
	// Unread names the .params the implementation passes no value in (a
	// binding's {ignore} parameters): the entry need not read them.
	Unread []string
}

// staticEntries returns the entries the static checks inspect in impl: an
// Impls' members', a KernelLister's kernels and a PTXEntryLister's entries.
func staticEntries(impl any) []PTXEntry {
	var out []PTXEntry
	if im, ok := impl.(Impls); ok {
		for _, m := range im {
			out = append(out, staticEntries(m)...)
		}
		return out
	}
	if kl, ok := impl.(KernelLister); ok {
		for _, k := range kl.Kernels() {
			if k != nil {
				out = append(out, PTXEntry{Entry: k.Entry, PTX: k.PTX})
			}
		}
	}
	if el, ok := impl.(PTXEntryLister); ok {
		out = append(out, el.PTXEntries()...)
	}
	return out
}

// staticNoFloatAtomics inspects every kernel impl launches (staticEntries).
func staticNoFloatAtomics(impl any) error {
	for _, e := range staticEntries(impl) {
		if m := floatAtomic.Find(entryBody(e.PTX, e.Entry)); m != nil {
			return fmt.Errorf("kernel %s uses a floating-point atomic (%s): its sum order depends on the schedule", e.Entry, m)
		}
	}
	return nil
}

var (
	paramDecl = regexp.MustCompile(`\.param\s+\.[a-z0-9]+\s+(?:\.ptr\s+(?:\.[a-z]+\s+)*)?(?:\.align\s+\d+\s+)?([A-Za-z_$][\w$]*)`)
)

// staticParamsRead checks that every .param of every kernel impl launches
// (staticEntries), but those it passes no value in, is read (ld.param …
// [name] or [name+off]) in its entry.
func staticParamsRead(impl any) error {
	for _, e := range staticEntries(impl) {
		body := entryBody(e.PTX, e.Entry)
		open := bytes.IndexByte(body, '(')
		closeP := bytes.IndexByte(body, ')')
		if open < 0 || closeP < open {
			return fmt.Errorf("kernel %s: entry not found in its PTX", e.Entry)
		}
		for _, m := range paramDecl.FindAllSubmatch(body[open:closeP], -1) {
			name := string(m[1])
			if slices.Contains(e.Unread, name) {
				continue
			}
			if !bytes.Contains(body[closeP:], []byte("["+name+"]")) && !bytes.Contains(body[closeP:], []byte("["+name+"+")) {
				return fmt.Errorf("kernel %s: parameter %s is declared but never read: a shape or constant is baked into the PTX", e.Entry, name)
			}
		}
	}
	return nil
}

// DimIndependenceContract checks FALSIFY-DIM-001 on an RMSNorm forward: two
// to four shapes per check; after the first, no module is loaded.
func DimIndependenceContract(t TB, impl RMSNormForwarder) {
	t.Helper()
	shared := deviceFor(t, DimIndependence)
	if shared == nil {
		return
	}
	// A private device: its module count moves only with this contract's
	// launches, whatever runs in parallel.
	dev := openPrivate(t, DimIndependence, shared.Info().Backend)
	if dev == nil {
		return
	}
	defer dev.Close()
	lim := t.Config().Limits()
	static := staticParamsRead(impl) // a fact of the PTX: read once, reported by the first check
	check(t, DimIndependence, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		if static != nil {
			o.Fatalf("%v", static)
		}
		n := rapid.IntRange(2, 4).Draw(rt, "shapes")
		// The modules launched are observed at the launches themselves, so
		// a replay sees what the first run saw whatever the caches hold.
		rec := &launchRecorder{Device: dev, first: map[string]string{}}
		var shapes []string
		for i := 0; i < n; i++ {
			c := drawRMSCase(rt, lim, gen.Normal, gen.MixedScale)
			shapes = append(shapes, fmt.Sprintf("%dx%d", c.rows, c.hidden))
			o.Context(c.hidden, "shape %d of %v: %v", i, shapes, c)
			checkRMSForward(o, rec, impl, c)
			if msg := rec.differs(); msg != "" {
				o.Fatalf("shape %s %s: the PTX depends on the shape", shapes[i], msg)
			}
		}
	})
}

// launchRecorder is a Device that remembers the module each entry was first
// launched from, and the first launch since from another module.
type launchRecorder struct {
	cudart.Device
	mu    sync.Mutex
	first map[string]string // entry → module hash
	other string
}

func (r *launchRecorder) Launch(m cudart.Module, entry string, g cudart.Geometry, params ...cudart.Param) error {
	r.mu.Lock()
	if h, ok := r.first[entry]; !ok {
		r.first[entry] = m.Hash
	} else if h != m.Hash && r.other == "" {
		r.other = fmt.Sprintf("launched %s from module %.12s, the first shape from %.12s", entry, m.Hash, h)
	}
	r.mu.Unlock()
	return r.Device.Launch(m, entry, g, params...)
}

// differs returns what launched from another module, or "".
func (r *launchRecorder) differs() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.other
}

// RobustnessContract checks ROBUST-001 with the forward and a backward.
func RobustnessContract(t TB, fwd RMSNormForwarder, bwd RMSNormBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, Robustness)
	check(t, Robustness, ImplKernels(fwd, bwd), func(rt *rapid.T, o *Obs) {
		c := drawRMSCase(rt, lim, gen.Zero, gen.Subnormal, gen.Huge, gen.Special, gen.Constant)
		o.Context(c.hidden, "%v", c)
		a := &op.RMSNormForwardArgs{Rows: c.rows, Hidden: c.hidden, Eps: c.eps, X: c.x.Data, Gamma: c.gamma,
			Y: make([]float32, c.rows*c.hidden), RMS: make([]float32, c.rows)}
		a.Offsets = rmsForwardOffsets(o, fwd)
		o.Check("rmsnorm forward", fwd.RMSNormForward(dev, a))
		x, g := gen.F64(c.x.Data), gen.F64(c.gamma)
		want, rms := make([]float64, len(x)), make([]float64, c.rows)
		oracle.RMSNormForward(want, rms, x, g, c.rows, c.hidden, float64(c.eps))
		switch c.x.Dist {
		case gen.Zero, gen.Subnormal, gen.Constant:
			tol := make([]float64, len(x))
			row, _ := reductions(fwd, op.Shape{Rows: c.rows, Hidden: c.hidden}, c.hidden)
			oracle.RMSNormForwardTol(tol, nil, x, g, c.rows, c.hidden, float64(c.eps), row)
			o.Within("y", a.Y, want, tol)
		default:
			sameClass(o, "y", a.Y, want)
		}
		if c.x.Dist == gen.Zero || c.x.Dist == gen.Subnormal {
			// Gradients at a zero (or subnormal) row are finite: 1/rms ≤ 1/sqrt(ε).
			dy := values(rt, lim, "dy", c.rows, c.hidden, gen.Normal)
			rms32 := make([]float32, c.rows)
			for i, v := range rms {
				rms32[i] = float32(v)
			}
			b := &op.RMSNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, RMS: rms32,
				DY: dy.Data, DX: make([]float32, len(x)), DGamma: make([]float32, c.hidden)}
			b.Offsets = rmsBackwardOffsets(o, bwd)
			o.Check("rmsnorm backward", bwd.RMSNormBackward(dev, b))
			for i, v := range b.DX {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					o.Fatalf("dx: %s is %g at a %s row with ε=%g", o.where(i), v, c.x.Dist, c.eps)
				}
			}
		}
	})
}

// sameClass requires got to be finite, NaN or ±Inf exactly where want is.
func sameClass(o *Obs, name string, got []float32, want []float64) {
	o.rt.Helper()
	class := func(v float64) string {
		switch {
		case math.IsNaN(v):
			return "NaN"
		case math.IsInf(v, 1):
			return "+Inf"
		case math.IsInf(v, -1):
			return "-Inf"
		}
		return "finite"
	}
	for i, w := range want {
		if cg, cw := class(float64(got[i])), class(w); cg != cw {
			o.Fatalf("%s: %s is %s (%g), the oracle's is %s (%g)", name, o.where(i), cg, got[i], cw, w)
		}
	}
	o.stats.Compared += len(want)
}

// ParityContract checks PARITY-001: every family of im on the GPU device
// and on a fresh emulator, same inputs. It is skipped (with the reason)
// unless the current device is a GPU and the emulator is available. A
// disagreement is classified (classifyParity) in the comparison's name
// and at the end of the message: which side, if either, is at fault. One
// with a GPU that does not repeat its own bits ends the run inconclusive.
func ParityContract(t TB, im Impls) {
	t.Helper()
	dev := deviceFor(t, Parity)
	if dev == nil {
		return
	}
	if dev.Info().Backend != "gpu" {
		skip(t, Parity, "needs a GPU to compare the emulator with (this run's backend is "+dev.Info().Backend+")")
		return
	}
	emu, err := t.Config().open("emu")
	if err != nil {
		skip(t, Parity, fmt.Sprintf("emulator unavailable: %v", err))
		return
	}
	defer emu.Close()
	// Each rapid loop of the run sets the schedules of its checks (and of
	// a failure's classification): an emulator of its own.
	emus := &perLoop[cudart.Device]{first: emu, make: func() (cudart.Device, error) { return t.Config().open("emu") },
		close: func(d cudart.Device) { d.Close() }}
	defer emus.closeMade()
	lim := gen.EmuLimits
	check(t, Parity, ImplKernels(im), func(rt *rapid.T, o *Obs) {
		p := drawProblem(rt, im, lim)
		o.Context(p.outCols, "%v", p)
		emu := emus.of(o, "this rapid loop's emulator")
		setSchedule(emu, 0) // the canonical schedule first, whatever a failing check's classification left
		g, err := p.run(dev)
		o.Check("gpu", err)
		o.finiteOutputs(p, "gpu", g, nil)
		e, err := p.run(emu)
		o.Check("emulator", err)
		o.finiteOutputs(p, "emulator", e, nil)
		var tol []float64
		if p.approxTol != nil {
			tol = p.approxTol()
		}
		cls := classified(func() parityClass { return classifyParity(p, dev, emu, g, e) })
		name := "emulator vs gpu"
		if parityDiffers(e, g, tol) {
			c := cls()
			name += " (" + c.class + ")"
			if c.class == "GPU "+parityNondeterministic {
				// No one GPU result to reproduce: parity is judged on what
				// the GPU repeats, and FALSIFY-GPUTRAIN-006 judges the repeat.
				o.end(outcome.Inconclusive, name+": "+c.detail)
			}
		}
		o.note = func() string { return "; " + cls().detail }
		if tol == nil {
			o.Identical(name, e, g)
			return
		}
		o.Within(name, e, gen.F64(g), tol)
	})
}

// classifyParity says why the emulator's outputs e disagree with the GPU's
// g for p: the GPU is non-deterministic (the launch run again on it gives
// other bits: a property of the kernel or the GPU, not of the emulator);
// else the kernel depends on the schedule (the emulator under other
// schedule seeds gives other bits, which a GPU's schedule can too); else
// an approximate instruction the emulator does not compute as the GPU
// (unmodelled, named with its PTX line); else float atomics (named with
// their PTX line), whose order schedules the reruns did not meet can
// change; else a real disagreement between two sides that each repeat
// their own bits.
func classifyParity(p problem, gpu, emu cudart.Device, g, e []float32) parityClass {
	gpuRun := func(k int) string { return fmt.Sprintf("GPU run %d", k+1) }
	if d := rerunDiffers(p, gpu, g, nil, gpuRun); d != "" {
		return parityClass{"GPU " + parityNondeterministic,
			"the GPU is non-deterministic, the emulator not at fault: of the same launch on the same inputs, " + d}
	}
	// The emulator's first run was under the canonical schedule (seed 0);
	// its reruns are under seeds 1, 2, … where it can be scheduled.
	emuRun := func(k int) string { return fmt.Sprintf("emulator run %d", k+1) }
	emuRuns := fmt.Sprintf("over runs 1 to %d", parityReruns+1)
	if emu.Capabilities().Has(cudart.CapSchedule) {
		emuRun = func(k int) string { return fmt.Sprintf("the emulator under schedule seed %d", k) }
		emuRuns = fmt.Sprintf("under schedule seeds 0 to %d", parityReruns)
	}
	defer setSchedule(emu, 0)
	if d := rerunDiffers(p, emu, e, func(k int) { setSchedule(emu, int64(k)) }, emuRun); d != "" {
		return parityClass{parityScheduleDependent, "the kernel's result depends on the schedule, as it may on a GPU: " + d}
	}
	both := fmt.Sprintf("the GPU repeats its bits over runs 1 to %d and the emulator %s", parityReruns+1, emuRuns)
	if u := unmodelled(p.impl); u != "" {
		return parityClass{parityUnmodelled, both + u}
	}
	if cc := gpu.Info().ComputeCapability; cc != "" && cc != modelArch {
		if u := approximations(p.impl, true, cc); u != "" {
			return parityClass{parityUnmodelled, both + u}
		}
	}
	if at := floatAtomicSite(p.impl); at != "" {
		// Schedules the reruns did not meet can still order the sums
		// otherwise: no evidence of a real disagreement.
		return parityClass{parityFloatAtomics, both + ", but the kernel adds floats atomically (" + at +
			"), in an order the schedule picks: the two sides may have met different orders"}
	}
	return parityClass{parityReal, "a real disagreement: " + both +
		", and the kernel has no approximate instruction the emulator computes otherwise than the GPU"}
}

// entrySources is implemented by implementations that name the PTX entries
// they launch for messages alone, without the static checks a KernelLister
// is put to (a kernel bound from a file: its ignored parameters are unread).
type entrySources interface {
	EntrySources() (entries []string, ptx [][]byte)
}

// unmodelled names the approximate instructions in the entries of impl's
// kernels that the emulator computes correctly rounded rather than as the
// GPU does (ptx.Approximations, Modelled false): where a parity mismatch
// may come from. "" when there are none, or impl does not list its kernels.
func unmodelled(impl any) string { return approximations(impl, false, "") }

// modelArch is the compute capability whose approximate instructions the
// emulator computes bit for bit (cudart/emu's MUFU tables, measured on an
// H200).
const modelArch = "9.0"

// approximations names the approximate instructions of impl's entries, all
// of them or the unmodelled only; cc is the GPU's compute capability when
// it is not modelArch: then every approximate instruction may differ.
func approximations(impl any, all bool, cc string) string {
	entries, srcs := implSources(impl)
	var parts []string
	for i, src := range srcs {
		as, err := ptx.Approximations(src)
		if err != nil {
			continue // a module that does not parse fails to load, with the reason
		}
		for _, a := range as {
			if (all || !a.Modelled) && a.Function == entries[i] {
				parts = append(parts, a.String())
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if cc != "" {
		return fmt.Sprintf("; the emulator computes approximate instructions as compute capability %s (sm_90) does, and this GPU's is %s, which may compute them otherwise: %s",
			modelArch, cc, strings.Join(parts, ", "))
	}
	return "; approximate instructions the emulator does not compute as the GPU does: " + strings.Join(parts, ", ")
}
