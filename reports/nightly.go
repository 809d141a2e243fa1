package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Benchmark is one kernel's speed at one shape, as ratios measured by
// repeated timings: each slice holds one ratio per repetition, in the order
// they ran, so that the spread of a ratio travels with it (Diff judges a
// drop against it). Every ratio is "higher is better".
type Benchmark struct {
	Kernel string `json:"kernel"` // Kernel.Name
	Shape  string `json:"shape"`  // e.g. "rows=4096 hidden=4096"; unique with Kernel
	// Size is the number the shape is plotted against (the hidden size,
	// say); 0 when it has none.
	Size int `json:"size,omitempty"`
	// CopyRatio is, per repetition, the kernel's effective bandwidth
	// (bytes it must move / its time) over run.copy_bandwidth_bytes_per_s.
	CopyRatio []float64 `json:"copy_ratio"`
	// TorchEagerRatio and TorchCompileRatio are, per repetition, the time
	// of torch eager (torch.compile) on the same shape over the kernel's:
	// above 1 the kernel is faster. Absent when torch was not timed.
	TorchEagerRatio   []float64 `json:"torch_eager_ratio,omitempty"`
	TorchCompileRatio []float64 `json:"torch_compile_ratio,omitempty"`
}

// Sanitizer is the sanitizer pass: the tools that ran and what they found.
// A report without it ran none; one with no findings ran clean.
type Sanitizer struct {
	Tools    []string           `json:"tools"`    // e.g. memcheck, racecheck, initcheck, synccheck; unique
	Findings []SanitizerFinding `json:"findings"` // encoded as [] when clean
}

// MarshalJSON encodes no findings as [] rather than null.
func (s Sanitizer) MarshalJSON() ([]byte, error) {
	type plain Sanitizer
	p := plain(s)
	if p.Findings == nil {
		p.Findings = []SanitizerFinding{}
	}
	if p.Tools == nil {
		p.Tools = []string{}
	}
	return marshalJSON(p)
}

// SanitizerFinding is one error or hazard a sanitizer tool reported.
type SanitizerFinding struct {
	Tool    string `json:"tool"`               // one of Sanitizer.Tools
	Kernel  string `json:"kernel,omitempty"`   // Kernel.Name; empty for an API error outside a kernel
	PTXLine int    `json:"ptx_line,omitempty"` // 1-based line of the kernel's PTX; 0 when unknown
	Kind    string `json:"kind"`               // e.g. "Invalid __global__ write", "RAW hazard", "CUDA_ERROR_INVALID_VALUE"
	Message string `json:"message,omitempty"`  // the tool's text, verbatim
}

// key identifies a finding from night to night: its message holds
// addresses and thread numbers that change with every run.
func (f SanitizerFinding) key() string {
	return fmt.Sprintf("%s|%s|%d|%s", f.Tool, f.Kernel, f.PTXLine, f.Kind)
}

// String is e.g. "memcheck rmsnorm_fwd:42 Invalid __global__ write".
func (f SanitizerFinding) String() string {
	where := f.Kernel
	if where == "" {
		where = "(api)"
	}
	if f.PTXLine > 0 {
		where += fmt.Sprintf(":%d", f.PTXLine)
	}
	return fmt.Sprintf("%s %s %s", f.Tool, where, f.Kind)
}

// Coverage is one kernel's branch coverage on the emulator: of its
// conditional branches' directions (taken, not taken: each counts once),
// of its basic blocks and of its other guarded instructions' outcomes
// (guard held, failed on some lane), how many the run executed. Uncovered
// and UncoveredBlocks list every one not covered (a report that predates
// them may list fewer), so that shards' coverage adds up.
type Coverage struct {
	Kernel    string            `json:"kernel"`   // Kernel.Name; unique
	Branches  int               `json:"branches"` // branch directions in the kernel
	Covered   int               `json:"covered"`  // of those, taken at least once
	Uncovered []UncoveredBranch `json:"uncovered,omitempty"`
	// Blocks and BlocksCovered count basic blocks; UncoveredBlocks are the
	// PTX lines where those not covered start, ascending.
	Blocks          int   `json:"blocks,omitempty"`
	BlocksCovered   int   `json:"blocks_covered,omitempty"`
	UncoveredBlocks []int `json:"uncovered_blocks,omitempty"`
	// Guards and GuardsCovered count the outcomes of the other guarded
	// instructions (a guarded load or store: held, failed).
	Guards        int `json:"guards,omitempty"`
	GuardsCovered int `json:"guards_covered,omitempty"`
}

