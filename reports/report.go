package reports

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"runtime"
	"slices"
	"time"
)

// SchemaVersion is the value of schema_version in every report this package
// writes and the only one Read accepts.
const SchemaVersion = "ptxprop.contract-report/v2"

// Report is one contract report: the run it describes, the verdict on each
// prediction, the mutants and which prediction killed them, and the kernels
// the predictions are about. Predictions, Mutants and Kernels keep the order
// in which they were added; IDs, mutant names and kernel names are unique.
type Report struct {
	SchemaVersion string       `json:"schema_version"` // always SchemaVersion
	Run           Run          `json:"run"`
	Predictions   []Prediction `json:"predictions"` // encoded as [] when empty
	Mutants       []Mutant     `json:"mutants"`     // encoded as [] when empty
	Kernels       []Kernel     `json:"kernels"`     // encoded as [] when empty

	// What the nightly adds (nightly.go); absent when not measured.
	Benchmarks []Benchmark `json:"benchmarks,omitempty"` // speed per kernel and shape
	Sanitizer  *Sanitizer  `json:"sanitizer,omitempty"`  // the sanitizer pass
	Coverage   []Coverage  `json:"coverage,omitempty"`   // branch coverage per kernel
	Costs      []Cost      `json:"costs,omitempty"`      // emulator counts per kernel and shape
}

// Run describes where and how the report was produced.
type Run struct {
	// ID identifies the run: random, set by NewRun. Two reports with one ID
	// are one run's, and Merge refuses to add them up twice.
	ID string `json:"id"`
	// MergedFrom lists the IDs of the runs Merge added up into this one.
	MergedFrom []string `json:"merged_from,omitempty"`
	// Stopped says why the run ended before every prediction it was to run
	// had finished (a deadline, a signal); empty when it ran to its end.
	// A stopped run's report is partial (Report.Partial).
	Stopped string `json:"stopped,omitempty"`

	Start             time.Time `json:"start"`                        // RFC 3339
	End               time.Time `json:"end,omitzero"`                 // RFC 3339; absent while running
	GitCommit         string    `json:"git_commit,omitempty"`         // commit of the code under test
	GoVersion         string    `json:"go_version"`                   // runtime.Version()
	Host              string    `json:"host,omitempty"`               // host name
	Backend           Backend   `json:"backend"`                      // gpu or emu
	Device            string    `json:"device,omitempty"`             // device name, e.g. "NVIDIA H200"
	ComputeCapability string    `json:"compute_capability,omitempty"` // e.g. "9.0"
	DriverVersion     string    `json:"driver_version,omitempty"`
	CUDAVersion       string    `json:"cuda_version,omitempty"`
	SMCount           int       `json:"sm_count,omitempty"` // streaming multiprocessors
	// CopyBandwidth is the measured device-to-device copy bandwidth in
	// bytes per second; nil when not measured.
	CopyBandwidth *float64 `json:"copy_bandwidth_bytes_per_s,omitempty"`
	// RapidSeed is the -rapid.seed the run used; nil when unknown. Zero is
	// rapid's "pick a random seed".
	RapidSeed   *uint64 `json:"rapid_seed,omitempty"`
	RapidChecks int     `json:"rapid_checks,omitempty"` // -rapid.checks
	// RapidLoops is how many parallel rapid loops a contract run of
	// RapidChecks checks was split over, each from its own base seed
	// (-ptxprop.loops); 0 in a report that predates it.
	RapidLoops  int      `json:"rapid_loops,omitempty"`
	CommandLine []string `json:"command_line,omitempty"` // os.Args of the producing binary
	Notes       []string `json:"notes,omitempty"`        // free-form
	// Devices lists every device the run spread its contract runs over,
	// one context each (Device and the fields after it describe the first);
	// empty in a report that predates it. Prediction.Devices refers to them
	// by ordinal.
	Devices []Device `json:"devices,omitempty"`
	// Environment holds what else the run depended on, by name: tool
	// versions ("torch": "2.5.1", "compute-sanitizer": "2024.3"), the
	// nightly's settings. Absent when none was recorded.
	Environment map[string]string `json:"environment,omitempty"`
	// Shard says which shards of a sharded run the report holds; nil when
	// the run was not sharded.
	Shard *Shard `json:"shard,omitempty"`
}

// Shard identifies the shards of one sharded run a report holds: every
// shard's report names the run (the identity its processes share: a job's
// ID, or one given), the shard count and the seed ranges per contract
// run, and its own index; Merge unites the indexes and refuses an index
// given twice.
type Shard struct {
	Run     string `json:"run"`
	Count   int    `json:"count"`
	Split   int    `json:"split,omitempty"` // seed ranges per contract run (absent: one)
	Indexes []int  `json:"indexes"`         // sorted
}

