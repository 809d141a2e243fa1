package properties

import (
	"bytes"
	"fmt"
	"path"
	"reflect"
	"runtime"
	"strings"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/reports"
)

// Namer is an implementation that names itself in the contract report;
// others are named by their Go type.
type Namer interface{ Name() string }

// reportKernels is an implementation that describes its kernels as the
// report does (a binding's: binding/entry, with the binding file).
type reportKernels interface{ ReportKernels() []reports.Kernel }

// describer is an implementation made of a function (Operation.Func),
// described by another value.
type describer interface {
	describedBy() (describe any, run any)
}

// ImplKernels returns how the contract report names the implementations
// impls (an Impls is its members), each once: a binding's kernels as the
// binding describes them; the kernels an implementation lists (a
// KernelLister), ptxprop's own by their descriptors' names and others as
// "impl/entry" pinned by their PTX; else the implementation itself, by its
// name (Namer) or its Go type, origin user. A contract records them with its
// outcome, so that a report credits what ran, not the prediction's
// registered kernels.
func ImplKernels(impls ...any) []reports.Kernel {
	var out []reports.Kernel
	seen := map[string]bool{}
	var add func(x any)
	add = func(x any) {
		if im, ok := x.(Impls); ok {
			for _, m := range im {
				add(m)
			}
			return
		}
		for _, k := range describeImpl(x) {
			if !seen[k.Name] {
				seen[k.Name] = true
				out = append(out, k)
			}
		}
	}
	for _, x := range impls {
		add(x)
	}
	return out
}

func describeImpl(x any) []reports.Kernel {
	if x == nil {
		return nil
	}
	name := implName(x)
	if d, ok := x.(describer); ok {
		desc, run := d.describedBy()
		if desc != nil {
			return describeImpl(desc)
		}
		// A bare function: named by its symbol (e.g. mypkg.myRMSNorm).
		if f := runtime.FuncForPC(reflect.ValueOf(run).Pointer()); f != nil {
			name = f.Name()
		}
		return []reports.Kernel{{Name: name, Origin: reports.KernelUser}}
	}
	if r, ok := x.(reportKernels); ok {
		if ks := r.ReportKernels(); len(ks) > 0 {
			return ks
		}
	}
	var out []reports.Kernel
	if l, ok := x.(KernelLister); ok {
		for _, k := range l.Kernels() {
			if k == nil {
				continue
			}
			if ours, ok := kernels.Lookup(k.Name); ok && ours.Entry == k.Entry && bytes.Equal(ours.PTX, k.PTX) {
				rk := reports.NewKernel(k.Name, reports.KernelOurs, path.Join("kernels", k.PTXFile), k.Entry, k.PTX)
				rk.Source = path.Join("kernels", k.Source)
				out = append(out, rk)
				continue
			}
			file := k.PTXFile
			if file == "" {
				file = "(in memory)"
			}
			out = append(out, reports.NewKernel(name+"/"+k.Entry, reports.KernelUser, file, k.Entry, k.PTX))
		}
	}
	if len(out) > 0 {
		return out
	}
	return []reports.Kernel{{Name: name, Origin: reports.KernelUser}}
}

// implName is x's own name (Namer) or its Go type, without a pointer's *.
func implName(x any) string {
	if n, ok := x.(Namer); ok && n.Name() != "" {
		return n.Name()
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", x), "*")
}
