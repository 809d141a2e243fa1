package reports

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Summary writes a short report for the terminal: one line per prediction,
// status first, in report order, with its title, e.g.
//
//	discharged  FALSIFY-DIM-001  Output shape follows input shape  10000 checks  worst err/tol 0.31  (12.3k checks/s)
//	falsified   FALSIFY-RMS-002  Backward matches the derivative      37 checks  1 failed  worst err/tol 4.2  -- max error above bound
//
// then a totals line; when the report is partial, a line saying so with the
// predictions not run; when r has mutants, the mutation analysis
// (MutationSummary) and the unproven predictions; the nightly's
// benchmarks, coverage, emulator costs and sanitizer findings where present
// (nightlySummary); then one
// "reproduce ID: command" line per prediction that has a reproduction, and
// one "nondeterministic ID: …" line per non-deterministic finding. Ratios
// carry the digits that tell them from 1 (0.99999 is not printed as 1).
func Summary(w io.Writer, r *Report) error {
	if r == nil {
		r = &Report{}
	}
	var b strings.Builder
	idw, tw, cw := 0, 0, 0
	for _, p := range r.Predictions {
		idw = max(idw, len(p.ID))
		tw = max(tw, utf8.RuneCountInString(title(p.Title)))
		cw = max(cw, len(strconv.Itoa(p.Checks)))
	}
	for _, p := range r.Predictions {
		fields := []string{fmt.Sprintf("%*d checks", cw, p.Checks)}
		if p.ChecksFailed > 0 {
			fields = append(fields, fmt.Sprintf("%d failed", p.ChecksFailed))
		}
		if p.ErrorStats != nil {
			fields = append(fields, "worst err/tol "+formatRatio(p.ErrorStats.MaxRatio))
		}
		if s := p.Search; s != nil {
			fields = append(fields, searchSummary(s))
		}
		if rate := checksPerSecond(&p); rate > 0 {
			fields = append(fields, "("+formatSI(rate)+" checks/s)")
		}
		if len(p.Flags) > 0 {
			fields = append(fields, "["+joinFlags(p.Flags, " ")+"]")
		}
		if p.Reason != "" {
			fields = append(fields, "-- "+firstLine(p.Reason))
		}
		t := title(p.Title)
		pad := strings.Repeat(" ", tw-utf8.RuneCountInString(t))
		if tw > 0 {
			t = "  " + t + pad
		}
		fmt.Fprintf(&b, "%-*s  %-*s%s  %s\n", statusWidth, p.Status, idw, p.ID, t, strings.Join(fields, "  "))
	}
	b.WriteString(totalsLine(r))
	b.WriteByte('\n')
	if r.Partial() {
		b.WriteString(partialLine(r))
		b.WriteByte('\n')
	}
	if len(r.Mutants) > 0 {
		mutationSummary(&b, r.Mutants, nil)
		if ids := r.Unproven(); len(ids) > 0 {
			fmt.Fprintf(&b, "unproven: %s\n", strings.Join(ids, ", "))
		}
	}
	nightlySummary(&b, r)
	for _, p := range r.Predictions {
		if p.Reproduction != nil {
			fmt.Fprintf(&b, "reproduce %s: %s", p.ID, Clip(p.Reproduction.Command, cellMax))
			if p.Reproduction.FailFile != "" {
				fmt.Fprintf(&b, "  (fail file %s)", Clip(p.Reproduction.FailFile, cellMax))
			}
			b.WriteByte('\n')
		}
	}
	for _, p := range r.Predictions {
		if p.NonDeterministic != "" {
			fmt.Fprintf(&b, "nondeterministic %s: %s\n", p.ID, firstLine(p.NonDeterministic))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// titleMax bounds a title in the summary's column.
const titleMax = 48

// title is t on one line, cut to titleMax runes.
func title(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	if utf8.RuneCountInString(t) <= titleMax {
		return t
	}
	return string([]rune(t)[:titleMax-1]) + "…"
}

// partialLine is e.g. "partial: stopped: deadline 7m0s; 2 predictions not
// run: A, B".
func partialLine(r *Report) string {
	var parts []string
	if r.Run.Stopped != "" {
		parts = append(parts, "stopped: "+firstLine(r.Run.Stopped))
	}
	if ids := r.NotRun(); len(ids) > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not run: %s", len(ids), plural(len(ids), "prediction", "predictions"), strings.Join(ids, ", ")))
	}
	return "partial: " + strings.Join(parts, "; ")
}

// statusWidth is the width of the longest prediction status.
var statusWidth = func() int {
	n := 0
	for _, s := range predictionStatuses {
		n = max(n, len(s))
	}
	return n
}()

// totalsLine counts predictions by status and names the backend, e.g.
// "3 predictions: 2 discharged, 1 falsified; backend gpu (NVIDIA H200, sm 9.0); 1m23s".
func totalsLine(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", len(r.Predictions), plural(len(r.Predictions), "prediction", "predictions"))
	var counts []string
	for _, s := range predictionStatuses {
		n := 0
		for _, p := range r.Predictions {
			if p.Status == s {
				n++
			}
		}
		if n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(counts) > 0 {
		b.WriteString(": " + strings.Join(counts, ", "))
	}
	if r.Run.Backend != "" {
		fmt.Fprintf(&b, "; backend %s", r.Run.Backend)
		var dev []string
		if r.Run.Device != "" {
			dev = append(dev, r.Run.Device)
		}
		if r.Run.ComputeCapability != "" {
			dev = append(dev, "sm "+r.Run.ComputeCapability)
		}
		if len(dev) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(dev, ", "))
		}
		if len(r.Run.Devices) > 1 {
			fmt.Fprintf(&b, "; %s", devicesText(r.Run.Devices))
		}
	}
	if d, ok := runDuration(&r.Run); ok {
		fmt.Fprintf(&b, "; %v", d)
	}
	return b.String()
}

// mutationLine is e.g.
// "mutation score 7/9 = 77.8% (10 mutants: 7 killed, 2 survived, 1 equivalent)".
func mutationLine(ms []Mutant) string {
	return fmt.Sprintf("mutation score %s (%s)", ScoreOf(ms, ""), statusCounts(ms))
}

// statusCounts is e.g. "10 mutants: 7 killed, 2 survived, 1 equivalent".
func statusCounts(ms []Mutant) string {
	var counts []string
	for _, s := range mutantStatuses {
		n := 0
		for _, m := range ms {
			if m.Status == s {
				n++
			}
		}
		if n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return fmt.Sprintf("%d %s: %s", len(ms), plural(len(ms), "mutant", "mutants"), strings.Join(counts, ", "))
}

func runDuration(run *Run) (time.Duration, bool) {
	if run.Start.IsZero() || run.End.IsZero() {
		return 0, false
	}
	return run.End.Sub(run.Start).Round(100 * time.Millisecond), true
}

// checksPerSecond is p.ChecksPerSecond, or derived from checks and duration.
func checksPerSecond(p *Prediction) float64 {
	if p.ChecksPerSecond > 0 {
		return p.ChecksPerSecond
	}
	if p.Duration > 0 && p.Checks > 0 {
		return float64(p.Checks) / p.Duration
	}
	return 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinFlags(fs []Flag, sep string) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, sep)
}

// lineMax bounds the runes of a reason on a summary line.
const lineMax = 200

// firstLine is the first line of s, cut to lineMax runes; a cut is marked
// with how much of s is left out (Clipped).
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line := s
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if utf8.RuneCountInString(line) > lineMax {
		line = string([]rune(line)[:lineMax])
	}
	if len(line) < len(s) {
		return line + " " + clipMarker(len(s)-len(line))
	}
	return line
}

