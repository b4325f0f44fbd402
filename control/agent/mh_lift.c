/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control/agent/mh_lift.c: the MH-LIFT agent, the mobile host's program (issue 8).
 *
 * It does the mobile host's ESP and, with `--lift on`, MH-LIFT: every decision
 * (classification, FrACK clone, D/F/S, IPsec ACK Number, Setup / Teardown and
 * their retransmission, self-protection) is lib/sgw_lift_mh's; this program
 * only moves bytes: it inserts the 8-byte LIFT headers the machine built
 * between the IP header and ESP, sends the machine's control packets when
 * its deadline comes, and feeds it the hub's acknowledgements and every
 * decrypted downlink packet with its ESP sequence number. `--lift off` (the
 * default) is plain ESP.
 *
 *   host TCP/IP --> TUN --> sgw_lift_mh_tx (+ FrACK clone) --> sgw_esp_encrypt
 *       --> LIFT header inserted --> raw IP socket (SO_MARK) --> peer
 *   peer --> raw socket, protocol 50 --> sgw_esp_decrypt
 *       --> sgw_lift_mh_rx (ESP seq, cleartext) --> TUN --> host
 *   hub --> raw socket, protocol --lift-proto (Setup-/Teardown-ACK)
 *       --> sgw_lift_mh_ctrl_rx
 *
 * Why a raw socket for receiving (and not AF_PACKET): the kernel hands a raw
 * socket reassembled packets, for both IPv4 and IPv6, whatever the link. The
 * host's kernel holds no xfrm state for these SAs, so its own ESP path (if
 * built in) drops the packet as XfrmInNoStates after the raw socket has its
 * copy; if the kernel has no ESP at all, a raw socket bound to protocol 50
 * keeps it from answering "protocol unreachable". Either way nothing but the
 * agent acts on the packet. The agent's own ESP leaves with SO_MARK (--mark),
 * so a policy rule can route it out of the real interface while the host's
 * cleartext toward the peer is routed into the TUN (docs/lift.md).
 *
 * IPv6: a raw socket delivers the payload from the ESP header on; the agent
 * rebuilds a 40-byte header from the addresses, hop limit and traffic class
 * (IPV6_RECVPKTINFO, _RECVHOPLIMIT, _RECVTCLASS); the flow label is not kept
 * and extension headers are not supported (sgw_esp.h).
 *
 * Keys: lines in the very syntax of `ip xfrm state add` (see usage()), so one
 * file configures both ends: the fixed host feeds the lines to ip, the agent
 * reads them and takes the SA whose src is --local as outbound and the SA
 * whose dst is --local as inbound. One peer, one SA pair.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sgw_esp.h"
#include "sgw_lift.h"
#include "sgw_lift_mh.h"
#include "tun.h"

#define MH_BUF 65600u               /* one IP packet plus ESP's growth */
#define MH_HEAD 64u                 /* headroom kept in front of a packet */
#define MH_MAX_TOKENS 32

enum mh_lift_mode {
	MH_LIFT_OFF = 0,                /* ESP only */
	MH_LIFT_ON,                     /* MH-LIFT (lib/sgw_lift_mh) */
};

#define MH_CTRL_BATCH 16u
#define MH_LIFT_PROTO_DEFAULT 253u

struct mh_sa_line {
	int family;                     /* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];
	struct sgw_esp_sa_conf conf;
};

struct mh_counters {
	uint64_t tun_rx, tun_drop_other, esp_tx, esp_tx_err;
	uint64_t raw_rx, raw_drop_other, raw_err, tun_tx, tun_tx_err, dummy;
	uint64_t raw_ovfl;      /* ESP the kernel dropped at our full socket (SO_RXQ_OVFL) */
	/* LIFT (what the agent sent and received; the machine's own counters
	 * are in the JSON's "mh" object) */
	uint64_t lift_plain, lift_ack, lift_pair, lift_frack_fail, lift_hdr_err;
	uint64_t lift_ctrl_tx, lift_ctrl_tx_err, lift_ctrl_rx, lift_ctrl_drop_other;
	uint64_t lift_ctrl_err;
};

struct mh {
	int family;
	uint8_t local[16], peer[16];
	size_t alen;                    /* 4 or 16 */
	struct sgw_esp_engine *eng;
	struct sgw_esp_sa *out, *in;
	struct sgw_esp_sa_conf out_conf, in_conf;
	int have_out, have_in;
	enum mh_lift_mode lift;
	uint8_t lift_proto;             /* IP protocol of LIFT headers (--lift-proto) */
	struct sgw_lift_mh *lm;         /* the MH-LIFT machine (--lift on) */
	void *lm_mem;
	int tun, rx, tx, lrx;           /* lrx: raw socket for lift_proto */
	struct mh_counters c;
	const char *stats_path;
	FILE *dump_rx, *dump_tx;
	unsigned int dump_max, dumped_rx, dumped_tx;
	uint8_t buf[MH_BUF];
	uint8_t fbuf[MH_BUF];           /* the FrACK clone, encrypted in place */
};

static uint64_t
mh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile sig_atomic_t mh_stop, mh_dump;

