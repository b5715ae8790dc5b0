package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// zapLogger routes go-redis's own logging (connection pool messages,
// "pool.go:770 …", a few dozen a second while Redis is down) to a zap
// logger at debug level.
type zapLogger struct{ log *zap.Logger }

func (l zapLogger) Printf(_ context.Context, format string, v ...any) {
	if ce := l.log.Check(zap.DebugLevel, "redis client"); ce != nil {
		ce.Write(zap.String("message", fmt.Sprintf(format, v...)))
	}
}

// RouteLogs sends go-redis's internal logging to log at debug level (the
// library logs to standard error otherwise). It sets a process-wide
// logger: call it once, at start.
func RouteLogs(log *zap.Logger) { redis.SetLogger(zapLogger{log}) }
