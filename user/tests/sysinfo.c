/* sysinfo: memory and uptime figures are sane; EFAULT. */
#include "t.h"
#include <sys/sysinfo.h>

int main(void)
{
	struct sysinfo si, si2;

	memset(&si, 0xff, sizeof si);
	CHECK_EQ(sysinfo(&si), 0);
	CHECK(si.mem_unit >= 1);
	CHECK(si.totalram > 0);
	CHECK(si.freeram <= si.totalram);
	CHECK(si.sharedram <= si.totalram);
	CHECK(si.bufferram <= si.totalram);
	CHECK(si.freeswap <= si.totalswap);
	CHECK(si.uptime >= 0);
	CHECK(si.procs >= 1);

	/* Raw syscall; uptime does not go backwards. */
	memset(&si2, 0, sizeof si2);
	CHECK_EQ(syscall(SYS_sysinfo, &si2), 0);
	CHECK_EQ(si2.totalram, si.totalram);
	CHECK_EQ(si2.mem_unit, si.mem_unit);
	CHECK(si2.uptime >= si.uptime);

	/* Uptime is consistent with CLOCK_MONOTONIC (boot-relative). */
	{
		struct timespec m;
		CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &m), 0);
		CHECK(si2.uptime >= m.tv_sec - 1);
	}

	/* EFAULT. */
	CHECK_ERR(syscall(SYS_sysinfo, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_sysinfo, BAD_PTR2), EFAULT);
	DONE();
}
