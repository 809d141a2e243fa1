package reports

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestSchemaAcceptsProducedReports(t *testing.T) {
	empty := minimalReport() // nil lists must encode as []
	for name, r := range map[string]*Report{"sample": sampleReport(), "minimal": empty} {
		t.Run(name, func(t *testing.T) {
			if err := r.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			data := mustMarshal(t, r)
			if err := schemaValidate(t, data); err != nil {
				t.Fatalf("schema rejects a report Marshal produced: %v\n%s", err, data)
			}
			if _, err := Parse(data); err != nil {
				t.Fatalf("Parse rejects a report Marshal produced: %v", err)
			}
		})
	}
}

// path returns the object at a path of keys and indices in a document.
func at(m map[string]any, path ...any) map[string]any {
	var v any = m
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	return v.(map[string]any)
}

// TestInvalidReportsRejected edits a valid document in one way each and
// requires both the schema and Parse to reject it: the schema and the Go
// validation must agree.
func TestInvalidReportsRejected(t *testing.T) {
	cases := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"prediction status not an enum value", func(m map[string]any) { at(m, "predictions", 0)["status"] = "passed" }},
		{"prediction status upper case", func(m map[string]any) { at(m, "predictions", 0)["status"] = "Discharged" }},
		{"prediction status empty", func(m map[string]any) { at(m, "predictions", 0)["status"] = "" }},
		{"backend", func(m map[string]any) { at(m, "run")["backend"] = "cuda" }},
		{"mutant kind", func(m map[string]any) { at(m, "mutants", 1)["kind"] = "random" }},
		{"mutant status", func(m map[string]any) { at(m, "mutants", 1)["status"] = "alive" }},
		{"flag", func(m map[string]any) { at(m, "predictions", 1)["flags"] = []any{"flaky"} }},
		{"repeated flag", func(m map[string]any) { at(m, "predictions", 1)["flags"] = []any{"unproven", "unproven"} }},
		{"missing prediction id", func(m map[string]any) { delete(at(m, "predictions", 0), "id") }},
		{"empty prediction id", func(m map[string]any) { at(m, "predictions", 0)["id"] = "" }},
		{"missing prediction status", func(m map[string]any) { delete(at(m, "predictions", 0), "status") }},
		{"missing checks", func(m map[string]any) { delete(at(m, "predictions", 2), "checks") }},
		{"missing checks_failed", func(m map[string]any) { delete(at(m, "predictions", 2), "checks_failed") }},
		{"null checks", func(m map[string]any) { at(m, "predictions", 2)["checks"] = nil }},
		{"negative checks", func(m map[string]any) { at(m, "predictions", 2)["checks"] = -1 }},
		{"fractional checks", func(m map[string]any) { at(m, "predictions", 2)["checks"] = 1.5 }},
		{"negative duration", func(m map[string]any) { at(m, "predictions", 0)["duration_s"] = -0.5 }},
		{"missing run", func(m map[string]any) { delete(m, "run") }},
		{"missing run start", func(m map[string]any) { delete(at(m, "run"), "start") }},
		{"run start not RFC 3339", func(m map[string]any) { at(m, "run")["start"] = "yesterday" }},
		{"missing run backend", func(m map[string]any) { delete(at(m, "run"), "backend") }},
		{"missing run go_version", func(m map[string]any) { delete(at(m, "run"), "go_version") }},
		{"missing predictions", func(m map[string]any) { delete(m, "predictions") }},
		{"null predictions", func(m map[string]any) { m["predictions"] = nil }},
		{"missing mutants", func(m map[string]any) { delete(m, "mutants") }},
		{"missing kernels", func(m map[string]any) { delete(m, "kernels") }},
		{"unknown top-level field", func(m map[string]any) { m["extra"] = 1 }},
		{"unknown run field", func(m map[string]any) { at(m, "run")["gpu_temp"] = 40 }},
		{"unknown prediction field", func(m map[string]any) { at(m, "predictions", 0)["Status"] = "discharged" }},
		{"unknown error_stats field", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_err"] = 1 }},
		{"error_stats missing max_ratio", func(m map[string]any) { delete(at(m, "predictions", 0, "error_stats"), "max_ratio") }},
		{"error_stats bad non-finite spelling", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_abs"] = "inf" }},
		{"empty counterexample", func(m map[string]any) { at(m, "predictions", 1)["counterexample"] = map[string]any{} }},
		{"draw without value", func(m map[string]any) { delete(at(m, "predictions", 1, "counterexample", "draws", 0), "value") }},
		{"reproduction without command", func(m map[string]any) { delete(at(m, "predictions", 1, "reproduction"), "command") }},
		{"killed mutant without killed_by", func(m map[string]any) { delete(at(m, "mutants", 0), "killed_by") }},
		{"missing mutant name", func(m map[string]any) { delete(at(m, "mutants", 0), "name") }},
		{"missing kernel entry", func(m map[string]any) { delete(at(m, "kernels", 0), "entry") }},
		{"upper-case sha", func(m map[string]any) { at(m, "kernels", 0)["ptx_sha256"] = strings.ToUpper(shaA) }},
		{"short sha", func(m map[string]any) { at(m, "kernels", 0)["source_sha256"] = "abc" }},
		{"negative bandwidth", func(m map[string]any) { at(m, "run")["copy_bandwidth_bytes_per_s"] = -1 }},
		{"missing schema_version", func(m map[string]any) { delete(m, "schema_version") }},
		{"other schema_version", func(m map[string]any) { m["schema_version"] = "ptxprop.contract-report/v1" }},
		{"no predictions", func(m map[string]any) { m["predictions"] = []any{} }},
		{"missing run id", func(m map[string]any) { delete(at(m, "run"), "id") }},
		{"empty run id", func(m map[string]any) { at(m, "run")["id"] = "" }},
		{"repeated merged_from", func(m map[string]any) { at(m, "run")["merged_from"] = []any{"a", "a"} }},
		{"discharged with max_ratio 5", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_ratio"] = 5 }},
		{"discharged with max_ratio NaN", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_ratio"] = "NaN" }},
		{"discharged with max_ratio +Inf", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_ratio"] = "+Inf" }},
		{"discharged with a failed check", func(m map[string]any) { at(m, "predictions", 0)["checks_failed"] = 1 }},
		{"max_ratio -1", func(m map[string]any) { at(m, "predictions", 1, "error_stats")["max_ratio"] = -1 }},
		{"max_abs -Inf", func(m map[string]any) { at(m, "predictions", 1, "error_stats")["max_abs"] = "-Inf" }},
		{"max_ulp negative", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_ulp"] = -2 }},
		{"naive_ratio negative", func(m map[string]any) { at(m, "predictions", 0, "error_stats")["naive_ratio"] = -0.5 }},
		{"falsified without reason", func(m map[string]any) { delete(at(m, "predictions", 1), "reason") }},
		{"falsified with a blank reason", func(m map[string]any) { at(m, "predictions", 1)["reason"] = " \n" }},
		{"not_run with checks", func(m map[string]any) { at(m, "predictions", 3)["checks"] = 4 }},
		{"mutant status not_exercised misspelt", func(m map[string]any) { at(m, "mutants", 3)["status"] = "not exercised" }},
		{"kernel without origin", func(m map[string]any) { delete(at(m, "kernels", 0), "origin") }},
		{"kernel origin", func(m map[string]any) { at(m, "kernels", 0)["origin"] = "theirs" }},
		{"kernel without ptx_sha256", func(m map[string]any) { delete(at(m, "kernels", 0), "ptx_sha256") }},
		{"kernel without ptx", func(m map[string]any) { delete(at(m, "kernels", 0), "ptx") }},
		{"binding kernel without binding", func(m map[string]any) { delete(at(m, "kernels", 1), "binding") }},
		{"our kernel with a binding", func(m map[string]any) { at(m, "kernels", 0)["binding"] = "x.yaml" }},
		{"device backend", func(m map[string]any) { at(m, "run", "devices", 1)["backend"] = "cuda" }},
		{"device without ordinal", func(m map[string]any) { delete(at(m, "run", "devices", 0), "ordinal") }},
		{"negative device ordinal", func(m map[string]any) { at(m, "run", "devices", 0)["ordinal"] = -1 }},
		{"device without launches", func(m map[string]any) { delete(at(m, "run", "devices", 1), "launches") }},
		{"unknown device field", func(m map[string]any) { at(m, "run", "devices", 0)["memory"] = 141 }},
		{"prediction devices repeated", func(m map[string]any) { at(m, "predictions", 0)["devices"] = []any{0, 0} }},
		{"negative prediction device", func(m map[string]any) { at(m, "predictions", 0)["devices"] = []any{-1} }},
		{"negative mutant device", func(m map[string]any) { at(m, "mutants", 4)["device"] = -1 }},
		{"negative mutant duration", func(m map[string]any) { at(m, "mutants", 4)["duration_s"] = -1 }},
		{"benchmark without copy ratios", func(m map[string]any) { at(m, "benchmarks", 1)["copy_ratio"] = []any{} }},
		{"benchmark negative ratio", func(m map[string]any) { at(m, "benchmarks", 0)["torch_eager_ratio"] = []any{1, -2} }},
		{"benchmark without kernel", func(m map[string]any) { delete(at(m, "benchmarks", 0), "kernel") }},
		{"benchmark blank shape", func(m map[string]any) { at(m, "benchmarks", 0)["shape"] = " " }},
		{"unknown benchmark field", func(m map[string]any) { at(m, "benchmarks", 0)["gbps"] = 1 }},
		{"sanitizer without tools", func(m map[string]any) { at(m, "sanitizer")["tools"] = []any{} }},
		{"sanitizer repeated tool", func(m map[string]any) { at(m, "sanitizer")["tools"] = []any{"memcheck", "racecheck", "memcheck"} }},
		{"sanitizer finding without kind", func(m map[string]any) { delete(at(m, "sanitizer", "findings", 0), "kind") }},
		{"sanitizer finding negative line", func(m map[string]any) { at(m, "sanitizer", "findings", 0)["ptx_line"] = -3 }},
		{"sanitizer without findings", func(m map[string]any) { delete(at(m, "sanitizer"), "findings") }},
		{"coverage negative branches", func(m map[string]any) { at(m, "coverage", 0)["branches"] = -1 }},
		{"coverage without covered", func(m map[string]any) { delete(at(m, "coverage", 0), "covered") }},
		{"uncovered line 0", func(m map[string]any) { at(m, "coverage", 0, "uncovered", 0)["line"] = 0 }},
		{"cost zero elements", func(m map[string]any) { at(m, "costs", 0)["elements"] = 0 }},
		{"cost negative bytes", func(m map[string]any) { at(m, "costs", 0)["bytes_per_element"] = -1 }},
		{"cost without instructions", func(m map[string]any) { delete(at(m, "costs", 0), "instructions_per_element") }},
		{"environment not a string", func(m map[string]any) { at(m, "run", "environment")["torch"] = 2 }},
		{"environment empty key", func(m map[string]any) { at(m, "run", "environment")[""] = "x" }},
		{"size stat negative checks", func(m map[string]any) { at(m, "predictions", 0, "error_stats", "by_size", 0)["checks"] = -1 }},
		{"size stat ratio -Inf", func(m map[string]any) { at(m, "predictions", 0, "error_stats", "by_size", 0)["max_ratio"] = "-Inf" }},
		{"size stat without size_max", func(m map[string]any) { delete(at(m, "predictions", 0, "error_stats", "by_size", 0), "size_max") }},
	}
	base := mustMarshal(t, sampleReport())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := toDoc(t, base)
			c.edit(m)
			data := fromDoc(t, m)
			if err := schemaValidate(t, data); err == nil {
				t.Errorf("schema accepts an invalid report:\n%s", data)
			}
			_, err := Parse(data)
			switch {
			case err == nil:
				t.Errorf("Parse accepts an invalid report:\n%s", data)
			case !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrSchemaVersion):
				t.Errorf("Parse error wraps neither ErrInvalid nor ErrSchemaVersion: %v", err)
			default:
				t.Logf("Parse: %v", err)
			}
		})
	}
}

