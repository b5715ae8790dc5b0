package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/debate"
)

// Transcript reads the judge's debate over a campaign's candidate as the
// store keeps it.
func (c *Client) Transcript(ctx context.Context, campaign, candidate string) (*debate.Transcript, error) {
	doc, err := c.Store.Transcript(ctx, campaign, candidate)
	if errors.Is(err, store.ErrNoTranscript) {
		return nil, fmt.Errorf("%w (a hit judged by the rule checks has none)", err)
	}
	if err != nil {
		return nil, err
	}
	tr := &debate.Transcript{}
	if err := json.Unmarshal(doc, tr); err != nil {
		return nil, fmt.Errorf("transcript of %s: %w", candidate, err)
	}
	return tr, nil
}
