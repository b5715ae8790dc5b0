package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func init() {
	register(newSubmitCmd)
	register(newWatchCmd)
	register(newStatusCmd)
	register(newResultsCmd)
}

func newSubmitCmd() *cobra.Command {
	var (
		cf           campaignFlags
		conn         connection
		wait, resume bool
	)
	cmd := &cobra.Command{
		Use:   "submit [SPEC] [--task NAME] --budget N",
		Short: "Submit a campaign to a running installation",
		Long: `submit publishes a campaign on crucible.campaigns.submit.<id> (as a named
NATS user, --nats-user U, on crucible.campaigns.submit.user.<U>.<id>, so that
the proposers apply U's quotas), where the proposers pick it up. The campaign comes from a spec file (YAML or JSON: the
fields of a campaign with its task inline), a built-in task (--task) or a
task file (--task-file, LLEMA's CSV format or YAML), with flags overriding.
It prints the campaign id; --wait follows it to the end (progress on
stderr: in place on a terminal, else a line per tenth of the budget or
10 s; "waiting for Redis" or "NATS" in an outage) and prints its summary.
An id that exists is refused, unless --resume (then the existing campaign
is followed); "crucible campaign extend" raises a campaign's budget.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				cf.File = args[0]
			}
			spec, err := cf.spec(cmd.ErrOrStderr())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			return conn.do(cmd.Context(), func(cl *client.Client) error {
				pctx, cancel := context.WithTimeout(cmd.Context(), conn.timeout)
				defer cancel()
				if err := cl.Submit(pctx, spec); err != nil && !(resume && errors.Is(err, client.ErrExists)) {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), spec.ID)
				if !wait {
					return nil
				}
				st, err := cl.WaitDoneProgress(cmd.Context(), spec.ID, cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()))
				if err != nil {
					return err
				}
				if st.State == messages.StateRejected {
					return &exitError{code: 1, err: fmt.Errorf("campaign %s rejected: %s", spec.ID, st.Message)}
				}
				if st.Summary != nil {
					results.PrintSummary(cmd.OutOrStdout(), st.Summary)
				}
				return nil
			})
		},
	}
	cf.bind(cmd)
	conn.bind(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the campaign to finish and print its summary")
	cmd.Flags().BoolVar(&resume, "resume", false, "an id that exists is not an error: follow the existing campaign")
	return cmd
}

func newWatchCmd() *cobra.Command {
	var (
		conn              connection
		asJSON, verdicts  bool
		newOnly, statuses bool
	)
	cmd := &cobra.Command{
		Use:   "watch [CAMPAIGN]",
		Short: "Stream discoveries as the judge accepts them (all campaigns, or one)",
		Long: `watch follows crucible.discoveries.<campaign> (every campaign without an
argument) from the beginning of the stream, or only new events with --new,
and prints one line per discovery: campaign, candidate, formula, e_above_hull
and the constrained properties. --verdicts adds the judge's rejections with
their reasons, --status the campaigns' status events. Stop with Ctrl-C.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			campaign := "*"
			if len(args) == 1 {
				campaign = args[0]
				if err := messages.ValidateCampaignID(campaign); err != nil {
					return &exitError{code: 2, err: err}
				}
			}
			return conn.do(cmd.Context(), func(cl *client.Client) error {
				return cl.Watch(cmd.Context(), cmd.OutOrStdout(), campaign, client.WatchOptions{Verdicts: verdicts, Status: statuses, New: newOnly, JSON: asJSON})
			})
		},
	}
	conn.bind(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "one JSON event per line")
	f.BoolVar(&verdicts, "verdicts", false, "also show rejected candidates with the judge's reasons")
	f.BoolVar(&statuses, "status", false, "also show campaign status events")
	f.BoolVar(&newOnly, "new", false, "only events published from now on")
	return cmd
}

