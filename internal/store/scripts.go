package store

import "github.com/redis/go-redis/v9"

// luaPrelude defines helpers every campaign script uses. KEYS[1] is always
// the campaign's state hash.
const luaPrelude = `
local st = KEYS[1]
local function num(f) return tonumber(redis.call('HGET', st, f) or '0') or 0 end
-- epShare is episode e's share of a budget of b over n episodes.
local function epShare(e, b, n)
  local q = math.floor(b / n)
  if e < b % n then return q + 1 end
  return q
end
local function epBudget(e) return epShare(e, num('budget'), num('episodes')) end
-- reserve reserves the next generation of the current episode, once per
-- trigger (triggers and gens are the campaign's hashes). Returns
-- "g:slots:episode", or "-1:<why>" when none can be requested.
local function reserve(trigger, triggers, gens)
  local prev = redis.call('HGET', triggers, trigger)
  if prev then return prev end
  local res
  local status = redis.call('HGET', st, 'status')
  if status ~= 'running' then
    res = '-1:' .. (status or 'unknown')
  else
    local ep = num('episode')
    local reserved = num('ep' .. ep .. '_reserved')
    local budget = epBudget(ep)
    if reserved >= budget then
      res = '-1:episode_full'
    else
      local slots = math.min(num('batch'), budget - reserved)
      local g = num('next_gen')
      redis.call('HSET', st, 'next_gen', g + 1)
      redis.call('HINCRBY', st, 'ep' .. ep .. '_reserved', slots)
      redis.call('HINCRBY', st, 'inflight', 1)
      redis.call('HSET', gens, g .. ':slots', slots, g .. ':ep', ep, g .. ':trigger', trigger)
      res = g .. ':' .. slots .. ':' .. ep
    end
  end
  redis.call('HSET', triggers, trigger, res)
  return res
end
`

// scriptCreate stores a campaign once. KEYS: state, spec.
// ARGV: spec JSON, then field/value pairs of the initial state.
var scriptCreate = redis.NewScript(luaPrelude + `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
for i = 2, #ARGV, 2 do redis.call('HSET', st, ARGV[i], ARGV[i+1]) end
return 1
`)

// scriptRequest reserves the next generation of the current episode,
// once per trigger. KEYS: state, triggers, gens. ARGV: trigger.
// Returns "g:slots:episode", or "-1:<why>" when none can be requested.
var scriptRequest = redis.NewScript(luaPrelude + `
return reserve(ARGV[1], KEYS[2], KEYS[3])
`)

