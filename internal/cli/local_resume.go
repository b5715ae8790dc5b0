package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// localSpec is the campaign of crucible local: the flags', or the
// interrupted run's in resumeDir (whose flags then must not shape it).
func localSpec(cmd *cobra.Command, cf *campaignFlags, resumeDir string) (*messages.CampaignSpec, error) {
	if resumeDir == "" {
		return cf.spec(cmd.ErrOrStderr())
	}
	for _, name := range []string{"task", "task-file", "spec", "id", "budget", "out", "force", "seed"} {
		if cmd.Flags().Changed(name) {
			return nil, fmt.Errorf("--resume continues the run in %s as it was submitted: --%s cannot change it", resumeDir, name)
		}
	}
	return local.ReadRunSpec(resumeDir)
}

// interrupted says how much of an interrupted run is kept for --resume,
// and how to resume it.
func interrupted(cmd *cobra.Command, res *local.Result, out string) error {
	w := cmd.ErrOrStderr()
	if res != nil && res.Summary != nil {
		fmt.Fprintf(w, "interrupted: %d of %d evaluated; partial results and summary in %s\n", res.Summary.Evaluated, res.Summary.Budget, out)
	}
	fmt.Fprintf(w, "resume with: crucible local --resume %s\n", out)
	return &exitError{code: 130}
}