static void
mh_on_signal(int sig)
{
	if (sig == SIGUSR1)
		mh_dump = 1;
	else
		mh_stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
"usage: mh_lift --tun NAME --local ADDR --peer ADDR (--keys FILE | --sa LINE --sa LINE)\n"
"               [--mtu N] [--mark N] [--lift off|on] [--lift-proto N]\n"
"               [--stats-json FILE]\n"
"               [--dump-rx FILE] [--dump-tx FILE] [--dump-max N]\n"
"       mh_lift --check-reencrypt HEXFILE --local ADDR --peer ADDR --keys FILE\n"
"\n"
"SA lines are the arguments of `ip xfrm state add`, one SA a line ('#' comments):\n"
"  src 10.61.0.2 dst 10.61.0.1 proto esp spi 0x1001 mode transport replay-window 64 \\\n"
"      aead 'rfc4106(gcm(aes))' 0x<32 or 64 hex key><8 hex salt> 128\n"
"The SA whose src is --local is outbound, the one whose dst is --local inbound.\n"
"reqid, flag and sel are accepted and ignored; proto must be esp, mode transport,\n"
"the ICV 128 bits, no ESN. replay-window: required, 32..1024 (ip xfrm's\n"
"default, 0, would leave the fixed host without replay protection).\n"
"--mark: SO_MARK of the agent's ESP socket, for the policy rule that keeps ESP\n"
"out of the TUN. --check-reencrypt: for each hex line of HEXFILE (an ESP packet\n"
"from the peer), decrypt it, encrypt the cleartext again with the same sequence\n"
"number and IV, and say whether the bytes are identical (JSON, exit 0 if all).\n"
"--lift on: MH-LIFT (docs/lift.md): FrACK + TCP ACK pairs behind LIFT headers\n"
"(IP protocol --lift-proto, 253 by default), Setup / Teardown to the hub.\n"
"Counters: JSON to --stats-json (or stdout) at exit and on SIGUSR1.\n");
}

/* ------------------------------------------------------------- SA lines */

static int
mh_parse_addr(const char *s, int *family, uint8_t *a)
{
	if (inet_pton(AF_INET, s, a) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

/* Strip one pair of surrounding quotes in place. */
static char *
mh_unquote(char *t)
{
	size_t n = strlen(t);

	if (n >= 2 && (t[0] == '\'' || t[0] == '"') && t[n - 1] == t[0]) {
		t[n - 1] = '\0';
		return t + 1;
	}
	return t;
}

/* One `ip xfrm state add` argument line into sa; 0, or -1 with err. */
static int
mh_parse_sa(char *line, struct mh_sa_line *sa, char *err, size_t errlen)
{
	char *tok[MH_MAX_TOKENS], *save = NULL, *t, *end;
	int n = 0, i, fs = 0, fd = 0, have_spi = 0, have_key = 0, have_win = 0;
	unsigned long v;

	memset(sa, 0, sizeof(*sa));
	for (t = strtok_r(line, " \t\r\n", &save); t != NULL; t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == MH_MAX_TOKENS) {
			snprintf(err, errlen, "too many words");
			return -1;
		}
		tok[n++] = mh_unquote(t);
	}
	for (i = 0; i < n; i++) {
		const char *k = tok[i];
		const char *val = i + 1 < n ? tok[i + 1] : NULL;

		if (strcmp(k, "aead") == 0) {
			if (i + 3 >= n) {
				snprintf(err, errlen, "aead needs NAME KEY ICV-BITS");
				return -1;
			}
			if (strcmp(tok[i + 1], "rfc4106(gcm(aes))") != 0) {
				snprintf(err, errlen, "aead %s: only rfc4106(gcm(aes))", tok[i + 1]);
				return -1;
			}
			if (sgw_esp_parse_key(tok[i + 2], &sa->conf) != 0) {
				snprintf(err, errlen, "aead key: 0x + 40 or 72 hex digits (key + salt)");
				return -1;
			}
			if (strcmp(tok[i + 3], "128") != 0) {
				snprintf(err, errlen, "aead ICV %s: only 128", tok[i + 3]);
				return -1;
			}
			have_key = 1;
			i += 3;
			continue;
		}
		if (val == NULL) {
			snprintf(err, errlen, "%s: value missing", k);
			return -1;
		}
		if (strcmp(k, "src") == 0) {
			if (mh_parse_addr(val, &fs, sa->src) != 0) {
				snprintf(err, errlen, "src %s: not an address", val);
				return -1;
			}
		} else if (strcmp(k, "dst") == 0) {
			if (mh_parse_addr(val, &fd, sa->dst) != 0) {
				snprintf(err, errlen, "dst %s: not an address", val);
				return -1;
			}
		} else if (strcmp(k, "proto") == 0) {
			if (strcmp(val, "esp") != 0) {
				snprintf(err, errlen, "proto %s: only esp", val);
				return -1;
			}
		} else if (strcmp(k, "mode") == 0) {
			if (strcmp(val, "transport") != 0) {
				snprintf(err, errlen, "mode %s: only transport", val);
				return -1;
			}
		} else if (strcmp(k, "spi") == 0 || strcmp(k, "replay-window") == 0) {
			errno = 0;
			v = strtoul(val, &end, 0);
			if (errno != 0 || *end != '\0' || v > UINT32_MAX) {
				snprintf(err, errlen, "%s %s: not a number", k, val);
				return -1;
			}
			if (k[0] == 's') {
				sa->conf.spi = (uint32_t)v;
				have_spi = 1;
			} else {
				sa->conf.replay_window = (uint32_t)v;
				have_win = 1;
			}
		} else if (strcmp(k, "reqid") == 0 || strcmp(k, "flag") == 0) {
			/* the kernel's bookkeeping; nothing for the agent */
		} else {
			snprintf(err, errlen, "%s: not understood (ESN, enc/auth, encap: not offered)",
				 k);
			return -1;
		}
		i++;
	}
	if (fs == 0 || fd == 0 || fs != fd || !have_spi || !have_key) {
		snprintf(err, errlen, "needs src, dst (one family), spi and aead");
		return -1;
	}
	if (sa->conf.spi == 0) {
		snprintf(err, errlen, "spi 0 is reserved");
		return -1;
	}
	/* Required: without it (or with 0) Linux does no replay check at all,
	 * and the same line configures the fixed host's kernel. */
	if (!have_win || sa->conf.replay_window < SGW_ESP_WINDOW_MIN ||
	    sa->conf.replay_window > SGW_ESP_WINDOW_MAX) {
		snprintf(err, errlen, "replay-window 32..1024 required (absent or 0, ip xfrm "
			 "turns replay protection off)");
		return -1;
	}
	sa->family = fs;
	return 0;
}

/* Take a line as the outbound or inbound SA of m (by its addresses). */
static int
mh_take_sa(struct mh *m, char *line, const char *where)
{
	struct mh_sa_line sa;
	char err[160];

	if (mh_parse_sa(line, &sa, err, sizeof(err)) != 0) {
		fprintf(stderr, "mh_lift: %s: %s\n", where, err);
		return -1;
	}
	if (sa.family != m->family) {
		fprintf(stderr, "mh_lift: %s: SA of another address family, ignored\n", where);
		return 0;
	}
	if (memcmp(sa.src, m->local, m->alen) == 0 && memcmp(sa.dst, m->peer, m->alen) == 0) {
		m->out_conf = sa.conf;
		m->have_out++;
	} else if (memcmp(sa.src, m->peer, m->alen) == 0 &&
		   memcmp(sa.dst, m->local, m->alen) == 0) {
		m->in_conf = sa.conf;
		m->have_in++;
	} else {
		fprintf(stderr, "mh_lift: %s: SA between other hosts, ignored\n", where);
	}
	return 0;
}

static int
mh_load_keys(struct mh *m, const char *path)
{
	char line[1024], where[300];
	struct stat st;
	unsigned int ln = 0;
	FILE *f;
	char *h;

	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "mh_lift: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* Like ssh: a key file others may read is refused. */
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0077) != 0) {
		fprintf(stderr, "mh_lift: %s: mode %03o: group/others may access the keys "
			"(chmod 600)\n", path, (unsigned int)(st.st_mode & 0777));
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		ln++;
		h = strchr(line, '#');
		if (h != NULL)
			*h = '\0';
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, ln);
		if (mh_take_sa(m, line, where) != 0) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------- counters */

