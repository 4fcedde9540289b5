/* Partition identity for PARTUUID=/PARTLABEL= selectors. The kernel's
 * sysfs has no PARTUUID, so read the parent disk's table (read-only).
 * GPT gives a GUID and a name; MBR gives "SSSSSSSS-PP" and no name. */
#ifndef KDI_GPT_H
#define KDI_GPT_H

#include <stddef.h>
#include <stdint.h>

struct gpt_part {
	char uuid[40];
	char name[80];		/* UTF-16LE name reduced to ASCII, '?' otherwise */
	int has_name;
};

/* Parses a table from memory: buf holds the disk's first `len` bytes, with
 * logical sectors of `sector` bytes. Used by gpt_lookup and the tests. */
int gpt_parse(const uint8_t *buf, size_t len, unsigned sector, unsigned partno,
	      struct gpt_part *out);
int gpt_lookup(const char *disk, unsigned partno, struct gpt_part *out);

#endif
