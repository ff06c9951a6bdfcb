/*
 * RFLAGS.DF (direction flag) set by an unprivileged program.  The kernel's
 * string copies (rep movs) assume DF clear; entered with the user's DF
 * they would copy backwards from the buffer start, so entry must clear it
 * (SFMASK for syscall, cld on interrupts and exceptions).  With DF set:
 * pipe write/read at odd offsets across pages, a file written and read
 * back, fstat, getdents64, uname, page faults and timer interrupts; the
 * data must be exactly right and nothing written outside the buffers.
 * Linux hands the user's DF back after each syscall and interrupt.  A
 * signal handler starts with DF clear (SysV ABI: DF is clear on function
 * entry), whether the signal came from a syscall or an exception (ud2),
 * and sigreturn restores the interrupted code's DF.
 */
#include "entry.h"

static volatile int sig_count, bad_handler_df;
static volatile unsigned long sig_ctx_flags;

static void on_sig(int s, siginfo_t *si, void *c)
{
	ucontext_t *uc = c;
	/* A compiled string operation in the handler: must run forwards. */
	char local[96];
	size_t i;

	(void)s;
	(void)si;
	if (t_rflags() & X86_DF)
		bad_handler_df++;
	memset(local, 'h', sizeof local);
	for (i = 0; i < sizeof local; i++)
		if (local[i] != 'h')
			bad_handler_df++;
	sig_count++;
	sig_ctx_flags = uc->uc_mcontext.gregs[REG_EFL];
	if (s == SIGILL)
		uc->uc_mcontext.gregs[REG_RIP] += 2; /* past ud2 */
}

/* ud2 with DF set; returns RFLAGS after the SIGILL handler returned. */
__asm__(".text\n"
	".globl t_df_ud2\n"
	".type t_df_ud2, @function\n"
	"t_df_ud2:\n\t"
	"std\n\t"
	"ud2\n\t"
	"pushfq\n\t"
	"pop %rax\n\t"
	"cld\n\t"
	"ret\n"
	".size t_df_ud2, .-t_df_ud2\n");
unsigned long t_df_ud2(void);

#define BIG (2 * 4096 + 777)

int main(void)
{
	static char src[BIG + 64], dst[BIG + 64];
	static char dents_df[4096], dents_plain[4096];
	static struct stat st_df, st_plain;
	static struct utsname un_df, un_plain;
	char dir[PATH_MAX], path[PATH_MAX];
	unsigned long after = 0, all;
	long r, pid, tid, got;
	int p[2], fd, dfd, i, off, bad_df = 0, bad_data = 0;

	T_DROP_ROOT_OR_FAIL();
	pid = getpid();
	tid = t_gettid();
	for (i = 0; i < (int)sizeof src; i++)
		src[i] = (char)(i * 11 + 3);
	CHECK_EQ(pipe(p), 0);

	/* Pipe round trips: the bytes land in order, nowhere else. */
	for (off = 0; off < 20; off += 3) {
		size_t len = BIG - (size_t)off * 41;

		r = t_flagged_syscall(SYS_write, p[1], (long)(src + off),
				      (long)len, X86_DF, &after);
		CHECK_EQ(r, (long)len);
		bad_df += !(after & X86_DF);
		memset(dst, 0, sizeof dst);
		for (got = 0; got < (long)len; got += r) {
			r = t_flagged_syscall(SYS_read, p[0],
					      (long)(dst + off + 1 + got),
					      (long)len - got, X86_DF, &after);
			bad_df += !(after & X86_DF);
			if (r <= 0)
				break;
		}
		CHECK_EQ(got, (long)len);
		bad_data += memcmp(dst + off + 1, src + off, len) != 0;
		bad_data += dst[off] != 0 || dst[off + 1 + len] != 0;
	}

	if (t_mktmp("entry_df_flag", dir, sizeof dir) == 0) {
		t_join(path, sizeof path, dir, "f");
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0);
		r = t_flagged_syscall(SYS_write, fd, (long)(src + 1), BIG,
				      X86_DF, &after);
		CHECK_EQ(r, BIG);
		bad_df += !(after & X86_DF);
		CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
		memset(dst, 0, sizeof dst);
		r = t_flagged_syscall(SYS_read, fd, (long)(dst + 2), BIG,
				      X86_DF, &after);
		CHECK_EQ(r, BIG);
		bad_df += !(after & X86_DF);
		CHECK(memcmp(dst + 2, src + 1, BIG) == 0);
		CHECK(dst[1] == 0 && dst[2 + BIG] == 0);

		r = t_flagged_syscall(SYS_fstat, fd, (long)&st_df, 0, X86_DF,
				      &after);
		CHECK_EQ(r, 0);
		bad_df += !(after & X86_DF);
		CHECK_EQ(fstat(fd, &st_plain), 0);
		CHECK_EQ(st_df.st_size, BIG);
		CHECK_EQ(st_df.st_ino, st_plain.st_ino);
		CHECK_EQ(st_df.st_mode, st_plain.st_mode);
		CHECK_EQ(st_df.st_nlink, 1);
		close(fd);

		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		CHECK(dfd >= 0);
		r = t_flagged_syscall(SYS_getdents64, dfd, (long)dents_df,
				      sizeof dents_df, X86_DF, &after);
		bad_df += !(after & X86_DF);
		CHECK(r > 0);
		CHECK_EQ(lseek(dfd, 0, SEEK_SET), 0);
		CHECK_EQ(syscall(SYS_getdents64, dfd, dents_plain,
				 sizeof dents_plain), r);
		CHECK(r > 0 && memcmp(dents_df, dents_plain, (size_t)r) == 0);
		close(dfd);
		unlink(path);
		rmdir(dir);
	}

	r = t_flagged_syscall(SYS_uname, (long)&un_df, 0, 0, X86_DF, &after);
	CHECK_EQ(r, 0);
	bad_df += !(after & X86_DF);
	CHECK_EQ(uname(&un_plain), 0);
	CHECK(memcmp(&un_df, &un_plain, sizeof un_df) == 0);

	if (bad_df)
		t_printf("  check failed: DF lost by %d syscalls (Linux keeps "
			 "the user's DF across syscall)\n", bad_df);
	if (bad_data)
		t_printf("  check failed: %d pipe copies wrong\n", bad_data);
	t_failures += bad_df + bad_data;

	/* Page faults and timer interrupts with DF set. */
	CHECK(t_faults_with(X86_DF, 16) & X86_DF);
	all = t_spin_with(X86_DF, 50000000LL, 5000);
	CHECK(all & X86_DF);

	/* A signal from a syscall made with DF set. */
	CHECK_EQ(t_siginfo_action(SIGUSR1, on_sig, 0), 0);
	r = t_flagged_syscall(SYS_tgkill, pid, tid, SIGUSR1, X86_DF, &after);
	CHECK_EQ(r, 0);
	CHECK_EQ(sig_count, 1);
	CHECK_EQ(bad_handler_df, 0);
	CHECK(sig_ctx_flags & X86_DF);
	CHECK(after & X86_DF);

	/* A signal from an exception taken with DF set. */
	CHECK_EQ(t_siginfo_action(SIGILL, on_sig, 0), 0);
	after = t_df_ud2();
	CHECK_EQ(sig_count, 2);
	CHECK_EQ(bad_handler_df, 0);
	CHECK(sig_ctx_flags & X86_DF);
	CHECK(after & X86_DF);

	CHECK(!(t_rflags() & X86_DF));
	DONE();
}
