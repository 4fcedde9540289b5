/* An ELF vmcore (/proc/vmcore or a copy): headers, notes and VMCOREINFO.
 * Opening maps nothing; the pipeline maps PT_LOAD windows itself. */
#ifndef KDI_VMCORE_H
#define KDI_VMCORE_H

#include <stddef.h>
#include <stdint.h>

#include "memory.h"
#include "vmcoreinfo.h"

/* Why a file is not usable as a vmcore, for one clear message. */
enum vmcore_err {
	VMC_OK = 0,
	VMC_NOT_ELF,		/* not an ELF file at all */
	VMC_NOT_CORE,		/* ELF, but not ET_CORE */
	VMC_BAD_CLASS,		/* not 64-bit little-endian */
	VMC_NO_VMCOREINFO,	/* a core file, but no VMCOREINFO note */
	VMC_BAD_HEADERS,	/* program headers unreadable or out of bounds */
	VMC_NO_LOADS,		/* no PT_LOAD with data */
	VMC_NOT_FILE,		/* a directory, character device, ... */
};
const char *vmcore_strerror(enum vmcore_err e);

struct vmcore {
	int fd;
	uint64_t file_size;
	uint16_t e_machine;
	uint32_t page_size;
	struct kdi_segment *seg;	/* PT_LOADs in file order */
	uint64_t *seg_offset;		/* file offset of each */
	uint32_t nr_seg;
	uint8_t *notes;			/* all PT_NOTE bytes, concatenated */
	size_t notes_len;
	char *vmcoreinfo;		/* NUL-terminated copy of the note text */
	size_t vmcoreinfo_len;
	int truncated;			/* some PT_LOAD ran past the file end */
	uint32_t seg_repaired;		/* PT_LOADs made valid (segment_repair) */
	uint32_t seg_dropped;		/* PT_LOADs left out: nothing valid in them */
	int is_proc;			/* /proc/vmcore itself, not a copy */
};

/* Returns 0, or -errno for I/O (with *why VMC_OK), or -EINVAL with *why
 * saying what the file is instead. */
int vmcore_open(struct vmcore *vc, const char *path, enum vmcore_err *why);
void vmcore_close(struct vmcore *vc);

/* ELF notes, walked with every length checked (they come from the
 * crashed kernel). *off starts at 0; returns 1 per note, 0 at the end or
 * at the first note that does not fit. */
struct note {
	const char *name;
	uint32_t namesz, type;
	const uint8_t *desc;
	uint32_t descsz;
};
int note_next(const uint8_t *p, size_t len, size_t *off, struct note *n);

#endif
