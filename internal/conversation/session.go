package conversation

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/sandbox"
)

// sessionID is the form of a session id the CLI makes (a UUID); anything
// else read from run.json (which can be edited) names no file.
var sessionID = regexp.MustCompile(`^[0-9a-fA-F-]{1,64}$`)

// sessionFile is the file in which the CLI keeps session id of this
// sandbox's folder: $CLAUDE_CONFIG_DIR/projects/<cwd>/<id>.jsonl. Only the
// config dir vibe-test owns for the conversation is used: hermetic, the
// sandbox's own; otherwise the author's, and in it only the project folder
// of this sandbox (never a path recorded in run.json).
func (d *Driver) sessionFile(sb *sandbox.Sandbox, id string) (string, error) {
	if d.Agent != nil {
		return d.agentSessionFile(sb, id)
	}
	if !sessionID.MatchString(id) {
		return "", fmt.Errorf("session id %q is not one the CLI makes", id)
	}
	configDir := d.AuthorConfigDir
	if d.Hermetic {
		configDir = sb.ConfigDir
	}
	if configDir == "" {
		return "", fmt.Errorf("no config dir for session %s", id)
	}
	return filepath.Join(sandbox.SessionDir(configDir, sb.Dir), id+".jsonl"), nil
}

// sessionBytes is the length of a session file (0 when it cannot be read).
func sessionBytes(path string) (int64, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", path)
	}
	return st.Size(), nil
}

// rewindSession cuts the session file at path back to its first keep
// bytes, the length it had when the last turn completed, so a rerun turn's
// prompt is not sent after the copy a stopped try already saved (the CLI
// appends each message as one line). The cut is atomic: the kept part is
// written to a new file that replaces the old one. It returns what was
// removed; nothing when the file did not grow.
func rewindSession(path string, keep int64) (removedBytes int64, removedLines int, err error) {
	size, err := sessionBytes(path)
	if err != nil {
		return 0, 0, fmt.Errorf("rewinding the session: %w", err)
	}
	switch {
	case size == keep:
		return 0, 0, nil
	case size < keep:
		return 0, 0, fmt.Errorf("rewinding the session: %s has %d bytes, fewer than the %d it had after the last completed turn", path, size, keep)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("rewinding the session: %w", err)
	}
	if int64(len(b)) < keep || (keep > 0 && b[keep-1] != '\n') {
		// Not an append since the turn completed: cutting here would
		// break a record, and the model would see a damaged history.
		return 0, 0, fmt.Errorf("rewinding the session: %s no longer ends a line at byte %d, the end of the last completed turn", path, keep)
	}
	tail := b[keep:]
	removedLines = bytes.Count(tail, []byte{'\n'})
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		removedLines++ // a last line cut short by a kill
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rewind-*")
	if err != nil {
		return 0, 0, fmt.Errorf("rewinding the session: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	_, err = tmp.Write(b[:keep])
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("rewinding the session: %w", err)
	}
	return int64(len(tail)), removedLines, nil
}

// liveSession is an interactive conversation's long-lived process, or none
// (before the first turn, and after a turn that did not succeed ended it).
// Only the conversation's goroutine uses it.
type liveSession struct {
	s *claude.Session
	a agent.Live // another agent's live process (Driver.Agent)
}

// send writes prompt to the live process, starting one first when there is
// none: a new session for turn 1 (resume ""), else resuming the
// conversation's session, which the rewind has cut back to the last
// completed turn. A turn that does not succeed ends the process (the CLI
// would fold its prompt into the next message).
func (l *liveSession) send(ctx context.Context, inv claude.Invocation, resume string, d *Driver, prompt string) (claude.Outcome, error) {
	if l.s == nil {
		inv.Args = d.agentArgs(claude.InteractiveArgs(resume, d.model(), d.Tools))
		s, err := claude.StartSession(inv)
		if err != nil {
			return claude.Outcome{}, err
		}
		l.s = s
	}
	out, err := l.s.Send(ctx, prompt, inv.Stdout, inv.Timeout)
	if err != nil || out.TimedOut || out.Turn.Failure(out.ExitCode) != "" {
		l.s.Close() // already stopped by Send; Close makes sure
		l.s = nil
	}
	return out, err
}

// rewindOnStart limits a rewind to the tries that start a new process:
// while the live process holds the session, its file is its own (a turn
// that failed ended it, so every rerun starts one). Without a live session
// (resume mode) every try rewinds.
func (l *liveSession) rewindOnStart(rewind func(reason string) error) func(reason string) error {
	if l == nil || rewind == nil {
		return rewind
	}
	return func(reason string) error {
		if l.s != nil || l.a != nil {
			return nil
		}
		return rewind(reason)
	}
}

// close ends the live process, if any.
func (l *liveSession) close() {
	if l != nil && l.s != nil {
		l.s.Close()
		l.s = nil
	}
	if l != nil && l.a != nil {
		l.a.Close()
		l.a = nil
	}
}
