// Package chaos checks that Crucible keeps its guarantees while its
// processes die: a controller SIGKILLs and restarts service processes (and
// restarts the servers) during a campaign, and Verify then reads back what
// the campaign left in the streams and in Redis and lists every broken
// guarantee — lost or extra evaluations, anything counted twice, a
// discovery that is not an evaluated feasible stable candidate, a message
// left undelivered.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Report is what Verify found.
type Report struct {
	Campaign string
	Budget   int
	State    string
	// Proposed are the candidates the generations published; Evaluated
	// the distinct proposed candidates with an evaluation in the stream;
	// Seeds the distinct evaluated seed materials.
	Proposed, Evaluated, Seeds int
	// StreamEvaluations counts evaluation messages, duplicates included.
	StreamEvaluations int
	Discoveries       int
	Rejections        int
	// Relaxed counts the evaluations the relax tier published.
	Relaxed int
	// Orphans are acknowledged messages a crashed NATS server left in a
	// work queue (see checkDelivered).
	Orphans int
	// DeadLetters are the namespace's dead letters.
	DeadLetters []messages.DeadLetter
	// Start, when set, is when the run began: String gives the dead
	// letters' times as seconds since then, as the controller's log does.
	Start time.Time
	// Violations are the broken guarantees, one sentence each.
	Violations []string
}

// OK reports whether no guarantee was broken.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// String summarises the report in a few lines.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "campaign %s: %s, budget %d, proposed %d, evaluated %d (+%d seeds; %d relaxed), %d evaluation messages, %d discoveries, %d rejections, %d dead letters, %d orphaned work-queue messages",
		r.Campaign, r.State, r.Budget, r.Proposed, r.Evaluated, r.Seeds, r.Relaxed, r.StreamEvaluations, r.Discoveries, r.Rejections, len(r.DeadLetters), r.Orphans)
	// The violations go first: a long list of dead letters must not
	// push them out of a truncated log.
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "\n  VIOLATION: %s", v)
	}
	for _, g := range groupLetters(r.DeadLetters) {
		fmt.Fprintf(&b, "\n  %4d dead letters %s, %s to %s, e.g. %s", g.n, g.kind, r.when(g.first), r.when(g.last), g.example)
	}
	return b.String()
}

// when is t as the log gives times.
func (r *Report) when(t time.Time) string {
	if r.Start.IsZero() {
		return t.Format("15:04:05.0")
	}
	return fmt.Sprintf("%.1fs", t.Sub(r.Start).Seconds())
}

// letterGroup is the dead letters of one kind: the same stream, consumer
// and reason class (client.DeadLetterEntry.ReasonClass, what "crucible
// deadletter list" counts by).
type letterGroup struct {
	kind, example string
	n             int
	first, last   time.Time
}

// groupLetters groups dead letters by kind, most frequent first.
func groupLetters(letters []messages.DeadLetter) []*letterGroup {
	byKind := map[string]*letterGroup{}
	var groups []*letterGroup
	for _, d := range letters {
		e := client.DeadLetterEntry{Campaign: messages.CampaignOfSubject(d.Subject), DeadLetter: d}
		kind := fmt.Sprintf("%s/%s: %s", d.Stream, d.Consumer, e.ReasonClass())
		g := byKind[kind]
		if g == nil {
			g = &letterGroup{kind: kind, example: d.Reason, first: d.At, last: d.At}
			byKind[kind] = g
			groups = append(groups, g)
		}
		g.n++
		if d.At.Before(g.first) {
			g.first = d.At
		}
		if d.At.After(g.last) {
			g.last = d.At
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].n > groups[j].n })
	return groups
}

// maxListed bounds the ids quoted in one violation.
const maxListed = 8

func list(ids []string) string {
	sort.Strings(ids)
	if len(ids) > maxListed {
		return strings.Join(ids[:maxListed], ", ") + fmt.Sprintf(" … (%d in all)", len(ids))
	}
	return strings.Join(ids, ", ")
}

