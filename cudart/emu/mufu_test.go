package emu

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDivMatchesH200 runs div.full, div.full.ftz, div.approx and div.rn
// .f32 over the 23×23 grid of special operands measured on an H200
// (testdata/h200/div_specials.txt) and wants its results bit for bit.
func TestDivMatchesH200(t *testing.T) {
	f, err := os.Open("testdata/h200/div_specials.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var in [][3]uint64
	var want [][4]uint32
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		var v [6]uint32
		for i, s := range strings.Fields(sc.Text()) {
			u, err := strconv.ParseUint(s, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			v[i] = uint32(u)
		}
		in = append(in, [3]uint64{uint64(v[0]), uint64(v[1]), 0})
		want = append(want, [4]uint32{v[2], v[3], v[4], v[5]})
	}
	if len(in) != 529 {
		t.Fatalf("%d rows, want 529", len(in))
	}
	for k, op := range []string{"div.full.f32", "div.full.ftz.f32", "div.approx.f32", "div.rn.f32"} {
		body := `
	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	mov.b32 %f1, %r1;
	mov.b32 %f2, %r2;
	` + op + ` %f3, %f1, %f2;
	mov.b32 %r3, %f3;
	cvt.u64.u32 %rd7, %r3;`
		var got []uint64
		for lo := 0; lo < len(in); lo += 512 {
			got = append(got, runInst(t, body, in[lo:min(lo+512, len(in))])...)
		}
		bad := 0
		for i, g := range got {
			if uint32(g) != want[i][k] {
				if bad++; bad <= 5 {
					t.Errorf("%s(%08x, %08x) = %08x, the H200 gives %08x", op, in[i][0], in[i][1], uint32(g), want[i][k])
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d differ from the H200", op, bad, len(in))
		}
	}
}

// TestRcpApproxModel checks the measured reciprocal table against what the
// probe recorded (m = 0x5a9 is the first mantissa where MUFU.RCP is not
// correctly rounded: one below) and the documented bounds: rcp.approx.f32
// within 1 ulp of the correctly rounded reciprocal, div.full.f32 within 2
// ulp of the correctly rounded quotient for 2^−126 ≤ |y| ≤ 2^126.
func TestRcpApproxModel(t *testing.T) {
	delta, err := rcpTable()
	if err != nil {
		t.Fatal(err)
	}
	if g := mufuRcp(delta, 0x3F800000|0x5A9); g != 0x3F7FF4AE {
		t.Errorf("MUFU.RCP(1.m), m = 0x5a9: %08x, want 3f7ff4ae", g)
	}
	if g := mufuRcp(delta, 0x3F800000); g != 0x3F800000 {
		t.Errorf("MUFU.RCP(1) = %08x", g)
	}
	var counts [3]int
	for _, d := range delta {
		counts[d+1]++
	}
	if counts != [3]int{374723, 7280086, 733799} {
		t.Errorf("corrections −1/0/+1: %v", counts)
	}
	rcp, rcpFTZ, div := sm90Rcp(delta, false), sm90Rcp(delta, true), sm90Div(delta, true, false)
	r := rand.New(rand.NewPCG(7, 8))
	ulps := func(g uint32, want float64) float64 {
		w := float32(want)
		return math.Abs(float64(math.Float32frombits(g))-float64(w)) / ulp32(w)
	}
	worst := 0.0
	for i := 0; i < 200000; i++ {
		y := r.Uint32()
		yf := math.Float32frombits(y)
		if e := y >> 23 & 0xFF; e == 0xFF || e == 0 {
			continue
		}
		w := 1 / float64(yf)
		if math.Abs(w) < 0x1p-126 || math.IsInf(float64(float32(w)), 0) {
			continue
		}
		if u := ulps(uint32(rcp(uint64(y))), w); u > 1 {
			t.Fatalf("rcp.approx.f32(%08x) is %g ulp from 1/y", y, u)
		}
		if u := ulps(uint32(rcpFTZ(uint64(y))), w); u > 1 {
			t.Fatalf("rcp.approx.ftz.f32(%08x) is %g ulp from 1/y", y, u)
		}
		x := r.Uint32()
		xf := math.Float32frombits(x)
		q := float64(xf) / float64(yf)
		if x>>23&0xFF == 0xFF || math.Abs(float64(yf)) > 0x1p126 || math.Abs(q) < 0x1p-126 || math.IsInf(float64(float32(q)), 0) {
			continue
		}
		u := ulps(uint32(div(uint64(x), uint64(y))), q)
		if u > 2 {
			t.Fatalf("div.full.f32(%08x, %08x) is %g ulp from x/y", x, y, u)
		}
		worst = max(worst, u)
	}
	if worst == 0 {
		t.Errorf("div.full.f32 gave the correctly rounded quotient every time")
	}
}

// TestDivExamplesMatchH200 runs the operand pairs on which candidate models
// disagreed in the H200 probe (testdata/h200/div_examples.txt), wanting the
// H200's result for each form.
func TestDivExamplesMatchH200(t *testing.T) {
	b, err := os.ReadFile("testdata/h200/div_examples.txt")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ x, y, want uint32 }
	forms := map[string][]row{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || strings.HasPrefix(l, "#") {
			continue
		}
		var v [3]uint32
		for i, s := range f[1:] {
			u, err := strconv.ParseUint(s, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			v[i] = uint32(u)
		}
		forms[f[0]] = append(forms[f[0]], row{v[0], v[1], v[2]})
	}
	if len(forms) != 5 {
		t.Fatalf("forms %v", forms)
	}
	for op, rows := range forms {
		inst := op + " %f3, %f1, %f2;"
		if strings.HasPrefix(op, "rcp") {
			inst = op + " %f3, %f2;"
		}
		body := `
	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	mov.b32 %f1, %r1;
	mov.b32 %f2, %r2;
	` + inst + `
	mov.b32 %r3, %f3;
	cvt.u64.u32 %rd7, %r3;`
		in := make([][3]uint64, len(rows))
		for i, r := range rows {
			in[i] = [3]uint64{uint64(r.x), uint64(r.y), 0}
		}
		for i, g := range runInst(t, body, in) {
			if r := rows[i]; uint32(g) != r.want {
				t.Errorf("%s(%08x, %08x) = %08x, the H200 gives %08x", op, r.x, r.y, uint32(g), r.want)
			}
		}
	}
}

// TestApproximations lists the approximate instructions of a module with
// their lines, bounds and whether the emulator reproduces sm_90.
func TestApproximations(t *testing.T) {
	src, err := os.ReadFile("testdata/arith.ptx")
	if err != nil {
		t.Fatal(err)
	}
	as, err := Approximations(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, fmt.Sprintf("%s:%d:%s:%v", a.Function, a.Line, a.Inst, a.Modelled))
	}
	want := []string{"approx_ops:783:sin.approx.f32:true", "approx_ops:785:cos.approx.f32:true", "approx_ops:787:ex2.approx.f32:true",
		"approx_ops:790:lg2.approx.f32:true", "approx_ops:792:rsqrt.approx.f32:true", "approx_ops:794:div.approx.f32:true",
		"approx_ops:797:rcp.approx.f32:true", "approx_ops:801:sqrt.approx.f32:true"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("approximations\n got %v\nwant %v", got, want)
	}
	if s := as[3].String(); s != "lg2.approx.f32 (PTX line 790, approx_ops; error within 2^-22 absolute for x in (0.5, 2), 2^-22 relative elsewhere; emulated as sm_90 computes it)" {
		t.Errorf("String() = %q", s)
	}
	// Correctly rounded modules have none.
	src, err = os.ReadFile("testdata/foreign/row_sum.ptx")
	if err != nil {
		t.Fatal(err)
	}
	if as, err := Approximations(src); err != nil || len(as) != 0 {
		t.Errorf("row_sum: %v, %v", as, err)
	}
	if _, err := Approximations([]byte("not ptx")); err == nil {
		t.Errorf("a module that does not parse gave no error")
	}
}
