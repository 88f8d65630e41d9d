-- wrk script: POST /v1/appstore/transactions, one signed transaction per request, each by its own user.
-- Arguments: JWS_FILE TOKENS_FILE [SERVER SERVERS THREADS]: the file's lines are split between SERVERS servers (this
-- wrk drives number SERVER, from 0) and between THREADS threads, so no two requests carry the same transaction until
-- a thread's share runs out. Line k is always sent with token k mod #tokens: a repeat run sends each line again as
-- its own user.
local bodies, lines, tokens = {}, {}, {}
local threads, all = 0, {}
index, share = 0, 0  -- globals: done() reads them from each thread

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
  all[#all + 1] = thread
end

-- Says so when a thread ran out of its share and sent a transaction a second time.
function done(summary, latency, requests)
  for _, thread in ipairs(all) do
    if thread:get("index") > thread:get("share") then io.write("repeated: a thread sent more requests than its share\n") end
  end
end

function init(args)
  local server, servers, share_count = tonumber(args[3] or "0"), tonumber(args[4] or "1"), tonumber(args[5] or "1")
  for line in io.lines(args[2]) do tokens[#tokens + 1] = line end
  local total = 0
  for _ in io.lines(args[1]) do total = total + 1 end
  local first, last = math.floor(server * total / servers), math.floor((server + 1) * total / servers) - 1
  local k = 0
  for line in io.lines(args[1]) do
    if k >= first and k <= last and (k - first) % share_count == (id or 0) % share_count then
      bodies[#bodies + 1] = '{"signed_transaction":"' .. line .. '"}'
      lines[#lines + 1] = k
    end
    k = k + 1
  end
  share = #bodies
end

function request()
  local i = (index % #bodies) + 1
  index = index + 1
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. tokens[(lines[i] % #tokens) + 1],
  }
  return wrk.format("POST", "/v1/appstore/transactions", headers, bodies[i])
end
