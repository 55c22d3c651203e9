// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_stress.
 *
 * Stress and random changes: concurrent random RO/RW and invalid/valid
 * changes against a shadow model, many CPUs aimed at one contiguous group,
 * contiguous user PTEs under contpte_convert(); last, as they change the
 * whole system, the big stress, a late CPU and a late KFENCE pool.
 *
 * Longer than 400 lines: one program per area, and its tests run in this
 * order, the system-wide ones last.
 */

#include "linmap_lib.h"

/*
 * The harness arms its per-test alarm before the test runs, so the budget of
 * the big stress run has to be fixed at build time.  A full-memory run under
 * TCG can take a long time; override with -DLM_STRESS_TIMEOUT=<seconds>.
 */
#ifndef LM_STRESS_TIMEOUT
#define LM_STRESS_TIMEOUT	3600
#endif

/*
 * Random concurrent RO/RW and invalid/valid changes against a shadow model,
 * verified by walk and by probe after every batch. LINMAP_CPA may give
 * seed=, threads=, ops=, secs=, pages=, batch=; the seed used is logged so
 * that a failure can be replayed.
 */
TEST_F_TIMEOUT(linmap, cpa_random, 3600)
{
	static const char * const zero[] = {
		"mismatches", "call_errors", "audit.violations",
		"collapse_errors", "directmap_mismatches", "table_violations",
	};
	static const char * const some[] = {
		"ro", "rw", "invalid", "valid", "verified_pages",
	};
	char why[256];
	const char *env = getenv("LINMAP_CPA");
	unsigned long long ops;
	char params[256];
	struct lm_out *o;
	unsigned int i;
	int ret;

	snprintf(params, sizeof(params), "%s",
		 env && *env ? env : "ops=2000 secs=4 pages=64 collapse=50");
	ret = lm_write("cpa", params);
	o = lm_get(_metadata, &self->lm, "cpa");
	TH_LOG("cpa '%s': seed=%llu", params, lm_num(_metadata, o, "seed"));
	EXPECT_EQ(0, ret) TH_LOG("cpa '%s': %s", params, strerror(-ret));
	ops = lm_num(_metadata, o, "ops");
	EXPECT_LT(0, ops);
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	/* With this many random operations, each kind must have run. */
	for (i = 0; ops >= 100 && i < ARRAY_SIZE(some); i++) {
		EXPECT_LT(0, lm_num(_metadata, o, "%s", some[i]))
			TH_LOG("cpa: no %s", some[i]);
	}
	TH_LOG("cpa: %llu ops, %llu pages verified in %llu ms", ops,
	       lm_num(_metadata, o, "verified_pages"),
	       lm_num(_metadata, o, "elapsed_ms"));
	TH_LOG("cpa: %llu collapse passes, %llu table audits, %llu DirectMap checks",
	       lm_num(_metadata, o, "collapse_passes"),
	       lm_num(_metadata, o, "table_audits"),
	       lm_num(_metadata, o, "directmap_checks"));
	if (lm_collapse_on(why, sizeof(why)) &&
	    lm_num(_metadata, o, "collapse_ms")) {
		EXPECT_LT(0, lm_num(_metadata, o, "collapse_passes"));
		EXPECT_LT(0, lm_num(_metadata, o, "table_audits"));
	}
}

/*
 * Many CPUs at one contiguous group at once: one splits it, the others
 * change ranges whose ends look like boundaries while it is half cleared.
 * None may fail or leave the linear map unsound. @pte_only aims at
 * contiguous PTE groups, inside one PTE table, where small changes take
 * pageattr's one-walk path.
 */
static void lm_cpa_aimed(struct __test_metadata *_metadata,
			 struct lm_ctx *lm, bool pte_only)
{
	static const char * const zero[] = { "call_errors", "audit.violations" };
	const struct lm_state *st = &lm->st;
	unsigned long long rounds, calls, slowed;
	struct lm_out *o;
	int ret;

