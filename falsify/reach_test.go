package falsify

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// chunk-bound-baked differs from the original only where the chunk exceeds
// kernels.ChunkMinRows, past 2048 rows. Its killer's contract run kills it
// on the session's device, with a counterexample of more than 2048 rows
// (a shape that P-BRMS-BACK-001's "chunk>4" regime draws), and the same run
// with every row count capped at 64, regimes included, as falsify once
// capped them on the emulator, sees only outputs bit-identical to the
// original's: there it survives as an equivalent mutant.
func TestChunkBoundBakedNeedsLargeRows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: launches of over 2¹⁷ elements, beside the original's")
	}
	s := getSession(t)
	m, err := ParseMutant("chunk-bound-baked")
	if err != nil {
		t.Fatal(err)
	}
	step := kernels.ChunkMinRows * kernels.ChunkTargetBlocks
	run := func(s *Session) (outcome.Outcome, int) {
		t.Helper()
		tg, err := m.build()
		if err != nil {
			t.Fatal(err)
		}
		tr := s.tracer(tg.mutated, true)
		e := &env{orig: tg.orig, mut: tg.mut, tr: tr}
		p := tg.probes[0]
		if p.id != properties.BRMSBack {
			t.Fatalf("first probe %s (%s), want %s", p.id, p.name, properties.BRMSBack)
		}
		pr, o := s.probe(m, p, e, 0)
		_, _, differing, _, _ := tr.snapshot()
		t.Logf("rows capped at %d, everyday rows at %d (0: none): %s after %d checks in %v",
			s.cfg.MaxRows, s.cfg.EverydayMaxRows, o.Status, o.Checks, pr.Duration.Round(time.Millisecond))
		return o, differing
	}

	capped := *s
	capped.cfg.MaxRows = 64
	o, differing := run(&capped)
	if o.Status != outcome.Discharged || differing != 0 {
		t.Errorf("rows capped at 64: %s after %d checks with %d calls differing from the original, want discharged with none (%s)",
			o.Status, o.Checks, differing, firstLine(o.Reason))
	}

	o, _ = run(s)
	if o.Status != outcome.Falsified {
		t.Fatalf("uncapped: %s after %d checks (%s), want falsified", o.Status, o.Checks, firstLine(o.Reason))
	}
	rows := -1
	for _, d := range o.Counterexample {
		if v, ok := strings.CutPrefix(d, "rows: "); ok {
			rows, _ = strconv.Atoi(v)
		}
	}
	if rows <= step {
		t.Errorf("killed with rows %d (counterexample %v), want more than %d", rows, o.Counterexample, step)
	}
	t.Logf("killed after %d checks: %s", o.Checks, strings.Join(o.Counterexample, "; "))
}
