// Package doccheck keeps the documentation honest: its test fails when
// README.md grows past the front door's length, or when a relative link in
// README.md or docs/ names a file or heading that does not exist. It has no
// code of its own; the test reads the repository's Markdown.
package doccheck
