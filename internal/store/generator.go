package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// scriptReserveCall counts one LLM request against a campaign's budgets.
// KEYS: the account the request is counted in (the campaign's state, or
// its debates' usage). ARGV: the call budget, the token budget (0: none),
// which the state's max_llm_calls and max_llm_tokens (set by an
// extension) replace; the state's key and the debates' usage key. The
// budgets bound both accounts together; the other account is only read
// (a user may write its own account alone: the judge may not write the
// state), so it is an argument, not a key. Both keys share the
// campaign's hash tag. Returns {the requests counted so far including
// this one, the tokens spent, the call budget, the token budget}, or
// {-1, requests, …} when the call budget is spent, {-2, tokens, …} when
// the token budget is (nothing is counted then).
var scriptReserveCall = redis.NewScript(`
local st, du = ARGV[3], ARGV[4]
local function n(key, f) return tonumber(redis.call('HGET', key, f) or 0) end
local maxCalls = tonumber(redis.call('HGET', st, 'max_llm_calls') or ARGV[1])
local maxTokens = tonumber(redis.call('HGET', st, 'max_llm_tokens') or ARGV[2])
local calls = n(st, 'llm_requests') + n(du, 'llm_requests')
if maxCalls > 0 and calls >= maxCalls then return {-1, calls, maxCalls, maxTokens} end
local tokens = n(st, 'prompt_tokens') + n(st, 'completion_tokens') + n(du, 'prompt_tokens') + n(du, 'completion_tokens')
if maxTokens > 0 and tokens >= maxTokens then return {-2, tokens, maxCalls, maxTokens} end
redis.call('HINCRBY', KEYS[1], 'llm_requests', 1)
return {calls + 1, tokens, maxCalls, maxTokens}
`)

// scriptReleaseCall gives back one counted LLM request. KEYS: the
// account it was counted in.
var scriptReleaseCall = redis.NewScript(`
if tonumber(redis.call('HGET', KEYS[1], 'llm_requests') or 0) <= 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'llm_requests', -1)
`)

// scriptExhaust ends a running campaign's proposing with a reason, once.
// KEYS: state. ARGV: reason. Returns 1 when this call changed the status.
var scriptExhaust = redis.NewScript(luaPrelude + `
redis.call('HSETNX', st, 'exhausted_reason', ARGV[1])
if redis.call('HGET', st, 'status') ~= 'running' then return 0 end
redis.call('HSET', st, 'status', 'exhausted')
return 1
`)

// Budgets a campaign's LLM requests may have spent (Reservation.Spent).
const (
	BudgetCalls  = "calls"  // max_llm_calls
	BudgetTokens = "tokens" // max_llm_tokens
)

// Reservation is the answer of ReserveLLMCall.
type Reservation struct {
	// Spent is "" when the request may be sent, else the budget that is
	// spent: BudgetCalls or BudgetTokens.
	Spent string
	// Used is what that budget counts so far: requests or tokens (with
	// Spent ""; the tokens).
	Used int
	// MaxCalls and MaxTokens are the budgets that applied: the caller's,
	// or those an extension set (0: none).
	MaxCalls, MaxTokens int
}

// OK reports whether the request may be sent.
func (r Reservation) OK() bool { return r.Spent == "" }

// ReserveLLMCall counts one LLM request of a campaign against its call
// budget maxCalls and checks its token budget maxTokens, prompt and
// completion tokens of every exchange so far, its debates' included (0:
// no budget); the limits an extension stored in the campaign's state
// replace both. Every request counts, a retry or a redelivered
// generation's included: they are real requests, so the count is not
// idempotent on purpose. Tokens are known only once answered, so the
// requests in flight when the token budget is reached may exceed it by
// their own tokens. The request is counted in the campaign's state (the
// proposer's and the reflector's requests); the judge counts its
// debates' with ReserveDebateCall.
func (s *Store) ReserveLLMCall(ctx context.Context, campaign string, maxCalls, maxTokens int) (Reservation, error) {
	return s.reserveCall(ctx, s.stateKey(campaign), campaign, maxCalls, maxTokens)
}

