/*
 * plainscan: does a dump device hold any page of a vmcore in the clear?
 *
 *   plainscan VMCORE IMAGE... [--text STRING]...
 *
 * Every 4 KiB page of VMCORE's PT_LOAD data that is not all zeros is looked
 * for at EVERY byte offset of each IMAGE (a sealed dump device must hold
 * none).
 * Each page is indexed by an 8-byte anchor word inside it (the first one
 * with at least five distinct bytes, else its first non-zero word); IMAGE
 * is walked one byte at a time (its data extents: holes read as zeros and
 * hold no non-zero page), a bitmap of the anchors' hashes is the
 * prefilter, and a hit is confirmed by comparing the whole page at the
 * offset the anchor implies. Each STRING is looked for too (memmem).
 *
 * Prints, per IMAGE, "IMAGE: pages N indexed (D distinct anchors), F found
 * at O offsets", the first offsets found, and "IMAGE: text COUNT STRING"
 * per STRING. Exit 0,
 * whatever was found (the caller judges: a sealed device must show 0, a
 * device in the clear must show some); 2 when a file cannot be read.
 * Build: cc -O2 -o plainscan plainscan.c
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096
#define BITS 24

struct pg {
	const uint8_t *p;	/* the page in VMCORE's mapping */
	uint32_t a;		/* its anchor's offset in the page */
	uint32_t next;		/* next page with the same anchor word, or 0 */
};

static struct pg *pages;	/* 1-based */
static uint32_t npages;
static uint64_t *slot_w;	/* open addressing: anchor word -> first page */
static uint32_t *slot_p, nslots, ndistinct;
static uint8_t *bitmap;

static uint64_t mix(uint64_t w)
{
	return w * 0x9E3779B97F4A7C15ull;
}

static void *map(const char *path, size_t *len, int *fd)
{
	struct stat st;

	*fd = open(path, O_RDONLY);
	if (*fd < 0 || fstat(*fd, &st) < 0) {
		perror(path);
		exit(2);
	}
	*len = st.st_size;
	if (!*len)
		return NULL;
	void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, *fd, 0);
	if (m == MAP_FAILED) {
		perror(path);
		exit(2);
	}
	return m;
}

static int anchor(const uint8_t *p, uint32_t *a)
{
	int first = -1;

	for (uint32_t o = 0; o + 8 <= PAGE; o++) {
		uint64_t w;
		int n = 0;
		memcpy(&w, p + o, 8);
		if (!w)
			continue;
		for (int k = 0; k < 8; k++) {
			int j = 0;
			while (j < k && p[o + j] != p[o + k])
				j++;
			n += j == k;
		}
		if (first < 0)
			first = (int)o;
		if (n >= 5) {
			*a = o;
			return 1;
		}
	}
	if (first < 0)
		return 0;	/* all zeros */
	*a = (uint32_t)first;
	return 1;
}

static void add(const uint8_t *p, uint32_t a)
{
	uint64_t w;
	memcpy(&w, p + a, 8);
	uint32_t i = (uint32_t)(mix(w) >> 32) & (nslots - 1);
	while (slot_p[i] && slot_w[i] != w)
		i = (i + 1) & (nslots - 1);
	npages++;
	pages[npages] = (struct pg){ p, a, slot_p[i] };
	if (!slot_p[i])
		ndistinct++;
	slot_w[i] = w;
	slot_p[i] = npages;
	uint64_t h = mix(w) >> (64 - BITS);
	bitmap[h >> 3] |= (uint8_t)(1u << (h & 7));
}

static uint32_t lookup(uint64_t w)
{
	uint32_t i = (uint32_t)(mix(w) >> 32) & (nslots - 1);
	while (slot_p[i]) {
		if (slot_w[i] == w)
			return slot_p[i];
		i = (i + 1) & (nslots - 1);
	}
	return 0;
}

