package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNightlyMerge: nightly-merge writes one valid report from a nightly
// directory, the page is written from it, a failed stage exits 1 with the
// report written, and a directory without a contract report is exit 2.
func TestNightlyMerge(t *testing.T) {
	dir := t.TempDir()
	night, err := os.ReadFile(filepath.Join("..", "..", "reports", "page", "testdata", "night-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "contract-report.json"), night, 0o644); err != nil {
		t.Fatal(err)
	}
	stages := "properties\tok\t0\t12\ntorch\tskipped\t0\t0\tpython3 cannot import torch\n"
	if err := os.WriteFile(filepath.Join(dir, "stages.tsv"), []byte(stages), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "nightly-report.json")
	runCases(t, []cliCase{
		{[]string{"report", "nightly-merge", "-o", out, dir}, 0, "stage torch        skipped: python3 cannot import torch", ""},
		{[]string{"validate", out}, 0, "valid ptxprop.contract-report/v2", ""},
		{[]string{"report", "html", "-o", filepath.Join(dir, "page.html"), out}, 0, "page.html: 1 report", ""},
		{[]string{"nightly-merge", "-o", out}, 2, "", "nightly-merge takes -o out.json and one directory"},
		{[]string{"nightly-merge", "-o", out, t.TempDir()}, 2, "", "no contract report"},
	})
	if err := os.WriteFile(filepath.Join(dir, "stages.tsv"), []byte(stages+"bench\tfailed\t1\t3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(out)
	runCases(t, []cliCase{{[]string{"nightly-merge", "-o", out, dir}, 1, "stage bench        failed (exit 1) after 3 s", "the nightly failed"}})
	if _, err := os.Stat(out); err != nil {
		t.Errorf("a failed stage still writes the report: %v", err)
	}
}