// Fraction is Covered/Branches, and 1 for a kernel without branches.
func (c *Coverage) Fraction() float64 {
	if c.Branches == 0 {
		return 1
	}
	return float64(c.Covered) / float64(c.Branches)
}

// BlockFraction is BlocksCovered/Blocks, and 1 for none.
func (c *Coverage) BlockFraction() float64 {
	if c.Blocks == 0 {
		return 1
	}
	return float64(c.BlocksCovered) / float64(c.Blocks)
}

// Unexplained returns the uncovered branch directions that no kernel
// descriptor explains as unreachable.
func (c *Coverage) Unexplained() []UncoveredBranch {
	var out []UncoveredBranch
	for _, u := range c.Uncovered {
		if u.Unreachable == "" {
			out = append(out, u)
		}
	}
	return out
}

// UncoveredBranch is one branch direction no check took.
type UncoveredBranch struct {
	Line      int    `json:"line"`                // 1-based line of the kernel's PTX (the bra)
	Direction string `json:"direction,omitempty"` // "taken" or "not taken"
	Guard     string `json:"guard,omitempty"`     // e.g. "@%p3", "@!%p1"
	// Condition is the instruction that defines the guard's predicate,
	// e.g. "setp.lt.s32 %p3, %r5, %r2;", and ConditionLine its line.
	Condition     string `json:"condition,omitempty"`
	ConditionLine int    `json:"condition_line,omitempty"`
	// Unreachable is the reason the kernel's descriptor gives for this
	// direction never being taken; empty when it gives none.
	Unreachable string `json:"unreachable,omitempty"`
}

// String is e.g. "line 57 @%p3 taken (setp.lt.s32 %p3, %r5, %r2;)".
func (u UncoveredBranch) String() string {
	s := strings.TrimSpace(fmt.Sprintf("line %d %s %s", u.Line, u.Guard, u.Direction))
	if u.Condition != "" {
		s += " (" + u.Condition + ")"
	}
	if u.Unreachable != "" {
		s += " unreachable: " + u.Unreachable
	}
	return s
}

// key identifies the direction in its kernel.
func (u UncoveredBranch) key() string { return fmt.Sprintf("%d|%s|%s", u.Line, u.Guard, u.Direction) }

// Cost is what the emulator counted for one kernel at one shape, per
// element of the output: deterministic, so any growth is a kernel that got
// costlier (Diff).
type Cost struct {
	Kernel   string `json:"kernel"` // Kernel.Name
	Shape    string `json:"shape"`  // unique with Kernel
	Size     int    `json:"size,omitempty"`
	Elements int64  `json:"elements"` // output elements of the launch(es) counted
	// InstructionsPerElement is the instructions the emulator executed
	// (over all threads) per element; BytesPerElement the global-memory
	// bytes loaded and stored per element.
	InstructionsPerElement float64 `json:"instructions_per_element"`
	BytesPerElement        float64 `json:"bytes_per_element"`
}

// SizeStat is a prediction's worst error/tolerance ratio over the checks
// whose size (the row length, i.e. the hidden size, of the checked shape)
// fell in the bucket [SizeMin, SizeMax]: one bucket of ErrorStats.BySize.
// The suite's buckets are powers of two, [2^k, 2^(k+1)−1].
type SizeStat struct {
	SizeMin  int     `json:"size_min"` // the bucket's bounds, inclusive
	SizeMax  int     `json:"size_max"`
	Checks   int     `json:"checks"`
	MaxRatio float64 `json:"max_ratio"`
	// Generator names how the inputs were drawn ("random", "targeted"),
	// when a prediction draws them more than one way; empty otherwise.
	Generator string `json:"generator,omitempty"`
}

