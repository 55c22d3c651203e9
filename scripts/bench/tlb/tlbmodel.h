/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TLB model, shared by the tlbtrace plugin (which runs it on the
 * guest's accesses as they happen) and tlbsim (which replays a recording
 * of them, and tests the model).
 *
 * Longer than 400 lines: one header, so that the plugin and the replay
 * compile the same model (make check requires their counts to be equal).
 *
 * Per vCPU: a first-level data TLB and a first-level instruction TLB,
 * both fully associative, and a unified second-level TLB, set
 * associative, each with the replacement (true LRU unless the table says
 * plru or random) and the page sizes a core's parameter table gives
 * (neoverse-n1.tsv). A leaf (a page, a
 * contiguous range, a block) takes one entry of the largest size the
 * level supports that does not exceed the leaf. A first-level miss (a
 * refill: what perf's dTLB-load-misses and iTLB-load-misses count on
 * arm64, L1D_TLB_REFILL and L1I_TLB_REFILL) looks up the second level; a
 * second-level miss is a walk, and fills both. User addresses carry no
 * ASID; kernel entries are global. TLBI VMALLE1 empties a vCPU's TLBs,
 * ASIDE1 their user entries; the broadcast forms do it on every vCPU.
 *
 * The model runs from the first layout the guest sends to the end, so a
 * window starts with whatever the TLBs hold; a window's figures are the
 * counts at its stop less those at its start. Accesses are classed by
 * the exception level of the instruction that makes them, as perf's :k
 * and :u are, and kernel-mode ones by where they go: the linear map,
 * other kernel addresses, user addresses.
 *
 * Several models see the same accesses: one per layout of the kernel's
 * page tables, per core, per size of the second-level TLB and per
 * variant (the sensitivity of the result to what the model leaves out):
 *   coalesce4   the L2 holds four contiguous 4K linear-map pages in one
 *               entry (the Cortex-A76/N1 L2 TLB can coalesce them)
 *   walk_cache  each walk also takes an L2 entry for the table above the
 *               leaf (the N1's L2 holds walk entries too)
 *   tlbi_va_l1  a TLBI by address empties the L1 TLBs (of every vCPU if
 *               broadcast); otherwise it is counted only
 *   tlbi_va_all ... and the L2 too: the most a real TLBI by address can
 *               remove (it removes the entries of its address, which the
 *               plugin cannot read: QEMU's plugin API gives no operands)
 *   thp_user    user data pages are 2 MiB leaves, not 4 KiB
 *   end_layout  a window runs on the layout the guest sends after it
 *               (what the workload split), not the one before it
 * and, in a replay, invalidations the recording does not hold: those of
 * the other cores of a large server, which reach every core alike and
 * hit every layout. inject_all@R empties all of a vCPU's TLBs (as a
 * broadcast TLBI VMALLE1IS would) R times per million of its
 * instructions, inject_l1@R its first-level TLBs only (as a core that
 * drops its L1s on any invalidation it receives would, what tlbi_va_l1
 * supposes of the recording's own).
 *
 * Longer than 400 lines: one model, in one header so that the plugin and
 * its replay run the same code.
 */
#ifndef LINMAP_TLBMODEL_H
#define LINMAP_TLBMODEL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlbtrace.h"

#define MAX_SIZES	8
#define NR_LAYOUTS	3
#define MAX_MODELS	40
#define FP_WINDOW	1000000ULL	/* footprint per million instructions */
#define FP_BITS		18

static const int base_shift = 12;

/* ---- the TLB ----------------------------------------------------------- */

/*
 * Replacement: true LRU; pseudo-LRU by MRU bits (a hit or fill sets its
 * entry's bit, and when every bit of the set is set the others clear; the
 * victim is the first entry whose bit is clear); random (xorshift).
 */
enum { R_LRU, R_PLRU, R_RANDOM };
static const char *const repl_name[] = { "lru", "plru", "random" };

struct level {
	unsigned int entries, ways, sets;
	unsigned int nsizes, shifts[MAX_SIZES];	/* ascending */
	unsigned int repl;
};

struct entry {
	uint64_t tag;		/* vpn << 8 | walk << 7 | global << 6 | shift */
	uint64_t used;		/* LRU stamp; 0: invalid */
	unsigned int mru;	/* pseudo-LRU's bit */
};

#define TAG_GLOBAL	(1 << 6)
#define TAG_WALK	(1 << 7)

/*
 * A fully associative level also keeps its valid entries in a hash of
 * their tags (linear probing, a slot holds entry + 1), so that a lookup
 * costs the same whatever its size; the LRU victim is still the entry
 * with the oldest stamp.
 */
struct tlb {
	const struct level *lv;
	struct entry *e;
	uint64_t clock, rng;
	uint32_t *hash;
	unsigned int hmask;
};

static inline unsigned int hash_of(uint64_t tag, unsigned int mask)
{
	return (unsigned int)((tag * 0x9e3779b97f4a7c15ULL) >> 40) & mask;
}

/* The slot of @tag's entry, or -1. */
static inline int hash_find(const struct tlb *t, uint64_t tag)
{
	unsigned int i = hash_of(tag, t->hmask), n;

	for (n = 0; t->hash[i] && n <= t->hmask; n++) {
		if (t->e[t->hash[i] - 1].tag == tag)
			return (int)i;
		i = (i + 1) & t->hmask;
	}
	return -1;
}

static inline void hash_insert(struct tlb *t, uint64_t tag, unsigned int e)
{
	unsigned int i = hash_of(tag, t->hmask), n;

	/* Never full (four slots an entry): the bound only stops a bug. */
	for (n = 0; t->hash[i] && n <= t->hmask; n++)
		i = (i + 1) & t->hmask;
	if (!t->hash[i])
		t->hash[i] = e + 1;
}

/* Empty slot @i, moving back the entries a probe would no longer reach. */
static inline void hash_remove(struct tlb *t, unsigned int i)
{
	unsigned int j = i, k, n;

	t->hash[i] = 0;
	for (n = 0; n <= t->hmask; n++) {
		j = (j + 1) & t->hmask;
		if (!t->hash[j])
			return;
		k = hash_of(t->e[t->hash[j] - 1].tag, t->hmask);
		/* Stays if its home k lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->hash[i] = t->hash[j];
		t->hash[j] = 0;
		i = j;
	}
}

/* The size a leaf of 1 << @shift bytes takes in @lv. */
static inline unsigned int splinter(const struct level *lv, unsigned int shift)
{
	unsigned int i, s = lv->shifts[0];

	for (i = 0; i < lv->nsizes && lv->shifts[i] <= shift; i++)
		s = lv->shifts[i];
	return s;
}

static inline void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "tlb model: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static inline void tlb_init(struct tlb *t, const struct level *lv)
{
	t->lv = lv;
	t->e = calloc((size_t)lv->entries, sizeof(*t->e));
	t->clock = 0;
	t->rng = 0x9e3779b97f4a7c15ULL;
	t->hash = NULL;
	if (lv->sets == 1) {
		for (t->hmask = 1; t->hmask < 4 * lv->entries; t->hmask <<= 1)
			;
		t->hash = calloc(t->hmask, sizeof(*t->hash));
		t->hmask--;
	}
	if (!t->e || (lv->sets == 1 && !t->hash))
		die("out of memory%s", "");
}

/* The entry of @set to replace: an invalid one, else by the policy. */
static inline unsigned int tlb_victim(struct tlb *t, const struct entry *set)
{
	unsigned int w, v = 0, ways = t->lv->ways;

	for (w = 0; w < ways; w++)
		if (!set[w].used)
			return w;
	switch (t->lv->repl) {
	case R_RANDOM:
		t->rng ^= t->rng << 13;
		t->rng ^= t->rng >> 7;
		t->rng ^= t->rng << 17;
		return (unsigned int)(t->rng % ways);
	case R_PLRU:
		for (w = 0; w < ways; w++)
			if (!set[w].mru)
				return w;
		return 0;
	}
	for (w = 1; w < ways; w++)
		if (set[w].used < set[v].used)
			v = w;
	return v;
}

/* Entry @w of @set was hit or filled. */
static inline void tlb_touch(struct tlb *t, struct entry *set, unsigned int w)
{
	unsigned int i, ways = t->lv->ways;

	set[w].used = t->clock;
	if (t->lv->repl != R_PLRU)
		return;
	set[w].mru = 1;
	for (i = 0; i < ways; i++)
		if (!set[i].mru)
			return;
	for (i = 0; i < ways; i++)
		set[i].mru = i == w;
}

/*
 * Look up the entry of size 1 << @s (already splintered) for @va, and
 * fill it on a miss. @kind: TAG_GLOBAL for a kernel entry, | TAG_WALK
 * for a walk-cache entry. True on a hit.
 */
static inline int tlb_lookup(struct tlb *t, uint64_t va, unsigned int s, unsigned int kind)
{
	uint64_t vpn = va >> s, tag = vpn << 8 | kind | s;
	struct entry *set = &t->e[(vpn % t->lv->sets) * t->lv->ways];
	unsigned int w, victim;
	int slot;

	t->clock++;
	if (t->hash) {
		slot = hash_find(t, tag);
		if (slot >= 0) {
			tlb_touch(t, set, t->hash[slot] - 1);
			return 1;
		}
		victim = tlb_victim(t, set);
		/* Always found; a lost one shows in the self-test's hash case. */
		slot = set[victim].used ? hash_find(t, set[victim].tag) : -1;
		if (slot >= 0)
			hash_remove(t, slot);
		set[victim].tag = tag;
		tlb_touch(t, set, victim);
		hash_insert(t, tag, victim);
		return 0;
	}
	for (w = 0; w < t->lv->ways; w++) {
		if (set[w].tag == tag && set[w].used) {
			tlb_touch(t, set, w);
			return 1;
		}
	}
	victim = tlb_victim(t, set);
	set[victim].tag = tag;
	tlb_touch(t, set, victim);
	return 0;
}

static inline int tlb_access(struct tlb *t, uint64_t va, unsigned int leaf, int global)
{
	return tlb_lookup(t, va, splinter(t->lv, leaf), global ? TAG_GLOBAL : 0);
}

static inline void tlb_flush(struct tlb *t, int user_only)
{
	unsigned int i;

	if (t->hash && !user_only)
		memset(t->hash, 0, (t->hmask + 1) * sizeof(*t->hash));
	for (i = 0; i < t->lv->entries; i++) {
		if (!t->e[i].used || (user_only && (t->e[i].tag & TAG_GLOBAL)))
			continue;
		if (t->hash && user_only) {
			int slot = hash_find(t, t->e[i].tag);

			if (slot >= 0)
				hash_remove(t, slot);
		}
		t->e[i].used = 0;
		t->e[i].mru = 0;
	}
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

static inline int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static inline void range_push(struct range **r, size_t *n, size_t *cap, struct range x)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*r = realloc(*r, *cap * sizeof(**r));
		if (!*r)
			die("out of memory for a layout%s", "");
	}
	(*r)[(*n)++] = x;
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
		range_push(&l->r, &l->n, &cap, r);
	}
	fclose(f);
	if (!l->lin_end)
		die("layout %s has no 'linear START END' line", path);
}

/* A layout as the guest sends it: ranges, and which are the linear map. */
struct rx_layout {
	struct range *r;
	unsigned char *linear;
	size_t n;
};

/* Sorted, each range non-empty with a shift a leaf can have, some linear. */
static inline int rx_valid(const struct rx_layout *x)
{
	int linear = 0;
	size_t i;

	for (i = 0; i < x->n; i++) {
		if (!range_valid(i ? &x->r[i - 1] : NULL, &x->r[i]))
			return 0;
		linear |= x->linear[i];
	}
	return linear;
}

static inline uint64_t linear_bytes(const struct range *r, size_t n, uint64_t a, uint64_t b)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].start >= a && r[i].end <= b)
			sum += r[i].end - r[i].start;
	return sum;
}

