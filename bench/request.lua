-- wrk script for every bench scenario: one templated request, a fresh id per request.
--
-- Arguments (after `--`), each key=value:
--   token=<bearer token>  method=POST  path=/plants  body=<template>  threads=<wrk -t>
--   base=<first id>
--   cycle=<n>   ids wrap over base .. base+n-1 (reads of a pre-filled store), visited
--               in a scattered order: each read lands anywhere in the store, as a
--               client's would, rather than next to the one before it
--   total=<n>   fill: ids base .. base+n-1 exactly once, split between the threads;
--               each thread prints FILL_PROGRESS every 50000 ids, and FILL_THREAD_DONE
--               when its share is sent, then stops
-- `{id}` in path and body is replaced by the request's id.
-- Without cycle or total every request gets an id never sent before.
--
-- Each thread has its own Lua state, so the threads share no counter: thread t of T
-- takes ids base + t, base + t + T, base + t + 2T... They never collide, and together
-- they rise almost in order, as ids from a sequence would: a store whose inserts cost
-- more in the middle of its keys (a sorted array, a B-tree's page splits) is measured
-- at its usual cost, not at the cost of one stream of ids landing before another's.
--
-- done() prints one line, `BENCH_RESULT {json}`, that bench/load.ts parses.

local thread_count = 0

-- A prime: multiplying by it modulo a cycle that it does not divide visits every id of
-- the cycle once, far apart. Products stay below 2^53 for cycles up to 10^9.
local SCATTER = 1000003

function setup (thread)
  thread:set('tid', thread_count)
  thread_count = thread_count + 1
end

local opt = {}
local n = 0
local first, step, quota, cycle, offset
local method, headers, path_parts, body_parts

-- Plain split on the literal `{id}`: gsub per request would also work but cost more.
local function split (template)
  if template == nil then return nil end
  local parts = {}
  local start = 1
  while true do
    local i, j = string.find(template, '{id}', start, true)
    if i == nil then
      table.insert(parts, string.sub(template, start))
      return parts
    end
    table.insert(parts, string.sub(template, start, i - 1))
    start = j + 1
  end
end

local function fill (parts, id)
  if parts == nil then return nil end
  return table.concat(parts, id)
end

function init (args)
  for _, arg in ipairs(args) do
    local k, v = string.match(arg, '^([%w_]+)=(.*)$')
    if k then opt[k] = v end
  end
  method = opt.method or 'GET'
  path_parts = split(opt.path or '/')
  body_parts = split(opt.body)
  headers = { Authorization = 'Bearer ' .. (opt.token or '') }
  if opt.body then headers['Content-Type'] = 'application/json' end

  local base = tonumber(opt.base or '1')
  local threads = tonumber(opt.threads or '1')
  first = base + tid
  step = threads
  if opt.total then
    -- This thread's ids below base + total: those with its remainder modulo threads.
    quota = math.max(0, math.ceil((tonumber(opt.total) - tid) / threads))
  elseif opt.cycle then
    cycle = tonumber(opt.cycle)
    -- Threads start at different points of the cycle so they do not read the same rows in step.
    offset = math.floor(cycle / threads) * tid
    first = base
  end
end

local stopped = false
-- wrk calls request() once on thread 0 before any connection opens, to check whether
-- the request can be pipelined, and never sends that one: it must not use up an id.
-- Were a wrk version not to make that call, thread 0 would just send its first id twice.
local probed = false

local function format (id)
  -- %.0f: ids are Lua doubles, exact below 2^53; %d would overflow on some builds.
  local ids = string.format('%.0f', id)
  return wrk.format(method, fill(path_parts, ids), headers, fill(body_parts, ids))
end

function request ()
  if tid == 0 and not probed then
    probed = true
    return format(first)
  end
  local id
  if quota then
    if n >= quota then
      -- wrk wants a request from every connection until the thread has stopped:
      -- resending the last id is a safe retry (same name and tag) that adds no plant.
      if not stopped then
        stopped = true
        io.write('FILL_THREAD_DONE ', tid, '\n')
        io.stdout:flush()
        wrk.thread:stop()
      end
      id = first + math.max(quota - 1, 0) * step
    else
      id = first + n * step
      if n > 0 and n % 50000 == 0 then
        io.write('FILL_PROGRESS 50000\n')
        io.stdout:flush()
      end
    end
  elseif cycle then
    id = first + ((offset + n) % cycle * SCATTER) % cycle
  else
    id = first + n * step
  end
  n = n + 1
  return format(id)
end

function done (summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"status_errors":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect, e.read, e.write, e.timeout))
end
