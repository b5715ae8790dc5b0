package proposer

import (
	"context"
	"sync"
	"time"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// seenCache keeps, per campaign, a snapshot of the structure fingerprints
// and reduced formulas already proposed, reloaded from the store when
// older than seenRefresh, plus what this replica proposed since. The
// generator consults it for every attempt without a round trip; the store
// still deduplicates authoritatively when a proposal is recorded, so a
// fingerprint another replica proposed after the snapshot only costs a
// slot that goes back to the budget and is refilled.
type seenCache struct {
	// refresh is how stale a snapshot may get (default seenRefresh).
	refresh    time.Duration
	mu         sync.Mutex
	byCampaign map[string]*seenSet
}

type seenSet struct {
	mu       sync.RWMutex
	fps      map[string]struct{}
	formulas map[string]struct{}
	// exact holds the structures this replica proposed without a
	// fingerprint, by crystal.Structure.ExactHash (at most seenExact);
	// unkeyed the same by formula, until a fingerprint of their formula
	// is looked up (has).
	exact   map[uint64][]*crystal.Structure
	unkeyed map[string][]*crystal.Structure
	nExact  int
	fetched time.Time
}

// seenRefresh is how stale a campaign's snapshot may get.
const seenRefresh = 2 * time.Second

// seenCampaigns bounds the campaigns remembered.
const seenCampaigns = 64

// seenExact bounds the fingerprint-less structures remembered per
// campaign; beyond it, the store's deduplication still holds.
const seenExact = 1 << 14

// set returns a campaign's snapshot, reloading it when stale.
func (c *seenCache) set(ctx context.Context, st *store.Store, campaign string) (*seenSet, error) {
	c.mu.Lock()
	if c.byCampaign == nil || len(c.byCampaign) >= seenCampaigns && c.byCampaign[campaign] == nil {
		c.byCampaign = map[string]*seenSet{}
	}
	s := c.byCampaign[campaign]
	if s == nil {
		s = &seenSet{}
		c.byCampaign[campaign] = s
	}
	c.mu.Unlock()
	refresh := c.refresh
	if refresh == 0 {
		refresh = seenRefresh
	}
	s.mu.RLock()
	fresh := time.Since(s.fetched) < refresh
	s.mu.RUnlock()
	if fresh {
		return s, nil
	}
	fps, formulas, err := st.SeenKeys(ctx, campaign)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fps == nil {
		s.fps = make(map[string]struct{}, len(fps))
		s.formulas = make(map[string]struct{}, len(formulas))
	}
	for _, fp := range fps {
		s.fps[fp] = struct{}{}
	}
	for _, f := range formulas {
		s.formulas[f] = struct{}{}
	}
	s.fetched = time.Now()
	return s, nil
}

// has reports whether a structure with fingerprint fp was proposed. The
// structures of fp's formula that this replica proposed without one are
// fingerprinted first (once): a different build of the same structure
// (another cell, another site order) is caught here, not by the store
// after the proposal.
func (s *seenSet) has(fp string) bool {
	formula, _ := crystal.FingerprintFormula(fp)
	s.mu.RLock()
	_, ok := s.fps[fp]
	waiting := len(s.unkeyed[formula]) > 0
	s.mu.RUnlock()
	if ok || !waiting {
		return ok
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.unkeyed[formula] {
		if k, err := crystal.Fingerprint(st); err == nil {
			s.fps[k] = struct{}{}
		}
	}
	delete(s.unkeyed, formula)
	_, ok = s.fps[fp]
	return ok
}

// hasFormula reports whether a structure of a reduced formula was proposed.
func (s *seenSet) hasFormula(f string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.formulas[f]
	return ok
}

// hasStructure reports whether this replica proposed this very structure
// without a fingerprint.
func (s *seenSet) hasStructure(st *crystal.Structure) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.exact[st.ExactHash()] {
		if t.Identical(st) {
			return true
		}
	}
	return false
}

// add records a structure this replica proposed: its reduced formula and
// its fingerprint, or the structure itself when it went without one.
func (s *seenSet) add(formula, fp string, st *crystal.Structure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if formula != "" {
		s.formulas[formula] = struct{}{}
	}
	switch {
	case fp != "":
		s.fps[fp] = struct{}{}
	case st != nil && s.nExact < seenExact:
		if s.exact == nil {
			s.exact = map[uint64][]*crystal.Structure{}
			s.unkeyed = map[string][]*crystal.Structure{}
		}
		h := st.ExactHash()
		s.exact[h] = append(s.exact[h], st)
		s.unkeyed[formula] = append(s.unkeyed[formula], st)
		s.nExact++
	}
}
