-- SPDX-License-Identifier: BSD-3-Clause
-- A stand-in for Pktgen-DPDK's Lua library, so check_scenarios.sh can run the
-- scenarios without Pktgen, a NIC or satgw:
--   lua5.4 mock_pktgen.lua SCRIPT.lua
--
-- It defines the global `pktgen` with the functions Pktgen registers in
-- app/lpktgenlib.c (pktgenlib[] and pktgenlib_range[]), each checking its
-- argument count the way the C code does (lua_gettop must match exactly) and
-- the values Pktgen parses (port lists, "start|min|max|inc", addresses,
-- protocols, on/off). A wrong name or call fails the check instead of a lab
-- run. Behind the API sits a simulated 10 Gbit/s link pair and a device under
-- test that forwards at most MOCK_DUT_MPPS (default 5) Mpps: time advances
-- only in pktgen.delay/sleep/pause, so a "10 s" trial costs nothing, and the
-- RFC 2544 search must land on the simulated device's capacity.

local LINE_BPS = 10e9
local DUT_PPS = tonumber(os.getenv("MOCK_DUT_MPPS") or "5") * 1e6
local PCAP_MEAN = 371       -- mean frame of hub-imix.pcap (bytes with FCS)

local calls = {}
local state = { quit = false, starts = 0, now_ms = 0, ports = {} }

local function fail(fmt, ...)
	error(string.format("mock pktgen: " .. fmt, ...), 3)
end

local function port(pid)
	local p = state.ports[pid]
	if p == nil then
		p = { pid = pid, rate = 100, size = 64, rsize = 64, range = false, pcap = false,
		      sending = false, count = 0, sent_total = 0, opackets = 0, ipackets = 0,
		      obytes = 0, ibytes = 0, proto = "tcp" }
		state.ports[pid] = p
	end
	return p
end

