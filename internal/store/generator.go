package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// scriptReserveCall counts one LLM request against a campaign's budgets.
// KEYS: state. ARGV: the call budget, the token budget (0: none), which
// the state's max_llm_calls and max_llm_tokens (set by an extension)
// replace. Returns {the requests counted so far including this one, the
// tokens spent, the call budget, the token budget}, or {-1, requests, …}
// when the call budget is spent, {-2, tokens, …} when the token budget is
// (nothing is counted then).
var scriptReserveCall = redis.NewScript(luaPrelude + `
local maxCalls = tonumber(hget(st, 'max_llm_calls') or ARGV[1])
local maxTokens = tonumber(hget(st, 'max_llm_tokens') or ARGV[2])
local calls = num('llm_requests')
if maxCalls > 0 and calls >= maxCalls then return {-1, calls, maxCalls, maxTokens} end
local tokens = num('prompt_tokens') + num('completion_tokens')
if maxTokens > 0 and tokens >= maxTokens then return {-2, tokens, maxCalls, maxTokens} end
return {redis.call('HINCRBY', st, 'llm_requests', 1), tokens, maxCalls, maxTokens}
`)

// scriptReleaseCall gives back one counted LLM request. KEYS: state.
var scriptReleaseCall = redis.NewScript(luaPrelude + `
if num('llm_requests') <= 0 then return 0 end
return redis.call('HINCRBY', st, 'llm_requests', -1)
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
// completion tokens of every exchange so far (0: no budget); the limits an
// extension stored in the campaign's state replace both. Every request
// counts, a retry or a redelivered generation's included: they are real
// requests, so the count is not idempotent on purpose. Tokens are known
// only once answered, so the requests in flight when the token budget is
// reached may exceed it by their own tokens.
func (s *Store) ReserveLLMCall(ctx context.Context, campaign string, maxCalls, maxTokens int) (Reservation, error) {
	v, err := scriptReserveCall.Run(ctx, s.rdb, []string{s.stateKey(campaign)}, maxCalls, maxTokens).Int64Slice()
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
	if err := scriptReleaseCall.Run(ctx, s.rdb, []string{s.stateKey(campaign)}).Err(); err != nil {
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
	key := s.stateKey(campaign)
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
