package binding

import (
	"context"
	"errors"

	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// SuiteJobs returns the bindings' predictions as jobs for suite.Run, each
// named "binding/prediction-ID".
func SuiteJobs(bs ...*Binding) []suite.Job {
	var js []suite.Job
	for _, j := range Jobs(bs...) {
		js = append(js, suite.Job{Name: j.Binding + "/" + j.ID, Run: j.Contract})
	}
	return js
}

// LoadAll loads every binding file; the error lists every file's problems
// and wraps ErrInvalid.
func LoadAll(paths ...string) ([]*Binding, error) {
	var bs []*Binding
	var errs []error
	for _, p := range paths {
		b, err := Load(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		bs = append(bs, b)
	}
	if len(paths) == 0 {
		errs = append(errs, &Error{File: "(none)", Msg: "no binding file given"})
	}
	return bs, errors.Join(errs...)
}

// Verify loads the binding files and runs every prediction of their
// contracts against the bound kernels as one ptxprop run (suite.Run: the
// device, check budget, deadline, progress and report c says). A file
// with a problem stops it before anything is launched, with an error
// wrapping ErrInvalid; falsified predictions are in the report, not in
// the error. Reproductions are ptxprop verify commands over paths unless
// c.Command says otherwise.
func Verify(ctx context.Context, c suite.Config, paths ...string) (*reports.Report, error) {
	bs, err := LoadAll(paths...)
	if err != nil {
		return nil, err
	}
	if c.Command == "" {
		c.Command, c.CommandArgs = "ptxprop verify", paths
	}
	return suite.Run(ctx, c, SuiteJobs(bs...))
}