// Median returns the median of xs (the mean of the middle two for an even
// count), and NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Benchmark returns the benchmark of kernel at shape, or nil.
func (r *Report) Benchmark(kernel, shape string) *Benchmark {
	for i := range r.Benchmarks {
		if r.Benchmarks[i].Kernel == kernel && r.Benchmarks[i].Shape == shape {
			return &r.Benchmarks[i]
		}
	}
	return nil
}

// Cost returns the emulator's counts of kernel at shape, or nil.
func (r *Report) Cost(kernel, shape string) *Cost {
	for i := range r.Costs {
		if r.Costs[i].Kernel == kernel && r.Costs[i].Shape == shape {
			return &r.Costs[i]
		}
	}
	return nil
}

// KernelCoverage returns the coverage of kernel, or nil.
func (r *Report) KernelCoverage(kernel string) *Coverage {
	for i := range r.Coverage {
		if r.Coverage[i].Kernel == kernel {
			return &r.Coverage[i]
		}
	}
	return nil
}

// validateNightly checks the optional sections: unique keys, counts and
// ratios in range, findings naming a tool that ran.
func (v *validator) nightly(r *Report) {
	seen := map[string]bool{}
	for i, b := range r.Benchmarks {
		at := v.element("benchmarks", i, "kernel and shape", pairKey(b.Kernel, b.Shape), seen)
		v.nonEmpty(at, "kernel", b.Kernel)
		v.nonEmpty(at, "shape", b.Shape)
		v.count(at, "size", b.Size)
		if len(b.CopyRatio) == 0 {
			v.addf("%s: copy_ratio is empty (one ratio per repetition)", at)
		}
		for _, s := range []struct {
			name string
			xs   []float64
		}{{"copy_ratio", b.CopyRatio}, {"torch_eager_ratio", b.TorchEagerRatio}, {"torch_compile_ratio", b.TorchCompileRatio}} {
			for j, x := range s.xs {
				v.rate(at, fmt.Sprintf("%s[%d]", s.name, j), x)
			}
		}
	}
	if s := r.Sanitizer; s != nil {
		tools := map[string]bool{}
		for i, t := range s.Tools {
			switch {
			case strings.TrimSpace(t) == "":
				v.addf("sanitizer.tools[%d]: empty", i)
			case tools[t]:
				v.addf("sanitizer.tools[%d]: duplicate tool %s", i, quote(t))
			}
			tools[t] = true
		}
		if len(s.Tools) == 0 {
			v.addf("sanitizer.tools: empty (a sanitizer pass runs at least one tool)")
		}
		for i, f := range s.Findings {
			at := fmt.Sprintf("sanitizer.findings[%d]", i)
			if !tools[f.Tool] {
				v.addf("%s: tool %s is not among sanitizer.tools", at, quote(f.Tool))
			}
			v.nonEmpty(at, "kind", f.Kind)
			v.count(at, "ptx_line", f.PTXLine)
		}
	}
	clear(seen)
	for i, c := range r.Coverage {
		at := v.element("coverage", i, "kernel", c.Kernel, seen)
		v.count(at, "branches", c.Branches)
		v.count(at, "covered", c.Covered)
		if c.Covered > c.Branches {
			v.addf("%s: covered %d is above branches %d", at, c.Covered, c.Branches)
		}
		if c.Covered <= c.Branches && len(c.Uncovered) > c.Branches-c.Covered {
			v.addf("%s: %d uncovered branches listed, but only %d of %d are not covered", at, len(c.Uncovered), c.Branches-c.Covered, c.Branches)
		}
		for j, u := range c.Uncovered {
			if u.Line < 1 {
				v.addf("%s: uncovered[%d]: line %d is not a line number", at, j, u.Line)
			}
		}
		v.count(at, "blocks", c.Blocks)
		v.count(at, "blocks_covered", c.BlocksCovered)
		if c.BlocksCovered > c.Blocks || len(c.UncoveredBlocks) > c.Blocks-c.BlocksCovered {
			v.addf("%s: %d of %d blocks covered with %d listed uncovered", at, c.BlocksCovered, c.Blocks, len(c.UncoveredBlocks))
		}
		v.count(at, "guards", c.Guards)
		v.count(at, "guards_covered", c.GuardsCovered)
		if c.GuardsCovered > c.Guards {
			v.addf("%s: guards covered %d is above guards %d", at, c.GuardsCovered, c.Guards)
		}
	}
	clear(seen)
	for i, c := range r.Costs {
		at := v.element("costs", i, "kernel and shape", pairKey(c.Kernel, c.Shape), seen)
		v.nonEmpty(at, "kernel", c.Kernel)
		v.nonEmpty(at, "shape", c.Shape)
		v.count(at, "size", c.Size)
		if c.Elements < 1 {
			v.addf("%s: elements %d is not positive", at, c.Elements)
		}
		v.rate(at, "instructions_per_element", c.InstructionsPerElement)
		v.rate(at, "bytes_per_element", c.BytesPerElement)
	}
	for k, val := range r.Run.Environment {
		if strings.TrimSpace(k) == "" {
			v.addf("run.environment: empty key (value %s)", quote(val))
		}
	}
}

