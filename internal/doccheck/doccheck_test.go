package doccheck

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/vibe-test/vibe-test/internal/plan"
)

// readmeMaxLines: README.md is the front door (what the tool answers, quick
// start, install in brief, exit codes, CI); the rest lives in docs/.
const readmeMaxLines = 250

// root is the repository, two folders up from this package.
const root = "../.."

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md: %d lines, expected at most %d (move the detail into docs/ and link it)", n, readmeMaxLines)
	}
}

// TestRelativeLinksResolve follows every relative link and image of
// README.md and docs/*.md to its file and, when it names one, its heading.
func TestRelativeLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	if len(files) < 2 {
		t.Fatalf("docs/: no Markdown pages found beside README.md")
	}
	anchors := map[string]map[string]bool{} // file → its heading anchors
	anchorsOf := func(path string) map[string]bool {
		if _, ok := anchors[path]; !ok {
			anchors[path] = anchorSet(path)
		}
		return anchors[path]
	}
	checked := 0
	for _, file := range files {
		doc, err := parse(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for _, l := range doc.links {
			checked++
			if msg := resolve(file, l.target, anchorsOf); msg != "" {
				t.Errorf("%s:%d: link %q: %s", rel, l.line, l.target, msg)
			}
		}
	}
	if checked == 0 {
		t.Errorf("README.md and docs/: no link found, expected dozens: the link parser is broken")
	}
}

// resolve says what is wrong with a relative link from file ("" when
// nothing is); external links are not followed.
func resolve(file, target string, anchorsOf func(string) map[string]bool) string {
	if u, err := url.Parse(target); err == nil && (u.Scheme != "" || strings.HasPrefix(target, "//")) {
		return ""
	}
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		p, err := url.PathUnescape(path)
		if err != nil {
			return fmt.Sprintf("expected a path, got %v", err)
		}
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(p))
		if _, err := os.Stat(dest); err != nil {
			return "expected an existing file or folder, found none"
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	if !anchorsOf(dest)[frag] {
		return fmt.Sprintf("expected a heading with anchor #%s in %s, found none", frag, filepath.Base(dest))
	}
	return ""
}

// anchorSet is the heading anchors of a Markdown file; none when it cannot
// be read (resolve has already found that the file exists).
func anchorSet(path string) map[string]bool {
	a := map[string]bool{}
	if doc, err := parse(path); err == nil {
		for _, h := range doc.anchors {
			a[h] = true
		}
	}
	return a
}

type link struct {
	line   int
	target string
}

type document struct {
	links   []link
	anchors []string
}

var (
	// [text](target) and ![alt](target), with an optional "title".
	linkRE    = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	codeRE    = regexp.MustCompile("`+[^`]*`+")
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// parse reads a Markdown file's links and heading anchors, skipping fenced
// code blocks and inline code, where brackets are not links.
func parse(path string) (document, error) {
	var doc document
	f, err := os.Open(path)
	if err != nil {
		return doc, err
	}
	defer f.Close()
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			a := slug(m[2])
			if k := seen[a]; k > 0 {
				doc.anchors = append(doc.anchors, fmt.Sprintf("%s-%d", a, k))
			} else {
				doc.anchors = append(doc.anchors, a)
			}
			seen[a]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			doc.links = append(doc.links, link{line: n, target: m[1]})
		}
	}
	return doc, sc.Err()
}

// slug is the anchor GitHub gives a heading: its text, links reduced to
// their words, lowercased; letters, digits, '_' and '-' kept, spaces made
// '-', everything else dropped.
func slug(heading string) string {
	text := linkRE.ReplaceAllStringFunc(heading, func(s string) string {
		s = strings.TrimPrefix(s, "!")
		return s[1:strings.Index(s, "](")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Set up": "set-up",
		"The rubric file (`rubric.json`, `--rubric`)":                "the-rubric-file-rubricjson---rubric",
		"Know the bill first (`--dry-run`)":                          "know-the-bill-first---dry-run",
		"Beyond ten turns: context levels, work fillers, compaction": "beyond-ten-turns-context-levels-work-fillers-compaction",
		"The jail (Linux, bubblewrap)":                               "the-jail-linux-bubblewrap",
		"See [the docs](docs/x.md)":                                  "see-the-docs",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, expected %q", heading, got, want)
		}
	}
}

// The checker itself: a broken file or anchor is reported, a good one and
// an external link are not.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	src := "# Page\n\n## Set up\n\n```\n# not a heading\n```\n\n## Set up\n"
	if err := os.WriteFile(page, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	for target, ok := range map[string]bool{
		"page.md":               true,
		"page.md#set-up":        true,
		"page.md#set-up-1":      true,
		"#page":                 true,
		"page.md#not-a-heading": false,
		"page.md#set-up-2":      false,
		"gone.md":               false,
		"gone.md#page":          false,
		"https://example.com/x": true,
		"mailto:a@example.com":  true,
	} {
		msg := resolve(page, target, anchorSet)
		if (msg == "") != ok {
			t.Errorf("resolve(%q) = %q, expected ok=%v", target, msg, ok)
		}
	}
}

// TestUsageConfigExampleLoads loads the vibe-test.yaml example of
// docs/usage.md as vibe-test would (its fixture folder made beside it): an
// example the loader refuses teaches the reader a mistake.
func TestUsageConfigExampleLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## vibe-test.yaml\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/usage.md: no ```yaml block under \"## vibe-test.yaml\"")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "fixture"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, plan.ConfigName)
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.LoadConfig(path); err != nil {
		t.Errorf("docs/usage.md's vibe-test.yaml example does not load: %v", err)
	}
}
