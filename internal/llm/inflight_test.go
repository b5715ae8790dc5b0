package llm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// instantOracle answers every candidate at once, as not evaluated: the
// generation completes and the reflector asks for the next, with no
// oracle cost in the way.
type instantOracle struct{}

func (instantOracle) Evaluate(_ context.Context, items []evaluator.Item) ([]evaluator.Outcome, error) {
	out := make([]evaluator.Outcome, len(items))
	for i := range out {
		out[i] = evaluator.Outcome{Reasons: []messages.Reason{{Code: "bench", Detail: "not evaluated"}}}
	}
	return out, nil
}

// inFlightStack runs every service — proposer with the llm generator on
// srv (at most concurrency requests in flight), evaluator with the
// instant oracle, reflector, judge — and submits one campaign per entry
// of inFlight, each with that max_in_flight.
func inFlightStack(t testing.TB, srv *llmtest.Server, concurrency int, inFlight ...int) *local.Stack {
	t.Helper()
	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake", Concurrency: concurrency, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st, err := local.Start(context.Background(), local.Options{
		NATSURL: testbed.NATSURL(), RedisURL: testbed.RedisURL(), Namespace: testsrv.Namespace(), MemoryStreams: true,
		Oracle: instantOracle{},
		Proposer: func(s *store.Store) proposer.Config {
			gen, err := llm.NewGenerator(c, s)
			if err != nil {
				t.Error(err)
			}
			return proposer.Config{Generators: map[string]proposer.Generator{messages.GeneratorLLM: gen}, RuleCount: len(evolve.Rules)}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = st.Purge(context.Background())
		st.Close()
	})
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	for i, k := range inFlight {
		spec := &messages.CampaignSpec{ID: fmt.Sprintf("inflight-%d", i), Task: tk, Budget: 100000, Islands: 1, Seed: 1, MaxInFlight: k,
			Generator: messages.GeneratorSpec{Kind: messages.GeneratorLLM, Model: "fake", MaxLLMCalls: 1000000}}
		if err := cl.Submit(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// answered counts the completions the server has answered.
func answered(srv *llmtest.Server) int { return len(srv.Requests()) }

// waitAnswered waits until the server has answered n completions.
func waitAnswered(t testing.TB, srv *llmtest.Server, n int, deadline time.Duration) {
	t.Helper()
	end := time.Now().Add(deadline)
	for answered(srv) < n {
		if time.Now().After(end) {
			t.Fatalf("%d of %d completions answered in %v", answered(srv), n, deadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLLMCallsInFlight: a campaign keeps max_in_flight LLM calls in
// flight, and the calls of all campaigns of a replica stay within the
// client's bound on the endpoint.
func TestLLMCallsInFlight(t *testing.T) {
	srv := llmtest.New(t, llmtest.Distinct())
	srv.SetLatency(300 * time.Millisecond)
	inFlightStack(t, srv, 16, 5)
	waitAnswered(t, srv, 20, time.Minute)
	if got := srv.MaxInFlight(); got != 5 {
		t.Fatalf("at most %d calls in flight, want the campaign's max_in_flight 5", got)
	}

	shared := llmtest.New(t, llmtest.Distinct())
	shared.SetLatency(300 * time.Millisecond)
	inFlightStack(t, shared, 3, 4, 4)
	waitAnswered(t, shared, 20, time.Minute)
	if got := shared.MaxInFlight(); got != 3 {
		t.Fatalf("at most %d calls in flight for two campaigns of 4, want the client's bound 3", got)
	}
}

// BenchmarkProposerInFlight runs the proposer path — generation requests
// from NATS, the llm generator and its client, the proposer's checks and
// recording, then the evaluator (an oracle of no cost), the reflector
// asking for the next generation — against an endpoint that answers every
// completion after exactly one second, for a campaign keeping K
// generations in flight (max_in_flight), with a client bound above K. It
// reports proposals (answered generations, each an LLM call of two
// candidates) per second, and that per K: the calls are latency-bound, so
// the ideal is K per second, 1 per K.
//
//	go test ./internal/llm -run '^$' -bench ProposerInFlight -benchtime 64x
//
// b.N is the number of proposals timed, after the first K.
func BenchmarkProposerInFlight(b *testing.B) {
	for _, k := range []int{1, 2, 4, 8, 16} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			srv := llmtest.Start(llmtest.Distinct())
			defer srv.Close()
			srv.SetLatency(time.Second)
			st := inFlightStack(b, srv, 16, k)
			waitAnswered(b, srv, k, time.Minute)
			before, err := st.Store.State(context.Background(), "inflight-0")
			if err != nil {
				b.Fatal(err)
			}
			n0 := answered(srv)
			b.ResetTimer()
			start := time.Now()
			waitAnswered(b, srv, n0+b.N, time.Duration(b.N+60)*time.Second)
			elapsed := time.Since(start)
			b.StopTimer()
			after, err := st.Store.State(context.Background(), "inflight-0")
			if err != nil {
				b.Fatal(err)
			}
			rate := float64(answered(srv)-n0) / elapsed.Seconds()
			b.ReportMetric(rate, "proposals/s")
			b.ReportMetric(rate/float64(k), "per_K")
			b.ReportMetric(float64(after.Counters.Proposed-before.Counters.Proposed)/elapsed.Seconds(), "candidates/s")
			b.ReportMetric(float64(srv.MaxInFlight()), "max_in_flight")
		})
	}
}