	if (!st->rodata_full || !st->linear_blocks || st->bbml2 != 1)
		SKIP(return, "the linear map has no splittable blocks here (rodata_full=%llu, bbml2=%d)",
		     st->rodata_full, st->bbml2);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs online");
	ret = lm_write("cpa", pte_only ? "aim=6 aim_pte=1 ops=1 threads=4" :
					 "aim=6 ops=1 threads=4");
	o = lm_get(_metadata, lm, "cpa");
	rounds = lm_num(_metadata, o, "aimed_rounds");
	calls = lm_num(_metadata, o, "aimed_calls");
	slowed = lm_num(_metadata, o, "aim_slowed");
	TH_LOG("aimed: %llu rounds (%llu at contiguous PTE groups), %llu calls, slowed clears %s",
	       rounds, lm_num(_metadata, o, "aimed_pte_rounds"), calls,
	       slowed ? "yes (test-only hook)" : "no");
	EXPECT_EQ(0, ret) TH_LOG("cpa aim: %s", strerror(-ret));
	EXPECT_LT(0, rounds) TH_LOG("no intact contiguous group to aim at");
	if (pte_only)
		EXPECT_EQ(rounds, lm_num(_metadata, o, "aimed_pte_rounds"));
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	/*
	 * Without the test-only linmap_split_delay_us hook (real hardware) the
	 * window is rarely hit: a clean run proves little, so it is a skip;
	 * an error above still fails.
	 */
	if (!slowed && _metadata->exit_code != KSFT_FAIL)
		SKIP(return, "%llu aimed rounds clean, but without the test-only linmap_split_delay_us hook the race window is not widened",
		     rounds);
}

TEST_F_TIMEOUT(linmap, cpa_aimed_groups, 600)
{
	lm_cpa_aimed(_metadata, &self->lm, false);
}

TEST_F_TIMEOUT(linmap, cpa_aimed_pte_groups, 600)
{
	lm_cpa_aimed(_metadata, &self->lm, true);
}

/* ---- contiguous user PTEs: contpte_convert() --------------------------- */

#define CT_BLOCKS	3
#define CT_THREADS	3
#define CT_QUIET	1	/* a page no thread writes after the fault-in */

struct ct_buf {
	char *base;
	unsigned long ps, cont, pages;
	volatile int stop;
	unsigned long errors[CT_THREADS];
	unsigned long rounds[CT_THREADS];
	pthread_mutex_t lock;	/* for @errors' first report only */
	char first[160];
};

struct ct_thread {
	struct ct_buf *b;
	int id;
};

/*
 * Pages the threads own: all but the block's quiet page and the two the
 * main thread changes (the last, for mprotect(), and the middle, for
 * MADV_DONTNEED).
 */
static bool ct_thread_page(const struct ct_buf *b, unsigned long i)
{
	unsigned long in = i % b->cont;

	return in != CT_QUIET && in != b->cont - 1 && in != b->cont / 2;
}

static unsigned long *ct_word(const struct ct_buf *b, unsigned long i)
{
	return (unsigned long *)(b->base + i * b->ps) + 8;
}

static void *ct_thread_fn(void *arg)
{
	struct ct_thread *t = arg;
	struct ct_buf *b = t->b;
	unsigned long i, seq = 0;

	while (!b->stop) {
		seq++;
		for (i = t->id; i < b->pages; i += CT_THREADS) {
			unsigned long want = (seq << 16) | (i << 4) | t->id;
			volatile unsigned long *w;

			if (!ct_thread_page(b, i))
				continue;
			w = ct_word(b, i);
			*w = want;
			if (*w != want) {
				pthread_mutex_lock(&b->lock);
				if (!b->errors[t->id]++ && !b->first[0])
					snprintf(b->first, sizeof(b->first),
						 "thread %d page %lu: read %#lx, wrote %#lx",
						 t->id, i, *w, want);
				pthread_mutex_unlock(&b->lock);
			}
		}
		b->rounds[t->id]++;
	}
	return NULL;
}

struct ct_ptes {
	unsigned long valid, cont, dirty;
	char cont_map[600], dirty_map[600];
};

static void ct_read_ptes(struct __test_metadata *_metadata, struct lm_ctx *lm,
			 const struct ct_buf *b, unsigned long blk,
			 struct ct_ptes *p)
{
	char cmd[96];
	struct lm_out *o;

