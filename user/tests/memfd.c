/* memfd_create(2): an anonymous tmpfs file, its flags and name, and file
 * seals (fcntl F_ADD_SEALS / F_GET_SEALS) enforced on write, truncate and
 * fallocate. */
#include "next.h"

#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x1U
#define MFD_ALLOW_SEALING 0x2U
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x8U
#define MFD_EXEC 0x10U
#endif

static long mfd(const char *name, unsigned flags)
{
	return syscall(SYS_memfd_create, name, flags);
}

int main(void)
{
	char buf[512], link[64];
	struct stat st;
	int fd;

	/* A new memfd: empty, read-write, a regular file of mode 0777 with
	 * no links, named "memfd:NAME (deleted)" in /proc/self/fd. */
	fd = mfd("hello", 0);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0777);
	CHECK_EQ(st.st_nlink, 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_uid, getuid());
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	{
		ssize_t n = readlink(link, buf, sizeof buf - 1);
		CHECK(n > 0);
		if (n > 0) {
			buf[n] = 0;
			CHECK(!strcmp(buf, "/memfd:hello (deleted)"));
		}
	}
	/* Ordinary file I/O, truncation, mmap. */
	CHECK_EQ(write(fd, "abcdef", 6), 6);
	CHECK_EQ(pread(fd, buf, 10, 2), 4);
	CHECK(!memcmp(buf, "cdef", 4));
	CHECK_EQ(ftruncate(fd, 8192), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 8192);
	{
		char *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			CHECK(!memcmp(m, "abcdef", 6) && m[4096] == 0);
			munmap(m, 8192);
		}
	}
	/* Reopening through /proc/self/fd reaches the same file. */
	{
		int fd2 = open(link, O_RDONLY);
		CHECK(fd2 >= 0);
		CHECK_EQ(pread(fd2, buf, 3, 0), 3);
		CHECK(!memcmp(buf, "abc", 3));
		close(fd2);
	}
	/* Without MFD_ALLOW_SEALING the file is sealed against sealing. */
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
	close(fd);

	/* MFD_CLOEXEC. */
	fd = mfd("c", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);

	/* Names: empty is fine, 249 bytes is the longest. */
	fd = mfd("", 0);
	CHECK(fd >= 0);
	close(fd);
	memset(buf, 'n', 249);
	buf[249] = 0;
	fd = mfd(buf, 0);
	CHECK(fd >= 0);
	close(fd);
	buf[249] = 'n';
	buf[250] = 0;
	CHECK_ERR(mfd(buf, 0), EINVAL);
	CHECK_ERR(mfd(BAD_PTR2, 0), EFAULT);
	/* Flags. */
	CHECK_ERR(mfd("x", 0x100), EINVAL);
	CHECK_ERR(mfd("x", MFD_EXEC | MFD_NOEXEC_SEAL), EINVAL);

	/* Seals. */
	fd = mfd("sealed", MFD_ALLOW_SEALING);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, 0x1000), EINVAL);

	/* F_SEAL_SHRINK: no truncating below the size. */
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK);
	CHECK_ERR(ftruncate(fd, 5), EPERM);
	CHECK_EQ(ftruncate(fd, 12), 0);
	CHECK_EQ(ftruncate(fd, 12), 0);
	CHECK_EQ(pwrite(fd, "ab", 2, 0), 2);

	/* F_SEAL_GROW: no growing by truncate, write or fallocate. */
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW);
	CHECK_ERR(ftruncate(fd, 13), EPERM);
	CHECK_ERR(pwrite(fd, "xyz", 3, 11), EPERM);
	CHECK_EQ(pwrite(fd, "xy", 2, 10), 2);
	CHECK_ERR(fallocate(fd, 0, 0, 4096), EPERM);
	CHECK_EQ(fallocate(fd, 0, 0, 12), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 12);

	/* A shared writable mapping sees the file and the file sees it; while
	 * one exists F_SEAL_WRITE is EBUSY. */
	{
		char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		char c;

		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			CHECK_EQ(m[0], 'a');
			m[2] = 'Z';
			CHECK_EQ(pread(fd, &c, 1, 2), 1);
			CHECK_EQ(c, 'Z');
			CHECK_EQ(pwrite(fd, "2", 1, 2), 1);
			CHECK_EQ(m[2], '2');
			CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);
			munmap(m, 4096);
		}
	}

	/* F_SEAL_WRITE: no writes at all, nor punching holes, nor shared
	 * writable mappings; reads still work. */
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	CHECK_ERR(pwrite(fd, "q", 1, 0), EPERM);
	CHECK_ERR(write(fd, "q", 1), EPERM);
	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4), EPERM);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EPERM);
	{
		char *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			CHECK(!memcmp(m, "ab23456789xy", 12));
			munmap(m, 4096);
		}
	}
	CHECK_EQ(pread(fd, buf, 12, 0), 12);
	CHECK(!memcmp(buf, "ab23456789xy", 12));

	/* F_SEAL_SEAL: no more seals; adding none is still EPERM. */
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), EPERM);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, 0), EPERM);

	/* Seals belong to the file: a read-only reopen sees them, and cannot
	 * add any (EPERM without write access). */
	{
		int other = mfd("ro", MFD_ALLOW_SEALING), ro;
		snprintf(link, sizeof link, "/proc/self/fd/%d", other);
		ro = open(link, O_RDONLY);
		CHECK(ro >= 0);
		CHECK_EQ(fcntl(other, F_ADD_SEALS, F_SEAL_GROW), 0);
		CHECK_EQ(fcntl(ro, F_GET_SEALS), F_SEAL_GROW);
		CHECK_ERR(fcntl(ro, F_ADD_SEALS, F_SEAL_SHRINK), EPERM);
		close(ro);
		close(other);
	}
	close(fd);

	/* MFD_NOEXEC_SEAL: mode 0666, F_SEAL_EXEC set, sealing allowed. */
	fd = mfd("noexec", MFD_NOEXEC_SEAL);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0666);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_EXEC);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), 0);
	close(fd);
	/* F_SEAL_EXEC on an executable memfd also seals size and contents. */
	fd = mfd("exec", MFD_ALLOW_SEALING | MFD_EXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_EXEC), 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS),
		 F_SEAL_EXEC | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE);
	CHECK_ERR(write(fd, "x", 1), EPERM);
	close(fd);

	/* Other files cannot be sealed: a pipe is EINVAL. */
	{
		int p[2];
		CHECK_EQ(pipe(p), 0);
		CHECK_ERR(fcntl(p[1], F_GET_SEALS), EINVAL);
		CHECK_ERR(fcntl(p[1], F_ADD_SEALS, F_SEAL_SEAL), EINVAL);
		close(p[0]);
		close(p[1]);
	}
	DONE();
}
