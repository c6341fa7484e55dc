-- redeye: publish one transition event on the feed stream.
--
-- KEYS[1] feed stream (<prefix>redeye:feed)
-- ARGV[1] approximate maximum length of the stream
-- ARGV[2] ttl ms of the stream key, refreshed on every event (clean-up only)
-- ARGV[3..] field, value, field, value, ... (StateCodec event fields)
--
-- Returns the new entry id.
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return id
