// Package faildb is ptxprop's failure database: every counterexample a run
// finds, kept in a directory so that later runs replay it first, as
// Hypothesis's example database does, and a bug found once is checked on
// every run after.
//
// An entry is one small file, DIR/<prediction>-<key>.fail, that is itself a
// rapid fail file: rapid skips lines that start with '#', so the entry's
// metadata (the prediction, binding, kernels, the contract run's name, the
// failing check's seed, when it was first seen and last failed, how many
// replays have passed since) rides on one comment line, and
// go test -run '^Name$' -rapid.failfile=ENTRY replays the shrunk input
// beside it. Entries are written atomically (a temporary file renamed
// over the entry). Several processes may share a directory: a write never
// leaves a torn entry, but two processes updating one entry at once keep
// one of the two updates (a counter may miss a replay).
//
// The package imports nothing of ptxprop's; it holds no process-wide state.
package faildb

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Schema is the version of the metadata line an entry carries.
const Schema = 1

// metaPrefix starts the comment line that holds an entry's metadata.
const metaPrefix = "# ptxprop-faildb: "

// header is the first line of every entry: what the file is.
const header = "# ptxprop failure database entry; a rapid fail file: -rapid.failfile=<this file> replays it"

// Entry is one stored failure.
type Entry struct {
	Schema     int    `json:"schema"`
	Prediction string `json:"prediction"`        // the prediction ID it falsified
	Binding    string `json:"binding,omitempty"` // the binding it was checked on ("" for ptxprop's own kernels)
	// Kernels names the implementations the failing contract run checked.
	Kernels []string `json:"kernels,omitempty"`
	// Run is the contract run's name (the test's, e.g.
	// TestRMSNormForward/ours): replays are matched to it, as rapid
	// matches its fail files to the test's name.
	Run            string    `json:"run"`
	Seed           uint64    `json:"seed,omitempty"`   // the failing check's seed (0: unknown)
	Reason         string    `json:"reason,omitempty"` // the failure, as first reported
	Counterexample []string  `json:"counterexample,omitempty"`
	FirstSeen      time.Time `json:"first_seen"`
	LastFailed     time.Time `json:"last_failed"`
	// Passed counts the runs that replayed the entry and passed since it
	// last failed; Replayed is when the last replay was.
	Passed   int       `json:"passed"`
	Replayed time.Time `json:"replayed,omitzero"`

	// Input is the shrunk input: rapid's fail-file data, its
	// "version#seed" line and the bit stream, one value a line.
	Input string `json:"-"`
	// Path is where the entry is stored (set by the functions that read or
	// write one).
	Path string `json:"-"`
}

// Key identifies an entry: the same shrunk input of the same prediction
// in the same contract run is one entry, however often it is found.
func (e *Entry) Key() string {
	h := sha256.New()
	for _, s := range []string{e.Prediction, e.Binding, e.Run, e.Input} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// FileName is the entry's file name in its directory.
func (e *Entry) FileName() string { return SafeName(e.Prediction) + "-" + e.Key() + ".fail" }

// Bytes returns the entry's file: a rapid fail file with the metadata as
// comments.
func (e *Entry) Bytes() ([]byte, error) {
	m := *e
	m.Schema = Schema
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("faildb: encoding entry: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%s%s\n", header, metaPrefix, meta)
	for _, c := range e.Counterexample {
		fmt.Fprintf(&b, "# %s\n", strings.ReplaceAll(c, "\n", " "))
	}
	b.WriteString(strings.TrimSpace(e.Input))
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// ErrCorrupt is wrapped by the error about an entry that cannot be read.
var ErrCorrupt = errors.New("corrupt failure database entry")

// Parse reads an entry from the contents of its file.
func Parse(data []byte) (Entry, error) {
	var (
		e       Entry
		hasMeta bool
		input   []string
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, strings.TrimSpace(metaPrefix)):
			if hasMeta {
				return Entry{}, fmt.Errorf("%w: two metadata lines", ErrCorrupt)
			}
			hasMeta = true
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, strings.TrimSpace(metaPrefix))), &e); err != nil {
				return Entry{}, fmt.Errorf("%w: metadata: %v", ErrCorrupt, err)
			}
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			input = append(input, line)
		}
	}
	if err := sc.Err(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch {
	case !hasMeta:
		return Entry{}, fmt.Errorf("%w: no %q line", ErrCorrupt, strings.TrimSpace(metaPrefix))
	case e.Schema != Schema:
		return Entry{}, fmt.Errorf("%w: schema %d, want %d", ErrCorrupt, e.Schema, Schema)
	case e.Prediction == "" || e.Run == "":
		return Entry{}, fmt.Errorf("%w: no prediction or run", ErrCorrupt)
	}
	in, err := FailFileInput([]byte(strings.Join(input, "\n")))
	if err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	e.Input = in
	return e, nil
}

