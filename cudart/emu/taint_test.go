package emu

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// traced runs entry of testdata/taint.ptx on x (one block of len(x)
// threads) under a trace and returns the sources of each element of y.
func traced(t *testing.T, e *env, entry string, x []float32, params ...cudart.Param) [][]cudart.Source {
	t.Helper()
	tr := cudart.NewTrace()
	if _, err := tr.Input(x); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	out, err := tr.Output(y)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.dev.Trace(tr); err != nil {
		t.Fatal(err)
	}
	defer e.dev.Trace(nil)
	xb, yb := e.buf(cudart.F32, len(x)), e.buf(cudart.F32, len(x))
	if err := e.dev.Write(xb, x); err != nil {
		t.Fatal(err)
	}
	e.mustLaunch(entry, 1, len(x), append([]cudart.Param{cudart.In(xb), cudart.Out(yb)}, params...)...)
	e.read(y, yb)
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	got, ok := tr.Sources(out)
	if !ok || !tr.Uploaded(0) {
		t.Fatalf("sources found %v, x uploaded %v", ok, tr.Uploaded(0))
	}
	return got
}

// Each y[i] is computed from x[i] alone, or also from x[i+1] when the
// kernel multiplies it by 0 and adds it (through shared memory): the value
// is the same, the dependence is not.
func TestTaintNeighbour(t *testing.T) {
	e := newEnv(t, "taint.ptx", Config{})
	x := make([]float32, 40)
	for i := range x {
		x[i] = float32(i + 1)
	}
	for _, nb := range []uint32{0, 1} {
		got := traced(t, e, "neighbour", x, cudart.ScalarU32(uint32(len(x))), cudart.ScalarU32(nb))
		for i, s := range got {
			want := []cudart.Source{{Tensor: 0, Index: int32(i)}}
			if j := (i + 1) % len(x); nb == 1 {
				want = append(want, cudart.Source{Tensor: 0, Index: int32(j)})
				if j < i {
					want[0], want[1] = want[1], want[0]
				}
			}
			if fmt.Sprint(s) != fmt.Sprint(want) {
				t.Fatalf("nb=%d: y[%d] from %v, want %v", nb, i, s, want)
			}
		}
	}
}

// A butterfly of shuffles gives every lane the whole warp's sources.
func TestTaintShuffle(t *testing.T) {
	e := newEnv(t, "taint.ptx", Config{})
	x := make([]float32, 32)
	got := traced(t, e, "warpsum", x)
	for i, s := range got {
		if len(s) != 32 || s[0] != (cudart.Source{Tensor: 0, Index: 0}) || s[31] != (cudart.Source{Tensor: 0, Index: 31}) {
			t.Fatalf("y[%d] from %v, want every x", i, s)
		}
	}
}

