package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// DebateConfig equips a judge to debate stable hits (pkg/debate).
type DebateConfig struct {
	// Hulls and Reference are the debate tools' reference data; without
	// them the tools that need them answer that the data is missing.
	Hulls     *hull.Cache
	Reference *reference.DB
	// Agents builds the LLM roles and judge of a campaign with debate llm;
	// nil debates such campaigns offline and says so.
	Agents func(s *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge)
	// Workers bounds the debates running at once (default 4).
	Workers int
	// Transcripts bounds the transcripts kept per campaign
	// (store.DefaultTranscripts when ≤ 0).
	Transcripts int
}

// DefaultDebateWorkers is the default size of a judge's debate pool.
const DefaultDebateWorkers = 4

var (
	metricDebates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "judge", Name: "debates_total",
		Help: "Debates run, by mode (offline, llm) and verdict.",
	}, []string{"mode", "verdict"})
	metricDebateSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "judge", Name: "debate_seconds",
		Help: "Time a debate took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	})
)

// screenPassed reports whether a rules verdict passed the screen-level
// checks a debate starts from: a valid structure that meets the task's
// constraints and rules. Stability, confidence and novelty are the
// debate's to weigh.
func screenPassed(v *messages.Verdict) bool {
	for _, c := range v.Checks {
		switch c.Name {
		case judge.CheckValidity, judge.CheckConstraints, judge.CheckTaskRules:
			if !c.Passed {
				return false
			}
		}
	}
	return true
}

// findHistory is a campaign's discoveries that extend its hull (the
// store's finds), the history the novelty role reads.
type findHistory struct{ s *store.Store }

func (h findHistory) Discoveries(ctx context.Context, campaign string) ([]debate.Prior, error) {
	finds, err := h.s.Finds(ctx, campaign)
	if err != nil {
		return nil, err
	}
	out := make([]debate.Prior, len(finds))
	for i, f := range finds {
		out[i] = debate.Prior{ID: f.ID, Formula: f.Formula, EnergyPerAtom: f.EnergyPerAtom}
	}
	return out, nil
}

// debated returns the verdict of a hit: the rules verdict v when the hit
// is not debated (debates off, a screen check failed, the debate budget
// spent), else the verdict of its debate. A hit is debated once: a
// redelivered evaluation finds its transcript and publishes the verdict
// that follows from it; one whose judge died mid-debate is debated again
// without taking a second debate of the budget; of two replicas that
// debate it at once, the first transcript stored decides.
func (s *Service) debated(ctx context.Context, spec *messages.CampaignSpec, ev *messages.Evaluation, v messages.Verdict) (messages.Verdict, error) {
	v.JudgedBy = messages.JudgedByRules
	if spec == nil || spec.Judge.Debate == messages.DebateOff || spec.Judge.Debate == "" {
		v.JudgedNote = "debates are off for the campaign"
		return v, nil
	}
	if !screenPassed(&v) {
		v.JudgedNote = "failed a screen-level check: not debated"
		return v, nil
	}
	claim, err := s.store.ClaimDebate(ctx, ev.Campaign, ev.ID, spec.Judge.MaxDebates)
	if err != nil {
		return v, err
	}
	var doc []byte
	switch claim {
	case store.ClaimRules:
		v.JudgedNote = fmt.Sprintf("the campaign's %d debates (judge.max_debates) are spent", spec.Judge.MaxDebates)
		return v, nil
	case store.ClaimDone:
		if doc, err = s.store.Transcript(ctx, ev.Campaign, ev.ID); err != nil {
			return v, err
		}
	default:
		tr, err := s.runDebate(ctx, spec, ev)
		if err != nil {
			return v, fmt.Errorf("debate %s: %w", ev.ID, err)
		}
		data, err := json.Marshal(tr)
		if err != nil {
			return v, fmt.Errorf("debate %s: %w", ev.ID, err)
		}
		if doc, err = s.store.SaveTranscript(ctx, ev.Campaign, ev.ID, data, s.cfg.Debate.Transcripts); err != nil {
			return v, err
		}
		if err := s.publishExchanges(ctx, ev, tr); err != nil {
			return v, err
		}
	}
	var tr debate.Transcript
	if err := json.Unmarshal(doc, &tr); err != nil {
		return v, fmt.Errorf("debate %s: stored transcript: %w", ev.ID, err)
	}
	return withDebate(v, &tr), nil
}