// sizeStats checks the buckets of ErrorStats.BySize.
func (v *validator) sizeStats(at string, ss []SizeStat) {
	seen := map[string]bool{}
	for i, s := range ss {
		sat := fmt.Sprintf("%s: error_stats.by_size[%d]", at, i)
		v.count(sat, "size_min", s.SizeMin)
		v.count(sat, "checks", s.Checks)
		if s.SizeMax < s.SizeMin {
			v.addf("%s: size_max %d is below size_min %d", sat, s.SizeMax, s.SizeMin)
		}
		v.stat(sat, "max_ratio", s.MaxRatio)
		k := fmt.Sprintf("%s|%d", s.Generator, s.SizeMin)
		if seen[k] {
			v.addf("%s: duplicate bucket (generator %s, size_min %d)", sat, quote(s.Generator), s.SizeMin)
		}
		seen[k] = true
	}
}

func (v *validator) nonEmpty(at, name, s string) {
	if strings.TrimSpace(s) == "" {
		v.addf("%s: %s is empty", at, name)
	}
}

func pairKey(a, b string) string {
	if a == "" && b == "" {
		return ""
	}
	return a + " @ " + b
}

// mergeNightly adds shard r's optional sections to out: benchmarks, costs
// and coverage are united (one kernel and shape in two shards is a
// problem: two measurements of one thing), sanitizer tools and findings
// are united, and the environments joined (one key with two values is a
// problem).
func mergeNightly(out, r *Report, name string) []string {
	var problems []string
	for _, b := range r.Benchmarks {
		if out.Benchmark(b.Kernel, b.Shape) != nil {
			problems = append(problems, fmt.Sprintf("%s: benchmark %s is in an earlier report too", name, quote(pairKey(b.Kernel, b.Shape))))
			continue
		}
		out.Benchmarks = append(out.Benchmarks, b)
	}
	for _, c := range r.Costs {
		if out.Cost(c.Kernel, c.Shape) != nil {
			problems = append(problems, fmt.Sprintf("%s: cost %s is in an earlier report too", name, quote(pairKey(c.Kernel, c.Shape))))
			continue
		}
		out.Costs = append(out.Costs, c)
	}
	for _, c := range r.Coverage {
		o := out.KernelCoverage(c.Kernel)
		if o == nil {
			out.Coverage = append(out.Coverage, c)
			continue
		}
		if o.Branches != c.Branches || o.Blocks != c.Blocks || o.Guards != c.Guards {
			problems = append(problems, fmt.Sprintf("%s: coverage of %s counts %d branch directions and %d blocks, an earlier report %d and %d", name, quote(c.Kernel), c.Branches, c.Blocks, o.Branches, o.Blocks))
			continue
		}
		*o = unionCoverage(*o, c)
	}
	if s := r.Sanitizer; s != nil {
		if out.Sanitizer == nil {
			out.Sanitizer = &Sanitizer{}
		}
		for _, t := range s.Tools {
			if !slices.Contains(out.Sanitizer.Tools, t) {
				out.Sanitizer.Tools = append(out.Sanitizer.Tools, t)
			}
		}
		out.Sanitizer.Findings = append(out.Sanitizer.Findings, s.Findings...)
	}
	for k, v := range r.Run.Environment {
		if have, ok := out.Run.Environment[k]; ok && have != v {
			problems = append(problems, fmt.Sprintf("%s: environment %s is %s, an earlier report's %s", name, quote(k), quote(v), quote(have)))
			continue
		}
		if out.Run.Environment == nil {
			out.Run.Environment = map[string]string{}
		}
		out.Run.Environment[k] = v
	}
	return problems
}

