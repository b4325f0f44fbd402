/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control/agent/tun.h: the host agents' one contact with the kernel's packet path.
 *
 * The host agents (the XCP sender agent, MH-LIFT) run on ordinary Linux hosts, not
 * on DPDK: they see the host's own IP packets through a TUN device (IFF_TUN |
 * IFF_NO_PI: each read() is one IP packet, no Ethernet header) and put packets back
 * on the wire through a raw IP socket or another TUN. The protocol logic stays in
 * lib/ (pure, time passed in); this file only opens and configures devices.
 */
#ifndef SGW_AGENT_TUN_H
#define SGW_AGENT_TUN_H

#include <stddef.h>

/*
 * Open (or attach to) the TUN device `name` (IFNAMSIZ at most, "" lets the kernel
 * pick "tunN"), non-blocking. On success returns the fd and writes the device's
 * name into `out_name` (at least 16 bytes); on failure returns -1 and writes a
 * one-line reason into `err` (`err_len` bytes).
 */
int
sgw_tun_open(const char *name, char *out_name, char *err, size_t err_len);

/*
 * Bring the device up with `mtu` (0 leaves it as it is). Returns 0, or -1 with a
 * reason in `err`.
 */
int
sgw_tun_up(const char *name, unsigned int mtu, char *err, size_t err_len);

#endif /* SGW_AGENT_TUN_H */