/*
 * The three layouts from one the guest sent: "full", every linear-map
 * page a PTE (unpatched rodata=full); "series", as sent; "on", the
 * linear map of @on (a rodata=on boot's, NULL for none) and the rest as
 * sent. Returns the bytes of the linear map @on maps, to be checked
 * against what the guest's own maps (the same RAM must be mapped).
 */
static inline uint64_t build_layouts(struct layout *out, const struct rx_layout *x,
				     const struct layout *on, uint64_t *lin_bytes)
{
	uint64_t ls = ~0ULL, le = 0, on_bytes = 0;
	size_t i, nf = 0, ns = 0, no = 0, cf = 0, cs = 0, co = 0;
	struct range *full = NULL, *ser = NULL, *onr = NULL;

	for (i = 0; i < x->n; i++) {
		struct range r = x->r[i];

		range_push(&ser, &ns, &cs, r);
		if (x->linear[i]) {
			ls = r.start < ls ? r.start : ls;
			le = r.end > le ? r.end : le;
			r.shift = base_shift;
		} else {
			range_push(&onr, &no, &co, r);
		}
		range_push(&full, &nf, &cf, r);
	}
	*lin_bytes = linear_bytes(x->r, x->n, ls, le);
	if (on) {
		for (i = 0; i < on->n; i++) {
			if (on->r[i].start >= on->lin_start && on->r[i].end <= on->lin_end) {
				range_push(&onr, &no, &co, on->r[i]);
				on_bytes += on->r[i].end - on->r[i].start;
			}
		}
	}
	/* "on" merges two lists: sort it (the others are sorted). */
	qsort(onr, no, sizeof(*onr), range_cmp);
	for (i = 0; i < NR_LAYOUTS; i++) {
		struct range *r = i == 0 ? full : i == 1 ? ser : onr;
		size_t n = i == 0 ? nf : i == 1 ? ns : no;

		free(out[i].r);
		out[i].r = r;
		out[i].n = n;
		out[i].lin_start = ls;
		out[i].lin_end = le;
	}
	return on_bytes;
}

