package emu

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestLdmatrix checks every ldmatrix.m8n8.b16 form against the PTX ISA's
// mapping, derived here from the matrix side: row r of matrix i is the 16
// bytes at the address lane 8i+r gives; its elements c and c+1 (c even) are
// the low and high halves of register i of lane 4r+c/2. With .trans,
// element (r, c) goes to lane 4c+r/2, in the low half when r is even.
// Lanes past 8·count give addresses that are never used.
func TestLdmatrix(t *testing.T) {
	e := newEnv(t, "foreign/ldmatrix.ptx", Config{})
	rng := rand.New(rand.NewPCG(5, 6))
	for _, f := range []struct {
		entry string
		n     int
		trans bool
	}{{"ldm_x1", 1, false}, {"ldm_x2", 2, false}, {"ldm_x4", 4, false},
		{"ldm_x1_trans", 1, true}, {"ldm_x2_trans", 2, true}, {"ldm_x4_trans", 4, true}} {
		for trial := 0; trial < 3; trial++ {
			smem := make([]byte, 1024)
			for i := range smem {
				smem[i] = byte(rng.Uint32())
			}
			rows := rng.Perm(64) // 16-byte row slots, in any order
			addr := make([]uint32, 32)
			for l := range addr {
				addr[l] = uint32(16 * rows[l])
				if l >= 8*f.n {
					addr[l] = 0xFFFF3 // unused: misaligned and outside shared memory
				}
			}
			want := make([]uint32, 4*32)
			for i := 0; i < f.n; i++ {
				for r := 0; r < 8; r++ {
					row := smem[addr[8*i+r]:]
					for c := 0; c < 8; c++ {
						v := uint32(binary.LittleEndian.Uint16(row[2*c:]))
						lane, half := 4*r+c/2, c%2
						if f.trans {
							lane, half = 4*c+r/2, r%2
						}
						want[4*lane+i] |= v << (16 * half)
					}
				}
			}
			src := make([]uint32, 256)
			for i := range src {
				src[i] = binary.LittleEndian.Uint32(smem[4*i:])
			}
			out := e.in(make([]uint32, 4*32))
			geo := cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32), SharedBytes: 1024}
			if err := e.dev.Launch(e.mod, f.entry, geo, cudart.In(e.in(src)), cudart.In(e.in(addr)), cudart.InOut(out)); err != nil {
				t.Fatalf("%s: %v", f.entry, err)
			}
			got := e.u32s(out)
			for l := 0; l < 32; l++ {
				for i := 0; i < f.n; i++ {
					if g, w := got[4*l+i], want[4*l+i]; g != w {
						t.Fatalf("%s trial %d: lane %d register %d = %#08x, want %#08x", f.entry, trial, l, i, g, w)
					}
				}
			}
		}
	}
}

// TestLdmatrixFaults checks a misaligned row address, a divergent ldmatrix
// and the forms the emulator does not implement, which fail at load time
// naming the line.
func TestLdmatrixFaults(t *testing.T) {
	e := newEnv(t, "foreign/ldmatrix.ptx", Config{})
	addr := make([]uint32, 32)
	for l := range addr {
		addr[l] = uint32(16 * l)
	}
	addr[5] = 8
	geo := cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32), SharedBytes: 1024}
	err := e.dev.Launch(e.mod, "ldm_x1", geo, cudart.In(e.in(make([]uint32, 256))), cudart.In(e.in(addr)), cudart.InOut(e.in(make([]uint32, 128))))
	wantErr(t, err, cudart.ErrLaunch, "misaligned", "not 16-byte aligned", "lane 5")

	body := `
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred %%p<2>;
	.reg .b32 %%r<8>;
	mov.u32 %%r1, %%tid.x;
	setp.lt.u32 %%p1, %%r1, 16;
	mov.u32 %%r2, 0;
	%s
	ret;
}
`
	src := fmt.Sprintf(body, "@%p1 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r3}, [%r2];")
	e2 := newEnvSrc(t, "divergent", []byte(src), Config{})
	err = e2.dev.Launch(e2.mod, "k", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32), SharedBytes: 256}, cudart.ScalarU64(0))
	wantErr(t, err, cudart.ErrLaunch, "lanes 0-15", "every lane must execute it together")

	for _, c := range []struct{ inst, msg string }{
		{"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r3, %r4}, [%r2];", "only the .m8n8 shape"},
		{"ldmatrix.sync.aligned.m8n8.x2.shared.b8 {%r3, %r4}, [%r2];", "only .b16 elements"},
		{"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r3, %r4}, [%r2];", "2 destination registers for .x4"},
		{"stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r2], {%r3};", "1 source registers for .x2"},
		{"stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%r2], {%r3};", "only the .m8n8 shape"},
	} {
		b := New(Config{})
		_, err := b.LoadModule("m", []byte(fmt.Sprintf(body, c.inst)))
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "PTX line 12:") {
			t.Errorf("%s: load error %v, want %q at PTX line 12", c.inst, err, c.msg)
		}
	}
}