	snprintf(cmd, sizeof(cmd), "addr=%p pages=%lu",
		 b->base + blk * b->cont * b->ps, b->cont);
	ASSERT_EQ(0, lm_write("user_ptes", cmd));
	o = lm_get(_metadata, lm, "user_ptes");
	p->valid = lm_num(_metadata, o, "valid");
	p->cont = lm_num(_metadata, o, "cont");
	p->dirty = lm_num(_metadata, o, "dirty");
	lm_str(_metadata, o, "cont_map", p->cont_map, sizeof(p->cont_map));
	lm_str(_metadata, o, "dirty_map", p->dirty_map, sizeof(p->dirty_map));
}

/* The page the test knows the content of: a word the fault-in wrote. */
static unsigned long ct_quiet_value(unsigned long i)
{
	return 0x5eed0000UL | i;
}

/*
 * Every page but the thread-owned ones of block @blk keeps its dirty bit
 * through a conversion: the quiet page and, where @last_too, the last.
 */
static void ct_expect_dirty(struct __test_metadata *_metadata,
			    const struct ct_buf *b, const struct ct_ptes *p,
			    unsigned long blk, const char *after)
{
	EXPECT_EQ('d', p->dirty_map[CT_QUIET])
		TH_LOG("block %lu: the quiet page lost its dirty bit after %s (dirty_map=%s)",
		       blk, after, p->dirty_map);
	EXPECT_EQ('d', p->dirty_map[b->cont - 1])
		TH_LOG("block %lu: the last page lost its dirty bit after %s (dirty_map=%s)",
		       blk, after, p->dirty_map);
}

/*
 * contpte_convert(), the fold and unfold of contiguous user PTEs, which
 * BBML2_NOABORT lets run without a TLB invalidation: a buffer faulted in as
 * contiguous blocks (mTHP of one block's size), then mprotect() of one page
 * and back (an unfold, then a fold), fork() with writes on both sides (the
 * copy-on-write unfolds) and a partial MADV_DONTNEED (an unfold), while
 * threads write and read back their own pages of every block. The data
 * must stay right, no thread may fault (a SIGSEGV ends the test), and
 * every entry of a page written before keeps its dirty bit (read as stored
 * through the module's user_ptes, not the gathered contpte view).
 */
