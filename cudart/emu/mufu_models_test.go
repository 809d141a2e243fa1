package emu

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/internal/mufutab"
)

// mufuSample reads testdata/h200/mufu_sample.txt: 4096 inputs (specials,
// then a fixed pseudo-random sample) and what an H200 computed for each
// approximate instruction (scripts/mufuprobe, k_sample).
func mufuSample(t *testing.T) (in []uint32, out [][14]uint32) {
	t.Helper()
	f, err := os.Open("testdata/h200/mufu_sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fs := strings.Fields(sc.Text())
		if len(fs) != 15 {
			t.Fatalf("mufu_sample.txt: %d fields, want 15", len(fs))
		}
		var row [14]uint32
		for i, s := range fs {
			u, err := strconv.ParseUint(s, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				in = append(in, uint32(u))
			} else {
				row[i-1] = uint32(u)
			}
		}
		out = append(out, row)
	}
	if len(in) != 4096 {
		t.Fatalf("%d rows, want 4096", len(in))
	}
	return in, out
}

// TestMufuMatchesH200 runs each modelled approximate instruction as PTX on
// the emulator over the recorded inputs and wants the H200's bits.
func TestMufuMatchesH200(t *testing.T) {
	in, want := mufuSample(t)
	cols := []struct {
		col int
		op  string
	}{
		{0, "rsqrt.approx.f32"}, {1, "rsqrt.approx.ftz.f32"}, {2, "sqrt.approx.f32"}, {3, "sqrt.approx.ftz.f32"},
		{4, "ex2.approx.f32"}, {5, "ex2.approx.ftz.f32"}, {6, "lg2.approx.f32"}, {7, "lg2.approx.ftz.f32"}, {8, "sin.approx.f32"}, {9, "sin.approx.ftz.f32"},
		{10, "cos.approx.f32"}, {11, "cos.approx.ftz.f32"}, {12, "tanh.approx.f32"},
	}
	inputs := make([][3]uint64, len(in))
	for i, u := range in {
		inputs[i] = [3]uint64{uint64(u), 0, 0}
	}
	run := func(body string) []uint64 {
		var got []uint64
		for lo := 0; lo < len(inputs); lo += 512 {
			got = append(got, runInst(t, body, inputs[lo:min(lo+512, len(inputs))])...)
		}
		return got
	}
	for _, c := range cols {
		got := run(`
	cvt.u32.u64 %r1, %rd4;
	mov.b32 %f1, %r1;
	` + c.op + ` %f3, %f1;
	mov.b32 %r3, %f3;
	cvt.u64.u32 %rd7, %r3;`)
		bad := 0
		for i, g := range got {
			if uint32(g) != want[i][c.col] {
				if bad++; bad <= 5 {
					t.Errorf("%s(%08x) = %08x, the H200 gives %08x", c.op, in[i], uint32(g), want[i][c.col])
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d differ from the H200", c.op, bad, len(in))
		}
	}
	// rcp.approx.ftz.f64 on the double whose high word is the input and
	// whose low word is input·2654435761: the H200's high word, low word 0.
	for i := range inputs {
		inputs[i][0] = uint64(in[i])<<32 | uint64(in[i]*2654435761)
	}
	got := run(`
	mov.b64 %fd1, %rd4;
	rcp.approx.ftz.f64 %fd3, %fd1;
	mov.b64 %rd7, %fd3;`)
	bad := 0
	for i, g := range got {
		if g != uint64(want[i][13])<<32 {
			if bad++; bad <= 5 {
				t.Errorf("rcp.approx.ftz.f64(%016x) = %016x, the H200 gives %08x_00000000", inputs[i][0], g, want[i][13])
			}
		}
	}
}

// TestMufuTablesWithinBounds checks every entry of each measured table
// against the PTX ISA's documented bound for its instruction, so that a
// corrupt table cannot pass as a model: rsqrt 2^−22.9 relative, sqrt
// 2^−23 relative, ex2 2 ulp from the correctly rounded result, lg2 2^−22
// absolute, sin/cos 2^−20.5 absolute (|x| ≤ 2π, all of
// one revolution), rcp.f64's high word within 1 of the rounded one, tanh
// 2^−11 relative.
func TestMufuTablesWithinBounds(t *testing.T) {
	for _, name := range []string{mufutab.Rsqrt, mufutab.Sqrt, mufutab.Ex2, mufutab.Lg2, mufutab.Sin, mufutab.Cos, mufutab.Rcp64, mufutab.Tanh} {
		tab, err := mufuTable(name)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for k, v := range tab {
			var exact, got, err float64
			got = float64(math.Float32frombits(v))
			switch name {
			case mufutab.Rsqrt, mufutab.Sqrt:
				x := float64(math.Float32frombits((127+uint32(k)>>23)<<23 | uint32(k)&0x7FFFFF))
				exact = math.Sqrt(x)
				if name == mufutab.Rsqrt {
					exact = 1 / exact
				}
				err = math.Abs(got-exact) / exact / math.Exp2(-22.9)
				if name == mufutab.Sqrt {
					err = math.Abs(got-exact) / exact / 0x1p-23
				}
			case mufutab.Ex2:
				f := float64(k&0x7FFFFF) / (1 << 23)
				if k>>23 != 0 {
					f = -f
				}
				exact = math.Exp2(f)
				// "2 ulp from the correctly rounded result" (approx.go approxBound).
				err = math.Abs(float64(int64(v)-int64(math.Float32bits(float32(exact))))) / 2
			case mufutab.Lg2:
				// 2^−22 absolute for x in (0.5, 2).
				x := float64(math.Float32frombits((126+uint32(k)>>23)<<23 | uint32(k)&0x7FFFFF))
				exact = math.Log2(x)
				err = math.Abs(got-exact) / 0x1p-22
			case mufutab.Sin, mufutab.Cos:
				a := 2 * math.Pi * float64(k) / (1 << 25)
				exact = math.Sin(a)
				if name == mufutab.Cos {
					exact = math.Cos(a)
				}
				err = math.Abs(got-exact) / math.Exp2(-20.5)
			case mufutab.Rcp64:
				d := int64(v) - int64(mufutab.Ref(name, uint32(k)))
				err = math.Abs(float64(d))
			case mufutab.Tanh:
				// 2^−11 relative, for every input of the key: tanh is
				// increasing, so the interval's ends are the worst.
				first, last := mufutab.TanhInputs(uint32(k))
				for _, x := range []uint32{first, last} {
					exact = math.Tanh(float64(math.Float32frombits(x)))
					err = math.Max(err, math.Abs(got-exact)/exact/0x1p-11)
				}
			}
			worst = math.Max(worst, err)
			if err > 1 {
				t.Fatalf("%s entry %d: %08x is %.3g of the documented bound from %.17g", name, k, v, err, exact)
			}
		}
		t.Logf("%s: worst entry at %.3f of the documented bound", name, worst)
	}
}

// TestMufuTableDigestGuards shows that a table which decodes to other
// entries is refused: one flipped byte of the stream.
func TestMufuTableDigestGuards(t *testing.T) {
	tab, err := mufuTable(mufutab.Rcp64)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]uint32(nil), tab...)
	bad[12345]++
	gz, err := mufutab.Encode(mufutab.Rcp64, bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mufutab.Decode(mufutab.Rcp64, gz, mufuDigests[mufutab.Rcp64]); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("a changed entry decoded: %v", err)
	}
}
