/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satgw [EAL options] -- [satgw options]
 *
 * Startup, signals and shutdown. --help, --version and --check-config work
 * without the EAL (no hugepages, no devices), so a policy can be validated
 * anywhere. At exit every mbuf must be back in its pool; the exit code says
 * so (3 when some are missing).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pdump.h>
#include <rte_version.h>

#include "control.h"
#include "policy_yaml.h"
#include "sgw_dp.h"

static struct sgw_dp g_dp;
static struct sgw_ctl g_ctl;

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [EAL options] -- [satgw options]\n"
		"\n"
		"satgw options:\n"
		"  -c, --config FILE        run with the policy in FILE (YAML)\n"
		"      --check-config FILE  validate FILE, print every error as\n"
		"                           FILE:LINE:COLUMN: message, and exit (0 = valid)\n"
		"      --bare-forward       baseline mode: forward every packet to its port's\n"
		"                           peer with no parsing or classification\n"
		"      --duration SEC       stop after SEC seconds (default: run until a signal)\n"
		"      --stats-json FILE    at exit, write every counter as JSON to FILE (- = stdout)\n"
		"      --stats-interval SEC log a rate line every SEC seconds (0 = off)\n"
		"  -q, --quiet              no summary at exit\n"
		"  -h, --help               this text\n"
		"  -V, --version            print the version\n"
		"\n"
		"Signals: SIGINT/SIGTERM stop cleanly; SIGHUP reloads the policy.\n"
		"Telemetry: dpdk-telemetry.py -f <file-prefix>, commands /satgw/*.\n"
		"Example (no NIC, no hugepages):\n"
		"  %s --no-huge -m 1024 --no-pci --file-prefix sgw -l 0-1 \\\n"
		"     --vdev net_af_packet0,iface=veth0 --vdev net_af_packet1,iface=veth1 \\\n"
		"     -- -c hub.yaml\n", prog, prog);
}

static int
check_config(const char *path)
{
	struct sgw_cfg_errors errs;
	struct sgw_policy pol;

	if (sgw_policy_load_file(path, &pol, &errs) != 0) {
		sgw_cfg_errors_print(stderr, &errs);
		fprintf(stderr, "%s: invalid (%u error(s))\n", path, errs.n + errs.dropped);
		return 1;
	}
	printf("%s: valid: role %s, %u port(s), %u next hop(s), %u terminal(s), %u rule(s)\n",
	       path, sgw_role_name(pol.role), pol.n_ports, pol.n_next_hops, pol.n_terminals,
	       pol.n_rules);
	sgw_policy_free(&pol);
	return 0;
}

/* --help, --version and --check-config need no EAL: handle them first. */
static int
early_options(int argc, char **argv, int *handled)
{
	int i;

	*handled = 1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout, argv[0]);
			return 0;
		}
		if (strcmp(argv[i], "-V") == 0 || strcmp(argv[i], "--version") == 0) {
			printf("satgw %s (DPDK %s)\n", SGW_VERSION, rte_version());
			return 0;
		}
		if (strcmp(argv[i], "--check-config") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "--check-config needs a FILE\n");
				return 2;
			}
			return check_config(argv[i + 1]);
		}
		if (strncmp(argv[i], "--check-config=", 15) == 0)
			return check_config(argv[i] + 15);
	}
	*handled = 0;
	return 0;
}

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		__atomic_store_n(&g_ctl.reload_req, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&g_dp.quit, 1, __ATOMIC_RELAXED);
}

static int
launch_worker(void *arg __rte_unused)
{
	unsigned int lcore = rte_lcore_id();
	uint32_t i;

	for (i = 0; i < g_dp.n_workers; i++)
		if (g_dp.workers[i]->lcore == lcore)
			return sgw_worker_main(g_dp.workers[i]);
	return 0;
}