// scriptPropose records what a generation proposed, once. KEYS: state,
// gens, seen, rejects list of the island. ARGV: g, island, proposal JSON,
// rejected-before-dedupe count, prompt tokens, completion tokens, LLM
// calls, exhaustion limit, max rejects kept, reject docs count R, R reject
// docs, resolutions count Q, Q formula/id/fingerprint triples, then per
// candidate id, fingerprint ("" for none), reduced formula and, without a
// fingerprint, its structure JSON ("" otherwise).
//
// The seen hash maps each fingerprint to the candidate that owns it, and
// "=<formula>" to "*" once every structure of that formula proposed so far
// has its fingerprint there, or to "<id>\n<structure>" while the formula's
// only structure has none: a candidate of a formula new to the campaign
// needs no fingerprint (nothing to tell it from). A candidate meeting a
// formula that has structures (or another new one of its formula in this
// proposal) needs its fingerprint, and the formula's structure without one
// needs its own: the script then records nothing and returns
// {"need", index, pending…}: per candidate that needs something, its index
// (from 0) and the formula's pending value ("" for none). The caller
// computes those fingerprints and calls again with them and with the
// resolutions (formula, pending id, its fingerprint), which the script
// applies first, once: they are facts, whatever the proposal becomes.
//
// Otherwise returns {accepted, proposal}: the JSON array [n, accepted
// ids…] and the stored proposal ("" once it is gone); a repeated call
// returns what the first one stored.
var scriptPropose = redis.NewScript(luaPrelude + `
local g = ARGV[1]
local prev = redis.call('HGET', KEYS[2], g .. ':accepted')
if prev then return {prev, redis.call('HGET', KEYS[2], g .. ':proposal') or ''} end
local slots = tonumber(redis.call('HGET', KEYS[2], g .. ':slots'))
if not slots then return redis.error_reply('unknown generation ' .. g) end
local ep = redis.call('HGET', KEYS[2], g .. ':ep')
local nrej = tonumber(ARGV[10])
local base = 11 + nrej
local nres = tonumber(ARGV[base])
for i = base + 1, base + 3 * nres, 3 do
  local f, id, fp = '=' .. ARGV[i], ARGV[i+1], ARGV[i+2]
  local cur = redis.call('HGET', KEYS[3], f)
  if cur and string.sub(cur, 1, #id + 1) == id .. '\n' then
    redis.call('HSETNX', KEYS[3], fp, id)
    redis.call('HSET', KEYS[3], f, '*')
  end
end
local first = base + 1 + 3 * nres
local need = {'need'}
local function needs(k, pending)
  table.insert(need, tostring(k))
  table.insert(need, pending)
end
-- claim[f]: the index of this proposal's candidate without a fingerprint
-- that would take new formula f, -1 once it needs one; keyed[f]: this
-- proposal has a candidate of new formula f with a fingerprint.
local claim, keyed = {}, {}
for i = first, #ARGV, 4 do
  local k, fp, f = (i - first) / 4, ARGV[i+1], '=' .. ARGV[i+2]
  local cur = redis.call('HGET', KEYS[3], f)
  if cur and cur ~= '*' then
    needs(k, cur)
  elseif cur then
    if fp == '' then needs(k, '') end
  else
    if claim[f] and claim[f] >= 0 then
      needs(claim[f], '')
      claim[f] = -1
    end
    if fp ~= '' then
      keyed[f] = true
    elseif claim[f] or keyed[f] then
      needs(k, '')
    else
      claim[f] = k
    end
  end
end
if #need > 1 then return need end
local accepted = {}
local dups = 0
for i = first, #ARGV, 4 do
  local id, fp, f = ARGV[i], ARGV[i+1], '=' .. ARGV[i+2]
  if fp == '' then
    redis.call('HSET', KEYS[3], f, id .. '\n' .. ARGV[i+3])
    table.insert(accepted, id)
  else
    local owner = redis.call('HGET', KEYS[3], fp)
    if (not owner) or owner == id then
      redis.call('HSET', KEYS[3], fp, id)
      redis.call('HSETNX', KEYS[3], f, '*')
      table.insert(accepted, id)
    else
      dups = dups + 1
    end
  end
end
for i = 11, 10 + nrej do redis.call('LPUSH', KEYS[4], ARGV[i]) end
if nrej > 0 then redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[9]) - 1) end
local n = #accepted
local out = {n}
for _, id in ipairs(accepted) do table.insert(out, id) end
redis.call('HSET', KEYS[2], g .. ':accepted', cjson.encode(out), g .. ':n', n, g .. ':island', ARGV[2], g .. ':proposal', ARGV[3])
redis.call('HINCRBY', st, 'proposed', n)
redis.call('HINCRBY', st, 'rejected', tonumber(ARGV[4]) + dups)
redis.call('HINCRBY', st, 'prompt_tokens', tonumber(ARGV[5]))
redis.call('HINCRBY', st, 'completion_tokens', tonumber(ARGV[6]))
redis.call('HINCRBY', st, 'llm_calls', tonumber(ARGV[7]))
if n < slots then redis.call('HINCRBY', st, 'ep' .. ep .. '_reserved', n - slots) end
if n == 0 then
  redis.call('HSET', KEYS[2], g .. ':done', 1)
  redis.call('HDEL', KEYS[2], g .. ':proposal')
  redis.call('HINCRBY', st, 'inflight', -1)
  redis.call('HINCRBY', st, 'empty_generations', 1)
  local c = redis.call('HINCRBY', st, 'consecutive_empty', 1)
  if c >= tonumber(ARGV[8]) and redis.call('HGET', st, 'status') == 'running' then
    redis.call('HSET', st, 'status', 'exhausted')
  end
else
  redis.call('HSET', st, 'consecutive_empty', 0)
end
local stored = ARGV[3]
if n == 0 then stored = '' end
return {cjson.encode(out), stored}
`)

