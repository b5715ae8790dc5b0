package judge

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// harness is a NATS server and a Redis of one test's namespace.
type harness struct {
	t         *testing.T
	natsURL   string
	redisURL  string
	namespace string
	admin     *bus.Bus
	store     *store.Store
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	natsURL, _ := testsrv.NATS(t)
	redisURL, _ := testsrv.Redis(t)
	h := &harness{t: t, natsURL: natsURL, namespace: testsrv.Namespace()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.admin = h.connect("admin")
	if err := h.admin.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.admin.DeleteStreams(ctx)
	})
	h.redisURL = redisURL
	h.store = h.connectStore()
	return h
}

// connectStore opens a store of the test's namespace on a connection of
// its own (another service's).
func (h *harness) connectStore() *store.Store {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := store.Open(ctx, store.Options{URL: h.redisURL, Namespace: h.namespace})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { s.Close() })
	return s
}

// connect opens a connection of its own: a replica killed with it loses
// its unacknowledged work to the others.
func (h *harness) connect(name string) *bus.Bus {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, bus.Options{URL: h.natsURL, Name: name, Namespace: h.namespace, MemoryStorage: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(b.Close)
	return b
}

// verdicts reads every verdict of the stream (discoveries and
// rejections) until none comes for quiet.
func (h *harness) verdicts(quiet time.Duration) []messages.Verdict {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cons, err := h.admin.JS.OrderedConsumer(ctx, h.admin.Stream(messages.StreamDiscoveries), jetstream.OrderedConsumerConfig{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []messages.Verdict
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(quiet))
		if err != nil {
			return out
		}
		var v messages.Verdict
		if err := json.Unmarshal(msg.Data(), &v); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, v)
	}
}

// debateFixture is a feasible, stable, new Li5P3O10 of a Solid-State
// Electrolytes campaign and the campaign.
func debateFixture(t *testing.T, mode string) (*messages.CampaignSpec, *messages.Evaluation) {
	t.Helper()
	data, err := os.ReadFile("testdata/evaluation_accepted.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev messages.Evaluation
	if err := messages.Decode(data, &ev); err != nil {
		t.Fatal(err)
	}
	ev.Novelty = &messages.Novelty{Class: messages.NoveltyNew}
	tk, err := task.ByName("Solid-State Electrolytes")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: ev.Campaign, Task: tk, Budget: 40, Judge: messages.JudgeSpec{Debate: mode}}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec, &ev
}

// stuckAgent holds its role's turn until its context ends, like a model
// call in flight when the process dies.
type stuckAgent struct{ entered chan struct{} }

