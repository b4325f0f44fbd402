/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame builder for pipeline tests: Ethernet (+VLAN) / IPv4 or IPv6 / TCP,
 * UDP, ESP, ICMP with correct lengths and checksums, as a byte vector.
 */
#ifndef SGW_TEST_PKT_BUILD_H
#define SGW_TEST_PKT_BUILD_H

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace sgwtest {

struct Frame {
	uint8_t dst_mac[6] = {0x02, 0, 0, 0, 0, 0xb};
	uint8_t src_mac[6] = {0x02, 0, 0, 0, 0, 0xa};
	std::vector<uint16_t> vlans;
	int ip_ver = 4;
	std::string src = "198.51.100.10";
	std::string dst = "10.20.1.5";
	uint8_t proto = 6;
	uint8_t dscp = 0;
	uint16_t sport = 40000, dport = 80;
	uint32_t seq = 1000, ack = 0;
	uint8_t tcp_flags = 0x02;
	uint32_t spi = 0x1001, esp_seq = 1;
	bool esp_in_udp = false;
	size_t payload = 0;
	uint8_t payload_byte = 0xab;
};

static inline void
put16(std::vector<uint8_t> &v, uint16_t x)
{
	v.push_back(uint8_t(x >> 8));
	v.push_back(uint8_t(x));
}

static inline void
put32(std::vector<uint8_t> &v, uint32_t x)
{
	put16(v, uint16_t(x >> 16));
	put16(v, uint16_t(x));
}

static inline uint16_t
csum(const uint8_t *p, size_t n, uint32_t sum = 0)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += uint32_t(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += uint32_t(p[n - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return uint16_t(~sum);
}

static inline std::vector<uint8_t>
build(const Frame &f)
{
	std::vector<uint8_t> l4, v;
	uint8_t s[16] = {}, d[16] = {};
	size_t alen = f.ip_ver == 4 ? 4 : 16;

	inet_pton(f.ip_ver == 4 ? AF_INET : AF_INET6, f.src.c_str(), s);
	inet_pton(f.ip_ver == 4 ? AF_INET : AF_INET6, f.dst.c_str(), d);
	uint8_t ipproto = f.esp_in_udp ? 17 : f.proto;
	if (f.proto == 6) {
		put16(l4, f.sport);
		put16(l4, f.dport);
		put32(l4, f.seq);
		put32(l4, f.ack);
		l4.push_back(0x80); /* doff 8: 12 bytes of options */
		l4.push_back(f.tcp_flags);
		put16(l4, 65535);
		put16(l4, 0);
		put16(l4, 0);
		/* NOP NOP TS(10) */
		l4.insert(l4.end(), {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0});
	} else if (f.proto == 17 || f.esp_in_udp) {
		put16(l4, f.esp_in_udp ? 4500 : f.sport);
		put16(l4, f.esp_in_udp ? 4500 : f.dport);
		put16(l4, 0);
		put16(l4, 0);
		if (f.esp_in_udp) {
			put32(l4, f.spi);
			put32(l4, f.esp_seq);
		}
	} else if (f.proto == 50) {
		put32(l4, f.spi);
		put32(l4, f.esp_seq);
	} else if (f.proto == 1 || f.proto == 58) {
		l4.insert(l4.end(), {8, 0, 0, 0, 0, 1, 0, 1});
	}
	l4.insert(l4.end(), f.payload, f.payload_byte);
	if (ipproto == 17) {
		l4[4] = uint8_t(l4.size() >> 8);
		l4[5] = uint8_t(l4.size());
	}
	/* L4 checksum over the pseudo-header */
	{
		std::vector<uint8_t> ph(s, s + alen);
		ph.insert(ph.end(), d, d + alen);
		if (f.ip_ver == 4) {
			ph.push_back(0);
			ph.push_back(ipproto);
			put16(ph, uint16_t(l4.size()));
		} else {
			put32(ph, uint32_t(l4.size()));
			ph.insert(ph.end(), {0, 0, 0, ipproto});
		}
		ph.insert(ph.end(), l4.begin(), l4.end());
		uint16_t c = csum(ph.data(), ph.size());
		if (ipproto == 6) {
			l4[16] = uint8_t(c >> 8);
			l4[17] = uint8_t(c);
		} else if (ipproto == 17) {
			l4[6] = uint8_t(c >> 8);
			l4[7] = uint8_t(c);
		}
	}
	v.insert(v.end(), f.dst_mac, f.dst_mac + 6);
	v.insert(v.end(), f.src_mac, f.src_mac + 6);
	for (uint16_t tci : f.vlans) {
		put16(v, 0x8100);
		put16(v, tci);
	}
	if (f.ip_ver == 4) {
		put16(v, 0x0800);
		size_t h = v.size();
		v.push_back(0x45);
		v.push_back(uint8_t(f.dscp << 2));
		put16(v, uint16_t(20 + l4.size()));
		put16(v, 0x1234);
		put16(v, 0x4000);
		v.push_back(64);
		v.push_back(ipproto);
		put16(v, 0);
		v.insert(v.end(), s, s + 4);
		v.insert(v.end(), d, d + 4);
		uint16_t c = csum(&v[h], 20);
		v[h + 10] = uint8_t(c >> 8);
		v[h + 11] = uint8_t(c);
	} else {
		put16(v, 0x86dd);
		put32(v, 0x60000000u | (uint32_t(f.dscp) << 22));
		put16(v, uint16_t(l4.size()));
		v.push_back(ipproto);
		v.push_back(64);
		v.insert(v.end(), s, s + 16);
		v.insert(v.end(), d, d + 16);
	}
	v.insert(v.end(), l4.begin(), l4.end());
	while (v.size() < 60)
		v.push_back(0);
	return v;
}

/*
 * f (untagged IPv6) with a hop-by-hop header in front of its upper layer: one
 * option of opt_bytes bytes (type 0x1e, RFC 4727 experimental, skipped when
 * not known), padded with Pad1/PadN to a multiple of 8. The TCP/UDP checksum
 * does not cover extension headers, so it stays right.
 */
static inline std::vector<uint8_t>
with_ip6_hbh(const std::vector<uint8_t> &f, size_t opt_bytes)
{
	const size_t l3 = 14, ext = l3 + 40;
	std::vector<uint8_t> h = {f[l3 + 6], 0, 0x1e, uint8_t(opt_bytes - 2)};
	size_t pad;

	h.insert(h.end(), opt_bytes - 2, 0x5c);
	pad = (8 - h.size() % 8) % 8;
	if (pad == 1) {
		h.push_back(0);
	} else if (pad > 1) {
		h.push_back(1);
		h.push_back(uint8_t(pad - 2));
		h.insert(h.end(), pad - 2, 0);
	}
	h[1] = uint8_t(h.size() / 8 - 1);
	/* Copied into place (g++ 12 -O3 sees a false array bound in vector::insert here). */
	std::vector<uint8_t> v(f.size() + h.size());
	std::copy(f.begin(), f.begin() + long(ext), v.begin());
	std::copy(h.begin(), h.end(), v.begin() + long(ext));
	std::copy(f.begin() + long(ext), f.end(), v.begin() + long(ext + h.size()));
	uint16_t plen = uint16_t((v[l3 + 4] << 8 | v[l3 + 5]) + h.size());
	v[l3 + 4] = uint8_t(plen >> 8);
	v[l3 + 5] = uint8_t(plen);
	v[l3 + 6] = 0; /* hop-by-hop */
	return v;
}

/*
 * f (untagged IPv4, no options) with n bytes of options (n % 4 == 0, n <= 40):
 * record route (type 7, length n - 1, pointer 4, empty slots) and EOL. IHL,
 * total length and the header checksum are redone.
 */
static inline std::vector<uint8_t>
with_ip4_options(const std::vector<uint8_t> &f, size_t n)
{
	const size_t l3 = 14;
	std::vector<uint8_t> o = {7, uint8_t(n - 1), 4};
	std::vector<uint8_t> v(f.begin(), f.begin() + long(l3 + 20));

	o.resize(n, 0); /* empty route slots, then EOL */
	v.insert(v.end(), o.begin(), o.end());
	v.insert(v.end(), f.begin() + long(l3 + 20), f.end());
	v[l3] = uint8_t(0x40 | (20 + n) / 4);
	uint16_t tot = uint16_t((v[l3 + 2] << 8 | v[l3 + 3]) + n);
	v[l3 + 2] = uint8_t(tot >> 8);
	v[l3 + 3] = uint8_t(tot);
	v[l3 + 10] = 0;
	v[l3 + 11] = 0;
	uint16_t c = csum(&v[l3], 20 + n);
	v[l3 + 10] = uint8_t(c >> 8);
	v[l3 + 11] = uint8_t(c);
	return v;
}

static inline std::vector<uint8_t>
arp_request()
{
	std::vector<uint8_t> v = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 0xa, 0x08, 0x06,
				  0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0xa, 10, 10, 0, 1,
				  0, 0, 0, 0, 0, 0, 10, 10, 0, 254};
	v.resize(60, 0);
	return v;
}

} // namespace sgwtest

#endif
