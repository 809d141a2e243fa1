package main

import (
	"flag"
	"fmt"

	"github.com/ptxprop/ptxprop/reports"
	nightlyreports "github.com/ptxprop/ptxprop/reports/nightly"
)

var nightlyMergeCommand = &command{name: "nightly-merge", synopsis: "-o out.json DIR", short: "assemble the nightly's one report from its stage outputs",
	long: `Nightly-merge (also "ptxprop report nightly-merge") reads the directory
scripts/gpu-nightly.sh fills (make nightly) and writes the night's one
contract report: the property suite's, the foreign bindings' and the
mutation analysis's reports merged (contract-report.json,
foreign-report.json, mutants-report.json); the emulator's checked runs
(emu-report.json, emu-foreign-report.json) and compute-sanitizer's logs
(sanitizer/<tool>-<target>.log) as the sanitizer section, where the
planted target's out-of-bounds write and race must be found and are not
findings; the kernel benchmarks (bench.log) beside torch
(torch-kernels.jsonl) as ratios; environment.txt (KEY=VALUE) and each
stage's outcome (stages.tsv) in run.environment, a skipped stage with its
reason.
Exit status 0 when the report was written and every stage passed, 1 when
it was written but a stage failed, a report could not be merged or a
planted bug was not found (each is printed), 2 when no report could be
assembled or written.`,
	setup: nightlyMergeCmd}

func nightlyMergeCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	out := fs.String("o", "", "the report to write (required)")
	return func(e *env, args []string) error {
		if *out == "" || len(args) != 1 {
			return usageErr(lookup("nightly-merge"), "nightly-merge takes -o out.json and one directory")
		}
		res, err := nightlyreports.Assemble(args[0])
		if err != nil {
			return &exitError{exitUsage, err}
		}
		if err := reports.Write(*out, res.Report); err != nil {
			return &exitError{exitUsage, err}
		}
		r := res.Report
		findings := 0
		if r.Sanitizer != nil {
			findings = len(r.Sanitizer.Findings)
		}
		fmt.Fprintf(e.stdout, "%s: %d predictions, %d mutants, %d benchmarks, %d sanitizer %s\n", *out, len(r.Predictions), len(r.Mutants),
			len(r.Benchmarks), findings, plural(findings, "finding", "findings"))
		for _, s := range res.Stages {
			fmt.Fprintf(e.stdout, "  stage %-12s %s\n", s.Name, s)
		}
		for _, p := range res.Problems {
			fmt.Fprintf(e.stdout, "  problem: %s\n", p)
		}
		if res.Failed() {
			return &exitError{exitFinding, fmt.Errorf("nightly-merge: the nightly failed (a stage failed or a problem above)")}
		}
		return nil
	}
}