// FailFileInput returns the data of a rapid fail file: its lines that are
// not comments, checked as rapid v1.3.0 reads them (a "version#seed" line,
// then one unsigned integer a line).
func FailFileInput(data []byte) (string, error) {
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return "", errors.New("no input in the fail file")
	}
	if v, s, ok := strings.Cut(lines[0], "#"); !ok || v == "" || !isUint(s, 10) {
		return "", fmt.Errorf("fail file: bad version#seed line %q", lines[0])
	}
	for _, l := range lines[1:] {
		if !isUint(strings.TrimPrefix(l, "0x"), 16) && !isUint(l, 10) {
			return "", fmt.Errorf("fail file: bad value %q", l)
		}
	}
	return strings.Join(lines, "\n"), nil
}

func isUint(s string, base int) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || base == 16 && (r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')) {
			return false
		}
	}
	return true
}

// DB is a failure database directory.
type DB struct{ Dir string }

// Read reads the entry at path.
func Read(path string) (Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Entry{}, fmt.Errorf("faildb: %w", err)
	}
	e, err := Parse(data)
	if err != nil {
		return Entry{}, fmt.Errorf("faildb: %s: %w", path, err)
	}
	e.Path = path
	return e, nil
}

// List returns the entries in the directory, sorted by prediction, run and
// first sighting, and an error for each file that cannot be read (a
// corrupt entry is reported, never skipped in silence). A directory that
// does not exist holds no entries.
func (db DB) List() ([]Entry, []error) {
	paths, err := filepath.Glob(filepath.Join(db.Dir, "*.fail"))
	if err != nil {
		return nil, []error{fmt.Errorf("faildb: %w", err)}
	}
	var (
		es   []Entry
		errs []error
	)
	for _, p := range paths {
		e, err := Read(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		es = append(es, e)
	}
	slices.SortStableFunc(es, func(a, b Entry) int {
		if c := strings.Compare(a.Prediction, b.Prediction); c != 0 {
			return c
		}
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return a.FirstSeen.Compare(b.FirstSeen)
	})
	return es, errs
}

// For returns the entries of prediction in the contract run named run, in
// the order of their files, and the errors List reports.
func (db DB) For(prediction, run string) ([]Entry, []error) {
	all, errs := db.List()
	var es []Entry
	for _, e := range all {
		if e.Prediction == prediction && e.Run == run {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return es, errs
}

// Failed stores e as found failing at now: a new entry first seen now, or
// the entry with its key, whose last failure becomes now and whose count
// of passed replays restarts. It returns the entry as stored.
func (db DB) Failed(e Entry, now time.Time) (Entry, error) {
	if e.Prediction == "" || e.Run == "" {
		return Entry{}, errors.New("faildb: an entry needs its prediction and run")
	}
	in, err := FailFileInput([]byte(e.Input))
	if err != nil {
		return Entry{}, fmt.Errorf("faildb: %w", err)
	}
	e.Input = in
	path := filepath.Join(db.Dir, e.FileName())
	if old, err := Read(path); err == nil {
		old.LastFailed, old.Passed, old.Replayed = now, 0, now
		e = old
	} else {
		e.FirstSeen, e.LastFailed, e.Passed = now, now, 0
	}
	e.Path = path
	return e, write(e)
}

// Replayed records that the entry at path was replayed at now: failed
// again, or passed.
func Replayed(path string, failed bool, now time.Time) (Entry, error) {
	e, err := Read(path)
	if err != nil {
		return Entry{}, err
	}
	e.Replayed = now
	if failed {
		e.LastFailed, e.Passed = now, 0
	} else {
		e.Passed++
	}
	return e, write(e)
}

// Prune removes the entries that have passed at least passed replays since
// they last failed, and returns them; errors name the entries it could not
// read or remove (a corrupt entry is left for a person to look at).
func (db DB) Prune(passed int) ([]Entry, []error) {
	es, errs := db.List()
	var gone []Entry
	for _, e := range es {
		if e.Passed < passed {
			continue
		}
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("faildb: %w", err))
			continue
		}
		gone = append(gone, e)
	}
	return gone, errs
}

// write stores e at e.Path atomically: a temporary file in the same
// directory renamed over it.
func write(e Entry) error {
	data, err := e.Bytes()
	if err != nil {
		return err
	}
	dir := filepath.Dir(e.Path)
	if err := os.MkdirAll(dir, 0o775); err != nil {
		return fmt.Errorf("faildb: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*.fail~")
	if err != nil {
		return fmt.Errorf("faildb: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename: there is nothing left to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("faildb: writing %s: %w", e.Path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("faildb: writing %s: %w", e.Path, err)
	}
	if err := os.Rename(f.Name(), e.Path); err != nil {
		return fmt.Errorf("faildb: %w", err)
	}
	return nil
}

// SafeName is name as rapid v1.3.0 spells a test name in its fail files'
// paths (kindaSafeFilename): letters, digits, '-' and '_' kept, anything
// else '_'. (rapid also suffixes Windows' reserved device names; no test
// or prediction is named CON.)
func SafeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteRune('_')
		}
	}
	return b.String()
}
