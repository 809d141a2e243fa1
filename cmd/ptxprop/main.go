// Command ptxprop reads the contract reports that the property suite
// (go test ./properties) and the mutation analysis (go test ./falsify) write:
// it prints their summary, checks them in CI, compares, validates and merges
// them.
//
// Usage:
//
//	ptxprop <command> [flags] [arguments]
//	ptxprop report <command> [flags] [arguments]
//
// The commands:
//
//	summary [-markdown] [report.json]     print the summary
//	check [-allow-partial] [report.json]  exit 1 unless every prediction that ran is discharged
//	diff old.json new.json                list regressions (exit 1), improvements and changes
//	validate report.json...               check reports against the schema and for contradictions
//	merge -o out.json shard.json...       add up the reports of shards of one run
//	nightly-merge -o out.json DIR         assemble the nightly's one report from its stage outputs
//	html -o page.html report.json...      write one self-contained HTML page of reports
//	verify [-ptxprop.X=…] BINDING...      run the contracts a binding file claims on its kernel
//	faildb list DIR | prune -passed N DIR list or prune a failure database
//	help [command]                        print this, or a command's documentation
//
// A command's flags may come before, between or after its arguments; "--"
// ends them. A report defaults to out/contract-report.json in the current
// directory, else at the root of the enclosing Go module. "ptxprop help
// <command>" and "ptxprop <command> -h" describe a command.
//
// Exit status: 0 success; 1 a finding (a prediction or mutant failed, the
// report is partial or ran nothing, reports differ, a report contradicts
// itself); 2 bad usage or input that cannot be read (a missing, corrupt or
// invalid report).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ptxprop/ptxprop/reports"
	"github.com/ptxprop/ptxprop/reports/page"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFinding = 1
	exitUsage   = 2
)

const exitCodes = `Exit status:
  0  success
  1  a finding: a prediction or mutant failed, the report is partial or ran
     nothing, the reports differ, or a report contradicts itself
  2  bad usage, or input that cannot be read (missing, corrupt or invalid report)`

// A command is one subcommand: its synopsis, its documentation, and a setup
// that defines its flags on its own FlagSet and returns what runs it.
// Adding a subcommand (run, verify) is adding an entry to commands.
type command struct {
	name     string
	synopsis string // arguments after the name, e.g. "[-markdown] [report.json]"
	short    string // one line for the command list
	long     string // what it does, its arguments and exit statuses
	setup    func(fs *flag.FlagSet) func(e *env, args []string) error
}

// env is what a command may touch.
type env struct {
	stdout, stderr io.Writer
}

var commands []*command

