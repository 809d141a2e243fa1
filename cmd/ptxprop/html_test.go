package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportHTML: report html writes one page of several reports; without
// -o or a report it is bad usage; a report it cannot read is exit 2.
func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "page.html")
	nights, _ := filepath.Glob(filepath.Join("..", "..", "reports", "page", "testdata", "night-*.json"))
	if len(nights) != 3 {
		t.Fatalf("testdata: %v", nights)
	}
	runCases(t, []cliCase{
		{append([]string{"report", "html", "-o", out}, nights...), 0, out + ": 3 reports, ", ""},
		{[]string{"html", nights[0]}, 2, "", "html takes -o page.html and at least one report"},
		{[]string{"report", "html", "-o", out}, 2, "", "html takes -o page.html"},
		{[]string{"report", "html", "-o", filepath.Join(dir, "x.html"), filepath.Join(dir, "none.json")}, 2, "", "no such file"},
		{[]string{"report", "summary", nights[2]}, 0, "sanitizer (memcheck, racecheck, initcheck, synccheck): 1 finding", ""},
	})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<!DOCTYPE html>") || strings.Count(string(b), `<svg class="plot"`) != 15 {
		t.Errorf("page.html: not the page of three reports (%d bytes)", len(b))
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a page was written though a report could not be read")
	}
}
