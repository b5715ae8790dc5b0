package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/service/control"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// The lifecycle operations (List, Show, Pause, Resume, Cancel, Extend,
// Delete) are what `crucible campaign` and the console's HTTP handlers
// call. Pause, Resume, Cancel and Extend publish a control message on
// crucible.campaigns.control.<id>, which a reflector applies once
// (Store.ApplyControl), and wait for it to be applied.

// ErrRefused wraps why a lifecycle action cannot apply to a campaign in
// its state (resuming a cancelled campaign, say).
var ErrRefused = errors.New("refused")

// CampaignInfo is a campaign's line in List.
type CampaignInfo struct {
	ID   string `json:"campaign"`
	Task string `json:"task"`
	// SubmittedBy is the NATS user that submitted it ("" without one).
	SubmittedBy string            `json:"submitted_by,omitempty"`
	State       string            `json:"state"`
	Budget      int               `json:"budget"`
	Created     time.Time         `json:"created"`
	Counters    messages.Counters `json:"counters"`
}

// List returns the campaigns, oldest first, only those in one of states
// when states is not empty.
func (c *Client) List(ctx context.Context, states ...string) ([]CampaignInfo, error) {
	ids, err := c.Store.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]CampaignInfo, 0, len(ids))
	for _, id := range ids {
		spec, st, err := c.Campaign(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		if len(states) > 0 && !contains(states, st.Status) {
			continue
		}
		budget := st.Budget
		if budget == 0 {
			budget = spec.Budget
		}
		out = append(out, CampaignInfo{ID: id, Task: spec.Task.Name, SubmittedBy: spec.SubmittedBy, State: st.Status, Budget: budget, Created: st.Created, Counters: st.Counters})
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Show returns a campaign's summary as it stands (the final one once it
// finished), with its discovery curve.
func (c *Client) Show(ctx context.Context, campaign string) (*messages.Summary, error) {
	spec, err := c.Store.Spec(ctx, campaign)
	if err != nil {
		return nil, err
	}
	ctl := &control.Control{Bus: c.Bus, Store: c.Store, Log: zap.NewNop()}
	sum, _, err := ctl.Summary(ctx, spec)
	return sum, err
}

// Pause stops a running campaign's new generations; those in flight
// finish. Pausing a paused campaign changes nothing.
func (c *Client) Pause(ctx context.Context, campaign string) (store.ControlResult, error) {
	return c.control(ctx, &messages.Control{Campaign: campaign, Action: messages.ActionPause})
}

// Resume continues a paused campaign where it stopped.
func (c *Client) Resume(ctx context.Context, campaign string) (store.ControlResult, error) {
	return c.control(ctx, &messages.Control{Campaign: campaign, Action: messages.ActionResume})
}

// Cancel stops a running or paused campaign for good: its generations in
// flight are evaluated, then it finishes as cancelled with its summary
// (WaitDone returns it).
func (c *Client) Cancel(ctx context.Context, campaign string) (store.ControlResult, error) {
	return c.control(ctx, &messages.Control{Campaign: campaign, Action: messages.ActionCancel})
}

// Extension is an extension of a campaign's budget (Extend).
type Extension struct {
	// Budget is the new budget of evaluations.
	Budget int
	// MaxLLMCalls and MaxLLMTokens are the new LLM limits; 0 raises a
	// limit the campaign has in proportion to its budget. Extend sets
	// them to what it applied, and Old* to what they were.
	MaxLLMCalls, MaxLLMTokens       int
	OldMaxLLMCalls, OldMaxLLMTokens int
}

// Extend raises a campaign's budget to x.Budget evaluations (the extra
// ones go to its last episode); a completed or exhausted campaign runs
// again. Its LLM limits (max_llm_calls, max_llm_tokens: the spec's, or a
// former extension's) rise in the same proportion, unless x sets them:
// an LLM campaign's limits were sized for its budget, and would stop the
// extension short.
func (c *Client) Extend(ctx context.Context, campaign string, x *Extension) (store.ControlResult, error) {
	if x.Budget > messages.MaxBudget {
		return store.ControlResult{}, fmt.Errorf("budget %d: at most %d", x.Budget, messages.MaxBudget)
	}
	if x.MaxLLMCalls < 0 || x.MaxLLMTokens < 0 {
		return store.ControlResult{}, fmt.Errorf("LLM limits %d calls, %d tokens: negative", x.MaxLLMCalls, x.MaxLLMTokens)
	}
	spec, st, err := c.Campaign(ctx, campaign)
	if err != nil {
		return store.ControlResult{}, err
	}
	x.OldMaxLLMCalls, x.OldMaxLLMTokens = cmp.Or(st.MaxLLMCalls, spec.Generator.MaxLLMCalls), cmp.Or(st.MaxLLMTokens, spec.Generator.MaxLLMTokens)
	scale := func(limit int) int {
		if st.Budget <= 0 || x.Budget <= st.Budget {
			return limit // refused, or nothing to scale by
		}
		return int((int64(limit)*int64(x.Budget) + int64(st.Budget) - 1) / int64(st.Budget))
	}
	if x.MaxLLMCalls == 0 {
		x.MaxLLMCalls = scale(x.OldMaxLLMCalls)
	}
	if x.MaxLLMTokens == 0 {
		x.MaxLLMTokens = scale(x.OldMaxLLMTokens)
	}
	return c.control(ctx, &messages.Control{Campaign: campaign, Action: messages.ActionExtend, Budget: x.Budget,
		MaxLLMCalls: x.MaxLLMCalls, MaxLLMTokens: x.MaxLLMTokens})
}

// control publishes a lifecycle action and waits until a reflector has
// applied it, or ctx ends (give it a deadline).
func (c *Client) control(ctx context.Context, m *messages.Control) (store.ControlResult, error) {
	campaign, action := m.Campaign, m.Action
	if _, err := c.Store.Spec(ctx, campaign); err != nil {
		return store.ControlResult{}, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return store.ControlResult{}, err
	}
	m.Schema, m.ID, m.At = messages.SchemaVersion, action+"-"+hex.EncodeToString(b[:]), time.Now().UTC()
	if err := c.Bus.Publish(ctx, messages.UserSubject(messages.SubjectControl, c.Submitter, campaign), m); err != nil {
		return store.ControlResult{}, err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		r, ok, err := c.Store.ControlApplied(ctx, campaign, m.ID)
		if err != nil {
			return r, err
		}
		if ok {
			if r.Refused != "" {
				return r, fmt.Errorf("%s %s: %w: %s", action, campaign, ErrRefused, r.Refused)
			}
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("%s %s: published, but no reflector applied it in time (is one running?): %w", action, campaign, ctx.Err())
		case <-tick.C:
		}
	}
}

// Delete removes a finished campaign: its state in the store and its
// messages in the streams. A running or paused campaign must be
// cancelled first.
func (c *Client) Delete(ctx context.Context, campaign string) error {
	if err := messages.ValidateCampaignID(campaign); err != nil {
		return err
	}
	if err := c.Store.DeleteCampaign(ctx, campaign); err != nil {
		return err
	}
	for _, p := range []struct{ stream, subject string }{
		{messages.StreamCampaigns, "crucible.campaigns.*." + campaign},
		// Its submission and lifecycle actions by a named user
		// (messages.UserSubject).
		{messages.StreamCampaigns, "crucible.campaigns.*.user.*." + campaign},
		{messages.StreamPropose, messages.Subject(messages.SubjectPropose, campaign)},
		{messages.StreamCandidates, messages.Subject(messages.SubjectCandidates, campaign)},
		{messages.StreamRelax, messages.Subject(messages.SubjectRelax, campaign)},
		{messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, campaign)},
		{messages.StreamDiscoveries, messages.Subject(messages.SubjectDiscoveries, campaign)},
		{messages.StreamDiscoveries, messages.Subject(messages.SubjectVerdicts, campaign)},
		{messages.StreamDeadLetter, messages.SubjectDeadLetter + ".*." + campaign},
	} {
		if err := c.Bus.Purge(ctx, p.stream, p.subject); err != nil {
			return fmt.Errorf("delete %s: %w", campaign, err)
		}
	}
	return nil
}

// Lifecycle adapts the client's lifecycle operations to callers that
// want only an error (the console's controller): an action with nothing
// to do (pausing a paused campaign) is no error, a refused one is
// (ErrRefused). A call without a deadline waits at most ControlTimeout
// for a reflector to apply the action.
type Lifecycle struct{ Client *Client }

// ControlTimeout bounds Lifecycle's wait for a reflector.
const ControlTimeout = 30 * time.Second

func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, ControlTimeout)
}

