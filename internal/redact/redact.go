// Package redact keeps secrets out of everything vibe-test saves or prints:
// the values of the credential variables, of every --pass-env variable and
// of every variable of the author's environment whose name looks secret,
// and strings shaped like API keys or tokens, and URLs' passwords, wherever
// they appear.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// keyShapes are strings that look like credentials whatever variable they
// came from: Anthropic and OpenAI-style keys, GitHub tokens (classic and
// fine-grained), GitLab personal access tokens, Slack tokens, AWS access
// key ids, Google API keys, npm, PyPI and Hugging Face tokens, Stripe
// secret and restricted keys, JWTs and PEM private keys (in a transcript
// their newlines are "\n").
var keyShapes = regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{20,}|github_pat_[A-Za-z0-9_]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_\-]{20,}|xox[baprs]-[A-Za-z0-9\-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_\-]{50,}|hf_[A-Za-z0-9]{30,}|[rs]k_(?:live|test)_[A-Za-z0-9]{20,}|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)

// awsSecret is an AWS secret access key: 40 base64 characters, recognised
// by the name before it (alone they look like any other text).
var awsSecret = regexp.MustCompile(`(?i)(aws_?secret_?access_?key["']?\s*[=:]\s*["']?)[A-Za-z0-9/+]{40}`)

// urlPassword is the password of a URL written with one
// (scheme://user:password@host), wherever it appears: a tool's output (git
// remote -v, a connection string in a config file) carries URLs that no
// variable of the author's environment named. The password may hold ':'
// (RFC 3986 userinfo); it ends at the '@', and never spans a '/', '?', '#',
// white space, a quote or a backslash (a JSON escape).
var urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:"'\\]*:)[^\s/?#@"'\\]+(@)`)

// secretName matches variable names whose values are treated as secrets.
// PW where a word ends (MY_DB_PW, LDAP_ROOTPW, DB_PW1, PW_ADMIN), not
// inside one (PWRITE).
var secretName = regexp.MustCompile(`KEY|TOKEN|SECRET|PASSW|PASS|PWD|PW[0-9]*(_|$)|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|CERT|API`)

// notSecretName: variables that hold paths or addresses, not secrets, though
// their names match (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, KEYTAB_FILE);
// masking a path would shred every transcript that mentions it.
var notSecretName = regexp.MustCompile(`(_SOCK|_PATH|_FILE|_DIR|_ADDRESS|_URL|_HOST|_PORT|_TYPE|_ID)$|^PWD$|^OLDPWD$`)

// MinLength is the shortest value redacted by value: masking shorter ones
// would shred ordinary text.
const MinLength = 8

// Redactor removes known secret values and key-shaped strings.
type Redactor struct {
	values []string // longest first, so a value containing another goes whole
}

// New makes a redactor for the given secret values (values shorter than
// MinLength are ignored). Each value is also masked in its JSON-escaped
// form, the way it appears inside a transcript line.
func New(values ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= MinLength && !seen[v] {
			seen[v] = true
			r.values = append(r.values, v)
		}
	}
	for _, v := range values {
		add(v)
		add(jsonEscaped(v))
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// isPath: an existing absolute path (GNOME_KEYRING_CONTROL, say) is no
// secret, and masking it would shred every transcript that mentions it.
func isPath(v string) bool {
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\n") {
		return false
	}
	_, err := os.Stat(v)
	return err == nil
}

func jsonEscaped(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return v
	}
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(b.String(), `"`), "\n"), `"`)
}

// FromEnv collects the values to mask from env (KEY=VALUE, the author's
// whole environment): the named variables (credentials, --pass-env), every
// variable whose name looks secret (KEY, TOKEN, SECRET, PASSWORD, AUTH,
// COOKIE, SESSION, PRIVATE, ...), and each header value of
// ANTHROPIC_CUSTOM_HEADERS.
func FromEnv(env []string, names []string) *Redactor {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var vals []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		// AUTHOR holds AUTH: GIT_AUTHOR_NAME is no secret.
		upper := strings.ReplaceAll(strings.ToUpper(k), "AUTHOR", "")
		if want[k] || secretName.MatchString(upper) && !notSecretName.MatchString(upper) && !isPath(v) {
			vals = append(vals, v)
		}
		// A URL's password (HTTPS_PROXY=http://user:pass@proxy,
		// ANTHROPIC_BASE_URL with credentials): the names say URL, not
		// secret, and the agent's environment carries them.
		vals = append(vals, urlPasswords(v)...)
		if k == "ANTHROPIC_CUSTOM_HEADERS" {
			vals = append(vals, v)
			for _, line := range strings.Split(v, "\n") {
				if _, hv, ok := strings.Cut(line, ":"); ok {
					vals = append(vals, strings.TrimSpace(hv))
				}
			}
		}
	}
	return New(vals...)
}

