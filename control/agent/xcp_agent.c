/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control/agent/xcp_agent.c: the XCP host agent (issue 9, "Senders"): CUBIC-XCP
 * on an unmodified Linux host. A thin program over lib/sgw_xcp_agent.[ch]: it
 * owns the devices, the sockets and the poll loop; the protocol is in lib/.
 *
 * Plumbing (docs/xcp.md, "The sender agent"):
 *
 *   host TCP --route PEER dev TUN--> TUN --read--> sgw_xcpa_out --> raw IP socket
 *        (IP_HDRINCL, SO_MARK M; `ip rule fwmark M` sends it by the real route)
 *   wire --IP proto XCP to this host--> raw socket bound to the XCP protocol
 *        --> sgw_xcpa_in --> write TUN --> host TCP (as if it came in on the TUN)
 *
 * The kernel gives a raw socket of the XCP protocol a copy of every XCP packet
 * for this host and, because a raw socket took it, sends no ICMP "protocol
 * unreachable". IPv4 raw sockets return the IP header; IPv6 ones do not, so
 * the IPv6 header is rebuilt from the ancillary data (addresses, hop limit,
 * traffic class; the flow label and extension headers are not kept).
 * Both roles have the same plumbing; the role decides what lib does.
 *
 *   xcp_agent --role sender|receiver --tun NAME [--proto N] [--max-flows N]
 *             [--mtu N] [--fwmark N] [--stats-json FILE] [--init-cwnd BYTES]
 *             [--cwnd-max BYTES] [--echo-feedback N] [--no-ipv6]
 *
 * Counters: JSON on SIGUSR1 and at exit (SIGINT / SIGTERM) to --stats-json
 * (written to FILE.tmp and renamed), else to stdout at exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sgw_xcp_agent.h"
#include "tun.h"

#define BUF_LEN (65536 + 128)
#define ROOM 64             /* bytes past a packet for the header the agent adds */
#define MAX_FLOWS_JSON 64

static volatile sig_atomic_t g_stop;   /* signal handlers only set flags */
static volatile sig_atomic_t g_dump;

enum io_ctr {
	IO_TUN_RX, IO_TUN_TX, IO_TUN_TX_ERR, IO_WIRE_RX, IO_WIRE_TX, IO_WIRE_TX_ERR,
	IO_WIRE_RX_ERR, IO_IN_DROPPED, IO_NO_SOCKET, IO__COUNT
};

static const char *const io_names[IO__COUNT] = {
	"tun_rx", "tun_tx", "tun_tx_err", "wire_rx", "wire_tx", "wire_tx_err",
	"wire_rx_err", "in_dropped", "no_socket",
};

struct agent {
	struct sgw_xcpa xa;
	const char *stats_path;
	char tun_name[32];
	int tun, tx4, tx6, rx4, rx6;
	uint64_t io[IO__COUNT];
	uint8_t buf[BUF_LEN];
};

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		g_dump = 1;
	else
		g_stop = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: xcp_agent --role sender|receiver --tun NAME [options]\n"
		"  --proto N          IP protocol of the XCP header (254)\n"
		"  --max-flows N      flow table size (4096; rounded down to a power of two)\n"
		"  --mtu N            MTU of the TUN (1480: the real MTU less the 20 bytes\n"
		"                     of the XCP header)\n"
		"  --fwmark N         mark on the agent's raw sockets (0x5843), for `ip rule`\n"
		"  --stats-json FILE  counters as JSON on SIGUSR1 and at exit\n"
		"  --init-cwnd BYTES  sender: cwnd_xcp of a new flow (10 MSS)\n"
		"  --cwnd-max BYTES   sender: most cwnd_xcp asks for and holds (1 GiB)\n"
		"  --echo-feedback N  receiver, LAB KNOB: return N as reverse feedback on every\n"
		"                     ACK instead of the feedback the path left (tests only)\n"
		"  --no-ipv6          IPv4 only\n");
}

/*
 * A raw socket's receive queue is all the buffering between the wire and the
 * agent: when it is full the kernel drops the packet, counts it in
 * Ip(6)InUnknownProtos and answers "protocol unreachable" (seen in the e2e
 * test with the default 208 KiB). 8 MiB (SO_RCVBUFFORCE: root) takes a
 * window's burst at the rates the agent is meant for.
 */
