// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_directmap.
 *
 * DirectMap and collapse: exact DirectMap counts, the split trace
 * events, split blocks folded back, hysteresis, memfd_secret() pages
 * giving their tables back, no hint noted with interrupts off, no
 * sequence moved by a pass with nothing to fold.
 *
 * Longer than 400 lines: one program per area; each test is short.
 */

#include <time.h>

#include "linmap_lib.h"

/* ---- healing: DirectMap, trace events, collapse ---- */

/* The DirectMap lines a granule has, smallest leaf first. */
static const char * const *lm_directmap_names(unsigned long long ps, int *n)
{
	static const char * const k4[] = {
		"DirectMap4k", "DirectMap64k", "DirectMap2M", "DirectMap32M",
		"DirectMap1G",
	};
	static const char * const k16[] = {
		"DirectMap16k", "DirectMap2M", "DirectMap32M", "DirectMap1G",
	};
	static const char * const k64[] = {
		"DirectMap64k", "DirectMap2M", "DirectMap512M", "DirectMap16G",
	};

	*n = ps == 4096 ? 5 : 4;
	return ps == 4096 ? k4 : ps == 16384 ? k16 : k64;
}

/*
 * /proc/meminfo has one DirectMap line per size of leaf of the granule,
 * in order, adding up to what the linear map maps; the auditor checks
 * each against a locked walk of the page tables, byte for byte. Over a
 * map of PTEs alone that walk can outlast the default 30 s under TCG.
 */
TEST_F_TIMEOUT(linmap, directmap, 300)
{
	const struct lm_state *st = &self->lm.st;
	char line[256], name[64], mode[32] = "";
	unsigned long long kb, sum = 0;
	const char * const *want;
	struct lm_counts c;
	struct lm_out *o;
	int n = 0, nwant;
	FILE *f;

	o = lm_audit(_metadata, &self->lm, "directmap");
	ASSERT_NE(NULL, o);
	lm_str(_metadata, o, "directmap", mode, sizeof(mode));
	want = lm_directmap_names(st->page_size, &nwant);
	f = fopen("/proc/meminfo", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DirectMap", 9))
			continue;
		ASSERT_EQ(2, sscanf(line, "%63[^:]: %llu kB", name, &kb))
			TH_LOG("meminfo: bad line '%s'", line);
		ASSERT_GT(nwant, n) TH_LOG("meminfo: extra line '%s'", line);
		EXPECT_STREQ(want[n], name);
		TH_LOG("%s: %llu kB", name, kb);
		sum += kb * 1024;
		n++;
	}
	fclose(f);
	if (!n && !strcmp(mode, "no_counts"))
		SKIP(return, "this kernel keeps no DirectMap counts");
	EXPECT_EQ(nwant, n) TH_LOG("meminfo: %d DirectMap lines", n);
	EXPECT_STREQ("exact", mode)
		TH_LOG("the auditor's locked walk disagrees with DirectMap");
	/* Splits move bytes between sizes; only hotplug changes the sum. */
	lm_get_counts(_metadata, &self->lm, st, &c);
	EXPECT_EQ(c.mapped_bytes, sum)
		TH_LOG("DirectMap adds up to %llu bytes, the walk maps %llu",
		       sum, c.mapped_bytes);
}

