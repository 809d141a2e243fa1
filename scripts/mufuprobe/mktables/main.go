// Command mktables turns the tables mufuprobe measured on a GPU into the
// compressed tables the emulator embeds (internal/mufutab's format):
//
//	xz -dk OUTDIR/*.d1.xz
//	go run ./scripts/mufuprobe/mktables OUTDIR cudart/emu
//
// It reads OUTDIR/<probe name>.d1 (mufutables.py's first differences,
// decompressed), writes cudart/emu/mufu_<table>.bin.gz for each table and
// cudart/emu/mufu_digests.go with their digests. Entries no input reaches
// (the probe leaves them 0xFFFFFFFE) are stored as the reference value.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ptxprop/ptxprop/internal/mufutab"
)

// probe file → table.
var files = map[string]string{
	"rsqrt_ftz.d1": mufutab.Rsqrt,
	"sqrt_ftz.d1":  mufutab.Sqrt,
	"ex2sm_ftz.d1": mufutab.Ex2,
	"sin_ftz.d1":   mufutab.Sin,
	"cos_ftz.d1":   mufutab.Cos,
	"rcp64_ftz.d1": mufutab.Rcp64,
	// mufuprobe OUT ex2lg2: lg2.approx.ftz.f32 of every x in [0.5, 2).
	"lg2_binades_126_127.d1": mufutab.Lg2,
}

const empty = 0xFFFFFFFE

// readD1 reads a first-differenced probe file (mufutables.py) back into
// its entries.
func readD1(path string) ([]uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t := make([]uint32, len(b)/4)
	var acc uint32
	for i := range t {
		acc += binary.LittleEndian.Uint32(b[4*i:])
		t[i] = acc
	}
	return t, nil
}

// tanhTable builds the Tanh table from tanhprobe's outputs of every
// positive binade it keys (tanh_E<e>.d1, 2^23 outputs each), and checks
// on every input that the output is the entry of its key.
func tanhTable(in string) ([]uint32, error) {
	t := make([]uint32, mufutab.Size(mufutab.Tanh))
	for e := mufutab.TanhFirstExp; e <= mufutab.TanhLastExp; e++ {
		out, err := readD1(filepath.Join(in, fmt.Sprintf("tanh_E%03d.d1", e)))
		if err != nil {
			return nil, err
		}
		if len(out) != 1<<23 {
			return nil, fmt.Errorf("tanh_E%03d.d1: %d outputs, want 2^23", e, len(out))
		}
		for m, v := range out {
			x := uint32(e)<<23 | uint32(m)
			k := mufutab.TanhKey(x)
			first := m == 0 || mufutab.TanhKey(x-1) != k
			if first {
				t[k] = v
			} else if t[k] != v {
				return nil, fmt.Errorf("tanh(%08x) = %08x, but its key %d holds %08x: the output is not a function of the key", x, v, k, t[k])
			}
		}
	}
	return t, nil
}

// halfFiles are tanhprobe's outputs of the half-precision approximate
// instructions for every 16-bit input, in the order of mufu_halves.bin.gz.
var halfFiles = []string{"ex2_f16.u16", "tanh_f16.u16", "ex2_bf16.u16", "tanh_bf16.u16"}

// halvesTable reads them, one after the other.
func halvesTable(in string) ([]uint16, error) {
	var t []uint16
	for _, f := range halfFiles {
		b, err := os.ReadFile(filepath.Join(in, f))
		if err != nil {
			return nil, err
		}
		if len(b) != 2<<16 {
			return nil, fmt.Errorf("%s: %d bytes, want 2^17", f, len(b))
		}
		for i := 0; i < len(b); i += 2 {
			t = append(t, binary.LittleEndian.Uint16(b[i:]))
		}
	}
	return t, nil
}

// digestLine matches an entry of an existing mufu_digests.go.
var digestLine = regexp.MustCompile(`"([a-z0-9]+)":\s*"([0-9a-f]{64})"`)

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mktables:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mktables PROBE_OUTDIR EMU_DIR")
		os.Exit(2)
	}
	in, out := os.Args[1], os.Args[2]
	// Tables whose probe files are absent keep their committed table and
	// digest: a probe run may measure some instructions only.
	digests := map[string]string{}
	if old, err := os.ReadFile(filepath.Join(out, "mufu_digests.go")); err == nil {
		for _, m := range digestLine.FindAllStringSubmatch(string(old), -1) {
			digests[m[1]] = m[2]
		}
	}
	write := func(name string, t []uint32, unreached int) {
		gz, err := mufutab.Encode(name, t)
		if err != nil {
			fail(err)
		}
		dst := filepath.Join(out, "mufu_"+name+".bin.gz")
		if err := os.WriteFile(dst, gz, 0o644); err != nil {
			fail(err)
		}
		digests[name] = mufutab.Digest(t)
		fmt.Printf("%s: %d entries (%d unreached), %d bytes, sha256 %s\n", dst, len(t), unreached, len(gz), digests[name])
	}
	for file, name := range files {
		t, err := readD1(filepath.Join(in, file))
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Printf("%s: no %s, kept\n", name, file)
			continue
		}
		if err != nil {
			fail(err)
		}
		unreached := 0
		for i, v := range t {
			if v == empty {
				t[i] = mufutab.Ref(name, uint32(i))
				unreached++
			}
		}
		write(name, t, unreached)
	}
	if _, err := os.Stat(filepath.Join(in, fmt.Sprintf("tanh_E%03d.d1", mufutab.TanhFirstExp))); err == nil {
		t, err := tanhTable(in)
		if err != nil {
			fail(err)
		}
		write(mufutab.Tanh, t, 0)
	} else {
		fmt.Printf("%s: no tanh_E*.d1, kept\n", mufutab.Tanh)
	}
	if t, err := halvesTable(in); err == nil {
		var raw bytes.Buffer
		for _, v := range t {
			raw.WriteByte(byte(v))
			raw.WriteByte(byte(v >> 8))
		}
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w.Write(raw.Bytes())
		if err := w.Close(); err != nil {
			fail(err)
		}
		dst := filepath.Join(out, "mufu_halves.bin.gz")
		if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
			fail(err)
		}
		sum := sha256.Sum256(raw.Bytes())
		digests["halves"] = hex.EncodeToString(sum[:])
		fmt.Printf("%s: %d entries, %d bytes, sha256 %s\n", dst, len(t), buf.Len(), digests["halves"])
	} else if errors.Is(err, fs.ErrNotExist) {
		fmt.Println("halves: no ex2_f16.u16 …, kept")
	} else {
		fail(err)
	}
	var names []string
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString("// Code generated by scripts/mufuprobe/mktables. DO NOT EDIT.\n\npackage emu\n\n")
	sb.WriteString("// mufuDigests is the SHA-256 of each decoded MUFU table (internal/mufutab).\nvar mufuDigests = map[string]string{\n")
	for _, n := range names {
		fmt.Fprintf(&sb, "\t%q: %q,\n", n, digests[n])
	}
	sb.WriteString("}\n")
	src, err := format.Source([]byte(sb.String()))
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(out, "mufu_digests.go"), src, 0o644); err != nil {
		fail(err)
	}
}
