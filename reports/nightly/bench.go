package nightly

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ptxprop/ptxprop/reports"
)

// BenchRun is one timing of one benchmark case at one shape: a line of
// go test -bench output of package kernels' BenchmarkKernels.
type BenchRun struct {
	Case         string  // e.g. "RMSNormFwd"
	Rows, Hidden int     // the shape
	DevMicros    float64 // device µs per launch (dev-µs/op)
	CopyRatio    float64 // bandwidth over copy bandwidth (xcopy); 0 when not measured
}

// benchLine matches "BenchmarkKernels/RMSNormFwd/4096x896-16  50  123 ns/op  12.3 dev-µs/op ..."
// (the -N GOMAXPROCS suffix is absent at GOMAXPROCS=1).
var benchLine = regexp.MustCompile(`^BenchmarkKernels/([^/\s]+)/(\d+)x(\d+)(?:-\d+)?\s+\d+\s+(.*)$`)

// ParseBench reads go test -bench output and returns the BenchmarkKernels
// timings in order; -test.count=N gives N per case and shape, the
// repetitions whose spread travels with each ratio.
func ParseBench(r io.Reader) ([]BenchRun, error) {
	var out []BenchRun
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		b := BenchRun{Case: m[1]}
		b.Rows, _ = strconv.Atoi(m[2])
		b.Hidden, _ = strconv.Atoi(m[3])
		f := strings.Fields(m[4])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("nightly: bench line %q: value %q: %v", sc.Text(), f[i], err)
			}
			switch f[i+1] {
			case "dev-µs/op":
				b.DevMicros = v
			case "xcopy":
				b.CopyRatio = v
			}
		}
		if b.DevMicros <= 0 {
			return nil, fmt.Errorf("nightly: bench line %q has no dev-µs/op", sc.Text())
		}
		out = append(out, b)
	}
	return out, sc.Err()
}

// TorchTiming is torch's time for one benchmark case at one shape, as
// scripts/torch_baseline.py --kernels writes it (one JSON object a line):
// the microseconds of each repetition, eager and under torch.compile.
// Error says why the case could not be timed (then the lists are empty).
type TorchTiming struct {
	Case          string    `json:"case"`
	Rows          int       `json:"rows"`
	Hidden        int       `json:"hidden"`
	EagerMicros   []float64 `json:"eager_us"`
	CompileMicros []float64 `json:"compile_us"`
	Error         string    `json:"error,omitempty"`
}

// ParseTorch reads the JSON lines of scripts/torch_baseline.py --kernels;
// lines that are not JSON objects (torch's own messages) are skipped.
func ParseTorch(r io.Reader) ([]TorchTiming, error) {
	var out []TorchTiming
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var t TorchTiming
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, fmt.Errorf("nightly: torch line %q: %v", line, err)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

// Benchmarks joins the kernel timings and torch's into the report's
// benchmarks, one per case and shape in the order first timed: the copy
// ratio of every repetition, and per repetition i torch's time over the
// kernel's (repetition i of each, as many as both have). A case without a
// copy ratio (the copy bandwidth was not measured) is left out and named
// in the notes it returns.
func Benchmarks(runs []BenchRun, torch []TorchTiming) (out []reports.Benchmark, notes []string) {
	type key struct {
		c    string
		r, h int
	}
	var order []key
	by := map[key][]BenchRun{}
	for _, b := range runs {
		k := key{b.Case, b.Rows, b.Hidden}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], b)
	}
	tt := map[key]TorchTiming{}
	for _, t := range torch {
		tt[key{t.Case, t.Rows, t.Hidden}] = t
	}
	for _, k := range order {
		bm := reports.Benchmark{Kernel: k.c, Shape: fmt.Sprintf("rows=%d hidden=%d", k.r, k.h), Size: k.h}
		var us []float64
		for _, b := range by[k] {
			if b.CopyRatio > 0 {
				bm.CopyRatio = append(bm.CopyRatio, b.CopyRatio)
			}
			us = append(us, b.DevMicros)
		}
		if len(bm.CopyRatio) == 0 {
			notes = append(notes, fmt.Sprintf("bench %s %s: no copy bandwidth ratio (copy bandwidth not measured): left out", bm.Kernel, bm.Shape))
			continue
		}
		if t, ok := tt[k]; ok {
			bm.TorchEagerRatio = ratios(t.EagerMicros, us)
			bm.TorchCompileRatio = ratios(t.CompileMicros, us)
			if t.Error != "" {
				notes = append(notes, fmt.Sprintf("bench %s %s: torch: %s", bm.Kernel, bm.Shape, t.Error))
			}
		}
		out = append(out, bm)
	}
	return out, notes
}

// ratios is num[i]/den[i] for each repetition both have.
func ratios(num, den []float64) []float64 {
	var out []float64
	for i := range min(len(num), len(den)) {
		if num[i] > 0 && den[i] > 0 {
			out = append(out, num[i]/den[i])
		}
	}
	return slices.Clip(out)
}
