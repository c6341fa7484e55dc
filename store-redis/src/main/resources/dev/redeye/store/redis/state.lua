-- redeye: one atomic read-modify-write of a breaker's state.
-- Mirrors dev.redeye.api.Transitions rule by rule; the TCK's parity rules (R2.9, R3.1, R5.x, R9.x, R8.1) prove it.
--
-- KEYS[1]  state hash   (<prefix>{<tag>}:state)
-- KEYS[2]  claims zset  (<prefix>{<tag>}:trial), same hash slot; only force_closed and force_half_open touch it
-- KEYS[3]  one-permit claim string (<prefix>{<tag>}:trial1), same hash slot; the same
-- ARGV[1]  op: failure | success | trial_success | trial_failure | force_open | force_half_open | force_closed
-- ARGV[2]  now, epoch ms (the caller's clock; the rules never read the server clock, see VERSIONS below)
-- ARGV[3]  strategy code (Strategy.code()): 0 consecutive, 1 errorRate, 2 leaky
-- ARGV[4]  failureThreshold
-- ARGV[5]  maxGapBetweenFailures ms (0 = unset)
-- ARGV[6]  errorRateThreshold
-- ARGV[7]  minimumCalls
-- ARGV[8]  errorRateDecay
-- ARGV[9]  successThreshold
-- ARGV[10] state ttl ms, set on every write of a state that is not forced; a forced state is stored
--          without expiry (PERSIST), since nothing refreshes it while the gate rejects every call
-- ARGV[11] openedAt of a forced half-open state (now - 2 * maxResetTimeout, computed by the caller)
-- ARGV[12] trial version: for trial_success / trial_failure, the version of the open period the trial was
--          admitted under (contract v2 fencing); an outcome of another period changes nothing
-- Optional, all four or none (a standalone server only: the feed stream is in another hash slot):
-- KEYS[4]  feed stream (<prefix>redeye:feed): an automatic transition (opened, reopened, closed) is appended
--          to it here, in the same script, instead of by a second call (publish.lua) after it
-- ARGV[13] the operation's name (the event's op field)
-- ARGV[14] approximate maximum length of the stream (XADD MAXLEN ~), >= 1
-- ARGV[15] ttl ms of the stream key (1 .. 100 years), refreshed on every entry
--
-- VERSIONS (contract v2): a key's version never goes backwards, also after DEL or expiry. A key that does
-- not exist starts its new life at the server clock in microseconds (TIME): every earlier life of the key
-- started at an earlier TIME and moved by one per transition, and a transition costs far more than a
-- microsecond, so the new base is above every version the key had. Lua numbers are doubles, exact below
-- 2^53; microsecond epochs (~1.8e15) are far below that. The one clock read is for the version base only.
--
-- ARGUMENTS are checked before anything is read or written (REDEYE_BAD_ARGS): a script that fails after its
-- first write would leave a half-applied change (Redis does not roll a script back). The ttl must be within
-- 1 .. MAX_TTL (100 years; the store caps longer ones), since PEXPIRE rejects an expiry that overflows.
--
-- Returns {kind, changed, 10 previous fields, 10 next fields, published}: kind is a TransitionKind wire name or ''
-- when the change is not a transition; changed is '1' when the hash was written (only the fields whose value
-- changed are written, every field for a key that did not exist). Fields come in the order of FIELDS below
-- (StateCodec's names), as stored when every reader parses them alike (integers), else encoded. Malformed stored data gives an error starting with
-- REDEYE_MALFORMED and writes nothing.

if redis.replicate_commands then
  redis.replicate_commands() -- effect replication: required before TIME on Redis < 5, a no-op on Redis 7+
end

local FIELDS = {'failures', 'lastFailureAt', 'open', 'openedAt', 'openCount',
                'errorRate', 'samples', 'trialSuccesses', 'forced', 'version'}
local INT_MAX = 2147483647
-- Lua numbers are doubles: longs are exact up to 2^53.
local LONG_MAX = 9007199254740992

-- 100 years in ms: the longest ttl the store writes (RedisStore.MAX_TTL_MILLIS).
local MAX_TTL = 3153600000000
local OPS = {failure = true, success = true, trial_success = true, trial_failure = true,
             force_open = true, force_half_open = true, force_closed = true}

local function int_arg(i, min, max)
  local v = ARGV[i]
  if type(v) ~= 'string' or not string.match(v, '^[+-]?%d+$') then return nil end
  local n = tonumber(v)
  if n < min or n > max then return nil end
  return n
end

local function num_arg(i, min, max)
  local n = tonumber(ARGV[i])
  if not n or n ~= n or n < min or n > max then return nil end
  return n
end

-- Any Java long (times and gaps are not range-checked by the rules; doubles hold them approximately above 2^53).
local ANY_LONG = 1e19

local op = ARGV[1]
local now = int_arg(2, -ANY_LONG, ANY_LONG)
local strategy = int_arg(3, 0, 2)
local failure_threshold = int_arg(4, 1, INT_MAX)
local max_gap = int_arg(5, 0, ANY_LONG)
local rate_threshold = num_arg(6, 0, 1)
local minimum_calls = int_arg(7, 0, INT_MAX)
local decay = num_arg(8, 0, 1)
local success_threshold = int_arg(9, 1, INT_MAX)
local ttl_ms = int_arg(10, 1, MAX_TTL)
local ttl = ARGV[10]
local half_open_opened_at = int_arg(11, -ANY_LONG, ANY_LONG)
local trial_version = int_arg(12, -1, ANY_LONG)
local feed = #ARGV == 15 and KEYS[4] ~= nil
local feed_length = feed and int_arg(14, 1, LONG_MAX)
local feed_ttl = feed and int_arg(15, 1, MAX_TTL)

if (#ARGV ~= 12 and not (feed and feed_length and feed_ttl)) or not OPS[op] or not now or not strategy
    or not failure_threshold or not max_gap or not rate_threshold or not minimum_calls or not decay or not success_threshold or not ttl_ms
    or not half_open_opened_at or not trial_version then
  return redis.error_reply('REDEYE_BAD_ARGS state.lua got ' .. #ARGV .. ' arguments, op ' .. tostring(op)
      .. ', ttl ' .. tostring(ttl) .. ': every argument must be present and in range; nothing was changed')
end

local function parse_int(v, name, min, max)
  if not v then return nil, 'missing field ' .. name end
  if not string.match(v, '^[+-]?%d+$') then return nil, 'field ' .. name .. ' is not an integer' end
  local n = tonumber(v)
  if n < min or n > max then return nil, 'field ' .. name .. ' is out of range' end
  return n
end

local function parse_bool(v, name)
  if not v then return nil, 'missing field ' .. name end
  local l = string.lower(v)
  if l == '1' or l == 'true' then return true end
  if l == '0' or l == 'false' then return false end
  return nil, 'field ' .. name .. ' is not 0 or 1'
end

-- The version a new life of a key starts at: the server clock in microseconds.
local function version_base()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Reads the stored state; a missing key reads as the initial state of a new life (see VERSIONS).
local function load()
  local raw = redis.call('HMGET', KEYS[1], unpack(FIELDS))
  local any = false
  for i = 1, #FIELDS do
    if raw[i] then any = true end
  end
  if not any then
    if redis.call('EXISTS', KEYS[1]) == 1 then
      return nil, 'hash has none of the breaker fields'
    end
    return {failures = 0, lastFailureAt = 0, open = false, openedAt = 0, openCount = 0,
            errorRate = 0, samples = 0, trialSuccesses = 0, forced = false, version = version_base()}, nil
  end
  local s, err = {}, nil
  s.failures, err = parse_int(raw[1], 'failures', 0, INT_MAX); if err then return nil, err end
  s.lastFailureAt, err = parse_int(raw[2], 'lastFailureAt', -LONG_MAX, LONG_MAX); if err then return nil, err end
  s.open, err = parse_bool(raw[3], 'open'); if err then return nil, err end
  s.openedAt, err = parse_int(raw[4], 'openedAt', -LONG_MAX, LONG_MAX); if err then return nil, err end
  s.openCount, err = parse_int(raw[5], 'openCount', 0, INT_MAX); if err then return nil, err end
  if not raw[6] then return nil, 'missing field errorRate' end
  s.errorRate = tonumber(raw[6])
  if not s.errorRate or s.errorRate ~= s.errorRate or s.errorRate < 0 or s.errorRate > 1 then
    return nil, 'field errorRate is not a number in [0, 1]'
  end
  s.samples, err = parse_int(raw[7], 'samples', 0, LONG_MAX); if err then return nil, err end
  s.trialSuccesses, err = parse_int(raw[8], 'trialSuccesses', 0, INT_MAX); if err then return nil, err end
  s.forced, err = parse_bool(raw[9], 'forced'); if err then return nil, err end
  if raw[10] then
    s.version, err = parse_int(raw[10], 'version', -1, LONG_MAX); if err then return nil, err end
  else
    s.version = -1 -- a layout without a version: UNKNOWN
  end
  if s.forced and not s.open then return nil, 'forced state is not open' end
  return s, raw
end

-- One field of a state as stored: integers in decimal, booleans as 1 / 0, the error rate with 17
-- significant digits (the double round-trips bit-exactly).
local function encode_field(s, i)
  local v = s[FIELDS[i]]
  if i == 3 or i == 9 then return v and '1' or '0' end
  if i == 6 then return string.format('%.17g', v) end
  return string.format('%d', v)
end

-- The stored strings of a state that was read from the hash (raw, as HMGET returned them): a field passes
-- through as stored when every reader parses it to the same value (integers matched ^[+-]?%d+$ when read; a
-- plain decimal error rate); booleans and any other error rate are encoded. Formatting is most of this
-- script's time, so the common case formats nothing.
local function stored_fields(s, raw)
  local out = {}
  for i = 1, #FIELDS do
    local r = raw and raw[i]
    if r and i ~= 3 and i ~= 9 and (i ~= 6 or string.match(r, '^%d+%.?%d*$')) then
      out[i] = r
    else
      out[i] = encode_field(s, i)
    end
  end
  return out
end

local function copy(s)
  return {failures = s.failures, lastFailureAt = s.lastFailureAt, open = s.open, openedAt = s.openedAt,
          openCount = s.openCount, errorRate = s.errorRate, samples = s.samples,
          trialSuccesses = s.trialSuccesses, forced = s.forced, version = s.version}
end

local function next_version(s)
  return math.max(s.version, 0) + 1
end

local function inc(v, max)
  if v >= max then return max end
  return v + 1
end

local function closed_from(s)
  return {failures = 0, lastFailureAt = s.lastFailureAt, open = false, openedAt = 0, openCount = 0,
          errorRate = 0, samples = 0, trialSuccesses = 0, forced = false, version = next_version(s)}
end

local function error_rate_outcome(s, success)
  local x = 1
  if success then x = 0 end
  local rate
  if s.samples == 0 then
    rate = x
  else
    rate = decay * s.errorRate + (1 - decay) * x -- same operations in the same order as the Java rule
  end
  local n = copy(s)
  n.errorRate = rate
  n.samples = inc(s.samples, LONG_MAX)
  if not success then n.lastFailureAt = now end
  if n.samples >= minimum_calls and rate >= rate_threshold then
    n.open = true
    n.openedAt = now
    n.trialSuccesses = 0
    n.version = next_version(s)
    return n, 'opened'
  end
  return n, ''
end

local function record_failure(s)
  if s.open then
    local n = copy(s)
    n.failures = inc(s.failures, INT_MAX)
    n.lastFailureAt = now
    return n, ''
  end
  if strategy == 1 then return error_rate_outcome(s, false) end
  -- consecutive (0) and leaky (2) count failures alike; they differ in what a success does
  local f
  if max_gap > 0 and s.failures > 0 and now - s.lastFailureAt > max_gap then
    f = 1
  else
    f = inc(s.failures, INT_MAX)
  end
  local n = copy(s)
  n.failures = f
  n.lastFailureAt = now
  if f >= failure_threshold then
    n.open = true
    n.openedAt = now
    n.trialSuccesses = 0
    n.version = next_version(s)
    return n, 'opened'
  end
  return n, ''
end

local function record_success(s)
  if s.open then return s, '' end
  if strategy == 1 then return error_rate_outcome(s, true) end
  if s.failures == 0 then return s, '' end
  local n = copy(s)
  if strategy == 2 then
    n.failures = s.failures - 1 -- leaky: one success leaks one failure out; a write, not a transition
  else
    n.failures = 0 -- clearing is a write, not a transition (contract v2): same version, no event
  end
  return n, ''
end

-- Trial fencing (contract v2): only an outcome of the current open period counts.
local function current_period(s)
  return s.open and not s.forced and s.version == trial_version
end

local function trial_succeeded(s)
  if not current_period(s) then return s, '' end
  local k = inc(s.trialSuccesses, INT_MAX)
  if k >= success_threshold then return closed_from(s), 'closed' end
  local n = copy(s)
  n.trialSuccesses = k
  return n, ''
end

local function trial_failed(s)
  if not current_period(s) then return s, '' end
  local n = copy(s)
  n.open = true
  n.openedAt = now
  n.openCount = inc(s.openCount, INT_MAX)
  n.failures = math.max(s.failures, failure_threshold)
  n.lastFailureAt = now
  n.trialSuccesses = 0
  n.version = next_version(s)
  return n, 'reopened'
end

local function force(s, target)
  local n
  if target == 'force_open' then
    n = copy(s)
    n.open = true
    n.forced = true
    n.openedAt = now
    n.trialSuccesses = 0
    n.version = next_version(s)
    return n, 'forced_open'
  elseif target == 'force_half_open' then
    n = copy(s)
    n.open = true
    n.forced = false
    n.openedAt = half_open_opened_at
    n.trialSuccesses = 0
    n.version = next_version(s)
    return n, 'forced_half_open'
  end
  return closed_from(s), 'forced_closed'
end

local prev, raw_or_err = load()
if not prev then
  return redis.error_reply('REDEYE_MALFORMED ' .. raw_or_err)
end

local nxt, kind
if op == 'failure' then
  nxt, kind = record_failure(prev)
elseif op == 'success' then
  nxt, kind = record_success(prev)
elseif op == 'trial_success' then
  nxt, kind = trial_succeeded(prev)
elseif op == 'trial_failure' then
  nxt, kind = trial_failed(prev)
else -- force_open, force_half_open or force_closed (checked above)
  nxt, kind = force(prev, op)
end

-- A field changed when its value did (the same test as comparing the encoded strings: integers are exact,
-- the error rate round-trips bit-exactly). Only changed fields are written; a key that did not exist gets
-- every field. raw is nil for a key that did not exist.
local raw = raw_or_err
local p = stored_fields(prev, raw)
local q = {}
local changed = '0'
local args = {}
for i = 1, #FIELDS do
  local f = FIELDS[i]
  if prev[f] ~= nxt[f] then
    changed = '1'
    q[i] = encode_field(nxt, i)
    args[#args + 1] = f
    args[#args + 1] = q[i]
  else
    q[i] = p[i]
  end
end
if changed == '1' then
  if not raw then
    args = {}
    for i = 1, #FIELDS do
      args[#args + 1] = FIELDS[i]
      args[#args + 1] = q[i]
    end
  end
  redis.call('HSET', KEYS[1], unpack(args))
end
-- A forced state never expires (an operator holds it until reset); any other state carries the
-- clean-up ttl. A forced state left unchanged is persisted too (it may predate this rule).
if nxt.forced then
  redis.call('PERSIST', KEYS[1])
elseif changed == '1' then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
-- A forced close ends the half-open protocol and a forced half-open starts a new period: either way no trial
-- claim of the key outlives the write (AtomicOperation.removesClaims()).
if op == 'force_closed' or op == 'force_half_open' then
  redis.call('DEL', KEYS[2], KEYS[3])
end

-- The event of an automatic transition, when the caller gave the feed stream: appended with the state change,
-- so there is no second round trip. Its from-status is fixed by its kind (TransitionKind.from(): the codes of
-- BreakerStatus). A failed append (the stream key holds another type, say) does not undo the committed change:
-- published '0' tells the caller to publish (and signal a gap) as when it appends by itself; '' means not
-- appended here.
local FROM = {opened = '0', reopened = '2', closed = '2'}
local published = ''
if feed and FROM[kind] then
  local entry = {'op', ARGV[13], 'kind', kind, 'from', FROM[kind]}
  for i = 1, #FIELDS do
    entry[#entry + 1] = FIELDS[i]
    entry[#entry + 1] = q[i]
  end
  local id = redis.pcall('XADD', KEYS[4], 'MAXLEN', '~', ARGV[14], '*', unpack(entry))
  if type(id) == 'table' and id.err then
    published = '0'
  else
    redis.pcall('PEXPIRE', KEYS[4], ARGV[15])
    published = '1'
  end
end

local out = {kind, changed}
for i = 1, #FIELDS do out[#out + 1] = p[i] end
for i = 1, #FIELDS do out[#out + 1] = q[i] end
out[#out + 1] = published
return out
