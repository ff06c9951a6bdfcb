/* tmpfs sparse and large files: a write at 1 GiB and at 16 GiB makes a
 * file of that size using a few blocks, holes read as zeros,
 * SEEK_DATA/SEEK_HOLE find the data, ftruncate to 1 TiB; and 24 MiB of
 * real data written and read back intact (then freed on unlink). */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[4096];
	struct stat st;
	off_t big = (off_t)16 << 30;
	int fd, mounted, i;

	mounted = t_tmpfs_scratch("tmpfs_sparse_large", dir, sizeof dir);
	if (mounted < 0)
		SKIP("no tmpfs available");
	if (mounted == 1) {
		/* Remount with room for the data part. */
		t_umount(dir);
		if (mount("none", dir, "tmpfs", 0, "size=256m") != 0) {
			t_rmtree(dir);
			SKIP("could not mount a 256m tmpfs");
		}
	}
	t_join(path, sizeof path, dir, "sparse");
	fd = open(path, O_CREAT | O_RDWR, 0644);
	CHECK(fd >= 0);

	CHECK_EQ(pwrite(fd, "G", 1, (off_t)1 << 30), 1);
	CHECK_EQ(pwrite(fd, "H", 1, big), 1);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, big + 1);
	/* Two pages at most (in 512-byte blocks). */
	CHECK(st.st_blocks <= 16);
	CHECK(st.st_blocks >= 1);
	/* Holes are zeros. */
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(pread(fd, buf, sizeof buf, 12345678), (long)sizeof buf);
	for (i = 0; i < (int)sizeof buf; i++)
		if (buf[i])
			break;
	CHECK_EQ(i, (int)sizeof buf);
	CHECK_EQ(pread(fd, buf, 2, big - 1), 2);
	CHECK(buf[0] == 0 && buf[1] == 'H');
	CHECK_EQ(pread(fd, buf, 10, big + 1), 0);
	/* SEEK_DATA / SEEK_HOLE. */
	{
		off_t d = lseek(fd, 0, SEEK_DATA);

		CHECK(d >= 0 && d <= ((off_t)1 << 30));
		CHECK(lseek(fd, 0, SEEK_HOLE) <= ((off_t)1 << 30));
		CHECK_EQ(lseek(fd, ((off_t)1 << 30) + 4096, SEEK_DATA) / 4096,
			 big / 4096);
		CHECK_ERR(lseek(fd, big + 1, SEEK_DATA), ENXIO);
	}
	/* ftruncate to 1 TiB and back. */
	CHECK_EQ(ftruncate(fd, (off_t)1 << 40), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, (off_t)1 << 40);
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_blocks, 0);
	close(fd);

	/* Real data: 24 MiB in 64 KiB chunks, each with its own pattern. */
	t_join(path, sizeof path, dir, "large");
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	{
		static unsigned char chunk[65536], back[65536];
		int c, bad = 0;

		for (c = 0; c < 384; c++) {
			for (i = 0; i < 65536; i++)
				chunk[i] = (unsigned char)(c * 31 + i * 7);
			if (write(fd, chunk, sizeof chunk) != sizeof chunk)
				bad++;
		}
		CHECK_EQ(bad, 0);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK_EQ(st.st_size, 384L * 65536);
		CHECK(st.st_blocks >= 384L * 128);
		for (c = 383; c >= 0; c -= 7) {
			for (i = 0; i < 65536; i++)
				chunk[i] = (unsigned char)(c * 31 + i * 7);
			if (pread(fd, back, sizeof back, (off_t)c * 65536) != sizeof back ||
			    memcmp(back, chunk, sizeof back))
				bad++;
		}
		CHECK_EQ(bad, 0);
	}
	close(fd);
	CHECK_EQ(unlink(path), 0);
	if (mounted == 1)
		t_umount(dir);
	t_rmtree(dir);
	DONE();
}
