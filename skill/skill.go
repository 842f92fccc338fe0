// Package skill reads an Agent Skill: a SKILL.md with YAML frontmatter
// (name and description required) and the folder around it, whose other
// files (scripts/, references/, assets/) travel with the skill into the
// sandbox.
package skill

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/yamlerr"
)

// MaxSize bounds SKILL.md: a skill is instructions, not a data file.
const MaxSize = 512 << 10

// maxFolder bounds the whole folder that gets copied into every sandbox.
const maxFolder = 64 << 20

// Skill is a parsed skill.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"` // the SKILL.md file
	Dir         string `json:"dir"`  // its folder
	Body        string `json:"-"`    // the instructions after the frontmatter
	Raw         string `json:"-"`    // the whole SKILL.md
	// Hash covers every file of the folder, so a changed script changes it.
	Hash string `json:"hash"`
}

// nameRE is the Agent Skills rule for names: lowercase words joined by
// hyphens. It also keeps the name safe as a folder name.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Load reads the skill at path, which is a SKILL.md or the folder holding one.
// Every error is one line naming the file, the line when known, the field and
// what was expected.
func Load(path string) (*Skill, error) {
	if path == "" {
		return nil, fmt.Errorf("no skill given: expected a path to a SKILL.md or its folder")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: no such file or folder (expected a SKILL.md or its folder)", path)
	}
	if st.IsDir() {
		path = filepath.Join(path, "SKILL.md")
		if st, err = os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: folder has no SKILL.md", filepath.Dir(path))
		}
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a folder, expected a SKILL.md file", path)
	}
	if st.Size() > MaxSize {
		return nil, fmt.Errorf("%s: %d bytes, expected a SKILL.md of at most %d", path, st.Size(), MaxSize)
	}
	// A FIFO or device as SKILL.md is refused, not read forever.
	raw, err := readfile.Regular(path, MaxSize)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(raw, 0) >= 0 || !utf8.Valid(raw) {
		return nil, fmt.Errorf("%s: binary content, expected UTF-8 markdown text", path)
	}
	s, err := Parse(path, raw)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = abs
	s.Dir = filepath.Dir(abs)
	if s.Hash, err = hashFolder(s.Dir); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse reads SKILL.md content; file is only used in error messages.
func Parse(file string, raw []byte) (*Skill, error) {
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") {
		return nil, fmt.Errorf("%s:1: no YAML frontmatter: expected the file to start with a \"---\" line, then name and description", file)
	}
	rest := text[len("---\n"):]
	end := strings.Index(rest, "\n---")
	if end < 0 && strings.HasPrefix(rest, "---") {
		end = 0 // empty frontmatter
	} else if end < 0 {
		return nil, fmt.Errorf("%s:1: frontmatter is not closed: expected a \"---\" line after name and description", file)
	} else {
		end++ // keep the newline with the frontmatter
	}
	front := rest[:end]
	body := rest[end:]
	// Skip the closing --- line.
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	var fm struct {
		Name        any `yaml:"name"`
		Description any `yaml:"description"`
	}
	if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
		return nil, yamlerr.Format(file, 1, err)
	}
	name, err := stringField(file, front, "name", fm.Name)
	if err != nil {
		return nil, err
	}
	if !nameRE.MatchString(name) || len(name) > 64 {
		return nil, fmt.Errorf("%s:%d: frontmatter field \"name\": %q, expected lowercase letters, digits and hyphens (at most 64)", file, fieldLine(front, "name"), name)
	}
	desc, err := stringField(file, front, "description", fm.Description)
	if err != nil {
		return nil, err
	}
	if len(desc) > 1024 {
		return nil, fmt.Errorf("%s:%d: frontmatter field \"description\": %d characters, expected at most 1024", file, fieldLine(front, "description"), len(desc))
	}
	if strings.TrimSpace(body) == "" {
		return nil, fmt.Errorf("%s: empty body: expected the skill's instructions after the frontmatter", file)
	}
	return &Skill{Name: name, Description: desc, Body: body, Raw: string(raw), Path: file}, nil
}

func stringField(file, front, field string, v any) (string, error) {
	line := fieldLine(front, field)
	switch x := v.(type) {
	case nil:
		return "", fmt.Errorf("%s:%d: frontmatter field %q is missing, expected a non-empty string", file, line, field)
	case string:
		if strings.TrimSpace(x) == "" {
			return "", fmt.Errorf("%s:%d: frontmatter field %q is empty, expected a non-empty string", file, line, field)
		}
		return strings.TrimSpace(x), nil
	default:
		return "", fmt.Errorf("%s:%d: frontmatter field %q is a %T, expected a string", file, line, field, v)
	}
}

// fieldLine is the file line of "field:" in the frontmatter, or 1 (the
// opening ---) when the field is absent.
func fieldLine(front, field string) int {
	for i, l := range strings.Split(front, "\n") {
		if strings.HasPrefix(l, field+":") {
			return i + 2
		}
	}
	return 1
}

// NotPart reports whether a top-level entry of the skill folder belongs to
// vibe-test, not to the skill: it is neither hashed nor installed in the
// sandbox, so the agent never sees the config, the rubric or the runs.
func NotPart(rel string) bool {
	top := strings.Split(filepath.ToSlash(rel), "/")[0]
	switch top {
	case "vibe-test.yaml", "rubric.json", "vibe-runs", ".git", "node_modules":
		return true
	}
	return false
}

// hashFolder hashes every regular file's relative path and content, in a
// fixed order.
func hashFolder(dir string) (string, error) {
	var files []string
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); p != dir && NotPart(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading skill folder %s: %w", dir, err)
	}
	if total > maxFolder {
		return "", fmt.Errorf("%s: skill folder holds %d bytes, expected at most %d (it is copied into every sandbox)", dir, total, maxFolder)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("reading skill file %s: %w", p, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
