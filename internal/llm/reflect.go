package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/service/reflector"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// Reflector is the LLM reflector (MADE + Reflexion §4.1, App. A; SciMem
// §3.2, App. E): two exchanges per episode. The first gives the model the
// episode's structured summary — per-composition queries, hits, stability
// and energy ranges, the campaign's counters, the directives in force and
// the recent lessons — under MADE's guardrails, and asks for 3–5
// actionable bullets and structured directives; the directives are
// checked against the evidence (reflection.CheckDirectives) and the
// refused ones recorded with the reason. The second shows the memory
// bank's lessons and asks for SciMem's edits (add, modify, merge, delete;
// merge preferred), applied through reflection.ApplyEdits. Where an
// exchange fails (the endpoint, the call budget, an unusable answer) the
// rules' part stands in and the reflection says why.
type Reflector struct {
	client *Client
	store  *store.Store
	log    *zap.Logger
}

// NewReflector builds the LLM reflector over a client. The store (nil in
// tests) counts the exchanges against the campaign's max_llm_calls and
// adds their tokens to its accounting.
func NewReflector(c *Client, s *store.Store, log *zap.Logger) *Reflector {
	if log == nil {
		log = zap.NewNop()
	}
	return &Reflector{client: c, store: s, log: log}
}

// Markers of the reflector's system prompts (a fake model tells the
// exchanges apart by them).
const (
	ReflectMarker = "You are the reflector of a materials-discovery campaign"
	MemoryMarker  = "You maintain the memory bank of a materials-discovery campaign"
)

const reflectSystem = ReflectMarker + `. After each episode you read the episode's statistics and write lessons for the proposer, which designs crystal structures, and directives the environment enforces.

The summary holds the campaign's counters so far, its per-composition statistics (queries, hits, stable count and rate, E_hull range in eV/atom) and the episode's chronological log, one evaluation a line: "#index formula E_hull value" with the flags stable, hit (every constraint met), known (in the reference data) or novel, or "invalid".

Guardrails:
- Read the metrics correctly: an energy above hull (E_hull) below 0 eV/atom is below the known hull, a potential new ground state, not an error; E_hull at or below the stability threshold is stable.
- Novelty is not success; a material of the reference data is no discovery. Success is a candidate meeting every constraint (a hit) that is also stable.
- Every bullet must be actionable with the proposer's levers: which compositions to propose, how many queries each, which stoichiometric regions or chemical systems. No generic advice.
- Base nothing on a single observation: cite the counts behind each lesson.
- A directive may never restrict a composition, element or chemical system of a success, and needs at least 3 queries of evidence.

Answer with one JSON object and nothing else:
{"bullets":["…", "…", "…"],"directives":[{"kind":"cap_composition|exclude_element|avoid_system","formula":"…","element":"…","system":"A-B-C","limit":N,"reason":"…"}]}
bullets: 3 to 5 concise, actionable lessons. directives: possibly none.`

const memorySystem = MemoryMarker + `. Its experiences are lessons keyed by context: "elem:<element symbol>", "sys:<elements sorted, joined by ->", "fam:<anonymous formula>" (a composition family: one stoichiometry across chemical systems, "ABC3" for SrTiO3 and BaZrO3) or, for a composition no broader lesson covers, "comp:<reduced formula>". After each episode you edit the bank with SciMem's operations:
- add: a new lesson (only with at least 3 queries of evidence behind it);
- modify: rewrite a lesson the new evidence changes;
- merge: replace several related lessons (compositions of one chemical system or one family, say) by one ("from" lists them); prefer merge over add;
- delete: remove a lesson the new evidence contradicts.
Keep lessons concise (at most 100 words), concrete (formulas, counts, energies) and never repeat another lesson's text. Edit only what the episode's evidence changes; no edits is a valid answer.

Answer with one JSON object and nothing else:
{"edits":[{"op":"add|modify|merge|delete","key":"…","text":"…","from":["…"],"outcome":"productive|unproductive","reason":"…"}]}
outcome: whether the lesson's subject gave hits or stable candidates (productive) or not (unproductive).`

var reflectSchema = json.RawMessage(`{"type":"object","properties":{"bullets":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":5},"directives":{"type":"array","items":{"type":"object","properties":{"kind":{"type":"string","enum":["cap_composition","exclude_element","avoid_system"]},"formula":{"type":"string"},"element":{"type":"string"},"system":{"type":"string"},"limit":{"type":"integer"},"reason":{"type":"string"}},"required":["kind","reason"]}}},"required":["bullets","directives"]}`)

var memorySchema = json.RawMessage(`{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"op":{"type":"string","enum":["add","modify","merge","delete"]},"key":{"type":"string"},"text":{"type":"string"},"from":{"type":"array","items":{"type":"string"}},"outcome":{"type":"string","enum":["productive","unproductive"]},"reason":{"type":"string"}},"required":["op","key","reason"]}}},"required":["edits"]}`)

