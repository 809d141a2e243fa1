package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrSchemaVersion is wrapped by the error Read and Parse return for a file
// whose schema_version is missing or is not SchemaVersion.
var ErrSchemaVersion = errors.New("unsupported schema_version")

// Write validates r, encodes it as indented JSON and replaces the file at path
// atomically: it writes a temporary file in the same directory, fsyncs it,
// renames it over path and fsyncs the directory. It creates missing parent
// directories. On any error the previous file at path, if any, is untouched
// and no temporary file remains.
func Write(path string, r *Report) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("reports: write %s: %w", path, err)
	}
	data, err := Marshal(r)
	if err != nil {
		return fmt.Errorf("reports: write %s: %w", path, err)
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("reports: write %s: %w", path, err)
	}
	return nil
}

// Marshal returns the file contents Write would write for r (indented JSON,
// HTML characters unescaped, trailing newline), without validating r beyond
// what marshalling the enums checks.
func Marshal(r *Report) ([]byte, error) {
	b, err := marshalJSON(r)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// marshalJSON is json.Marshal without HTML escaping ("err < tol" stays
// readable).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeData writes the temporary file; tests replace it to simulate a
// failing disk.
var writeData = func(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	if err = writeData(f, data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	closed = true
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename durable. Not every system can fsync a directory
	// (Windows cannot open one for it); the data itself is already synced.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Read reads and parses the report at path; see Parse. An error from the file
// system is returned wrapped, so errors.Is(err, fs.ErrNotExist) works.
func Read(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reports: read: %w", err)
	}
	r, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("reports: read %s: %w", path, err)
	}
	return r, nil
}

// Parse decodes a report. It fails, with an error wrapping ErrSchemaVersion,
// when schema_version is missing or not SchemaVersion; and, with an error
// wrapping ErrInvalid, when a required field is missing or null, a field is
// unknown, or Validate fails.
func Parse(data []byte) (*Report, error) {
	r, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	return r, nil
}

func parse(data []byte) (*Report, error) {
	var head struct {
		SchemaVersion *string `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	switch {
	case head.SchemaVersion == nil:
		return nil, fmt.Errorf("%w: no schema_version (not a ptxprop contract report?)", ErrSchemaVersion)
	case *head.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("%w: file has %q, this ptxprop reads %q", ErrSchemaVersion, *head.SchemaVersion, SchemaVersion)
	}

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var v validator
	requireFields(&v, "", doc, reflect.TypeFor[Report]())
	if err := v.err(); err != nil {
		return nil, err
	}

	r := new(Report)
	if err := strictUnmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// strictUnmarshal is json.Unmarshal that rejects unknown fields (the schema's
// additionalProperties: false) and trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// requireFields walks the decoded document doc along the Go type t and
// reports what the schema forbids but encoding/json lets pass: missing
// required fields (those without omitempty or omitzero), null values (no
// field is nullable) and keys that match a field only case-insensitively.
func requireFields(v *validator, at string, doc any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Slice:
		if list, ok := doc.([]any); ok {
			for i, e := range list {
				requireFields(v, fmt.Sprintf("%s[%d]", at, i), e, t.Elem())
			}
		}
	case t.Kind() == reflect.Struct && t != timeType:
		obj, ok := doc.(map[string]any)
		if !ok {
			return // a type mismatch; json.Unmarshal reports it
		}
		known := make(map[string]bool)
		for i := range t.NumField() {
			name, required := jsonField(t.Field(i))
			if name == "" {
				continue
			}
			known[name] = true
			where := name
			if at != "" {
				where = at + "." + name
			}
			val, present := obj[name]
			switch {
			case !present && required:
				v.addf("%s is missing", where)
			case present && val == nil:
				v.addf("%s is null", where)
			case present:
				requireFields(v, where, val, t.Field(i).Type)
			}
		}
		// encoding/json matches keys case-insensitively; the schema does not.
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !known[k] {
				where := k
				if at != "" {
					where = at + "." + k
				}
				v.addf("%s is not a field of %s", where, t.Name())
			}
		}
	}
}

// jsonField returns the JSON name of f ("" if not encoded) and whether it is
// always encoded, which is what the schema lists as required.
func jsonField(f reflect.StructField) (name string, required bool) {
	tag, ok := f.Tag.Lookup("json")
	if !ok || !f.IsExported() || tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			return name, false
		}
	}
	return name, true
}

// Update applies fn to the report at path and writes the result atomically,
// holding an exclusive lock (the file path + ".lock", removed when the
// Update ends) so that concurrent Updates from goroutines or processes lose
// no write.
// When path does not exist, fn receives a report holding only SchemaVersion
// (r.Run.Start.IsZero()) and must fill in Run. If path exists but cannot be
// read or parsed, or fn fails, nothing is written and the error is returned.
func Update(path string, fn func(r *Report) error) error {
	unlock, err := lock(path)
	if err != nil {
		return fmt.Errorf("reports: update %s: %w", path, err)
	}
	defer unlock()
	r, err := Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r = &Report{SchemaVersion: SchemaVersion}
	case err != nil:
		return err
	}
	if err := fn(r); err != nil {
		return fmt.Errorf("reports: update %s: %w", path, err)
	}
	return Write(path, r)
}

// inProcess serialises Updates of one path within this process before they
// contend for the file lock, so waiting goroutines do not each hold a thread
// blocked in the lock system call.
var inProcess sync.Map // absolute path → *sync.Mutex

func lock(path string) (unlock func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	mu, _ := inProcess.LoadOrStore(abs, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		mu.(*sync.Mutex).Unlock()
		return nil, err
	}
	release, err := lockFile(abs + ".lock")
	if err != nil {
		mu.(*sync.Mutex).Unlock()
		return nil, err
	}
	return func() {
		release()
		mu.(*sync.Mutex).Unlock()
	}, nil
}
