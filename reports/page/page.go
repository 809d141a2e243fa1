// Package page renders contract reports (package reports) as one
// self-contained HTML page: every prediction's status at a glance, the
// counterexamples and the commands that replay them, error/tolerance
// against the hidden size, branch coverage per kernel, bandwidth ratios
// per kernel and shape beside torch, emulator costs, sanitizer findings,
// the kill matrix and, given several reports, trends across them in the
// order of their start times.
//
// The page loads nothing: its CSS is inline, its plots are SVG drawn by
// gonum.org/v1/plot and inlined, it has no script, and no element has a
// src or href outside the page (links are to its own sections).
package page

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ptxprop/ptxprop/reports"
)

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"ratio":   ratioText,
	"percent": func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"median":  func(xs []float64) string { return spread(xs) },
	"time":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 MST") },
	"status":  func(s any) string { return strings.ReplaceAll(fmt.Sprint(s), "_", "-") },
	"join":    strings.Join,
}).Parse(pageTemplate))

// Write writes the page for rs to w. names label the reports (their file
// names, say) and are parallel to rs. The latest report by run.start is
// shown in full; the others give the trends. At least one report.
func Write(w io.Writer, rs []*reports.Report, names []string) error {
	if len(rs) == 0 {
		return errors.New("page: no report")
	}
	if len(names) != len(rs) {
		return fmt.Errorf("page: %d names for %d reports", len(names), len(rs))
	}
	nights := make([]night, len(rs))
	for i, r := range rs {
		if r == nil {
			return fmt.Errorf("page: report %s is nil", names[i])
		}
		nights[i] = night{name: names[i], r: r}
	}
	slices.SortStableFunc(nights, func(a, b night) int { return a.r.Run.Start.Compare(b.r.Run.Start) })
	d, err := build(nights)
	if err != nil {
		return err
	}
	return tmpl.Execute(w, d)
}

type night struct {
	name string
	r    *reports.Report
}

// data is what the template shows.
type data struct {
	Latest     *reports.Report
	LatestName string
	Duration   string
	Env        []kv
	Counts     []kv // status: count
	Score      string
	Nights     []nightHead
	Trend      []trendRow // predictions × nights
	TrendPlots []template.HTML
	SizePlots  []template.HTML
	BenchPlots []template.HTML
	Failures   []reports.Prediction
	Coverage   []coverageRow
	Search     []searchRow // search.go
	Bench      []benchRow
	Named      []reports.Mutant
	Killers    []string // the kill matrix's columns
	Matrix     [][]cell // per named mutant, per killer
	Generic    []genericRow
	Survivors  []reports.Mutant
}

type kv struct{ K, V string }

type nightHead struct {
	Name, Start, Commit string
}

type trendRow struct {
	ID       string
	Statuses []string // per night; "" absent
}

type cell struct{ Class, Text string }

type coverageRow struct {
	Kernel    string
	Fraction  float64
	Covered   int
	Branches  int
	Blocks    string // "covered/all", empty when not recorded
	Uncovered []string
}

type benchRow struct {
	Kernel, Shape, Copy, Eager, Compile string
}

type genericRow struct {
	Kernel string
	reports.Score
}

