package store

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

// luaPrelude defines helpers every campaign script uses. KEYS[1] is always
// the campaign's state hash.
//
// Hash fields go through a write-back cache: a script reads each field at
// most once (load reads many in one HMGET) and writes each hash it changed
// once, in flush, which a script that writes through the cache calls
// before it returns. Counters add up in Lua, so recording a batch of
// evaluations makes a few dozen calls rather than a few dozen per
// evaluation: each call costs an embedded Redis-protocol server two fresh
// buffers, and the evaluator's oracle shares the machine's memory with it.
// A field a script writes with redis.call directly must not be read
// through the cache after that.
const luaPrelude = `
local st = KEYS[1]
local cache, touched = {}, {}
local function hcache(key)
  local c = cache[key]
  if not c then
    c = {v = {}, dirty = {}, list = {}}
    cache[key] = c
    table.insert(touched, key)
  end
  return c
end
-- chunks calls cmd on key with args, at most 512 at a time (Lua's stack
-- bounds unpack), and returns the replies concatenated.
local function chunks(cmd, key, args)
  local out = {}
  for i = 1, #args, 512 do
    local part = redis.call(cmd, key, unpack(args, i, math.min(i + 511, #args)))
    if type(part) == 'table' then
      for _, x in ipairs(part) do table.insert(out, x) end
    end
  end
  return out
end
-- load reads the fields of key not cached yet in one HMGET.
local function load(key, fields)
  local c = hcache(key)
  local want, seen = {}, {}
  for _, f in ipairs(fields) do
    if c.v[f] == nil and not seen[f] then
      seen[f] = true
      table.insert(want, f)
    end
  end
  if #want == 0 then return end
  local got = chunks('HMGET', key, want)
  for i, f in ipairs(want) do c.v[f] = got[i] end
end
-- hget is the field's value, false when it has none.
local function hget(key, f)
  local c = hcache(key)
  local v = c.v[f]
  if v == nil then
    v = redis.call('HGET', key, f)
    c.v[f] = v
  end
  return v
end
-- hset sets a field (false deletes it) when the script flushes.
local function hset(key, f, v)
  local c = hcache(key)
  c.v[f] = v
  if not c.dirty[f] then
    c.dirty[f] = true
    table.insert(c.list, f)
  end
end
local function hnum(key, f) return tonumber(hget(key, f) or '0') or 0 end
local function hincr(key, f, d)
  local v = hnum(key, f) + d
  hset(key, f, v)
  return v
end
-- encode writes integers as HINCRBY reads them and other numbers so that
-- they read back exactly.
local function encode(v)
  if type(v) ~= 'number' then return v end
  if v == math.floor(v) and math.abs(v) < 2^53 then return string.format('%d', v) end
  return string.format('%.17g', v)
end
-- flush writes what the script changed, hash by hash in the order first
-- touched, and the hash last (if any) after all the others.
local function flush(last)
  local keys = {}
  for _, key in ipairs(touched) do
    if key ~= last then table.insert(keys, key) end
  end
  if last and cache[last] then table.insert(keys, last) end
  for _, key in ipairs(keys) do
    local c = cache[key]
    local set, del = {}, {}
    for _, f in ipairs(c.list) do
      local v = c.v[f]
      if v == false then
        table.insert(del, f)
      else
        table.insert(set, f)
        table.insert(set, encode(v))
      end
    end
    if #set > 0 then chunks('HSET', key, set) end
    if #del > 0 then chunks('HDEL', key, del) end
    c.dirty, c.list = {}, {}
  end
end
local function num(f) return hnum(st, f) end
-- epShare is episode e's share of a budget of b over n episodes.
local function epShare(e, b, n)
  local q = math.floor(b / n)
  if e < b % n then return q + 1 end
  return q
end
local function epBudget(e) return epShare(e, num('budget'), num('episodes')) end
-- reserve reserves the next generation of the current episode, once per
-- trigger (triggers and gens are the campaign's hashes), through the
-- cache. Returns "g:slots:episode", or "-1:<why>" when none can be
-- requested.
local function reserve(trigger, triggers, gens)
  local prev = hget(triggers, trigger)
  if prev then return prev end
  local res
  local status = hget(st, 'status')
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
      hset(st, 'next_gen', g + 1)
      hincr(st, 'ep' .. ep .. '_reserved', slots)
      hincr(st, 'inflight', 1)
      hset(gens, g .. ':slots', slots)
      hset(gens, g .. ':ep', ep)
      hset(gens, g .. ':trigger', trigger)
      res = g .. ':' .. slots .. ':' .. ep
    end
  end
  hset(triggers, trigger, res)
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
local res = reserve(ARGV[1], KEYS[2], KEYS[3])
flush()
return res
`)

