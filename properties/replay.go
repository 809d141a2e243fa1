package properties

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ptxprop/ptxprop/faildb"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/reports"
)

// FailDB is a run's failure database (package faildb) as contract runs use
// it: before a contract run starts, the stored failures of its prediction
// and run name are put where rapid replays fail files first; when it ends,
// each replayed entry is marked passed or failed again, and a new
// counterexample is stored.
type FailDB struct {
	DB faildb.DB
	// Binding is the binding the contract runs check ("" for ptxprop's own
	// kernels): entries record it, and replay only their own.
	Binding string
	// KeepFailFiles leaves the fail file rapid wrote for a new failure in
	// testdata/rapid (go test's habit); false removes it once stored (a
	// run outside go test, which writes nothing there).
	KeepFailFiles bool
	// Now is the clock entries are stamped with (nil: time.Now).
	Now func() time.Time
}

func (f *FailDB) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now().UTC()
}

// replay is one contract run's use of the failure database.
type replay struct {
	db      *FailDB
	id, run string
	impls   []reports.Kernel
	staged  map[string]string // staged fail file → its entry's path
	seen    []string          // every fail file rapid replays, in its order
	mkdirs  []string          // staging directories that did not exist, deepest last
	notes   []string
}

// begin is what a contract run of prediction id does before rapid starts:
// it skips the run when another shard does it (ok false: t is skipped),
// and stages the stored failures for rapid to replay first.
func begin(t TB, id string, impls []reports.Kernel) (rp *replay, ok bool) {
	t.Helper()
	cfg := t.Config()
	if s := cfg.Shard; s != nil && s.Count > 1 {
		if _, mine := s.Owns(t.Name(), id); !mine {
			why := fmt.Sprintf("shard %s: the run's %s of %d seed ranges are other shards' (-ptxprop.shard)", s, rangesWord(s.ranges()), s.ranges())
			cfg.Recorder.Record(outcome.Outcome{ID: id, Status: outcome.NotRun, Reason: why, Runs: []string{t.Name()}, Impls: impls})
			t.Skipf("%s not run here: %s", id, why)
			return nil, false
		}
	}
	rp = &replay{db: cfg.FailDB, id: id, run: t.Name(), impls: impls}
	if rp.db != nil {
		// The directories that do not exist yet: end removes them when
		// empty, whether stage made them or rapid did for a fail file the
		// database took.
		for d := stagingDir(rp.run); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
			if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
				rp.mkdirs = append([]string{d}, rp.mkdirs...)
			}
		}
		rp.stage()
	}
	return rp, true
}

func rangesWord(n int) string {
	if n == 1 {
		return "one"
	}
	return "all"
}

// stagingDir is where rapid v1.3.0 looks for the fail files of the test
// named name before it generates any case (doCheck globs
// failFilePattern(tb.Name()), relative to the working directory).
func stagingDir(name string) string {
	return filepath.Join("testdata", "rapid", faildb.SafeName(name))
}

// stage copies the run's stored failures into the fail files rapid replays
// first. Their names carry the process ID, so that processes sharing a
// working directory (shards of one prediction) do not remove each other's.
func (rp *replay) stage() {
	entries, errs := rp.db.DB.For(rp.id, rp.run)
	for _, err := range errs {
		rp.notes = append(rp.notes, "failure database: "+err.Error())
	}
	entries = slices.DeleteFunc(entries, func(e faildb.Entry) bool { return e.Binding != rp.db.Binding })
	if len(entries) == 0 {
		return
	}
	dir := stagingDir(rp.run)
	if err := os.MkdirAll(dir, 0o775); err != nil {
		rp.notes = append(rp.notes, fmt.Sprintf("failure database: not replayed: %v", err))
		return
	}
	rp.staged = map[string]string{}
	safe := faildb.SafeName(rp.run)
	for _, e := range entries {
		data, err := e.Bytes()
		if err == nil {
			name := filepath.Join(dir, fmt.Sprintf("%s-ptxprop-faildb-%s-%d.fail", safe, e.Key(), os.Getpid()))
			if err = os.WriteFile(name, data, 0o664); err == nil {
				rp.staged[name] = e.Path
				continue
			}
		}
		rp.notes = append(rp.notes, fmt.Sprintf("failure database: %s not replayed: %v", e.Path, err))
	}
	// rapid's own glob, in its order: the files it will replay.
	rp.seen, _ = filepath.Glob(filepath.Join(dir, safe+"-*.fail"))
}

