package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// ErrNotFound is returned for a campaign the store does not hold.
var ErrNotFound = errors.New("not found")

// Campaign keys.
func (s *Store) stateKey(c string) string    { return s.ck(c, "state") }
func (s *Store) specKey(c string) string     { return s.ck(c, "spec") }
func (s *Store) triggersKey(c string) string { return s.ck(c, "triggers") }
func (s *Store) gensKey(c string) string     { return s.ck(c, "gens") }
func (s *Store) seenKey(c string) string     { return s.ck(c, "seen") }
func (s *Store) evaluatedKey(c string) string {
	return s.ck(c, "evaluated")
}
func (s *Store) compsKey(c string) string   { return s.ck(c, "comps") }
func (s *Store) docsKey(c string) string    { return s.ck(c, "docs") }
func (s *Store) findsKey(c string) string   { return s.ck(c, "findlist") }
func (s *Store) islandsKey(c string) string { return s.ck(c, "islands") }
func (s *Store) hitsKey(c string) string    { return s.ck(c, "hits") }
func (s *Store) curveKey(c string) string   { return s.ck(c, "curve") }
func (s *Store) discoveriesKey(c string) string {
	return s.ck(c, "discoveries")
}
func (s *Store) poolKey(c string, island int, kind string) string {
	return s.ck(c, "island", strconv.Itoa(island), kind)
}
func (s *Store) indexKey() string { return s.prefix + "campaigns" }

// CreateCampaign stores a validated campaign and its initial state, once:
// it reports false when the campaign already existed (a redelivered
// submission), leaving it untouched.
func (s *Store) CreateCampaign(ctx context.Context, spec *messages.CampaignSpec, seeds int) (bool, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return false, err
	}
	args := []any{string(data),
		"status", messages.StateRunning,
		"budget", spec.Budget, "episodes", spec.Episodes, "batch", spec.BatchSize,
		"islands", spec.Islands, "seeds", seeds, "episode", 0,
		"created", time.Now().UTC().Format(time.RFC3339Nano),
	}
	n, err := scriptCreate.Run(ctx, s.rdb, []string{s.stateKey(spec.ID), s.specKey(spec.ID)}, args...).Int()
	if err != nil {
		return false, fmt.Errorf("store: create campaign %s: %w", spec.ID, err)
	}
	// The index is another hash slot, so it is written separately; ZADD is
	// idempotent.
	if err := s.rdb.ZAdd(ctx, s.indexKey(), redis.Z{Score: float64(spec.SubmittedAt.UnixMilli()), Member: spec.ID}).Err(); err != nil {
		return false, fmt.Errorf("store: index campaign %s: %w", spec.ID, err)
	}
	return n == 1, nil
}

// Spec returns a campaign's spec.
func (s *Store) Spec(ctx context.Context, campaign string) (*messages.CampaignSpec, error) {
	data, err := s.rdb.Get(ctx, s.specKey(campaign)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("store: campaign %s: %w", campaign, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: campaign %s: %w", campaign, err)
	}
	var spec messages.CampaignSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("store: campaign %s spec: %w", campaign, err)
	}
	return &spec, nil
}

// Campaigns lists campaign ids, oldest first.
func (s *Store) Campaigns(ctx context.Context) ([]string, error) {
	return s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
}

// State is a campaign's counters and control fields.
type State struct {
	Status        string
	Episode       int
	Inflight      int
	Counters      messages.Counters
	EAboveHullSum float64
	EAboveHullN   int
	Unique        int
	Created       time.Time
	raw           map[string]string
}

// Int returns a raw integer field of the state hash.
func (st *State) Int(field string) int {
	n, _ := strconv.Atoi(st.raw[field])
	return n
}

// State reads a campaign's state (and the size of its discoveries set) in
// one round trip.
func (s *Store) State(ctx context.Context, campaign string) (*State, error) {
	pipe := s.rdb.Pipeline()
	hash := pipe.HGetAll(ctx, s.stateKey(campaign))
	discoveries := pipe.SCard(ctx, s.discoveriesKey(campaign))
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: state of %s: %w", campaign, err)
	}
	m := hash.Val()
	if len(m) == 0 {
		return nil, fmt.Errorf("store: campaign %s: %w", campaign, ErrNotFound)
	}
	st := &State{raw: m, Status: m["status"]}
	st.Episode = st.Int("episode")
	st.Inflight = st.Int("inflight")
	st.Unique = st.Int("unique_compositions")
	st.EAboveHullN = st.Int("ehull_n")
	st.EAboveHullSum, _ = strconv.ParseFloat(m["ehull_sum"], 64)
	st.Created, _ = time.Parse(time.RFC3339Nano, m["created"])
	c := &st.Counters
	c.Proposed, c.Evaluated, c.Valid = st.Int("proposed"), st.Int("evaluated"), st.Int("valid")
	c.Hits, c.Stable, c.StableHits = st.Int("hits"), st.Int("stable"), st.Int("stable_hits")
	c.Novel, c.Known, c.Seeds = st.Int("novel"), st.Int("known"), st.Int("seeds")
	c.Generations, c.EmptyGenerations, c.Rejected = st.Int("generations"), st.Int("empty_generations"), st.Int("rejected")
	c.Discoveries, c.LLMCalls = int(discoveries.Val()), st.Int("llm_calls")
	c.PromptTokens, c.CompletionTokens = st.Int("prompt_tokens"), st.Int("completion_tokens")
	c.LLMRequests = st.Int("llm_requests")
	return st, nil
}

