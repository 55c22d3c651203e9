// SPDX-License-Identifier: GPL-2.0
/*
 * tlbtrace: a QEMU TCG plugin that runs the TLB model (tlbmodel.h) on the
 * guest's memory accesses as they happen, from the first layout the guest
 * sends (tlbmark.c) to the end, for three layouts of the kernel's page
 * tables at once, and writes the results of each window between the
 * guest's start and stop markers as JSON.
 *
 *   -plugin tlbtrace.so,out=FILE,params=TSV[,on=LAYOUT][,rec=FILE.zst][,sites=FILE]
 *
 * rec= also writes what the model is handed, compressed, for tlbsim to
 * replay against other cores and variants (and to check that it counts
 * as the plugin does). sites= writes, for the DC ZVA and PRFM the model
 * cannot see, how often each instruction ran inside windows: "zva",
 * "prfm" or "prfm-excl" (a prefetch before an exclusive load of its
 * address), its address, the count, a line each, most run first.
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
	unsigned long gen;
};

static struct vcpu *vcpus;
static unsigned int nr_vcpus;
static const char *out_path;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim sim;
static struct core core;
static struct layout on_file;
static FILE *rec_file;
static uint64_t nr_accesses, nr_bad_layouts;
/*
 * Set once the first layout has arrived: from then on every access is
 * modelled, inside windows or not, so a window starts warm.
 */
static volatile int modelling;
/*
 * Bumped, under the lock, by a broadcast invalidation and by a window's
 * start: each vCPU empties its filter when it sees a new value, in its
 * next callback. With vCPUs on parallel threads (no -icount), an access
 * that races with the bump can still be left out: the filter is exact
 * when one vCPU runs at a time, as make bench-tlb runs them.
 */
static volatile unsigned long flush_gen;

/* The layout being received. */
static struct rx_layout rx;
static size_t caprx;
static uint64_t rx_word[2];
static int rx_sym, rx_wi, receiving;

/*
 * An instruction the model cannot see (DC ZVA, PRFM): one per
 * translation of it; at_exit() adds up those of one address.
 */
enum { SITE_ZVA, SITE_PRFM, SITE_PRFM_EXCL };
static const char *const site_kind[] = { "zva", "prfm", "prfm-excl" };

struct site {
	uint64_t pc;
	uint64_t count;		/* inside windows */
	int kind;
	struct site *next;
};
static struct site *sites;
static const char *sites_path;

/* Under the lock. */
static void model(uint64_t rec)
{
	if (rec_file)
		rec_put(rec_file, rec);
	sim_record(&sim, rec);
}

static void record(uint64_t rec)
{
	pthread_mutex_lock(&lock);
	model(rec);
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
}

static void emit_count(unsigned int cpu, struct vcpu *v)
{
	if (!v->kinsns && !v->uinsns)
		return;
	record(LM_REC(v->kinsns << LM_COUNT_BITS | v->uinsns, LM_T_COUNT, cpu));
	v->kinsns = v->uinsns = 0;
	filter_reset(v);
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
	if (rx.n == caprx) {
		caprx = caprx ? caprx * 2 : 4096;
		rx.r = realloc(rx.r, caprx * sizeof(*rx.r));
		rx.linear = realloc(rx.linear, caprx);
		if (!rx.r || !rx.linear) {
			fputs("tlbtrace: out of memory for a layout\n", stderr);
			exit(1);
		}
	}
	rx.r[rx.n].start = rx_word[0] & ~0xfffULL;
	rx.r[rx.n].shift = rx_word[0] & 0x3f;
	rx.r[rx.n].end = rx_word[1];
	rx.linear[rx.n++] = rx_word[0] >> 6 & 1;
	rx_word[0] = rx_word[1] = 0;
}