/* ---- cores ------------------------------------------------------------- */

struct core {
	char name[32];
	struct level l1d, l1i, l2;
};

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

static inline unsigned int repl_parse(const char *pol)
{
	unsigned int i;

	for (i = 0; i < sizeof(repl_name) / sizeof(repl_name[0]); i++)
		if (!strcmp(pol, repl_name[i]))
			return i;
	die("unknown replacement '%s' (lru, plru, random)", pol);
	return R_LRU;
}

/* A level of @entries, @ways and the comma-separated page @sizes. */
static inline void level_set(struct level *lv, const char *name, unsigned int entries,
			     unsigned int ways, char *sizes)
{
	char *tok, *save;

	if (!ways || !entries || entries % ways)
		die("%s: entries must be a multiple of ways", name);
	lv->entries = entries;
	lv->ways = ways;
	lv->sets = entries / ways;
	lv->nsizes = 0;
	lv->repl = R_LRU;
	for (tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (lv->nsizes == MAX_SIZES)
			die("%s: too many page sizes", name);
		lv->shifts[lv->nsizes++] = parse_size(tok);
		if (lv->nsizes > 1 && lv->shifts[lv->nsizes - 1] <= lv->shifts[lv->nsizes - 2])
			die("%s: page sizes must be ascending", name);
	}
}

