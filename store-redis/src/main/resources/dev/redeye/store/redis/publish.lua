-- redeye: publish one transition event (or a gap marker) on the feed stream.
--
-- KEYS[1] feed stream (<prefix>redeye:feed)
-- ARGV[1] approximate maximum length of the stream (>= 1)
-- ARGV[2] ttl ms of the stream key (1 .. 100 years), refreshed on every entry (clean-up only)
-- ARGV[3..] field, value, field, value, ... (StateCodec event fields, or the one gap marker field)
--
-- Returns the new entry id. The arguments are checked before the XADD (REDEYE_BAD_ARGS): a failing PEXPIRE
-- after it would report an error for an entry that was appended.
local MAX_TTL = 3153600000000
local function int_arg(v, min, max)
  if type(v) ~= 'string' or not string.match(v, '^%d+$') then return nil end
  local x = tonumber(v)
  if x < min or x > max then return nil end
  return x
end
local n = #ARGV - 2
if not int_arg(ARGV[1], 1, 9007199254740992) or not int_arg(ARGV[2], 1, MAX_TTL) or n < 2 or n % 2 ~= 0 then
  return redis.error_reply('REDEYE_BAD_ARGS publish.lua needs a length >= 1, a ttl in 1 .. ' .. MAX_TTL
      .. ' ms and field/value pairs; nothing was appended')
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return id