static void command(unsigned int cpu, unsigned int off)
{
	unsigned int op = off >> 8, arg = off & 0xff;
	struct vcpu *v = &vcpus[cpu];

	switch (op) {
	case LM_MARK_START:
		if (sim.in_window || !modelling)
			break;
		/*
		 * Every vCPU's instructions so far belong before the
		 * window: the others' are counted when they next tick,
		 * which may put up to LM_TICK of them on the wrong side.
		 */
		emit_count(cpu, v);
		pthread_mutex_lock(&lock);
		flush_gen++;
		model(LM_REC(off, LM_T_MARK, cpu));
		pthread_mutex_unlock(&lock);
		check_gen(v);
		break;
	case LM_MARK_STOP:
		if (!sim.in_window)
			break;
		emit_count(cpu, v);
		pthread_mutex_lock(&lock);
		/*
		 * end_layout models go back to the layout as sent: every
		 * vCPU's filter empties, as at the start.
		 */
		flush_gen++;
		model(LM_REC(off, LM_T_MARK, cpu));
		fflush(sim.out);
		pthread_mutex_unlock(&lock);
		check_gen(v);
		break;
	case LM_MARK_LAYOUT:
		rx.n = 0;
		rx_sym = rx_wi = 0;
		rx_word[0] = rx_word[1] = 0;
		receiving = 1;
		break;
	case LM_MARK_LAYOUT_END:
		if (!receiving)
			break;
		receiving = 0;
		if (rx_sym || rx_wi || (rx.n & 0xff) != arg || !rx_valid(&rx)) {
			fprintf(stderr, "tlbtrace: a layout of %zu ranges arrived damaged; kept the last one\n",
				rx.n);
			nr_bad_layouts++;
			break;
		}
		pthread_mutex_lock(&lock);
		if (rec_file)
			rec_put_layout(rec_file, LM_T_LAYOUT, rx.r, rx.linear, rx.n);
		sim_layout(&sim, &rx);
		flush_gen++;
		modelling = 1;
		pthread_mutex_unlock(&lock);
		break;
	}
}

/* @udata: 1 if the instruction runs at EL1 (its block's address says). */
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
	if (!modelling)
		return;
	check_gen(v);
	if (lm_filter_hit(v->dpage, page))
		return;
	nr_accesses++;
	record(LM_REC(page >> LM_TRACE_SHIFT, udata ? LM_T_KDATA : LM_T_DATA, cpu));
}

/*
 * @udata: a page the block runs from | the instructions it counts there
 * (all of them on the block's first page, none on a second one).
 */
static void tb_cb(unsigned int cpu, void *udata)
{
	uint64_t u = (uintptr_t)udata, page = u & ~0xfffULL;
	struct vcpu *v = &vcpus[cpu];

	if (!modelling)
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

	if (!modelling)
		return;
	/*
	 * Every invalidation empties the filters it reaches, by address
	 * too: the tlbi_va_l1 variant empties the L1s there.
	 */
	pthread_mutex_lock(&lock);
	if (bcast)
		flush_gen++;
	model(LM_REC(bcast, type, cpu));
	pthread_mutex_unlock(&lock);
	filter_reset(&vcpus[cpu]);
}

/* @udata: its struct site. */
static void unseen_cb(unsigned int cpu, void *udata)
{
	struct site *st = udata;

	if (!modelling)
		return;
	if (sim.in_window)
		__atomic_fetch_add(&st->count, 1, __ATOMIC_RELAXED);
	record(LM_REC(st->pc >> 63 | (st->kind == SITE_PRFM_EXCL) << 1,
		      st->kind == SITE_ZVA ? LM_T_ZVA : LM_T_PRFM, cpu));
}

/* Under tb_trans(): a site for the instruction at @pc. */
static struct site *site_new(uint64_t pc, int kind)
{
	struct site *st = calloc(1, sizeof(*st));

	if (!st) {
		fprintf(stderr, "tlbtrace: out of memory\n");
		abort();
	}
	st->pc = pc;
	st->kind = kind;
	pthread_mutex_lock(&lock);
	st->next = sites;
	sites = st;
	pthread_mutex_unlock(&lock);
	return st;
}

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int count_cmp(const void *a, const void *b)
{
	const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : site_cmp(a, b);
}