/* A core's TLBs from its parameter table (neoverse-n1.tsv). */
static inline void core_load(struct core *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], name[8], sizes[128], pol[16];
	const char *base = strrchr(path, '/');
	unsigned int entries, ways, seen = 0, repl = R_LRU;

	if (!f)
		die("cannot read parameters %s", path);
	snprintf(c->name, sizeof(c->name), "%s", base ? base + 1 : path);
	if (strchr(c->name, '.'))
		*strchr(c->name, '.') = 0;
	while (fgets(line, sizeof(line), f)) {
		struct level *lv;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "replace %15s", pol) == 1) {
			repl = repl_parse(pol);
			continue;
		}
		if (sscanf(line, "%7s %u %u %127s", name, &entries, &ways, sizes) != 4)
			die("bad line in %s", path);
		if (!strcmp(name, "l1d"))
			lv = &c->l1d;
		else if (!strcmp(name, "l1i"))
			lv = &c->l1i;
		else if (!strcmp(name, "l2"))
			lv = &c->l2;
		else
			die("unknown TLB '%s' (l1d, l1i, l2)", name);
		level_set(lv, name, entries, ways, sizes);
		seen |= lv == &c->l1d ? 1 : lv == &c->l1i ? 2 : 4;
	}
	fclose(f);
	if (seen != 7)
		die("%s must give l1d, l1i and l2", path);
	c->l1d.repl = c->l1i.repl = c->l2.repl = repl;
	/* The trace filter (tlbtrace.h) is exact only for these. */
	if (c->l1d.sets != 1 || c->l1i.sets != 1)
		die("%s: the first-level TLBs must be fully associative", path);
}

/* ---- the models -------------------------------------------------------- */

enum { C_KLIN, C_KOTHER, C_KUSER, C_USER, NR_CLASSES };
static const char *const class_name[] = {
	"kernel_linear", "kernel_other", "kernel_to_user", "user",
};

enum {
	V_COALESCE = 1, V_WALKCACHE = 2, V_TLBI_VA = 4, V_THP = 8, V_END_LAYOUT = 16,
	V_TLBI_VA_ALL = 32,
	V_NR = 6,
};
static const char *const variant_name[] = {
	"coalesce4", "walk_cache", "tlbi_va_l1", "thp_user", "end_layout", "tlbi_va_all",
};
/* Variants that change what the first level holds: their own L1s. */
#define V_L1		(V_TLBI_VA | V_THP | V_END_LAYOUT | V_TLBI_VA_ALL)

struct stats {
	uint64_t daccess[NR_CLASSES], dmiss[NR_CLASSES], dwalk[NR_CLASSES];
	uint64_t iaccess[2], imiss[2], iwalk[2];	/* [0] user, [1] kernel */
};

enum { INJECT_L1 = 1, INJECT_ALL };
static const char *const inject_name[] = { "", "l1", "all" };

struct model {
	unsigned int layout;	/* index into sim.lay */
	const struct core *core;
	double scale;
	unsigned int variant;
	unsigned int inject;		/* INJECT_*, or 0 */
	double inject_rate;		/* per million instructions of a vCPU */
	uint64_t inject_every;		/* instructions between two */
	int64_t *inject_left;		/* per vCPU: instructions to the next */
	struct level l2;
	struct tlb *l1d, *l1i, *tl2;	/* per vCPU */
	unsigned int l1_owner;		/* the model whose L1s these are */
	int hit;			/* the owner's last first-level result */
	struct stats st, snap;
};

struct footprint {		/* per layout, per vCPU */
	uint64_t *set;		/* tag | generation in the low bits */
	uint64_t gen, insns, windows, distinct, current;
};

struct counters {
	uint64_t kinsns, uinsns, records, tlbi[3], zva[2], prfm[4];
};

struct sim {
	unsigned int vcpus;
	struct model m[MAX_MODELS];
	unsigned int nmodels;
	struct layout lay[NR_LAYOUTS];		/* as sent */
	struct layout end[NR_LAYOUTS];		/* end_layout models, in a window */
	int have_end;
	unsigned int nlayouts;			/* 2, or 3 with "on" */
	const struct layout *on;		/* rodata=on's, or NULL */
	uint64_t lin_bytes, on_bytes;		/* of the last layout */
	uint64_t on_mismatch;			/* layouts whose RAM "on" did not map */
	struct footprint *fp;			/* [layout][vcpu] */
	struct counters c, csnap;
	uint64_t layouts_seen;
	FILE *out;		/* the results */
	int active;		/* a layout has arrived: the model runs */
	int in_window;
	unsigned int window_id;
	int windows_out;
};

static const char *const layout_name[NR_LAYOUTS] = { "full", "series", "on" };

/*
 * Add a model, with @inject (INJECT_*, or 0) invalidations at @rate per
 * million instructions of each vCPU. Models with the same layout, core,
 * first-level variants and injections share their first-level TLBs,
 * which are looked up once (by the first of them) for all.
 */
