package falsify

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// Options control how mutants are run.
type Options struct {
	// Checks is rapid's check budget for each contract run of a named
	// mutant (rapid.checks). A generic mutant gets GenericChecks in its
	// kernel's first (sharpest) contract and SecondaryChecks in the others,
	// which only a mutant surviving the first one reaches.
	Checks, GenericChecks, SecondaryChecks int
	// Seed is the base rapid seed; each contract run of each mutant uses a
	// seed derived from it and the mutant's and contract's names, so a
	// mutant's verdict does not depend on which other mutants ran.
	Seed uint64
	// ShrinkTime bounds rapid's minimisation of a counterexample of a named
	// mutant; GenericShrinkTime that of a generic mutant.
	ShrinkTime, GenericShrinkTime time.Duration
	// Equivalence runs the original beside the mutant on every call, on
	// the same inputs, and compares all outputs bit for bit: a survivor
	// whose outputs never differ is equivalent, one whose outputs differ
	// unnoticed is a gap in the properties.
	Equivalence bool
	// MaxInstructions bounds the thread-instructions of one emulator launch
	// of a mutant (a mutant's infinite loop fails fast), beyond what the
	// launch's size allows (LaunchBudget); 0 leaves the emulator as it is.
	MaxInstructions int64
	// Watchdog is the device watchdog while mutants run (a hung kernel on a
	// GPU); 0 leaves it as it is.
	Watchdog time.Duration
	// Repro is the command prefix printed to rerun one mutant.
	Repro string
	// Run holds the run's settings: the backend, the emulator's seed, the
	// shape limits (suite.Config; Default: the defaults).
	Run suite.Config

	// What the tests of package falsify run (see Settings).
	Full     bool    // the full generic sample (PerOp per kernel·operator) and the score gate
	PerOp    int     // generic mutants per (kernel, operator) in the full sample (0: every site)
	Quick    int     // generic mutants run without Full, spread over the kernels and operators
	MinScore float64 // the generic mutation score the full sample must reach
	Names    string  // the comma-separated mutants TestMutant runs
	Record   bool    // record the kill matrix in the report at Run's report path
	Isolate  string  // child processes: auto, always or never
	Workers  int     // child processes side by side (0: the CPU count up to 4 on the emulator, one per selected GPU)
	Child    bool    // internal: this process is a child running mutants
}

// The instruction budget of one launch of a mutant grows with the launch,
// so that every shape a contract draws (a prediction's regimes of up to 2²⁰
// elements included) stays within it for the originals, while a mutant that
// loops forever still fails within seconds: InstructionsPerThread for each
// thread of the grid (a block's fixed cost, a row's reductions) and
// InstructionsPerElement for each element of the launch's buffers (a few
// dozen instructions per element in the shipped kernels, the re-reading
// paths included), over Options.MaxInstructions. TestLaunchBudget holds the
// originals to it at the largest shapes.
const (
	InstructionsPerThread  = 1024
	InstructionsPerElement = 128
)

// EverydayRows caps the rows of the everyday shapes contracts draw on
// mutants on the emulator (properties.Config.EverydayMaxRows), not those of
// the regimes predictions declare: the emulator's wide row counts (a block
// of threads a row, 4096 rows) in every contract run of every mutant would
// make the analysis several times as long, while the regimes bring the
// large shapes to the predictions that need them.
const EverydayRows = 64

// LaunchBudget returns the thread-instructions a launch of a mutant with
// geometry g and params may run before the emulator stops it as hung:
// base plus InstructionsPerThread per thread and InstructionsPerElement per
// element of its buffers.
func LaunchBudget(base int64, g cudart.Geometry, params []cudart.Param) int64 {
	n := base + InstructionsPerThread*int64(g.Grid.Count())*int64(g.Block.Count())
	for _, p := range params {
		if p.IsBuffer() {
			n += InstructionsPerElement * int64(p.Buf.Len())
		}
	}
	return n
}

