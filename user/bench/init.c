/*
 * init - the benchmark driver, installed as /init of the benchmark
 * initramfs.  The same archive boots Trellis (which runs it from
 * /.trellis/argv) and Linux (rdinit=/init).
 *
 *   /init [-s|-p] [NAME...] run the named benchmarks (default: all, listed
 *                           in /bench/list); -s: smoke mode; -p: with
 *                           profiling marks (`cargo xtask bench --profile`)
 *   /init -c                command mode (the wall pass): read benchmark
 *                           names from the console, one a line, and run
 *                           each as it comes; `end` or end of input stops
 *
 * Output protocol (read by `cargo xtask bench`):
 *   BENCH-BOOT <ns>           CLOCK_BOOTTIME when /init started
 *   BENCH-START <name>        before each benchmark
 *   BENCH ...                 the benchmark's own line (see bench.h)
 *   BENCH-EXIT <name> <how>   `exit N` or `signal N`
 *   BENCH-READY               command mode: waiting for the next name
 *   BENCH-END                 after the last one
 * Then it powers off (Linux) or exits (Trellis powers off when init exits).
 */
#include "bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#define LMB "/bench/lmb"
#define LIST "/bench/list"
#define MAX_BENCH 128
#define MODDIR "/bench/mod"
#define MAX_MODS 16

/*
 * What Linux needs and Trellis provides by itself: device nodes, and the
 * loopback interface up for the TCP benchmarks.  Failures are harmless.
 */
static void setup_system(void)
{
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	if (fcntl(1, F_GETFD) < 0) {
		int fd = open("/dev/console", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s >= 0) {
		struct ifreq ifr = { 0 };
		strcpy(ifr.ifr_name, "lo");
		if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
			ifr.ifr_flags |= IFF_UP;
			ioctl(s, SIOCSIFFLAGS, &ifr);
		}
		close(s);
	}
}

/*
 * Linux only: the kernel modules under /bench/mod (virtio-blk and what it
 * needs, copied from the Debian package by `cargo xtask bench`), loaded in
 * the order of their numbered names; then a short wait for /dev/vda.
 * Trellis has no modules (finit_module is ENOSYS) and needs none.
 */
