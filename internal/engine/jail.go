package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vibe-test/vibe-test/internal/jail"
)

// The --isolation values.
const (
	IsolationJail = "jail"
	IsolationNone = "none"
)

// ChooseJail decides whether claude runs in a jail: mode is --isolation
// ("" = the jail where bubblewrap works). It returns run.json's "jail" and,
// when there is none, why. Asking for a jail that cannot start is an error,
// never a silent fallback.
func ChooseJail(ctx context.Context, mode string, env []string) (kind, note string, err error) {
	switch mode {
	case IsolationNone:
		return jail.None, "--isolation none: the agent ran with your user's view of this machine (home, other runs, /proc)", nil
	case "", IsolationJail:
	default:
		return "", "", fmt.Errorf("--isolation: %q, expected %q or %q", mode, IsolationJail, IsolationNone)
	}
	if perr := jail.Probe(ctx, jail.Find(EnvValue(env, "PATH"))); perr != nil {
		if mode == IsolationJail {
			return "", "", fmt.Errorf("--isolation jail: %v", perr)
		}
		return jail.None, perr.Error(), nil
	}
	return jail.Bubblewrap, "", nil
}

// WarnNoJail says loudly, before anything runs, that the agent is not
// jailed.
func WarnNoJail(w io.Writer, kind, note string) {
	if kind == jail.None {
		fmt.Fprintf(w, "warning: %s\n", noJail(note))
	}
}

// noJail is the warning of a run without a jail, as the run and its dry
// run print it.
func noJail(note string) string { return "NO JAIL: " + note }

// JailSpec is the run's jail (nil for none): what every claude call of the
// run hides and exposes. named are the folders this run knows of that the
// agent must not see (run folder, skill, config, cache); vibe-test's own
// working folder, the author's home and temp dir are always hidden. With
// the author's login (not hermetic) their config dir is hidden too and only
// the credentials file is put back, read-only; each turn adds its session
// folder (conversation.Driver.jailFor).
func JailSpec(kind string, env []string, binary string, hermetic bool, authorConfig string, named ...string) *jail.Spec {
	if kind != jail.Bubblewrap {
		return nil
	}
	home := EnvValue(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if wd, err := os.Getwd(); err == nil {
		named = append(named, wd)
	}
	named = append(named, os.TempDir())
	var readOnly []string
	if !hermetic && authorConfig != "" {
		named = append(named, authorConfig)
		readOnly = append(readOnly, filepath.Join(authorConfig, ".credentials.json"))
	}
	return &jail.Spec{
		Bwrap:    jail.Find(EnvValue(env, "PATH")),
		Hide:     jail.HideList(home, EnvValue(env, "TMPDIR"), named...),
		CLIRoot:  jail.CLIRootOf(binary),
		Expose:   jail.ExposeList(EnvValue(env, "PATH")),
		ReadOnly: readOnly,
	}
}
