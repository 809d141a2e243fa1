package oracle

import "pgregory.net/rapid"

// rapidChooser adapts a *rapid.T to Chooser: every choice is a labelled
// rapid draw, so shrunk counterexamples print the shape and scalars by name.
type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) IntRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(c.t, label)
}

func (c rapidChooser) Float64Range(label string, lo, hi float64) float64 {
	return rapid.Float64Range(lo, hi).Draw(c.t, label)
}

func (c rapidChooser) SampleInt(label string, values []int) int {
	return rapid.SampledFrom(values).Draw(c.t, label)
}

func (c rapidChooser) SampleFloat64(label string, values []float64) float64 {
	return rapid.SampledFrom(values).Draw(c.t, label)
}

func (c rapidChooser) Uint64(label string) uint64 {
	return rapid.Uint64().Draw(c.t, label)
}
