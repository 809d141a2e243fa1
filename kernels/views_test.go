package kernels

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// allocSpy records the offset of every view a call allocates.
type allocSpy struct {
	cudart.Device
	offs []int
}

func (a *allocSpy) AllocAt(k cudart.Kind, n, off int) (cudart.Buffer, error) {
	a.offs = append(a.offs, off)
	return a.Device.AllocAt(k, n, off)
}

// A tensor given an offset in the arguments reaches the kernel as a view
// at that offset, and the results stay within the oracle's bound (the
// kernel takes its scalar path for the misaligned tensor).
func TestOffsetsReachKernel(t *testing.T) {
	dev := openDevice(t)
	s := op.Shape{Rows: 3, Hidden: 64}
	r := rng(s, 11)
	x, g, be := normals(r, s.Rows, s.Hidden, 0), uniform(r, s.Hidden, 0.5, 1.5), uniform(r, s.Hidden, -1, 1)
	for i, tn := range op.LayerNormForward.Tensors() {
		off := 1 + i%op.MaxOffset
		a := &op.LayerNormForwardArgs{Rows: s.Rows, Hidden: s.Hidden, Eps: 1e-5, X: x, Gamma: g, Beta: be,
			Y: make([]float32, s.Rows*s.Hidden), Mean: make([]float32, s.Rows), Rstd: make([]float32, s.Rows),
			Offsets: op.Offsets{tn.Name: off}}
		spy := &allocSpy{Device: dev}
		if err := LayerNormFwd.LayerNormForward(spy, a); err != nil {
			t.Fatalf("%s at %d: %v", tn.Name, off, err)
		}
		want := make([]int, len(op.LayerNormForward.Tensors()))
		want[i] = off
		if fmt.Sprint(spy.offs) != fmt.Sprint(want) {
			t.Errorf("%s at %d: views allocated at %v, want %v", tn.Name, off, spy.offs, want)
		}
		wy, wm, wr := refLayerNorm(x, g, be, 1e-5, s.Rows, s.Hidden, kLayerNormFwdStats.Reductions(s)[0])
		c := checker{t, fmt.Sprintf("layernorm_fwd_stats %v %s at %d", s, tn.Name, off)}
		c.within("y", a.Y, wy)
		c.within("mean", a.Mean, wm)
		c.within("rstd", a.Rstd, wr)
	}
}

func TestOffsetsChecked(t *testing.T) {
	dev := openDevice(t)
	a := &op.SoftmaxForwardArgs{Rows: 1, Hidden: 4, X: make([]float32, 4), Y: make([]float32, 4),
		Offsets: op.Offsets{"x": op.MaxOffset + 1, "z": 1}}
	err := SoftmaxFwd.SoftmaxForward(dev, a)
	for _, want := range []string{"offset of x=4, want 0..3", `offset of "z"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
}

// beforePTX stores one float just before its argument's first element.
const beforePTX = `.version 7.0
.target sm_70
.address_size 64
.visible .entry before(.param .u64 y) {
	.reg .b64 %rd<3>;
	.reg .f32 %f<2>;
	ld.param.u64 %rd1, [y];
	cvta.to.global.u64 %rd2, %rd1;
	mov.f32 %f1, 0f3F800000;
	st.global.f32 [%rd2+-4], %f1;
	ret;
}
`

// On the device, as on cudart's test backends, a store into the slack
// before a view is outside its buffer, not a write into the allocation.
func TestStoreBeforeView(t *testing.T) {
	dev := openDevice(t)
	m, err := dev.Load("before", []byte(beforePTX))
	if err != nil {
		t.Fatal(err)
	}
	for off := 1; off <= op.MaxOffset; off++ {
		y, err := dev.AllocAt(cudart.F32, 4, off)
		if err != nil {
			t.Fatal(err)
		}
		err = dev.Launch(m, "before", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, cudart.InOut(y))
		if err == nil || !(errors.Is(err, cudart.ErrGuardBand) || strings.Contains(err.Error(), "guard band before")) {
			t.Errorf("offset %d: store before the view: err = %v, want it caught in the guard band before the buffer", off, err)
		}
		dev.Free(y)
	}
}
