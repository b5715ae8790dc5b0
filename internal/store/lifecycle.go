package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// A campaign's lifecycle in the state hash's status field:
//
//	running ──pause──▶ paused ──resume──▶ running
//	running|paused ──cancel──▶ cancelled (final once in-flight work drains)
//	running ──budget spent──▶ completed; running ──no new candidates──▶ exhausted
//	any but cancelled ──extend──▶ the same, with a larger budget; completed|exhausted ──extend──▶ running
//
// Only a running campaign reserves generations (reserve in scripts.go);
// the other states let the generations in flight finish.

func (s *Store) controlKey(c string) string { return s.ck(c, "control") }

// scriptControl applies a lifecycle action once per action id: the
// result is stored under the id, and a repeat returns it unchanged.
// KEYS: state, control. ARGV: action id, action, new budget (extend),
// max generations in flight, new max_llm_calls and max_llm_tokens
// (extend; 0 keeps them). Returns "status|changed|refused|kick|finish",
// or "missing" for a campaign the store does not hold.
var scriptControl = redis.NewScript(luaPrelude + `
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then return prev end
local action, newBudget, maxInFlight = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local newCalls, newTokens = tonumber(ARGV[5]), tonumber(ARGV[6])
load(st, {'status', 'inflight', 'budget', 'extended', 'seeds', 'seeds_evaluated'})
local status = hget(st, 'status')
if not status then return 'missing' end
local changed, refused, finish = 0, '', 0
if action == 'pause' then
  if status == 'running' then
    hset(st, 'status', 'paused')
    changed = 1
  elseif status ~= 'paused' then
    refused = 'the campaign is ' .. status
  end
elseif action == 'resume' then
  if status == 'paused' then
    hset(st, 'status', 'running')
    changed = 1
  elseif status ~= 'running' then
    refused = 'the campaign is ' .. status
  end
elseif action == 'cancel' then
  if status == 'running' or status == 'paused' then
    hset(st, 'status', 'cancelled')
    changed = 1
    if num('inflight') == 0 then finish = 1 end
  elseif status ~= 'cancelled' then
    refused = 'the campaign is ' .. status .. ' already'
  end
elseif action == 'extend' then
  local budget = num('budget')
  if status == 'cancelled' then
    refused = 'the campaign was cancelled'
  elseif newBudget <= budget then
    refused = 'the budget is ' .. budget .. ' already; extend raises it'
  else
    hset(st, 'budget', newBudget)
    hincr(st, 'extended', newBudget - budget)
    if newCalls > 0 then hset(st, 'max_llm_calls', newCalls) end
    if newTokens > 0 then hset(st, 'max_llm_tokens', newTokens) end
    changed = 1
    if status == 'completed' or status == 'exhausted' then
      hset(st, 'status', 'running')
      hset(st, 'consecutive_empty', 0)
      hset(st, 'exhausted_reason', false)
      hset(st, 'finished', false)
    end
  end
else
  refused = 'unknown action ' .. action
end
local kick = 0
if changed == 1 and hget(st, 'status') == 'running' and num('seeds_evaluated') >= num('seeds') then
  kick = math.max(0, maxInFlight - num('inflight'))
end
flush()
local res = hget(st, 'status') .. '|' .. changed .. '|' .. refused .. '|' .. kick .. '|' .. finish
redis.call('HSET', KEYS[2], ARGV[1], res)
return res
`)

// ControlResult is what a lifecycle action did.
type ControlResult struct {
	// Status is the campaign's status after the action.
	Status string
	// Changed says the action changed the campaign; false for one with
	// nothing to do (pausing a paused campaign) or refused.
	Changed bool
	// Refused says why the action cannot apply ("" when it could).
	Refused string
	// Kick is how many generations to request now (a resumed or
	// extended campaign), with triggers "<action id>/<k>".
	Kick int
	// Finish says the campaign finishes now: cancelled with no
	// generation in flight.
	Finish bool
}

// ApplyControl applies a lifecycle action to a campaign once: applying
// the same action id again returns the first result and changes nothing.
// An extension with LLM limits replaces the spec's (State.MaxLLMCalls).
// maxInFlight is the campaign's MaxInFlight.
func (s *Store) ApplyControl(ctx context.Context, c *messages.Control, maxInFlight int) (ControlResult, error) {
	res, err := scriptControl.Run(ctx, s.rdb, []string{s.stateKey(c.Campaign), s.controlKey(c.Campaign)},
		c.ID, c.Action, c.Budget, maxInFlight, c.MaxLLMCalls, c.MaxLLMTokens).Text()
	if err != nil {
		return ControlResult{}, fmt.Errorf("store: %s %s: %w", c.Action, c.Campaign, err)
	}
	if res == "missing" {
		return ControlResult{}, fmt.Errorf("store: campaign %s: %w", c.Campaign, ErrNotFound)
	}
	return parseControlResult(res)
}

