-- SPDX-License-Identifier: BSD-3-Clause
-- rfc2544: RFC 2544-style throughput search through satgw: for each frame
-- size, a binary search on the offered rate (percent of line rate) for the
-- highest rate whose loss stays within SATGW_LOSS_PCT (default 0: RFC 2544's
-- zero loss), reading Pktgen's port counters after every trial. Modelled on
-- Pktgen's scripts/rfc2544_tput_test.lua.
--
--   pktgen [EAL] -- -P -m "[1:2].0,[3:4].1" [-s 0:hub-imix.pcap] -f rfc2544.lua
--
-- SATGW_SIZES   comma list of frame sizes with FCS, and "imix" (default
--               "64,594,1518,imix"); imix replays the pcap when SATGW_PCAP=1
--               (load hub-imix.pcap with -s), else range-mode IMIX slices.
-- SATGW_STEPS   search trials per size (default 8: 100/2^8 = 0.4% resolution)
-- SATGW_TRIAL_MS trial length (default 10000); SATGW_CONFIRM_MS (default 0 =
--               no confirmation run; RFC 2544 asks for 60000 at the result).
-- SATGW_RESULTS file the results are appended to (default
--               satgw_rfc2544_results.txt in the working directory).

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local sg = require("satgw_common")

sg.results = sg.results or "satgw_rfc2544_results.txt"
local thresh = tonumber(sg.env("SATGW_LOSS_PCT", "0"))
local steps = tonumber(sg.env("SATGW_STEPS", "8"))
local confirm_ms = tonumber(sg.env("SATGW_CONFIRM_MS", "0"))
local use_pcap = sg.env("SATGW_PCAP", "0") == "1"
local sizes = sg.env("SATGW_SIZES", "64,594,1518,imix")

-- Configure the generator for one size; returns the slicer for imix in range mode.
local function setup(size)
	if size == "imix" and use_pcap then
		sg.pcap_mode(sg.terr)
		return nil
	end
	pktgen.pcap(sg.terr, "off")
	sg.range_flows(sg.terr, { dir = "down", proto = "tcp", srv_port = 443,
				  size = size == "imix" and 64 or tonumber(size),
				  dst_mac = sg.terr_mac })
	if size == "imix" then
		return sg.imix_slicer(sg.terr)
	end
	return nil
end

local function search(size)
	local lo, hi, rate = 0, 100, 100
	local best = nil
	for step = 1, steps do
		local slicer = setup(size)
		local tx, rx, loss = sg.trial(sg.terr, sg.sat, rate, sg.trial_ms, slicer)
		local ok = tx > 0 and loss <= thresh
		sg.log("  size %s trial %d: rate %.2f%% sent %d received %d loss %.4f%% -> %s",
		       size, step, rate, tx, rx, loss, ok and "pass" or "fail")
		if ok then
			lo = rate
			best = { rate = rate, tx = tx, rx = rx, loss = loss }
			if rate >= 100 then
				break           -- line rate without loss: nothing to search
			end
		else
			hi = rate
		end
		rate = lo + (hi - lo) / 2
	end
	if best == nil then
		sg.log("size %s: no rate passed (loss threshold %.4f%%)", size, thresh)
		return
	end
	if confirm_ms > 0 then
		local slicer = setup(size)
		local tx, rx, loss = sg.trial(sg.terr, sg.sat, best.rate, confirm_ms, slicer)
		sg.log("  size %s confirmation: rate %.2f%% %d ms loss %.4f%% -> %s", size, best.rate,
		       confirm_ms, loss, (tx > 0 and loss <= thresh) and "confirmed" or "NOT confirmed")
	end
	sg.log("size %s: throughput %.2f%% of line rate, %.3f Mpps received (loss %.4f%%)",
	       size, best.rate, sg.mpps(best.rx, sg.trial_ms), best.loss)
end

sg.log("satgw RFC 2544 throughput, loss threshold %.4f%%, %d trials of %d ms per size",
       thresh, steps, sg.trial_ms)
for size in string.gmatch(sizes, "[^,]+") do
	search(size)
end
sg.finish()
