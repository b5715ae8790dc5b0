package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/task"
)

func init() { register(newTasksCmd) }

func newTasksCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tasks [--json]",
		Short: "LLEMA's benchmark tasks, and checks of user task files",
		Long: `List the 14 built-in discovery tasks of the LLEMA benchmark with their
property constraints in words and whether Crucible can evaluate them: every
constrained property of the 14 comes from a surrogate (CGCNN, or Crucible's
own models for the static dielectric constant, piezoelectric coefficients
and conductivity), the structure or the hull. A user task may constrain a
property known only from the reference table (dielectric_electronic) or
from nothing in Crucible (seebeck_coefficient, power_factor, unless a
plug-in model server provides it), in which case novel candidates have no
value for it.

With --json, one object per line: the task's fields (name, domain,
description, goal, constraints, elements, properties, notes) plus support,
unsupported and reference_only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return task.WriteListing(cmd.OutOrStdout(), task.Builtins(), nil, asJSON, false)
		},
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.AddCommand(newTasksShowCmd(&asJSON), newTasksCheckCmd(&asJSON))
	return cmd
}

func newTasksShowCmd(asJSON *bool) *cobra.Command {
	var asYAML bool
	cmd := &cobra.Command{
		Use:   "show NAME [--json | --yaml]",
		Short: "Show one built-in task in full",
		Long: `Show one built-in task: description, goal, constraints, element rules, notes
and support. NAME is matched ignoring case, spaces, '_', '-' and punctuation,
and may be one of the names LLEMA's paper uses ("Wide-Bandgap
Semiconductors"); several arguments are joined with spaces. With --yaml the
task is written as a task file to start a variant from.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := task.ByName(strings.Join(args, " "))
			if err != nil {
				return err
			}
			if asYAML {
				y, err := task.EncodeYAML(t)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(y)
				return err
			}
			return task.WriteListing(cmd.OutOrStdout(), []task.Task{t}, nil, *asJSON, true)
		},
	}
	cmd.Flags().BoolVar(&asYAML, "yaml", false, "write the task as a YAML task file")
	return cmd
}

func newTasksCheckCmd(asJSON *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE",
		Short: "Read a user task file (LLEMA CSV, YAML or JSON) and show what was understood",
		Long: `Read FILE and print every task as Crucible understood it, with warnings for
goal clauses kept as notes rather than constraints, then the errors. FILE is
LLEMA's CSV format (columns Task, Goal and optionally Properties; goals in
words such as "Band gap ≥ 2.5 eV, Formation energy ≤ -1.0 eV/atom, Must
contain Li/Na/K") when it ends in .csv, typed tasks when it ends in .yaml,
.yml or .json.

Exit status 1 when any task has an error. With --json, one object per task
(with its issues), then one {"error": ...} object per error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tasks, issues, loadErr := task.LoadFile(args[0])
			if pe := (*fs.PathError)(nil); errors.As(loadErr, &pe) {
				return loadErr // the file could not be read at all
			}
			if err := task.WriteListing(cmd.OutOrStdout(), tasks, issues, *asJSON, true); err != nil {
				return err
			}
			if loadErr == nil {
				return nil
			}
			errs := task.Errors(loadErr)
			if err := task.WriteErrors(cmd.OutOrStdout(), cmd.ErrOrStderr(), errs, *asJSON); err != nil {
				return err
			}
			return &exitError{code: 1, err: fmt.Errorf("%s: %d error(s), %d task(s) valid", args[0], len(errs), len(tasks))}
		},
	}
}
