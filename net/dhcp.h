/* A DHCP client for one lease, enough for the crash kernel: DISCOVER,
 * OFFER, REQUEST, ACK on one interface (kdumpinit.ip=dhcp). The packet
 * build and parse are apart from the socket, for the tests and the fuzz
 * target; everything a server sends is checked. */
#ifndef KDI_DHCP_H
#define KDI_DHCP_H

#include <stddef.h>
#include <stdint.h>

#define DHCP_DISCOVER 1
#define DHCP_OFFER 2
#define DHCP_REQUEST 3
#define DHCP_ACK 5
#define DHCP_NAK 6

struct dhcp_lease {
	int type;		/* DHCP_OFFER, DHCP_ACK, DHCP_NAK */
	uint32_t addr, mask, router, server;	/* host order; 0 not given */
	uint32_t lease_s;
};

/* A BOOTREQUEST of type into buf (at least 300 bytes); its length. */
size_t dhcp_build(uint8_t *buf, size_t sz, int type, uint32_t xid, const uint8_t mac[6],
		  uint32_t want, uint32_t server);
/* 0 when buf is a BOOTREPLY to xid for mac with a message type; -EINVAL
 * otherwise (not ours, cut short, options that overrun). */
int dhcp_parse(const uint8_t *buf, size_t len, uint32_t xid, const uint8_t mac[6],
	       struct dhcp_lease *l);

/* The exchange on ifname (up, no address yet), within timeout_ms. */
int dhcp_lease(const char *ifname, const uint8_t mac[6], unsigned timeout_ms,
	       struct dhcp_lease *l, char *why, size_t whysz);

#endif
