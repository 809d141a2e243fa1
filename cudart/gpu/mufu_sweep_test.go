package gpu

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// approxPTX evaluates one unary approximate instruction (OP, on registers
// of type REG) for the inputs base + i, i < 2^chunkBits, into out[i]:
// 32-bit inputs are the bits themselves, .f64 inputs the double whose high
// word is base + i and whose low word is a hash of it.
const approxPTX = `.version 8.0
.target sm_90
.address_size 64

.visible .entry approx(.param .u64 out, .param .u32 base)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<3>;
	.reg .f64 %fd<3>;
	.reg .b16 %h<3>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [base];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	add.s32 %r6, %r1, %r5;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r5, SIZE;
	add.s64 %rd4, %rd2, %rd3;
BODY
	ret;
}
`

var approxBodies = map[string]string{
	"f32": `	mov.b32 %f1, %r6;
	OP %f2, %f1;
	st.global.f32 [%rd4], %f2;`,
	"b32": `	OP %r7, %r6;
	st.global.b32 [%rd4], %r7;`,
	"b16": `	cvt.u16.u32 %h1, %r6;
	OP %h2, %h1;
	st.global.b16 [%rd4], %h2;`,
	"f64": `	mul.lo.u32 %r7, %r6, -1640531535;
	mov.b64 %fd1, {%r7, %r6};
	OP %fd2, %fd1;
	st.global.f64 [%rd4], %fd2;`,
}

// compareChunk compares the GPU's outputs of inputs base … base+n−1 with
// model's, on every CPU, and returns how many differ and the first.
func compareChunk(host []byte, size int, base, n uint64, model func(uint64) uint64) (int, string) {
	workers := uint64(runtime.GOMAXPROCS(0))
	bads, firsts := make([]int, workers), make([]string, workers)
	var wg sync.WaitGroup
	for w := uint64(0); w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				x := base + i
				var got, want uint64
				switch size {
				case 2:
					got, want = uint64(binary.LittleEndian.Uint16(host[2*i:])), model(x)
				case 4:
					got, want = uint64(binary.LittleEndian.Uint32(host[4*i:])), model(x)
				case 8:
					a := x<<32 | uint64(uint32(x)*2654435761)
					got, want = binary.LittleEndian.Uint64(host[8*i:]), model(a)
					x = a
				}
				if got != want {
					if bads[w]++; firsts[w] == "" {
						firsts[w] = fmt.Sprintf("%#x: GPU %#x, model %#x", x, got, want)
					}
				}
			}
		}()
	}
	wg.Wait()
	bad, first := 0, ""
	for w := range bads {
		if bad += bads[w]; first == "" {
			first = firsts[w]
		}
	}
	return bad, first
}

// approxOps are the unary approximate instructions the emulator models.
var approxOps = []string{
	"rcp.approx.f32", "rcp.approx.ftz.f32", "rsqrt.approx.f32", "rsqrt.approx.ftz.f32", "sqrt.approx.f32", "sqrt.approx.ftz.f32",
	"ex2.approx.f32", "ex2.approx.ftz.f32", "lg2.approx.f32", "lg2.approx.ftz.f32", "sin.approx.f32", "sin.approx.ftz.f32",
	"cos.approx.f32", "cos.approx.ftz.f32", "tanh.approx.f32", "rcp.approx.ftz.f64",
	"ex2.approx.f16", "tanh.approx.f16", "ex2.approx.ftz.bf16", "tanh.approx.bf16",
	"ex2.approx.f16x2", "tanh.approx.f16x2", "ex2.approx.ftz.bf16x2", "tanh.approx.bf16x2",
}

// approxSweep runs op on b for its inputs (all 2^32 for 32-bit operands
// and .f64 high words, 2^16 for halves; the first limit of them where
// limit > 0), 2^chunkBits at a time, and compares each output with
// emu.ApproxModel's: the inputs swept, how many differ, the first.
func approxSweep(b cudart.Backend, op string, chunkBits uint, limit uint64) (inputs uint64, bad int, first string, err error) {
	model, err := emu.ApproxModel(op)
	if err != nil {
		return 0, 0, "", err
	}
	typ := op[strings.LastIndex(op, ".")+1:]
	body, size := approxBodies["f32"], 4
	inputs = 1 << 32
	switch typ {
	case "f64":
		body, size = approxBodies["f64"], 8
	case "f16", "bf16":
		body, size, inputs = approxBodies["b16"], 2, 1<<16
	case "f16x2", "bf16x2":
		body = approxBodies["b32"]
	}
	if limit > 0 {
		inputs = min(inputs, limit)
	}
	chunk := min(uint64(1)<<chunkBits, inputs)
	out, err := b.Alloc(int(chunk) * size)
	if err != nil {
		return 0, 0, "", err
	}
	defer b.Free(out)
	host := make([]byte, int(chunk)*size)
	src := strings.NewReplacer("BODY", strings.ReplaceAll(body, "OP", op), "SIZE", fmt.Sprint(size)).Replace(approxPTX)
	m, err := b.LoadModule(op, []byte(src))
	if err != nil {
		return 0, 0, "", err
	}
	defer b.UnloadModule(m)
	le := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	for base := uint64(0); base < inputs; base += chunk {
		n := min(inputs-base, chunk)
		g := cudart.Geometry{Grid: cudart.D1(int((n + 255) / 256)), Block: cudart.D1(int(min(n, 256)))}
		if err := b.Launch(m, "approx", g, [][]byte{binary.LittleEndian.AppendUint64(nil, out), le(uint32(base))}); err != nil {
			return 0, 0, "", err
		}
		if err := b.CopyDtoH(host[:n*uint64(size)], out); err != nil {
			return 0, 0, "", err
		}
		cb, cf := compareChunk(host, size, base, n, model)
		if bad += cb; first == "" {
			first = cf
		}
	}
	return inputs, bad, first, nil
}

// The sweep itself, on the emulator (whose instructions are the models):
// every instruction loads, runs and agrees with its model on the first
// 2^12 inputs, and a model that is not the instruction is caught.
func TestApproxSweepOnTheEmulator(t *testing.T) {
	b := emu.New(emu.Config{})
	for _, op := range approxOps {
		inputs, bad, first, err := approxSweep(b, op, 10, 1<<12)
		if err != nil || bad > 0 || inputs != 1<<12 {
			t.Errorf("%s on the emulator: %d inputs, %d differ (first %s), %v", op, inputs, bad, first, err)
		}
	}
	// The f32 sweep of tanh against ex2's model: the test has teeth.
	model, _ := emu.ApproxModel("ex2.approx.f32")
	host := make([]byte, 4*256)
	for i := range 256 {
		binary.LittleEndian.PutUint32(host[4*i:], uint32(model(uint64(0x3F000000+i))))
	}
	if bad, _ := compareChunk(host, 4, 0x3F000000, 256, model); bad != 0 {
		t.Fatalf("compareChunk finds %d differences in identical outputs", bad)
	}
	tanh, _ := emu.ApproxModel("tanh.approx.f32")
	if bad, first := compareChunk(host, 4, 0x3F000000, 256, tanh); bad == 0 {
		t.Errorf("ex2's outputs pass as tanh's")
	} else {
		t.Logf("ex2's outputs against tanh's model: %d of 256 differ, first %s", bad, first)
	}
}
