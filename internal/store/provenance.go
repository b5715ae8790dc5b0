package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Provenance: a candidate is evaluated and counted only if the proposer
// recorded it, with the same content, for its generation (or as one of
// the campaign's seeds), while the campaign accepts work.

// ErrForged is a candidate or evaluation that no proposer recorded, or
// that differs from what was recorded.
var ErrForged = errors.New("not a recorded candidate")

// ErrClosed is work for a campaign that accepts no more (completed,
// rejected or cancelled).
var ErrClosed = errors.New("campaign accepts no more work")

// closedStates are the states in which a campaign accepts no work. An
// exhausted campaign still evaluates its generations in flight, and a
// cancelled one's work in flight is the lifecycle's to settle.
var closedStates = map[string]bool{messages.StateCompleted: true, messages.StateRejected: true}

// CandidateCheck is what VerifyCandidate found.
type CandidateCheck struct {
	// Done: the candidate's generation is complete (every candidate of it
	// evaluated), so the candidate is a late redelivery or a replay; it
	// was accepted, but its content can no longer be compared.
	Done bool
}

func seedField(i int) string { return "seed:" + strconv.Itoa(i) }

// RecordSeeds records the digests of a campaign's seed candidates, once
// each (a redelivered submission with the same seeds changes nothing).
func (s *Store) RecordSeeds(ctx context.Context, campaign string, seeds []*messages.Candidate) error {
	if len(seeds) == 0 {
		return nil
	}
	pipe := s.rdb.Pipeline()
	for _, c := range seeds {
		pipe.HSetNX(ctx, s.gensKey(campaign), seedField(c.Index), c.Digest())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("store: seeds of %s: %w", campaign, err)
	}
	return nil
}

// VerifyCandidate checks c's provenance in one round trip: its campaign
// accepts work (else ErrClosed), and c is a seed recorded with the same
// digest, or a candidate in its generation's accepted list whose content
// is that of the recorded proposal (else ErrForged, with the reason).
// A campaign the store does not hold is ErrNotFound.
func (s *Store) VerifyCandidate(ctx context.Context, c *messages.Candidate) (CandidateCheck, error) {
	chks, errs := s.VerifyCandidates(ctx, []*messages.Candidate{c})
	return chks[0], errs[0]
}

// VerifyCandidates verifies candidates as VerifyCandidate does, all in
// one round trip; a generation's proposal is decoded once.
func (s *Store) VerifyCandidates(ctx context.Context, cs []*messages.Candidate) ([]CandidateCheck, []error) {
	chks, errs := make([]CandidateCheck, len(cs)), make([]error, len(cs))
	pipe := s.rdb.Pipeline()
	sts, gens := make([]*redis.SliceCmd, len(cs)), make([]*redis.SliceCmd, len(cs))
	for i, c := range cs {
		gs := strconv.Itoa(c.Generation)
		sts[i] = pipe.HMGet(ctx, s.stateKey(c.Campaign), "status", "seeds")
		if c.Seed {
			gens[i] = pipe.HMGet(ctx, s.gensKey(c.Campaign), seedField(c.Index))
		} else {
			gens[i] = pipe.HMGet(ctx, s.gensKey(c.Campaign), gs+":done", gs+":accepted", gs+":proposal")
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		for i, c := range cs {
			errs[i] = fmt.Errorf("store: provenance of %s: %w", c.ID, err)
		}
		return chks, errs
	}
	proposals := map[string]map[string]string{} // campaign/generation → id → digest
	for i, c := range cs {
		chks[i], errs[i] = verifyCandidate(c, sts[i].Val(), gens[i].Val(), proposals)
	}
	return chks, errs
}

// verifyCandidate judges c by its campaign's status and seed count (st)
// and its generation's or seed's record (vals).
func verifyCandidate(c *messages.Candidate, st, vals []any, proposals map[string]map[string]string) (CandidateCheck, error) {
	status, _ := st[0].(string)
	if status == "" {
		return CandidateCheck{}, fmt.Errorf("store: campaign %s: %w", c.Campaign, ErrNotFound)
	}
	if closedStates[status] {
		return CandidateCheck{}, fmt.Errorf("%w: campaign %s is %s", ErrClosed, c.Campaign, status)
	}
	forged := func(format string, a ...any) error {
		return fmt.Errorf("%w: candidate %s: %s", ErrForged, c.ID, fmt.Sprintf(format, a...))
	}
	if c.Seed {
		seeds, _ := strconv.Atoi(fmt.Sprint(st[1]))
		if c.ID != messages.SeedCandidateID(c.Campaign, c.Index) || c.Index < 0 || c.Index >= seeds {
			return CandidateCheck{}, forged("not one of the campaign's %d seeds", seeds)
		}
		want, _ := vals[0].(string)
		if want == "" {
			return CandidateCheck{}, forged("seed %d was not recorded", c.Index)
		}
		if want != c.Digest() {
			return CandidateCheck{}, forged("differs from the recorded seed %d", c.Index)
		}
		return CandidateCheck{}, nil
	}
	acc, ok := vals[1].(string)
	if !ok {
		return CandidateCheck{}, forged("generation %d has no recorded proposal", c.Generation)
	}
	key := c.Campaign + "/" + strconv.Itoa(c.Generation)
	digests, ok := proposals[key]
	if !ok {
		ids, err := acceptedIDs(acc)
		if err != nil {
			return CandidateCheck{}, fmt.Errorf("store: accepted ids of %s generation %d: %w", c.Campaign, c.Generation, err)
		}
		digests = make(map[string]string, len(ids))
		for _, id := range ids {
			digests[id] = ""
		}
		if d, _ := vals[0].(string); d != "1" {
			prop, _ := vals[2].(string)
			recorded, err := acceptedCandidates(acc, prop)
			if err != nil {
				return CandidateCheck{}, fmt.Errorf("store: proposal of %s generation %d: %w", c.Campaign, c.Generation, err)
			}
			for _, r := range recorded {
				digests[r.ID] = r.Digest()
			}
		}
		proposals[key] = digests
	}
	want, found := digests[c.ID]
	if !found {
		return CandidateCheck{}, forged("not accepted for generation %d", c.Generation)
	}
	if d, _ := vals[0].(string); d == "1" {
		return CandidateCheck{Done: true}, nil
	}
	if want == "" {
		return CandidateCheck{}, forged("missing from the recorded proposal of generation %d", c.Generation)
	}
	if want != c.Digest() {
		return CandidateCheck{}, forged("differs from the recorded proposal of generation %d", c.Generation)
	}
	return CandidateCheck{}, nil
}

// EvaluationDigest returns the digest the reflector recorded with a
// candidate's evaluation (DigestBytes of the evaluation's message), and
// whether the evaluation is recorded at all. An evaluation recorded
// before digests were kept has the empty digest.
func (s *Store) EvaluationDigest(ctx context.Context, campaign, id string) (digest string, recorded bool, err error) {
	v, err := s.rdb.HGet(ctx, s.evaluatedKey(campaign), id).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: evaluation %s of %s: %w", id, campaign, err)
	}
	for _, f := range strings.Split(strings.TrimPrefix(v, "dup;"), ",") {
		if d, ok := strings.CutPrefix(f, "digest="); ok {
			return d, true, nil
		}
	}
	return "", true, nil
}

