/*
 * File names are bytes: names that are not UTF-8 (and UTF-8 that looks
 * like the kernel's own escapes) are created, listed, resolved, read back
 * by readlink and getcwd exactly as given, and NAME_MAX counts bytes.
 */
#include "t.h"

static int listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	while (d && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, name) == 0)
			found = 1;
	if (d)
		closedir(d);
	return found;
}

int main(void)
{
	/* Invalid UTF-8; a valid U+10FFFF; a lone continuation byte. */
	static const char *const names[] = { "\xff\xfe", "a\xf4\x8f\xbf\xbfz",
		"\x80", "caf\xc3\xa9", "\xf4\x8f\xbe\x80\xc3" };
	char dir[128], path[512], link[512], cwd[512], longname[300];
	struct stat st;
	size_t i;
	ssize_t n;

	if (t_mktmp("path_bytes", dir, sizeof dir))
		DONE();
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		t_join(path, sizeof path, dir, names[i]);
		CHECK_EQ(t_write_file(path, names[i], strlen(names[i]), 0644), 0);
		CHECK_EQ(stat(path, &st), 0);
		CHECK_EQ(st.st_size, (long)strlen(names[i]));
		CHECK_EQ(listed(dir, names[i]), 1);
	}

	/* A symlink whose target has such bytes reads back unchanged, with
	 * its length in bytes. */
	t_join(path, sizeof path, dir, "link");
	CHECK_EQ(symlink(names[0], path), 0);
	n = readlink(path, link, sizeof link);
	CHECK_EQ(n, 2);
	CHECK(n == 2 && memcmp(link, names[0], 2) == 0);
	CHECK_EQ(lstat(path, &st), 0);
	CHECK_EQ(st.st_size, 2);
	/* ... and resolves. */
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 2);

	/* getcwd inside a directory with such a name. */
	t_join(path, sizeof path, dir, "\xc0\xc1");
	CHECK_EQ(mkdir(path, 0755), 0);
	CHECK_EQ(chdir(path), 0);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(strcmp(cwd, path) == 0);
	CHECK_EQ(chdir("/"), 0);

	/* NAME_MAX is 255 bytes, whatever the bytes. */
	memset(longname, 0xff, 255);
	longname[255] = 0;
	t_join(path, sizeof path, dir, longname);
	CHECK_EQ(mkdir(path, 0755), 0);
	CHECK_EQ(listed(dir, longname), 1);
	longname[255] = (char)0xff;
	longname[256] = 0;
	t_join(path, sizeof path, dir, longname);
	CHECK_ERR(mkdir(path, 0755), ENAMETOOLONG);

	/* rename keeps the bytes too. */
	{
		char from[512], to[512];
		t_join(from, sizeof from, dir, names[0]);
		t_join(to, sizeof to, dir, "\xfe\xff");
		CHECK_EQ(rename(from, to), 0);
		CHECK_EQ(listed(dir, "\xfe\xff"), 1);
		CHECK_EQ(listed(dir, names[0]), 0);
	}
	t_rmtree(dir);
	DONE();
}
