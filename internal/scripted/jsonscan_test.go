package scripted

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Bodies of odd shapes that the fast readers must read as encoding/json
// does: escapes, surrogates, malformed UTF-8, nulls, values of other types
// where the decoder keeps going.
var readBodies = []string{
	`{}`, ` {"model":"m"} `,
	`{"model":"m","messages":[{"role":"user","content":"hi \u00e9 \ud83d\ude00 \ud83d x \\ \/ \" \b\f\n\r\t"}]}`,
	`{"messages":[{"role":"user","content":"lone \udc00 low, \ud800\u0041 broken pair"}]}`,
	"{\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff utf8 \xed\xa0\x80 \xe2\x82\"}]}",
	`{"messages":[{"r\u006fle":"user","content":"escaped key"}]}`,
	`{"messages":[{"role":"assistant","content":5},{"role":"user","content":"x"}]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":null}]}]}`,
	`{"messages":[{"role":null,"content":"x"},{"role":"user","content":null},{"role":"user"}]}`,
	`{"messages":null}`, `{"stream":false}`, `{"stream":null}`, `{"model":null}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":{"title":"verdict"}}]}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":{"title":5}}]}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":{"title":null}}]}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":{"title":"r\u0075bric"}}]}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":null}]}`,
	`{"system":[{"type":"text","text":"x-anthropic-billing-header: cc_is_subagent=true;"}]}`,
	`{"system":[{"type":"text","text":"cc_is_subagent=true"},5]}`,
	`{"system":[{"type":"text","text":"cc_is_subagent=true"},{"text":5}]}`,
	`{"system":[{"type":"text","text":"cc_is\u005fsubagent=true"}]}`,
	`{"system":"cc_is_subagent=true"}`, `{"system":{"text":"cc_is_subagent=true"}}`, `{"system":[]}`, `{"system":null}`,
	`{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"{\"a\":[1,2]}"}]},{"type":"text","text":"CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. sum"}]}]}`,
	`{"n":-0.5e+10,"m":[1E3,0,-1,true,false,null,{"a":{}}],"messages":[{"role":"user","content":"x"}]}`,
	`{"x":` + strings.Repeat(`{"y":`, maxDepth-1) + `1` + strings.Repeat(`}`, maxDepth),
}

// oddBodies adds those the fast readers leave to encoding/json: invalid
// JSON, keys set twice or in another case (U+017F folds to s), null
// elements, values of another type where the decoder fails.
var oddBodies = append([]string{
	`null`, `[]`, `"x"`, `3`, `{"model":"m"}x`, `{"model":"m",}`, `{"model" "m"}`,
	"{\"messages\":[{\"role\":\"user\",\"content\":\"ctl \x01\"}]}",
	`{"messages":[{"role":"user","content":"bad \x escape"}]}`,
	`{"messages":[{"role":"user","content":"short \u12"}]}`,
	`{"model":"a","model":"b","messages":[{"role":"user","content":"x"}]}`,
	`{"Model":"a","messages":[{"role":"user","content":"x"}]}`,
	`{"MESSAGES":[{"role":"user","content":"x"}]}`,
	"{\"me\u017f\u017fages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
	`{"messages":[{"role":"user","Content":"x"}]}`,
	`{"messages":[{"role":"user","role":"assistant","content":"x"}]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","TEXT":"upper"}]}]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`,
	`{"messages":[{"role":"user","content":[null,{"type":"text","text":"after null"}]}]}`,
	`{"messages":[null,{"role":"user","content":"after null"}]}`,
	`{"messages":[{"role":5,"content":"x"}]}`,
	`{"messages":[{"role":"user","content":5}]}`,
	`{"messages":[{"role":"user","content":{"type":"text"}}]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`,
	`{"messages":[{"role":"user","content":[{"type":5,"text":"x"}]}]}`,
	`{"messages":[{"role":"user","content":[{"type":"tool_result","text":5}]}]}`,
	`{"messages":{},"model":"m"}`, `{"messages":"x"}`, `{"messages":[1]}`,
	`{"stream":"false"}`, `{"stream":0}`, `{"model":1}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":{"title":"verdict","title":"plan"}}]}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":{"Title":"plan"}}]}`,
	`{"tools":[{"name":"StructuredOutput","input_schema":[]}]}`,
	`{"tools":[{"name":"StructuredOutput"},{"name":5}]}`,
	`{"tools":[{"name":"Bash"},null]}`, `{"tools":{}}`, `{"tools":"Bash"}`, `{"tools":[{"Name":"Bash"}]}`,
	`{"system":[{"type":"text","text":"cc_is_subagent=true"},null]}`,
	`{"system":[null,{"type":"text","text":"cc_is_subagent=true"}]}`,
	`{"system":[{"type":"text","text":"cc_is_subagent=true","text":"no"}]}`,
	`{"system":[{"type":"text","Text":"cc_is_subagent=true"}]}`,
	`{"n":01}`, `{"n":1.}`, `{"n":-}`, `{"n":1e}`, `{"n":.5}`, `{"t":tru}`, `{"a":[1 2]}`, `{"a":[1,]}`, `[`, `{`, ``, ` `,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
}, readBodies...)

