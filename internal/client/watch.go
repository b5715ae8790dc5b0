package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// WatchOptions choose what Watch follows and how it prints it.
type WatchOptions struct {
	Verdicts bool // the judge's rejections too
	Status   bool // the campaigns' status events too
	New      bool // only events published from now on
	JSON     bool // one JSON event per line
}

// Watch prints a campaign's discoveries (every campaign's for "*") as the
// judge accepts them, one line each, until ctx ends. A message that does
// not decode is skipped.
func (c *Client) Watch(ctx context.Context, w io.Writer, campaign string, o WatchOptions) error {
	errc := make(chan error, 3)
	follow := func(stream, prefix string, print func([]byte) error) {
		go func() {
			errc <- c.FollowFrom(ctx, stream, messages.Subject(prefix, campaign), o.New, func(_ string, data []byte) (bool, error) {
				return false, print(data)
			})
		}()
	}
	printVerdict := func(data []byte) error {
		var v messages.Verdict
		if err := messages.Decode(data, &v); err != nil {
			return nil
		}
		if o.JSON {
			return json.NewEncoder(w).Encode(&v)
		}
		_, err := fmt.Fprintln(w, results.VerdictLine(&v))
		return err
	}
	n := 1
	follow(messages.StreamDiscoveries, messages.SubjectDiscoveries, printVerdict)
	if o.Verdicts {
		n++
		follow(messages.StreamDiscoveries, messages.SubjectVerdicts, printVerdict)
	}
	if o.Status {
		n++
		follow(messages.StreamCampaigns, messages.SubjectStatus, func(data []byte) error {
			var s messages.Status
			if err := messages.Decode(data, &s); err != nil {
				return nil
			}
			if o.JSON {
				return json.NewEncoder(w).Encode(&s)
			}
			_, err := fmt.Fprintf(w, "%s  %-10s status %s %s\n", s.At.Format(time.RFC3339), s.Campaign, s.State, s.Message)
			return err
		})
	}
	for i := 0; i < n; i++ {
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return nil
}
