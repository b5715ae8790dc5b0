package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/datadir"
)

func init() { register(newDataCmd) }

func newDataCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Fetch and check the reference data and CGCNN checkpoints",
		Long: `Crucible reads its data from a data directory: the Materials Project reference
tables in data/ and the CGCNN checkpoints in models/cgcnn/. The directory is
--dir, else $CRUCIBLE_DATA, else crucible/ in the user's cache folder
(~/.cache/crucible on Linux).`,
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	cmd.AddCommand(newDataPullCmd(&dir), newDataCheckCmd(&dir))
	return cmd
}

// dataDir is --dir, else datadir.Dir().
func dataDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return datadir.Dir()
}

func newDataPullCmd(dir *string) *cobra.Command {
	var baseURL, mirror string
	cmd := &cobra.Command{
		Use:   "pull [--dir DIR] [--mirror URL | --base-url URL]",
		Short: "Download the reference tables and CGCNN checkpoints, checking their SHA-256 sums",
		Long: `Download every file of the data directory from its public source (CrabNet's
Matbench tables, LLEMA's task list and the CGCNN checkpoints on GitHub),
checking each against the SHA-256 sum built into Crucible. Files already
present with the right sum are skipped, so an interrupted pull resumes where
it stopped; a file is written under a temporary name and renamed into place
only once its sum is right. The energy-above-hull and GPa moduli tables are
assembled from CrabNet's train, validation and test splits.

--mirror URL (or $CRUCIBLE_DATA_MIRROR) fetches every file from a copy of a
data directory served over HTTP (URL/data/mp_e_form.csv, …) instead.
--base-url URL replaces https://raw.githubusercontent.com in the public URLs
(a caching proxy).

A progress bar is drawn on a terminal, one line per file otherwise. Every
file that fails (an HTTP error, a checksum mismatch) is reported and the
others are still fetched; the exit status is then 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dataDir(*dir)
			if err != nil {
				return err
			}
			if mirror == "" {
				mirror = os.Getenv(datadir.EnvMirror)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "data directory %s\n", d)
			p := datadir.NewPrinter(out, isTerminal(out))
			if err := datadir.Pull(ctx, d, datadir.PullOptions{BaseURL: baseURL, Mirror: mirror, Progress: p.Event}); err != nil {
				return &exitError{code: 1, err: datadir.PullFailure(err)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mirror, "mirror", "", "URL of a data directory served over HTTP (default $CRUCIBLE_DATA_MIRROR)")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "replaces https://raw.githubusercontent.com in the public URLs")
	return cmd
}

func newDataCheckCmd(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "check [--dir DIR]",
		Short: "Say which data files are present, missing or corrupt",
		Long: `Read every file of the data directory and compare its SHA-256 sum with the one
built into Crucible. Each file is listed as ok, missing or checksum mismatch,
with its size and whether the oracle needs it. The exit status is 1 when a
required file is missing or any file has a wrong sum ("crucible data pull"
fixes both).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dataDir(*dir)
			if err != nil {
				return err
			}
			statuses := datadir.Check(d)
			if err := datadir.WriteCheck(cmd.OutOrStdout(), d, statuses); err != nil {
				return err
			}
			if p := datadir.Problems(statuses); len(p) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("data check: %d problem(s) in %s: run \"crucible data pull\" or set %s", len(p), d, datadir.EnvDir)}
			}
			return nil
		},
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