// Verify checks a finished campaign against the pipeline's guarantees:
//
//   - the campaign completed, and the evaluated candidate ids equal the
//     ids its generations published, as many as the budget;
//   - every seed material was evaluated once;
//   - no candidate is counted twice: every counter of the campaign equals
//     the count derived from the evaluation stream, every pool member is an
//     evaluated id in exactly one pool, the per-island, per-composition and
//     per-generation tallies match the stream;
//   - every discovery is an evaluated, feasible, stable, proposed
//     candidate, counted once, and every feasible stable candidate got
//     exactly one verdict;
//   - nothing is left undelivered: every durable consumer has no pending
//     or unacknowledged message, the work queues are empty, and every dead
//     letter carries a reason.
//
// It returns an error only when it cannot read the state.
func Verify(ctx context.Context, b *bus.Bus, s *store.Store, spec *messages.CampaignSpec) (*Report, error) {
	c := spec.ID
	r := &Report{Campaign: c, Budget: spec.Budget}
	st, err := s.State(ctx, c)
	if err != nil {
		return nil, err
	}
	r.State = st.Status
	if st.Status != messages.StateCompleted {
		r.violate("campaign state is %q, want %q", st.Status, messages.StateCompleted)
	}
	audit, err := s.ReadAudit(ctx, c, spec.Islands)
	if err != nil {
		return nil, err
	}

	// What the generations published.
	proposed := map[string]int{} // id → generation
	for g, ids := range audit.Accepted {
		for _, id := range ids {
			if prev, ok := proposed[id]; ok {
				r.violate("candidate %s published by generations %d and %d", id, prev, g)
			}
			proposed[id] = g
		}
	}
	r.Proposed = len(proposed)
	if r.Proposed != spec.Budget {
		r.violate("%d candidates proposed, want the budget %d", r.Proposed, spec.Budget)
	}
	if st.Counters.Proposed != r.Proposed {
		r.violate("counter proposed = %d, but the generations published %d", st.Counters.Proposed, r.Proposed)
	}

	// What the evaluators published.
	evals := map[string]*messages.Evaluation{} // first message per id
	seeds := map[string]*messages.Evaluation{}
	var differing []string
	n, err := ReadSubject(ctx, b, messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, c), func(data []byte) error {
		var ev messages.Evaluation
		if err := messages.Decode(data, &ev); err != nil {
			r.violate("undecodable evaluation in the stream: %v", err)
			return nil
		}
		into := evals
		if ev.Candidate.Seed {
			into = seeds
		}
		if first, ok := into[ev.ID]; ok {
			if outcome(first) != outcome(&ev) {
				differing = append(differing, ev.ID)
			}
			return nil
		}
		into[ev.ID] = &ev
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.StreamEvaluations = n
	r.Evaluated, r.Seeds = len(evals), len(seeds)
	for _, ev := range evals {
		if ev.Tier == messages.TierRelax {
			r.Relaxed++
			if spec.Oracle != messages.OracleRelax {
				r.violate("candidate %s relaxed in a campaign with the %s oracle", ev.ID, spec.Oracle)
			}
		}
	}
	if len(differing) > 0 {
		r.violate("candidates evaluated twice with different outcomes: %s", list(differing))
	}
	if dups := n - len(evals) - len(seeds); dups > 0 {
		// Harmless for the counters (the reflector records an id once),
		// but the stream's duplicate window should have dropped them.
		r.violate("%d duplicate evaluation messages in the stream", dups)
	}
	var missing, extra []string
	for id := range proposed {
		if evals[id] == nil {
			missing = append(missing, id)
		}
	}
	for id := range evals {
		if _, ok := proposed[id]; !ok {
			extra = append(extra, id)
		}
	}
	if len(missing) > 0 {
		r.violate("proposed but never evaluated: %s", list(missing))
	}
	if len(extra) > 0 {
		r.violate("evaluated but never proposed: %s", list(extra))
	}
	// No two candidates are one structure: the proposers deduplicate by
	// fingerprint, computing most only when a formula comes back.
	byFP := map[string][]string{}
	for id, ev := range evals {
		// An unreadable structure is the evaluator's to report.
		if fp, err := ev.Candidate.Structure.Fingerprint(); err == nil {
			byFP[fp] = append(byFP[fp], id)
		}
	}
	var same []string
	for fp, ids := range byFP {
		if len(ids) > 1 {
			slices.Sort(ids)
			same = append(same, fp+" ("+strings.Join(ids, ", ")+")")
		}
	}
	if len(same) > 0 {
		r.violate("candidates of the same structure: %s", list(same))
	}
	nSeeds := st.Counters.Seeds
	for id := range seeds {
		if i, err := seedIndex(c, id); err != nil || i >= nSeeds {
			r.violate("evaluation of unknown seed %s", id)
		}
	}
	if len(seeds) != nSeeds {
		r.violate("%d of %d seed materials evaluated", len(seeds), nSeeds)
	}

	// Recorded once: the reflector's record and every counter.
	var unrecorded, stray []string
	for id := range audit.Evaluated {
		if evals[id] == nil && seeds[id] == nil {
			stray = append(stray, id)
		}
	}
	for id := range evals {
		if !audit.Evaluated[id] {
			unrecorded = append(unrecorded, id)
		}
	}
	for id := range seeds {
		if !audit.Evaluated[id] {
			unrecorded = append(unrecorded, id)
		}
	}
	if len(unrecorded) > 0 {
		r.violate("evaluations never recorded by the reflector: %s", list(unrecorded))
	}
	if len(stray) > 0 {
		r.violate("recorded evaluations missing from the stream: %s", list(stray))
	}
	want := derivedCounters(evals)
	got := map[string]int{
		"evaluated": st.Counters.Evaluated, "valid": st.Counters.Valid, "hits": st.Counters.Hits,
		"stable": st.Counters.Stable, "stable_hits": st.Counters.StableHits, "known": st.Counters.Known,
		"novel": st.Counters.Novel, "ehull_n": st.EAboveHullN, "seeds_evaluated": st.Int("seeds_evaluated"),
	}
	want["seeds_evaluated"] = len(seeds)
	for _, k := range sortedKeys(want) {
		if got[k] != want[k] {
			r.violate("counter %s = %d, but the evaluation stream gives %d", k, got[k], want[k])
		}
	}
	if len(audit.Curve) != want["novel_stable"] {
		r.violate("discovery curve holds %d points, but %d evaluations are novel and stable", len(audit.Curve), want["novel_stable"])
	}
	if !slices.Equal(sortedUnique(audit.Curve), sorted(audit.Curve)) {
		r.violate("discovery curve repeats an evaluation index")
	}

	// Pools: each member an evaluated id, in one pool only, on the right
	// side.
	all := map[string]*messages.Evaluation{}
	for id, ev := range evals {
		all[id] = ev
	}
	for id, ev := range seeds {
		all[id] = ev
	}
	inPool := map[string]string{}
	for i := 0; i < spec.Islands; i++ {
		for _, kind := range []string{"success", "failure"} {
			members := audit.Pools[i][kind]
			if len(members) > spec.PoolSize {
				r.violate("island %d %s pool holds %d members, more than %d", i, kind, len(members), spec.PoolSize)
			}
			where := fmt.Sprintf("island %d %s pool", i, kind)
			for _, id := range members {
				if prev, ok := inPool[id]; ok {
					r.violate("candidate %s in the %s and the %s", id, prev, where)
				}
				inPool[id] = where
				ev := all[id]
				switch {
				case ev == nil:
					r.violate("%s member %s was never evaluated", where, id)
				case ev.Candidate.Island != i:
					r.violate("%s member %s belongs to island %d", where, id, ev.Candidate.Island)
				case (kind == "success") != ev.Feasible:
					r.violate("%s member %s has feasible=%v", where, id, ev.Feasible)
				}
			}
		}
	}
	for id := range audit.Docs {
		if _, ok := inPool[id]; !ok {
			r.violate("member document %s kept for no pool member", id)
		}
	}
	for id := range inPool {
		if !audit.Docs[id] {
			r.violate("pool member %s has no member document", id)
		}
	}
	islands, err := s.IslandCounts(ctx, c)
	if err != nil {
		return nil, err
	}
	perIsland := map[int]int{}
	for _, ev := range all {
		perIsland[ev.Candidate.Island]++
	}
	for i := 0; i < spec.Islands; i++ {
		if islands[i] != perIsland[i] {
			r.violate("island %d counts %d evaluations, the stream %d", i, islands[i], perIsland[i])
		}
	}
	comps, err := s.Compositions(ctx, c)
	if err != nil {
		return nil, err
	}
	perFormula := map[string]int{}
	for _, ev := range evals {
		perFormula[ev.Candidate.Formula]++
	}
	for f, n := range perFormula {
		if comps[f] == nil || comps[f].Queries != n {
			got := 0
			if comps[f] != nil {
				got = comps[f].Queries
			}
			r.violate("composition %s counts %d queries, the stream %d", f, got, n)
		}
	}
	for f, cs := range comps {
		if perFormula[f] == 0 && cs.Queries > 0 {
			r.violate("composition %s counts %d queries, the stream none", f, cs.Queries)
		}
	}
	perGen := map[int]int{}
	for id := range evals {
		if g, ok := proposed[id]; ok {
			perGen[g]++
		}
	}
	for g, ids := range audit.Accepted {
		f := audit.Generations[g]
		if got, _ := strconv.Atoi(f["evaluated"]); got != perGen[g] {
			r.violate("generation %d counts %d evaluations, the stream %d", g, got, perGen[g])
		}
		if f["done"] != "1" && len(ids) > 0 {
			r.violate("generation %d (%d candidates) never completed", g, len(ids))
		}
	}

	// Discoveries and verdicts.
	verdicts := map[string]int{}
	discovered := map[string]bool{}
	for _, subj := range []string{messages.SubjectDiscoveries, messages.SubjectVerdicts} {
		_, err := ReadSubject(ctx, b, messages.StreamDiscoveries, messages.Subject(subj, c), func(data []byte) error {
			var v messages.Verdict
			if err := messages.Decode(data, &v); err != nil {
				r.violate("undecodable verdict in the stream: %v", err)
				return nil
			}
			verdicts[v.ID]++
			ev := evals[v.ID]
			switch {
			case ev == nil:
				r.violate("verdict on %s, which has no evaluation", v.ID)
			case !ev.ForJudge():
				r.violate("verdict on %s, which is not for the judge: not feasible and stable or a hull outlier (feasible=%v, stable=%v, hull outlier=%v)", v.ID, ev.Feasible, ev.Stable, ev.HullOutlier)
			}
			if _, ok := proposed[v.ID]; !ok {
				r.violate("verdict on %s, which was never proposed", v.ID)
			}
			if v.Accepted {
				discovered[v.ID] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	r.Discoveries = len(discovered)
	r.Rejections = len(verdicts) - len(discovered)
	var twice, unjudged []string
	for id, k := range verdicts {
		if k > 1 {
			twice = append(twice, id)
		}
	}
	for id, ev := range evals {
		if ev.ForJudge() && verdicts[id] == 0 {
			unjudged = append(unjudged, id)
		}
	}
	if len(twice) > 0 {
		r.violate("candidates judged more than once: %s", list(twice))
	}
	if len(unjudged) > 0 {
		r.violate("feasible stable candidates without a verdict: %s", list(unjudged))
	}
	if st.Counters.Discoveries != len(discovered) {
		r.violate("counter discoveries = %d, the stream holds %d", st.Counters.Discoveries, len(discovered))
	}
	if !sameSet(audit.Discoveries, discovered) {
		r.violate("recorded discoveries (%d) differ from the stream's (%d)", len(audit.Discoveries), len(discovered))
	}

	// Generations and episodes: all closed, each counted once, each
	// episode reflected once (in the stream and in the memory bank).
	if st.Inflight != 0 {
		r.violate("%d generations still in flight", st.Inflight)
	}
	completed := 0
	for _, f := range audit.Generations {
		if n, _ := strconv.Atoi(f["n"]); n > 0 && f["done"] == "1" {
			completed++
		}
	}
	if st.Counters.Generations != completed {
		r.violate("counter generations = %d, but %d generations completed", st.Counters.Generations, completed)
	}
	reflected := map[int]int{}
	if _, err := ReadSubject(ctx, b, messages.StreamCampaigns, messages.Subject(messages.SubjectReflections, c), func(data []byte) error {
		var rf messages.Reflection
		if err := messages.Decode(data, &rf); err != nil {
			r.violate("undecodable reflection: %v", err)
			return nil
		}
		reflected[rf.Episode]++
		return nil
	}); err != nil {
		return nil, err
	}
	bank, _, err := s.Bank(ctx, spec.MemoryContext, 10000)
	if err != nil {
		return nil, err
	}
	inBank := map[int]int{}
	for _, rf := range bank {
		if rf.Campaign == c {
			inBank[rf.Episode]++
		}
	}
	for e := 0; e < spec.Episodes; e++ {
		if got := st.Int("ep" + strconv.Itoa(e) + "_evaluated"); got != spec.EpisodeBudget(e) {
			r.violate("episode %d counts %d evaluations, its budget is %d", e, got, spec.EpisodeBudget(e))
		}
		if reflected[e] != 1 || inBank[e] != 1 {
			r.violate("episode %d reflected %d times in the stream and %d times in the memory bank, want once", e, reflected[e], inBank[e])
		}
		if stats, err := s.EpisodeStats(ctx, c, e); err != nil || stats == nil {
			r.violate("episode %d has no statistics (%v)", e, err)
		}
	}

	// Final status.
	finals := 0
	if _, err := ReadSubject(ctx, b, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, c), func(data []byte) error {
		var s messages.Status
		if messages.Decode(data, &s) == nil && s.State == messages.StateCompleted {
			finals++
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if finals != 1 {
		r.violate("%d final status events, want 1", finals)
	}

	// Nothing left undelivered. Work of another campaign of the run (the
	// one the chaos test cancels) is done when that campaign has an
	// evaluation of it, or, for a generation request, when the campaign
	// was cancelled (its proposer acknowledges requests without proposing).
	others := map[string]map[string]bool{}
	evaluatedIn := func(campaign string) map[string]bool {
		if ids, ok := others[campaign]; ok {
			return ids
		}
		ids := map[string]bool{}
		_, _ = ReadSubject(ctx, b, messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, campaign), func(data []byte) error {
			var ev messages.Evaluation
			if messages.Decode(data, &ev) == nil {
				ids[ev.ID] = true
			}
			return nil
		})
		others[campaign] = ids
		return ids
	}
	evaluated := func(campaign, id string) bool {
		if campaign == c {
			return evals[id] != nil || seeds[id] != nil
		}
		return evaluatedIn(campaign)[id]
	}
	done := func(subject string, data []byte) bool {
		switch {
		case strings.HasPrefix(subject, messages.SubjectCandidates+"."):
			var cand messages.Candidate
			if messages.Decode(data, &cand) != nil {
				return false
			}
			return evaluated(cand.Campaign, cand.ID)
		case strings.HasPrefix(subject, messages.SubjectRelax+"."):
			var job messages.RelaxJob
			if messages.Decode(data, &job) != nil {
				return false
			}
			return evaluated(job.Screened.Campaign, job.Screened.ID)
		case strings.HasPrefix(subject, messages.SubjectPropose+"."):
			var req messages.GenerationRequest
			if messages.Decode(data, &req) != nil {
				return false
			}
			if req.Campaign != c {
				st, err := s.State(ctx, req.Campaign)
				return err == nil && st.Status == messages.StateCancelled
			}
			_, ok := audit.Accepted[req.Generation]
			return ok
		}
		return false
	}
	if err := checkDelivered(ctx, b, r, done); err != nil {
		return nil, err
	}
	return r, nil
}

// checkDelivered checks the durable consumers, the work queues and the
// dead letters. done reports whether the work of a message left in a work
// queue was done: NATS 2.9 can leave acknowledged messages behind in a
// work queue after its own crash (the acknowledgement reached the consumer
// but the message's removal never reached the disk); such orphans sit
// below the consumer's acknowledgement floor, are never delivered again,
// and are counted in Report.Orphans, not as violations; so are messages
// left behind after they were dead-lettered.
func checkDelivered(ctx context.Context, b *bus.Bus, r *Report, done func(subject string, data []byte) bool) error {
	if _, err := ReadSubject(ctx, b, messages.StreamDeadLetter, messages.SubjectDeadLetter+".>", func(data []byte) error {
		var d messages.DeadLetter
		if err := messages.Decode(data, &d); err != nil {
			r.violate("undecodable dead letter: %v", err)
			return nil
		}
		if strings.TrimSpace(d.Reason) == "" {
			r.violate("dead letter of %s/%s #%d without a reason", d.Stream, d.Consumer, d.Sequence)
		}
		r.DeadLetters = append(r.DeadLetters, d)
		return nil
	}); err != nil {
		return err
	}
	// A message dead-lettered was handled too: its dead letter carries its
	// body (whole, for any message of this size).
	lettered := map[string]bool{}
	for _, d := range r.DeadLetters {
		if !d.Truncated {
			lettered[string(d.Data)] = true
		}
	}
	for _, cs := range messages.Consumers {
		cons, err := b.JS.Consumer(ctx, b.Stream(cs.Stream), cs.Name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue // never used (no service of that kind ran)
		}
		if err != nil {
			return fmt.Errorf("consumer %s: %w", cs.Name, err)
		}
		info, err := cons.Info(ctx)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", cs.Name, err)
		}
		if info.NumPending > 0 || info.NumAckPending > 0 {
			r.violate("consumer %s: %d messages pending, %d unacknowledged", cs.Name, info.NumPending, info.NumAckPending)
		}
	}
	for _, name := range []string{messages.StreamCandidates, messages.StreamPropose, messages.StreamRelax} {
		s, err := b.JS.Stream(ctx, b.Stream(name))
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		if info.State.Msgs == 0 {
			continue
		}
		prefix := messages.SubjectCandidates
		switch name {
		case messages.StreamPropose:
			prefix = messages.SubjectPropose
		case messages.StreamRelax:
			prefix = messages.SubjectRelax
		}
		// A work queue admits no second consumer: read it message by
		// message.
		var undone []string
		found := uint64(0)
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && found < info.State.Msgs; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("stream %s message %d: %w", name, seq, err)
			}
			found++
			if subject := b.Unsubject(m.Subject); strings.HasPrefix(subject, prefix+".") && (lettered[string(m.Data)] || done(subject, m.Data)) {
				r.Orphans++
			} else {
				undone = append(undone, fmt.Sprintf("%s #%d", subject, seq))
			}
		}
		if len(undone) > 0 {
			r.violate("work queue %s holds %d messages whose work was never done (%s)", name, len(undone), list(undone))
		}
	}
	return nil
}

// outcome is what the counters take from an evaluation.
func outcome(ev *messages.Evaluation) string {
	return fmt.Sprintf("%v/%v/%v/%v/%v/%s", ev.Valid, ev.Feasible, ev.Stable, ev.Known, ev.Novel, ev.Candidate.Formula)
}

// derivedCounters counts the campaign's counters from its evaluations, as
// the reflector's script does.
func derivedCounters(evals map[string]*messages.Evaluation) map[string]int {
	m := map[string]int{"evaluated": len(evals)}
	for _, ev := range evals {
		add := func(k string, ok bool) {
			if ok {
				m[k]++
			} else if _, seen := m[k]; !seen {
				m[k] = 0
			}
		}
		add("valid", ev.Valid)
		add("hits", ev.Feasible)
		add("stable", ev.Stable)
		add("stable_hits", ev.Stable && ev.Feasible)
		add("known", ev.Known)
		add("novel", ev.Novel)
		add("ehull_n", ev.EAboveHull != nil)
	}
	for _, ev := range evals {
		if ev.Novel && ev.Stable {
			m["novel_stable"]++
		}
	}
	return m
}

func seedIndex(campaign, id string) (int, error) {
	rest, ok := strings.CutPrefix(id, campaign+"-seed")
	if !ok {
		return 0, fmt.Errorf("not a seed id: %s", id)
	}
	return strconv.Atoi(rest)
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "novel_stable" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sorted(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

func sortedUnique(xs []int) []int { return slices.Compact(sorted(xs)) }

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// ReadSubject calls fn with every message of stream whose subject matches
// subject (which may end in a wildcard), in stream order, and returns how
// many there were.
func ReadSubject(ctx context.Context, b *bus.Bus, stream, subject string, fn func(data []byte) error) (int, error) {
	return b.ReadSubject(ctx, stream, subject, func(_ string, data []byte) error { return fn(data) })
}