static void
big_rcvbuf(int fd)
{
	int sz = 8 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

static int
open_sockets(struct agent *ag, uint8_t proto, uint32_t mark, int ipv6)
{
	int one = 1;

	ag->tx4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	ag->rx4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
	if (ag->tx4 < 0 || ag->rx4 < 0) {
		fprintf(stderr, "xcp_agent: raw IPv4 socket: %s\n", strerror(errno));
		return -1;
	}
	big_rcvbuf(ag->rx4);
	if (setsockopt(ag->tx4, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0) {
		fprintf(stderr, "xcp_agent: SO_MARK: %s\n", strerror(errno));
		return -1;
	}
	ag->tx6 = ag->rx6 = -1;
	if (!ipv6)
		return 0;
	ag->tx6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	ag->rx6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
	if (ag->tx6 < 0 || ag->rx6 < 0) {
		/* A host with IPv6 off: carry on with IPv4. */
		fprintf(stderr, "xcp_agent: no IPv6 (%s): IPv4 only\n", strerror(errno));
		if (ag->tx6 >= 0)
			close(ag->tx6);
		if (ag->rx6 >= 0)
			close(ag->rx6);
		ag->tx6 = ag->rx6 = -1;
		return 0;
	}
	setsockopt(ag->tx6, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
	big_rcvbuf(ag->rx6);
	setsockopt(ag->rx6, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
	setsockopt(ag->rx6, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	setsockopt(ag->rx6, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
	return 0;
}

/* Put a packet on the wire by the route its mark selects. */
static void
wire_send(struct agent *ag, const uint8_t *p, size_t len)
{
	ssize_t n = -1;

	if (len >= 20 && (p[0] >> 4) == 4) {
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		memcpy(&sin.sin_addr, p + 16, 4);
		n = sendto(ag->tx4, p, len, 0, (struct sockaddr *)&sin, sizeof(sin));
	} else if (len >= 40 && (p[0] >> 4) == 6 && ag->tx6 >= 0) {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		memcpy(&sin6.sin6_addr, p + 24, 16);
		n = sendto(ag->tx6, p, len, 0, (struct sockaddr *)&sin6, sizeof(sin6));
	} else {
		ag->io[IO_NO_SOCKET]++;
		return;
	}
	if (n == (ssize_t)len)
		ag->io[IO_WIRE_TX]++;
	else
		ag->io[IO_WIRE_TX_ERR]++;
}

static void
from_tun(struct agent *ag)
{
	ssize_t n;
	int i;

	/* A bounded batch per poll round, so the wire side is not starved. */
	for (i = 0; i < 64; i++) {
		size_t len;

		n = read(ag->tun, ag->buf, BUF_LEN - ROOM);
		if (n <= 0)
			return;
		ag->io[IO_TUN_RX]++;
		len = (size_t)n;
		(void)sgw_xcpa_out(&ag->xa, ag->buf, &len, BUF_LEN, now_ns());
		/* PASS and SEND both go out: the host's packets are never dropped. */
		wire_send(ag, ag->buf, len);
	}
}

static void
to_tun(struct agent *ag, size_t len)
{
	enum sgw_xcpa_verdict v = sgw_xcpa_in(&ag->xa, ag->buf, &len, now_ns());

	if (v == SGW_XCPA_DROP) {
		ag->io[IO_IN_DROPPED]++;
		return;
	}
	if (write(ag->tun, ag->buf, len) == (ssize_t)len)
		ag->io[IO_TUN_TX]++;
	else
		ag->io[IO_TUN_TX_ERR]++;
}

static void
from_wire4(struct agent *ag)
{
	int i;

	for (i = 0; i < 64; i++) {
		ssize_t n = recv(ag->rx4, ag->buf, BUF_LEN - ROOM, 0);

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				ag->io[IO_WIRE_RX_ERR]++;
			return;
		}
		ag->io[IO_WIRE_RX]++;
		to_tun(ag, (size_t)n);
	}
}

/* IPv6 raw sockets hand over the payload only: rebuild the fixed header. */
static void
from_wire6(struct agent *ag, uint8_t proto)
{
	int i;

	for (i = 0; i < 64; i++) {
		struct sockaddr_in6 from;
		union {
			char b[256];
			struct cmsghdr align;
		} cb;
		struct iovec iov = { ag->buf + 40, BUF_LEN - ROOM - 40 };
		struct msghdr mh;
		struct cmsghdr *cm;
		uint8_t hop = 64, tc = 0, dst[16] = { 0 };
		int have_dst = 0;
		ssize_t n;

		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cb.b;
		mh.msg_controllen = sizeof(cb.b);
		n = recvmsg(ag->rx6, &mh, 0);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				ag->io[IO_WIRE_RX_ERR]++;
			return;
		}
		ag->io[IO_WIRE_RX]++;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != IPPROTO_IPV6)
				continue;
			if (cm->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi;

				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				memcpy(dst, &pi.ipi6_addr, 16);
				have_dst = 1;
			} else if (cm->cmsg_type == IPV6_HOPLIMIT) {
				int v;

				memcpy(&v, CMSG_DATA(cm), sizeof(v));
				hop = (uint8_t)v;
			} else if (cm->cmsg_type == IPV6_TCLASS) {
				int v;

				memcpy(&v, CMSG_DATA(cm), sizeof(v));
				tc = (uint8_t)v;
			}
		}
		if (!have_dst || n > 65535) {
			ag->io[IO_WIRE_RX_ERR]++;
			continue;
		}
		ag->buf[0] = (uint8_t)(0x60 | tc >> 4);
		ag->buf[1] = (uint8_t)(tc << 4);
		ag->buf[2] = 0;
		ag->buf[3] = 0;
		ag->buf[4] = (uint8_t)(n >> 8);
		ag->buf[5] = (uint8_t)n;
		ag->buf[6] = proto;
		ag->buf[7] = hop;
		memcpy(ag->buf + 8, &from.sin6_addr, 16);
		memcpy(ag->buf + 24, dst, 16);
		to_tun(ag, (size_t)n + 40);
	}
}

static void
addr_str(const uint8_t *a, uint8_t family, char *out, size_t len)
{
	inet_ntop(family == 4 ? AF_INET : AF_INET6, a, out, (socklen_t)len);
}

static void
write_json(struct agent *ag, FILE *f)
{
	const struct sgw_xcpa *a = &ag->xa;
	uint64_t now = now_ns();
	unsigned i, shown = 0, live = 0;

	fprintf(f, "{\n  \"role\": \"%s\",\n  \"tun\": \"%s\",\n  \"proto\": %u,\n",
		a->conf.role == SGW_XCPA_SENDER ? "sender" : "receiver", ag->tun_name,
		a->conf.xcp_proto);
	fprintf(f, "  \"flow_slots\": %u,\n  \"counters\": {", a->n_flows);
	for (i = 0; i < SGW_XCPA_C__COUNT; i++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, i ? "," : "",
			sgw_xcpa_ctr_name((enum sgw_xcpa_ctr)i), a->ctr[i]);
	fprintf(f, "\n  },\n  \"malformed_out\": {");
	for (i = 1; i < SGW_XCPA_B__COUNT; i++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, i > 1 ? "," : "",
			sgw_xcpa_bad_name((enum sgw_xcpa_bad)i), a->bad_out[i]);
	fprintf(f, "\n  },\n  \"malformed_in\": {");
	for (i = 1; i < SGW_XCPA_B__COUNT; i++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, i > 1 ? "," : "",
			sgw_xcpa_bad_name((enum sgw_xcpa_bad)i), a->bad_in[i]);
	fprintf(f, "\n  },\n  \"xcp_refused\": {");
	for (i = 1; i < SGW_XCP_E__COUNT; i++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, i > 1 ? "," : "",
			sgw_xcp_err_name((enum sgw_xcp_err)i), a->xcp_err[i]);
	fprintf(f, "\n  },\n  \"io\": {");
	for (i = 0; i < IO__COUNT; i++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, i ? "," : "", io_names[i], ag->io[i]);
	fprintf(f, "\n  },\n  \"flows\": [");
	for (i = 0; i < a->n_flows; i++) {
		const struct sgw_xcpa_flow *fl = sgw_xcpa_slot(a, i, now);
		char l[64], r[64];

		if (fl == NULL)
			continue;
		live++;
		if (shown >= MAX_FLOWS_JSON)
			continue;
		addr_str(fl->laddr, fl->family, l, sizeof(l));
		addr_str(fl->raddr, fl->family, r, sizeof(r));
		fprintf(f,
			"%s\n    {\"local\": \"%s\", \"lport\": %u, \"remote\": \"%s\", "
			"\"rport\": %u, \"cwnd_xcp\": %u, \"srtt_us\": %u, \"mss\": %u, "
			"\"peer_wnd\": %u, \"l_ws\": %d, \"r_ws\": %d, \"fb_last\": %d, "
			"\"state\": %u}",
			shown ? "," : "", l, fl->lport, r, fl->rport, fl->cwnd_xcp,
			fl->rtt.srtt_us, fl->mss, fl->peer_wnd,
			fl->l_ws == 0xff ? -1 : fl->l_ws, fl->r_ws == 0xff ? -1 : fl->r_ws,
			fl->fb_last, fl->state);
		shown++;
	}
	fprintf(f, "\n  ],\n  \"flows_live\": %u\n}\n", live);
}

static void
dump(struct agent *ag)
{
	char tmp[4096];
	FILE *f;

	if (ag->stats_path == NULL) {
		write_json(ag, stdout);
		fflush(stdout);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", ag->stats_path);
	f = fopen(tmp, "w");
	if (f == NULL) {
		fprintf(stderr, "xcp_agent: %s: %s\n", tmp, strerror(errno));
		return;
	}
	write_json(ag, f);
	if (fclose(f) != 0 || rename(tmp, ag->stats_path) != 0)
		fprintf(stderr, "xcp_agent: %s: %s\n", ag->stats_path, strerror(errno));
}

static int
parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "tun", required_argument, NULL, 't' },
		{ "proto", required_argument, NULL, 'p' },
		{ "max-flows", required_argument, NULL, 'n' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "fwmark", required_argument, NULL, 'k' },
		{ "stats-json", required_argument, NULL, 's' },
		{ "init-cwnd", required_argument, NULL, 'i' },
		{ "cwnd-max", required_argument, NULL, 'c' },
		{ "echo-feedback", required_argument, NULL, 'e' },
		{ "no-ipv6", no_argument, NULL, '6' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sgw_xcpa_conf conf;
	struct sigaction sa;
	struct agent *ag;
	const char *tun = NULL, *stats = NULL;
	uint32_t proto = 254, max_flows = 4096, mtu = 1480, mark = 0x5843;
	int role = -1, ipv6 = 1, c;
	char err[256];
	void *mem;
	size_t mem_len;

	sgw_xcpa_conf_default(&conf);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (strcmp(optarg, "sender") == 0)
				role = SGW_XCPA_SENDER;
			else if (strcmp(optarg, "receiver") == 0)
				role = SGW_XCPA_RECEIVER;
			break;
		case 't':
			tun = optarg;
			break;
		case 'p':
			if (parse_u32(optarg, &proto) < 0 || proto == 0 || proto > 255)
				goto bad;
			break;
		case 'n':
			if (parse_u32(optarg, &max_flows) < 0 || max_flows < 8)
				goto bad;
			break;
		case 'm':
			if (parse_u32(optarg, &mtu) < 0)
				goto bad;
			break;
		case 'k':
			if (parse_u32(optarg, &mark) < 0)
				goto bad;
			break;
		case 's':
			stats = optarg;
			break;
		case 'i':
			if (parse_u32(optarg, &conf.init_cwnd) < 0)
				goto bad;
			break;
		case 'c':
			if (parse_u32(optarg, &conf.cwnd_max) < 0)
				goto bad;
			break;
		case 'e': {
			char *end;
			long x;

			errno = 0;
			x = strtol(optarg, &end, 0);
			if (errno != 0 || *end != '\0' || x < INT32_MIN || x > INT32_MAX)
				goto bad;
			conf.echo_fixed = 1;
			conf.echo_value = (int32_t)x;
			break;
		}
		case '6':
			ipv6 = 0;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (role < 0 || tun == NULL || optind != argc)
		goto bad;
	conf.role = (uint8_t)role;
	conf.xcp_proto = (uint8_t)proto;

	ag = calloc(1, sizeof(*ag));
	mem_len = sgw_xcpa_mem_size(max_flows);
	mem = calloc(1, mem_len);
	if (ag == NULL || mem == NULL) {
		fprintf(stderr, "xcp_agent: out of memory\n");
		return 1;
	}
	ag->stats_path = stats;
	if (sgw_xcpa_init(&ag->xa, &conf, mem, mem_len) < 0) {
		fprintf(stderr, "xcp_agent: bad configuration (cwnd-max below the MSS?)\n");
		return 1;
	}
	ag->tun = sgw_tun_open(tun, ag->tun_name, err, sizeof(err));
	if (ag->tun < 0 || sgw_tun_up(ag->tun_name, mtu, err, sizeof(err)) < 0) {
		fprintf(stderr, "xcp_agent: %s\n", err);
		return 1;
	}
	if (open_sockets(ag, (uint8_t)proto, mark, ipv6) < 0)
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	fprintf(stderr, "xcp_agent: ready: role %s, tun %s, proto %u, %u flow slots, "
		"fwmark 0x%x%s\n", role == SGW_XCPA_SENDER ? "sender" : "receiver",
		ag->tun_name, proto, ag->xa.n_flows, mark, ag->tx6 >= 0 ? "" : ", IPv4 only");
	while (!g_stop) {
		struct pollfd pf[3] = {
			{ ag->tun, POLLIN, 0 },
			{ ag->rx4, POLLIN, 0 },
			{ ag->rx6, POLLIN, 0 },
		};
		int r = poll(pf, ag->rx6 >= 0 ? 3 : 2, 500);

		if (g_dump) {
			g_dump = 0;
			dump(ag);
		}
		if (r <= 0)
			continue;
		if (pf[0].revents & POLLIN)
			from_tun(ag);
		if (pf[1].revents & POLLIN)
			from_wire4(ag);
		if (ag->rx6 >= 0 && (pf[2].revents & POLLIN))
			from_wire6(ag, (uint8_t)proto);
	}
	dump(ag);
	return 0;
bad:
	usage(stderr);
	return 2;
}