/* The tracefs directory of the linear_map events, or NULL. */
static const char *lm_trace_dir(void)
{
	static const char * const dirs[] = {
		"/sys/kernel/tracing", LM_DEBUGFS "/tracing",
	};
	char path[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/events/linear_map/enable",
			 dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

/*
 * An area of one page whose alias is in a block or contiguous range, its
 * leaf in @lb; false, with the reason in @why, if there is none.
 */
static bool lm_block_page(struct __test_metadata *_metadata, struct lm_ctx *lm,
			  struct lm_area *a, struct lm_leaf_query *lb,
			  char *why, size_t size)
{
	lm_area_cmd(_metadata, lm, "alloc_block");
	lm_area_read(_metadata, lm, a);
	lm_get_leaf(_metadata, &lm->st, a->alias0, lb);
	if (lb->kind != LM_PTE)
		return true;
	snprintf(why, size, "alloc_block found no block or contiguous range");
	return false;
}

/*
 * The split of a known block shows in the trace: an event for the leaf
 * that held the page, from the module's set_memory_ro() call.
 */
TEST_F_TIMEOUT(linmap, trace_split, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	unsigned long long addr, old, new;
	const char *dir = lm_trace_dir();
	char path[256], why[128], *trace, *p;
	struct lm_leaf_query lb;
	int found = 0, events = 0;
	struct lm_area a;

	if (!dir)
		SKIP(return, "no linear_map trace events (kernel without CONFIG_FTRACE or the trace patch)");
	if (!st->rodata_full || !st->linear_blocks)
		SKIP(return, "no block to split: the linear map is mapped with PTEs");
	if (!lm_block_page(_metadata, &self->lm, &a, &lb, why, sizeof(why)))
		SKIP(return, "%s", why);

	snprintf(path, sizeof(path), "%s/trace", dir);
	ASSERT_EQ(0, lm_write_path(path, ""));
	snprintf(path, sizeof(path), "%s/events/linear_map/enable", dir);
	ASSERT_EQ(0, lm_write_path(path, "1"));
	lm_area_cmd(_metadata, &self->lm, "ro");
	ASSERT_EQ(0, lm_write_path(path, "0"));
	lm_area_cmd(_metadata, &self->lm, "rw");

	snprintf(path, sizeof(path), "%s/trace", dir);
	trace = lm_read_path(path);
	ASSERT_NE(NULL, trace);
	for (p = strstr(trace, "linear_map_split: "); p;
	     p = strstr(p + 1, "linear_map_split: ")) {
		events++;
		if (sscanf(p, "linear_map_split: addr=0x%llx old_size=0x%llx new_size=0x%llx",
			   &addr, &old, &new) != 3)
			continue;
		EXPECT_LT(new, old) TH_LOG("a split to a larger leaf");
		/* The first event splits the leaf found before, from the module. */
		if (!found && addr <= a.alias0 && a.alias0 < addr + old) {
			found = 1;
			TH_LOG("%.*s", (int)strcspn(p, "\n"), p);
			EXPECT_EQ(lb.entry_size *
				  lm_group_entries(lb.kind, st->page_size), old);
			EXPECT_NE(NULL, strstr(p, "linmap_test"))
				TH_LOG("caller not the module: %.*s",
				       (int)strcspn(p, "\n"), p);
		}
	}
	TH_LOG("%d split events; the first of 0x%llx's %s: %s", events,
	       a.alias0, lm_kind_name[lb.kind], found ? "found" : "missing");
	EXPECT_TRUE(found) TH_LOG("%s", trace);
	free(trace);
}

static unsigned long long lm_collapse_stat(const char *key)
{
	char *text = lm_read_path(LM_HEAL_DIR "/collapse");
	unsigned long long v = ~0ULL;

	if (text)
		lm_kv_num(text, key, &v);
	free(text);
	return v;
}

/* The collapse worker's state on one line, for the reader of a failure. */
static void lm_log_collapse(struct __test_metadata *_metadata, const char *when)
{
	char *text = lm_read_path(LM_HEAL_DIR "/collapse"), *c;

	for (c = text; c && *c; c++)
		if (*c == '\n')
			*c = ' ';
	TH_LOG("collapse %s: %s", when, text ? text : "(unreadable)");
	free(text);
}

/*
 * What a collapse test needs: collapse on, rodata=full (only then does
 * set_memory_ro() split aliases), and an area of one page whose alias is
 * in a block or contiguous range, its leaf in @lb. False, with the reason
 * in @why, when the test cannot run.
 */
static bool lm_collapse_setup(struct __test_metadata *_metadata,
			      struct lm_ctx *lm, struct lm_area *a,
			      struct lm_leaf_query *lb, char *why, size_t size)
{
	if (!lm_collapse_on(why, size))
		return false;
	if (!lm->st.rodata_full) {
		snprintf(why, size, "set_memory_ro() changes linear aliases only with rodata=full");
		return false;
	}
	return lm_block_page(_metadata, lm, a, lb, why, size);
}

/*
 * A page made read-only splits its block; made writable again, a full
 * collapse pass folds it back: a leaf at least as large as before, and no
 * table more. The leaf of the page is judged on every try; the counts of
 * the whole map are judged on the best of three tries, as another CPU's
 * split between two reads can explain one try, not all of them.
 */
TEST_F_TIMEOUT(linmap, collapse_heals, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	struct lm_counts c[3];
	struct lm_leaf_query lb, ls, lh;
	unsigned int try, good = 0;
	struct lm_area a;
	char why[256];

	if (!lm_collapse_setup(_metadata, &self->lm, &a, &lb, why, sizeof(why)))
		SKIP(return, "%s", why);
	for (try = 0; try < 3 && !good; try++) {
		ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse", "1"));
		lm_get_counts(_metadata, &self->lm, st, &c[0]);
		lm_area_cmd(_metadata, &self->lm, "ro");
		lm_get_leaf(_metadata, st, a.alias0, &ls);
		ASSERT_EQ(LM_PTE, ls.kind);
		ASSERT_EQ(0, ls.writable);
		lm_get_counts(_metadata, &self->lm, st, &c[1]);
		lm_area_cmd(_metadata, &self->lm, "rw");
		ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse", "1"));
		lm_get_leaf(_metadata, st, a.alias0, &lh);
		lm_get_counts(_metadata, &self->lm, st, &c[2]);
		TH_LOG("try %u: 0x%llx: %s -> %s -> %s; table pages %llu -> %llu -> %llu; PTE bytes %llu -> %llu -> %llu",
		       try + 1, a.alias0, lm_kind_name[lb.kind],
		       lm_kind_str(ls.kind), lm_kind_str(lh.kind),
		       c[0].table_pages, c[1].table_pages, c[2].table_pages,
		       lm_stable_bytes(&c[0], LM_PTE),
		       lm_stable_bytes(&c[1], LM_PTE),
		       lm_stable_bytes(&c[2], LM_PTE));
		/* As large as before, or larger: its neighbours may fold with it. */
		ASSERT_LE(0, lh.kind);
		ASSERT_GE(lb.kind, lh.kind) TH_LOG("the block did not come back");
		ASSERT_EQ(1, lh.writable);
		/* The split made page-sized leaves, the pass took them away. */
		good = lm_stable_bytes(&c[0], LM_PTE) < lm_stable_bytes(&c[1], LM_PTE) &&
		       lm_stable_bytes(&c[0], LM_PTE) >= lm_stable_bytes(&c[2], LM_PTE) &&
		       (lb.kind > LM_PMD || c[0].table_pages < c[1].table_pages) &&
		       c[0].table_pages >= c[2].table_pages &&
		       lm_stable_mapped(&c[0]) == lm_stable_mapped(&c[2]);
		if (!good) {
			lm_log_counts(_metadata, st, "before", &c[0]);
			lm_log_counts(_metadata, st, "split", &c[1]);
			lm_log_counts(_metadata, st, "folded", &c[2]);
		}
	}
	EXPECT_TRUE(good) TH_LOG("in none of %u tries did the counts split and heal", try);
}

/* Poll the leaf of @va until it is not a PTE, up to @ms; its kind. */
static int lm_wait_block(struct __test_metadata *_metadata,
			 const struct lm_state *st, unsigned long long va,
			 unsigned int ms)
{
	struct lm_leaf_query q;
	unsigned int t;

	for (t = 0; ; t += 20) {
		lm_get_leaf(_metadata, st, va, &q);
		if (q.kind != LM_PTE || t >= ms)
			return q.kind;
		usleep(20 * 1000);
	}
}

/* The collapse settle time now, to put back after a test changes it. */
static void lm_settle_save(char *old, size_t size)
{
	char *text = lm_read_path(LM_HEAL_DIR "/collapse_settle_ms");

	if (text)
		snprintf(old, size, "%.*s", (int)strcspn(text, "\n"), text);
	free(text);
}

/*
 * Hysteresis: a page flipped read-only and back faster than the settle
 * time is folded once, after it stops; flipped a little slower than that,
 * it is not folded after every flip, as each fold soon undone doubles the
 * wait before the next.
 */
TEST_F_TIMEOUT(linmap, collapse_hysteresis, 300)
{
	const struct lm_state *st = &self->lm.st;
	const unsigned int settle = 200, slow = 6;
	char why[256], old[32] = "1000";
	unsigned long long f0, f1;
	struct lm_leaf_query lb, q;
	unsigned int i, folded = 0;
	struct lm_area a;
	int kind;

	if (!lm_collapse_setup(_metadata, &self->lm, &a, &lb, why, sizeof(why)))
		SKIP(return, "%s", why);
	lm_settle_save(old, sizeof(old));
	snprintf(why, sizeof(why), "%u", settle);
	ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", why));

	/* Fast: 50 flips well inside the settle time of each other. */
	f0 = lm_collapse_stat("passes");
	for (i = 0; i < 50; i++) {
		lm_area_cmd(_metadata, &self->lm, "ro");
		lm_area_cmd(_metadata, &self->lm, "rw");
	}
	lm_get_leaf(_metadata, st, a.alias0, &q);
	EXPECT_EQ(LM_PTE, q.kind) TH_LOG("folded while the flips went on");
	/* Up to the longest backoff: earlier tests' passes may have set one. */
	kind = lm_wait_block(_metadata, st, a.alias0, 70 * settle);
	f1 = lm_collapse_stat("passes");
	TH_LOG("fast flips: %s once they stopped, %llu passes",
	       lm_kind_str(kind), f1 - f0);
	EXPECT_LE(0, kind);
	EXPECT_GE(lb.kind, kind) TH_LOG("not folded once the flips stopped");

	/* Slow: one flip every 1.5 settle times; count the folds between. */
	for (i = 0; i < slow; i++) {
		lm_get_leaf(_metadata, st, a.alias0, &q);
		folded += i && q.kind != LM_PTE;
		lm_area_cmd(_metadata, &self->lm, "ro");
		lm_area_cmd(_metadata, &self->lm, "rw");
		usleep(settle * 1500);
	}
	TH_LOG("slow flips: folded %u times in %u gaps of 1.5 settle times",
	       folded, slow - 1);
	EXPECT_GE(1, folded) TH_LOG("no hysteresis: split and folded each time");
	kind = lm_wait_block(_metadata, st, a.alias0, 200 * settle);
	EXPECT_LE(0, kind);
	EXPECT_GE(lb.kind, kind) TH_LOG("not folded after the slow flips");
	lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", old);
}

static unsigned long long lm_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * A hint waiting out a long backoff must not hold up a new one elsewhere:
 * the worker, queued for the far one, is brought forward. The test area's
 * alias is flipped until its backoff is the longest (64 settle times),
 * then restored once more with a settle time of 1 s, so the worker waits
 * about a minute for it; a page of another block taken out of the linear
 * map and given back (the module's hold_unmapped) must bring a pass
 * within a few settle times. That block folds then too, unless its own
 * range was changed soon after an earlier pass: a block freed by an
 * earlier test keeps its range's backoff, which the kernel cannot tell
 * from a user flipping it, so its fold time is reported, not judged.
 */
TEST_F_TIMEOUT(linmap, collapse_backoff_elsewhere, 300)
{
	const struct lm_state *st = &self->lm.st;
	char why[256], old[32] = "1000";
	unsigned long long t0, t, pass_ms = 0, fold_ms = 0, p0, blk;
	struct lm_leaf_query lb, q;
	struct lm_area a;
	struct lm_out *o;
	unsigned int i;

	if (!lm_collapse_setup(_metadata, &self->lm, &a, &lb, why, sizeof(why)))
		SKIP(return, "%s", why);
	lm_settle_save(old, sizeof(old));
	/* Each fold soon undone doubles the wait: seven, at 10 ms each. */
	ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", "10"));
	for (i = 0; i < 7; i++) {
		lm_area_cmd(_metadata, &self->lm, "ro");
		lm_area_cmd(_metadata, &self->lm, "rw");
		lm_wait_block(_metadata, st, a.alias0, 2000);
	}
	ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", "1000"));
	lm_area_cmd(_metadata, &self->lm, "ro");
	lm_area_cmd(_metadata, &self->lm, "rw");
	/* The worker has run once and waits now for the far hint. */
	usleep(1500 * 1000);
	o = lm_run(_metadata, &self->lm, "hold_unmapped", "hold", why, sizeof(why));
	if (!o) {
		lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", old);
		SKIP(return, "%s", why);
	}
	lm_log_collapse(_metadata, "before the give-back");
	p0 = lm_collapse_stat("passes");
	t0 = lm_ms_now();
	o = lm_run(_metadata, &self->lm, "hold_unmapped", "give", why, sizeof(why));
	if (!o)
		lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", old);
	ASSERT_NE(NULL, o) TH_LOG("%s", why);
	EXPECT_EQ(0, (int)lm_num(_metadata, o, "ret"));
	blk = lm_num(_metadata, o, "addr");
	/*
	 * The next pass, for up to 5 settle times, and the block's fold: at
	 * that pass, or (its own backoff) not before the test is over.
	 */
	for (t = 0; t < 5000 && !fold_ms && (!pass_ms || t < pass_ms + 500);
	     t = lm_ms_now() - t0) {
		if (!pass_ms && lm_collapse_stat("passes") > p0)
			pass_ms = t ? t : 1;
		lm_get_leaf(_metadata, st, blk, &q);
		if (!fold_ms && q.kind >= 0 && q.kind < LM_CONT_PTE)
			fold_ms = t ? t : 1;
		usleep(20 * 1000);
	}
	/* Only a pass folds: one that ended between the two reads above. */
	if (fold_ms && !pass_ms && lm_collapse_stat("passes") > p0)
		pass_ms = fold_ms;
	lm_log_collapse(_metadata, "after the wait");
	lm_write_path(LM_HEAL_DIR "/collapse_settle_ms", old);
	if (pass_ms)
		snprintf(why, sizeof(why), "a pass %llu ms later", pass_ms);
	else
		snprintf(why, sizeof(why), "no pass within %llu ms", t);
	if (fold_ms)
		TH_LOG("the area's hint waits 64 s; block 0x%llx given back: %s, folded in %llu ms",
		       blk, why, fold_ms);
	else
		TH_LOG("the area's hint waits 64 s; block 0x%llx given back: %s, not folded within %llu ms%s",
		       blk, why, t, pass_ms ? " (its range's own backoff)" : "");
	EXPECT_NE(0, pass_ms) TH_LOG("the new hint waited for the backed-off one");
	EXPECT_GE(3000, pass_ms) TH_LOG("the pass came later than 3 settle times");
}

#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif

/*
 * memfd_secret() pages leave the linear map one by one, splitting the
 * blocks they sit in; once the file is gone, a collapse pass gives every
 * table back.
 */
TEST_F_TIMEOUT(linmap, secretmem_heals, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	const unsigned long pages = 64;
	struct lm_counts c0, c1, c2;
	size_t size = pages * st->page_size;
	unsigned long i;
	char why[256], *p;
	int fd;

	if (!lm_collapse_on(why, sizeof(why)))
		SKIP(return, "%s", why);
	fd = syscall(__NR_memfd_secret, 0);
	if (fd < 0 && errno == ENOSYS)
		SKIP(return, "no memfd_secret() (kernel without CONFIG_SECRETMEM)");
	ASSERT_LE(0, fd) TH_LOG("memfd_secret: %s", strerror(errno));
	ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse", "1"));
	lm_get_counts(_metadata, &self->lm, st, &c0);
	ASSERT_EQ(0, ftruncate(fd, size));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	for (i = 0; i < pages; i++)
		p[i * st->page_size] = 1;
	lm_get_counts(_metadata, &self->lm, st, &c1);
	munmap(p, size);
	close(fd);
	ASSERT_EQ(0, lm_write_path(LM_HEAL_DIR "/collapse", "1"));
	lm_get_counts(_metadata, &self->lm, st, &c2);
	TH_LOG("table pages: %llu before, %llu with %lu secret pages, %llu after a pass",
	       c0.table_pages, c1.table_pages, pages, c2.table_pages);
	TH_LOG("page-sized leaves: %llu, %llu and %llu bytes",
	       lm_stable_bytes(&c0, LM_PTE), lm_stable_bytes(&c1, LM_PTE),
	       lm_stable_bytes(&c2, LM_PTE));
	/* Each secret page is a leaf of its own while it is out. */
	EXPECT_LT(lm_stable_bytes(&c0, LM_PTE), lm_stable_bytes(&c1, LM_PTE))
		TH_LOG("secret pages split nothing");
	EXPECT_GE(lm_stable_bytes(&c0, LM_PTE), lm_stable_bytes(&c2, LM_PTE));
	EXPECT_GE(c0.table_pages, c2.table_pages);
	EXPECT_EQ(lm_stable_mapped(&c0), lm_stable_mapped(&c2));
}

/*
 * A module command that tries up to a few times and counts the tries in
 * which the thing it watches for happened (@hit_key): another CPU can
 * explain one, but not every try. The command's output, or NULL with the
 * test skipped.
 */
static struct lm_out *lm_retried(struct __test_metadata *_metadata,
				 struct lm_ctx *lm, const char *file,
				 const char *hit_key, const char *what)
{
	char skip[160];
	struct lm_out *o;

	o = lm_run(_metadata, lm, file, "run", skip, sizeof(skip));
	if (!o)
		SKIP(return NULL, "%s", skip);
	EXPECT_EQ(0, lm_num(_metadata, o, "ret"));
	TH_LOG("%s: %llu tries, %s in %llu", file, lm_num(_metadata, o, "tries"),
	       what, lm_num(_metadata, o, "%s", hit_key));
	EXPECT_GT(lm_num(_metadata, o, "tries"), lm_num(_metadata, o, "%s", hit_key))
		TH_LOG("every try: %s", what);
	return o;
}

/*
 * A page restored with interrupts off, as hibernation's copy restores the
 * pages it saves, notes no hint for collapse and queues no pass: the
 * module retries while another CPU's restore could explain a note.
 */
TEST_F_TIMEOUT(linmap, collapse_quiet_irqs_off, LM_TIMEOUT)
{
	lm_retried(_metadata, &self->lm, "collapse_quiet", "noted",
		   "a restore with interrupts off noted a hint");
}

/*
 * A full pass with nothing left to fold moves no sequence: lock-free
 * changes during a pass then keep their own way. The module retries
 * while a split elsewhere could explain a move.
 */
TEST_F_TIMEOUT(linmap, collapse_idle_pass, LM_TIMEOUT)
{
	struct lm_out *o;

	o = lm_retried(_metadata, &self->lm, "collapse_idle", "moved",
		       "a pass with nothing to fold moved the resize sequence");
	if (o)
		TH_LOG("the last try moved it by %llu", lm_num(_metadata, o, "last_delta"));
}

/*
 * set_direct_map_invalid_noflush() of a page in a block with interrupts
 * off (as from hibernation's copy): the split would allocate, which may
 * sleep. The kernel refuses with -EBUSY, warns once, and leaves the page
 * valid, writable and its block whole.
 */
TEST_F_TIMEOUT(linmap, direct_map_irqs_off, LM_TIMEOUT)
{
	struct lm_out *o;
	char skip[160], before[16], after[16];

	o = lm_run(_metadata, &self->lm, "direct_map_irqs_off", "run", skip,
		   sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_str(_metadata, o, "kind_before", before, sizeof(before));
	lm_str(_metadata, o, "kind_after", after, sizeof(after));
	TH_LOG("a page of a %s block: ret %lld, then %s", before,
	       (long long)(int)lm_num(_metadata, o, "ret"), after);
	EXPECT_EQ(-EBUSY, (int)lm_num(_metadata, o, "ret"))
		TH_LOG("a split that allocates, with interrupts off");
	EXPECT_STREQ(before, after);
	EXPECT_EQ(1, lm_num(_metadata, o, "valid"));
	EXPECT_EQ(1, lm_num(_metadata, o, "writable"));
}

/*
 * A read-only page of a VM_FLUSH_RESET_PERMS area (a module's, a BPF
 * program's) in a PMD block: the block becomes a table of contiguous PTEs,
 * and only the group holding the page loses its contiguous bit.
 */
TEST_F_TIMEOUT(linmap, ro_alias_leaves, LM_TIMEOUT)
{
	unsigned long long pte, cont, group;
	struct lm_out *o;
	char skip[160];

	o = lm_run(_metadata, &self->lm, "ro_alias_leaves", "run", skip,
		   sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	ASSERT_EQ(0, (int)lm_num(_metadata, o, "ret"));
	pte = lm_num(_metadata, o, "pte");
	cont = lm_num(_metadata, o, "cont_pte");
	group = lm_num(_metadata, o, "cont_ptes");
	TH_LOG("one read-only page in a block: %llu plain PTEs, %llu contiguous",
	       pte, cont);
	EXPECT_EQ(0, lm_num(_metadata, o, "unmapped"));
	EXPECT_EQ(group, pte) TH_LOG("more than the page's group made plain");
	EXPECT_LT(0, cont);
}

/* PageTables in bytes, with every CPU's pending counts folded in. */
static long long pagetables_bytes(void)
{
	if (lm_write_path("/proc/sys/vm/stat_refresh", "1"))
		return -1;
	return lm_meminfo("PageTables");
}

/*
 * The tables a split installs count in PageTables, as upstream's do: the
 * PageTables delta over one split of a PMD block equals the table pages a
 * walk finds added, and each run-time table over the page is typed as a
 * page table. Page tables other processes free meanwhile (an exiting
 * test's, freed after an RCU grace period) move PageTables too: up to
 * SPLIT_TABLES_TRIES splits, each of a fresh block, and one must match.
 */
#define SPLIT_TABLES_TRIES	5

TEST_F_TIMEOUT(linmap, split_tables, LM_TIMEOUT)
{
	long long before, after, tables = 0, want = 0, deltas[SPLIT_TABLES_TRIES];
	char skip[160], kind[32], seen[256] = "";
	struct lm_out *o = NULL;
	int i, n = 0;

	/* A first read so that stdio's buffers exist before the count. */
	pagetables_bytes();
	for (i = 0; i < SPLIT_TABLES_TRIES; i++) {
		before = pagetables_bytes();
		if (before < 0)
			SKIP(return, "no /proc/sys/vm/stat_refresh to fold PageTables");
		o = lm_run(_metadata, &self->lm, "split_tables", "run", skip,
			   sizeof(skip));
		if (!o)
			SKIP(return, "%s", skip);
		after = pagetables_bytes();
		ASSERT_EQ(0, (int)lm_num(_metadata, o, "ret"));
		tables = lm_num(_metadata, o, "tables_after") -
			 lm_num(_metadata, o, "tables_before");
		want = tables * sysconf(_SC_PAGESIZE);
		deltas[n++] = after - before;
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
			 "%s%+lld kB", i ? ", " : "", (after - before) / 1024);
		if (after - before == want)
			break;
	}
	lm_str(_metadata, o, "kind_before", kind, sizeof(kind));
	TH_LOG("a split of a %s block: %lld table pages added, PageTables %s (%lld kB expected); %llu of %llu run-time tables over the page typed",
	       kind, tables, seen, want / 1024, lm_num(_metadata, o, "typed"),
	       lm_num(_metadata, o, "over"));
	EXPECT_LT(0, tables);
	EXPECT_EQ(want, deltas[n - 1]);
	EXPECT_LT(0, lm_num(_metadata, o, "over"));
	EXPECT_EQ(lm_num(_metadata, o, "over"), lm_num(_metadata, o, "typed"));
}

TEST_HARNESS_MAIN
