#include "link.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/io.h"

static void say(char *why, size_t sz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sz, fmt, ap);
	va_end(ap);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char end;
	if (strlen(s) != 17 || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3],
				      &v[4], &v[5], &end) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

int ip_conf_parse(const char *s, struct ip_conf *c, char *why, size_t whysz)
{
	char buf[128], *parts[3] = { NULL, NULL, NULL };
	struct in_addr a;

	memset(c, 0, sizeof *c);
	if (!strcmp(s, "dhcp")) {
		c->dhcp = 1;
		return 0;
	}
	if (strlen(s) >= sizeof buf) {
		say(why, whysz, "longer than %zu bytes", sizeof buf - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof buf, "%s", s);
	parts[0] = buf;
	for (int i = 1; i < 3; i++) {
		char *comma = parts[i - 1] ? strchr(parts[i - 1], ',') : NULL;
		if (comma) {
			*comma = 0;
			parts[i] = comma + 1;
		}
	}
	if (parts[2] && strchr(parts[2], ',')) {
		say(why, whysz, "more than ADDR/PREFIX,GATEWAY,MAC");
		return -EINVAL;
	}
	char *slash = strchr(parts[0], '/');
	char *end;
	unsigned long pf = slash ? strtoul(slash + 1, &end, 10) : 0;
	if (!slash || end == slash + 1 || *end || pf < 1 || pf > 32) {
		say(why, whysz, "'%s' is not ADDR/PREFIX (10.0.0.7/24)", parts[0]);
		return -EINVAL;
	}
	*slash = 0;
	if (inet_pton(AF_INET, parts[0], &a) != 1 || !a.s_addr) {
		say(why, whysz, "'%s' is not an IPv4 address", parts[0]);
		return -EINVAL;
	}
	c->addr = ntohl(a.s_addr);
	c->prefix = (unsigned)pf;
	if (parts[1] && *parts[1]) {
		if (inet_pton(AF_INET, parts[1], &a) != 1 || !a.s_addr) {
			say(why, whysz, "the gateway '%s' is not an IPv4 address", parts[1]);
			return -EINVAL;
		}
		c->gw = ntohl(a.s_addr);
		uint32_t mask = c->prefix == 32 ? ~0u : ~(~0u >> c->prefix);
		if ((c->gw & mask) != (c->addr & mask)) {
			say(why, whysz, "the gateway is not in %s/%u's network", parts[0], c->prefix);
			return -EINVAL;
		}
	}
	if (parts[2] && *parts[2]) {
		if (parse_mac(parts[2], c->mac) < 0) {
			say(why, whysz, "'%s' is not a MAC address (52:54:00:12:34:56)", parts[2]);
			return -EINVAL;
		}
		c->have_mac = 1;
	}
	return 0;
}

static int sys_text(const char *sysroot, const char *ifname, const char *attr, char *v, size_t sz)
{
	char path[512];
	snprintf(path, sizeof path, "%s/sys/class/net/%s/%s", strcmp(sysroot, "/") ? sysroot : "",
		 ifname, attr);
	ssize_t n = read_text_file(path, v, sz);
	return n < 0 ? (int)n : 0;
}

int link_pick(const char *sysroot, const struct ip_conf *c, char *ifname, size_t sz)
{
	char path[512], best[IF_NAMESIZE] = "";
	snprintf(path, sizeof path, "%s/sys/class/net", strcmp(sysroot, "/") ? sysroot : "");
	DIR *d = opendir(path);
	if (!d)
		return -ENODEV;
	for (struct dirent *e; (e = readdir(d));) {
		char v[64];
		size_t nl = strlen(e->d_name);
		uint8_t mac[6];
		if (e->d_name[0] == '.' || nl >= IF_NAMESIZE || !strcmp(e->d_name, "lo"))
			continue;
		if (link_ether(sysroot, e->d_name) != 1)
			continue;
		if (c->have_mac) {
			if (sys_text(sysroot, e->d_name, "address", v, sizeof v) == 0 &&
			    parse_mac(v, mac) == 0 && !memcmp(mac, c->mac, 6)) {
				memcpy(best, e->d_name, nl + 1);
				break;
			}
			continue;
		}
		/* Without a MAC: the first by name, the same every boot. */
		if (!best[0] || strcmp(e->d_name, best) < 0)
			memcpy(best, e->d_name, nl + 1);
	}
	closedir(d);
	if (!best[0])
		return -ENODEV;
	snprintf(ifname, sz, "%s", best);
	return 0;
}

int link_ether(const char *sysroot, const char *ifname)
{
	char v[16];
	int r = sys_text(sysroot, ifname, "type", v, sizeof v);
	/* ARPHRD_ETHER (1): not a tunnel; a bridge's port is one too */
	return r < 0 ? r : !strcmp(v, "1");
}

int link_carrier(const char *sysroot, const char *ifname)
{
	char v[16];
	int r = sys_text(sysroot, ifname, "carrier", v, sizeof v);
	if (r < 0)
		return r == -EINVAL ? 0 : r;	/* EINVAL: the interface is down */
	return !strcmp(v, "1");
}

static void sin_set(struct sockaddr *sa, uint32_t addr)
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	memset(in, 0, sizeof *in);
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(addr);
}

