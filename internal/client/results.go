package client

import (
	"context"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Evaluations reads a campaign's evaluations of proposed candidates (seeds
// left out) from the start of the stream to its end. A message that does
// not decode is skipped.
func (c *Client) Evaluations(ctx context.Context, campaign string) ([]*messages.Evaluation, error) {
	var evs []*messages.Evaluation
	err := c.Follow(ctx, messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, campaign), true, func(_ string, data []byte) (bool, error) {
		var ev messages.Evaluation
		if err := messages.Decode(data, &ev); err == nil && !ev.Candidate.Seed {
			evs = append(evs, &ev)
		}
		return false, nil
	})
	return evs, err
}

// Discovered reads the ids of a campaign's accepted discoveries.
func (c *Client) Discovered(ctx context.Context, campaign string) (map[string]bool, error) {
	accepted := map[string]bool{}
	err := c.Follow(ctx, messages.StreamDiscoveries, messages.Subject(messages.SubjectDiscoveries, campaign), true, func(_ string, data []byte) (bool, error) {
		var v messages.Verdict
		if err := messages.Decode(data, &v); err == nil {
			accepted[v.ID] = true
		}
		return false, nil
	})
	return accepted, err
}

// Prompts reads a campaign's LLM exchanges (generator llm), as the
// proposer published them.
func (c *Client) Prompts(ctx context.Context, campaign string) ([]*messages.Prompt, error) {
	var prompts []*messages.Prompt
	err := c.Follow(ctx, messages.StreamCampaigns, messages.Subject(messages.SubjectPrompts, campaign), true, func(_ string, data []byte) (bool, error) {
		var p messages.Prompt
		if err := messages.Decode(data, &p); err == nil {
			prompts = append(prompts, &p)
		}
		return false, nil
	})
	return prompts, err
}

// FollowFrom follows a stream from its start, or only the messages
// published from now on with newOnly.
func (c *Client) FollowFrom(ctx context.Context, stream, filter string, newOnly bool, fn func(subject string, data []byte) (done bool, err error)) error {
	if !newOnly {
		return c.Follow(ctx, stream, filter, false, fn)
	}
	return c.FollowNew(ctx, stream, filter, nil, fn)
}
