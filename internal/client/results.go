package client

import (
	"context"
	"fmt"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Read reads the messages of a campaign's subject from the start of the
// stream to its end, decoded as T. A message that does not decode is an
// error with strict, and is skipped otherwise.
func Read[T any, PT interface {
	*T
	messages.Message
}](ctx context.Context, c *Client, stream, subject, campaign string, strict bool) ([]*T, error) {
	var out []*T
	err := c.Follow(ctx, stream, messages.Subject(subject, campaign), true, func(_ string, data []byte) (bool, error) {
		v := PT(new(T))
		if err := messages.Decode(data, v); err != nil {
			if strict {
				return false, fmt.Errorf("%s in the stream: %w", subject, err)
			}
			return false, nil
		}
		out = append(out, v)
		return false, nil
	})
	return out, err
}

// Evaluations reads a campaign's evaluations of proposed candidates (seeds
// left out) from the start of the stream to its end. A message that does
// not decode is skipped.
func (c *Client) Evaluations(ctx context.Context, campaign string) ([]*messages.Evaluation, error) {
	all, err := Read[messages.Evaluation](ctx, c, messages.StreamEvaluations, messages.SubjectEvaluations, campaign, false)
	evs := all[:0]
	for _, ev := range all {
		if !ev.Candidate.Seed {
			evs = append(evs, ev)
		}
	}
	return evs, err
}

// Discovered reads the ids of a campaign's accepted discoveries.
func (c *Client) Discovered(ctx context.Context, campaign string) (map[string]bool, error) {
	vs, err := Read[messages.Verdict](ctx, c, messages.StreamDiscoveries, messages.SubjectDiscoveries, campaign, false)
	accepted := map[string]bool{}
	for _, v := range vs {
		accepted[v.ID] = true
	}
	return accepted, err
}

// Prompts reads a campaign's LLM exchanges (generator llm), as the
// proposer published them.
func (c *Client) Prompts(ctx context.Context, campaign string) ([]*messages.Prompt, error) {
	return Read[messages.Prompt](ctx, c, messages.StreamCampaigns, messages.SubjectPrompts, campaign, false)
}

// FollowFrom follows a stream from its start, or only the messages
// published from now on with newOnly.
func (c *Client) FollowFrom(ctx context.Context, stream, filter string, newOnly bool, fn func(subject string, data []byte) (done bool, err error)) error {
	if !newOnly {
		return c.Follow(ctx, stream, filter, false, fn)
	}
	return c.FollowNew(ctx, stream, filter, nil, fn)
}
