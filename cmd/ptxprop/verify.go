package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties/suite"
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
give. It prints the report's summary.
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
	return func(e *env, args []string) error {
		if loadErr != nil {
			return &exitError{exitUsage, loadErr}
		}
		if len(args) == 0 {
			return usageErr(lookup("verify"), "verify: no binding file")
		}
		c.Output = e.stdout
		c.Command, c.CommandArgs = "ptxprop verify", args
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		rep, err := binding.Verify(ctx, c, args...)
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
