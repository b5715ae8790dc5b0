package bus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testsrv"
)

// A named user's connection takes its replies, JetStream's included, on
// _INBOX_<user>; an explicit prefix wins; anonymous connections keep
// NATS's _INBOX.
func TestInboxPrefix(t *testing.T) {
	url, _ := testsrv.NATS(t)
	for _, tc := range []struct {
		name   string
		opts   Options
		prefix string
	}{
		{"anonymous", Options{}, "_INBOX."},
		{"named user", Options{User: "evaluator"}, "_INBOX_evaluator."},
		{"explicit", Options{User: "evaluator", InboxPrefix: "_R_eval"}, "_R_eval."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			o := tc.opts
			o.URL, o.Name, o.Namespace, o.MemoryStorage = url, t.Name(), testsrv.Namespace(), true
			b, err := Connect(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if got := b.NC.NewInbox(); !strings.HasPrefix(got, tc.prefix) {
				t.Errorf("inbox %q, want prefix %q", got, tc.prefix)
			}
			// JetStream's API requests answer on that inbox.
			if err := b.EnsureStreams(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.DeleteStreams(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, bad := range []string{"_INBOX_a b", "_INBOX_*", "_INBOX_>", "_INBOX_x."} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := Connect(ctx, Options{URL: url, InboxPrefix: bad})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "inbox prefix") {
			t.Errorf("inbox prefix %q: %v, want an error naming the prefix", bad, err)
		}
	}
}