static inline void sim_add_inject(struct sim *s, unsigned int layout, const struct core *core,
				  double scale, unsigned int variant, unsigned int inject,
				  double rate)
{
	struct model *m = &s->m[s->nmodels];
	unsigned int i, c;

	if (s->nmodels == MAX_MODELS)
		die("too many models%s", "");
	memset(m, 0, sizeof(*m));
	m->layout = layout;
	m->core = core;
	m->scale = scale;
	m->variant = variant;
	if (inject) {
		if (!(rate > 0) || rate > 1e6)
			die("an injection rate must be above 0 and at most a million per million instructions%s", "");
		m->inject = inject;
		m->inject_rate = rate;
		m->inject_every = (uint64_t)(1e6 / rate + 0.5);
		m->inject_left = calloc(s->vcpus, sizeof(*m->inject_left));
		if (!m->inject_left)
			die("out of memory%s", "");
		for (c = 0; c < s->vcpus; c++)
			m->inject_left[c] = (int64_t)m->inject_every;
	}
	m->l2 = core->l2;
	m->l2.sets = (unsigned int)(core->l2.sets * scale + 0.5);
	if (!m->l2.sets)
		m->l2.sets = 1;
	m->l2.entries = m->l2.sets * m->l2.ways;
	m->tl2 = calloc(s->vcpus, sizeof(struct tlb));
	if (!m->tl2)
		die("out of memory%s", "");
	for (c = 0; c < s->vcpus; c++)
		tlb_init(&m->tl2[c], &m->l2);
	m->l1_owner = s->nmodels;
	for (i = 0; i < s->nmodels; i++) {
		const struct model *o = &s->m[i];

		if (o->layout == layout && o->core == core &&
		    (o->variant & V_L1) == (variant & V_L1) && o->inject == m->inject &&
		    o->inject_every == m->inject_every && o->l1_owner == i) {
			m->l1_owner = i;
			m->l1d = o->l1d;
			m->l1i = o->l1i;
			break;
		}
	}
	if (m->l1_owner == s->nmodels) {
		m->l1d = calloc(s->vcpus, sizeof(struct tlb));
		m->l1i = calloc(s->vcpus, sizeof(struct tlb));
		if (!m->l1d || !m->l1i)
			die("out of memory%s", "");
		for (c = 0; c < s->vcpus; c++) {
			tlb_init(&m->l1d[c], &core->l1d);
			tlb_init(&m->l1i[c], &core->l1i);
		}
	}
	s->nmodels++;
}

static inline void sim_add(struct sim *s, unsigned int layout, const struct core *core,
			   double scale, unsigned int variant)
{
	sim_add_inject(s, layout, core, scale, variant, 0, 0);
}

/* Before the models are added; @on: rodata=on's layout, or NULL. */
static inline void sim_init(struct sim *s, unsigned int vcpus, const struct layout *on)
{
	unsigned int i;

	s->vcpus = vcpus;
	s->nmodels = 0;
	s->on = on;
	s->nlayouts = on ? 3 : 2;
	for (i = 0; i < NR_LAYOUTS; i++) {
		snprintf(s->lay[i].name, sizeof(s->lay[i].name), "%s", layout_name[i]);
		s->end[i] = s->lay[i];
	}
	s->fp = calloc((size_t)NR_LAYOUTS * vcpus, sizeof(*s->fp));
	for (i = 0; s->fp && i < NR_LAYOUTS * vcpus; i++) {
		s->fp[i].set = calloc(1 << FP_BITS, sizeof(uint64_t));
		s->fp[i].gen = 1;
		if (!s->fp[i].set)
			die("out of memory%s", "");
	}
	if (!s->fp)
		die("out of memory%s", "");
}

/* The models make_bench-tlb runs inline: every layout, the L2 at three sizes. */
static inline void sim_add_inline(struct sim *s, const struct core *core)
{
	static const double scales[] = { 0.5, 1, 2 };
	unsigned int l, j;

	for (l = 0; l < s->nlayouts; l++)
		for (j = 0; j < 3; j++)
			sim_add(s, l, core, scales[j], 0);
}

static inline const struct layout *model_layout(const struct sim *s, const struct model *m)
{
	if ((m->variant & V_END_LAYOUT) && s->in_window && s->have_end)
		return &s->end[m->layout];
	return &s->lay[m->layout];
}

/* A kernel address's leaf in one layout, looked up once per access. */
struct where {
	const struct layout *l;
	unsigned int shift;
	int linear;
};

static inline unsigned int where_slot(const struct sim *s, const struct model *m,
				      const struct layout *l)
{
	return m->layout + (l == &s->end[m->layout] ? NR_LAYOUTS : 0);
}

