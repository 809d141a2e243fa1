// Package reports defines the ptxprop contract report: the versioned JSON
// record of one run of the property suite (package properties) and of the
// mutation analysis (package falsify), together with its JSON Schema, an
// atomic writer, a locked read-modify-write for several test binaries, and
// renderers for the terminal (Summary), for documents (Markdown) and for CI
// (Diff, and Compare, which classes each change as a regression, an
// improvement or neither). Optional sections hold what a nightly run adds:
// benchmarks, the sanitizer pass, branch coverage and emulator costs
// (nightly.go). Package reports/page renders reports as an HTML page.
//
// # Conventions
//
// A report is versioned data in the manner of Go's cmd/internal/test2json:
//
//   - Every file carries schema_version, currently "ptxprop.contract-report/v2"
//     (SchemaVersion). Read refuses any other version with an error wrapping
//     ErrSchemaVersion. Adding a field or an enum value is a schema change:
//     update the Go types, schema/contract-report.v2.json and its tests together.
//   - Field names are snake_case; enum values are lower case. The enum types
//     (Backend, PredictionStatus, MutantKind, MutantStatus, Flag) refuse to
//     marshal or unmarshal a value outside their constants, so an invalid
//     status can never reach a file.
//   - A field that is absent means "not measured". Where zero is a meaningful
//     measurement and absence is not zero (a copy bandwidth, an element-wise
//     error statistic, a naive-CPU error ratio, a rapid seed), the field is a
//     pointer with omitempty.
//   - Times are RFC 3339 in UTC; durations are float seconds (suffix _s);
//     rates are per second; bandwidths are bytes per second.
//   - Error statistics may be NaN or ±Inf (a kernel that writes NaN has
//     an infinite error); they are encoded as the JSON strings "NaN", "+Inf"
//     and "-Inf" (an error statistic is never negative: NaN or +Inf at
//     worst). Every other float must be finite and non-negative.
//   - Every run has an ID (NewRun makes one); Merge refuses to add one run
//     up twice. A report is partial (Report.Partial) when a prediction has
//     status not_run or the run was stopped early (run.stopped).
//   - One mutation score (Score), used by every renderer and by the gate
//     of package falsify.
//   - A file is written whole or not at all: Write marshals first, writes a
//     temporary file in the target directory, fsyncs it and renames it over
//     the target. Update holds a lock file (path + ".lock", removed when it
//     ends) so that separate processes adding predictions and mutants to
//     one report lose nothing.
//
// The schema is embedded (Schema, SchemaID); the package validates with Go
// code (Report.Validate) that mirrors it and is tested against it, so it
// needs no JSON Schema library at run time.
//
// Package reports is a leaf: it imports nothing else of ptxprop. Nothing in it
// panics on bad input or calls os.Exit; every failure is a returned error.
package reports
