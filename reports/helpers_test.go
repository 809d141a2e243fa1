package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func ptr[T any](v T) *T { return &v }

const (
	shaA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	shaB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

// sampleReport is a report with every field set somewhere.
func sampleReport() *Report {
	start := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	return &Report{
		SchemaVersion: SchemaVersion,
		Run: Run{
			ID:                "run-sample",
			MergedFrom:        []string{"shard-a", "shard-b"},
			Stopped:           "deadline 7m0s",
			Start:             start,
			End:               start.Add(83 * time.Second),
			GitCommit:         "0123456789abcdef0123456789abcdef01234567",
			GoVersion:         "go1.26.8",
			Host:              "h200-node",
			Backend:           BackendGPU,
			Device:            "NVIDIA H200",
			ComputeCapability: "9.0",
			DriverVersion:     "570.86.15",
			CUDAVersion:       "12.8",
			SMCount:           132,
			CopyBandwidth:     ptr(3.2e12),
			RapidSeed:         ptr(uint64(math.MaxUint64)),
			RapidChecks:       10000,
			CommandLine:       []string{"properties.test", "-rapid.checks=10000"},
			Notes:             []string{"nightly", "error < tol & \"quoted\""},
			Environment:       map[string]string{"torch": "2.5.1", "compute-sanitizer": "2024.3.1"},
			Devices: []Device{
				{Backend: BackendGPU, Ordinal: 0, Name: "NVIDIA H200", UUID: "GPU-5f1e2d3c-0000-1111-2222-333344445555", PCIBusID: "0000:19:00.0", ContractRuns: 3, Launches: 10046},
				{Backend: BackendGPU, Ordinal: 1, Name: "NVIDIA H200", ContractRuns: 1, Launches: 0},
			},
		},
		Predictions: []Prediction{
			{
				ID:        "FALSIFY-DIM-001",
				Title:     "Output shape follows input shape",
				Statement: "For every rows×hidden, rmsnorm writes exactly rows×hidden outputs.",
				Kernels:   []string{"rmsnorm_fwd"},
				Status:    Discharged,
				Checks:    10000,
				ErrorStats: &ErrorStats{MaxAbs: ptr(1e-7), MaxRel: ptr(3e-7), MaxULP: ptr(2.0), MaxRatio: 0.31, ToleranceFormula: "4·eps32·(|x|·|w| + 1)", NaiveRatio: ptr(0.5),
					BySize: []SizeStat{{SizeMin: 1, SizeMax: 1, Checks: 40, MaxRatio: 0.1}, {SizeMin: 32, SizeMax: 63, Checks: 900, MaxRatio: 0.31, Generator: "targeted"}}},
				Rerun:           "go test ./properties -run '^TestRMSNormForward$' -rapid.checks=10000",
				Duration:        0.813,
				ChecksPerSecond: 12300,
				Devices:         []int{0, 1},
			},
			{
				ID:           "FALSIFY-RMS-002",
				Title:        "Backward matches the float64 derivative",
				Kernels:      []string{"rmsnorm_bwd", "rmsnorm_fwd"},
				Status:       Falsified,
				Reason:       "max error above bound\nat row 3, element 31",
				Checks:       37,
				ChecksFailed: 1,
				Counterexample: &Counterexample{
					Text:  "[rapid] draw rows: 1\n[rapid] draw hidden: 33\n",
					Draws: []Draw{{Label: "rows", Value: "1"}, {Label: "hidden", Value: "33"}},
				},
				Reproduction: &Reproduction{
					Command:  "go test ./properties -run '^TestRMSNormBackward$' -rapid.seed=18446744073709551615",
					FailFile: "testdata/rapid/TestRMSNormBackward/TestRMSNormBackward-20260102-030405-1.fail",
				},
				ErrorStats:       &ErrorStats{MaxAbs: ptr(math.Inf(1)), MaxRel: ptr(math.NaN()), MaxULP: ptr(math.Inf(1)), MaxRatio: math.Inf(1)},
				Duration:         0.012,
				Devices:          []int{0},
				Flags:            []Flag{FlagUnproven, FlagNonDeterministic},
				NonDeterministic: "failed on the first run, passed on replay",
			},
			{ID: "FALSIFY-X-003", Status: Skipped, Reason: "no GPU"},
			{ID: "FALSIFY-Y-004", Status: NotRun, Reason: "filtered out by -run"},
			{ID: "FALSIFY-Z-005", Status: Inconclusive, Checks: 12, ErrorStats: &ErrorStats{MaxRatio: 0.5}},
		},
		Mutants: []Mutant{
			{Name: "drop-eps", Description: "omit epsilon", Kind: MutantNamed, Kernel: "rmsnorm_fwd", Status: MutantKilled, KilledBy: "FALSIFY-DIM-001", ChecksToKill: 3,
				Counterexample: &Counterexample{Draws: []Draw{{Label: "hidden", Value: "1"}}}},
			{Name: "ptx:add->sub@12", Kind: MutantGeneric, Kernel: "rmsnorm_bwd", Operator: "add->sub", Site: "rmsnorm_bwd.ptx:12", Status: MutantSurvived},
			{Name: "ptx:rnd@40", Kind: MutantGeneric, Operator: "rn->rz", Site: "rmsnorm_fwd.ptx:40", Status: MutantEquivalent, Reason: "rounding of an exact value"},
			{Name: "ptx:mul@7", Kind: MutantGeneric, Kernel: "rmsnorm_bwd", Operator: "arith-swap", Status: MutantNotExercised, Reason: "not exercised: no check launched it"},
			{Name: "wrong-axis", Kind: MutantNamed, Kernel: "rmsnorm_bwd", Status: MutantKilled, KilledBy: "FALSIFY-RMS-002",
				Expected: []string{"FALSIFY-RMS-002"}, ChecksToKill: 1, Duration: 0.25, Device: ptr(1)},
		},
		Kernels: []Kernel{
			{Name: "rmsnorm_fwd", Origin: KernelOurs, Entry: "rmsnorm_fwd", Source: "kernels/rmsnorm.cu", PTX: "kernels/ptx/rmsnorm.ptx", PTXSHA256: shaA, SourceSHA256: shaB},
			{Name: "rmsnorm_bwd", Origin: KernelBinding, Entry: "rmsnorm_bwd_kernel", PTX: "rmsnorm_bwd.ptx", PTXSHA256: shaB,
				Binding: "testdata/triton-rmsnorm-bwd.yaml", Contract: "rmsnorm.backward"},
		},
		Benchmarks: []Benchmark{
			{Kernel: "rmsnorm_fwd", Shape: "rows=4096 hidden=4096", Size: 4096, CopyRatio: []float64{0.81, 0.83, 0.82},
				TorchEagerRatio: []float64{2.1, 2.0, 2.2}, TorchCompileRatio: []float64{1.1, 1.05, 1.12}},
			{Kernel: "rmsnorm_fwd", Shape: "rows=4096 hidden=512", Size: 512, CopyRatio: []float64{0.6}},
		},
		Sanitizer: &Sanitizer{Tools: []string{"memcheck", "racecheck"}, Findings: []SanitizerFinding{
			{Tool: "racecheck", Kernel: "rmsnorm_bwd", PTXLine: 88, Kind: "RAW hazard", Message: "Race reported between Write access at rmsnorm_bwd+0x1a0"},
			{Tool: "memcheck", Kind: "CUDA_ERROR_INVALID_VALUE", Message: "cuFuncGetParamInfo"},
		}},
		Coverage: []Coverage{
			{Kernel: "rmsnorm_fwd", Branches: 12, Covered: 10, Blocks: 9, BlocksCovered: 8, UncoveredBlocks: []int{60}, Uncovered: []UncoveredBranch{
				{Line: 57, Guard: "@%p3", Direction: "taken", Condition: "setp.lt.s32 %p3, %r5, %r2;", ConditionLine: 56},
				{Line: 70, Guard: "@!%p4", Direction: "not taken", Unreachable: "hidden ≤ 2³¹−1"}}},
			{Kernel: "rmsnorm_bwd", Branches: 0, Covered: 0},
		},
		Costs: []Cost{{Kernel: "rmsnorm_fwd", Shape: "rows=3 hidden=33", Size: 33, Elements: 99, InstructionsPerElement: 41.5, BytesPerElement: 12.1}},
	}
}

// minimalReport has only what is required.
func minimalReport() *Report {
	r := New(Run{ID: "run-minimal", Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), GoVersion: "go1.26", Backend: BackendEmu})
	r.Predictions = []Prediction{{ID: "P-0", Status: Skipped}}
	return r
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// compiledSchema compiles the embedded schema with format assertions on.
func compiledSchema(t tb) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(SchemaID, doc); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile(SchemaID)
	})
	if schemaErr != nil {
		t.Fatalf("compile schema: %v", schemaErr)
	}
	return schema
}

// schemaValidate validates JSON text against the schema.
func schemaValidate(t tb, data []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("schema validator cannot parse JSON: %v\n%s", err, data)
	}
	return compiledSchema(t).Validate(doc)
}

// mustMarshal is Marshal that fails the test on error.
func mustMarshal(t testing.TB, r *Report) []byte {
	t.Helper()
	b, err := Marshal(r)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return b
}

// toDoc decodes JSON into a generic document for editing.
func toDoc(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func fromDoc(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
