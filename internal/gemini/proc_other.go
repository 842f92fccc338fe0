//go:build !linux

package gemini

// descendants needs /proc; elsewhere a stopped CLI's shell commands may
// outlive it.
func descendants(int) []int { return nil }