// Generation is a reserved generation.
type Generation struct {
	Generation, Slots, Episode int
}

// RequestGeneration reserves the next generation of the current episode on
// behalf of trigger. The same trigger always gets the same answer; ok is
// false when no generation can be requested (budget of the episode
// reserved, campaign finished).
func (s *Store) RequestGeneration(ctx context.Context, campaign, trigger string) (g Generation, ok bool, err error) {
	res, err := scriptRequest.Run(ctx, s.rdb, []string{s.stateKey(campaign), s.triggersKey(campaign), s.gensKey(campaign)}, trigger).Text()
	if err != nil {
		return g, false, fmt.Errorf("store: request generation of %s (%s): %w", campaign, trigger, err)
	}
	return parseReservation(res)
}

// parseReservation reads the Lua reserve function's reply.
func parseReservation(res string) (g Generation, ok bool, err error) {
	if strings.HasPrefix(res, "-1:") {
		return g, false, nil
	}
	parts := strings.Split(res, ":")
	if len(parts) != 3 {
		return g, false, fmt.Errorf("store: request generation: bad reply %q", res)
	}
	g.Generation, _ = strconv.Atoi(parts[0])
	g.Slots, _ = strconv.Atoi(parts[1])
	g.Episode, _ = strconv.Atoi(parts[2])
	return g, true, nil
}

// Proposal is what a proposer publishes for one generation.
type Proposal struct {
	Generation int
	Island     int
	// Candidates to publish. One without a Fingerprint claims a reduced
	// formula (its Formula) new to the campaign; when the formula turns out
	// to have structures, RecordProposal computes the fingerprints it needs
	// with Fingerprint.
	Candidates []*messages.Candidate
	// Rejected are candidates the generator produced that failed the
	// proposer's checks, kept for the island's failure memory.
	Rejected []Member
	// Tokens and calls of the LLM for this generation.
	PromptTokens, CompletionTokens, LLMCalls int
	// Fingerprint computes a structure's fingerprint (crystal.Fingerprint);
	// required when a candidate has none.
	Fingerprint func(messages.Structure) (string, error)
}

// ExhaustionLimit is how many generations in a row may come back empty
// before a campaign is declared exhausted.
const ExhaustionLimit = 50

// MaxRejectsKept bounds each island's list of rejected proposals.
const MaxRejectsKept = 32

// proposeRounds bounds the rounds of one proposal in RecordProposals: the
// second has every fingerprint the first asked for, and a formula's
// pending structure, once resolved, never comes back.
const proposeRounds = 4

// RecordProposal stores a generation's proposal and deduplicates its
// candidates against the campaign's earlier ones, once per generation: it
// returns the candidates to publish (for a repeated call, the same ones).
//
// Structures are told apart by fingerprint only within a reduced formula,
// so a candidate of a formula new to the campaign goes without one; when
// its formula has structures after all (another replica, a stale
// snapshot), the store asks for its fingerprint and for that of the
// formula's structure still without one, and RecordProposal computes them
// with p.Fingerprint and records the proposal again. A structure whose
// fingerprint cannot be computed is keyed by its id: told apart from every
// other.
func (s *Store) RecordProposal(ctx context.Context, campaign string, p *Proposal) ([]*messages.Candidate, error) {
	r := s.RecordProposals(ctx, campaign, []*Proposal{p})[0]
	return r.Published, r.Err
}

// Recorded is what RecordProposals made of one proposal: the candidates to
// publish, or why it could not be recorded.
type Recorded struct {
	Published []*messages.Candidate
	Err       error
}

