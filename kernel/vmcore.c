#include "vmcore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "../arch/arch.h"
#include "diskdump.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* Each reads after "FILE is ": one message names what the file is. */
const char *vmcore_strerror(enum vmcore_err e)
{
	static const char *const names[] = {
		[VMC_OK] = "ok",
		[VMC_NOT_ELF] = "not an ELF file",
		[VMC_NOT_CORE] = "an ELF file, but not a core dump (ET_CORE)",
		[VMC_BAD_CLASS] = "not a 64-bit little-endian ELF core",
		[VMC_NO_VMCOREINFO] = "a core file without a VMCOREINFO note: not a kernel vmcore",
		[VMC_BAD_HEADERS] = "a core file whose program headers are unreadable or out of bounds",
		[VMC_NO_LOADS] = "a core file in which no PT_LOAD segment holds memory",
		[VMC_NOT_FILE] = "not a regular file or block device",
		[VMC_KDUMP] = "a kdump-compressed file, not an ELF vmcore",
		[VMC_BAD_KDUMP] = "a kdump-compressed file whose headers do not read "
				  "(damaged, or a variant kdumpinit does not read)",
		[VMC_KDUMP_CODEC] = "a kdump-compressed file whose pages are compressed with LZO, "
				    "snappy or zstd, which kdumpinit does not read (zlib or raw only)",
	};
	return (unsigned)e < ARRAY_SIZE(names) ? names[e] : "?";
}

int note_next(const uint8_t *p, size_t len, size_t *off, struct note *n)
{
	size_t o = *off;

	if (o > len || len - o < 12)
		return 0;
	uint32_t nsz, dsz;
	memcpy(&nsz, p + o, 4);
	memcpy(&dsz, p + o + 4, 4);
	memcpy(&n->type, p + o + 8, 4);
	size_t nalign = ((size_t)nsz + 3) & ~(size_t)3;
	size_t dalign = ((size_t)dsz + 3) & ~(size_t)3;
	if (nalign > len - o - 12 || dalign > len - o - 12 - nalign)
		return 0;
	if (nsz == 0 && dsz == 0 && n->type == 0)
		return 0;	/* zero padding after the last note */
	n->name = (const char *)p + o + 12;
	n->namesz = nsz;
	n->desc = p + o + 12 + nalign;
	n->descsz = dsz;
	*off = o + 12 + nalign + dalign;
	return 1;
}

/* Keeps a copy of the first VMCOREINFO note of one PT_NOTE blob. */
static void find_vmcoreinfo(struct vmcore *vc, const uint8_t *p, size_t len)
{
	struct note n;

	for (size_t off = 0; !vc->vmcoreinfo && note_next(p, len, &off, &n);) {
		if (n.namesz != 11 || memcmp(n.name, "VMCOREINFO", 11))
			continue;
		vc->vmcoreinfo = malloc(n.descsz + 1);
		if (vc->vmcoreinfo) {
			memcpy(vc->vmcoreinfo, n.desc, n.descsz);
			vc->vmcoreinfo[n.descsz] = 0;
			/* The text is NUL-padded in the kernel's buffer. */
			vc->vmcoreinfo_len = strlen(vc->vmcoreinfo);
		}
	}
}

/* A PT_LOAD that breaks the rule the dump's readers apply (segment_valid)
 * is repaired or dropped (segment_repair), and said: written as it is,
 * it would make the whole dump unreadable. 0 when it is dropped. */
static int fix_segment(struct vmcore *vc, const char *path, struct kdi_segment *s, size_t phdr)
{
	struct kdi_segment was = *s;
	int c = segment_repair(s);

	if (c == 0)
		return 1;
	if (c < 0)
		vc->seg_dropped++;
	else
		vc->seg_repaired++;
	warn("%s: program header %zu (PT_LOAD at physical %#llx, virtual %#llx, %#llx bytes) %s",
	     path, phdr, (unsigned long long)was.paddr, (unsigned long long)was.vaddr,
	     (unsigned long long)was.memsz,
	     c < 0 ? "reaches past any physical address (2^56): left out of the dump" :
	     "has a virtual range that wraps: kept without a virtual address");
	return c > 0;
}