// Cancel is Client.Cancel.
func (l Lifecycle) Cancel(ctx context.Context, campaign string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := l.Client.Cancel(ctx, campaign)
	return err
}

// Pause is Client.Pause.
func (l Lifecycle) Pause(ctx context.Context, campaign string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := l.Client.Pause(ctx, campaign)
	return err
}

// Resume is Client.Resume.
func (l Lifecycle) Resume(ctx context.Context, campaign string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := l.Client.Resume(ctx, campaign)
	return err
}

// Extend is Client.Extend.
func (l Lifecycle) Extend(ctx context.Context, campaign string, budget int) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := l.Client.Extend(ctx, campaign, &Extension{Budget: budget})
	return err
}

// Delete is Client.Delete.
func (l Lifecycle) Delete(ctx context.Context, campaign string) error {
	return l.Client.Delete(ctx, campaign)
}

// Control applies the lifecycle verb pause, resume, cancel or extend (to
// x, which Extend completes) to the campaign.
func (c *Client) Control(ctx context.Context, verb, campaign string, x *Extension) (store.ControlResult, error) {
	switch verb {
	case "pause":
		return c.Pause(ctx, campaign)
	case "resume":
		return c.Resume(ctx, campaign)
	case "cancel":
		return c.Cancel(ctx, campaign)
	case "extend":
		return c.Extend(ctx, campaign, x)
	}
	return store.ControlResult{}, fmt.Errorf("unknown lifecycle verb %q", verb)
}

// ControlNote says what an applied action left to happen, and what an
// extension set.
func ControlNote(verb string, r store.ControlResult, x *Extension) string {
	switch {
	case !r.Changed:
		return " (nothing to do)"
	case verb == "cancel" && !r.Finish:
		return ": in-flight work is being evaluated; the final summary follows (crucible campaign show)"
	case verb == "extend":
		note := fmt.Sprintf(", budget %d", x.Budget)
		for _, l := range []struct {
			name     string
			old, new int
		}{{"max_llm_calls", x.OldMaxLLMCalls, x.MaxLLMCalls}, {"max_llm_tokens", x.OldMaxLLMTokens, x.MaxLLMTokens}} {
			if l.new != 0 {
				note += fmt.Sprintf(", %s %s → %d", l.name, limit(l.old), l.new)
			}
		}
		return note
	}
	return ""
}

// limit is an LLM limit as the notes show it.
func limit(n int) string {
	if n == 0 {
		return "unbounded"
	}
	return fmt.Sprint(n)
}
