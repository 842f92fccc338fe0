// Command fakeclaude is package fakeclaude's stand-in for the claude CLI,
// built by testenv.FakeClaude for the fast tier of the tests.
package main

import (
	"os"

	"github.com/vibe-test/vibe-test/internal/fakeclaude"
)

func main() {
	os.Exit(fakeclaude.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}