// Bounds on one field of a report as the renderers print it, in bytes: a
// field can be megabytes (a counterexample's tensors, a reason quoting
// them), which the report keeps whole and a terminal or a Markdown page
// cannot show.
const (
	fenceMax = 16 << 10 // a fenced block: reason, counterexample output, command
	cellMax  = 4 << 10  // a table cell, a line of text
	codeMax  = 1 << 10  // a code span (inside a cell: see code)
)

// Clip returns s whole when it is at most max bytes long, else its first
// max bytes or fewer (whole runes) followed by a marker saying how many
// bytes are left out: "… (N bytes more; see the report)".
func Clip(s string, max int) string {
	head, more := clip(s, max)
	if more == 0 {
		return s
	}
	return head + clipMarker(more)
}

// clip splits s into at most max bytes of whole runes and how many bytes
// are left out.
func clip(s string, max int) (head string, more int) {
	if len(s) <= max {
		return s, 0
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], len(s) - n
}

func clipMarker(more int) string {
	return fmt.Sprintf("… (%d %s more; see the report)", more, plural(more, "byte", "bytes"))
}

// formatFloat prints x with 3 significant digits: 0.31, 4.2, 1.23e+04, NaN, +Inf.
func formatFloat(x float64) string {
	if math.IsInf(x, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// formatRatio prints an error/tolerance ratio with 3 significant digits, or
// as many more as it takes for the printed value to lie on the same side of
// 1 as x: 0.31, 0.99999, 1, 1.00001, 4.2, +Inf.
func formatRatio(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return formatFloat(x)
	}
	side := cmp.Compare(x, 1)
	for prec := 3; prec < 17; prec++ {
		s := strconv.FormatFloat(x, 'g', prec, 64)
		if y, err := strconv.ParseFloat(s, 64); err == nil && cmp.Compare(y, 1) == side {
			return s
		}
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// formatOpt is formatFloat of an optional statistic, "" when absent.
func formatOpt(x *float64) string {
	if x == nil {
		return ""
	}
	return formatFloat(*x)
}

// formatSI prints a non-negative rate with an SI prefix: 850, 12.3k, 1.5M, 3.2T.
func formatSI(x float64) string {
	switch {
	case x >= 1e12:
		return fmt.Sprintf("%.1fT", x/1e12)
	case x >= 1e9:
		return fmt.Sprintf("%.1fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// Markdown writes r as a Markdown document: the run, a table of predictions
// with details of failures (counterexample, reproduction), the mutants with
// the prediction that killed each (the kill matrix) and the kills per
// prediction, the kernels with their hashes, and the nightly's sections
// where present (benchmarks, coverage, emulator costs, sanitizer findings).
func Markdown(w io.Writer, r *Report) error {
	if r == nil {
		r = &Report{}
	}
	var b strings.Builder
	b.WriteString("# ptxprop contract report\n\n")
	fmt.Fprintf(&b, "Schema `%s`. %s.\n\n", r.SchemaVersion, totalsLine(r))
	if r.Partial() {
		fmt.Fprintf(&b, "**Partial report.** %s.\n\n", capitalize(strings.TrimPrefix(partialLine(r), "partial: ")))
	}

	b.WriteString("## Run\n\n")
	run := &r.Run
	rows := [][2]string{}
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	if !run.Start.IsZero() {
		add("Start", run.Start.Format(time.RFC3339))
	}
	if !run.End.IsZero() {
		add("End", run.End.Format(time.RFC3339))
	}
	if d, ok := runDuration(run); ok {
		add("Duration", d.String())
	}
	add("Run ID", code(run.ID))
	if len(run.MergedFrom) > 0 {
		add("Merged from", code(strings.Join(run.MergedFrom, " ")))
	}
	add("Stopped", run.Stopped)
	add("Backend", string(run.Backend))
	add("Device", run.Device)
	if len(run.Devices) > 0 {
		add("Devices", devicesText(run.Devices))
	}
	add("Compute capability", run.ComputeCapability)
	if run.SMCount > 0 {
		add("SM count", strconv.Itoa(run.SMCount))
	}
	add("Driver version", run.DriverVersion)
	add("CUDA version", run.CUDAVersion)
	if run.CopyBandwidth != nil {
		add("Copy bandwidth", formatSI(*run.CopyBandwidth)+"B/s")
	}
	add("Git commit", code(run.GitCommit))
	add("Go version", run.GoVersion)
	add("Host", run.Host)
	if run.RapidSeed != nil {
		add("Rapid seed", strconv.FormatUint(*run.RapidSeed, 10))
	}
	if run.RapidChecks > 0 {
		add("Rapid checks", strconv.Itoa(run.RapidChecks))
	}
	if run.RapidLoops > 0 {
		add("Rapid loops", strconv.Itoa(run.RapidLoops))
	}
	add("Command line", code(strings.Join(run.CommandLine, " ")))
	table(&b, []string{"Field", "Value"}, func(yield func([]string)) {
		for _, row := range rows {
			yield(row[:])
		}
	})
	if len(run.Notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range run.Notes {
			fmt.Fprintf(&b, "- %s\n", cell(n))
		}
		b.WriteByte('\n')
	}

	b.WriteString("## Predictions\n\n")
	if len(r.Predictions) == 0 {
		b.WriteString("No predictions.\n\n")
	} else {
		table(&b, []string{"Status", "ID", "Title", "Kernels", "Checks", "Failed", "Worst err/tol",
			"Max abs", "Max rel", "Max ULP", "Naive ratio", "Checks/s", "Flags"}, func(yield func([]string)) {
			for _, p := range r.Predictions {
				ratio, abs, rel, ulp, naive := "", "", "", "", ""
				if e := p.ErrorStats; e != nil {
					ratio, abs, rel, ulp = formatRatio(e.MaxRatio), formatOpt(e.MaxAbs), formatOpt(e.MaxRel), formatOpt(e.MaxULP)
					naive = formatOpt(e.NaiveRatio)
				}
				rate := ""
				if x := checksPerSecond(&p); x > 0 {
					rate = formatSI(x)
				}
				yield([]string{"**" + string(p.Status) + "**", code(p.ID), p.Title, strings.Join(p.Kernels, ", "),
					strconv.Itoa(p.Checks), strconv.Itoa(p.ChecksFailed), ratio, abs, rel, ulp, naive, rate,
					joinFlags(p.Flags, ", ")})
			}
		})
		for _, p := range r.Predictions {
			predictionDetails(&b, &p)
		}
	}

	b.WriteString("## Mutants (kill matrix)\n\n")
	if len(r.Mutants) == 0 {
		b.WriteString("No mutants.\n\n")
	} else {
		fmt.Fprintf(&b, "%s.\n\n", capitalize(mutationLine(r.Mutants)))
		if ids := r.Unproven(); len(ids) > 0 {
			fmt.Fprintf(&b, "Unproven predictions (killed no mutant): %s.\n\n", cell(strings.Join(ids, ", ")))
		}
		table(&b, []string{"Status", "Mutant", "Kind", "Kernel", "Operator", "Site", "Killed by", "Expected killers", "Checks to kill", "Reason"},
			func(yield func([]string)) {
				for _, m := range r.Mutants {
					ctk := ""
					if m.ChecksToKill > 0 {
						ctk = strconv.Itoa(m.ChecksToKill)
					}
					yield([]string{"**" + string(m.Status) + "**", code(m.Name), string(m.Kind), m.Kernel, m.Operator,
						m.Site, code(m.KilledBy), strings.Join(m.Expected, ", "), ctk, m.Reason})
				}
			})
		if len(r.Predictions) > 0 {
			b.WriteString("Kills per prediction:\n\n")
			table(&b, []string{"Prediction", "Kills", "Mutants killed"}, func(yield func([]string)) {
				for _, p := range r.Predictions {
					var names []string
					for _, m := range r.Mutants {
						if m.Status == MutantKilled && m.KilledBy == p.ID {
							names = append(names, m.Name)
						}
					}
					yield([]string{code(p.ID), strconv.Itoa(len(names)), strings.Join(names, ", ")})
				}
			})
		}
	}

	b.WriteString("## Kernels\n\n")
	if len(r.Kernels) == 0 {
		b.WriteString("No kernels.\n")
	} else {
		table(&b, []string{"Name", "Origin", "PTX", "Entry", "PTX SHA-256", "Binding", "Contract", "Source", "Source SHA-256"}, func(yield func([]string)) {
			for _, k := range r.Kernels {
				yield([]string{code(k.Name), string(k.Origin), k.PTX, code(k.Entry), code(k.PTXSHA256), k.Binding, k.Contract,
					k.Source, code(k.SourceSHA256)})
			}
		})
	}
	nightlyMarkdown(&b, r)
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// predictionDetails writes a section for a prediction with anything to show
// beyond its table row: a reason, a counterexample, a reproduction, a
// non-deterministic finding.
func predictionDetails(b *strings.Builder, p *Prediction) {
	if p.Reason == "" && p.Counterexample == nil && p.Reproduction == nil && p.NonDeterministic == "" && p.Rerun == "" {
		return
	}
	fmt.Fprintf(b, "### %s (%s)\n\n", p.ID, p.Status)
	if p.Title != "" {
		fmt.Fprintf(b, "**%s**\n\n", cell(p.Title))
	}
	if p.Statement != "" {
		fmt.Fprintf(b, "%s\n\n", Clip(p.Statement, cellMax))
	}
	if p.Reason != "" {
		fence(b, "Reason:", p.Reason)
	}
	if e := p.ErrorStats; e != nil && e.ToleranceFormula != "" {
		fmt.Fprintf(b, "Tolerance: %s\n\n", code(e.ToleranceFormula))
	}
	if c := p.Counterexample; c != nil {
		if len(c.Draws) > 0 {
			b.WriteString("Counterexample:\n\n")
			table(b, []string{"Draw", "Value"}, func(yield func([]string)) {
				for _, d := range c.Draws {
					yield([]string{d.Label, code(d.Value)})
				}
			})
		}
		if c.Text != "" {
			fence(b, "Counterexample output:", c.Text)
		}
	}
	if rp := p.Reproduction; rp != nil {
		fence(b, "Reproduce:", rp.Command)
		if rp.FailFile != "" {
			fmt.Fprintf(b, "Fail file: %s\n\n", code(rp.FailFile))
		}
	}
	if p.NonDeterministic != "" {
		fence(b, "Non-deterministic:", p.NonDeterministic)
	}
	if p.Rerun != "" {
		fence(b, "Rerun:", p.Rerun)
	}
}

// table writes a Markdown table; rows yields the cells of each row.
func table(b *strings.Builder, header []string, rows func(yield func([]string))) {
	b.WriteString("|")
	for _, h := range header {
		b.WriteString(" " + h + " |")
	}
	b.WriteString("\n|")
	for range header {
		b.WriteString(" --- |")
	}
	b.WriteByte('\n')
	rows(func(row []string) {
		b.WriteString("|")
		for _, c := range row {
			if c == "" {
				b.WriteString(" |")
			} else {
				b.WriteString(" " + cell(c) + " |")
			}
		}
		b.WriteByte('\n')
	})
	b.WriteByte('\n')
}

// cell makes s safe inside a table cell: one line, no bare pipes, at most
// cellMax bytes of s (Clip).
func cell(s string) string {
	s = Clip(strings.TrimSpace(s), cellMax)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}

// code wraps s in a code span long enough for the backticks inside it,
// keeping at most codeMax bytes of s and marking the cut after the span.
// The span and its marker are then under 3·codeMax+64 bytes (its ticks
// are at most one longer than the text kept), so a cell, which holds
// cellMax, never cuts it.
func code(s string) string {
	if s == "" {
		return ""
	}
	s, more := clip(s, codeMax)
	marker := ""
	if more > 0 {
		marker = " " + clipMarker(more)
	}
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks + marker
}

// fence writes a label and s in a fenced code block longer than any fence
// in s, keeping at most fenceMax bytes of s and marking the cut after the
// block.
func fence(b *strings.Builder, label, s string) {
	s, more := clip(s, fenceMax)
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	fmt.Fprintf(b, "%s\n\n%s\n%s\n%s\n\n", label, f, strings.TrimRight(s, "\n"), f)
	if more > 0 {
		fmt.Fprintf(b, "%s\n\n", clipMarker(more))
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// devicesText is e.g. "2 devices: 0 (12 runs, 3400 launches), 1 (11 runs,
// 3310 launches)": how the work spread.
func devicesText(ds []Device) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%d (%d runs, %d launches)", d.Ordinal, d.ContractRuns, d.Launches)
	}
	return fmt.Sprintf("%d devices: %s", len(ds), strings.Join(parts, ", "))
}
