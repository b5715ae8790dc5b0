package llm

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/crucible-sci/crucible/pkg/evolve"
)

var (
	ruleNumberAnywhere = regexp.MustCompile(`(?i)\brule[\s_#:-]*(?:no\.?\s*|number\s*)?(\d{1,2})\b`)
	ruleNumberFirst    = regexp.MustCompile(`^\W*(\d{1,2})(?:\W|$)`)
)

// noRule are the ways of saying no rule was applied.
var noRule = map[string]bool{"": true, "none": true, "n/a": true, "na": true, "null": true, "nil": true, "-": true,
	"no rule": true, "no": true, "not applicable": true, "—": true, "0": true}

// resolveRule names the design rule a candidate states as the prompt
// numbers and names them (evolve.Rules, LLEMA App. B.4): "5. Crystal
// prototype substitution". It accepts the rule's number (5, 5.0, "5",
// "Rule 5", "#5", "rule_5"), its numbered name as the prompt writes it,
// its name or a phrase close to it ("prototype substitution"), an object
// with a number or a name, or a list of these (the first that resolves);
// "none", "n/a" and the like are "none". Anything else is kept as
// "unknown: <text>": the candidate is not rejected for it. how names a
// departure from the asked-for string for the audit ("rule_as_number",
// "rule_phrase", "rule_unknown", …), "" for none.
func resolveRule(raw json.RawMessage) (rule, how string) {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || string(v) == "null" {
		return "", ""
	}
	switch v[0] {
	case '[':
		var list []json.RawMessage
		_ = json.Unmarshal(v, &list)
		for _, e := range list {
			if r, _ := resolveRule(e); r != "" && !strings.HasPrefix(r, "unknown") {
				return r, "rule_list"
			}
		}
		if len(list) > 0 {
			r, _ := resolveRule(list[0])
			return r, "rule_unknown"
		}
		return "", ""
	case '{':
		ms, _ := members(v)
		for _, m := range ms {
			switch m.norm {
			case "number", "id", "rule", "rule_number", "index", "name", "rule_name", "title":
				if r, _ := resolveRule(m.val); r != "" && !strings.HasPrefix(r, "unknown") {
					return r, "rule_object"
				}
			}
		}
		return "unknown: " + clip(string(v), 80), "rule_unknown"
	case '"':
	default:
		var x float64
		if json.Unmarshal(v, &x) == nil {
			if r, ok := ruleByNumber(x); ok {
				return r, "rule_as_number"
			}
			if x == 0 {
				return "none", "rule_as_number"
			}
			return "unknown: " + string(v), "rule_unknown"
		}
		return "unknown: " + clip(string(v), 80), "rule_unknown"
	}
	var s string
	_ = json.Unmarshal(v, &s)
	text := strings.TrimSpace(s)
	if noRule[strings.ToLower(strings.Trim(text, ". "))] {
		if text == "none" {
			return "none", ""
		}
		return "none", "rule_phrase"
	}
	for _, re := range []*regexp.Regexp{ruleNumberFirst, ruleNumberAnywhere} {
		if m := re.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			if r, ok := ruleByNumber(float64(n)); ok {
				if r == text {
					return r, ""
				}
				return r, "rule_phrase"
			}
		}
	}
	if r, ok := ruleByPhrase(text); ok {
		return r, "rule_phrase"
	}
	return "unknown: " + clip(text, 80), "rule_unknown"
}

// ruleName writes a rule as the prompt and the evolve generator do.
func ruleName(r evolve.Rule) string { return strconv.Itoa(r.Number) + ". " + r.Name }

func ruleByNumber(x float64) (string, bool) {
	if x != math.Trunc(x) {
		return "", false
	}
	r, err := evolve.RuleByNumber(int(x))
	if err != nil {
		return "", false
	}
	return ruleName(r), true
}

// ruleByPhrase finds the rule whose name a phrase is closest to. Words
// are compared by their first six letters (so "substituting" meets
// "substitution"), each weighted by the inverse of the number of rule
// names it occurs in. A rule's score is the mean of the share of its
// name's weight the phrase has and the share of the phrase's weight the
// name has; the best score wins if it is at least one half, no other rule
// ties it, and the words shared weigh at least one half (a word common to
// many names, "substitution", does not name a rule alone).
func ruleByPhrase(text string) (string, bool) {
	words := stems(text)
	if len(words) == 0 {
		return "", false
	}
	weight := func(w string) float64 {
		if n := ruleStemFrequency[w]; n > 0 {
			return 1 / float64(n)
		}
		return 1
	}
	var phrase float64
	for w := range words {
		phrase += weight(w)
	}
	best, second := 0.0, 0.0
	var pick evolve.Rule
	for _, r := range evolve.Rules {
		var shared, name float64
		for w := range stems(r.Name) {
			name += weight(w)
			if words[w] {
				shared += weight(w)
			}
		}
		if shared < 0.5 {
			continue
		}
		score := (shared/name + shared/phrase) / 2
		switch {
		case score > best:
			second, best, pick = best, score, r
		case score > second:
			second = score
		}
	}
	if best >= 0.5 && best > second {
		return ruleName(pick), true
	}
	return "", false
}

// ruleStemFrequency counts the rule names each stem occurs in.
var ruleStemFrequency = func() map[string]int {
	m := map[string]int{}
	for _, r := range evolve.Rules {
		for w := range stems(r.Name) {
			m[w]++
		}
	}
	return m
}()

// stems are the first six letters of a text's words of three letters or
// more, in lower case.
func stems(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) < 3 || w == "rule" || w == "the" || w == "and" {
			continue
		}
		if len(w) > 6 {
			w = w[:6]
		}
		out[w] = true
	}
	return out
}

// clip cuts s to n bytes (on a rune boundary) with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
