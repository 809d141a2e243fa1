package reports

import (
	"errors"
	"strings"
	"testing"
)

// TestContradictionsRejected: a report that contradicts itself is invalid.
// Each case edits the valid sample report in one way that no run produces,
// and requires Validate to name the element and the field, and the schema
// and Parse (so Read, and every command over a report) to reject it too.
func TestContradictionsRejected(t *testing.T) {
	// The sample's predictions: 0 discharged, 1 falsified, 2 skipped,
	// 3 not_run, 4 inconclusive; mutants 0 killed, 1 survived (generic).
	cases := []struct {
		name  string
		at    string // the element the message must name
		field string // and the field
		edit  func(r *Report)
	}{
		{"discharged with no check", `predictions[0] "FALSIFY-DIM-001"`, "checks 0", func(r *Report) {
			p := &r.Predictions[0]
			p.Checks, p.ChecksPerSecond, p.ErrorStats = 0, 0, nil
		}},
		{"discharged with a counterexample", `predictions[0] "FALSIFY-DIM-001"`, "counterexample", func(r *Report) {
			r.Predictions[0].Counterexample = r.Predictions[1].Counterexample
		}},
		{"discharged with a reproduction", `predictions[0] "FALSIFY-DIM-001"`, "reproduction", func(r *Report) {
			r.Predictions[0].Reproduction = r.Predictions[1].Reproduction
		}},
		{"discharged and nondeterministic", `predictions[0] "FALSIFY-DIM-001"`, "nondeterministic", func(r *Report) {
			r.Predictions[0].SetFlag(FlagNonDeterministic)
			r.Predictions[0].NonDeterministic = "failed once"
		}},
		{"falsified with no failed check", `predictions[1] "FALSIFY-RMS-002"`, "checks_failed 0", func(r *Report) {
			r.Predictions[1].ChecksFailed = 0
		}},
		{"skipped with checks", `predictions[2] "FALSIFY-X-003"`, "skipped with 200 checks", func(r *Report) {
			r.Predictions[2].Checks = 200
		}},
		{"not_claimed with checks", `predictions[2] "FALSIFY-X-003"`, "not_claimed with 7 checks", func(r *Report) {
			r.Predictions[2].Status, r.Predictions[2].Checks = NotClaimed, 7
		}},
		{"not_claimed with a counterexample", `predictions[2] "FALSIFY-X-003"`, "counterexample", func(r *Report) {
			r.Predictions[2].Status = NotClaimed
			r.Predictions[2].Counterexample = r.Predictions[1].Counterexample
		}},
		{"skipped with error_stats", `predictions[2] "FALSIFY-X-003"`, "error_stats", func(r *Report) {
			r.Predictions[2].ErrorStats = &ErrorStats{MaxRatio: 0.5}
		}},
		{"skipped with a counterexample", `predictions[2] "FALSIFY-X-003"`, "counterexample", func(r *Report) {
			r.Predictions[2].Counterexample = r.Predictions[1].Counterexample
		}},
		{"not_run with a reproduction", `predictions[3] "FALSIFY-Y-004"`, "reproduction", func(r *Report) {
			r.Predictions[3].Reproduction = r.Predictions[1].Reproduction
		}},
		{"not_run on a device", `predictions[3] "FALSIFY-Y-004"`, "devices", func(r *Report) {
			r.Predictions[3].Devices = []int{0}
		}},
		{"not_run and nondeterministic", `predictions[3] "FALSIFY-Y-004"`, "nondeterministic", func(r *Report) {
			r.Predictions[3].SetFlag(FlagNonDeterministic)
			r.Predictions[3].NonDeterministic = "failed once"
		}},
		{"inconclusive with a failure that reproduced", `predictions[4] "FALSIFY-Z-005"`, "checks_failed 1", func(r *Report) {
			r.Predictions[4].ChecksFailed = 1
		}},
		{"inconclusive with ratios but no check", `predictions[4] "FALSIFY-Z-005"`, "error_stats with checks 0", func(r *Report) {
			r.Predictions[4].Checks = 0
		}},
		{"error with a rate but no check", `predictions[4] "FALSIFY-Z-005"`, "checks_per_second", func(r *Report) {
			p := &r.Predictions[4]
			p.Status, p.Reason, p.Checks, p.ErrorStats, p.Duration, p.ChecksPerSecond = Error, "launch failed", 0, nil, 1, 50
		}},
		{"a rate without a duration", `predictions[0] "FALSIFY-DIM-001"`, "duration_s 0", func(r *Report) {
			r.Predictions[0].Duration = 0
		}},
		{"nondeterministic flag without the text", `predictions[1] "FALSIFY-RMS-002"`, "nondeterministic", func(r *Report) {
			r.Predictions[1].NonDeterministic = ""
		}},
		{"nondeterministic text without the flag", `predictions[1] "FALSIFY-RMS-002"`, "nondeterministic", func(r *Report) {
			r.Predictions[1].ClearFlag(FlagNonDeterministic)
		}},
		{"survivor with a killer", `mutants[1] "ptx:add->sub@12"`, "killed_by", func(r *Report) {
			r.Mutants[1].KilledBy = "FALSIFY-DIM-001"
		}},
		{"survivor with checks to kill", `mutants[1] "ptx:add->sub@12"`, "checks_to_kill", func(r *Report) {
			r.Mutants[1].ChecksToKill = 7
		}},
		{"generic mutant with expected killers", `mutants[1] "ptx:add->sub@12"`, "expected_killers", func(r *Report) {
			r.Mutants[1].Expected = []string{"FALSIFY-DIM-001"}
		}},
		{"device with launches and no contract run", "run: devices[1]", "contract_runs 0", func(r *Report) {
			r.Run.Devices[1].ContractRuns, r.Run.Devices[1].Launches = 0, 12
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := sampleReport()
			if err := r.Validate(); err != nil {
				t.Fatalf("the sample is invalid before the edit: %v", err)
			}
			c.edit(r)
			err := r.Validate()
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate accepts a report that contradicts itself (%v)", err)
			}
			named := false
			for _, p := range ve.Problems {
				named = named || (strings.HasPrefix(p, c.at+":") && strings.Contains(p, c.field))
			}
			if !named {
				t.Errorf("Validate: %v\nwant a problem of %s naming %q", err, c.at, c.field)
			}
			data, merr := Marshal(r)
			if merr != nil {
				t.Fatal(merr)
			}
			if err := schemaValidate(t, data); err == nil {
				t.Errorf("schema accepts it:\n%s", data)
			}
			if _, err := Parse(data); !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse: %v, want ErrInvalid", err)
			}
		})
	}
}
