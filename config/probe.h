/* What is on a device: our claim, or somebody else's data. Only reads. */
#ifndef KDI_PROBE_H
#define KDI_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "../dump/format.h"

#define PROBE_HEAD (128u << 10)	/* bytes read from the start */

struct probe {
	int claimed;			/* a valid kdumpinit superblock */
	int claim_damaged;		/* our magic, bad checksum or version */
	struct kdi_super sb;
	const char *foreign;		/* another signature, or NULL */
	int nonzero;			/* unrecognised non-zero bytes in the head */
	uint64_t size;
};

/* head: the first min(size, PROBE_HEAD) bytes; tail: the last 4 KiB (may
 * be NULL). */
void probe_buffer(struct probe *p, const uint8_t *head, size_t head_len,
		  const uint8_t *tail, size_t tail_len, uint64_t size);
/* Reads what probe_buffer needs from fd. -errno on read failure. */
int probe_fd(struct probe *p, int fd, uint64_t size);
/* One phrase for messages: "an ext2/3/4 filesystem", "no kdumpinit claim". */
const char *probe_describe(const struct probe *p);

#endif
