#include "dmctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The kernel's layout (uapi dm-ioctl.h), written out: 312 bytes, then the
 * data from data_start. */
struct dm_hdr {
	uint32_t version[3];
	uint32_t data_size;	/* the whole buffer, this header included */
	uint32_t data_start;	/* where the data begins, from this header */
	uint32_t target_count;
	int32_t open_count;
	uint32_t flags;
	uint32_t event_nr;
	uint32_t padding;
	uint64_t dev;		/* the kernel's huge_encode_dev */
	char name[128];
	char uuid[129];
	char data[7];
};

struct dm_spec {
	uint64_t sector_start, length;
	int32_t status;
	/* load: from this spec to the next; status: from the first spec */
	uint32_t next;
	char target_type[16];
};

_Static_assert(sizeof(struct dm_hdr) == 312, "struct dm_ioctl is 312 bytes");
_Static_assert(sizeof(struct dm_spec) == 40, "struct dm_target_spec is 40 bytes");

#define DM_IOCTL_TYPE 0xfd
#define DM_CMD(n) _IOWR(DM_IOCTL_TYPE, n, struct dm_hdr)
#define DM_DEV_CREATE DM_CMD(3)
#define DM_DEV_REMOVE DM_CMD(4)
#define DM_DEV_SUSPEND DM_CMD(6)
#define DM_TABLE_LOAD DM_CMD(9)
#define DM_TABLE_STATUS DM_CMD(12)
#define DM_STATUS_TABLE_FLAG (1u << 4)
#define DM_BUFFER_FULL_FLAG (1u << 8)

/* Interface 4.0.0: every call here is as old as that, and the kernel
 * takes any minor up to its own. */
static void hdr_init(struct dm_hdr *h, size_t size, const char *name)
{
	memset(h, 0, sizeof *h);
	h->version[0] = 4;
	h->data_size = (uint32_t)size;
	h->data_start = sizeof *h;
	strncpy(h->name, name, sizeof h->name - 1);
}

static int dm_call(const char *control, unsigned long req, struct dm_hdr *h)
{
	int fd = open(control, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = ioctl(fd, req, h) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int dmctl_table(const char *control, const char *name, struct dmctl_target *out, int max)
{
	/* A table of linear and striped targets is small; the kernel says
	 * when a buffer was too small, and then one four times larger. */
	for (size_t size = 16384; size <= (1u << 20); size *= 4) {
		struct dm_hdr *h = calloc(1, size);
		if (!h)
			return -ENOMEM;
		hdr_init(h, size, name);
		h->flags = DM_STATUS_TABLE_FLAG;
		int r = dm_call(control, DM_TABLE_STATUS, h);
		if (r == 0 && (h->flags & DM_BUFFER_FULL_FLAG)) {
			free(h);
			continue;
		}
		if (r < 0) {
			free(h);
			return r;
		}
		if (h->target_count > (uint32_t)max) {
			free(h);
			return -E2BIG;
		}
		/* Everything the kernel wrote is checked against the buffer. */
		const char *base = (const char *)h + h->data_start;
		size_t avail = h->data_start <= size ? size - h->data_start : 0;
		size_t at = 0;
		int n = (int)h->target_count;
		for (int i = 0; i < n; i++) {
			struct dm_spec sp;
			if (at > avail || avail - at < sizeof sp) {
				free(h);
				return -EIO;
			}
			memcpy(&sp, base + at, sizeof sp);
			const char *params = base + at + sizeof sp;
			size_t room = avail - at - sizeof sp;
			size_t pl = strnlen(params, room);
			if (pl == room || pl >= sizeof out[i].params) {
				free(h);
				return -EIO;
			}
			out[i].start = sp.sector_start;
			out[i].len = sp.length;
			memcpy(out[i].type, sp.target_type, sizeof out[i].type);
			out[i].type[sizeof out[i].type - 1] = 0;
			memcpy(out[i].params, params, pl + 1);
			if (i + 1 < n && sp.next <= at) {
				free(h);
				return -EIO;
			}
			at = sp.next;
		}
		free(h);
		return n;
	}
	return -E2BIG;
}

int dmctl_remove(const char *control, const char *name)
{
	struct dm_hdr h;

	hdr_init(&h, sizeof h, name);
	return dm_call(control, DM_DEV_REMOVE, &h);
}

/* The load's buffer: the header, then each spec with its parameters,
 * NUL-ended and padded to 8 bytes (the next spec must be aligned). */
static int load(const char *control, const char *name, const struct dmctl_target *t, int n)
{
	size_t size = sizeof(struct dm_hdr);
	for (int i = 0; i < n; i++)
		size += sizeof(struct dm_spec) + ((strlen(t[i].params) + 1 + 7) & ~(size_t)7);
	char *buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	struct dm_hdr *h = (struct dm_hdr *)buf;
	hdr_init(h, size, name);
	h->target_count = (uint32_t)n;
	size_t at = sizeof *h;
	for (int i = 0; i < n; i++) {
		struct dm_spec sp;
		size_t pl = (strlen(t[i].params) + 1 + 7) & ~(size_t)7;
		memset(&sp, 0, sizeof sp);
		sp.sector_start = t[i].start;
		sp.length = t[i].len;
		sp.next = (uint32_t)(sizeof sp + pl);
		strncpy(sp.target_type, t[i].type, sizeof sp.target_type - 1);
		memcpy(buf + at, &sp, sizeof sp);
		memcpy(buf + at + sizeof sp, t[i].params, strlen(t[i].params));
		at += sizeof sp + pl;
	}
	int r = dm_call(control, DM_TABLE_LOAD, h);
	free(buf);
	return r;
}

int dmctl_create(const char *control, const char *name, const struct dmctl_target *t, int n,
		 unsigned *major, unsigned *minor)
{
	struct dm_hdr h;

	hdr_init(&h, sizeof h, name);
	int r = dm_call(control, DM_DEV_CREATE, &h);
	if (r < 0)
		return r;
	r = load(control, name, t, n);
	if (!r) {
		/* DM_DEV_SUSPEND without DM_SUSPEND_FLAG is resume: it swaps
		 * the loaded table in and the device comes alive. */
		hdr_init(&h, sizeof h, name);
		r = dm_call(control, DM_DEV_SUSPEND, &h);
	}
	if (r < 0) {
		dmctl_remove(control, name);
		return r;
	}
	/* huge_encode_dev: minor's low byte, major, then minor's high bits. */
	*major = (unsigned)((h.dev & 0xfff00) >> 8);
	*minor = (unsigned)((h.dev & 0xff) | ((h.dev >> 12) & 0xfff00));
	return 0;
}