func init() {
	commands = []*command{
		{name: "summary", synopsis: "[-markdown] [report.json]", short: "print the summary of a report",
			long: `Summary prints one line per prediction (status, ID, title, checks, worst
error/tolerance ratio, reason), the totals, whether the report is partial,
the mutation analysis when there is one, and the commands that reproduce
failures. With -markdown it prints the whole report as a Markdown document.
Exit status 0, or 2 when the report cannot be read.`,
			setup: summaryCmd},
		{name: "check", synopsis: "[-allow-partial] [report.json]", short: "exit 1 unless every prediction that ran is discharged",
			long: `Check lists every prediction that is falsified, inconclusive or an error,
and every mutant that survived, could not run or was not exercised, and
exits 1 if there is any. It also exits 1 when no prediction ran (all are
skipped or not run) and when the report is partial — some prediction not
run, or the run stopped early — unless -allow-partial is given.
Exit status 0 when none of that holds, 2 when the report cannot be read
or cannot be trusted: invalid, or contradicting itself (a prediction
discharged with no check, falsified with no failed check, skipped with
checks; ptxprop validate lists every such problem).`,
			setup: checkCmd},
		{name: "diff", synopsis: "old.json new.json", short: "list regressions, improvements and changes between two reports",
			long: `Diff (also "ptxprop report diff") compares two reports, old then new,
one line per change, each marked regression, improvement or change.
Regressions, and their converses the improvements:
  - a prediction discharged in old and not in new (or gone), or one added
    that failed;
  - a named mutant surviving that was killed or new;
  - a lower mutation score;
  - a kernel's branch coverage lower;
  - a kernel's bandwidth ratio (to copy bandwidth) down at a shape by more
    than the noise: every repetition of new below every repetition of old,
    so the drop exceeds the spread each night's repeated timings show
    (with one repetition the noise is unknown: listed as a change);
  - a new sanitizer finding (by tool, kernel, PTX line and kind);
  - a kernel's emulator instructions or bytes per element grown at a shape
    (the emulator counts exactly: any growth).
Other changes: the run's settings (backend, devices, rapid's checks and
seed, the -ptxprop, -rapid and -test.short flags of its command line);
statuses that were not discharged, predictions and mutants added or
removed, flags, checks (fewer is flagged), worst error/tolerance ratios
moved by more than a tenth, kernels' hashes, torch ratios.
Exit status 0 when there is no regression (with or without other lines),
1 when there is one, 2 when a report cannot be read.`,
			setup: diffCmd},
		{name: "validate", synopsis: "report.json...", short: "check reports against the schema and for contradictions",
			long: `Validate reads each report as every command does — the schema version,
the JSON Schema's rules and those it cannot express — and prints each
problem with the JSON path of the field (predictions[3].status), and
rejects a report whose fields contradict each other: a status its checks,
failed checks, measurements or failure evidence deny (discharged with no
check, falsified with no failed check, skipped or not_run with checks or
ratios, inconclusive with a failure that reproduced), a mutant's killer
or checks to kill when it was not killed. It then looks for what a valid
report cannot mean: error statistics that cannot all hold, kernels named
but not listed.
Exit status 0 when every report is valid and consistent, 1 when one is
valid but contradicts itself, 2 when one cannot be read or is invalid.`,
			setup: validateCmd},
		{name: "merge", synopsis: "-o out.json shard.json...", short: "add up the reports of shards of one run",
			long: `Merge adds up reports of shards of one run — the same code on the same
backend and device, split into processes or seeds — into out.json: checks
and durations are summed, error maxima are maxima, each prediction takes
its most serious status. Every shard must be a different run (run.id): a
report given twice, or a merged report together with one of its shards,
is refused, since its checks would be counted twice; so is a shard of a
sharded run (run.shard) given twice, and shards of other sharded runs. A
merge that lacks shards of its run says which in run.stopped (partial).
Exit status 0 when out.json was written, 2 when a report cannot be read or
the reports are not distinct shards of one run.`,
			setup: mergeCmd},
		nightlyMergeCommand,
		{name: "html", synopsis: "-o page.html report.json...", short: "write one self-contained HTML page of reports",
			long: `Html (also "ptxprop report html") writes one HTML page that loads nothing
(inline CSS, inline SVG plots, no script): the latest report by
run.start in full — every prediction's status at a glance, counterexamples
with their replay commands, error/tolerance against the hidden size
(targeted against random where recorded), branch coverage per kernel,
bandwidth ratio per kernel and shape beside torch, emulator costs,
sanitizer findings, the kill matrix — and, given several reports, the
trends across them in the order of their start times.
Exit status 0 when the page was written, 2 when a report cannot be read
or the page cannot be written.`,
			setup: htmlCmd},
		verifyCommand,
		faildbCommand,
		{name: "help", synopsis: "[command]", short: "print this, or a command's documentation",
			long:  `Help prints the list of commands, or the documentation of one. Exit status 0.`,
			setup: helpCmd},
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `ptxprop reads the contract reports that the property suite (go test ./properties)
and the mutation analysis (go test ./falsify) write.

Usage:
  ptxprop <command> [flags] [arguments]
  ptxprop report <command> [flags] [arguments]

Commands:
`)
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name)+1+len(c.synopsis))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name+" "+c.synopsis, c.short)
	}
	fmt.Fprintf(w, `
A command's flags may come before, between or after its arguments; "--" ends
them. A report defaults to %s in the current directory, else at the
root of the enclosing Go module. "ptxprop help <command>" or "ptxprop <command> -h"
describes a command.

%s
`, defaultReport, exitCodes)
}