// RecordProposals records several generations' proposals of one campaign
// as RecordProposal records each, in order (a later proposal is
// deduplicated against the earlier ones), in as few calls as the
// fingerprints they turn out to need allow: usually one. A proposal that
// cannot be recorded has its error and does not hold up the others.
func (s *Store) RecordProposals(ctx context.Context, campaign string, ps []*Proposal) []Recorded {
	out := make([]Recorded, len(ps))
	fail := func(i int, err error) {
		out[i].Err = fmt.Errorf("store: record proposal %s generation %d: %w", campaign, ps[i].Generation, err)
	}
	var todo []*proposalCall
	for i, p := range ps {
		pc, err := newProposalCall(p, i)
		if err != nil {
			fail(i, err)
			continue
		}
		todo = append(todo, pc)
	}
	for len(todo) > 0 {
		keys := []string{s.stateKey(campaign), s.gensKey(campaign), s.seenKey(campaign)}
		args := []any{0}
		calls := todo[:0:0]
		for _, pc := range todo {
			a, err := pc.args()
			if err != nil {
				fail(pc.index, err)
				continue
			}
			calls = append(calls, pc)
			keys = append(keys, s.poolKey(campaign, pc.p.Island, "rejects"))
			args = append(append(args, len(a)), a...)
		}
		if todo = calls; len(todo) == 0 {
			break
		}
		args[0] = len(todo)
		res, err := scriptPropose.Run(ctx, s.rdb, keys, args...).StringSlice()
		var k int
		var need []string
		if err == nil {
			k, need, err = proposeReply(res, len(todo))
		}
		if err != nil {
			for _, pc := range todo {
				fail(pc.index, err)
			}
			break
		}
		for j, pc := range todo[:k] {
			accepted, stored := res[1+2*j], res[2+2*j]
			if why, ok := strings.CutPrefix(accepted, "error:"); ok {
				fail(pc.index, errors.New(why))
				continue
			}
			// A repeated proposal gets what the first one stored, not what
			// this (possibly different) proposal holds.
			out[pc.index].Published, out[pc.index].Err = acceptedCandidates(accepted, stored)
		}
		todo = todo[k:]
		if len(todo) == 0 {
			break
		}
		if err := todo[0].resolve(need); err != nil {
			fail(todo[0].index, err)
			todo = todo[1:]
		}
	}
	return out
}

// proposeReply checks the shape of scriptPropose's reply to n proposals
// and returns how many it recorded and, when that is short of n, what the
// next one needs (index and pending value per candidate).
func proposeReply(res []string, n int) (k int, need []string, err error) {
	bad := fmt.Errorf("bad reply of %d values for %d proposals", len(res), n)
	if len(res) == 0 {
		return 0, nil, bad
	}
	k, err = strconv.Atoi(res[0])
	needAt := 1 + 2*k
	switch {
	case err != nil || k < 0 || k > n || len(res) < needAt:
		return 0, nil, bad
	case k == n && len(res) != needAt:
		return 0, nil, bad
	case k < n && (len(res) <= needAt || res[needAt] != "need" || (len(res)-needAt)%2 != 1):
		return 0, nil, bad
	case k < n:
		need = res[needAt+1:]
	}
	return k, need, nil
}

// proposalCall is one proposal on its way through RecordProposals.
type proposalCall struct {
	p     *Proposal
	index int
	// head is the script's arguments up to the rejects; the proposal (at
	// 2) is encoded in each round, with the fingerprints computed so far.
	head []any
	// keys[i] is what candidate i is deduplicated by: its fingerprint, ""
	// while it claims a new formula.
	keys     []string
	resolved []any           // formula, pending id, its fingerprint
	done     map[string]bool // formulas resolved
	rounds   int
	// encoded is the arguments of the last round, until resolve changes
	// them: a proposal behind one that needs fingerprints goes again
	// unchanged.
	encoded []any
}

func newProposalCall(p *Proposal, index int) (*proposalCall, error) {
	pc := &proposalCall{p: p, index: index, keys: make([]string, len(p.Candidates)), done: map[string]bool{}}
	pc.head = []any{p.Generation, p.Island, "", len(p.Rejected), p.PromptTokens, p.CompletionTokens, p.LLMCalls, ExhaustionLimit, MaxRejectsKept, len(p.Rejected)}
	for _, r := range p.Rejected {
		doc, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		pc.head = append(pc.head, string(doc))
	}
	for i, c := range p.Candidates {
		pc.keys[i] = c.Fingerprint
		if pc.keys[i] == "" && (c.Formula == "" || p.Fingerprint == nil) {
			return nil, fmt.Errorf("candidate %s has no fingerprint and no formula or way to compute one", c.ID)
		}
	}
	return pc, nil
}