func TestValidJSONAsEncodingJSON(t *testing.T) {
	for _, s := range oddBodies {
		if got, want := validJSON(s), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.80q) = %v, json.Valid %v", s, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range oddBodies {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validJSON(s), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid %v", s, got, want)
		}
	})
}

// unquote decodes every JSON string as encoding/json does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{"", "plain", "é \U0001F600", `\u00e9\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\udc00\ud800`, `\ud800\u0041`,
		`\ud800\ud800\udc00`, `\ud800\u12`, `\"\\\/\b\f\n\r\t`, "\xff\xed\xa0\x80\xe2\x82", `a\u0000b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inner string) {
		raw := `"` + inner + `"`
		if !validJSON(raw) {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%q: valid, but %v", raw, err)
		}
		if got := unquote(raw); got != want {
			t.Errorf("unquote(%q) = %q, want %q", raw, got, want)
		}
		if !utf8.ValidString(unquote(raw)) {
			t.Errorf("unquote(%q) is not UTF-8", raw)
		}
	})
}

// sameClassification holds classifyFast to classifyDecoded on one body:
// where the fast reader answers, the decoder answers the same and no error.
func sameClassification(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	got, ok := classifyFast(body)
	want, err := classifyDecoded(body)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%.200q: the fast reader answered %+v, the decoder %v", body, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%.200q:\n fast    %+v\n decoded %+v", body, got, want)
	}
	return true
}

// The fast reader answers for every body the real CLI sent, as the decoder.
func TestClassifyFastOnRecordedBodies(t *testing.T) {
	for _, name := range []string{"append-system-prompt-file-request.json", "compact-continued-request.json",
		"compact-summary-request.json", "fork-skill-subagent-request.json", "json-schema-enforce-request.json",
		"skill-invoked-followup-request.json", "skill-listing-first-request.json", "slash-skill-prompt-request.json"} {
		if !sameClassification(t, capturedBody(t, name)) {
			t.Errorf("%s: the fast reader declined a body the CLI sent", name)
		}
	}
}

func TestClassifyFastOnOddBodies(t *testing.T) {
	for _, b := range oddBodies {
		sameClassification(t, []byte(b))
	}
	for _, b := range readBodies {
		if !sameClassification(t, []byte(b)) {
			t.Errorf("the fast reader declined %.80q", b)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, b := range oddBodies {
		f.Add([]byte(b))
	}
	f.Add(capturedBody(f, "json-schema-enforce-request.json"))
	f.Add(capturedBody(f, "compact-summary-request.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameClassification(t, body)
	})
}

// Responses API bodies of odd shapes (see readBodies and oddBodies).
var respReadBodies = []string{
	`{}`, `{"input":null,"tools":null,"text":null}`,
	`{"model":"m","stream":false,"prompt_cache_key":"k\u00e9","input":[{"type":"message","role":"user","content":"hi"}]}`,
	`{"prompt_cache_key":5,"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"<environment_context>x"}]}]}`,
	`{"input":[null,{"type":"message","role":"user","content":[null,{"type":"text","text":"b"},{"type":"input_image","text":null,"image_url":"x"}]}]}`,
	`{"input":[{"role":"user","content":"first"},{"type":"function_call","name":"x"},{"type":"function_call_output"},{"type":"message","role":"assistant","content":5},{"type":"reasoning"}]}`,
	`{"input":[{"role":"user","content":"You are performing a CONTEXT CHECKPOINT COMPACTION. x"}]}`,
	`{"input":[{"role":"user","content":"Another language model started to solve this problem and produced a summary of its thinking process. x"},{"role":"user","content":"next"}]}`,
	`{"tools":[{"type":"custom","name":"apply_patch"},null,{"name":null}],"input":[]}`,
	`{"text":{"format":{"type":"json_schema","schema":{"title":"verdict"}}}}`,
	`{"text":{"format":{"type":"json_schema","schema":{"title":5}}}}`,
	`{"text":{"format":{"type":"json_schema","schema":null}}}`,
	`{"text":{"format":{"type":"json_schema"}}}`,
	`{"text":{"format":{"type":"text","schema":{"title":"plan"}}}}`,
	`{"text":{"format":null,"verbosity":"low"}}`,
}