// commandUsage writes c's documentation and flags.
func commandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: ptxprop %s %s\n\n%s\n", c.name, c.synopsis, c.long)
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.setup(fs)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\n%s\n", exitCodes)
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// exitError carries an exit status; err nil means nothing more to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// usageError is bad usage of cmd (nil: of ptxprop itself).
type usageError struct {
	cmd *command
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usageErr(c *command, format string, args ...any) error {
	return &usageError{c, fmt.Sprintf(format, args...)}
}

func run(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	err := dispatch(e, args)
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "ptxprop:", ue.msg)
		if ue.cmd != nil {
			fmt.Fprintf(stderr, "usage: ptxprop %s %s (ptxprop help %s describes it)\n", ue.cmd.name, ue.cmd.synopsis, ue.cmd.name)
		} else {
			fmt.Fprintln(stderr, `run "ptxprop help" for the commands`)
		}
		return exitUsage
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintln(stderr, "ptxprop:", message(ee.err))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "ptxprop:", message(err))
	return exitUsage
}

// dispatch runs the command args name, with the rest of args.
func dispatch(e *env, args []string) error {
	name, args := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		usage(e.stdout)
		return nil
	case "report": // ptxprop report summary …, as ARCHITECTURE.md has it
		if len(args) == 0 {
			return usageErr(nil, "report: missing command")
		}
		if c := lookup(args[0]); c == nil || c.name == "help" {
			return usageErr(nil, "report: unknown command %s", quoteArg(args[0]))
		}
		return dispatch(e, args)
	}
	c := lookup(name)
	if c == nil {
		return usageErr(nil, "unknown command %s", quoteArg(name))
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	runCmd := c.setup(fs)
	operands, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(e.stdout, c)
			return nil
		}
		return usageErr(c, "%s: %v", c.name, err)
	}
	return runCmd(e, operands)
}

// parseInterspersed parses args on fs with flags allowed anywhere among the
// operands (ptxprop verify a.yaml -ptxprop.checks=5), as a person types
// them; "--" ends the flags, so that everything after it is an operand
// (a file named -x.yaml). It returns the operands in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if terminated(fs, args[:len(args)-len(rest)]) {
			return append(operands, rest...), nil
		}
		if len(rest) == 0 {
			return operands, nil
		}
		// rest[0] is an operand (Parse stops at the first one): keep it
		// and parse what follows it.
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// terminated reports whether the flag package's parse of consumed, the
// arguments it took as flags and their values, ended at a "--" that ends
// the flags rather than at one that is the value of a flag (-o --).
func terminated(fs *flag.FlagSet, consumed []string) bool {
	for i := 0; i < len(consumed); i++ {
		a := consumed[i]
		if a == "--" {
			return true // Parse stops there: it is the last one
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		i++ // the next argument is the flag's value
	}
	return false
}

// quoteArg quotes a command-line argument for a message, cut short.
func quoteArg(s string) string {
	const n = 64
	if len(s) > n {
		return strconv.Quote(s[:n]) + "…"
	}
	return strconv.Quote(s)
}

// maxProblems bounds the problems of one invalid report that are printed.
const maxProblems = 20

// message formats an error for the terminal: the problems of an invalid
// report one per line (at most maxProblems), the "reports: " prefix of
// the library dropped.
func message(err error) string {
	var ve *reports.ValidationError
	if !errors.As(err, &ve) {
		return strings.ReplaceAll(err.Error(), "reports: ", "")
	}
	head := strings.TrimSuffix(strings.ReplaceAll(err.Error(), "reports: ", ""), ve.Error())
	var b strings.Builder
	fmt.Fprintf(&b, "%sinvalid report (%d %s):", head, len(ve.Problems), plural(len(ve.Problems), "problem", "problems"))
	for i, p := range ve.Problems {
		if i == maxProblems {
			fmt.Fprintf(&b, "\n  … and %d more", len(ve.Problems)-maxProblems)
			break
		}
		b.WriteString("\n  " + p)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// defaultReport is where the suite writes its report, relative to the
// module root.
var defaultReport = filepath.Join("out", "contract-report.json")

// defaultPath returns defaultReport in the working directory if it is
// there, else at the root of the enclosing module, else the former.
func defaultPath() string {
	if _, err := os.Stat(defaultReport); err == nil {
		return defaultReport
	}
	dir, err := os.Getwd()
	if err != nil {
		return defaultReport
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, defaultReport)
			if rel, err := filepath.Rel(dir, p); err == nil {
				return rel
			}
			return p
		}
		if filepath.Dir(d) == d {
			return defaultReport
		}
	}
}

// read reads a report; failing, it is input that cannot be read (exit 2).
func read(path string) (*reports.Report, error) {
	r, err := reports.Read(path)
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	return r, nil
}

// oneReport reads the single report argument, or the default, and returns
// its path and contents.
func oneReport(c *command, args []string) (string, *reports.Report, error) {
	var path string
	switch len(args) {
	case 0:
		path = defaultPath()
	case 1:
		path = args[0]
	default:
		return "", nil, usageErr(c, "%s takes at most one report, got %d arguments", c.name, len(args))
	}
	r, err := read(path)
	return path, r, err
}

func summaryCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	md := fs.Bool("markdown", false, "print the whole report as Markdown instead of the terminal summary")
	return func(e *env, args []string) error {
		_, r, err := oneReport(lookup("summary"), args)
		if err != nil {
			return err
		}
		if *md {
			return reports.Markdown(e.stdout, r)
		}
		return reports.Summary(e.stdout, r)
	}
}

func checkCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	allowPartial := fs.Bool("allow-partial", false, "accept a partial report (predictions not run, or a run stopped early)")
	return func(e *env, args []string) error {
		path, r, err := oneReport(lookup("check"), args)
		if err != nil {
			return err
		}
		findings, ran := verdict(e, r, *allowPartial)
		for _, f := range findings {
			fmt.Fprintln(e.stdout, f)
		}
		if len(findings) > 0 {
			return &exitError{exitFinding, fmt.Errorf("%s: %d %s", path, len(findings), plural(len(findings), "finding", "findings"))}
		}
		fmt.Fprintf(e.stdout, "%s: %d predictions, %d ran, none failed\n", path, len(r.Predictions), ran)
		return nil
	}
}

// outcome reports whether a prediction of status s ran (any status but
// skipped, not_run and not_claimed) and whether it ran and was not
// discharged.
func outcome(s reports.PredictionStatus) (ran, failed bool) {
	switch s {
	case reports.Discharged:
		return true, false
	case reports.Falsified, reports.Inconclusive, reports.Error:
		return true, true
	}
	return false, false
}

// verdict returns check's findings on r, one line each, and how many
// predictions ran (any status but skipped, not_run and not_claimed). With allowPartial a
// partial report is noted on e.stdout instead of being a finding. A command
// that runs contracts (verify, run) judges its report with it too.
func verdict(e *env, r *reports.Report, allowPartial bool) (findings []string, ran int) {
	for _, p := range r.Predictions {
		didRun, failed := outcome(p.Status)
		if didRun {
			ran++
		}
		if failed {
			findings = append(findings, fmt.Sprintf("%-12s %s: %s", p.Status, p.ID, firstLine(p.Reason)))
		}
	}
	for _, m := range r.Mutants {
		switch m.Status {
		case reports.MutantSurvived, reports.MutantError, reports.MutantNotExercised:
			findings = append(findings, fmt.Sprintf("mutant %-13s %s: %s", m.Status, m.Name, firstLine(m.Reason)))
		}
	}
	switch {
	case len(r.Predictions) == 0: // Read refuses such a report; kept should that change
		findings = append(findings, "no predictions: the report checked nothing")
	case ran == 0:
		findings = append(findings, fmt.Sprintf("no prediction ran: all %d are skipped or not run", len(r.Predictions)))
	}
	if r.Partial() {
		line := "partial report"
		if r.Run.Stopped != "" {
			line += ": stopped: " + firstLine(r.Run.Stopped)
		}
		if ids := r.NotRun(); len(ids) > 0 {
			line += fmt.Sprintf(": %d %s not run: %s", len(ids), plural(len(ids), "prediction", "predictions"), strings.Join(ids, ", "))
		}
		if allowPartial {
			fmt.Fprintf(e.stdout, "%s (allowed by -allow-partial)\n", line)
		} else {
			findings = append(findings, line+" (run them, or pass -allow-partial)")
		}
	}
	return findings, ran
}

