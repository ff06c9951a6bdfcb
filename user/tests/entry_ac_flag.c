/*
 * RFLAGS.AC (alignment check) set by an unprivileged program.  In ring 0
 * AC is SMAP's override: a kernel entered with the user's AC still set
 * runs with SMAP off, so entry must clear it (syscall via SFMASK,
 * interrupts and exceptions with clac).  Here the kernel copies user memory
 * both ways with AC set (pipe write/read at odd offsets and lengths across
 * page boundaries, fstat, getdents64, uname, file write and read), and user mode spins
 * with AC set so that timer interrupts arrive; the data must be right and
 * the process alive.  Linux hands the user's AC back unchanged after every
 * syscall and interrupt, and saves it in a signal context.
 *
 * Only reported, not checked: Linux sets CR0.AM, so an unaligned access in
 * user mode with AC set raises SIGBUS (BUS_ADRALN); a kernel without
 * CR0.AM ignores AC.  A child tries it and the note says which.  Every
 * access the parent makes while AC is set is aligned.
 */
#include "entry.h"

static volatile int usr1_count;
static volatile unsigned long usr1_ctx_flags;

static void on_usr1(int s, siginfo_t *si, void *c)
{
	ucontext_t *uc = c;

	(void)s;
	(void)si;
	usr1_count++;
	usr1_ctx_flags = uc->uc_mcontext.gregs[REG_EFL];
}

/* An unaligned 4-byte load with AC set; _exit(0) if it did not fault. */
__asm__(".text\n"
	".globl t_ac_unaligned_load\n"
	".type t_ac_unaligned_load, @function\n"
	"t_ac_unaligned_load:\n\t"
	"pushfq\n\t"
	"orq $0x40000, (%rsp)\n\t"
	"popfq\n\t"
	"movl 1(%rdi), %eax\n\t"
	"pushfq\n\t"
	"andq $~0x40000, (%rsp)\n\t"
	"popfq\n\t"
	"ret\n"
	".size t_ac_unaligned_load, .-t_ac_unaligned_load\n");
unsigned t_ac_unaligned_load(const void *p);

#define BIG (3 * 4096 + 123)

