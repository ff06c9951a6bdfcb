/* /dev/ptmx and devpts (skipped where there are no ptys): /dev/ptmx is
 * char 5:2, /dev/pts is a devpts (statfs magic 0x1cd1) holding ptmx and a
 * node 136:N for each pty while its master is open; numbers are the lowest
 * free ones and stay taken while either side is open; TIOCGPTN,
 * TIOCSPTLCK/TIOCGPTLCK (opening a locked slave is EIO), TIOCGPTPEER,
 * ptsname/ttyname/isatty and the /proc/self/fd links; mount -t devpts. */
#include "next.h"
#include <sys/statfs.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* Whether /dev/pts lists name. */
static int listed(const char *name)
{
	DIR *d = opendir("/dev/pts");
	struct dirent *e;
	int found = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strcmp(e->d_name, name)) {
			found = 1;
			CHECK_EQ(e->d_type, DT_CHR);
		}
	closedir(d);
	return found;
}

static int ptn(int m)
{
	unsigned n = 12345;

	CHECK_EQ(ioctl(m, TIOCGPTN, &n), 0);
	return (int)n;
}

int main(void)
{
	char name[64], path[64], link[64], num[16];
	struct statfs sf;
	struct stat st, st2;
	int m, s, m2, n, n2, lk, fd;
	ssize_t len;

	if (t_openpty(&m, &s, name, sizeof name) != 0)
		SKIP("no pseudo-terminals here");

	/* The nodes. */
	CHECK_EQ(stat("/dev/ptmx", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 5);
	CHECK_EQ(minor(st.st_rdev), 2);
	CHECK_EQ(statfs("/dev/pts", &sf), 0);
	CHECK_EQ((long)sf.f_type, 0x1cd1);
	CHECK_EQ(stat("/dev/pts/ptmx", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(st.st_rdev, makedev(5, 2));
	CHECK_EQ(listed("ptmx"), 1);

	/* The slave: /dev/pts/N, char 136:N, ours, listed. */
	n = ptn(m);
	snprintf(path, sizeof path, "/dev/pts/%d", n);
	CHECK(!strcmp(name, path));
	CHECK(!strcmp(ptsname(m), path));
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 136);
	CHECK_EQ((int)minor(st.st_rdev), n);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(fstat(s, &st2), 0);
	CHECK_EQ(st2.st_rdev, st.st_rdev);
	CHECK_EQ(st2.st_ino, st.st_ino);
	snprintf(num, sizeof num, "%d", n);
	CHECK_EQ(listed(num), 1);
	CHECK_ERR(ioctl(s, TIOCGPTN, &n2), ENOTTY);

	/* isatty, ttyname and the /proc links. */
	CHECK(isatty(s));
	CHECK(isatty(m));
	CHECK(ttyname(s) && !strcmp(ttyname(s), path));
	CHECK(ttyname(m) && !strcmp(ttyname(m), "/dev/ptmx"));
	snprintf(link, sizeof link, "/proc/self/fd/%d", s);
	len = readlink(link, num, sizeof num - 1);
	CHECK(len > 0);
	if (len > 0) {
		num[len] = 0;
		CHECK(!strcmp(num, path));
	}

	/* A second pair gets another number; closing its master removes
	 * its node. */
	m2 = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m2 >= 0);
	n2 = ptn(m2);
	CHECK(n2 != n);
	snprintf(num, sizeof num, "%d", n2);
	CHECK_EQ(listed(num), 1);

	/* Locked until unlockpt: opening it is EIO. */
	lk = 0;
	CHECK_EQ(ioctl(m2, TIOCGPTLCK, &lk), 0);
	CHECK_EQ(lk, 1);
	snprintf(path, sizeof path, "/dev/pts/%d", n2);
	CHECK_ERR(open(path, O_RDWR | O_NOCTTY), EIO);
	fd = ioctl(m2, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	if (fd < 0 && errno == EINVAL)
		t_note("no TIOCGPTPEER (kernel before 4.13)");
	else {
		CHECK_EQ(fd, -1);
		CHECK_EQ(errno, EIO);
	}
	CHECK_EQ(unlockpt(m2), 0);
	CHECK_EQ(ioctl(m2, TIOCGPTLCK, &lk), 0);
	CHECK_EQ(lk, 0);
	fd = open(path, O_RDWR | O_NOCTTY);
	CHECK(fd >= 0);
	close(fd);
	lk = 1;
	CHECK_EQ(ioctl(m2, TIOCSPTLCK, &lk), 0);
	CHECK_ERR(open(path, O_RDWR | O_NOCTTY), EIO);
	lk = 0;
	CHECK_EQ(ioctl(m2, TIOCSPTLCK, &lk), 0);

	/* TIOCGPTPEER: a file on the slave, with the flags asked for. */
	fd = ioctl(m2, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		t_note("no TIOCGPTPEER (kernel before 4.13)");
	} else {
		CHECK(fd >= 0);
		CHECK(isatty(fd));
		CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
		CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK_EQ(st.st_rdev, makedev(136, n2));
		CHECK(ttyname(fd) && !strcmp(ttyname(fd), path));
		/* It is the slave: what the master writes arrives. */
		CHECK_EQ(write(m2, "hi\n", 3), 3);
		{
			char buf[8];

			CHECK_EQ(t_read_avail(fd, buf, sizeof buf, 2000), 3);
		}
		/* Only a master has a peer. */
		CHECK_ERR(ioctl(fd, TIOCGPTPEER, O_RDWR), EIO);
		close(fd);
	}
	CHECK_ERR(ioctl(s, TIOCSPTLCK, &lk), ENOTTY);

	/* Close the master: the node goes; the number stays taken while
	 * the slave is open. */
	fd = open(path, O_RDWR | O_NOCTTY);
	CHECK(fd >= 0);
	close(m2);
	snprintf(num, sizeof num, "%d", n2);
	CHECK_EQ(listed(num), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
	m2 = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m2 >= 0);
	CHECK(ptn(m2) != n2);
	close(m2);
	close(fd);
	/* Both sides closed: the number is free again, and the lowest free
	 * one is taken. */
	m2 = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m2 >= 0);
	CHECK(ptn(m2) <= n2);
	close(m2);

	/* Opening /dev/pts/ptmx makes a pair too (when allowed: mode 000
	 * without ptmxmode= needs root). */
	if (t_is_root()) {
		m2 = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY);
		CHECK(m2 >= 0);
		if (m2 >= 0) {
			CHECK(ptn(m2) >= 0);
			close(m2);
		}
	}

	/* mount -t devpts: a devpts with ptmx in it. */
	if (t_is_root()) {
		char dir[64], p2[128];

		CHECK_EQ(t_mktmp("devpts", dir, sizeof dir), 0);
		CHECK_EQ(mount("devpts", dir, "devpts", 0, "ptmxmode=666,mode=620"), 0);
		CHECK_EQ(statfs(dir, &sf), 0);
		CHECK_EQ((long)sf.f_type, 0x1cd1);
		t_join(p2, sizeof p2, dir, "ptmx");
		CHECK_EQ(stat(p2, &st), 0);
		CHECK_EQ(st.st_rdev, makedev(5, 2));
		CHECK_EQ(st.st_mode & 0777, 0666);
		CHECK_ERR(mount("devpts", dir, "devpts", 0, "mode=99x"), EINVAL);
		/* Without options again (Trellis has one devpts instance, whose
		 * options the last mount set). */
		CHECK_EQ(mount("devpts", dir, "devpts", 0, ""), 0);
		CHECK_EQ(umount2(dir, 0), 0);
		CHECK_EQ(umount2(dir, 0), 0);
		rmdir(dir);
	}
	close(s);
	close(m);
	DONE();
}
