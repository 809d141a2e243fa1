package page

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/reports"
)

// nights reads the committed test reports, newest first, so that Write
// must order them by run.start itself.
func nights(t *testing.T) ([]*reports.Report, []string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "night-*.json"))
	if err != nil || len(names) != 3 {
		t.Fatalf("testdata: %v, %v; want night-1..3.json", names, err)
	}
	var rs []*reports.Report
	var ns []string
	for i := len(names) - 1; i >= 0; i-- {
		r, err := reports.Read(names[i])
		if err != nil {
			t.Fatal(err)
		}
		rs, ns = append(rs, r), append(ns, names[i])
	}
	return rs, ns
}

func render(t *testing.T, rs []*reports.Report, names []string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, rs, names); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// external matches what would make a browser fetch something: a src,
// href or similar attribute, or a CSS url(), that is not within the page.
var external = regexp.MustCompile(`(?i)(\b(src|href|srcset|action|poster|data|background)\s*=\s*["']?\s*(https?:|//|file:|ftp:))|url\(\s*["']?\s*(https?:|//)|@import|<(script|link|img|iframe|object|embed)\b`)

// externalRefs returns the places in an HTML document that would load
// something from outside it.
func externalRefs(doc string) []string { return external.FindAllString(doc, -1) }

func TestPage(t *testing.T) {
	rs, names := nights(t)
	doc := render(t, rs, names)
	for _, want := range []string{
		`id="predictions-table"`, `id="glance"`, `id="coverage-table"`, `id="bandwidth-table"`, `id="costs-table"`,
		`id="sanitizer-table"`, `id="kill-matrix-table"`, `id="generic-table"`, `id="trend-table"`,
		// The newest report is shown: night 3's falsified prediction, with its replay command.
		`<span class="badge s-falsified">falsified</span> <code>LN-BWD-001</code>`,
		`<pre class="replay">go test ./properties -run &#39;^TestLayerNormBackward$&#39; -rapid.seed=1234567 -rapid.checks=40</pre>`,
		"testdata/night-3.json — 2026-11-30 02:00 UTC",
		// Trends in the order of the runs' start times, not of the arguments.
		`<th title="testdata/night-1.json 3f1c2a9d5b7e">2026-11-28 02:00</th><th title="testdata/night-2.json 8a04be61c2d3">2026-11-29 02:00</th>`,
		`aria-label="RMS-FWD-001"`, `aria-label="softmax_fwd"`, `aria-label="predictions per night"`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// One plot of error against size per prediction that has by_size (all
	// nine), one of bandwidth per kernel benchmarked (three), three trends.
	if n := strings.Count(doc, `<svg class="plot"`); n != 9+3+3 {
		t.Errorf("%d plots, want 15", n)
	}
	// Targeted against random: both series in RMS-FWD-001's legend.
	i := strings.Index(doc, `aria-label="RMS-FWD-001"`)
	if plot := doc[i : i+strings.Index(doc[i:], "</svg>")]; !strings.Contains(plot, ">random<") || !strings.Contains(plot, ">targeted<") {
		t.Errorf("RMS-FWD-001's plot lacks the random and targeted series")
	}
	if ext := externalRefs(doc); len(ext) > 0 {
		t.Errorf("page loads from outside: %q", ext)
	}

	// One report: no trends.
	one := render(t, rs[:1], names[:1])
	if strings.Contains(one, `id="trends"`) || strings.Count(one, `<svg class="plot"`) != 12 {
		t.Errorf("one report: trends shown or plots miscounted (%d)", strings.Count(one, `<svg class="plot"`))
	}
}

// TestPageEscapes: what a report says is text on the page, never markup.
func TestPageEscapes(t *testing.T) {
	rs, names := nights(t)
	r := rs[0]
	r.Predictions[0].Title = `<img src="https://example.com/x.png">`
	r.Predictions[0].ID = `P"><script>alert(1)</script>`
	doc := render(t, rs[:1], names[:1])
	if ext := externalRefs(doc); len(ext) > 0 {
		t.Errorf("a report's text became markup: %q", ext)
	}
	if !strings.Contains(doc, "&lt;img src=&#34;https://example.com/x.png&#34;&gt;") {
		t.Error("the title is not on the page as text")
	}
}

func TestWriteRefuses(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, nil, nil); err == nil {
		t.Error("Write of no report: no error")
	}
	rs, _ := nights(t)
	if err := Write(&b, rs, []string{"a"}); err == nil {
		t.Error("Write with too few names: no error")
	}
}

// TestSearchTable: a prediction's targeted search shows on the page as its
// random and targeted worst ratios, the worse one's input and replay.
func TestSearchTable(t *testing.T) {
	rs, names := nights(t)
	p := &rs[0].Predictions[0]
	p.Search = &reports.Search{Share: 0.2, TargetedChecks: 12, Improved: 3,
		Random:   &reports.SearchWorst{Ratio: 0.51, Input: "rows=1 hidden=2", Replay: "go test -run R -rapid.seed=1"},
		Targeted: &reports.SearchWorst{Ratio: 0.97, Input: "rows=7 hidden=33 steered eps[0]=1e-05", Replay: "go test -run T -rapid.seed=9"}}
	doc := render(t, rs, names)
	i := strings.Index(doc, `id="search-table"`)
	if i < 0 {
		t.Fatal("no search table")
	}
	table := doc[i : i+strings.Index(doc[i:], "</table>")]
	for _, want := range []string{p.ID, ">0.51<", "<b>0.97</b>", ">3/12<", "steered eps[0]=1e-05", "-rapid.seed=9"} {
		if !strings.Contains(table, want) {
			t.Errorf("search table lacks %q:\n%s", want, table)
		}
	}
}

// A ratio below 1 never reads as 1 (a bound met exactly), however close.
func TestRatioTextBelowOne(t *testing.T) {
	for x, want := range map[float64]string{0.9999996: "0.9999996", 0.999999: "0.999999", 0.31: "0.31", 1: "1", 1.0004: "1"} {
		if got := ratioText(&reports.ErrorStats{MaxRatio: x}); got != want {
			t.Errorf("ratioText(%v) = %q, want %q", x, got, want)
		}
	}
}
