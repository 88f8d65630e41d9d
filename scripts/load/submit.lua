-- wrk script: POST /v1/appstore/transactions with pre-signed sandbox transactions, each by its own user.
-- Arguments: JWS_FILE TOKENS_FILE (one per line). Every thread starts at its own offset.
local bodies, tokens, index = {}, {}, 0
local threads = 0

function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  for line in io.lines(args[2]) do tokens[#tokens + 1] = line end
  index = (offset or 0) * math.floor(#bodies / 8)
end

function request()
  index = index + 1
  local i = (index % #bodies) + 1
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1],
  }
  return wrk.format("POST", "/v1/appstore/transactions", headers, '{"signed_transaction":"' .. bodies[i] .. '"}')
end