static void
mh_json_sa(FILE *f, const char *name, const struct sgw_esp_sa *sa, int out)
{
	struct sgw_esp_stats st;
	int r;

	sgw_esp_get_stats(sa, &st);
	fprintf(f, "\"%s\":{\"spi\":%" PRIu32 ",", name, sgw_esp_spi(sa));
	if (out)
		fprintf(f, "\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seq_next\":%" PRIu32
			",\"refused\":{", st.encrypted, st.enc_bytes, sgw_esp_tx_seq_next(sa));
	else
		fprintf(f, "\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"rx_top\":%" PRIu32
			",\"dropped\":{", st.decrypted, st.dec_bytes, sgw_esp_rx_top(sa));
	for (r = 1; r < SGW_ESP__NUM; r++)
		fprintf(f, "%s\"%s\":%" PRIu64, r > 1 ? "," : "", sgw_esp_reason_name(r),
			out ? st.tx_refused[r] : st.rx_dropped[r]);
	fprintf(f, "}}");
}

/* The agent's LIFT counters and the machine's, by name (lib/sgw_lift_mh.h). */
static void
mh_json_lift(FILE *f, const struct mh *m)
{
	struct sgw_lift_mh_stats st;
	int i;

	fprintf(f, ",\"lift_proto\":%u,\"lift_tx\":{\"plain\":%" PRIu64 ",\"ack\":%" PRIu64
		",\"pair\":%" PRIu64 ",\"frack_fail\":%" PRIu64 ",\"hdr_err\":%" PRIu64
		",\"ctrl\":%" PRIu64 ",\"ctrl_err\":%" PRIu64 "},\"lift_rx\":{\"ctrl\":%" PRIu64
		",\"drop_other\":%" PRIu64 ",\"err\":%" PRIu64 "}", (unsigned int)m->lift_proto,
		m->c.lift_plain, m->c.lift_ack, m->c.lift_pair, m->c.lift_frack_fail,
		m->c.lift_hdr_err, m->c.lift_ctrl_tx, m->c.lift_ctrl_tx_err, m->c.lift_ctrl_rx,
		m->c.lift_ctrl_drop_other, m->c.lift_ctrl_err);
	if (m->lm == NULL)
		return;
	sgw_lift_mh_get_stats(m->lm, &st);
	fprintf(f, ",\"mh\":{\"tx_why\":{");
	for (i = 0; i < SGW_LIFT_MH_W__COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", sgw_lift_mh_why_name(i),
			st.tx_why[i]);
	fprintf(f, "},\"rx_why\":{");
	for (i = 0; i < SGW_LIFT_MH_RX__COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", sgw_lift_mh_rx_name(i),
			st.rx_why[i]);
	fprintf(f, "},\"ctrl_why\":{");
	for (i = 0; i < SGW_LIFT_MH_C__COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", sgw_lift_mh_ctrl_name(i),
			st.ctrl_why[i]);
	fprintf(f, "},\"pairs\":%" PRIu64 ",\"flag_d\":%" PRIu64 ",\"flag_f\":%" PRIu64
		",\"flag_s\":%" PRIu64 ",\"flows_created\":%" PRIu64 ",\"flows_freed\":%" PRIu64
		",\"setups_sent\":%" PRIu64 ",\"teardowns_sent\":%" PRIu64 ",\"ctrl_retx\":%"
		PRIu64 ",\"setup_gaveup\":%" PRIu64 ",\"teardown_gaveup\":%" PRIu64
		",\"setup_full\":%" PRIu64 ",\"setup_bad_proto\":%" PRIu64 ",\"idle_expired\":%"
		PRIu64 ",\"track_merged\":%" PRIu64 ",\"esp_late\":%" PRIu64 ",\"esp_gap\":%"
		PRIu64 ",\"sa_full\":%" PRIu64 ",\"probes\":%" PRIu64 ",\"probe_runs\":%" PRIu64
		",\"susp_run\":%" PRIu64 ",\"susp_share\":%" PRIu64 ",\"verdict_forced\":%"
		PRIu64 ",\"verdict_channel\":%" PRIu64 ",\"resumed\":%" PRIu64 ",\"flows\":%"
		PRIu32 ",\"sas\":%" PRIu32 "}", st.pairs, st.flag_d, st.flag_f, st.flag_s,
		st.flows_created, st.flows_freed, st.setups_sent, st.teardowns_sent, st.ctrl_retx,
		st.setup_gaveup, st.teardown_gaveup, st.setup_full, st.setup_bad_proto,
		st.idle_expired, st.track_merged, st.esp_late, st.esp_gap, st.sa_full, st.probes,
		st.probe_runs, st.susp_run, st.susp_share, st.verdict_forced, st.verdict_channel,
		st.resumed, st.flows, st.sas);
}

