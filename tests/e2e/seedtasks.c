/*
 * seedtasks: threads for the seeded memory load (seedload.sh), which
 * busybox cannot make.
 *
 *   seedtasks NPROC NTHREAD KIB SEED
 *
 * Starts NPROC processes of NTHREAD threads each (the main thread
 * included); every thread fills KIB KiB of anonymous memory with a
 * pattern drawn from SEED and its own number, then sleeps until killed.
 * Returns once every thread is up, leaving the processes running: each
 * thread is a task struct, a kernel stack and slab objects of its own,
 * which is what the debugger-page finder walks in a dump.
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
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: seedtasks NPROC NTHREAD KIB SEED\n");
		return 2;
	}
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
