/* A network dump device for PID 1: kdumpinit.dev=nbd://HOST[:PORT]/EXPORT
 * with kdumpinit.ip=ADDR/PREFIX[,GATEWAY[,MAC]]. The interface brought
 * up, the server reached (a word every 10 s until wait_s), the handshake
 * (net/nbd.h), the socket handed to the kernel's NBD driver: then the
 * dump device is a block device like any other (/dev/nbdN), and the
 * claim, the chunk stream and save are what they are on a disk. */
#ifndef KDI_NETDUMP_H
#define KDI_NETDUMP_H

#include <stddef.h>
#include <stdint.h>

/* 1 when dev names a network dump device. */
int netdump_is(const char *dev);

/* The server's IPv4 address (host order) from the selector: 0, or
 * -EINVAL with why (not nbd://HOST..., or HOST not an address: the crash
 * kernel resolves no names). */
int netdump_server(const char *dev, uint32_t *addr, char *why, size_t whysz);

/* The device path in path, or -errno once said on the console. */
int netdump_attach(const char *dev, const char *ip, unsigned wait_s, char *path, size_t sz);

/* For status and arm, on the running system: the server asked now (a few
 * seconds at most), the export's size and its first 4 KiB (the claim's
 * superblock area) into sb. 0, or -errno with why. */
struct nbd_export;
int netdump_probe(const char *dev, struct nbd_export *ex, void *sb, char *why, size_t whysz);

#endif