// Bounds of the summary and of the answers.
const (
	maxSummaryCompositions = 40  // the most queried, then the successes
	maxSummaryLog          = 60  // the episode's most recent evaluations
	maxBulletLen           = 600 // bytes; longer bullets are cut
	maxBankLessonsShown    = 64
)

// Summary is the episode's structured summary as the model reads it.
type Summary struct {
	Task               string        `json:"task"`
	Goal               string        `json:"goal,omitempty"`
	Constraints        []string      `json:"constraints"`
	StabilityThreshold float64       `json:"stability_threshold_ev_per_atom"`
	Episode            int           `json:"episode"`
	Episodes           int           `json:"episodes"`
	Counters           SummaryCounts `json:"campaign_so_far"`
	// Compositions are the campaign's per-composition statistics, the
	// most queried first (at most maxSummaryCompositions; Omitted counts
	// the rest).
	Compositions []SummaryComposition `json:"compositions"`
	Omitted      int                  `json:"compositions_omitted,omitempty"`
	// Log is the episode's chronological log, one line per evaluation
	// (at most maxSummaryLog, the most recent; LogOmitted counts the
	// earlier ones left out).
	Log        []string `json:"episode_log,omitempty"`
	LogOmitted int      `json:"episode_log_omitted,omitempty"`
	Directives []string `json:"directives_in_force,omitempty"`
	Recent     []string `json:"recent_lessons,omitempty"`
}

// SummaryCounts are the campaign's counters in the summary.
type SummaryCounts struct {
	Evaluated  int `json:"evaluated"`
	Valid      int `json:"valid"`
	Hits       int `json:"hits"`
	Stable     int `json:"stable"`
	StableHits int `json:"stable_hits"`
	Known      int `json:"known_materials"`
	Novel      int `json:"novel"`
	Episode    int `json:"evaluated_this_episode"`
}

// SummaryComposition is one composition's statistics.
type SummaryComposition struct {
	Formula string `json:"formula"`
	Queries int    `json:"queries"`
	Hits    int    `json:"hits"`
	Stable  int    `json:"stable"`
	// StableRate is Stable / Queries (MADE §4.1's stability rate).
	StableRate float64  `json:"stable_rate"`
	EMin       *float64 `json:"e_hull_min,omitempty"`
	EMax       *float64 `json:"e_hull_max,omitempty"`
}

// NewSummary builds the summary of a reflection's input.
func NewSummary(spec *messages.CampaignSpec, in *reflection.Input) *Summary {
	s := &Summary{Task: in.Task.Name, Goal: in.Task.Goal, StabilityThreshold: in.StabilityThreshold,
		Episode: in.Episode + 1, Episodes: spec.Episodes}
	for _, c := range in.Task.Constraints {
		s.Constraints = append(s.Constraints, c.Describe())
	}
	c := in.Counters
	s.Counters = SummaryCounts{Evaluated: c.Evaluated, Valid: c.Valid, Hits: c.Hits, Stable: c.Stable, StableHits: c.StableHits,
		Known: c.Known, Novel: c.Novel, Episode: in.EpisodeEvaluated}
	comps := append([]reflectionStat(nil), statsOf(in)...)
	sort.SliceStable(comps, func(i, j int) bool {
		if comps[i].Queries != comps[j].Queries {
			return comps[i].Queries > comps[j].Queries
		}
		if comps[i].Hits+comps[i].Stable != comps[j].Hits+comps[j].Stable {
			return comps[i].Hits+comps[i].Stable > comps[j].Hits+comps[j].Stable
		}
		return comps[i].Formula < comps[j].Formula
	})
	for i, c := range comps {
		if i == maxSummaryCompositions {
			s.Omitted = len(comps) - i
			break
		}
		s.Compositions = append(s.Compositions, SummaryComposition(c))
	}
	for _, d := range in.Directives {
		if t := describeDirective(d); t != "" {
			s.Directives = append(s.Directives, t)
		}
	}
	s.Recent = in.Recent
	log := in.Log
	if n := len(log) - maxSummaryLog; n > 0 {
		s.LogOmitted, log = n, log[n:]
	}
	s.Log = make([]string, 0, len(log))
	for _, q := range log {
		s.Log = append(s.Log, logLine(q))
	}
	return s
}

// logLine writes a query of the log as "#12 SrTiO3 E_hull 0.034 stable
// hit novel", or "#13 XY invalid".
func logLine(q reflection.Query) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", q.Index, q.Formula)
	if !q.Valid {
		b.WriteString(" invalid")
		return b.String()
	}
	if q.EAboveHull != nil {
		b.WriteString(" E_hull " + strconv.FormatFloat(*q.EAboveHull, 'f', 3, 64))
	}
	for _, f := range []struct {
		on   bool
		word string
	}{{q.Stable, "stable"}, {q.Hit, "hit"}, {q.Known, "known"}, {q.Novel, "novel"}} {
		if f.on {
			b.WriteString(" " + f.word)
		}
	}
	return b.String()
}

