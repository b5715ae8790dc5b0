package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// ExportOptions choose what Export writes.
type ExportOptions struct {
	// Format is jsonl or csv (the evaluations), or a structure format:
	// cif, poscar, json (pymatgen) or xyz.
	Format string
	// Dir, with a structure format, receives one file per structure.
	Dir string
	// All exports the structures of every evaluated candidate, not only
	// of the discoveries.
	All bool
	// Symmetrize writes CIFs in the standard setting of the space group
	// each evaluation records (results.WriteStructures).
	Symmetrize bool
}

// Export writes a campaign's evaluations (jsonl: as published; csv: one
// row per candidate) or the structures of its discoveries, as
// results.WriteStructures lays them out.
func (c *Client) Export(ctx context.Context, w io.Writer, campaign string, o ExportOptions) error {
	if _, err := results.StructureFormat(o.Format, o.Dir); err != nil {
		return err
	}
	if err := c.Known(ctx, campaign); err != nil {
		return err
	}
	evs, err := c.Evaluations(ctx, campaign)
	if err != nil {
		return err
	}
	accepted, err := c.Discovered(ctx, campaign)
	if err != nil {
		return err
	}
	return WriteEvaluations(w, evs, accepted, o)
}

// WriteEvaluations writes evaluations as Export does; accepted holds the
// ids of the discoveries, whose structures are written unless o.All.
func WriteEvaluations(w io.Writer, evs []*messages.Evaluation, accepted map[string]bool, o ExportOptions) error {
	structFormat, err := results.StructureFormat(o.Format, o.Dir)
	if err != nil {
		return err
	}
	switch o.Format {
	case "jsonl":
		enc := json.NewEncoder(w)
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		return results.WriteCSV(w, evs)
	}
	structs := evs
	if !o.All {
		structs = nil
		for _, ev := range evs {
			if accepted[ev.ID] {
				structs = append(structs, ev)
			}
		}
	}
	return results.WriteStructures(w, o.Dir, structFormat, structs, o.Symmetrize)
}

// Known returns an error naming the campaign when the store has no such
// campaign.
func (c *Client) Known(ctx context.Context, campaign string) error {
	if _, err := c.Store.Spec(ctx, campaign); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no campaign %s", campaign)
	}
	return nil
}
