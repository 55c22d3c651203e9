/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TLB model, shared by the tlbtrace plugin (which runs it on the
 * guest's accesses as they happen) and tlbsim (its self-test).
 *
 * Per vCPU: a first-level data TLB and a first-level instruction TLB,
 * both fully associative, and a unified second-level TLB, set
 * associative, each with true LRU replacement and the page sizes the
 * parameter table gives (neoverse-n1.tsv). A leaf (a page, a contiguous
 * range, a block) takes one entry of the largest size the level supports
 * that does not exceed the leaf. A first-level miss looks up the second
 * level; a second-level miss is a walk, and fills both. User addresses
 * are translated by base pages and carry no ASID; kernel entries are
 * global. TLBI VMALLE1 empties a vCPU's TLBs, ASIDE1 their user entries
 * (all of them: the model has no ASIDs); the broadcast forms do it on
 * every vCPU. Invalidation by address is counted, not modelled.
 *
 * One model per layout of the kernel's page tables and per size of the
 * second-level TLB see the same accesses. A layout: the linear map's
 * range and sorted ranges, each mapped by leaves of 1 << shift bytes; a
 * kernel address no range covers is taken as a base page. Results: JSON,
 * one object per measured window.
 *
 * Longer than 400 lines: one model, in one header so that the plugin and
 * its self-test run the same code.
 */
#ifndef LINMAP_TLBMODEL_H
#define LINMAP_TLBMODEL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlbtrace.h"

#define MAX_SIZES	8
#define MAX_LAYOUTS	4
#define MAX_SCALES	4
#define FP_WINDOW	1000000ULL	/* footprint per million instructions */
#define FP_BITS		18

static const int base_shift = 12;

/* ---- the TLB ----------------------------------------------------------- */

struct level {
	unsigned int entries, ways, sets;
	unsigned int nsizes, shifts[MAX_SIZES];	/* ascending */
};

struct entry {
	uint64_t tag;		/* (va >> shift) << 7 | global << 6 | shift */
	uint64_t used;		/* LRU stamp; 0: invalid */
};

struct tlb {
	const struct level *lv;
	struct entry *e;
	uint64_t clock;
};

/* The size a leaf of 1 << @shift bytes takes in @lv. */
static inline unsigned int splinter(const struct level *lv, unsigned int shift)
{
	unsigned int i, s = lv->shifts[0];

	for (i = 0; i < lv->nsizes && lv->shifts[i] <= shift; i++)
		s = lv->shifts[i];
	return s;
}

static inline void tlb_init(struct tlb *t, const struct level *lv)
{
	t->lv = lv;
	t->e = calloc((size_t)lv->entries, sizeof(*t->e));
	t->clock = 0;
	if (!t->e) {
		perror("tlb model");
		exit(2);
	}
}

/* Look up, and fill on a miss. True on a hit. */
static inline int tlb_access(struct tlb *t, uint64_t va, unsigned int leaf, int global)
{
	unsigned int s = splinter(t->lv, leaf), w, victim = 0;
	uint64_t vpn = va >> s, tag = vpn << 7 | (uint64_t)global << 6 | s;
	struct entry *set = &t->e[(vpn % t->lv->sets) * t->lv->ways];

	t->clock++;
	for (w = 0; w < t->lv->ways; w++) {
		if (set[w].tag == tag && set[w].used) {
			set[w].used = t->clock;
			return 1;
		}
	}
	for (w = 1; w < t->lv->ways; w++)
		if (set[w].used < set[victim].used)
			victim = w;
	set[victim].tag = tag;
	set[victim].used = t->clock;
	return 0;
}

static inline void tlb_flush(struct tlb *t, int user_only)
{
	unsigned int i;

	for (i = 0; i < t->lv->entries; i++)
		if (!user_only || !(t->e[i].tag & 1 << 6))
			t->e[i].used = 0;
}

/* ---- layouts ----------------------------------------------------------- */

struct range {
	uint64_t start, end;
	unsigned int shift;
};

struct layout {
	char name[16];
	uint64_t lin_start, lin_end;
	struct range *r;
	size_t n;
};

/* A range a layout may hold after @prev (NULL for its first). */
static inline int range_valid(const struct range *prev, const struct range *r)
{
	return r->end > r->start && r->shift >= 12 && r->shift <= 42 &&
		(!prev || r->start >= prev->end);
}

static inline unsigned int leaf_shift(const struct layout *l, uint64_t va)
{
	size_t lo = 0, hi = l->n;

	if (!(va >> 63))
		return base_shift;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (va < l->r[mid].start)
			hi = mid;
		else if (va >= l->r[mid].end)
			lo = mid + 1;
		else
			return l->r[mid].shift;
	}
	return base_shift;
}

