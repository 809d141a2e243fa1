package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// MutationSummary writes the mutation analysis of ms as text: the score
// line (Score, over every kind); the named mutants, each with its fate, its
// killer and the checks it took, marked when the killer is not one of the
// expected ones; the generic mutants per kernel (sites, when sites gives
// the generic sites of each kernel, run or not), per operator, and the
// score of each; then every mutant not killed, with its verdict.
// Package falsify prints it in its test log; Summary prints it for a report.
func MutationSummary(w io.Writer, ms []Mutant, sites map[string]int) error {
	var b strings.Builder
	mutationSummary(&b, ms, sites)
	_, err := io.WriteString(w, b.String())
	return err
}

func mutationSummary(b *strings.Builder, ms []Mutant, sites map[string]int) {
	b.WriteString(mutationLine(ms) + "\n")
	var named, generic []Mutant
	for _, m := range ms {
		if m.Kind == MutantNamed {
			named = append(named, m)
		} else {
			generic = append(generic, m)
		}
	}
	if len(named) > 0 {
		w := 0
		for _, m := range named {
			w = max(w, len(m.Name))
		}
		fmt.Fprintf(b, "named mutants: %s\n", ScoreOf(named, ""))
		var checks []int
		for _, m := range named {
			line := fmt.Sprintf("  %-*s  %-13s", w, m.Name, m.Status)
			if m.Status == MutantKilled {
				checks = append(checks, m.ChecksToKill)
				line += fmt.Sprintf("  by %s after %d checks", m.KilledBy, m.ChecksToKill)
				if m.Duration > 0 {
					line += fmt.Sprintf(" (%.2fs)", m.Duration)
				}
				if len(m.Expected) > 0 && !slices.Contains(m.Expected, m.KilledBy) {
					line += fmt.Sprintf("  UNEXPECTED (expected %s)", strings.Join(m.Expected, " or "))
				}
			} else if m.Reason != "" {
				line += "  " + firstLine(m.Reason)
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		if len(checks) > 0 {
			med, mx := medianMax(checks)
			fmt.Fprintf(b, "  checks to kill: median %g, max %d over %d killed\n", med, mx, len(checks))
		}
	}
	if len(generic) > 0 {
		var kernels []string
		per := map[string][]Mutant{}
		for _, m := range generic {
			if _, ok := per[m.Kernel]; !ok {
				kernels = append(kernels, m.Kernel)
			}
			per[m.Kernel] = append(per[m.Kernel], m)
		}
		fmt.Fprintf(b, "generic mutants: %s", ScoreOf(generic, ""))
		if sites != nil {
			total := 0
			for _, n := range sites {
				total += n
			}
			fmt.Fprintf(b, "; %d run of %d sites in %d %s", len(generic), total, len(sites), plural(len(sites), "kernel", "kernels"))
		}
		b.WriteString("\n")
		kw := len("total")
		for _, k := range kernels {
			kw = max(kw, len(k))
		}
		row := func(name, sitesCol string, s Score) {
			fmt.Fprintf(b, "  %-*s %6s %5d %6d %6d %6d %8d %5d  %s\n", kw, name, sitesCol, s.Total(), s.Killed, s.Equivalent,
				s.NotExercised, s.Survived, s.Error, s)
		}
		fmt.Fprintf(b, "  %-*s %6s %5s %6s %6s %6s %8s %5s  %s\n", kw, "kernel", "sites", "run", "killed", "equiv", "not-ex", "survived", "error", "score")
		for _, k := range kernels {
			sc := "-"
			if n, ok := sites[k]; ok {
				sc = fmt.Sprint(n)
			}
			name := k
			if name == "" {
				name = "(none)"
			}
			row(name, sc, ScoreOf(per[k], ""))
		}
		if len(kernels) > 1 {
			sc := "-"
			if sites != nil {
				total := 0
				for _, n := range sites {
					total += n
				}
				sc = fmt.Sprint(total)
			}
			row("total", sc, ScoreOf(generic, ""))
		}
		var checks []int
		var ops []string
		byOp := map[string][]Mutant{}
		for _, m := range generic {
			if m.Status == MutantKilled {
				checks = append(checks, m.ChecksToKill)
			}
			if m.Operator == "" {
				continue
			}
			if _, ok := byOp[m.Operator]; !ok {
				ops = append(ops, m.Operator)
			}
			byOp[m.Operator] = append(byOp[m.Operator], m)
		}
		if len(checks) > 0 {
			med, mx := medianMax(checks)
			fmt.Fprintf(b, "  checks to kill: median %g, max %d\n", med, mx)
		}
		if len(ops) > 0 {
			b.WriteString("  by operator:")
			for _, op := range ops {
				s := ScoreOf(byOp[op], "")
				fmt.Fprintf(b, " %s %d/%d", op, s.Killed, s.Counted())
			}
			b.WriteString("\n")
		}
		for _, st := range []MutantStatus{MutantSurvived, MutantError, MutantNotExercised, MutantEquivalent, MutantSkipped} {
			var these []Mutant
			for _, m := range generic {
				if m.Status == st {
					these = append(these, m)
				}
			}
			if len(these) == 0 {
				continue
			}
			fmt.Fprintf(b, "  %s (%d):\n", st, len(these))
			for _, m := range these {
				line := "    " + m.Name
				if m.Site != "" {
					line += "  [" + m.Site + "]"
				}
				if m.Reason != "" {
					line += "  " + firstLine(m.Reason)
				}
				b.WriteString(line + "\n")
			}
		}
	}
}

// medianMax returns the median and the maximum of a non-empty list.
func medianMax(xs []int) (float64, int) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := float64(s[n/2])
	if n%2 == 0 {
		med = float64(s[n/2-1]+s[n/2]) / 2
	}
	return med, s[n-1]
}