static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void load_modules(void)
{
	DIR *d = opendir(MODDIR);
	if (!d)
		return;
	char names[MAX_MODS][64];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < MAX_MODS) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof names[0])
			continue;
		strcpy(names[n++], e->d_name);
	}
	qsort(names, (size_t)n, sizeof names[0], by_name);
	int loaded = 0;
	for (int i = 0; i < n; i++) {
		int fd = openat(dirfd(d), names[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		long r = syscall(SYS_finit_module, fd, "", 0);
		int err = errno;
		close(fd);
		if (r < 0 && err == ENOSYS)
			break;
		if (r < 0 && err != EEXIST)
			b_printf("BENCH-NOTE finit_module %s: %s\n", names[i], strerror(err));
		else
			loaded++;
	}
	closedir(d);
	for (int i = 0; loaded && i < 200 && access("/dev/vda", F_OK) < 0; i++)
		usleep(10000);
}

/*
 * Profile mode on Linux: a copy of /proc/kallsyms on the benchmark disk
 * (KSYMS), which `cargo xtask bench --profile` reads back from the image
 * to name kernel functions (Debian's System.map is a stub).  Trellis has
 * no /proc/kallsyms and xtask reads its symbols from trellis.sym.
 */
#define KSYMS_DIR "/fsb"
#define KSYMS KSYMS_DIR "/kallsyms"

static void save_kallsyms(void)
{
	int in = open("/proc/kallsyms", O_RDONLY);
	if (in < 0)
		return;
	mkdir(KSYMS_DIR, 0755);
	if (mount("/dev/vda", KSYMS_DIR, "ext2", 0, NULL) < 0) {
		b_printf("BENCH-NOTE mount /dev/vda: %s\n", strerror(errno));
		close(in);
		return;
	}
	int out = open(KSYMS, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static char buf[65536];
	ssize_t r;
	while (out >= 0 && (r = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)r) != r)
			break;
	if (out >= 0) {
		fsync(out);
		close(out);
	}
	close(in);
	umount(KSYMS_DIR);
}

/* The names in /bench/list (written at build time by `lmb -l`). */
static int list_benchmarks(char *buf, size_t len, char **names, int max)
{
	int fd = open(LIST, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t used = 0;
	ssize_t r;
	while (used + 1 < len && (r = read(fd, buf + used, len - used - 1)) > 0)
		used += (size_t)r;
	buf[used] = 0;
	close(fd);
	int n = 0;
	for (char *tok = strtok(buf, "\n"); tok && n < max; tok = strtok(NULL, "\n"))
		names[n++] = tok;
	return n;
}

/* mode: 0 measure, 's' smoke, 'p' profile (lmb -s / lmb -p). */
static void run_one(const char *name, int mode)
{
	b_printf("BENCH-START %s\n", name);
	pid_t pid = fork();
	if (pid < 0) {
		b_printf("BENCH-EXIT %s fork-failed %d\n", name, errno);
		return;
	}
	if (pid == 0) {
		char *argv[] = { LMB, mode == 's' ? "-s" : mode == 'p' ? "-p" : (char *)name,
				 mode ? (char *)name : NULL, NULL };
		static char *const envp[] = { "PATH=/bin:/sbin:/usr/bin", NULL };
		execve(LMB, argv, envp);
		b_printf("BENCH %s error execve %s: %s\n", name, LMB, strerror(errno));
		_exit(1);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		b_printf("BENCH-EXIT %s signal %d\n", name, WTERMSIG(status));
	else
		b_printf("BENCH-EXIT %s exit %d\n", name, WEXITSTATUS(status));
}

/* Whether `name` is one of the `n` names in `known` (any name if n is 0). */
static int is_known(const char *name, char **known, int n)
{
	for (int k = 0; k < n; k++)
		if (strcmp(name, known[k]) == 0)
			return 1;
	return n == 0;
}

/*
 * Command mode: `cargo xtask bench` keeps Linux and Trellis booted side by
 * side and hands each the same row in turn, so that both run it under the
 * same host load.  Echo is turned off so that the names sent do not come
 * back among the results.
 */
static void command_loop(char **known, int nknown)
{
	struct termios t;
	if (tcgetattr(0, &t) == 0) {
		t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		tcsetattr(0, TCSANOW, &t);
	}
	char line[128];
	size_t len = 0;
	b_printf("BENCH-READY\n");
	for (;;) {
		char c;
		ssize_t r = read(0, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		if (c != '\n' && c != '\r') {
			if (len + 1 < sizeof line)
				line[len++] = c;
			continue;
		}
		line[len] = 0;
		if (len == 0)
			continue;
		len = 0;
		if (strcmp(line, "end") == 0)
			return;
		if (is_known(line, known, nknown))
			run_one(line, 0);
		else
			b_printf("BENCH-NOTE not a benchmark: %s\n", line);
		b_printf("BENCH-READY\n");
	}
}

int main(int argc, char **argv)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	setup_system();
	b_printf("BENCH-BOOT %lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	load_modules();

	/*
	 * Flags and names may come in any order: Linux hands init the
	 * command-line words it does not know itself (e.g. `nokaslr`) ahead
	 * of what follows `--`, so a word that is not a benchmark is skipped.
	 */
	int mode = 0;
	static char listbuf[4096];
	char *names[MAX_BENCH], *known[MAX_BENCH];
	int nknown = list_benchmarks(listbuf, sizeof listbuf, known, MAX_BENCH);
	if (nknown <= 0) {
		b_printf("BENCH-NOTE cannot read %s: %s\n", LIST, strerror(errno));
		nknown = 0;
	}
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "-p") == 0 ||
		    strcmp(argv[i], "-c") == 0) {
			mode = argv[i][1];
			continue;
		}
		if (!is_known(argv[i], known, nknown))
			b_printf("BENCH-NOTE not a benchmark: %s\n", argv[i]);
		else if (n < MAX_BENCH)
			names[n++] = argv[i];
	}
	if (n == 0) {
		for (int k = 0; k < nknown; k++)
			names[n++] = known[k];
	}
	if (mode == 'p')
		save_kallsyms();
	if (mode == 'c')
		command_loop(known, nknown);
	else
		for (int i = 0; i < n; i++)
			run_one(names[i], mode);
	b_printf("BENCH-END\n");
	sync();
	if (getpid() == 1)
		reboot(RB_POWER_OFF);
	return 0;
}
