package app

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/exit"
)

// The help pages are rendered here rather than by urfave/cli's templates,
// which cannot wrap a flag's usage under its column, sort flag categories
// by name, and leave lines of 300 columns. Each page is rendered when the
// command line is built and handed to urfave/cli as a template that prints
// it verbatim, so `vibe-test help X`, `vibe-test X --help` and a usage
// error's advice all show the same page. No line is wider than helpWidth.

// helpWidth is the widest a help line may be.
const helpWidth = 100

// Flag categories, in the order the help shows them.
const (
	catInput    = "Input"
	catDraft    = "Drafting"
	catAgent    = "The agent"
	catDilution = "Conversations and dilution"
	catVerdict  = "Judging and the verdict"
	catLimits   = "Limits and retries"
	catOutput   = "Output"
	catHelp     = "Help"
)

var categoryOrder = []string{catInput, catDraft, catAgent, catDilution, catVerdict, catLimits, catOutput, catHelp}

// examples are the root page's EXAMPLES: a command line and what it does.
var examples = [][2]string{
	{"vibe-test demo", "the bundled skill, a scripted model"},
	{"vibe-test init ./skills/deploy", "draft its vibe-test.yaml, to review"},
	{"vibe-test ./skills/deploy", "measure it: diluted vs fresh"},
	{"vibe-test ./skills/deploy --conversations 6 \\", ""},
	{"    --junit junit.xml --markdown summary.md", "in CI: exit 1 on decay"},
	{"vibe-test ./skills --dry-run", "every skill below: calls and cost"},
	{"vibe-test report vibe-runs/RUN", "redraw a saved run, no model call"},
	{"vibe-test compare BASE_RUN CANDIDATE_RUN", "accept or reject a new version"},
	{"vibe-test help exit-codes", "what each exit code means"},
}

// helpTemplate makes text a template that prints it as it is.
func helpTemplate(text string) string {
	return "{{" + strconv.Quote(text) + "}}"
}

// setHelp renders every page of a's help into its templates.
func setHelp(a *cli.App) {
	a.CustomAppHelpTemplate = helpTemplate(rootHelp(a))
	for _, c := range a.Commands {
		c.CustomHelpTemplate = helpTemplate(commandHelp(c))
	}
}

// rootHelp is `vibe-test --help`: the usage, the commands, examples, and
// the flags of a run (the bare command line is `vibe-test run`).
func rootHelp(a *cli.App) string {
	var b strings.Builder
	fmt.Fprintf(&b, "NAME:\n%s\n\n", hang("   "+a.Name+" - ", a.Usage))
	b.WriteString("USAGE:\n")
	for _, l := range strings.Split(a.UsageText, "\n") {
		b.WriteString(hang("   ", l) + "\n")
	}
	fmt.Fprintf(&b, "\nVERSION:\n   %s\n\nCOMMANDS:\n", a.Version)
	width := 0
	for _, c := range a.Commands {
		if !c.Hidden {
			width = max(width, len(strings.Join(c.Names(), ", ")))
		}
	}
	for _, c := range a.Commands {
		if !c.Hidden {
			names := strings.Join(c.Names(), ", ")
			b.WriteString(hang(fmt.Sprintf("   %-*s  ", width, names), c.Usage) + "\n")
		}
	}
	b.WriteString("\nEXAMPLES:\n")
	width = 0
	for _, e := range examples {
		width = max(width, len(e[0]))
	}
	for _, e := range examples {
		if e[1] == "" {
			b.WriteString("   " + e[0] + "\n")
			continue
		}
		b.WriteString(hang(fmt.Sprintf("   %-*s  ", width, e[0]), "# "+e[1]) + "\n")
	}
	b.WriteString("\nFLAGS of a run (vibe-test [flags] ./SKILL.md, the same as vibe-test run [flags] ...):\n")
	b.WriteString(flagsHelp(a.Flags, true))
	return b.String()
}

// commandHelp is `vibe-test help X`.
func commandHelp(c *cli.Command) string {
	var b strings.Builder
	name := "vibe-test " + c.Name
	fmt.Fprintf(&b, "NAME:\n%s\n\n", hang("   "+name+" - ", c.Usage))
	usage := name
	if len(c.Flags) > 0 {
		usage += " [flags]"
	}
	if c.ArgsUsage != "" {
		usage += " " + c.ArgsUsage
	}
	fmt.Fprintf(&b, "USAGE:\n%s\n", hang("   ", usage))
	if c.Description != "" {
		b.WriteString("\nDESCRIPTION:\n")
		for _, l := range strings.Split(c.Description, "\n") {
			b.WriteString(hang("   ", l) + "\n")
		}
	}
	b.WriteString("\nFLAGS:\n")
	b.WriteString(flagsHelp(c.Flags, false))
	return b.String()
}

