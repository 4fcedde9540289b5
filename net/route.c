#include "route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "netdump.h"

#define ROUTE_FILE_MAX (256u << 10)

/* One of /proc/net/route's hex words: the kernel prints the address's
 * bytes as they lie in memory, a 32-bit word in this machine's order. */
static int hex32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long x = strtoul(s, &end, 16);
	if (end == s || *end || strlen(s) != 8)
		return -EINVAL;
	*v = ntohl((uint32_t)x);
	return 0;
}

/* The prefix length of a contiguous netmask, or 33 when it is none. */
static unsigned mask_bits(uint32_t m)
{
	unsigned n = (unsigned)__builtin_popcount(m);
	return m == (n ? ~0u << (32 - n) : 0) ? n : 33;
}

/* One line of /proc/net/route: 0 with its fields when it is an up
 * route that holds dst, else -1. */
static int route_line(char *l, uint32_t dst, char **ifname, unsigned *len, unsigned long *metric,
		      uint32_t *gw)
{
	char *f[11], *save = NULL, *e1, *e2;
	size_t k = 0;
	uint32_t d, g, m;

	for (char *t = strtok_r(l, " \t", &save); t && k < 11; t = strtok_r(NULL, " \t", &save))
		f[k++] = t;
	/* the name goes into sysfs paths: a plain one only */
	if (k < 8 || strlen(f[0]) >= IF_NAMESIZE || strchr(f[0], '/') || f[0][0] == '.' ||
	    hex32(f[1], &d) < 0 || hex32(f[2], &g) < 0 || hex32(f[7], &m) < 0)
		return -1;
	unsigned long flags = strtoul(f[3], &e1, 16);
	*metric = strtoul(f[6], &e2, 10);
	*len = mask_bits(m);
	if (*e1 || *e2 || *len > 32 || !(flags & RTF_UP) || (dst & m) != (d & m))
		return -1;
	*ifname = f[0];
	*gw = flags & RTF_GATEWAY ? g : 0;
	return 0;
}

int route_pick(const char *text, uint32_t dst, char *ifname, size_t sz, uint32_t *gw)
{
	const char *p = strchr(text, '\n');
	int best = -1;
	unsigned long best_metric = 0;

	if (!p || strncmp(text, "Iface", 5))
		return -EINVAL;
	for (p++; *p;) {
		size_t n = strcspn(p, "\n");
		char l[256], *name;
		unsigned len;
		unsigned long metric;
		uint32_t g;
		if (n < sizeof l) {
			memcpy(l, p, n);
			l[n] = 0;
			if (route_line(l, dst, &name, &len, &metric, &g) == 0 &&
			    ((int)len > best || ((int)len == best && metric < best_metric))) {
				best = (int)len;
				best_metric = metric;
				snprintf(ifname, sz, "%s", name);
				*gw = g;
			}
		}
		p += n + (p[n] != 0);
	}
	return best < 0 ? -ENETUNREACH : 0;
}

/* The interface's primary IPv4 address or netmask, from the running
 * kernel. */
static int if_addr(const char *ifname, unsigned long req, uint32_t *a)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof ifr);
	int r = link_ioctl(ifname, req, &ifr);
	if (!r)
		*a = ntohl(((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr);
	return r;
}

int route_nic(const char *root, const char *dev, char *ifname, size_t sz, char *why, size_t whysz)
{
	uint32_t srv, gw;

	if (netdump_server(dev, &srv, why, whysz) < 0)
		return -EINVAL;
	return route_dev(root, srv, ifname, sz, &gw, why, whysz);
}

int route_dev(const char *root, uint32_t dst, char *ifname, size_t sz, uint32_t *gw, char *why,
	      size_t whysz)
{
	char path[512], *text, ds[INET_ADDRSTRLEN];
	struct in_addr da = { htonl(dst) };
	int r;

	inet_ntop(AF_INET, &da, ds, sizeof ds);
	/* The local table (/proc/net/route is the main one) routes these to
	 * this machine, which a crash kernel never reaches. */
	if (dst >> 24 == 127 || !dst) {
		snprintf(why, whysz, "%s is this machine: the crash kernel's dump server is another one",
			 ds);
		return -EINVAL;
	}
	if (!(text = malloc(ROUTE_FILE_MAX + 1)))
		return -ENOMEM;
	snprintf(path, sizeof path, "%s/proc/net/route", strcmp(root, "/") ? root : "");
	ssize_t n = read_text_file(path, text, ROUTE_FILE_MAX + 1);
	r = n < 0 ? (int)n : route_pick(text, dst, ifname, sz, gw);
	free(text);
	if (r == -ENETUNREACH) {
		snprintf(why, whysz, "no route to %s here", ds);
	} else if (r < 0) {
		snprintf(why, whysz, "cannot read the routes (%s): %s", path, errstr(r));
	} else if (link_ether(root, ifname) != 1) {
		snprintf(why, whysz, "the route to %s goes through %s, which is not an Ethernet "
			 "interface: the crash kernel brings up only those", ds, ifname);
		r = -ENODEV;
	}
	return r;
}

int route_way(const char *root, uint32_t dst, char *ifname, size_t sz, struct ip_conf *ic,
	      char *why, size_t whysz)
{
	uint32_t mask = 0;
	int r;

	memset(ic, 0, sizeof *ic);
	if ((r = route_dev(root, dst, ifname, sz, &ic->gw, why, whysz)) < 0)
		return r;
	if ((r = link_mac(root, ifname, ic->mac)) < 0 ||
	    (r = if_addr(ifname, SIOCGIFADDR, &ic->addr)) < 0 ||
	    (r = if_addr(ifname, SIOCGIFNETMASK, &mask)) < 0 || (ic->prefix = mask_bits(mask)) > 32 ||
	    !ic->prefix || !ic->addr) {
		snprintf(why, whysz, "%s (the route to the server) has no IPv4 address and prefix to give "
			 "the crash kernel%s%s", ifname, r < 0 ? ": " : "", r < 0 ? errstr(r) : "");
		return r < 0 ? r : -EADDRNOTAVAIL;
	}
	if (ic->addr == dst) {
		snprintf(why, whysz, "the server is this machine (%s): the crash kernel's dump server is "
			 "another one", ifname);
		return -EINVAL;
	}
	ic->have_mac = 1;
	return 0;
}

void ip_conf_format(const struct ip_conf *ic, char *out, size_t sz)
{
	struct in_addr a = { htonl(ic->addr) }, g = { htonl(ic->gw) };
	char as[INET_ADDRSTRLEN], gs[INET_ADDRSTRLEN] = "";

	inet_ntop(AF_INET, &a, as, sizeof as);
	if (ic->gw)
		inet_ntop(AF_INET, &g, gs, sizeof gs);
	snprintf(out, sz, "%s/%u,%s,%02x:%02x:%02x:%02x:%02x:%02x", as, ic->prefix, gs, ic->mac[0],
		 ic->mac[1], ic->mac[2], ic->mac[3], ic->mac[4], ic->mac[5]);
}
