#include "memory.h"

const char *const kdi_class_name[KDI_EX_NCLASSES] = {
	[KDI_EX_ZERO] = "zero",
	[KDI_EX_CACHE] = "cache",
	[KDI_EX_CACHE_PRIVATE] = "cache-private",
	[KDI_EX_USER] = "user",
	[KDI_EX_FREE] = "free",
	[KDI_EX_HWPOISON] = "hwpoison",
	[KDI_EX_OFFLINE] = "offline",
	[KDI_EX_UNREADABLE] = "unreadable",
};

int segment_valid(const struct kdi_segment *s)
{
	return s->filesz <= s->memsz && s->memsz <= UINT64_MAX - s->vaddr &&
	       s->paddr <= KDI_PADDR_LIMIT && s->memsz <= KDI_PADDR_LIMIT - s->paddr;
}

int segment_repair(struct kdi_segment *s)
{
	if (segment_valid(s))
		return 0;
	if (s->paddr > KDI_PADDR_LIMIT || s->memsz > KDI_PADDR_LIMIT - s->paddr)
		return -1;
	if (s->memsz > UINT64_MAX - s->vaddr)
		s->vaddr = 0;
	if (s->filesz > s->memsz)
		s->filesz = s->memsz;
	return 1;
}

