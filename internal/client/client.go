// Package client is what the crucible CLI uses to talk to an installation:
// submit campaigns, follow their status and discoveries, and read their
// results back from the streams and the store.
package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Client reads and writes an installation.
type Client struct {
	Bus   *bus.Bus
	Store *store.Store
	// Provided are the properties plug-in model servers provide (the
	// data directory's registry), which a task may constrain.
	Provided []string
	// Submitter is the NATS user the client logged in as (--nats-user):
	// its submissions go out on that user's submit subject
	// (messages.SubmitSubject), so the proposer applies its limits.
	Submitter string
}

// ErrExists is wrapped by Submit's error for a campaign id the
// installation holds already.
var ErrExists = errors.New("exists")

// Submit fills the spec's defaults, validates it and publishes it. The
// proposer answers with a status event (running, or rejected with why).
// A campaign id that exists is an error wrapping ErrExists, which says
// its state and how to raise its budget instead.
func (c *Client) Submit(ctx context.Context, spec *messages.CampaignSpec) error {
	spec.ApplyDefaults()
	if spec.SubmittedAt.IsZero() {
		spec.SubmittedAt = time.Now().UTC()
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	if err := spec.Task.CheckProviders(c.Provided); err != nil {
		return err
	}
	if st, err := c.Store.State(ctx, spec.ID); err == nil {
		return fmt.Errorf("campaign %s %w (%s, %d of %d evaluated): choose another --id, or raise its budget with \"crucible campaign extend %s --budget N\"",
			spec.ID, ErrExists, st.Status, st.Counters.Evaluated, st.Budget, spec.ID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	spec.SubmittedBy = "" // the proposer's to say, from the subject
	return c.Bus.Publish(ctx, messages.SubmitSubject(c.Submitter, spec.ID), spec)
}

// Follow reads the messages of a stream whose subject matches filter, from
// the first, calling fn for each until fn returns done, an error, or ctx
// ends. With stopAtEnd it returns once it has read every message the
// stream held when it started.
func (c *Client) Follow(ctx context.Context, stream, filter string, stopAtEnd bool, fn func(subject string, data []byte) (done bool, err error)) error {
	streamName := c.Bus.Stream(stream)
	st, err := c.Bus.JS.Stream(ctx, streamName)
	if err != nil {
		return fmt.Errorf("stream %s: %w", streamName, err)
	}
	var last uint64
	if stopAtEnd {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		last = info.State.LastSeq
		if info.State.Msgs == 0 {
			return nil
		}
	}
	return c.read(ctx, st, filter, jetstream.DeliverAllPolicy, stopAtEnd, last, nil, fn)
}

// read hands fn the messages of st matching filter from policy on, as
// Follow and FollowNew describe; with stopAtEnd it returns after the
// message with stream sequence last, or when none comes for a second.
// ready, when not nil, is called once the consumer exists on the server.
func (c *Client) read(ctx context.Context, st jetstream.Stream, filter string, policy jetstream.DeliverPolicy, stopAtEnd bool, last uint64, ready func(), fn func(subject string, data []byte) (done bool, err error)) error {
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{c.Bus.Subject(filter)}, DeliverPolicy: policy})
	if err != nil {
		return fmt.Errorf("follow %s: %w", filter, err)
	}
	// One iterator for the whole read: the ordered consumer's Next would
	// re-create the server-side consumer for every message.
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("follow %s: %w", filter, err)
	}
	defer it.Stop()
	if ready != nil {
		ready()
	}
	for ctx.Err() == nil {
		var msg jetstream.Msg
		if stopAtEnd {
			msg, err = it.Next(jetstream.NextMaxWait(time.Second))
		} else {
			msg, err = it.Next(jetstream.NextContext(ctx))
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
			case errors.Is(err, jetstream.ErrMsgIteratorClosed):
				return fmt.Errorf("follow %s: %w", filter, err)
			case stopAtEnd && (errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)):
				return nil // nothing more matches the filter
			}
			continue
		}
		done, ferr := fn(c.Bus.Unsubject(msg.Subject()), msg.Data())
		if ferr != nil || done {
			return ferr
		}
		if stopAtEnd {
			if md, err := msg.Metadata(); err == nil && md.Sequence.Stream >= last {
				return nil
			}
		}
	}
	return ctx.Err()
}

// WaitDone waits for a campaign's final status (completed, exhausted,
// cancelled or rejected). A final status that an extension made stale
// (the store holds the campaign running again, or finished with more
// evaluations) is passed over.
func (c *Client) WaitDone(ctx context.Context, campaign string) (*messages.Status, error) {
	var final *messages.Status
	err := c.Follow(ctx, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, campaign), false, func(_ string, data []byte) (bool, error) {
		var s messages.Status
		if err := messages.Decode(data, &s); err != nil {
			return false, nil // not ours to judge; the dead letters have it
		}
		if !messages.Finished(s.State) {
			return false, nil
		}
		if s.State != messages.StateRejected {
			st, err := c.Store.State(ctx, campaign)
			if err == nil && (!messages.Finished(st.Status) || s.Counters.Evaluated < st.Counters.Evaluated) {
				return false, nil // extended since: a later final status follows
			}
		}
		final = &s
		return true, nil
	})
	if final != nil {
		return final, nil
	}
	return nil, err
}

// ConsumerIdle reports whether a durable consumer has delivered and had
// acknowledged every message (the judge has caught up, say).
func (c *Client) ConsumerIdle(ctx context.Context, name string) (bool, error) {
	spec, err := messages.ConsumerByName(name)
	if err != nil {
		return false, err
	}
	cons, err := c.Bus.JS.Consumer(ctx, c.Bus.Stream(spec.Stream), spec.Name)
	if err != nil {
		return false, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return false, err
	}
	return info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0, nil
}

// Campaign returns a campaign's spec and state.
func (c *Client) Campaign(ctx context.Context, campaign string) (*messages.CampaignSpec, *store.State, error) {
	spec, err := c.Store.Spec(ctx, campaign)
	if err != nil {
		return nil, nil, err
	}
	st, err := c.Store.State(ctx, campaign)
	if err != nil {
		return nil, nil, err
	}
	return spec, st, nil
}

// FollowNew reads the messages published from now on whose subject matches
// filter, calling fn for each until fn returns done, an error, or ctx ends.
// ready, when not nil, is called once the subscription is in place: every
// message published after it was called reaches fn.
func (c *Client) FollowNew(ctx context.Context, stream, filter string, ready func(), fn func(subject string, data []byte) (done bool, err error)) error {
	st, err := c.Bus.JS.Stream(ctx, c.Bus.Stream(stream))
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	return c.read(ctx, st, filter, jetstream.DeliverNewPolicy, false, 0, ready, fn)
}