// scriptEvaluate records evaluations of one campaign, each once, in order.
// KEYS: state, evaluated, gens, comps, docs, finds list, island stats,
// hits, curve, triggers, then per evaluation its island's success and
// failure pools.
// ARGV: the number of arguments per evaluation, then per evaluation id,
// generation, episode, island, seed, score, feasible, stable, valid,
// known, novel, formula, e_above_hull ("" if none), member doc, pool size,
// find ("" if none), hit doc ("" if not a hit). Returns per evaluation its outcome flags,
// prefixed "dup;" for a repeat. An evaluation that completes its
// generation also reserves the next one (trigger "after/<g>", as
// scriptRequest would) and reports it as "next=<reply of reserve>".
//
// One call records a whole batch: an embedded Redis-protocol server builds
// a Lua interpreter per call, and a real one saves the round trips.
var scriptEvaluate = redis.NewScript(luaPrelude + `
local budget, episodes = num('budget'), num('episodes')
local stride = tonumber(ARGV[1])

local function record(a, success, failure)
  local id = ARGV[a + 1]
  local prev = redis.call('HGET', KEYS[2], id)
  if prev then return 'dup;' .. prev end
  local g, ep, island = ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4]
  local seed, score = ARGV[a + 5] == '1', tonumber(ARGV[a + 6])
  local feasible, stable, valid = ARGV[a + 7] == '1', ARGV[a + 8] == '1', ARGV[a + 9] == '1'
  local known, novel, formula, ehull = ARGV[a + 10] == '1', ARGV[a + 11] == '1', ARGV[a + 12], ARGV[a + 13]
  local flags = {}

  -- The island's pools: successes (feasible) and failures, each bounded,
  -- keeping the highest scores.
  local pool = failure
  if feasible then pool = success end
  redis.call('ZADD', pool, score, id)
  redis.call('HSET', KEYS[5], id, ARGV[a + 14])
  local extra = redis.call('ZCARD', pool) - tonumber(ARGV[a + 15])
  if extra > 0 then
    local dropped = redis.call('ZPOPMIN', pool, extra)
    for i = 1, #dropped, 2 do redis.call('HDEL', KEYS[5], dropped[i]) end
  end
  redis.call('HINCRBY', KEYS[7], island .. ':n', 1)
  redis.call('HINCRBYFLOAT', KEYS[7], island .. ':sum', score)

  -- Finds are appended: readers fetch only what they have not seen.
  if ARGV[a + 16] ~= '' then redis.call('RPUSH', KEYS[6], ARGV[a + 16]) end

  if seed then
    local done = redis.call('HINCRBY', st, 'seeds_evaluated', 1)
    if done == num('seeds') then table.insert(flags, 'seeds_done') end
  else
    local index = redis.call('HINCRBY', st, 'evaluated', 1)
    table.insert(flags, 'index=' .. index)
    if valid then redis.call('HINCRBY', st, 'valid', 1) end
    if feasible then redis.call('HINCRBY', st, 'hits', 1) end
    if stable then redis.call('HINCRBY', st, 'stable', 1) end
    if stable and feasible then redis.call('HINCRBY', st, 'stable_hits', 1) end
    if known then redis.call('HINCRBY', st, 'known', 1) end
    if novel then redis.call('HINCRBY', st, 'novel', 1) end
    if novel and stable then redis.call('RPUSH', KEYS[9], index) end
    if ehull ~= '' then
      redis.call('HINCRBYFLOAT', st, 'ehull_sum', tonumber(ehull))
      redis.call('HINCRBY', st, 'ehull_n', 1)
    end
    if ARGV[a + 17] ~= '' then redis.call('HSET', KEYS[8], id, ARGV[a + 17]) end
    -- Per-composition statistics (MADE §4.1: query count, stability, energy range).
    if redis.call('HINCRBY', KEYS[4], formula .. '|n', 1) == 1 then redis.call('HINCRBY', st, 'unique_compositions', 1) end
    if stable then redis.call('HINCRBY', KEYS[4], formula .. '|stable', 1) end
    if feasible then redis.call('HINCRBY', KEYS[4], formula .. '|hits', 1) end
    if ehull ~= '' then
      local e = tonumber(ehull)
      local range = redis.call('HMGET', KEYS[4], formula .. '|emin', formula .. '|emax')
      local lo, hi = tonumber(range[1] or ''), tonumber(range[2] or '')
      if (not lo) or e < lo then redis.call('HSET', KEYS[4], formula .. '|emin', ehull) end
      if (not hi) or e > hi then redis.call('HSET', KEYS[4], formula .. '|emax', ehull) end
    end
    -- Memorisation per generation (LLEMA Fig. 4).
    local gev = redis.call('HINCRBY', KEYS[3], g .. ':evaluated', 1)
    if known then redis.call('HINCRBY', KEYS[3], g .. ':known', 1) end
    local gs = redis.call('HMGET', KEYS[3], g .. ':done', g .. ':n')
    local gdone = false
    if tonumber(gs[1] or '0') == 0 and gev == tonumber(gs[2] or '-1') then
      redis.call('HSET', KEYS[3], g .. ':done', 1)
      redis.call('HDEL', KEYS[3], g .. ':proposal')
      redis.call('HINCRBY', st, 'inflight', -1)
      redis.call('HINCRBY', st, 'generations', 1)
      table.insert(flags, 'generation_done')
      gdone = true
    end
    local epDone = redis.call('HINCRBY', st, 'ep' .. ep .. '_evaluated', 1)
    if epDone == epShare(ep, budget, episodes) then table.insert(flags, 'episode_done') end
    local status = redis.call('HGET', st, 'status')
    if index == budget then
      if status == 'running' then redis.call('HSET', st, 'status', 'completed') end
      table.insert(flags, 'campaign_done')
    elseif status == 'exhausted' and num('inflight') == 0 then
      table.insert(flags, 'campaign_done')
    end
    -- The next generation, reserved after the counters are final (a
    -- completed campaign reserves none).
    if gdone then table.insert(flags, 'next=' .. reserve('after/' .. g, KEYS[10], KEYS[3])) end
  end
  local res = table.concat(flags, ',')
  redis.call('HSET', KEYS[2], id, res)
  return res
end

local out = {}
for r = 0, (#ARGV - 1) / stride - 1 do
  out[r + 1] = record(1 + r * stride, KEYS[11 + 2 * r], KEYS[12 + 2 * r])
end
return out
`)