TEST_F_TIMEOUT(linmap, contpte_convert, 300)
{
	struct ct_thread th[CT_THREADS];
	pthread_t tid[CT_THREADS];
	char path[128], saved[64] = "", *old;
	struct ct_buf b = { .ps = sysconf(_SC_PAGESIZE) };
	unsigned long i, blk, round, folded = 0;
	size_t size, block;
	struct ct_ptes p;
	char *raw;
	int status;
	pid_t pid;

	b.cont = lm_group_entries(LM_CONT_PTE, b.ps);
	ASSERT_NE(0, b.cont);
	block = b.cont * b.ps;
	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%zukB/enabled",
		 block / 1024);
	old = lm_read_path(path);
	if (!old)
		SKIP(return, "no %s: the kernel has no THP (not built, or PREEMPT_RT, where 6.12 has none), so no contiguous user PTEs",
		     path);
	/* "always [madvise] never": keep the bracketed one to restore it. */
	if (strchr(old, '['))
		sscanf(strchr(old, '[') + 1, "%63[^]]", saved);
	free(old);
	ASSERT_EQ(0, lm_write_path(path, "always")) TH_LOG("cannot write %s", path);

	size = CT_BLOCKS * block;
	raw = mmap(NULL, size + block, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	b.base = (char *)(((uintptr_t)raw + block - 1) & ~(uintptr_t)(block - 1));
	b.pages = size / b.ps;
	for (i = 0; i < b.pages; i++)
		*ct_word(&b, i) = ct_quiet_value(i);
	for (blk = 0; blk < CT_BLOCKS; blk++) {
		ct_read_ptes(_metadata, &self->lm, &b, blk, &p);
		folded += p.cont == b.cont;
	}
	if (folded < CT_BLOCKS) {
		TH_LOG("%lu of %d blocks faulted in as contiguous PTEs", folded, CT_BLOCKS);
		munmap(raw, size + block);
		SKIP(goto restore, "the %zukB folios were not allocated", block / 1024);
	}

	pthread_mutex_init(&b.lock, NULL);
	for (i = 0; i < CT_THREADS; i++) {
		th[i] = (struct ct_thread){ &b, i };
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, ct_thread_fn, &th[i]));
	}

	/* Block 0: mprotect() of the last page and back, an unfold and a fold. */
	for (round = 0; round < 50; round++) {
		char *last = b.base + block - b.ps;

		ASSERT_EQ(0, mprotect(last, b.ps, PROT_READ));
		if (!round) {
			ct_read_ptes(_metadata, &self->lm, &b, 0, &p);
			EXPECT_EQ(0, p.cont) TH_LOG("mprotect() of one page left the block contiguous: %s",
						    p.cont_map);
		}
		ASSERT_EQ(0, mprotect(last, b.ps, PROT_READ | PROT_WRITE));
	}
	ct_read_ptes(_metadata, &self->lm, &b, 0, &p);
	EXPECT_EQ(b.cont, p.cont) TH_LOG("the block did not fold again: %s", p.cont_map);
	ct_expect_dirty(_metadata, &b, &p, 0, "mprotect()");

	/* Block 1: fork(); each side writes a page, which copies it. */
	for (round = 0; round < 4; round++) {
		unsigned long mine = block / b.ps + b.cont - 1;

		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			unsigned long q = block / b.ps + CT_QUIET;
			int bad = 0;

			*ct_word(&b, mine) = 0xc41d;
			bad |= *ct_word(&b, mine) != 0xc41d;
			bad |= *ct_word(&b, q) != ct_quiet_value(q);
			_exit(bad);
		}
		*ct_word(&b, mine) = ct_quiet_value(mine);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("the child read wrong data (status %#x)", status);
		EXPECT_EQ(ct_quiet_value(mine), *ct_word(&b, mine))
			TH_LOG("the child's write showed in the parent");
	}
	ct_read_ptes(_metadata, &self->lm, &b, 1, &p);
	EXPECT_EQ(b.cont, p.valid);
	ct_expect_dirty(_metadata, &b, &p, 1, "fork()");

	/* Block 2: MADV_DONTNEED of its middle page, an unfold. */
	{
		unsigned long mid = 2 * b.cont + b.cont / 2;

		ASSERT_EQ(0, madvise(b.base + mid * b.ps, b.ps, MADV_DONTNEED));
		ct_read_ptes(_metadata, &self->lm, &b, 2, &p);
		EXPECT_EQ(b.cont - 1, p.valid);
		EXPECT_EQ(0, p.cont) TH_LOG("a block with a hole is contiguous: %s", p.cont_map);
		ct_expect_dirty(_metadata, &b, &p, 2, "MADV_DONTNEED");
		/* Read after the PTEs: the read maps the zero page there. */
		EXPECT_EQ(0, *ct_word(&b, mid)) TH_LOG("the dropped page kept its data");
	}

	b.stop = 1;
	for (i = 0; i < CT_THREADS; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, b.errors[i]) TH_LOG("%s", b.first);
		EXPECT_LT(0, b.rounds[i]);
	}
	for (blk = 0; blk < CT_BLOCKS; blk++) {
		i = blk * b.cont + CT_QUIET;
		EXPECT_EQ(ct_quiet_value(i), *ct_word(&b, i))
			TH_LOG("block %lu: the quiet page changed", blk);
	}

	/*
	 * A fresh block, the threads stopped (fork() above made the others
	 * copy-on-write, and the copies left them unfolded for good):
	 * MADV_FREE cleans every entry, a write dirties the quiet page's
	 * alone, then an unfold made from the clean last entry must carry
	 * that dirty bit to every entry, and the fold after it too. Lost, the
	 * kernel would take the block for clean and drop it under reclaim
	 * (MADV_PAGEOUT), data and all.
	 */
	{
		char *raw4 = mmap(NULL, 2 * block, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ct_buf f = b;
		char *last;

		ASSERT_NE(MAP_FAILED, raw4);
		f.base = (char *)(((uintptr_t)raw4 + block - 1) & ~(uintptr_t)(block - 1));
		f.pages = b.cont;
		last = f.base + block - f.ps;
		for (i = 0; i < f.pages; i++)
			*ct_word(&f, i) = ct_quiet_value(i);
		ct_read_ptes(_metadata, &self->lm, &f, 0, &p);
		ASSERT_EQ(f.cont, p.cont) TH_LOG("the fresh block is not contiguous: %s", p.cont_map);
		ASSERT_EQ(0, madvise(f.base, block, MADV_FREE));
		*ct_word(&f, CT_QUIET) = 0xd1a7;
		ct_read_ptes(_metadata, &self->lm, &f, 0, &p);
		TH_LOG("after MADV_FREE and a write: cont_map=%s dirty_map=%s",
		       p.cont_map, p.dirty_map);
		ASSERT_EQ(0, mprotect(last, f.ps, PROT_READ));
		ct_read_ptes(_metadata, &self->lm, &f, 0, &p);
		EXPECT_EQ(0, p.cont) TH_LOG("mprotect() of one page left the block contiguous");
		EXPECT_EQ('d', p.dirty_map[CT_QUIET])
			TH_LOG("the unfold lost the quiet page's dirty bit (dirty_map=%s)",
			       p.dirty_map);
		ASSERT_EQ(0, mprotect(last, f.ps, PROT_READ | PROT_WRITE));
		ct_read_ptes(_metadata, &self->lm, &f, 0, &p);
		TH_LOG("after the unfold and the fold: cont_map=%s dirty_map=%s",
		       p.cont_map, p.dirty_map);
		EXPECT_EQ(f.cont, p.cont) TH_LOG("the block did not fold again: %s", p.cont_map);
		EXPECT_EQ('d', p.dirty_map[CT_QUIET])
			TH_LOG("the fold lost the quiet page's dirty bit (dirty_map=%s)",
			       p.dirty_map);
		if (madvise(f.base, block, MADV_PAGEOUT))
			TH_LOG("no MADV_PAGEOUT (%s): reclaim not tried", strerror(errno));
		EXPECT_EQ(0xd1a7, *ct_word(&f, CT_QUIET))
			TH_LOG("reclaim dropped a page written after MADV_FREE: it read %#lx",
			       *ct_word(&f, CT_QUIET));
		munmap(raw4, 2 * block);
	}
	TH_LOG("thread rounds %lu %lu %lu; %lu-page blocks", b.rounds[0],
	       b.rounds[1], b.rounds[2], b.cont);
	munmap(raw, size + block);
restore:
	if (saved[0] && lm_write_path(path, saved))
		TH_LOG("cannot restore %s to %s", path, saved);
}

