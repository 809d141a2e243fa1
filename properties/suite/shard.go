package suite

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/ptxprop/ptxprop/faildb"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/reports"
)

// ParseShard parses i/n (0 ≤ i < n).
func ParseShard(v string) (properties.Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return properties.Shard{}, fmt.Errorf("want i/n, e.g. 0/4")
	}
	s := properties.Shard{Index: i, Count: n}
	return s, s.Validate()
}

// sharding is a run's shard and the identity its shards share.
type sharding struct {
	properties.Shard
	Run string
}

// resolveShard returns the shard c's process is (nil: not sharded): the
// -ptxprop.shard setting, else the job engine's environment read through
// lookup — a Kubernetes Indexed Job (JOB_COMPLETION_INDEX; the count is
// -ptxprop.shard-count, as the pod is not told its job's completions), a
// Slurm job array (SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN, of
// SLURM_ARRAY_TASK_COUNT) or Buildkite parallelism (BUILDKITE_PARALLEL_JOB
// of BUILDKITE_PARALLEL_JOB_COUNT). The run's identity is -ptxprop.shard-run,
// else the engine's (the Slurm array's job ID, the Buildkite build and
// step), else the base seed when one is given (seedGiven); a sharded run
// with none of them is an error, since its shards could not be told from
// another run's.
func resolveShard(c Config, seed uint64, seedGiven bool, lookup func(string) (string, bool)) (*sharding, error) {
	env := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	num := func(k string) (int, error) {
		n, err := strconv.Atoi(env(k))
		if err != nil {
			return 0, fmt.Errorf("%s=%q: %v", k, env(k), err)
		}
		return n, nil
	}
	var (
		s   properties.Shard
		run = c.ShardRun
		err error
	)
	switch {
	case c.Shard != "":
		s, err = ParseShard(c.Shard)
	case env("JOB_COMPLETION_INDEX") != "":
		if c.ShardCount == 0 {
			return nil, fmt.Errorf("JOB_COMPLETION_INDEX=%s needs the job's completions as -ptxprop.shard-count (%s)", env("JOB_COMPLETION_INDEX"), EnvName("shard-count"))
		}
		s.Count = c.ShardCount
		s.Index, err = num("JOB_COMPLETION_INDEX")
	case env("SLURM_ARRAY_TASK_ID") != "" && env("SLURM_ARRAY_TASK_COUNT") != "":
		var lo int
		if env("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = num("SLURM_ARRAY_TASK_MIN"); err != nil {
				return nil, err
			}
		}
		if s.Index, err = num("SLURM_ARRAY_TASK_ID"); err == nil {
			s.Index -= lo
			s.Count, err = num("SLURM_ARRAY_TASK_COUNT")
		}
		if run == "" && env("SLURM_ARRAY_JOB_ID") != "" {
			run = "slurm-" + env("SLURM_ARRAY_JOB_ID")
		}
	case env("BUILDKITE_PARALLEL_JOB") != "" && env("BUILDKITE_PARALLEL_JOB_COUNT") != "":
		if s.Index, err = num("BUILDKITE_PARALLEL_JOB"); err == nil {
			s.Count, err = num("BUILDKITE_PARALLEL_JOB_COUNT")
		}
		if run == "" && env("BUILDKITE_BUILD_ID") != "" {
			run = "buildkite-" + env("BUILDKITE_BUILD_ID") + "-" + env("BUILDKITE_STEP_ID")
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.Split = max(c.ShardSplit, 1)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if run == "" {
		if !seedGiven {
			return nil, fmt.Errorf("shard %s: the shards of a run need a shared identity and base seed: give -ptxprop.shard-run (%s) or -ptxprop.seed", s, EnvName("shard-run"))
		}
		run = fmt.Sprintf("seed-%d", seed)
	}
	return &sharding{Shard: s, Run: run}, nil
}

// rapid returns r, the run's rapid settings, as shard s uses them: a base
// seed every shard derives from the run's identity when none was given
// (seedGiven false), and, when contract runs are cut into seed ranges, a
// seed of the shard's own and a split-th of the checks, rounded up, so
// that the ranges together run at least the checks asked for. checks is
// the run's checks per contract run.
func (s *sharding) rapid(r Rapid, base uint64, seedGiven bool, checks int) Rapid {
	if !seedGiven {
		h := fnv.New64a()
		h.Write([]byte(s.Run))
		base = h.Sum64() | 1
		r.Seed = base
	}
	if s.Split > 1 {
		r.Seed = mixSeed(base, uint64(s.Index)) // splitmix64: well apart for neighbouring indexes
		r.Checks = (checks + s.Split - 1) / s.Split
	}
	return r
}

// mixSeed is splitmix64's finaliser of seed + (i+1)·golden ratio; never 0.
func mixSeed(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return (z ^ (z >> 31)) | 1
}

// report is the report's record of the shard.
func (s *sharding) report() *reports.Shard {
	if s == nil {
		return nil
	}
	return &reports.Shard{Run: s.Run, Count: s.Count, Split: s.Split, Indexes: []int{s.Index}}
}

// shardRapid resolves c's shard (resolveShard) and returns r, the run's
// rapid settings, as that shard uses them.
func shardRapid(c Config, r Rapid, lookup func(string) (string, bool)) (Rapid, *sharding, error) {
	base, given := r.Seed, c.Seed != 0 || c.Rapid.Seed != 0
	if r.Seed == 0 { // rapid's own -rapid.seed or RAPID_SEED, left as it is
		base, given = rapidUint("seed"), true
	}
	sh, err := resolveShard(c, base, given, lookup)
	if err != nil || sh == nil {
		return r, sh, err
	}
	checks := r.Checks
	if checks == 0 {
		checks = rapidInt("checks")
	}
	return sh.rapid(r, base, given, checks), sh, nil
}

// shardAndFailDB returns what the run's contract runs see of its shard
// and failure database.
func (r *runner) shardAndFailDB() (*properties.Shard, *properties.FailDB) {
	var s *properties.Shard
	if r.shard != nil {
		s = &r.shard.Shard
	}
	if r.cfg.FailDB == "" {
		return s, nil
	}
	return s, &properties.FailDB{DB: faildb.DB{Dir: r.cfg.FailDB}, KeepFailFiles: !r.outside}
}
