/* MAP_SHARED file mappings: stores through the mapping and write(2)/
 * pread(2) see each other; two mappings of one file and a forked child's
 * mapping share the pages; a POSIX-shm-style file in /dev/shm works as
 * shared memory between processes; MAP_PRIVATE stores stay private;
 * PROT_WRITE needs a descriptor open for writing (EACCES); a page wholly
 * past the end of the file is SIGBUS until the file grows. */
#include "next.h"

static sigjmp_buf env;
static volatile int got_bus;

static void on_bus(int sig)
{
	(void)sig;
	got_bus = 1;
	siglongjmp(env, 1);
}

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 8], buf[16];
	char *a, *b, *priv;
	volatile int *counter;
	int fd, ro, st, i;
	pid_t pid;

	CHECK_EQ(t_mktmp("mmap_shared_file", dir, sizeof dir), 0);
	snprintf(path, sizeof path, "%s/f", dir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "hello", 5), 5);

	a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(a != MAP_FAILED);
	b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(b != MAP_FAILED);
	CHECK(memcmp(a, "hello", 5) == 0);
	a[0] = 'J';
	CHECK_EQ(b[0], 'J');
	CHECK_EQ(pread(fd, buf, 5, 0), 5);
	CHECK(memcmp(buf, "Jello", 5) == 0);
	CHECK_EQ(pwrite(fd, "M", 1, 1), 1);
	CHECK_EQ(a[1], 'M');
	/* The page's tail past the end of the file reads as zeros. */
	CHECK_EQ(a[100], 0);

	/* MAP_PRIVATE: stores stay private. */
	priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(priv != MAP_FAILED);
	priv[0] = 'P';
	CHECK_EQ(a[0], 'J');
	CHECK_EQ(pread(fd, buf, 1, 0), 1);
	CHECK_EQ(buf[0], 'J');
	munmap(priv, 4096);

	/* A child's stores reach the parent's mapping and the file. */
	pid = fork();
	if (pid == 0) {
		a[2] = 'X';
		CHILD_DONE();
	}
	st = t_wait(pid);
	CHECK_EQ(st, 0);
	CHECK_EQ(a[2], 'X');
	CHECK_EQ(pread(fd, buf, 3, 0), 3);
	CHECK(memcmp(buf, "JMX", 3) == 0);

	/* PROT_WRITE shared needs write access to the file. */
	ro = open(path, O_RDONLY);
	CHECK(ro >= 0);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) == MAP_FAILED &&
	      errno == EACCES);
	priv = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0);
	CHECK(priv != MAP_FAILED);
	CHECK_EQ(priv[0], 'J');
	munmap(priv, 4096);
	close(ro);

	/* Past the end of the file: SIGBUS, until the file grows. */
	munmap(a, 4096);
	a = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(a != MAP_FAILED);
	signal(SIGBUS, on_bus);
	if (sigsetjmp(env, 1) == 0)
		a[4096] = 1;
	CHECK_EQ(got_bus, 1);
	CHECK_EQ(ftruncate(fd, 8192), 0);
	a[4096] = 7;
	CHECK_EQ(pread(fd, buf, 1, 4096), 1);
	CHECK_EQ(buf[0], 7);
	munmap(a, 8192);
	munmap(b, 4096);
	close(fd);
	unlink(path);
	rmdir(dir);

	/* shm_open-style shared memory in /dev/shm between processes. */
	snprintf(path, sizeof path, "/dev/shm/mmap_shared_file.%d", getpid());
	fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 4096), 0);
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(counter != MAP_FAILED);
	unlink(path);
	close(fd);
	for (i = 0; i < 4; i++) {
		pid = fork();
		if (pid == 0) {
			int k;

			for (k = 0; k < 1000; k++)
				__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
			_exit(0);
		}
	}
	for (i = 0; i < 4; i++)
		wait(&st);
	CHECK_EQ(*counter, 4000);
	DONE();
}
