// Package control drives a campaign's generations, shared by the proposer
// (which starts a campaign and replaces empty generations) and the
// reflector (which requests the next generation when one completes, ends
// episodes and finishes the campaign). Every step is keyed by a trigger or
// a deterministic message id, so repeating it after a crash or a
// redelivery changes nothing.
package control

import (
	"context"
	"fmt"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// Control requests generations and publishes campaign status.
type Control struct {
	Bus   *bus.Bus
	Store *store.Store
	Log   *zap.Logger
}

// Request reserves a generation for trigger and publishes its request. It
// reports false when the campaign needs no generation now.
func (c *Control) Request(ctx context.Context, spec *messages.CampaignSpec, trigger string) (bool, error) {
	g, ok, err := c.Store.RequestGeneration(ctx, spec.ID, trigger)
	if err != nil || !ok {
		return false, err
	}
	return true, c.Publish(ctx, spec, g, trigger)
}

// Publish publishes the request of generation g, reserved for trigger.
// The message id makes a repeat harmless.
func (c *Control) Publish(ctx context.Context, spec *messages.CampaignSpec, g store.Generation, trigger string) error {
	req := &messages.GenerationRequest{
		Schema: messages.SchemaVersion, Campaign: spec.ID, Episode: g.Episode, Generation: g.Generation,
		Slots: g.Slots, Trigger: trigger, RequestedAt: time.Now().UTC(),
	}
	if err := c.Bus.Publish(ctx, messages.Subject(messages.SubjectPropose, spec.ID), req); err != nil {
		return err
	}
	c.Log.Debug("generation requested", zap.String("campaign", spec.ID), zap.Int("generation", g.Generation),
		zap.Int("episode", g.Episode), zap.Int("slots", g.Slots), zap.String("trigger", trigger))
	return nil
}

// Start requests up to the campaign's MaxInFlight generations, with
// triggers prefix/0, prefix/1, ….
func (c *Control) Start(ctx context.Context, spec *messages.CampaignSpec, prefix string) error {
	for k := 0; k < spec.MaxInFlight; k++ {
		ok, err := c.Request(ctx, spec, fmt.Sprintf("%s/%d", prefix, k))
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	return nil
}

// Finish publishes the campaign's final status with its summary. Both the
// reflector (budget spent) and the proposer (generator exhausted) may call
// it; the message id makes the event unique.
func (c *Control) Finish(ctx context.Context, spec *messages.CampaignSpec) error {
	if err := c.Store.MarkFinished(ctx, spec.ID, time.Now()); err != nil {
		return err
	}
	sum, st, err := c.Summary(ctx, spec)
	if err != nil {
		return err
	}
	status := &messages.Status{
		Schema: messages.SchemaVersion, Campaign: spec.ID, State: sum.State, Episode: st.Episode,
		Counters: sum.Counters, Summary: sum, At: time.Now().UTC(),
	}
	switch sum.State {
	case messages.StateExhausted:
		status.Message = fmt.Sprintf("the generator produced no new candidate in %d generations in a row; %d of %d evaluations done",
			store.ExhaustionLimit, sum.Evaluated, sum.Budget)
		if r := st.ExhaustedReason(); r != "" {
			status.Message = fmt.Sprintf("%s; %d of %d evaluations done", r, sum.Evaluated, sum.Budget)
		}
	case messages.StateCancelled:
		status.Message = fmt.Sprintf("cancelled; %d of %d evaluations done", sum.Evaluated, sum.Budget)
	}
	if err := c.Bus.Publish(ctx, messages.Subject(messages.SubjectStatus, spec.ID), status); err != nil {
		return err
	}
	c.Log.Info("campaign finished", zap.String("campaign", spec.ID), zap.String("state", sum.State),
		zap.Int("evaluated", sum.Evaluated), zap.Int("hits", sum.Hits), zap.Int("stable", sum.Stable))
	return nil
}

// Forbidden says why the NATS user by may not act on the campaign: it
// submitted none of it ("" when it may: no user, or the submitter).
func Forbidden(spec *messages.CampaignSpec, by string) string {
	if by == "" || by == spec.SubmittedBy {
		return ""
	}
	owner := "the operator's (submitted without a user)"
	if spec.SubmittedBy != "" {
		owner = "user " + spec.SubmittedBy + "'s"
	}
	return fmt.Sprintf("campaign %s is %s; user %s may act only on its own campaigns", spec.ID, owner, by)
}

// Apply applies a lifecycle action (crucible campaign pause, resume,
// cancel, extend) and its follow-ups, each idempotent, so that a
// redelivered action repeats them harmlessly: the state change once
// (Store.ApplyControl), the generations a resumed or extended campaign
// needs (triggers "<action id>/<k>"), a status event (message id of the
// action), and a cancelled campaign's final status when nothing was in
// flight. A refused action (resuming a cancelled campaign) is reported in
// the result, not as an error. by is the NATS user the action came from
// (messages.UserOfSubject; "" for none): a user may act only on the
// campaigns it submitted, and another's action is refused.
func (c *Control) Apply(ctx context.Context, spec *messages.CampaignSpec, m *messages.Control, by string) (store.ControlResult, error) {
	var r store.ControlResult
	var err error
	if why := Forbidden(spec, by); why != "" {
		r, err = c.Store.RefuseControl(ctx, m, why)
	} else {
		r, err = c.Store.ApplyControl(ctx, m, spec.MaxInFlight)
	}
	if err != nil {
		return r, err
	}
	log := c.Log.With(zap.String("campaign", spec.ID), zap.String("action", m.Action), zap.String("control", m.ID))
	if r.Refused != "" {
		log.Info("control action refused", zap.String("reason", r.Refused))
		return r, nil
	}
	for k := 0; k < r.Kick; k++ {
		ok, err := c.Request(ctx, spec, fmt.Sprintf("%s/%d", m.ID, k))
		if err != nil {
			return r, err
		}
		if !ok {
			break
		}
	}
	if r.Changed && m.Action != messages.ActionCancel {
		st, err := c.Store.State(ctx, spec.ID)
		if err != nil {
			return r, err
		}
		status := &messages.Status{
			Schema: messages.SchemaVersion, Campaign: spec.ID, State: r.Status, Episode: st.Episode,
			Counters: st.Counters, Control: m.ID, At: time.Now().UTC(),
			Message: fmt.Sprintf("%s: %d of %d evaluations done", m.Action, st.Counters.Evaluated, st.Budget),
		}
		if err := c.Bus.Publish(ctx, messages.Subject(messages.SubjectStatus, spec.ID), status); err != nil {
			return r, err
		}
	}
	if r.Finish {
		if err := c.Finish(ctx, spec); err != nil {
			return r, err
		}
	}
	log.Info("control action applied", zap.String("state", r.Status), zap.Bool("changed", r.Changed), zap.Int("generations", r.Kick))
	return r, nil
}

// Summary computes a campaign's metrics from its state (LLEMA §3.2, MADE
// §4.4).
func (c *Control) Summary(ctx context.Context, spec *messages.CampaignSpec) (*messages.Summary, *store.State, error) {
	st, err := c.Store.State(ctx, spec.ID)
	if err != nil {
		return nil, nil, err
	}
	sum := &messages.Summary{
		Campaign: spec.ID, Task: spec.Task.Name, Generator: spec.Generator.Kind, SubmittedBy: spec.SubmittedBy, State: st.Status,
		Counters: st.Counters, UniqueCompositions: st.Unique,
		ParetoObjectives: discovery.Objectives(spec.Task.Constraints),
	}
	sum.Budget = st.Budget
	if sum.Budget == 0 { // a campaign stored before budgets were in its state
		sum.Budget = spec.Budget
		st.Budget = spec.Budget
	}
	if sum.State == messages.StateRunning && st.Counters.Evaluated >= sum.Budget {
		sum.State = messages.StateCompleted
	}
	if !st.Created.IsZero() {
		end := time.Now()
		if !st.Finished.IsZero() {
			end = st.Finished // a finished campaign's time stops
		}
		sum.WallSeconds = end.Sub(st.Created).Seconds()
	}
	n := st.Counters
	sum.Generated = n.Proposed + n.Rejected
	sum.HitRate = discovery.Rate(n.Hits, n.Evaluated)
	sum.StabilityRate = discovery.Rate(n.StableHits, n.Evaluated)
	sum.MemorizationRate = discovery.Rate(n.Known, n.Evaluated)
	sum.HitRateGenerated = discovery.Rate(n.Hits, sum.Generated)
	sum.StabilityRateGenerated = discovery.Rate(n.StableHits, sum.Generated)
	sum.MemorizationRateGenerated = discovery.Rate(n.Known+n.RejectedKnown, sum.Generated)
	if st.EAboveHullN > 0 {
		sum.MeanEAboveHull = st.EAboveHullSum / float64(st.EAboveHullN)
	}
	sum.SpaceGroups = len(st.SpaceGroups)
	sum.SpaceGroupEntropy = spacegroup.EntropyOfCounts(st.SpaceGroups)
	sum.SpaceGroupEntropyStable = spacegroup.EntropyOfCounts(st.StableSpaceGroups)
	curve, err := c.Store.DiscoveryCurve(ctx, spec.ID)
	if err != nil {
		return nil, nil, err
	}
	sum.NStable = len(curve)
	sum.DiscoveryCurve = curve
	sum.AUDC = discovery.AUDC(curve, sum.Budget)
	sum.SDE = discovery.SDE(sum.NStable, sum.Budget)
	budgets := make([]int, spec.Episodes)
	for e := range budgets {
		budgets[e] = st.EpisodeBudget(e, spec.Episodes)
	}
	sum.Episodes = discovery.Episodes(curve, budgets, n.Evaluated)
	perEpisode := make([]float64, len(sum.Episodes))
	for i, y := range sum.Episodes {
		perEpisode[i] = float64(y.NStable)
	}
	if slope, ok := discovery.Slope(perEpisode); ok {
		sum.LearningSlope = &slope
	}
	tokens := float64(st.Counters.PromptTokens + st.Counters.CompletionTokens)
	if tokens > 0 && st.Counters.Hits > 0 {
		sum.TokensPerHit = tokens / float64(st.Counters.Hits)
	}
	if tokens > 0 && st.Counters.StableHits > 0 {
		sum.TokensPerStable = tokens / float64(st.Counters.StableHits)
	}
	if calls := float64(st.Counters.LLMCalls); calls > 0 {
		sum.PromptTokensPerCall = float64(st.Counters.PromptTokens) / calls
		sum.CompletionTokensPerCall = float64(st.Counters.CompletionTokens) / calls
	}
	if sum.MemorizationByGeneration, err = c.memorization(ctx, spec.ID); err != nil {
		return nil, nil, err
	}
	if sum.ParetoFront, err = c.pareto(ctx, spec); err != nil {
		return nil, nil, err
	}
	if sum.Judged, err = c.Store.Judged(ctx, spec.ID); err != nil {
		return nil, nil, err
	}
	return sum, st, nil
}

// memorizationBlocks bounds the points of the memorisation trend, so that
// the summary of a long campaign still fits a status message.
const memorizationBlocks = 1000

// memorization returns the memorisation rate of each generation (LLEMA
// Fig. 4 and 7), or of consecutive blocks of generations when there are
// more than memorizationBlocks.
func (c *Control) memorization(ctx context.Context, campaign string) ([]float64, error) {
	per, err := c.Store.GenerationMemorization(ctx, campaign)
	if err != nil || len(per) == 0 {
		return nil, err
	}
	gens := make([]int, 0, len(per))
	for g := range per {
		gens = append(gens, g)
	}
	sort.Ints(gens)
	blocks := min(memorizationBlocks, len(gens))
	out := make([]float64, blocks)
	for b := 0; b < blocks; b++ {
		evaluated, known := 0, 0
		for _, g := range gens[b*len(gens)/blocks : (b+1)*len(gens)/blocks] {
			evaluated += per[g][0]
			known += per[g][1]
		}
		if evaluated > 0 {
			out[b] = float64(known) / float64(evaluated)
		}
	}
	return out, nil
}

// pareto returns the novel hits that no other novel hit dominates on the
// task's properties, by their raw values (discovery.ParetoFront), best
// score first.
func (c *Control) pareto(ctx context.Context, spec *messages.CampaignSpec) ([]messages.ParetoPoint, error) {
	hits, err := c.Store.Hits(ctx, spec.ID)
	if err != nil || len(hits) == 0 {
		return []messages.ParetoPoint{}, err
	}
	points := make([]discovery.Point, 0, len(hits))
	for id, h := range hits {
		if h.Novel {
			points = append(points, discovery.Point{ID: id, Formula: h.Formula, Values: h.Values})
		}
	}
	front := discovery.ParetoFront(points, discovery.Objectives(spec.Task.Constraints))
	out := make([]messages.ParetoPoint, 0, len(front))
	for _, p := range front {
		h := hits[p.ID]
		out = append(out, messages.ParetoPoint{ID: p.ID, Formula: h.Formula, Values: h.Values, EAboveHull: h.EAboveHull, Margins: h.Margins, Score: h.Score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}