static inline const struct where *where_of(struct where *w, const struct layout *l, uint64_t va)
{
	if (w->l != l) {
		w->l = l;
		w->shift = leaf_shift(l, va);
		w->linear = va >= l->lin_start && va < l->lin_end;
	}
	return w;
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

/*
 * A second-level lookup of a leaf of 1 << @shift bytes; true on a hit.
 * Under walk_cache a walk also looks up, and fills, the entry of the
 * table above the leaf; under coalesce4 four contiguous 4K pages of the
 * linear map share an entry.
 */
static inline int l2_access(struct model *m, unsigned int cpu, uint64_t va,
			    unsigned int shift, int global, int linear)
{
	struct tlb *t = &m->tl2[cpu];
	unsigned int s = splinter(t->lv, shift), kind = global ? TAG_GLOBAL : 0;

	if ((m->variant & V_COALESCE) && linear && shift == 12)
		s = 14;
	if (tlb_lookup(t, va, s, kind))
		return 1;
	if ((m->variant & V_WALKCACHE) && shift < 30)
		tlb_lookup(t, va, shift < 21 ? 21 : 30, kind | TAG_WALK);
	return 0;
}

/* A data access by @kernel mode (the instruction's exception level). */
static inline void do_data(struct sim *s, unsigned int cpu, uint64_t va, int kernel)
{
	struct where cache[2 * NR_LAYOUTS] = { { 0 } };
	int kaddr = va >> 63;
	unsigned int i;

	for (i = 0; i < s->nmodels; i++) {
		struct model *m = &s->m[i];
		const struct layout *l = model_layout(s, m);
		const struct where *w = kaddr ? where_of(&cache[where_slot(s, m, l)], l, va) : NULL;
		unsigned int shift = w ? w->shift : base_shift;
		int linear = w && w->linear;
		int c = !kernel ? C_USER : !kaddr ? C_KUSER : linear ? C_KLIN : C_KOTHER;

		if (!kaddr && (m->variant & V_THP))
			shift = 21;
		if (m->l1_owner == i) {
			m->hit = tlb_access(&m->l1d[cpu], va, shift, kaddr);
			/* Once per layout: its first core's plain L1s. */
			if (linear && !(m->variant & V_L1) && !m->inject &&
			    m->core == s->m[0].core)
				fp_touch(&s->fp[m->layout * s->vcpus + cpu],
					 (va >> shift) << 6 | shift);
		}
		m->st.daccess[c]++;
		if (s->m[m->l1_owner].hit)
			continue;
		m->st.dmiss[c]++;
		if (!l2_access(m, cpu, va, shift, kaddr, linear))
			m->st.dwalk[c]++;
	}
}

/* Instructions fetched from @va's page: the page says the mode. */
static inline void do_insn(struct sim *s, unsigned int cpu, uint64_t va)
{
	struct where cache[2 * NR_LAYOUTS] = { { 0 } };
	int kernel = va >> 63;
	unsigned int i;

	for (i = 0; i < s->nmodels; i++) {
		struct model *m = &s->m[i];
		const struct layout *l = model_layout(s, m);
		const struct where *w = kernel ? where_of(&cache[where_slot(s, m, l)], l, va) : NULL;
		unsigned int shift = w ? w->shift : base_shift;
		int linear = w && w->linear;

		if (m->l1_owner == i)
			m->hit = tlb_access(&m->l1i[cpu], va, shift, kernel);
		m->st.iaccess[kernel]++;
		if (s->m[m->l1_owner].hit)
			continue;
		m->st.imiss[kernel]++;
		if (!l2_access(m, cpu, va, shift, kernel, linear))
			m->st.iwalk[kernel]++;
	}
}

/*
 * @what: 0 all entries, 1 user entries, 2 by address (the L1s with
 * tlbi_va_l1, the L1s and the L2 with tlbi_va_all).
 */
static inline void do_flush(struct sim *s, unsigned int cpu, int bcast, int what)
{
	unsigned int i, c;

	for (i = 0; i < s->nmodels; i++) {
		struct model *m = &s->m[i];

		if (what == 2 && !(m->variant & (V_TLBI_VA | V_TLBI_VA_ALL)))
			continue;
		for (c = 0; c < s->vcpus; c++) {
			if (!bcast && c != cpu)
				continue;
			if (m->l1_owner == i) {
				tlb_flush(&m->l1d[c], what == 1);
				tlb_flush(&m->l1i[c], what == 1);
			}
			if (what != 2 || (m->variant & V_TLBI_VA_ALL))
				tlb_flush(&m->tl2[c], what == 1);
		}
	}
}

/*
 * @n instructions run on @cpu: the injected invalidations due by then.
 * An injection empties that vCPU's TLBs of the model (its first level
 * once, by the model that owns it: the others sharing it count the same
 * instructions), between two of its accesses as a remote TLBI would.
 */
static inline void inject_insns(struct sim *s, unsigned int cpu, uint64_t n)
{
	unsigned int i;

	for (i = 0; i < s->nmodels; i++) {
		struct model *m = &s->m[i];

		if (!m->inject)
			continue;
		m->inject_left[cpu] -= (int64_t)n;
		while (m->inject_left[cpu] <= 0) {
			m->inject_left[cpu] += (int64_t)m->inject_every;
			if (m->l1_owner == i) {
				tlb_flush(&m->l1d[cpu], 0);
				tlb_flush(&m->l1i[cpu], 0);
			}
			if (m->inject == INJECT_ALL)
				tlb_flush(&m->tl2[cpu], 0);
		}
	}
}

/* A layout the guest sent: the models use it from here on. */
static inline void sim_layout(struct sim *s, const struct rx_layout *x)
{
	uint64_t lb;

	s->on_bytes = build_layouts(s->lay, x, s->on, &lb);
	s->lin_bytes = lb;
	if (s->on && s->on_bytes != lb)
		s->on_mismatch++;
	s->layouts_seen++;
	s->active = 1;
}

/* The layout the end_layout models use for the next window. */
static inline void sim_end_layout(struct sim *s, const struct rx_layout *x)
{
	uint64_t lb;

	build_layouts(s->end, x, s->on, &lb);
	s->have_end = 1;
}

static inline void window_start(struct sim *s, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < s->nmodels; i++)
		s->m[i].snap = s->m[i].st;
	for (i = 0; i < NR_LAYOUTS * s->vcpus; i++) {
		struct footprint *f = &s->fp[i];

		f->insns = f->windows = f->distinct = f->current = 0;
		if (!(++f->gen & 0xffff)) {
			memset(f->set, 0, sizeof(uint64_t) << FP_BITS);
			f->gen++;
		}
	}
	s->csnap = s->c;
	s->in_window = 1;
	s->window_id = id;
}

