// Package doccheck keeps the documentation honest: its test fails when
// README.md grows past the front door's length, or when a relative link in
// README.md or docs/ names a file or heading that does not exist, or when
// the vibe-test.yaml example of docs/usage.md does not load. It has no code
// of its own; the test reads the repository's Markdown.
package doccheck
