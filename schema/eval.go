package schema

import _ "embed"

// EvalSchema is eval.schema.json: the object `vibe-test eval --json`
// prints (evalreport.Doc).
//
//go:embed eval.schema.json
var EvalSchema []byte
