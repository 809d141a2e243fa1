package page

import (
	"fmt"

	"github.com/ptxprop/ptxprop/reports"
)

// searchRow is one prediction's targeted search: the worst err/tol of its
// random checks and of its climbing ones, each with its input and replay.
type searchRow struct {
	ID                       string
	Random, Targeted         string // the ratio, "-" when none observed
	RandomIn, TargetedIn     string
	RandomRepro, TargetRepro string
	Climbs                   string // "improved/climbing checks"
	TargetedWorse            bool   // the climb reached the larger ratio
}

// searchRows returns the rows of the predictions of r whose report holds
// a targeted search (-ptxprop.targeted), in report order.
func searchRows(r *reports.Report) []searchRow {
	var out []searchRow
	for _, p := range r.Predictions {
		s := p.Search
		if s == nil {
			continue
		}
		row := searchRow{ID: p.ID, Random: "-", Targeted: "-", Climbs: fmt.Sprintf("%d/%d", s.Improved, s.TargetedChecks)}
		if w := s.Random; w != nil {
			row.Random, row.RandomIn, row.RandomRepro = fmt.Sprintf("%.3g", w.Ratio), w.Input, w.Replay
		}
		if w := s.Targeted; w != nil {
			row.Targeted, row.TargetedIn, row.TargetRepro = fmt.Sprintf("%.3g", w.Ratio), w.Input, w.Replay
			row.TargetedWorse = s.Random == nil || w.Ratio > s.Random.Ratio
		}
		out = append(out, row)
	}
	return out
}