// flagsHelp lists flags under their categories, each flag's usage wrapped
// in a column of its own; --help (and, for the root, --version) come last.
func flagsHelp(flags []cli.Flag, root bool) string {
	type row struct{ names, usage string }
	byCat := map[string][]row{}
	var order []string
	add := func(cat string, r row) {
		if _, ok := byCat[cat]; !ok {
			order = append(order, cat)
		}
		byCat[cat] = append(byCat[cat], r)
	}
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		cat := ""
		if cf, ok := f.(cli.CategorizableFlag); ok {
			cat = cf.GetCategory()
		}
		names, usage, _ := strings.Cut(cli.FlagStringer(f), "\t")
		// A repeatable flag is written once; its usage says it repeats.
		names, _, _ = strings.Cut(names, " [ ")
		add(cat, row{names, usage})
	}
	// urfave/cli's own --help and --version, written out: reading its
	// package-level flags here would race with a parse in progress.
	add(catHelp, row{"--help, -h", "show help"})
	if root {
		add(catHelp, row{"--version, -v", "print the version"})
	}
	slices.SortStableFunc(order, func(a, b string) int { return catRank(a) - catRank(b) })

	// The names column fits most flags; a longer name has its usage on the
	// next line.
	const maxNames = 30
	width := 0
	for _, rows := range byCat {
		for _, r := range rows {
			if n := len(r.names); n <= maxNames {
				width = max(width, n)
			}
		}
	}
	var b strings.Builder
	for i, cat := range order {
		if i > 0 {
			b.WriteString("\n")
		}
		indent := "   "
		if cat != "" {
			b.WriteString("   " + cat + ":\n")
			indent = "     "
		}
		for _, r := range byCat[cat] {
			if len(r.names) > width {
				b.WriteString(indent + r.names + "\n")
				b.WriteString(hang(indent+strings.Repeat(" ", width+2), r.usage) + "\n")
				continue
			}
			b.WriteString(hang(fmt.Sprintf("%s%-*s  ", indent, width, r.names), r.usage) + "\n")
		}
	}
	return b.String()
}

// catRank orders the categories; one not in categoryOrder goes last.
func catRank(cat string) int {
	if i := slices.Index(categoryOrder, cat); i >= 0 {
		return i
	}
	return len(categoryOrder)
}

// hang writes text after prefix, wrapped at helpWidth, its later lines
// indented to where the text began.
func hang(prefix, text string) string {
	if utf8.RuneCountInString(prefix+text) <= helpWidth && !strings.Contains(text, "\n") {
		return prefix + text // as written, spacing and all
	}
	pad := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	return prefix + wrap(text, helpWidth-len(pad), pad)
}

// wrap breaks text at spaces into lines of at most width columns (a word
// longer than that keeps its own line), each line after the first prefixed
// by pad.
func wrap(text string, width int, pad string) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		switch {
		case col == 0:
		case col+1+n > width:
			b.WriteString("\n" + pad)
			col = 0
		default:
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// exitCodesHelp is `vibe-test help exit-codes`: internal/exit's table.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("EXIT CODES:\n")
	width := 0
	for _, c := range exit.Codes {
		width = max(width, len(c.Name))
	}
	for _, c := range exit.Codes {
		b.WriteString(hang(fmt.Sprintf("   %3d  %-*s  ", c.Code, width, c.Name), c.Meaning) + "\n")
	}
	b.WriteString("\n" + hang("", exit.SuiteRule) + "\n")
	return b.String()
}

// helpCommand is `vibe-test help [COMMAND|exit-codes]`, in place of
// urfave/cli's, which knows no topic but commands.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the help of vibe-test or of a command; `help exit-codes` lists the exit codes",
		ArgsUsage: "[COMMAND|exit-codes]",
		// urfave/cli would give help a help command of its own.
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			switch topic := c.Args().First(); topic {
			case "":
				return cli.ShowAppHelp(c)
			case "exit-codes":
				_, err := fmt.Fprint(c.App.Writer, exitCodesHelp())
				return err
			default:
				// The root's context knows every command.
				return cli.ShowCommandHelp(c.Lineage()[1], topic)
			}
		},
	}
}
