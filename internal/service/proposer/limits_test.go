package proposer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/internal/service/servicetest"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestReadUserLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "limits.json")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	u, err := ReadUserLimits(write(`{"alice": {"max_budget": 5000, "max_campaigns": 3}, "*": {"max_campaigns": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, entry string
		want        UserLimit
	}{
		{"alice", "alice", UserLimit{MaxBudget: 5000, MaxCampaigns: 3}},
		{"bob", "*", UserLimit{MaxCampaigns: 1}},
		{"", "", UserLimit{}}, // a submission without a user
	} {
		if got, entry := u.of(c.user); got != c.want || entry != c.entry {
			t.Errorf("%q: %+v from %q, want %+v from %q", c.user, got, entry, c.want, c.entry)
		}
	}
	for text, want := range map[string]string{
		`{"alice": {"max_campaign": 3}}`:  `did you mean "max_campaigns"`,
		`{"alice": {"max_budget": -1}}`:   "negative",
		`{"al.ice": {"max_budget": 10}}`:  `"al.ice" is not a user name`,
		`{"alice": {"max_budget": "10"}}`: "max_budget",
		`[1]`:                             "limits",
	} {
		if _, err := ReadUserLimits(write(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", text, err, want)
		}
	}
	if _, err := ReadUserLimits(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file is no error")
	}
}

// slowScripts delays the store's scripts (the campaign's creation among
// them), widening the gap between counting the running campaigns and
// creating the new one.
type slowScripts struct{}

func (slowScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (slowScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			time.Sleep(150 * time.Millisecond)
		}
		return next(ctx, cmd)
	}
}
func (slowScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestCreateWithinLimitsConcurrently: submissions accepted at once, by the
// handlers of one proposer or of several, cannot both take the last
// place: the count and the creation are made under one lock.
func TestCreateWithinLimitsConcurrently(t *testing.T) {
	for name, l := range map[string]Limits{
		"installation": {MaxCampaigns: 1},
		"user":         {Users: UserLimits{"carol": {MaxCampaigns: 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			st := servicetest.Store(t)
			st.AddHook(slowScripts{})
			// Two replicas over one store.
			a, b := &Service{store: st, cfg: Config{Limits: l}}, &Service{store: st, cfg: Config{Limits: l}}
			ctx := context.Background()
			errs := make([]error, 2)
			created := make([]bool, 2)
			var wg sync.WaitGroup
			for i, s := range []*Service{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					spec := &messages.CampaignSpec{ID: fmt.Sprintf("c%d", i), Budget: 10, SubmittedBy: "carol"}
					created[i], errs[i] = s.create(ctx, spec, 0)
				}()
			}
			wg.Wait()
			n := 0
			for i := range errs {
				switch {
				case errs[i] == nil && created[i]:
					n++
				case errors.Is(errs[i], ErrLimit):
				default:
					t.Errorf("submission %d: created %v, %v", i, created[i], errs[i])
				}
			}
			if n != 1 {
				t.Errorf("%d campaigns created of two at once under a maximum of 1 (%v)", n, errs)
			}
		})
	}
}
