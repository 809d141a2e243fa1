// Command ptxprop reads contract reports written by the property suite
// (go test ./properties) and the mutation analysis (go test ./falsify).
//
// Usage:
//
//	ptxprop summary [-markdown] [report.json]   print the summary (default out/contract-report.json)
//	ptxprop check [report.json]                 exit 1 unless every prediction is discharged or skipped
//	ptxprop diff old.json new.json              list status changes between two reports
//	ptxprop validate report.json...             check reports against the schema version and rules
//	ptxprop merge -o out.json shard.json...     combine the reports of shards of one run (reports.Merge)
//	ptxprop verify [-ptxprop.X=…] BINDING...    run the claimed contracts on kernels bound by files (package binding)
//
// Exit status: 0 success, 1 a report says something failed (or differs, for
// diff), 2 usage error or unreadable report.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ptxprop/ptxprop/reports"
)

const defaultReport = "out/contract-report.json"

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage:
  ptxprop summary [-markdown] [report.json]
  ptxprop check [report.json]
  ptxprop diff old.json new.json
  ptxprop validate report.json...
  ptxprop merge -o out.json shard.json...
  ptxprop verify [-ptxprop.X=…] BINDING...`)
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// exitError carries an exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "verify" {
		return verify(args[1:], stdout, stderr)
	}
	err := dispatch(args[0], args[1:], stdout)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "ptxprop:", ee.err)
		}
		if ee.code == 2 && ee.err != nil && errors.Is(ee.err, errUsage) {
			usage(stderr)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "ptxprop:", err)
	return 2
}

var errUsage = errors.New("bad usage")

func usageErr(format string, args ...any) error {
	return &exitError{2, fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))}
}

func read(path string) (*reports.Report, error) {
	r, err := reports.Read(path)
	if err != nil {
		return nil, &exitError{2, err}
	}
	return r, nil
}

func oneReport(fs *flag.FlagSet) (string, error) {
	switch fs.NArg() {
	case 0:
		return defaultReport, nil
	case 1:
		return fs.Arg(0), nil
	}
	return "", usageErr("expected at most one report, got %d", fs.NArg())
}

func dispatch(cmd string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	md, outPath := false, ""
	switch cmd {
	case "summary":
		fs.BoolVar(&md, "markdown", false, "print Markdown instead of the terminal summary")
	case "merge":
		fs.StringVar(&outPath, "o", "", "the merged report to write")
	}
	if err := fs.Parse(args); err != nil {
		return usageErr("%v", err)
	}
	switch cmd {
	case "summary":
		path, err := oneReport(fs)
		if err != nil {
			return err
		}
		r, err := read(path)
		if err != nil {
			return err
		}
		if md {
			return reports.Markdown(stdout, r)
		}
		return reports.Summary(stdout, r)
	case "check":
		path, err := oneReport(fs)
		if err != nil {
			return err
		}
		r, err := read(path)
		if err != nil {
			return err
		}
		bad := 0
		for _, p := range r.Predictions {
			if p.Status != reports.Discharged && p.Status != reports.Skipped {
				fmt.Fprintf(stdout, "%-12s %s: %s\n", p.Status, p.ID, p.Reason)
				bad++
			}
		}
		for _, m := range r.Mutants {
			if m.Status == reports.MutantSurvived || m.Status == reports.MutantError {
				fmt.Fprintf(stdout, "mutant %-9s %s: %s\n", m.Status, m.Name, m.Reason)
				bad++
			}
		}
		if bad > 0 {
			return &exitError{1, fmt.Errorf("%s: %d problem(s)", path, bad)}
		}
		fmt.Fprintf(stdout, "%s: %d predictions, none failed\n", path, len(r.Predictions))
		return nil
	case "diff":
		if fs.NArg() != 2 {
			return usageErr("diff takes two reports")
		}
		a, err := read(fs.Arg(0))
		if err != nil {
			return err
		}
		b, err := read(fs.Arg(1))
		if err != nil {
			return err
		}
		d := reports.Diff(a, b)
		for _, line := range d {
			fmt.Fprintln(stdout, line)
		}
		if len(d) > 0 {
			return &exitError{1, nil}
		}
		return nil
	case "merge":
		if outPath == "" || fs.NArg() == 0 {
			return usageErr("merge takes -o out.json and at least one report")
		}
		var rs []*reports.Report
		for _, p := range fs.Args() {
			r, err := read(p)
			if err != nil {
				return err
			}
			rs = append(rs, r)
		}
		m, err := reports.Merge(rs...)
		if err != nil {
			return &exitError{2, err}
		}
		if err := reports.Write(outPath, m); err != nil {
			return &exitError{2, err}
		}
		fmt.Fprintf(stdout, "%s: %d reports merged, %d predictions\n", outPath, len(rs), len(m.Predictions))
		return nil
	case "validate":
		if fs.NArg() == 0 {
			return usageErr("validate takes at least one report")
		}
		for _, p := range fs.Args() {
			if _, err := read(p); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: valid %s\n", p, reports.SchemaVersion)
		}
		return nil
	}
	return usageErr("unknown command %q", cmd)
}
