package reports

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// statusRank orders prediction statuses from the least to the most
// serious: the merged status of a prediction run in several shards is the
// most serious one (a single falsified shard falsifies it).
var statusRank = map[PredictionStatus]int{NotRun: 0, Skipped: 0, NotClaimed: 0, Discharged: 1, Inconclusive: 2, Error: 3, Falsified: 4}

// Merge combines reports of shards of one run — the same code on the same
// backend and device, split into processes, seeds or machines (e.g. a soak
// too long for one job) — into one report. For each prediction the shards
// that ran it (neither skipped, not_run nor not_claimed) are added up: checks, failed checks and
// durations are summed (so checks per second is the rate of one shard, not
// of the shards side by side), the error maxima are the maxima over the
// shards, and the status is the most serious one, with that shard's reason,
// counterexample and reproduction. A prediction no shard ran keeps the
// first shard's skip or not_claimed (or, if none has one, not_run). Kernels and mutants
// are united; the same kernel with other hashes, or the same mutant in two
// shards, is an error, as are shards of other commits, backends or devices.
//
// Every shard must be a different run: a report given twice, or a merged
// report together with one of the shards it holds, would count the same
// checks twice, so Merge refuses it (ErrSameRun). The merged run has a new
// ID and lists the shards' IDs (merged_from); it spans the shards (earliest
// start, latest end); its rapid_checks is their sum, each shard's command
// line becomes a note, and a shard that was stopped early stops it too.
func Merge(rs ...*Report) (*Report, error) {
	names := make([]string, len(rs))
	for i := range rs {
		names[i] = fmt.Sprintf("report %d", i+1)
	}
	return merge(names, rs)
}

// MergeFiles reads the reports at paths and merges them as Merge does; its
// errors name the files.
func MergeFiles(paths ...string) (*Report, error) {
	rs := make([]*Report, len(paths))
	for i, p := range paths {
		r, err := Read(p)
		if err != nil {
			return nil, err
		}
		rs[i] = r
	}
	return merge(paths, rs)
}

func merge(names []string, rs []*Report) (*Report, error) {
	if len(rs) == 0 {
		return nil, errors.New("reports: merge: no reports")
	}
	first := rs[0].Run
	run := Run{ID: NewRunID(), Start: first.Start, End: first.End, GitCommit: first.GitCommit, GoVersion: first.GoVersion,
		Host: first.Host, Backend: first.Backend, Device: first.Device, ComputeCapability: first.ComputeCapability,
		DriverVersion: first.DriverVersion, CUDAVersion: first.CUDAVersion, SMCount: first.SMCount, CopyBandwidth: first.CopyBandwidth}
	out := New(run)
	// Each shard is the runs it holds: itself, or those it was merged from.
	holder := map[string]int{}
	var same []string
	for i, r := range rs {
		ids := r.Run.MergedFrom
		if len(ids) == 0 {
			ids = []string{r.Run.ID}
		}
		for _, id := range ids {
			if j, ok := holder[id]; ok {
				same = append(same, fmt.Sprintf("%s and %s both hold run %s", names[j], names[i], quote(id)))
				continue
			}
			holder[id] = i
			out.Run.MergedFrom = append(out.Run.MergedFrom, id)
		}
	}
	if len(same) > 0 {
		return nil, fmt.Errorf("reports: merge: %w: %s; merging a run twice would count its checks twice", ErrSameRun, strings.Join(same, "; "))
	}
	shard, err := mergeShards(names, rs)
	if err != nil {
		return nil, err
	}
	out.Run.Shard = shard
	if shard != nil && len(shard.Indexes) < shard.Count {
		defer func() { // after the shards' own reasons
			out.Run.Stopped = strings.TrimPrefix(out.Run.Stopped+"; ", "; ") + missingPrefix + missingShards(shard)
		}()
	}
	var problems []string
	for i, r := range rs {
		q := r.Run
		q.Stopped = withoutMissingShards(q.Stopped) // recounted below
		if q.Stopped != "" {
			out.Run.Stopped = strings.TrimPrefix(out.Run.Stopped+"; ", "; ") + fmt.Sprintf("%s: %s", names[i], q.Stopped)
		}
		for _, c := range []struct{ what, a, b string }{
			{"git_commit", first.GitCommit, q.GitCommit},
			{"backend", string(first.Backend), string(q.Backend)},
			{"device", first.Device, q.Device},
		} {
			if c.a != c.b {
				problems = append(problems, fmt.Sprintf("%s: %s %s, %s: %s", names[i], c.what, quote(c.b), names[0], quote(c.a)))
			}
		}
		if q.Start.Before(out.Run.Start) {
			out.Run.Start = q.Start
		}
		if q.End.After(out.Run.End) {
			out.Run.End = q.End
		}
		if q.Host != out.Run.Host {
			out.Run.Host = ""
		}
		if err := out.Run.AddDevices(q.Devices); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", names[i], err))
		}
		out.Run.RapidChecks += q.RapidChecks
		out.Run.RapidLoops = max(out.Run.RapidLoops, q.RapidLoops)
		out.Run.Notes = append(out.Run.Notes, q.Notes...)
		out.Run.Notes = append(out.Run.Notes, fmt.Sprintf("shard %d: %s", i+1, strings.Join(q.CommandLine, " ")))
		for _, k := range r.Kernels {
			if have := out.Kernel(k.Name); have != nil && *have != k {
				problems = append(problems, fmt.Sprintf("%s: kernel %s differs from an earlier report's", names[i], quote(k.Name)))
				continue
			}
			out.UpsertKernel(k)
		}
		for _, m := range r.Mutants {
			if out.Mutant(m.Name) != nil {
				problems = append(problems, fmt.Sprintf("%s: mutant %s is in an earlier report too", names[i], quote(m.Name)))
				continue
			}
			out.UpsertMutant(m)
		}
		problems = append(problems, mergeNightly(out, r, names[i])...)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("reports: merge: not shards of one run: %s", strings.Join(problems, "; "))
	}
	var ids []string
	byID := map[string][]Prediction{}
	for _, r := range rs {
		for _, p := range r.Predictions {
			if _, ok := byID[p.ID]; !ok {
				ids = append(ids, p.ID)
			}
			byID[p.ID] = append(byID[p.ID], p)
		}
	}
	for _, id := range ids {
		out.Predictions = append(out.Predictions, mergePrediction(byID[id]))
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("reports: merge: %w", err)
	}
	return out, nil
}

