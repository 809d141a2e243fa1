package reports

// Search is what a prediction's targeted search found beside its random
// checks (-ptxprop.targeted): the worst error/tolerance ratio a check drawn
// at random reached and the worst a check that climbed from the worst
// input so far reached, each with its input and the command that replays
// it. Absent when no targeted search ran or no check observed a ratio.
type Search struct {
	Share          float64      `json:"share"`           // the share of checks that climbed
	TargetedChecks int          `json:"targeted_checks"` // checks that climbed
	Improved       int          `json:"improved"`        // climbing checks that found a new worst input
	Random         *SearchWorst `json:"random,omitempty"`
	Targeted       *SearchWorst `json:"targeted,omitempty"`
}

// SearchWorst is the worst ratio of one kind of check and the check that
// reached it.
type SearchWorst struct {
	Ratio float64 `json:"ratio"`
	Input string  `json:"input,omitempty"` // the case, as its contract describes it, and a climbing check's steered draws
	// Replay replays the checks of the rapid loop up to and including it.
	Replay string `json:"replay,omitempty"`
	Run    string `json:"run,omitempty"` // the contract run
}

// mergeSearch returns the worst of a and b per kind, the counts added.
func mergeSearch(a, b *Search) *Search {
	switch {
	case a == nil:
		if b == nil {
			return nil
		}
		c := *b
		return &c
	case b == nil:
		return a
	}
	a.Share = max(a.Share, b.Share)
	a.TargetedChecks += b.TargetedChecks
	a.Improved += b.Improved
	a.Random = worseOf(a.Random, b.Random)
	a.Targeted = worseOf(a.Targeted, b.Targeted)
	return a
}

func worseOf(a, b *SearchWorst) *SearchWorst {
	if a == nil || (b != nil && b.Ratio > a.Ratio) {
		return b
	}
	return a
}

// searchSummary is the summary's field for s: the worst ratio of the
// random checks and of the climbing ones.
func searchSummary(s *Search) string {
	ratio := func(w *SearchWorst) string {
		if w == nil {
			return "-"
		}
		return formatRatio(w.Ratio)
	}
	return "(random " + ratio(s.Random) + ", targeted " + ratio(s.Targeted) + ")"
}
