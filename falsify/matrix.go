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

// ReportMutant converts a result into the report's form.
func ReportMutant(res Result) reports.Mutant {
	m := reports.Mutant{Name: res.Mutant, Description: res.Description, Kind: res.Kind, Kernel: res.Kernel,
		Status: res.Status, KilledBy: res.KilledBy, ChecksToKill: res.Checks, Reason: res.Reason}
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
// report lacks are added as not run, so that MarkUnproven can flag every
// prediction that killed no mutant; it returns the flagged IDs. The report's
// run is created from info and start when the file has none.
func Record(path string, results []Result, replace reports.MutantKind, info cudart.Info, start time.Time) ([]string, error) {
	var unproven []string
	err := reports.Update(path, func(r *reports.Report) error {
		if r.Run.Start.IsZero() {
			r.Run = suite.NewRun(info, start)
		}
		for _, p := range properties.All() {
			// As the suite's report: self-tests never, benchmarks only when run.
			if strings.HasPrefix(p.ID, "TEST-") || strings.HasPrefix(p.ID, "BENCH-") || r.Prediction(p.ID) != nil {
				continue
			}
			r.UpsertPrediction(suite.PredictionReport(p, properties.Outcome{}, false,
				"not run by the process that recorded the mutants (falsify runs contracts on mutants only)"))
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
// test log: named mutants with their killer and checks-to-kill, the
// generic score per kernel, and every survivor and equivalent with its
// verdict. sites gives the number of generic sites per kernel (all of
// them, run or not).
func Summary(results []Result, sites map[string]int, wall time.Duration) string {
	var b strings.Builder
	var named, generic []Result
	for _, r := range results {
		if r.Kind == reports.MutantNamed {
			named = append(named, r)
		} else {
			generic = append(generic, r)
		}
	}
	if len(named) > 0 {
		w := 0
		for _, r := range named {
			w = max(w, len(r.Mutant))
		}
		fmt.Fprintf(&b, "named mutants: %d\n", len(named))
		var checks []int
		for _, r := range named {
			line := fmt.Sprintf("  %-*s  %-9s", w, r.Mutant, r.Status)
			if r.Killed() {
				checks = append(checks, r.Checks)
				mark := ""
				if !contains(r.Expected, r.KilledBy) {
					mark = fmt.Sprintf("  UNEXPECTED (expected %s)", strings.Join(r.Expected, " or "))
				}
				line += fmt.Sprintf("  by %-40s  %4d checks  %6.2fs%s", r.KilledBy, r.Checks, r.Duration.Seconds(), mark)
			} else {
				line += "  " + r.Reason
			}
			b.WriteString(line + "\n")
		}
		if len(checks) > 0 {
			med, mx := medianMax(checks)
			fmt.Fprintf(&b, "  checks-to-kill: median %g, max %d over %d killed\n", med, mx, len(checks))
		}
	}
	if len(generic) > 0 {
		total := 0
		for _, n := range sites {
			total += n
		}
		fmt.Fprintf(&b, "generic mutants: %d sites in %d kernels, %d run\n", total, len(sites), len(generic))
		type row struct{ run, killed, equiv, survived, errs int }
		per := map[string]*row{}
		var kernelsSeen []string
		var checks []int
		for _, r := range generic {
			x := per[r.Kernel]
			if x == nil {
				x = &row{}
				per[r.Kernel] = x
				kernelsSeen = append(kernelsSeen, r.Kernel)
			}
			x.run++
			switch r.Status {
			case reports.MutantKilled:
				x.killed++
				checks = append(checks, r.Checks)
			case reports.MutantEquivalent:
				x.equiv++
			case reports.MutantError:
				x.errs++
			default:
				x.survived++
			}
		}
		fmt.Fprintf(&b, "  %-24s %6s %5s %6s %6s %8s %5s %7s\n", "kernel", "sites", "run", "killed", "equiv", "survived", "error", "score")
		var tot row
		for _, k := range kernelsSeen {
			x := per[k]
			tot.run += x.run
			tot.killed += x.killed
			tot.equiv += x.equiv
			tot.survived += x.survived
			tot.errs += x.errs
			fmt.Fprintf(&b, "  %-24s %6d %5d %6d %6d %8d %5d %7s\n", k, sites[k], x.run, x.killed, x.equiv, x.survived, x.errs, score(x.killed, x.run-x.equiv))
		}
		fmt.Fprintf(&b, "  %-24s %6d %5d %6d %6d %8d %5d %7s\n", "total", total, tot.run, tot.killed, tot.equiv, tot.survived, tot.errs, score(tot.killed, tot.run-tot.equiv))
		unexercised, notEx := map[string]bool{}, 0
		for _, r := range generic {
			if strings.HasPrefix(r.Reason, "not exercised") {
				unexercised[r.Kernel] = true
				notEx++
			}
		}
		if notEx > 0 {
			var ks []string
			for _, k := range kernelsSeen {
				if unexercised[k] {
					ks = append(ks, k)
				}
			}
			fmt.Fprintf(&b, "  without the %d mutants of kernels no prediction launches (%s): %s\n", notEx, strings.Join(ks, ", "),
				score(tot.killed, tot.run-tot.equiv-notEx))
		}
		rounding := 0
		for _, r := range generic {
			if strings.HasPrefix(r.Reason, "rounding-level") {
				rounding++
			}
		}
		if rounding > 0 {
			fmt.Fprintf(&b, "  %d survivors differ from the original only at rounding level (another evaluation order or path; see RoundingNorm)\n", rounding)
		}
		if len(checks) > 0 {
			med, mx := medianMax(checks)
			fmt.Fprintf(&b, "  checks-to-kill: median %g, max %d\n", med, mx)
		}
		byOp := map[Op][2]int{}
		for _, r := range generic {
			g, err := parseGeneric(r.Mutant)
			if err != nil || r.Status == reports.MutantEquivalent {
				continue
			}
			c := byOp[g.Op]
			c[1]++
			if r.Killed() {
				c[0]++
			}
			byOp[g.Op] = c
		}
		b.WriteString("  by operator:")
		for _, op := range Ops() {
			if c, ok := byOp[op]; ok {
				fmt.Fprintf(&b, " %s %d/%d", op, c[0], c[1])
			}
		}
		b.WriteString("\n")
		for _, st := range []reports.MutantStatus{reports.MutantSurvived, reports.MutantError, reports.MutantEquivalent} {
			var rs []Result
			for _, r := range generic {
				if r.Status == st {
					rs = append(rs, r)
				}
			}
			if len(rs) == 0 {
				continue
			}
			fmt.Fprintf(&b, "  %s (%d):\n", st, len(rs))
			for _, r := range rs {
				fmt.Fprintf(&b, "    %s  [%s]  %s\n", r.Mutant, instrOf(r), r.Reason)
			}
		}
	}
	if wall > 0 {
		fmt.Fprintf(&b, "wall time: %v\n", wall.Round(time.Millisecond))
	}
	return b.String()
}

// instrOf returns the original instruction of a generic result.
func instrOf(r Result) string {
	if i := strings.LastIndex(r.Description, ": "); i >= 0 {
		return r.Description[i+2:]
	}
	return r.Description
}

// Score returns killed / (run − equivalent) over generic results, and
// that denominator. Mutants of kernels that no contract launches ("not
// exercised") are left out: they measure coverage, not the predictions'
// strength (TestEveryKernelExercised reports them).
func Score(results []Result) (float64, int) {
	killed, counted := 0, 0
	for _, r := range results {
		if r.Kind != reports.MutantGeneric || r.Status == reports.MutantEquivalent || strings.HasPrefix(r.Reason, "not exercised") {
			continue
		}
		counted++
		if r.Killed() {
			killed++
		}
	}
	if counted == 0 {
		return 1, 0
	}
	return float64(killed) / float64(counted), counted
}

func score(killed, counted int) string {
	if counted == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(killed)/float64(counted))
}

func medianMax(xs []int) (float64, int) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := float64(s[n/2])
	if n%2 == 0 {
		med = float64(s[n/2-1]+s[n/2]) / 2
	}
	return med, slices.Max(s)
}
