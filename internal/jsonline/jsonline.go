// Package jsonline says whether one line of an agent CLI's stream (or of a
// transcript saved from one) is JSON the drivers can read: valid, and not
// nested so deep that reading it overflows the stack. gjson's validator
// recurses once per level, and a line of ten million "[" (a tampered
// transcript, read back by resume or rejudge) ended the process with a
// fatal stack overflow that no recover catches.
package jsonline

import "github.com/tidwall/gjson"

// MaxDepth is the deepest nesting of arrays and objects a line may have.
// The CLIs' events nest a few levels; the stack gives out near ten million.
const MaxDepth = 10000

// deepFrom is the length below which a line cannot nest past MaxDepth:
// each level takes a byte. Shorter lines, every real event, skip the scan.
const deepFrom = MaxDepth

// Valid reports whether line is one JSON value nested at most MaxDepth
// deep.
func Valid(line []byte) bool {
	if len(line) > deepFrom && tooDeep(line) {
		return false
	}
	return gjson.ValidBytes(line)
}

// tooDeep reports whether line's arrays and objects, outside strings, nest
// past MaxDepth.
func tooDeep(line []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range line {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > MaxDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
