/* Taking the crash kernel out (kdumpinit arm --unload), on every kernel:
 * kexec_file_load's unload, else kexec_load's, else kexec-tools'. */
#ifndef KDI_UNLOAD_H
#define KDI_UNLOAD_H

/* The three ways, each 0 or -errno, given CTX. Passed in so that the
 * order can be tested without root and without unloading anything. */
struct unload_ops {
	int (*file)(void *ctx);		/* kexec_file_load(KEXEC_FILE_UNLOAD | KEXEC_FILE_ON_CRASH) */
	int (*load)(void *ctx);		/* kexec_load with no segments, KEXEC_ON_CRASH */
	int (*tools)(void *ctx);	/* kexec-tools' kexec -p -u */
	void *ctx;
};

enum unload_how { UNLOAD_FILE = 1, UNLOAD_LOAD, UNLOAD_TOOLS };

/* Tries them in that order until one works: which one did (enum
 * unload_how), or the last -errno, with one console line that names
 * each failure. */
int unload_crash_kernel(const struct unload_ops *ops);
/* The way unload_crash_kernel's result names ("kexec_load", ...). */
const char *unload_how_name(int how);

/* The real syscalls (ctx unused). */
int unload_by_file(void *ctx);
int unload_by_load(void *ctx);

#endif
