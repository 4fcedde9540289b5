/* What a signal that ends the process removes first: the output a
 * command is writing under a temporary name (save's OUTPUT.partial-XXXXXX,
 * save --dir's NAME.partial), so that an interrupted run leaves nothing
 * half-written behind. SIGINT, SIGTERM and SIGHUP remove what is armed and
 * then end the process by the same signal, as if it had not been caught
 * (a shell says 128 + N; a script running it stops as on any ^C). The
 * handler only calls unlinkat, sigaction and raise: async-signal-safe.
 * Like physmem's SIGBUS guard, this is process state of its own: a
 * signal's disposition belongs to the process. */
#ifndef KDI_SIGCLEAN_H
#define KDI_SIGCLEAN_H

#include <signal.h>

#define SIGCLEAN_MAX 16

/* unlinkat(dfd, name, flags) for each, in order (a directory's files,
 * then the directory with AT_REMOVEDIR). */
struct sigclean {
	unsigned n;
	struct { int dfd; const char *name; int flags; } e[SIGCLEAN_MAX];
};

/* Installs the handlers (once) and arms list, which must stay as it is,
 * names included, until disarmed. 0 or -errno (nothing armed). */
int sigclean_arm(const struct sigclean *list);
/* Nothing to remove from now on; the handlers stay. */
void sigclean_disarm(void);
/* Around the rename that publishes a temporary name: the three signals
 * held off in this thread (every other thread of the command has ended
 * by then), so that none removes what was just published; release lets
 * a pending one in, which ends the process. */
void sigclean_hold(sigset_t *old);
void sigclean_release(const sigset_t *old);

#endif
