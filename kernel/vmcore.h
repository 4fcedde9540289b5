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
	VMC_NOT_FILE,		/* a directory, character device, FIFO, ... */
	VMC_KDUMP,		/* a kdump-compressed file, not an ELF */
	VMC_BAD_KDUMP,		/* one whose headers do not read (vmcore_open_saved) */
	VMC_KDUMP_CODEC,	/* one compressed with LZO, snappy or zstd */
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
	/* A dump read as a debugger reads it (vmcore_open_saved): */
	uint64_t *seg_fill;		/* p_filesz as the header says (filesz is less
					 * only where the file was cut short) */
	int zero_fill;			/* [seg_fill, memsz) of a PT_LOAD reads as zeros */
	struct diskdump *dd;		/* a kdump-compressed file: its pages, nr_seg 0 */
};

/* Returns 0, or -errno for I/O (with *why VMC_OK), or -EINVAL with *why
 * saying what the file is instead. A FIFO, socket or character device
 * is VMC_NOT_FILE at once (never waits for a writer). */
int vmcore_open(struct vmcore *vc, const char *path, enum vmcore_err *why);
/* A dump as a debugger reads it, for the readers of its memory through
 * kmem (`kdumpinit dmesg`); the capture reads ELF vmcores only. An ELF
 * vmcore, whose memory past a PT_LOAD's p_filesz (up to p_memsz) reads
 * as zeros, as ELF has it: `save --format elf` leaves out the pages a
 * dump does not hold that way, zero pages among them, and crash, drgn
 * and makedumpfile read them as zeros. Or a kdump-compressed file
 * (kernel/diskdump.h: `save --format kdump`, makedumpfile): its notes,
 * VMCOREINFO and pages, no segments. vmcore_open's results, and
 * VMC_BAD_KDUMP for a kdump-compressed file that does not read. */
int vmcore_open_saved(struct vmcore *vc, const char *path, enum vmcore_err *why);
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
