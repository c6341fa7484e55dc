-- The Lua library of the release before sliding windows and modes, unchanged below this header: it keeps the
-- state as one value of exactly ten fields. RedisValueLayoutUpgradeTest runs it to show that it refuses a value
-- of this release that carries a window or a mode.
-- redeye: every server-side step of the Redis store, one Lua library.
--
-- Loaded once per server as a Redis Function library (FUNCTION LOAD, then FCALL <library>_<name>) where the
-- server offers Functions (Redis 7+): the helpers and tables below are then built once, at load, instead of
-- on every call. Where it does not (or FCALL is refused), each exported function runs as its own EVAL script
-- (EVALSHA), this whole file being its body. LuaLibrary adds the lines that differ (the '#!lua name=' line
-- and export() for a library; export() and the final 'return' for a script): nothing here calls redis.call
-- at load time, and every function takes (keys, args) as FCALL and EVALSHA both give them.
--
-- Every function checks its arguments, and the stored data it reads, before its first write: Redis never
-- rolls a script back, so a failure after a write would leave a half-applied change (REDEYE_BAD_ARGS,
-- REDEYE_MALFORMED; nothing is written). TTLs are at most MAX_TTL (100 years; the store caps longer ones),
-- since SET PX and PEXPIRE refuse an expiry that overflows the server's clock.
--
-- THE STORED STATE is one string value at <prefix>{<tag>}:state: the ten fields of FIELDS in that order
-- joined by ',' (see CANONICAL), read with one GET and written whole with one SET ... PX ttl (a forced state:
-- SET without PX, so it has no expiry). A key written by a release before this layout holds a hash with one
-- field per name of FIELDS: the state function (and record, through it) reads such a hash (GET answers
-- WRONGTYPE, then HMGET) and its first write of the state replaces it with the string value, in the same call;
-- put replaces it; claim, release and publish never read the state key.
--
-- Exported (registered without flags: each may write, so Redis refuses it up front, before it runs, while the
-- server is over maxmemory or is a read-only replica, rather than failing at its first write):
--   state    every atomic state change: recorded outcomes, trial outcomes, forced changes
--   record   a recorded outcome (failure, success): what every guarded call sends, with a smaller interface
--   claim    claim one half-open trial permit
--   release  release a trial claim by its token (compare-and-delete)
--   put      replace a whole state (Store.put)
--   publish  append one event, or a gap marker, to the feed stream

-- 100 years in ms: the longest ttl the store writes (RedisStore.MAX_TTL_MILLIS).
local MAX_TTL = 3153600000000
local INT_MAX = 2147483647
-- Lua numbers are doubles: longs are exact up to 2^53.
local LONG_MAX = 9007199254740992
-- LONG_MAX in decimal: a field of as many characters is in range when it is not greater as text.
local LONG_MAX_TEXT = '9007199254740992'
-- Any Java long (times and gaps are not range-checked by the rules; doubles hold them approximately above 2^53).
local ANY_LONG = 1e19

