// SPDX-License-Identifier: GPL-2.0
/*
 * tlbsim: the TLB model (tlbmodel.h) off line.
 * Longer than 400 lines: the replay and the model's self-test cases, which
 * share its reading of parameter tables and its JSON output.
 *
 *   tlbsim replay [--variants all|NAME,...] [--inject KIND@RATE,...] [--on LAYOUT]
 *                 --params TSV [--params TSV...] REC OUT
 *       Replays a recording of the tlbtrace plugin (rec=) and writes the
 *       results as the plugin does, for every layout: the first core's
 *       models as the plugin runs them (the L2 at three sizes), each
 *       variant of tlbmodel.h named (or all) on the first core, and each
 *       further core at its own L2 size. The first core's plain models
 *       must count what the plugin counted (make check compares them).
 *       Replays of one recording with other variants can run side by
 *       side, one a core. --on takes the "on" layout's linear map from a
 *       layout file (layout.py's, as the plugin's on= takes) instead of
 *       the recording's rodata=on boot: the same accesses on another
 *       kernel's linear map, such as one after a long run. --inject adds,
 *       on the first core, a model of each layout for each KIND@RATE
 *       (all or l1, per million instructions of a vCPU; tlbmodel.h):
 *       the invalidations of a many-core server's other cores.
 *   tlbsim --selftest DIR
 *       The model on synthetic streams whose misses are counted by hand,
 *       the parameter tables in DIR read through the plugin's loader,
 *       the trace filter shown exact, and a recording replayed. TAP on
 *       stdout; exit 1 on any failure.
 *
 * Longer than 400 lines: the replay and one test per thing the model
 * must get right, each of which scripts/bench/tlb/mutations.tsv breaks.
 */
#include <unistd.h>

#include "tlbmodel.h"

/* ---- the replay -------------------------------------------------------- */

struct ends {
	struct rx_layout *x;	/* per window, in order: the layout after it */
	size_t n, cap;
};

static struct rec_in *rec_start(const char *path, unsigned int *vcpus, struct layout *on,
				 int *have_on)
{
	struct rec_in *f = calloc(1, sizeof(*f));
	uint64_t w, n;
	struct rx_layout x = { 0 };

	if (!f)
		die("out of memory%s", "");
	f->f = rec_open(path, 0);
	if (!rec_get(f, &w) || w != LM_REC_MAGIC)
		die("%s is not a tlbtrace recording", path);
	if (!rec_get(f, &w) || !w || w > LM_MAX_VCPUS)
		die("%s: bad vCPU count", path);
	*vcpus = w;
	if (!rec_get(f, &w) || LM_REC_TYPE(w) != LM_T_LAYOUT_ON)
		die("%s: no rodata=on record at its head", path);
	n = LM_REC_VAL(w);
	*have_on = n != 0;
	if (n) {
		if (!rec_get_layout(f, n, &x) || !rec_get(f, &on->lin_start) ||
		    !rec_get(f, &on->lin_end))
			die("%s: the rodata=on layout is cut short", path);
		on->r = x.r;
		on->n = x.n;
		free(x.linear);
	}
	return f;
}

/* The first pass: which layout follows each window (end_layout). */
static void scan_ends(const char *path, struct ends *e)
{
	unsigned int vcpus;
	struct layout on = { .name = "on" };
	int have_on, after = -1;
	uint64_t r;
	struct rec_in *f = rec_start(path, &vcpus, &on, &have_on);

	while (rec_get(f, &r)) {
		unsigned int type = LM_REC_TYPE(r);
		struct rx_layout x = { 0 };

		if (type == LM_T_MARK && (LM_REC_VAL(r) >> 8) == LM_MARK_START) {
			if (e->n == e->cap) {
				e->cap = e->cap ? e->cap * 2 : 64;
				e->x = realloc(e->x, e->cap * sizeof(*e->x));
				if (!e->x)
					die("out of memory%s", "");
			}
			memset(&e->x[e->n++], 0, sizeof(*e->x));
		} else if (type == LM_T_MARK && e->n) {
			after = e->n - 1;
		} else if (type == LM_T_LAYOUT) {
			if (!rec_get_layout(f, LM_REC_VAL(r), &x))
				die("%s: a layout is cut short", path);
			if (after >= 0)
				e->x[after] = x;
			else
				free(x.r), free(x.linear);
			after = -1;
		}
	}
	pclose(f->f);
	free(f);
	free(on.r);
}

