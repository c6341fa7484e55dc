-- redeye: unconditional write of a whole breaker state (Store.put, last writer wins).
--
-- KEYS[1] state hash
-- ARGV[1] ttl ms, or 0 for no expiry (the store passes 0 for a forced state: a forced state is never
--         expired by the store, whatever ttl the caller gave)
-- ARGV[2..] field, value, field, value, ...
--
-- Replaces whatever was under the key (including data of another type) and sets its TTL, atomically.
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if tonumber(ARGV[1]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
