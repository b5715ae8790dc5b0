// Command crucible is the command-line client of Crucible: it runs campaigns
// locally, submits them to a cluster, and exposes the science core
// (validate, hull, predict) as tools.
package main

import (
	"os"

	"github.com/crucible-sci/crucible/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
