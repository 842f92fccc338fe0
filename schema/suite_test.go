package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/vibe-test/vibe-test/internal/record"
)

const suiteSchemaID = "https://github.com/vibe-test/vibe-test/schema/suite.schema.json"

func compileSuite(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileSchema(t, "suite.schema.json", suiteSchemaID, SuiteSchema)
}

// populatedSuite sets every field of a suite index.
func populatedSuite() *record.Suite {
	at := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	return &record.Suite{
		SchemaVersion: record.SuiteSchemaVersion, Status: record.StatusCompleted, StartedAt: at, FinishedAt: at.Add(time.Hour), Seed: 7,
		Shard: &record.ShardPlan{Index: 2, Count: 3,
			Skills: []record.ShardSkill{{Name: "stock-ledger", Hash: "sha256:abc", Conversations: 3}},
			Units:  []record.Unit{{Skill: "stock-ledger", Index: 2}}},
		Merged: []string{"shard-1", "shard-2", "shard-3"},
		Skills: []record.SuiteEntry{{Name: "stock-ledger", Path: "/lib/stock-ledger/SKILL.md", RunDir: "stock-ledger",
			Status: record.StatusError, ExitCode: 3, Verdict: "error", Diluted: record.Rate{Passed: 4, Probes: 6},
			Fresh: record.Rate{Passed: 6, Probes: 6}, CostUSD: 1.5, EffectiveTurn: 6, Error: "judge error", Jail: "none"}},
		ExitCode: 3,
	}
}

func TestSuiteIndexValidates(t *testing.T) {
	sch := compileSuite(t)
	b, err := json.Marshal(populatedSuite())
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, b); err != nil {
		t.Fatalf("a populated suite.json does not validate: %v\n%s", err, b)
	}
	// A pending index, as written before any skill finished.
	pending := &record.Suite{SchemaVersion: 1, Status: record.StatusRunning, StartedAt: time.Now().UTC(),
		Skills: []record.SuiteEntry{{Name: "a", Path: "a/SKILL.md", RunDir: "a", Status: record.StatusPending}}}
	b, _ = json.Marshal(pending)
	if err := validate(sch, b); err != nil {
		t.Errorf("a pending suite.json does not validate: %v\n%s", err, b)
	}
	// A shard with no conversation of its own, as record.SaveSuite writes
	// it (its lists were null, which the schema refuses).
	empty := &record.Suite{SchemaVersion: 1, Status: record.StatusCompleted, StartedAt: time.Now().UTC(), Shard: &record.ShardPlan{Index: 13, Count: 13}}
	dir := t.TempDir()
	if err := record.SaveSuite(dir, empty); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, record.SuiteFile)); err != nil || validate(sch, b) != nil {
		t.Errorf("an empty shard's suite.json does not validate: %v %v\n%s", err, validate(sch, b), b)
	}
	for name, breakIt := range map[string]func(string) string{
		"unknown key":    func(s string) string { return strings.Replace(s, `"seed":7`, `"seed":7,"extra":1`, 1) },
		"bad exit code":  func(s string) string { return strings.Replace(s, `"exit_code":3}`, `"exit_code":4}`, 1) },
		"bad status":     func(s string) string { return strings.Replace(s, `"status":"completed"`, `"status":"done"`, 1) },
		"shard index 0":  func(s string) string { return strings.Replace(s, `"index":2,"count"`, `"index":0,"count"`, 1) },
		"rate as string": func(s string) string { return strings.Replace(s, `"passed":4`, `"passed":"4"`, 1) },
	} {
		good, _ := json.Marshal(populatedSuite())
		bad := breakIt(string(good))
		if bad == string(good) {
			t.Errorf("%s: nothing to break", name)
			continue
		}
		if err := validate(sch, []byte(bad)); err == nil {
			t.Errorf("%s: accepted\n%s", name, bad)
		}
	}
}

// Every object of the suite schema has exactly the keys its Go type
// marshals, and requires exactly the ones always written.
func TestSuiteKeysMatchGo(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(SuiteSchema, &doc); err != nil {
		t.Fatal(err)
	}
	at := func(ptr string) map[string]any {
		v := any(doc)
		for _, p := range strings.Split(ptr, "/") {
			if p != "" {
				v = v.(map[string]any)[p]
			}
		}
		return v.(map[string]any)
	}
	for ptr, typ := range map[string]reflect.Type{
		"":                reflect.TypeOf(record.Suite{}),
		"$defs/shardPlan": reflect.TypeOf(record.ShardPlan{}),
		"$defs/shardPlan/properties/skills/items": reflect.TypeOf(record.ShardSkill{}),
		"$defs/shardPlan/properties/units/items":  reflect.TypeOf(record.Unit{}),
		"$defs/entry":                             reflect.TypeOf(record.SuiteEntry{}),
		"$defs/rate":                              reflect.TypeOf(record.Rate{}),
	} {
		obj := at(ptr)
		keys := jsonKeys(typ)
		props := obj["properties"].(map[string]any)
		for k := range keys {
			if _, ok := props[k]; !ok {
				t.Errorf("%s (%s): schema lacks %q", ptr, typ.Name(), k)
			}
		}
		for k := range props {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s (%s): schema has %q, which Go does not marshal", ptr, typ.Name(), k)
			}
		}
		required := map[string]bool{}
		for _, r := range obj["required"].([]any) {
			required[r.(string)] = true
		}
		for k, always := range keys {
			if always != required[k] {
				t.Errorf("%s (%s): %q always written %v, required %v", ptr, typ.Name(), k, always, required[k])
			}
		}
	}
}
