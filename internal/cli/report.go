package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/report"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func init() { register(newReportCmd) }

func newReportCmd() *cobra.Command {
	var (
		conn connection
		out  string
		png  bool
	)
	cmd := &cobra.Command{
		Use:   "report DIR|CAMPAIGN --out report.html [--png]",
		Short: "Write a campaign's plots and discoveries as one self-contained HTML file",
		Long: `report writes one HTML file with no external resources: the campaign's
counts, its discovery curve (N_stable against evaluations), its hit and
stability rates over time, the Pareto front of the novel hits on the task's
first two objectives (inline SVG), and the table of discoveries with their
properties, E_hull, uncertainties and the judge's report.

DIR is a local run's folder ("crucible local --out DIR"); its discovery
curve is derived from evaluations.jsonl. Anything else is a campaign id,
read from the installation (the curve the reflector stored). --png also
writes the plots as PNG files beside the report: <out>-curve.png,
<out>-rates.png and <out>-pareto.png.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				d   *report.Data
				err error
			)
			if fi, statErr := os.Stat(args[0]); statErr == nil && fi.IsDir() {
				d, err = report.FromDir(args[0])
			} else {
				if verr := messages.ValidateCampaignID(args[0]); verr != nil {
					return &exitError{code: 2, err: fmt.Errorf("%s is neither a local run's folder nor a campaign id: %w", args[0], verr)}
				}
				ctx := cmd.Context()
				cl, closeFn, cerr := conn.open(ctx)
				if cerr != nil {
					return cerr
				}
				defer closeFn()
				d, err = report.FromClient(ctx, cl, args[0])
			}
			if err != nil {
				return err
			}
			files, err := report.WriteFiles(out, d, png, time.Now())
			for _, p := range files {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return err
		},
	}
	conn.bind(cmd)
	cmd.Flags().StringVar(&out, "out", "report.html", "the HTML file to write")
	cmd.Flags().BoolVar(&png, "png", false, "also write the plots as PNG files beside the report")
	return cmd
}