// args are the proposal's arguments of the script for its next round.
func (pc *proposalCall) args() ([]any, error) {
	if pc.encoded != nil {
		return pc.encoded, nil
	}
	proposal, err := json.Marshal(pc.p.Candidates)
	if err != nil {
		return nil, err
	}
	pc.head[2] = string(proposal)
	args := append(slices.Clip(pc.head), len(pc.resolved)/3)
	args = append(args, pc.resolved...)
	for i, c := range pc.p.Candidates {
		doc := ""
		if pc.keys[i] == "" {
			b, err := json.Marshal(c.Structure)
			if err != nil {
				return nil, err
			}
			doc = string(b)
		}
		args = append(args, c.ID, pc.keys[i], c.Formula, doc)
	}
	pc.encoded = args
	return args, nil
}

// resolve computes the fingerprints the script asked for: need holds, per
// candidate, its index and its formula's pending value ("" for none).
func (pc *proposalCall) resolve(need []string) error {
	pc.encoded = nil
	if pc.rounds++; pc.rounds == proposeRounds {
		return fmt.Errorf("fingerprints still needed after %d rounds", pc.rounds)
	}
	p := pc.p
	for j := 0; j+1 < len(need); j += 2 {
		i, err := strconv.Atoi(need[j])
		if err != nil || i < 0 || i >= len(p.Candidates) {
			return fmt.Errorf("bad index %q", need[j])
		}
		c := p.Candidates[i]
		if pc.keys[i] == "" {
			pc.keys[i] = fingerprintKey(p, c.ID, c.Structure)
			if !strings.HasPrefix(pc.keys[i], "!") {
				c.Fingerprint = pc.keys[i]
			}
		}
		if pending := need[j+1]; pending != "" && !pc.done[c.Formula] {
			id, doc, ok := strings.Cut(pending, "\n")
			var st messages.Structure
			if !ok || json.Unmarshal([]byte(doc), &st) != nil {
				return fmt.Errorf("unreadable pending structure of %s", c.Formula)
			}
			pc.resolved = append(pc.resolved, c.Formula, id, fingerprintKey(p, id, st))
			pc.done[c.Formula] = true
		}
	}
	return nil
}

// fingerprintKey is p.Fingerprint of a structure, or "!<id>" when it
// cannot be computed: a key no other structure has.
func fingerprintKey(p *Proposal, id string, st messages.Structure) string {
	if p.Fingerprint != nil {
		if fp, err := p.Fingerprint(st); err == nil && fp != "" {
			return fp
		}
	}
	return "!" + id
}

