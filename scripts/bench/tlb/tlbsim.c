// SPDX-License-Identifier: GPL-2.0
/*
 * tlbsim --selftest: the TLB model (tlbmodel.h) on synthetic streams
 * whose misses are counted by hand, and the trace filter of the plugin
 * shown exact. TAP on stdout; exit 1 on any failure.
 */
#include "tlbmodel.h"

/* ---- the self-test ------------------------------------------------------ */

#define K0	0xffff000000000000ULL	/* a linear-map address */
#define U0	0x0000aaaa00000000ULL	/* a user address */
#define MB	(1ULL << 20)

static struct layout st_layouts[2];
static int st_failed, st_n;

static void st_setup(struct sim *s, const char *l1d, const char *l2)
{
	static struct range blocks[] = {
		{ K0, K0 + 2 * MB, 21 },		/* a 2 MiB block */
		{ K0 + 2 * MB, K0 + 2 * MB + 64 * 1024, 16 },	/* a contiguous range */
		{ K0 + 32 * MB, K0 + 64 * MB, 25 },	/* a contiguous block range */
	};
	unsigned int e, w;
	char sizes[64];

	memset(s, 0, sizeof(*s));
	s->out = stdout;
	sscanf(l1d, "%u %u %63s", &e, &w, sizes);
	s->l1d = (struct level){ e, w, e / w, 0, { 0 } };
	s->l1i = s->l1d;
	for (char *t = strtok(sizes, ","); t; t = strtok(NULL, ","))
		s->l1d.shifts[s->l1d.nsizes++] = parse_size(t);
	s->l1i = s->l1d;
	sscanf(l2, "%u %u %63s", &e, &w, sizes);
	s->l2 = (struct level){ e, w, e / w, 0, { 0 } };
	for (char *t = strtok(sizes, ","); t; t = strtok(NULL, ","))
		s->l2.shifts[s->l2.nsizes++] = parse_size(t);
	st_layouts[0] = (struct layout){ "pte", K0, K0 + 4096 * MB, NULL, 0 };
	st_layouts[1] = (struct layout){ "blocks", K0, K0 + 4096 * MB, blocks, 3 };
}

static void st_check(const char *what, uint64_t got, uint64_t want)
{
	st_n++;
	printf("%sok %d %s # %llu, want %llu\n", got == want ? "" : "not ",
	       st_n, what, (unsigned long long)got, (unsigned long long)want);
	if (got != want)
		st_failed = 1;
}

static void st_run(struct sim *s, const uint64_t *recs, size_t n)
{
	size_t i;

	sim_record(s, LM_REC(LM_MARK_START << 8, LM_T_MARK, 0));
	for (i = 0; i < n; i++)
		sim_record(s, recs[i]);
}

#define D(va, cpu)	LM_REC((va) >> 12, LM_T_DATA, cpu)
#define CNT(k, u)	LM_REC((uint64_t)(k) << LM_COUNT_BITS | (u), LM_T_COUNT, 0)

static uint64_t walks(const struct model *m, int c)
{
	return m->st.dwalk[c];
}

/*
 * Random accesses with locality, both unfiltered and through the
 * plugin's filter: the model must see the same misses and walks from
 * both. @depth is the filter's: LM_FILTER must give the same counts; a
 * deeper filter would not (the test of the depth chosen).
 */
static void st_filter(unsigned int depth, int want_same)
{
	static const double one = 1;
	struct sim a, b;
	uint64_t f[8], seed = 12345, last = K0;
	unsigned int i, since = 0, li, diff = 0;

	st_setup(&a, "48 48 4K,64K,2M", "64 4 4K,64K,2M,32M");
	st_setup(&b, "48 48 4K,64K,2M", "64 4 4K,64K,2M,32M");
	sim_init(&a, 1, st_layouts, 2, &one, 1);
	sim_init(&b, 1, st_layouts, 2, &one, 1);
	sim_record(&a, LM_REC(LM_MARK_START << 8, LM_T_MARK, 0));
	sim_record(&b, LM_REC(LM_MARK_START << 8, LM_T_MARK, 0));
	memset(f, 1, sizeof(f));
	for (i = 0; i < 200000; i++) {
		uint64_t va, r;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 33;
		/* Mostly a few hot pages, sometimes anywhere in 64 MiB. */
		va = (r & 7) ? K0 + ((r >> 3) % 24) * 4096 :
			K0 + ((r >> 3) % (64 * 256)) * 4096;
		if (r % 5 == 0)
			va = U0 + ((r >> 7) % 40) * 4096;
		if (r % 4)	/* runs on one page */
			va = last;
		last = va;
		sim_record(&a, D(va, 0));
		if (!lm_filter_hit_depth(f, depth, va))
			sim_record(&b, D(va, 0));
		if (++since == 700) {	/* a tick: the filter empties */
			sim_record(&b, CNT(since, 0));
			memset(f, 1, sizeof(f));
			since = 0;
		}
	}
	for (li = 0; li < 2; li++) {
		int c;

		for (c = 0; c < NR_CLASSES; c++)
			diff += b.m[li].st.dmiss[c] != a.m[li].st.dmiss[c] ||
				b.m[li].st.dwalk[c] != a.m[li].st.dwalk[c];
		if (!want_same)
			continue;
		for (c = 0; c < NR_CLASSES; c++) {
			char what[80];

			snprintf(what, sizeof(what), "filter: %.8s layout, %.14s l1 misses",
				 st_layouts[li].name, class_name[c]);
			st_check(what, b.m[li].st.dmiss[c], a.m[li].st.dmiss[c]);
			snprintf(what, sizeof(what), "filter: %.8s layout, %.14s walks",
				 st_layouts[li].name, class_name[c]);
			st_check(what, b.m[li].st.dwalk[c], a.m[li].st.dwalk[c]);
		}
	}
	if (want_same)
		st_check("filter: the filtered stream is under half as long",
			 b.records < a.records / 2, 1);
	else
		st_check("filter: a deeper filter changes some count", diff > 0, 1);
}