// RefuseControl records, once, that a lifecycle action is refused with
// reason (no "|" in it), changing nothing: the result a client waiting
// for the action reads (ControlApplied). The first result recorded for
// the action id stays.
func (s *Store) RefuseControl(ctx context.Context, c *messages.Control, reason string) (ControlResult, error) {
	status, err := s.rdb.HGet(ctx, s.stateKey(c.Campaign), "status").Result()
	if errors.Is(err, redis.Nil) {
		return ControlResult{}, fmt.Errorf("store: campaign %s: %w", c.Campaign, ErrNotFound)
	}
	if err != nil {
		return ControlResult{}, fmt.Errorf("store: refuse %s %s: %w", c.Action, c.Campaign, err)
	}
	res := strings.Join([]string{status, "0", strings.ReplaceAll(reason, "|", "/"), "0", "0"}, "|")
	if err := s.rdb.HSetNX(ctx, s.controlKey(c.Campaign), c.ID, res).Err(); err != nil {
		return ControlResult{}, fmt.Errorf("store: refuse %s %s: %w", c.Action, c.Campaign, err)
	}
	r, _, err := s.ControlApplied(ctx, c.Campaign, c.ID)
	return r, err
}

// ControlApplied returns the result of the action id on a campaign, and
// false while no reflector has applied it.
func (s *Store) ControlApplied(ctx context.Context, campaign, id string) (ControlResult, bool, error) {
	res, err := s.rdb.HGet(ctx, s.controlKey(campaign), id).Result()
	if errors.Is(err, redis.Nil) {
		return ControlResult{}, false, nil
	}
	if err != nil {
		return ControlResult{}, false, fmt.Errorf("store: control %s of %s: %w", id, campaign, err)
	}
	r, err := parseControlResult(res)
	return r, err == nil, err
}

func parseControlResult(res string) (ControlResult, error) {
	f := strings.Split(res, "|")
	if len(f) != 5 {
		return ControlResult{}, fmt.Errorf("store: control result %q", res)
	}
	kick, err := strconv.Atoi(f[3])
	if err != nil {
		return ControlResult{}, fmt.Errorf("store: control result %q", res)
	}
	return ControlResult{Status: f[0], Changed: f[1] == "1", Refused: f[2], Kick: kick, Finish: f[4] == "1"}, nil
}

// DeleteCampaign removes a finished campaign's state: every key of its
// hash tag and its entry in the campaign index. It refuses a campaign
// that is running or paused (cancel it first): its services would meet
// work of a campaign that no longer exists.
func (s *Store) DeleteCampaign(ctx context.Context, campaign string) error {
	st, err := s.State(ctx, campaign)
	if errors.Is(err, ErrNotFound) {
		// Maybe a half-deleted campaign: finish the job.
		if _, serr := s.Spec(ctx, campaign); serr != nil {
			return err
		}
	} else if err != nil {
		return err
	} else if !messages.Finished(st.Status) {
		return fmt.Errorf("store: campaign %s is %s; cancel it first", campaign, st.Status)
	}
	var keys []string
	iter := s.rdb.Scan(ctx, 0, s.ck(campaign, "*"), 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("store: delete %s: %w", campaign, err)
	}
	// The state hash goes last: until then the campaign is still found,
	// and a delete that failed half-way can be repeated.
	state := s.stateKey(campaign)
	for _, k := range keys {
		if k != state {
			if err := s.rdb.Del(ctx, k).Err(); err != nil {
				return fmt.Errorf("store: delete %s: %w", campaign, err)
			}
		}
	}
	if err := s.rdb.ZRem(ctx, s.indexKey(), campaign).Err(); err != nil {
		return fmt.Errorf("store: delete %s: %w", campaign, err)
	}
	if err := s.rdb.Del(ctx, state).Err(); err != nil {
		return fmt.Errorf("store: delete %s: %w", campaign, err)
	}
	return nil
}

// EpisodeBudget returns the evaluations of episode e of n: the submitted
// budget split as evenly as possible (messages.CampaignSpec.EpisodeBudget),
// and the extensions added to the last episode.
func (st *State) EpisodeBudget(e, n int) int {
	base := st.Budget - st.Extended
	b := base / n
	if e < base%n {
		b++
	}
	if e == n-1 {
		b += st.Extended
	}
	return b
}
