/* Test-only first init of the dedicated crash kernel (run.sh
 * --crash-kernel): testinit's raw copy without busybox, so that the copy
 * costs the reservation 20 KB, not 2 MB, and the floor measured with a
 * raw copy is the product's. Copies /proc/vmcore byte for byte to the disk
 * with serial kdump-raw, fsyncs, then execs /init (kdumpinit, built into
 * the kernel) as PID 1, or reboots with e2e.mode=raw. Its lines are
 * testinit's, which run.sh reads. Built static with musl by run.sh. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double up(void)
{
	struct timespec t;
	clock_gettime(CLOCK_BOOTTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void bye(const char *why)
{
	if (why)
		printf("e2e-testinit: FAIL: %s\n", why);
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	for (;;)
		pause();
}

static long meminfo(const char *key)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	fclose(f);
	return v;
}

/* /sys/block/NAME/serial == kdump-raw, retried while disks appear. */
static int find_raw(char *name, size_t sz)
{
	for (int i = 0; i < 50; i++) {
		DIR *d = opendir("/sys/block");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char p[300], s[64] = "";
			snprintf(p, sizeof p, "/sys/block/%s/serial", e->d_name);
			FILE *f = fopen(p, "r");
			if (!f)
				continue;
			if (fgets(s, sizeof s, f) && !strncmp(s, "kdump-raw", 9) &&
			    (s[9] == '\n' || !s[9])) {
				snprintf(name, sz, "/dev/%s", e->d_name);
				fclose(f);
				closedir(d);
				return 0;
			}
			fclose(f);
		}
		if (d)
			closedir(d);
		usleep(200000);
	}
	return -1;
}

int main(void)
{
	static char buf[1 << 20];
	char dev[300], cl[4096] = "";
	int raw_mode = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	int c = open("/dev/console", O_RDWR);
	if (c >= 0) {
		dup2(c, 1);
		dup2(c, 2);
	}
	printf("e2e-testinit: up at %.2fs; MemTotal:%ldK MemAvailable:%ldK\n", up(),
	       meminfo("MemTotal:"), meminfo("MemAvailable:"));
	FILE *f = fopen("/proc/cmdline", "r");
	if (f) {
		if (!fgets(cl, sizeof cl, f))
			cl[0] = 0;
		fclose(f);
	}
	raw_mode = strstr(cl, "e2e.mode=raw") != NULL;

	if (find_raw(dev, sizeof dev) < 0)
		bye("no disk with serial kdump-raw");
	struct stat st;
	int in = open("/proc/vmcore", O_RDONLY);
	if (in < 0 || fstat(in, &st) < 0)
		bye("cannot open /proc/vmcore");
	int out = open(dev, O_WRONLY);
	if (out < 0)
		bye("cannot open the raw disk");
	printf("e2e-testinit: copying /proc/vmcore (%lld bytes) to %s at %.2fs\n",
	       (long long)st.st_size, dev, up());
	double t0 = up();
	long long done = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0)
			bye("raw copy: read error");
		if (n == 0)
			break;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k <= 0)
				bye("raw copy: write error");
			w += k;
		}
		done += n;
	}
	if (done != (long long)st.st_size || fsync(out) < 0)
		bye("raw copy: short, or fsync failed");
	close(out);
	close(in);
	printf("e2e-testinit: raw copy done in %.1fs\n", up() - t0);
	if (raw_mode) {
		printf("e2e-testinit: raw mode: rebooting\n");
		bye(NULL);
	}
	printf("e2e-testinit: exec /init (kdumpinit) at %.2fs\n", up());
	fflush(stdout);
	execl("/init", "/init", (char *)NULL);
	bye("exec /init failed");
	return 1;
}
