/* What is on a device: our claim, or somebody else's data. Only reads. */
#ifndef KDI_PROBE_H
#define KDI_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "../dump/format.h"

/* Bytes read from the start: every head signature we know lies inside,
 * and on a claimed device all of it past the superblock is zero
 * (KDI_DATA_MIN is the lowest data_offset for that reason). */
#define PROBE_HEAD KDI_DATA_MIN
/* Bytes read from the end: the end-of-device signatures (MD 0.90 sits up
 * to 128 KiB from the end, DDF's second anchor 257 sectors). */
#define PROBE_TAIL (256u << 10)

struct probe {
	int claimed;			/* a valid kdumpinit superblock */
	int claim_damaged;		/* our magic, bad checksum or version */
	struct kdi_super sb;
	const char *foreign;		/* another signature, or NULL */
	int nonzero;			/* unrecognised non-zero bytes in the head */
	uint64_t nonzero_at;		/* offset of the first of them */
	uint64_t size;
};

/* head: the first min(size, PROBE_HEAD) bytes; tail: the last tail_len
 * bytes of the device (may be NULL; probe_fd reads min(size, PROBE_TAIL)). */
void probe_buffer(struct probe *p, const uint8_t *head, size_t head_len,
		  const uint8_t *tail, size_t tail_len, uint64_t size);
/* Reads what probe_buffer needs from fd. -errno on read failure. */
int probe_fd(struct probe *p, int fd, uint64_t size);
/* One phrase for messages: "an ext2/3/4 filesystem", "no kdumpinit claim". */
const char *probe_describe(const struct probe *p);

#endif
