/* The way from this machine to a network dump server, read at arming
 * from the running system, so that the crash kernel takes the same one:
 * the interface the running kernel's route to the server goes through,
 * its IPv4 address and prefix, the route's gateway, and the interface's
 * MAC, by which the crash kernel finds the same NIC whatever it names it
 * (kdumpinit.ip=ADDR/PREFIX[,GATEWAY[,MAC]], net/link.h). As kdump-utils
 * does: an address that changes later needs arming again, which the
 * arming service does at every boot. */
#ifndef KDI_ROUTE_H
#define KDI_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "link.h"

/* The route the running kernel takes to dst (host order), from the text
 * of /proc/net/route: the longest prefix, then the lowest metric, among
 * the routes that are up. 0 with the interface's name and the gateway
 * (0: dst is on the link), or -ENETUNREACH (no route), -EINVAL (not
 * that file's format). */
int route_pick(const char *text, uint32_t dst, char *ifname, size_t sz, uint32_t *gw);

/* The interface the route to dst goes through (root's /proc/net/route),
 * when it is Ethernet: the crash kernel brings up only those. 0, or
 * -errno with why. */
int route_dev(const char *root, uint32_t dst, char *ifname, size_t sz, uint32_t *gw, char *why,
	      size_t whysz);

/* The same for network dump device dev (nbd://HOST...): the NIC that
 * reaches its server. 0, or -errno with why. */
int route_nic(const char *root, const char *dev, char *ifname, size_t sz, char *why, size_t whysz);

/* The way to dst: the route (root's /proc/net/route), the interface's
 * primary address and its netmask (asked of the running kernel), its
 * MAC (root's sysfs). An interface that is not Ethernet (loopback, a
 * tunnel) is refused: the crash kernel brings up only Ethernet ones.
 * 0 with the interface's name and *ic, or -errno with why. */
int route_way(const char *root, uint32_t dst, char *ifname, size_t sz, struct ip_conf *ic,
	      char *why, size_t whysz);

/* *ic as kdumpinit.ip= takes it: "10.0.2.15/24,10.0.2.2,52:54:00:12:34:56",
 * the gateway left empty when there is none. */
void ip_conf_format(const struct ip_conf *ic, char *out, size_t sz);

#endif