static int replay(int argc, char **argv)
{
	/* The first core's 9 inline models and 3 a further core: 40. */
	static struct core cores[11];
	static struct sim s;
	struct layout on = { .name = "on" };
	struct rx_layout x = { 0 };
	struct ends e = { 0 };
	unsigned int ncores = 0, vcpus, i, l, window = 0, variants = 0, ninject = 0;
	unsigned int inject[MAX_MODELS];
	double rate[MAX_MODELS];
	const char *on_path = NULL;
	int have_on, rc;
	uint64_t r;
	struct rec_in *f;

	for (; argc > 2 && !strncmp(argv[0], "--", 2); argc--, argv++) {
		if (!strcmp(argv[0], "--variants") && argc > 3) {
			char *t, *save, *list = argv[1];

			for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				for (i = 0; i < V_NR && strcmp(t, variant_name[i]); i++)
					;
				if (!strcmp(t, "all"))
					variants |= (1 << V_NR) - 1;
				else if (i < V_NR)
					variants |= 1 << i;
				else
					die("no variant '%s' (all, coalesce4, walk_cache, tlbi_va_l1, thp_user, end_layout, tlbi_va_all)", t);
			}
			argc--, argv++;
		} else if (!strcmp(argv[0], "--inject") && argc > 3) {
			char *t, *save, *list = argv[1], *at, *end;

			for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				at = strchr(t, '@');
				if (!at || ninject == MAX_MODELS)
					die("--inject takes KIND@RATE,... (all or l1; got '%s')", t);
				*at = 0;
				for (i = INJECT_L1; i <= INJECT_ALL && strcmp(t, inject_name[i]); i++)
					;
				rate[ninject] = strtod(at + 1, &end);
				*at = '@';
				if (i > INJECT_ALL || *end || at[1] == 0 || !(rate[ninject] > 0))
					die("--inject: '%s' is not all@RATE or l1@RATE with a RATE above 0", t);
				inject[ninject++] = i;
			}
			argc--, argv++;
		} else if (!strcmp(argv[0], "--on") && argc > 3) {
			on_path = argv[1];
			argc--, argv++;
		} else if (!strcmp(argv[0], "--params") && argc > 3) {
			if (ncores == 11)
				die("at most 11 cores%s", "");
			core_load(&cores[ncores++], argv[1]);
			argc--, argv++;
		} else {
			die("unknown option '%s'", argv[0]);
		}
	}
	if (argc != 2 || !ncores)
		die("usage: tlbsim replay [--variants all|NAME,...] [--inject KIND@RATE,...] [--on LAYOUT] --params TSV [--params TSV...] REC OUT%s", "");
	if (variants & V_END_LAYOUT)
		scan_ends(argv[0], &e);
	f = rec_start(argv[0], &vcpus, &on, &have_on);
	if (on_path) {
		free(on.r);
		memset(&on, 0, sizeof(on));
		layout_load(&on, "on", on_path);
		have_on = 1;
	}
	sim_init(&s, vcpus, have_on ? &on : NULL);
	sim_add_inline(&s, &cores[0]);
	for (l = 0; l < s.nlayouts; l++)
		for (i = 0; i < V_NR; i++)
			if (variants & 1 << i)
				sim_add(&s, l, &cores[0], 1, 1 << i);
	for (i = 0; i < ninject; i++)
		for (l = 0; l < s.nlayouts; l++)
			sim_add_inject(&s, l, &cores[0], 1, 0, inject[i], rate[i]);
	for (i = 1; i < ncores; i++)
		for (l = 0; l < s.nlayouts; l++)
			sim_add(&s, l, &cores[i], 1, 0);
	s.out = fopen(argv[1], "w");
	if (!s.out)
		die("cannot write %s", argv[1]);
	sim_json_head(&s);
	while (rec_get(f, &r)) {
		unsigned int type = LM_REC_TYPE(r);

		if (type == LM_T_LAYOUT) {
			if (!rec_get_layout(f, LM_REC_VAL(r), &x) || !rx_valid(&x))
				die("%s: a layout is cut short or damaged", argv[0]);
			sim_layout(&s, &x);
			continue;
		}
		if (type == LM_T_MARK && (LM_REC_VAL(r) >> 8) == LM_MARK_START) {
			if (window < e.n && e.x[window].n)
				sim_end_layout(&s, &e.x[window]);
			window++;
		}
		sim_record(&s, r);
	}
	rc = pclose(f->f);
	free(f);
	if (s.in_window)
		fprintf(stderr, "tlbsim: the recording ends inside window %u: left out\n",
			s.window_id);
	sim_json_tail(&s, 0);
	if (fclose(s.out))
		die("writing %s failed", argv[1]);
	if (rc)
		die("%s: the decompressor failed (a truncated recording?)", argv[0]);
	return 0;
}

/* ---- the self-test ------------------------------------------------------ */

#define K0	0xffff000000000000ULL	/* a linear-map address */
#define KV	0xffff800000000000ULL	/* a kernel address outside it */
#define U0	0x0000aaaa00000000ULL	/* a user address */
#define MB	(1ULL << 20)

static struct core st_core;
static int st_failed, st_n;
static const char *st_dir;

/* "ENTRIES WAYS SIZES [REPLACEMENT]" */
static void st_level(struct level *lv, const char *spec)
{
	char sizes[64], pol[16];
	unsigned int e, w;
	int n = sscanf(spec, "%u %u %63s %15s", &e, &w, sizes, pol);

	if (n < 3)
		die("bad level '%s' in the self-test", spec);
	level_set(lv, "self-test", e, w, sizes);
	if (n == 4)
		lv->repl = repl_parse(pol);
}

/*
 * A simulation of @vcpus whose "series" layout holds the blocks below
 * and whose "full" one maps the linear map by pages: @nmod models of the
 * given layouts (0 full, 1 series), @scale and @variant each.
 */
