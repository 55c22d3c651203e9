// SPDX-License-Identifier: GPL-2.0
/*
 * tlbtrace: a QEMU TCG plugin that runs the TLB model (tlbmodel.h) on the
 * guest's memory accesses as they happen, between the guest's start and
 * stop markers (tlbmark.c), for three layouts of the kernel's page
 * tables at once, and writes the results of each window as JSON.
 *
 *   -plugin tlbtrace.so,out=FILE,params=TSV[,on=LAYOUT]
 *
 * TCG has no architectural TLB, and QEMU 7.2's plugins cannot read guest
 * registers or memory: the plugin sees virtual addresses, not the page
 * tables that map them. The guest sends them (tlbmark layout, before each
 * window): its own layout is "series"; "full" is the same with every
 * page of the linear map a PTE (unpatched rodata=full); "on" takes the
 * linear map from the LAYOUT file (a rodata=on boot's, scripts/bench/tlb/
 * layout.py), the rest from the guest's.
 *
 * Longer than 400 lines: QEMU loads one object as the plugin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"
#include "tlbmodel.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = LM_QEMU_PLUGIN_API;

struct vcpu {
	uint64_t dpage[LM_FILTER], ipage[LM_FILTER];
	uint64_t kinsns, uinsns;	/* since the last count record */
	unsigned long gen, wgen;
};

static struct vcpu *vcpus;
static unsigned int nr_vcpus;
static const char *out_path;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim sim;
static struct layout layouts[3], on_file;
static unsigned int nr_layouts;
static uint64_t nr_accesses, nr_sent, nr_bad_layouts;
/* DC ZVA zeroes a block without a memory callback: counted per window. */
static uint64_t nr_zva[2];
static volatile int recording;
/*
 * Bumped, under the lock, by a broadcast invalidation and by a window's
 * start: each vCPU empties its filter when it sees a new value, in its
 * next callback. With vCPUs on parallel threads (no -icount), an access
 * that races with the bump can still be left out: the filter is exact
 * when one vCPU runs at a time, as make bench-tlb runs them. window_gen
 * zeroes the instruction counts a vCPU carries into a new window.
 */
static volatile unsigned long flush_gen, window_gen;

/* The layout being received. */
static struct range *rx;
static unsigned char *rx_linear;
static size_t nrx, caprx;
static uint64_t rx_word[2];
static int rx_sym, rx_wi, receiving;

static void record(uint64_t rec)
{
	pthread_mutex_lock(&lock);
	sim_record(&sim, rec);
	pthread_mutex_unlock(&lock);
}

static void filter_reset(struct vcpu *v)
{
	lm_filter_reset(v->dpage);
	lm_filter_reset(v->ipage);
}

static void check_gen(struct vcpu *v)
{
	if (v->gen != flush_gen) {
		v->gen = flush_gen;
		filter_reset(v);
	}
	if (v->wgen != window_gen) {
		v->wgen = window_gen;
		v->kinsns = v->uinsns = 0;
	}
}

