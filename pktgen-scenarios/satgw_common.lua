-- SPDX-License-Identifier: BSD-3-Clause
-- Shared settings and helpers of the satgw Pktgen-DPDK scenarios (see README.md).
--
-- Pktgen port SATGW_TERR_PORT (default 0) is cabled to satgw's terrestrial
-- port, SATGW_SAT_PORT (default 1) to its satellite port. Downstream traffic
-- (servers -> terminals) leaves Pktgen on the terrestrial side and comes back
-- on the satellite side; upstream traffic the other way.
--
-- Addresses match pktgen-scenarios/gen_traffic.py and pktgen-scenarios/satgw-bench.yaml:
-- terminal T (1..64) owns 10.20.T.0/24; servers sit in 198.51.100.0/24.
--
-- Everything here uses Pktgen's Lua API as registered in app/lpktgenlib.c
-- (pktgen.set, set_ipaddr, set_mac, set_proto, range.*, set_range, pcap,
-- start, stop, clr, delay, portStats, isSending, quit).

local M = {}

local function env(name, default)
	local v = os.getenv(name)
	if v == nil or v == "" then
		return default
	end
	return v
end
M.env = env

M.terr = env("SATGW_TERR_PORT", "0")
M.sat = env("SATGW_SAT_PORT", "1")
-- Destination MACs of satgw's ports; unset = leave Pktgen's default and run
-- satgw's ports promiscuous (ports[].promiscuous: true in the policy).
M.terr_mac = env("SATGW_TERR_MAC", nil)
M.sat_mac = env("SATGW_SAT_MAC", nil)
M.trial_ms = tonumber(env("SATGW_TRIAL_MS", "10000"))
M.settle_ms = tonumber(env("SATGW_SETTLE_MS", "1000"))
M.rate = tonumber(env("SATGW_RATE", "100"))          -- percent of line rate
M.results = env("SATGW_RESULTS", nil)                -- append results to this file

-- IMIX as the traffic generator's hub-imix profile: frame sizes with FCS, 7:4:1.
M.imix = { { size = 64, weight = 7 }, { size = 594, weight = 4 }, { size = 1518, weight = 1 } }

-- 4096 flows: 4096 terminal hosts (every 4th address of 10.20.1.0 - 10.20.64.255,
-- all 64 terminal prefixes), 16 servers, 256 client ports. Each range wraps to
-- its minimum after its maximum and 16 and 256 divide 4096, so the 5-tuples
-- repeat every 4096 packets: a steady set of established flows, not a flood of
-- new ones (set SATGW_FLOW_CHURN=1 for that: the client ports then span 28232
-- values and nearly every packet is a new flow).
M.term_ip = { start = "10.20.1.2", min = "10.20.1.2", max = "10.20.64.254", inc = "0.0.0.4" }
M.srv_ip = { start = "198.51.100.1", min = "198.51.100.1", max = "198.51.100.16", inc = "0.0.0.1" }
M.client_port = { start = 32768, min = 32768, max = 33023, inc = 1 }
if env("SATGW_FLOW_CHURN", "0") == "1" then
	M.client_port.max = 60999
end

local KEYS = { "start", "min", "max", "inc" }

function M.log(fmt, ...)
	local line = string.format(fmt, ...)
	print(line)
	if M.results then
		local f = io.open(M.results, "a")
		if f then
			f:write(line, "\n")
			f:close()
		end
	end
end

