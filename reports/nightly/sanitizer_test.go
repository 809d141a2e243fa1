package nightly

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/reports"
)

// The samples in testdata follow the record format compute-sanitizer's
// manual documents (a first line, indented detail lines, a host backtrace,
// a blank prefixed line), in both of its location forms: "at 0x70 in
// file.cu:6:kernel()" (before 2023) and "at kernel+0x70 in file:6".
func TestParseSanitizer(t *testing.T) {
	type want struct {
		kernel string
		line   int
		kind   string
		msg    string // a part of the message
	}
	cases := []struct {
		file, tool string
		want       []want
	}{
		{"memcheck-planted.txt", "memcheck", []want{{"planted_oob_write", 27, "Invalid __global__ write", "is 1 bytes after the nearest allocation"}}},
		{"memcheck-old.txt", "memcheck", []want{
			{"unaligned_kernel", 0, "Invalid __global__ write", "is misaligned"},
			{"rmsnorm_fwd", 0, "Invalid __global__ read", "at 0x70 in rmsnorm_fwd"},
			{"", 0, "CUDA_ERROR_INVALID_VALUE", "cuFuncGetParamInfo"},
		}},
		{"racecheck-planted.txt", "racecheck", []want{{"planted_smem_race", 52, "race write-read", "[248 hazards]"}}},
		{"racecheck-hazard.txt", "racecheck", []want{{"rmsnorm_bwd", 0, "WAR hazard on __shared__", "Write Thread (32, 0, 0)"}}},
		{"initcheck-clean.txt", "initcheck", nil},
		{"initcheck-findings.txt", "initcheck", []want{
			{"layernorm_bwd", 0, "Uninitialized __global__ memory read", "by thread (3,0,0)"},
			{"", 0, "Host API memory access error at host access to 0x7f3c00400000", "cuMemcpyDtoD source"},
		}},
		{"synccheck-findings.txt", "synccheck", []want{{"myKernel", 0, "Barrier error detected. Divergent thread(s) in warp", "by thread (32,0,0)"}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ParseSanitizer(f, c.tool)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				g := got[i]
				if g.Tool != c.tool || g.Kernel != w.kernel || g.PTXLine != w.line || g.Kind != w.kind || !strings.Contains(g.Message, w.msg) {
					t.Errorf("finding %d = %+v\nwant tool %s kernel %q line %d kind %q, message holding %q", i, g, c.tool, w.kernel, w.line, w.kind, w.msg)
				}
				if strings.Contains(g.Message, "Host Frame") {
					t.Errorf("finding %d holds the host backtrace: %q", i, g.Message)
				}
			}
			// The findings are valid in a report that ran the tool.
			r := reports.New(reports.Run{ID: "x", Backend: reports.BackendGPU})
			r.Sanitizer = &reports.Sanitizer{Tools: []string{c.tool}, Findings: got}
			for _, p := range r.Lint() {
				if strings.Contains(p, "sanitizer") {
					t.Errorf("lint: %s", p)
				}
			}
		})
	}
}

func TestParseSanitizerNoOutput(t *testing.T) {
	_, err := ParseSanitizer(strings.NewReader("=== RUN TestX\nPASS\n"), "memcheck")
	if err == nil || !strings.Contains(err.Error(), "no compute-sanitizer output") {
		t.Fatalf("err = %v, want no compute-sanitizer output", err)
	}
}

func TestLocation(t *testing.T) {
	for _, c := range []struct {
		in     string
		kernel string
		line   int
	}{
		{"0x70 in planted_oob_write", "planted_oob_write", 0},
		{"0x70 in planted.ptx:9:planted_oob_write", "planted_oob_write", 9},
		{"0x60 in x.cu:6:void k<float>(float*)", "k<float>", 0},
		{"planted_oob_write+0x70", "planted_oob_write", 0},
		{"kernel(int *)+0x70 in file.cu:6", "kernel", 0},
		{"planted_smem_race+0x70 in /tmp/p/planted.ptx:52", "planted_smem_race", 52},
		{"", "", 0},
	} {
		k, l := location(c.in)
		if k != c.kernel || l != c.line {
			t.Errorf("location(%q) = %q, %d; want %q, %d", c.in, k, l, c.kernel, c.line)
		}
	}
}
