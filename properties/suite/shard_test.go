package suite_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// shardRuns is how many contract runs TestChildShards holds.
const shardRuns = 12

// TestChildShards is the child run of TestShardedRun: shardRuns contract
// runs of one prediction.
func TestChildShards(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildShards" {
		t.Skip("run as a child by TestShardedRun")
	}
	for i := range shardRuns {
		t.Run(fmt.Sprint("run", i), func(t *testing.T) { passing(suite.T(t)) })
	}
}

// Three processes, standing in for a job engine's workers, each told its
// shard another way (the flag, a Slurm array task, a Buildkite parallel
// job), run one sharded run side by side; merged, every contract run ran
// exactly once. A shard's report given twice is refused.
func TestShardedRun(t *testing.T) {
	engines := [][]string{
		{"-ptxprop.shard=0/3"},
		{"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_MIN=4", "SLURM_ARRAY_TASK_COUNT=3"}, // shard 1
		{"BUILDKITE_PARALLEL_JOB=2", "BUILDKITE_PARALLEL_JOB_COUNT=3"},
	}
	var (
		paths []string
		errs  = make([]error, len(engines))
		done  = make(chan int)
	)
	for i, e := range engines {
		var args, env []string
		for _, s := range e {
			if s[0] == '-' {
				args = append(args, s)
			} else {
				env = append(env, s)
			}
		}
		cmd, report := childCmd(t, "TestChildShards", append(args, "-ptxprop.checks=10", "-ptxprop.shard-run=local-1")...)
		cmd.Env = append(cmd.Env, env...)
		paths = append(paths, report)
		go func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("shard %d: %v\n%s", i, err, out)
			}
			done <- i
		}()
	}
	for range engines {
		<-done
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for i, p := range paths {
		r, err := reports.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Run.Shard; s == nil || s.Run != "local-1" || s.Count != 3 || !slices.Equal(s.Indexes, []int{i}) {
			t.Errorf("shard %d's report: run.shard = %+v", i, s)
		}
		owned += r.Prediction(idPass).Checks
	}
	m, err := reports.MergeFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Prediction(idPass)
	if want := shardRuns * ranChecks(10); p == nil || p.Status != reports.Discharged || p.Checks != want || owned != want {
		t.Errorf("merged: %+v, want discharged with %d checks (every contract run once)", p, want)
	}
	if m.Partial() || !slices.Equal(m.Run.Shard.Indexes, []int{0, 1, 2}) {
		t.Errorf("merged run: stopped %q, shard %+v", m.Run.Stopped, m.Run.Shard)
	}
	if _, err := reports.MergeFiles(paths[0], paths[1], paths[2], paths[1]); err == nil {
		t.Error("a shard given twice was merged")
	}
}