// DefaultOptions are the options of `go test ./falsify`: every setting at
// its default (Settings), the runner's settings at theirs.
func DefaultOptions() Options {
	o := settings.Default()
	o.MaxInstructions, o.Watchdog = 1<<25, 20*time.Second
	o.Run = suite.Default()
	o.Repro = o.ReproCommand()
	return o
}

// ProbeRun is one contract run on a mutant.
type ProbeRun struct {
	Prediction string
	Contract   string
	Status     outcome.Status
	Checks     int
	Duration   time.Duration
}

// Result is the fate of one mutant.
type Result struct {
	Mutant      string
	Kind        reports.MutantKind
	Kernel      string
	Description string
	Expected    []string // named mutants: the predictions expected to kill it
	Status      reports.MutantStatus
	KilledBy    string // prediction
	Contract    string // the contract run that killed it
	Checks      int    // checks the killing contract run needed (rapid's count, the failing one included)
	// Counterexample holds the labelled draws of the minimal failing case.
	Counterexample []string
	Failure        string // the killing failure's message
	Reason         string // the verdict in words (survivors, equivalents, errors)
	Repro          string // command that reruns this mutant alone
	Launches       int    // launches of the mutated code
	Runs           []ProbeRun
	Duration       time.Duration
	Device         int // ordinal of the device the mutant ran on
}

// Killed reports whether some prediction killed the mutant.
func (r Result) Killed() bool { return r.Status == reports.MutantKilled }

// seedFor derives the rapid seed of one contract run of one mutant.
func seedFor(base uint64, mutant, contract string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s", base, mutant, contract)
	return h.Sum64() | 1
}

// Session holds what stays set while mutants run: the contracts'
// configuration, the emulator's instruction budget, the device watchdog.
type Session struct {
	opts    Options
	dev     cudart.Device
	devices []cudart.Info     // every device opts.Run selects, dev's first
	cfg     properties.Config // what the contracts see
	undo    []func()
	// unexercised maps a kernel to the reason its probes never launch it
	// ("" when they do), measured once per kernel on the original.
	unexercised map[string]string
	// budgeted serialises the launches of mutants that set the emulator's
	// instruction limit for themselves (nil: no limit to set).
	budgeted *sync.Mutex
}

// NewSession opens the devices opts.Run selects (suite.OpenDevices) and
// sets the first up for mutants: the emulator gets an instruction budget
// and the device a watchdog. Mutants run on the first; the others are
// there for MULTI-DEVICE-PARITY-001, and child processes run mutants on
// each of them in turn (Devices). Close releases them.
func NewSession(opts Options) (*Session, error) {
	devs, _, err := suite.OpenDevices(opts.Run)
	if err != nil {
		return nil, err
	}
	var closes []func()
	for _, d := range devs {
		closes = append(closes, func() { d.Close() })
	}
	s, err := newSession(opts, suite.ContractConfig(opts.Run, devs[0]), devs)
	if err != nil {
		for _, c := range closes {
			c()
		}
		return nil, err
	}
	s.undo = append(closes, s.undo...)
	return s, nil
}

// SessionOn is NewSession on the devices of a run that opened them (cfg,
// as suite.T gives a test: its Device first, then the rest of Devices),
// which stay the run's: Close restores what the session changed on them
// and leaves them open. The session records nothing in the run's Recorder
// and heeds no run Context: each mutant's verdict is its own, and a run
// ended early must not pass for a kill.
func SessionOn(opts Options, cfg properties.Config) (*Session, error) {
	if cfg.Device == nil {
		if cfg.NoDevice == "" {
			cfg.NoDevice = "the run has no device"
		}
		return nil, errors.New(cfg.NoDevice)
	}
	devs := []cudart.Device{cfg.Device}
	for _, d := range cfg.Devices {
		if d != cfg.Device {
			devs = append(devs, d)
		}
	}
	cfg.Recorder, cfg.Context = nil, nil
	return newSession(opts, cfg, devs)
}