// schemaStructs maps each struct of the report to its schema location.
var schemaStructs = map[reflect.Type]string{
	reflect.TypeFor[Report]():           "",
	reflect.TypeFor[Run]():              "run",
	reflect.TypeFor[Device]():           "device",
	reflect.TypeFor[Prediction]():       "prediction",
	reflect.TypeFor[Counterexample]():   "counterexample",
	reflect.TypeFor[Draw]():             "draw",
	reflect.TypeFor[Reproduction]():     "reproduction",
	reflect.TypeFor[ErrorStats]():       "error_stats",
	reflect.TypeFor[Search]():           "search",
	reflect.TypeFor[SearchWorst]():      "search_worst",
	reflect.TypeFor[Mutant]():           "mutant",
	reflect.TypeFor[Kernel]():           "kernel",
	reflect.TypeFor[Benchmark]():        "benchmark",
	reflect.TypeFor[Sanitizer]():        "sanitizer",
	reflect.TypeFor[SanitizerFinding](): "sanitizer_finding",
	reflect.TypeFor[Coverage]():         "coverage",
	reflect.TypeFor[UncoveredBranch]():  "uncovered_branch",
	reflect.TypeFor[Cost]():             "cost",
	reflect.TypeFor[SizeStat]():         "size_stat",
	reflect.TypeFor[Shard]():            "shard",
}