-- A decimal integer in [min, max] (the form Java's Long.parseLong reads), else nil.
local function int(v, min, max)
  if not v or not string.match(v, '^[+-]?%d+$') then return nil end
  local n = tonumber(v)
  if n < min or n > max then return nil end
  return n
end

-- A decimal integer without a sign in [min, max], else nil.
local function uint(v, min, max)
  if not v or not string.match(v, '^%d+$') then return nil end
  local n = tonumber(v)
  if n < min or n > max then return nil end
  return n
end

-- A number in [min, max], not NaN, else nil.
local function num(v, min, max)
  local n = tonumber(v)
  if not n or n ~= n or n < min or n > max then return nil end
  return n
end

-- The server clock in ms (TIME): claim expiry is judged on it, never on a client's clock.
local function server_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

---------------------------------------------------------------------------------------------------- state
-- One atomic read-modify-write of a breaker's state. Mirrors dev.redeye.api.Transitions rule by rule; the
-- TCK's parity rules (R2.9, R3.1, R5.x, R9.x, R8.1) prove it.
--
-- keys[1] state string (<prefix>{<tag>}:state; or the hash of earlier releases, converted by the first write)
-- keys[2] claims zset  (<prefix>{<tag>}:trial), same hash slot; given (and touched) only when args[5] is 1
-- keys[3] one-permit claim string (<prefix>{<tag>}:trial1), same hash slot; likewise (every key costs the
--         call its argument, so a recorded outcome sends the state key alone)
-- args[1] op: failure | success | trial_success | trial_failure | force_open | force_half_open | force_closed
-- args[2] now, epoch ms (the caller's clock; the rules never read the server clock, see VERSIONS below)
-- args[3] the policy, eight fields joined by ',': strategy code (Strategy.code(): 0 consecutive, 1 errorRate,
--         2 leaky), failureThreshold, maxGapBetweenFailures ms (0 = unset), errorRateThreshold, minimumCalls,
--         errorRateDecay, successThreshold, state ttl ms (set on every write of a state that is not forced; a
--         forced state is stored without expiry, SET without PX or PERSIST, since nothing refreshes it while
--         the gate rejects every call). A breaker sends the same text on every call, so it is parsed once and remembered.
-- args[4] the operation's own argument: for trial_success / trial_failure the trial version, the version of
--         the open period the trial was admitted under (contract v2 fencing: an outcome of another period
--         changes nothing); for force_half_open the openedAt of the forced half-open state (now - 2 *
--         maxResetTimeout, computed by the caller); ignored by the other operations
-- args[5] 1 when the operation removes the key's trial claims (AtomicOperation.removesClaims()), else 0
-- Optional, all four or none (a standalone server only: the feed stream is in another hash slot):
-- the last key, after the state key or the claim keys: the feed stream (<prefix>redeye:feed): an automatic
--         transition (opened, reopened, closed) is appended to it here, in the same call, instead of by a
--         second call (publish) after it
-- args[6] the operation's name (the event's op field)
-- args[7] approximate maximum length of the stream (XADD MAXLEN ~), >= 1
-- args[8] ttl ms of the stream key (1 .. 100 years), refreshed on every entry
--
-- VERSIONS (contract v2): a key's version never goes backwards, also after DEL or expiry. A key that does
-- not exist starts its new life at the server clock in microseconds (TIME): every earlier life of the key
-- started at an earlier TIME and moved by one per transition, and a transition costs far more than a
-- microsecond, so the new base is above every version the key had. Lua numbers are doubles, exact below
-- 2^53; microsecond epochs (~1.8e15) are far below that. The one clock read is for the version base only.
--
-- Returns one string, the fields of a state being ten numbers joined by ',' (FIELDS, StateCodec's names, as
-- stored when every reader parses them alike, else encoded), so ' ' separates the parts: 'previous' when the
-- state did not change (nothing was written); 'previous next' when it changed without a transition;
-- 'previous next kind published' for a transition, kind a TransitionKind wire name and published '1' when its
-- event was appended here, '0' when that append failed, '-' when there was none to append here (a forced
-- change, or no stream given). One string, not an array: every element of a reply costs the call server time.
--
-- COST. A recorded outcome is what caps one key's rate; it comes through record, which runs the record path
-- (record_closed) and hands the rest here. The layout is one string (GET, SET PX: two commands with one
-- argument and one reply value each, where a hash of ten fields costs HMGET's ten arguments and ten reply
-- values, and HSET plus PEXPIRE). The policy is parsed once per distinct text (POLICIES); a stored value in
-- the canonical form is validated and split into its fields with one match (CAPTURE), and its strings are
-- passed through to the reply.

local FIELDS = {'failures', 'lastFailureAt', 'open', 'openedAt', 'openCount',
                'errorRate', 'samples', 'trialSuccesses', 'forced', 'version'}
local NFIELDS = 10
-- Positions in FIELDS, and so in a state: s[FAILURES] is its failure count.
local FAILURES, LAST_FAILURE_AT, OPEN, OPENED_AT, OPEN_COUNT = 1, 2, 3, 4, 5
local ERROR_RATE, SAMPLES, TRIAL_SUCCESSES, FORCED, VERSION = 6, 7, 8, 9, 10
-- The from-status of an automatic transition's event is fixed by its kind (TransitionKind.from(): the codes
-- of BreakerStatus).
local FROM = {opened = '0', reopened = '2', closed = '2'}
-- The stored fields joined by ',' as this library writes them: integers in decimal, booleans 0 / 1, the error
-- rate as '%.17g' writes it (or Java's Double.toString, as put stores it). A state in this form is validated
-- and split by one match (CAPTURE: the same pattern with each field captured) and passed through as it is;
-- any other form (a hand-written 'true', '+0') takes the field-by-field path.
local CANONICAL = '^%d+,%-?%d+,[01],%-?%d+,%d+,%d+%.?%d*[eE]?[+-]?%d*,%d+,%d+,[01],%-?%d+$'
local CAPTURE = '^(%d+),(%-?%d+),([01]),(%-?%d+),(%d+),(%d+%.?%d*[eE]?[+-]?%d*),(%d+),(%d+),([01]),(%-?%d+)$'

local POLICIES = {}
local NPOLICIES = 0

-- A policy text (args[3]) as a table, parsed and validated on first sight, then remembered (at most 1,000
-- texts; the memory starts over beyond). nil when malformed.
local function policy(text)
  local P = POLICIES[text]
  if P then return P end
  if type(text) ~= 'string' then return nil end
  local st, ft, gap, rt, mc, dc, sc, ttl = string.match(text, '^([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*)$')
  P = {strategy = int(st, 0, 2), failure_threshold = int(ft, 1, INT_MAX), max_gap = int(gap, 0, ANY_LONG),
       rate_threshold = num(rt, 0, 1), minimum_calls = int(mc, 0, INT_MAX), decay = num(dc, 0, 1),
       success_threshold = int(sc, 1, INT_MAX), ttl = ttl}
  if not (P.strategy and P.failure_threshold and P.max_gap and P.rate_threshold and P.minimum_calls and P.decay
      and P.success_threshold and uint(ttl, 1, MAX_TTL)) then
    return nil
  end
  if NPOLICIES >= 1000 then
    POLICIES = {}
    NPOLICIES = 0
  end
  POLICIES[text] = P
  NPOLICIES = NPOLICIES + 1
  return P
end

-- A whole number in [min, max] for arithmetic only (never passed on as text), else nil.
local function whole(v, min, max)
  local n = tonumber(v)
  if not n or n % 1 ~= 0 or n < min or n > max then return nil end
  return n
end

local function parse_bool(v)
  if v == '1' or v == '0' then return v == '1' end
  local l = v and string.lower(v)
  if l == 'true' then return true end
  if l == 'false' then return false end
  return nil
end

-- The stored state from its fields by position (split from the value, or HMGET's reply from a hash of
-- earlier releases, where a missing version means a layout without one), field by field, in any form
-- StateCodec reads: the state as numbers and booleans by position, or nil and why.
local function parse_fields(raw)
  local s = {}
  local f = int(raw[1], 0, INT_MAX)
  if not f then return nil, 'field failures is missing or not an integer in range' end
  s[1] = f
  f = int(raw[2], -LONG_MAX, LONG_MAX)
  if not f then return nil, 'field lastFailureAt is missing or not an integer in range' end
  s[2] = f
  f = parse_bool(raw[3])
  if f == nil then return nil, 'field open is missing or not 0 or 1' end
  s[3] = f
  f = int(raw[4], -LONG_MAX, LONG_MAX)
  if not f then return nil, 'field openedAt is missing or not an integer in range' end
  s[4] = f
  f = int(raw[5], 0, INT_MAX)
  if not f then return nil, 'field openCount is missing or not an integer in range' end
  s[5] = f
  f = num(raw[6], 0, 1)
  if not f then return nil, 'field errorRate is missing or not a number in [0, 1]' end
  s[6] = f
  f = int(raw[7], 0, LONG_MAX)
  if not f then return nil, 'field samples is missing or not an integer in range' end
  s[7] = f
  f = int(raw[8], 0, INT_MAX)
  if not f then return nil, 'field trialSuccesses is missing or not an integer in range' end
  s[8] = f
  f = parse_bool(raw[9])
  if f == nil then return nil, 'field forced is missing or not 0 or 1' end
  s[9] = f
  if raw[10] then
    f = int(raw[10], -1, LONG_MAX)
    if not f then return nil, 'field version is not an integer in range' end
    s[10] = f
  else
    s[10] = -1 -- a layout without a version: UNKNOWN
  end
  return s
end

-- One field of a state as stored: integers in decimal, booleans as 1 / 0, the error rate with 17
-- significant digits (the double round-trips bit-exactly).
local function encode(s, i)
  local v = s[i]
  if i == OPEN or i == FORCED then return v and '1' or '0' end
  if i == ERROR_RATE then return string.format('%.17g', v) end
  return string.format('%d', v)
end

-- The fields of a state in the canonical form (raw: the ten strings CAPTURE took) as a state, or nil when
-- a number is out of the range the pattern does not bound (the field-by-field path then says which).
local function parse(raw)
  local s = {tonumber(raw[1]), tonumber(raw[2]), raw[3] == '1', tonumber(raw[4]), tonumber(raw[5]),
             tonumber(raw[6]), tonumber(raw[7]), tonumber(raw[8]), raw[9] == '1', tonumber(raw[10])}
  if s[1] <= INT_MAX and s[2] >= -LONG_MAX and s[2] <= LONG_MAX and s[4] >= -LONG_MAX and s[4] <= LONG_MAX
      and s[5] <= INT_MAX and s[6] and s[6] <= 1 and s[7] <= LONG_MAX and s[8] <= INT_MAX and s[10] >= -1
      and s[10] <= LONG_MAX then
    return s
  end
  return nil
end

-- A stored value split at every ',' and the number of pieces.
local function split(v)
  local t = {}
  local n = 0
  for f in string.gmatch(v .. ',', '([^,]*),') do
    n = n + 1
    t[n] = f
  end
  return t, n
end

local function copy(s)
  return {s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10]}