// Device is one device of a run and the work it did.
type Device struct {
	Backend Backend `json:"backend"` // gpu or emu
	// Ordinal is the device's index among its backend's: on a GPU, among
	// the devices CUDA_VISIBLE_DEVICES leaves visible. Unique in a run.
	Ordinal  int    `json:"ordinal"`
	Name     string `json:"name,omitempty"`       // e.g. "NVIDIA H200"
	UUID     string `json:"uuid,omitempty"`       // the GPU's UUID ("GPU-…"); empty for the emulator or when unknown
	PCIBusID string `json:"pci_bus_id,omitempty"` // domain:bus:device.function; empty for the emulator or when unknown
	// ContractRuns counts the contract runs that launched kernels on the
	// device; Launches counts those launches.
	ContractRuns int `json:"contract_runs"`
	Launches     int `json:"launches"`
}

// RunDevice returns the device of run r with ordinal o, or nil.
func (r *Run) RunDevice(o int) *Device {
	for i := range r.Devices {
		if r.Devices[i].Ordinal == o {
			return &r.Devices[i]
		}
	}
	return nil
}

// Prediction is the verdict on one prediction (a claim about a kernel,
// checked by one contract).
type Prediction struct {
	ID string `json:"id"` // e.g. "FALSIFY-DIM-001"; see Binding
	// Binding names the binding (its name:) whose kernel the prediction was
	// checked on, when a run checks one prediction on several (ptxprop
	// verify): the ID is then the prediction's ID, "@" and this name, so
	// that each (binding, prediction) is one entry. Empty for our kernels.
	Binding        string           `json:"binding,omitempty"`
	Title          string           `json:"title,omitempty"`
	Statement      string           `json:"statement,omitempty"` // the claim, in words
	Kernels        []string         `json:"kernels,omitempty"`   // Kernel.Name of each kernel it is about
	Status         PredictionStatus `json:"status"`
	Reason         string           `json:"reason,omitempty"`         // why this status (skip reason, failure message); required when falsified
	Checks         int              `json:"checks"`                   // rapid checks run
	ChecksFailed   int              `json:"checks_failed"`            // checks that failed
	Counterexample *Counterexample  `json:"counterexample,omitempty"` // the minimal failing case
	Reproduction   *Reproduction    `json:"reproduction,omitempty"`   // how to replay the failure
	// Rerun is the command that runs this prediction again, alone: for a
	// discharged one, how to repeat the evidence (with more checks, say).
	Rerun           string      `json:"rerun,omitempty"`
	ErrorStats      *ErrorStats `json:"error_stats,omitempty"` // nil when no numeric comparison ran
	Search          *Search     `json:"search,omitempty"`      // the targeted search's worst ratios; nil when none ran
	Duration        float64     `json:"duration_s,omitempty"`  // seconds
	ChecksPerSecond float64     `json:"checks_per_second,omitempty"`
	Flags           []Flag      `json:"flags,omitempty"`
	// NonDeterministic describes a failure that did not reproduce on replay;
	// set together with FlagNonDeterministic.
	NonDeterministic string `json:"nondeterministic,omitempty"`
	// Devices are the ordinals (in run.devices) of the devices its
	// contract runs used, ascending; empty when none ran or the report
	// names no devices.
	Devices []int `json:"devices,omitempty"`
}

// Counterexample is the minimal failing case as rapid drew it. At least one
// of Text and Draws is set.
type Counterexample struct {
	Text  string `json:"text,omitempty"`  // rapid's failure output, verbatim
	Draws []Draw `json:"draws,omitempty"` // the labelled draws, in order
}

// Draw is one labelled value drawn by rapid ("[rapid] draw hidden: 33").
type Draw struct {
	Label string `json:"label"`
	Value string `json:"value"` // Go syntax, as rapid printed it (%#v)
}

// Reproduction says how to replay a failure.
type Reproduction struct {
	// Command is the exact command line, e.g.
	// go test ./properties -run '^TestRMSNorm$' -rapid.seed=123
	Command  string `json:"command"`
	FailFile string `json:"fail_file,omitempty"` // rapid's .fail file, relative to the package
}