/* The sites= file: the counts of one address added up, most run first. */
static void sites_write(void)
{
	struct site *st, **v;
	size_t n = 0, i, j;
	FILE *f;

	for (st = sites; st; st = st->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	f = fopen(sites_path, "w");
	if (!v || !f) {
		fprintf(stderr, "tlbtrace: cannot write %s\n", sites_path);
		return;
	}
	for (st = sites, i = 0; st; st = st->next)
		v[i++] = st;
	qsort(v, n, sizeof(*v), site_cmp);
	for (i = 0, j = 0; i < n; i++) {
		if (j && !site_cmp(&v[j - 1], &v[i]))
			v[j - 1]->count += v[i]->count;
		else
			v[j++] = v[i];
	}
	qsort(v, j, sizeof(*v), count_cmp);
	for (i = 0; i < j && v[i]->count; i++)
		fprintf(f, "%s\t%016llx\t%llu\n", site_kind[v[i]->kind],
			(unsigned long long)v[i]->pc, (unsigned long long)v[i]->count);
	if (fclose(f))
		fprintf(stderr, "tlbtrace: writing %s failed\n", sites_path);
	free(v);
}

/*
 * TLBI is SYS #op1, C8, Cm, #op2, Xt. The EL1 invalidations of all
 * entries (VMALLE1) or of an ASID's (ASIDE1): CRm 7 local, 3 Inner
 * Shareable, 1 Outer Shareable. Anything else with op1 0 is by address
 * or by range: CRm 7 and 6 local, the others broadcast.
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
		*udata = LM_T_FLUSH_VA | (uintptr_t)(crm != 7 && crm != 6) << 8;
	return 1;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t page = qemu_plugin_tb_vaddr(tb) & ~0xfffULL, last;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)(page | n));
	/* A block that runs on into the next page fetches from it too. */
	last = n ? qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, n - 1)) & ~0xfffULL : page;
	if (last != page)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)last);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uintptr_t udata;
		uint32_t op, next = 0;
		int kind = -1;

		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)(page >> 63));
		if (qemu_plugin_insn_size(insn) != 4)
			continue;
		memcpy(&op, qemu_plugin_insn_data(insn), 4);
		if (i + 1 < n && qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i + 1)) == 4)
			memcpy(&next, qemu_plugin_insn_data(qemu_plugin_tb_get_insn(tb, i + 1)), 4);
		/*
		 * DC ZVA, Xt: QEMU zeroes the block with no memory callback;
		 * nor has a prefetch one. Counted, for a bound.
		 */
		if ((op & 0xffffffe0) == 0xd50b7420)
			kind = SITE_ZVA;
		else if (lm_is_prfm(op))
			kind = lm_prfm_before_exclusive(op, next) ? SITE_PRFM_EXCL : SITE_PRFM;
		if (kind >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, unseen_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       site_new(qemu_plugin_insn_vaddr(insn), kind));
		if (tlbi_type(op, &udata))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, tlbi_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)udata);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	pthread_mutex_lock(&lock);
	modelling = 0;
	if (sim.in_window)
		fprintf(stderr, "tlbtrace: QEMU exits inside window %u: left out\n",
			sim.window_id);
	sim.in_window = 0;
	sim_json_tail(&sim, nr_bad_layouts);
	if (sites_path)
		sites_write();
	if (fclose(sim.out))
		fprintf(stderr, "tlbtrace: writing %s failed\n", out_path);
	if (rec_file && pclose(rec_file))
		fprintf(stderr, "tlbtrace: writing the recording failed\n");
	rec_file = NULL;
	pthread_mutex_unlock(&lock);
	fprintf(stderr, "tlbtrace: %d windows, %llu data accesses modelled, %llu layouts received, to %s\n",
		sim.windows_out, (unsigned long long)nr_accesses,
		(unsigned long long)sim.layouts_seen, out_path);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *params = NULL, *on = NULL, *rec = NULL;
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
		} else if (!strncmp(argv[arg], "rec=", 4)) {
			rec = argv[arg] + 4;
		} else if (!strncmp(argv[arg], "sites=", 6)) {
			sites_path = argv[arg] + 6;
		} else {
			fprintf(stderr, "tlbtrace: unknown argument '%s' (out=FILE,params=TSV[,on=LAYOUT][,rec=FILE][,sites=FILE])\n",
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
	core_load(&core, params);
	if (on)
		layout_load(&on_file, "on", on);
	vcpus = calloc(nr_vcpus, sizeof(*vcpus));
	sim.out = fopen(out_path, "w");
	if (!vcpus || !sim.out) {
		fprintf(stderr, "tlbtrace: cannot write %s\n", out_path);
		return -1;
	}
	sim_init(&sim, nr_vcpus, on ? &on_file : NULL);
	sim_add_inline(&sim, &core);
	if (rec) {
		rec_file = rec_open(rec, 1);
		rec_put_head(rec_file, nr_vcpus, on ? &on_file : NULL);
	}
	for (i = 0; i < nr_vcpus; i++)
		filter_reset(&vcpus[i]);
	sim_json_head(&sim);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
