/* Path resolution: "." and "..", ".." at "/", repeated slashes, trailing
 * slashes (ENOTDIR on files), empty paths (ENOENT), ENAMETOOLONG for long
 * components and paths, ENOTDIR through a file, ".." after a symlink to a
 * directory being physical. */
#include "next.h"

int main(void)
{
	char dir[PATH_MAX], p[PATH_MAX * 2], orig[PATH_MAX];
	struct stat st, root, st2;
	char *longp;

	if (t_mktmp("vfs_path_resolution", dir, sizeof dir) != 0)
		DONE();
	CHECK(getcwd(orig, sizeof orig) != NULL);
	CHECK_EQ(chdir(dir), 0);
	CHECK_EQ(mkdir("a", 0755), 0);
	CHECK_EQ(mkdir("a/b", 0755), 0);
	CHECK_EQ(mkdir("c", 0755), 0);
	CHECK_EQ(t_write_file("a/f", "x", 1, 0644), 0);
	CHECK_EQ(symlink("a/b", "lnk"), 0);

	CHECK_EQ(stat("/", &root), 0);
	CHECK_EQ(stat("/..", &st), 0);
	CHECK_EQ(st.st_ino, root.st_ino);
	CHECK_EQ(stat("/../../..", &st), 0);
	CHECK_EQ(st.st_ino, root.st_ino);
	CHECK_EQ(stat("/./.", &st), 0);
	CHECK_EQ(st.st_ino, root.st_ino);

	CHECK_EQ(stat("a/b/../f", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(stat("a//b///..//f", &st), 0);
	CHECK_EQ(stat("./a/./b/./../../c", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	/* Trailing slashes. */
	CHECK_EQ(stat("a/", &st), 0);
	CHECK_EQ(stat("a//", &st), 0);
	CHECK_ERR(stat("a/f/", &st), ENOTDIR);
	CHECK_ERR(open("a/f/", O_RDONLY), ENOTDIR);
	CHECK_ERR(stat("a/f/.", &st), ENOTDIR);
	CHECK_ERR(stat("a/f/x", &st), ENOTDIR);
	CHECK_ERR(mkdir("a/f/d", 0755), ENOTDIR);
	/* Creating with a trailing slash: directories only. */
	CHECK_EQ(mkdir("d1/", 0755), 0);
	CHECK_ERR(open("newfile/", O_CREAT | O_WRONLY, 0644), EISDIR);
	/* Empty path. */
	CHECK_ERR(stat("", &st), ENOENT);
	CHECK_ERR(open("", O_RDONLY), ENOENT);
	CHECK_ERR(chdir(""), ENOENT);
	/* Missing components. */
	CHECK_ERR(stat("nope/x", &st), ENOENT);
	CHECK_ERR(mkdir("nope/x", 0755), ENOENT);

	/* ".." after a symlink to a directory is the target's parent. */
	CHECK_EQ(stat("lnk/..", &st), 0);
	CHECK_EQ(stat("a", &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(chdir("lnk"), 0);
	CHECK(getcwd(p, sizeof p) != NULL);
	{
		char want[PATH_MAX];

		t_join(want, sizeof want, dir, "a/b");
		CHECK(strcmp(p, want) == 0);
	}
	CHECK_EQ(chdir(dir), 0);

	/* Name too long: a 256-byte component, a path over PATH_MAX. */
	memset(p, 'n', 256);
	p[256] = 0;
	CHECK_ERR(stat(p, &st), ENAMETOOLONG);
	CHECK_ERR(mkdir(p, 0755), ENAMETOOLONG);
	p[255] = 0;
	CHECK_EQ(mkdir(p, 0755), 0); /* 255 is fine */
	CHECK_EQ(rmdir(p), 0);
	longp = malloc(PATH_MAX + 16);
	if (longp) {
		size_t i;

		for (i = 0; i < PATH_MAX + 8; i += 2) {
			longp[i] = '.';
			longp[i + 1] = '/';
		}
		longp[PATH_MAX + 8] = 0;
		CHECK_ERR(stat(longp, &st), ENAMETOOLONG);
		free(longp);
	}
	CHECK_EQ(chdir(orig), 0);
	t_rmtree(dir);
	DONE();
}
