package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// verify runs `ptxprop verify [flags] BINDING...`: every prediction of the
// contracts the binding files claim, against the bound kernels, as one run
// with the -ptxprop.X settings (or their PTXPROP_X twins). Exit 0 when all
// are discharged or skipped, 1 when one is not (or the run failed), 2 on a
// usage error or a binding file with a problem (nothing is launched then),
// 130 when interrupted.
func verify(args []string, stdout, stderr io.Writer) int {
	c, err := suite.Load(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(stderr, "ptxprop verify:", err)
		return 2
	}
	c.Summary = true
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suite.RegisterFlags(fs, &c)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ptxprop verify [-ptxprop.X=…] BINDING.yaml...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	// rapid reads testing.Short, which panics unless the testing flags are
	// registered and parsed: outside go test they must be made here.
	testing.Init()
	if err := flag.CommandLine.Parse(nil); err != nil {
		fmt.Fprintln(stderr, "ptxprop verify:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := binding.Verify(ctx, c, fs.Args()...)
	switch {
	case errors.Is(err, binding.ErrInvalid):
		fmt.Fprintln(stderr, err)
		return 2
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "ptxprop verify:", err)
		return 130
	case err != nil:
		fmt.Fprintln(stderr, "ptxprop verify:", err)
		return 1
	}
	for _, p := range rep.Predictions {
		if p.Status != reports.Discharged && p.Status != reports.Skipped {
			return 1
		}
	}
	return 0
}
