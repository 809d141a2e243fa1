package outcome

// Search is what a prediction's targeted search found beside its random
// checks (properties.Config.Target): each kind of check's worst observed
// error/tolerance ratio and the input that reached it. Several contract
// runs, rapid loops or shards merge into the worst of each.
type Search struct {
	Share    float64 // the share of checks that climbed
	Random   Worst   // the worst ratio of a check drawn at random
	Targeted Worst   // the worst ratio of a check that climbed from the worst input so far
	// TargetedChecks counts the checks that climbed; Improved those of them
	// that found a new worst input.
	TargetedChecks, Improved int
}

// Worst is the worst ratio one kind of check reached and the check that
// reached it. Ratio 0: none observed.
type Worst struct {
	Ratio float64
	// Input is the check's case as its contract describes it, and its
	// steered draws (gen.Value) when it climbed.
	Input string
	// Repro is the command that replays the checks of the rapid loop up to
	// and including it; Run is the contract run.
	Repro, Run string
}

// better reports whether w is a worse ratio (a finding) than v.
func (w Worst) better(v Worst) bool { return w.Ratio > v.Ratio }

// MergeSearch returns the merge of a and b, either of which may be nil.
func MergeSearch(a, b *Search) *Search {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	m := *a
	m.Share = max(a.Share, b.Share)
	if b.Random.better(m.Random) {
		m.Random = b.Random
	}
	if b.Targeted.better(m.Targeted) {
		m.Targeted = b.Targeted
	}
	m.TargetedChecks += b.TargetedChecks
	m.Improved += b.Improved
	return &m
}
