-- redeye: claim one half-open trial permit.
--
-- KEYS[1] claims zset (<prefix>{<tag>}:trial): member = token, score = expiry in server epoch ms;
--         used when permits > 1
-- KEYS[2] one-permit claim (<prefix>{<tag>}:trial1): a string holding the token, expiring by PX;
--         used when permits == 1
-- ARGV[1] permits (>= 1)
-- ARGV[2] ttl ms (>= 1)
-- ARGV[3] token (unique per call)
--
-- Returns 1 when the claim was created (or this token already holds one), 0 when every permit is held by a
-- live claim.
-- Both keys share the operation's hash tag (one Cluster slot). Breakers with different permits may share
-- a key, so each branch counts the live claims of the other structure too:
--   permits == 1: fails if the zset holds any live member, else SET NX PX;
--   permits  > 1: live zset members + 1 if the one-permit claim exists must stay below permits.
-- Expiry uses the SERVER clock (TIME, and PX): scripts replicate their effects, so replicas and a
-- promoted primary see the same absolute expiries, and no client clock is involved.

-- The arguments are checked before anything is written (REDEYE_BAD_ARGS), and so is the type of the
-- one-permit key: the several-permits branch prunes expired members before it adds, and must not fail after.
--
-- IDEMPOTENT per token: if the token already holds a live claim (a first attempt whose reply was lost) the
-- answer is 1 again and nothing changes, so the store may send the same claim twice.

if redis.replicate_commands then
  redis.replicate_commands() -- effect replication; a no-op on Redis 7+, required before TIME on Redis < 5
end
local MAX_TTL = 3153600000000
local function int_arg(v, min, max)
  if type(v) ~= 'string' or not string.match(v, '^%d+$') then return nil end
  local x = tonumber(v)
  if x < min or x > max then return nil end
  return x
end
local permits = int_arg(ARGV[1], 1, 2147483647)
local ttl = int_arg(ARGV[2], 1, MAX_TTL)
local token = ARGV[3]
if not permits or not ttl or type(token) ~= 'string' or token == '' then
  return redis.error_reply('REDEYE_BAD_ARGS claim.lua needs permits >= 1, a ttl in 1 .. ' .. MAX_TTL
      .. ' ms and a token; nothing was changed')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Data of another type under the one-permit key would block every claim without ever expiring.
local ty = redis.call('TYPE', KEYS[2])['ok']
if ty ~= 'none' and ty ~= 'string' then
  return redis.error_reply('REDEYE_MALFORMED the one-permit claim key holds a ' .. ty .. ', not a string')
end

-- Already claimed by this very token: a repeated attempt.
if redis.call('GET', KEYS[2]) == token then
  return 1
end
local held = redis.call('ZSCORE', KEYS[1], token)
if held and tonumber(held) > now then
  return 1
end

if permits == 1 then
  if redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') > 0 then
    return 0
  end
  if redis.call('SET', KEYS[2], token, 'NX', 'PX', ttl) then
    return 1
  end
  return 0
end

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) -- drop expired claims
local live = redis.call('ZCARD', KEYS[1]) + redis.call('EXISTS', KEYS[2])
if live >= permits then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, token)
-- The key outlives its longest-lived claim and no more.
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