-- Pktgen port lists: "0", "0,1", "0-3", "all".
local function portlist(s, fname)
	if type(s) ~= "string" and type(s) ~= "number" then
		fail("%s: port list must be a string, got %s", fname, type(s))
	end
	s = tostring(s)
	local out = {}
	if s == "all" then
		return { port(0), port(1) }
	end
	for item in string.gmatch(s, "[^,]+") do
		local a, b = item:match("^(%d+)%-(%d+)$")
		if a then
			for i = tonumber(a), tonumber(b) do
				out[#out + 1] = port(i)
			end
		elseif item:match("^%d+$") then
			out[#out + 1] = port(tonumber(item))
		else
			fail("%s: bad port list '%s'", fname, s)
		end
	end
	if #out == 0 then
		fail("%s: empty port list", fname)
	end
	return out
end

local function nargs(fname, want, ...)
	local n = select("#", ...)
	if n ~= want then
		fail("%s: wrong number of arguments (%d, Pktgen takes %d)", fname, n, want)
	end
	calls[fname] = (calls[fname] or 0) + 1
end

local function estate(s, fname)
	local ok = { on = true, off = false, enable = true, disable = false }
	if ok[s] == nil then
		fail("%s: state must be on/off/enable/disable, got '%s'", fname, tostring(s))
	end
	return ok[s]
end

local function ipv4(s, fname)
	local a, b, c, d = tostring(s):match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
	if not a or tonumber(a) > 255 or tonumber(b) > 255 or tonumber(c) > 255 or
	   tonumber(d) > 255 then
		fail("%s: not an IPv4 address: '%s'", fname, tostring(s))
	end
end

local function mac(s, fname)
	if not tostring(s):match("^%x%x:%x%x:%x%x:%x%x:%x%x:%x%x$") then
		fail("%s: not a MAC address: '%s'", fname, tostring(s))
	end
end

local RANGE_WHAT = { start = 1, min = 1, minimum = 1, max = 1, maximum = 1, inc = 1,
		     increment = 1 }
local function what(s, fname)
	if not RANGE_WHAT[s] then
		fail("%s: must be start/min/max/inc, got '%s'", fname, tostring(s))
	end
end

local function integer(v, fname)
	if math.type(tonumber(v)) ~= "integer" then
		fail("%s: expects an integer, got '%s'", fname, tostring(v))
	end
	return tonumber(v)
end

local function proto(s, fname)
	local c = tostring(s):sub(1, 1)
	if c ~= "t" and c ~= "u" and c ~= "i" then
		-- Pktgen silently falls back to TCP: flag it here instead.
		fail("%s: protocol must be tcp, udp or icmp, got '%s'", fname, tostring(s))
	end
	return s
end

local function frame_size(p)
	if p.pcap then
		return PCAP_MEAN
	end
	return p.range and p.rsize or p.size
end

-- Advance simulated time: every sending port offers rate% of line rate, the
-- device under test forwards up to DUT_PPS in total to the peer port (0 <-> 1).
local function advance(ms)
	local offered, total = {}, 0
	for pid, p in pairs(state.ports) do
		if p.sending then
			local pps = p.rate / 100 * LINE_BPS / ((frame_size(p) + 20) * 8)
			local n = math.floor(pps * ms / 1000)
			if p.count > 0 and p.sent_total + n > p.count then
				n = p.count - p.sent_total
				p.sending = false
			end
			p.sent_total = p.sent_total + n
			p.opackets = p.opackets + n
			p.obytes = p.obytes + n * (frame_size(p) - 4)
			offered[pid] = n
			total = total + n
		end
	end
	local cap = DUT_PPS * ms / 1000
	local share = total > cap and cap / total or 1
	for pid, n in pairs(offered) do
		local peer = port(pid ~ 1)
		local got = math.floor(n * share)
		peer.ipackets = peer.ipackets + got
		peer.ibytes = peer.ibytes + got * (frame_size(state.ports[pid]) - 4)
	end
	state.now_ms = state.now_ms + ms
end

pktgen = {}
pktgen.info = { Pktgen_Version = "mock", Lua_Version = _VERSION }

function pktgen.set(...)
	nargs("set", 3, ...)
	local pl, w, v = ...
	local known = { count = 1, size = 1, rate = 1, burst = 1, cycles = 1, sport = 1, dport = 1,
			ttl = 1, seq_cnt = 1, seqCnt = 1, prime = 1, dump = 1 }
	if not known[w] then
		fail("set does not support %s", tostring(w))
	end
	if tonumber(v) == nil then
		fail("set %s: value must be a number, got '%s'", w, tostring(v))
	end
	for _, p in ipairs(portlist(pl, "set")) do
		if w == "rate" then
			v = tonumber(v)
			if v <= 0 or v > 100 then
				fail("set rate: %s%% is outside 0-100", tostring(v))
			end
			p.rate = v
		elseif w == "size" then
			p.size = integer(v, "set size")
		elseif w == "count" then
			p.count = integer(v, "set count")
		end
	end
end

function pktgen.start(...)
	nargs("start", 1, ...)
	for _, p in ipairs(portlist(..., "start")) do
		p.sending = true
		p.sent_total = 0
		state.starts = state.starts + 1
	end
end

function pktgen.stop(...)
	nargs("stop", 1, ...)
	for _, p in ipairs(portlist(..., "stop")) do
		p.sending = false
	end
end

function pktgen.set_mac(...)
	nargs("set_mac", 3, ...)
	local pl, t, m = ...
	if t ~= "src" and t ~= "dst" then
		fail("set_mac: type must be src or dst, got '%s'", tostring(t))
	end
	mac(m, "set_mac")
	portlist(pl, "set_mac")
end

function pktgen.set_ipaddr(...)
	nargs("set_ipaddr", 3, ...)
	local pl, t, a = ...
	if t ~= "src" and t ~= "dst" then
		fail("set_ipaddr: type must be src or dst, got '%s'", tostring(t))
	end
	ipv4(tostring(a):gsub("/%d+$", ""), "set_ipaddr")
	portlist(pl, "set_ipaddr")
end

function pktgen.set_proto(...)
	nargs("set_proto", 2, ...)
	local pl, pr = ...
	proto(pr, "set_proto")
	portlist(pl, "set_proto")
end

function pktgen.set_type(...)
	nargs("set_type", 2, ...)
	local pl, t = ...
	if t ~= "ipv4" and t ~= "ipv6" and t ~= "arp" then
		fail("set_type: ipv4, ipv6 or arp, got '%s'", tostring(t))
	end
	portlist(pl, "set_type")
end

function pktgen.pcap(...)
	nargs("pcap", 2, ...)
	local pl, s = ...
	local on = estate(s, "pcap")
	for _, p in ipairs(portlist(pl, "pcap")) do
		p.pcap = on
		if on then
			p.range = false
		end
	end
end

function pktgen.set_range(...)
	nargs("set_range", 2, ...)
	local pl, s = ...
	local on = estate(s, "set_range")
	for _, p in ipairs(portlist(pl, "set_range")) do
		p.range = on
		if on then
			p.pcap = false
		end
	end
end

function pktgen.pattern(...)
	nargs("pattern", 2, ...)
	local pl, t = ...
	if t ~= "abc" and t ~= "none" and t ~= "zero" and t ~= "user" then
		fail("pattern: abc, none, zero or user, got '%s'", tostring(t))
	end
	portlist(pl, "pattern")
end

function pktgen.delay(...)
	nargs("delay", 1, ...)
	advance(integer(..., "delay"))
end

function pktgen.sleep(...)
	nargs("sleep", 1, ...)
	advance(integer(..., "sleep") * 1000)
end

function pktgen.pause(...)
	nargs("pause", 2, ...)
	local _, ms = ...
	advance(integer(ms, "pause"))
end

function pktgen.clr(...)
	nargs("clr", 0, ...)
	for _, p in pairs(state.ports) do
		p.opackets, p.ipackets, p.obytes, p.ibytes = 0, 0, 0, 0
	end
end

function pktgen.clear(...)
	nargs("clear", 1, ...)
	for _, p in ipairs(portlist(..., "clear")) do
		p.opackets, p.ipackets, p.obytes, p.ibytes = 0, 0, 0, 0
	end
end

function pktgen.portStats(...)
	nargs("portStats", 2, ...)
	local pl, t = ...
	if t ~= "port" and t ~= "rate" then
		fail("portStats: type must be port or rate, got '%s'", tostring(t))
	end
	local out, n = {}, 0
	for _, p in ipairs(portlist(pl, "portStats")) do
		local s = { ipackets = p.ipackets, opackets = p.opackets, ibytes = p.ibytes,
			    obytes = p.obytes, ierrors = 0, oerrors = 0, rx_nombuf = 0,
			    imissed = 0 }
		if t == "rate" then
			s.pkts_rx, s.pkts_tx = p.ipackets, p.opackets
			s.mbits_rx, s.mbits_tx = p.ibytes * 8 // 1000000, p.obytes * 8 // 1000000
		end
		out[p.pid] = s
		n = n + 1
	end
	out.n = n
	return out
end

function pktgen.isSending(...)
	nargs("isSending", 1, ...)
	local out, n = {}, 0
	for _, p in ipairs(portlist(..., "isSending")) do
		out[p.pid] = p.sending and "y" or "n"
		n = n + 1
	end
	out.n = n
	return out
end

function pktgen.quit(...)
	nargs("quit", 0, ...)
	state.quit = true
end

pktgen.range = {}

local function range_ip(fname, field)
	pktgen.range[fname] = function(...)
		nargs("range." .. fname, 3, ...)
		local pl, w, a = ...
		what(w, "range." .. fname)
		ipv4(a, "range." .. fname)
		portlist(pl, "range." .. fname)
	end
end
range_ip("src_ip")
range_ip("dst_ip")

local function range_int(fname, lo, hi, apply)
	pktgen.range[fname] = function(...)
		nargs("range." .. fname, 3, ...)
		local pl, w, v = ...
		what(w, "range." .. fname)
		v = integer(v, "range." .. fname)
		if v < lo or v > hi then
			fail("range.%s: %d is outside %d-%d", fname, v, lo, hi)
		end
		for _, p in ipairs(portlist(pl, "range." .. fname)) do
			if apply then
				apply(p, w, v)
			end
		end
	end
end
range_int("src_port", 0, 65535)
range_int("dst_port", 0, 65535)
range_int("ttl", 0, 255)
range_int("vlan_id", 0, 4095)
range_int("tos", 0, 255)
range_int("cos", 0, 7)
range_int("pkt_size", 0, 9018, function(p, w, v)
	if w == "start" then
		if v ~= 0 and (v < 64 or v > 1518) then
			fail("range.pkt_size: %d is outside 64-1518 (frame size with FCS)", v)
		end
		p.rsize = v
	end
end)

local function range_mac(fname)
	pktgen.range[fname] = function(...)
		nargs("range." .. fname, 3, ...)
		local pl, w, m = ...
		what(w, "range." .. fname)
		mac(m, "range." .. fname)
		portlist(pl, "range." .. fname)
	end
end
range_mac("dst_mac")
range_mac("src_mac")

function pktgen.range.ip_proto(...)
	nargs("range.ip_proto", 2, ...)
	local pl, pr = ...
	proto(pr, "range.ip_proto")
	portlist(pl, "range.ip_proto")
end

-- ---- runner -------------------------------------------------------------------------

local script = arg and arg[1]
if script == nil then
	io.stderr:write("usage: lua5.4 mock_pktgen.lua SCRIPT.lua\n")
	os.exit(2)
end
local ok, err = pcall(dofile, script)
if not ok then
	io.stderr:write(script .. ": FAILED under the Pktgen mock: " .. tostring(err) .. "\n")
	os.exit(1)
end
if state.starts == 0 then
	io.stderr:write(script .. ": FAILED: never started traffic\n")
	os.exit(1)
end
if not state.quit and os.getenv("SATGW_NO_QUIT") ~= "1" then
	io.stderr:write(script .. ": FAILED: did not end with pktgen.quit()\n")
	os.exit(1)
end
local names = {}
for k, n in pairs(calls) do
	names[#names + 1] = k .. " x" .. n
end
table.sort(names)
print(string.format("%s: ok under the Pktgen mock (%.0f simulated s; %s)", script,
		    state.now_ms / 1000, table.concat(names, ", ")))
