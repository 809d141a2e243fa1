package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// exitInterrupted is verify's status when SIGINT or SIGTERM ended the run.
const exitInterrupted = suite.ExitInterrupted

// verifyCommand is verify's entry in commands.
var verifyCommand = &command{name: "verify", synopsis: "[-ptxprop.X=…] BINDING...",
	short: "run the contracts a binding file claims on the kernel it binds",
	long: `Verify loads each binding file (package binding: a PTX kernel, or a
sequence of launches, described as implementing one of the contracts) and
runs every prediction of the claimed contracts against it as one run: on
the device -ptxprop.backend names, with the check budget, deadline,
progress and report the -ptxprop.X settings (or their PTXPROP_X twins)
give; rapid's -rapid.checks and -rapid.seed (RAPID_CHECKS, RAPID_SEED)
win over -ptxprop.checks and -ptxprop.seed. Flags may come before or
after the binding files; "--" ends them. It prints the report's summary
and the path of the report it wrote: -ptxprop.report, else
out/verify-report.json at the root of the ptxprop module when run inside
it, else verify-report.json in the current directory. It refuses to
replace a report of ptxprop's own kernels (the property suite's, the
mutation analysis') unless merging into it (-ptxprop.merge).
Exit status 0 when every prediction that ran is discharged; 1 when one is
falsified, inconclusive or an error, or none ran; 2 on bad usage or a
binding file with a problem (then nothing is launched, or, for a problem
that shows only at a shape drawn during the run, its predictions are
errors); 130 when
interrupted (the report holds what was done).`,
	setup: verifyCmd}

func verifyCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	c, loadErr := suite.Load(os.LookupEnv)
	c.Summary = true
	suite.RegisterFlags(fs, &c)
	rapid := rapidFlags(fs)
	return func(e *env, args []string) error {
		if loadErr != nil {
			return &exitError{exitUsage, loadErr}
		}
		rapid.apply(&c)
		if len(args) == 0 {
			return usageErr(lookup("verify"), "verify: no binding file")
		}
		if c.Report == "" {
			c.Report = verifyReportPath()
		}
		if err := mayReplace(c); err != nil {
			return err
		}
		c.Output = e.stdout
		c.Command, c.CommandArgs = "ptxprop verify", args
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		rep, err := binding.Verify(ctx, c, args...)
		if path := c.ReportPath(); rep != nil && path != "" {
			if w, rerr := reports.Read(path); rerr == nil && w.Run.ID == rep.Run.ID {
				fmt.Fprintf(e.stdout, "report: %s\n", path)
			}
		}
		switch {
		case errors.Is(err, binding.ErrInvalid):
			return &exitError{exitUsage, err}
		case ctx.Err() != nil:
			return &exitError{exitInterrupted, err}
		case err != nil:
			return &exitError{exitFinding, err}
		}
		ran, bad := 0, 0
		for _, p := range rep.Predictions {
			didRun, failed := outcome(p.Status)
			if didRun {
				ran++
			}
			if failed {
				bad++
			}
		}
		switch {
		case ran == 0:
			return &exitError{exitFinding, errors.New("verify: no prediction ran")}
		case bad > 0:
			return &exitError{exitFinding, fmt.Errorf("verify: %d of %d predictions not discharged", bad, ran)}
		}
		return nil
	}
}

// rapidSettings are rapid's own -rapid.checks and -rapid.seed, which a
// test binary takes and the mission's command lines use: the CLI takes
// them too, and, as in a test binary, they win over -ptxprop.checks and
// -ptxprop.seed whatever the order.
type rapidSettings struct {
	checks, seed string // as given; "" when not
}

func rapidFlags(fs *flag.FlagSet) *rapidSettings {
	r := &rapidSettings{}
	fs.Func("rapid.checks", "rapid's checks per contract; wins over -ptxprop.checks ($RAPID_CHECKS)", func(v string) error {
		if _, err := suite.NonNegInt(v); err != nil {
			return err
		}
		r.checks = v
		return nil
	})
	fs.Func("rapid.seed", "rapid's base seed; wins over -ptxprop.seed ($RAPID_SEED)", func(v string) error {
		if _, err := strconv.ParseUint(v, 0, 64); err != nil {
			return err
		}
		r.seed = v
		return nil
	})
	return r
}

// apply sets c's checks and seed from the rapid flags given, as the run's
// own rapid settings (suite.Config.Rapid): they win over RAPID_CHECKS and
// RAPID_SEED, which rapid read into its own flags when the process started,
// as a flag on go test's command line would.
func (r *rapidSettings) apply(c *suite.Config) {
	if r.checks != "" {
		c.Checks, _ = suite.NonNegInt(r.checks) // checked by the flag
		c.Rapid.Checks = c.Checks
	}
	if r.seed != "" {
		c.Seed, _ = strconv.ParseUint(r.seed, 0, 64)
		c.Rapid.Seed = c.Seed
	}
}

// verifyReport is verify's default report, a file of its own: the property
// suite's report (out/contract-report.json) and the mutation analysis'
// (out/mutants-report.json) are never verify's to replace.
const verifyReport = "verify-report.json"

// verifyReportPath is where verify writes its report unless told:
// out/verify-report.json at the root of the ptxprop module when run inside
// it (beside the suite's report), else verify-report.json in the current
// directory, so that verify creates no directory outside the module.
func verifyReportPath() string {
	dir, err := os.Getwd()
	if err != nil {
		return verifyReport
	}
	root, ok := ptxpropRoot(dir)
	if !ok {
		return verifyReport
	}
	p := filepath.Join(root, "out", verifyReport)
	if rel, err := filepath.Rel(dir, p); err == nil {
		return rel
	}
	return p
}

// ptxpropModule is the module path of ptxprop's go.mod.
const ptxpropModule = "github.com/ptxprop/ptxprop"

// ptxpropRoot returns the root of the module enclosing dir when that
// module is ptxprop itself.
func ptxpropRoot(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		f, err := os.Open(filepath.Join(d, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if fs := strings.Fields(sc.Text()); len(fs) == 2 && fs[0] == "module" {
					return d, strings.Trim(fs[1], "\"`") == ptxpropModule
				}
			}
			return "", false
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// mayReplace refuses a report path that holds a report of ptxprop's own
// kernels (the suite's or the mutation analysis': predictions that are
// not from a binding), which verify would otherwise replace. Merging into
// it (-ptxprop.merge) is asked for, and allowed.
func mayReplace(c suite.Config) error {
	path := c.ReportPath()
	if path == "" || c.Merge {
		return nil
	}
	old, err := reports.Read(path)
	if err != nil {
		return nil // nothing there, or not a report: nothing of the suite's to lose
	}
	for _, p := range old.Predictions {
		if p.Binding == "" {
			return &exitError{exitUsage, fmt.Errorf("verify: %s holds a report of ptxprop's own kernels (%s), which verify would replace: "+
				"give verify another -ptxprop.report (its default is %s)", path, p.ID, verifyReport)}
		}
	}
	return nil
}
