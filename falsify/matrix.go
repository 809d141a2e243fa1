package falsify

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// Sample picks up to perOp generic mutants of every (kernel, operator)
// pair, uniformly and reproducibly from seed, keeping kernels and
// operators in their order. perOp ≤ 0 returns all.
func Sample(all []Generic, perOp int, seed uint64) []Generic {
	if perOp <= 0 {
		return slices.Clone(all)
	}
	type key struct {
		kernel string
		op     Op
	}
	groups := map[key][]Generic{}
	var order []key
	for _, g := range all {
		k := key{g.Kernel, g.Op}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], g)
	}
	var out []Generic
	for _, k := range order {
		gs := groups[k]
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%s", k.kernel, k.op)
		r := rand.New(rand.NewPCG(seed, h.Sum64()))
		idx := r.Perm(len(gs))
		if len(idx) > perOp {
			idx = idx[:perOp]
		}
		sort.Ints(idx)
		for _, i := range idx {
			out = append(out, gs[i])
		}
	}
	return out
}

// Spread returns n of gs at even strides, first and last included, keeping
// their order: with gs one per (kernel, operator), a few that cover the
// kernels and the operators. n ≥ len(gs) or n ≤ 0 returns all.
func Spread(gs []Generic, n int) []Generic {
	if n <= 0 || n >= len(gs) {
		return slices.Clone(gs)
	}
	out := make([]Generic, n)
	for i := range out {
		j := 0
		if n > 1 {
			j = i * (len(gs) - 1) / (n - 1)
		}
		out[i] = gs[j]
	}
	return out
}

// ReportMutant converts a result into the report's form.
func ReportMutant(res Result) reports.Mutant {
	m := reports.Mutant{Name: res.Mutant, Description: res.Description, Kind: res.Kind, Kernel: res.Kernel,
		Status: res.Status, KilledBy: res.KilledBy, Expected: res.Expected, ChecksToKill: res.Checks,
		Duration: res.Duration.Seconds(), Reason: res.Reason, Device: &res.Device}
	if g, err := parseGeneric(res.Mutant); err == nil {
		m.Operator = g.Op.String()
		m.Site = genericSite(g)
	}
	if res.Killed() {
		ce := &reports.Counterexample{Text: res.Failure}
		for _, d := range res.Counterexample {
			label, value, _ := strings.Cut(d, ": ")
			ce.Draws = append(ce.Draws, reports.Draw{Label: label, Value: value})
		}
		if ce.Text != "" || len(ce.Draws) > 0 {
			m.Counterexample = ce
		}
		if m.Reason == "" {
			m.Reason = fmt.Sprintf("killed by %s (%s) after %d checks; rerun: %s", res.KilledBy, res.Contract, res.Checks, res.Repro)
		}
	} else if m.Reason != "" {
		m.Reason += "; rerun: " + res.Repro
	}
	return m
}

// genericSite names g's site as "kernels/ptx/<file>:<line> (pc N)".
func genericSite(g Generic) string {
	k, ok := kernels.Lookup(g.Kernel)
	if !ok {
		return fmt.Sprintf("pc %d", g.PC)
	}
	_, fn, err := parseEntry(k)
	if err != nil {
		return fmt.Sprintf("pc %d", g.PC)
	}
	all := instructions(fn)
	if g.PC >= len(all) {
		return fmt.Sprintf("pc %d", g.PC)
	}
	return fmt.Sprintf("kernels/%s:%d (pc %d)", k.PTXFile, all[g.PC].in.Line, g.PC)
}

// Record writes results into the contract report at path (locked, atomic):
// every mutant is upserted; with replace set, mutants of that kind that
// are not among results are dropped (an older sample). Predictions the
// report lacks are added as not_run, so that MarkUnproven can flag every
// prediction that killed no mutant; it returns the flagged IDs. The report's
// run is created from the first of devices and start when the file has
// none, and lists every one of devices (the mutants name theirs).
func Record(path string, results []Result, replace reports.MutantKind, devices []cudart.Info, start time.Time) ([]string, error) {
	var unproven []string
	err := reports.Update(path, func(r *reports.Report) error {
		if r.Run.Start.IsZero() {
			r.Run = suite.NewRun(devices[0], start)
		}
		if err := r.Run.AddDevices(suite.ReportDevices(devices)); err != nil {
			return fmt.Errorf("the report's devices are not these mutants': %w", err)
		}
		for _, p := range properties.All() {
			// As the suite's report: self-tests never, benchmarks only when run.
			if strings.HasPrefix(p.ID, "TEST-") || strings.HasPrefix(p.ID, "BENCH-") || r.Prediction(p.ID) != nil {
				continue
			}
			rp := suite.PredictionReport(p, outcome.Outcome{}, false,
				"not run by the process that recorded the mutants (falsify runs contracts on mutants only)")
			rp.Status = reports.NotRun
			r.UpsertPrediction(rp)
		}
		if replace != "" {
			keep := map[string]bool{}
			for _, res := range results {
				keep[res.Mutant] = true
			}
			r.Mutants = slices.DeleteFunc(r.Mutants, func(m reports.Mutant) bool { return m.Kind == replace && !keep[m.Name] })
		}
		for _, res := range results {
			r.UpsertMutant(ReportMutant(res))
		}
		unproven = r.MarkUnproven()
		return nil
	})
	return unproven, err
}

// Summary is the kill matrix of a set of results as a text block for the
// test log: reports.MutationSummary of the results (sites gives the number
// of generic sites per kernel, all of them, run or not), then how many
// survivors differ from the original only at rounding level, and the wall
// time.
func Summary(results []Result, sites map[string]int, wall time.Duration) string {
	var b strings.Builder
	_ = reports.MutationSummary(&b, Mutants(results), sites) // a strings.Builder does not fail
	rounding := 0
	for _, r := range results {
		if r.Status == reports.MutantSurvived && strings.HasPrefix(r.Reason, "rounding-level") {
			rounding++
		}
	}
	if rounding > 0 {
		fmt.Fprintf(&b, "%d survivors differ from the original only at rounding level (another evaluation order or path; see RoundingNorm)\n", rounding)
	}
	if wall > 0 {
		fmt.Fprintf(&b, "wall time: %v\n", wall.Round(time.Millisecond))
	}
	return b.String()
}

// Mutants converts results into the report's form (ReportMutant), for
// reports.ScoreOf and reports.MutationSummary.
func Mutants(results []Result) []reports.Mutant {
	ms := make([]reports.Mutant, len(results))
	for i, r := range results {
		ms[i] = ReportMutant(r)
	}
	return ms
}