// mergeSizes merges the buckets of two shards: per (generator, size_min),
// checks are summed and the size range and worst ratio widened.
func mergeSizes(a, b []SizeStat) []SizeStat {
	out := slices.Clone(a)
	for _, s := range b {
		i := slices.IndexFunc(out, func(t SizeStat) bool { return t.Generator == s.Generator && t.SizeMin == s.SizeMin })
		if i < 0 {
			out = append(out, s)
			continue
		}
		t := &out[i]
		t.Checks += s.Checks
		t.SizeMax = max(t.SizeMax, s.SizeMax)
		t.MaxRatio = math.Max(t.MaxRatio, s.MaxRatio)
	}
	slices.SortFunc(out, func(x, y SizeStat) int {
		return cmp.Or(cmp.Compare(x.Generator, y.Generator), cmp.Compare(x.SizeMin, y.SizeMin))
	})
	return out
}

// AddCoverage adds c to r's coverage: united with r's coverage of the same
// kernel when both count the same branches, blocks and guards (two runs
// of one kernel), else in place of it.
func (r *Report) AddCoverage(c Coverage) {
	o := r.KernelCoverage(c.Kernel)
	switch {
	case o == nil:
		r.Coverage = append(r.Coverage, c)
	case o.Branches == c.Branches && o.Blocks == c.Blocks && o.Guards == c.Guards:
		*o = unionCoverage(*o, c)
	default:
		*o = c
	}
}

// unionCoverage returns the coverage of two runs of one kernel: covered
// where either covered, so uncovered where both listed it uncovered.
func unionCoverage(a, b Coverage) Coverage {
	out := a
	in := map[string]bool{}
	for _, u := range b.Uncovered {
		in[u.key()] = true
	}
	out.Uncovered = nil
	for _, u := range a.Uncovered {
		if in[u.key()] {
			out.Uncovered = append(out.Uncovered, u)
		}
	}
	out.Covered = max(a.Covered, b.Covered, a.Branches-len(out.Uncovered))
	out.UncoveredBlocks = nil
	for _, l := range a.UncoveredBlocks {
		if slices.Contains(b.UncoveredBlocks, l) {
			out.UncoveredBlocks = append(out.UncoveredBlocks, l)
		}
	}
	out.BlocksCovered = max(a.BlocksCovered, b.BlocksCovered, a.Blocks-len(out.UncoveredBlocks))
	out.GuardsCovered = max(a.GuardsCovered, b.GuardsCovered) // a lower bound: guards are not listed
	return out
}

