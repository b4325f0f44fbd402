-- SPDX-License-Identifier: BSD-3-Clause
-- esp: IPsec traffic through satgw (the hub must carry it untouched; LIFT
-- reads its sequence numbers).
--
--   pktgen [EAL] -- -P -m "[1:2].0,[3:4].1" -s 0:esp.pcap -f esp.lua
--
-- SATGW_MODE=pcap (default): replays esp.pcap from pktgen-scenarios/gen_traffic.py
--   --profile esp: ESP (IP protocol 50) and ESP-in-UDP (port 4500) over many
--   SAs (SPIs), IMIX sizes, plus NAT-keepalives and IKE, which are not ESP.
-- SATGW_MODE=range: Pktgen cannot build protocol 50, so this sends
--   UDP-encapsulated ESP look-alikes: UDP from port 4500 of 16 VPN gateways to
--   4096 terminal hosts, IMIX sizes. The payload is Pktgen's "abc" fill
--   pattern, so satgw reads SPI 0x61626364 (one SA, non-zero: not IKE).

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local sg = require("satgw_common")

local mode = sg.env("SATGW_MODE", "pcap")
local slicer = nil

if mode == "pcap" then
	sg.pcap_mode(sg.terr)
elseif mode == "range" then
	sg.range_flows(sg.terr, { dir = "down", proto = "udp", size = 64, srv_port = 4500,
				  dst_mac = sg.terr_mac })
	pktgen.pattern(sg.terr, "abc")
	slicer = sg.imix_slicer(sg.terr)
else
	error("esp.lua: SATGW_MODE must be pcap or range, not " .. mode)
end

local tx, rx, loss = sg.trial(sg.terr, sg.sat, sg.rate, sg.trial_ms, slicer)
sg.log("esp (%s): rate %s%%, %d ms: sent %d, received %d, loss %.4f%%, %.3f Mpps through satgw",
       mode, tostring(sg.rate), sg.trial_ms, tx, rx, loss, sg.mpps(rx, sg.trial_ms))
sg.finish()
