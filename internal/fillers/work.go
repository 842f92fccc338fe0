package fillers

import (
	"maps"
	"strings"
	"sync"
)

// WorkDir is the one folder of the sandbox that work chores write into.
// Every file of every chore lives under it, with a name no other chore
// uses, and every chore's command reads only its own files there, so the
// chores can run in any order and in any number without changing each
// other's output, and a skill's fixture stays out of their way as long as
// it has no folder of this name.
const WorkDir = "ops"

// workPrefix marks a work chore's ID, apart from the passages'.
const workPrefix = "work-"

// Work returns the built-in work chores sorted by ID: filler turns that are
// ordinary coding chores rather than prose to read. Each chore's Text is the
// request a developer would type in an ongoing session; it names exactly
// one read-only shell command, in backticks, whose output answers it, and
// asks the agent to change nothing. Files holds what that command reads,
// all under WorkDir, and must be written into the sandbox before the turn
// is asked. A chore thus fills the context the way real work does: with a
// tool call and its output, not with a long user message.
//
// What each command prints is 8 to 27 KB (roughly 2k to 9k tokens), a
// different size for each chore; the sizes are listed with the chores in
// this file and checked by the package's tests. The ceiling stays below
// the 30,000 characters of a Bash command's output that the pinned CLI
// (2.1.328) passes to the model inline by default: past it, by the CLI's
// own description of that limit, the output goes to a file and the model
// sees a preview, which would not fill the context at all. The files of
// all chores together are about 0.9 MB; the logs are longer than what
// their command shows, as real logs are.
//
// The content is generated, seeded by each chore's ID, so it is the same
// on every machine and in every release until a chore is edited (a test
// pins it): a resumed run rebuilds its fillers by ID. Each call returns
// fresh slices and maps.
func Work() []Passage {
	ps := work()
	out := make([]Passage, len(ps))
	for i, p := range ps {
		p.Files = maps.Clone(p.Files)
		out[i] = p
	}
	return out
}

// work generates the corpus once per process; Work hands out copies.
var work = sync.OnceValue(buildWork)

func buildWork() []Passage {
	out := make([]Passage, len(chores))
	for i, c := range chores {
		files := map[string]string{}
		c.files(newGen(c.id), func(rel, content string) {
			files[WorkDir+"/"+rel] = content
		})
		out[i] = Passage{
			ID:     c.id,
			Title:  c.title,
			Text:   strings.ReplaceAll(c.prompt, "{dir}", WorkDir),
			Files:  files,
			Output: c.outKB << 10,
		}
	}
	sortByID(out)
	return out
}

// chore is one work chore as written here: its request and a generator
// for the files its command reads.
type chore struct {
	id    string
	title string
	// prompt is the request, with exactly one command in backticks;
	// "{dir}" stands for WorkDir.
	prompt string
	// outKB is the size of what the command prints, in KiB rounded to the
	// nearest: the documentation of each chore's weight, kept true by the
	// tests.
	outKB int
	// shows are strings the command's output must contain: what the
	// question is about, so the answer is in the output.
	shows []string
	// files writes the chore's files through put, paths relative to
	// WorkDir, drawing everything variable from g.
	files func(g *gen, put func(rel, content string))
}