// VerifyRequest checks that a generation request is one the campaign
// reserved — its generation has that many slots in that episode — for a
// campaign that accepts work (else ErrForged or ErrClosed): a forged
// request would otherwise make a proposer run its generator (an LLM) and
// publish candidates nobody asked for.
func (s *Store) VerifyRequest(ctx context.Context, r *messages.GenerationRequest) error {
	gs := strconv.Itoa(r.Generation)
	pipe := s.rdb.Pipeline()
	st := pipe.HGet(ctx, s.stateKey(r.Campaign), "status")
	gen := pipe.HMGet(ctx, s.gensKey(r.Campaign), gs+":slots", gs+":ep")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("store: request of %s generation %d: %w", r.Campaign, r.Generation, err)
	}
	status := st.Val()
	switch {
	case status == "":
		return fmt.Errorf("store: campaign %s: %w", r.Campaign, ErrNotFound)
	case closedStates[status]:
		return fmt.Errorf("%w: campaign %s is %s", ErrClosed, r.Campaign, status)
	}
	slots, _ := gen.Val()[0].(string)
	ep, _ := gen.Val()[1].(string)
	if slots == "" {
		return fmt.Errorf("%w: generation %d of %s was never reserved", ErrForged, r.Generation, r.Campaign)
	}
	if slots != strconv.Itoa(r.Slots) || ep != strconv.Itoa(r.Episode) {
		return fmt.Errorf("%w: generation %d of %s was reserved with %s slots in episode %s, the request says %d in %d",
			ErrForged, r.Generation, r.Campaign, slots, ep, r.Slots, r.Episode)
	}
	return nil
}

// ActiveCampaigns counts the campaigns that accept work (running, or
// finishing their generations in flight): all of them, and those the
// NATS user submitter submitted (messages.CampaignSpec.SubmittedBy; 0
// for submitter "").
func (s *Store) ActiveCampaigns(ctx context.Context, submitter string) (all, theirs int, err error) {
	ids, err := s.Campaigns(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("store: campaigns: %w", err)
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, s.stateKey(id), "status", "submitted_by")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, fmt.Errorf("store: campaign states: %w", err)
	}
	for _, c := range cmds {
		v := c.Val()
		st, _ := v[0].(string)
		by, _ := v[1].(string)
		if st != "" && !closedStates[st] {
			all++
			if submitter != "" && by == submitter {
				theirs++
			}
		}
	}
	return all, theirs, nil
}
