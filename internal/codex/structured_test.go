package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/rubric"
)

func TestStrictSchema(t *testing.T) {
	b, err := strictSchema([]byte(rubric.Schema))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s["title"] != "rubric" {
		t.Error("the title the stand-in routes by was dropped")
	}
	item := s["properties"].(map[string]any)["criteria"].(map[string]any)["items"].(map[string]any)
	req := item["required"].([]any)
	if len(req) != 4 || item["additionalProperties"] != false {
		t.Fatalf("criterion: required %v, additionalProperties %v", req, item["additionalProperties"])
	}
	check := item["properties"].(map[string]any)["check"].(map[string]any)
	alts, ok := check["anyOf"].([]any)
	if !ok || len(alts) != 2 || alts[1].(map[string]any)["type"] != "null" {
		t.Fatalf("the optional check is not nullable: %v", check)
	}
	if inner := alts[0].(map[string]any); len(inner["required"].([]any)) != 3 {
		t.Errorf("check's own properties: %v", inner["required"])
	}
	// The original schema (required without check) is unchanged.
	if !strings.Contains(rubric.Schema, `"required":["id","text","kind"]`) {
		t.Error("rubric.Schema changed under the test")
	}
}

func TestCheckAnswer(t *testing.T) {
	compiled, err := compileSchema(rubric.Schema)
	if err != nil {
		t.Fatal(err)
	}
	crit := func(i int, check string) string {
		return `{"id":"c` + string(rune('a'+i)) + `","text":"t","kind":"must","check":` + check + `}`
	}
	var list []string
	for i := 0; i < 5; i++ {
		c := "null"
		if i == 0 {
			c = `{"tool":"Bash","pattern":"x","expect":"present"}`
		}
		list = append(list, crit(i, c))
	}
	good := `{"criteria":[` + strings.Join(list, ",") + `]}`
	got, err := checkAnswer(good, compiled, []byte(rubric.Schema))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "null") {
		t.Errorf("the nulls standing for absent checks were kept: %s", got)
	}
	if _, err := rubric.Parse(got); err != nil {
		t.Errorf("the cleaned answer is not a rubric: %v", err)
	}
	for name, text := range map[string]string{
		"prose":       "Here is the rubric you asked for.",
		"two values":  good + good,
		"bad enum":    strings.Replace(good, `"kind":"must"`, `"kind":"maybe"`, 1),
		"too few":     `{"criteria":[` + list[0] + `]}`,
		"null needed": strings.Replace(good, `"text":"t"`, `"text":null`, 1),
	} {
		if _, err := checkAnswer(text, compiled, []byte(rubric.Schema)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "structured output") && !strings.Contains(err.Error(), "does not match") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