-- Range mode on one Pktgen port: TCP or UDP flows between the servers and the
-- terminal hosts. dir "down": servers -> terminals, "up": terminals -> servers.
-- o = { dir = "down"|"up", proto = "tcp"|"udp", size = frame bytes with FCS,
--       srv_port = 443, tos = 0, dst_mac = nil }
function M.range_flows(port, o)
	local src, dst = M.srv_ip, M.term_ip
	local sport = { start = o.srv_port or 443, min = o.srv_port or 443,
			max = o.srv_port or 443, inc = 0 }
	local dport = M.client_port
	if o.dir == "up" then
		src, dst = M.term_ip, M.srv_ip
		sport, dport = M.client_port, sport
	end
	for _, k in ipairs(KEYS) do
		pktgen.range.src_ip(port, k, src[k])
		pktgen.range.dst_ip(port, k, dst[k])
		pktgen.range.src_port(port, k, sport[k])
		pktgen.range.dst_port(port, k, dport[k])
	end
	pktgen.set_proto(port, o.proto or "tcp")
	pktgen.range.ip_proto(port, o.proto or "tcp")
	M.range_size(port, o.size or 64)
	local tos = o.tos or 0
	pktgen.range.tos(port, "start", tos)
	pktgen.range.tos(port, "min", tos)
	pktgen.range.tos(port, "max", tos)
	pktgen.range.tos(port, "inc", 0)
	if o.dst_mac then
		pktgen.range.dst_mac(port, "start", o.dst_mac)
		pktgen.set_mac(port, "dst", o.dst_mac)
	end
	pktgen.set(port, "count", 0)      -- send until stopped
	pktgen.set_range(port, "on")
end

-- A fixed frame size (with FCS) in range mode.
function M.range_size(port, size)
	pktgen.range.pkt_size(port, "start", size)
	pktgen.range.pkt_size(port, "min", size)
	pktgen.range.pkt_size(port, "max", size)
	pktgen.range.pkt_size(port, "inc", 0)
end

-- Replay the pcap Pktgen loaded for this port (-s PORT:file.pcap) in a loop.
function M.pcap_mode(port)
	pktgen.set_range(port, "off")
	pktgen.set(port, "count", 0)
	pktgen.pcap(port, "on")
end

local function stats(port)
	return pktgen.portStats(port, "port")[tonumber(port)]
end

-- Run traffic for ms milliseconds at rate percent; returns packets sent on
-- tx_ports and received on rx_ports (comma lists) and the loss in percent.
-- fn(elapsed_ms), if given, is called every 100 ms while traffic runs (the
-- IMIX slices of range mode change frame sizes from it).
function M.trial(tx_ports, rx_ports, rate, ms, fn)
	pktgen.clr()
	pktgen.set(tx_ports, "rate", rate)
	pktgen.start(tx_ports)
	if fn then
		local t = 0
		while t < ms do
			fn(t)
			pktgen.delay(100)
			t = t + 100
		end
	else
		pktgen.delay(ms)
	end
	pktgen.stop(tx_ports)
	pktgen.delay(M.settle_ms)    -- let what satgw still buffers arrive
	local tx, rx = 0, 0
	for p in string.gmatch(tx_ports, "[^,]+") do
		tx = tx + stats(p).opackets
	end
	for p in string.gmatch(rx_ports, "[^,]+") do
		rx = rx + stats(p).ipackets
	end
	local loss = 0
	if tx > 0 then
		loss = (tx - rx) * 100.0 / tx
	end
	return tx, rx, loss
end

-- IMIX in range mode: Pktgen's range mode sends one frame size at a time, so
-- each 1 s round is cut into three slices whose lengths make the packet counts
-- 7:4:1 at a fixed percentage of line rate (time ~ packets x (size + 20 bytes
-- of preamble and inter-frame gap)). The pcap mode replays real IMIX instead.
function M.imix_slicer(ports)
	local total = 0
	for _, c in ipairs(M.imix) do
		total = total + c.weight * (c.size + 20)
	end
	local bounds, acc = {}, 0
	for i, c in ipairs(M.imix) do
		acc = acc + 1000 * c.weight * (c.size + 20) / total
		bounds[i] = acc
	end
	local cur = nil
	return function(t)
		local in_round = t % 1000
		local idx = #M.imix
		for i, b in ipairs(bounds) do
			if in_round < b then
				idx = i
				break
			end
		end
		if idx ~= cur then
			cur = idx
			pktgen.stop(ports)
			for p in string.gmatch(ports, "[^,]+") do
				M.range_size(p, M.imix[idx].size)
			end
			pktgen.start(ports)
		end
	end
end

function M.mpps(pkts, ms)
	return pkts / (ms / 1000.0) / 1e6
end

function M.finish()
	if env("SATGW_NO_QUIT", "0") ~= "1" then
		pktgen.quit()
	end
end

return M