static void emit_count(unsigned int cpu, struct vcpu *v)
{
	if (!v->kinsns && !v->uinsns)
		return;
	record(LM_REC(v->kinsns << LM_COUNT_BITS | v->uinsns, LM_T_COUNT, cpu));
	v->kinsns = v->uinsns = 0;
	filter_reset(v);
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void set_layout(struct layout *l, struct range *r, size_t n,
		       uint64_t lin_start, uint64_t lin_end)
{
	qsort(r, n, sizeof(*r), range_cmp);
	free(l->r);
	l->r = r;
	l->n = n;
	l->lin_start = lin_start;
	l->lin_end = lin_end;
}

/* The three layouts from the one just received. */
static void build_layouts(void)
{
	uint64_t ls = ~0ULL, le = 0;
	struct range *full = malloc(nrx * sizeof(*rx)), *ser = malloc(nrx * sizeof(*rx));
	struct range *on = malloc((nrx + on_file.n) * sizeof(*rx));
	size_t i, non = 0;

	if (!full || !ser || !on) {
		fputs("tlbtrace: out of memory for a layout\n", stderr);
		exit(1);
	}
	for (i = 0; i < nrx; i++) {
		ser[i] = full[i] = rx[i];
		if (rx_linear[i]) {
			full[i].shift = base_shift;
			ls = rx[i].start < ls ? rx[i].start : ls;
			le = rx[i].end > le ? rx[i].end : le;
		} else {
			on[non++] = rx[i];
		}
	}
	for (i = 0; i < on_file.n; i++)
		if (on_file.r[i].start >= on_file.lin_start &&
		    on_file.r[i].end <= on_file.lin_end)
			on[non++] = on_file.r[i];
	set_layout(&layouts[0], full, nrx, ls, le);
	set_layout(&layouts[1], ser, nrx, ls, le);
	if (nr_layouts == 3)
		set_layout(&layouts[2], on, non, ls, le);
	else
		free(on);
}

/* Sorted, each range non-empty with a shift a leaf can have, some linear. */
static int rx_valid(void)
{
	int linear = 0;
	size_t i;

	for (i = 0; i < nrx; i++) {
		if (!range_valid(i ? &rx[i - 1] : NULL, &rx[i]))
			return 0;
		linear |= rx_linear[i];
	}
	return linear;
}

static void rx_symbol(unsigned int sym)
{
	if (!receiving)
		return;
	rx_word[rx_wi] |= (uint64_t)sym << (16 * rx_sym);
	if (++rx_sym < 4)
		return;
	rx_sym = 0;
	if (++rx_wi < 2)
		return;
	rx_wi = 0;
	if (nrx == caprx) {
		caprx = caprx ? caprx * 2 : 4096;
		rx = realloc(rx, caprx * sizeof(*rx));
		rx_linear = realloc(rx_linear, caprx);
		if (!rx || !rx_linear) {
			fputs("tlbtrace: out of memory for a layout\n", stderr);
			exit(1);
		}
	}
	rx[nrx].start = rx_word[0] & ~0xfffULL;
	rx[nrx].shift = rx_word[0] & 0x3f;
	rx[nrx].end = rx_word[1];
	rx_linear[nrx++] = rx_word[0] >> 6 & 1;
	rx_word[0] = rx_word[1] = 0;
}

static void command(unsigned int cpu, unsigned int off)
{
	unsigned int op = off >> 8, arg = off & 0xff;
	struct vcpu *v = &vcpus[cpu];

	switch (op) {
	case LM_MARK_START:
		if (recording)
			break;
		pthread_mutex_lock(&lock);
		flush_gen++;
		window_gen++;
		nr_zva[0] = nr_zva[1] = 0;
		sim_record(&sim, LM_REC(off, LM_T_MARK, cpu));
		recording = 1;
		pthread_mutex_unlock(&lock);
		check_gen(v);
		break;
	case LM_MARK_STOP:
		if (!recording)
			break;
		emit_count(cpu, v);
		pthread_mutex_lock(&lock);
		recording = 0;
		sim.zva[0] = nr_zva[0];
		sim.zva[1] = nr_zva[1];
		sim_record(&sim, LM_REC(off, LM_T_MARK, cpu));
		fflush(sim.out);
		pthread_mutex_unlock(&lock);
		break;
	case LM_MARK_LAYOUT:
		nrx = 0;
		rx_sym = rx_wi = 0;
		rx_word[0] = rx_word[1] = 0;
		receiving = 1;
		break;
	case LM_MARK_LAYOUT_END:
		if (!receiving)
			break;
		receiving = 0;
		if (rx_sym || rx_wi || (nrx & 0xff) != arg || !rx_valid()) {
			fprintf(stderr, "tlbtrace: a layout of %zu ranges arrived damaged; kept the last one\n",
				nrx);
			nr_bad_layouts++;
			break;
		}
		pthread_mutex_lock(&lock);
		build_layouts();
		pthread_mutex_unlock(&lock);
		nr_sent++;
		break;
	}
}

static void mem_cb(unsigned int cpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	uint64_t page = vaddr & ~0xfffULL;
	struct vcpu *v = &vcpus[cpu];

	if (page - LM_MARK_PAGE < LM_MARK_PAGES * 4096ULL) {
		if (page == LM_MARK_PAGE)
			command(cpu, vaddr & 0xfff);
		else
			rx_symbol((vaddr - LM_MARK_PAGE - 4096) & 0xffff);
		return;
	}
	if (!recording)
		return;
	check_gen(v);
	if (lm_filter_hit(v->dpage, page))
		return;
	nr_accesses++;
	record(LM_REC(page >> LM_TRACE_SHIFT, LM_T_DATA, cpu));
}

/* @udata: the block's first page | its number of instructions. */
static void tb_cb(unsigned int cpu, void *udata)
{
	uint64_t u = (uintptr_t)udata, page = u & ~0xfffULL;
	struct vcpu *v = &vcpus[cpu];

	if (!recording)
		return;
	check_gen(v);
	if (page >> 63)
		v->kinsns += u & 0xfff;
	else
		v->uinsns += u & 0xfff;
	if (v->kinsns + v->uinsns >= LM_TICK)
		emit_count(cpu, v);
	if (!lm_filter_hit(v->ipage, page))
		record(LM_REC(page >> LM_TRACE_SHIFT, LM_T_INSN, cpu));
}

/* @udata: the record type | broadcast << 8. */
static void tlbi_cb(unsigned int cpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;
	unsigned int type = u & 0xff, bcast = u >> 8;

	if (!recording)
		return;
	/* The model ignores invalidation by address: so does the filter. */
	pthread_mutex_lock(&lock);
	if (type != LM_T_FLUSH_VA && bcast)
		flush_gen++;
	sim_record(&sim, LM_REC(bcast, type, cpu));
	pthread_mutex_unlock(&lock);
	if (type != LM_T_FLUSH_VA)
		filter_reset(&vcpus[cpu]);
}

/* @udata: 1 for a kernel instruction. */
static void zva_cb(unsigned int cpu, void *udata)
{
	if (!recording)
		return;
	pthread_mutex_lock(&lock);
	nr_zva[(uintptr_t)udata]++;
	pthread_mutex_unlock(&lock);
}

/*
 * TLBI is SYS #op1, C8, Cm, #op2, Xt. The EL1 invalidations of all
 * entries (VMALLE1) or of an ASID's (ASIDE1): CRm 7 local, 3 Inner
 * Shareable, 1 Outer Shareable. Anything else with op1 0 is by address.
 */
static int tlbi_type(uint32_t insn, uintptr_t *udata)
{
	unsigned int op1 = (insn >> 16) & 7, crm = (insn >> 8) & 0xf;
	unsigned int op2 = (insn >> 5) & 7, bcast = crm != 7;

	if ((insn & 0xfff8f000) != 0xd5088000 || op1 != 0)
		return 0;
	if (op2 == 0 && (crm == 7 || crm == 3 || crm == 1))
		*udata = LM_T_FLUSH_ALL | bcast << 8;
	else if (op2 == 2 && (crm == 7 || crm == 3 || crm == 1))
		*udata = LM_T_FLUSH_USER | bcast << 8;
	else
		*udata = LM_T_FLUSH_VA | 1 << 8;
	return 1;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t page = qemu_plugin_tb_vaddr(tb) & ~0xfffULL;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)(page | n));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uintptr_t udata;
		uint32_t op;

		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (qemu_plugin_insn_size(insn) != 4)
			continue;
		memcpy(&op, qemu_plugin_insn_data(insn), 4);
		/* DC ZVA, Xt: QEMU zeroes the block with no memory callback. */
		if ((op & 0xffffffe0) == 0xd50b7420)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, zva_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)(page >> 63));
		if (tlbi_type(op, &udata))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, tlbi_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)udata);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	pthread_mutex_lock(&lock);
	recording = 0;
	if (sim.in_window)
		fprintf(stderr, "tlbtrace: QEMU exits inside window %u: left out\n",
			sim.window_id);
	sim.in_window = 0;
	fprintf(sim.out, "\n], \"layouts_received\": %llu, \"layouts_damaged\": %llu}\n",
		(unsigned long long)nr_sent, (unsigned long long)nr_bad_layouts);
	if (fclose(sim.out))
		fprintf(stderr, "tlbtrace: writing %s failed\n", out_path);
	pthread_mutex_unlock(&lock);
	fprintf(stderr, "tlbtrace: %d windows, %llu data accesses modelled, %llu layouts received, to %s\n",
		sim.windows_out, (unsigned long long)nr_accesses,
		(unsigned long long)nr_sent, out_path);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	static const double scales[] = { 0.5, 1, 2 };
	const char *params = NULL, *on = NULL;
	unsigned int i;
	int arg;

	if (info->version.min > LM_QEMU_PLUGIN_API ||
	    info->version.cur < LM_QEMU_PLUGIN_API) {
		fprintf(stderr, "tlbtrace: built for plugin API %d, QEMU offers %d to %d\n",
			LM_QEMU_PLUGIN_API, info->version.min, info->version.cur);
		return -1;
	}
	if (!info->system_emulation || strcmp(info->target_name, "aarch64")) {
		fprintf(stderr, "tlbtrace: needs qemu-system-aarch64 (got %s%s)\n",
			info->target_name,
			info->system_emulation ? "" : ", user mode");
		return -1;
	}
	for (arg = 0; arg < argc; arg++) {
		if (!strncmp(argv[arg], "out=", 4)) {
			out_path = argv[arg] + 4;
		} else if (!strncmp(argv[arg], "params=", 7)) {
			params = argv[arg] + 7;
		} else if (!strncmp(argv[arg], "on=", 3)) {
			on = argv[arg] + 3;
		} else {
			fprintf(stderr, "tlbtrace: unknown argument '%s' (out=FILE,params=TSV[,on=LAYOUT])\n",
				argv[arg]);
			return -1;
		}
	}
	if (!out_path || !params) {
		fprintf(stderr, "tlbtrace: needs out=FILE and params=TSV\n");
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	if (nr_vcpus < 1 || nr_vcpus > LM_MAX_VCPUS) {
		fprintf(stderr, "tlbtrace: %u vCPUs: 1 to %d supported\n",
			nr_vcpus, LM_MAX_VCPUS);
		return -1;
	}
	params_load(&sim, params);
	if (sim.l1d.sets != 1 || sim.l1i.sets != 1) {
		fprintf(stderr, "tlbtrace: %s: the first-level TLBs must be fully associative\n",
			params);
		return -1;
	}
	strcpy(layouts[0].name, "full");
	strcpy(layouts[1].name, "series");
	strcpy(layouts[2].name, "on");
	nr_layouts = 2;
	if (on) {
		layout_load(&on_file, "on", on);
		nr_layouts = 3;
	}
	vcpus = calloc(nr_vcpus, sizeof(*vcpus));
	sim.out = fopen(out_path, "w");
	if (!vcpus || !sim.out) {
		fprintf(stderr, "tlbtrace: cannot write %s\n", out_path);
		return -1;
	}
	sim_init(&sim, nr_vcpus, layouts, nr_layouts, scales, 3);
	for (i = 0; i < nr_vcpus; i++)
		filter_reset(&vcpus[i]);
	fprintf(sim.out, "{\"vcpus\": %u, \"tick\": %d, \"windows\": [", nr_vcpus, LM_TICK);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
