-- wrk script for every scenario: one request template whose `{id}` (in path and body) gets an id per request,
-- and `{n}` a number no request of the run sent before (the id itself, unless ids cycle).
-- Arguments after `--`, each key=value: token, method, path, body, threads (wrk -t), base (first fresh number)
-- and, for existing plants, cycle=n: ids 1..n in a scattered order. done() prints `BENCH_RESULT {json}`.

local thread_count = 0
function setup (thread)
  thread:set('tid', thread_count)
  thread_count = thread_count + 1
end

-- A prime: i * SCATTER modulo a cycle visits every id of the cycle once, each far from the one before.
local SCATTER = 1000003
local opt, n, headers = {}, 0, nil

-- A template split once at its tokens: literal text at odd indices, token names (`id`, `n`) at even ones.
local function split (template)
  if template == nil then return nil end
  local parts, rest = {}, template
  while true do
    local before, token, after = string.match(rest, '^(.-){(%a+)}(.*)$')
    if before == nil then break end
    parts[#parts + 1], parts[#parts + 2], rest = before, token, after
  end
  parts[#parts + 1] = rest
  return parts
end

local values, filled = {}, {}
local function fill (parts)
  if parts == nil then return nil end
  for i, part in ipairs(parts) do filled[i] = i % 2 == 1 and part or values[part] or '{' .. part .. '}' end
  return table.concat(filled, '', 1, #parts)
end

function init (args)
  for _, arg in ipairs(args) do
    local k, v = string.match(arg, '^(%w+)=(.*)$')
    if k then opt[k] = v end
  end
  opt.path, opt.body = split(opt.path), split(opt.body)
  opt.base, opt.threads, opt.cycle = tonumber(opt.base or '1'), tonumber(opt.threads or '1'), tonumber(opt.cycle)
  headers = { Authorization = 'Bearer ' .. opt.token }
  if opt.body then headers['Content-Type'] = 'application/json' end
end

function request ()
  -- Thread t of T sends base + t, base + t + T, ...: never the same number, together almost in order.
  local fresh = opt.base + tid + n * opt.threads
  local id = fresh
  if opt.cycle then
    -- Each thread starts elsewhere in the cycle, so the threads do not read the same rows in step.
    local i = math.floor(opt.cycle / opt.threads) * tid + n
    id = 1 + (i % opt.cycle * SCATTER) % opt.cycle
  end
  n = n + 1
  -- %.0f: ids are doubles, exact below 2^53; %d overflows on some builds.
  values.id, values.n = string.format('%.0f', id), string.format('%.0f', fresh)
  return wrk.format(opt.method, fill(opt.path), headers, fill(opt.body))
end

function done (summary, latency)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d}\n', summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.status + e.connect + e.read + e.write + e.timeout))
end