static void
mh_write_stats(struct mh *m)
{
	char tmp[4200];
	FILE *f = stdout;

	if (m->stats_path != NULL) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", m->stats_path);
		f = fopen(tmp, "w");
		if (f == NULL) {
			fprintf(stderr, "mh_lift: %s: %s\n", tmp, strerror(errno));
			return;
		}
	}
	fprintf(f, "{\"lift\":\"%s\",\"tun_rx\":%" PRIu64 ",\"tun_drop_other\":%" PRIu64
		",\"esp_tx\":%" PRIu64 ",\"esp_tx_err\":%" PRIu64 ",\"raw_rx\":%" PRIu64
		",\"raw_drop_other\":%" PRIu64 ",\"raw_err\":%" PRIu64 ",\"tun_tx\":%" PRIu64
		",\"tun_tx_err\":%" PRIu64 ",\"dummy\":%" PRIu64 ",\"raw_ovfl\":%" PRIu64 ",",
		m->lift == MH_LIFT_ON ? "on" : "off", m->c.tun_rx, m->c.tun_drop_other, m->c.esp_tx,
		m->c.esp_tx_err, m->c.raw_rx,
		m->c.raw_drop_other, m->c.raw_err, m->c.tun_tx, m->c.tun_tx_err, m->c.dummy,
		m->c.raw_ovfl);
	mh_json_sa(f, "out_sa", m->out, 1);
	fputc(',', f);
	mh_json_sa(f, "in_sa", m->in, 0);
	mh_json_lift(f, m);
	fprintf(f, "}\n");
	if (f != stdout) {
		fclose(f);
		if (rename(tmp, m->stats_path) != 0)
			fprintf(stderr, "mh_lift: %s: %s\n", m->stats_path, strerror(errno));
	} else {
		fflush(f);
	}
}

static void
mh_dump_pkt(FILE *f, unsigned int *count, unsigned int max, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	if (f == NULL || *count >= max)
		return;
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
	fputc('\n', f);
	fflush(f);
	(*count)++;
}

/* ------------------------------------------------------------------ I/O */

