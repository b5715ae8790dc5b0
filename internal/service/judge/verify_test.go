package judge

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// raceHook runs once, after the first command whose arguments contain
// want: the other service's writes between two of the judge's reads.
type raceHook struct {
	want string
	once sync.Once
	then func()
}

func (h *raceHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *raceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if strings.Contains(cmd.String(), h.want) {
			h.once.Do(h.then)
		}
		return err
	}
}

func (h *raceHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestVerifyEvaluationRecordedAsTheCampaignCompletes: the judge looks
// for the reflector's record of an evaluation, finds none, and before it
// reads the campaign's status the reflector records the evaluation —
// the campaign's last — and completes the campaign. The evaluation is
// the campaign's: it is judged, not dead-lettered as work after
// completion.
func TestVerifyEvaluationRecordedAsTheCampaignCompletes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	spec, ev := debateFixture(t, messages.DebateOff)
	spec.Budget = 1
	if _, err := h.store.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}
	data, err := messages.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	// The reflector writes through a store of its own, right after the
	// judge's first read of the record.
	reflector := h.connectStore()
	hook := &raceHook{want: ev.ID, then: func() {
		recordEvaluations(t, reflector, ev)
		st, err := reflector.State(ctx, ev.Campaign)
		if err != nil || st.Status != messages.StateCompleted {
			t.Errorf("fixture: the campaign's last evaluation recorded, the campaign is %v (%v)", st, err)
		}
	}}
	judgeStore := h.connectStore()
	judgeStore.AddHook(hook)
	s := New(h.connect("judge"), judgeStore, zap.NewNop(), Config{})
	judge, err := s.verify(ctx, &bus.Delivery{Subject: messages.Subject(messages.SubjectEvaluations, ev.Campaign), Data: data}, spec, ev)
	if err != nil || !judge {
		t.Fatalf("the campaign's last evaluation, recorded while the judge looked: judge %v, %v", judge, err)
	}
	// Work that is not the campaign's is still refused once it completed.
	other := *ev
	other.ID = messages.CandidateID(ev.Campaign, ev.Candidate.Generation+1, ev.Candidate.Index)
	other.Candidate.ID = other.ID
	other.Candidate.Generation++
	odata, err := messages.Encode(&other)
	if err != nil {
		t.Fatal(err)
	}
	if judge, err := s.verify(ctx, &bus.Delivery{Data: odata}, spec, &other); judge || err == nil || !strings.Contains(err.Error(), "no more work") {
		t.Fatalf("an evaluation after completion: judge %v, %v", judge, err)
	}
}
