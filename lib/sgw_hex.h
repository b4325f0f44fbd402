/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One hex digit's value: the policy's IPv6 and MAC text, the key file's keys.
 */
#ifndef SGW_HEX_H
#define SGW_HEX_H

/* 0..15, or -1 when c is not a hex digit. */
static inline int
sgw_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* SGW_HEX_H */
