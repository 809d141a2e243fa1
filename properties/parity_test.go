package properties

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

func init() {
	Register(Prediction{ID: "TEST-PARITY-NOTE", Title: "harness self-test (parity note)", Statement: "bits agree"})
}

// listed is an implementation that lists one kernel.
type listed struct{ k *kernels.Kernel }

func (l listed) Kernels() []*kernels.Kernel { return []*kernels.Kernel{l.k} }

// A parity mismatch names the approximate instructions of the kernel's
// entry that the emulator does not model bit for bit (the .f64 rsqrt,
// whose bound is not documented), and not those it does (rsqrt.approx,
// div.full, tanh.approx, ex2.approx.f16) or those of other entries.
func TestParityNamesApproximations(t *testing.T) {
	src := []byte(`.version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .f32 %f<4>;
	.reg .b16 %h<2>;
	.reg .f64 %fd<3>;
	rsqrt.approx.f32 %f1, %f0;
	div.full.f32 %f2, %f1, %f0;
	tanh.approx.f32 %f3, %f2;
	ex2.approx.f16 %h1, %h0;
	rsqrt.approx.f64 %fd1, %fd0;
	rsqrt.approx.ftz.f64 %fd2, %fd1;
	ret;
}
.visible .entry other(.param .u64 p)
{
	.reg .f32 %f<2>;
	sin.approx.f32 %f1, %f0;
	ret;
}
`)
	note := unmodelled(listed{&kernels.Kernel{Name: "k", Entry: "k", PTX: src}})
	for _, want := range []string{"rsqrt.approx.f64 (PTX line 13, k;", "rsqrt.approx.ftz.f64 (PTX line 14, k;"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	for _, not := range []string{"div.full", "sin.approx", "rsqrt.approx.f32", "tanh.approx", "ex2.approx"} {
		if strings.Contains(note, not) {
			t.Errorf("note %q names %s", note, not)
		}
	}
	if unmodelled(struct{}{}) != "" {
		t.Error("a note for an implementation that lists no kernels")
	}
	// A bound kernel names its entries through EntrySources instead.
	if got := unmodelled(sources{[]string{"k"}, [][]byte{src}}); got != note {
		t.Errorf("note from EntrySources %q, want %q", got, note)
	}
	// The note ends the failure message the report keeps.
	noFailFile(t)
	rec := &outcome.Recorder{}
	RunQuiet("TestParityNote", Config{Recorder: rec}, func(tb TB) {
		Check(tb, "TEST-PARITY-NOTE", func(rt *rapid.T, o *Obs) {
			o.note = func() string { return note }
			o.Identical("emulator vs gpu", []float32{1}, []float32{2})
		})
	})
	if o := rec.Outcomes()["TEST-PARITY-NOTE"]; o.Status != outcome.Falsified || !strings.HasSuffix(o.Reason, note) {
		t.Errorf("outcome %s, reason %q: want falsified, ending with the note", o.Status, o.Reason)
	}
}

// sources names entries as a bound kernel does.
type sources struct {
	entries []string
	ptx     [][]byte
}

func (s sources) EntrySources() ([]string, [][]byte) { return s.entries, s.ptx }

// A parity failure names an element by its output and place in it, in
// the order op.ByRow lays the outputs out: each row's row-wise outputs,
// then the column sums.
func TestByRowElementNamesTheOutput(t *testing.T) {
	fwd := &op.RMSNormForwardArgs{Rows: 2, Hidden: 2, Y: make([]float32, 4), RMS: make([]float32, 2)}
	bwd := &op.RMSNormBackwardArgs{Rows: 2, Hidden: 3, DX: make([]float32, 6), DGamma: make([]float32, 3)}
	for _, c := range []struct{ got, want string }{
		{byRowElement(op.RMSNormForward, fwd, 1), "y[row 0, col 1]"},
		{byRowElement(op.RMSNormForward, fwd, 2), "rms[row 0]"},
		{byRowElement(op.RMSNormForward, fwd, 3), "y[row 1, col 0]"},
		{byRowElement(op.RMSNormForward, fwd, 5), "rms[row 1]"},
		{byRowElement(op.RMSNormForward, &op.RMSNormForwardArgs{Rows: 2, Hidden: 2, Y: make([]float32, 4)}, 2), "y[row 1, col 0]"},
		{byRowElement(op.RMSNormBackward, bwd, 5), "dx[row 1, col 2]"},
		{byRowElement(op.RMSNormBackward, bwd, 7), "dgamma[1]"},
		{byRowElement(op.RMSNormBackward, bwd, 9), "output element 9"},
	} {
		if c.got != c.want {
			t.Errorf("named %q, want %q", c.got, c.want)
		}
	}
}
