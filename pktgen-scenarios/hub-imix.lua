-- SPDX-License-Identifier: BSD-3-Clause
-- hub-imix: the traffic a satellite hub's terrestrial port sees, through satgw.
--
--   pktgen [EAL] -- -P -m "[1:2].0,[3:4].1" -s 0:hub-imix.pcap -f hub-imix.lua
--
-- SATGW_MODE=pcap (default): Pktgen replays hub-imix.pcap, written by
--   pktgen-scenarios/gen_traffic.py --profile hub-imix: IMIX 64/594/1518 in 7:4:1, TCP
--   with real options, DNS, RTP voice in DSCP 46, ESP and ESP-in-UDP over many
--   SPIs, a little ICMP, IPv6 and VLAN, over a few thousand flows.
-- SATGW_MODE=range: no pcap needed; Pktgen's range mode sends TCP over 4096
--   flows spread over all 64 terminal prefixes, at IMIX sizes in 7:4:1 packet
--   counts (time slices, see satgw_common.lua).
-- Traffic leaves Pktgen port SATGW_TERR_PORT into satgw's terrestrial port and
-- must come back on SATGW_SAT_PORT. Prints what was sent, received and lost.

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local sg = require("satgw_common")

local mode = sg.env("SATGW_MODE", "pcap")
local slicer = nil

if mode == "pcap" then
	sg.pcap_mode(sg.terr)
elseif mode == "range" then
	sg.range_flows(sg.terr, { dir = "down", proto = "tcp", size = 64, srv_port = 443,
				  dst_mac = sg.terr_mac })
	slicer = sg.imix_slicer(sg.terr)
else
	error("hub-imix.lua: SATGW_MODE must be pcap or range, not " .. mode)
end

local tx, rx, loss = sg.trial(sg.terr, sg.sat, sg.rate, sg.trial_ms, slicer)
sg.log("hub-imix (%s): rate %s%%, %d ms: sent %d, received %d, loss %.4f%%, %.3f Mpps through satgw",
       mode, tostring(sg.rate), sg.trial_ms, tx, rx, loss, sg.mpps(rx, sg.trial_ms))
sg.finish()
