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

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

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
	// RejectedCandidates is how many of Rejected are candidates (a
	// generator's failure to answer is recorded in Rejected but is none),
	// RejectedKnown how many of those have a formula in the reference
	// data. Nil RejectedCandidates counts every one of Rejected.
	RejectedCandidates *int
	RejectedKnown      int
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
	rejected := len(p.Rejected)
	if p.RejectedCandidates != nil {
		rejected = *p.RejectedCandidates
	}
	pc.head = []any{p.Generation, p.Island, "", rejected, p.PromptTokens, p.CompletionTokens, p.LLMCalls, ExhaustionLimit, MaxRejectsKept, p.RejectedKnown, len(p.Rejected)}
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
		known := "0"
		if c.Known {
			known = "1"
		}
		args = append(args, c.ID, pc.keys[i], c.Formula, doc, known)
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
