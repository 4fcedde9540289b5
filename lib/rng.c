#include "rng.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int rng_wait(unsigned timeout_ms)
{
	double until = now_mono() + timeout_ms / 1000.0;
	char b;

	for (;;) {
		if (getrandom(&b, 1, GRND_NONBLOCK) == 1)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (now_mono() >= until)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

int rng_credit(const void *buf, size_t n, unsigned bits)
{
	struct rand_pool_info *p = malloc(sizeof *p + n);
	int r = -ENOMEM;

	if (!p)
		return r;
	p->entropy_count = (int)bits;
	p->buf_size = (int)n;
	memcpy(p->buf, buf, n);
	int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		r = -errno;
	else {
		r = ioctl(fd, RNDADDENTROPY, p) < 0 ? -errno : 0;
		close(fd);
	}
	free(p);
	return r;
}
