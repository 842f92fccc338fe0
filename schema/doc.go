// Package schema holds the JSON Schema (draft 2020-12) of run.json, the run
// record result.Run marshals, for tools that read run folders. Its tests
// keep it in step with the Go types.
package schema

import _ "embed"

// RunSchema is run.schema.json.
//
//go:embed run.schema.json
var RunSchema []byte