// nightlySummary writes Summary's lines for the nightly's sections, each
// only when the report has it, e.g.
//
//	bench rmsnorm_fwd rows=4096 hidden=4096: copy 0.82 (3 runs, 0.81–0.83)  torch eager 2.1×  torch.compile 1.1×
//	coverage rmsnorm_fwd: 11/12 branches (91.7%), uncovered: line 57 @%p3 taken
//	cost rmsnorm_fwd rows=3 hidden=33: 41.5 instructions, 12.1 bytes per element
//	sanitizer (memcheck, racecheck): 2 findings
//	  racecheck rmsnorm_bwd:88 RAW hazard
func nightlySummary(b *strings.Builder, r *Report) {
	for _, m := range r.Benchmarks {
		fmt.Fprintf(b, "bench %s %s: copy %s", m.Kernel, m.Shape, spreadText(m.CopyRatio))
		if len(m.TorchEagerRatio) > 0 {
			fmt.Fprintf(b, "  torch eager %.3g×", Median(m.TorchEagerRatio))
		}
		if len(m.TorchCompileRatio) > 0 {
			fmt.Fprintf(b, "  torch.compile %.3g×", Median(m.TorchCompileRatio))
		}
		b.WriteByte('\n')
	}
	for _, c := range r.Coverage {
		fmt.Fprintf(b, "coverage %s: %d/%d branch directions (%s)", c.Kernel, c.Covered, c.Branches, percent(c.Fraction()))
		if c.Blocks > 0 {
			fmt.Fprintf(b, ", %d/%d blocks", c.BlocksCovered, c.Blocks)
		}
		if n := len(c.Uncovered) - len(c.Unexplained()); n > 0 {
			fmt.Fprintf(b, ", %d explained unreachable", n)
		}
		var un []string
		for _, u := range c.Unexplained() {
			un = append(un, u.String())
		}
		if len(un) > 0 {
			fmt.Fprintf(b, ", uncovered: %s", Clip(strings.Join(un, "; "), cellMax))
		}
		b.WriteByte('\n')
	}
	for _, c := range r.Costs {
		fmt.Fprintf(b, "cost %s %s: %.4g instructions, %.4g bytes per element\n", c.Kernel, c.Shape, c.InstructionsPerElement, c.BytesPerElement)
	}
	if s := r.Sanitizer; s != nil {
		fmt.Fprintf(b, "sanitizer (%s): %d %s\n", strings.Join(s.Tools, ", "), len(s.Findings), plural(len(s.Findings), "finding", "findings"))
		for _, f := range s.Findings {
			fmt.Fprintf(b, "  %s", f)
			if f.Message != "" {
				fmt.Fprintf(b, ": %s", firstLine(f.Message))
			}
			b.WriteByte('\n')
		}
	}
}

// spreadText is a ratio's median with its repetitions' range, e.g.
// "0.82 (3 runs, 0.81–0.83)".
func spreadText(xs []float64) string {
	if len(xs) < 2 {
		return fmt.Sprintf("%.3g (1 run)", Median(xs))
	}
	return fmt.Sprintf("%.3g (%d runs, %.3g–%.3g)", Median(xs), len(xs), slices.Min(xs), slices.Max(xs))
}

// BandwidthDropped and BandwidthRose judge a ratio measured by repeated
// timings on two nights, old and new, against the noise the timings
// themselves show: a ratio dropped when every repetition of the new night
// is below every repetition of the old one (max(new) < min(old)), i.e.
// the drop is larger than the spread either night saw between its own
// repetitions; it rose by the converse. With fewer than two repetitions
// on either night the spread is unknown, and neither holds: Compare then
// lists the move as a change with its noise unknown.
func BandwidthDropped(old, new []float64) bool {
	return len(old) >= 2 && len(new) >= 2 && slices.Max(new) < slices.Min(old)
}

// BandwidthRose is the converse of BandwidthDropped.
func BandwidthRose(old, new []float64) bool {
	return len(old) >= 2 && len(new) >= 2 && slices.Min(new) > slices.Max(old)
}

