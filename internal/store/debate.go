package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DefaultTranscripts is how many debate transcripts a campaign keeps, the
// most recent; older ones are dropped as new ones are stored.
const DefaultTranscripts = 2000

// Debate claims (ClaimDebate).
const (
	// ClaimNew: the hit was not debated before and takes one of the
	// campaign's debates.
	ClaimNew = "new"
	// ClaimResumed: a debate of the hit was started (and counted) but
	// left no transcript — its judge died mid-debate: debate it again,
	// without counting it twice.
	ClaimResumed = "resumed"
	// ClaimDone: the hit's transcript is stored; its verdict follows from
	// it, no debate runs.
	ClaimDone = "done"
	// ClaimRules: the campaign's debates are spent (now or when the hit
	// was first seen): the rule checks judge it.
	ClaimRules = "rules"
)

func (s *Store) debateClaimsKey(c string) string { return s.ck(c, "debate", "claims") }
func (s *Store) debateRulesKey(c string) string  { return s.ck(c, "debate", "rules") }
func (s *Store) transcriptKey(c, id string) string {
	return s.ck(c, "debate", "transcript", id)
}
func (s *Store) transcriptListKey(c string) string { return s.ck(c, "debate", "transcripts") }

// debateUsageKey is the debates' LLM account: their requests, answered
// calls and tokens (ReserveDebateCall, AddDebateUsage), which State adds
// to the campaign's.
func (s *Store) debateUsageKey(c string) string { return s.ck(c, "debate", "usage") }

// scriptClaimDebate: KEYS the claims set, the rules set, the transcript;
// ARGV the candidate id, the campaign's debate budget. A hit is decided
// once: done if its transcript exists, rules if it was judged by rules
// before, resumed if claimed before, else new while the budget lasts (and
// rules after).
var scriptClaimDebate = redis.NewScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return 'done' end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 'rules' end
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 'resumed' end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  redis.call('SADD', KEYS[2], ARGV[1])
  return 'rules'
end
redis.call('SADD', KEYS[1], ARGV[1])
return 'new'
`)

// ClaimDebate decides, once per hit, whether the hit is debated: one of
// ClaimNew, ClaimResumed, ClaimDone or ClaimRules. max is the campaign's
// debate budget (judge.max_debates).
func (s *Store) ClaimDebate(ctx context.Context, campaign, id string, max int) (string, error) {
	keys := []string{s.debateClaimsKey(campaign), s.debateRulesKey(campaign), s.transcriptKey(campaign, id)}
	v, err := scriptClaimDebate.Run(ctx, s.rdb, keys, id, max).Text()
	if err != nil {
		return "", fmt.Errorf("store: claim debate %s of %s: %w", id, campaign, err)
	}
	return v, nil
}

// DebatesUsed is how many of the campaign's debates were claimed.
func (s *Store) DebatesUsed(ctx context.Context, campaign string) (int, error) {
	n, err := s.rdb.SCard(ctx, s.debateClaimsKey(campaign)).Result()
	if err != nil {
		return 0, fmt.Errorf("store: debates of %s: %w", campaign, err)
	}
	return int(n), nil
}

// scriptSaveTranscript: KEYS the transcript, the list of transcripts;
// ARGV the document, the candidate id, how many to keep. The first
// transcript stored wins and is returned; the oldest beyond the bound are
// dropped.
var scriptSaveTranscript = redis.NewScript(`
local old = redis.call('GET', KEYS[1])
if old then return old end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[2])
local keep = tonumber(ARGV[3])
while redis.call('LLEN', KEYS[2]) > keep do
  local gone = redis.call('LPOP', KEYS[2])
  redis.call('DEL', string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[2]) .. gone)
end
return ARGV[1]
`)

// SaveTranscript stores a hit's debate transcript unless one is stored
// already, and returns the stored one: whichever replica finishes a
// debate first decides the hit's verdict. keep bounds the campaign's
// transcripts (DefaultTranscripts when ≤ 0).
func (s *Store) SaveTranscript(ctx context.Context, campaign, id string, doc []byte, keep int) ([]byte, error) {
	if keep <= 0 {
		keep = DefaultTranscripts
	}
	keys := []string{s.transcriptKey(campaign, id), s.transcriptListKey(campaign)}
	v, err := scriptSaveTranscript.Run(ctx, s.rdb, keys, doc, id, keep).Text()
	if err != nil {
		return nil, fmt.Errorf("store: transcript %s of %s: %w", id, campaign, err)
	}
	return []byte(v), nil
}

// ErrNoTranscript: no transcript is stored for the hit (never debated, or
// dropped as older than the campaign's bound).
var ErrNoTranscript = errors.New("no debate transcript")

// Transcript returns a hit's stored transcript.
func (s *Store) Transcript(ctx context.Context, campaign, id string) ([]byte, error) {
	v, err := s.rdb.Get(ctx, s.transcriptKey(campaign, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w for %s of %s", ErrNoTranscript, id, campaign)
	}
	if err != nil {
		return nil, fmt.Errorf("store: transcript %s of %s: %w", id, campaign, err)
	}
	return v, nil
}

// Transcripts returns the ids of the campaign's stored transcripts,
// oldest first.
func (s *Store) Transcripts(ctx context.Context, campaign string) ([]string, error) {
	ids, err := s.rdb.LRange(ctx, s.transcriptListKey(campaign), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("store: transcripts of %s: %w", campaign, err)
	}
	return ids, nil
}