// ReserveDebateCall is ReserveLLMCall for a request of the judge's
// debates, counted in the debates' own account under the same budgets.
func (s *Store) ReserveDebateCall(ctx context.Context, campaign string, maxCalls, maxTokens int) (Reservation, error) {
	return s.reserveCall(ctx, s.debateUsageKey(campaign), campaign, maxCalls, maxTokens)
}

func (s *Store) reserveCall(ctx context.Context, account, campaign string, maxCalls, maxTokens int) (Reservation, error) {
	v, err := scriptReserveCall.Run(ctx, s.rdb, []string{account}, maxCalls, maxTokens, s.stateKey(campaign), s.debateUsageKey(campaign)).Int64Slice()
	if err != nil {
		return Reservation{}, fmt.Errorf("store: reserve an LLM call of %s: %w", campaign, err)
	}
	if len(v) != 4 {
		return Reservation{}, fmt.Errorf("store: reserve an LLM call of %s: the script answered %v", campaign, v)
	}
	r := Reservation{Used: int(v[1]), MaxCalls: int(v[2]), MaxTokens: int(v[3])}
	switch v[0] {
	case -1:
		r.Spent = BudgetCalls
	case -2:
		r.Spent = BudgetTokens
	}
	return r, nil
}

// ReleaseLLMCall gives back a request counted by ReserveLLMCall that never
// reached the endpoint (no connection): it cost nothing.
func (s *Store) ReleaseLLMCall(ctx context.Context, campaign string) error {
	return s.releaseCall(ctx, s.stateKey(campaign), campaign)
}

// ReleaseDebateCall gives back a request counted by ReserveDebateCall.
func (s *Store) ReleaseDebateCall(ctx context.Context, campaign string) error {
	return s.releaseCall(ctx, s.debateUsageKey(campaign), campaign)
}

func (s *Store) releaseCall(ctx context.Context, account, campaign string) error {
	if err := scriptReleaseCall.Run(ctx, s.rdb, []string{account}).Err(); err != nil {
		return fmt.Errorf("store: release an LLM call of %s: %w", campaign, err)
	}
	return nil
}

// MarkExhausted ends a running campaign's generations: its status becomes
// exhausted (requests for new generations are refused, and the campaign
// finishes once its in-flight generations are done), with reason as the
// final status message. The first reason stays.
func (s *Store) MarkExhausted(ctx context.Context, campaign, reason string) error {
	if err := scriptExhaust.Run(ctx, s.rdb, []string{s.stateKey(campaign)}, reason).Err(); err != nil {
		return fmt.Errorf("store: exhaust %s: %w", campaign, err)
	}
	return nil
}

// ExhaustedReason is why the campaign was marked exhausted (MarkExhausted),
// or "" when it was not, or ran out of new candidates on its own.
func (st *State) ExhaustedReason() string { return st.raw["exhausted_reason"] }

// AddLLMUsage adds LLM exchanges made outside a generation (the
// reflector's) to the campaign's accounting: answered calls and tokens.
// Every exchange counts, one repeated after a redelivery included: it was
// made.
func (s *Store) AddLLMUsage(ctx context.Context, campaign string, calls, promptTokens, completionTokens int) error {
	return s.addUsage(ctx, s.stateKey(campaign), campaign, calls, promptTokens, completionTokens)
}

// AddDebateUsage adds the exchanges of the judge's debates to the
// campaign's accounting, as AddLLMUsage does, in the debates' account: a
// debate run again after its judge died counts again (it was run).
func (s *Store) AddDebateUsage(ctx context.Context, campaign string, calls, promptTokens, completionTokens int) error {
	return s.addUsage(ctx, s.debateUsageKey(campaign), campaign, calls, promptTokens, completionTokens)
}

func (s *Store) addUsage(ctx context.Context, key, campaign string, calls, promptTokens, completionTokens int) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, key, "llm_calls", int64(calls))
		p.HIncrBy(ctx, key, "prompt_tokens", int64(promptTokens))
		p.HIncrBy(ctx, key, "completion_tokens", int64(completionTokens))
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: LLM usage of %s: %w", campaign, err)
	}
	return nil
}