static int
parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno != 0 || *end != '\0' || *out < 0) ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"bare-forward", no_argument, NULL, 'b'},
		{"duration", required_argument, NULL, 'd'},
		{"stats-json", required_argument, NULL, 'j'},
		{"stats-interval", required_argument, NULL, 'i'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	const char *json_path = NULL;
	unsigned int lcores[SGW_MAX_WORKERS], lcore;
	struct sgw_cfg_errors errs;
	struct sgw_policy pol;
	struct sigaction sa;
	char err[256] = "", inst[12];
	bool quiet = false;
	unsigned int in_use;
	uint32_t nw = 0;
	double elapsed;
	int rc, opt, handled, exit_code = 0;

	rc = early_options(argc, argv, &handled);
	if (handled)
		return rc;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "satgw: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= rc;
	argv += rc;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:qhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			snprintf(g_ctl.config_path, sizeof(g_ctl.config_path), "%s", optarg);
			break;
		case 'b':
			g_dp.bare_forward = true;
			break;
		case 'd':
			if (parse_double(optarg, &g_ctl.duration_s) < 0) {
				fprintf(stderr, "satgw: --duration: not a number of seconds: %s\n",
					optarg);
				goto fail_eal;
			}
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'i':
			if (parse_double(optarg, &g_ctl.stats_interval_s) < 0) {
				fprintf(stderr, "satgw: --stats-interval: bad value: %s\n", optarg);
				goto fail_eal;
			}
			break;
		case 'q':
			quiet = true;
			break;
		default:
			usage(stderr, "satgw");
			goto fail_eal;
		}
	}
	if (g_ctl.config_path[0] == '\0') {
		fprintf(stderr, "satgw: no policy: give one with -c FILE (see --help)\n");
		goto fail_eal;
	}
	if (sgw_policy_load_file(g_ctl.config_path, &pol, &errs) != 0) {
		sgw_cfg_errors_print(stderr, &errs);
		fprintf(stderr, "satgw: %s: invalid policy, not starting\n", g_ctl.config_path);
		goto fail_eal;
	}

	RTE_LCORE_FOREACH(lcore) {
		if (nw < SGW_MAX_WORKERS)
			lcores[nw++] = lcore;
	}
	snprintf(inst, sizeof(inst), "%d", (int)getpid());
	if (sgw_dp_init(&g_dp, &pol, nw, lcores, g_dp.bare_forward, inst) < 0 ||
	    sgw_dp_publish(&g_dp, &pol, err, sizeof(err)) < 0) {
		if (err[0] != '\0')
			SGW_LOG(ERR, "%s", err);
		sgw_policy_free(&pol);
		sgw_dp_fini(&g_dp);
		goto fail_eal;
	}
	g_ctl.dp = &g_dp;
	pthread_mutex_init(&g_ctl.lock, NULL);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	sgw_telemetry_register(&g_ctl);
	/* Lets dpdk-dumpcap and dpdk-pdump capture our ports (needs hugepages). */
	if (rte_pdump_init() != 0)
		SGW_LOG(WARNING, "packet capture (pdump) unavailable: %s", rte_strerror(rte_errno));
	if (sgw_ctl_start(&g_ctl) != 0) {
		sgw_ctl_close(&g_ctl);
		sgw_dp_fini(&g_dp);
		goto fail_eal;
	}
	SGW_LOG(NOTICE, "running %s with %u worker(s), policy %s", sgw_dp_mode_name(&g_dp), nw,
		g_ctl.config_path);

	rte_eal_mp_remote_launch(launch_worker, NULL, CALL_MAIN);
	rte_eal_mp_wait_lcore();
	elapsed = sgw_ctl_elapsed(&g_ctl);
	sgw_ctl_join(&g_ctl);
	/* Telemetry outlives us: refuse its requests before anything is torn down. */
	sgw_ctl_close(&g_ctl);

	sgw_dp_drain(&g_dp);
	sgw_dp_close_ports(&g_dp);
	in_use = rte_mempool_in_use_count(g_dp.pool);
	if (!quiet)
		sgw_stats_print_summary(&g_dp, stdout, elapsed);
	if (json_path != NULL) {
		FILE *f = strcmp(json_path, "-") == 0 ? stdout : fopen(json_path, "w");

		if (f == NULL) {
			SGW_LOG(ERR, "cannot write %s: %s", json_path, strerror(errno));
			exit_code = 1;
		} else {
			if (sgw_stats_write_json(&g_dp, f, elapsed) != 0)
				exit_code = 1;
			if (f != stdout)
				fclose(f);
		}
	}
	if (in_use != 0) {
		SGW_LOG(ERR, "%u mbuf(s) not returned to the pool at exit", in_use);
		exit_code = 3;
	}
	sgw_dp_fini(&g_dp);
	rte_pdump_uninit();
	rte_eal_cleanup();
	return exit_code;

fail_eal:
	rte_eal_cleanup();
	return 1;
}
