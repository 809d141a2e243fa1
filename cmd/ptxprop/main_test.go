package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/reports"
)

func writeReport(t *testing.T, status reports.PredictionStatus) string {
	t.Helper()
	r := reports.New(reports.Run{ID: reports.NewRunID(), Start: time.Now().UTC(), GoVersion: "go1.26", Backend: reports.BackendEmu})
	r.UpsertPrediction(reports.Prediction{ID: "P-1", Title: "t", Statement: "s", Status: status, Reason: "why", Checks: 3})
	p := filepath.Join(t.TempDir(), "r.json")
	if err := reports.Write(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	good, bad := writeReport(t, reports.Discharged), writeReport(t, reports.Falsified)
	junk := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(junk, []byte("{"), 0o644)
	merged := filepath.Join(t.TempDir(), "merged.json")
	other := writeReport(t, reports.Discharged)
	if r, err := reports.Read(other); err == nil { // another device: not a shard of good's run
		r.Run.Device = "NVIDIA H100"
		reports.Write(other, r)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{nil, 2, ""},
		{[]string{"frobnicate"}, 2, ""},
		{[]string{"summary", good}, 0, "P-1"},
		{[]string{"summary", "-markdown", good}, 0, "|"},
		{[]string{"check", good}, 0, "none failed"},
		{[]string{"check", bad}, 1, "falsified"},
		{[]string{"check", junk}, 2, ""},
		{[]string{"check", filepath.Join(t.TempDir(), "missing.json")}, 2, ""},
		{[]string{"diff", good, bad}, 1, "P-1"},
		{[]string{"diff", good, good}, 0, ""},
		{[]string{"diff", good}, 2, ""},
		{[]string{"validate", good, bad}, 0, "valid"},
		{[]string{"validate", junk}, 2, ""},
		{[]string{"merge", "-o", merged, good, bad}, 0, "2 reports merged"},
		{[]string{"check", merged}, 1, "falsified"},
		{[]string{"merge", good, bad}, 2, ""},
		{[]string{"merge", "-o", merged}, 2, ""},
		{[]string{"merge", "-o", merged, good, other}, 2, ""},
		{[]string{"merge", "-o", merged, good, junk}, 2, ""},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("ptxprop %v: exit %d (want %d), stdout %q, stderr %q", c.args, code, c.code, out.String(), errb.String())
		}
	}
}
