package reflector

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
)

// FuzzHandleDecode feeds arbitrary message bodies to the handler's decode
// path: none may panic, and each is refused as a permanent failure (a
// dead letter with the reason): it cannot be decoded, or it names a
// campaign the store does not hold.
func FuzzHandleDecode(f *testing.F) {
	url, _ := testsrv.Redis(f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Options{URL: url, Namespace: testsrv.Namespace()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	s := New(nil, st, zap.NewNop(), Config{})
	f.Add([]byte("{"))
	f.Add([]byte(`{"schema":1,"campaign":"x"}`))
	f.Add([]byte(`{"schema":1,"campaign":"x","generation":0,"slots":4,"trigger":"t","requested_at":"2020-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &bus.Delivery{Subject: "crucible.evaluations.x", Data: data, Deliveries: 1}
		err := s.handleBatch(context.Background(), []*bus.Delivery{d})[0]
		if err != nil && !errors.Is(err, bus.ErrPermanent) {
			t.Fatalf("%q: %v is not a permanent failure", data, err)
		}
	})
}