var respOddBodies = append([]string{
	`[]`, `null`, `{"input":{}}`, `{"input":[1]}`, `{"input":[{"role":5}]}`, `{"input":[{"role":"assistant","type":5}]}`,
	`{"input":[{"role":"user","content":5}]}`, `{"input":[{"role":"user","content":[1]}]}`,
	`{"input":[{"role":"user","content":[{"type":"text","text":5}]}]}`,
	`{"input":[{"role":"user","Content":"x"}]}`, `{"Input":[]}`, `{"input":[],"input":[]}`,
	`{"prompt_cache_key":"a","prompt_cache_key":"b"}`, `{"Prompt_Cache_Key":"a"}`,
	`{"tools":[{"name":5}]}`, `{"tools":[5]}`, `{"tools":{}}`, `{"text":5}`, `{"text":{"format":5}}`,
	`{"text":{"format":{"type":5}}}`, `{"text":{"format":{"type":"json_schema","schema":5}}}`,
	`{"text":{"format":{"type":"json_schema","schema":{"Title":"plan"}}}}`, `{"stream":1}`, `{"model":[]}`,
}, respReadBodies...)

func sameResponsesClassification(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	got, gx, ok := classifyResponsesFast(body)
	want, wx, err := classifyResponsesDecoded(body)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%.200q: the fast reader answered %+v, the decoder %v", body, got, err)
	}
	if !reflect.DeepEqual(got, want) || gx != wx {
		t.Errorf("%.200q:\n fast    %+v %+v\n decoded %+v %+v", body, got, gx, want, wx)
	}
	return true
}

func TestClassifyResponsesFast(t *testing.T) {
	for _, name := range []string{"apply-patch-followup.json", "compact-continued-request.json", "compact-summary-request.json",
		"first-request.json", "resumed-turn-request.json", "skill-dollar-request.json", "skill-read-followup.json",
		"structured-request.json", "tool-output-followup.json"} {
		if !sameResponsesClassification(t, responsesBody(t, name)) {
			t.Errorf("%s: the fast reader declined a body codex sent", name)
		}
	}
	for _, b := range respOddBodies {
		sameResponsesClassification(t, []byte(b))
	}
	for _, b := range respReadBodies {
		if !sameResponsesClassification(t, []byte(b)) {
			t.Errorf("the fast reader declined %.80q", b)
		}
	}
}

func FuzzClassifyResponses(f *testing.F) {
	for _, b := range respOddBodies {
		f.Add([]byte(b))
	}
	f.Add(responsesBody(f, "structured-request.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameResponsesClassification(t, body)
	})
}