// scriptPropose records what generations proposed, each once, in order: one
// call records a batch, as recording them one call each would.
// KEYS: state, gens, seen, then per proposal the rejects list of its
// island. ARGV: the number of proposals, then per proposal the number of
// its arguments and its arguments: g, island, proposal JSON,
// rejected-before-dedupe count, prompt tokens, completion tokens, LLM
// calls, exhaustion limit, max rejects kept, how many of the rejected
// have a known formula, reject docs count R, R reject docs, resolutions
// count Q, Q formula/id/fingerprint triples, then per candidate id,
// fingerprint ("" for none), reduced formula, without a fingerprint its
// structure JSON ("" otherwise), and "1" when its formula is known ("0"
// otherwise: a duplicate of a known formula counts in rejected_known).
//
// The seen hash maps each fingerprint to the candidate that owns it, and
// "=<formula>" to "*" once every structure of that formula proposed so far
// has its fingerprint there, or to "<id>\n<structure>" while the formula's
// only structure has none: a candidate of a formula new to the campaign
// needs no fingerprint (nothing to tell it from). A candidate meeting a
// formula that has structures (or another new one of its formula in this
// proposal) needs its fingerprint, and the formula's structure without one
// needs its own: the script then stops at that proposal, and the caller
// computes those fingerprints and calls again, from that proposal on, with
// them and with the resolutions (formula, pending id, its fingerprint),
// which the script applies first, once: they are facts, whatever the
// proposal becomes.
//
// Returns the number k of proposals recorded, then per recorded proposal
// its accepted list (the JSON array [n, accepted ids…], or "error:<why>"
// when it cannot be recorded) and its stored proposal ("" once it is gone);
// a repeated proposal gets what the first one stored. When k is short of
// the batch, "need" and, per candidate of proposal k+1 that needs
// something, its index (from 0) and the formula's pending value ("" for
// none) follow.
var scriptPropose = redis.NewScript(luaPrelude + `
local gens, seen = KEYS[2], KEYS[3]
-- propose records one proposal (arguments A) through the cache: returns
-- {'ok', accepted, stored}, {'error', why} or the need list.
local function propose(A, rejects)
  local g = A[1]
  load(gens, {g .. ':accepted', g .. ':proposal', g .. ':slots', g .. ':ep'})
  local prev = hget(gens, g .. ':accepted')
  if prev then return {'ok', prev, hget(gens, g .. ':proposal') or ''} end
  local slots = tonumber(hget(gens, g .. ':slots'))
  if not slots then return {'error', 'unknown generation ' .. g} end
  local ep = hget(gens, g .. ':ep')
  local nrej = tonumber(A[11])
  local base = 12 + nrej
  local nres = tonumber(A[base])
  local first = base + 1 + 3 * nres
  -- What the proposal reads of the seen hash, in one HMGET.
  local sf = {}
  for i = base + 1, base + 3 * nres, 3 do table.insert(sf, '=' .. A[i]) end
  for i = first, #A, 5 do
    table.insert(sf, '=' .. A[i+2])
    if A[i+1] ~= '' then table.insert(sf, A[i+1]) end
  end
  load(seen, sf)
  for i = base + 1, base + 3 * nres, 3 do
    local f, id, fp = '=' .. A[i], A[i+1], A[i+2]
    local cur = hget(seen, f)
    if cur and string.sub(cur, 1, #id + 1) == id .. '\n' then
      if not hget(seen, fp) then hset(seen, fp, id) end
      hset(seen, f, '*')
    end
  end
  local need = {'need'}
  local function needs(k, pending)
    table.insert(need, tostring(k))
    table.insert(need, pending)
  end
  -- claim[f]: the index of this proposal's candidate without a fingerprint
  -- that would take new formula f, -1 once it needs one; keyed[f]: this
  -- proposal has a candidate of new formula f with a fingerprint.
  local claim, keyed = {}, {}
  for i = first, #A, 5 do
    local k, fp, f = (i - first) / 5, A[i+1], '=' .. A[i+2]
    local cur = hget(seen, f)
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
  local dups, dupsKnown = 0, 0
  for i = first, #A, 5 do
    local id, fp, f = A[i], A[i+1], '=' .. A[i+2]
    if fp == '' then
      hset(seen, f, id .. '\n' .. A[i+3])
      table.insert(accepted, id)
    else
      local owner = hget(seen, fp)
      if (not owner) or owner == id then
        hset(seen, fp, id)
        if not hget(seen, f) then hset(seen, f, '*') end
        table.insert(accepted, id)
      else
        dups = dups + 1
        if A[i+4] == '1' then dupsKnown = dupsKnown + 1 end
      end
    end
  end
  if nrej > 0 then
    local docs = {}
    for i = 12, 11 + nrej do table.insert(docs, A[i]) end
    chunks('LPUSH', rejects, docs)
    redis.call('LTRIM', rejects, 0, tonumber(A[9]) - 1)
  end
  local n = #accepted
  local out = {n}
  for _, id in ipairs(accepted) do table.insert(out, id) end
  local acc = cjson.encode(out)
  hset(gens, g .. ':accepted', acc)
  hset(gens, g .. ':n', n)
  hset(gens, g .. ':island', A[2])
  load(st, {'proposed', 'rejected', 'rejected_known', 'prompt_tokens', 'completion_tokens', 'llm_calls', 'ep' .. ep .. '_reserved',
    'inflight', 'empty_generations', 'consecutive_empty', 'status'})
  hincr(st, 'proposed', n)
  hincr(st, 'rejected', tonumber(A[4]) + dups)
  hincr(st, 'rejected_known', tonumber(A[10]) + dupsKnown)
  hincr(st, 'prompt_tokens', tonumber(A[5]))
  hincr(st, 'completion_tokens', tonumber(A[6]))
  hincr(st, 'llm_calls', tonumber(A[7]))
  if n < slots then hincr(st, 'ep' .. ep .. '_reserved', n - slots) end
  local stored = A[3]
  if n == 0 then
    stored = ''
    hset(gens, g .. ':done', 1)
    hincr(st, 'inflight', -1)
    hincr(st, 'empty_generations', 1)
    if hincr(st, 'consecutive_empty', 1) >= tonumber(A[8]) and hget(st, 'status') == 'running' then
      hset(st, 'status', 'exhausted')
    end
  else
    hset(gens, g .. ':proposal', stored)
    hset(st, 'consecutive_empty', 0)
  end
  return {'ok', acc, stored}
end
local out = {'0'}
local pos = 2
for j = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[pos])
  local A = {}
  for i = 1, n do A[i] = ARGV[pos + i] end
  pos = pos + n + 1
  local r = propose(A, KEYS[3 + j])
  if r[1] == 'need' then
    flush()
    for _, x in ipairs(r) do table.insert(out, x) end
    return out
  end
  out[1] = tostring(j)
  if r[1] == 'error' then
    table.insert(out, 'error:' .. r[2])
    table.insert(out, '')
  else
    table.insert(out, r[2])
    table.insert(out, r[3])
  end
end
flush()
return out
`)