// scriptAdvance moves the campaign from episode ARGV[1] to the next, once.
// KEYS: state. Returns 1 when it moved now or earlier, 0 when there is no
// next episode.
var scriptAdvance = redis.NewScript(luaPrelude + `
local e = tonumber(ARGV[1])
local cur = num('episode')
if cur > e then return 1 end
if e + 1 >= num('episodes') then return 0 end
redis.call('HSET', st, 'episode', e + 1)
return 1
`)

// scriptEpisodeStats stores an episode's statistics once. KEYS: state.
// ARGV: episode, JSON.
var scriptEpisodeStats = redis.NewScript(luaPrelude + `
redis.call('HSETNX', st, 'ep' .. ARGV[1] .. '_stats', ARGV[2])
return 1
`)

// scriptDiscovery counts a discovery once. KEYS: state, discoveries set.
var scriptDiscovery = redis.NewScript(luaPrelude + `
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  return redis.call('HINCRBY', st, 'discoveries', 1)
end
return num('discoveries')
`)

// scriptMemory applies one reflection to a memory bank, once per id.
// KEYS: reflections list, directives hash, experiences hash, applied set.
// ARGV: id, reflection JSON, max reflections kept, directive count D, D
// key/JSON pairs (an empty JSON deletes the directive), then experience
// operations as op/key/JSON triples ("put" adds or replaces, "del"
// deletes).
var scriptMemory = redis.NewScript(`
if redis.call('SADD', KEYS[4], ARGV[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
local d = tonumber(ARGV[4])
for i = 5, 4 + 2 * d, 2 do
  if ARGV[i+1] == '' then redis.call('HDEL', KEYS[2], ARGV[i])
  else redis.call('HSET', KEYS[2], ARGV[i], ARGV[i+1]) end
end
for i = 5 + 2 * d, #ARGV, 3 do
  if ARGV[i] == 'del' then redis.call('HDEL', KEYS[3], ARGV[i+1])
  else redis.call('HSET', KEYS[3], ARGV[i+1], ARGV[i+2]) end
end
return 1
`)
