package llmtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// The reflector's system prompts begin so (llm.ReflectMarker,
// llm.MemoryMarker).
const (
	reflectMarker = "You are the reflector of a materials-discovery campaign"
	memoryMarker  = "You maintain the memory bank of a materials-discovery campaign"
)

// Agents is an answerer for every exchange of a campaign with generator
// and reflector llm: proposals as Substitute(seed) writes them; for a
// reflection, bullets and directives read off the episode summary in the
// prompt — a cap on every composition queried three times or more without
// a hit or a stable candidate, and two directives the evidence refutes
// (the exclusion of an element of the best success, the avoidance of a
// system queried once) as a careless model would write them; for the
// memory bank, an add or modify of a lesson on every composition with a
// hit and three queries or more, and a merge of the bank's composition
// lessons of one chemical system.
func Agents(seed uint64) func(Request) Reply {
	propose := Substitute(seed)
	debater := Debater()
	return func(req Request) Reply {
		switch {
		case IsDebate(req):
			return debater(req)
		case strings.HasPrefix(req.System, reflectMarker):
			return reflectReply(req.User)
		case strings.HasPrefix(req.System, memoryMarker):
			return memoryReply(req.User)
		}
		return propose(req)
	}
}

type summaryComp struct {
	Formula string   `json:"formula"`
	Queries int      `json:"queries"`
	Hits    int      `json:"hits"`
	Stable  int      `json:"stable"`
	EMin    *float64 `json:"e_hull_min"`
}

// jsonBlocks returns the prompt's ```json blocks, in order.
func jsonBlocks(prompt string) []string {
	var out []string
	for {
		i := strings.Index(prompt, "```json\n")
		if i < 0 {
			return out
		}
		prompt = prompt[i+len("```json\n"):]
		j := strings.Index(prompt, "\n```")
		if j < 0 {
			return out
		}
		out = append(out, prompt[:j])
		prompt = prompt[j:]
	}
}

func summaryOf(block string) []summaryComp {
	var s struct {
		Compositions []summaryComp `json:"compositions"`
	}
	_ = json.Unmarshal([]byte(block), &s)
	return s.Compositions
}

func reflectReply(user string) Reply {
	blocks := jsonBlocks(user)
	if len(blocks) == 0 {
		return Reply{Content: "I found no summary."}
	}
	comps := summaryOf(blocks[0])
	var best, worst *summaryComp
	var dirs []map[string]any
	queries := 0
	for i := range comps {
		c := &comps[i]
		queries += c.Queries
		ok := c.Hits > 0 || c.Stable > 0
		if ok && (best == nil || c.Hits+c.Stable > best.Hits+best.Stable) {
			best = c
		}
		if !ok && (worst == nil || c.Queries > worst.Queries) {
			worst = c
		}
		if !ok && c.Queries >= 3 {
			dirs = append(dirs, map[string]any{"kind": "cap_composition", "formula": c.Formula, "limit": c.Queries,
				"reason": fmt.Sprintf("%d queries without a hit or a stable candidate", c.Queries)})
		}
		if !ok && c.Queries == 1 {
			if sys := system(c.Formula); sys != "" && len(dirs) < 8 {
				dirs = append(dirs, map[string]any{"kind": "avoid_system", "system": sys, "reason": "failed once"})
			}
		}
	}
	bullets := []string{fmt.Sprintf("Keep breadth: %d compositions over %d queries; give every generation at least one untried composition.", len(comps), queries)}
	if best != nil {
		bullets = append(bullets, fmt.Sprintf("Exploit %s (%d hits, %d stable of %d queries): propose its isovalent substitutions.", best.Formula, best.Hits, best.Stable, best.Queries))
		if c, err := crystal.ParseFormula(best.Formula); err == nil && len(c.Elements()) > 0 {
			dirs = append(dirs, map[string]any{"kind": "exclude_element", "element": c.Elements()[0].Symbol(), "reason": "a careless directive"})
		}
	}
	if worst != nil {
		bullets = append(bullets, fmt.Sprintf("Stop querying %s (%d queries without a hit): move to other stoichiometries.", worst.Formula, worst.Queries))
	}
	bullets = append(bullets, "Prefer charge-balanced formulas in common oxidation states.")
	data, _ := json.Marshal(map[string]any{"bullets": bullets, "directives": dirs})
	return Reply{Content: "```json\n" + string(data) + "\n```", NoUsage: true}
}

func system(formula string) string {
	c, err := crystal.ParseFormula(formula)
	if err != nil {
		return ""
	}
	return c.ChemicalSystem()
}

func memoryReply(user string) Reply {
	blocks := jsonBlocks(user)
	if len(blocks) < 2 {
		return Reply{Content: `{"edits":[]}`}
	}
	var bank []struct {
		Key  string `json:"key"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal([]byte(blocks[0]), &bank)
	have := map[string]bool{}
	bySys := map[string][]string{}
	for _, l := range bank {
		have[l.Key] = true
		if f, ok := strings.CutPrefix(l.Key, "comp:"); ok {
			if s := system(f); s != "" {
				bySys[s] = append(bySys[s], l.Key)
			}
		}
	}
	var edits []map[string]any
	for _, c := range summaryOf(blocks[1]) {
		if c.Hits == 0 || c.Queries < 3 {
			continue
		}
		key := "comp:" + c.Formula
		op := "add"
		if have[key] {
			op = "modify"
		}
		edits = append(edits, map[string]any{"op": op, "key": key, "reason": "new evidence",
			"text": fmt.Sprintf("%s: %d hits and %d stable of %d queries. Productive: vary its stoichiometry.", c.Formula, c.Hits, c.Stable, c.Queries)})
	}
	systems := make([]string, 0, len(bySys))
	for s := range bySys {
		systems = append(systems, s)
	}
	sort.Strings(systems)
	for _, s := range systems {
		if ks := bySys[s]; len(ks) >= 2 {
			edits = append(edits, map[string]any{"op": "merge", "key": "sys:" + s, "from": ks, "reason": "one system",
				"text": fmt.Sprintf("%s: %d composition lessons merged: %s.", s, len(ks), strings.Join(ks, ", "))})
		}
	}
	data, _ := json.Marshal(map[string]any{"edits": edits})
	return Reply{Content: string(data), NoUsage: true}
}
