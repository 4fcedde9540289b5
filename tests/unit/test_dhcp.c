/* Unit tests for net/dhcp.c: the BOOTREQUEST it builds, and the replies
 * it takes or refuses (not ours, cut short, options past the end). The
 * exchange itself runs in e2e-nbd-dhcp against QEMU's DHCP server. */
#define CHECK_PREFIX "dhcp"
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include "../../net/dhcp.h"

static const uint8_t mac[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A reply as a server sends it: yiaddr, then the options given. */
static size_t reply(uint8_t *b, uint32_t xid, uint32_t yi, const uint8_t *opt, size_t ol)
{
	memset(b, 0, 600);
	b[0] = 2;
	b[1] = 1;
	b[2] = 6;
	put32(b + 4, xid);
	put32(b + 16, yi);
	memcpy(b + 28, mac, 6);
	put32(b + 236, 0x63825363u);
	memcpy(b + 240, opt, ol);
	return 240 + ol;
}

static void build(void)
{
	uint8_t b[600];
	size_t n = dhcp_build(b, sizeof b, DHCP_REQUEST, 0x01020304, mac, 0x0a00020f, 0x0a000202);
	CHECK_INT(n, 300);
	CHECK_INT(b[0], 1);
	CHECK_INT(b[10], 0x80);
	CHECK(!memcmp(b + 28, mac, 6), "chaddr");
	CHECK(b[4] == 1 && b[7] == 4, "xid");
	/* type 3, the address asked, the server, the parameters, end */
	static const uint8_t want[] = { 99, 130, 83, 99, 53, 1, 3, 50, 4, 10, 0, 2, 15, 54, 4, 10, 0, 2, 2,
					55, 3, 1, 3, 51, 255 };
	CHECK(!memcmp(b + 236, want, sizeof want), "options");
	CHECK_INT(dhcp_build(b, 100, DHCP_DISCOVER, 1, mac, 0, 0), 0);
}

static void parse(void)
{
	uint8_t b[600];
	struct dhcp_lease l;
	static const uint8_t ack[] = { 53, 1, 5, 1, 4, 255, 255, 255, 0, 3, 8, 10, 0, 2, 2, 10, 0, 2, 3,
				       54, 4, 10, 0, 2, 2, 51, 4, 0, 0, 0x0e, 0x10, 0, 255 };
	size_t n = reply(b, 7, 0x0a00020f, ack, sizeof ack);
	CHECK_INT(dhcp_parse(b, n, 7, mac, &l), 0);
	CHECK_INT(l.type, DHCP_ACK);
	CHECK_INT(l.addr, 0x0a00020f);
	CHECK_INT(l.mask, 0xffffff00u);
	CHECK_INT(l.router, 0x0a000202);
	CHECK_INT(l.server, 0x0a000202);
	CHECK_INT(l.lease_s, 3600);
	CHECK_INT(dhcp_parse(b, n, 8, mac, &l), -EINVAL);	/* another xid */
	uint8_t other[6] = { 2, 0, 0, 0, 0, 1 };
	CHECK_INT(dhcp_parse(b, n, 7, other, &l), -EINVAL);	/* another client */
	CHECK_INT(dhcp_parse(b, 239, 7, mac, &l), -EINVAL);	/* cut before the cookie's end */
	static const uint8_t over[] = { 53, 1, 2, 3, 40, 1, 2 };	/* router of 40 bytes, 2 there */
	n = reply(b, 7, 0x0a00020f, over, sizeof over);
	CHECK_INT(dhcp_parse(b, n, 7, mac, &l), -EINVAL);
	static const uint8_t notype[] = { 1, 4, 255, 255, 255, 0, 255 };
	n = reply(b, 7, 0x0a00020f, notype, sizeof notype);
	CHECK_INT(dhcp_parse(b, n, 7, mac, &l), -EINVAL);
	static const uint8_t offer[] = { 0, 0, 53, 1, 2, 255 };	/* pads first */
	n = reply(b, 7, 0xffffffffu, offer, sizeof offer);
	CHECK_INT(dhcp_parse(b, n, 7, mac, &l), -EINVAL);	/* broadcast is no address */
	n = reply(b, 7, 0x0a00020f, offer, sizeof offer);
	CHECK_INT(dhcp_parse(b, n, 7, mac, &l), 0);
	CHECK_INT(l.type, DHCP_OFFER);
	b[0] = 1;	/* a request, not a reply */
	CHECK_INT(dhcp_parse(b, n, 7, mac, &l), -EINVAL);
}

int main(void)
{
	RUN(build);
	RUN(parse);
	return check_done();
}
