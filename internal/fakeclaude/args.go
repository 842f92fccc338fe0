package fakeclaude

import (
	"fmt"
	"strconv"
	"strings"
)

// options are the flags of the pinned CLI that vibe-test (and its recorder)
// pass. Anything else is refused the way the CLI refuses an unknown option.
type options struct {
	version      bool
	print        bool
	prompt       string
	outputFormat string
	inputFormat  string
	allowed      []string
	tools        []string
	toolsSet     bool // --tools given ("" = none)
	resume       string
	sessionID    string
	model        string
	jsonSchema   string
	noPersist    bool
	maxTurns     int
	maxBudget    float64
	appendSystem string
	appendFile   string
	effort       string // --effort, sent as output_config.effort
}

// valueFlags take one value; listFlags take every following argument up
// to the next flag (commander's variadic options, as the CLI declares
// --allowedTools and --tools).
var valueFlags = map[string]bool{
	"--output-format": true, "--input-format": true, "--setting-sources": true,
	"--resume": true, "-r": true, "--session-id": true, "--model": true,
	"--json-schema": true, "--max-turns": true, "--max-budget-usd": true,
	"--append-system-prompt": true, "--append-system-prompt-file": true,
	"--permission-mode": true, "--fallback-model": true, "--mcp-config": true,
	"--effort": true,
}

var listFlags = map[string]bool{
	"--allowedTools": true, "--allowed-tools": true, "--tools": true,
	"--disallowedTools": true, "--disallowed-tools": true,
}

var boolFlags = map[string]bool{
	"-p": true, "--print": true, "--verbose": true, "--strict-mcp-config": true,
	"--no-session-persistence": true, "--include-partial-messages": true,
	"--dangerously-skip-permissions": true, "--version": true, "-v": true,
	"--include-hook-events": true, // accepted; the stand-in runs no hooks
}

func parseArgs(args []string) (options, error) {
	var o options
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, inline, hasInline := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") || !hasInline {
			name, inline, hasInline = a, "", false
		}
		switch {
		case boolFlags[name]:
			switch name {
			case "-p", "--print":
				o.print = true
			case "--version", "-v":
				o.version = true
			case "--no-session-persistence":
				o.noPersist = true
			}
		case valueFlags[name]:
			v := inline
			if !hasInline {
				if i+1 >= len(args) {
					return o, fmt.Errorf("error: option '%s <value>' argument missing", name)
				}
				i++
				v = args[i]
			}
			switch name {
			case "--output-format":
				o.outputFormat = v
			case "--input-format":
				o.inputFormat = v
			case "--resume", "-r":
				o.resume = v
			case "--session-id":
				o.sessionID = v
			case "--model":
				o.model = v
			case "--json-schema":
				o.jsonSchema = v
			case "--max-turns":
				n, err := strconv.Atoi(v)
				if err != nil {
					return o, fmt.Errorf("error: option '--max-turns <turns>' argument '%s' is invalid", v)
				}
				o.maxTurns = n
			case "--max-budget-usd":
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return o, fmt.Errorf("error: option '--max-budget-usd <amount>' argument '%s' is invalid", v)
				}
				o.maxBudget = f
			case "--append-system-prompt":
				o.appendSystem = v
			case "--append-system-prompt-file":
				o.appendFile = v
			case "--effort":
				switch v {
				case "low", "medium", "high", "xhigh", "max":
					o.effort = v
				default:
					return o, fmt.Errorf("error: option '--effort <level>' argument '%s' is invalid. Allowed choices are low, medium, high, xhigh, max.", v)
				}
			}
		case listFlags[name]:
			var vals []string
			if hasInline {
				vals = append(vals, inline)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				vals = append(vals, args[i])
			}
			switch name {
			case "--allowedTools", "--allowed-tools":
				o.allowed = append(o.allowed, splitTools(vals)...)
			case "--tools":
				o.toolsSet = true
				o.tools = append(o.tools, splitTools(vals)...)
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return o, fmt.Errorf("error: unknown option '%s'", a)
		default:
			positional = append(positional, a)
		}
	}
	o.prompt = strings.Join(positional, " ")
	return o, nil
}

// splitTools splits comma- or space-separated tool lists, keeping
// patterns such as Bash(git diff:*) whole.
func splitTools(vals []string) []string {
	var out []string
	for _, v := range vals {
		var cur strings.Builder
		depth := 0
		flush := func() {
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
		for _, r := range v {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth--
			case (r == ',' || r == ' ') && depth == 0:
				flush()
				continue
			}
			cur.WriteRune(r)
		}
		flush()
	}
	return out
}