func newStatusCmd() *cobra.Command {
	var (
		conn   connection
		asJSON bool
		from   string
		states []string
	)
	cmd := &cobra.Command{
		Use:   "status [CAMPAIGN | --from DIR]",
		Short: "Show campaigns and their counters, or one campaign's summary",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from != "" {
				res, err := local.Read(from)
				if err != nil || asJSON {
					if err == nil {
						err = json.NewEncoder(cmd.OutOrStdout()).Encode(res.Summary)
					}
					return err
				}
				results.PrintSummary(cmd.OutOrStdout(), res.Summary)
				return nil
			}
			return conn.do(cmd.Context(), func(cl *client.Client) error {
				if len(args) == 1 {
					return cl.WriteSummary(cmd.Context(), cmd.OutOrStdout(), args[0], asJSON)
				}
				return cl.WriteCampaigns(cmd.Context(), cmd.OutOrStdout(), asJSON, states...)
			})
		},
	}
	conn.bind(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON output")
	cmd.Flags().StringVar(&from, "from", "", "read the summary of a crucible local run's folder instead of the installation")
	cmd.Flags().StringSliceVar(&states, "state", nil, "only campaigns in these states (running, paused, completed, exhausted, cancelled)")
	return cmd
}

func newResultsCmd() *cobra.Command {
	var (
		conn              connection
		format, out, from string
		all, symmetrize   bool
	)
	cmd := &cobra.Command{
		Use:   "results CAMPAIGN|--from DIR [--format jsonl|csv|cif|poscar|json|xyz]",
		Short: "Export a campaign's evaluations (jsonl, csv) or structures (cif, poscar, json, xyz)",
		Long: `results reads a campaign's evaluations back from the EVALUATIONS stream.
jsonl prints every evaluation as it was published; csv one row per
candidate with its flags, score, energy above hull and properties.

cif, poscar, json (pymatgen) and xyz (extended XYZ) export the structures
of the judge's discoveries (every evaluated candidate with --all), each
labelled by its candidate id. With --out DIR, one file per structure
(ID.cif, ID.vasp, ID.json, ID.xyz); without, to standard output: one CIF
with a data block per structure, one XYZ trajectory with a frame per
structure, or a JSON array of {id, formula, structure} with structure a
pymatgen Structure dict. A POSCAR holds one structure, so poscar needs
--out DIR. CIFs list every site (P1); with --symmetrize they are written
in the standard setting of each structure's space group, the one its
evaluation records. See "crucible convert --help" for the formats.

csv has one column per property in its unit ("band_gap [eV]"), with the
uncertainty ("band_gap uncertainty [eV]": the surrogate's test MAE, empty
for exact sources) and the source (cgcnn, reference, structure, hull).

--from DIR reads a crucible local run's folder instead of an installation.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (from != "") == (len(args) == 1) {
				return &exitError{code: 2, err: errors.New("give a campaign, or --from DIR with a crucible local result")}
			}
			campaign := from
			if from == "" {
				campaign = args[0]
				if err := messages.ValidateCampaignID(campaign); err != nil {
					return &exitError{code: 2, err: err}
				}
			}
			if _, err := results.StructureFormat(format, out); err != nil {
				return &exitError{code: 2, err: err}
			}
			if symmetrize && format != "cif" {
				return &exitError{code: 2, err: errors.New("--symmetrize writes CIF: use it with --format cif")}
			}
			o := client.ExportOptions{Format: format, Dir: out, All: all, Symmetrize: symmetrize}
			if from != "" {
				res, err := local.Read(from)
				if err != nil {
					return err
				}
				accepted := map[string]bool{}
				for _, d := range res.Discoveries {
					accepted[d.ID] = true
				}
				return client.WriteEvaluations(cmd.OutOrStdout(), res.Evaluations, accepted, o)
			}
			return conn.do(cmd.Context(), func(cl *client.Client) error {
				return cl.Export(cmd.Context(), cmd.OutOrStdout(), campaign, o)
			})
		},
	}
	conn.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&format, "format", "jsonl", "jsonl, csv, or structures as cif, poscar, json (pymatgen) or xyz (extended XYZ)")
	f.StringVar(&out, "out", "", "with a structure format: write one file per structure into this directory")
	f.BoolVar(&all, "all", false, "with a structure format: every evaluated candidate, not only discoveries")
	f.StringVar(&from, "from", "", "read a crucible local run's folder instead of the installation")
	f.BoolVar(&symmetrize, "symmetrize", false, "with --format cif: each structure in the standard setting of its space group")
	return cmd
}
