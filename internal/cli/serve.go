package cli

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/console"
)

func init() { register(newServeCmd) }

func newServeCmd() *cobra.Command {
	var (
		conn connection
		addr string
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080]",
		Short: "Serve the web console: campaigns, live progress, plots, structures, downloads",
		Long: `serve runs the web console over the installation's NATS and Redis: the
campaigns with live progress, each campaign's discovery curve, hit and
stability rates, Pareto front, discoveries with a 3D view of their
structures, downloads (CSV, CIF, POSCAR, pymatgen JSON, extended XYZ), and
the lifecycle buttons. The JSON API and the server-sent events it uses are
described in docs/console.md.

The console is read-only unless CRUCIBLE_CONSOLE_TOKEN (or a file named by
CRUCIBLE_CONSOLE_TOKEN_FILE) holds a token: the lifecycle
verbs (cancel, pause, resume, extend, delete) then need that token as
"Authorization: Bearer TOKEN". It listens on 127.0.0.1 unless --addr says
otherwise. Stop it with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			cl, closeFn, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer closeFn()
			log, err := zap.NewProduction()
			if err != nil {
				return err
			}
			defer func() { _ = log.Sync() }()
			token := app.Secret("CRUCIBLE_CONSOLE_TOKEN")
			if f := os.Getenv("CRUCIBLE_CONSOLE_TOKEN_FILE"); f != "" && token == "" {
				if _, err := os.Stat(f); err != nil {
					return fmt.Errorf("CRUCIBLE_CONSOLE_TOKEN_FILE: %w", err)
				}
			}
			srv := &console.Server{Client: cl, Control: console.ReadOnly{}, Token: token, Log: log}
			return srv.Serve(ctx, addr, func(a net.Addr) {
				mode := "read-only (set CRUCIBLE_CONSOLE_TOKEN for the lifecycle verbs)"
				if srv.Token != "" {
					mode = "lifecycle verbs need the token"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "console on http://%s/ · %s\n", a, mode)
			})
		},
	}
	conn.bind(cmd)
	def := os.Getenv("CRUCIBLE_CONSOLE_ADDR")
	if def == "" {
		def = "127.0.0.1:8080"
	}
	cmd.Flags().StringVar(&addr, "addr", def, "address to listen on [CRUCIBLE_CONSOLE_ADDR]")
	return cmd
}
