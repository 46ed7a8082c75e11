-- wrk script for every scenario: one request template whose `{id}` (in path and body) gets an id per request.
-- Arguments after `--`, each key=value: token, method, path, body, threads (wrk -t), base (first id) and,
-- for reads, cycle=n: ids 1..n in a scattered order. Without cycle every request sends an id never sent before.
-- done() prints one line, `BENCH_RESULT {json}`, that bench/measure.ts reads.

local thread_count = 0
function setup (thread)
  thread:set('tid', thread_count)
  thread_count = thread_count + 1
end

-- A prime: i * SCATTER modulo a cycle visits every id of the cycle once, each far from the one before.
local SCATTER = 1000003
local opt, n, headers = {}, 0, nil

-- The text before and after `{id}`, split once rather than searched in every request.
local function split (template)
  if template == nil then return nil end
  local before, after = string.match(template, '^(.-){id}(.*)$')
  if before == nil then return { template } end
  return { before, after }
end

local function fill (parts, id)
  if parts == nil or parts[2] == nil then return parts and parts[1] end
  return parts[1] .. id .. parts[2]
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
  local id
  if opt.cycle then
    -- Each thread starts elsewhere in the cycle, so the threads do not read the same rows in step.
    local i = math.floor(opt.cycle / opt.threads) * tid + n
    id = 1 + (i % opt.cycle * SCATTER) % opt.cycle
  else
    -- Thread t of T sends base + t, base + t + T, ...: never the same id, together almost in order.
    id = opt.base + tid + n * opt.threads
  end
  n = n + 1
  -- %.0f: ids are doubles, exact below 2^53; %d overflows on some builds.
  local s = string.format('%.0f', id)
  return wrk.format(opt.method, fill(opt.path, s), headers, fill(opt.body, s))
end

function done (summary, latency)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,' ..
    '"statusErrors":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect, e.read, e.write, e.timeout))
end