static int
mh_open_sockets(struct mh *m, unsigned int mark)
{
	int one = 1, rcvbuf = 4 << 20;

	m->tx = socket(m->family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	m->rx = socket(m->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ESP);
	if (m->tx < 0 || m->rx < 0) {
		fprintf(stderr, "mh_lift: raw socket: %s (root or CAP_NET_RAW needed)\n",
			strerror(errno));
		return -1;
	}
	/* Bursts of ESP arrive faster than a busy host schedules the agent: a
	 * deep receive queue (SO_RCVBUFFORCE as root, else what rmem_max
	 * allows), and the kernel's own count of what still overflowed it. */
	if (setsockopt(m->rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0)
		(void)setsockopt(m->rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	(void)setsockopt(m->rx, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (mark != 0 && setsockopt(m->tx, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) != 0) {
		fprintf(stderr, "mh_lift: SO_MARK: %s\n", strerror(errno));
		return -1;
	}
	if (m->lift == MH_LIFT_ON) {
		/* The hub's Setup-/Teardown-ACKs: IP | LIFT, protocol lift_proto.
		 * The open socket also keeps the kernel from answering them with
		 * "protocol unreachable". */
		m->lrx = socket(m->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, m->lift_proto);
		if (m->lrx < 0) {
			fprintf(stderr, "mh_lift: raw socket for protocol %u: %s\n",
				(unsigned int)m->lift_proto, strerror(errno));
			return -1;
		}
	}
	if (m->family == AF_INET6 &&
	    (setsockopt(m->rx, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) != 0 ||
	     setsockopt(m->rx, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one)) != 0 ||
	     setsockopt(m->rx, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) != 0)) {
		fprintf(stderr, "mh_lift: IPv6 socket options: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int
mh_sendto(struct mh *m, const uint8_t *p, uint32_t n)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	memset(&ss, 0, sizeof(ss));
	if (m->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, m->peer, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, m->peer, 16);
		sl = sizeof(*s6);
	}
	return sendto(m->tx, p, n, 0, (struct sockaddr *)&ss, sl) == (ssize_t)n ? 0 : -1;
}

static void
mh_send(struct mh *m, const uint8_t *p, uint32_t n)
{
	if (mh_sendto(m, p, n) != 0) {
		m->c.esp_tx_err++;
		return;
	}
	m->c.esp_tx++;
}

static uint16_t
mh_ip4_csum(const uint8_t *h, uint32_t hl)
{
	uint32_t s = 0, i;

	for (i = 0; i < hl; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Fix the IP header of a packet of n bytes whose protocol is now proto. */
static void
mh_ip_fix(struct mh *m, uint8_t *p, uint32_t n, uint8_t proto)
{
	uint16_t c;

	if (m->family == AF_INET) {
		uint32_t hl = (uint32_t)(p[0] & 15) * 4;

		p[2] = (uint8_t)(n >> 8);
		p[3] = (uint8_t)n;
		p[9] = proto;
		p[10] = 0;
		p[11] = 0;
		c = mh_ip4_csum(p, hl);
		p[10] = (uint8_t)(c >> 8);
		p[11] = (uint8_t)c;
	} else {
		p[4] = (uint8_t)((n - 40) >> 8);
		p[5] = (uint8_t)(n - 40);
		p[6] = proto;
	}
}

/*
 * Insert the 8-byte LIFT header hdr between the IP header and ESP of the
 * encrypted packet at buf + *off (n bytes): the IP header moves 8 bytes
 * forward into the headroom. Returns the new length (and *off), 0 if no room.
 */
static uint32_t
mh_insert_lift(struct mh *m, uint8_t *buf, uint32_t *off, uint32_t n, const uint8_t *hdr)
{
	uint8_t *p = buf + *off;
	uint32_t hl = m->family == AF_INET ? (uint32_t)(p[0] & 15) * 4 : 40;

	if (*off < SGW_LIFT_LEN || n < hl || n + SGW_LIFT_LEN > 65535) {
		m->c.lift_hdr_err++;
		return 0;
	}
	memmove(p - SGW_LIFT_LEN, p, hl);
	p -= SGW_LIFT_LEN;
	memcpy(p + hl, hdr, SGW_LIFT_LEN);
	*off -= SGW_LIFT_LEN;
	n += SGW_LIFT_LEN;
	mh_ip_fix(m, p, n, m->lift_proto);
	return n;
}

/* Encrypt the cleartext at buf + MH_HEAD (n bytes), put hdr (NULL: none) in
 * front of ESP, send. 0, or -1 (counted). */
static int
mh_seal_send(struct mh *m, uint8_t *buf, uint32_t n, const uint8_t *hdr)
{
	uint32_t off = 0;
	int r;

	r = sgw_esp_encrypt(m->out, buf, MH_BUF, MH_HEAD, n, &off);
	if (r < 0)
		return -1;  /* counted in out_sa.refused */
	n = (uint32_t)r;
	if (hdr != NULL) {
		n = mh_insert_lift(m, buf, &off, n, hdr);
		if (n == 0)
			return -1;
	}
	mh_dump_pkt(m->dump_tx, &m->dumped_tx, m->dump_max, buf + off, n);
	mh_send(m, buf + off, n);
	return 0;
}

/* The machine's control packets that are due: IP(local -> peer, lift_proto) |
 * 8-byte header, sent on the raw socket. The hub's satlink terminal puts them
 * on the reliable service. */
static void
mh_lift_poll(struct mh *m, uint64_t now)
{
	struct sgw_lift_mh_ctrl ctrl[MH_CTRL_BATCH];
	uint8_t pkt[40 + SGW_LIFT_LEN];
	uint32_t k, n, i, hl = m->family == AF_INET ? 20 : 40;

	/* bounded: at most a few batches per call, the rest stays due */
	for (k = 0; k < 4; k++) {
		if (now < sgw_lift_mh_next_deadline(m->lm))
			return;
		n = sgw_lift_mh_poll(m->lm, now, ctrl, MH_CTRL_BATCH);
		for (i = 0; i < n; i++) {
			memset(pkt, 0, sizeof(pkt));
			if (m->family == AF_INET) {
				pkt[0] = 0x45;
				pkt[6] = 0x40;          /* DF */
				pkt[8] = 64;
				memcpy(pkt + 12, m->local, 4);
				memcpy(pkt + 16, m->peer, 4);
			} else {
				pkt[0] = 0x60;
				pkt[7] = 64;
				memcpy(pkt + 8, m->local, 16);
				memcpy(pkt + 24, m->peer, 16);
			}
			memcpy(pkt + hl, ctrl[i].hdr, SGW_LIFT_LEN);
			mh_ip_fix(m, pkt, hl + SGW_LIFT_LEN, m->lift_proto);
			if (mh_sendto(m, pkt, hl + SGW_LIFT_LEN) != 0)
				m->c.lift_ctrl_tx_err++;  /* the machine retransmits */
			else
				m->c.lift_ctrl_tx++;
		}
		if (n < MH_CTRL_BATCH)
			return;
	}
}

/* One LIFT packet from the hub (a Setup-ACK or Teardown-ACK). */
static void
mh_from_lift(struct mh *m)
{
	uint8_t p[2048];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	uint32_t hl = 0;
	ssize_t n;

	n = recvfrom(m->lrx, p, sizeof(p), 0, (struct sockaddr *)&from, &fl);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			m->c.lift_ctrl_err++;
		return;
	}
	m->c.lift_ctrl_rx++;
	/* IPv4: the whole packet; IPv6: the payload, the source in from. */
	if (m->family == AF_INET) {
		if (n < 20 || (p[0] >> 4) != 4 || memcmp(p + 12, m->peer, 4) != 0 ||
		    memcmp(p + 16, m->local, 4) != 0) {
			m->c.lift_ctrl_drop_other++;
			return;
		}
		hl = (uint32_t)(p[0] & 15) * 4;
		if ((uint32_t)n < hl) {
			m->c.lift_ctrl_drop_other++;
			return;
		}
	} else if (from.ss_family != AF_INET6 ||
		   memcmp(&((struct sockaddr_in6 *)&from)->sin6_addr, m->peer, 16) != 0) {
		m->c.lift_ctrl_drop_other++;
		return;
	}
	/* refusals are counted by the machine (ctrl_why) */
	(void)sgw_lift_mh_ctrl_rx(m->lm, mh_now(), p + hl, (size_t)n - hl);
}

/* One packet from the TUN: the host's cleartext toward the peer. */
static void
mh_from_tun(struct mh *m)
{
	uint8_t *p = m->buf + MH_HEAD;
	struct sgw_lift_mh_tx_out tx;
	ssize_t n;

	n = read(m->tun, p, MH_BUF - MH_HEAD - SGW_ESP_TAILROOM);
	if (n <= 0)
		return;
	m->c.tun_rx++;
	/* Only the host's own packets to the peer travel in this SA pair. */
	if (m->family == AF_INET) {
		if (n < 20 || (p[0] >> 4) != 4 || memcmp(p + 12, m->local, 4) != 0 ||
		    memcmp(p + 16, m->peer, 4) != 0) {
			m->c.tun_drop_other++;
			return;
		}
	} else if (n < 40 || (p[0] >> 4) != 6 || memcmp(p + 8, m->local, 16) != 0 ||
		   memcmp(p + 24, m->peer, 16) != 0) {
		m->c.tun_drop_other++;
		return;
	}
	if (m->lm == NULL) {
		(void)mh_seal_send(m, m->buf, (uint32_t)n, NULL);
		return;
	}
	/* MH-LIFT: the machine classifies the cleartext segment and builds the
	 * headers; a pair is the FrACK then the TCP ACK, encrypted in that order
	 * on the one outbound SA so their ESP sequence numbers are consecutive
	 * (the hub pairs them by that). */
	sgw_lift_mh_tx(m->lm, mh_now(), p, (size_t)n, sgw_esp_spi(m->in), SGW_LIFT_IPPROTO_ESP,
		       &tx);
	if (tx.verdict == SGW_LIFT_MH_PAIR) {
		size_t fn = sgw_lift_mh_frack_clone(p, (size_t)n, m->fbuf + MH_HEAD,
						    MH_BUF - MH_HEAD - SGW_ESP_TAILROOM);

		if (fn == 0)
			m->c.lift_frack_fail++;  /* the TCP ACK still goes, alone */
		else if (mh_seal_send(m, m->fbuf, (uint32_t)fn, tx.frack_hdr) == 0)
			m->c.lift_pair++;
	}
	if (tx.verdict == SGW_LIFT_MH_PLAIN) {
		if (mh_seal_send(m, m->buf, (uint32_t)n, NULL) == 0)
			m->c.lift_plain++;
	} else if (mh_seal_send(m, m->buf, (uint32_t)n, tx.ack_hdr) == 0) {
		m->c.lift_ack++;
	}
}

/* Receive one ESP packet: a whole IPv4 packet, or an IPv6 one rebuilt from
 * the ESP payload and the ancillary data. Returns its length, 0 for none. */
static uint32_t
mh_recv(struct mh *m, uint8_t *p, uint32_t cap)
{
	struct sockaddr_in6 from;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	union {
		char b[256];
		struct cmsghdr align;
	} ctl;
	uint8_t dst[16] = {0};
	int hlim = 64, tclass = 0, have_dst = 0;
	ssize_t n;

	/* IPv4: the whole packet; IPv6: from the ESP header on. */
	iov.iov_base = m->family == AF_INET ? p : p + 40;
	iov.iov_len = m->family == AF_INET ? cap : cap - 40;
	memset(&mh, 0, sizeof(mh));
	mh.msg_name = &from;
	mh.msg_namelen = sizeof(from);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	n = recvmsg(m->rx, &mh, 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			m->c.raw_err++;
		return 0;
	}
	if (n > 65535 || (mh.msg_flags & MSG_TRUNC) != 0) {
		m->c.raw_err++;
		return 0;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL) {
			uint32_t ovfl;

			memcpy(&ovfl, CMSG_DATA(cm), sizeof(ovfl));
			m->c.raw_ovfl = ovfl;   /* the socket's running total */
			continue;
		}
		if (cm->cmsg_level != IPPROTO_IPV6)
			continue;
		if (cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			memcpy(dst, &pi.ipi6_addr, 16);
			have_dst = 1;
		} else if (cm->cmsg_type == IPV6_HOPLIMIT) {
			memcpy(&hlim, CMSG_DATA(cm), sizeof(hlim));
		} else if (cm->cmsg_type == IPV6_TCLASS) {
			memcpy(&tclass, CMSG_DATA(cm), sizeof(tclass));
		}
	}
	if (m->family == AF_INET)
		return (uint32_t)n;
	if (!have_dst) {
		m->c.raw_err++;
		return 0;
	}
	p[0] = (uint8_t)(0x60 | ((tclass >> 4) & 0x0f));
	p[1] = (uint8_t)((tclass & 0x0f) << 4);
	p[2] = 0;
	p[3] = 0;
	p[4] = (uint8_t)(n >> 8);
	p[5] = (uint8_t)n;
	p[6] = SGW_ESP_PROTO;
	p[7] = (uint8_t)hlim;
	memcpy(p + 8, &from.sin6_addr, 16);
	memcpy(p + 24, dst, 16);
	return (uint32_t)n + 40;
}

/* One ESP packet from the network. */
static void
mh_from_net(struct mh *m)
{
	uint8_t *p = m->buf + MH_HEAD;
	uint32_t n, off = 0, seq = 0;
	int r;

	n = mh_recv(m, p, MH_BUF - MH_HEAD);
	if (n == 0)
		return;
	m->c.raw_rx++;
	if (m->family == AF_INET ?
	    n < 20 || memcmp(p + 12, m->peer, 4) != 0 || memcmp(p + 16, m->local, 4) != 0 :
	    memcmp(p + 8, m->peer, 16) != 0 || memcmp(p + 24, m->local, 16) != 0) {
		m->c.raw_drop_other++;
		return;
	}
	mh_dump_pkt(m->dump_rx, &m->dumped_rx, m->dump_max, p, n);
	/* The hub's LIFT headers never travel toward the MH in ESP: nothing to
	 * strip before decryption. */
	r = sgw_esp_decrypt(m->in, p, n, &off, &seq);
	if (r == -SGW_ESP_DUMMY) {
		m->c.dummy++;
		return;
	}
	if (r < 0)
		return;     /* counted in in_sa.dropped */
	/* MH-LIFT: the packet's ESP sequence number against its TCP sequence
	 * space (the IPsec ACK Number), the FH's FIN / RST, zero-window probes. */
	if (m->lm != NULL)
		(void)sgw_lift_mh_rx(m->lm, mh_now(), sgw_esp_spi(m->in), seq, p + off,
				     (size_t)r);
	if (write(m->tun, p + off, (size_t)r) != r)
		m->c.tun_tx_err++;
	else
		m->c.tun_tx++;
}

/* --check-reencrypt: decrypt each packet, encrypt it again at its own seq and
 * IV, compare. */
static int
mh_check_reencrypt(struct mh *m, const char *path)
{
	static uint8_t orig[MH_BUF], work[MH_BUF];
	char *line = NULL;
	size_t cap = 0, len, i;
	ssize_t got;
	FILE *f;
	int bad = 0, hi, lo;

	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "mh_lift: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while ((got = getline(&line, &cap, f)) > 0) {
		struct sgw_esp_sa *rx, *tx;
		uint32_t off = 0, off2 = 0, seq = 0, n;
		uint64_t iv;
		int r, r2, hl;

		len = strcspn(line, "\r\n");
		if (len == 0 || len / 2 > MH_BUF - 2 * MH_HEAD || len % 2 != 0)
			continue;
		for (i = 0; i < len / 2; i++) {
			hi = line[2 * i] >= 'a' ? line[2 * i] - 'a' + 10 : line[2 * i] - '0';
			lo = line[2 * i + 1] >= 'a' ? line[2 * i + 1] - 'a' + 10 :
			     line[2 * i + 1] - '0';
			orig[i] = (uint8_t)(hi << 4 | lo);
		}
		n = (uint32_t)(len / 2);
		memcpy(work, orig, n);
		rx = sgw_esp_sa_create(m->eng, &m->in_conf);
		tx = sgw_esp_sa_create(m->eng, &m->in_conf);
		if (rx == NULL || tx == NULL)
			return 2;
		r = sgw_esp_decrypt(rx, work, n, &off, &seq);
		if (r < 0) {
			printf("{\"len\":%u,\"decrypt\":\"%s\",\"equal\":false}\n", n,
			       sgw_esp_reason_name(r));
			bad++;
		} else {
			hl = (orig[0] >> 4) == 4 ? (orig[0] & 15) * 4 : 40;
			iv = 0;
			for (i = 0; i < 8; i++)
				iv = iv << 8 | orig[hl + 8 + i];
			memmove(work + MH_HEAD, work + off, (size_t)r);
			r2 = sgw_esp_encrypt_at(tx, seq, iv, work, MH_BUF, MH_HEAD, (uint32_t)r,
						&off2);
			int eq = r2 == (int)n && memcmp(work + off2, orig, n) == 0;
			printf("{\"len\":%u,\"seq\":%u,\"cleartext_len\":%d,\"equal\":%s}\n", n,
			       seq, r, eq ? "true" : "false");
			if (!eq)
				bad++;
		}
		sgw_esp_sa_destroy(rx);
		sgw_esp_sa_destroy(tx);
	}
	free(line);
	fclose(f);
	return bad == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	static struct mh m;
	static const struct option opts[] = {
		{"tun", required_argument, NULL, 't'},
		{"mtu", required_argument, NULL, 'M'},
		{"local", required_argument, NULL, 'l'},
		{"peer", required_argument, NULL, 'p'},
		{"keys", required_argument, NULL, 'k'},
		{"sa", required_argument, NULL, 's'},
		{"mark", required_argument, NULL, 'm'},
		{"lift", required_argument, NULL, 'L'},
		{"lift-proto", required_argument, NULL, 'P'},
		{"stats-json", required_argument, NULL, 'j'},
		{"dump-rx", required_argument, NULL, 'r'},
		{"dump-tx", required_argument, NULL, 'x'},
		{"dump-max", required_argument, NULL, 'D'},
		{"check-reencrypt", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *tun_name = NULL, *keys = NULL, *check = NULL, *local = NULL, *peer = NULL;
	char *sa_lines[4];
	unsigned int n_sa = 0, mtu = 0, mark = 0, i;
	char ifname[32], err[256];
	struct sigaction sa;
	struct pollfd pfd[3];
	int o, fam2 = 0, nfd, tmo;
	unsigned long lp;
	char *end;

	m.dump_max = 64;
	m.lift_proto = MH_LIFT_PROTO_DEFAULT;
	m.lrx = -1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 't': tun_name = optarg; break;
		case 'M': mtu = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'l': local = optarg; break;
		case 'p': peer = optarg; break;
		case 'k': keys = optarg; break;
		case 's':
			if (n_sa == 4) {
				fprintf(stderr, "mh_lift: --sa: at most 4\n");
				return 2;
			}
			sa_lines[n_sa++] = optarg;
			break;
		case 'm': mark = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'L':
			if (strcmp(optarg, "off") == 0) {
				m.lift = MH_LIFT_OFF;
			} else if (strcmp(optarg, "on") == 0) {
				m.lift = MH_LIFT_ON;
			} else {
				fprintf(stderr, "mh_lift: --lift %s: on or off\n", optarg);
				return 2;
			}
			break;
		case 'P':
			errno = 0;
			lp = strtoul(optarg, &end, 0);
			/* not one of the protocols the host itself carries to the peer */
			if (errno != 0 || *end != '\0' || lp == 0 || lp > 254 || lp == 6 ||
			    lp == 17 || lp == SGW_ESP_PROTO || lp == 51) {
				fprintf(stderr, "mh_lift: --lift-proto %s: 1..254, not TCP, UDP, "
					"ESP or AH\n", optarg);
				return 2;
			}
			m.lift_proto = (uint8_t)lp;
			break;
		case 'j': m.stats_path = optarg; break;
		case 'r':
		case 'x':
			if ((o == 'r' ? (m.dump_rx = fopen(optarg, "w")) :
			     (m.dump_tx = fopen(optarg, "w"))) == NULL) {
				fprintf(stderr, "mh_lift: %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			break;
		case 'D': m.dump_max = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'C': check = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (local == NULL || peer == NULL || (keys == NULL && n_sa == 0) ||
	    (check == NULL && tun_name == NULL)) {
		usage(stderr);
		return 2;
	}
	if (mh_parse_addr(local, &m.family, m.local) != 0 ||
	    mh_parse_addr(peer, &fam2, m.peer) != 0 || fam2 != m.family) {
		fprintf(stderr, "mh_lift: --local and --peer: two addresses of one family\n");
		return 2;
	}
	m.alen = m.family == AF_INET ? 4 : 16;
	if (keys != NULL && mh_load_keys(&m, keys) != 0)
		return 2;
	for (i = 0; i < n_sa; i++)
		if (mh_take_sa(&m, sa_lines[i], "--sa") != 0)
			return 2;
	if (m.have_out != 1 || m.have_in != 1) {
		fprintf(stderr, "mh_lift: need exactly one SA %s -> %s and one back (have %d and "
			"%d)\n", local, peer, m.have_out, m.have_in);
		return 2;
	}
	m.eng = sgw_esp_engine_create();
	if (m.eng == NULL) {
		fprintf(stderr, "mh_lift: no IPsec-MB engine (CPU without AES-NI?)\n");
		return 2;
	}
	if (check != NULL)
		return mh_check_reencrypt(&m, check);
	m.out = sgw_esp_sa_create(m.eng, &m.out_conf);
	m.in = sgw_esp_sa_create(m.eng, &m.in_conf);
	/* The key material is in the SAs' schedules now. */
	memset(&m.out_conf.key, 0, sizeof(m.out_conf.key));
	memset(&m.in_conf.key, 0, sizeof(m.in_conf.key));
	if (m.out == NULL || m.in == NULL) {
		fprintf(stderr, "mh_lift: SA setup failed\n");
		return 2;
	}
	m.tun = sgw_tun_open(tun_name, ifname, err, sizeof(err));
	if (m.tun < 0 || sgw_tun_up(ifname, mtu, err, sizeof(err)) != 0) {
		fprintf(stderr, "mh_lift: %s\n", err);
		return 2;
	}
	if (m.lift == MH_LIFT_ON) {
		struct sgw_lift_mh_conf lc;
		size_t ms;

		sgw_lift_mh_conf_default(&lc);
		ms = sgw_lift_mh_mem_size(&lc);
		m.lm_mem = ms != 0 ? calloc(1, ms) : NULL;
		m.lm = m.lm_mem != NULL ? sgw_lift_mh_init(m.lm_mem, ms, &lc, mh_now()) : NULL;
		if (m.lm == NULL) {
			fprintf(stderr, "mh_lift: MH-LIFT machine: init failed\n");
			return 2;
		}
	}
	if (mh_open_sockets(&m, mark) != 0)
		return 2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mh_on_signal;   /* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	fprintf(stderr, "mh_lift: %s up, %s <-> %s, spi out 0x%08x in 0x%08x, lift %s",
		ifname, local, peer, sgw_esp_spi(m.out), sgw_esp_spi(m.in),
		m.lift == MH_LIFT_ON ? "on" : "off");
	if (m.lift == MH_LIFT_ON)
		fprintf(stderr, " (protocol %u)", (unsigned int)m.lift_proto);
	fputc('\n', stderr);

	pfd[0].fd = m.tun;
	pfd[0].events = POLLIN;
	pfd[1].fd = m.rx;
	pfd[1].events = POLLIN;
	pfd[2].fd = m.lrx;
	pfd[2].events = POLLIN;
	nfd = m.lrx >= 0 ? 3 : 2;
	while (!mh_stop) {
		if (mh_dump) {
			mh_dump = 0;
			mh_write_stats(&m);
		}
		tmo = 1000;
		if (m.lm != NULL) {
			uint64_t now = mh_now(), dl;

			mh_lift_poll(&m, now);
			dl = sgw_lift_mh_next_deadline(m.lm);
			if (dl != SGW_LIFT_MH_NEVER && dl < now + 1000000000ull)
				tmo = dl <= now ? 0 : (int)((dl - now + 999999) / 1000000);
		}
		if (poll(pfd, (nfds_t)nfd, tmo) <= 0)
			continue;
		if (nfd == 3 && (pfd[2].revents & POLLIN))
			for (i = 0; i < 32; i++) {
				uint64_t before = m.c.lift_ctrl_rx + m.c.lift_ctrl_err;

				mh_from_lift(&m);
				if (m.c.lift_ctrl_rx + m.c.lift_ctrl_err == before)
					break;
			}
		/* Bounded bursts, so neither direction starves the other. */
		if (pfd[0].revents & POLLIN)
			for (i = 0; i < 32; i++) {
				uint64_t before = m.c.tun_rx;

				mh_from_tun(&m);
				if (m.c.tun_rx == before)
					break;
			}
		if (pfd[1].revents & POLLIN)
			for (i = 0; i < 32; i++) {
				uint64_t before = m.c.raw_rx + m.c.raw_err;

				mh_from_net(&m);
				if (m.c.raw_rx + m.c.raw_err == before)
					break;
			}
	}
	mh_write_stats(&m);
	sgw_esp_sa_destroy(m.out);
	sgw_esp_sa_destroy(m.in);
	sgw_esp_engine_destroy(m.eng);
	if (m.dump_rx != NULL)
		fclose(m.dump_rx);
	if (m.dump_tx != NULL)
		fclose(m.dump_tx);
	close(m.tun);
	close(m.rx);
	close(m.tx);
	if (m.lrx >= 0)
		close(m.lrx);
	free(m.lm_mem);
	return 0;
}