static inline void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "tlb model: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static inline void layout_load(struct layout *l, const char *name, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t cap = 0;
	unsigned long long a, b;
	unsigned int s;
	struct range r;

	if (!f)
		die("cannot read layout %s", path);
	snprintf(l->name, sizeof(l->name), "%s", name);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "linear %llx %llx", &a, &b) == 2) {
			l->lin_start = a;
			l->lin_end = b;
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%llx %llx %u", &a, &b, &s) != 3)
			die("bad line in layout %s", path);
		r = (struct range){ a, b, s };
		if (!range_valid(l->n ? &l->r[l->n - 1] : NULL, &r))
			die("bad or unsorted line in layout %s", path);
		if (l->n == cap) {
			cap = cap ? cap * 2 : 1024;
			l->r = realloc(l->r, cap * sizeof(*l->r));
			if (!l->r)
				die("out of memory for %s", path);
		}
		l->r[l->n++] = r;
	}
	fclose(f);
	if (!l->lin_end)
		die("layout %s has no 'linear START END' line", path);
}

/* ---- the replay -------------------------------------------------------- */

enum { C_KLIN, C_KOTHER, C_USER, NR_CLASSES };
static const char *const class_name[] = { "kernel_linear", "kernel_other", "user" };

struct stats {
	uint64_t daccess[NR_CLASSES], dmiss[NR_CLASSES], dwalk[NR_CLASSES];
	uint64_t iaccess[2], imiss[2], iwalk[2];
};

struct model {
	const struct layout *l;
	double scale;
	struct level l2;
	struct tlb *l1d, *l1i, *tl2;	/* per vCPU */
	struct stats st;
};

struct footprint {		/* per layout, per vCPU */
	uint64_t *set;		/* tag | generation in the low bits */
	uint64_t gen, insns, windows, distinct, current;
};

struct sim {
	struct level l1d, l1i, l2;
	unsigned int vcpus;
	struct model m[MAX_LAYOUTS * MAX_SCALES];
	unsigned int nmodels, nlayouts, nscales;
	struct layout *layouts;
	struct footprint *fp;	/* [layout][vcpu] */
	uint64_t kinsns, uinsns, records, tlbi[3];
	uint64_t zva[2];	/* DC ZVA run, user and kernel: not modelled */
	FILE *out;		/* the results */
	int in_window;
	unsigned int window_id;
	int windows_out;
};

static inline void model_reset(struct sim *s, struct model *m)
{
	unsigned int c;

	for (c = 0; c < s->vcpus; c++) {
		tlb_flush(&m->l1d[c], 0);
		tlb_flush(&m->l1i[c], 0);
		tlb_flush(&m->tl2[c], 0);
	}
	memset(&m->st, 0, sizeof(m->st));
}

