package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Dead letters are the messages no service could process, each with the
// reason, in the DEADLETTER stream on crucible.deadletter.<stream>.<campaign>
// (internal/bus dead-letters them). DeadLetters reads them; Retry
// re-publishes their messages to the subjects they came from.

// DeadLetterFilter selects dead letters. The zero filter selects all.
type DeadLetterFilter struct {
	// Campaign is the campaign's id ("unknown" for messages that could
	// not be decoded far enough to tell); "" for every campaign.
	Campaign string
	// Stream is the stream the message came from (CANDIDATES, propose,
	// …; any case); "" for every stream.
	Stream string
	// Reason keeps the dead letters whose reason contains it (any case).
	Reason string
	// Since keeps the dead letters stored in the last Since; 0 for all.
	Since time.Duration
	// Seqs keeps the dead letters with these sequences in DEADLETTER.
	Seqs []uint64
}

// Empty reports whether f selects every dead letter.
func (f DeadLetterFilter) Empty() bool {
	return f.Campaign == "" && f.Stream == "" && f.Reason == "" && f.Since == 0 && len(f.Seqs) == 0
}

// Check says what is wrong with f's campaign or stream, or nil.
func (f DeadLetterFilter) Check() error {
	_, err := f.subject()
	return err
}

// subject is the DEADLETTER subject filter of f's campaign and stream.
func (f DeadLetterFilter) subject() (string, error) {
	stream, campaign := "*", "*"
	if f.Campaign != "" {
		if err := messages.ValidateCampaignID(f.Campaign); err != nil {
			return "", err
		}
		campaign = f.Campaign
	}
	if f.Stream != "" {
		var names []string
		for _, s := range messages.Streams {
			if s.Name != messages.StreamDeadLetter {
				names = append(names, s.Name)
			}
		}
		if !slices.Contains(names, strings.ToUpper(f.Stream)) {
			return "", fmt.Errorf("stream %q: want one of %s", f.Stream, strings.Join(names, ", "))
		}
		stream = strings.ToLower(f.Stream)
	}
	return messages.SubjectDeadLetter + "." + stream + "." + campaign, nil
}

// DeadLetterEntry is a dead letter with its sequence in the DEADLETTER
// stream (what Retry and "deadletter retry --seq" name it by) and the
// campaign of its subject.
type DeadLetterEntry struct {
	Seq      uint64 `json:"seq"`
	Campaign string `json:"campaign"`
	messages.DeadLetter
}

