-- redeye: claim one half-open trial permit.
--
-- KEYS[1] claims zset (<prefix>{<tag>}:trial): member = token, score = expiry in server epoch ms
-- ARGV[1] permits (>= 1)
-- ARGV[2] ttl ms (>= 1)
-- ARGV[3] token (unique per call)
--
-- Returns 1 when the claim was created, 0 when every permit is held by a live claim.
-- Expiry uses the SERVER clock (TIME): scripts replicate their effects, so replicas and a promoted
-- primary see the same absolute expiry scores, and no client clock is involved.

if redis.replicate_commands then
  redis.replicate_commands() -- effect replication; a no-op on Redis 7+, required before TIME on Redis < 5
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local permits = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) -- drop expired claims
if redis.call('ZCARD', KEYS[1]) >= permits then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
-- The key outlives its longest-lived claim and no more.
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