// newSession sets devs[0] up for mutants under cfg, the contracts'
// configuration, with devs as every device of the session.
func newSession(opts Options, cfg properties.Config, devs []cudart.Device) (*Session, error) {
	dev := devs[0]
	s := &Session{opts: opts, dev: dev, cfg: cfg, unexercised: map[string]string{}}
	s.cfg.Device, s.cfg.Devices = dev, devs
	for _, d := range devs {
		s.devices = append(s.devices, d.Info())
	}
	// Load every original module now: the differential runs launch them
	// on this device beside the mutants.
	for _, k := range kernels.All() {
		if _, err := dev.Load(k.Name, k.PTX); err != nil {
			return nil, fmt.Errorf("falsify: loading the original %s: %w", k.Name, err)
		}
	}
	// Each launch of a mutant gets a budget of its own (LaunchBudget), so
	// that contracts draw the shapes of their predictions, their regimes'
	// large ones included; the everyday shapes stay small.
	if opts.MaxInstructions > 0 && dev.Capabilities().Has(cudart.CapInstructionLimit) {
		s.budgeted = &sync.Mutex{}
		if s.cfg.EverydayMaxRows == 0 || s.cfg.EverydayMaxRows > EverydayRows {
			s.cfg.EverydayMaxRows = EverydayRows
		}
	}
	if opts.Watchdog > 0 {
		old := dev.Options()
		o := old
		o.Watchdog = opts.Watchdog
		dev.SetOptions(o)
		s.undo = append(s.undo, func() { dev.SetOptions(old) })
	}
	return s, nil
}

// tracer returns a tracer of the launches mutated matches, comparing with
// the original on the session's device when diff, that runs each launch of
// the mutant within its LaunchBudget.
func (s *Session) tracer(mutated func(cudart.Module, string) bool, diff bool) *tracer {
	tr := &tracer{mutated: mutated, diff: diff, ref: s.dev}
	if s.budgeted != nil {
		tr.limit = func(dev cudart.Device, g cudart.Geometry, params []cudart.Param) func() {
			s.budgeted.Lock()
			old, err := dev.SetInstructionLimit(LaunchBudget(s.opts.MaxInstructions, g, params))
			return func() {
				if err == nil {
					dev.SetInstructionLimit(old)
				}
				s.budgeted.Unlock()
			}
		}
	}
	return tr
}

// Device returns the session's device.
func (s *Session) Device() cudart.Device { return s.dev }

// Devices describes every device the session's settings select, its own
// first: mutants can be spread over them, one process per device.
func (s *Session) Devices() []cudart.Info { return s.devices }

// Close restores everything NewSession changed.
func (s *Session) Close() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
}

