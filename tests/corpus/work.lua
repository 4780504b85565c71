-- A CPU workload for the corpus: Lua recursion, tables, table.sort with
-- a Lua comparator (C calling back into the VM), string building and
-- pattern matching; run for arg[1] seconds by an lld-linked host.
local secs = tonumber (arg and arg[1]) or 2.0

local function fib (n)
  if n < 2 then return n end
  return fib (n - 1) + fib (n - 2)
end

local function words (seed)
  local count, x = {}, seed
  for _ = 1, 2000 do
    x = (x * 1103515245 + 12345) % 2147483648
    local w = "w" .. (x % 500)
    count[w] = (count[w] or 0) + 1
  end
  local list = {}
  for w, n in pairs (count) do list[#list + 1] = { w = w, n = n } end
  table.sort (list, function (a, b)
    if a.n ~= b.n then return a.n > b.n end
    return a.w < b.w
  end)
  local text = {}
  for i = 1, #list do text[i] = string.format ("%s=%d", list[i].w, list[i].n) end
  local s = table.concat (text, " ")
  local sum = 0
  for n in s:gmatch ("=(%d+)") do sum = sum + tonumber (n) end
  return sum + #(s:gsub ("w(%d)", "%1"))
end

local function nest (depth, seed)
  if depth == 0 then return fib (16 + seed % 4) + words (seed) end
  return nest (depth - 1, seed * 31 + depth) + 1
end

local start, rounds, total = os.clock (), 0, 0
while os.clock () - start < secs do
  total = total + nest (rounds % 20, rounds)
  rounds = rounds + 1
end
print (rounds .. " rounds, " .. total)
