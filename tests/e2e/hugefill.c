/*
 * hugefill: memory load for a test guest that busybox cannot make:
 * hugetlb pages and transparent huge pages holding non-zero data, so that
 * a dump level that excludes user data (8) has something to drop that a
 * zero-page check (1) would not drop anyway.
 *
 *   hugefill HUGETLB_MB THP_MB [READY_FILE]
 *
 * Maps HUGETLB_MB of MAP_HUGETLB anonymous memory (2 MiB pages from the
 * pool, vm.nr_hugepages must be set first) and THP_MB of anonymous memory
 * with MADV_HUGEPAGE, fills every 4 KiB of both with a distinct pattern,
 * writes READY_FILE (if given) and sleeps until killed, keeping it all
 * mapped. A part that cannot be mapped is reported and skipped.
 *
 *   hugefill --unit PFN
 *
 * Prints how many pages a dump tool judges together with PFN: a compound
 * head takes its tails with it (a hwpoisoned head drops 2^order pages, as
 * makedumpfile does), so 1 plus the tails that follow, from
 * /proc/kpageflags; 1 for any other page. Exit 2 (nothing printed) when
 * the page is not marked hwpoison.
 * Build: cc -static -O2 -o hugefill hugefill.c
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define MB (1ul << 20)

static void fill(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1;

	for (size_t i = 0; i < len; i += sizeof x) {
		/* xorshift64: never zero, so no page ends up all zero */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, sizeof x);
	}
}

static int map(const char *what, size_t len, int flags, int advice, uint64_t seed)
{
	if (!len)
		return 0;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "hugefill: mmap %zu MiB %s: %m\n", len / MB, what);
		return -1;
	}
	if (advice && madvise(p, len, advice) != 0)
		fprintf(stderr, "hugefill: madvise %s: %m (continuing)\n", what);
	fill(p, len, seed);
	printf("hugefill: %zu MiB %s filled at %p\n", len / MB, what, p);
	return 0;
}

#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_HWPOISON 19

static int unit(const char *arg)
{
	uint64_t pfn = strtoull(arg, NULL, 0), f, n = 1;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0 || pread(fd, &f, 8, pfn * 8) != 8) {
		perror("/proc/kpageflags");
		return 1;
	}
	/* Only a page the kernel marked: a refused recovery ("unhandlable
	 * page") may or may not have marked it, and the host must know. */
	if (!(f >> KPF_HWPOISON & 1)) {
		close(fd);
		return 2;
	}
	if (f >> KPF_COMPOUND_HEAD & 1)
		while (n < 1u << 18 && pread(fd, &f, 8, (pfn + n) * 8) == 8 &&
		       (f >> KPF_COMPOUND_TAIL & 1))
			n++;
	printf("%llu\n", (unsigned long long)n);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--unit"))
		return unit(argv[2]);
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: hugefill HUGETLB_MB THP_MB [READY_FILE]\n");
		return 2;
	}
	size_t huge = strtoul(argv[1], NULL, 0) * MB, thp = strtoul(argv[2], NULL, 0) * MB;
	int bad = 0;

	bad |= map("hugetlb", huge, MAP_HUGETLB, 0, 0x9e3779b97f4a7c15ull);
	bad |= map("THP anon", thp, 0, MADV_HUGEPAGE, 0xd1b54a32d192ed03ull);
	fflush(stdout);
	if (argc == 4) {
		FILE *f = fopen(argv[3], "w");
		if (!f || fprintf(f, "%s\n", bad ? "partial" : "ok") < 0 || fclose(f) != 0) {
			perror(argv[3]);
			return 1;
		}
	}
	for (;;)
		pause();
}
