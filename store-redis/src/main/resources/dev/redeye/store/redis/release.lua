-- redeye: release one trial claim by its token (compare-and-delete).
--
-- KEYS[1] claims zset (<prefix>{<tag>}:trial)
-- KEYS[2] one-permit claim (<prefix>{<tag>}:trial1)
-- ARGV[1] token
--
-- Deletes the one-permit claim only if it still holds this token, else removes the token from the zset.
-- A stale, expired or unknown token changes nothing. Returns 1 when a claim was released, else 0.
-- (Any token is acceptable, the empty one included: it matches no claim, so nothing is changed.)
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  return 1
end
return redis.call('ZREM', KEYS[1], ARGV[1])