// chores is the corpus. IDs, file names and commands are distinct per
// chore; each file set lives in its own folder or under its own name.
var chores = []chore{
	{
		id:    "work-gateway-errors",
		title: "Errors at the API gateway",
		prompt: "Something looked off on the API side this morning. Run `tail -n 190 {dir}/logs/gateway.log` " +
			"and summarise the errors you see: what kinds, roughly how many of each, and whether they bunch up " +
			"around a particular time. Just read it, don't change anything.",
		outKB: 25,
		shows: []string{"upstream timeout after 5000ms", "NullPointerException", "circuit breaker open"},
		files: gatewayLog,
	},
	{
		id:    "work-queue-warnings",
		title: "Warnings from the job queue",
		prompt: "Quick one while I look at something else: run `grep -E \"WARN|ERROR\" {dir}/logs/worker-queue.log` " +
			"and tell me which job types cause most of the warnings, and whether any job ran out of retries. " +
			"Don't change anything, I only want the picture.",
		outKB: 14,
		shows: []string{"retries exhausted", "jobs.invoice_pdf"},
		files: workerLog,
	},
	{
		id:    "work-todo-sweep",
		title: "TODOs across the shop code",
		prompt: "I'm planning next sprint's cleanup. Run `grep -rn -E \"TODO|FIXME\" {dir}/shop` and tell me which " +
			"package has the most of them, and which of the FIXMEs look like real bugs rather than wishes. " +
			"Please don't edit any of the files, just report.",
		outKB: 11,
		shows: []string{"FIXME", "billing/"},
		files: shopTree,
	},
	{
		id:    "work-big-orders",
		title: "Largest orders of the quarter",
		prompt: "Finance asked about our biggest orders last quarter. Run `sort -t, -k5,5 -nr {dir}/data/orders-q3.csv` " +
			"and list the five largest orders (id, customer, amount), then say which customers show up more " +
			"than once in the top twenty. Don't modify the file.",
		outKB: 18,
		shows: []string{"order_id,placed_at,customer"},
		files: ordersCSV,
	},
	{
		id:    "work-commit-history",
		title: "Who changed billing lately",
		prompt: "I've been away for two weeks. Run `head -n 400 {dir}/history/commits.txt` (it's an export of the " +
			"git log) and tell me who has been working on billing and what changed there, in a few bullet " +
			"points. Don't change anything, just catch me up.",
		outKB: 12,
		shows: []string{"billing:", "Author: "},
		files: commitLog,
	},
	{
		id:    "work-settings-dump",
		title: "Settings that look wrong",
		prompt: "Can you run `cat {dir}/config/effective-settings.yaml`? It's the settings the staging service " +
			"actually loaded. Tell me which timeouts are above 30 seconds and whether anything still looks like " +
			"a development default. Don't change anything.",
		outKB: 8,
		shows: []string{"timeout: 45s", "localhost", "debug: true"},
		files: settingsDump,
	},
	{
		id:    "work-module-versions",
		title: "Modules pulled in at several versions",
		prompt: "Run `cat {dir}/deps/module-graph.txt`; it's the module graph of the API service. Which modules " +
			"are required at more than one version, and by whom? Just read it, no changes please.",
		outKB: 10,
		shows: []string{"golang.org/x/net@v0.", "github.com/shopfront/api "},
		files: moduleGraph,
	},
	{
		id:    "work-pipeline-failures",
		title: "Why the pipeline went red",
		prompt: "The pipeline for my branch went red. Run `tail -n 360 {dir}/ci/pipeline-2291.log` and tell me " +
			"which specs failed and whether the failures share a cause. Don't touch any files, I'll fix it myself.",
		outKB: 20,
		shows: []string{"failing", "AssertionError"},
		files: pipelineLog,
	},
	{
		id:    "work-server-errors",
		title: "Which endpoints return 5xx",
		prompt: "Support says checkout is flaky. Run `grep -E '\" 5[0-9]{2} ' {dir}/logs/access.log` and tell me " +
			"which endpoints return server errors most often and whether it's one client or everyone. " +
			"Read only, please don't change anything.",
		outKB: 20,
		shows: []string{"POST /api/v2/checkout", "\" 502 ", "\" 504 "},
		files: accessLog,
	},
	{
		id:    "work-daily-latency",
		title: "Days with slow p99",
		prompt: "Run `cut -d, -f1,2,6 {dir}/data/latency-daily.csv` (date, service and p99 in ms) and tell me on " +
			"which days a service's p99 went over 900 ms, and which service it was. Don't change the file.",
		outKB: 9,
		shows: []string{"date,service,p99_ms", "checkout"},
		files: latencyCSV,
	},
	{
		id:    "work-schema-indexes",
		title: "Foreign keys without an index",
		prompt: "Before I add the reporting queries: run `cat {dir}/db/schema.sql` and tell me which foreign key " +
			"columns have no index. Just read the schema, don't change it.",
		outKB: 15,
		shows: []string{"REFERENCES", "CREATE INDEX"},
		files: schemaSQL,
	},
	{
		id:    "work-low-stock",
		title: "Items below their reorder point",
		prompt: "Run `head -n 300 {dir}/data/inventory.csv` and list the SKUs whose on-hand minus reserved stock is " +
			"below their reorder point, grouped by warehouse. Don't change anything, it's just for a call.",
		outKB: 21,
		shows: []string{"sku,name,warehouse,on_hand,reserved,reorder_point"},
		files: inventoryCSV,
	},
	{
		id:    "work-stuck-goroutines",
		title: "Goroutines stuck in the ledger service",
		prompt: "The ledger service hung last night and I grabbed a goroutine dump. Run `cat {dir}/logs/goroutines.txt` " +
			"and tell me which goroutines have been blocked the longest and on what. Just read it, don't change anything.",
		outKB: 24,
		shows: []string{"minutes]:", "(*Store).Append"},
		files: goroutineDump,
	},
	{
		id:    "work-audit-deletes",
		title: "Who deleted what",
		prompt: "Someone removed a bunch of coupons yesterday. Run `grep '\"action\":\"delete\"' {dir}/logs/audit.jsonl` " +
			"and tell me who deleted what, grouped by person. Don't change anything.",
		outKB: 12,
		shows: []string{"\"resource\":\"coupon\""},
		files: auditLog,
	},
	{
		id:    "work-flag-drift",
		title: "Flags on in production, off in staging",
		prompt: "Run `cat {dir}/config/flags.json` and tell me which feature flags are enabled in production but " +
			"disabled in staging. That's backwards from how we roll out, so I want the list. Don't change the file.",
		outKB: 12,
		shows: []string{"\"production\"", "\"staging\""},
		files: flagsJSON,
	},
	{
		id:    "work-refund-code",
		title: "How refunds are processed",
		prompt: "I'm new to the payments code. Run `cat {dir}/payments/refund.go` and explain what ProcessRefund does, " +
			"step by step, and which edge cases it handles. Please don't change the code.",
		outKB: 9,
		shows: []string{"func (s *Service) ProcessRefund("},
		files: refundSource,
	},
}