static int selftest(void)
{
	static const double one = 1;
	struct sim s;
	uint64_t r[1100];
	size_t n;
	unsigned int i;

	/* LRU: A B C A in a 2-entry first level; the second holds all. */
	st_setup(&s, "2 2 4K", "4 2 4K");
	sim_init(&s, 1, st_layouts, 1, &one, 1);
	n = 0;
	r[n++] = D(K0, 0);
	r[n++] = D(K0 + 4096, 0);
	r[n++] = D(K0 + 8192, 0);
	r[n++] = D(K0, 0);
	st_run(&s, r, n);
	st_check("lru: l1 misses of A B C A", s.m[0].st.dmiss[C_KLIN], 4);
	st_check("lru: walks of A B C A", walks(&s.m[0], C_KLIN), 3);

	/* Set associativity: pages 0 2 4 share set 0 of 2 ways. */
	st_setup(&s, "1 1 4K", "4 2 4K");
	sim_init(&s, 1, st_layouts, 1, &one, 1);
	n = 0;
	for (i = 0; i <= 4; i += 2)
		r[n++] = D(K0 + i * 4096, 0);
	r[n++] = D(K0, 0);
	r[n++] = D(K0 + 4096, 0);
	r[n++] = D(K0 + 4096 * 4, 0);
	st_run(&s, r, n);
	st_check("sets: walks of 0 2 4 0 1 4", walks(&s.m[0], C_KLIN), 5);

	/* One entry per leaf: 512 pages of a 2 MiB block, 16 of a range. */
	st_setup(&s, "4 4 4K,64K,2M", "8 2 4K,64K,2M");
	sim_init(&s, 1, st_layouts, 2, &one, 1);
	n = 0;
	for (i = 0; i < 512; i++)
		r[n++] = D(K0 + i * 4096ULL, 0);
	for (i = 0; i < 16; i++)
		r[n++] = D(K0 + 2 * MB + i * 4096ULL, 0);
	st_run(&s, r, n);
	st_check("leaves: walks, all base pages", walks(&s.m[0], C_KLIN), 528);
	st_check("leaves: walks, block and contiguous range",
		 walks(&s.m[1], C_KLIN), 2);

	/* A 32 MiB leaf splinters into 2 MiB first-level entries. */
	st_setup(&s, "4 4 4K,2M", "8 2 4K,2M,32M");
	sim_init(&s, 1, st_layouts + 1, 1, &one, 1);
	n = 0;
	r[n++] = D(K0 + 32 * MB, 0);
	r[n++] = D(K0 + 34 * MB, 0);
	r[n++] = D(K0 + 35 * MB, 0);
	st_run(&s, r, n);
	st_check("splinter: l1 misses in one 32 MiB leaf",
		 s.m[0].st.dmiss[C_KLIN], 2);
	st_check("splinter: walks in one 32 MiB leaf", walks(&s.m[0], C_KLIN), 1);

	/* Invalidation: all entries, user entries, another vCPU's. */
	st_setup(&s, "4 4 4K", "8 2 4K");
	sim_init(&s, 2, st_layouts, 1, &one, 1);
	n = 0;
	r[n++] = D(K0, 0);
	r[n++] = D(U0, 0);
	r[n++] = LM_REC(0, LM_T_FLUSH_USER, 0);
	r[n++] = D(K0, 0);
	r[n++] = D(U0, 0);
	r[n++] = LM_REC(0, LM_T_FLUSH_ALL, 1);	/* vCPU 1's own TLBs */
	r[n++] = D(K0, 0);
	r[n++] = LM_REC(1, LM_T_FLUSH_ALL, 1);	/* broadcast */
	r[n++] = D(K0, 0);
	r[n++] = LM_REC(1, LM_T_FLUSH_VA, 1);	/* counted only */
	r[n++] = D(K0, 0);
	st_run(&s, r, n);
	st_check("tlbi: kernel walks", walks(&s.m[0], C_KLIN), 2);
	st_check("tlbi: user walks", walks(&s.m[0], C_USER), 2);
	st_check("tlbi: by-address invalidations counted", s.tlbi[2], 1);

	/* Footprint: 3 pages in one block, per million instructions. */
	st_setup(&s, "4 4 4K,2M", "8 2 4K,2M");
	sim_init(&s, 1, st_layouts, 2, &one, 1);
	n = 0;
	for (i = 0; i < 2; i++) {
		r[n++] = D(K0, 0);
		r[n++] = D(K0 + 4096, 0);
		r[n++] = D(K0 + 8192, 0);
		r[n++] = D(U0, 0);	/* user pages do not count */
		r[n++] = CNT(600000, 400000);
	}
	st_run(&s, r, n);
	st_check("footprint: windows", s.fp[0].windows, 2);
	st_check("footprint: base pages", s.fp[0].distinct, 6);
	st_check("footprint: blocks", s.fp[1].distinct, 2);
	st_check("footprint: instructions", s.kinsns + s.uinsns, 2000000);

	st_filter(LM_FILTER, 1);
	st_filter(8, 0);
	printf("1..%d\n", st_n);
	return st_failed;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--selftest"))
		return selftest();
	fprintf(stderr, "usage: tlbsim --selftest\n");
	return 2;
}