static void st_setup(struct sim *s, const char *l1, const char *l2, unsigned int vcpus)
{
	static struct range blocks[] = {
		{ K0, K0 + 2 * MB, 21 },			/* a 2 MiB block */
		{ K0 + 2 * MB, K0 + 2 * MB + 64 * 1024, 16 },	/* a contiguous range */
		{ K0 + 32 * MB, K0 + 64 * MB, 25 },		/* a contiguous block range */
	};
	static unsigned char lin[] = { 1, 1, 1 };
	struct rx_layout x = { blocks, lin, 3 };

	memset(s, 0, sizeof(*s));
	s->out = stdout;
	st_level(&st_core.l1d, l1);
	st_core.l1i = st_core.l1d;
	st_level(&st_core.l2, l2);
	snprintf(st_core.name, sizeof(st_core.name), "test");
	sim_init(s, vcpus, NULL);
	sim_layout(s, &x);
	/* The linear map: 4 GiB from K0, whatever the blocks cover. */
	for (unsigned int i = 0; i < NR_LAYOUTS; i++) {
		s->lay[i].lin_start = K0;
		s->lay[i].lin_end = K0 + 4096 * MB;
	}
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

#define D(va, cpu)	LM_REC((va) >> 12, LM_T_KDATA, cpu)
#define UD(va, cpu)	LM_REC((va) >> 12, LM_T_DATA, cpu)
#define I(va, cpu)	LM_REC((va) >> 12, LM_T_INSN, cpu)
#define CNT(k, u)	LM_REC((uint64_t)(k) << LM_COUNT_BITS | (u), LM_T_COUNT, 0)

/* The first model of @layout: the first st_add()ed one. */
static const struct stats *st(const struct sim *s, unsigned int layout)
{
	unsigned int i;

	for (i = 0; i < s->nmodels; i++)
		if (s->m[i].layout == layout)
			return &s->m[i].st;
	die("no model of that layout%s", "");
	return NULL;
}

/* Model @i's kernel linear-map L1 misses and walks, as misses * 100 + walks. */
static uint64_t st_mw(const struct sim *s, unsigned int i)
{
	return s->m[i].st.dmiss[C_KLIN] * 100 + s->m[i].st.dwalk[C_KLIN];
}

/*
 * Random accesses with locality, both unfiltered and through the
 * plugin's filter: the model must see the same misses and walks from
 * both. @depth is the filter's: LM_FILTER must give the same counts; a
 * deeper filter would not (the test of the depth chosen).
 */
static void st_filter(unsigned int depth, int want_same)
{
	static struct sim a, b;
	uint64_t f[8], seed = 12345, last = K0;
	unsigned int i, since = 0, li, diff = 0;

	st_setup(&a, "48 48 4K,64K,2M", "64 4 4K,64K,2M,32M", 1);
	sim_add(&a, 0, &st_core, 1, 0);
	sim_add(&a, 1, &st_core, 1, 0);
	st_setup(&b, "48 48 4K,64K,2M", "64 4 4K,64K,2M,32M", 1);
	sim_add(&b, 0, &st_core, 1, 0);
	sim_add(&b, 1, &st_core, 1, 0);
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

			if (c == C_KOTHER || c == C_USER)
				continue;	/* the stream has none */
			snprintf(what, sizeof(what), "filter: %.8s layout, %.14s l1 misses",
				 layout_name[li], class_name[c]);
			st_check(what, b.m[li].st.dmiss[c], a.m[li].st.dmiss[c]);
			snprintf(what, sizeof(what), "filter: %.8s layout, %.14s walks",
				 layout_name[li], class_name[c]);
			st_check(what, b.m[li].st.dwalk[c], a.m[li].st.dwalk[c]);
		}
	}
	if (want_same)
		st_check("filter: the filtered stream is under half as long",
			 b.c.records < a.c.records / 2, 1);
	else
		st_check("filter: a deeper filter changes some count", diff > 0, 1);
}

/*
 * The hashed lookup of a fully associative level against the plain scan
 * of every way: the same hits on a random stream of kernel and user
 * pages of two sizes, with user and full flushes.
 */
static void st_hash(void)
{
	struct level lv;
	struct tlb h, p;
	uint64_t seed = 99;
	unsigned int i, same = 0;

	st_level(&lv, "48 48 4K,2M");
	tlb_init(&h, &lv);
	tlb_init(&p, &lv);
	free(p.hash);
	p.hash = NULL;
	for (i = 0; i < 300000; i++) {
		uint64_t r, va;
		int user;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 33;
		user = r & 1;
		va = (user ? U0 : K0) + (r >> 2) % 120 * 4096;
		if (r % 997 == 0) {
			tlb_flush(&h, user);
			tlb_flush(&p, user);
		}
		same += tlb_access(&h, va, r & 2 ? 21 : 12, !user) ==
			tlb_access(&p, va, r & 2 ? 21 : 12, !user);
	}
	st_check("hash: a hashed fully associative level hits as a plain one", same, 300000);
}

/* The published tables, read through the plugin's loader. */
static void st_params(void)
{
	static const struct {
		const char *file, *tlb;
		unsigned int entries, ways;
		const char *sizes;
	} want[] = {
		/* Neoverse N1 TRM (100616), A5.2 */
		{ "neoverse-n1.tsv", "l1i", 48, 48, "4K,16K,64K,2M,32M" },
		{ "neoverse-n1.tsv", "l1d", 48, 48, "4K,16K,64K,2M,512M" },
		{ "neoverse-n1.tsv", "l2", 1280, 5, "4K,16K,64K,2M,32M,512M,1G" },
		/* C1-Ultra TRM (108014); its L2's sizes the Cortex-X925's (102807) */
		{ "c1-ultra.tsv", "l1i", 128, 128, "4K,16K,64K,2M" },
		{ "c1-ultra.tsv", "l1d", 96, 96, "4K,16K,64K,2M,512M" },
		{ "c1-ultra.tsv", "l2", 2048, 8, "4K,16K,64K,2M,32M,512M,1G" },
	};
	unsigned int i, j;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct core c;
		struct level *lv, w;
		char path[4096], what[96], spec[96];

		snprintf(path, sizeof(path), "%s/%s", st_dir, want[i].file);
		core_load(&c, path);
		lv = !strcmp(want[i].tlb, "l1i") ? &c.l1i : !strcmp(want[i].tlb, "l1d") ?
			&c.l1d : &c.l2;
		snprintf(spec, sizeof(spec), "%u %u %s", want[i].entries, want[i].ways,
			 want[i].sizes);
		st_level(&w, spec);
		snprintf(what, sizeof(what), "params: %s %s as its TRM gives it",
			 want[i].file, want[i].tlb);
		for (j = 0; j < w.nsizes && j < lv->nsizes; j++)
			if (w.shifts[j] != lv->shifts[j])
				break;
		st_check(what, lv->entries == w.entries && lv->ways == w.ways &&
			 lv->nsizes == w.nsizes && j == w.nsizes, 1);
	}
}

