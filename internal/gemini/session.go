package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/jsonline"
)

// The CLI keeps each session as JSONL in
// $GEMINI_CLI_HOME/.gemini/tmp/<project slug>/chats/session-<time>-<id8>.jsonl
// (PROTOCOL §7): a header {sessionId, ...}, one record per message (a
// "gemini" record per model call, with its tokens and tool calls; written
// twice under one id, the second copy with the calls' results), and
// {"$set": ...} updates. A resumed invocation appends to the same file (a
// new header, a $set of the whole history, then its own records), and may
// leave a second file with only a header when the minute changed: a
// session is found by the id inside, not by the file name.
func sessionGlob(home string) string {
	return filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl")
}

// snapshot is the length of every session file before a turn: what the
// turn appended starts there.
type snapshot map[string]int64

func takeSnapshot(home string) snapshot {
	s := snapshot{}
	files, _ := filepath.Glob(sessionGlob(home))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			s[f] = st.Size()
		}
	}
	return s
}

// sessionIDRE: the form of id the CLI makes (a UUID); anything else names
// no file.
var sessionIDRE = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)

// sessionFiles are the files whose header names the session, largest
// first (the one holding its records).
func sessionFiles(home, id string) []string {
	if !sessionIDRE.MatchString(id) {
		return nil
	}
	files, _ := filepath.Glob(sessionGlob(home))
	var out []string
	var sizes []int64
	for _, f := range files {
		st, err := os.Lstat(f)
		if err != nil || !st.Mode().IsRegular() || headerID(f) != id {
			continue
		}
		k := len(out)
		for k > 0 && sizes[k-1] < st.Size() {
			k--
		}
		out = append(out[:k], append([]string{f}, out[k:]...)...)
		sizes = append(sizes[:k], append([]int64{st.Size()}, sizes[k:]...)...)
	}
	return out
}

// SessionFile is the file the CLI keeps session id in, under home (the
// conversation's GEMINI_CLI_HOME): the one with its records when a resume
// left a second. It appends one line per record, so a rerun can cut it
// back to its length after the last completed turn, as claude's.
func SessionFile(home, id string) (string, error) {
	files := sessionFiles(home, id)
	if len(files) == 0 {
		return "", fmt.Errorf("no session file of session %q under %s", id, filepath.Join(home, ".gemini", "tmp"))
	}
	return files[0], nil
}

func headerID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	return gjson.GetBytes(line, "sessionId").String()
}

// turnRecords reads the records the turn appended to session id's files
// since before: its model calls (type "gemini", deduplicated by id, the
// last copy kept, in order of first appearance) and the user records that
// carry tool responses (the model-facing results). Only plain records
// count: a resume's $set carries the whole history again. A record whose
// id was in the file before the turn is left out: in a live (ACP)
// session the CLI 0.61.0 re-appends an earlier turn's model call, tool
// calls and all, in place of a later one's (seen: turn 3 got turn 1's).
func turnRecords(home, id string, before snapshot) ([]json.RawMessage, string, error) {
	files := sessionFiles(home, id)
	if len(files) == 0 {
		return nil, "", fmt.Errorf("no session file of session %q", id)
	}
	var order []string
	byID := map[string]json.RawMessage{}
	used := ""
	for _, path := range files {
		old, recs, err := readFrom(path, before[path])
		if err != nil {
			return nil, "", err
		}
		for _, r := range recs {
			rid := gjson.GetBytes(r, "id").String()
			if old[rid] {
				continue
			}
			if _, seen := byID[rid]; !seen {
				order = append(order, rid)
			}
			byID[rid] = r
			used = path
		}
	}
	if used == "" {
		used = files[0]
	}
	out := make([]json.RawMessage, 0, len(order))
	for _, rid := range order {
		out = append(out, byID[rid])
	}
	return out, used, nil
}

// readFrom reads path's records from byte offset on (model calls, and
// user records with tool responses), and the ids of the records before
// it. A last line without its newline (being written, or cut by a kill) is
// left out.
func readFrom(path string, offset int64) (old map[string]bool, recs []json.RawMessage, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the session file: %w", err)
	}
	if offset > int64(len(b)) {
		offset = 0 // rewritten since: read it all
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	old = map[string]bool{}
	pos := int64(0)
	for _, line := range bytes.SplitAfter(b, []byte{'\n'}) {
		start := pos
		pos += int64(len(line))
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !jsonline.Valid(line) {
			continue
		}
		r := gjson.ParseBytes(line)
		rid := r.Get("id").String()
		if rid == "" {
			continue
		}
		if start < offset {
			old[rid] = true
			continue
		}
		switch r.Get("type").String() {
		case "gemini":
		case "user":
			if !r.Get("content.#.functionResponse").Exists() || len(r.Get("content.#.functionResponse").Array()) == 0 {
				continue
			}
		default:
			continue
		}
		recs = append(recs, json.RawMessage(bytes.Clone(line)))
	}
	return old, recs, nil
}

// keepForLoad protects session id's history before a live process loads
// it. Starting, that process records a fresh conversation under the same
// id before session/load reads the old one (CLI 0.61.0): a header and a
// $set of only the session context, written to
// session-<this minute>-<id8>.jsonl. When that is the history's own file
// (a load within the minute the session began, as after a failed first
// turn), the reset lands in it and the load answers "No previous sessions
// found for this project." Renamed to a minute long past, the history
// stays whole: the fresh file holds only a header, which the CLI does not
// take for a session, and the load continues writing to the renamed one.
//
// A load that failed leaves its fresh file beside the history (a header and
// the session context); the next process wrote into it again, its load
// failed, and the CLI removed the renamed history: a second rerun of a turn
// lost the conversation. Those leftovers are removed first, so every load
// starts as the first did.
func keepForLoad(home, id string) error {
	files := sessionFiles(home, id)
	if len(files) == 0 {
		return fmt.Errorf("no session file of session %q under %s", id, filepath.Join(home, ".gemini", "tmp"))
	}
	path := files[0] // the largest: the history
	for _, leftover := range files[1:] {
		if err := os.Remove(leftover); err != nil {
			return fmt.Errorf("gemini: removing an earlier load's file: %w", err)
		}
	}
	safe := filepath.Join(filepath.Dir(path), "session-2000-01-01T00-00-"+id[:8]+".jsonl")
	if path == safe {
		return nil
	}
	if _, err := os.Lstat(safe); err == nil {
		return fmt.Errorf("gemini: %s exists beside %s", safe, path)
	}
	if err := os.Rename(path, safe); err != nil {
		return fmt.Errorf("gemini: keeping the session for its load: %w", err)
	}
	return nil
}
