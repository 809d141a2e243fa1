package falsify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/reports"
)

// Mutant is a mutant of the mutation analysis: a Named alternative
// implementation or a Generic operator applied at one PTX site. It is a
// value; its String is its name, and ParseMutant(m.String()) returns an
// equal mutant, so every row of the kill matrix can be rerun from its name.
type Mutant interface {
	String() string
	// Kind says where the mutant comes from.
	Kind() reports.MutantKind
	// Description says in one line what is wrong with it.
	Description() string
	// Target is the kernel the mutant changes (for a launcher mutant, the
	// kernel it launches).
	Target() string
	// build returns the probes that run the contracts on the mutant.
	build() (*target, error)
}

// ParseMutant returns the mutant named s: a named mutant ("atomic-dgamma")
// or a generic one ("rmsnorm_fwd_rms/arith-swap@pc37").
func ParseMutant(s string) (Mutant, error) {
	if strings.Contains(s, "/") {
		g, err := parseGeneric(s)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	for _, n := range named {
		if n.Name == s {
			return n, nil
		}
	}
	return nil, fmt.Errorf("falsify: no named mutant %q", s)
}

// Kind returns reports.MutantGeneric.
func (g Generic) Kind() reports.MutantKind { return reports.MutantGeneric }

// Target returns the mutated kernel.
func (g Generic) Target() string { return g.Kernel }

// Description describes the change, e.g. "arith-swap at pc 37: add.rn.f32 … → sub.rn.f32 …".
func (g Generic) Description() string {
	k, ok := kernels.Lookup(g.Kernel)
	if !ok {
		return g.Op.String()
	}
	before, err := g.Instruction(k)
	if err != nil {
		return g.Op.String()
	}
	return fmt.Sprintf("%s at pc %d of %s: %s", g.Op, g.PC, g.Kernel, strings.Join(strings.Fields(before), " "))
}

// build applies g to its kernel and returns the kernel's probes with the
// mutated kernel in place of the original everywhere it is used.
func (g Generic) build() (*target, error) {
	k, ok := kernels.Lookup(g.Kernel)
	if !ok {
		return nil, fmt.Errorf("falsify: unknown kernel %s", g.Kernel)
	}
	text, err := g.Apply(k)
	if err != nil {
		return nil, err
	}
	mk := k.WithPTX(text)
	probes := kernelProbes(mk.Name)
	if len(probes) == 0 {
		return nil, fmt.Errorf("falsify: no prediction probes kernel %s", g.Kernel)
	}
	orig, mut := defaults(), setWith(mk)
	return &target{
		probes:  probes,
		orig:    &orig,
		mut:     &mut,
		mutated: launchOf(mk),
		check:   func(dev cudart.Device) error { _, err := dev.Load(mk.Name+"+"+g.String(), mk.PTX); return err },
	}, nil
}

// launchOf matches launches of kernel k's text.
func launchOf(ks ...*kernels.Kernel) func(m cudart.Module, entry string) bool {
	type key struct{ hash, entry string }
	set := map[key]bool{}
	for _, k := range ks {
		set[key{cudart.PTXHash(k.PTX), k.Entry}] = true
	}
	return func(m cudart.Module, entry string) bool { return set[key{m.Hash, entry}] }
}

// Named is a hand-written mutant: a real bug class (mostly from the upstream
// history in the seeds) as another implementation of the operations the
// contracts take — a shipped kernel patched by falsify/src, a PTX-text
// edit of a committed kernel, or a Go launcher with the bug.
type Named struct {
	Name string
	// What says what is wrong, in one line.
	What string
	// Kernel is the kernel it replaces or launches.
	Kernel string
	// Killers are the predictions expected to kill it; the first of them
	// that runs must kill it.
	Killers []string
	// Faults marks a mutant that may make a GPU kernel fault (an illegal
	// address poisons CUDA in the whole process): on a GPU it runs in a
	// child process.
	Faults bool
	// GPU marks a mutant that only a GPU can show (its killer compares the
	// GPU with the emulator); elsewhere it is skipped with the reason.
	GPU bool
	// Devices marks a mutant that only two devices can show (its killer
	// compares the devices of the run); with one it is skipped.
	Devices bool
	// Dependence marks a mutant that only the dependence contract can show
	// (its outputs are the shipped kernel's bits): a backend that does not
	// track dependence (cudart.CapDependence: the GPU) skips it.
	Dependence bool
	// make builds the implementations and the probes. A mutant that only
	// replaces kernels gives swap instead: the replacements, probed by the
	// contracts of Kernel and of every kernel replaced, Killers' first.
	make func() (*target, error)
	swap func() ([]*kernels.Kernel, error)
}

func (n Named) String() string           { return n.Name }
func (n Named) Kind() reports.MutantKind { return reports.MutantNamed }
func (n Named) Description() string      { return n.What }
func (n Named) Target() string           { return n.Kernel }

func (n Named) build() (*target, error) {
	if n.make != nil {
		return n.make()
	}
	ks, err := n.swap()
	if err != nil {
		return nil, err
	}
	probe := []string{n.Kernel}
	for _, k := range ks {
		if !contains(probe, k.Name) {
			probe = append(probe, k.Name)
		}
	}
	return kernelTarget(n.Killers, probe, ks...), nil
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// NamedMutants returns every named mutant, in a fixed order.
func NamedMutants() []Named { return append([]Named(nil), named...) }

// GenericMutants returns every generic mutant of every kernel, kernels in
// kernels.All order, and how many each kernel has.
func GenericMutants() ([]Generic, map[string]int, error) {
	var all []Generic
	per := map[string]int{}
	for _, k := range kernels.All() {
		s, err := Sites(k)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, s...)
		per[k.Name] = len(s)
	}
	return all, per, nil
}
