/*
 * execve of dynamically linked programs (PT_INTERP): the kernel loads the
 * interpreter (musl's and glibc's dynamic linker), tells it where things
 * are through the auxiliary vector, and places it at a random base unless
 * ASLR is off (personality ADDR_NO_RANDOMIZE, kernel.randomize_va_space).
 * A missing interpreter is ENOENT, a non-ELF one ELIBBAD (EIO when it is
 * shorter than an ELF header), one without execute permission EACCES
 * (execve(2)). AT_MINSIGSTKSZ bounds a signal frame.
 *
 * The programs are user/dyn/hello.c, built as ../dyn/hello-musl and
 * ../dyn/hello-glibc next to this test's directory.
 */
#include "t.h"
#include "next.h"

#include <libgen.h>
#include <sys/personality.h>

#ifndef ELIBBAD
#define ELIBBAD 80
#endif
#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#include <sys/auxv.h>
#include <sys/mman.h>

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { handled = sig; }

/* AT_MINSIGSTKSZ: a signal frame fits in an alternate stack of that size
 * (at least MINSIGSTKSZ, which sigaltstack requires), between PROT_NONE
 * guard pages. */
static void check_minsigstksz(void)
{
	unsigned long at = getauxval(AT_MINSIGSTKSZ);
	CHECK(at >= 1024);
	size_t size = at > MINSIGSTKSZ ? at : MINSIGSTKSZ;
	size_t span = (size + PAGE - 1) / PAGE * PAGE;
	char *m = mmap(NULL, span + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK(mprotect(m + PAGE, span, PROT_READ | PROT_WRITE) == 0);
	stack_t ss = { .ss_sp = m + PAGE + span - size, .ss_size = size, .ss_flags = 0 };
	CHECK(sigaltstack(&ss, NULL) == 0);
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	raise(SIGUSR1);
	CHECK_EQ(handled, SIGUSR1);
	ss.ss_flags = SS_DISABLE;
	CHECK(sigaltstack(&ss, NULL) == 0);
}

static char dyndir[512];

struct run {
	int status;
	char out[512];
};

/* Runs `path arg` with stdout to a pipe; an execve failure exits 100 + errno. */
static struct run run(const char *path, const char *arg, int no_random)
{
	struct run r = { -1, "" };
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (no_random && personality(ADDR_NO_RANDOMIZE) == -1)
			_exit(99);
		char *const argv[] = { (char *)path, (char *)arg, NULL };
		execv(path, argv);
		_exit(100 + errno);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t got;
	while (n < sizeof r.out - 1 && (got = read(p[0], r.out + n, sizeof r.out - 1 - n)) > 0)
		n += got;
	r.out[n] = 0;
	close(p[0]);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
	return r;
}

static unsigned long field(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	return p ? strtoul(p + strlen(key), NULL, 16) : 0;
}

static void check_program(const char *name)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", dyndir, name);
	struct run a = run(path, "xyz", 0);
	if (a.status != 7)
		t_note("%s: status %d, output '%s'", name, a.status, a.out);
	CHECK_EQ(a.status, 7);
	CHECK(strstr(a.out, "argc=2 arg1=xyz ") != NULL);
	/* The interpreter was loaded, and its mapping carries its file. */
	CHECK(field(a.out, "base=") != 0);
	CHECK(strstr(a.out, "interp=named") != NULL);
	CHECK(field(a.out, "entry=") != 0);
	CHECK(field(a.out, "phdr=") != 0);

	/* Without randomization the layout repeats exactly. */
	struct run n1 = run(path, "n", 1), n2 = run(path, "n", 1);
	CHECK_EQ(n1.status, 7);
	CHECK_EQ(n2.status, 7);
	CHECK_EQ(field(n1.out, "base="), field(n2.out, "base="));
	CHECK_EQ(field(n1.out, "main="), field(n2.out, "main="));

	/* With it (the default), the interpreter moves between runs (a
	 * collision has odds of 2^-28). */
	char v[8] = "";
	int fd = open("/proc/sys/kernel/randomize_va_space", O_RDONLY);
	if (fd >= 0) {
		CHECK(read(fd, v, sizeof v - 1) > 0);
		close(fd);
	}
	if (atoi(v) != 0) {
		struct run b = run(path, "xyz", 0);
		CHECK_EQ(b.status, 7);
		CHECK(field(a.out, "base=") != field(b.out, "base="));
	}
}

/* A copy of hello-musl whose PT_INTERP names `interp` (same length as
 * musl's loader path). */
static void make_patched(const char *copy, const char *interp)
{
	static const char musl[] = "/lib/ld-musl-x86_64.so.1";
	char src[600];
	snprintf(src, sizeof src, "%s/hello-musl", dyndir);
	int fd = open(src, O_RDONLY);
	CHECK(fd >= 0);
	static char buf[1 << 20];
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	CHECK(n > 0);
	CHECK_EQ(strlen(interp), strlen(musl));
	char *at = memmem(buf, n > 0 ? n : 0, musl, sizeof musl);
	CHECK(at != NULL);
	if (at)
		memcpy(at, interp, strlen(interp));
	CHECK(t_write_file(copy, buf, n > 0 ? n : 0, 0755) == 0);
	CHECK(chmod(copy, 0755) == 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	char self[512];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(dyndir, sizeof dyndir, "%s/../dyn", dirname(self));

	check_minsigstksz();
	check_program("hello-musl");
	check_program("hello-glibc");

	/* Broken interpreters: the path has the length of musl's. */
	char interp[32], prog[64];
	snprintf(interp, sizeof interp, "/tmp/.ld-x%014d", (int)getpid());
	snprintf(prog, sizeof prog, "/tmp/.dyn-%d", (int)getpid());
	make_patched(prog, interp);
	unlink(interp);
	CHECK_EQ(run(prog, "a", 0).status, 100 + ENOENT);
	/* Shorter than an ELF header: the read of it fails (EIO). */
	CHECK(t_write_file(interp, "not an ELF file\n", 16, 0755) == 0);
	CHECK(chmod(interp, 0755) == 0);
	CHECK_EQ(run(prog, "a", 0).status, 100 + EIO);
	/* Long enough, but not ELF. */
	char text[256];
	memset(text, '#', sizeof text);
	CHECK(t_write_file(interp, text, sizeof text, 0755) == 0);
	CHECK_EQ(run(prog, "a", 0).status, 100 + ELIBBAD);
	/* A real loader without execute permission, then with it. */
	unlink(interp);
	{
		int in = open("/lib/ld-musl-x86_64.so.1", O_RDONLY);
		CHECK(in >= 0);
		static char lb[4 << 20];
		ssize_t n = in >= 0 ? read(in, lb, sizeof lb) : -1;
		if (in >= 0)
			close(in);
		CHECK(n > 0);
		CHECK(t_write_file(interp, lb, n > 0 ? n : 0, 0644) == 0);
		CHECK(chmod(interp, 0644) == 0);
		CHECK_EQ(run(prog, "a", 0).status, 100 + EACCES);
		CHECK(chmod(interp, 0755) == 0);
		CHECK_EQ(run(prog, "a", 0).status, 7);
	}
	unlink(interp);
	unlink(prog);
	DONE();
}
