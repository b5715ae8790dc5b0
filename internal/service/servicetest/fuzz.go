// Package servicetest holds what the services' tests share.
package servicetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
)

// Store opens a store on the test's Redis (testsrv.Redis), closed when
// the test ends.
func Store(tb testing.TB) *store.Store {
	tb.Helper()
	url, _ := testsrv.Redis(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Options{URL: url, Namespace: testsrv.Namespace()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// FuzzDecode feeds arbitrary bodies on subject to a handler's decode path:
// none may panic, and each is refused as a permanent failure (a dead
// letter with the reason): it cannot be decoded, or it names a campaign
// the store does not hold.
func FuzzDecode(f *testing.F, subject string, handle func(context.Context, *bus.Delivery) error) {
	f.Add([]byte("{"))
	f.Add([]byte(`{"schema":1,"campaign":"x"}`))
	f.Add([]byte(`{"schema":1,"campaign":"x","generation":0,"slots":4,"trigger":"t","requested_at":"2020-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := handle(context.Background(), &bus.Delivery{Subject: subject, Data: data, Deliveries: 1})
		if err != nil && !errors.Is(err, bus.ErrPermanent) {
			t.Fatalf("%q: %v is not a permanent failure", data, err)
		}
	})
}