// compareNightly is Compare on the nightly's sections.
func compareNightly(a, b *Report, add func(Class, string, ...any)) {
	for _, n := range b.Benchmarks {
		o := a.Benchmark(n.Kernel, n.Shape)
		if o == nil {
			add(Changed, "bench %s %s: added (copy %s)", n.Kernel, n.Shape, spreadText(n.CopyRatio))
			continue
		}
		for _, r := range []struct {
			what     string
			old, new []float64
			judged   bool
		}{{"copy", o.CopyRatio, n.CopyRatio, true}, {"torch eager", o.TorchEagerRatio, n.TorchEagerRatio, false},
			{"torch.compile", o.TorchCompileRatio, n.TorchCompileRatio, false}} {
			if len(r.old) == 0 || len(r.new) == 0 {
				if len(r.old) != len(r.new) {
					add(Changed, "bench %s %s: %s ratio %s -> %s", n.Kernel, n.Shape, r.what, optSpread(r.old), optSpread(r.new))
				}
				continue
			}
			c, note := Changed, ""
			switch {
			case BandwidthDropped(r.old, r.new):
				note = " (down beyond the timings' spread)"
				if r.judged {
					c = Regression
				}
			case BandwidthRose(r.old, r.new):
				note = " (up beyond the timings' spread)"
				if r.judged {
					c = Improvement
				}
			case len(r.old) < 2 || len(r.new) < 2:
				if Median(r.old) == Median(r.new) {
					continue
				}
				note = " (noise unknown: one repetition)"
			default:
				continue // within the noise
			}
			add(c, "bench %s %s: %s ratio %s -> %s%s", n.Kernel, n.Shape, r.what, spreadText(r.old), spreadText(r.new), note)
		}
	}
	for _, o := range a.Benchmarks {
		if b.Benchmark(o.Kernel, o.Shape) == nil {
			add(Changed, "bench %s %s: removed", o.Kernel, o.Shape)
		}
	}

	for _, n := range b.Coverage {
		o := a.KernelCoverage(n.Kernel)
		if o == nil {
			add(Changed, "coverage %s: added (%d/%d)", n.Kernel, n.Covered, n.Branches)
			continue
		}
		x, y := o.Fraction(), n.Fraction()
		bx, by := o.BlockFraction(), n.BlockFraction()
		c := Changed
		switch {
		case y < x || by < bx:
			c = Regression
		case y > x || by > bx:
			c = Improvement
		case o.Covered == n.Covered && o.Branches == n.Branches && o.BlocksCovered == n.BlocksCovered && o.Blocks == n.Blocks:
			continue
		}
		add(c, "coverage %s: %d/%d (%s) -> %d/%d (%s) branch directions, %d/%d -> %d/%d blocks", n.Kernel, o.Covered, o.Branches, percent(x), n.Covered, n.Branches, percent(y),
			o.BlocksCovered, o.Blocks, n.BlocksCovered, n.Blocks)
	}
	for _, o := range a.Coverage {
		if b.KernelCoverage(o.Kernel) == nil {
			add(Changed, "coverage %s: removed", o.Kernel)
		}
	}

	for _, n := range b.Costs {
		o := a.Cost(n.Kernel, n.Shape)
		if o == nil {
			add(Changed, "cost %s %s: added", n.Kernel, n.Shape)
			continue
		}
		for _, m := range []struct {
			what     string
			old, new float64
		}{{"instructions", o.InstructionsPerElement, n.InstructionsPerElement}, {"bytes", o.BytesPerElement, n.BytesPerElement}} {
			c := Regression
			switch {
			case m.new == m.old:
				continue
			case m.new < m.old:
				c = Improvement
			}
			pct := ""
			if m.old > 0 {
				pct = fmt.Sprintf(" (%+.1f%%)", 100*(m.new-m.old)/m.old)
			}
			add(c, "cost %s %s: %s per element %.6g -> %.6g%s", n.Kernel, n.Shape, m.what, m.old, m.new, pct)
		}
	}
	for _, o := range a.Costs {
		if b.Cost(o.Kernel, o.Shape) == nil {
			add(Changed, "cost %s %s: removed", o.Kernel, o.Shape)
		}
	}

	switch sa, sb := a.Sanitizer, b.Sanitizer; {
	case sb == nil && sa != nil:
		add(Changed, "sanitizer: not run (was %s)", strings.Join(sa.Tools, ", "))
	case sb != nil:
		if sa == nil {
			sa = &Sanitizer{}
		}
		was := map[string]int{}
		for _, f := range sa.Findings {
			was[f.key()]++
		}
		for _, f := range sb.Findings {
			if was[f.key()] > 0 {
				was[f.key()]--
				continue
			}
			add(Regression, "sanitizer: new finding %s", f)
		}
		for _, f := range sa.Findings { // what is left in was is gone
			if was[f.key()] > 0 {
				was[f.key()]--
				if slices.Contains(sb.Tools, f.Tool) {
					add(Improvement, "sanitizer: finding gone %s", f)
				} else {
					add(Changed, "sanitizer: %s not run, was %s", f.Tool, f)
				}
			}
		}
	}
}