static int scan(const char *path, const uint8_t *v, char **texts, int ntexts)
{
	size_t dlen;
	int dfd;
	const uint8_t *d = map(path, &dlen, &dfd);

	/* The device, one byte offset at a time, over its data extents. */
	uint64_t found = 0, offsets = 0, shown = 0;
	uint8_t *hit = calloc(npages + 1, 1);
	uint64_t pos = 0;
	if (!hit) {
		fprintf(stderr, "plainscan: out of memory\n");
		return 2;
	}
	while (d && pos < dlen) {
		off_t s = lseek(dfd, (off_t)pos, SEEK_DATA);
		if (s < 0)
			break;
		off_t e = lseek(dfd, s, SEEK_HOLE);
		if (e < 0)
			e = (off_t)dlen;
		for (uint64_t i = (uint64_t)s; i + 8 <= (uint64_t)e && i + 8 <= dlen; i++) {
			uint64_t w;
			memcpy(&w, d + i, 8);
			uint64_t h = mix(w) >> (64 - BITS);
			if (!(bitmap[h >> 3] & (1u << (h & 7))))
				continue;
			int any = 0;
			for (uint32_t k = lookup(w); k; k = pages[k].next) {
				if (i < pages[k].a || i - pages[k].a + PAGE > dlen)
					continue;
				if (memcmp(d + i - pages[k].a, pages[k].p, PAGE))
					continue;
				if (!hit[k]++)
					found++;
				if (!any++ && shown++ < 5)
					printf("%s: found a page at image offset %llu (vmcore offset %llu)\n", path,
					       (unsigned long long)(i - pages[k].a),
					       (unsigned long long)(pages[k].p - v));
			}
			offsets += any != 0;
		}
		pos = (uint64_t)e;
	}
	printf("%s: pages %u indexed (%u distinct anchors), %llu found at %llu offsets\n", path, npages,
	       ndistinct, (unsigned long long)found, (unsigned long long)offsets);
	for (int i = 0; i < ntexts; i++) {
		size_t n = strlen(texts[i]);
		uint64_t count = 0;
		const uint8_t *p = d, *end = d ? d + dlen : NULL;
		while (n && p && p < end && (p = memmem(p, (size_t)(end - p), texts[i], n))) {
			count++;
			p++;
		}
		printf("%s: text %llu %s\n", path, (unsigned long long)count, texts[i]);
	}
	free(hit);
	if (d)
		munmap((void *)d, dlen);
	close(dfd);
	return 0;
}

int main(int argc, char **argv)
{
	size_t vlen;
	int vfd, nimg = 0, ntexts = 0;
	char **imgs = calloc((size_t)argc, sizeof *imgs), **texts = calloc((size_t)argc, sizeof *texts);

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--text") && i + 1 < argc)
			texts[ntexts++] = argv[++i];
		else
			imgs[nimg++] = argv[i];
	}
	if (argc < 3 || !nimg) {
		fprintf(stderr, "usage: plainscan VMCORE IMAGE... [--text STRING]...\n");
		return 2;
	}
	const uint8_t *v = map(argv[1], &vlen, &vfd);
	const Elf64_Ehdr *eh = (const void *)v;
	if (!v || vlen < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > vlen) {
		fprintf(stderr, "plainscan: %s: not an ELF64 vmcore\n", argv[1]);
		return 2;
	}
	const Elf64_Phdr *ph = (const void *)(v + eh->e_phoff);
	uint64_t total = 0;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			total += ph[i].p_filesz / PAGE;
	nslots = 1;
	while (nslots < 2 * total + 2)
		nslots <<= 1;
	pages = calloc(total + 1, sizeof *pages);
	slot_w = calloc(nslots, sizeof *slot_w);
	slot_p = calloc(nslots, sizeof *slot_p);
	bitmap = calloc(1, (size_t)1 << (BITS - 3));
	if (!pages || !slot_w || !slot_p || !bitmap) {
		fprintf(stderr, "plainscan: out of memory\n");
		return 2;
	}
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		uint64_t end = ph[i].p_offset + ph[i].p_filesz;
		if (end > vlen) {
			fprintf(stderr, "plainscan: %s: a PT_LOAD runs past the file's end\n", argv[1]);
			return 2;
		}
		for (uint64_t o = ph[i].p_offset; o + PAGE <= end; o += PAGE) {
			uint32_t a;
			if (anchor(v + o, &a))
				add(v + o, a);
		}
	}
	int rc = 0;
	for (int i = 0; i < nimg; i++)
		rc |= scan(imgs[i], v, texts, ntexts);
	return rc;
}