static inline void sim_init(struct sim *s, unsigned int vcpus, struct layout *layouts,
		     unsigned int nlayouts, const double *scales,
		     unsigned int nscales)
{
	unsigned int i, j, c;

	s->vcpus = vcpus;
	s->layouts = layouts;
	s->nlayouts = nlayouts;
	s->nscales = nscales;
	s->nmodels = 0;
	for (i = 0; i < nlayouts; i++) {
		for (j = 0; j < nscales; j++) {
			struct model *m = &s->m[s->nmodels++];

			m->l = &layouts[i];
			m->scale = scales[j];
			m->l2 = s->l2;
			m->l2.sets = (unsigned int)(s->l2.sets * scales[j] + 0.5);
			if (!m->l2.sets)
				m->l2.sets = 1;
			m->l2.entries = m->l2.sets * m->l2.ways;
			m->tl2 = calloc(vcpus, sizeof(struct tlb));
			if (!m->tl2)
				die("out of memory%s", "");
			for (c = 0; c < vcpus; c++)
				tlb_init(&m->tl2[c], &m->l2);
			/*
			 * The first level does not depend on the second: the
			 * models of one layout share theirs, looked up once.
			 */
			if (j) {
				m->l1d = s->m[s->nmodels - 1 - j].l1d;
				m->l1i = s->m[s->nmodels - 1 - j].l1i;
				continue;
			}
			m->l1d = calloc(vcpus, sizeof(struct tlb));
			m->l1i = calloc(vcpus, sizeof(struct tlb));
			if (!m->l1d || !m->l1i)
				die("out of memory%s", "");
			for (c = 0; c < vcpus; c++) {
				tlb_init(&m->l1d[c], &s->l1d);
				tlb_init(&m->l1i[c], &s->l1i);
			}
		}
	}
	s->fp = calloc((size_t)nlayouts * vcpus, sizeof(*s->fp));
	for (i = 0; s->fp && i < nlayouts * vcpus; i++) {
		s->fp[i].set = calloc(1 << FP_BITS, sizeof(uint64_t));
		if (!s->fp[i].set)
			die("out of memory%s", "");
	}
}

/* Distinct linear-map leaves per window of FP_WINDOW instructions. */
static inline void fp_touch(struct footprint *f, uint64_t key)
{
	uint64_t h = (key * 0x9e3779b97f4a7c15ULL) >> (64 - FP_BITS);
	uint64_t want = key << 16 | (f->gen & 0xffff);

	while (f->set[h]) {
		if (f->set[h] == want)
			return;
		if ((f->set[h] & 0xffff) != (f->gen & 0xffff))
			break;	/* a stale slot from an older window */
		h = (h + 1) & ((1 << FP_BITS) - 1);
	}
	if (f->current >= (1 << FP_BITS) / 2)
		return;	/* the table is full: saturate, never loop */
	f->set[h] = want;
	f->current++;
}

static inline void fp_insns(struct footprint *f, uint64_t n)
{
	f->insns += n;
	if (f->insns < FP_WINDOW)
		return;
	f->windows++;
	f->distinct += f->current;
	f->current = 0;
	f->insns = 0;
	if (!(++f->gen & 0xffff)) {	/* stamps wrap: really clear */
		memset(f->set, 0, sizeof(uint64_t) << FP_BITS);
		f->gen++;
	}
}

static inline void do_data(struct sim *s, unsigned int cpu, uint64_t va)
{
	int user = !(va >> 63), c = C_USER, hit = 0;
	unsigned int i, shift = base_shift;

	for (i = 0; i < s->nmodels; i++) {
		struct model *m = &s->m[i];

		if (i % s->nscales == 0) {
			if (!user) {
				shift = leaf_shift(m->l, va);
				c = va >= m->l->lin_start && va < m->l->lin_end ?
					C_KLIN : C_KOTHER;
			}
			hit = tlb_access(&m->l1d[cpu], va, shift, !user);
			if (c == C_KLIN)
				fp_touch(&s->fp[(i / s->nscales) * s->vcpus + cpu],
					 (va >> shift) << 6 | shift);
		}
		m->st.daccess[c]++;
		if (hit)
			continue;
		m->st.dmiss[c]++;
		if (!tlb_access(&m->tl2[cpu], va, shift, !user))
			m->st.dwalk[c]++;
	}
}

static inline void do_insn(struct sim *s, unsigned int cpu, uint64_t va)
{
	int user = !(va >> 63), hit = 0;
	unsigned int i, shift = base_shift;

	for (i = 0; i < s->nmodels; i++) {
		struct model *m = &s->m[i];

		if (i % s->nscales == 0) {
			if (!user)
				shift = leaf_shift(m->l, va);
			hit = tlb_access(&m->l1i[cpu], va, shift, !user);
		}
		m->st.iaccess[!user]++;
		if (hit)
			continue;
		m->st.imiss[!user]++;
		if (!tlb_access(&m->tl2[cpu], va, shift, !user))
			m->st.iwalk[!user]++;
	}
}

