/*
 * write(2)/pwrite(2) from a not-yet-faulted MAP_SHARED mapping of the file
 * being written (write_own_mapping.h), on the scratch directory's file
 * system.  ext2_workload.c runs the same checks on ext2.
 */
#include "t.h"
#include "write_own_mapping.h"

int main(void)
{
	char dir[256], path[320];
	if (t_mktmp("write_own_mapping", dir, sizeof dir) < 0)
		DONE();
	write_own_mapping(t_join(path, sizeof path, dir, "f"));
	t_rmtree(dir);
	DONE();
}