int vmcore_open(struct vmcore *vc, const char *path, enum vmcore_err *why)
{
	int ret = -EINVAL;
	Elf *elf = NULL;
	size_t phnum;
	GElf_Ehdr eh;

	memset(vc, 0, sizeof *vc);
	*why = VMC_OK;
	vc->fd = open_file_or_blockdev(path, O_RDONLY | O_CLOEXEC, 0, NULL);
	if (vc->fd == -ENOTBLK || vc->fd == -EISDIR) {
		*why = VMC_NOT_FILE;
		goto fail;
	}
	if (vc->fd < 0) {
		ret = vc->fd;
		goto fail;
	}
	int64_t sz = fd_size(vc->fd, NULL);
	if (sz < 0) {
		ret = (int)sz;
		goto fail;
	}
	vc->file_size = sz;
	struct statfs fs;
	vc->is_proc = fstatfs(vc->fd, &fs) == 0 && fs.f_type == 0x9fa0;	/* PROC_SUPER_MAGIC */

	elf_version(EV_CURRENT);
	elf = elf_begin(vc->fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		char sig[8];
		*why = read_full_at(vc->fd, sig, sizeof sig, 0) == sizeof sig &&
		       !memcmp(sig, DISKDUMP_SIGNATURE, sizeof sig) ? VMC_KDUMP : VMC_NOT_ELF;
		goto fail;
	}
	if (!gelf_getehdr(elf, &eh)) {
		*why = VMC_NOT_ELF;
		goto fail;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		*why = VMC_BAD_CLASS;
		goto fail;
	}
	if (eh.e_type != ET_CORE) {
		*why = VMC_NOT_CORE;
		goto fail;
	}
	if (elf_getphdrnum(elf, &phnum) < 0 || phnum == 0 || phnum > KDI_MAX_SEGMENTS) {
		*why = VMC_BAD_HEADERS;
		goto fail;
	}
	vc->e_machine = eh.e_machine;
	vc->seg = calloc(phnum, sizeof *vc->seg);
	vc->seg_offset = calloc(phnum, sizeof *vc->seg_offset);
	vc->seg_fill = calloc(phnum, sizeof *vc->seg_fill);
	if (!vc->seg || !vc->seg_offset || !vc->seg_fill) {
		ret = -ENOMEM;
		goto fail;
	}

	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, i, &ph)) {
			*why = VMC_BAD_HEADERS;
			goto fail;
		}
		if (ph.p_type == PT_NOTE && ph.p_filesz == 0) {
			continue;	/* nothing to read; realloc(p, 0) would free p */
		} else if (ph.p_type == PT_NOTE) {
			if (ph.p_filesz > KDI_NOTES_MAX || ph.p_offset > vc->file_size ||
			    ph.p_filesz > vc->file_size - ph.p_offset) {
				*why = VMC_BAD_HEADERS;
				goto fail;
			}
			/* All notes go into one NOTES chunk: more than a chunk
			 * holds would be a capture that cannot write even its
			 * metadata. Keep the notes that fit. */
			if (ph.p_filesz > KDI_NOTES_MAX - vc->notes_len) {
				warn("%s: program header %zu (PT_NOTE, %llu bytes) would make the notes "
				     "larger than a chunk holds (64 MiB): left out", path, i,
				     (unsigned long long)ph.p_filesz);
				continue;
			}
			uint8_t *n = realloc(vc->notes, vc->notes_len + ph.p_filesz);
			if (!n) {
				ret = -ENOMEM;
				goto fail;
			}
			vc->notes = n;
			ssize_t got = read_full_at(vc->fd, n + vc->notes_len, ph.p_filesz, ph.p_offset);
			if (got < 0) {
				ret = (int)got;
				goto fail;
			}
			if ((uint64_t)got != ph.p_filesz) {
				*why = VMC_BAD_HEADERS;
				goto fail;
			}
			find_vmcoreinfo(vc, n + vc->notes_len, ph.p_filesz);
			vc->notes_len += ph.p_filesz;
		} else if (ph.p_type == PT_LOAD) {
			struct kdi_segment *s = &vc->seg[vc->nr_seg];
			if (ph.p_filesz > ph.p_memsz || ph.p_offset + ph.p_filesz < ph.p_offset) {
				*why = VMC_BAD_HEADERS;
				goto fail;
			}
			s->paddr = ph.p_paddr;
			s->vaddr = ph.p_vaddr;
			s->memsz = ph.p_memsz;
			s->filesz = ph.p_filesz;
			s->p_flags = ph.p_flags;
			if (!fix_segment(vc, path, s, i))
				continue;
			vc->seg_offset[vc->nr_seg] = ph.p_offset;
			vc->seg_fill[vc->nr_seg] = s->filesz;
			/* A copy cut short keeps what it has; the dump says so. */
			if (ph.p_offset >= vc->file_size) {
				if (s->filesz)
					vc->truncated = 1;
				s->filesz = 0;
			} else if (s->filesz > vc->file_size - ph.p_offset) {
				s->filesz = vc->file_size - ph.p_offset;
				vc->truncated = 1;
			}
			vc->nr_seg++;
		}
	}
	if (!vc->vmcoreinfo) {
		*why = VMC_NO_VMCOREINFO;
		goto fail;
	}
	if (!vc->nr_seg) {
		*why = VMC_NO_LOADS;
		goto fail;
	}

	/* PAGESIZE says; without it (or with nonsense), the machine's base
	 * page, and 4096 for a machine we have no table for. */
	const struct arch_ops *arch = arch_lookup(vc->e_machine);
	uint64_t fallback = arch && arch->page_size ? arch->page_size : 4096;
	uint64_t ps = fallback;
	char v[32];
	if (vmcoreinfo_get(vc->vmcoreinfo, "PAGESIZE", v, sizeof v) == 0 &&
	    (parse_u64(v, 0, &ps) < 0 || ps < 4096 || ps > 65536 || (ps & (ps - 1))))
		ps = fallback;
	vc->page_size = ps;
	elf_end(elf);
	return 0;
fail:
	if (elf)
		elf_end(elf);
	vmcore_close(vc);
	return ret;
}

int vmcore_open_saved(struct vmcore *vc, const char *path, enum vmcore_err *why)
{
	int r = vmcore_open(vc, path, why);

	if (r == 0)
		vc->zero_fill = 1;
	else if (*why == VMC_KDUMP)
		r = diskdump_open(vc, path, why);
	return r;
}

void vmcore_close(struct vmcore *vc)
{
	if (vc->dd)
		diskdump_close(vc->dd);
	if (vc->fd >= 0)
		close(vc->fd);
	free(vc->seg);
	free(vc->seg_offset);
	free(vc->seg_fill);
	free(vc->notes);
	free(vc->vmcoreinfo);
	memset(vc, 0, sizeof *vc);
	vc->fd = -1;
}