// ErrSameRun is wrapped by Merge's error when two reports hold one run.
var ErrSameRun = errors.New("the same run twice")

// ErrSameShard is wrapped by Merge's error when two reports hold one shard
// of a sharded run (a shard run twice, e.g. a retried job): their checks
// overlap.
var ErrSameShard = errors.New("the same shard twice")

// mergeShards unites the shards rs hold: every report must be a shard of
// one sharded run (the same run identity, count and split), or none. A
// shard index held by two reports is an error wrapping ErrSameShard.
func mergeShards(names []string, rs []*Report) (*Shard, error) {
	var first *Shard
	for _, r := range rs {
		if r.Run.Shard != nil {
			first = r.Run.Shard
			break
		}
	}
	if first == nil {
		return nil, nil
	}
	out := &Shard{Run: first.Run, Count: first.Count, Split: first.Split}
	holder := map[int]int{}
	var problems, twice []string
	for i, r := range rs {
		s := r.Run.Shard
		switch {
		case s == nil:
			problems = append(problems, fmt.Sprintf("%s is not a shard", names[i]))
			continue
		case s.Run != first.Run || s.Count != first.Count || s.Split != first.Split:
			problems = append(problems, fmt.Sprintf("%s is a shard of run %s (count %d, split %d), another of run %s (count %d, split %d)",
				names[i], quote(s.Run), s.Count, s.Split, quote(first.Run), first.Count, first.Split))
			continue
		}
		for _, x := range s.Indexes {
			if j, ok := holder[x]; ok {
				twice = append(twice, fmt.Sprintf("%s and %s both hold shard %d/%d", names[j], names[i], x, s.Count))
				continue
			}
			holder[x] = i
			out.Indexes = append(out.Indexes, x)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("reports: merge: not shards of one sharded run: %s", strings.Join(problems, "; "))
	}
	if len(twice) > 0 {
		return nil, fmt.Errorf("reports: merge: %w: %s; its checks would count twice", ErrSameShard, strings.Join(twice, "; "))
	}
	slices.Sort(out.Indexes)
	return out, nil
}

// missingPrefix starts the reason a merge lacking shards is partial.
const missingPrefix = "missing shards "

// withoutMissingShards is a run's stopped reason less a merge's note of
// missing shards: a merge of merges says what the whole lacks.
func withoutMissingShards(stopped string) string {
	parts := strings.Split(stopped, "; ")
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "" || strings.HasPrefix(p, missingPrefix) })
	return strings.Join(parts, "; ")
}

// missingShards lists the indexes of s's run that s does not hold.
func missingShards(s *Shard) string {
	var miss []string
	for i := range s.Count {
		if !slices.Contains(s.Indexes, i) {
			miss = append(miss, fmt.Sprintf("%d/%d", i, s.Count))
		}
	}
	return strings.Join(miss, ", ")
}