// DeadLetters reads the dead letters f selects, oldest first. A message
// of the stream that is not a dead letter is listed with the reason it
// does not decode (and Retry refuses it).
func (c *Client) DeadLetters(ctx context.Context, f DeadLetterFilter) ([]DeadLetterEntry, error) {
	filter, err := f.subject()
	if err != nil {
		return nil, err
	}
	name := c.Bus.Stream(messages.StreamDeadLetter)
	st, err := c.Bus.JS.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{c.Bus.Subject(filter)}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if f.Since > 0 {
		start := time.Now().Add(-f.Since)
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &start
	}
	cons, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("read dead letters: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("read dead letters: %w", err)
	}
	defer it.Stop()
	reason := strings.ToLower(f.Reason)
	var out []DeadLetterEntry
	for {
		msg, err := it.Next(jetstream.NextMaxWait(time.Second))
		switch {
		case ctx.Err() != nil:
			return out, ctx.Err()
		case errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
			return out, nil // nothing more matches the filter
		case err != nil:
			return out, fmt.Errorf("read dead letters: %w", err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return out, fmt.Errorf("read dead letters: %w", err)
		}
		e := DeadLetterEntry{Seq: md.Sequence.Stream, Campaign: messages.CampaignOfSubject(msg.Subject())}
		if derr := messages.Decode(msg.Data(), &e.DeadLetter); derr != nil {
			e.DeadLetter = messages.DeadLetter{Reason: "not a dead letter: " + derr.Error(), Size: len(msg.Data()), At: md.Timestamp}
		}
		if strings.Contains(strings.ToLower(e.Reason), reason) && (len(f.Seqs) == 0 || slices.Contains(f.Seqs, e.Seq)) {
			out = append(out, e)
		}
		if md.NumPending == 0 || md.Sequence.Stream >= info.State.LastSeq {
			return out, nil
		}
	}
}

// ReasonClass is a dead letter's reason without its particulars, for
// counting dead letters by cause: "permanent failure: " left out, the
// campaign's id replaced by CAMPAIGN and every word with a digit (ids,
// counts, values) by N, cut to 100 characters ("generation N: unknown
// campaign CAMPAIGN", "failed N deliveries: …", "oversize message: N
// bytes, …").
func (e DeadLetterEntry) ReasonClass() string {
	words := strings.Fields(strings.ReplaceAll(e.Reason, bus.ErrPermanent.Error()+": ", ""))
	for i, w := range words {
		core, tail := w, ""
		if n := len(core); n > 0 && strings.ContainsAny(core[n-1:], ":,;.") {
			core, tail = core[:n-1], core[n-1:]
		}
		switch {
		case e.Campaign != "" && core == e.Campaign:
			words[i] = "CAMPAIGN" + tail
		case strings.IndexFunc(core, unicode.IsDigit) >= 0:
			words[i] = "N" + tail
		}
	}
	return shorten(strings.Join(words, " "), 100)
}

// DeadLetterCounts counts dead letters by ReasonClass.
func DeadLetterCounts(entries []DeadLetterEntry) map[string]int {
	counts := map[string]int{}
	for _, e := range entries {
		counts[e.ReasonClass()]++
	}
	return counts
}

// WriteDeadLetters writes the last limit entries (all when limit ≤ 0) as
// a table followed by the count of every entry by reason, or as one JSON
// object per line with the counts written to summary.
func WriteDeadLetters(w, summary io.Writer, entries []DeadLetterEntry, asJSON bool, limit int) error {
	shown := entries
	if limit > 0 && len(shown) > limit {
		shown = shown[len(shown)-limit:]
	}
	if asJSON {
		enc := json.NewEncoder(w)
		for _, e := range shown {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSEQ\tSTREAM\tSUBJECT\tCAMPAIGN\tDELIVERIES\tSIZE\tREASON")
		for _, e := range shown {
			size := strconv.Itoa(e.Size)
			if e.Truncated {
				size += " (cut)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", e.At.UTC().Format("2006-01-02 15:04:05"), e.Seq, e.Stream, e.Subject,
				e.Campaign, e.Deliveries, size, shorten(e.Reason, 120))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		summary = w
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintln(summary, "no dead letters")
		return err
	}
	fmt.Fprintf(summary, "%d dead letters", len(entries))
	if len(shown) < len(entries) {
		fmt.Fprintf(summary, " (the last %d shown)", len(shown))
	}
	fmt.Fprintln(summary, ", by reason:")
	counts := DeadLetterCounts(entries)
	classes := make([]string, 0, len(counts))
	for k := range counts {
		classes = append(classes, k)
	}
	sort.Slice(classes, func(i, j int) bool {
		if counts[classes[i]] != counts[classes[j]] {
			return counts[classes[i]] > counts[classes[j]]
		}
		return classes[i] < classes[j]
	})
	for _, k := range classes {
		fmt.Fprintf(summary, "%8d  %s\n", counts[k], k)
	}
	return nil
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Retry outcomes.
const (
	RetryPublished = "retried"         // re-published, the dead letter removed
	RetryDuplicate = "already retried" // re-published before, within the duplicate window: the stream dropped it, the dead letter removed
	RetryDryRun    = "would retry"     // dry run: nothing done
	RetryRefused   = "refused"         // cannot be retried (Reason says why)
)

// retryTimeout bounds the re-publishing and removal of one dead letter.
const retryTimeout = 30 * time.Second

// ErrNeedsOperator wraps a retry the NATS server refused for want of
// permission: re-publishing work and removing dead letters are an
// operator's actions, with the admin credentials.
var ErrNeedsOperator = errors.New("deadletter retry needs the operator's NATS credentials (the admin user): this user may not re-publish work or remove dead letters")

// RetryOutcome is what Retry did with one dead letter.
type RetryOutcome struct {
	Seq      uint64 `json:"seq"`
	Campaign string `json:"campaign"`
	Subject  string `json:"subject"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason,omitempty"`
}

// retryable says why e cannot be re-published, or "".
func retryable(e DeadLetterEntry) string {
	if e.Truncated {
		return fmt.Sprintf("body truncated: the dead letter kept %d of its %d bytes, so the message cannot be re-sent", len(e.Data), e.Size)
	}
	if e.Stream == "" || e.Subject == "" {
		return "no original stream or subject to re-publish to"
	}
	for _, s := range messages.Streams {
		if s.Name != e.Stream || s.Name == messages.StreamDeadLetter {
			continue
		}
		for _, p := range s.Subjects {
			if prefix, ok := strings.CutSuffix(p, ">"); ok && strings.HasPrefix(e.Subject, prefix) && len(e.Subject) > len(prefix) {
				return ""
			}
		}
		return fmt.Sprintf("subject %s is not one of stream %s's", e.Subject, e.Stream)
	}
	return fmt.Sprintf("stream %q is not a stream a service consumes", e.Stream)
}

// Retry re-publishes each entry's message, its original body, to its
// original subject with its original headers, a new Nats-Msg-Id
// ("retry/" and the dead letter's id) and HeaderRetryOf, then removes the
// dead letter from DEADLETTER. Retrying twice publishes once: the second
// finds no dead letter to retry, or, within the stream's duplicate window,
// is dropped by the stream. A truncated dead letter (its body incomplete)
// is refused, as is one without a work subject. With dryRun nothing is
// published or removed. A message whose cause is permanent (a forged
// candidate, a campaign that is closed or unknown) is dead-lettered again
// by the service. A permission refusal stops Retry with ErrNeedsOperator.
func (c *Client) Retry(ctx context.Context, entries []DeadLetterEntry, dryRun bool) ([]RetryOutcome, error) {
	out := make([]RetryOutcome, 0, len(entries))
	for _, e := range entries {
		o := RetryOutcome{Seq: e.Seq, Campaign: e.Campaign, Subject: e.Subject}
		if why := retryable(e); why != "" {
			o.Outcome, o.Reason = RetryRefused, why
			out = append(out, o)
			continue
		}
		if dryRun {
			o.Outcome = RetryDryRun
			out = append(out, o)
			continue
		}
		header := nats.Header{}
		for k, vs := range e.Headers {
			// Nats-Msg-Id and the other Nats- headers of the original
			// publish (expectations of the stream's state) do not apply.
			if !strings.HasPrefix(strings.ToLower(k), "nats-") {
				header[k] = vs
			}
		}
		header.Set(messages.HeaderRetryOf, strconv.FormatUint(e.Seq, 10))
		pctx, cancel := context.WithTimeout(ctx, retryTimeout)
		dup, err := c.Bus.Republish(pctx, e.Subject, "retry/"+e.MsgID(), header, e.Data)
		if err == nil {
			err = c.Bus.DeleteMessage(pctx, messages.StreamDeadLetter, e.Seq)
			if err != nil {
				err = fmt.Errorf("dead letter %d re-published, but not removed: %w", e.Seq, err)
			}
		}
		cancel()
		if err != nil {
			if bus.PermissionDenied(err) {
				return out, fmt.Errorf("%w: %v", ErrNeedsOperator, err)
			}
			return out, fmt.Errorf("retry dead letter %d: %w", e.Seq, err)
		}
		o.Outcome = RetryPublished
		if dup {
			o.Outcome = RetryDuplicate
		}
		out = append(out, o)
	}
	return out, nil
}

// WriteRetryOutcomes writes one line per outcome (one JSON object per
// line with asJSON) and, for people, a count of what was done.
func WriteRetryOutcomes(w io.Writer, outcomes []RetryOutcome, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, o := range outcomes {
			if err := enc.Encode(o); err != nil {
				return err
			}
		}
		return nil
	}
	counts := map[string]int{}
	for _, o := range outcomes {
		counts[o.Outcome]++
		line := fmt.Sprintf("%d\t%s\t%s", o.Seq, o.Subject, o.Outcome)
		if o.Outcome == RetryDuplicate {
			line += " (the stream dropped the copy)"
		}
		if o.Reason != "" {
			line += ": " + o.Reason
		}
		fmt.Fprintln(w, line)
	}
	var parts []string
	for _, k := range []string{RetryPublished, RetryDuplicate, RetryDryRun, RetryRefused} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) == 0 {
		parts = []string{"nothing to retry"}
	}
	_, err := fmt.Fprintf(w, "%d selected: %s\n", len(outcomes), strings.Join(parts, ", "))
	return err
}

// DeadLetterOptions are what "crucible deadletter list|retry" selects
// and how it writes.
type DeadLetterOptions struct {
	DeadLetterFilter
	// SeqList is --seq (pflag has no []uint64 flag).
	SeqList           []uint
	JSON, DryRun, All bool
	Limit             int
}

// Bind registers the options' flags.
func (o *DeadLetterOptions) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.Stream, "stream", "", "only messages of this stream: propose, candidates, relax, evaluations, campaigns or discoveries")
	fs.StringVar(&o.Reason, "reason", "", "only dead letters whose reason contains this text (any case)")
	fs.DurationVar(&o.Since, "since", 0, "only dead letters of the last DUR (30m, 24h)")
	fs.UintSliceVar(&o.SeqList, "seq", nil, "only the dead letters with these sequences (the SEQ column)")
	fs.BoolVar(&o.JSON, "json", false, "one JSON object per line")
	fs.IntVar(&o.Limit, "limit", 0, "list: show the last N (the count by reason covers all)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "retry: say what would be retried, change nothing")
	fs.BoolVar(&o.All, "all", false, "retry: every dead letter, when nothing else selects")
}

// Check says what is wrong with the options for verb (list or retry),
// before any connection is made.
func (o *DeadLetterOptions) Check(verb string) error {
	switch {
	case verb != "list" && verb != "retry":
		return fmt.Errorf("unknown verb %q (want list or retry)", verb)
	case o.Limit < 0 || o.Since < 0:
		return errors.New("--limit and --since must not be negative")
	case verb == "retry" && o.Empty() && len(o.SeqList) == 0 && !o.All:
		return errors.New("retry: select dead letters with CAMPAIGN, --stream, --reason, --since or --seq, or retry every one with --all")
	}
	return o.DeadLetterFilter.Check()
}

// RunDeadLetters lists (verb "list") or retries (verb "retry") the dead
// letters o selects, writing to w; a listing's count by reason goes to
// summary with --json.
func (c *Client) RunDeadLetters(ctx context.Context, w, summary io.Writer, verb string, o DeadLetterOptions) error {
	if err := o.Check(verb); err != nil {
		return err
	}
	f := o.DeadLetterFilter
	for _, s := range o.SeqList {
		f.Seqs = append(f.Seqs, uint64(s))
	}
	entries, err := c.DeadLetters(ctx, f)
	if err != nil {
		return err
	}
	if verb == "list" {
		return WriteDeadLetters(w, summary, entries, o.JSON, o.Limit)
	}
	outcomes, err := c.Retry(ctx, entries, o.DryRun)
	return errors.Join(WriteRetryOutcomes(w, outcomes, o.JSON), err)
}
