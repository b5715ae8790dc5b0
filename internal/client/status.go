package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/crucible-sci/crucible/internal/results"
)

// WriteSummary writes a campaign's summary as the control plane computes
// it (Show): for people to read, or as JSON.
func (c *Client) WriteSummary(ctx context.Context, w io.Writer, campaign string, asJSON bool) error {
	sum, err := c.Show(ctx, campaign)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(w).Encode(sum)
	}
	results.PrintSummary(w, sum)
	return nil
}

// WriteCampaigns writes the campaigns List returns, in the given states
// when any: task, state, evaluations of the budget, counters and creation
// time (a table, or one JSON object per line).
func (c *Client) WriteCampaigns(ctx context.Context, w io.Writer, asJSON bool, states ...string) error {
	infos, err := c.List(ctx, states...)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		for _, ci := range infos {
			if err := enc.Encode(ci); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAMPAIGN\tTASK\tBY\tSTATE\tEVALUATED\tHITS\tSTABLE\tDISCOVERIES\tCREATED")
	for _, ci := range infos {
		by := ci.SubmittedBy
		if by == "" {
			by = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%s\n", ci.ID, ci.Task, by, ci.State, ci.Counters.Evaluated, ci.Budget,
			ci.Counters.Hits, ci.Counters.StableHits, ci.Counters.Discoveries, ci.Created.Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}