// Memory a launch wrote before the trace began is stale; memory the host
// wrote is a constant, with no source.
func TestTaintStale(t *testing.T) {
	e := newEnv(t, "taint.ptx", Config{})
	x := make([]float32, 32)
	xb, yb, zb := e.in(x), e.buf(cudart.F32, 32), e.buf(cudart.F32, 32)
	e.mustLaunch("warpsum", 1, 32, cudart.In(xb), cudart.Out(yb))
	tr := cudart.NewTrace()
	if err := e.dev.Trace(tr); err != nil {
		t.Fatal(err)
	}
	if err := e.dev.Write(zb, x); err != nil {
		t.Fatal(err)
	}
	if err := e.dev.Backend().(cudart.DependenceTracker).MarkSource(0, 4, 4, 0, 0); err == nil {
		t.Fatal("a mark outside every allocation was accepted")
	}
	stale, host := make([]float32, 32), make([]float32, 32)
	e.read(stale, yb)
	e.read(host, zb)
	tr.Output(stale)
	tr.Output(host)
	s, _ := tr.Sources(0)
	h, _ := tr.Sources(1)
	if len(s[3]) != 1 || s[3][0].Tensor != cudart.StaleSource || len(h[3]) != 0 {
		t.Fatalf("stale %v, host-written %v", s[3], h[3])
	}
	if err := e.dev.Trace(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Sources(0, 4, 4); !errors.Is(err, cudart.ErrInvalid) {
		t.Fatalf("sources with tracking off: %v", err)
	}
}

// ldmatrix and stmatrix move each 16-bit element's sources with it (at a
// register's grain: both halves of a word share theirs). Stored and loaded
// in the same form, word W of lane t comes back from word W of the input;
// stored plain and loaded .trans, from the two input words that held the
// transposed elements: element (m, row, col) of the output is element
// (m, col, row) of the input, in word 4·(4·row + col/2) + m.
func TestTaintMatrix(t *testing.T) {
	e := newEnv(t, "taint.ptx", Config{})
	word := func(m, row, col int) int32 { return int32(4*(4*row+col/2) + m) }
	for mode := uint32(0); mode < 3; mode++ {
		tr := cudart.NewTrace()
		in := make([]uint32, 128)
		if _, err := tr.Input(in); err != nil {
			t.Fatal(err)
		}
		if err := e.dev.Trace(tr); err != nil {
			t.Fatal(err)
		}
		out := e.buf(cudart.U32, len(in))
		e.mustLaunch("matrix", 1, 32, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarU32(mode))
		got := make([]uint32, len(in))
		e.read(got, out)
		k, _ := tr.Output(got)
		srcs, ok := tr.Sources(k)
		if err := e.dev.Trace(nil); err != nil || !ok || tr.Err() != nil {
			t.Fatalf("mode %d: sources found %v, %v, %v", mode, ok, err, tr.Err())
		}
		for w, s := range srcs {
			lane, m := w/4, w%4
			row, col := lane/4, 2*(lane%4)
			want := []cudart.Source{{Index: int32(w)}}
			if mode == 2 {
				a, b := word(m, col, row), word(m, col+1, row)
				want = []cudart.Source{{Index: min(a, b)}, {Index: max(a, b)}}
			}
			if fmt.Sprint(s) != fmt.Sprint(want) {
				t.Fatalf("mode %d: out word %d from %v, want %v", mode, w, s, want)
			}
		}
	}
}

// A host slice stored otherwise than as itself (rows padded to a stride of
// 3 here) is marked through TraceStored, and a host result computed from
// device elements (a column sum) gets their sources through TraceDerived;
// an element past the buffer is refused.
func TestTaintStoredDerived(t *testing.T) {
	e := newEnv(t, "taint.ptx", Config{})
	tr := cudart.NewTrace()
	x := []float32{1, 2, 3, 4} // 2 rows of 2, stored at a stride of 3
	if _, err := tr.Input(x); err != nil {
		t.Fatal(err)
	}
	sum := make([]float32, 2)
	k, _ := tr.Output(sum)
	if err := e.dev.Trace(tr); err != nil {
		t.Fatal(err)
	}
	defer e.dev.Trace(nil)
	b := e.buf(cudart.F32, 6)
	if err := e.dev.Write(b, []float32{1, 2, 0, 3, 4, 0}); err != nil {
		t.Fatal(err)
	}
	padded := func(i int) int { return i/2*3 + i%2 }
	if err := e.dev.TraceStored(b, 4, x, padded); err != nil || !tr.Uploaded(0) {
		t.Fatalf("trace stored: %v, uploaded %v", err, tr.Uploaded(0))
	}
	column := func(j int) []int { return []int{j, 3 + j} }
	if err := e.dev.TraceDerived(sum, b, 4, column); err != nil {
		t.Fatal(err)
	}
	got, ok := tr.Sources(k)
	want := "[[{0 0} {0 2}] [{0 1} {0 3}]]"
	if !ok || fmt.Sprint(got) != want {
		t.Fatalf("sum from %v (found %v), want %s", got, ok, want)
	}
	if err := e.dev.TraceStored(b, 4, x, func(i int) int { return 5 + i }); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("an element stored past the buffer: %v", err)
	}
	if err := e.dev.TraceDerived(sum, b, 4, func(int) []int { return []int{6} }); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("an element derived from past the buffer: %v", err)
	}
}
