/*
 * seedtasks: threads for the seeded memory load (seedload.sh), which
 * busybox cannot make.
 *
 *   seedtasks NPROC NTHREAD KIB SEED [PLANT]
 *
 * Starts NPROC processes of NTHREAD threads each (the main thread
 * included); every thread fills KIB KiB of anonymous memory with a
 * pattern drawn from SEED and its own number, then sleeps until killed.
 * Returns once every thread is up, leaving the processes running: each
 * thread is a task struct, a kernel stack and slab objects of its own,
 * which is what the debugger-page finder walks in a dump.
 *
 * PLANT (0-100, default 0): that percentage of the threads sleep with
 * their vector registers (SSE on x86_64, NEON on arm64) holding a word
 * from the top of the address space (ERR_PTR values, -256, -1, the last
 * page, the vsyscall page, list poison), drawn from SEED and the thread.
 * A sleeping task's registers are saved in its task_struct (x86_64: the
 * FPU state at its end), so the dump holds those words inside task
 * structs, as it does whenever a program leaves such a value there (a
 * byte mask of a string search, an error code): the finder's hang
 * was a word like that (0xffffffffffffff00 in a 6.12 task).
 * Build: cc -static -O2 -pthread -o seedtasks seedtasks.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t bytes;
static uint64_t seed;
static int ready_fd;
static long plant;

static const uint64_t top_words[] = {
	0xffffffffffffff00ull,	/* -256: a mask */
	0xfffffffffffffff4ull,	/* ERR_PTR(-ENOMEM) */
	0xffffffffffffffeaull,	/* ERR_PTR(-EINVAL) */
	0xfffffffffffff001ull,	/* ERR_PTR(-MAX_ERRNO) */
	0xffffffffffffffffull,	/* -1 */
	0xfffffffffffff000ull,	/* the last page */
	0xffffffffff600000ull,	/* the vsyscall page */
	0xdead000000000122ull,	/* LIST_POISON2 (x86_64's offset) */
};

/* Sleeps for good with every vector register holding v: the syscall is
 * made here, so that no library code runs between the loads and the
 * sleep (the registers are saved when the task is switched out). */
static void __attribute__((noreturn)) sleep_holding(uint64_t v)
{
	for (;;) {
#if defined(__x86_64__)
		__asm__ volatile("movq %0, %%xmm0\n\tpunpcklqdq %%xmm0, %%xmm0\n\t"
				 "movdqa %%xmm0, %%xmm1\n\tmovdqa %%xmm0, %%xmm2\n\tmovdqa %%xmm0, %%xmm3\n\t"
				 "movdqa %%xmm0, %%xmm4\n\tmovdqa %%xmm0, %%xmm5\n\tmovdqa %%xmm0, %%xmm6\n\t"
				 "movdqa %%xmm0, %%xmm7\n\tmovdqa %%xmm0, %%xmm8\n\tmovdqa %%xmm0, %%xmm9\n\t"
				 "movdqa %%xmm0, %%xmm10\n\tmovdqa %%xmm0, %%xmm11\n\tmovdqa %%xmm0, %%xmm12\n\t"
				 "movdqa %%xmm0, %%xmm13\n\tmovdqa %%xmm0, %%xmm14\n\tmovdqa %%xmm0, %%xmm15\n\t"
				 "movl $34, %%eax\n\tsyscall"	/* pause */
				 : : "r"(v)
				 : "rax", "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
				   "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
				   "xmm15");
#elif defined(__aarch64__)
		register uint64_t x0 __asm__("x0") = 0, x1 __asm__("x1") = 0, x2 __asm__("x2") = 0,
				  x3 __asm__("x3") = 0, x8 __asm__("x8") = 73;	/* ppoll, nothing */
		__asm__ volatile("dup v0.2d, %5\n\t"
				 "mov v1.16b, v0.16b\n\tmov v2.16b, v0.16b\n\tmov v3.16b, v0.16b\n\t"
				 "mov v4.16b, v0.16b\n\tmov v5.16b, v0.16b\n\tmov v6.16b, v0.16b\n\t"
				 "mov v7.16b, v0.16b\n\tmov v16.16b, v0.16b\n\tmov v17.16b, v0.16b\n\t"
				 "mov v18.16b, v0.16b\n\tmov v19.16b, v0.16b\n\tmov v20.16b, v0.16b\n\t"
				 "mov v21.16b, v0.16b\n\tmov v22.16b, v0.16b\n\tmov v23.16b, v0.16b\n\t"
				 "svc #0"
				 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x8)
				 : "r"(v)
				 : "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17",
				   "v18", "v19", "v20", "v21", "v22", "v23");
#else
		(void)v;
		pause();
#endif
	}
}

static void fill(unsigned char *p, size_t len, uint64_t x)
{
	x |= 1;
	for (size_t i = 0; i + sizeof x <= len; i += sizeof x) {
		/* xorshift64: never zero, so no page is all zero */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		*(uint64_t *)(p + i) = x;
	}
}

static void *thread(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		fill(p, bytes, seed * 0x9e3779b97f4a7c15ull + k);
	if (write(ready_fd, "", 1) != 1)
		_exit(1);
	/* Which threads plant, and what: spread over the threads by a
	 * multiplicative hash of the seed and the thread's number. */
	uint64_t h = (seed + k) * 0x9e3779b97f4a7c15ull;
	if ((long)((h >> 32) % 100) < plant)
		sleep_holding(top_words[(h >> 16) % (sizeof top_words / sizeof top_words[0])]);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: seedtasks NPROC NTHREAD KIB SEED [PLANT]\n");
		return 2;
	}
	plant = argc == 6 ? atol(argv[5]) : 0;
	long nproc = atol(argv[1]), nthr = atol(argv[2]);
	bytes = (size_t)atol(argv[3]) << 10;
	seed = strtoull(argv[4], NULL, 0);
	if (nproc < 1 || nthr < 1 || nproc * nthr > 4096 || !bytes)
		return 2;

	int fds[2];
	if (pipe(fds) < 0)
		return 1;
	for (long i = 0; i < nproc; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid)
			continue;
		close(fds[0]);
		ready_fd = fds[1];
		setsid();
		for (long t = 1; t < nthr; t++) {
			pthread_t th;
			pthread_attr_t a;
			pthread_attr_init(&a);
			/* Small stacks: the anonymous memory is the mapping. */
			pthread_attr_setstacksize(&a, 64 << 10);
			if (pthread_create(&th, &a, thread, (void *)(uintptr_t)(i * nthr + t))) {
				/* Said as up, so that the parent is not left
				 * waiting for threads that never come. */
				for (; t < nthr; t++)
					if (write(ready_fd, "", 1) != 1)
						_exit(1);
				break;
			}
		}
		thread((void *)(uintptr_t)(i * nthr));
	}
	close(fds[1]);
	/* One byte per thread that is up (or that could not start). */
	long up = 0;
	char c;
	while (up < nproc * nthr && read(fds[0], &c, 1) == 1)
		up++;
	printf("seedtasks: %ld threads in %ld processes\n", up, nproc);
	return 0;
}
