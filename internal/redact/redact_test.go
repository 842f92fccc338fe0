package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := FromEnv([]string{"ANTHROPIC_API_KEY=my-very-secret-value", "OTHER=visible-value-here"}, []string{"ANTHROPIC_API_KEY"})
	in := `{"result":"key my-very-secret-value and sk-ant-api03-AbCdEfGhIjKlMnOp and visible-value-here"}`
	out := r.String(in)
	if strings.Contains(out, "my-very-secret-value") || strings.Contains(out, "sk-ant-api03") {
		t.Fatalf("secret left: %s", out)
	}
	if !strings.Contains(out, "visible-value-here") {
		t.Error("redacted a value that was not a secret")
	}
}

func TestWriterCatchesSplitSecrets(t *testing.T) {
	var buf bytes.Buffer
	w := New("split-secret-123").NewWriter(&buf)
	w.Write([]byte(`{"a":"split-sec`))
	w.Write([]byte("ret-123\"}\n{\"b\":\"tail split-secret-123"))
	w.Flush()
	if strings.Contains(buf.String(), "split-secret-123") || strings.Count(buf.String(), Mask) != 2 {
		t.Fatalf("%s", buf.String())
	}
}

// Each kind of secret is masked wherever it appears, raw or JSON-escaped,
// and ordinary text around it stays.
func TestRedactKinds(t *testing.T) {
	env := []string{
		"ANTHROPIC_API_KEY=sk-offline-value-1234",
		"MY_SERVICE_TOKEN=tok-plain-value-5678",
		"DB_PASSWORD=correct horse battery",
		"MY_DB_PW=db-pw-value-31415",
		"LDAP_ROOTPW=ldap-root-value-2718",
		"DB_PW1=db-pw-one-value-1618",
		"PWRITE_MODE=pwrite-mode-value-1",
		"SESSION_COOKIE=sess=abc\"quoted\\value",
		"PRIVATE_THING=privately-held-99",
		"CUSTOM_PASSED=passed-by-flag-42", // named by --pass-env only
		"ANTHROPIC_CUSTOM_HEADERS=X-Gateway-Key: header-secret-777\nX-Team: team-header-888",
		"SHORT_KEY=abc",                     // too short to mask
		"SSH_AUTH_SOCK=/tmp/agent.sock.1",   // a path name, not a secret
		"NODE_EXTRA_CA_CERTS=/etc/hostname", // an existing path
		"EDITOR=vim-with-plugins",           // not secret-looking
		"GIT_AUTHOR_NAME=Jane Q. Developer", // AUTHOR is not AUTH
		// A URL's password: the names say URL or PROXY, not secret.
		"HTTPS_PROXY=http://alice:hunter2pw@proxy.corp:3128",
		"ANTHROPIC_BASE_URL=https://gw:Gw%2FPass-123456@llm-gw.corp",
		"DOCS_URL=https://docs.example.com/a@b", // no password: kept
	}
	r := FromEnv(env, []string{"ANTHROPIC_API_KEY", "CUSTOM_PASSED"})
	for _, tc := range []struct{ kind, secret string }{
		{"credential variable", "sk-offline-value-1234"},
		{"secret-looking name", "tok-plain-value-5678"},
		{"password with spaces", "correct horse battery"},
		{"a _PW name", "db-pw-value-31415"},
		{"a name ending in PW", "ldap-root-value-2718"},
		{"a PW1 name", "db-pw-one-value-1618"},
		{"cookie with quotes (JSON-escaped form)", `sess=abc\"quoted\\value`},
		{"private", "privately-held-99"},
		{"--pass-env value", "passed-by-flag-42"},
		{"custom header value", "header-secret-777"},
		{"proxy password", "hunter2pw"},
		{"base URL password, as written", "Gw%2FPass-123456"},
		{"base URL password, decoded", "Gw/Pass-123456"},
		{"second custom header value", "team-header-888"},
		{"anthropic key shape", "sk-ant-api03-AbCdEfGhIjKlMnOp"},
		{"github classic token", "ghp_" + strings.Repeat("a1B2", 9)},
		{"github fine-grained token", "github_pat_11ABCDEFG0" + strings.Repeat("xY9", 20)},
		{"aws access key id", "AKIAIOSFODNN7EXAMPLE"},
		{"aws temporary key id", "ASIAIOSFODNN7EXAMPLE"},
		{"slack token", "xoxb-1234567890-abcdefghij"},
		{"google api key", "AIza" + strings.Repeat("Sy0_", 9)[:35]},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
		// The shapes of common publishing and service tokens (fake, of
		// the real lengths).
		{"gitlab personal access token", "glpat-" + "xZ3_kP9-" + strings.Repeat("q7", 6)},
		{"npm token", "npm_" + strings.Repeat("aB3d", 9)},
		{"pypi token", "pypi-AgEIcHlwaS5vcmcCJGU0" + strings.Repeat("Zm9v", 14)},
		{"hugging face token", "hf_" + strings.Repeat("AbCdEfGh", 5)[:34]},
		{"stripe secret key", "sk_live_" + strings.Repeat("51Hx", 6)},
		{"stripe restricted key", "rk_live_" + strings.Repeat("51Hx", 6)},
		{"stripe test key", "sk_test_" + strings.Repeat("4eC3", 6)},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			in := `{"result":"before ` + tc.secret + ` after"}`
			out := r.String(in)
			if strings.Contains(out, tc.secret) || !strings.Contains(out, "before "+Mask+" after") {
				t.Fatalf("%s: %s", tc.kind, out)
			}
		})
	}
	// AWS secret access keys are recognised by the name before them.
	aws := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	for _, in := range []string{
		"aws_secret_access_key = " + aws,
		`"AWS_SECRET_ACCESS_KEY": "` + aws + `"`,
		"export AWS_SECRET_ACCESS_KEY=" + aws,
	} {
		if out := r.String(in); strings.Contains(out, aws) || !strings.Contains(out, Mask) {
			t.Errorf("aws secret: %s", out)
		}
	}
	pem := `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----`
	if out := r.String("key: " + pem + " end"); out != "key: "+Mask+" end" {
		t.Errorf("private key block: %s", out)
	}
	for _, kept := range []string{"pwrite-mode-value-1", "abc", "/tmp/agent.sock.1", "/etc/hostname", "vim-with-plugins", "Jane Q. Developer", "https://docs.example.com/a@b",
		"npm_config_cache", "hf_hub_download", "pypi-simple", "sk_live_mode", "glpat-short"} {
		if out := r.String("x " + kept + " y"); out != "x "+kept+" y" {
			t.Errorf("%q was masked: %s", kept, out)
		}
	}
}