type reflectionStat SummaryComposition

func statsOf(in *reflection.Input) []reflectionStat {
	out := make([]reflectionStat, 0, len(in.Compositions))
	for _, c := range in.Compositions {
		rate := 0.0
		if c.Queries > 0 {
			rate = math.Round(1000*float64(c.Stable)/float64(c.Queries)) / 1000
		}
		out = append(out, reflectionStat{Formula: c.Formula, Queries: c.Queries, Hits: c.Hits, Stable: c.Stable, StableRate: rate, EMin: c.EMin, EMax: c.EMax})
	}
	return out
}

// reflectAnswer is the reflect exchange's answer, read leniently.
type reflectAnswer struct {
	Bullets    []string `json:"bullets"`
	Directives []struct {
		Kind    string          `json:"kind"`
		Formula string          `json:"formula"`
		Element string          `json:"element"`
		System  string          `json:"system"`
		Limit   json.RawMessage `json:"limit"`
		Reason  string          `json:"reason"`
	} `json:"directives"`
}

// Reflect implements reflector.LLM.
func (r *Reflector) Reflect(ctx context.Context, spec *messages.CampaignSpec, in *reflection.Input, rules *reflection.Output) (*reflector.LLMReflection, error) {
	out := &reflector.LLMReflection{Output: *rules}
	summary := NewSummary(spec, in)
	sum, err := json.MarshalIndent(summary, "", " ")
	if err != nil {
		return nil, err
	}
	// The memory exchange edits lessons from the statistics; the log
	// would only lengthen its prompt.
	summary.Log, summary.LogOmitted = nil, 0
	memSum, err := json.MarshalIndent(summary, "", " ")
	if err != nil {
		return nil, err
	}
	var fallbacks []string
	user := "Episode summary:\n```json\n" + string(sum) + "\n```\nWrite the episode's bullets and directives."
	content, rec, err := r.exchange(ctx, spec, in.Episode, messages.PromptReflect, reflectSystem, user, reflectSchema, "reflection")
	out.Prompts = append(out.Prompts, rec)
	if err == nil {
		var a reflectAnswer
		if err = decodeObject(content, &a); err == nil {
			err = r.useReflection(in, &a, out)
			rec.Candidates, rec.Rejected = len(out.Output.Directives), len(out.Dropped)
		}
		if err != nil {
			rec.Error = "unusable answer: " + err.Error()
		}
	}
	if err != nil {
		fallbacks = append(fallbacks, "reflect: "+err.Error())
	}

	var lessons []map[string]any
	for i, e := range in.Existing {
		if i == maxBankLessonsShown {
			break
		}
		lessons = append(lessons, map[string]any{"key": e.Key, "support": e.Support, "text": e.Text})
	}
	bank, _ := json.MarshalIndent(lessons, "", " ")
	user = "Memory bank (" + strconv.Itoa(len(in.Existing)) + " lessons):\n```json\n" + string(bank) + "\n```\nEpisode summary:\n```json\n" + string(memSum) +
		"\n```\nThis episode's lessons:\n- " + strings.Join(out.Output.Bullets, "\n- ") + "\nWrite the bank's edits."
	content, rec, err = r.exchange(ctx, spec, in.Episode, messages.PromptMemory, memorySystem, user, memorySchema, "memory_edits")
	out.Prompts = append(out.Prompts, rec)
	if err == nil {
		var a struct {
			Edits []reflection.Edit `json:"edits"`
		}
		if err = decodeObject(content, &a); err == nil {
			ops, dropped := reflection.ApplyEdits(*in, a.Edits)
			out.Output.Ops = ops
			rec.Candidates, rec.Rejected = len(a.Edits)-len(dropped), len(dropped)
			for _, d := range dropped {
				out.RefusedEdits = append(out.RefusedEdits, d.What+": "+d.Reason)
			}
		} else {
			rec.Error = "unusable answer: " + err.Error()
		}
	}
	if err != nil {
		fallbacks = append(fallbacks, "memory: "+err.Error())
	}
	out.Fallback = strings.Join(fallbacks, "; ")
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, nil
}