end

local function next_version(s)
  return math.max(s[VERSION], 0) + 1
end

local function inc(v, max)
  if v >= max then return max end
  return v + 1
end

-- The rules, each of (state, policy, now, the operation's own argument) returning the next state and the
-- transition kind ('' for none).
local function closed_from(s)
  return {0, s[LAST_FAILURE_AT], false, 0, 0, 0, 0, 0, false, next_version(s)}
end

-- A recorded outcome (not a trial) of a closed breaker, on the four fields it reads: the failure count, the
-- last failure's time, the error rate and its sample count. Returns them after the outcome and whether the
-- breaker opens. The one place these rules are written: the general path (record_failure, record_success)
-- and the record path (record_closed) both apply it.
local function closed_outcome(failures, last, rate, samples, success, P, now)
  if P.strategy == 1 then
    -- error rate: x = 1 for a failure, 0 for a success; the failure count is not used while closed
    local x = 1
    if success then x = 0 end
    local r
    if samples == 0 then
      r = x
    else
      local decay = P.decay
      r = decay * rate + (1 - decay) * x -- same operations in the same order as the Java rule
    end
    local n = inc(samples, LONG_MAX)
    if not success then last = now end
    return failures, last, r, n, n >= P.minimum_calls and r >= P.rate_threshold
  end
  if success then
    if failures == 0 then return failures, last, rate, samples, false end
    if P.strategy == 2 then
      return failures - 1, last, rate, samples, false -- leaky: one success leaks one failure out
    end
    return 0, last, rate, samples, false -- clearing is a write, not a transition (contract v2)
  end
  -- consecutive (0) and leaky (2) count failures alike; they differ in what a success does
  local f
  local max_gap = P.max_gap
  if max_gap > 0 and failures > 0 and now - last > max_gap then
    f = 1
  else
    f = inc(failures, INT_MAX)
  end
  return f, now, rate, samples, f >= P.failure_threshold
end

-- A recorded outcome on the state s: a failure while open counts without moving anything else; an outcome
-- while closed is closed_outcome, and opens the breaker (openedAt now, a new version) when it says so.
local function record(s, P, now, success)
  if s[OPEN] then
    if success then return s, '' end
    local n = copy(s)
    n[FAILURES] = inc(s[FAILURES], INT_MAX)
    n[LAST_FAILURE_AT] = now
    return n, ''
  end
  local f, last, rate, samples, opens = closed_outcome(s[FAILURES], s[LAST_FAILURE_AT], s[ERROR_RATE],
      s[SAMPLES], success, P, now)
  local n = copy(s)
  n[FAILURES] = f
  n[LAST_FAILURE_AT] = last
  n[ERROR_RATE] = rate
  n[SAMPLES] = samples
  if opens then
    n[OPEN] = true
    n[OPENED_AT] = now
    n[TRIAL_SUCCESSES] = 0
    n[VERSION] = next_version(s)
    return n, 'opened'
  end
  return n, ''
end

local function record_failure(s, P, now)
  return record(s, P, now, false)
end

local function record_success(s, P, now)
  return record(s, P, now, true)
end

-- Trial fencing (contract v2): only an outcome of the current open period counts.
local function current_period(s, trial_version)
  return s[OPEN] and not s[FORCED] and s[VERSION] == trial_version
end

local function trial_succeeded(s, P, now, trial_version)
  if not current_period(s, trial_version) then return s, '' end
  local k = inc(s[TRIAL_SUCCESSES], INT_MAX)
  if k >= P.success_threshold then return closed_from(s), 'closed' end
  local n = copy(s)
  n[TRIAL_SUCCESSES] = k
  return n, ''
end

local function trial_failed(s, P, now, trial_version)
  if not current_period(s, trial_version) then return s, '' end
  local n = copy(s)
  n[OPEN] = true
  n[OPENED_AT] = now
  n[OPEN_COUNT] = inc(s[OPEN_COUNT], INT_MAX)
  n[FAILURES] = math.max(s[FAILURES], P.failure_threshold)
  n[LAST_FAILURE_AT] = now
  n[TRIAL_SUCCESSES] = 0
  n[VERSION] = next_version(s)
  return n, 'reopened'
end

local function force_open(s, P, now)
  local n = copy(s)
  n[OPEN] = true
  n[FORCED] = true
  n[OPENED_AT] = now
  n[TRIAL_SUCCESSES] = 0
  n[VERSION] = next_version(s)
  return n, 'forced_open'
end

local function force_half_open(s, P, now, opened_at)
  local n = copy(s)
  n[OPEN] = true
  n[FORCED] = false
  n[OPENED_AT] = opened_at
  n[TRIAL_SUCCESSES] = 0
  n[VERSION] = next_version(s)
  return n, 'forced_half_open'
end

local function force_closed(s, P, now)
  return closed_from(s), 'forced_closed'
end

-- Each operation: its rule, and the range of its own argument (args[4]) when it reads one.
local RULES = {failure = record_failure, success = record_success, trial_success = trial_succeeded,
               trial_failure = trial_failed, force_open = force_open, force_half_open = force_half_open,
               force_closed = force_closed}
local OWN_ARG = {trial_success = {-1, ANY_LONG}, trial_failure = {-1, ANY_LONG},
                 force_half_open = {-ANY_LONG, ANY_LONG}}

-- THE RECORD PATH. An outcome recorded on a closed state (a sub-threshold failure, a success, the failure that
-- opens) is most of what the library ever runs, and what caps one key's rate. It runs without the general
-- machinery of state (a state table, a copy, a comparison of all ten fields): the stored value v has been
-- checked and split by one match (f1 .. f10, strings), only the fields the policy's rule reads are converted to
-- numbers, only the fields that change are formatted, and the value is written whole by one SET PX; an opening
-- also appends its event (feed: the caller gave the stream, with its name, length and ttl arguments). The rule
-- is closed_outcome, the same as on the general path, and an opening moves the fields record() moves. It
-- returns nil, having written nothing, for anything else: a number the pattern does not bound out of range, or
-- a state that is not closed or is forced, which the general path then handles (and reports).
local function record_closed(key, v, f1, f2, f4, f5, f6, f7, f8, f9, f10, P, now, success, feed, name, length,
    stream_ttl)
  -- the ranges the pattern does not bound: a 16-character field is compared with 2^53 as text (same length)
  local n2, n4, n10 = #f2, #f4, #f10
  if #f1 > 9 or #f5 > 9 or #f7 > 15 or #f8 > 9 or f9 ~= '0' or n2 > 16 or (n2 == 16 and f2 > LONG_MAX_TEXT)
      or n4 > 16 or (n4 == 16 and f4 > LONG_MAX_TEXT) or n10 > 16 or (n10 == 16 and f10 > LONG_MAX_TEXT)
      or (string.byte(f10) == 45 and f10 ~= '-1') then
    return nil
  end
  local rate = 0
  if f6 ~= '0' then
    rate = tonumber(f6)
    if not rate or rate > 1 then return nil end
  end
  -- The last failure's time and the sample count are converted only where the rule reads them (the gap of
  -- the counting strategies; the error rate's count); elsewhere they are false, which the rule returns as it
  -- got them.
  local failures, last, samples = tonumber(f1), false, false
  if P.strategy == 1 then
    samples = tonumber(f7)
  elseif P.max_gap > 0 then
    last = tonumber(f2)
  end
  local f, l, r, n, opens = closed_outcome(failures, last, rate, samples, success, P, now)
  local changed = false
  if f ~= failures then
    f1 = string.format('%d', f)
    changed = true
  end
  if r ~= rate then
    f6 = string.format('%.17g', r)
    changed = true
  end
  if n ~= samples then
    f7 = string.format('%d', n)
    changed = true
  end
  if l ~= last and (last or changed or tonumber(f2) ~= l) then
    f2 = string.format('%d', l)
    changed = true
  end
  if not opens then
    if not changed then return v end
    local nv = f1 .. ',' .. f2 .. ',0,' .. f4 .. ',' .. f5 .. ',' .. f6 .. ',' .. f7 .. ',' .. f8 .. ',0,' .. f10
    redis.call('SET', key, nv, 'PX', P.ttl)
    return v .. ' ' .. nv
  end
  -- the opening: open, openedAt now, no trial successes, the next version (record())
  if feed and not (uint(length, 1, LONG_MAX) and uint(stream_ttl, 1, MAX_TTL)) then
    return redis.error_reply('REDEYE_BAD_ARGS record got a stream length ' .. tostring(length) .. ' and ttl '
        .. tostring(stream_ttl) .. ': both must be in range; nothing was changed')
  end
  local version = tonumber(f10)
  if version < 0 then version = 0 end
  f4 = string.format('%d', now)
  f10 = string.format('%d', version + 1)
  local nv = f1 .. ',' .. f2 .. ',1,' .. f4 .. ',' .. f5 .. ',' .. f6 .. ',' .. f7 .. ',0,0,' .. f10
  redis.call('SET', key, nv, 'PX', P.ttl)
  local published = '-'
  if feed then
    local id = redis.pcall('XADD', feed, 'MAXLEN', '~', length, '*', 'op', name, 'kind', 'opened', 'from', '0',
        'failures', f1, 'lastFailureAt', f2, 'open', '1', 'openedAt', f4, 'openCount', f5, 'errorRate', f6,
        'samples', f7, 'trialSuccesses', '0', 'forced', '0', 'version', f10)
    if type(id) == 'table' and id.err then
      published = '0'
    else
      redis.pcall('PEXPIRE', feed, stream_ttl)
      published = '1'
    end
  end
  return v .. ' ' .. nv .. ' opened ' .. published
end

local change

local function state(keys, a)
  local nargs = #a
  local op = a[1]
  local rule = RULES[op]
  local now = whole(a[2], -ANY_LONG, ANY_LONG)
  local P = policy(a[3])
  local own = OWN_ARG[op]
  local own_arg = own and whole(a[4], own[1], own[2])
  local removes_claims = a[5]
  -- the keys: the state, the two claim keys when the operation removes claims, the stream last when given
  local nkeys = #keys
  local feed = nargs == 8 and keys[nkeys]
  if not rule or not now or not P or (own and not own_arg) or (removes_claims ~= '0' and removes_claims ~= '1')
      or (nargs ~= 5 and nargs ~= 8) or nkeys ~= (removes_claims == '1' and 3 or 1) + (feed and 1 or 0) then
    return redis.error_reply('REDEYE_BAD_ARGS state got ' .. nargs .. ' arguments, op ' .. tostring(op)
        .. ', policy ' .. tostring(a[3]) .. ': every argument must be present and in range; nothing was changed')
  end

  return change(keys, redis.pcall('GET', keys[1]), op, rule, now, P, own_arg, removes_claims, feed, a[6], a[7],
      a[8])
end

-- The general path of state, on the reply v of the state key's GET (the stored value; false when the key does
-- not exist; a WRONGTYPE error for the hash of earlier releases), the arguments checked: name, length and
-- stream_ttl are state's args[6..8] when feed is the stream.
change = function(keys, v, op, rule, now, P, own_arg, removes_claims, feed, name, length, stream_ttl)
  -- v: the stored value; false when the key does not exist; nil for a hash of earlier releases that lacks a
  -- field (hash then holds HMGET's reply)
  local hash
  if type(v) == 'table' then
    if not (v.err and string.sub(v.err, 1, 9) == 'WRONGTYPE') then return v end
    -- the key holds another type: the hash of earlier releases (any other type makes HMGET fail: WRONGTYPE)
    hash = redis.call('HMGET', keys[1], unpack(FIELDS))
    if hash[1] and hash[2] and hash[3] and hash[4] and hash[5] and hash[6] and hash[7] and hash[8] and hash[9]
        and hash[10] then
      v = table.concat(hash, ',')
    elseif hash[1] or hash[2] or hash[3] or hash[4] or hash[5] or hash[6] or hash[7] or hash[8] or hash[9]
        or hash[10] then
      v = nil
    else
      return redis.error_reply('REDEYE_MALFORMED hash has none of the breaker fields')
    end
  end

  local prev, p, text
  if v then
    local f1, f2, f3, f4, f5, f6, f7, f8, f9, f10 = string.match(v, CAPTURE)
    if f1 then
      p = {f1, f2, f3, f4, f5, f6, f7, f8, f9, f10}
      prev = parse(p)
      text = v
    end
  end
  if not prev and v ~= false then
    local fields = hash
    if not fields then
      local n
      fields, n = split(v)
      if n ~= NFIELDS then
        return redis.error_reply('REDEYE_MALFORMED the value has ' .. n .. ' comma-separated fields, not '
            .. NFIELDS)
      end
    end
    local why
    prev, why = parse_fields(fields)
    if not prev then
      return redis.error_reply('REDEYE_MALFORMED ' .. why)
    end
    -- report integers as stored (every reader parses them alike), encode booleans, an error rate in another
    -- form and a missing version
    p = fields
    p[OPEN] = prev[OPEN] and '1' or '0'
    p[FORCED] = prev[FORCED] and '1' or '0'
    if not string.match(p[ERROR_RATE], '^%d+%.?%d*$') then p[ERROR_RATE] = encode(prev, ERROR_RATE) end
    if not p[VERSION] then p[VERSION] = encode(prev, VERSION) end
    text = table.concat(p, ',')
  elseif not prev then
    -- a new life of the key: the initial state, its version based on the server clock in microseconds
    local t = redis.call('TIME')
    prev = {0, 0, false, 0, 0, 0, 0, 0, false, tonumber(t[1]) * 1000000 + tonumber(t[2])}
    p = {}
    for i = 1, NFIELDS do p[i] = encode(prev, i) end
    text = table.concat(p, ',')
  end
  if prev[FORCED] and not prev[OPEN] then
    return redis.error_reply('REDEYE_MALFORMED forced state is not open')
  end

  local nxt, kind = rule(prev, P, now, own_arg)
  -- the stream's arguments, read only to append an event: checked before the first write all the same
  local publishes = feed and FROM[kind]
  if publishes and not (uint(length, 1, LONG_MAX) and uint(stream_ttl, 1, MAX_TTL)) then
    return redis.error_reply('REDEYE_BAD_ARGS ' .. op .. ' got a stream length ' .. tostring(length) .. ' and ttl '
        .. tostring(stream_ttl) .. ': both must be in range; nothing was changed')
  end

  -- A field changed when its value did (the same test as comparing the encoded strings: integers are exact,
  -- the error rate round-trips bit-exactly); only changed fields are formatted, the others pass through.
  local q = p
  local changed = false
  for i = 1, NFIELDS do
    if prev[i] ~= nxt[i] then
      if not changed then
        q = {p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10]}
        changed = true
      end
      q[i] = encode(nxt, i)
    end
  end
  local qtext = changed and table.concat(q, ',') or text
  -- A forced state never expires (an operator holds it until reset); any other state carries the clean-up
  -- ttl. A forced state left unchanged is persisted too (it may predate this rule), and a hash of earlier
  -- releases is replaced by the value at once.
  if nxt[FORCED] then
    if changed or hash then
      redis.call('SET', keys[1], qtext)
    else
      redis.call('PERSIST', keys[1])
    end
  elseif changed then
    redis.call('SET', keys[1], qtext, 'PX', P.ttl)
  end
  if removes_claims == '1' then
    redis.call('DEL', keys[2], keys[3])
  end

  -- The event of an automatic transition, when the caller gave the feed stream: appended with the state
  -- change, so there is no second round trip. A failed append (the stream key holds another type, an ACL)
  -- does not undo the committed change: published '0' tells the caller to publish (and signal a gap) as when
  -- it appends by itself.
  local published = '-'
  if publishes then
    local entry = {feed, 'MAXLEN', '~', length, '*', 'op', name, 'kind', kind, 'from', FROM[kind]}
    for i = 1, NFIELDS do
      entry[#entry + 1] = FIELDS[i]
      entry[#entry + 1] = q[i]
    end
    local id = redis.pcall('XADD', unpack(entry))
    if type(id) == 'table' and id.err then
      published = '0'
    else
      redis.pcall('PEXPIRE', feed, stream_ttl)
      published = '1'
    end
  end
  if kind ~= '' then return text .. ' ' .. qtext .. ' ' .. kind .. ' ' .. published end
  if changed then return text .. ' ' .. qtext end
  return text
end

--------------------------------------------------------------------------------------------------- record
-- A recorded outcome, failure or success (AtomicOperation FAILURE, SUCCESS): what every guarded call sends, and
-- so what caps one key's rate. Its interface is the smallest the rule allows (every key and argument costs the
-- call server time): no own argument and no claim keys, since a recorded outcome neither reads the one nor
-- removes the others.
--
-- keys[1] state string, as for state
-- args[1] failure | success
-- args[2] now, epoch ms, as for state
-- args[3] the policy, as for state
-- Optional, the three or none (a standalone server only), as state's args[6..8] with the stream as keys[2]:
-- args[4] the operation's name; args[5] the stream's approximate maximum length; args[6] the stream's ttl ms
--
-- Returns what state returns. A closed, unforced state in the canonical form runs the record path
-- (record_closed); any other state (open, forced, a hash of earlier releases, a value to report as malformed, a
-- key that does not exist) goes to state's general path (change) with the same GET reply, before anything is
-- written.
local function recorded_outcome(keys, a)
  local op = a[1]
  local nargs = #a
  local nkeys = #keys
  local feed = nargs == 6 and keys[2]
  local now = whole(a[2], -ANY_LONG, ANY_LONG)
  local P = policy(a[3])
  if (op ~= 'failure' and op ~= 'success') or not now or not P or (nargs ~= 3 and nargs ~= 6)
      or nkeys ~= (nargs == 6 and 2 or 1) then
    return redis.error_reply('REDEYE_BAD_ARGS record got ' .. nargs .. ' arguments and ' .. nkeys .. ' keys, op '
        .. tostring(op) .. ', policy ' .. tostring(a[3])
        .. ': every argument must be present and in range; nothing was changed')
  end
  local v = redis.pcall('GET', keys[1])
  if type(v) == 'string' then
    local f1, f2, f3, f4, f5, f6, f7, f8, f9, f10 = string.match(v, CAPTURE)
    if f3 == '0' then
      local done = record_closed(keys[1], v, f1, f2, f4, f5, f6, f7, f8, f9, f10, P, now, op == 'success', feed,
          a[4], a[5], a[6])
      if done then return done end
    end
  end
  return change(keys, v, op, RULES[op], now, P, false, '0', feed, a[4], a[5], a[6])
end

---------------------------------------------------------------------------------------------------- claim
-- Claim one half-open trial permit.
--
-- keys[1] claims zset (<prefix>{<tag>}:trial): member = token, score = expiry in server epoch ms; used when
--         permits > 1
-- keys[2] one-permit claim (<prefix>{<tag>}:trial1): a string holding the token, expiring by PX; used when
--         permits == 1
-- args[1] permits (>= 1)
-- args[2] ttl ms (1 .. 100 years)
-- args[3] token (unique per call)
--
-- Returns 1 when the claim was created (or this token already holds one), 0 when every permit is held by a
-- live claim. Both keys share the operation's hash tag (one Cluster slot). Breakers with different permits may
-- share a key, so each branch counts the live claims of the other structure too:
--   permits == 1: fails if the zset holds any live member, else SET NX PX;
--   permits  > 1: live zset members + 1 if the one-permit claim exists must stay below permits.
-- Expiry uses the SERVER clock (TIME, and PX): effects are replicated, so replicas and a promoted primary see
-- the same absolute expiries, and no client clock is involved.
--
-- The type of the one-permit key is checked before anything is written too: the several-permits branch
-- prunes expired members before it adds, and must not fail after.
--
-- IDEMPOTENT per token: if the token already holds a live claim (a first attempt whose reply was lost) the
-- answer is 1 again and nothing changes, so the store may send the same claim twice.
local function claim(keys, a)
  local permits = uint(a[1], 1, INT_MAX)
  local ttl = uint(a[2], 1, MAX_TTL)
  local token = a[3]
  if not permits or not ttl or type(token) ~= 'string' or token == '' or #a ~= 3 then
    return redis.error_reply('REDEYE_BAD_ARGS claim needs permits >= 1, a ttl in 1 .. ' .. MAX_TTL
        .. ' ms and a token; nothing was changed')
  end
  local now = server_ms()

  -- Data of another type under the one-permit key would block every claim without ever expiring.
  local ty = redis.call('TYPE', keys[2])['ok']
  if ty ~= 'none' and ty ~= 'string' then
    return redis.error_reply('REDEYE_MALFORMED the one-permit claim key holds a ' .. ty .. ', not a string')
  end

  -- Already claimed by this very token: a repeated attempt.
  if redis.call('GET', keys[2]) == token then
    return 1
  end
  local held = redis.call('ZSCORE', keys[1], token)
  if held and tonumber(held) > now then
    return 1
  end

  if permits == 1 then
    if redis.call('ZCOUNT', keys[1], '(' .. now, '+inf') > 0 then
      return 0
    end
    if redis.call('SET', keys[2], token, 'NX', 'PX', ttl) then
      return 1
    end
    return 0
  end

  redis.call('ZREMRANGEBYSCORE', keys[1], '-inf', now) -- drop expired claims
  local live = redis.call('ZCARD', keys[1]) + redis.call('EXISTS', keys[2])
  if live >= permits then
    return 0
  end
  redis.call('ZADD', keys[1], now + ttl, token)
  -- The key outlives its longest-lived claim and no more.
  if redis.call('PTTL', keys[1]) < ttl then
    redis.call('PEXPIRE', keys[1], ttl)
  end
  return 1
end

-------------------------------------------------------------------------------------------------- release
-- Release one trial claim by its token (compare-and-delete).
--
-- keys[1] claims zset (<prefix>{<tag>}:trial)
-- keys[2] one-permit claim (<prefix>{<tag>}:trial1)
-- args[1] token
--
-- Deletes the one-permit claim only if it still holds this token, else removes the token from the zset. A
-- stale, expired or unknown token changes nothing (the empty one included: it matches no claim). Returns 1
-- when a claim was released, else 0.
local function release(keys, a)
  if redis.call('GET', keys[2]) == a[1] then
    redis.call('DEL', keys[2])
    return 1
  end
  return redis.call('ZREM', keys[1], a[1])
end

------------------------------------------------------------------------------------------------------ put
-- Unconditional write of a whole breaker state (Store.put, last writer wins).
--
-- keys[1] state string
-- args[1] ttl ms (1 .. 100 years), or 0 for no expiry (the store passes 0 for a forced state: a forced state
--         is never expired by the store, whatever ttl the caller gave)
-- args[2] the state: the ten fields of FIELDS joined by ',', in the canonical form (CANONICAL)
--
-- Replaces whatever was under the key (including data of another type, and the hash of earlier releases) and
-- sets its TTL, atomically: one SET. The arguments are checked before it.
local function put(keys, a)
  local ttl = a[1]
  local value = a[2]
  if not uint(ttl, 0, MAX_TTL) or #a ~= 2 or type(value) ~= 'string' or not string.find(value, CANONICAL) then
    return redis.error_reply('REDEYE_BAD_ARGS put needs a ttl in 0 .. ' .. MAX_TTL
        .. ' ms and a state of ten comma-separated fields, got ttl ' .. tostring(ttl) .. ' and ' .. (#a - 1)
        .. ' more arguments; nothing was changed')
  end
  if tonumber(ttl) > 0 then
    redis.call('SET', keys[1], value, 'PX', ttl)
  else
    redis.call('SET', keys[1], value)
  end
  return 1
end

-------------------------------------------------------------------------------------------------- publish
-- Publish one transition event (or a gap marker) on the feed stream.
--
-- keys[1] feed stream (<prefix>redeye:feed)
-- args[1] approximate maximum length of the stream (>= 1)
-- args[2] ttl ms of the stream key (1 .. 100 years), refreshed on every entry (clean-up only)
-- args[3..] field, value, field, value, ... (StateCodec event fields, or the one gap marker field)
--
-- Returns the new entry id. The arguments are checked before the XADD: a failing PEXPIRE after it would
-- report an error for an entry that was appended.
local function publish(keys, a)
  local n = #a - 2
  if not uint(a[1], 1, LONG_MAX) or not uint(a[2], 1, MAX_TTL) or n < 2 or n % 2 ~= 0 then
    return redis.error_reply('REDEYE_BAD_ARGS publish needs a length >= 1, a ttl in 1 .. ' .. MAX_TTL
        .. ' ms and field/value pairs; nothing was appended')
  end
  local id = redis.call('XADD', keys[1], 'MAXLEN', '~', a[1], '*', unpack(a, 3))
  redis.call('PEXPIRE', keys[1], a[2])
  return id
end

export('state', state)
export('record', recorded_outcome)
export('claim', claim)
export('release', release)
export('put', put)
export('publish', publish)
