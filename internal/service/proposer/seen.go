package proposer

import "sync"

// seenCache remembers, per campaign, the fingerprints the store reported
// as already proposed. A campaign's seen set only grows, so a remembered
// "seen" stays true and saves a round trip; "not seen" is always asked
// again (another replica may have proposed it since).
type seenCache struct {
	mu         sync.Mutex
	byCampaign map[string]map[string]struct{}
}

// Bounds of the cache: campaigns remembered, and fingerprints per campaign
// (beyond which the campaign's set starts over).
const (
	seenCampaigns   = 64
	seenPerCampaign = 1 << 17
)

func (c *seenCache) has(campaign, fp string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byCampaign[campaign][fp]
	return ok
}

func (c *seenCache) add(campaign, fp string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byCampaign == nil || len(c.byCampaign) >= seenCampaigns && c.byCampaign[campaign] == nil {
		c.byCampaign = map[string]map[string]struct{}{}
	}
	set := c.byCampaign[campaign]
	if set == nil || len(set) >= seenPerCampaign {
		set = map[string]struct{}{}
		c.byCampaign[campaign] = set
	}
	set[fp] = struct{}{}
}