func build(nights []night) (*data, error) {
	last := nights[len(nights)-1]
	r := last.r
	d := &data{Latest: r, LatestName: last.name, Score: r.MutationScore("").String()}
	if !r.Run.End.IsZero() {
		d.Duration = r.Run.End.Sub(r.Run.Start).Round(time.Second).String()
	}
	keys := make([]string, 0, len(r.Run.Environment))
	for k := range r.Run.Environment {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d.Env = append(d.Env, kv{k, r.Run.Environment[k]})
	}
	counts := map[reports.PredictionStatus]int{}
	for _, p := range r.Predictions {
		counts[p.Status]++
		if p.Counterexample != nil || p.Reproduction != nil {
			d.Failures = append(d.Failures, p)
		}
	}
	for _, s := range []reports.PredictionStatus{reports.Discharged, reports.Falsified, reports.Error, reports.Inconclusive, reports.Skipped, reports.NotRun, reports.NotClaimed} {
		if counts[s] > 0 {
			d.Counts = append(d.Counts, kv{string(s), fmt.Sprint(counts[s])})
		}
	}
	var err error
	if d.SizePlots, err = sizePlots(r); err != nil {
		return nil, err
	}
	d.Search = searchRows(r)
	for _, c := range r.Coverage {
		row := coverageRow{Kernel: c.Kernel, Fraction: c.Fraction(), Covered: c.Covered, Branches: c.Branches}
		if c.Blocks > 0 {
			row.Blocks = fmt.Sprintf("%d/%d", c.BlocksCovered, c.Blocks)
		}
		for _, u := range c.Uncovered {
			row.Uncovered = append(row.Uncovered, u.String())
		}
		d.Coverage = append(d.Coverage, row)
	}
	for _, b := range r.Benchmarks {
		d.Bench = append(d.Bench, benchRow{b.Kernel, b.Shape, spread(b.CopyRatio), times(b.TorchEagerRatio), times(b.TorchCompileRatio)})
	}
	if d.BenchPlots, err = benchPlots(r); err != nil {
		return nil, err
	}
	killMatrix(d, r)
	if len(nights) > 1 {
		if err := trends(d, nights); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// sizePlots draws, per prediction with error_stats.by_size, its worst
// err/tol per size bucket against the bucket's smallest size, one series
// per generator (random, targeted) and the tolerance at 1.
func sizePlots(r *reports.Report) ([]template.HTML, error) {
	var out []template.HTML
	for _, p := range r.Predictions {
		if p.ErrorStats == nil || len(p.ErrorStats.BySize) == 0 {
			continue
		}
		var ss []series
		for _, s := range p.ErrorStats.BySize {
			if math.IsNaN(s.MaxRatio) || math.IsInf(s.MaxRatio, 0) || s.SizeMin < 1 {
				continue
			}
			gen := s.Generator
			i := slices.IndexFunc(ss, func(x series) bool { return x.name == gen })
			if i < 0 {
				ss = append(ss, series{name: gen})
				i = len(ss) - 1
			}
			ss[i].xy = append(ss[i].xy, plotter.XY{X: float64(s.SizeMin), Y: s.MaxRatio})
		}
		if len(ss) == 1 && ss[0].name == "" {
			ss[0].name = "worst err/tol"
		}
		for i := range ss {
			if ss[i].name == "" {
				ss[i].name = "(unnamed)"
			}
		}
		svg, err := linePlot(p.ID, "hidden size (power-of-two bucket)", "worst err/tol", ss, true, nil, 1, "tolerance", smallW, smallH)
		if err != nil {
			return nil, err
		}
		out = append(out, template.HTML(svg))
	}
	return out, nil
}

// benchPlots draws, per kernel with benchmarks at sized shapes, its copy
// bandwidth ratio (median, bars from the slowest to the fastest
// repetition) against the size, and torch's ratios where timed.
func benchPlots(r *reports.Report) ([]template.HTML, error) {
	var kernels []string
	for _, b := range r.Benchmarks {
		if b.Size > 0 && !slices.Contains(kernels, b.Kernel) {
			kernels = append(kernels, b.Kernel)
		}
	}
	var out []template.HTML
	for _, k := range kernels {
		var bs []reports.Benchmark
		for _, b := range r.Benchmarks {
			if b.Kernel == k && b.Size > 0 {
				bs = append(bs, b)
			}
		}
		slices.SortFunc(bs, func(a, b reports.Benchmark) int { return cmp.Compare(a.Size, b.Size) })
		ss := []series{{name: "bandwidth / copy bandwidth"}, {name: "torch eager time / ours"}, {name: "torch.compile time / ours"}}
		for _, b := range bs {
			for i, xs := range [][]float64{b.CopyRatio, b.TorchEagerRatio, b.TorchCompileRatio} {
				if len(xs) == 0 {
					continue
				}
				ss[i].xy = append(ss[i].xy, plotter.XY{X: float64(b.Size), Y: reports.Median(xs)})
				ss[i].lo = append(ss[i].lo, slices.Min(xs))
				ss[i].hi = append(ss[i].hi, slices.Max(xs))
			}
		}
		ss = slices.DeleteFunc(ss, func(s series) bool { return len(s.xy) == 0 })
		svg, err := linePlot(k, "hidden size", "ratio (higher is better)", ss, true, nil, 1, "parity", smallW, smallH)
		if err != nil {
			return nil, err
		}
		out = append(out, template.HTML(svg))
	}
	return out, nil
}

// killMatrix fills the named mutants against the predictions that killed
// or were meant to kill one, the generic mutants per kernel, and the
// mutants not killed.
func killMatrix(d *data, r *reports.Report) {
	for _, m := range r.Mutants {
		if m.Kind == reports.MutantNamed {
			d.Named = append(d.Named, m)
			for _, id := range append([]string{m.KilledBy}, m.Expected...) {
				if id != "" && !slices.Contains(d.Killers, id) {
					d.Killers = append(d.Killers, id)
				}
			}
		} else {
			i := slices.IndexFunc(d.Generic, func(g genericRow) bool { return g.Kernel == m.Kernel })
			if i < 0 {
				d.Generic = append(d.Generic, genericRow{Kernel: m.Kernel})
				i = len(d.Generic) - 1
			}
			d.Generic[i].Score = addScore(d.Generic[i].Score, reports.ScoreOf([]reports.Mutant{m}, ""))
		}
		switch m.Status {
		case reports.MutantSurvived, reports.MutantError, reports.MutantNotExercised:
			d.Survivors = append(d.Survivors, m)
		}
	}
	for _, m := range d.Named {
		row := make([]cell, len(d.Killers))
		for j, id := range d.Killers {
			expected := slices.Contains(m.Expected, id)
			switch {
			case m.Status == reports.MutantKilled && m.KilledBy == id && (expected || len(m.Expected) == 0):
				row[j] = cell{"kill", "killed"}
			case m.Status == reports.MutantKilled && m.KilledBy == id:
				row[j] = cell{"kill unexpected", "killed (not expected)"}
			case expected && m.Status != reports.MutantKilled:
				row[j] = cell{"miss", "expected, " + strings.ReplaceAll(string(m.Status), "_", " ")}
			case expected:
				row[j] = cell{"expected", "expected"}
			}
		}
		d.Matrix = append(d.Matrix, row)
	}
}

func addScore(a, b reports.Score) reports.Score {
	return reports.Score{Killed: a.Killed + b.Killed, Survived: a.Survived + b.Survived, Error: a.Error + b.Error,
		Equivalent: a.Equivalent + b.Equivalent, NotExercised: a.NotExercised + b.NotExercised, Skipped: a.Skipped + b.Skipped}
}

// trends fills the status of every prediction per night and plots, per
// night, the predictions by outcome, the mutation score, and each
// kernel's copy ratio at each shape.
func trends(d *data, nights []night) error {
	var ticks []plot.Tick
	for i, n := range nights {
		d.Nights = append(d.Nights, nightHead{Name: n.name, Start: n.r.Run.Start.UTC().Format("2006-01-02 15:04"), Commit: short(n.r.Run.GitCommit)})
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: n.r.Run.Start.UTC().Format("01-02")})
	}
	var ids []string
	for _, n := range nights {
		for _, p := range n.r.Predictions {
			if !slices.Contains(ids, p.ID) {
				ids = append(ids, p.ID)
			}
		}
	}
	for _, id := range ids {
		row := trendRow{ID: id}
		for _, n := range nights {
			s := ""
			if p := n.r.Prediction(id); p != nil {
				s = string(p.Status)
			}
			row.Statuses = append(row.Statuses, s)
		}
		d.Trend = append(d.Trend, row)
	}

	outcomes := []series{{name: "discharged"}, {name: "falsified or error"}, {name: "inconclusive"}}
	score := []series{{name: "mutation score"}}
	for i, n := range nights {
		var c [3]int
		for _, p := range n.r.Predictions {
			switch p.Status {
			case reports.Discharged:
				c[0]++
			case reports.Falsified, reports.Error:
				c[1]++
			case reports.Inconclusive:
				c[2]++
			}
		}
		for j := range c {
			outcomes[j].xy = append(outcomes[j].xy, plotter.XY{X: float64(i + 1), Y: float64(c[j])})
		}
		if x, ok := n.r.MutationScore("").Ratio(); ok {
			score[0].xy = append(score[0].xy, plotter.XY{X: float64(i + 1), Y: x})
		}
	}
	svg, err := linePlot("predictions per night", "night (run start, UTC)", "predictions", outcomes, false, ticks, 0, "", wideW, wideH)
	if err != nil {
		return err
	}
	d.TrendPlots = append(d.TrendPlots, template.HTML(svg))
	if len(score[0].xy) > 0 {
		svg, err := linePlot("mutation score per night", "night (run start, UTC)", "killed / counted", score, false, ticks, 1, "all killed", wideW, wideH)
		if err != nil {
			return err
		}
		d.TrendPlots = append(d.TrendPlots, template.HTML(svg))
	}
	var bench []series
	for i, n := range nights {
		for _, b := range n.r.Benchmarks {
			name := b.Kernel + " " + b.Shape
			j := slices.IndexFunc(bench, func(s series) bool { return s.name == name })
			if j < 0 {
				bench = append(bench, series{name: name})
				j = len(bench) - 1
			}
			bench[j].xy = append(bench[j].xy, plotter.XY{X: float64(i + 1), Y: reports.Median(b.CopyRatio)})
			bench[j].lo = append(bench[j].lo, slices.Min(b.CopyRatio))
			bench[j].hi = append(bench[j].hi, slices.Max(b.CopyRatio))
		}
	}
	if len(bench) > 0 {
		svg, err := linePlot("bandwidth / copy bandwidth per night", "night (run start, UTC)", "ratio (median, range)", bench, false, ticks, 0, "", wideW, wideH+vg.Length(len(bench))*0.12*vg.Inch)
		if err != nil {
			return err
		}
		d.TrendPlots = append(d.TrendPlots, template.HTML(svg))
	}
	return nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// ratioText prints a worst err/tol ratio with the digits that tell it from 1.
func ratioText(e *reports.ErrorStats) string {
	if e == nil {
		return ""
	}
	x := e.MaxRatio
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "+Inf"
	case x < 1 && fmt.Sprintf("%.3g", x) == "1":
		// As many digits as it takes to stay below 1 (0.9999996).
		for d := 4; d < 17; d++ {
			if t := strconv.FormatFloat(x, 'g', d, 64); t != "1" {
				return t
			}
		}
	}
	return fmt.Sprintf("%.3g", x)
}

// spread is a ratio's median and its repetitions' range.
func spread(xs []float64) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("%.3g", xs[0])
	}
	return fmt.Sprintf("%.3g (%.3g–%.3g, %d runs)", reports.Median(xs), slices.Min(xs), slices.Max(xs), len(xs))
}

func times(xs []float64) string {
	if len(xs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3g×", reports.Median(xs))
}