static inline void do_flush(struct sim *s, unsigned int cpu, int bcast, int user_only)
{
	unsigned int i, c;

	for (i = 0; i < s->nmodels; i++) {
		for (c = 0; c < s->vcpus; c++) {
			if (!bcast && c != cpu)
				continue;
			tlb_flush(&s->m[i].l1d[c], user_only);
			tlb_flush(&s->m[i].l1i[c], user_only);
			tlb_flush(&s->m[i].tl2[c], user_only);
		}
	}
}

static inline void window_start(struct sim *s, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < s->nmodels; i++)
		model_reset(s, &s->m[i]);
	for (i = 0; i < s->nlayouts * s->vcpus; i++) {
		struct footprint *f = &s->fp[i];

		memset(f->set, 0, sizeof(uint64_t) << FP_BITS);
		f->gen = 1;
		f->insns = f->windows = f->distinct = f->current = 0;
	}
	s->kinsns = s->uinsns = s->records = 0;
	memset(s->tlbi, 0, sizeof(s->tlbi));
	memset(s->zva, 0, sizeof(s->zva));
	s->in_window = 1;
	s->window_id = id;
}

static inline void print_stats(FILE *o, const struct stats *st)
{
	int c;

	fprintf(o, "{");
	for (c = 0; c < NR_CLASSES; c++)
		fprintf(o, "%s\"%s\": {\"access\": %llu, \"l1_miss\": %llu, \"walk\": %llu}",
		       c ? ", " : "", class_name[c],
		       (unsigned long long)st->daccess[c],
		       (unsigned long long)st->dmiss[c],
		       (unsigned long long)st->dwalk[c]);
	for (c = 0; c < 2; c++)
		fprintf(o, ", \"%s\": {\"access\": %llu, \"l1_miss\": %llu, \"walk\": %llu}",
		       c ? "insn_kernel" : "insn_user",
		       (unsigned long long)st->iaccess[c],
		       (unsigned long long)st->imiss[c],
		       (unsigned long long)st->iwalk[c]);
	fprintf(o, "}");
}

static inline void window_stop(struct sim *s)
{
	unsigned int i, j, c, n;
	FILE *o = s->out;

	fprintf(o, "%s\n  {\"id\": %u, \"insns_kernel\": %llu, \"insns_user\": %llu, "
	       "\"records\": %llu, \"tlbi_all\": %llu, \"tlbi_user\": %llu, "
	       "\"tlbi_va\": %llu, \"dc_zva_user\": %llu, \"dc_zva_kernel\": %llu,\n   \"layouts\": {",
	       s->windows_out ? "," : "",
	       s->window_id, (unsigned long long)s->kinsns,
	       (unsigned long long)s->uinsns, (unsigned long long)s->records,
	       (unsigned long long)s->tlbi[0], (unsigned long long)s->tlbi[1],
	       (unsigned long long)s->tlbi[2], (unsigned long long)s->zva[0],
	       (unsigned long long)s->zva[1]);
	for (i = 0; i < s->nlayouts; i++) {
		uint64_t windows = 0, distinct = 0;

		for (c = 0; c < s->vcpus; c++) {
			windows += s->fp[i * s->vcpus + c].windows;
			distinct += s->fp[i * s->vcpus + c].distinct;
		}
		fprintf(o, "%s\n    \"%s\": {\"ranges\": %zu, \"fp_windows\": %llu, \"fp_distinct\": %llu, \"l2\": [",
		       i ? "," : "", s->layouts[i].name, s->layouts[i].n,
		       (unsigned long long)windows, (unsigned long long)distinct);
		for (j = 0, n = 0; j < s->nmodels; j++) {
			const struct model *m = &s->m[j];

			if (m->l != &s->layouts[i])
				continue;
			fprintf(o, "%s\n      {\"scale\": %g, \"l2_entries\": %u, \"stats\": ",
			       n++ ? "," : "", m->scale, m->l2.entries);
			print_stats(o, &m->st);
			fprintf(o, "}");
		}
		fprintf(o, "]}");
	}
	fprintf(o, "}}");
	s->windows_out++;
	s->in_window = 0;
}

