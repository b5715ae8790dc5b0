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