static inline void print_stats(FILE *o, const struct stats *st, const struct stats *b)
{
	int c;

	fprintf(o, "{");
	for (c = 0; c < NR_CLASSES; c++)
		fprintf(o, "%s\"%s\": {\"access\": %llu, \"l1_miss\": %llu, \"walk\": %llu}",
		       c ? ", " : "", class_name[c],
		       (unsigned long long)(st->daccess[c] - b->daccess[c]),
		       (unsigned long long)(st->dmiss[c] - b->dmiss[c]),
		       (unsigned long long)(st->dwalk[c] - b->dwalk[c]));
	for (c = 0; c < 2; c++)
		fprintf(o, ", \"%s\": {\"access\": %llu, \"l1_miss\": %llu, \"walk\": %llu}",
		       c ? "insn_kernel" : "insn_user",
		       (unsigned long long)(st->iaccess[c] - b->iaccess[c]),
		       (unsigned long long)(st->imiss[c] - b->imiss[c]),
		       (unsigned long long)(st->iwalk[c] - b->iwalk[c]));
	fprintf(o, "}");
}

static inline void print_variant(FILE *o, const struct model *m)
{
	int i, n = 0;

	fputc('"', o);
	for (i = 0; i < V_NR; i++)
		if (m->variant & 1 << i)
			fprintf(o, "%s%s", n++ ? "+" : "", variant_name[i]);
	if (m->inject)
		fprintf(o, "%sinject_%s@%g", n++ ? "+" : "", inject_name[m->inject],
			m->inject_rate);
	fprintf(o, "%s\"", n ? "" : "base");
}

static inline void window_stop(struct sim *s)
{
	const struct counters *c = &s->c, *b = &s->csnap;
	unsigned int i, j, v, n;
	FILE *o = s->out;

	fprintf(o, "%s\n  {\"id\": %u, \"insns_kernel\": %llu, \"insns_user\": %llu, "
	       "\"records\": %llu, \"tlbi_all\": %llu, \"tlbi_user\": %llu, "
	       "\"tlbi_va\": %llu, \"dc_zva_user\": %llu, \"dc_zva_kernel\": %llu, "
	       "\"prfm_user\": %llu, \"prfm_kernel\": %llu, "
	       "\"prfm_excl_user\": %llu, \"prfm_excl_kernel\": %llu, "
	       "\"linear_bytes\": %llu, \"on_linear_bytes\": %llu, \"end_layout\": %d,\n   \"layouts\": {",
	       s->windows_out ? "," : "", s->window_id,
	       (unsigned long long)(c->kinsns - b->kinsns),
	       (unsigned long long)(c->uinsns - b->uinsns),
	       (unsigned long long)(c->records - b->records),
	       (unsigned long long)(c->tlbi[0] - b->tlbi[0]),
	       (unsigned long long)(c->tlbi[1] - b->tlbi[1]),
	       (unsigned long long)(c->tlbi[2] - b->tlbi[2]),
	       (unsigned long long)(c->zva[0] - b->zva[0]),
	       (unsigned long long)(c->zva[1] - b->zva[1]),
	       (unsigned long long)(c->prfm[0] - b->prfm[0]),
	       (unsigned long long)(c->prfm[1] - b->prfm[1]),
	       (unsigned long long)(c->prfm[2] - b->prfm[2]),
	       (unsigned long long)(c->prfm[3] - b->prfm[3]),
	       (unsigned long long)s->lin_bytes, (unsigned long long)s->on_bytes,
	       s->have_end);
	for (i = 0; i < s->nlayouts; i++) {
		uint64_t windows = 0, distinct = 0;

		for (v = 0; v < s->vcpus; v++) {
			windows += s->fp[i * s->vcpus + v].windows;
			distinct += s->fp[i * s->vcpus + v].distinct;
		}
		fprintf(o, "%s\n    \"%s\": {\"ranges\": %zu, \"fp_windows\": %llu, \"fp_distinct\": %llu, \"models\": [",
		       i ? "," : "", layout_name[i], s->lay[i].n,
		       (unsigned long long)windows, (unsigned long long)distinct);
		for (j = 0, n = 0; j < s->nmodels; j++) {
			const struct model *m = &s->m[j];

			if (m->layout != i)
				continue;
			fprintf(o, "%s\n      {\"core\": \"%s\", \"variant\": ", n++ ? "," : "",
				m->core->name);
			print_variant(o, m);
			fprintf(o, ", \"scale\": %g, \"l2_entries\": %u, \"stats\": ",
				m->scale, m->l2.entries);
			print_stats(o, &m->st, &m->snap);
			fprintf(o, "}");
		}
		fprintf(o, "]}");
	}
	fprintf(o, "}}");
	s->windows_out++;
	s->in_window = 0;
	s->have_end = 0;
}

/* The results file: its head, before any window, and its tail. */
static inline void sim_json_head(struct sim *s)
{
	fprintf(s->out, "{\"vcpus\": %u, \"tick\": %d, \"windows\": [", s->vcpus, LM_TICK);
}