static inline void sim_record(struct sim *s, uint64_t r)
{
	unsigned int type = LM_REC_TYPE(r), cpu = LM_REC_CPU(r), i;
	uint64_t val = LM_REC_VAL(r);

	if (cpu >= s->vcpus)
		die("a record names a vCPU beyond the count the model was given%s", "");
	if (type == LM_T_MARK) {
		if ((val >> 8) == LM_MARK_START) {
			if (s->in_window)	/* no stop: that window is lost */
				fprintf(stderr, "tlb model: window %u has no stop marker\n",
					s->window_id);
			window_start(s, val & 0xff);
		}
		else if (s->in_window)
			window_stop(s);
		return;
	}
	if (!s->in_window)
		return;
	s->records++;
	switch (type) {
	case LM_T_DATA:
		do_data(s, cpu, LM_REC_ADDR(r));
		break;
	case LM_T_INSN:
		do_insn(s, cpu, LM_REC_ADDR(r));
		break;
	case LM_T_COUNT: {
		uint64_t k = val >> LM_COUNT_BITS;
		uint64_t u = val & ((1ULL << LM_COUNT_BITS) - 1);

		s->kinsns += k;
		s->uinsns += u;
		for (i = 0; i < s->nlayouts; i++)
			fp_insns(&s->fp[i * s->vcpus + cpu], k + u);
		break;
	}
	case LM_T_FLUSH_ALL:
	case LM_T_FLUSH_USER:
		s->tlbi[type - LM_T_FLUSH_ALL]++;
		do_flush(s, cpu, val & 1, type == LM_T_FLUSH_USER);
		break;
	case LM_T_FLUSH_VA:
		s->tlbi[2]++;
		break;
	default:
		die("unknown record type in the trace%s", "");
	}
}

/* ---- parameters -------------------------------------------------------- */

static inline unsigned int parse_size(const char *t)
{
	char *end;
	unsigned long v = strtoul(t, &end, 10), shift = 0;

	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	else if (*end == 'G')
		v <<= 30;
	else if (*end)
		die("bad page size '%s'", t);
	if (!v || v & (v - 1))
		die("page size '%s' is not a power of two", t);
	while (v >>= 1)
		shift++;
	return shift;
}

static inline void params_load(struct sim *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], name[8], sizes[128];
	unsigned int entries, ways, seen = 0;

	if (!f)
		die("cannot read parameters %s", path);
	while (fgets(line, sizeof(line), f)) {
		struct level *lv;
		char *tok, *save;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%7s %u %u %127s", name, &entries, &ways, sizes) != 4)
			die("bad line in %s", path);
		if (!strcmp(name, "l1d"))
			lv = &s->l1d;
		else if (!strcmp(name, "l1i"))
			lv = &s->l1i;
		else if (!strcmp(name, "l2"))
			lv = &s->l2;
		else
			die("unknown TLB '%s' (l1d, l1i, l2)", name);
		if (!ways || !entries || entries % ways)
			die("%s: entries must be a multiple of ways", name);
		lv->entries = entries;
		lv->ways = ways;
		lv->sets = entries / ways;
		lv->nsizes = 0;
		for (tok = strtok_r(sizes, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (lv->nsizes == MAX_SIZES)
				die("%s: too many page sizes", name);
			lv->shifts[lv->nsizes++] = parse_size(tok);
			if (lv->nsizes > 1 &&
			    lv->shifts[lv->nsizes - 1] <= lv->shifts[lv->nsizes - 2])
				die("%s: page sizes must be ascending", name);
		}
		seen |= lv == &s->l1d ? 1 : lv == &s->l1i ? 2 : 4;
	}
	fclose(f);
	if (seen != 7)
		die("%s must give l1d, l1i and l2", path);
}

#endif