/*
 * Last, as they change the whole system: the big stress leaves few blocks
 * unsplit (with 64K pages, none), a held-back CPU comes online, KFENCE
 * starts. The tests above need the blocks.
 */
FIXTURE(linmap_last) {
	struct lm_ctx lm;
};

LM_FIXTURE(linmap_last);

/*
 * Run one stress pass with @params and check its result.  @params is also
 * parsed for the values the result must echo.
 */
static void lm_stress(struct __test_metadata *_metadata, struct lm_ctx *lm,
		      const char *params)
{
	static const char * const zero[] = {
		"errors", "ro_fail", "rw_fail", "alloc_fail",
		"vmalloc_writable_when_ro", "alias_writable_when_ro",
		"not_writable_when_rw",
	};
	static const char * const echo[] = { "rounds", "threads", "pages" };
	unsigned long long rounds, val, want, ro, rw, probe;
	struct lm_out *o;
	unsigned int i;
	int ret;

	TH_LOG("stress: %s", params);
	ret = lm_write("stress", params);
	ASSERT_EQ(0, ret) TH_LOG("stress '%s': %s", params, strerror(-ret));
	o = lm_get(_metadata, lm, "stress");

	for (i = 0; i < ARRAY_SIZE(echo); i++) {
		val = lm_num(_metadata, o, "%s", echo[i]);
		if (lm_kv_num(params, echo[i], &want))
			continue;
		/* pages=0 asks the module to pick; it says what it used. */
		if (want || strcmp(echo[i], "pages"))
			EXPECT_EQ(want, val) TH_LOG("stress: %s", echo[i]);
	}
	EXPECT_LT(0, lm_num(_metadata, o, "pages"));
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	/* The alias is only expected read-only with rodata=full. */
	EXPECT_EQ(lm->st.rodata_full, lm_bool(_metadata, o, "alias_checked"));

	rounds = lm_num(_metadata, o, "rounds");
	for (val = 1; val <= rounds; val++) {
		ro = lm_num(_metadata, o, "round.%llu.ro_ns", val);
		rw = lm_num(_metadata, o, "round.%llu.rw_ns", val);
		probe = lm_num(_metadata, o, "round.%llu.probe_ns", val);
		TH_LOG("round %llu: ro %llu us, rw %llu us, probe %llu us", val,
		       ro / 1000, rw / 1000, probe / 1000);
	}
}