func optSpread(xs []float64) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return spreadText(xs)
}

// nightlyMarkdown writes Markdown's tables of the nightly's sections, each
// only when the report has it.
func nightlyMarkdown(b *strings.Builder, r *Report) {
	if len(r.Benchmarks) > 0 {
		b.WriteString("\n## Benchmarks\n\nBandwidth over copy bandwidth (median, range over repetitions); torch's time over the kernel's.\n\n")
		table(b, []string{"Kernel", "Shape", "Bandwidth / copy", "Torch eager", "torch.compile"}, func(yield func([]string)) {
			for _, m := range r.Benchmarks {
				yield([]string{code(m.Kernel), m.Shape, spreadText(m.CopyRatio), medianText(m.TorchEagerRatio), medianText(m.TorchCompileRatio)})
			}
		})
	}
	if len(r.Coverage) > 0 {
		b.WriteString("\n## Branch coverage\n\n")
		table(b, []string{"Kernel", "Branch directions", "Blocks", "Uncovered"}, func(yield func([]string)) {
			for _, c := range r.Coverage {
				var un []string
				for _, u := range c.Uncovered {
					un = append(un, u.String())
				}
				yield([]string{code(c.Kernel), fmt.Sprintf("%d/%d (%s)", c.Covered, c.Branches, percent(c.Fraction())),
					fmt.Sprintf("%d/%d", c.BlocksCovered, c.Blocks), strings.Join(un, "; ")})
			}
		})
	}
	if len(r.Costs) > 0 {
		b.WriteString("\n## Emulator costs\n\n")
		table(b, []string{"Kernel", "Shape", "Elements", "Instructions / element", "Bytes / element"}, func(yield func([]string)) {
			for _, c := range r.Costs {
				yield([]string{code(c.Kernel), c.Shape, fmt.Sprint(c.Elements), fmt.Sprintf("%.4g", c.InstructionsPerElement), fmt.Sprintf("%.4g", c.BytesPerElement)})
			}
		})
	}
	if s := r.Sanitizer; s != nil {
		fmt.Fprintf(b, "\n## Sanitizer\n\nTools: %s. %d %s.\n\n", strings.Join(s.Tools, ", "), len(s.Findings), plural(len(s.Findings), "finding", "findings"))
		if len(s.Findings) > 0 {
			table(b, []string{"Tool", "Kernel", "PTX line", "Kind", "Message"}, func(yield func([]string)) {
				for _, f := range s.Findings {
					line := ""
					if f.PTXLine > 0 {
						line = fmt.Sprint(f.PTXLine)
					}
					yield([]string{f.Tool, code(f.Kernel), line, f.Kind, f.Message})
				}
			})
		}
	}
}

func medianText(xs []float64) string {
	if len(xs) == 0 {
		return ""
	}
	return fmt.Sprintf("%.3g×", Median(xs))
}
