package emu

import (
	"math/rand/v2"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// isaShfl is the PTX ISA's shfl.sync pseudocode written out bit by bit: a
// reference for shflSource.
func isaShfl(mode string, lane int, b, c uint32) (int, bool) {
	laneBits := uint32(lane) & 0x1F
	bval := b & 0x1F
	cval := c & 0x1F
	segMask := (c >> 8) & 0x1F
	maxLane := int((laneBits & segMask) | (cval &^ segMask))
	minLane := int(laneBits & segMask)
	var j int
	var pval bool
	switch mode {
	case "up":
		j = int(laneBits) - int(bval)
		pval = j >= maxLane
	case "down":
		j = int(laneBits) + int(bval)
		pval = j <= maxLane
	case "bfly":
		j = int(laneBits ^ bval)
		pval = j <= maxLane
	case "idx":
		j = minLane | int(bval&^segMask)
		pval = j <= maxLane
	}
	if !pval {
		j = lane
	}
	return j, pval
}

var shflModes = []string{"up", "down", "bfly", "idx"}

func TestShflSourceMatchesISA(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 20000; n++ {
		b := uint32(r.IntN(64))
		c := r.Uint32()
		if n%2 == 0 {
			c &= 0x1F1F // only the meaningful bits, so clamp and segment mask vary densely
		}
		for mi, mode := range shflModes {
			for lane := 0; lane < 32; lane++ {
				gj, gok := shflSource(wsShflUp+uint8(mi), lane, b, c)
				wj, wok := isaShfl(mode, lane, b, c)
				if gj != wj || gok != wok {
					t.Fatalf("shfl.%s lane %d b=%d c=%#x: got (%d,%v), want (%d,%v)", mode, lane, b, c, gj, gok, wj, wok)
				}
			}
		}
	}
}

func TestShflRawOperands(t *testing.T) {
	e := newEnv(t, "warp.ptx", Config{})
	in := make([]int32, 32)
	for i := range in {
		in[i] = int32(1000 + i)
	}
	inb := e.in(in)
	out := e.buf(cudart.I32, 8*32)
	r := rand.New(rand.NewPCG(7, 8))
	for n := 0; n < 200; n++ {
		b, c := int32(r.IntN(40)), int32(r.Uint32()&0x1F1F)
		e.mustLaunch("shfl_raw", 1, 32, cudart.In(inb), cudart.Out(out), cudart.ScalarI32(b), cudart.ScalarI32(c))
		got := e.i32s(out)
		for lane := 0; lane < 32; lane++ {
			for mi, mode := range shflModes {
				j, ok := isaShfl(mode, lane, uint32(b), uint32(c))
				wantP := int32(0)
				if ok {
					wantP = 1
				}
				if gv, gp := got[8*lane+2*mi], got[8*lane+2*mi+1]; gv != in[j] || gp != wantP {
					t.Fatalf("shfl.sync.%s b=%d c=%#x lane %d: got (%d,%d), want (%d,%d)", mode, b, c, lane, gv, gp, in[j], wantP)
				}
			}
		}
	}
}

// cudaShfl is the CUDA C semantics of the width-segmented shuffles, an
// independent reference for nvcc's c-operand encoding and the emulator.
func cudaShfl(kind string, lane, arg, width int) int {
	seg := lane / width * width
	switch kind {
	case "idx":
		return seg + arg%width
	case "up":
		if lane-arg < seg {
			return lane
		}
		return lane - arg
	case "down":
		if lane+arg >= seg+width {
			return lane
		}
		return lane + arg
	default: // xor: lanes of later segments return their own value
		j := lane ^ arg
		if j >= seg+width {
			return lane
		}
		return j
	}
}

func TestShflWidths(t *testing.T) {
	e := newEnv(t, "warp.ptx", Config{})
	in := make([]int32, 64)
	for i := range in {
		in[i] = int32(i * 7)
	}
	inb := e.in(in)
	out := e.buf(cudart.I32, 8*64)
	for _, width := range []int{1, 2, 4, 8, 16, 32} {
		for _, delta := range []int{0, 1, 3, 5, 8, 16} {
			for _, src := range []int{0, 3, 17, 31} {
				e.mustLaunch("shfl_modes", 1, 64, cudart.In(inb), cudart.Out(out), cudart.ScalarI32(int32(delta)), cudart.ScalarI32(int32(src)), cudart.ScalarI32(int32(width)), cudart.ScalarU32(0xFFFFFFFF))
				got := e.i32s(out)
				for tid := 0; tid < 64; tid++ {
					lane, base := tid%32, tid/32*32
					for k, kind := range []string{"idx", "up", "down", "xor"} {
						arg := delta
						if kind == "idx" {
							arg = src
						}
						want := in[base+cudaShfl(kind, lane, arg, width)]
						if g := got[8*tid+k]; g != want {
							t.Fatalf("__shfl_%s_sync(width=%d, arg=%d) lane %d: got %d, want %d", kind, width, arg, tid, g, want)
						}
					}
				}
			}
		}
	}
}

func TestShflPartialMask(t *testing.T) {
	e := newEnv(t, "warp.ptx", Config{})
	in := make([]int32, 32)
	for i := range in {
		in[i] = int32(i + 1)
	}
	out := e.buf(cudart.I32, 8*32)
	mask := uint32(0x0000FFFF)
	e.mustLaunch("shfl_modes", 1, 32, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarI32(1), cudart.ScalarI32(2), cudart.ScalarI32(32), cudart.ScalarU32(mask))
	got := e.i32s(out)
	for lane := 0; lane < 16; lane++ {
		if got[8*lane] != in[2] {
			t.Errorf("idx lane %d: %d, want %d", lane, got[8*lane], in[2])
		}
		// down by one from lane 15 reads lane 16, which is outside the mask:
		// the value is undefined, the emulator supplies its poison.
		want := in[lane+1]
		if lane == 15 {
			want = int32(shflPoison)
		}
		if got[8*lane+2] != want {
			t.Errorf("down lane %d: %#x, want %#x", lane, got[8*lane+2], want)
		}
	}
}

func TestVotesInDivergentCode(t *testing.T) {
	e := newEnv(t, "warp.ptx", Config{})
	r := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 50; n++ {
		in := make([]int32, 32)
		for i := range in {
			in[i] = int32(r.IntN(20) - 5)
		}
		if n%7 == 0 {
			for i := range in {
				in[i] = 3
			}
		}
		k := int32(r.IntN(12))
		out := e.buf(cudart.U32, 8*32)
		e.mustLaunch("votes", 1, 32, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarI32(k))
		got := e.u32s(out)
		var g, ballot uint32
		for i, v := range in {
			if v >= 0 {
				g |= 1 << i
				if v > k {
					ballot |= 1 << i
				}
			}
		}
		b2u := func(b bool) uint32 {
			if b {
				return 1
			}
			return 0
		}
		for lane := 0; lane < 32; lane++ {
			o := got[8*lane : 8*lane+8]
			if in[lane] >= 0 {
				want := []uint32{ballot, b2u(ballot == g), b2u(ballot != 0), b2u(ballot == 0 || ballot == g), g}
				for j, w := range want {
					if o[j] != w {
						t.Fatalf("case %d lane %d field %d: got %#x, want %#x (in %v, k %d)", n, lane, j, o[j], w, in, k)
					}
				}
			}
			if o[5] != 0xFFFFFFFF {
				t.Fatalf("activemask at entry = %#x", o[5])
			}
			var same uint32
			allSame := true
			for j, v := range in {
				if v&3 == in[lane]&3 {
					same |= 1 << j
				}
				allSame = allSame && v&1 == in[0]&1
			}
			if o[6] != same {
				t.Fatalf("match.any lane %d: %#x, want %#x", lane, o[6], same)
			}
			wantAll := uint32(0)
			if allSame {
				wantAll = 0xFFFFFFFF | 0x100
			}
			if o[7] != wantAll {
				t.Fatalf("match.all lane %d: %#x, want %#x", lane, o[7], wantAll)
			}
		}
	}
}

func TestShflFromTwoInstructions(t *testing.T) {
	for _, seed := range []int64{0, 1, 2} {
		e := newEnv(t, "warp.ptx", Config{Seed: seed})
		in := make([]int32, 32)
		for i := range in {
			in[i] = int32(i + 1)
		}
		out := e.buf(cudart.I32, 32)
		e.mustLaunch("shfl_divergent", 1, 32, cudart.In(e.in(in)), cudart.Out(out))
		for lane, got := range e.i32s(out) {
			// Odd lanes read lane 0, which supplies its own operand v*100;
			// even lanes read lane 3, which supplies v*10.
			want := in[0] * 100
			if lane%2 == 0 {
				want = in[3] * 10
			}
			if got != want {
				t.Fatalf("seed %d lane %d: %d, want %d", seed, lane, got, want)
			}
		}
	}
}

func TestShflAfterExitAndRedux(t *testing.T) {
	e := newEnv(t, "warp.ptx", Config{})
	in := make([]int32, 32)
	for i := range in {
		in[i] = int32(3*i - 40)
	}
	out := e.buf(cudart.I32, 16)
	e.mustLaunch("shfl_after_exit", 1, 32, cudart.In(e.in(in)), cudart.Out(out))
	for lane, got := range e.i32s(out) {
		if got != in[lane^1] {
			t.Fatalf("lane %d: %d, want %d", lane, got, in[lane^1])
		}
	}
	red := e.buf(cudart.I32, 3*32)
	e.mustLaunch("redux", 1, 32, cudart.In(e.in(in)), cudart.Out(red))
	var sum int32
	mn, mx := in[0], in[0]
	for _, v := range in {
		sum += v
		mn, mx = min(mn, v), max(mx, v)
	}
	got := e.i32s(red)
	for lane := 0; lane < 32; lane++ {
		if got[3*lane] != sum || got[3*lane+1] != mn || got[3*lane+2] != mx {
			t.Fatalf("redux lane %d: %v, want %d %d %d", lane, got[3*lane:3*lane+3], sum, mn, mx)
		}
	}
}

func TestReconvergenceAfterDivergence(t *testing.T) {
	e := newEnv(t, "warp.ptx", Config{})
	in := make([]int32, 32)
	for i := range in {
		in[i] = int32(i*7 + 3)
	}
	out := e.buf(cudart.U32, 3*32)
	e.mustLaunch("reconverge", 1, 32, cudart.In(e.in(in)), cudart.Out(out))
	got := e.u32s(out)
	for lane := 0; lane < 32; lane++ {
		v := in[lane]
		if v&1 != 0 {
			v = v*3 + 1
		} else {
			v >>= 1
		}
		for i := int32(0); i < v&7; i++ {
			v += i * int32(lane)
		}
		if got[3*lane] != 0xFFFFFFFF || got[3*lane+1] != 0xFFFFFFFF || int32(got[3*lane+2]) != v {
			t.Fatalf("lane %d: activemask after if/else %#x, after loop %#x, v %d (want %d)", lane, got[3*lane], got[3*lane+1], int32(got[3*lane+2]), v)
		}
	}
}
