package local

import (
	"cmp"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
)

// Logger is the services' logger: none unless verbose or a level is
// given (info by default), on the console.
func Logger(verbose bool, level string) (*zap.Logger, error) {
	if !verbose && level == "" {
		return zap.NewNop(), nil
	}
	return app.Logger(cmp.Or(level, "info"), "console")
}
