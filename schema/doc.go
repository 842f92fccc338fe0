// Package schema holds the JSON Schemas (draft 2020-12) of run.json, the run
// record record.Run marshals, and of suite.json, the suite index
// record.Suite marshals, for tools that read run and suite folders. Its
// tests keep them in step with the Go types.
package schema

import _ "embed"

// RunSchema is run.schema.json.
//
//go:embed run.schema.json
var RunSchema []byte

// SuiteSchema is suite.schema.json.
//
//go:embed suite.schema.json
var SuiteSchema []byte
