package reports

import (
	"bytes"
	_ "embed"
)

// SchemaID is the $id of the JSON Schema (draft 2020-12) of SchemaVersion.
const SchemaID = "https://github.com/ptxprop/ptxprop/reports/schema/contract-report.v2.json"

//go:embed schema/contract-report.v2.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) that every report of
// SchemaVersion satisfies, as stored in schema/contract-report.v2.json.
func Schema() []byte { return bytes.Clone(schemaJSON) }
