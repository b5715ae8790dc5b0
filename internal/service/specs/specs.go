// Package specs caches campaign specs, which never change once stored.
package specs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// maxCached bounds the cache; past it, the cache starts afresh (specs are
// small and reloading one is a single GET).
const maxCached = 10000

// Cache is safe for concurrent use.
type Cache struct {
	store *store.Store
	mu    sync.RWMutex
	m     map[string]*messages.CampaignSpec
}

// New returns an empty cache reading from s.
func New(s *store.Store) *Cache {
	return &Cache{store: s, m: map[string]*messages.CampaignSpec{}}
}

// Get returns the spec of a campaign; a campaign the store does not hold
// is a permanent failure (bus.Permanent). The spec is shared: callers must not
// modify it.
func (c *Cache) Get(ctx context.Context, campaign string) (*messages.CampaignSpec, error) {
	c.mu.RLock()
	spec, ok := c.m[campaign]
	c.mu.RUnlock()
	if ok {
		return spec, nil
	}
	spec, err := c.store.Spec(ctx, campaign)
	if errors.Is(err, store.ErrNotFound) {
		// Every message of a campaign follows its spec into the store:
		// one naming a campaign the store does not hold will never be
		// handled, and must not hold a consumer's in-flight capacity
		// while retried.
		return nil, bus.Permanent(fmt.Errorf("unknown campaign %s", campaign))
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxCached {
		c.m = map[string]*messages.CampaignSpec{}
	}
	c.m[campaign] = spec
	c.mu.Unlock()
	return spec, nil
}

// Known reports whether the cache holds the campaign's spec: the campaign
// existed when this replica last looked. Its state missing from the store
// then means the store lost it (restarted from an earlier state), an
// outage to wait out, not an unknown campaign.
func (c *Cache) Known(campaign string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.m[campaign]
	return ok
}

// Missing is the failure for a campaign the store does not hold: an
// outage when the campaign was known (Known), else a permanent failure
// (the message names a campaign that does not exist).
func (c *Cache) Missing(campaign string, err error) error {
	if c.Known(campaign) {
		return bus.Unavailable(fmt.Errorf("campaign %s, known before, is missing from the store: %w", campaign, err))
	}
	return bus.Permanent(fmt.Errorf("unknown campaign %s", campaign))
}
