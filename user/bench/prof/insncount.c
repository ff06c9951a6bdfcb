/*
 * insncount - a QEMU TCG plugin for `cargo xtask bench --profile`: counts
 * the guest instructions executed per translation block while the
 * benchmark's profiling marks say so, and writes one section per row.
 *
 *   qemu-system-x86_64 ... -plugin ./insncount.so,out=FILE
 *
 * The marks are long NOPs with a magic displacement (0f 1f 80 <imm32>,
 * see user/bench/bench.h) that `lmb -p` executes: INNER_ON/OFF around the
 * measured repetitions, OUTER_ON/OFF around the whole row.  Each block
 * translated is a record {guest pc, instructions}; executing it adds the
 * instructions to the record's inner and outer counters when those windows
 * are open.  At OUTER_OFF the plugin appends to FILE
 *
 *   S <section number>
 *   <pc hex> <insns> <inner> <outer>     for every record with a count
 *
 * and clears the counters.  A block counts whole even if an exception or
 * interrupt leaves it early, so figures are close to, not exactly, the
 * instructions retired.  The plugin assumes one vCPU (-smp 1).
 *
 * The declarations below are QEMU's plugin ABI (version 1, QEMU 7.x), as
 * documented in docs/devel/tcg-plugins.rst; Debian packages no header.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb_t cb,
						 enum qemu_plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
						   vcpu_udata_cb_t cb,
						   enum qemu_plugin_cb_flags flags,
						   void *userdata);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
							size_t idx);
extern const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MARK_INNER_ON 0x7b5e1a01u
#define MARK_INNER_OFF 0x7b5e1a02u
#define MARK_OUTER_ON 0x7b5e1a03u
#define MARK_OUTER_OFF 0x7b5e1a04u

struct rec {
	uint64_t pc;
	uint64_t insns;
	uint64_t inner, outer;
	struct rec *next;
};

static struct rec *recs;
static int inner_on, outer_on;
static unsigned section;
static FILE *out;

static void on_tb(unsigned int vcpu, void *udata)
{
	struct rec *r = udata;
	(void)vcpu;
	if (inner_on)
		r->inner += r->insns;
	if (outer_on)
		r->outer += r->insns;
}

static void dump(void)
{
	if (!out)
		return;
	fprintf(out, "S %u\n", section++);
	for (struct rec *r = recs; r; r = r->next) {
		if (r->inner || r->outer)
			fprintf(out, "%llx %llu %llu %llu\n", (unsigned long long)r->pc,
				(unsigned long long)r->insns, (unsigned long long)r->inner,
				(unsigned long long)r->outer);
		r->inner = r->outer = 0;
	}
	fflush(out);
}

static void on_mark(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	switch ((uint32_t)(uintptr_t)udata) {
	case MARK_INNER_ON:
		inner_on = 1;
		break;
	case MARK_INNER_OFF:
		inner_on = 0;
		break;
	case MARK_OUTER_ON:
		outer_on = 1;
		break;
	case MARK_OUTER_OFF:
		outer_on = 0;
		inner_on = 0;
		dump();
		break;
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct rec *r = calloc(1, sizeof *r);
	if (!r)
		return;
	r->pc = qemu_plugin_tb_vaddr(tb);
	r->insns = n;
	r->next = recs;
	recs = r;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, QEMU_PLUGIN_CB_NO_REGS, r);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		if (qemu_plugin_insn_size(insn) != 7)
			continue;
		const unsigned char *b = qemu_plugin_insn_data(insn);
		if (b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
			continue;
		uint32_t disp = (uint32_t)b[3] | (uint32_t)b[4] << 8 | (uint32_t)b[5] << 16 |
				(uint32_t)b[6] << 24;
		if (disp >= MARK_INNER_ON && disp <= MARK_OUTER_OFF)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)disp);
	}
}

static void at_quit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	if (outer_on)
		dump();
	if (out)
		fclose(out);
	out = NULL;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
							       const qemu_info_t *info, int argc,
							       char **argv)
{
	(void)info;
	const char *path = NULL;
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "out=", 4) == 0)
			path = argv[i] + 4;
	if (!path)
		return -1;
	out = fopen(path, "w");
	if (!out)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_quit, NULL);
	return 0;
}
