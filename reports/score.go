package reports

import "fmt"

// Score counts mutants by status: the mutation score of a set of mutants.
// It is the one definition of the score; the falsify gate and every
// renderer use it.
//
// The score is Killed / Counted(): of the mutants the predictions were run
// against and that behave differently from the original, the share some
// prediction caught. Equivalent mutants cannot be caught and are left out;
// so are mutants not exercised (no check runs the mutated instruction: a
// gap in coverage, not in the predictions' strength, counted apart) and
// skipped ones (not run). A mutant that could not be built or run (error)
// counts as not caught, so failures of the harness cannot raise the score.
type Score struct {
	Killed, Survived, Error  int // counted
	Equivalent, NotExercised int // not counted
	Skipped                  int // not counted
}

// ScoreOf scores the mutants of kind in ms; kind "" scores all of them.
func ScoreOf(ms []Mutant, kind MutantKind) Score {
	var s Score
	for _, m := range ms {
		if kind != "" && m.Kind != kind {
			continue
		}
		switch m.Status {
		case MutantKilled:
			s.Killed++
		case MutantSurvived:
			s.Survived++
		case MutantError:
			s.Error++
		case MutantEquivalent:
			s.Equivalent++
		case MutantNotExercised:
			s.NotExercised++
		case MutantSkipped:
			s.Skipped++
		}
	}
	return s
}

// MutationScore scores r's mutants of kind ("" for all); see Score.
func (r *Report) MutationScore(kind MutantKind) Score { return ScoreOf(r.Mutants, kind) }

// Total is the number of mutants scored, counted or not.
func (s Score) Total() int {
	return s.Killed + s.Survived + s.Error + s.Equivalent + s.NotExercised + s.Skipped
}

// Counted is the denominator of the score: killed, survived and error.
func (s Score) Counted() int { return s.Killed + s.Survived + s.Error }

// Ratio returns Killed/Counted, and false when no mutant counts (the score
// is then undefined, not 1).
func (s Score) Ratio() (float64, bool) {
	if s.Counted() == 0 {
		return 0, false
	}
	return float64(s.Killed) / float64(s.Counted()), true
}

// String is e.g. "7/9 = 77.8%", or "n/a" when no mutant counts.
func (s Score) String() string {
	x, ok := s.Ratio()
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%d/%d = %s", s.Killed, s.Counted(), percent(x))
}

// percent prints a share with one decimal, never rounding a share below 1
// up to "100.0%" nor one above 0 down to "0.0%".
func percent(x float64) string {
	p := fmt.Sprintf("%.1f%%", 100*x)
	switch {
	case x < 1 && p == "100.0%":
		return ">99.9%"
	case x > 0 && p == "0.0%":
		return "<0.1%"
	}
	return p
}