static size_t slurp(FILE *f, char *buf, size_t size)
{
	size_t len;

	rewind(f);
	len = fread(buf, 1, size - 1, f);
	buf[len] = 0;
	return len;
}

/* Whether layouts @a and @b of the first window have the same models' text. */
/* Runs @cmd (a replay); its status, and its output file @out in @buf. */
static int st_replay(const char *cmd, const char *out, char *buf, size_t size)
{
	int rc = system(cmd);
	FILE *f = fopen(out, "r");

	buf[0] = 0;
	if (f) {
		slurp(f, buf, size);
		fclose(f);
	}
	return rc;
}

static int st_same_models(const char *json, const char *a, const char *b)
{
	const char *p[2], *q[2];
	char key[32];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(key, sizeof(key), "\"%s\": {", i ? b : a);
		p[i] = strstr(json, key);
		p[i] = p[i] ? strstr(p[i], "\"models\": [") : NULL;
		q[i] = p[i] ? strstr(p[i], "]}") : NULL;
		if (!q[i])
			return 0;
	}
	return q[0] - p[0] == q[1] - p[1] && q[0] - p[0] > 100 &&
	       !memcmp(p[0], p[1], q[0] - p[0]);
}

/*
 * A stream written as the plugin writes it, and replayed: the replay's
 * window must be the inline model's, byte for byte.
 */
static void st_recording(void)
{
	static struct sim a;
	static char inl[16384], rep[65536];
	char tmp[] = "/tmp/tlbsim-XXXXXX", rec[64], out[80], cmd[12800];
	struct range lay[] = { { K0, K0 + 2 * MB, 21 }, { KV, KV + MB, 12 } };
	unsigned char lin[] = { 1, 0 };
	struct rx_layout x = { lay, lin, 2 };
	char params[4096], self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	uint64_t recs[400], seed = 7;
	unsigned int i, n = 0;
	int fd = mkstemp(tmp);
	FILE *f, *o;

	if (fd < 0 || len < 0)
		die("no temporary file or no /proc/self/exe%s", "");
	close(fd);
	self[len] = 0;
	snprintf(rec, sizeof(rec), "%s.zst", tmp);
	snprintf(out, sizeof(out), "%s.json", tmp);
	snprintf(params, sizeof(params), "%s/neoverse-n1.tsv", st_dir);
	core_load(&st_core, params);
	memset(&a, 0, sizeof(a));
	a.out = o = tmpfile();
	if (!o)
		die("no temporary file%s", "");
	sim_init(&a, 2, NULL);
	sim_add_inline(&a, &st_core);
	f = rec_open(rec, 1);
	rec_put_head(f, 2, NULL);
	rec_put_layout(f, LM_T_LAYOUT, lay, lin, 2);
	sim_layout(&a, &x);
	recs[n++] = LM_REC(LM_MARK_START << 8 | 7, LM_T_MARK, 0);
	while (n < 399) {
		uint64_t r, cpu;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 33;
		cpu = r & 1;
		switch ((r >> 1) % 6) {
		case 0:
			recs[n++] = I(KV + (r >> 4) % 4 * 4096, cpu);
			break;
		case 1:
			recs[n++] = UD(U0 + (r >> 4) % 64 * 4096, cpu);
			break;
		case 2:
			recs[n++] = D(KV + (r >> 4) % 200 * 4096, cpu);
			break;
		default:
			recs[n++] = D(K0 + (r >> 4) % 4096 * 4096, cpu);
		}
	}
	recs[n++] = LM_REC(LM_MARK_STOP << 8 | 7, LM_T_MARK, 1);
	for (i = 0; i < n; i++) {
		rec_put(f, recs[i]);
		sim_record(&a, recs[i]);
	}
	if (pclose(f))
		die("zstd failed%s", "");
	slurp(o, inl, sizeof(inl));
	fclose(o);
	snprintf(cmd, sizeof(cmd), "'%s' replay --params '%s' %s %s", self, params, rec, out);
	st_check("replay: a recording replays", system(cmd), 0);
	f = fopen(out, "r");
	if (f) {
		slurp(f, rep, sizeof(rep));
		fclose(f);
	}
	st_check("replay: the inline model's window, byte for byte",
		 strlen(inl) > 1000 && strstr(rep, inl + 1) != NULL, 1);
	snprintf(cmd, sizeof(cmd), "'%s' replay --variants all --params '%s' --params '%s' %s %s",
		 self, params, params, rec, out);
	st_check("replay: with the variants and a second core", system(cmd), 0);
	f = fopen(out, "r");
	if (f) {
		char *p, *q;
		int same = 1, models = 0;

		slurp(f, rep, sizeof(rep));
		fclose(f);
		/* Each of the inline models, in its own line, is there too. */
		for (p = strstr(inl, "{\"core\""); p; p = strstr(q + 1, "{\"core\"")) {
			q = strstr(p, "}}}");	/* the end of its stats */
			if (!q)
				break;
			q[3] = 0;
			same &= strstr(rep, p) != NULL;
			models++;
			q += 3;
		}
		st_check("replay: variants leave the 6 plain models' counts alone",
			 same * models, 6);
	}
	snprintf(cmd, sizeof(cmd), "'%s' replay --inject all@2000,l1@2000 --params '%s' %s %s",
		 self, params, rec, out);
	st_check("replay: --inject all@RATE,l1@RATE replays",
		 st_replay(cmd, out, rep, sizeof(rep)), 0);
	st_check("replay: --inject adds a model of each layout for each",
		 (strstr(rep, "\"inject_all@2000\"") != NULL) + (strstr(rep, "\"inject_l1@2000\"") != NULL), 2);
	snprintf(cmd, sizeof(cmd), "'%s' replay --inject most@1 --params '%s' %s %s 2>/dev/null",
		 self, params, rec, out);
	st_check("replay: --inject refuses a kind it does not know", system(cmd) != 0, 1);
	/*
	 * --on with the linear map all PTEs: "on" must then count what
	 * "full" counts, model by model.
	 */
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s", tmp);
	fprintf(f, "linear %llx %llx\n%llx %llx 12\n", K0, K0 + 2 * MB, K0, K0 + 2 * MB);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' replay --on %s --params '%s' %s %s",
		 self, tmp, params, rec, out);
	st_check("replay: --on LAYOUT replays", st_replay(cmd, out, rep, sizeof(rep)), 0);
	st_check("replay: --on, a linear map of PTEs counts as all-PTE \"full\"",
		 st_same_models(rep, "full", "on"), 1);
	unlink(tmp);
	unlink(rec);
	unlink(out);
}

