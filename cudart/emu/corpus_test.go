package emu

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// The corpus (testdata/corpus) is PTX that Triton 3.6 and nvcc 13 emitted
// for sm_90 on an H200 for normalisation, softmax, RoPE and reduction
// kernels, committed as generated. manifest.json lists each kernel with a
// small launch; TestCorpus loads every .ptx file and runs every listed
// launch on the emulator. Where the manifest names the GPU's output for a
// buffer, the emulator's must match it bit for bit (the kernels' exact
// instructions, and the approximate ones the emulator models as sm_90
// computes them), or within the listed ulps where the kernel uses an
// approximate instruction the emulator does not model yet.

// corpusManifest is testdata/corpus/manifest.json.
type corpusManifest struct {
	Launches []corpusLaunch `json:"launches"`
}

// corpusLaunch is one launch of one corpus kernel.
type corpusLaunch struct {
	Name   string        `json:"name"` // for messages; defaults to file:entry
	File   string        `json:"file"` // PTX, relative to testdata/corpus
	Entry  string        `json:"entry"`
	Grid   [3]uint32     `json:"grid"`
	Block  [3]uint32     `json:"block"`
	Shared int           `json:"shared"` // dynamic shared memory bytes
	Params []corpusParam `json:"params"` // in the entry's order
	// ULPs is the largest float32 ulp distance allowed against a GPU
	// output (0: bit for bit).
	ULPs uint64 `json:"ulps"`
}

// corpusParam is one kernel parameter: a buffer or a scalar.
type corpusParam struct {
	// A buffer of Bytes bytes (rounded up to 4): filled from Init
	// ("zero", "randn" standard normal float32, "iota" float32 0,1,2,…,
	// "ones" float32 1, or "file:NAME" raw little-endian bytes) and, when
	// Want names a file of raw bytes, compared with it after the launch.
	Bytes int    `json:"bytes"`
	Init  string `json:"init"`
	Want  string `json:"want"`
	// A scalar: its PTX type (u32, s32, u64, f32, f64) and value.
	Type  string  `json:"type"`
	Value float64 `json:"value"`
}

func TestCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "corpus")
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man corpusManifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&man); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.ptx"))
	if err != nil {
		t.Fatal(err)
	}
	launched := map[string]bool{}
	for _, l := range man.Launches {
		launched[l.File] = true
	}
	// Every file loads, launched or not.
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(Config{}).LoadModule(rel, src); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		if !launched[filepath.ToSlash(rel)] {
			t.Errorf("%s: no launch in manifest.json", rel)
		}
	}
	for _, l := range man.Launches {
		name := l.Name
		if name == "" {
			name = l.File + ":" + l.Entry
		}
		t.Run(name, func(t *testing.T) { runCorpusLaunch(t, dir, l) })
	}
}

func runCorpusLaunch(t *testing.T, dir string, l corpusLaunch) {
	src, err := os.ReadFile(filepath.Join(dir, l.File))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvSrc(t, l.File, src, Config{})
	r := rand.New(rand.NewPCG(uint64(len(l.Params)), 7))
	params := make([]cudart.Param, len(l.Params))
	bufs := make([]cudart.Buffer, len(l.Params))
	for i, p := range l.Params {
		if p.Type != "" {
			if params[i], err = corpusScalar(p); err != nil {
				t.Fatalf("param %d: %v", i, err)
			}
			continue
		}
		words := make([]uint32, (p.Bytes+3)/4)
		if err := corpusFill(words, p.Init, dir, r); err != nil {
			t.Fatalf("param %d: %v", i, err)
		}
		bufs[i] = e.in(words)
		params[i] = cudart.InOut(bufs[i])
	}
	g := cudart.Geometry{Grid: corpusDim(l.Grid), Block: corpusDim(l.Block), SharedBytes: l.Shared}
	if err := e.dev.Launch(e.mod, l.Entry, g, params...); err != nil {
		t.Fatal(err)
	}
	for i, p := range l.Params {
		if p.Want == "" {
			continue
		}
		want, err := os.ReadFile(filepath.Join(dir, p.Want))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]uint32, bufs[i].Len())
		e.read(got, bufs[i])
		gb := make([]byte, 4*len(got))
		for k, w := range got {
			binary.LittleEndian.PutUint32(gb[4*k:], w)
		}
		if len(want) > len(gb) {
			t.Fatalf("param %d: %s has %d bytes, the buffer %d", i, p.Want, len(want), len(gb))
		}
		if err := corpusCompare(gb[:len(want)], want, l.ULPs); err != nil {
			t.Errorf("param %d against the GPU's %s: %v", i, p.Want, err)
		}
	}
}

func corpusDim(d [3]uint32) cudart.Dim3 {
	for i := range d {
		d[i] = max(d[i], 1)
	}
	return cudart.Dim3{X: d[0], Y: d[1], Z: d[2]}
}

func corpusScalar(p corpusParam) (cudart.Param, error) {
	switch p.Type {
	case "u32":
		return cudart.ScalarU32(uint32(p.Value)), nil
	case "s32":
		return cudart.ScalarI32(int32(p.Value)), nil
	case "u64":
		return cudart.ScalarU64(uint64(p.Value)), nil
	case "f32":
		return cudart.ScalarF32(float32(p.Value)), nil
	case "f64":
		return cudart.ScalarF64(p.Value), nil
	}
	return cudart.Param{}, fmt.Errorf("unknown scalar type %q", p.Type)
}

func corpusFill(w []uint32, init, dir string, r *rand.Rand) error {
	switch {
	case init == "" || init == "zero":
	case init == "randn":
		for i := range w {
			w[i] = math.Float32bits(float32(r.NormFloat64()))
		}
	case init == "iota":
		for i := range w {
			w[i] = math.Float32bits(float32(i))
		}
	case init == "ones":
		for i := range w {
			w[i] = math.Float32bits(1)
		}
	case strings.HasPrefix(init, "file:"):
		b, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(init, "file:")))
		if err != nil {
			return err
		}
		if len(b) > 4*len(w) {
			return fmt.Errorf("%s has %d bytes, the buffer %d", init, len(b), 4*len(w))
		}
		b = append(b, make([]byte, 4*len(w)-len(b))...)
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
	default:
		return fmt.Errorf("unknown init %q", init)
	}
	return nil
}

// corpusCompare compares two float32 arrays (raw bytes) bit for bit, or
// within ulps; it reports the first difference and how many there are.
func corpusCompare(got, want []byte, ulps uint64) error {
	bad, first := 0, ""
	for i := 0; i+4 <= len(want); i += 4 {
		g, w := binary.LittleEndian.Uint32(got[i:]), binary.LittleEndian.Uint32(want[i:])
		if g == w {
			continue
		}
		d := ulpDistance32(math.Float32frombits(g), math.Float32frombits(w))
		if ulps > 0 && d <= ulps {
			continue
		}
		if bad == 0 {
			first = fmt.Sprintf("element %d: emulator %#08x (%g), GPU %#08x (%g), %d ulp", i/4, g, math.Float32frombits(g), w, math.Float32frombits(w), d)
		}
		bad++
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ; first at %s", bad, len(want)/4, first)
	}
	return nil
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