// end removes what stage put in place.
func (rp *replay) end() {
	if rp == nil {
		return
	}
	for name := range rp.staged {
		os.Remove(name)
	}
	for i := len(rp.mkdirs) - 1; i >= 0; i-- {
		os.Remove(rp.mkdirs[i]) // only if empty: rapid may have written a fail file
	}
}

// finish updates the database from the contract run's outcome o and what
// rapid said (l), and returns o with the stored input as its evidence when
// a stored failure failed again. Only a discharged or falsified run tells
// which replays passed: any other outcome leaves the entries as they were.
func (rp *replay) finish(t TB, o outcome.Outcome, l rapidLog) outcome.Outcome {
	if rp == nil || rp.db == nil {
		return o
	}
	o.Notes = append(o.Notes, rp.notes...)
	now := rp.db.now()
	mark := func(upto int) { // replays before index upto passed
		for i, name := range rp.seen {
			if entry, ok := rp.staged[name]; ok && i < upto {
				if _, err := faildb.Replayed(entry, false, now); err != nil {
					o.Notes = append(o.Notes, "failure database: "+err.Error())
				}
			}
		}
	}
	switch {
	case o.Status == outcome.Discharged:
		mark(len(rp.seen))
	case o.Status == outcome.Falsified && l.failed:
		at := slices.Index(rp.seen, filepath.Clean(l.failfile))
		if at < 0 {
			mark(len(rp.seen))
		} else {
			mark(at)
		}
		if entry, ok := rp.staged[filepath.Clean(l.failfile)]; ok {
			e, err := faildb.Replayed(entry, true, now)
			if err != nil {
				o.Notes = append(o.Notes, "failure database: "+err.Error())
				return o
			}
			return rp.evidence(t, o, l, e, fmt.Sprintf("a stored failure failed again: %s (first seen %s)", e.Path, e.FirstSeen.Format(time.RFC3339)))
		}
		if l.failfile == "" {
			o.Notes = append(o.Notes, "failure database: rapid wrote no fail file (-rapid.nofailfile): the counterexample is not stored")
			return o
		}
		data, err := os.ReadFile(l.failfile)
		var e faildb.Entry
		if err == nil {
			e.Input, err = faildb.FailFileInput(data)
		}
		if err == nil {
			e.Prediction, e.Binding, e.Run, e.Seed = rp.id, rp.db.Binding, rp.run, l.seed
			e.Kernels, e.Reason, e.Counterexample = outcome.ImplNames(rp.impls), o.Reason, l.draws
			e, err = rp.db.DB.Failed(e, now)
		}
		if err != nil {
			o.Notes = append(o.Notes, "failure database: counterexample not stored: "+err.Error())
			return o
		}
		if !rp.db.KeepFailFiles && at < 0 {
			os.Remove(l.failfile) // rapid wrote it for this failure; the entry holds it now
		}
		return rp.evidence(t, o, l, e, "counterexample stored in the failure database: "+e.Path)
	}
	return o
}

// evidence makes entry e the failure's fail file and reproduction, with
// note; the path is absolute, so that the reproduction works from any
// directory.
func (rp *replay) evidence(t TB, o outcome.Outcome, l rapidLog, e faildb.Entry, note string) outcome.Outcome {
	path := e.Path
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	o.Notes = append(o.Notes, t.Name()+": "+note)
	o.Failfile = path
	rec := t.Config().Recorder
	if rec != nil && rec.Repro != nil {
		o.Repro = rec.Repro(t.Name(), l.seed, path)
	} else {
		o.Repro = reproArgs(t.Name(), l.seed, path)
	}
	for i := range o.Failures {
		o.Failures[i].Failfile, o.Failures[i].Repro = o.Failfile, o.Repro
	}
	return o
}