/*
 * Two tests rather than two variants: the harness fixes a test's time
 * budget, and the large run needs far more than the small one may take.
 */
TEST_F_TIMEOUT(linmap_last, stress_small, 600)
{
	lm_stress(_metadata, &self->lm, "pages=2048 rounds=2 threads=2");
}

TEST_F_TIMEOUT(linmap_last, stress_default, LM_STRESS_TIMEOUT)
{
	const char *env = getenv("LINMAP_STRESS");
	char params[256];
	size_t len;

	if (!env || !*env)
		SKIP(return, "set LINMAP_STRESS to run the large stress");
	/* The command is sent as one line; drop what a shell may have added. */
	len = snprintf(params, sizeof(params), "%s", env);
	ASSERT_GT(sizeof(params), len) TH_LOG("LINMAP_STRESS too long");
	while (len && isspace((unsigned char)params[len - 1]))
		params[--len] = '\0';
	lm_stress(_metadata, &self->lm, params);
}

#define LM_MAX_CPUS	256

/* Set claims[] for each CPU of a list such as "0-2,5". */
static void lm_cpu_list(char *list, bool *claims)
{
	char *end, *tok;
	int i;

	for (tok = strtok(list, ","); tok && isdigit((unsigned char)*tok);
	     tok = strtok(NULL, ",")) {
		long lo = strtol(tok, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtol(end + 1, NULL, 10);
		for (i = lo; i <= hi && i < LM_MAX_CPUS; i++)
			claims[i] = true;
	}
}

/*
 * Which CPUs claim BBML2_NOABORT through the test-only boot parameters:
 * bbml2_test= (all, none, boot, secondary or a CPU list), or
 * bbml2_test_bbm=LEVEL[@LIST] (the CPUs listed, or all, read BBM LEVEL;
 * level 3 claims it, and no emulated CPU has a MIDR the allowlist names).
 * Returns false when neither is given: then nothing says which CPUs
 * have it.
 */
static bool lm_bbml2_claims(bool *claims)
{
	char arg[128], *at;
	int i;

	if (lm_cmdline("bbml2_test", arg, sizeof(arg))) {
		for (i = 0; i < LM_MAX_CPUS; i++)
			claims[i] = !strcmp(arg, "all") ||
				    (!strcmp(arg, "boot") && i == 0) ||
				    (!strcmp(arg, "secondary") && i != 0);
		lm_cpu_list(arg, claims);
		return true;
	}
	if (!lm_cmdline("bbml2_test_bbm", arg, sizeof(arg)))
		return false;
	at = strchr(arg, '@');
	if (at)
		*at++ = '\0';
	if (atoi(arg) < 3)
		return true;
	if (!at) {
		for (i = 0; i < LM_MAX_CPUS; i++)
			claims[i] = true;
	} else {
		lm_cpu_list(at, claims);
	}
	return true;
}

/*
 * A CPU held back at boot (maxcpus=) that lacks BBML2_NOABORT must not come
 * online once the system relies on it; any CPU may when it does not.
 */
TEST_F_TIMEOUT(linmap_last, late_cpu_online, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	bool claims[LM_MAX_CPUS] = { false };
	int cpu, tried = 0;
	char path[64];

	if (!lm_bbml2_claims(claims))
		SKIP(return, "needs bbml2_test= or bbml2_test_bbm= to know which CPUs have BBML2_NOABORT");
	for (cpu = 1; cpu < LM_MAX_CPUS; cpu++) {
		char *online;
		bool want, ok;
		int fd;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		online = lm_read_path(path);
		if (!online)
			continue;
		if (online[0] != '0') {
			free(online);
			continue;
		}
		free(online);
		tried++;
		want = st->bbml2 != 1 || claims[cpu];
		fd = open(path, O_WRONLY);
		ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
		ok = write(fd, "1", 1) == 1;
		close(fd);
		TH_LOG("CPU%d: bbml2=%d, claims BBML2_NOABORT: %s, online: %s", cpu,
		       st->bbml2, claims[cpu] ? "yes" : "no", ok ? "yes" : "refused");
		EXPECT_EQ(want, ok);
	}
	if (!tried)
		SKIP(return, "no offline CPU: boot with maxcpus= below the CPU count");
}

/*
 * A KFENCE pool set up late comes from the page allocator and may lie in
 * blocks of the linear map; it must end up mapped with PTEs, its pages
 * protected one at a time from then on. Last of all: KFENCE keeps
 * sampling allocations for the rest of the boot.
 */
TEST_F_TIMEOUT(linmap_last, kfence_late_pool, LM_TIMEOUT)
{
	const char *param = "/sys/module/kfence/parameters/sample_interval";
	unsigned long long pages;
	struct lm_state now;
	struct lm_counts c;
	int fd, k;

	if (self->lm.st.kfence != LM_KFENCE_LATE || !self->lm.st.kfence_pool.none)
		SKIP(return, "needs KFENCE built in and not started at boot");
	/*
	 * 6.12's kfence_init_late() takes the pool's address before it
	 * allocates it, so when alloc_contig_pages() (COMPACTION, hence THP)
	 * finds the pool but not the metadata, it frees from address 0 and
	 * oopses in free_contig_range(). With 64K pages, whose 512M
	 * pageblocks the stress leaves few of, that happens.
	 */
	if (self->lm.st.page_size == 65536 &&
	    !access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "not tried: 6.12's kfence_init_late() oopses when alloc_contig_pages() finds its pool but not its metadata, as 64K pages with COMPACTION (THP) make likely");
	fd = open(param, O_WRONLY);
	if (fd < 0)
		SKIP(return, "cannot open %s: %s", param, strerror(errno));
	if (write(fd, "100", 3) != 3) {
		int err = errno;

		close(fd);
		/*
		 * With COMPACTION (THP) KFENCE takes its late pool from
		 * alloc_contig_pages(), which needs whole free or movable
		 * pageblocks: 512M with 64K pages, rarely left after the
		 * stress. The allocator's limit, not the linear map's.
		 */
		if (err == ENOMEM)
			SKIP(return, "KFENCE found no memory for its late pool (ENOMEM): alloc_contig_pages() needs a movable %lluK pageblock",
			     self->lm.st.page_size == 65536 ? 512ULL * 1024 :
			     self->lm.st.page_size == 16384 ? 32ULL * 1024 : 2048ULL);
		ASSERT_TRUE(false) TH_LOG("start KFENCE: %s", strerror(err));
	}
	close(fd);
	lm_parse_state(_metadata, &self->lm, &now);
	ASSERT_FALSE(now.kfence_pool.none) TH_LOG("no KFENCE pool after starting it");
	/*
	 * The late pool comes from alloc_contig_pages(), which tags each
	 * free block it gathers apart under KASAN_SW_TAGS: the pool's
	 * address must match all of them (patches/fixes/0002).
	 */
	if (now.kfence_pool_tag >= 0)
		EXPECT_EQ(0xff, now.kfence_pool_tag)
			TH_LOG("late KFENCE pool address tagged 0x%llx", now.kfence_pool_tag);
	pages = (now.kfence_pool.end - now.kfence_pool.start) / now.page_size;
	lm_get_counts(_metadata, &self->lm, &now, &c);
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (k == LM_PTE)
			continue;
		EXPECT_EQ(0, c.n[LM_KFENCE][k])
			TH_LOG("late KFENCE pool mapped with %s", lm_kind_name[k]);
	}
	EXPECT_EQ(pages, c.n[LM_KFENCE][LM_PTE]);
}

TEST_HARNESS_MAIN
