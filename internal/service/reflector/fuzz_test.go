package reflector

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/servicetest"
)

// FuzzHandleDecode feeds arbitrary message bodies to the handler's decode
// path (servicetest.FuzzDecode): none may panic, and each is refused as a
// permanent failure.
func FuzzHandleDecode(f *testing.F) {
	s := New(nil, servicetest.Store(f), zap.NewNop(), Config{})
	servicetest.FuzzDecode(f, "crucible.evaluations.x", func(ctx context.Context, d *bus.Delivery) error { return s.handleBatch(ctx, []*bus.Delivery{d})[0] })
}