// Run runs mutant m: the contracts of its probes one after the other, each
// with the session's check budget, until one kills it. With
// Options.Equivalence the original runs beside the mutant on every call, so
// that a survivor is told apart as equivalent (bit-identical outputs on all
// checks) or a gap in the properties (different outputs nobody noticed).
func (s *Session) Run(m Mutant) (r Result) {
	start := time.Now()
	r = Result{Mutant: m.String(), Kind: m.Kind(), Kernel: m.Target(), Description: m.Description(),
		Repro: s.opts.Repro + m.String(), Device: s.dev.Info().Ordinal}
	if n, ok := m.(Named); ok {
		r.Expected = n.Killers
		if n.GPU && s.dev.Info().Backend != "gpu" {
			r.Status, r.Reason = reports.MutantSkipped, "needs a GPU: its killer compares the GPU with the emulator"
			return r
		}
		if n.Dependence && !s.dev.Capabilities().Has(cudart.CapDependence) {
			r.Status, r.Reason = reports.MutantSkipped, "needs the emulator: only DEPEND-001 sees it, and the "+s.dev.Info().Backend+" backend does not track dependence"
			return r
		}
		if n.Devices && len(s.devices) < 2 {
			r.Status, r.Reason = reports.MutantSkipped, "needs two devices: its killer compares the run's devices (-ptxprop.devices)"
			return r
		}
	}
	defer func() { r.Duration = time.Since(start) }()
	if g, ok := m.(Generic); ok {
		if why := s.exercised(g.Kernel); why != "" {
			r.Status, r.Reason = reports.MutantNotExercised, why
			return r
		}
	}
	t, err := m.build()
	if err != nil {
		r.Status, r.Reason = reports.MutantError, "does not build: "+err.Error()
		return r
	}
	if t.close != nil {
		defer t.close()
	}
	if t.check != nil {
		if err := t.check(s.dev); err != nil {
			r.Status, r.Reason = reports.MutantError, "does not load: "+firstLine(err.Error())
			return r
		}
	}
	if t.setup != nil {
		defer t.setup(&s.cfg)()
	}
	// In differential mode every call of the mutant is paired with the
	// original on the same inputs, so a survivor's verdict (equivalent, or
	// a gap) comes from the very checks the contracts ran.
	tr := s.tracer(t.mutated, s.opts.Equivalence)
	e := &env{orig: t.orig, mut: t.mut, tr: tr}
	var errored, ids []string
	for i, p := range t.probes {
		ids = append(ids, p.id)
		pr, o := s.probe(m, p, e, i)
		r.Runs = append(r.Runs, pr)
		switch o.Status {
		case outcome.Falsified, outcome.Inconclusive:
			r.Status, r.KilledBy, r.Contract, r.Checks = reports.MutantKilled, p.id, p.name, o.Checks
			r.Counterexample, r.Failure = o.Counterexample, o.Reason
			if o.Status == outcome.Inconclusive {
				r.Reason = "the failure did not reproduce on replay: " + o.NonDeterministic
			}
			r.Launches, _, _, _, _ = tr.snapshot()
			return r
		case outcome.Errored:
			errored = append(errored, fmt.Sprintf("%s: %s", p.name, o.Reason))
		}
	}
	launches, calls, differing, elements, first := tr.snapshot()
	r.Launches = launches
	r.Status = reports.MutantSurvived
	switch {
	case len(errored) > 0:
		r.Status, r.Reason = reports.MutantError, "contract runs failed outside their properties: "+strings.Join(errored, "; ")
	case launches == 0:
		r.Status = reports.MutantNotExercised
		r.Reason = fmt.Sprintf("not exercised: no run of %s launched the mutated code", strings.Join(uniq(ids), ", "))
	case !s.opts.Equivalence:
		r.Reason = "every prediction passed (equivalence not checked)"
	case calls == 0:
		r.Reason = "every prediction passed; no call could be compared with the original"
	case differing == 0:
		r.Status = reports.MutantEquivalent
		r.Reason = fmt.Sprintf("equivalent: bit-identical to the original on all %d calls (%d output elements) of %s",
			calls, elements, s.budgetText(m, len(t.probes)))
	case tr.maxNorm <= RoundingNorm:
		r.Reason = fmt.Sprintf("rounding-level: outputs differ from the original on %d of %d calls by at most %.3g·u normwise (%g ulp elementwise; first: %s) and every prediction passed: "+
			"another evaluation order or path, within every tolerance, that no prediction pins", differing, calls, tr.maxNorm, tr.maxULP, first)
	default:
		r.Reason = fmt.Sprintf("gap: outputs differ from the original on %d of %d calls by up to %.3g·u normwise (at %s), yet every prediction passed",
			differing, calls, tr.maxNorm, tr.worst)
	}
	applyVerdict(&r, tr.maxNorm)
	return r
}

// RoundingNorm is the largest normwise difference from the original, in
// units of u = 2⁻²⁴ (max|Δ| / max|original| over an output), at which a
// surviving mutant is called rounding-level — another evaluation order or
// path that the tolerances allow — rather than a gap. Both stay survivors;
// the verdict only says which.
var RoundingNorm = 32.0