// Gemini API bodies of odd shapes (see readBodies and oddBodies).
var geminiReadBodies = []string{
	`{}`, `{"contents":null,"systemInstruction":null,"tools":null,"generationConfig":null}`,
	`{"contents":[{"role":"user","parts":[{"text":"<session_context>\nday\n- **Directory Structure:**\ntree"},{"text":"hi \u00e9"}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"no context"}]},{"role":"model","parts":[{"text":"x","thought":true},{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"functionResponse":null}]}]}`,
	`{"contents":[null,{"role":"user","parts":[null,{"text":null},{"text":"  "},{"text":"p","thought":false}]},{"role":"model","parts":[{"text":"Got it. Thanks for the additional context!"}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"a","functionResponse":{"r":1}}]}],"tools":[{"functionDeclarations":[{"name":"x"},null,{}]},null,{}]}`,
	`{"systemInstruction":{"parts":[{"text":"<state_snapshot>"},{"text":"<skill> <name>n</name> <description>d</description>"}]},"contents":[{"role":"user","parts":[{"text":"sum"}]}]}`,
	`{"systemInstruction":{"role":"user","parts":null}}`,
	`{"generationConfig":{"responseJsonSchema":{"title":"verdict"},"temperature":0}}`,
	`{"generationConfig":{"responseJsonSchema":null},"tools":[{"functionDeclarations":[{"name":"x"}]}]}`,
	`{"generationConfig":{"responseSchema":{"properties":{"next_speaker":{}}}}}`,
	`{"generationConfig":{"responseJsonSchema":{"title":"plan"},"responseSchema":{"title":"rubric"}}}`,
	`{"generationConfig":{"responseJsonSchema":5}}`,
}

var geminiOddBodies = append([]string{
	`[]`, `null`, `{"contents":{}}`, `{"contents":[1]}`, `{"contents":[{"role":5}]}`, `{"contents":[{"parts":{}}]}`,
	`{"contents":[{"parts":[{"text":5}]}]}`, `{"contents":[{"parts":[{"thought":"yes"}]}]}`, `{"contents":[{"parts":[5]}]}`,
	`{"Contents":[]}`, `{"contents":[{"Parts":[]}]}`, `{"contents":[{"parts":[{"Text":"x"}]}]}`,
	`{"contents":[{"parts":[{"text":"a","text":"b"}]}]}`, `{"systemInstruction":"x"}`, `{"systemInstruction":[]}`,
	`{"tools":{}}`, `{"tools":[{"functionDeclarations":{}}]}`, `{"tools":[{"functionDeclarations":[{"name":5}]}]}`,
	`{"tools":[5]}`, `{"generationConfig":5}`, `{"generationConfig":{"ResponseJsonSchema":{}}}`,
}, geminiReadBodies...)

func sameGeminiClassification(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	seen, ok := geminiSeenFast(body)
	want, err := geminiSeenDecoded(body)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%.200q: the fast reader answered %+v, the decoder %v", body, seen, err)
	}
	if (seen.first == nil) != (want.first == nil) || seen.first != nil && string(seen.first()) != string(want.first()) {
		t.Errorf("%.200q: the first content differs", body)
	}
	for _, method := range []string{"streamGenerateContent", "generateContent"} {
		got, want := classifyGeminiSeen("m", method, body, seen), classifyGeminiSeen("m", method, body, want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%.200q:\n fast    %+v\n decoded %+v", body, got, want)
		}
	}
	return true
}

func TestClassifyGeminiFast(t *testing.T) {
	for _, name := range []string{"plain-first", "resumed-history", "skill-activated-followup", "skill-listing-resumed", "structured-judge"} {
		if !sameGeminiClassification(t, geminiBody(t, name)) {
			t.Errorf("%s: the fast reader declined a body the CLI sent", name)
		}
	}
	for _, b := range geminiOddBodies {
		sameGeminiClassification(t, []byte(b))
	}
	for _, b := range geminiReadBodies {
		if !sameGeminiClassification(t, []byte(b)) {
			t.Errorf("the fast reader declined %.80q", b)
		}
	}
}

func FuzzClassifyGemini(f *testing.F) {
	for _, b := range geminiOddBodies {
		f.Add([]byte(b))
	}
	f.Add(geminiBody(f, "structured-judge"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameGeminiClassification(t, body)
	})
}

// special finds a quote, a backslash or a control character at any of the
// eight places, and passes every other byte.
func TestSpecialWord(t *testing.T) {
	for c := range 256 {
		want := c == '"' || c == '\\' || c < ' '
		for at := range 8 {
			w := []byte("abcdefgh")
			w[at] = byte(c)
			if got := special(le64(string(w))); got != want {
				t.Errorf("byte %#x at %d: special = %v", c, at, got)
			}
		}
	}
}
