#include "sigclean.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

/* A lock-free atomic is what a handler may read (C11 7.14.1.1). */
static const struct sigclean *_Atomic armed;
static atomic_int installed;

static void on_signal(int sig)
{
	const struct sigclean *l = atomic_load(&armed);

	if (l)
		for (unsigned i = 0; i < l->n && i < SIGCLEAN_MAX; i++)
			unlinkat(l->e[i].dfd, l->e[i].name, l->e[i].flags);
	/* End by the signal itself: its default action, once this handler
	 * returns and the signal is no longer blocked. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

int sigclean_arm(const struct sigclean *list)
{
	if (!atomic_exchange(&installed, 1)) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		/* One removal at a time: a second signal waits for the first. */
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			sigaddset(&sa.sa_mask, sigs[i]);
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
			struct sigaction old;
			/* An ignored signal (nohup) stays ignored. */
			if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
				continue;
			if (sigaction(sigs[i], &sa, NULL) < 0) {
				atomic_store(&installed, 0);
				return -errno;
			}
		}
	}
	atomic_store(&armed, list);
	return 0;
}

void sigclean_disarm(void)
{
	atomic_store(&armed, NULL);
}

void sigclean_hold(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(&s, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

void sigclean_release(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}