func (a stuckAgent) Argue(ctx context.Context, _ debate.Turn) (messages.RolePosition, debate.Usage, error) {
	select {
	case a.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return messages.RolePosition{}, debate.Usage{}, ctx.Err()
}

// TestJudgeKilledMidDebate kills a judge replica in the middle of a debate
// (its connection dies with the evaluation unacknowledged); a second
// replica receives the evaluation again and debates it. Exactly one
// verdict is published, the campaign's debate budget counts one debate,
// and an evaluation delivered once more publishes nothing new and starts
// no debate.
func TestJudgeKilledMidDebate(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the consumer's ack wait")
	}
	h := newHarness(t)
	ctx := context.Background()
	spec, ev := debateFixture(t, messages.DebateLLM)
	if _, err := h.store.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}

	entered := make(chan struct{}, 1)
	busA := h.connect("judge-a")
	a := New(busA, h.store, zap.NewNop(), Config{Debate: DebateConfig{Agents: func(*store.Store, *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
		return map[string]debate.Agent{messages.RoleSynthesis: stuckAgent{entered}}, nil
	}}})
	ctxA, cancelA := context.WithCancel(ctx)
	doneA := make(chan error, 1)
	go func() { doneA <- a.Run(ctxA) }()

	recordEvaluations(t, h.store, ev)
	if err := h.admin.Publish(ctx, messages.Subject(messages.SubjectEvaluations, ev.Campaign), ev); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("replica A never started the debate")
	}
	// Kill A: its connection dies first, so it can neither acknowledge nor
	// publish; then its goroutines stop.
	busA.NC.Close()
	cancelA()
	<-doneA
	if n, _ := h.store.DebatesUsed(ctx, ev.Campaign); n != 1 {
		t.Fatalf("%d debates claimed by the dead replica, want 1", n)
	}

	debates := func() float64 {
		var m dto.Metric
		if err := metricDebates.WithLabelValues(debate.ModeOffline, messages.DebateDiscovery).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	before := debates()
	busB := h.connect("judge-b")
	b := New(busB, h.store, zap.NewNop(), Config{})
	ctxB, cancelB := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = b.Run(ctxB) }()
	defer func() { cancelB(); wg.Wait() }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := h.store.Transcript(ctx, ev.Campaign, ev.ID); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no transcript after the redelivery")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The evaluation once more, as a redelivery after a lost ack would
	// bring it (under another message id, past the stream's dedup).
	data, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.admin.PublishRaw(ctx, messages.Subject(messages.SubjectEvaluations, ev.Campaign), "again/"+ev.ID, data); err != nil {
		t.Fatal(err)
	}
	vs := h.verdicts(3 * time.Second)
	if len(vs) != 1 {
		t.Fatalf("%d verdicts published, want 1", len(vs))
	}
	v := vs[0]
	if v.JudgedBy != messages.JudgedByDebate || v.Debate == nil || len(v.Debate.Roles) != 4 || v.Debate.TranscriptID != ev.Campaign+"/"+ev.ID {
		t.Fatalf("verdict not from a debate: judged by %q, debate %+v", v.JudgedBy, v.Debate)
	}
	if !v.Accepted || v.Debate.Verdict != messages.DebateDiscovery {
		t.Errorf("verdict %s (accepted %v)", v.Debate.Verdict, v.Accepted)
	}
	if n, _ := h.store.DebatesUsed(ctx, ev.Campaign); n != 1 {
		t.Errorf("%d debates counted, want 1", n)
	}
	if n := debates() - before; n != 1 {
		t.Errorf("replica B ran %v debates, want 1 (the redelivery after its transcript runs none)", n)
	}
	judged, err := h.store.Judged(ctx, ev.Campaign)
	if err != nil || judged["accepted/new"] != 1 {
		t.Errorf("judged %v %v", judged, err)
	}
}

// TestDebateBudget: past judge.max_debates, hits are judged by the rules
// and say so; a hit judged by rules stays so.
func TestDebateBudget(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	spec, ev := debateFixture(t, messages.DebateOffline)
	spec.Judge.MaxDebates = 1
	if _, err := h.store.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}
	s := New(nil, h.store, zap.NewNop(), Config{})
	rules := func(e *messages.Evaluation) messages.Verdict {
		return messages.Verdict{ID: e.ID, Campaign: e.Campaign, Accepted: true, Checks: []messages.Check{{Name: "validity", Passed: true}}}
	}
	first, err := s.debated(ctx, spec, ev, rules(ev))
	if err != nil || first.JudgedBy != messages.JudgedByDebate {
		t.Fatalf("first hit: %v %q", err, first.JudgedBy)
	}
	other := *ev
	other.ID = ev.ID + "-2"
	for i := 0; i < 2; i++ {
		v, err := s.debated(ctx, spec, &other, rules(&other))
		if err != nil || v.JudgedBy != messages.JudgedByRules || v.Debate != nil || v.JudgedNote == "" {
			t.Fatalf("hit past the budget: %v %q %q", err, v.JudgedBy, v.JudgedNote)
		}
	}
	again, err := s.debated(ctx, spec, ev, rules(ev))
	if err != nil || again.Debate == nil || again.Debate.Verdict != first.Debate.Verdict {
		t.Fatalf("redelivered hit: %v %+v", err, again.Debate)
	}
}