static inline void sim_json_tail(struct sim *s, uint64_t damaged)
{
	fprintf(s->out, "\n], \"layouts_received\": %llu, \"layouts_damaged\": %llu, "
		"\"on_mismatch\": %llu}\n", (unsigned long long)s->layouts_seen,
		(unsigned long long)damaged, (unsigned long long)s->on_mismatch);
}

/* What a recording's reader or the plugin hands the model, in order. */
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
		} else if (s->in_window) {
			window_stop(s);
		}
		return;
	}
	if (!s->active)
		return;
	s->c.records++;
	switch (type) {
	case LM_T_DATA:
	case LM_T_KDATA:
		do_data(s, cpu, LM_REC_ADDR(r), type == LM_T_KDATA);
		break;
	case LM_T_INSN:
		do_insn(s, cpu, LM_REC_ADDR(r));
		break;
	case LM_T_COUNT: {
		uint64_t k = val >> LM_COUNT_BITS;
		uint64_t u = val & ((1ULL << LM_COUNT_BITS) - 1);

		s->c.kinsns += k;
		s->c.uinsns += u;
		for (i = 0; i < s->nlayouts; i++)
			fp_insns(&s->fp[i * s->vcpus + cpu], k + u);
		inject_insns(s, cpu, k + u);
		break;
	}
	case LM_T_FLUSH_ALL:
	case LM_T_FLUSH_USER:
	case LM_T_FLUSH_VA:
		s->c.tlbi[type - LM_T_FLUSH_ALL]++;
		do_flush(s, cpu, val & 1, type - LM_T_FLUSH_ALL);
		break;
	case LM_T_ZVA:
		s->c.zva[val & 1]++;
		break;
	case LM_T_PRFM:
		s->c.prfm[val & 3]++;
		break;
	default:
		die("unknown record type in the trace%s", "");
	}
}

/* ---- recordings -------------------------------------------------------- */

/*
 * Compressed with zstd (or gzip for a name ending in .gz) through a
 * pipe, so that neither side links a library.
 */
static inline FILE *rec_open(const char *path, int write)
{
	const char *z = strlen(path) > 3 && !strcmp(path + strlen(path) - 3, ".gz") ?
		"gzip" : "zstd";
	char cmd[4200];
	FILE *f;

	if (strchr(path, '\'') || strlen(path) > 4000)
		die("recording path '%s' not usable", path);
	if (write)
		snprintf(cmd, sizeof(cmd), "%s -1 -q -c > '%s'", z, path);
	else
		snprintf(cmd, sizeof(cmd), "%s -d -q -c < '%s'", z, path);
	f = popen(cmd, write ? "w" : "r");
	if (!f)
		die("cannot start %s", z);
	return f;
}

static inline void rec_put(FILE *f, uint64_t w)
{
	if (fwrite(&w, sizeof(w), 1, f) != 1)
		die("writing the recording failed%s", "");
}

static inline void rec_put_layout(FILE *f, unsigned int type, const struct range *r,
				  const unsigned char *linear, size_t n)
{
	size_t i;

	rec_put(f, LM_REC(n, type, 0));
	for (i = 0; i < n; i++) {
		rec_put(f, r[i].start | (uint64_t)(linear ? linear[i] : 1) << 6 | r[i].shift);
		rec_put(f, r[i].end);
	}
}

/* rodata=on's layout, or none: its linear range, then its ranges. */
static inline void rec_put_on(FILE *f, const struct layout *on)
{
	if (!on) {
		rec_put(f, LM_REC(0, LM_T_LAYOUT_ON, 0));
		return;
	}
	rec_put_layout(f, LM_T_LAYOUT_ON, on->r, NULL, on->n);
	rec_put(f, on->lin_start);
	rec_put(f, on->lin_end);
}

/* A recording's head: its magic, the vCPUs and rodata=on's layout. */
static inline void rec_put_head(FILE *f, unsigned int vcpus, const struct layout *on)
{
	rec_put(f, LM_REC_MAGIC);
	rec_put(f, vcpus);
	rec_put_on(f, on);
}

/* A recording being read, a block at a time. */
struct rec_in {
	FILE *f;
	uint64_t buf[1 << 14];
	size_t n, i;
};

static inline int rec_get(struct rec_in *in, uint64_t *w)
{
	if (in->i == in->n) {
		in->n = fread(in->buf, sizeof(in->buf[0]), sizeof(in->buf) / sizeof(in->buf[0]),
			      in->f);
		in->i = 0;
		if (!in->n)
			return 0;
	}
	*w = in->buf[in->i++];
	return 1;
}

/* The ranges of a layout record of @n ranges; false on a short file. */
static inline int rec_get_layout(struct rec_in *f, uint64_t n, struct rx_layout *x)
{
	uint64_t a, b;
	size_t i;

	x->r = realloc(x->r, (n ? n : 1) * sizeof(*x->r));
	x->linear = realloc(x->linear, n ? n : 1);
	if (!x->r || !x->linear)
		die("out of memory for a layout%s", "");
	for (i = 0; i < n; i++) {
		if (!rec_get(f, &a) || !rec_get(f, &b))
			return 0;
		x->r[i] = (struct range){ a & ~0xfffULL, b, (unsigned int)(a & 0x3f) };
		x->linear[i] = a >> 6 & 1;
	}
	x->n = n;
	return 1;
}

#endif
