package client

import (
	"context"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Discoveries reads a campaign's accepted verdicts, from the start of the
// stream to its end. A message that does not decode is skipped.
func (c *Client) Discoveries(ctx context.Context, campaign string) ([]*messages.Verdict, error) {
	var out []*messages.Verdict
	err := c.Follow(ctx, messages.StreamDiscoveries, messages.Subject(messages.SubjectDiscoveries, campaign), true, func(_ string, data []byte) (bool, error) {
		var v messages.Verdict
		if err := messages.Decode(data, &v); err == nil && v.Accepted {
			out = append(out, &v)
		}
		return false, nil
	})
	return out, err
}