// ErrorStats summarises the numeric error of a kernel against its float64
// oracle over all checks of a prediction. Every value is non-negative, NaN
// or +Inf (a kernel that writes NaN has an infinite error).
//
// MaxAbs, MaxRel and MaxULP are maxima over one set of compared output
// elements, and nil when the prediction compared none element by element
// (only scalar identities, say): then they are absent, not zero. MaxRel is
// taken over the elements whose oracle value is not zero.
type ErrorStats struct {
	MaxAbs   *float64 `json:"max_abs,omitempty"` // max |got − want|
	MaxRel   *float64 `json:"max_rel,omitempty"` // max |got − want| / |want| over want ≠ 0
	MaxULP   *float64 `json:"max_ulp,omitempty"` // max distance from float32(want) in float32 ULPs
	MaxRatio float64  `json:"max_ratio"`         // max observed error / tolerance; ≤ 1 passes
	// ToleranceFormula is the bound the ratio is taken against, in words or
	// symbols, e.g. "4·eps32·(|x|·|w| + 1)".
	ToleranceFormula string `json:"tolerance_formula,omitempty"`
	// NaiveRatio is the kernel's max error divided by that of a naive
	// float32 CPU implementation; nil when no naive baseline ran.
	NaiveRatio *float64 `json:"naive_ratio,omitempty"`
	// BySize is MaxRatio per bucket of the checked shape's size (the
	// hidden size), ascending; absent when the checks recorded no size.
	BySize []SizeStat `json:"by_size,omitempty"`
}

// Mutant is one mutant of the mutation analysis and its fate.
type Mutant struct {
	Name           string          `json:"name"` // unique, round-trips through the mutant's String()
	Description    string          `json:"description,omitempty"`
	Kind           MutantKind      `json:"kind"`
	Kernel         string          `json:"kernel,omitempty"`   // Kernel.Name it mutates
	Operator       string          `json:"operator,omitempty"` // mutation operator (generic mutants)
	Site           string          `json:"site,omitempty"`     // where it applies, e.g. "rmsnorm_bwd.ptx:123"
	Status         MutantStatus    `json:"status"`
	KilledBy       string          `json:"killed_by,omitempty"`        // Prediction.ID; required when killed
	Expected       []string        `json:"expected_killers,omitempty"` // named mutants: the predictions meant to kill it
	ChecksToKill   int             `json:"checks_to_kill,omitempty"`   // checks the killing prediction needed
	Duration       float64         `json:"duration_s,omitempty"`       // seconds spent on the mutant
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	Reason         string          `json:"reason,omitempty"` // verdict, e.g. why equivalent
	// Device is the ordinal (in run.devices) of the device its contract
	// runs used; nil when not recorded.
	Device *int `json:"device,omitempty"`
}

// Kernel names one kernel (or implementation) a run checked, pinned by the
// hash of its PTX: one of ours (package kernels), a foreign one bound from a
// binding file, or a user's implementation given to a contract in Go.
type Kernel struct {
	Name   string       `json:"name"`   // unique in the report; Prediction.Kernels and Mutant.Kernel refer to it
	Origin KernelOrigin `json:"origin"` // ours, binding or user
	// PTX, Entry and PTXSHA256 are required but for a user's implementation
	// that launches no PTX it lists (then all three are absent).
	PTX       string `json:"ptx,omitempty"`        // the PTX file (module), e.g. "kernels/ptx/rmsnorm_fwd.ptx"
	Entry     string `json:"entry,omitempty"`      // the .entry the launches call
	PTXSHA256 string `json:"ptx_sha256,omitempty"` // SHA-256 of the PTX text, lower-case hex
	// Binding is the binding file that describes a foreign kernel; required
	// when Origin is binding, absent otherwise.
	Binding      string `json:"binding,omitempty"`
	Contract     string `json:"contract,omitempty"`      // the operation it implements, e.g. "rmsnorm.forward"
	Source       string `json:"source,omitempty"`        // the source the PTX was compiled from, e.g. "kernels/rmsnorm.cu"
	SourceSHA256 string `json:"source_sha256,omitempty"` // lower-case hex
}

// NewKernel describes the kernel name whose launches call entry in the PTX
// text ptx, read from the file ptxFile, hashing the text. The caller sets
// Binding for a foreign kernel, and Contract and Source where known.
func NewKernel(name string, origin KernelOrigin, ptxFile, entry string, ptx []byte) Kernel {
	sum := sha256.Sum256(ptx)
	return Kernel{Name: name, Origin: origin, PTX: ptxFile, Entry: entry, PTXSHA256: hex.EncodeToString(sum[:])}
}

// New returns an empty report of the current schema version for run.
func New(run Run) *Report {
	return &Report{SchemaVersion: SchemaVersion, Run: run}
}

// NewRunID returns a fresh random run identity.
func NewRunID() string { return rand.Text() }

