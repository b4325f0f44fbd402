-- SPDX-License-Identifier: BSD-3-Clause
-- tcp-64: small-packet stress. 64-byte TCP frames (ACK-sized) in both
-- directions at once through satgw: data-less segments from the servers to
-- the terminals on the terrestrial side and the terminals' ACKs back on the
-- satellite side, over the same 4096 flows (64 terminal prefixes), so every
-- flow-table entry is hit from both sides.
--
--   pktgen [EAL] -- -P -m "[1:2].0,[3:4].1" -f tcp-64.lua
--
-- SATGW_RATE (percent of line rate, default 100), SATGW_TRIAL_MS (10000).
-- SATGW_FLOW_CHURN=1 makes nearly every packet a new flow (flow set-up rate).

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local sg = require("satgw_common")

sg.range_flows(sg.terr, { dir = "down", proto = "tcp", size = 64, srv_port = 443,
			  dst_mac = sg.terr_mac })
sg.range_flows(sg.sat, { dir = "up", proto = "tcp", size = 64, srv_port = 443,
			 dst_mac = sg.sat_mac })

local both = sg.terr .. "," .. sg.sat
local tx, rx, loss = sg.trial(both, both, sg.rate, sg.trial_ms)
sg.log("tcp-64: rate %s%% each way, %d ms: sent %d, received %d, loss %.4f%%, %.3f Mpps through satgw",
       tostring(sg.rate), sg.trial_ms, tx, rx, loss, sg.mpps(rx, sg.trial_ms))
sg.finish()