// mergePrediction adds up one prediction's shards (see Merge).
func mergePrediction(ps []Prediction) Prediction {
	ran := slices.DeleteFunc(slices.Clone(ps), func(p Prediction) bool {
		return p.Status == Skipped || p.Status == NotRun || p.Status == NotClaimed
	})
	if len(ran) == 0 {
		for _, p := range ps {
			if p.Status == Skipped || p.Status == NotClaimed {
				return p
			}
		}
		return ps[0]
	}
	worst := ran[0]
	for _, p := range ran[1:] {
		if statusRank[p.Status] > statusRank[worst.Status] {
			worst = p
		}
	}
	m := worst
	m.Checks, m.ChecksFailed, m.Duration, m.ChecksPerSecond = 0, 0, 0, 0
	m.ErrorStats, m.Flags, m.NonDeterministic, m.Devices = nil, nil, "", nil
	m.Search = nil
	// The naive yardstick is the kernel's maximum error over the naive
	// evaluation's: the merged one is the merged maxima's quotient, each
	// shard's naive maximum being its MaxRatio / NaiveRatio.
	naiveMax, naive := 0.0, true
	for _, p := range ran {
		m.Checks += p.Checks
		m.ChecksFailed += p.ChecksFailed
		m.Devices = unionInts(m.Devices, p.Devices)
		m.Duration += p.Duration
		for _, f := range p.Flags {
			m.SetFlag(f)
		}
		if m.NonDeterministic == "" {
			m.NonDeterministic = p.NonDeterministic
		}
		m.Search = mergeSearch(m.Search, p.Search)
		s := p.ErrorStats
		if s == nil {
			continue
		}
		if m.ErrorStats == nil {
			c := *s
			c.MaxAbs, c.MaxRel, c.MaxULP = clonePtr(s.MaxAbs), clonePtr(s.MaxRel), clonePtr(s.MaxULP)
			c.NaiveRatio = nil
			c.BySize = mergeSizes(nil, s.BySize)
			m.ErrorStats = &c
		} else {
			e := m.ErrorStats
			e.MaxAbs, e.MaxRel, e.MaxULP = maxPtr(e.MaxAbs, s.MaxAbs), maxPtr(e.MaxRel, s.MaxRel), maxPtr(e.MaxULP, s.MaxULP)
			e.MaxRatio = math.Max(e.MaxRatio, s.MaxRatio)
			e.BySize = mergeSizes(e.BySize, s.BySize)
		}
		if s.NaiveRatio == nil || *s.NaiveRatio == 0 {
			naive = false
			continue
		}
		naiveMax = math.Max(naiveMax, s.MaxRatio / *s.NaiveRatio)
	}
	if m.ErrorStats != nil && naive && naiveMax > 0 {
		r := m.ErrorStats.MaxRatio / naiveMax
		m.ErrorStats.NaiveRatio = &r
	}
	if m.Duration > 0 {
		m.ChecksPerSecond = float64(m.Checks) / m.Duration
	}
	return m
}

func clonePtr(x *float64) *float64 {
	if x == nil {
		return nil
	}
	y := *x
	return &y
}

// maxPtr is the larger of two optional statistics (NaN wins, as in
// math.Max); absent in one shard, it is the other's.
func maxPtr(a, b *float64) *float64 {
	switch {
	case a == nil:
		return clonePtr(b)
	case b == nil:
		return a
	}
	m := math.Max(*a, *b)
	return &m
}

// AddDevices adds the devices of another invocation of the same run (a
// shard, or a run merged into this one's report) to r's: a device r does
// not have is appended, one it has (the same ordinal, backend and, where
// both know it, UUID) adds its contract runs and launches. Another device
// under one of r's ordinals is an error, and leaves r as it was.
func (r *Run) AddDevices(devs []Device) error {
	var problems []string
	for _, d := range devs {
		if have := r.RunDevice(d.Ordinal); have != nil && (have.Backend != d.Backend || (have.UUID != "" && d.UUID != "" && have.UUID != d.UUID)) {
			problems = append(problems, fmt.Sprintf("device %d is %s %s, the report's is %s %s", d.Ordinal, d.Backend, quote(d.UUID), have.Backend, quote(have.UUID)))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	for _, d := range devs {
		if have := r.RunDevice(d.Ordinal); have != nil {
			have.ContractRuns += d.ContractRuns
			have.Launches += d.Launches
			continue
		}
		r.Devices = append(r.Devices, d)
	}
	slices.SortFunc(r.Devices, func(a, b Device) int { return a.Ordinal - b.Ordinal })
	return nil
}

// unionInts returns the sorted union of a and b.
func unionInts(a, b []int) []int {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
