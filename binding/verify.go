package binding

import (
	"context"
	"errors"
	"slices"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// SuiteJobs returns the bindings' predictions as jobs for suite.Run, each
// named "binding/prediction-ID", with the binding as its subject (so that
// the report has one entry per binding and prediction) and the kernels it
// launches, as ReportKernels names them.
func SuiteJobs(bs ...*Binding) []suite.Job {
	var js []suite.Job
	for _, j := range Jobs(bs...) {
		var names []string
		for _, b := range j.bindings {
			for _, k := range b.ReportKernels() {
				names = append(names, k.Name)
			}
		}
		js = append(js, suite.Job{Name: j.Binding + "/" + j.ID, Run: j.Contract,
			Prediction: j.ID, Subject: j.Binding, Kernels: names})
	}
	return js
}

// ReportKernels describes the kernels b launches for a report's kernels
// section: one per PTX file and entry, named "binding/entry", with the
// binding file and its contract.
func (b *Binding) ReportKernels() []reports.Kernel {
	var ks []reports.Kernel
	seen := map[string]bool{}
	for _, ln := range b.launches {
		name := b.Name + "/" + ln.entry
		if seen[name] {
			continue
		}
		seen[name] = true
		k := reports.NewKernel(name, reports.KernelBinding, ln.ptxPath, ln.entry, ln.ptx)
		k.Binding, k.Contract = b.Path, b.Contract
		ks = append(ks, k)
	}
	return ks
}

// EntrySources lists the entries b launches with their PTX, so that a
// GPU/emulator parity mismatch can name the approximate instructions behind
// it.
func (b *Binding) EntrySources() (entries []string, ptx [][]byte) {
	seen := map[string]bool{}
	for _, ln := range b.launches {
		if key := ln.ptxPath + "\x00" + ln.entry; !seen[key] {
			seen[key] = true
			entries, ptx = append(entries, ln.entry), append(ptx, ln.ptx)
		}
	}
	return entries, ptx
}

// PTXEntries lists the entries b launches with their PTX and the .params
// it passes nothing in ({ignore}), for the static predictions (no float
// atomic, every other .param read).
func (b *Binding) PTXEntries() []properties.PTXEntry {
	var out []properties.PTXEntry
	at := map[string]int{}
	for _, ln := range b.launches {
		var unread []string
		for _, p := range ln.params {
			if p.kind == pIgnore {
				unread = append(unread, p.ptxName)
			}
		}
		key := ln.ptxPath + "\x00" + ln.entry
		i, seen := at[key]
		if !seen {
			at[key] = len(out)
			out = append(out, properties.PTXEntry{Entry: ln.entry, PTX: ln.ptx, Unread: unread})
			continue
		}
		// Launched twice: a .param is unread only if no launch passes it.
		out[i].Unread = slices.DeleteFunc(out[i].Unread, func(n string) bool { return !slices.Contains(unread, n) })
	}
	return out
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
// the error. A binding error that shows only at a shape drawn during the
// run (an expression dividing by zero, an impossible geometry, a scratch
// buffer over MaxScratch) ends its prediction with the status error, and
// Verify returns the report with an error listing each such problem by
// file and line, wrapping ErrInvalid. Reproductions are ptxprop verify
// commands over paths unless c.Command says otherwise.
func Verify(ctx context.Context, c suite.Config, paths ...string) (*reports.Report, error) {
	bs, err := LoadAll(paths...)
	if err != nil {
		return nil, err
	}
	return verify(ctx, c, paths, bs)
}

// verify is Verify over loaded bindings.
func verify(ctx context.Context, c suite.Config, paths []string, bs []*Binding) (*reports.Report, error) {
	if c.Command == "" {
		c.Command, c.CommandArgs = "ptxprop verify", paths
	}
	for _, b := range bs {
		for _, x := range []*Binding{b.Forward, b} {
			if x != nil {
				c.Kernels = append(c.Kernels, x.ReportKernels()...)
			}
		}
	}
	rep, err := suite.Run(ctx, c, SuiteJobs(bs...))
	var faults []error
	seen := map[*Binding]bool{}
	for _, b := range bs {
		for _, x := range []*Binding{b.Forward, b} {
			if x != nil && !seen[x] {
				seen[x] = true
				faults = append(faults, x.runFaults()...)
			}
		}
	}
	if len(faults) > 0 {
		return rep, errors.Join(append([]error{err}, faults...)...)
	}
	return rep, err
}