// reference is String without the prefilters: both regexps on every text.
func reference(r *Redactor, s string) string {
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Mask)
	}
	s = awsSecret.ReplaceAllString(s, "${1}"+Mask)
	s = urlPassword.ReplaceAllString(s, "${1}"+Mask+"${2}")
	return keyShapes.ReplaceAllString(s, Mask)
}

// FuzzStringMatchesRegexps: the prefilters (keyMarks, mayHoldAWSSecret)
// never let a key shape through that the regexps alone would mask. The
// seeds hold every kind of key shape, in several cases and next to text
// that only looks like one; `make fuzz` searches further.
func FuzzStringMatchesRegexps(f *testing.F) {
	aws40 := strings.Repeat("aB3/", 10)
	// One key shape per seed, so that each keyMarks entry is needed.
	for _, key := range []string{
		"sk-ant-api03-AbCdEfGhIjKlMnOp", "sk-" + strings.Repeat("x", 24),
		"github_pat_" + strings.Repeat("a", 22), "ghp_" + strings.Repeat("b", 20), "gho_" + strings.Repeat("c", 20),
		"ghu_" + strings.Repeat("d", 20), "ghs_" + strings.Repeat("e", 20), "ghr_" + strings.Repeat("f", 20),
		"xoxb-1234567890ab", "AKIA" + strings.Repeat("Z", 16), "ASIA" + strings.Repeat("9", 16),
		"AIza" + strings.Repeat("q", 35), "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f",
		"glpat-" + strings.Repeat("g", 20), "npm_" + strings.Repeat("N", 36), "pypi-AgEIcHlwaS5vcmc" + strings.Repeat("p", 50),
		"hf_" + strings.Repeat("H", 34), "sk_live_" + strings.Repeat("4", 24), "rk_test_" + strings.Repeat("5", 24),
		`-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----`,
		"aws_secret_access_key = " + aws40, "AWS_SECRET_ACCESS_KEY: '" + aws40 + "'",
		"AwSSecretAccessKey=" + aws40, "aw\u017f_secret_access_key=" + aws40,
		"origin\thttps://ci-bot:ghs9Xq2LmPw7Rt@git.example.com/app.git (fetch)",
	} {
		f.Add(`{"text":"before ` + key + ` after"}`)
	}
	f.Add("plain text with nothing secret in it")
	f.Add("sk- too short, gh_ no, xo x, AKI A, eyJ.a.b, aws and secret apart")
	r := New("sk-offline-value-1234")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := r.String(s), reference(r, s); got != want {
			t.Errorf("String(%q) = %q, the regexps alone give %q", s, got, want)
		}
	})
}

// A URL's password is masked wherever it appears, not only where a
// variable of the author's environment held it: `git remote -v` in a
// tool's output, a connection string in a file the agent read.
func TestURLPasswordsInAnyText(t *testing.T) {
	r := New()
	for in, want := range map[string]string{
		"origin\thttps://ci-bot:ghs9Xq2LmPw7Rt@git.example.com/app.git (fetch)": "origin\thttps://ci-bot:" + Mask + "@git.example.com/app.git (fetch)",
		`{"content":"DATABASE=postgres://admin:Sup3r:S3cret@db:5432/app"}`:      `{"content":"DATABASE=postgres://admin:` + Mask + `@db:5432/app"}`,
		"redis://:onlyapassword@cache":                                          "redis://:" + Mask + "@cache",
		// No password: kept.
		"ssh://git@github.com/a/b and https://docs.example.com/a@b": "ssh://git@github.com/a/b and https://docs.example.com/a@b",
		"http://127.0.0.1:8080/v1/messages, mail a@b.example":       "http://127.0.0.1:8080/v1/messages, mail a@b.example",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// A secret value that holds another goes whole (the longer is masked
// first), and a value under 8 characters (MinLength, as documented in
// docs/isolation.md) is not masked at all: masking "main" or "true" would
// shred every transcript.
func TestLongestFirstAndMinLength(t *testing.T) {
	r := New("abcdefgh", "abcdefgh-and-more-1234")
	if got := r.String("key abcdefgh-and-more-1234 end"); got != "key "+Mask+" end" {
		t.Errorf("the longer value went in part: %q", got)
	}
	short := "x2k9q7p" // 7 characters
	if got := New(short).String("a " + short + " b"); got != "a "+short+" b" {
		t.Errorf("a value of 7 characters was masked: %q", got)
	}
	long := "y2k9q7p4" // 8
	if got := New(long).String("a " + long + " b"); got != "a "+Mask+" b" {
		t.Errorf("a value of 8 characters was kept: %q", got)
	}
}