int link_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (s < 0)
		return -errno;
	snprintf(ifr->ifr_name, sizeof ifr->ifr_name, "%s", ifname);
	if (ioctl(s, req, ifr) < 0)
		r = -errno;
	close(s);
	return r;
}

int link_up(const char *ifname, char *why, size_t whysz)
{
	struct ifreq ifr;
	int r;

	memset(&ifr, 0, sizeof ifr);
	if ((r = link_ioctl(ifname, SIOCGIFFLAGS, &ifr)) == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = link_ioctl(ifname, SIOCSIFFLAGS, &ifr);
	}
	if (r < 0)
		say(why, whysz, "%s: bringing it up: %s", ifname, strerror(-r));
	return r;
}

int link_mac(const char *sysroot, const char *ifname, uint8_t mac[6])
{
	char v[64];
	int r = sys_text(sysroot, ifname, "address", v, sizeof v);
	return r < 0 ? r : parse_mac(v, mac);
}

int link_configure(const char *ifname, const struct ip_conf *c, char *why, size_t whysz)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;
	struct ifreq ifr;

	if (s < 0) {
		r = -errno;
		say(why, whysz, "socket: %s", strerror(errno));
		return r;
	}
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		goto fail_flags;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		goto fail_flags;
	sin_set(&ifr.ifr_addr, c->addr);
	if (ioctl(s, SIOCSIFADDR, &ifr) < 0) {
		r = -errno;
		say(why, whysz, "%s: setting the address: %s", ifname, strerror(errno));
		goto out;
	}
	sin_set(&ifr.ifr_netmask, c->prefix == 32 ? ~0u : ~(~0u >> c->prefix));
	if (ioctl(s, SIOCSIFNETMASK, &ifr) < 0) {
		r = -errno;
		say(why, whysz, "%s: setting the netmask: %s", ifname, strerror(errno));
		goto out;
	}
	/* Also lo, for anything that talks to itself. */
	struct ifreq lo;
	memset(&lo, 0, sizeof lo);
	snprintf(lo.ifr_name, sizeof lo.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &lo) == 0) {
		lo.ifr_flags |= IFF_UP;
		(void)ioctl(s, SIOCSIFFLAGS, &lo);
	}
	if (c->gw) {
		struct rtentry rt;
		memset(&rt, 0, sizeof rt);
		sin_set(&rt.rt_dst, 0);
		sin_set(&rt.rt_genmask, 0);
		sin_set(&rt.rt_gateway, c->gw);
		rt.rt_flags = RTF_UP | RTF_GATEWAY;
		char dev[IF_NAMESIZE];
		snprintf(dev, sizeof dev, "%s", ifname);
		rt.rt_dev = dev;
		if (ioctl(s, SIOCADDRT, &rt) < 0 && errno != EEXIST) {
			r = -errno;
			say(why, whysz, "%s: the default route: %s", ifname, strerror(errno));
		}
	}
	goto out;
fail_flags:
	r = -errno;
	say(why, whysz, "%s: bringing it up: %s", ifname, strerror(errno));
out:
	close(s);
	return r;
}
