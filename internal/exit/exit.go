// Package exit holds every exit code vibe-test uses, in one place, and the
// error type that carries one up to main. CI systems depend on these numbers;
// the README documents them.
package exit

import (
	"errors"
	"fmt"
)

const (
	// OK: no decay shown: held, or not enough evidence (the sentence says
	// which).
	OK = 0
	// Decay: the run's rule fired; with the default rule (diluted-vs-fresh),
	// the probes passed significantly less often diluted than fresh
	// (result.Decide).
	Decay = 1
	// Indeterminate: the skill does not work fresh (fewer than half the
	// baselines passed), so there is nothing to decay from.
	Indeterminate = 2
	// Tool: vibe-test could not do its job (bad input, claude missing or
	// refusing, model errors past retries, judge errors).
	Tool = 3
	// Interrupted: SIGINT/SIGTERM; the run folder is kept.
	Interrupted = 130
)

// Error is an error that decides the process's exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an Error with a formatted message.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// With gives err an exit code, keeping its message.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Code is the exit code for err: its own if it carries one, else Tool.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Tool
}