int main(void)
{
	static char src[BIG + 64] __attribute__((aligned(4096)));
	static char dst[BIG + 64] __attribute__((aligned(4096)));
	static char dents_ac[4096], dents_plain[4096];
	static struct stat st_ac, st_plain;
	static struct utsname un_ac, un_plain;
	char dir[PATH_MAX], path[PATH_MAX];
	unsigned long after = 0, all;
	long r, got, pid, tid;
	int p[2], fd, dfd, i, off, bad_ac = 0, bad_data = 0, st;
	pid_t child;

	T_DROP_ROOT_OR_FAIL();
	pid = getpid();
	tid = t_gettid();
	for (i = 0; i < (int)sizeof src; i++)
		src[i] = (char)(i * 13 + 5);
	CHECK_EQ(pipe(p), 0);

	/* Pipe round trips at odd offsets and lengths, AC set throughout
	 * each syscall.  A pipe holds 16 pages on Linux; BIG is less. */
	for (off = 0; off < 24; off += 3) {
		size_t len = BIG - (size_t)off * 37;

		r = t_flagged_syscall(SYS_write, p[1], (long)(src + off),
				      (long)len, X86_AC, &after);
		CHECK_EQ(r, (long)len);
		bad_ac += !(after & X86_AC);
		memset(dst, 0, sizeof dst);
		for (got = 0; got < (long)len; got += r) {
			r = t_flagged_syscall(SYS_read, p[0],
					      (long)(dst + off + 1 + got),
					      (long)len - got, X86_AC, &after);
			bad_ac += !(after & X86_AC);
			if (r <= 0)
				break;
		}
		CHECK_EQ(got, (long)len);
		bad_data += memcmp(dst + off + 1, src + off, len) != 0;
		/* Nothing written outside the destination. */
		bad_data += dst[off] != 0 || dst[off + 1 + len] != 0;
	}

	/* A file: write and read back with AC set. */
	if (t_mktmp("entry_ac_flag", dir, sizeof dir) == 0) {
		t_join(path, sizeof path, dir, "f");
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0);
		r = t_flagged_syscall(SYS_write, fd, (long)(src + 3), BIG,
				      X86_AC, &after);
		CHECK_EQ(r, BIG);
		bad_ac += !(after & X86_AC);
		memset(dst, 0, sizeof dst);
		CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
		r = t_flagged_syscall(SYS_read, fd, (long)(dst + 5), BIG,
				      X86_AC, &after);
		CHECK_EQ(r, BIG);
		bad_ac += !(after & X86_AC);
		CHECK(memcmp(dst + 5, src + 3, BIG) == 0);

		/* fstat into a buffer: the same as without AC. */
		r = t_flagged_syscall(SYS_fstat, fd, (long)&st_ac, 0, X86_AC,
				      &after);
		CHECK_EQ(r, 0);
		bad_ac += !(after & X86_AC);
		CHECK_EQ(fstat(fd, &st_plain), 0);
		CHECK_EQ(st_ac.st_size, BIG);
		CHECK_EQ(st_ac.st_ino, st_plain.st_ino);
		CHECK_EQ(st_ac.st_mode, st_plain.st_mode);
		CHECK_EQ(st_ac.st_uid, 65534);
		close(fd);

		/* getdents64 into a buffer: the same bytes as without AC. */
		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		CHECK(dfd >= 0);
		r = t_flagged_syscall(SYS_getdents64, dfd, (long)dents_ac,
				      sizeof dents_ac, X86_AC, &after);
		bad_ac += !(after & X86_AC);
		CHECK(r > 0);
		CHECK_EQ(lseek(dfd, 0, SEEK_SET), 0);
		CHECK_EQ(syscall(SYS_getdents64, dfd, dents_plain,
				 sizeof dents_plain), r);
		CHECK(r > 0 && memcmp(dents_ac, dents_plain, (size_t)r) == 0);
		close(dfd);
		unlink(path);
		rmdir(dir);
	}

	/* uname: a fixed-size struct copied out. */
	r = t_flagged_syscall(SYS_uname, (long)&un_ac, 0, 0, X86_AC, &after);
	CHECK_EQ(r, 0);
	bad_ac += !(after & X86_AC);
	CHECK_EQ(uname(&un_plain), 0);
	CHECK(memcmp(&un_ac, &un_plain, sizeof un_ac) == 0);

	if (bad_ac)
		t_printf("  check failed: AC lost by %d syscalls (Linux keeps "
			 "the user's AC across syscall)\n", bad_ac);
	if (bad_data)
		t_printf("  check failed: %d pipe copies wrong\n", bad_data);
	t_failures += bad_ac + bad_data;

	/* Page faults (exception entry) with AC set. */
	CHECK(t_faults_with(X86_AC, 16) & X86_AC);

	/* Timer interrupts while AC is set in user mode. */
	all = t_spin_with(X86_AC, 50000000LL, 5000);
	CHECK(all & X86_AC);

	/* Sleeping and yielding with AC set. */
	{
		struct timespec ms = { 0, 1000000 };

		r = t_flagged_syscall(SYS_nanosleep, (long)&ms, 0, 0, X86_AC,
				      &after);
		CHECK_EQ(r, 0);
		CHECK(after & X86_AC);
		r = t_flagged_syscall(SYS_sched_yield, 0, 0, 0, X86_AC, &after);
		CHECK_EQ(r, 0);
		CHECK(after & X86_AC);
	}

	/* A signal taken with AC set: AC is in the saved context. */
	CHECK_EQ(t_siginfo_action(SIGUSR1, on_usr1, 0), 0);
	r = t_flagged_syscall(SYS_tgkill, pid, tid, SIGUSR1, X86_AC, &after);
	CHECK_EQ(r, 0);
	CHECK_EQ(usr1_count, 1);
	CHECK(usr1_ctx_flags & X86_AC);
	CHECK(after & X86_AC);

	CHECK(!(t_rflags() & X86_AC));

	/* Report only: does an unaligned user access with AC set fault? */
	child = fork();
	if (child == 0) {
		t_ac_unaligned_load(src);
		_exit(0);
	}
	CHECK(child > 0);
	st = t_wait(child);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS)
		t_note("unaligned load with AC set: SIGBUS (alignment "
		       "checking on, as Linux has it)");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		t_note("unaligned load with AC set: no fault (CR0.AM clear; "
		       "Linux raises SIGBUS)");
	else
		t_note("unaligned load with AC set: child status %#x", st);

	DONE();
}
