package messages

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// SchemaVersion is the version of every message type in this package. A
// consumer rejects (dead-letters) a message with another version.
const SchemaVersion = 1

// Subject prefixes; the campaign id is appended as the last token.
const (
	SubjectSubmit      = "crucible.campaigns.submit"
	SubjectStatus      = "crucible.campaigns.status"
	SubjectReflections = "crucible.campaigns.reflections"
	// SubjectProposals carries the proposers' journal of recorded
	// generations (ProposalRecord).
	SubjectProposals   = "crucible.campaigns.proposals"
	SubjectPropose     = "crucible.propose"
	SubjectCandidates  = "crucible.candidates"
	SubjectEvaluations = "crucible.evaluations"
	SubjectRelax       = "crucible.relax"
	SubjectDiscoveries = "crucible.discoveries"
	SubjectVerdicts    = "crucible.verdicts"
	SubjectDeadLetter  = "crucible.deadletter"
)

// Subject returns prefix.<campaign>.
func Subject(prefix, campaign string) string { return prefix + "." + campaign }

// CampaignOfSubject returns the campaign token of a subject built by
// Subject (its last token).
func CampaignOfSubject(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// SubmitSubject is the subject a campaign is submitted on: by a client
// logged in as a named NATS user (submitter), with the user in the
// subject, crucible.campaigns.submit.user.<submitter>.<campaign>, which
// the server's permissions let only that user publish (so the proposer
// knows who submitted and applies that user's limits); without one,
// crucible.campaigns.submit.<campaign>. A submitter that is not a valid
// subject token (ValidSubmitter) submits without one.
func SubmitSubject(submitter, campaign string) string {
	return UserSubject(SubjectSubmit, submitter, campaign)
}

// SubmitterOfSubject is the user of a submission subject built by
// SubmitSubject, or "" for a submission without one.
func SubmitterOfSubject(subject string) string { return UserOfSubject(SubjectSubmit, subject) }

// UserSubject is prefix.user.<user>.<campaign> for a message a named NATS
// user sends about a campaign (a submission, a lifecycle action), whose
// user the server's permissions vouch for; prefix.<campaign> without a
// user (or with a name no subject token can carry).
func UserSubject(prefix, user, campaign string) string {
	if !ValidSubmitter(user) {
		return Subject(prefix, campaign)
	}
	return prefix + ".user." + user + "." + campaign
}

// UserOfSubject is the user of a subject built by UserSubject with
// prefix, or "" for one without a user.
func UserOfSubject(prefix, subject string) string {
	rest, ok := strings.CutPrefix(subject, prefix+".user.")
	if !ok {
		return ""
	}
	user, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	return user
}

// submitterPattern: a NATS user name that can stand in a subject token.
var submitterPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidSubmitter reports whether a NATS user name can be carried by a
// submission's subject: 1–64 letters, digits, '-' or '_'.
func ValidSubmitter(user string) bool { return submitterPattern.MatchString(user) }

// DeadLetterSubject is crucible.deadletter.<stream>.<campaign>; campaign is
// "unknown" when the message could not be decoded far enough to tell.
func DeadLetterSubject(stream, campaign string) string {
	if campaign == "" || !campaignIDPattern.MatchString(campaign) {
		campaign = "unknown"
	}
	return SubjectDeadLetter + "." + strings.ToLower(stream) + "." + campaign
}

// Retention says how a stream keeps messages.
type Retention int

const (
	// LimitsRetention keeps messages until the stream's age or size limits
	// remove them, whoever has read them.
	LimitsRetention Retention = iota
	// WorkQueueRetention removes a message once one consumer acknowledged
	// it: one durable consumer shared by all replicas of a service.
	WorkQueueRetention
)

// StreamSpec describes one JetStream stream, independent of the client
// library (internal/bus turns it into a stream configuration).
type StreamSpec struct {
	Name        string
	Description string
	Subjects    []string
	Retention   Retention
	MaxAge      time.Duration // 0: unlimited
	// Duplicates is the window in which a repeated Nats-Msg-Id is dropped.
	Duplicates time.Duration
}

// Stream names.
const (
	StreamCampaigns   = "CAMPAIGNS"
	StreamPropose     = "PROPOSE"
	StreamCandidates  = "CANDIDATES"
	StreamEvaluations = "EVALUATIONS"
	StreamRelax       = "RELAX"
	StreamDiscoveries = "DISCOVERIES"
	StreamDeadLetter  = "DEADLETTER"
)

// DuplicateWindow is the duplicate-detection window of every stream. It is
// longer than any redelivery delay the services use, so a message that is
// re-published after a crash is dropped by the stream.
const DuplicateWindow = 10 * time.Minute

// WorkQueueMaxAge bounds how long a message stays in a work queue. A
// work queue removes a message once it is acknowledged, but NATS 2.9 can
// lose the removal of acknowledged messages when it is killed (they stay,
// acknowledged, for good); the age limit removes them. Unacknowledged work
// waits this long at most: a week outlasts any outage of a service.
const WorkQueueMaxAge = 7 * 24 * time.Hour

// Streams are the streams Crucible uses (docs/architecture.md, "Subjects
// and streams").
var Streams = []StreamSpec{
	{
		Name:        StreamCampaigns,
		Description: "campaign submissions, status events and reflections",
		Subjects:    []string{"crucible.campaigns.>"},
		Retention:   LimitsRetention,
		MaxAge:      90 * 24 * time.Hour,
		Duplicates:  DuplicateWindow,
	},
	{
		Name:        StreamPropose,
		Description: "generation requests: work for the proposers",
		Subjects:    []string{SubjectPropose + ".>"},
		Retention:   WorkQueueRetention,
		MaxAge:      WorkQueueMaxAge,
		Duplicates:  DuplicateWindow,
	},
	{
		Name:        StreamCandidates,
		Description: "proposed candidate structures: work for the evaluators",
		Subjects:    []string{SubjectCandidates + ".>"},
		Retention:   WorkQueueRetention,
		MaxAge:      WorkQueueMaxAge,
		Duplicates:  DuplicateWindow,
	},
	{
		Name:        StreamRelax,
		Description: "screened candidates to relax: work for the evaluators' relax role",
		Subjects:    []string{SubjectRelax + ".>"},
		Retention:   WorkQueueRetention,
		MaxAge:      WorkQueueMaxAge,
		Duplicates:  DuplicateWindow,
	},
	{
		Name:        StreamEvaluations,
		Description: "evaluated candidates: properties, stability, score",
		Subjects:    []string{SubjectEvaluations + ".>"},
		Retention:   LimitsRetention,
		MaxAge:      90 * 24 * time.Hour,
		Duplicates:  DuplicateWindow,
	},
	{
		Name:        StreamDiscoveries,
		Description: "the judge's accepted discoveries and rejected verdicts",
		Subjects:    []string{SubjectDiscoveries + ".>", SubjectVerdicts + ".>"},
		Retention:   LimitsRetention,
		MaxAge:      365 * 24 * time.Hour,
		Duplicates:  DuplicateWindow,
	},
	{
		Name:        StreamDeadLetter,
		Description: "messages no service could process, with the reason",
		Subjects:    []string{SubjectDeadLetter + ".>"},
		Retention:   LimitsRetention,
		MaxAge:      90 * 24 * time.Hour,
		Duplicates:  DuplicateWindow,
	},
}

// ConsumerSpec describes one durable pull consumer.
type ConsumerSpec struct {
	Name          string
	Stream        string
	FilterSubject string
	// AckWait is how long a delivered message may stay unacknowledged
	// before it is redelivered. A handler working longer extends it (the
	// consumer loop reports progress every third of it), so it is short:
	// it is how long the work of a replica that died waits before another
	// replica takes it over.
	AckWait time.Duration
	// MaxDeliver is how many times a message whose handling keeps failing
	// is delivered before it is dead-lettered with the last error (0:
	// the bus's default, 10). Failures that are waits (an ordered
	// campaign's evaluation ahead of its turn) or outages of Redis or
	// NATS are retried until they pass, and never dead-lettered; messages
	// that cannot be decoded, are oversize, name an unknown campaign or
	// make the handler panic are dead-lettered at once (internal/bus).
	MaxDeliver int
	// MaxAckPending bounds the messages out for processing at once, across
	// all replicas.
	MaxAckPending int
}

// Durable consumer names.
const (
	ConsumerProposerSubmit = "proposer-submit"
	ConsumerProposer       = "proposer"
	ConsumerEvaluator      = "evaluator"
	ConsumerRelax          = "evaluator-relax"
	ConsumerReflector      = "reflector"
	ConsumerJudge          = "judge"
	// ConsumerControl is the reflector's consumer of lifecycle actions.
	ConsumerControl = "reflector-control"
)

// Consumers are the durable consumers of the four services. All replicas
// of a service share its consumer, so adding a replica adds throughput and
// a replica's unacknowledged work is redelivered to the others.
var Consumers = []ConsumerSpec{
	{Name: ConsumerProposerSubmit, Stream: StreamCampaigns, FilterSubject: SubjectSubmit + ".>", AckWait: ackWait, MaxAckPending: 64},
	{Name: ConsumerProposer, Stream: StreamPropose, FilterSubject: SubjectPropose + ".>", AckWait: ackWait, MaxAckPending: 256},
	{Name: ConsumerEvaluator, Stream: StreamCandidates, FilterSubject: SubjectCandidates + ".>", AckWait: ackWait, MaxAckPending: 1024},
	{Name: ConsumerRelax, Stream: StreamRelax, FilterSubject: SubjectRelax + ".>", AckWait: ackWait, MaxAckPending: 256},
	{Name: ConsumerReflector, Stream: StreamEvaluations, FilterSubject: SubjectEvaluations + ".>", AckWait: ackWait, MaxAckPending: 1024},
	{Name: ConsumerJudge, Stream: StreamEvaluations, FilterSubject: SubjectEvaluations + ".>", AckWait: ackWait, MaxAckPending: 512},
	{Name: ConsumerControl, Stream: StreamCampaigns, FilterSubject: SubjectControl + ".>", AckWait: ackWait, MaxAckPending: 64},
}

// ackWait is every consumer's AckWait: long enough to ride out a missed
// progress report or two (a NATS leader election, a long GC pause), short
// enough that a crashed replica's work moves on quickly.
const ackWait = 10 * time.Second

// ConsumerByName returns the consumer spec with the given name.
func ConsumerByName(name string) (ConsumerSpec, error) {
	for _, c := range Consumers {
		if c.Name == name {
			return c, nil
		}
	}
	return ConsumerSpec{}, fmt.Errorf("unknown consumer %q", name)
}

// campaignIDPattern: a subject token and a Redis hash tag, readable in a
// file name: letters, digits, '-' and '_', at most 64.
var campaignIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidateCampaignID checks that id can be used as a subject token, a
// Redis hash tag and a file name.
func ValidateCampaignID(id string) error {
	if !campaignIDPattern.MatchString(id) {
		return fmt.Errorf("campaign id %q: want 1–64 letters, digits, '-' or '_', starting with a letter or digit", id)
	}
	return nil
}