// useReflection takes the answer's bullets (3–5; the rules' complete a
// shorter list) and its directives that the evidence supports.
func (r *Reflector) useReflection(in *reflection.Input, a *reflectAnswer, out *reflector.LLMReflection) error {
	var bullets []string
	for _, b := range a.Bullets {
		b = strings.Join(strings.Fields(b), " ")
		if b == "" {
			continue
		}
		if len(b) > maxBulletLen {
			b = strings.ToValidUTF8(b[:maxBulletLen-len("…")], "") + "…"
		}
		bullets = append(bullets, b)
		if len(bullets) == reflection.MaxBullets {
			break
		}
	}
	if len(bullets) == 0 {
		return errors.New("no bullets")
	}
	for _, b := range out.Output.Bullets {
		if len(bullets) >= reflection.MinBullets {
			break
		}
		bullets = append(bullets, b)
	}
	var proposed []messages.Directive
	for _, d := range a.Directives {
		limit := 0
		if len(d.Limit) > 0 {
			var n json.Number
			if json.Unmarshal(d.Limit, &n) == nil || json.Unmarshal([]byte(strings.Trim(string(d.Limit), `"`)), &n) == nil {
				if f, err := n.Float64(); err == nil {
					limit = int(f)
				}
			}
		}
		proposed = append(proposed, messages.Directive{Kind: strings.TrimSpace(d.Kind), Formula: d.Formula, Element: d.Element, System: d.System, Limit: limit, Reason: d.Reason})
	}
	kept, dropped := reflection.CheckDirectives(*in, proposed)
	out.Output.Bullets, out.Output.Directives, out.Dropped = bullets, kept, dropped
	return nil
}

// exchange sends one of the reflector's prompts, counted against the
// campaign's call budget, and returns the answer and its audit record.
func (r *Reflector) exchange(ctx context.Context, spec *messages.CampaignSpec, episode int, kind, system, user string, schema json.RawMessage, name string) (string, *messages.Prompt, error) {
	model := spec.Reflector.Model
	if model == "" {
		model = spec.Generator.Model
	}
	if model == "" {
		model = r.client.cfg.Model
	}
	temp := r.client.cfg.Temperature
	rec := &messages.Prompt{
		Schema: messages.SchemaVersion, Campaign: spec.ID, Kind: kind, Episode: episode, Attempt: 1,
		Template: "reflect-v1", Model: model, Temperature: temp, System: system, User: user,
		Endpoint: r.client.cfg.BaseURL, At: time.Now().UTC(),
	}
	if kind == messages.PromptMemory {
		rec.Index = 1
	}
	if model == "" {
		rec.Outcome, rec.Error = messages.PromptFailed, "no model: reflector.model, generator.model or the reflector's --llm-model"
		return "", rec, errors.New(rec.Error)
	}
	comp, err := r.client.Complete(ctx, Request{Model: model, Temperature: temp, System: system, User: user,
		Schema: schema, SchemaName: name, Reserve: reserveCall(r.store, spec, false), Release: releaseCall(r.store, spec, false)})
	if comp != nil {
		rec.Format, rec.Requests, rec.LatencySeconds = comp.Format, comp.Requests, comp.Latency.Seconds()
	}
	if err != nil {
		rec.Outcome, rec.Error = messages.PromptFailed, err.Error()
		var e *Error
		if errors.As(err, &e) {
			rec.ErrorKind = e.Kind
			if e.Kind == KindBudget {
				rec.Outcome = messages.PromptBudgetSpent
			}
		}
		r.log.Warn("LLM reflector exchange failed", append([]zap.Field{zap.String("campaign", spec.ID), zap.String("kind", kind), zap.Error(err)}, errFields(err)...)...)
		return "", rec, err
	}
	rec.Outcome = messages.PromptAnswered
	rec.Answer = comp.Content
	if len(rec.Answer) > messages.MaxPromptAnswer {
		rec.Answer = strings.ToValidUTF8(rec.Answer[:messages.MaxPromptAnswer-len("…")], "") + "…"
	}
	rec.FinishReason = comp.FinishReason
	rec.PromptTokens, rec.CompletionTokens, rec.TokensEstimated = comp.PromptTokens, comp.CompletionTokens, comp.Estimated
	if r.store != nil {
		if err := r.store.AddLLMUsage(ctx, spec.ID, 1, comp.PromptTokens, comp.CompletionTokens); err != nil {
			r.log.Warn("recording LLM usage failed", zap.String("campaign", spec.ID), zap.Error(err))
		}
	}
	return comp.Content, rec, nil
}

func errFields(err error) []zap.Field {
	var e *Error
	if errors.As(err, &e) {
		return e.LogFields()
	}
	return nil
}

// decodeObject reads the first JSON object of an answer into v: code
// fences and text around it are skipped.
func decodeObject(content string, v any) error { return decodeFirstObject(content, v, false) }

// decodeFirstObject is decodeObject; strict makes an unknown key an
// error.
func decodeFirstObject(content string, v any, strict bool) error {
	i := strings.IndexByte(content, '{')
	if i < 0 {
		return errors.New("no JSON object in the answer")
	}
	dec := json.NewDecoder(strings.NewReader(content[i:]))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the answer's JSON: %w", err)
	}
	return nil
}
