-- redeye: unconditional write of a whole breaker state (Store.put, last writer wins).
--
-- KEYS[1] state hash
-- ARGV[1] ttl ms (1 .. 100 years), or 0 for no expiry (the store passes 0 for a forced state: a forced state
--         is never expired by the store, whatever ttl the caller gave)
-- ARGV[2..] field, value, field, value, ...
--
-- Replaces whatever was under the key (including data of another type) and sets its TTL, atomically. The
-- arguments are checked before the DEL (REDEYE_BAD_ARGS): a failure after it would lose the old state.
local MAX_TTL = 3153600000000
local ttl = ARGV[1]
local n = #ARGV - 1
if type(ttl) ~= 'string' or not string.match(ttl, '^%d+$') or tonumber(ttl) > MAX_TTL or n < 2 or n % 2 ~= 0 then
  return redis.error_reply('REDEYE_BAD_ARGS put.lua needs a ttl in 0 .. ' .. MAX_TTL
      .. ' ms and field/value pairs, got ttl ' .. tostring(ttl) .. ' and ' .. n .. ' more arguments;'
      .. ' nothing was changed')
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if tonumber(ttl) > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