func diffCmd(*flag.FlagSet) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		if len(args) != 2 {
			return usageErr(lookup("diff"), "diff takes two reports, got %d arguments", len(args))
		}
		a, err := read(args[0])
		if err != nil {
			return err
		}
		b, err := read(args[1])
		if err != nil {
			return err
		}
		cs := reports.Compare(a, b)
		if len(cs) == 0 {
			fmt.Fprintf(e.stdout, "no changes from %s to %s\n", args[0], args[1])
			return nil
		}
		n := map[reports.Class]int{}
		for _, class := range []reports.Class{reports.Regression, reports.Improvement, reports.Changed} {
			for _, c := range cs {
				if c.Class == class {
					fmt.Fprintf(e.stdout, "%-11s  %s\n", c.Class, c.Text)
					n[class]++
				}
			}
		}
		fmt.Fprintf(e.stdout, "%d %s, %d %s, %d other %s\n", n[reports.Regression], plural(n[reports.Regression], "regression", "regressions"),
			n[reports.Improvement], plural(n[reports.Improvement], "improvement", "improvements"), n[reports.Changed], plural(n[reports.Changed], "change", "changes"))
		if n[reports.Regression] > 0 {
			return &exitError{exitFinding, nil}
		}
		return nil
	}
}

func validateCmd(*flag.FlagSet) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		if len(args) == 0 {
			return usageErr(lookup("validate"), "validate takes at least one report")
		}
		code := exitOK
		for _, p := range args {
			r, err := reports.Read(p)
			if err != nil {
				fmt.Fprintln(e.stderr, "ptxprop:", message(err))
				code = exitUsage
				continue
			}
			lint := r.Lint()
			for _, l := range lint {
				fmt.Fprintf(e.stdout, "%s: %s\n", p, l)
			}
			if len(lint) > 0 {
				code = max(code, exitFinding)
				continue
			}
			fmt.Fprintf(e.stdout, "%s: valid %s (%d predictions, %d mutants, %d kernels)\n", p, reports.SchemaVersion,
				len(r.Predictions), len(r.Mutants), len(r.Kernels))
		}
		if code != exitOK {
			return &exitError{code, nil}
		}
		return nil
	}
}

func mergeCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	out := fs.String("o", "", "the merged report to write (required)")
	return func(e *env, args []string) error {
		if *out == "" || len(args) == 0 {
			return usageErr(lookup("merge"), "merge takes -o out.json and at least one report")
		}
		m, err := reports.MergeFiles(args...)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		if err := reports.Write(*out, m); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(e.stdout, "%s: %d reports merged, %d predictions\n", *out, len(args), len(m.Predictions))
		return nil
	}
}

func htmlCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	out := fs.String("o", "", "the HTML page to write (required)")
	return func(e *env, args []string) error {
		if *out == "" || len(args) == 0 {
			return usageErr(lookup("html"), "html takes -o page.html and at least one report")
		}
		rs := make([]*reports.Report, len(args))
		for i, p := range args {
			r, err := read(p)
			if err != nil {
				return err
			}
			rs[i] = r
		}
		var b bytes.Buffer
		if err := page.Write(&b, rs, args); err != nil {
			return &exitError{exitUsage, err}
		}
		if err := reports.WriteFileAtomic(*out, b.Bytes()); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(e.stdout, "%s: %d %s, %d bytes\n", *out, len(rs), plural(len(rs), "report", "reports"), b.Len())
		return nil
	}
}

func helpCmd(*flag.FlagSet) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		switch len(args) {
		case 0:
			usage(e.stdout)
			return nil
		case 1:
			name := args[0]
			if name == "report" {
				usage(e.stdout)
				return nil
			}
			if c := lookup(name); c != nil {
				commandUsage(e.stdout, c)
				return nil
			}
			return usageErr(lookup("help"), "help: unknown command %s", quoteArg(name))
		}
		return usageErr(lookup("help"), "help takes at most one command")
	}
}

// lineMax bounds the bytes of a reason on one line of check's output; the
// report holds it whole.
const lineMax = 512

// firstLine is the first line of s, cut to lineMax bytes (reports.Clip).
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return reports.Clip(strings.TrimSpace(s[:i]), lineMax) + " …"
	}
	return reports.Clip(s, lineMax)
}
