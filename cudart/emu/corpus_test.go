package emu

import (
	"archive/zip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// The corpus (testdata/corpus, README.lead.md) is PTX that Triton 3.6 and
// nvcc 13.0 emitted for sm_90 on an H200: normalisation, softmax, RoPE,
// cross-entropy, GELU and reduction kernels. Each Triton kernel comes with
// the launch the GPU ran (<name>.json: grid, block, shared bytes, PTX
// parameters, arguments) and that launch's tensors before and after
// (<name>.npz, bit views only). TestCorpus loads every file and reruns each
// Triton launch on the emulator from the same inputs.

// corpusKernel is the part of a corpus <name>.json the test reads.
type corpusKernel struct {
	Name      string   `json:"name"`
	Entry     string   `json:"entry"`
	Grid      []uint32 `json:"grid"`
	Block     []uint32 `json:"block"`
	Shared    int      `json:"shared_bytes"`
	PTXParams []string `json:"ptx_params"`
	Args      []struct {
		Name  string          `json:"name"`
		Kind  string          `json:"kind"` // tensor, scalar, constexpr
		Type  string          `json:"type"` // scalars: i32, fp32, …
		Value json.RawMessage `json:"value"`
		Spec  *string         `json:"triton_specialisation"`
	} `json:"args"`
	Written []string `json:"tensors_written"`
}

// corpusOrderDependent lists the kernels whose outputs depend on the order
// of float atomics or of a lock (README.lead.md): their written tensors are
// compared within corpusAtomicULPs, the others bit for bit.
var corpusOrderDependent = map[string]bool{
	"layernorm_bwd_atomic_n1000": true, "layernorm_bwd_atomic_n768": true,
	"layernorm_bwd_atomic_relaxed_n768": true, "layernorm_bwd_lock": true,
}

func TestCorpusLoads(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.ptx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("%d corpus files, want the committed corpus", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(Config{}).LoadModule(filepath.Base(f), src); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "triton", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 28 {
		t.Fatalf("%d Triton launches, want the committed corpus", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) { runCorpusKernel(t, strings.TrimSuffix(f, ".json")) })
	}
}

func runCorpusKernel(t *testing.T, base string) {
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var k corpusKernel
	if err := json.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(base + ".ptx")
	if err != nil {
		t.Fatal(err)
	}
	arrays, err := readNPZ(base + ".npz")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvSrc(t, k.Name, src, Config{})
	var params []cudart.Param
	bufs := map[string]cudart.Buffer{}
	for _, a := range k.Args {
		switch a.Kind {
		case "constexpr":
			continue
		case "tensor":
			in, ok := corpusArray(arrays, "in."+a.Name)
			if !ok {
				t.Fatalf("%s: no in.%s in the npz", k.Name, a.Name)
			}
			bufs[a.Name] = e.in(in)
			params = append(params, cudart.InOut(bufs[a.Name]))
		case "scalar":
			if a.Spec != nil && *a.Spec == "equal_to_1" {
				continue // specialised away: not a PTX parameter
			}
			p, err := corpusScalar(k.PTXParams[len(params)], a.Value)
			if err != nil {
				t.Fatalf("%s: %s: %v", k.Name, a.Name, err)
			}
			params = append(params, p)
		default:
			t.Fatalf("%s: argument %s of kind %q", k.Name, a.Name, a.Kind)
		}
	}
	// Triton's hidden trailing parameters (global and profile scratch):
	// both sizes are 0 in this corpus, so null pointers.
	for len(params) < len(k.PTXParams) {
		params = append(params, cudart.ScalarU64(0))
	}
	g := cudart.Geometry{Grid: corpusDim(k.Grid), Block: corpusDim(k.Block), SharedBytes: k.Shared}
	if err := e.dev.Launch(e.mod, k.Entry, g, params...); err != nil {
		t.Fatal(err)
	}
	// The emulator computes these exactly where the H200 may not
	// (ptx.Approximations, Modelled false): outputs downstream of them may
	// differ by an ulp or so. Every other instruction is modelled, and the
	// kernel's words must match the H200's bit for bit.
	approx, err := Approximations(src)
	if err != nil {
		t.Fatal(err)
	}
	var unmodelled []string
	for _, a := range approx {
		if !a.Modelled {
			unmodelled = append(unmodelled, a.Inst)
		}
	}
	for _, name := range k.Written {
		want, ok := corpusArray(arrays, "out."+name)
		if !ok {
			t.Fatalf("no out.%s in the npz", name)
		}
		got := make([]uint32, bufs[name].Len())
		e.read(got, bufs[name])
		var tol []float64
		if corpusOrderDependent[k.Name] && (name == "DW" || name == "DB") {
			tol = layerNormColumnSumTol(t, arrays, name, len(want))
		}
		diff := corpusCompare(got, want, tol)
		switch {
		case diff.bad == 0:
		case len(unmodelled) > 0:
			// Not an exact kernel: measured, not judged.
			t.Logf("%s: %d of %d words differ from the H200's (at most %d ulp), through %v the emulator rounds correctly: first %s",
				name, diff.bad, len(want), diff.maxULP, unmodelled, diff.first)
		default:
			t.Errorf("%s against the H200: %d of %d words differ (at most %d ulp); first %s", name, diff.bad, len(want), diff.maxULP, diff.first)
		}
	}
}

// layerNormColumnSumTol bounds the difference between two atomic orders
// of a LayerNorm backward's column sums: dW_j = Σ_r dy_rj·x̂_rj and
// dB_j = Σ_r dy_rj over R rows, each term computed the same way in both
// orders, so two orders differ by at most 2·γ_(R−1)·Σ_r|term| (Higham
// (4.4) for each order against the exact sum of the same terms). x̂_rj is
// (x_rj − mean_r)·rstd_r from the launch's own inputs, magnified by γ_3 for
// its float32 evaluation; an underflowing term adds 2^-149 per row.
func layerNormColumnSumTol(t *testing.T, arrays map[string]npyArray, name string, n int) []float64 {
	dy, okDY := corpusArray(arrays, "in.DY")
	x, okX := corpusArray(arrays, "in.X")
	mean, okM := corpusArray(arrays, "in.MEAN")
	if !okM {
		mean, okM = corpusArray(arrays, "in.Mean")
	}
	rstd, okR := corpusArray(arrays, "in.RSTD")
	if !okR {
		rstd, okR = corpusArray(arrays, "in.Rstd")
	}
	if !okDY || !okX || !okM || !okR || len(dy) != len(x) || len(mean) == 0 {
		t.Fatalf("%s: the LayerNorm backward's inputs DY, X, MEAN, RSTD are not in the npz", name)
	}
	rows := len(mean)
	cols := len(x) / rows
	g := func(k int) float64 { u := float64(k) * 0x1p-24; return u / (1 - u) }
	tol := make([]float64, n)
	for j := range tol {
		c := j % cols // a [groups][cols] partial buffer repeats the columns
		s := 0.0
		for r := range rows {
			d := float64(math.Float32frombits(dy[r*cols+c]))
			if name == "DB" {
				s += math.Abs(d)
				continue
			}
			xh := (float64(math.Float32frombits(x[r*cols+c])) - float64(math.Float32frombits(mean[r]))) * float64(math.Float32frombits(rstd[r]))
			s += math.Abs(d * xh * (1 + g(3)))
		}
		tol[j] = 2*g(rows-1)*s + float64(rows)*0x1p-149
	}
	return tol
}

// corpusArray returns the bits of one tensor (a float's .u32 or .u16 view,
// or an integer tensor itself) as little-endian 32-bit words.
func corpusArray(arrays map[string]npyArray, key string) ([]uint32, bool) {
	for _, k := range []string{key + ".u32", key + ".u16", key} { // floats' bit views, or integers
		if a, ok := arrays[k]; ok {
			return a.words, true
		}
	}
	return nil, false
}

// corpusScalar converts a scalar argument to the PTX parameter decl names.
func corpusScalar(decl string, v json.RawMessage) (cudart.Param, error) {
	var x float64
	if err := json.Unmarshal(v, &x); err != nil {
		return cudart.Param{}, err
	}
	switch {
	case strings.Contains(decl, ".f32"):
		return cudart.ScalarF32(float32(x)), nil
	case strings.Contains(decl, ".u32"), strings.Contains(decl, ".s32"), strings.Contains(decl, ".b32"):
		return cudart.ScalarI32(int32(x)), nil
	case strings.Contains(decl, ".u64"), strings.Contains(decl, ".s64"), strings.Contains(decl, ".b64"):
		return cudart.ScalarU64(uint64(int64(x))), nil
	}
	return cudart.Param{}, fmt.Errorf("parameter %q", decl)
}

func corpusDim(d []uint32) cudart.Dim3 {
	v := [3]uint32{1, 1, 1}
	copy(v[:], d)
	return cudart.Dim3{X: max(v[0], 1), Y: max(v[1], 1), Z: max(v[2], 1)}
}

// corpusDiff summarises the words that differ from the GPU's.
type corpusDiff struct {
	bad    int
	maxULP uint64
	first  string
}

// corpusCompare compares the emulator's words with the GPU's, bit for bit,
// or as float32 within tol[i] where tol is not nil.
func corpusCompare(got, want []uint32, tol []float64) corpusDiff {
	var d corpusDiff
	if len(got) < len(want) {
		return corpusDiff{bad: len(want), maxULP: math.MaxUint64, first: fmt.Sprintf("%d words, the GPU wrote %d", len(got), len(want))}
	}
	for i, w := range want {
		g := got[i]
		if g == w {
			continue
		}
		gf, wf := math.Float32frombits(g), math.Float32frombits(w)
		if tol != nil && math.Abs(float64(gf)-float64(wf)) <= tol[i] {
			continue
		}
		u := ulpDistance32(gf, wf)
		if d.bad == 0 {
			d.first = fmt.Sprintf("word %d: emulator %#08x (%g), GPU %#08x (%g), %d ulp", i, g, gf, w, wf, u)
			if tol != nil {
				d.first += fmt.Sprintf(", bound %g", tol[i])
			}
		}
		d.bad++
		d.maxULP = max(d.maxULP, u)
	}
	return d
}

// ulpDistance32 is the number of float32 values between a and b plus one
// (0 when equal), through zero across signs; MaxUint64 for a NaN.
func ulpDistance32(a, b float32) uint64 {
	if a != a || b != b {
		return math.MaxUint64
	}
	key := func(x float32) int64 {
		v := int64(math.Float32bits(x) & 0x7fffffff)
		if math.Signbit(float64(x)) {
			return -v
		}
		return v
	}
	d := key(a) - key(b)
	return uint64(max(d, -d))
}

// npyArray is one little-endian .npy array of 2-, 4- or 8-byte elements,
// as little-endian 32-bit words.
type npyArray struct {
	elemBytes int
	words     []uint32
}

var npyDescr = regexp.MustCompile(`'descr':\s*'<([uif])(\d)'`)

// readNPZ reads the .npy members of a NumPy .npz archive, keyed by name
// without ".npy".
func readNPZ(path string) (map[string]npyArray, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	out := map[string]npyArray{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, err
		}
		// Magic, version (1.0: a 2-byte header length), header, data.
		if len(b) < 10 || string(b[1:6]) != "NUMPY" || b[6] != 1 {
			return nil, fmt.Errorf("%s: %s is not a version 1 .npy", path, f.Name)
		}
		hl := int(binary.LittleEndian.Uint16(b[8:10]))
		header, data := string(b[10:10+hl]), b[10+hl:]
		m := npyDescr.FindStringSubmatch(header)
		if m == nil || strings.Contains(header, "'fortran_order': True") {
			return nil, fmt.Errorf("%s: %s: unsupported header %q", path, f.Name, header)
		}
		size, _ := strconv.Atoi(m[2])
		if size != 2 && size != 4 && size != 8 {
			return nil, fmt.Errorf("%s: %s: %d-byte elements", path, f.Name, size)
		}
		words := make([]uint32, (len(data)+3)/4)
		for i := range words {
			var w [4]byte
			copy(w[:], data[4*i:])
			words[i] = binary.LittleEndian.Uint32(w[:])
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = npyArray{elemBytes: size, words: words}
	}
	return out, nil
}

// TestCorpusNvccVectorAtomics runs nvcc 13's dgamma accumulation with
// atomicAdd on float4 and float2 (atom.global.add.v4.f32 and .v2.f32 in
// the corpus, each compiled plain, fast-math and -fmad=false): 12 blocks
// add dy·x̂ rows of 256 into dgamma. The data are small integers, so every
// product and sum is exact whatever order the atomics take, and the result
// is the hand-computed column sum.
func TestCorpusNvccVectorAtomics(t *testing.T) {
	const rows, n = 12, 256
	dy, xh := make([]float32, rows*n), make([]float32, rows*n)
	want := make([]float32, n)
	for i := range dy {
		dy[i], xh[i] = float32(i%7-3), float32(i%5-2)
		want[i%n] += dy[i] * xh[i]
	}
	for _, variant := range []string{"", ".fastmath", ".nofma"} {
		src, err := os.ReadFile(filepath.Join("testdata", "corpus", "nvcc", "cuda_atomic_v4"+variant+".ptx"))
		if err != nil {
			t.Fatal(err)
		}
		for _, entry := range []string{"dgamma_atomic_float4", "dgamma_atomic_float2"} {
			e := newEnvSrc(t, entry, src, Config{Seed: 3})
			dg := e.in(make([]float32, n))
			e.mustLaunch(entry, rows, 32, cudart.InOut(dg), cudart.In(e.in(dy)), cudart.In(e.in(xh)), cudart.ScalarI32(n))
			got := e.f32s(dg)
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("%s%s: dgamma[%d] = %g, want %g", entry, variant, j, got[j], want[j])
				}
			}
		}
	}
}
