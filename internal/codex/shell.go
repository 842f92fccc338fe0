package codex

import (
	"path"
	"strings"
)

// unwrapShell returns the command the model asked for out of the command
// line codex reports for it. The exec stream shows `/bin/bash -lc '<cmd>'`
// (the app-server the same, double-quoted when cmd holds a single quote;
// PROTOCOL.md §2, §6.2), while the model sent just <cmd>: rubric checks and
// the judge's trace look at what the model ran, as they do for claude's
// Bash. A line of any other shape is returned as it is.
func unwrapShell(line string) string {
	words, ok := shellWords(line)
	if !ok || len(words) != 3 {
		return line
	}
	switch path.Base(words[0]) {
	case "bash", "sh", "zsh", "dash":
	default:
		return line
	}
	if words[1] != "-lc" && words[1] != "-c" {
		return line
	}
	return words[2]
}

// shellWords splits s as a POSIX shell splits a simple command: blanks
// separate words, '…' is literal, "…" keeps everything but \ before $ ` "
// \ and newline, and an unquoted \ quotes the next character. ok is false
// for an unterminated quote.
func shellWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
