package binding

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// TestShapeFaultsAtLoad: a binding error that shows only at some shapes is
// found by Load's probe, named by the file and the line of the field at
// fault, and wraps ErrInvalid (ptxprop verify exits 2 on it, before
// anything is launched). Each of these loaded when only the smallest shape
// was probed.
func TestShapeFaultsAtLoad(t *testing.T) {
	cases := []struct {
		file string
		want string
	}{
		{"scratch_div7.yaml", "testdata/faults/scratch_div7.yaml:9: scratch tmp size at rows=1 hidden=7: division by zero at column 15"},
		{"grid_negative.yaml", "testdata/faults/grid_negative.yaml:9: rmsnorm_fwd_rms at rows=1 hidden=3: impossible launch: grid.x = 0, want at least 1"},
		{"scratch_huge.yaml", "testdata/faults/scratch_huge.yaml:9: scratch big has 4913000 elements at rows=1 hidden=17, want 1..4194304"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			start := time.Now()
			_, err := Load(filepath.Join("testdata", "faults", c.file))
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Load took %v, want well under 2s", d)
			}
			if err == nil {
				t.Fatalf("loaded; want %s", c.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\ndoes not contain\n%s", err, c.want)
			}
		})
	}
}

// TestExprOverflow: arithmetic that leaves int64 is an error naming the
// operator's column, never a wrapped size.
func TestExprOverflow(t *testing.T) {
	env := func(n string) (int64, error) { return 1 << 40, nil }
	for _, src := range []string{"hidden * hidden", "hidden * hidden * -hidden", "-(hidden * 8388607) - hidden * 8388609",
		"cdiv(hidden * 8388607 + hidden * 8388607, 2)", "9223372036854775807 + hidden"} {
		e, err := parseExpr(src, false)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.eval(env)
		if err == nil || !strings.Contains(err.Error(), "integer overflow at column") {
			t.Errorf("%s = %d, %v; want an integer overflow", src, v, err)
		}
	}
	e, _ := parseExpr("hidden * 4096 - 1", false)
	if v, err := e.eval(env); err != nil || v != 1<<52-1 {
		t.Errorf("hidden * 4096 - 1 = %d, %v", v, err)
	}
}

// allocSpy is a device on which nothing may happen: run must refuse an
// oversized scratch before it allocates anything.
type allocSpy struct {
	cudart.Device
	t *testing.T
}

func (a allocSpy) Alloc(k cudart.Kind, n int) (cudart.Buffer, error) {
	a.t.Errorf("Alloc(%v, %d) before the binding error", k, n)
	return cudart.Buffer{}, errors.New("no allocation expected")
}

// TestHugeScratchBeforeAlloc: at a shape the probe did not reach, a scratch
// over the cap is a binding error before the first allocation.
func TestHugeScratchBeforeAlloc(t *testing.T) {
	b, err := Load("testdata/rmsnorm_fwd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A scratch the load-time probe never saw, as for a shape beyond it.
	size, err := parseExpr("hidden * hidden * hidden * 1000", false)
	if err != nil {
		t.Fatal(err)
	}
	b.scratch = append(b.scratch, &scratchBuf{name: "big", kind: cudart.F32, size: size, line: 99})
	start := time.Now()
	err = b.launch(allocSpy{t: t}, &op.RMSNormForwardArgs{Rows: 1, Hidden: 1024,
		X: make([]float32, 1024), Gamma: make([]float32, 1024), Y: make([]float32, 1024)})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v, want well under 2s", d)
	}
	want := "testdata/rmsnorm_fwd.yaml:99: scratch big has 1073741824000 elements at rows=1 hidden=1024, want 1..4194304"
	if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s wrapping ErrInvalid", err, want)
	}
}

// TestShapeFaultAtRunIsError: a binding error met at a drawn shape (one no
// load-time probe reached) ends its predictions with the status error,
// never falsified, with the file:line in the reason, and Verify returns it
// wrapping ErrInvalid (exit 2).
func TestShapeFaultAtRunIsError(t *testing.T) {
	b, err := Load("testdata/rmsnorm_fwd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The probe would refuse this scratch at load; set after it, it stands
	// for a fault at shapes beyond the probe's spread: a division by zero
	// at every even hidden.
	size, err := parseExpr("rows * hidden / (hidden % 2)", false)
	if err != nil {
		t.Fatal(err)
	}
	b.scratch = append(b.scratch, &scratchBuf{name: "tmp", kind: cudart.F32, size: size, line: 99})
	c := suite.Default()
	c.Backend, c.Progress, c.Summary, c.Seed = "emu", 0, false, 7
	c.Report = filepath.Join(t.TempDir(), "report.json")
	rep, err := verify(context.Background(), c, []string{b.Path}, []*Binding{b})
	const where = "testdata/rmsnorm_fwd.yaml:99: scratch tmp size at rows="
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "division by zero at column 15") {
		t.Errorf("Verify: %v; want the binding error at %s… wrapping ErrInvalid", err, where)
	}
	if rep == nil {
		t.Fatal("no report")
	}
	for _, p := range rep.Predictions {
		t.Logf("%s: %s %s", p.ID, p.Status, p.Reason)
	}
	errored := 0
	for _, p := range rep.Predictions {
		switch p.Status {
		case reports.Falsified:
			t.Errorf("%s: falsified (%s); a binding error is an error", p.ID, p.Reason)
		case reports.Error:
			errored++
			if !strings.Contains(p.Reason, where) {
				t.Errorf("%s: error (%s); want the reason at %s…", p.ID, p.Reason, where)
			}
		}
	}
	if errored == 0 {
		t.Errorf("no prediction ended with the status error")
	}
}
