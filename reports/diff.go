package reports

import (
	"fmt"
	"slices"
)

// Diff describes how b differs from a, one line per change, for nightly CI:
// predictions whose status changed, that appeared or disappeared, or gained
// or lost a flag; mutants likewise; kernels whose hashes changed; and the
// mutation score. Lines come in that order, each group in b's order followed
// by what only a has, e.g.
//
//	prediction FALSIFY-DIM-001: discharged -> falsified
//	prediction FALSIFY-RMS-004: added (discharged)
//	prediction FALSIFY-RMS-002: flag unproven set
//	mutant drop-eps: killed -> survived
//	kernel rmsnorm_bwd: ptx_sha256 changed
//	mutation score: 7/9 = 77.8% -> 6/9 = 66.7%
//
// A nil report is an empty one. Equal reports give no lines.
func Diff(a, b *Report) []string {
	if a == nil {
		a = &Report{}
	}
	if b == nil {
		b = &Report{}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	for _, q := range b.Predictions {
		p := a.Prediction(q.ID)
		if p == nil {
			add("prediction %s: added (%s)", q.ID, q.Status)
			continue
		}
		if p.Status != q.Status {
			add("prediction %s: %s -> %s", q.ID, p.Status, q.Status)
		}
		for _, f := range flags {
			switch was, is := p.HasFlag(f), q.HasFlag(f); {
			case !was && is:
				add("prediction %s: flag %s set", q.ID, f)
			case was && !is:
				add("prediction %s: flag %s cleared", q.ID, f)
			}
		}
	}
	for _, p := range a.Predictions {
		if b.Prediction(p.ID) == nil {
			add("prediction %s: removed (was %s)", p.ID, p.Status)
		}
	}

	for _, n := range b.Mutants {
		m := a.Mutant(n.Name)
		switch {
		case m == nil:
			add("mutant %s: added (%s%s)", n.Name, n.Status, by(n))
		case m.Status != n.Status:
			add("mutant %s: %s -> %s%s", n.Name, m.Status, n.Status, by(n))
		case m.Status == MutantKilled && m.KilledBy != n.KilledBy:
			add("mutant %s: killed by %s -> %s", n.Name, m.KilledBy, n.KilledBy)
		}
	}
	for _, m := range a.Mutants {
		if b.Mutant(m.Name) == nil {
			add("mutant %s: removed (was %s)", m.Name, m.Status)
		}
	}

	for _, l := range b.Kernels {
		k := a.Kernel(l.Name)
		if k == nil {
			add("kernel %s: added", l.Name)
			continue
		}
		if k.PTXSHA256 != l.PTXSHA256 {
			add("kernel %s: ptx_sha256 changed", l.Name)
		}
		if k.SourceSHA256 != l.SourceSHA256 {
			add("kernel %s: source_sha256 changed", l.Name)
		}
	}
	for _, k := range a.Kernels {
		if !slices.ContainsFunc(b.Kernels, func(l Kernel) bool { return l.Name == k.Name }) {
			add("kernel %s: removed", k.Name)
		}
	}

	as, bs := a.MutationScore(""), b.MutationScore("")
	if as.Killed != bs.Killed || as.Counted() != bs.Counted() {
		add("mutation score: %s -> %s", as, bs)
	}
	return out
}

func by(m Mutant) string {
	if m.Status == MutantKilled && m.KilledBy != "" {
		return " by " + m.KilledBy
	}
	return ""
}