// scriptEvaluate records evaluations of one campaign, each once, in order.
// KEYS: state, evaluated, gens, comps, docs, finds list, island stats,
// hits, curve, triggers, then per evaluation its island's success and
// failure pools, then the evaluation log.
// ARGV: the number of arguments per evaluation, then per evaluation id,
// generation, episode, island, seed, score, feasible, stable, valid,
// known, novel, formula, e_above_hull ("" if none), member doc, pool size,
// find ("" if none), hit doc ("" if not a hit), seed position, space-group
// number ("" if none; counted in the state's fields sg:<n> and, for a
// novel stable candidate, sg_stable:<n>). Returns per
// evaluation its outcome flags, prefixed "dup;" for a repeat, or "wait":
// an ordered campaign (state field "ordered") records a seed only after
// the seeds before it and a generation's candidate only after those
// before it in the generation's accepted list, so that every sum, list
// and index is built in the same order whatever the delivery order. An evaluation that
// completes its generation also reserves the next one (trigger
// "after/<g>", as scriptRequest would) and reports it as "next=<reply of
// reserve>".
//
// One call records a whole batch: an embedded Redis-protocol server builds
// a Lua interpreter per call, and a real one saves the round trips. The
// batch reads what it needs in one HMGET per hash, counts in the cache,
// bounds each pool it added to once (the same members stay as bounding
// after each addition: the highest scores, ties broken alike), and writes
// each hash once; the evaluated hash, which makes a repeat a repeat, is
// written last.
var scriptEvaluate = redis.NewScript(luaPrelude + `
local evaluated, gens, comps, docs, islands, hits = KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[7], KEYS[8]
local stride = tonumber(ARGV[1])
local count = (#ARGV - 1) / stride
local logKey, log = KEYS[11 + 2 * count], {}

-- What the batch reads, one HMGET per hash.
local sf = {'budget', 'episodes', 'seeds', 'seeds_evaluated', 'evaluated', 'valid', 'hits', 'stable',
  'stable_hits', 'known', 'novel', 'ehull_sum', 'ehull_n', 'unique_compositions', 'inflight', 'generations', 'status',
  'episode', 'batch', 'next_gen', 'ordered'}
local ids, gf, cf, isf = {}, {}, {}, {}
for r = 0, count - 1 do
  local a = 1 + r * stride
  local g, f = ARGV[a + 2], ARGV[a + 12]
  table.insert(ids, ARGV[a + 1])
  table.insert(sf, 'ep' .. ARGV[a + 3] .. '_evaluated')
  for _, x in ipairs({':evaluated', ':known', ':done', ':n', ':accepted'}) do table.insert(gf, g .. x) end
  for _, x in ipairs({'|n', '|stable', '|hits', '|emin', '|emax'}) do table.insert(cf, f .. x) end
  table.insert(isf, ARGV[a + 4] .. ':n')
  table.insert(isf, ARGV[a + 4] .. ':sum')
end
load(st, sf)
load(evaluated, ids)
load(gens, gf)
load(comps, cf)
load(islands, isf)

local budget, episodes = num('budget'), num('episodes')
local ordered = num('ordered') == 1

-- inTurn says whether an ordered campaign may record this evaluation now.
local function inTurn(id, g, seed, position)
  if seed then return num('seeds_evaluated') == position end
  local acc = hget(gens, g .. ':accepted')
  if not acc then return true end
  local ids = cjson.decode(acc)
  for i = 2, #ids do
    if ids[i] == id then return hnum(gens, g .. ':evaluated') == i - 2 end
  end
  return true
end
local pools, poolOrder, finds, curve = {}, {}, {}, {}

local function record(a, success, failure)
  local id = ARGV[a + 1]
  local prev = hget(evaluated, id)
  if prev then return 'dup;' .. prev end
  local g, ep, island = ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4]
  local seed, score = ARGV[a + 5] == '1', ARGV[a + 6]
  if ordered and not inTurn(id, g, seed, tonumber(ARGV[a + 18])) then return 'wait' end
  local feasible, stable, valid = ARGV[a + 7] == '1', ARGV[a + 8] == '1', ARGV[a + 9] == '1'
  local known, novel, formula, ehull = ARGV[a + 10] == '1', ARGV[a + 11] == '1', ARGV[a + 12], ARGV[a + 13]
  local flags = {}

  -- The island's pools: successes (feasible) and failures, each bounded
  -- (below, once per batch), keeping the highest scores.
  local key = failure
  if feasible then key = success end
  local pool = pools[key]
  if not pool then
    pool = {}
    pools[key] = pool
    table.insert(poolOrder, key)
  end
  pool.size = tonumber(ARGV[a + 15])
  table.insert(pool, score)
  table.insert(pool, id)
  hset(docs, id, ARGV[a + 14])
  hincr(islands, island .. ':n', 1)
  hincr(islands, island .. ':sum', tonumber(score))

  -- Finds are appended: readers fetch only what they have not seen.
  if ARGV[a + 16] ~= '' then table.insert(finds, ARGV[a + 16]) end

  if seed then
    if hincr(st, 'seeds_evaluated', 1) == num('seeds') then table.insert(flags, 'seeds_done') end
  else
    local index = hincr(st, 'evaluated', 1)
    table.insert(flags, 'index=' .. index)
    if valid then hincr(st, 'valid', 1) end
    if feasible then hincr(st, 'hits', 1) end
    if stable then hincr(st, 'stable', 1) end
    if stable and feasible then hincr(st, 'stable_hits', 1) end
    if known then hincr(st, 'known', 1) end
    if novel then hincr(st, 'novel', 1) end
    if novel and stable then table.insert(curve, index) end
    -- The chronological log (MADE §4.1): index|episode|formula|e_hull|flags.
    local lf = ''
    if valid then lf = lf .. 'v' end
    if feasible then lf = lf .. 'h' end
    if stable then lf = lf .. 's' end
    if known then lf = lf .. 'k' end
    if novel then lf = lf .. 'n' end
    table.insert(log, index .. '|' .. ep .. '|' .. formula .. '|' .. ehull .. '|' .. lf)
    local sg = ARGV[a + 19]
    if sg ~= '' then
      hincr(st, 'sg:' .. sg, 1)
      if novel and stable then hincr(st, 'sg_stable:' .. sg, 1) end
    end
    if ehull ~= '' then
      hincr(st, 'ehull_sum', tonumber(ehull))
      hincr(st, 'ehull_n', 1)
    end
    if ARGV[a + 17] ~= '' then hset(hits, id, ARGV[a + 17]) end
    -- Per-composition statistics (MADE §4.1: query count, stability, energy range).
    if hincr(comps, formula .. '|n', 1) == 1 then hincr(st, 'unique_compositions', 1) end
    if stable then hincr(comps, formula .. '|stable', 1) end
    if feasible then hincr(comps, formula .. '|hits', 1) end
    if ehull ~= '' then
      local e = tonumber(ehull)
      local lo, hi = tonumber(hget(comps, formula .. '|emin') or ''), tonumber(hget(comps, formula .. '|emax') or '')
      if (not lo) or e < lo then hset(comps, formula .. '|emin', ehull) end
      if (not hi) or e > hi then hset(comps, formula .. '|emax', ehull) end
    end
    -- Memorisation per generation (LLEMA Fig. 4).
    local gev = hincr(gens, g .. ':evaluated', 1)
    if known then hincr(gens, g .. ':known', 1) end
    local gdone = false
    if hnum(gens, g .. ':done') == 0 and gev == tonumber(hget(gens, g .. ':n') or '-1') then
      hset(gens, g .. ':done', 1)
      hset(gens, g .. ':proposal', false)
      hincr(st, 'inflight', -1)
      hincr(st, 'generations', 1)
      table.insert(flags, 'generation_done')
      gdone = true
    end
    local epDone = hincr(st, 'ep' .. ep .. '_evaluated', 1)
    if epDone == epShare(ep, budget, episodes) then table.insert(flags, 'episode_done') end
    local status = hget(st, 'status')
    if index == budget then
      if status == 'running' then hset(st, 'status', 'completed') end
      table.insert(flags, 'campaign_done')
    elseif status == 'exhausted' and num('inflight') == 0 then
      table.insert(flags, 'campaign_done')
    end
    -- The next generation, reserved after the counters are final (a
    -- completed campaign reserves none).
    if gdone then table.insert(flags, 'next=' .. reserve('after/' .. g, KEYS[10], gens)) end
  end
  local res = table.concat(flags, ',')
  hset(evaluated, id, res)
  return res
end

local out = {}
for r = 0, count - 1 do
  out[r + 1] = record(1 + r * stride, KEYS[11 + 2 * r], KEYS[12 + 2 * r])
end
for _, key in ipairs(poolOrder) do
  local pool = pools[key]
  chunks('ZADD', key, pool)
  local extra = redis.call('ZCARD', key) - pool.size
  if extra > 0 then
    local dropped = redis.call('ZPOPMIN', key, extra)
    for i = 1, #dropped, 2 do hset(docs, dropped[i], false) end
  end
end
if #finds > 0 then chunks('RPUSH', KEYS[6], finds) end
if #curve > 0 then chunks('RPUSH', KEYS[9], curve) end
if #log > 0 then
  chunks('RPUSH', logKey, log)
  redis.call('LTRIM', logKey, -` + strconv.Itoa(MaxLogEntries) + `, -1)
end
flush(evaluated)
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
hset(st, 'episode', e + 1)
flush()
return 1
`)

// scriptEpisodeStats stores an episode's statistics once. KEYS: state.
// ARGV: episode, JSON.
var scriptEpisodeStats = redis.NewScript(luaPrelude + `
redis.call('HSETNX', st, 'ep' .. ARGV[1] .. '_stats', ARGV[2])
return 1
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
