/* The crash kernel's network, as far as a network dump device needs it:
 * one interface up with a static IPv4 address and a gateway
 * (kdumpinit.ip=ADDR/PREFIX[,GATEWAY[,MAC]]), set with the classic
 * ioctls. PID 1 runs it after the modules (the NIC's driver). */
#ifndef KDI_LINK_H
#define KDI_LINK_H

#include <stddef.h>
#include <stdint.h>

struct ip_conf {
	uint32_t addr, gw;	/* host order; gw 0: none */
	unsigned prefix;
	uint8_t mac[6];
	int have_mac;
	int dhcp;		/* kdumpinit.ip=dhcp: the rest from a lease */
};

/* "10.0.2.15/24,10.0.2.2,52:54:00:12:34:56": 0, or -EINVAL with why. */
int ip_conf_parse(const char *s, struct ip_conf *c, char *why, size_t whysz);

/* The interface: the one with c->mac, else the first Ethernet one that
 * is not loopback (sysroot: "/", or a test's tree). 0 and its name, or
 * -ENODEV (none yet: its driver may still be probing). */
int link_pick(const char *sysroot, const struct ip_conf *c, char *ifname, size_t sz);

/* One interface ioctl (SIOCGIFFLAGS, SIOCGIFADDR...) on ifr, its name
 * set to ifname: 0 or -errno. */
struct ifreq;
int link_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr);

/* Up, nothing else (before DHCP). 0 or -errno with why. */
int link_up(const char *ifname, char *why, size_t whysz);
/* The interface's MAC from sysfs. 0 or -errno. */
int link_mac(const char *sysroot, const char *ifname, uint8_t mac[6]);

/* Up, the address, the default route through the gateway. 0 or -errno
 * with what failed in why. */
int link_configure(const char *ifname, const struct ip_conf *c, char *why, size_t whysz);

/* 1 when the interface is Ethernet (ARPHRD_ETHER: not loopback, not a
 * tunnel), 0 not, -errno. */
int link_ether(const char *sysroot, const char *ifname);

/* 1 when the interface has carrier, 0 not yet, -errno. */
int link_carrier(const char *sysroot, const char *ifname);

#endif