static int selftest(const char *dir)
{
	static struct sim s;
	uint64_t r[1100];
	size_t n;
	unsigned int i;

	st_dir = dir;
	st_params();

	/* A core table's "replace" line sets every level's replacement. */
	{
		char path[] = "/tmp/tlbsim-core-XXXXXX";
		struct core c;
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (!f)
			die("cannot write a core table in /tmp%s", "");
		fprintf(f, "replace\tplru\nl1i\t4\t4\t4K\nl1d\t4\t4\t4K\nl2\t8\t2\t4K\n");
		fclose(f);
		core_load(&c, path);
		unlink(path);
		st_check("params: a table's replace line reaches every level",
			 c.l1d.repl == R_PLRU && c.l1i.repl == R_PLRU && c.l2.repl == R_PLRU, 1);
	}

	/* LRU: A B C A in a 2-entry first level; the second holds all. */
	st_setup(&s, "2 2 4K", "4 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	n = 0;
	r[n++] = D(K0, 0);
	r[n++] = D(K0 + 4096, 0);
	r[n++] = D(K0 + 8192, 0);
	r[n++] = D(K0, 0);
	st_run(&s, r, n);
	st_check("lru: l1 misses of A B C A", st(&s, 0)->dmiss[C_KLIN], 4);
	st_check("lru: walks of A B C A", st(&s, 0)->dwalk[C_KLIN], 3);

	/*
	 * Replacement in a 3-entry first level, A B C A D B A: true LRU
	 * evicts B then C and keeps A (5 misses); pseudo-LRU's bits, all
	 * set by C, keep only C's, so D takes B's place and B then A's
	 * (6 misses).
	 */
	for (i = 0; i < 2; i++) {
		static const unsigned int seq[] = { 0, 1, 2, 0, 3, 1, 0 };
		unsigned int j;

		st_setup(&s, i ? "3 3 4K plru" : "3 3 4K", "64 4 4K", 1);
		sim_add(&s, 0, &st_core, 1, 0);
		n = 0;
		for (j = 0; j < 7; j++)
			r[n++] = D(K0 + seq[j] * 4096, 0);
		st_run(&s, r, n);
		st_check(i ? "replacement: plru, l1 misses of A B C A D B A" :
			     "replacement: lru, l1 misses of A B C A D B A",
			 st(&s, 0)->dmiss[C_KLIN], i ? 6 : 5);
	}
	/*
	 * A cycle over 4 pages in 3 entries: LRU misses every time, random
	 * replacement keeps some (a fixed seed: the same count every run).
	 */
	for (i = 0; i < 2; i++) {
		unsigned int j;

		st_setup(&s, i ? "3 3 4K random" : "3 3 4K", "64 4 4K", 1);
		sim_add(&s, 0, &st_core, 1, 0);
		n = 0;
		for (j = 0; j < 400; j++)
			r[n++] = D(K0 + (j % 4) * 4096, 0);
		st_run(&s, r, n);
		if (i)
			st_check("replacement: random keeps some of a cycle one too large",
				 st(&s, 0)->dmiss[C_KLIN] > 100 && st(&s, 0)->dmiss[C_KLIN] < 360, 1);
		else
			st_check("replacement: lru misses every access of a cycle one too large",
				 st(&s, 0)->dmiss[C_KLIN], 400);
	}

	/* Set associativity: pages 0 2 4 share set 0 of 2 ways. */
	st_setup(&s, "1 1 4K", "4 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	n = 0;
	for (i = 0; i <= 4; i += 2)
		r[n++] = D(K0 + i * 4096, 0);
	r[n++] = D(K0, 0);
	r[n++] = D(K0 + 4096, 0);
	r[n++] = D(K0 + 4096 * 4, 0);
	st_run(&s, r, n);
	st_check("sets: walks of 0 2 4 0 1 4", st(&s, 0)->dwalk[C_KLIN], 5);

	/*
	 * A block's set comes from its own size's bits: blocks 0, 1 and 2
	 * of 2 MiB fall in sets 0, 1, 0 of two; by 4K bits all in set 0.
	 */
	st_setup(&s, "1 1 4K,2M", "4 2 4K,2M", 1);
	sim_add(&s, 1, &st_core, 1, 0);
	n = 0;
	for (i = 0; i < 6; i++)
		r[n++] = D(K0 + 32 * MB + (i % 3) * 2 * MB, 0);
	st_run(&s, r, n);
	st_check("sets: 2 MiB entries indexed by their own bits", st(&s, 1)->dwalk[C_KLIN], 3);

	/* One entry per leaf: 512 pages of a 2 MiB block, 16 of a range. */
	st_setup(&s, "4 4 4K,64K,2M", "8 2 4K,64K,2M", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_add(&s, 1, &st_core, 1, 0);
	n = 0;
	for (i = 0; i < 512; i++)
		r[n++] = D(K0 + i * 4096ULL, 0);
	for (i = 0; i < 16; i++)
		r[n++] = D(K0 + 2 * MB + i * 4096ULL, 0);
	st_run(&s, r, n);
	st_check("leaves: walks, all base pages", st(&s, 0)->dwalk[C_KLIN], 528);
	st_check("leaves: walks, block and contiguous range", st(&s, 1)->dwalk[C_KLIN], 2);

	/* A 32 MiB leaf splinters into 2 MiB first-level entries. */
	st_setup(&s, "4 4 4K,2M", "8 2 4K,2M,32M", 1);
	sim_add(&s, 1, &st_core, 1, 0);
	n = 0;
	r[n++] = D(K0 + 32 * MB, 0);
	r[n++] = D(K0 + 34 * MB, 0);
	r[n++] = D(K0 + 35 * MB, 0);
	st_run(&s, r, n);
	st_check("splinter: l1 misses in one 32 MiB leaf", st(&s, 1)->dmiss[C_KLIN], 2);
	st_check("splinter: walks in one 32 MiB leaf", st(&s, 1)->dwalk[C_KLIN], 1);

	/* The L2's size: 4 pages cycled fit 8 sets of 1 way, not 2. */
	st_setup(&s, "1 1 4K", "4 1 4K", 1);
	sim_add(&s, 0, &st_core, 0.5, 0);
	sim_add(&s, 0, &st_core, 2, 0);
	n = 0;
	for (i = 0; i < 12; i++)
		r[n++] = D(K0 + (i % 4) * 4096, 0);
	st_run(&s, r, n);
	st_check("l2 size: walks with 2 sets", s.m[0].st.dwalk[C_KLIN], 12);
	st_check("l2 size: walks with 8 sets", s.m[1].st.dwalk[C_KLIN], 4);

	/* Classes: by the instruction's level, then by where it goes. */
	st_setup(&s, "4 4 4K", "8 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	n = 0;
	r[n++] = D(K0, 0);		/* EL1 to the linear map */
	r[n++] = D(KV, 0);		/* EL1 elsewhere in the kernel */
	r[n++] = D(KV + 4096, 0);
	r[n++] = D(U0, 0);		/* EL1 to user memory (copy_to_user) */
	r[n++] = UD(U0 + 4096, 0);	/* EL0 */
	st_run(&s, r, n);
	st_check("classes: kernel to the linear map", st(&s, 0)->dwalk[C_KLIN], 1);
	st_check("classes: kernel elsewhere", st(&s, 0)->dwalk[C_KOTHER], 2);
	st_check("classes: kernel to user memory", st(&s, 0)->dwalk[C_KUSER], 1);
	st_check("classes: user", st(&s, 0)->dwalk[C_USER], 1);

	/* Instructions: the L2 backs the L1 (A B A: the second A hits it). */
	st_setup(&s, "1 1 4K", "8 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	n = 0;
	r[n++] = I(KV, 0);
	r[n++] = I(KV + 4096, 0);
	r[n++] = I(KV, 0);
	r[n++] = I(U0, 0);
	st_run(&s, r, n);
	st_check("insns: kernel l1 misses", st(&s, 0)->imiss[1], 3);
	st_check("insns: kernel walks", st(&s, 0)->iwalk[1], 2);
	st_check("insns: user walks", st(&s, 0)->iwalk[0], 1);

	/* Warm: a window starts with what the TLBs already hold. */
	st_setup(&s, "4 4 4K", "8 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_record(&s, D(K0, 0));
	sim_record(&s, D(K0 + 4096, 0));
	n = 0;
	r[n++] = D(K0, 0);
	r[n++] = D(K0 + 4096, 0);
	r[n++] = D(K0 + 8192, 0);
	st_run(&s, r, n);
	st_check("warm: walks in a window after two pages were touched",
		 s.m[0].st.dwalk[C_KLIN] - s.m[0].snap.dwalk[C_KLIN], 1);

	/* Invalidation: all entries, user entries, another vCPU's. */
	st_setup(&s, "4 4 4K", "8 2 4K", 2);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_add(&s, 0, &st_core, 1, V_TLBI_VA);
	sim_add(&s, 0, &st_core, 1, V_TLBI_VA_ALL);
	n = 0;
	r[n++] = D(K0, 0);
	r[n++] = UD(U0, 0);
	r[n++] = LM_REC(0, LM_T_FLUSH_USER, 0);
	r[n++] = D(K0, 0);
	r[n++] = UD(U0, 0);
	r[n++] = LM_REC(0, LM_T_FLUSH_ALL, 1);	/* vCPU 1's own TLBs */
	r[n++] = D(K0, 0);
	r[n++] = LM_REC(1, LM_T_FLUSH_ALL, 1);	/* broadcast */
	r[n++] = D(K0, 0);
	r[n++] = LM_REC(1, LM_T_FLUSH_VA, 1);	/* counted only */
	r[n++] = D(K0, 0);
	st_run(&s, r, n);
	st_check("tlbi: kernel walks", s.m[0].st.dwalk[C_KLIN], 2);
	st_check("tlbi: user walks", s.m[0].st.dwalk[C_USER], 2);
	st_check("tlbi: by-address invalidations counted", s.c.tlbi[2], 1);
	st_check("tlbi: no l1 flush by address in the base model", s.m[0].st.dmiss[C_KLIN], 2);
	st_check("variant tlbi_va_l1: the L1 flushed by address, not the L2", st_mw(&s, 1), 302);
	st_check("variant tlbi_va_all: the L1 and the L2 flushed by address", st_mw(&s, 2), 303);

	/*
	 * Injected invalidations, one per 1000 instructions of a vCPU: A,
	 * 1000 instructions (one due), A, 500 and 400 (none due), A, 100
	 * (one due), A. The model beside them has none. Under inject_l1 the
	 * refills find the L2; under inject_all they walk. vCPU 1's
	 * instructions empty only its own TLBs.
	 */
	st_setup(&s, "2 2 4K", "4 2 4K", 2);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_add_inject(&s, 0, &st_core, 1, 0, INJECT_L1, 1000);
	sim_add_inject(&s, 0, &st_core, 1, 0, INJECT_ALL, 1000);
	n = 0;
	r[n++] = D(K0, 0);
	r[n++] = CNT(600, 400);
	r[n++] = D(K0, 0);
	r[n++] = CNT(500, 0);
	r[n++] = LM_REC((uint64_t)5000 << LM_COUNT_BITS, LM_T_COUNT, 1);
	r[n++] = CNT(0, 400);
	r[n++] = D(K0, 0);
	r[n++] = CNT(100, 0);
	r[n++] = D(K0, 0);
	st_run(&s, r, n);
	st_check("inject: none in the model beside them, l1 misses",
		 s.m[0].st.dmiss[C_KLIN], 1);
	st_check("inject: l1, one a 1000 instructions empties the L1, not the L2", st_mw(&s, 1), 301);
	st_check("inject: all, one a 1000 instructions empties the L1 and the L2", st_mw(&s, 2), 303);

	/* PRFM and DC ZVA, without an address: counted by the level that ran them. */
	st_setup(&s, "2 2 4K", "4 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	n = 0;
	r[n++] = LM_REC(1, LM_T_PRFM, 0);
	r[n++] = LM_REC(1, LM_T_PRFM, 0);
	r[n++] = LM_REC(0, LM_T_PRFM, 0);
	r[n++] = LM_REC(3, LM_T_PRFM, 0);
	r[n++] = LM_REC(1, LM_T_ZVA, 0);
	st_run(&s, r, n);
	st_check("counts: PRFM by EL1, by EL0, before an exclusive load by EL1, DC ZVA by EL1",
		 s.c.prfm[1] * 1000 + s.c.prfm[0] * 100 + s.c.prfm[3] * 10 + s.c.zva[1], 2111);
	{
		/* Encodings as GNU as gives them; loads beside them are not. */
		static const uint32_t prfm[] = {
			0xf9800000, 0xf987fc31, 0xf8a36842, 0xf8a3c840, 0xf89f8080, 0xd8000020,
		};
		static const uint32_t other[] = {
			0xf9400020, 0xf8626820, 0xf85f8020, 0x58ffffa0, 0x98ffff80,
			0xb9800020, 0xf8226820, 0xd50b7420,
		};
		unsigned int yes = 0, no = 0;

		for (i = 0; i < sizeof(prfm) / sizeof(prfm[0]); i++)
			yes += lm_is_prfm(prfm[i]);
		for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
			no += !lm_is_prfm(other[i]);
		st_check("prfm: the plugin's decoder, 6 prefetches and 8 other instructions",
			 yes * 10 + no, 68);
		/*
		 * PRFM PSTL1STRM, [x3] before LDXR, LDAXR, LDXP, LDAXP [x3]:
		 * the LL/SC atomics'; not before LDR, LDAR or STXR [x3], nor
		 * before LDXR [x2], nor with an offset.
		 */
		yes = lm_prfm_before_exclusive(0xf9800071, 0x885f7c61) +
		      lm_prfm_before_exclusive(0xf9800071, 0xc85ffc61) +
		      lm_prfm_before_exclusive(0xf9800071, 0xc87f0861) +
		      lm_prfm_before_exclusive(0xf9800071, 0x887f8861);
		no = !lm_prfm_before_exclusive(0xf9800071, 0xf9400061) +
		     !lm_prfm_before_exclusive(0xf9800071, 0xc8dffc61) +
		     !lm_prfm_before_exclusive(0xf9800071, 0xc8047c61) +
		     !lm_prfm_before_exclusive(0xf9800071, 0x885f7c41) +
		     !lm_prfm_before_exclusive(0xf987fc71, 0x885f7c61);
		st_check("prfm: before an exclusive load of its address, 4 pairs and 5 others",
			 yes * 10 + no, 45);
	}

	/* coalesce4: four linear 4K pages share an L2 entry; user ones not. */
	st_setup(&s, "1 1 4K", "64 4 4K,16K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_add(&s, 0, &st_core, 1, V_COALESCE);
	n = 0;
	for (i = 0; i < 8; i++)
		r[n++] = D(K0 + i * 4096, 0);
	for (i = 0; i < 4; i++)
		r[n++] = UD(U0 + i * 4096, 0);
	st_run(&s, r, n);
	st_check("variant coalesce4: linear walks", s.m[1].st.dwalk[C_KLIN], 2);
	st_check("variant coalesce4: user walks", s.m[1].st.dwalk[C_USER], 4);
	st_check("variant coalesce4: base linear walks", s.m[0].st.dwalk[C_KLIN], 8);

	/* walk_cache: a walk's table entry takes a way of the L2. */
	st_setup(&s, "1 1 4K", "2 2 4K", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_add(&s, 0, &st_core, 1, V_WALKCACHE);
	n = 0;
	for (i = 0; i < 6; i++)
		r[n++] = D(K0 + (i % 2) * 4096, 0);
	st_run(&s, r, n);
	st_check("variant walk_cache: two pages in a 2-way L2", s.m[0].st.dwalk[C_KLIN], 2);
	st_check("variant walk_cache: ... with the table's entry", s.m[1].st.dwalk[C_KLIN], 6);

	/* thp_user: 512 user pages in one 2 MiB leaf. */
	st_setup(&s, "4 4 4K,2M", "8 2 4K,2M", 1);
	sim_add(&s, 0, &st_core, 1, V_THP);
	n = 0;
	for (i = 0; i < 512; i++)
		r[n++] = UD(U0 + i * 4096ULL, 0);
	st_run(&s, r, n);
	st_check("variant thp_user: user walks", s.m[0].st.dwalk[C_USER], 1);

	/* end_layout: the window runs on the layout sent after it. */
	st_setup(&s, "4 4 4K,2M", "8 2 4K,2M", 1);
	sim_add(&s, 1, &st_core, 1, 0);
	sim_add(&s, 1, &st_core, 1, V_END_LAYOUT);
	{
		static struct range pages[] = { { K0, K0 + 2 * MB, 12 } };
		static unsigned char lin[] = { 1 };
		struct rx_layout x = { pages, lin, 1 };

		sim_end_layout(&s, &x);
		s.end[1].lin_start = K0;
		s.end[1].lin_end = K0 + 4096 * MB;
	}
	n = 0;
	for (i = 0; i < 4; i++)
		r[n++] = D(K0 + i * 4096, 0);
	st_run(&s, r, n);
	st_check("variant end_layout: walks on the split block", s.m[1].st.dwalk[C_KLIN], 4);
	st_check("variant end_layout: walks on the block", s.m[0].st.dwalk[C_KLIN], 1);

	/* The three layouts built from one sent, and the "on" file. */
	{
		static struct range sent[] = {
			{ K0, K0 + 2 * MB, 21 }, { K0 + 2 * MB, K0 + 4 * MB, 16 },
			{ KV, KV + MB, 12 },
		};
		static unsigned char lin[] = { 1, 1, 0 };
		static struct range onr[] = { { K0, K0 + 4 * MB, 30 } };
		struct layout on = { "on", K0, K0 + 4 * MB, onr, 1 };
		struct rx_layout x = { sent, lin, 3 };
		struct layout out[NR_LAYOUTS] = { { .name = "full" }, { .name = "series" }, { .name = "on" } };
		uint64_t lb, ob = build_layouts(out, &x, &on, &lb);

		st_check("layouts: full maps the linear map by pages",
			 leaf_shift(&out[0], K0) == 12 && leaf_shift(&out[0], K0 + 3 * MB) == 12 &&
			 leaf_shift(&out[0], KV) == 12 && out[0].n == 3, 1);
		st_check("layouts: series as sent",
			 leaf_shift(&out[1], K0) == 21 && leaf_shift(&out[1], K0 + 3 * MB) == 16, 1);
		st_check("layouts: on takes the linear map from its file",
			 leaf_shift(&out[2], K0 + 3 * MB) == 30 && out[2].n == 2 &&
			 out[2].r[0].start == K0, 1);
		st_check("layouts: the linear map's bytes, sent and on", lb * 2 + ob, 12 * MB);
	}

	/* Footprint: 3 pages in one block, per million instructions. */
	st_setup(&s, "4 4 4K,2M", "8 2 4K,2M", 1);
	sim_add(&s, 0, &st_core, 1, 0);
	sim_add(&s, 1, &st_core, 1, 0);
	n = 0;
	for (i = 0; i < 2; i++) {
		r[n++] = D(K0, 0);
		r[n++] = D(K0 + 4096, 0);
		r[n++] = D(K0 + 8192, 0);
		r[n++] = UD(U0, 0);	/* user pages do not count */
		r[n++] = CNT(600000, 400000);
	}
	st_run(&s, r, n);
	st_check("footprint: windows", s.fp[0].windows, 2);
	st_check("footprint: base pages", s.fp[0].distinct, 6);
	st_check("footprint: blocks", s.fp[s.vcpus].distinct, 2);
	st_check("footprint: instructions", s.c.kinsns + s.c.uinsns, 2000000);

	st_hash();
	st_filter(LM_FILTER, 1);
	st_filter(8, 0);
	st_recording();
	printf("1..%d\n", st_n);
	return st_failed;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--selftest"))
		return selftest(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "replay"))
		return replay(argc - 2, argv + 2);
	fprintf(stderr, "usage: tlbsim --selftest PARAMS_DIR\n"
		"       tlbsim replay [--variants all|NAME,...] [--inject KIND@RATE,...] [--on LAYOUT]\n"
		"                     --params TSV [--params TSV...] REC OUT\n");
	return 2;
}