// NewRun returns a Run for backend started now, with a fresh ID, the Go
// version, the host name and the command line of this process filled in.
func NewRun(backend Backend) Run {
	host, _ := os.Hostname()
	return Run{
		ID:          NewRunID(),
		Start:       time.Now().UTC(),
		GoVersion:   runtime.Version(),
		Host:        host,
		Backend:     backend,
		CommandLine: slices.Clone(os.Args),
	}
}

// MarshalJSON encodes r with empty lists as [] rather than null.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // no methods: avoids recursion
	p := plain(r)
	if p.Predictions == nil {
		p.Predictions = []Prediction{}
	}
	if p.Mutants == nil {
		p.Mutants = []Mutant{}
	}
	if p.Kernels == nil {
		p.Kernels = []Kernel{}
	}
	return marshalJSON(p)
}

// Prediction returns the prediction with the given ID, or nil.
func (r *Report) Prediction(id string) *Prediction {
	for i := range r.Predictions {
		if r.Predictions[i].ID == id {
			return &r.Predictions[i]
		}
	}
	return nil
}

// Mutant returns the mutant with the given name, or nil.
func (r *Report) Mutant(name string) *Mutant {
	for i := range r.Mutants {
		if r.Mutants[i].Name == name {
			return &r.Mutants[i]
		}
	}
	return nil
}

// Kernel returns the kernel with the given name, or nil.
func (r *Report) Kernel(name string) *Kernel {
	for i := range r.Kernels {
		if r.Kernels[i].Name == name {
			return &r.Kernels[i]
		}
	}
	return nil
}

// UpsertPrediction replaces the prediction with p.ID in place, or appends p.
func (r *Report) UpsertPrediction(p Prediction) {
	if q := r.Prediction(p.ID); q != nil {
		*q = p
		return
	}
	r.Predictions = append(r.Predictions, p)
}

// UpsertMutant replaces the mutant with m.Name in place, or appends m.
func (r *Report) UpsertMutant(m Mutant) {
	if q := r.Mutant(m.Name); q != nil {
		*q = m
		return
	}
	r.Mutants = append(r.Mutants, m)
}

// UpsertKernel replaces the kernel with k.Name in place, or appends k.
func (r *Report) UpsertKernel(k Kernel) {
	if q := r.Kernel(k.Name); q != nil {
		*q = k
		return
	}
	r.Kernels = append(r.Kernels, k)
}

// HasFlag reports whether p carries f.
func (p *Prediction) HasFlag(f Flag) bool { return slices.Contains(p.Flags, f) }

// SetFlag adds f to p's flags if it is not there yet.
func (p *Prediction) SetFlag(f Flag) {
	if !p.HasFlag(f) {
		p.Flags = append(p.Flags, f)
	}
}

// ClearFlag removes f from p's flags.
func (p *Prediction) ClearFlag(f Flag) {
	p.Flags = slices.DeleteFunc(p.Flags, func(g Flag) bool { return g == f })
	if len(p.Flags) == 0 {
		p.Flags = nil
	}
}

// MarkUnproven sets FlagUnproven on every prediction that killed no mutant of
// r and clears it on the others, and returns the IDs it flagged. A report
// without mutants has no evidence either way and is left unchanged.
// Package falsify calls it after recording the kill matrix.
func (r *Report) MarkUnproven() []string {
	if len(r.Mutants) == 0 {
		return nil
	}
	killers := make(map[string]bool)
	for _, m := range r.Mutants {
		if m.Status == MutantKilled {
			killers[m.KilledBy] = true
		}
	}
	var ids []string
	for i := range r.Predictions {
		p := &r.Predictions[i]
		if killers[p.ID] {
			p.ClearFlag(FlagUnproven)
		} else {
			p.SetFlag(FlagUnproven)
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// Unproven returns the IDs of the predictions flagged FlagUnproven, in order.
func (r *Report) Unproven() []string {
	var ids []string
	for i := range r.Predictions {
		if r.Predictions[i].HasFlag(FlagUnproven) {
			ids = append(ids, r.Predictions[i].ID)
		}
	}
	return ids
}

// Partial reports whether r lacks evidence its run was to give: some
// prediction did not run (NotRun), or the run was stopped early.
func (r *Report) Partial() bool { return r.Run.Stopped != "" || len(r.NotRun()) > 0 }

// NotRun returns the IDs of the predictions with status not_run, in order.
func (r *Report) NotRun() []string {
	var ids []string
	for _, p := range r.Predictions {
		if p.Status == NotRun {
			ids = append(ids, p.ID)
		}
	}
	return ids
}