// urlPasswords is the password of a URL with one (scheme://user:pass@host),
// as written and decoded, and its whole user:pass.
func urlPasswords(v string) []string {
	_, rest, ok := strings.Cut(v, "://")
	if !ok || !strings.Contains(rest, "@") {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return nil
	}
	pass, ok := u.User.Password()
	if !ok || pass == "" {
		return nil
	}
	userinfo, _, _ := strings.Cut(rest, "@")
	_, raw, _ := strings.Cut(userinfo, ":")
	return []string{pass, raw, userinfo}
}

// keyMarks are substrings every match of keyShapes contains (each of its
// alternatives starts with one), so text without any of them holds no key
// shape: the regexp, whose alternatives share no literal prefix, runs only
// where one appears. Over the recorded transcripts the Writer went from
// 5.6 to some 128 MB/s (BenchmarkWriter); FuzzStringMatchesRegexps holds
// the output to the regexps' alone.
var keyMarks = []string{"sk-", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "xox", "AKIA", "ASIA", "AIza",
	"npm_", "pypi-", "hf_", "k_live_", "k_test_", "eyJ", "-----BEGIN "}

// mayHoldKeyShape reports whether s contains one of keyMarks.
func mayHoldKeyShape(s string) bool {
	for _, m := range keyMarks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// mayHoldAWSSecret reports whether s contains "aws" in any case, which
// every match of awsSecret does, or U+017F (ſ), which its (?i) folds to s.
func mayHoldAWSSecret(s string) bool {
	if strings.Contains(s, "\u017f") {
		return true
	}
	for i := 0; i+3 <= len(s); i++ {
		// | 0x20 folds an ASCII letter to lower case (and nothing else to
		// a letter of "aws").
		if s[i]|0x20 == 'a' && s[i+1]|0x20 == 'w' && s[i+2]|0x20 == 's' {
			return true
		}
	}
	return false
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, v := range r.values {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	if mayHoldAWSSecret(s) {
		s = awsSecret.ReplaceAllString(s, "${1}"+Mask)
	}
	if i := strings.Index(s, "://"); i >= 0 && strings.IndexByte(s[i:], '@') >= 0 {
		s = urlPassword.ReplaceAllString(s, "${1}"+Mask+"${2}")
	}
	if mayHoldKeyShape(s) {
		s = keyShapes.ReplaceAllString(s, Mask)
	}
	return s
}

// Bytes redacts b.
func (r *Redactor) Bytes(b []byte) []byte {
	return []byte(r.String(string(b)))
}

// Writer redacts whole lines on their way to w, so a secret split across two
// writes is still caught. Close flushes a last unterminated line.
type Writer struct {
	r   *Redactor
	w   io.Writer
	buf []byte
	// A stream writer's (NewStreamWriter): which lines are pieces, the
	// lines held back, each stream's text held, and the end of each
	// stream's text already written.
	delta Delta
	queue []pending
	bytes int // the queue's
	held  map[string]int
	tails map[string]string
	ended map[string]bool
}

// NewWriter wraps w.
func (r *Redactor) NewWriter(w io.Writer) *Writer { return &Writer{r: r, w: w} }

func (lw *Writer) Write(p []byte) (int, error) {
	lw.buf = append(lw.buf, p...)
	for {
		i := bytes.IndexByte(lw.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := lw.buf[:i+1]
		lw.buf = lw.buf[i+1:]
		if lw.delta != nil {
			if err := lw.hold(line); err != nil {
				return len(p), err
			}
			continue
		}
		if _, err := lw.w.Write(lw.r.Bytes(line)); err != nil {
			return len(p), err
		}
	}
}

// Flush writes a pending partial line (a stream cut mid-line is kept),
// and a stream writer's held lines.
func (lw *Writer) Flush() error {
	if lw.delta != nil {
		if len(lw.buf) > 0 {
			// A piece cut by a kill is joined with the pieces before it
			// too: written as it was, the rest of a secret they began
			// went out with it.
			p := pending{line: lw.buf}
			if stream, path, ok := lw.delta(lw.buf); ok && path != "" {
				if text, at, ok := cutPiece(lw.buf, path); ok {
					p.stream, p.path, p.text, p.piece, p.cut = stream, path, text, true, at
					lw.held[stream] += len(text)
				}
			}
			lw.queue = append(lw.queue, p)
			lw.buf = nil
		}
		return lw.release(true)
	}
	if len(lw.buf) == 0 {
		return nil
	}
	_, err := lw.w.Write(lw.r.Bytes(lw.buf))
	lw.buf = nil
	return err
}