// Exercised returns "" when some contract that probes kernel launches it,
// else why mutants of the kernel cannot be killed (see exercised).
func (s *Session) Exercised(kernel string) string {
	return s.exercised(kernel)
}

// exercised returns "" when the probes of kernel launch it, else why its
// mutants are not exercised. It runs the probes once per kernel on an
// identical copy of the original (generic budget), counting its launches:
// a mutant of a kernel no contract launches survives whatever it does.
func (s *Session) exercised(kernel string) string {
	if why, ok := s.unexercised[kernel]; ok {
		return why
	}
	k, ok := kernels.Lookup(kernel)
	if !ok {
		return "unknown kernel " + kernel
	}
	copyK := k.WithPTX(k.PTX)
	orig, mut := defaults(), setWith(copyK)
	probes := kernelProbes(kernel)
	tr := s.tracer(launchOf(copyK), false)
	e := &env{orig: &orig, mut: &mut, tr: tr}
	var ids []string
	m := Generic{Kernel: kernel, Op: 0, PC: -1, Arg: -1}
	for i, p := range probes {
		ids = append(ids, p.id)
		s.probe(m, p, e, i)
		if n, _, _, _, _ := tr.snapshot(); n > 0 {
			s.unexercised[kernel] = ""
			return ""
		}
	}
	why := fmt.Sprintf("not exercised: no contract launches %s (%s: %s on the original never launched it)",
		kernel, strings.Join(uniq(ids), ", "), s.budgetText(m, len(probes)))
	s.unexercised[kernel] = why
	return why
}

// budget returns the checks and shrink time of m's i-th contract run.
func (s *Session) budget(m Mutant, i int) (int, time.Duration) {
	if m.Kind() != reports.MutantGeneric {
		return s.opts.Checks, s.opts.ShrinkTime
	}
	if i > 0 && s.opts.SecondaryChecks > 0 {
		return s.opts.SecondaryChecks, s.opts.GenericShrinkTime
	}
	return s.opts.GenericChecks, s.opts.GenericShrinkTime
}

// budgetText describes the checks of m's contract runs.
func (s *Session) budgetText(m Mutant, runs int) string {
	first, _ := s.budget(m, 0)
	if runs <= 1 {
		return fmt.Sprintf("its contract run × %d checks", first)
	}
	rest, _ := s.budget(m, 1)
	if rest == first {
		return fmt.Sprintf("its %d contract runs × %d checks", runs, first)
	}
	return fmt.Sprintf("its %d contract runs (%d checks in the first, %d in each other)", runs, first, rest)
}

// probe runs one contract on the mutant and returns its outcome.
func (s *Session) probe(m Mutant, p probe, e *env, i int) (ProbeRun, outcome.Outcome) {
	checks, shrink := s.budget(m, i)
	if s.dev.Capabilities().Has(cudart.CapSchedule) {
		s.dev.SetSchedule(0) // a contract that failed mid-way may have left another schedule
	}
	start := time.Now()
	// The run's own budget and seed; rapid writes no fail files for
	// mutants: their failures are expected and the kill matrix is the
	// record.
	budget := suite.Rapid{Checks: checks, Exact: true, ShrinkTime: shrink, NoFailFile: true,
		Seed: seedFor(s.opts.Seed, m.String(), p.name)}
	q := suite.RunContract("falsify/"+m.String()+"/"+p.name, s.cfg, budget, func(t properties.TB) { p.run(t, e) })
	o, ok := q.Outcomes()[p.id]
	if !ok {
		o = outcome.Outcome{ID: p.id, Status: outcome.Errored, Reason: "the contract recorded no outcome"}
		if q.Skipped() {
			o.Status, o.Reason = outcome.Skipped, strings.Join(q.Logs(), "; ")
		} else if q.Failed() {
			o.Reason = strings.Join(q.Logs(), "; ")
		}
	}
	return ProbeRun{Prediction: p.id, Contract: p.name, Status: o.Status, Checks: o.Checks, Duration: time.Since(start)}, o
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
