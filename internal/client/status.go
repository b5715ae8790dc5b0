package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/internal/service/control"
)

// WriteSummary writes a campaign's summary as the control plane computes
// it: for people to read, or as JSON.
func (c *Client) WriteSummary(ctx context.Context, w io.Writer, campaign string, asJSON bool) error {
	spec, err := c.Store.Spec(ctx, campaign)
	if err != nil {
		return err
	}
	ctl := &control.Control{Bus: c.Bus, Store: c.Store, Log: zap.NewNop()}
	sum, _, err := ctl.Summary(ctx, spec)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(w).Encode(sum)
	}
	results.PrintSummary(w, sum)
	return nil
}

// WriteCampaigns writes one line per campaign the store holds: task,
// state, evaluations of the budget and the counters (a table, or one JSON
// object per line). A campaign whose spec or state cannot be read is left
// out, as is one not in states when states are given.
func (c *Client) WriteCampaigns(ctx context.Context, w io.Writer, asJSON bool, states ...string) error {
	ids, err := c.Store.Campaigns(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if !asJSON {
		fmt.Fprintln(tw, "CAMPAIGN\tTASK\tSTATE\tEVALUATED\tHITS\tSTABLE\tDISCOVERIES")
	}
	for _, id := range ids {
		spec, st, err := c.Campaign(ctx, id)
		if err != nil || len(states) > 0 && !slices.Contains(states, st.Status) {
			continue
		}
		if asJSON {
			if err := json.NewEncoder(w).Encode(map[string]any{"campaign": id, "task": spec.Task.Name, "state": st.Status, "budget": spec.Budget, "counters": st.Counters}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\n", id, spec.Task.Name, st.Status, st.Counters.Evaluated, spec.Budget,
			st.Counters.Hits, st.Counters.StableHits, st.Counters.Discoveries)
	}
	return tw.Flush()
}