// acceptedIDs reads a generation's accepted record: the JSON array
// [n, id…] that scriptPropose stores.
func acceptedIDs(record string) ([]string, error) {
	var arr []any
	if err := json.Unmarshal([]byte(record), &arr); err != nil {
		return nil, err
	}
	if len(arr) == 0 {
		return nil, errors.New("empty accepted record")
	}
	ids := make([]string, 0, len(arr)-1)
	for _, x := range arr[1:] {
		if id, ok := x.(string); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// acceptedCandidates decodes a stored proposal and keeps the candidates
// whose ids the accepted list ([n, ids…]) names.
func acceptedCandidates(acceptedJSON, proposalJSON string) ([]*messages.Candidate, error) {
	ids, err := acceptedIDs(acceptedJSON)
	if err != nil {
		return nil, fmt.Errorf("store: accepted ids %q: %v", acceptedJSON, err)
	}
	out := []*messages.Candidate{}
	if proposalJSON == "" {
		return out, nil // empty, or completed and cleaned up
	}
	accepted := map[string]bool{}
	for _, id := range ids {
		accepted[id] = true
	}
	var cands []*messages.Candidate
	if err := json.Unmarshal([]byte(proposalJSON), &cands); err != nil {
		return nil, fmt.Errorf("store: stored proposal: %w", err)
	}
	for _, c := range cands {
		if accepted[c.ID] {
			out = append(out, c)
		}
	}
	return out, nil
}

// GenerationStatus reports, in one round trip, whether generation g is
// done (all evaluated, or empty) and, when its proposal was recorded, the
// candidates it published (nil when it was not).
func (s *Store) GenerationStatus(ctx context.Context, campaign string, g int) (done bool, published []*messages.Candidate, err error) {
	gs := strconv.Itoa(g)
	vals, err := s.rdb.HMGet(ctx, s.gensKey(campaign), gs+":done", gs+":accepted", gs+":proposal").Result()
	if err != nil {
		return false, nil, fmt.Errorf("store: generation %d of %s: %w", g, campaign, err)
	}
	if d, _ := vals[0].(string); d == "1" {
		return true, nil, nil
	}
	acc, ok := vals[1].(string)
	if !ok {
		return false, nil, nil
	}
	prop, _ := vals[2].(string)
	published, err = acceptedCandidates(acc, prop)
	return false, published, err
}

// Member is an island pool member: a candidate with what the proposer
// needs to show it as a demonstration or use it as a parent.
type Member struct {
	ID         string             `json:"id"`
	Formula    string             `json:"formula"`
	Structure  messages.Structure `json:"structure"`
	Score      float64            `json:"score"`
	Feasible   bool               `json:"feasible"`
	Stable     bool               `json:"stable"`
	Valid      bool               `json:"valid"`
	EAboveHull *float64           `json:"e_above_hull,omitempty"`
	Properties map[string]float64 `json:"properties,omitempty"`
	Margins    []messages.Margin  `json:"margins,omitempty"`
	Reasons    []messages.Reason  `json:"reasons,omitempty"`
	Operator   string             `json:"operator,omitempty"`
	Parents    []string           `json:"parents,omitempty"`
	Seed       bool               `json:"seed,omitempty"`
	Generation int                `json:"generation"`
	Island     int                `json:"island"`
	Rule       string             `json:"rule,omitempty"`
	Rationale  string             `json:"rationale,omitempty"`
}

// Find is a campaign candidate that extends the convex hull: the evaluator
// adds it to the reference phases of later candidates.
type Find struct {
	ID            string  `json:"id"`
	Formula       string  `json:"formula"`
	EnergyPerAtom float64 `json:"e_form_per_atom"`
}

// HitDoc keeps what the summary's Pareto front needs of a hit.
type HitDoc struct {
	Formula string             `json:"formula"`
	Margins map[string]float64 `json:"margins"`
	Score   float64            `json:"score"`
}

// EvaluationRecord is one evaluation as the reflector records it.
type EvaluationRecord struct {
	ID         string
	Generation int
	Episode    int
	Island     int
	Seed       bool
	Score      float64
	Feasible   bool
	Stable     bool
	Valid      bool
	Known      bool
	Novel      bool
	Formula    string
	EAboveHull *float64
	Member     Member
	PoolSize   int
	Find       *Find
	Hit        *HitDoc
}

// Outcome says what recording an evaluation completed.
type Outcome struct {
	// Duplicate: the evaluation was recorded before; the flags are those of
	// the first time, so follow-up actions can be repeated idempotently.
	Duplicate      bool
	Index          int // 1-based position among the campaign's evaluations
	SeedsDone      bool
	GenerationDone bool
	EpisodeDone    bool
	CampaignDone   bool
	// NextReserved says the evaluation that completed a generation also
	// reserved the next one (trigger "after/<generation>", as
	// RequestGeneration would): Next is it, or nil when none was due.
	NextReserved bool
	Next         *Generation
}

// RecordEvaluation adds an evaluation to its island's pool and the
// campaign's counters, once per candidate id.
func (s *Store) RecordEvaluation(ctx context.Context, campaign string, r *EvaluationRecord) (Outcome, error) {
	outs, err := s.RecordEvaluations(ctx, campaign, []*EvaluationRecord{r})
	if err != nil {
		return Outcome{}, err
	}
	return outs[0], nil
}

// RecordEvaluations records evaluations of one campaign as RecordEvaluation
// does, in order, atomically and in one round trip, and returns their
// outcomes in the same order.
func (s *Store) RecordEvaluations(ctx context.Context, campaign string, rs []*EvaluationRecord) ([]Outcome, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, 10+2*len(rs))
	keys = append(keys, s.stateKey(campaign), s.evaluatedKey(campaign), s.gensKey(campaign), s.compsKey(campaign),
		s.docsKey(campaign), s.findsKey(campaign), s.islandsKey(campaign), s.hitsKey(campaign), s.curveKey(campaign),
		s.triggersKey(campaign))
	args := []any{0} // ARGV[1]: the arguments per evaluation, set below
	for _, r := range rs {
		doc, err := json.Marshal(r.Member)
		if err != nil {
			return nil, fmt.Errorf("store: record evaluation %s: %w", r.ID, err)
		}
		find, hit := "", ""
		if r.Find != nil {
			b, _ := json.Marshal(r.Find)
			find = string(b)
		}
		if r.Hit != nil {
			b, _ := json.Marshal(r.Hit)
			hit = string(b)
		}
		ehull := ""
		if r.EAboveHull != nil {
			ehull = strconv.FormatFloat(*r.EAboveHull, 'g', -1, 64)
		}
		keys = append(keys, s.poolKey(campaign, r.Island, "success"), s.poolKey(campaign, r.Island, "failure"))
		rec := [...]any{r.ID, r.Generation, r.Episode, r.Island, b2s(r.Seed), r.Score, b2s(r.Feasible), b2s(r.Stable),
			b2s(r.Valid), b2s(r.Known), b2s(r.Novel), r.Formula, ehull, string(doc), r.PoolSize, find, hit}
		args[0] = len(rec)
		args = append(args, rec[:]...)
	}
	res, err := scriptEvaluate.Run(ctx, s.rdb, keys, args...).StringSlice()
	if err == nil && len(res) != len(rs) {
		err = fmt.Errorf("%d outcomes for %d evaluations", len(res), len(rs))
	}
	if err != nil {
		return nil, fmt.Errorf("store: record evaluations of %s (%s…): %w", campaign, rs[0].ID, err)
	}
	out := make([]Outcome, len(rs))
	for i, r := range res {
		out[i] = parseOutcome(r)
	}
	return out, nil
}

// parseOutcome reads scriptEvaluate's flags for one evaluation.
func parseOutcome(res string) Outcome {
	var o Outcome
	if rest, ok := strings.CutPrefix(res, "dup;"); ok {
		o.Duplicate = true
		res = rest
	}
	for _, f := range strings.Split(res, ",") {
		switch {
		case f == "seeds_done":
			o.SeedsDone = true
		case f == "generation_done":
			o.GenerationDone = true
		case f == "episode_done":
			o.EpisodeDone = true
		case f == "campaign_done":
			o.CampaignDone = true
		case strings.HasPrefix(f, "index="):
			o.Index, _ = strconv.Atoi(strings.TrimPrefix(f, "index="))
		case strings.HasPrefix(f, "next="):
			if g, ok, err := parseReservation(strings.TrimPrefix(f, "next=")); err == nil {
				o.NextReserved = true
				if ok {
					o.Next = &g
				}
			}
		}
	}
	return o
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// AdvanceEpisode moves the campaign past episode e; it reports false when
// e was the last.
func (s *Store) AdvanceEpisode(ctx context.Context, campaign string, e int) (bool, error) {
	n, err := scriptAdvance.Run(ctx, s.rdb, []string{s.stateKey(campaign)}, e).Int()
	if err != nil {
		return false, fmt.Errorf("store: advance episode of %s: %w", campaign, err)
	}
	return n == 1, nil
}

// RecordDiscovery counts an accepted discovery once: the campaign's
// discoveries are the set of their candidate ids, which a repeat does not
// change.
func (s *Store) RecordDiscovery(ctx context.Context, campaign, id string) error {
	if err := s.rdb.SAdd(ctx, s.discoveriesKey(campaign), id).Err(); err != nil {
		return fmt.Errorf("store: record discovery %s of %s: %w", id, campaign, err)
	}
	return nil
}

// IslandStat is an island's evaluated candidates and their mean score.
type IslandStat struct {
	Island    int
	N         int
	MeanScore float64
}

// Islands returns the statistics of islands 0..n−1 (zero for an island
// with no evaluation yet).
func (s *Store) Islands(ctx context.Context, campaign string, n int) ([]IslandStat, error) {
	m, err := s.rdb.HGetAll(ctx, s.islandsKey(campaign)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: islands of %s: %w", campaign, err)
	}
	out := make([]IslandStat, n)
	for i := range out {
		out[i].Island = i
		out[i].N, _ = strconv.Atoi(m[strconv.Itoa(i)+":n"])
		sum, _ := strconv.ParseFloat(m[strconv.Itoa(i)+":sum"], 64)
		if out[i].N > 0 {
			out[i].MeanScore = sum / float64(out[i].N)
		}
	}
	return out, nil
}

// Finds returns the campaign's candidates that extend the hull, in the
// order they were recorded.
func (s *Store) Finds(ctx context.Context, campaign string) ([]Find, error) {
	return s.FindsFrom(ctx, campaign, 0)
}

// FindsFrom returns the campaign's finds after the first n, in the order
// they were recorded: a reader that holds n finds fetches only the new
// ones (the list only grows).
func (s *Store) FindsFrom(ctx context.Context, campaign string, n int) ([]Find, error) {
	docs, err := s.rdb.LRange(ctx, s.findsKey(campaign), int64(n), -1).Result()
	if err != nil {
		return nil, fmt.Errorf("store: finds of %s: %w", campaign, err)
	}
	out := make([]Find, 0, len(docs))
	for _, v := range docs {
		var f Find
		if err := json.Unmarshal([]byte(v), &f); err != nil {
			return nil, fmt.Errorf("store: a find of %s: %w", campaign, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Compositions returns the per-composition statistics of a campaign.
func (s *Store) Compositions(ctx context.Context, campaign string) (map[string]*discovery.CompositionStat, error) {
	m, err := s.rdb.HGetAll(ctx, s.compsKey(campaign)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: compositions of %s: %w", campaign, err)
	}
	out := map[string]*discovery.CompositionStat{}
	for k, v := range m {
		formula, field, ok := strings.Cut(k, "|")
		if !ok {
			continue
		}
		c := out[formula]
		if c == nil {
			c = &discovery.CompositionStat{Formula: formula}
			out[formula] = c
		}
		switch field {
		case "n":
			c.Queries, _ = strconv.Atoi(v)
		case "stable":
			c.Stable, _ = strconv.Atoi(v)
		case "hits":
			c.Hits, _ = strconv.Atoi(v)
		case "emin", "emax":
			x, err := strconv.ParseFloat(v, 64)
			if err == nil {
				if field == "emin" {
					c.EMin = &x
				} else {
					c.EMax = &x
				}
			}
		}
	}
	return out, nil
}

// Hits returns the Pareto documents of every hit.
func (s *Store) Hits(ctx context.Context, campaign string) (map[string]HitDoc, error) {
	m, err := s.rdb.HGetAll(ctx, s.hitsKey(campaign)).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]HitDoc, len(m))
	for id, v := range m {
		var h HitDoc
		if err := json.Unmarshal([]byte(v), &h); err == nil {
			out[id] = h
		}
	}
	return out, nil
}

// DiscoveryCurve returns the evaluation indices at which a stable novel
// candidate was found, in order.
func (s *Store) DiscoveryCurve(ctx context.Context, campaign string) ([]int, error) {
	vs, err := s.rdb.LRange(ctx, s.curveKey(campaign), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(vs))
	for _, v := range vs {
		n, err := strconv.Atoi(v)
		if err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// GenerationMemorization returns, per generation with evaluations, the
// evaluated and known counts, by generation number.
func (s *Store) GenerationMemorization(ctx context.Context, campaign string) (map[int][2]int, error) {
	m, err := s.rdb.HGetAll(ctx, s.gensKey(campaign)).Result()
	if err != nil {
		return nil, err
	}
	out := map[int][2]int{}
	for k, v := range m {
		gs, field, ok := strings.Cut(k, ":")
		if !ok || (field != "evaluated" && field != "known") {
			continue
		}
		g, err1 := strconv.Atoi(gs)
		n, err2 := strconv.Atoi(v)
		if err1 != nil || err2 != nil {
			continue
		}
		c := out[g]
		if field == "evaluated" {
			c[0] = n
		} else {
			c[1] = n
		}
		out[g] = c
	}
	return out, nil
}

// StoredProposal returns the candidates a generation published (after
// deduplication) if its proposal was recorded, or nil.
func (s *Store) StoredProposal(ctx context.Context, campaign string, g int) ([]*messages.Candidate, error) {
	vals, err := s.rdb.HMGet(ctx, s.gensKey(campaign), strconv.Itoa(g)+":accepted", strconv.Itoa(g)+":proposal").Result()
	if err != nil {
		return nil, fmt.Errorf("store: proposal of %s generation %d: %w", campaign, g, err)
	}
	acc, ok := vals[0].(string)
	if !ok {
		return nil, nil
	}
	prop, _ := vals[1].(string)
	return acceptedCandidates(acc, prop)
}

// CompositionCounts returns the number of evaluations of each of the given
// reduced formulas (0 for one never evaluated); it reads those formulas
// only, so its cost does not grow with the campaign.
func (s *Store) CompositionCounts(ctx context.Context, campaign string, formulas ...string) (map[string]int, error) {
	out := make(map[string]int, len(formulas))
	if len(formulas) == 0 {
		return out, nil
	}
	fields := make([]string, len(formulas))
	for i, f := range formulas {
		fields[i] = f + "|n"
	}
	vals, err := s.rdb.HMGet(ctx, s.compsKey(campaign), fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("store: composition counts of %s: %w", campaign, err)
	}
	for i, v := range vals {
		n := 0
		if str, ok := v.(string); ok {
			n, _ = strconv.Atoi(str)
		}
		out[formulas[i]] = n
	}
	return out, nil
}

// SetEpisodeStats stores the statistics the reflector computed for an
// episode (the first value stays).
func (s *Store) SetEpisodeStats(ctx context.Context, campaign string, episode int, stats []byte) error {
	return scriptEpisodeStats.Run(ctx, s.rdb, []string{s.stateKey(campaign)}, episode, string(stats)).Err()
}

// EpisodeStats returns the stored statistics of an episode, or nil.
func (s *Store) EpisodeStats(ctx context.Context, campaign string, episode int) ([]byte, error) {
	b, err := s.rdb.HGet(ctx, s.stateKey(campaign), "ep"+strconv.Itoa(episode)+"_stats").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

// Seen reports whether a structure fingerprint was already proposed in the
// campaign. A structure proposed without one (its formula was new) is not
// found by its fingerprint: see SeenKeys.
func (s *Store) Seen(ctx context.Context, campaign, fingerprint string) (bool, error) {
	return s.rdb.HExists(ctx, s.seenKey(campaign), fingerprint).Result()
}

// SeenKeys returns the structure fingerprints proposed so far in the
// campaign and the reduced formulas of every structure proposed (with a
// fingerprint or without).
func (s *Store) SeenKeys(ctx context.Context, campaign string) (fingerprints, formulas []string, err error) {
	keys, err := s.rdb.HKeys(ctx, s.seenKey(campaign)).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("store: fingerprints of %s: %w", campaign, err)
	}
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "="):
			formulas = append(formulas, k[1:])
		case strings.HasPrefix(k, "!"): // an unfingerprintable structure's id
		default:
			fingerprints = append(fingerprints, k)
			// This also covers campaigns recorded before formulas were.
			if f, ok := crystal.FingerprintFormula(k); ok {
				formulas = append(formulas, f)
			}
		}
	}
	return fingerprints, formulas, nil
}

// ProposedIDs returns the ids of every candidate the campaign's
// generations published (after deduplication), seeds excluded.
func (s *Store) ProposedIDs(ctx context.Context, campaign string) ([]string, error) {
	m, err := s.rdb.HGetAll(ctx, s.gensKey(campaign)).Result()
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range m {
		if !strings.HasSuffix(k, ":accepted") {
			continue
		}
		ids, err := acceptedIDs(v)
		if err != nil {
			return nil, fmt.Errorf("store: accepted ids of %s: %w", k, err)
		}
		out = append(out, ids...)
	}
	sort.Strings(out)
	return out, nil
}

// PoolIDs returns the member ids of an island's "success" or "failure"
// pool.
func (s *Store) PoolIDs(ctx context.Context, campaign string, island int, kind string) ([]string, error) {
	return s.rdb.ZRange(ctx, s.poolKey(campaign, island, kind), 0, -1).Result()
}

// memberCache keeps decoded member documents by their text: an island's
// pools change by a member or two per generation, so most of a view's
// documents were decoded for an earlier one. A text always decodes to the
// same member, so nothing is ever stale. The members share their slices
// and maps between views and must not be modified.
type memberCache struct {
	mu sync.Mutex
	m  map[string]Member
}

// maxCachedMembers bounds the cache (documents hold a structure: a few
// kilobytes each); it starts over when full.
const maxCachedMembers = 1024

// decode returns the member a document holds; false if it does not
// decode (such a document is left out of the view).
func (c *memberCache) decode(doc string) (Member, bool) {
	c.mu.Lock()
	m, ok := c.m[doc]
	c.mu.Unlock()
	if ok {
		return m, true
	}
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		return Member{}, false
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedMembers {
		c.m = make(map[string]Member, maxCachedMembers)
	}
	c.m[doc] = m
	c.mu.Unlock()
	return m, true
}

// IslandView is what a generation shows of an island. Its members are
// shared with later views and must not be modified.
type IslandView struct {
	Successes, Failures, Rejects []Member
}

// Island reads an island's k best successes and failures and its k most
// recent rejects: the pools and rejects in one round trip, the pool
// members' documents in a second. Plain commands rather than a script:
// the view is read-only, and a member trimmed between the two reads is
// left out, as it would be a moment later anyway.
func (s *Store) Island(ctx context.Context, campaign string, island, k int) (*IslandView, error) {
	fail := func(err error) (*IslandView, error) {
		return nil, fmt.Errorf("store: island %d of %s: %w", island, campaign, err)
	}
	pipe := s.rdb.Pipeline()
	succ := pipe.ZRevRange(ctx, s.poolKey(campaign, island, "success"), 0, int64(k-1))
	failures := pipe.ZRevRange(ctx, s.poolKey(campaign, island, "failure"), 0, int64(k-1))
	rejects := pipe.LRange(ctx, s.poolKey(campaign, island, "rejects"), 0, int64(k-1))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fail(err)
	}
	ids := append(succ.Val(), failures.Val()...)
	var docs []any
	if len(ids) > 0 {
		var err error
		if docs, err = s.rdb.HMGet(ctx, s.docsKey(campaign), ids...).Result(); err != nil {
			return fail(err)
		}
	}
	decode := func(docs []any) []Member {
		out := make([]Member, 0, len(docs))
		for _, d := range docs {
			str, ok := d.(string)
			if !ok {
				continue
			}
			if m, ok := s.members.decode(str); ok {
				out = append(out, m)
			}
		}
		return out
	}
	n := len(succ.Val())
	rej := make([]any, len(rejects.Val()))
	for i, r := range rejects.Val() {
		rej[i] = r
	}
	return &IslandView{Successes: decode(docs[:n]), Failures: decode(docs[n:]), Rejects: decode(rej)}, nil
}
