/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control/agent/tun.c: TUN devices for the host agents (see tun.h). Addresses and
 * routes are left to the operator's (or the test bed's) `ip` commands: an agent
 * that configured routes itself would fight the host's own network management.
 */
#define _GNU_SOURCE
#include "tun.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int
sgw_tun_open(const char *name, char *out_name, char *err, size_t err_len)
{
	struct ifreq ifr;
	int fd;

	if (name == NULL || strlen(name) >= IFNAMSIZ) {
		snprintf(err, err_len, "tun: device name longer than %d bytes", IFNAMSIZ - 1);
		return -1;
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_len, "tun: /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, err_len, "tun: TUNSETIFF %s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	memcpy(out_name, ifr.ifr_name, IFNAMSIZ);
	out_name[IFNAMSIZ - 1] = '\0';
	return fd;
}

int
sgw_tun_up(const char *name, unsigned int mtu, char *err, size_t err_len)
{
	struct ifreq ifr;
	int s, rc = -1;

	if (strlen(name) >= IFNAMSIZ) {
		snprintf(err, err_len, "tun: device name longer than %d bytes", IFNAMSIZ - 1);
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		snprintf(err, err_len, "tun: socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name));
	if (mtu != 0) {
		ifr.ifr_mtu = (int)mtu;
		if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
			snprintf(err, err_len, "tun: MTU %u on %s: %s", mtu, name, strerror(errno));
			goto out;
		}
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		snprintf(err, err_len, "tun: flags of %s: %s", name, strerror(errno));
		goto out;
	}
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
		snprintf(err, err_len, "tun: up %s: %s", name, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(s);
	return rc;
}