// schemaEnums maps each enum type to its schema definition and Go values.
var schemaEnums = map[reflect.Type]struct {
	def    string
	values []string
}{
	reflect.TypeFor[Backend]():          {"backend", strs(backends)},
	reflect.TypeFor[PredictionStatus](): {"prediction_status", strs(predictionStatuses)},
	reflect.TypeFor[MutantKind]():       {"mutant_kind", strs(mutantKinds)},
	reflect.TypeFor[MutantStatus]():     {"mutant_status", strs(mutantStatuses)},
	reflect.TypeFor[Flag]():             {"flag", strs(flags)},
	reflect.TypeFor[KernelOrigin]():     {"kernel_origin", strs(kernelOrigins)},
}

func strs[E ~string](es []E) []string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = string(e)
	}
	return s
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func anyStrings(v any) []string {
	var s []string
	for _, e := range v.([]any) {
		s = append(s, e.(string))
	}
	return s
}

// TestSchemaMatchesTypes checks, struct by struct, that the schema lists
// exactly the Go fields' JSON names as properties, requires exactly the
// fields encoded always (no omitempty/omitzero), forbids other properties,
// and refers to the right definition for nested structs and enums.
func TestSchemaMatchesTypes(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if s["$id"] != SchemaID {
		t.Errorf("$id = %v, want SchemaID %q", s["$id"], SchemaID)
	}
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", s["$schema"])
	}
	defs := s["$defs"].(map[string]any)
	if c := s["properties"].(map[string]any)["schema_version"].(map[string]any)["const"]; c != SchemaVersion {
		t.Errorf("schema_version const = %v, want %q", c, SchemaVersion)
	}

	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == timeType || seen[typ] {
			return
		}
		seen[typ] = true
		loc, ok := schemaStructs[typ]
		if !ok {
			t.Errorf("struct %v has no schema definition (add it to schemaStructs and the schema)", typ)
			return
		}
		obj := s
		if loc != "" {
			obj = defs[loc].(map[string]any)
		}
		if obj["additionalProperties"] != false {
			t.Errorf("%v: additionalProperties is not false", typ)
		}
		props := obj["properties"].(map[string]any)
		var names, required []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, req := jsonField(f)
			if name == "" {
				continue
			}
			names = append(names, name)
			if req {
				required = append(required, name)
			}
			p, ok := props[name].(map[string]any)
			if !ok {
				continue // reported below
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Slice {
				if p["type"] != "array" {
					t.Errorf("%v.%s: schema type %v, want array", typ, name, p["type"])
				}
				p, _ = p["items"].(map[string]any)
				ft = ft.Elem()
			}
			wantRef := ""
			if d, ok := schemaStructs[ft]; ok {
				wantRef = "#/$defs/" + d
			} else if e, ok := schemaEnums[ft]; ok {
				wantRef = "#/$defs/" + e.def
			}
			if wantRef != "" && p["$ref"] != wantRef {
				t.Errorf("%v.%s: $ref %v, want %s", typ, name, p["$ref"], wantRef)
			}
			walk(f.Type)
		}
		sort.Strings(names)
		sort.Strings(required)
		if got := keys(props); !slices.Equal(got, names) {
			t.Errorf("%v: schema properties %v, Go JSON fields %v", typ, got, names)
		}
		var gotReq []string
		if r, ok := obj["required"]; ok {
			gotReq = anyStrings(r)
		}
		sort.Strings(gotReq)
		if !slices.Equal(gotReq, required) {
			t.Errorf("%v: schema required %v, Go always-encoded fields %v", typ, gotReq, required)
		}
	}
	walk(reflect.TypeFor[Report]())
	for typ := range schemaStructs {
		if !seen[typ] {
			t.Errorf("schemaStructs lists %v, which Report does not reach", typ)
		}
	}

	for typ, e := range schemaEnums {
		got := anyStrings(defs[e.def].(map[string]any)["enum"])
		if !slices.Equal(got, e.values) {
			t.Errorf("%v: schema enum %v, Go constants %v", typ, got, e.values)
		}
		for _, v := range e.values {
			if v != strings.ToLower(v) || v == "" {
				t.Errorf("%v: value %q is not lower case", typ, v)
			}
		}
	}
}

// TestSchemaFormats checks that times as Go writes them pass the schema's
// date-time format (asserted) and that a wrong one fails.
func TestSchemaFormats(t *testing.T) {
	r := minimalReport()
	r.Run.Start = time.Date(2026, 3, 4, 5, 6, 7, 1, time.FixedZone("X", 3600))
	r.Run.End = r.Run.Start.Add(time.Nanosecond)
	if err := schemaValidate(t, mustMarshal(t, r)); err != nil {
		t.Fatalf("schema rejects Go times: %v", err)
	}
}
