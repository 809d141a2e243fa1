package ptx

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot returns the module root (the directory holding go.mod).
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// ptxFiles lists every .ptx file in the repository (kernels/ptx included
// once it exists) plus this package's testdata.
func ptxFiles(t *testing.T) []string {
	var files []string
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".ptx") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestRoundTripRepository(t *testing.T) {
	files := ptxFiles(t)
	if len(files) == 0 {
		t.Fatal("no .ptx files found in the repository")
	}
	for _, path := range files {
		rel, _ := filepath.Rel(repoRoot(t), path)
		t.Run(rel, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkRoundTrip(t, src)
		})
	}
}

func checkRoundTrip(t *testing.T, src []byte) {
	t.Helper()
	m1, err := Parse(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	out1 := Print(m1)
	m2, err := Parse(out1)
	if err != nil {
		t.Fatalf("parse of printed program: %v\n%s", err, out1)
	}
	if !Equal(m1, m2) {
		out2 := Print(m2)
		a, b := strings.Split(string(out1), "\n"), strings.Split(string(out2), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("program changed by print/parse at printed line %d:\n first: %s\nsecond: %s", i+1, a[i], b[i])
			}
		}
		t.Fatalf("program changed by print/parse (%d vs %d printed lines)", len(a), len(b))
	}
	if out2 := Print(m2); !bytes.Equal(out1, out2) {
		t.Fatalf("printing is not stable")
	}
	if len(m1.Items) == 0 {
		t.Fatalf("no declarations parsed")
	}
}
