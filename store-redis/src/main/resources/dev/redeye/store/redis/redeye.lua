-- redeye: every server-side step of the Redis store, one Lua library.
--
-- Loaded once per server as a Redis Function library (FUNCTION LOAD, then FCALL <library>_<name>) where the
-- server offers Functions (Redis 7+): the helpers and tables below are then built once, at load, instead of
-- on every call. Where it does not (or FCALL is refused), each exported function runs as its own EVAL script
-- (EVALSHA), this whole file being its body but for the sections marked '-- @only <function>' ... '-- @end',
-- which only that function's script holds: every EVALSHA runs the script's top level again, creating every
-- local function on the way, so code that one function alone uses would cost every other function's calls (the
-- library loads it once). LuaLibrary adds the lines that differ (the '#!lua name=' line and export() for a
-- library; export() and the final 'return' for a script): nothing here calls redis.call at load time, and every
-- function takes (keys, args) as FCALL and EVALSHA both give them.
--
-- Every function checks its arguments, and the stored data it reads, before its first write: Redis never
-- rolls a script back, so a failure after a write would leave a half-applied change (REDEYE_BAD_ARGS,
-- REDEYE_MALFORMED; nothing is written). TTLs are at most MAX_TTL (100 years; the store caps longer ones),
-- since SET PX and PEXPIRE refuse an expiry that overflows the server's clock.
--
-- THE STORED STATE is one string value at <prefix>{<tag>}:state, read with one GET and written whole with one
-- SET ... PX ttl (a pinned state, forced or with a stored mode: SET without PX, so it has no expiry):
--   a state without a sliding window, with the DEFAULT mode and without contributions: the ten fields of FIELDS
--     in that order joined by ',' (see CANONICAL), the layout of the releases before windows;
--   a state without contributions and with a window or a stored mode: the same ten fields, then the window's
--     text (SlidingWindow.encode(), '' for none) and the stored mode's code (BreakerMode.code()), twelve fields
--     joined by ',' (see capture_wm). The release before windows refuses such a value as malformed ("the value
--     has 12 comma-separated fields, not 10", a StoreException to its breakers) rather than read it without its
--     window or mode;
--   a state with quorum contributions (BreakerState.contributors()): the twelve fields (window '' and mode 0 when
--     it has neither), then the contributions as Contribution.encodeAll writes them ('instance,failures,calls,
--     lastAt' per instance, most recent first, joined by ';'; never empty), so 13 + 3 x (instances) comma-
--     separated pieces (see capture_wmq). The releases before quorums refuse such a value as malformed ("the
--     value has 16 comma-separated fields, not 10 (or 12 ...)" for one instance; their put and their Java get
--     refuse it too) rather than read it without its contributions and write it back without them.
-- A key written by a release before this layout holds a hash with one field per name of FIELDS: the state
-- function (and record, through it) reads such a hash (GET answers WRONGTYPE, then HMGET) and its first write
-- of the state replaces it with the string value, in the same call; put replaces it; claim, release and publish
-- never read the state key.
--
-- Exported (registered without flags: each may write, so Redis refuses it up front, before it runs, while the
-- server is over maxmemory or is a read-only replica, rather than failing at its first write):
--   state    every atomic state change: recorded outcomes, slow calls, trial outcomes, operators' changes
--   record   a recorded outcome (failure, success, slow ones, a slow call): what every guarded call sends,
--            with a smaller interface
--   outcomes a batch of one instance's recorded outcomes (write batching), folded in one call
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


-- v + 1, saturating at max (Java's counters saturate instead of overflowing).
local function inc(v, max)
  if v >= max then return max end
  return v + 1
end

--------------------------------------------------------------------------------------------- sliding window
-- The Lua twin of dev.redeye.api.SlidingWindow: the outcomes a sliding-window policy judges, stored with the
-- state in SlidingWindow.encode()'s canonical text. A window here is a table:
--   k     'c' (a count window) or 't' (a time window), the text's first character
--   n     its size: outcomes (count) or seconds (time)
--   pos   its position: outcomes ever recorded (count), or the number of the newest bucket (time)
--   ring  (count) the slots as the text holds them, slot 0 first, one character each: '0' success, '1' failure,
--         '2' slow success, '3' slow failure; min(pos, n) of them. The outcome numbered s (from 1) is in slot
--         (s - 1) % n, so recording rewrites one character
--   count (time) its number of buckets, the oldest numbered 1 and the newest count
--   b     (time) the buckets that hold calls, in increasing number, five entries each in one flat list: the
--         bucket's number, its calls, failures and slow calls, and its text when it was read and has not
--         changed since (written again as it is; false otherwise). Empty buckets are left out, so that reading,
--         rolling and writing a window costs its busy buckets, not its 120 slots of time (an empty bucket is
--         one '.' in the text, skipped by one pattern match); one flat list is the fewest table operations
-- Windows are never changed in place: every rule below returns a new table (or the same one when nothing
-- changes), so a state's window can be shared by the state before and after a rule.

local MAX_COUNT_SIZE = 1000   -- SlidingWindow.MAX_COUNT_SIZE
local MAX_TIME_SECONDS = 86400 -- SlidingWindow.MAX_TIME_SECONDS
local MAX_BUCKETS = 120        -- SlidingWindow.MAX_BUCKETS

-- Seconds per bucket of a time window of n seconds: ceil(n / 120).
local function bucket_seconds(n)
  return math.floor((n + MAX_BUCKETS - 1) / MAX_BUCKETS)
end

-- Buckets of a time window of n seconds: ceil(n / bucket_seconds(n)), at most 120.
local function bucket_count(n)
  local width = bucket_seconds(n)
  return math.floor((n + width - 1) / width)
end

-- The number of the bucket of a time window of n seconds that the epoch ms now falls in: floorDiv(now, width
-- in ms). Exact for |now| < 2^53: the double quotient then never rounds up onto the next integer.
local function bucket_of(n, now)
  return math.floor(now / (bucket_seconds(n) * 1000))
end

local function window_empty(k, n)
  if k == 'c' then return {k = 'c', n = n, pos = 0, ring = ''} end
  return {k = 't', n = n, pos = 0, count = bucket_count(n), b = {}}
end

-- One bucket with calls as the text writes it: calls, calls-failures or calls-failures-slow (trailing zero
-- counts left out).
local function bucket_text(c, f, s)
  if s > 0 then return string.format('%d-%d-%d', c, f, s) end
  if f > 0 then return string.format('%d-%d', c, f) end
  return string.format('%d', c)
end

-- The calls, failures and slow calls of a bucket's text, or nil unless it is exactly what bucket_text writes
-- for counts Java reads as ints.
local function parse_bucket(part)
  local c, f, s = string.match(part, '^([1-9]%d*)%-?(%d*)%-?(%d*)$')
  if not c then return nil end
  c, f, s = tonumber(c), tonumber(f) or 0, tonumber(s) or 0
  if c > INT_MAX or f > c or s > c or bucket_text(c, f, s) ~= part then return nil end
  return c, f, s
end

-- The canonical text (SlidingWindow.encode()): c<n>.<pos>.<slots>, or t<n>.<pos> and per bucket '.' and its
-- text (nothing for an empty bucket).
local function window_encode(w)
  if w.k == 'c' then return string.format('c%d.%d.', w.n, w.pos) .. w.ring end
  local t = {string.format('t%d.%d', w.n, w.pos)}
  local last = 0
  local b = w.b
  for j = 1, #b, 5 do
    local i = b[j]
    t[#t + 1] = string.rep('.', i - last) .. (b[j + 4] or bucket_text(b[j + 1], b[j + 2], b[j + 3]))
    last = i
  end
  t[#t + 1] = string.rep('.', w.count - last)
  return table.concat(t)
end

-- A decimal that a pattern matched as digits, without a leading zero (as Java writes a number), in [min, max],
-- else nil.
local function canonical_uint(v, min, max)
  if not v or (#v > 1 and string.byte(v) == 48) then return nil end
  local n = tonumber(v)
  if n < min or n > max then return nil end
  return n
end

-- The window of a canonical text, or nil for any other text (SlidingWindow.decode() accepts exactly what
-- encode() writes). Counts are ints as Java reads them; positions are at most 2^53 (Lua numbers are doubles),
-- far above any real one.
local function window_decode(text)
  local k = string.sub(text, 1, 1)
  if k == 'c' then
    local n, pos, at = string.match(text, '^c(%d+)%.(%d+)%.()')
    local ring = at and string.sub(text, at) or ''
    n = canonical_uint(n, 1, MAX_COUNT_SIZE)
    pos = canonical_uint(pos, 0, LONG_MAX)
    if not n or not pos or #ring ~= math.min(pos, n) then return nil end
    -- The slots other than successes, in one pass that skips runs of '0' (most of a healthy ring): they are
    -- checked and counted on that short string.
    local others = string.gsub(ring, '0+', '')
    if string.find(others, '[^123]') then return nil end
    local _, failures = string.gsub(others, '[13]', '')
    local _, slow = string.gsub(others, '[23]', '')
    return {k = 'c', n = n, pos = pos, ring = ring, calls = #ring, failures = failures, slow = slow}
  end
  if k ~= 't' then return nil end
  local n, pos, rest = string.match(text, '^t(%d+)%.(%d+)(.*)$')
  n = canonical_uint(n, 1, MAX_TIME_SECONDS)
  pos = canonical_uint(pos, 0, LONG_MAX)
  if not n or not pos then return nil end
  local b = {}
  local w = {k = 't', n = n, pos = pos, count = bucket_count(n), b = b}
  -- each busy bucket: the dots before it (one per bucket since the last busy one), then its text
  local i, j, at = 0, 0, 1
  while true do
    local _, e, dots, part = string.find(rest, '^(%.+)([^.]+)', at)
    if not e then break end
    i = i + #dots
    local c, f, s = parse_bucket(part)
    if not c then return nil end
    b[j + 1], b[j + 2], b[j + 3], b[j + 4], b[j + 5] = i, c, f, s, part
    j = j + 5
    at = e + 1
  end
  -- then the empty buckets after the last busy one: dots only
  local tail = string.sub(rest, at)
  if string.find(tail, '[^.]') or i + #tail ~= w.count then return nil end
  return w
end

-- Calls, failures and slow calls in the window (a slow failure counts as both); a time window's sums saturate
-- at INT_MAX as Java's do. Computed once per window table.
local function window_counts(w)
  if not w.calls then
    if w.k == 'c' then
      local _, f = string.gsub(w.ring, '[13]', '')
      local _, s = string.gsub(w.ring, '[23]', '')
      w.calls, w.failures, w.slow = #w.ring, f, s
    else
      local c, f, s = 0, 0, 0
      local b = w.b
      for j = 1, #b, 5 do
        c = c + b[j + 1]
        f = f + b[j + 2]
        s = s + b[j + 3]
      end
      c, f, s = math.min(c, INT_MAX), math.min(f, INT_MAX), math.min(s, INT_MAX)
      w.calls, w.failures, w.slow = c, f, s
    end
  end
  return w.calls, w.failures, w.slow
end

-- The busy buckets of src (a time window's list b) renumbered shift buckets older into dst, those that leave the
-- window (number below 1) dropped; dst may be src (each entry is written at or before where it was read). Returns
-- how many list entries dst holds.
local function shifted_buckets(src, dst, shift)
  local j = 0
  for m = 1, #src, 5 do
    local i = src[m] - shift
    if i >= 1 then
      dst[j + 1], dst[j + 2], dst[j + 3], dst[j + 4], dst[j + 5] = i, src[m + 1], src[m + 2], src[m + 3], src[m + 4]
      j = j + 5
    end
  end
  return j
end

-- Time window w at bucket position p (>= w.pos): a copy, rolled forward by p - w.pos buckets (the buckets it
-- passes are emptied: they leave the window at the oldest end).
local function time_window_at(w, p)
  local b = {}
  shifted_buckets(w.b, b, p - w.pos)
  return {k = 't', n = w.n, pos = p, count = w.count, b = b}
end

-- Time window w as of now (SlidingWindow.rolledTo): rolled forward when now's bucket is newer than its own.
local function window_rolled_to(w, now)
  if w.k == 'c' then return w end
  local p = bucket_of(w.n, now)
  if p <= w.pos then return w end
  return time_window_at(w, p)
end

-- The window with one more outcome (SlidingWindow.record). A count window writes the outcome's slot; a time
-- window counts it in now's bucket after rolling forward to it, or in its newest bucket when now falls in an
-- older one (a caller whose clock is behind moves a bucket edge and never loses a count).
-- A count window's counts after an outcome (failed, slow) takes a slot that held old (its byte, nil when the slot
-- was empty): the slot's previous outcome leaves, the new one enters.
local function counts_replaced(calls, failures, slows, old, failed, slow)
  if old then
    old = old - 48
    failures = failures - old % 2
    slows = slows - math.floor(old / 2)
  else
    calls = calls + 1
  end
  return calls, failures + (failed and 1 or 0), slows + (slow and 1 or 0)
end

-- An outcome added to the bucket numbered count of a time window's busy buckets b (the newest, appended when it
-- is not there yet); returns that bucket's calls, failures and slow calls before it.
local function bucket_add(b, count, failed, slow)
  local j = #b - 4 -- the newest busy bucket
  if j < 1 or b[j] ~= count then
    j = #b + 1
    b[j], b[j + 1], b[j + 2], b[j + 3] = count, 0, 0, 0
  end
  local c, f, s = b[j + 1], b[j + 2], b[j + 3]
  b[j + 1] = inc(c, INT_MAX)
  if failed then b[j + 2] = inc(f, INT_MAX) end
  if slow then b[j + 3] = inc(s, INT_MAX) end
  b[j + 4] = false
  return c, f, s, j
end

local function window_record(w, failed, slow, now)
  if w.k == 'c' then
    local pos = w.pos
    if pos < LONG_MAX then pos = pos + 1 end
    local i = (pos - 1) % w.n + 1
    local code = (failed and 1 or 0) + (slow and 2 or 0)
    local r = {k = 'c', n = w.n, pos = pos, ring = string.sub(w.ring, 1, i - 1) .. code .. string.sub(w.ring, i + 1)}
    local calls, failures, slows = window_counts(w)
    r.calls, r.failures, r.slow = counts_replaced(calls, failures, slows, string.byte(w.ring, i), failed, slow)
    return r
  end
  local r = time_window_at(w, math.max(bucket_of(w.n, now), w.pos))
  bucket_add(r.b, r.count, failed, slow)
  return r
end

-- The slow call recorded at position slot marked as failed (SlidingWindow.slowCallFailed): a count window's
-- slot becomes a slow failure if it still holds that slow success; a time window (rolled to now first) counts
-- one more failure in that bucket while it has a call not yet counted as failed. Otherwise the window is
-- returned as it is (rolled): a slow call is counted once however it ends.
local function window_slow_call_failed(w, slot, now)
  if w.k == 'c' then
    if slot <= w.pos - #w.ring or slot > w.pos then return w end
    local i = (slot - 1) % w.n + 1
    if string.sub(w.ring, i, i) ~= '2' then return w end
    local calls, failures, slows = window_counts(w)
    return {k = 'c', n = w.n, pos = w.pos, ring = string.sub(w.ring, 1, i - 1) .. '3' .. string.sub(w.ring, i + 1),
            calls = calls, failures = failures + 1, slow = slows}
  end
  local r = window_rolled_to(w, now)
  if slot <= r.pos - r.count or slot > r.pos then return r end
  local i = r.count - (r.pos - slot)
  local b = r.b
  for j = 1, #b, 5 do
    if b[j] == i then
      if b[j + 2] >= b[j + 1] then return r end
      local m = time_window_at(r, r.pos)
      m.b[j + 2] = m.b[j + 2] + 1
      m.b[j + 4] = false
      return m
    end
  end
  return r -- an empty bucket: no call in it to mark
end

-- Whether the window opens the breaker under P (Transitions.windowTrips): at least the minimum of calls, and
-- failures * 100 >= failureRateThreshold * calls or slow * 100 >= slowCallRateThreshold * calls, each side an
-- IEEE double as in Java (the counts times 100 are exact; the threshold's product rounds alike).
local function window_trips(w, P)
  local calls, failures, slow = window_counts(w)
  if calls < P.window_minimum then return false end
  return failures * 100 >= P.failure_rate * calls or slow * 100 >= P.slow_rate * calls
end

------------------------------------------------------------------------------------------------ contributions
-- The Lua twin of dev.redeye.api.Contribution and of the quorum rules of Transitions (contributions, quorumMet):
-- what each instance recorded in the breaker's current scope, kept only under a policy with a quorum. A state's
-- contributions are false for none, else a list of at most MAX_CONTRIBUTORS tables {instance, failures, calls,
-- lastAt}, the most recent first; stored as Contribution.encodeAll writes them (see THE STORED STATE). Nothing
-- here runs for a policy without a quorum, except carrying a state's contributions through unchanged.

local MAX_CONTRIBUTORS = 16 -- BreakerState.MAX_CONTRIBUTORS
local MAX_INSTANCE = 64     -- Contribution.MAX_INSTANCE_LENGTH

-- Whether v is an instance id (Contribution.requireValidInstance): 1 to 64 characters of A-Z a-z 0-9 . _ : @ # / -
-- (so it never holds a separator of the stored value or of a reply).
local function valid_instance(v)
  return type(v) == 'string' and #v >= 1 and #v <= MAX_INSTANCE and not string.find(v, '[^A-Za-z0-9._:@#/%-]')
end

-- The contributions of a stored text, or nil and why: exactly what Contribution.decodeAll reads (counts as Java's
-- parseInt reads them, 0 <= failures <= calls; the time in range as every time here), at most MAX_CONTRIBUTORS,
-- each instance once. The empty text is none in Java; the stored value never holds it (a state without
-- contributions has ten or twelve fields), so the caller refuses it before.
local function contrib_decode(text)
  local list, seen, n = {}, {}, 0
  for part in string.gmatch(text .. ';', '([^;]*);') do
    local inst, f, c, at = string.match(part, '^([^,]*),([^,]*),([^,]*),([^,]*)$')
    if not inst then return nil, 'a contribution is not instance,failures,calls,lastAt' end
    if not valid_instance(inst) then return nil, 'a contribution has no valid instance id' end
    f, c, at = int(f, 0, INT_MAX), int(c, 0, INT_MAX), int(at, -LONG_MAX, LONG_MAX)
    if not (f and c and at) or f > c then
      return nil, 'a contribution needs 0 <= failures <= calls (ints) and a time in range'
    end
    if seen[inst] then return nil, 'an instance contributes twice' end
    seen[inst] = true
    n = n + 1
    if n > MAX_CONTRIBUTORS then return nil, 'more than ' .. MAX_CONTRIBUTORS .. ' contributions' end
    list[n] = {inst, f, c, at}
  end
  return list
end

-- The stored text of contributions (Contribution.encodeAll): '' for none.
local function contrib_encode(q)
  if not q then return '' end
  local t = {}
  for i = 1, #q do
    local c = q[i]
    t[i] = c[1] .. string.format(',%d,%d,%d', c[2], c[3], c[4])
  end
  return table.concat(t, ';')
end

-- The contributions of the state s after an outcome of instance (nil: none added), under a quorum
-- (Transitions.contributions): the scope is, for a time window, the window's span (older contributions drop out);
-- for a count window, until the window w (after the outcome) holds no failure; for the consecutive strategy (w
-- false), since the count last cleared or restarted (restart: maxGapBetweenFailures passed). The instance's
-- contribution goes first; past MAX_CONTRIBUTORS the least recent of the others drops out (the last of equals).
-- false for none.
local function contributions(s, w, P, now, instance, failed, restart)
  local kept, mine = {}, nil
  local prev = s[13] -- the state's contributions (CONTRIB below)
  local emptied = restart
  if w and P.window_type == 'c' then
    local _, failures = window_counts(w)
    emptied = emptied or failures == 0
  end
  if prev and not emptied then
    local horizon = -math.huge
    if w and P.window_type == 't' then horizon = now - P.window_size * 1000 end
    for i = 1, #prev do
      local c = prev[i]
      if c[4] > horizon then
        if c[1] == instance then mine = c else kept[#kept + 1] = c end
      end
    end
  end
  if instance then
    local f = failed and 1 or 0
    if mine then
      table.insert(kept, 1, {instance, math.min(mine[2] + f, INT_MAX - 1), inc(mine[3], INT_MAX),
          math.max(mine[4], now)})
    else
      table.insert(kept, 1, {instance, f, 1, now})
    end
    while #kept > MAX_CONTRIBUTORS do
      local oldest = 2
      for i = 3, #kept do
        if kept[i][4] <= kept[oldest][4] then oldest = i end
      end
      table.remove(kept, oldest)
    end
  end
  if #kept == 0 then return false end
  return kept
end

-- Whether the contributions q (false for none) make the quorum of P (Transitions.quorumMet, under a quorum): at
-- least Policy.quorumRequired(seen) of the instances they hold have failures.
local function quorum_met(q, P)
  local seen, failing = 0, 0
  if q then
    seen = #q
    for i = 1, seen do
      if q[i][2] > 0 then failing = failing + 1 end
    end
  end
  local required = 1
  if P.quorum > 1 then
    required = P.quorum
  elseif P.quorum_fraction > 0 then
    required = math.max(1, math.ceil(P.quorum_fraction * seen - 1e-9)) -- the same double arithmetic as Java's
  end
  return failing >= required
end

---------------------------------------------------------------------------------------------------- state
-- One atomic read-modify-write of a breaker's state. Mirrors dev.redeye.spi.Transitions rule by rule; the
-- TCK's parity rules (R2.9, R3.1, R5.x, R9.x, R8.1) and RedisWindowParityTest (windows, slow calls, modes)
-- prove it.
--
-- keys[1] state string (<prefix>{<tag>}:state; or the hash of earlier releases, converted by the first write)
-- keys[2] claims zset  (<prefix>{<tag>}:trial), same hash slot; given (and touched) only when args[5] is 1
-- keys[3] one-permit claim string (<prefix>{<tag>}:trial1), same hash slot; likewise (every key costs the
--         call its argument, so a recorded outcome sends the state key alone)
-- args[1] op: failure | success | slow_success | slow_failure | slow_call | slow_call_failed | trial_success |
--         trial_failure | force_open | force_half_open | force_closed | force_mode (AtomicOperation's wire names)
-- args[2] now, epoch ms (the caller's clock; the rules never read the server clock, see VERSIONS below)
-- args[3] the policy (see POLICY below). A breaker sends the same text on every call, so it is parsed once and
--         remembered.
-- args[4] the operation's own argument: for trial_success / trial_failure the trial version, the version of
--         the open period the trial was admitted under (contract v2 fencing: an outcome of another period
--         changes nothing); for slow_call_failed '<slot>:<version>', the window position and the version of
--         the state its slow_call returned (the same fence: the failure counts only in that window); for
--         force_half_open the openedAt of the forced half-open state (now - 2 * maxResetTimeout, computed by
--         the caller); for force_mode the mode's code (BreakerMode.code()); ignored by the other operations
-- args[5] 1 when the operation removes the key's trial claims (AtomicOperation.removesClaims()), else 0
-- Optional, all four or none (a standalone server only: the feed stream is in another hash slot):
-- the last key, after the state key or the claim keys: the feed stream (<prefix>redeye:feed): an automatic
--         transition (opened, reopened, closed, would_open) is appended to it here, in the same call, instead
--         of by a second call (publish) after it
-- args[6] the operation's name (the event's op field)
-- args[7] approximate maximum length of the stream (XADD MAXLEN ~), >= 1
-- args[8] ttl ms of the stream key (1 .. 100 years), refreshed on every entry
--
-- POLICY (args[3]): fields joined by ','. Eight for a policy without a sliding window in the NORMAL mode
-- (most breakers, so the text every call sends stays short): strategy code (Strategy.code(): 0 consecutive,
-- 1 errorRate, 2 leaky), failureThreshold, maxGapBetweenFailures ms (0 = unset), errorRateThreshold,
-- minimumCalls, errorRateDecay, successThreshold, state ttl ms. Thirteen otherwise: those eight (strategy 3 =
-- slidingWindow allowed), then failureRateThreshold (percent), minimumNumberOfCalls, slowCallRateThreshold
-- (percent), the window's shape (c<size> for a count window, t<seconds> for a time window, as a window's text
-- starts) and the policy's mode code (1 normal, 2 metrics_only, 3 disabled). Fifteen for a policy with a quorum
-- (Policy.quorumOn(); consecutive or slidingWindow): those thirteen, then quorum (0 to 16) and quorumFraction (in
-- [0, 1]; not both set); the releases before quorums refuse that text (REDEYE_BAD_ARGS), so a policy without a
-- quorum keeps the text it had. The ttl is set on every write of a
-- state that is not pinned; a pinned state (forced, or a stored mode other than DEFAULT: an operator's
-- decision) is stored without expiry (SET without PX, or PERSIST), since it must not lapse back to the
-- configured behaviour, and while forced nothing refreshes it.
--
-- VERSIONS (contract v2): a key's version never goes backwards, also after DEL or expiry. A key that does
-- not exist starts its new life at the server clock in microseconds (TIME): every earlier life of the key
-- started at an earlier TIME and moved by one per transition, and a transition costs far more than a
-- microsecond, so the new base is above every version the key had. Lua numbers are doubles, exact below
-- 2^53; microsecond epochs (~1.8e15) are far below that. The one clock read is for the version base only.
--
-- Returns one string, a state being its stored value (see THE STORED STATE), so ' ' separates the parts (a
-- stored value never holds one):
-- 'previous' when the state did not change (nothing was written); 'previous next' when it changed without a
-- transition; 'previous next kind published' for a transition, kind a TransitionKind wire name and published
-- '1' when its event was appended here, '0' when that append failed, '-' when there was none to append here
-- (an operator's change, or no stream given). One string, not an array: every element of a reply costs the
-- call server time.
--
-- COST. A recorded outcome is what caps one key's rate; it comes through record, which runs the record path
-- (record_closed) for the counting strategies and hands the rest here. The layout is one string (GET, SET PX:
-- two commands with one argument and one reply value each, where a hash of ten fields costs HMGET's ten
-- arguments and ten reply values, and HSET plus PEXPIRE). The policy is parsed once per distinct text
-- (POLICIES); a stored value in the canonical form is validated and split into its fields with one match
-- (CAPTURE, capture_wm), and its strings are passed through to the reply.

local FIELDS = {'failures', 'lastFailureAt', 'open', 'openedAt', 'openCount',
                'errorRate', 'samples', 'trialSuccesses', 'forced', 'version'}
-- The fields of a value without a window, a stored mode and contributions; of one with a window or a mode; the
-- components of a state (its contributions being one, whatever the commas in their text).
local NFIELDS = 10
local NWM = 12
local NSTATE = 13
-- Positions in a state (and in its value): s[FAILURES] is its failure count. s[WINDOW] is a window table or
-- false for none; s[MODE] the stored mode's code; s[CONTRIB] the contributions (a list, or false for none).
local FAILURES, LAST_FAILURE_AT, OPEN, OPENED_AT, OPEN_COUNT = 1, 2, 3, 4, 5
local ERROR_RATE, SAMPLES, TRIAL_SUCCESSES, FORCED, VERSION = 6, 7, 8, 9, 10
local WINDOW, MODE, CONTRIB = 11, 12, 13
-- BreakerMode.code(): DEFAULT is only ever stored (the policy's mode applies), a policy has one of the others.
local DEFAULT, NORMAL, METRICS_ONLY, DISABLED = 0, 1, 2, 3
local SLIDING_WINDOW = 3
-- The from-status of an automatic transition's event is fixed by its kind (TransitionKind.from(): the codes
-- of BreakerStatus).
local FROM = {opened = '0', reopened = '2', closed = '2', would_open = '0'}
-- The stored fields joined by ',' as this library writes them: integers in decimal, booleans 0 / 1, the error
-- rate as '%.17g' writes it (or Java's Double.toString, as put stores it). A state in this form is validated
-- and split by one match (CAPTURE: the same pattern with each field captured) and passed through as it is;
-- any other form (a hand-written 'true', '+0') takes the field-by-field path. PREFIX_WM starts the value of a
-- state with a window or a stored mode: the ten fields, then the window's text ('' for none) and the mode's
-- code, twelve in all (see THE STORED STATE: the release before windows refuses it), split by capture_wm; and
-- the value of a state with contributions, the twelve and the contributions' text, split by capture_wmq.
local CANONICAL = '^%d+,%-?%d+,[01],%-?%d+,%d+,%d+%.?%d*[eE]?[+-]?%d*,%d+,%d+,[01],%-?%d+$'
local CAPTURE = '^(%d+),(%-?%d+),([01]),(%-?%d+),(%d+),(%d+%.?%d*[eE]?[+-]?%d*),(%d+),(%d+),([01]),(%-?%d+)$'
local PREFIX_WM = '^(%d+),(%-?%d+),([01]),(%-?%d+),(%d+),(%d+%.?%d*[eE]?[+-]?%d*),(%d+),(%d+),([01]),(%-?%d+),()'

-- The twelve strings of a value with a window and a mode, or nil: the ten fields by one match of
-- their prefix, the window and the mode's digit cut from the rest, so that a long window is never scanned by
-- a pattern here (window_decode checks it).
-- A value with contributions whose last time ends in ',0' to ',3' passes these checks too, with a window text
-- holding commas, which no window's canonical text does: window_decode refuses it and the caller tries
-- capture_wmq.
local function capture_wm(v)
  local f = {string.match(v, PREFIX_WM)}
  local at = f[11]
  local mode = string.byte(v, -1)
  if not at or at > #v - 1 or string.sub(v, -2, -2) ~= ',' or mode < 48 or mode > 51 then return nil end
  f[11] = string.sub(v, at, -3)
  f[12] = string.sub(v, -1)
  return f
end

-- The thirteen strings of a value with contributions, or nil: the ten fields by one match of their prefix, the
-- window up to the next ',' (a window's text has none), the mode's digit, then the contributions' text (checked
-- by contrib_decode).
local function capture_wmq(v)
  local f = {string.match(v, PREFIX_WM)}
  local at = f[11]
  if not at then return nil end
  local c = string.find(v, ',', at, true)
  local mode = c and string.byte(v, c + 1)
  if not mode or mode < 48 or mode > 51 or string.sub(v, c + 2, c + 2) ~= ',' then return nil end
  f[11] = string.sub(v, at, c - 1)
  f[12] = string.sub(v, c + 1, c + 1)
  f[13] = string.sub(v, c + 3)
  return f
end

local POLICIES = {}
local NPOLICIES = 0

-- The sliding-window and mode fields of a thirteen-field policy text (rest: ',' and the five of them) into P,
-- and the quorum fields of a fifteen-field one (two more); false when one is malformed.
local function window_policy(P, rest)
  local fr, mn, sr, shape, mode, more = string.match(rest, '^,([^,]*),([^,]*),([^,]*),([^,]*),([^,]*)(.*)$')
  local k, size = string.match(shape or '', '^([ct])(%d+)$')
  P.failure_rate = num(fr, 0, 100)
  P.minimum_number = int(mn, 1, INT_MAX)
  P.slow_rate = num(sr, 0, 100)
  P.window_type = k
  P.window_size = uint(size, 1, k == 'c' and MAX_COUNT_SIZE or MAX_TIME_SECONDS)
  P.mode = uint(mode, NORMAL, DISABLED)
  if not (P.failure_rate and P.failure_rate > 0 and P.minimum_number and P.slow_rate and P.slow_rate > 0
      and P.window_type and P.window_size and P.mode) then
    return false
  end
  -- Policy.windowMinimumCalls(): a count window of fewer slots than the minimum needs all of them
  P.window_minimum = P.minimum_number
  if k == 'c' then P.window_minimum = math.min(P.minimum_number, P.window_size) end
  if more ~= '' then
    -- Policy's checks: not both, and only for the consecutive and the sliding-window strategies
    local q, qf = string.match(more, '^,([^,]*),([^,]*)$')
    q, qf = uint(q, 0, MAX_CONTRIBUTORS), num(qf, 0, 1)
    if not q or not qf or (q > 1 and qf > 0) then return false end
    P.quorum, P.quorum_fraction = q, qf
    P.quorum_on = q > 1 or qf > 0
    if P.quorum_on and P.strategy ~= 0 and P.strategy ~= SLIDING_WINDOW then return false end
  end
  return true
end

-- A policy text (args[3]) as a table, parsed and validated on first sight, then remembered (at most 1,000
-- texts; the memory starts over beyond). nil when malformed.
local function policy(text)
  local P = POLICIES[text]
  if P then return P end
  if type(text) ~= 'string' then return nil end
  local st, ft, gap, rt, mc, dc, sc, ttl, rest = string.match(text,
      '^([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*)(.*)$')
  P = {strategy = int(st, 0, SLIDING_WINDOW), failure_threshold = int(ft, 1, INT_MAX),
       max_gap = int(gap, 0, ANY_LONG), rate_threshold = num(rt, 0, 1), minimum_calls = int(mc, 0, INT_MAX),
       decay = num(dc, 0, 1), success_threshold = int(sc, 1, INT_MAX), ttl = ttl, mode = NORMAL, quorum = 0,
       quorum_fraction = 0, quorum_on = false}
  if not (P.strategy and P.failure_threshold and P.max_gap and P.rate_threshold and P.minimum_calls and P.decay
      and P.success_threshold and uint(ttl, 1, MAX_TTL)) then
    return nil
  end
  if rest ~= '' then
    if not window_policy(P, rest) then return nil end
  elseif P.strategy == SLIDING_WINDOW then
    return nil -- a sliding window needs its fields
  end
  -- the record path applies to the counting strategies in the NORMAL mode, the window record path to sliding
  -- windows, both without a quorum (whose contributions they do not keep)
  P.record_path = P.strategy ~= SLIDING_WINDOW and P.mode == NORMAL and not P.quorum_on
  P.window_path = P.strategy == SLIDING_WINDOW and not P.quorum_on
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

-- The window and the stored mode of a twelve-field value from their texts: the window (false for '') and the
-- mode's code, or nil and why.
local function parse_window_mode(wt, mt)
  local mode = int(mt, DEFAULT, DISABLED)
  if not mode then return nil, 'field mode is not a mode code (0 to 3)' end
  if wt == '' then return false, mode end
  local w = window_decode(wt)
  if not w then return nil, 'field window is not a sliding window in its canonical text' end
  return w, mode
end

-- The stored state from its fields by position (split from the value, the contributions' text being one; or
-- HMGET's reply from a hash of earlier releases, where a missing version means a layout without one), field by
-- field, in any form StateCodec reads: the state as numbers and booleans by position, or nil and why.
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
  s[WINDOW], s[MODE], s[CONTRIB] = false, DEFAULT, false
  if raw[WINDOW] then
    local w, mode = parse_window_mode(raw[WINDOW], raw[MODE])
    if w == nil then return nil, mode end
    s[WINDOW], s[MODE] = w, mode
  end
  if raw[CONTRIB] then
    if raw[CONTRIB] == '' then
      return nil, 'field contributors is empty (a state without contributions has ten or twelve fields)'
    end
    local q, why = contrib_decode(raw[CONTRIB])
    if not q then return nil, 'field contributors is malformed: ' .. why end
    s[CONTRIB] = q
  end
  return s
end

-- One component of a state as stored: integers in decimal, booleans as 1 / 0, the error rate with 17
-- significant digits (the double round-trips bit-exactly), the window as its text ('' for none), the
-- contributions as theirs ('' for none).
local function encode(s, i)
  local v = s[i]
  if i == OPEN or i == FORCED then return v and '1' or '0' end
  if i == ERROR_RATE then return string.format('%.17g', v) end
  if i == WINDOW then return v and window_encode(v) or '' end
  if i == CONTRIB then return contrib_encode(v) end
  return string.format('%d', v)
end

-- The stored value of a state's thirteen component texts: the ten fields alone for a state without a window,
-- with the DEFAULT mode and without contributions (the layout the release before windows reads too); else the
-- twelve for a state without contributions (the layout the release before quorums reads too); else all.
local function join(q)
  if q[CONTRIB] ~= '' then return table.concat(q, ',', 1, NSTATE) end
  if q[WINDOW] == '' and q[MODE] == '0' then return table.concat(q, ',', 1, NFIELDS) end
  return table.concat(q, ',', 1, NWM)
end

-- The components of a state in the canonical form (raw: the ten, twelve or thirteen strings CAPTURE,
-- capture_wm or capture_wmq took) as a state, or nil when a number is out of the range the pattern does not
-- bound, the window is not canonical or the contributions are malformed (the field-by-field path then says
-- which).
local function parse(raw)
  local s = {tonumber(raw[1]), tonumber(raw[2]), raw[3] == '1', tonumber(raw[4]), tonumber(raw[5]),
             tonumber(raw[6]), tonumber(raw[7]), tonumber(raw[8]), raw[9] == '1', tonumber(raw[10]), false,
             DEFAULT, false}
  if not (s[1] <= INT_MAX and s[2] >= -LONG_MAX and s[2] <= LONG_MAX and s[4] >= -LONG_MAX and s[4] <= LONG_MAX
      and s[5] <= INT_MAX and s[6] and s[6] <= 1 and s[7] <= LONG_MAX and s[8] <= INT_MAX and s[10] >= -1
      and s[10] <= LONG_MAX) then
    return nil
  end
  if raw[WINDOW] then
    s[MODE] = tonumber(raw[MODE])
    if raw[WINDOW] ~= '' then
      s[WINDOW] = window_decode(raw[WINDOW])
      if not s[WINDOW] then return nil end
    end
  else
    raw[WINDOW], raw[MODE] = '', '0'
  end
  if raw[CONTRIB] then
    if raw[CONTRIB] == '' then return nil end
    s[CONTRIB] = contrib_decode(raw[CONTRIB])
    if not s[CONTRIB] then return nil end
  else
    raw[CONTRIB] = ''
  end
  return s
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
  return {s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13]}
end

local function next_version(s)
  return math.max(s[VERSION], 0) + 1
end

-- The mode in force (BreakerState.effectiveMode): the stored one, or the policy's when DEFAULT is stored.
local function mode_of(s, P)
  if s[MODE] ~= DEFAULT then return s[MODE] end
  return P.mode
end

-- The rules, each of (state, policy, now, the operation's own argument) returning the next state and the
-- transition kind ('' for none). A rule that changes nothing returns the state it got.

-- The closed state that follows s (Transitions.closedFrom): every counter, the window and the contributions
-- reset, the last failure's time kept, the given stored mode, the next version.
local function closed_from(s, mode)
  return {0, s[LAST_FAILURE_AT], false, 0, 0, 0, 0, 0, false, next_version(s), false, mode, false}
end

-- The closed breaker's strategy says open (Transitions.tripped); n holds the outcome's changes. It opens (the
-- contributions kept), or in the METRICS_ONLY mode stays closed with its counters, window and contributions
-- reset (would_open): either is a transition.
local function tripped(s, n, P, now)
  n[VERSION] = next_version(s)
  if mode_of(s, P) == METRICS_ONLY then
    n[FAILURES] = 0
    n[ERROR_RATE] = 0
    n[SAMPLES] = 0
    n[WINDOW] = false
    n[CONTRIB] = false
    return n, 'would_open'
  end
  n[OPEN] = true
  n[OPENED_AT] = now
  n[TRIAL_SUCCESSES] = 0
  return n, 'opened'
end

-- A recorded outcome (not a trial) of a closed breaker under a counting strategy, on the four fields it reads:
-- the failure count, the last failure's time, the error rate and its sample count. Returns them after the
-- outcome and whether the strategy says open. The one place these rules are written: the general path
-- (record) and the record path (record_closed) both apply it.
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

-- The window a closed breaker records in under P: the state's, or an empty one of the policy's shape when it
-- has none or one of another shape (the policy changed).
local function window_of(s, P)
  local w = s[WINDOW]
  if w and w.k == P.window_type and w.n == P.window_size then return w end
  return window_empty(P.window_type, P.window_size)
end

-- A closed breaker's window after an outcome (w), whose failure also sets the last failure's time; the
-- breaker trips when window_trips says so and, under a quorum, the contributions after the outcome (of
-- instance, nil for none) make it. Every window outcome is a write.
local function window_outcome(s, w, failed, P, now, instance)
  local n = copy(s)
  n[WINDOW] = w
  if failed then n[LAST_FAILURE_AT] = now end
  if P.quorum_on then
    n[CONTRIB] = contributions(s, w, P, now, instance, failed, false)
    if window_trips(w, P) and quorum_met(n[CONTRIB], P) then return tripped(s, n, P, now) end
    return n, ''
  end
  if window_trips(w, P) then return tripped(s, n, P, now) end
  return n, ''
end

-- A failure while open (any strategy, not a trial): counted, the last failure's time moved; nothing else.
local function failure_while_open(s, now)
  local n = copy(s)
  n[FAILURES] = inc(s[FAILURES], INT_MAX)
  n[LAST_FAILURE_AT] = now
  return n, ''
end

-- A recorded outcome on the state s (Transitions.recordOutcome) by instance (nil: not attributed): nothing in
-- the DISABLED mode; a failure while open counts without moving anything else; an outcome while closed goes
-- into the window (sliding window: slow counts toward the slow-call rate) or is closed_outcome (the counting
-- strategies read a slow outcome as a plain one), and trips the breaker when the strategy says so and, under a
-- quorum, the contributions make it.
local function record(s, P, now, success, slow, instance)
  if mode_of(s, P) == DISABLED then return s, '' end
  if s[OPEN] then
    if success then return s, '' end
    return failure_while_open(s, now)
  end
  if P.strategy == SLIDING_WINDOW then
    return window_outcome(s, window_record(window_of(s, P), not success, slow, now), not success, P, now,
        instance)
  end
  local f, last, rate, samples, opens = closed_outcome(s[FAILURES], s[LAST_FAILURE_AT], s[ERROR_RATE],
      s[SAMPLES], success, P, now)
  local n = copy(s)
  n[FAILURES] = f
  n[LAST_FAILURE_AT] = last
  n[ERROR_RATE] = rate
  n[SAMPLES] = samples
  if P.quorum_on then
    -- the consecutive strategy (a policy has a quorum with no other counting one)
    if success then
      -- a success that clears the count starts the scope again, with this instance in it; one that finds no
      -- failure changes nothing
      if f ~= s[FAILURES] then n[CONTRIB] = instance and {{instance, 0, 1, now}} or false end
    else
      -- closed_outcome restarted the count at 1 after a gap exactly when it had failures and gives 1
      n[CONTRIB] = contributions(s, false, P, now, instance, true, s[FAILURES] > 0 and f == 1)
      opens = opens and quorum_met(n[CONTRIB], P)
    end
  end
  if opens then return tripped(s, n, P, now) end
  return n, ''
end

-- A call still running crossed the slow-call threshold (Transitions.slowCall): a closed sliding window counts
-- it now, as a slow success; nothing otherwise (the counting strategies judge a call when it ends).
local function slow_call(s, P, now)
  if P.strategy ~= SLIDING_WINDOW or s[OPEN] or mode_of(s, P) == DISABLED then return s, '' end
  return window_outcome(s, window_record(window_of(s, P), false, true, now), false, P, now, nil)
end

-- The call slow_call counted failed (Transitions.slowCallFailed), arg = {slot, version} from the state that
-- slow_call returned. While open it is a failure while open. Otherwise it counts only in the same window
-- (same version, the policy's shape) and only if the window's failures then differ from the window's rolled to
-- now; else nothing changes (a slow call is counted once).
local function slow_call_failed(s, P, now, arg)
  if mode_of(s, P) == DISABLED then return s, '' end
  if s[OPEN] then return failure_while_open(s, now) end
  local w = s[WINDOW]
  if P.strategy ~= SLIDING_WINDOW or s[VERSION] ~= arg[2] or not w or w.k ~= P.window_type
      or w.n ~= P.window_size then
    return s, ''
  end
  local marked = window_slow_call_failed(w, arg[1], now)
  -- judged against the window rolled to now: a failure rolled out in the same step is not the mark
  local _, before = window_counts(window_rolled_to(w, now))
  local _, after = window_counts(marked)
  if after == before then return s, '' end
  return window_outcome(s, marked, true, P, now, nil)
end

-- Trial fencing (contract v2): only an outcome of the current open period counts.
local function current_period(s, trial_version)
  return s[OPEN] and not s[FORCED] and s[VERSION] == trial_version
end

local function trial_succeeded(s, P, now, trial_version)
  if not current_period(s, trial_version) then return s, '' end
  local k = inc(s[TRIAL_SUCCESSES], INT_MAX)
  if k >= P.success_threshold then return closed_from(s, s[MODE]), 'closed' end
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

-- The stored mode under which an operator's opening is obeyed: NORMAL in force, stored as DEFAULT when that
-- is the policy's mode (a forced opening in METRICS_ONLY or DISABLED would otherwise be ignored).
local function obeyed(P)
  if P.mode == NORMAL then return DEFAULT end
  return NORMAL
end

local function force_open(s, P, now)
  local n = copy(s)
  n[OPEN] = true
  n[FORCED] = true
  n[OPENED_AT] = now
  n[TRIAL_SUCCESSES] = 0
  n[MODE] = obeyed(P)
  n[VERSION] = next_version(s)
  return n, 'forced_open'
end

local function force_half_open(s, P, now, opened_at)
  local n = copy(s)
  n[OPEN] = true
  n[FORCED] = false
  n[OPENED_AT] = opened_at
  n[TRIAL_SUCCESSES] = 0
  n[MODE] = obeyed(P)
  n[VERSION] = next_version(s)
  return n, 'forced_half_open'
end

-- An operator's close: the policy's mode applies again.
local function force_closed(s, P, now)
  return closed_from(s, DEFAULT), 'forced_closed'
end

-- An operator stores a mode for the fleet (Transitions.forceMode): the breaker closes in it.
local function force_mode(s, P, now, mode)
  return closed_from(s, mode), 'mode_changed'
end

-- Each operation's rule. A recorded outcome's own argument is the instance it is attributed to (nil, or false,
-- for none; only the record function takes one).
local RULES = {
  failure = function(s, P, now, instance) return record(s, P, now, false, false, instance or nil) end,
  success = function(s, P, now, instance) return record(s, P, now, true, false, instance or nil) end,
  slow_failure = function(s, P, now, instance) return record(s, P, now, false, true, instance or nil) end,
  slow_success = function(s, P, now, instance) return record(s, P, now, true, true, instance or nil) end,
  slow_call = slow_call, slow_call_failed = slow_call_failed, trial_success = trial_succeeded,
  trial_failure = trial_failed, force_open = force_open, force_half_open = force_half_open,
  force_closed = force_closed, force_mode = force_mode}

-- The operations that read an argument of their own (args[4]), each with its parser: the value the rule gets,
-- or nil when it is malformed or out of range.
local function whole_in(min, max)
  return function(v) return whole(v, min, max) end
end
local OWN_ARG = {
  trial_success = whole_in(-1, ANY_LONG), trial_failure = whole_in(-1, ANY_LONG),
  force_half_open = whole_in(-ANY_LONG, ANY_LONG),
  force_mode = function(v) return uint(v, DEFAULT, DISABLED) end,
  slow_call_failed = function(v)
    local slot, version = string.match(v or '', '^([^:]*):([^:]*)$')
    slot, version = whole(slot, -ANY_LONG, ANY_LONG), whole(version, -1, ANY_LONG)
    return slot and version and {slot, version} or nil
  end}

-- THE RECORD PATH. An outcome recorded on a closed state under a counting strategy in the NORMAL mode (a
-- sub-threshold failure, a success, the failure that opens) is most of what the library ever runs, and what
-- caps one key's rate. It runs without the general machinery of state (a state table, a copy, a comparison of
-- every component): the stored value v has been checked and split by one match (f1 .. f10, strings; a value
-- with a window or a stored mode does not match and goes to the general path), only the fields the policy's
-- rule reads are converted to numbers, only the fields that change are formatted, and the value is written
-- whole by one SET PX; an opening also appends its event (feed: the caller gave the stream, with its name,
-- length and ttl arguments). The rule is closed_outcome, the same as on the general path, and an opening moves
-- the fields tripped() moves. It returns nil, having written nothing, for anything else: a number the pattern
-- does not bound out of range, or a state that is not closed or is forced, which the general path then
-- handles (and reports).

-- Whether the fields of a value that CAPTURE (or capture_wm) split are in the ranges the pattern does not bound
-- and the state is unforced, checked on the text (a 16-character field is compared with 2^53 as text, same
-- length), and the error rate (a number, or false when it is not in [0, 1]). Conservative: a field this
-- refuses goes to the general path, which reports it or reads it.
local function record_path_fields(f1, f2, f4, f5, f6, f7, f8, f9, f10)
  local n2, n4, n10 = #f2, #f4, #f10
  if #f1 > 9 or #f5 > 9 or #f7 > 15 or #f8 > 9 or f9 ~= '0' or n2 > 16 or (n2 == 16 and f2 > LONG_MAX_TEXT)
      or n4 > 16 or (n4 == 16 and f4 > LONG_MAX_TEXT) or n10 > 16 or (n10 == 16 and f10 > LONG_MAX_TEXT)
      or (string.byte(f10) == 45 and f10 ~= '-1') then
    return false
  end
  if f6 == '0' then return 0 end
  local rate = tonumber(f6)
  return rate and rate <= 1 and rate
end

local function record_closed(key, v, f1, f2, f4, f5, f6, f7, f8, f9, f10, P, now, success, feed, name, length,
    stream_ttl)
  local rate = record_path_fields(f1, f2, f4, f5, f6, f7, f8, f9, f10)
  if not rate then return nil end
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
  -- the opening: open, openedAt now, no trial successes, the next version (tripped())
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

-- THE WINDOW RECORD PATH. An outcome, or a slow call, that a closed sliding window records without tripping
-- the breaker is what a sliding-window breaker sends on every call. It runs without the general machinery of
-- state: the stored value v has been split by one match (f, its twelve strings), only the window is decoded
-- and written again, the other fields pass through (the last failure's time is set by a failure), and the
-- value is written whole by one SET (PX unless a mode is stored). The rule is the general path's
-- (window_record, window_trips; a slow call counts as a slow success, which it is on a closed window). It
-- returns nil, having written nothing, for anything else: a field out of range, an open or forced state, the
-- DISABLED mode, no window or one of another shape (the general path starts an empty one), and an outcome
-- that trips the breaker (rare: the general path applies tripped() and appends the event).
local function record_window(key, v, f, P, now, failed, slow)
  local mode = tonumber(f[MODE])
  if mode == DEFAULT then mode = P.mode end
  if f[OPEN] ~= '0' or mode == DISABLED or f[WINDOW] == ''
      or not record_path_fields(f[1], f[2], f[4], f[5], f[6], f[7], f[8], f[9], f[10]) then
    return nil
  end
  local w = window_decode(f[WINDOW])
  if not w or w.k ~= P.window_type or w.n ~= P.window_size then return nil end
  w = window_record(w, failed, slow, now)
  if window_trips(w, P) then return nil end
  local last = failed and string.format('%d', now) or f[LAST_FAILURE_AT]
  local nv = f[1] .. ',' .. last .. ',0,' .. f[4] .. ',' .. f[5] .. ',' .. f[6] .. ',' .. f[7] .. ',' .. f[8]
      .. ',0,' .. f[10] .. ',' .. window_encode(w) .. ',' .. f[MODE]
  if f[MODE] == '0' then
    redis.call('SET', key, nv, 'PX', P.ttl)
  else
    redis.call('SET', key, nv) -- a stored mode is pinned
  end
  return v .. ' ' .. nv
end

-- THE QUORUM RECORD PATH. Under a quorum every outcome of a closed breaker rewrites the contributions, so the
-- paths above (which keep none) are bypassed; this one takes the common case without the general machinery: a
-- value with contributions split by one match (capture_wmq), only the recording instance's contribution found (a
-- plain find), decoded and rewritten, the others passed through as text in their order (a time window keeps those
-- newer than its span). Contributions of the scope are those Transitions.contributions keeps: for a time window
-- the ones newer than its span, none when the scope restarts (emptied); the instance's goes first. nil, having
-- written nothing, for anything else: a malformed or unexpected contribution, a seventeenth instance (the general
-- path drops the least recent), counts near their bounds.
--
-- Checking every part of the text the value holds costs more than the rest of the path (Lua's patterns test a
-- character class item by item). A text is checked once (quorum_check: every part's form, no instance twice, so
-- the recording instance's part is its only one): a text this path wrote, or found well-formed, is
-- remembered with how many parts it holds and a lower bound of their times (at most 1,000 texts; the memory
-- starts over beyond). Well-formedness is a property of the text alone, so a value holding a remembered text
-- needs no check whoever wrote it; any other text is checked part by part. Where the library is run as EVAL
-- scripts the memory lasts one call, and every text is checked.
local QUORUM_PART = '^[%w._:@#/%-]+(),%d+,%d+,(%-?%d+)'
local QUORUM_MINE = '^[^,]*,(%d+),(%d+),(%-?%d+)()'
local CHECKED_PARTS, CHECKED_OLDEST, NCHECKED = {}, {}, 0

local function remember_checked(text, n, oldest)
  if not CHECKED_PARTS[text] then
    if NCHECKED >= 1000 then
      CHECKED_PARTS, CHECKED_OLDEST, NCHECKED = {}, {}, 0
    end
    NCHECKED = NCHECKED + 1
  end
  CHECKED_PARTS[text] = n
  CHECKED_OLDEST[text] = oldest
end

-- How many parts text holds and the oldest of their times, when it is 1 to MAX_CONTRIBUTORS parts joined by ';',
-- each an instance id of at most MAX_INSTANCE characters and three numbers (QUORUM_PART), no id twice; nil
-- otherwise.
local function quorum_check(text)
  local n, oldest, p, seen = 0, math.huge, 1, {}
  while true do
    local _, last, comma, at = string.find(text, QUORUM_PART, p)
    if not last or comma - p > MAX_INSTANCE or n >= MAX_CONTRIBUTORS then return nil end
    local id = string.sub(text, p, comma - 1)
    if seen[id] then return nil end
    seen[id] = true
    n = n + 1
    at = tonumber(at)
    if at < oldest then oldest = at end
    local sep = string.byte(text, last + 1)
    if not sep then return n, oldest end
    if sep ~= 59 then return nil end
    p = last + 2
  end
end

-- The parts of the checked text others last recorded after horizon, how many, and the oldest of their times.
local function quorum_newer(others, horizon)
  local kept, n, oldest = {}, 0, math.huge
  for part, at in string.gmatch(others .. ';', '([^;]*,(%-?%d+));') do
    at = tonumber(at)
    if at > horizon then
      n = n + 1
      kept[n] = part
      if at < oldest then oldest = at end
    end
  end
  return table.concat(kept, ';'), n, oldest
end

local function quorum_contributions(text, instance, failed, now, horizon, emptied)
  local add = failed and 1 or 0
  local n, oldest = CHECKED_PARTS[text], CHECKED_OLDEST[text]
  if emptied then
    n, text = 0, ''
  elseif not n then
    n, oldest = quorum_check(text)
    if not n then return nil end
  end
  -- the instance's contribution: from s (its first character) to e (the separator after it, or none); the
  -- others are the text up to b (0: none) and from a (past the end: none)
  local key = instance .. ','
  local skey = ';' .. key
  local s = string.find(text, key, 1, true)
  if s and s ~= 1 then
    s = string.find(text, skey, s - 1, true)
    s = s and s + 1
  end
  local b, a, f, c, t = 0, 1, nil, nil, nil
  if s then
    local e, stop = string.find(text, ';', s, true), nil
    f, c, t, stop = string.match(text, QUORUM_MINE, s)
    if not f or stop ~= (e or #text + 1) or #f > 9 or #c > 9 or #t > 16 then return nil end
    f, c, t = tonumber(f), tonumber(c), tonumber(t)
    if f > c then return nil end
    n = n - 1
    if t <= horizon then f = nil end
    if s == 1 then
      a = e and e + 1 or #text + 1
    else
      b, a = s - 2, e or #text + 1 -- a at the separator before the next part, kept
    end
  end
  local mine, at
  if f then
    at = math.max(t, now)
    mine = instance .. string.format(',%d,%d,%d', f + add, c + 1, at)
  else
    at = now
    mine = instance .. string.format(',%d,1,%d', add, now)
  end
  local out
  if n > 0 and oldest <= horizon then
    local others
    others, n, oldest = quorum_newer(string.sub(text, 1, b) .. string.sub(text, a), horizon)
    out = n > 0 and mine .. ';' .. others
  elseif n > 0 then
    if b == 0 then
      out = mine .. ';' .. string.sub(text, a)
    elseif a > #text then
      out = mine .. ';' .. string.sub(text, 1, b)
    else
      out = mine .. ';' .. string.sub(text, 1, b) .. string.sub(text, a)
    end
  end
  if n >= MAX_CONTRIBUTORS then return nil end
  if not out then
    remember_checked(mine, 1, at)
    return mine
  end
  remember_checked(out, n + 1, math.min(oldest, at))
  return out
end

local function record_quorum(key, v, P, now, success, slow, instance)
  if not instance or P.max_gap > 0 then return nil end
  local f = capture_wmq(v)
  if not f or f[OPEN] ~= '0' or f[MODE] ~= '0' or P.mode ~= NORMAL
      or not record_path_fields(f[1], f[2], f[4], f[5], f[6], f[7], f[8], f[9], f[10]) then
    return nil
  end
  local failed = not success
  local last = failed and string.format('%d', now) or f[LAST_FAILURE_AT]
  local failures, window, contrib = f[1], f[WINDOW], nil
  if P.strategy == SLIDING_WINDOW then
    if window == '' then return nil end
    local w = window_decode(window)
    if not w or w.k ~= P.window_type or w.n ~= P.window_size then return nil end
    w = window_record(w, failed, slow, now)
    if window_trips(w, P) then return nil end
    local horizon, emptied = -math.huge, false
    if P.window_type == 't' then
      horizon = now - P.window_size * 1000
    else
      local _, wf = window_counts(w)
      emptied = wf == 0
    end
    contrib = quorum_contributions(f[13], instance, failed, now, horizon, emptied)
    window = window_encode(w)
  elseif P.strategy == 0 and window == '' then
    local count = tonumber(failures)
    if success then
      if count == 0 then return v end
      failures = '0'
      contrib = instance .. string.format(',0,1,%d', now)
    else
      if count + 1 >= P.failure_threshold then return nil end
      failures = string.format('%d', count + 1)
      contrib = quorum_contributions(f[13], instance, true, now, -math.huge, false)
    end
  else
    return nil
  end
  if not contrib then return nil end
  local nv = failures .. ',' .. last .. ',0,' .. f[4] .. ',' .. f[5] .. ',' .. f[6] .. ',' .. f[7] .. ','
      .. f[8] .. ',0,' .. f[10] .. ',' .. window .. ',0,' .. contrib
  redis.call('SET', key, nv, 'PX', P.ttl)
  return v .. ' ' .. nv
end

local change

local function state(keys, a)
  local nargs = #a
  local op = a[1]
  local rule = RULES[op]
  local now = whole(a[2], -ANY_LONG, ANY_LONG)
  local P = policy(a[3])
  local own = OWN_ARG[op]
  local own_arg = own and own(a[4])
  local removes_claims = a[5]
  -- the keys: the state, the two claim keys when the operation removes claims, the stream last when given
  local nkeys = #keys
  local feed = nargs == 8 and keys[nkeys]
  if not rule or not now or not P or (own and own_arg == nil) or (removes_claims ~= '0' and removes_claims ~= '1')
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

  -- prev: the state; p: its component texts (thirteen: the window '' for none, the mode '0' for DEFAULT, the
  -- contributions '' for none); text: its value as the reply reports it
  local prev, p, text
  if v then
    local f1, f2, f3, f4, f5, f6, f7, f8, f9, f10 = string.match(v, CAPTURE)
    if f1 then
      p = {f1, f2, f3, f4, f5, f6, f7, f8, f9, f10}
    else
      p = capture_wm(v)
    end
    if p then
      prev = parse(p)
    end
    if not prev and not f1 and not hash then
      -- a value with contributions (a hash's fields never have them)
      p = capture_wmq(v)
      if p then prev = parse(p) end
    end
    if prev then text = v end
  end
  if not prev and v ~= false then
    local fields = hash
    if not fields then
      local n
      fields, n = split(v)
      if n > NWM then
        -- the contributions' text is one component, whatever its commas
        fields[CONTRIB] = table.concat(fields, ',', CONTRIB, n)
        for i = CONTRIB + 1, n do fields[i] = nil end
        n = NSTATE
      end
      if n ~= NFIELDS and n ~= NWM and n ~= NSTATE then
        return redis.error_reply('REDEYE_MALFORMED the value has ' .. n .. ' comma-separated fields, not '
            .. NFIELDS .. ' (or ' .. NWM .. ' with a window and a mode, or more with contributions)')
      end
    end
    local why
    prev, why = parse_fields(fields)
    if not prev then
      return redis.error_reply('REDEYE_MALFORMED ' .. why)
    end
    -- report integers as stored (every reader parses them alike), encode booleans, an error rate in another
    -- form, a missing version and the mode
    p = fields
    p[OPEN] = prev[OPEN] and '1' or '0'
    p[FORCED] = prev[FORCED] and '1' or '0'
    if not string.match(p[ERROR_RATE], '^%d+%.?%d*$') then p[ERROR_RATE] = encode(prev, ERROR_RATE) end
    if not p[VERSION] then p[VERSION] = encode(prev, VERSION) end
    p[WINDOW] = p[WINDOW] or ''
    p[MODE] = encode(prev, MODE)
    p[CONTRIB] = p[CONTRIB] or ''
    text = join(p)
  elseif not prev then
    -- a new life of the key: the initial state, its version based on the server clock in microseconds
    local t = redis.call('TIME')
    prev = {0, 0, false, 0, 0, 0, 0, 0, false, tonumber(t[1]) * 1000000 + tonumber(t[2]), false, DEFAULT,
            false}
    p = {}
    for i = 1, NSTATE do p[i] = encode(prev, i) end
    text = join(p)
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

  -- A component changed when its value did (the same test as comparing the encoded strings: integers are
  -- exact, the error rate round-trips bit-exactly; a window or contributions table another rule made is compared
  -- by its text); only changed components are formatted, the others pass through.
  local q = p
  local changed = false
  for i = 1, NSTATE do
    if prev[i] ~= nxt[i] then
      local e = encode(nxt, i)
      if (i ~= WINDOW and i ~= CONTRIB) or e ~= p[i] then
        if not changed then
          q = {p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13]}
          changed = true
        end
        q[i] = e
      end
    end
  end
  local qtext = changed and join(q) or text
  -- A pinned state (forced, or a stored mode: an operator's decision) never expires; any other state carries
  -- the clean-up ttl. A pinned state left unchanged is persisted too (it may predate this rule), and a hash of
  -- earlier releases is replaced by the value at once.
  if nxt[FORCED] or nxt[MODE] ~= DEFAULT then
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
  -- change, so there is no second round trip. Its fields are StateCodec.toFields' (the window, the mode and the
  -- contributions only when not at their defaults). A failed append (the stream key holds another type, an ACL) does not
  -- undo the committed change: published '0' tells the caller to publish (and signal a gap) as when it appends
  -- by itself.
  local published = '-'
  if publishes then
    local entry = {feed, 'MAXLEN', '~', length, '*', 'op', name, 'kind', kind, 'from', FROM[kind]}
    for i = 1, FORCED do
      entry[#entry + 1] = FIELDS[i]
      entry[#entry + 1] = q[i]
    end
    if q[WINDOW] ~= '' then
      entry[#entry + 1] = 'window'
      entry[#entry + 1] = q[WINDOW]
    end
    if q[MODE] ~= '0' then
      entry[#entry + 1] = 'mode'
      entry[#entry + 1] = q[MODE]
    end
    if q[CONTRIB] ~= '' then
      entry[#entry + 1] = 'contributors'
      entry[#entry + 1] = q[CONTRIB]
    end
    entry[#entry + 1] = 'version'
    entry[#entry + 1] = q[VERSION]
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
-- A recorded outcome, timed or not, or a call crossing the slow-call threshold (AtomicOperation FAILURE,
-- SUCCESS, SLOW_SUCCESS, SLOW_FAILURE, SLOW_CALL): what every guarded call sends, and so what caps one key's
-- rate. Its interface is the smallest the rules allow (every key and argument costs the call server time): no
-- own argument and no claim keys, since a recorded outcome neither reads the one nor removes the others.
--
-- keys[1] state string, as for state
-- args[1] failure | success | slow_success | slow_failure | slow_call
-- args[2] now, epoch ms, as for state
-- args[3] the policy, as for state
-- Optional, the three or none (a standalone server only), as state's args[6..8] with the stream as keys[2]:
-- args[4] the operation's name; args[5] the stream's approximate maximum length; args[6] the stream's ttl ms
-- Optional, last (args[4], or args[7] after the stream's three): the instance the outcome is attributed to
-- (AtomicOperation.instance(), a valid instance id), sent only under a policy with a quorum, whose
-- contributions it updates; without it an outcome is attributed to no instance
--
-- Returns what state returns. Without a quorum, an outcome on a closed, unforced state of ten fields in the
-- canonical form under a counting strategy in the NORMAL mode runs the record path (record_closed); one that a
-- closed sliding window records without tripping runs the window record path (record_window); anything else (a
-- policy with a quorum, a state with contributions, another mode, an open
-- or forced state, an opening of a window, a hash of earlier releases, a value to report as malformed, a key
-- that does not exist) goes to state's general path (change) with the same GET reply, before anything is
-- written.
local RECORDED = {failure = true, success = true, slow_success = true, slow_failure = true, slow_call = true}

local function recorded_outcome(keys, a)
  local op = a[1]
  local nargs = #a
  local nkeys = #keys
  local streamed = nargs >= 6
  local feed = streamed and keys[2]
  local instance = (nargs == 4 or nargs == 7) and a[nargs]
  local now = whole(a[2], -ANY_LONG, ANY_LONG)
  local P = policy(a[3])
  if not RECORDED[op] or not now or not P or nargs < 3 or nargs > 7 or nargs == 5
      or nkeys ~= (streamed and 2 or 1) or (instance and not valid_instance(instance)) then
    return redis.error_reply('REDEYE_BAD_ARGS record got ' .. nargs .. ' arguments and ' .. nkeys .. ' keys, op '
        .. tostring(op) .. ', policy ' .. tostring(a[3])
        .. ': every argument must be present and in range; nothing was changed')
  end
  local v = redis.pcall('GET', keys[1])
  if type(v) == 'string' then
    local done
    if P.record_path and op ~= 'slow_call' then
      local f1, f2, f3, f4, f5, f6, f7, f8, f9, f10 = string.match(v, CAPTURE)
      if f3 == '0' then
        done = record_closed(keys[1], v, f1, f2, f4, f5, f6, f7, f8, f9, f10, P, now,
            op == 'success' or op == 'slow_success', feed, a[4], a[5], a[6])
      end
    elseif P.window_path then
      local f = capture_wm(v)
      if f then
        done = record_window(keys[1], v, f, P, now, op == 'failure' or op == 'slow_failure',
            op ~= 'failure' and op ~= 'success')
      end
    elseif P.quorum_on and op ~= 'slow_call' then
      done = record_quorum(keys[1], v, P, now, op == 'success' or op == 'slow_success',
          op == 'slow_success' or op == 'slow_failure', instance)
    end
    if done then return done end
  end
  return change(keys, v, op, RULES[op], now, P, instance, '0', feed, a[4], a[5], a[6])
end

-- @only outcomes
------------------------------------------------------------------------------------------------- outcomes
-- A batch of one instance's ordinary outcomes (AtomicOperation.outcomes, rule OUTCOMES: the store's
-- OutcomeBatches), applied in one call: record, the rule of a recorded outcome on the general path, folded over
-- the outcomes in order, each at its own instant. The change goes from the state before the first outcome to the
-- state after the last, written once (one GET, one SET) and only when it differs, and reports the first
-- transition the fold made (an opening, or METRICS_ONLY's would_open, whose later ones each moved the version
-- too), its event carrying the state after the last outcome (Transitions' batches). The value is written in the
-- same layout as by one outcome at a time (THE STORED STATE), so the releases before batches, which never send
-- one, read and count on it alike.
--
-- keys[1] state string, as for state
-- args[1] the outcomes, in order (BATCH below)
-- args[2] the policy, as for state
-- Optional, the three or none (a standalone server only), as record's, with the stream as keys[2]:
-- args[3] the operation's name; args[4] the stream's approximate maximum length; args[5] the stream's ttl ms
-- Optional, last (args[3], or args[6] after the stream's three): the instance the outcomes are attributed to
-- (AtomicOperation.instance(), a valid instance id), sent only under a policy with a quorum, as record's
--
-- BATCH: one token per outcome, joined by ','. A token is the outcome's instant (epoch ms) minus the previous
-- outcome's (the first one's minus 0: its instant), in decimal without a leading zero and left out when 0,
-- then one digit for the outcome: 0 success, 1 failure, 2 slow success, 3 slow failure (the two low bits of
-- AtomicOperation.packOutcome; a count window's slot codes). 1 to MAX_BATCH tokens. For example
-- '17648000000001,0,120,-33': a failure at 1764800000000, a success at the same instant, a success 12 ms
-- later, a slow failure 3 ms before that one. Instants within 2^53 ms of the epoch (every real one) are exact.
--
-- Returns what state returns. Every outcome goes through the general path's rule (the record paths above
-- apply to one outcome; a sliding window the batch made is changed in place, see fold), so a batch of n
-- outcomes costs the server n steps of that rule on state tables, plus one GET, one comparison and one SET.

local MAX_BATCH = 1024 -- AtomicOperation.MAX_BATCH

-- The outcomes of a BATCH text as one flat list, each outcome's code then its instant, or nil when the text is
-- not exactly that form or holds more than MAX_BATCH outcomes.
local function batch_decode(text)
  if type(text) ~= 'string' then return nil end
  local b, n, t, at, len = {}, 0, 0, 1, #text
  while true do
    local _, e, minus, digits, code = string.find(text, '^(%-?)(%d*)([0-3])', at)
    if not e or n >= 2 * MAX_BATCH then return nil end
    if digits == '' then
      if minus ~= '' then return nil end
    else
      if string.byte(digits) == 48 or #digits > 19 then return nil end
      local d = tonumber(digits)
      if minus == '' then t = t + d else t = t - d end
      if t < -ANY_LONG or t > ANY_LONG then return nil end
    end
    b[n + 1], b[n + 2] = string.byte(code) - 48, t
    n = n + 2
    if e == len then return b end
    if string.byte(text, e + 1) ~= 44 or e + 1 == len then return nil end
    at = e + 2
  end
end

-- window_record of a time window that no state outside a fold holds (the fold made it), changed in place: the
-- same window, without the copy of every busy bucket that window_record makes for each outcome (a batch of
-- 1,024 outcomes into a window of 120 busy buckets would copy 600,000 list entries). Its counts, when
-- window_counts has computed them, are kept: each sum saturates at INT_MAX as window_counts' does.
local function time_window_record_in_place(w, failed, slow, now)
  local b = w.b
  local p = bucket_of(w.n, now)
  if p > w.pos then
    -- rolled forward to now's bucket: the busy buckets renumbered, those that leave the window dropped
    local n = #b
    local j = shifted_buckets(b, b, p - w.pos)
    for m = n, j + 1, -1 do b[m] = nil end
    w.pos = p
    w.calls = nil
  end
  local c, f, s, j = bucket_add(b, w.count, failed, slow)
  if w.calls then
    if b[j + 1] ~= c then w.calls = math.min(w.calls + 1, INT_MAX) end
    if b[j + 2] ~= f then w.failures = math.min(w.failures + 1, INT_MAX) end
    if b[j + 3] ~= s then w.slow = math.min(w.slow + 1, INT_MAX) end
  end
  return w
end

-- window_record of a count window that no state outside a fold holds, changed in place: while the fold runs its
-- slots are a list of one-character strings (w.slots, w.ring nil; the fold joins them back into w.ring before it
-- returns), so that an outcome writes one slot instead of copying the ring (up to 1,000 characters). Its counts
-- are kept as window_record keeps them.
local function count_window_record_in_place(w, failed, slow)
  local calls, failures, slows = window_counts(w)
  local slots = w.slots
  if not slots then
    slots = {}
    local ring = w.ring
    for k = 1, #ring do slots[k] = string.sub(ring, k, k) end
    w.slots = slots
    w.ring = nil
  end
  local pos = w.pos
  if pos < LONG_MAX then pos = pos + 1 end
  local i = (pos - 1) % w.n + 1
  local old = slots[i]
  slots[i] = string.char(48 + (failed and 1 or 0) + (slow and 2 or 0))
  w.pos = pos
  w.calls, w.failures, w.slow = counts_replaced(calls, failures, slows, old and string.byte(old), failed, slow)
  return w
end

-- The rule of a batch (arg: batch_decode's list, and the instance as arg.instance, nil for none): record over
-- every outcome in order at its own instant; the state after the last and the first transition ('' for none).
-- An outcome that a closed sliding window records, in a window an earlier outcome of the batch made, is the
-- sliding-window branch of record with that window changed in place (no state but the fold's own holds it, and
-- it has the policy's shape); every other outcome goes through record itself.
local function fold(s, P, now, arg)
  local first = ''
  local instance = arg.instance
  local original = s[WINDOW]
  local windowed = P.strategy == SLIDING_WINDOW
  local in_place = P.window_type == 't' and time_window_record_in_place or count_window_record_in_place
  for i = 1, #arg, 2 do
    local code, at = arg[i], arg[i + 1]
    local failed, slow = code % 2 == 1, code >= 2
    local w = s[WINDOW]
    local kind
    if windowed and w and w ~= original and not s[OPEN] and mode_of(s, P) ~= DISABLED then
      s, kind = window_outcome(s, in_place(w, failed, slow, at), failed, P, at, instance)
    else
      s, kind = record(s, P, at, not failed, slow, instance)
    end
    if first == '' then first = kind end
  end
  local w = s[WINDOW]
  if w and w.slots then
    w.ring = table.concat(w.slots)
    w.slots = nil
  end
  return s, first
end

local function recorded_outcomes(keys, a)
  local nargs = #a
  local nkeys = #keys
  local streamed = nargs >= 5
  local feed = streamed and keys[2]
  local instance = (nargs == 3 or nargs == 6) and a[nargs] or nil
  local P = policy(a[2])
  local batch = batch_decode(a[1])
  if not batch or not P or nargs < 2 or nargs > 6 or nargs == 4 or nkeys ~= (streamed and 2 or 1)
      or (instance and not valid_instance(instance)) then
    return redis.error_reply('REDEYE_BAD_ARGS outcomes got ' .. nargs .. ' arguments and ' .. nkeys .. ' keys, '
        .. (batch and (#batch / 2) .. ' outcomes' or 'outcomes not in their form (1 to ' .. MAX_BATCH .. ')')
        .. ', policy ' .. tostring(a[2]) .. ': every argument must be present and in range; nothing was changed')
  end
  batch.instance = instance
  return change(keys, redis.pcall('GET', keys[1]), 'outcomes', fold, batch[#batch], P, batch, '0', feed, a[3], a[4],
      a[5])
end
-- @end

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
-- args[1] ttl ms (1 .. 100 years), or 0 for no expiry (the store passes 0 for a pinned state: a forced state or
--         a stored mode is never expired by the store, whatever ttl the caller gave)
-- args[2] the state's value (see THE STORED STATE): ten fields in the canonical form (CANONICAL), twelve
--         (capture_wm) with a window in its canonical text and a mode code, or those twelve and contributions
--         (capture_wmq) that Contribution.decodeAll reads
--
-- Replaces whatever was under the key (including data of another type, and the hash of earlier releases) and
-- sets its TTL, atomically: one SET. The arguments are checked before it.
local function put(keys, a)
  local ttl = a[1]
  local value = a[2]
  local valid = type(value) == 'string' and string.find(value, CANONICAL)
  if not valid and type(value) == 'string' then
    local raw = capture_wm(value)
    valid = raw and parse(raw) and true
    if not valid then
      raw = capture_wmq(value)
      valid = raw and parse(raw) and true
    end
  end
  if not uint(ttl, 0, MAX_TTL) or #a ~= 2 or not valid then
    return redis.error_reply('REDEYE_BAD_ARGS put needs a ttl in 0 .. ' .. MAX_TTL
        .. ' ms and a state of ten comma-separated fields (twelve with a window and a mode, more with'
        .. ' contributions), got ttl '
        .. tostring(ttl) .. ' and ' .. (#a - 1) .. ' more arguments; nothing was changed')
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
-- @only outcomes
export('outcomes', recorded_outcomes)
-- @end
export('claim', claim)
export('release', release)
export('put', put)
export('publish', publish)
