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
	"strconv"
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

// WriteFileAtomic writes data to path as Write writes a report: whole or
// not at all (a temporary file in path's directory, fsynced, renamed over
// path). The page of package page is written with it.
func WriteFileAtomic(path string, data []byte) error { return writeAtomic(path, data) }

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
// wrapping ErrInvalid, when the data is not a JSON object, a value has the
// wrong kind or an enum value is unknown, a required field is missing or
// null, a field is unknown, or Validate fails. Each problem names the JSON
// path of the value (predictions[3].status) and repeats at most a short
// prefix of it.
func Parse(data []byte) (*Report, error) {
	r, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	return r, nil
}

func parse(data []byte) (*Report, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, syntaxError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: unexpected data after the JSON value", ErrInvalid)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the file holds %s, not a JSON object (not a ptxprop contract report?)", ErrInvalid, describe(doc))
	}
	switch sv, ok := obj["schema_version"].(string); {
	case !ok:
		return nil, fmt.Errorf("%w: no schema_version (not a ptxprop contract report?)", ErrSchemaVersion)
	case sv != SchemaVersion:
		return nil, fmt.Errorf("%w: file has %s, this ptxprop reads %q", ErrSchemaVersion, quote(sv), SchemaVersion)
	}

	var v validator
	checkDoc(&v, "", doc, reflect.TypeFor[Report]())
	if err := v.err(); err != nil {
		return nil, err
	}
	r := new(Report)
	if err := strictUnmarshal(data, r); err != nil {
		// checkDoc admits only what decodes; this is a safety net.
		return nil, fmt.Errorf("%w: %s", ErrInvalid, syntaxError(data, err))
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// syntaxError describes a decoding error in the file's terms (line and
// column, JSON kinds) rather than Go's.
func syntaxError(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Sprintf("not valid JSON at line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "invalid character "))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "not valid JSON: the file ends in the middle of a value (truncated?)"
	case errors.As(err, &te):
		at := te.Field
		if at == "" {
			at = "a value"
		}
		return fmt.Sprintf("%s: a JSON %s where the schema wants another kind", at, te.Value)
	}
	return err.Error()
}

// position returns the 1-based line and column of byte offset off.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
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

var (
	timeType       = reflect.TypeFor[time.Time]()
	errorStatsType = reflect.TypeFor[ErrorStats]()
	extFloatType   = reflect.TypeFor[extFloat]()
	validType      = reflect.TypeFor[interface{ Valid() bool }]()
)

// describe names the JSON kind of a decoded value for a message, with the
// value itself when it is short: `an array`, `the string "x"`, `the number 5`.
func describe(doc any) string {
	switch x := doc.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "the string " + quote(x)
	case json.Number:
		if len(x) > quoteMax {
			return "a number of " + strconv.Itoa(len(x)) + " characters"
		}
		return "the number " + x.String()
	case bool:
		return fmt.Sprintf("%v", x)
	}
	return fmt.Sprintf("%T", doc)
}

// checkDoc walks the decoded document doc along the Go type t and reports,
// at its JSON path (run.start, predictions[3].status), what the schema
// forbids: a value of the wrong JSON kind, an enum value outside its
// constants, a number that is not an integer where one is wanted, a time
// that is not RFC 3339, a missing required field (one without omitempty or
// omitzero), null (no field is nullable) and an unknown key (encoding/json
// would match keys case-insensitively; the schema does not).
func checkDoc(v *validator, at string, doc any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	where := at
	if where == "" {
		where = "the report"
	}
	want := func(kind string) { v.addf("%s: want %s, got %s", where, kind, describe(doc)) }
	switch {
	case t == timeType:
		s, ok := doc.(string)
		if !ok {
			want("an RFC 3339 time string")
		} else if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			v.addf("%s: %s is not an RFC 3339 time", where, quote(s))
		}
	case t == extFloatType:
		switch x := doc.(type) {
		case json.Number:
		case string:
			if x != "NaN" && x != "+Inf" && x != "-Inf" {
				v.addf(`%s: %s is not a number (want a JSON number, "NaN", "+Inf" or "-Inf")`, where, quote(x))
			}
		default:
			want(`a number (or "NaN", "+Inf", "-Inf")`)
		}
	case t == errorStatsType:
		checkDoc(v, at, doc, reflect.TypeFor[errorStatsJSON]())
	case t.Kind() == reflect.Slice:
		list, ok := doc.([]any)
		if !ok {
			want("an array")
			return
		}
		for i, e := range list {
			checkDoc(v, fmt.Sprintf("%s[%d]", at, i), e, t.Elem())
		}
	case t.Kind() == reflect.String:
		s, ok := doc.(string)
		if !ok {
			want("a string")
			return
		}
		if t.Implements(validType) {
			if e := reflect.ValueOf(s).Convert(t).Interface().(interface{ Valid() bool }); !e.Valid() {
				v.addf("%s: %s", where, enumMessage(t, s))
			}
		}
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64, t.Kind() == reflect.Uint64:
		n, ok := doc.(json.Number)
		if !ok {
			want("an integer")
			return
		}
		var err error
		if t.Kind() == reflect.Uint64 {
			_, err = strconv.ParseUint(n.String(), 10, 64)
		} else {
			_, err = strconv.ParseInt(n.String(), 10, 64)
		}
		if err != nil {
			v.addf("%s: %s is not an integer in range", where, quote(n.String()))
		}
	case t.Kind() == reflect.Float64:
		if _, ok := doc.(json.Number); !ok {
			want("a number")
		}
	case t.Kind() == reflect.Bool:
		if _, ok := doc.(bool); !ok {
			want("true or false")
		}
	case t.Kind() == reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			want("an object")
			return
		}
		known := make(map[string]bool)
		for i := range t.NumField() {
			name, required := jsonField(t.Field(i))
			if name == "" {
				continue
			}
			known[name] = true
			field := name
			if at != "" {
				field = at + "." + name
			}
			val, present := obj[name]
			switch {
			case !present && required:
				v.addf("%s is missing", field)
			case present && val == nil:
				v.addf("%s is null", field)
			case present:
				checkDoc(v, field, val, t.Field(i).Type)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !known[k] {
				field := k
				if at != "" {
					field = at + "." + k
				}
				v.addf("%s is not a field of %s", quote(field), where)
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

// enumMessage is what the enum type t's UnmarshalText says of s.
func enumMessage(t reflect.Type, s string) string {
	u, ok := reflect.New(t).Interface().(interface{ UnmarshalText([]byte) error })
	if !ok {
		return quote(s) + " is not a valid value"
	}
	if err := u.UnmarshalText([]byte(s)); err != nil {
		return err.Error()
	}
	return quote(s) + " is not a valid value"
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