// withDebate makes a rules verdict the debate's.
func withDebate(v messages.Verdict, tr *debate.Transcript) messages.Verdict {
	d := tr.Debate
	v.JudgedBy, v.JudgedNote, v.Debate = messages.JudgedByDebate, "", &d
	v.Accepted = d.Verdict == messages.DebateDiscovery
	v.Reasons = tr.Reasons()
	v.Report = fmt.Sprintf("Debate verdict: %s (confidence %.2f, %d round(s), roles %v). %s Next calculation: %s",
		d.Verdict, d.Confidence, len(d.Rounds), d.Roles, d.Report.Rationale, d.Report.NextCalculation)
	return v
}

// runDebate debates a hit within the replica's worker pool.
func (s *Service) runDebate(ctx context.Context, spec *messages.CampaignSpec, ev *messages.Evaluation) (*debate.Transcript, error) {
	select {
	case s.workers <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.workers }()
	c := &debate.Case{Spec: spec, Evaluation: ev, Sources: debate.Sources{
		Hulls: s.cfg.Debate.Hulls, Reference: s.cfg.Debate.Reference, History: findHistory{s.store}}}
	o := debate.Options{MaxRounds: spec.Judge.MaxRounds, TranscriptID: ev.Campaign + "/" + ev.ID}
	note := ""
	if spec.Judge.Debate == messages.DebateLLM {
		if s.cfg.Debate.Agents == nil {
			note = "no LLM endpoint is configured for the judge: debated offline"
		} else {
			o.Agents, o.Judge = s.cfg.Debate.Agents(s.store, spec)
		}
	}
	start := time.Now()
	tr, err := debate.Run(ctx, c, o)
	if err != nil {
		return nil, err
	}
	if note != "" {
		tr.Debate.JudgeFallback = note
	}
	metricDebates.WithLabelValues(tr.Debate.Mode, tr.Debate.Verdict).Inc()
	metricDebateSeconds.Observe(time.Since(start).Seconds())
	s.log.Debug("debate", zap.String("campaign", ev.Campaign), zap.String("candidate", ev.ID),
		zap.String("verdict", tr.Debate.Verdict), zap.Int("rounds", len(tr.Debate.Rounds)))
	return tr, nil
}

// DebateData is a debate configuration over the reference data: its
// hulls (built per chemical system on first use) and tables.
func DebateData(db *reference.DB) (DebateConfig, error) {
	hulls, err := hull.NewCache(db.HullEntries())
	if err != nil {
		return DebateConfig{}, fmt.Errorf("judge: reference hulls: %w", err)
	}
	return DebateConfig{Hulls: hulls, Reference: db}, nil
}

// publishExchanges publishes a debate's LLM exchanges to the campaign's
// prompt audit (kind debate). Their ids are the hit's and the exchange's
// index, so the exchanges of a debate run again after a crash replace
// none of the first run's that were published.
func (s *Service) publishExchanges(ctx context.Context, ev *messages.Evaluation, tr *debate.Transcript) error {
	for i, ex := range tr.Exchanges {
		p := &messages.Prompt{Schema: messages.SchemaVersion, Campaign: ev.Campaign, Kind: messages.PromptDebate, Candidate: ev.ID,
			Role: ex.Role, Attempt: 1, Index: i, Model: ex.Model, Temperature: 0.2, Format: "text", User: ex.Prompt, Answer: ex.Answer,
			Outcome: messages.PromptAnswered, Requests: 1, PromptTokens: ex.PromptTokens, CompletionTokens: ex.CompletionTokens, At: time.Now().UTC()}
		if ex.Error != "" {
			p.Outcome, p.Error = messages.PromptFailed, ex.Error
		}
		if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectPrompts, ev.Campaign), p); err != nil {
			return fmt.Errorf("debate %s: prompt audit: %w", ev.ID, err)
		}
	}
	return nil
}
