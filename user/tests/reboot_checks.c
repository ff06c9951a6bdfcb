/* reboot(2)'s checks, none of which reboots anything: EPERM without
 * CAP_SYS_BOOT (before the magic numbers are looked at), EINVAL for a
 * wrong first or second magic number (each of the four documented second
 * magics passes the check and reaches the command), EINVAL for an unknown
 * command; RESTART2 with a bad string pointer is EFAULT. Ctrl-Alt-Del
 * on/off (harmless) is exercised on Trellis only: on the host it would
 * change the host's setting. */
#include "next.h"
#include <sys/mman.h>
#include <sys/reboot.h>

#define MAGIC1 0xfee1deadU
#define MAGIC2 672274793U
#define CMD_RESTART2 0xa1b2c3d4U
#define CMD_CAD_OFF 0U
#define CMD_BOGUS 0x12345678U

static long rb(unsigned m1, unsigned m2, unsigned cmd, void *arg)
{
	return syscall(SYS_reboot, m1, m2, cmd, arg);
}

int main(void)
{
	static const unsigned magic2[] = { 672274793U, 85072278U, 369367448U, 537993216U };
	pid_t pid;

	if (geteuid() != 0)
		SKIP("needs root");
	/* A root without CAP_SYS_BOOT (a container) sees EPERM everywhere. */
	errno = 0;
	if (rb(0, 0, CMD_BOGUS, NULL) == -1 && errno == EPERM)
		SKIP("this host's root lacks CAP_SYS_BOOT");

	CHECK_ERR(rb(0, MAGIC2, CMD_CAD_OFF, NULL), EINVAL);
	CHECK_ERR(rb(MAGIC1, 0, CMD_CAD_OFF, NULL), EINVAL);
	CHECK_ERR(rb(MAGIC1, MAGIC2 + 1, CMD_CAD_OFF, NULL), EINVAL);
	for (unsigned i = 0; i < sizeof magic2 / sizeof magic2[0]; i++)
		CHECK_ERR(rb(MAGIC1, magic2[i], CMD_BOGUS, NULL), EINVAL);
	CHECK_ERR(rb(MAGIC1, MAGIC2, CMD_RESTART2, BAD_PTR), EFAULT);
	{
		/* A page just unmapped: nothing else maps in between. */
		void *gone = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(gone != MAP_FAILED);
		CHECK_EQ(munmap(gone, PAGE), 0);
		CHECK_ERR(rb(MAGIC1, MAGIC2, CMD_RESTART2, gone), EFAULT);
	}
	if (t_is_trellis()) {
		CHECK_EQ(rb(MAGIC1, MAGIC2, CMD_CAD_OFF, NULL), 0);
		CHECK_EQ(reboot(RB_DISABLE_CAD), 0);
	}

	/* Without the capability: EPERM, even with the magic right. */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(setuid(65534), 0);
		CHECK_ERR(rb(MAGIC1, MAGIC2, CMD_CAD_OFF, NULL), EPERM);
		CHECK_ERR(rb(0, 0, CMD_BOGUS, NULL), EPERM);
		CHECK_ERR(reboot(RB_POWER_OFF), EPERM);
		CHECK_ERR(reboot(RB_AUTOBOOT), EPERM);
		CHECK_ERR(reboot(RB_HALT_SYSTEM), EPERM);
		CHILD_DONE();
	}
	t_wait_ok(pid);
	DONE();
}
