// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_layout.
 *
 * The linear map as booted and as counted: the state the kernel claims,
 * block mappings where the policy wants them, counts that agree with
 * themselves and with the boot layout, leaf lookups, and the auditor on a
 * clean map and on made-up faults.
 */

#include "linmap_lib.h"

TEST_F_TIMEOUT(linmap, state_sane, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	unsigned long long ps = sysconf(_SC_PAGESIZE);
	char val[64];
	int i;

	EXPECT_EQ(ps, st->page_size);

	EXPECT_LT(st->linear.start, st->linear.end);
	EXPECT_LT(st->kimage.start, st->kimage.end);
	/* Kernel VAs live in the upper half of the address space. */
	EXPECT_NE(0, st->linear.start >> 63);
	EXPECT_EQ(0, st->linear.start % ps);
	EXPECT_EQ(0, st->linear.end % ps);
	EXPECT_EQ(0, st->kimage.start % ps);
	EXPECT_EQ(0, st->kimage.end % ps);
	EXPECT_TRUE(lm_within(&st->kimage, &st->linear))
		TH_LOG("kimage alias 0x%llx-0x%llx outside linear 0x%llx-0x%llx",
		       st->kimage.start, st->kimage.end, st->linear.start, st->linear.end);

	/* KFENCE only has a pool when it is built; early init always has one. */
	if (st->kfence == LM_KFENCE_NONE)
		EXPECT_TRUE(st->kfence_pool.none);
	if (st->kfence == LM_KFENCE_EARLY)
		EXPECT_FALSE(st->kfence_pool.none);
	if (!st->kfence_pool.none) {
		EXPECT_LT(st->kfence_pool.start, st->kfence_pool.end);
		EXPECT_EQ(0, st->kfence_pool.start % ps);
		EXPECT_EQ(0, st->kfence_pool.end % ps);
		EXPECT_TRUE(lm_within(&st->kfence_pool, &st->linear));
		EXPECT_FALSE(lm_overlap(&st->kfence_pool, &st->kimage));
		/*
		 * KFENCE reaches every pool page through this one address:
		 * under tag-based KASAN it must match all tags, or the pages
		 * tagged apart from the first fault (patches/fixes/0002).
		 */
		if (st->kfence_pool_tag >= 0)
			EXPECT_EQ(0xff, st->kfence_pool_tag)
				TH_LOG("KFENCE pool address tagged 0x%llx", st->kfence_pool_tag);
	}

	/* Levels are listed largest first and always end with plain PTEs. */
	for (i = 1; i < st->nr_levels; i++) {
		EXPECT_LT(st->level[i - 1], st->level[i])
			TH_LOG("levels not largest first: %s before %s",
			       lm_kind_name[st->level[i - 1]], lm_kind_name[st->level[i]]);
	}
	EXPECT_EQ(LM_PTE, st->level[st->nr_levels - 1]);
	EXPECT_TRUE(st->has[LM_PMD]);

	/* Optional keys; the group sizes used below are arm64 constants. */
	if (st->cont_ptes)
		EXPECT_EQ(lm_group_entries(LM_CONT_PTE, ps), st->cont_ptes);
	if (st->cont_pmds)
		EXPECT_EQ(lm_group_entries(LM_CONT_PMD, ps), st->cont_pmds);

	/* Each of these forces can_set_direct_map() in 6.12 and later. */
	if (st->rodata_full || st->debug_pagealloc || st->kfence == LM_KFENCE_LATE)
		EXPECT_EQ(1, st->can_set_direct_map);

	/*
	 * Claims must agree with the command line.  arm64 only decides
	 * rodata_full for these three values; others keep the default.
	 */
	if (lm_cmdline("rodata", val, sizeof(val)) &&
	    (!strcmp(val, "full") || !strcmp(val, "on") || !strcmp(val, "off"))) {
		EXPECT_EQ(!strcmp(val, "full"), st->rodata_full)
			TH_LOG("rodata=%s", val);
	}
	if (lm_cmdline("debug_pagealloc", val, sizeof(val))) {
		bool off = strchr("nN0", val[0]) || !strcmp(val, "off");

		/* "on" is not checked: the kernel may be built without it. */
		if (off)
			EXPECT_EQ(0, st->debug_pagealloc);
		if (!off && !st->debug_pagealloc)
			TH_LOG("debug_pagealloc=%s but not enabled: not built in?", val);
	}
	/* An early pool that failed leaves KFENCE's own, set up late. */
	if (st->kfence != LM_KFENCE_NONE &&
	    lm_cmdline("kfence.sample_interval", val, sizeof(val))) {
		EXPECT_EQ(strtoul(val, NULL, 0) &&
			  !lm_cmdline_flag("kfence_test_no_early_pool") ?
			  LM_KFENCE_EARLY : LM_KFENCE_LATE, st->kfence)
			TH_LOG("kfence.sample_interval=%s", val);
	}
}

/*
 * The tests take the block policy from the module's linear_blocks; check
 * it once against the facts it follows from: debug_pagealloc forces pages,
 * and so does a direct map that may change (rodata=full, a KFENCE pool
 * set up late: what can_set_direct_map() says) unless BBML2_NOABORT lets
 * live blocks be split, the kernel has that policy (block_policy) and
 * linear_map_ptes (a kernel that has it: the series) does not ask for
 * pages all the same.
 */
TEST_F_TIMEOUT(linmap, linear_blocks, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	bool may_change = st->rodata_full || st->kfence == LM_KFENCE_LATE;
	bool ptes = st->pte_layout >= 0 && lm_cmdline_flag("linear_map_ptes");
	/* 6.12 and the series before its block policy keep pages. */
	bool bbml2 = st->bbml2 == 1 && !ptes && st->block_policy;

	if (st->pte_layout >= 0)
		EXPECT_EQ(ptes, st->pte_layout)
			TH_LOG("the kernel read linear_map_ptes otherwise than /proc/cmdline");
	EXPECT_EQ(!st->debug_pagealloc && (bbml2 || !may_change), st->linear_blocks);
	EXPECT_EQ(!st->debug_pagealloc && (bbml2 || !st->can_set_direct_map),
		  st->linear_blocks);
}

#define LM_MAX_CPUS	64

/* Mark the CPUs of the list @list ("0-2,4") in @in; returns how many. */
static int cpulist_parse(const char *list, bool in[LM_MAX_CPUS])
{
	const char *p = list;
	long a, b, i;
	int n = 0;

	while (p && *p && *p != '\n') {
		a = b = strtol(p, (char **)&p, 10);
		if (*p == '-')
			b = strtol(p + 1, (char **)&p, 10);
		for (i = a; i <= b && i < LM_MAX_CPUS; i++, n++)
			in[i] = true;
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

/* How many CPUs were brought up at boot: the present ones, up to maxcpus=. */
static int boot_cpus(void)
{
	char *present = lm_read_path("/sys/devices/system/cpu/present");
	bool in[LM_MAX_CPUS] = { false };
	char val[32];
	int n = cpulist_parse(present, in);

	free(present);
	if (lm_cmdline("maxcpus", val, sizeof(val)) && strtol(val, NULL, 0) < n)
		n = strtol(val, NULL, 0);
	return n;
}

/* Does the CPU list @list ("0-2,4") hold CPUs 0 to @n - 1? */
static bool list_holds(const char *list, int n)
{
	bool in[LM_MAX_CPUS] = { false };
	int i;

	cpulist_parse(list, in);
	for (i = 0; i < n && i < LM_MAX_CPUS; i++)
		if (!in[i])
			return false;
	return n > 0;
}

/*
 * Must the kernel claim BBML2_NOABORT? 1 or 0 from the command line: the
 * kit's statement (linmap.claims=bbml2 or nobbml2), the test-only
 * bbml2_test= (which CPUs claim it) and bbml2_test_bbm= (the BBM level
 * they read: 3 is enough); a CPU model with implementer 0 (QEMU's "max")
 * is on no allowlist. -1 where the MIDR decides: @why says so.
 */
static int expected_bbml2(const struct lm_state *st, char *why, size_t size)
{
	char val[64], *at;

	if (lm_cmdline("linmap.claims", val, sizeof(val))) {
		if (strstr(val, "nobbml2"))
			return 0;
		if (strstr(val, "bbml2"))
			return 1;
	}
	if (lm_cmdline("bbml2_test", val, sizeof(val))) {
		if (!strcmp(val, "all"))
			return 1;
		if (!strcmp(val, "none") || !strcmp(val, "boot") ||
		    !strcmp(val, "secondary"))
			return 0;
		return list_holds(val, boot_cpus());
	}
	if (lm_cmdline("bbml2_test_bbm", val, sizeof(val))) {
		at = strchr(val, '@');
		if (at)
			*at++ = '\0';
		if (strtol(val, NULL, 0) >= 3 && (!at || list_holds(at, boot_cpus())))
			return 1;
	}
	if (!((st->midr >> 24) & 0xff))
		return 0;
	snprintf(why, size, "MIDR %#llx: the kernel's allowlist or the CPU's BBM level decides, and nothing on the command line states the claim (linmap.claims=)",
		 st->midr);
	return -1;
}

/*
 * What the kernel must claim, from the command line rather than from what
 * the kernel says of itself: a mode meant to claim BBML2_NOABORT that stops
 * claiming it must fail here, not turn the block tests into SKIPs. Then
 * the layout policy that follows, and collapse where linear_map_collapse=
 * states it.
 */
TEST_F_TIMEOUT(linmap, claims, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	bool ptes = lm_cmdline_flag("linear_map_ptes");
	bool blocks, on;
	char why[200], val[16];
	int bbml2;

	if (st->bbml2 < 0)
		SKIP(return, "the kernel has no BBML2_NOABORT capability");
	bbml2 = expected_bbml2(st, why, sizeof(why));
	if (bbml2 < 0)
		SKIP(return, "%s", why);
	EXPECT_EQ(bbml2, st->bbml2)
		TH_LOG("the command line says the kernel must %sclaim BBML2_NOABORT",
		       bbml2 ? "" : "not ");
	/*
	 * Blocks under rodata=full only with BBML2_NOABORT on every CPU, in a
	 * kernel with that policy.
	 */
	blocks = bbml2 && !st->debug_pagealloc && !ptes && st->block_policy;
	if (st->rodata_full)
		EXPECT_EQ(blocks, st->linear_blocks);
	if (st->collapse < 0 || !lm_cmdline("linear_map_collapse", val, sizeof(val)))
		return;
	on = lm_cmdline_flag("linear_map_collapse");
	EXPECT_EQ(on && blocks && st->can_set_direct_map, st->collapse)
		TH_LOG("linear_map_collapse=%s", val);
}

TEST_F_TIMEOUT(linmap, counts_consistent, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	unsigned long long ps = st->page_size, ptrs = ps / 8;
	unsigned long long sum_bytes = 0, sum_n_bytes = 0, kimage_bytes = 0;
	unsigned long long memtotal, pte_entries, min_tables;
	struct lm_counts c;
	int k, s;

	lm_get_counts(_metadata, &self->lm, st, &c);

	for (k = 0; k < LM_NR_KINDS; k++) {
		if (!st->has[k])
			continue;
		EXPECT_EQ(lm_entry_size(k, ps), c.size[k])
			TH_LOG("%s_size", lm_kind_name[k]);
		for (s = 0; s < LM_NR_SCOPES; s++) {
			EXPECT_EQ(c.n[s][k] * c.size[k], c.bytes[s][k])
				TH_LOG("%s.%s_bytes", lm_scope_name[s], lm_kind_name[k]);
		}
		/* rest is the complement, so the scopes must add up exactly. */
		EXPECT_EQ(c.n[LM_ALL][k],
			  c.n[LM_KIMAGE][k] + c.n[LM_KFENCE][k] + c.n[LM_REST][k])
			TH_LOG("scopes of %s do not add up", lm_kind_name[k]);
		EXPECT_EQ(c.bytes[LM_ALL][k], c.bytes[LM_KIMAGE][k] +
			  c.bytes[LM_KFENCE][k] + c.bytes[LM_REST][k])
			TH_LOG("scopes of %s_bytes do not add up", lm_kind_name[k]);
		/* The architecture only allows whole contiguous groups. */
		EXPECT_EQ(0, c.n[LM_ALL][k] % lm_group_entries(k, ps))
			TH_LOG("all.%s is not a whole number of groups", lm_kind_name[k]);
		sum_bytes += c.bytes[LM_ALL][k];
		sum_n_bytes += c.n[LM_ALL][k] * c.size[k];
		kimage_bytes += c.bytes[LM_KIMAGE][k];
		if (st->kfence_pool.none)
			EXPECT_EQ(0, c.n[LM_KFENCE][k]);
	}
	EXPECT_EQ(sum_bytes, c.mapped_bytes);
	EXPECT_EQ(sum_n_bytes, c.mapped_bytes);
	EXPECT_EQ(c.table_pages * ps, c.table_bytes);

	/* Plain and contiguous PTEs both live in PTE tables. */
	pte_entries = c.n[LM_ALL][LM_PTE] + c.n[LM_ALL][LM_CONT_PTE];
	min_tables = (pte_entries + ptrs - 1) / ptrs;
	EXPECT_GE(c.table_pages, min_tables)
		TH_LOG("%llu PTE-level entries need at least %llu tables", pte_entries,
		       min_tables);

	/*
	 * The leaves over the kernel image alias cover all of it, unless
	 * debug_pagealloc unmapped the freed init pages.
	 */
	if (!st->debug_pagealloc)
		EXPECT_GE(kimage_bytes, st->kimage.end - st->kimage.start);
	EXPECT_LE(c.mapped_bytes, st->linear.end - st->linear.start);

	/*
	 * All RAM the kernel manages is in the linear map.  With
	 * debug_pagealloc free pages are unmapped, so the walk may see less.
	 */
	memtotal = lm_meminfo("MemTotal");
	ASSERT_NE(0, memtotal) TH_LOG("no MemTotal in /proc/meminfo");
	if (!st->debug_pagealloc) {
		EXPECT_GE(c.mapped_bytes, memtotal);
	} else if (c.mapped_bytes < memtotal) {
		TH_LOG("debug_pagealloc: mapped %llu < MemTotal %llu", c.mapped_bytes,
		       memtotal);
	}
}

TEST_F_TIMEOUT(linmap, boot_layout, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	unsigned long long blocks = 0, kfence_bytes = 0;
	bool granular = !st->linear_blocks;
	struct lm_counts c;
	int k;

	lm_get_counts(_metadata, &self->lm, st, &c);
	/* "expect" is what the module's linear_blocks says. */
	TH_LOG("rodata_full=%llu debug_pagealloc=%llu kfence=%s bbml2=%s: expect %s",
	       st->rodata_full, st->debug_pagealloc, lm_kfence_name[st->kfence],
	       lm_bbml2_name[st->bbml2 + 1], granular ? "PTEs only" : "block mappings");

	for (k = 0; k < LM_NR_KINDS; k++) {
		if (!st->has[k] || k == LM_PTE)
			continue;
		/* 6.12 maps with NO_BLOCK_MAPPINGS | NO_CONT_MAPPINGS here. */
		if (granular) {
			EXPECT_EQ(0, c.n[LM_REST][k])
				TH_LOG("rest.%s must be 0 when page granular", lm_kind_name[k]);
		}
		blocks += c.n[LM_REST][k];
		/* The early pool is always mapped with PTEs, whatever the rest. */
		if (st->kfence == LM_KFENCE_EARLY) {
			EXPECT_EQ(0, c.n[LM_KFENCE][k])
				TH_LOG("kfence pool mapped with %s", lm_kind_name[k]);
		}
	}
	if (!granular) {
		EXPECT_LT(0, blocks)
			TH_LOG("no block or contiguous leaf outside kimage/kfence");
	}

	if (st->kfence == LM_KFENCE_EARLY) {
		for (k = 0; k < LM_NR_KINDS; k++)
			kfence_bytes += c.bytes[LM_KFENCE][k];
		EXPECT_LT(0, kfence_bytes);
		EXPECT_LE(kfence_bytes, st->kfence_pool.end - st->kfence_pool.start);
	}
}

/*
 * A KFENCE pool is mapped with plain PTEs, however it was set up: KFENCE
 * protects its pages one at a time from atomic context, where no block can
 * be split. The early pool (map_mem()), a late one (after boot), and
 * KFENCE's own memblock pool when the early one could not be had (set up
 * before SMP; the test-only kfence_test_no_early_pool makes that happen).
 */
TEST_F_TIMEOUT(linmap, kfence_pool_ptes, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	unsigned long long pages;
	struct lm_counts c;
	int k;

	if (st->kfence_pool.none)
		SKIP(return, "no KFENCE pool (KFENCE not built, or not started)");
	pages = (st->kfence_pool.end - st->kfence_pool.start) / st->page_size;
	lm_get_counts(_metadata, &self->lm, st, &c);
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (k == LM_PTE)
			continue;
		EXPECT_EQ(0, c.n[LM_KFENCE][k])
			TH_LOG("the KFENCE pool (%s) is mapped with %llu %s entries",
			       lm_kfence_name[st->kfence], c.n[LM_KFENCE][k],
			       lm_kind_name[k]);
	}
	EXPECT_EQ(pages, c.n[LM_KFENCE][LM_PTE]);
}

TEST_F_TIMEOUT(linmap, leaf_lookup, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	struct lm_counts c;
	struct lm_leaf_query l;
	int ret;

	lm_get_counts(_metadata, &self->lm, st, &c);
	lm_get_leaf(_metadata, st, st->kimage.start, &l);
	EXPECT_EQ(1, l.valid);
	ASSERT_LE(0, l.kind) TH_LOG("kernel image alias 0x%llx unmapped", st->kimage.start);
	EXPECT_EQ(c.size[l.kind], l.entry_size);

	/* A user address is not in the linear map: the lookup must refuse it. */
	memset(&l, 0, sizeof(l));
	l.addr = 0x1000;
	ret = lm_leaf(&l);
	EXPECT_EQ(-EINVAL, ret);
}

/* ---- reliability: auditor, shadow-model stress, injection, hotplug ---- */

TEST_F_TIMEOUT(linmap, audit_clean, LM_TIMEOUT)
{
	unsigned long long leaves, pages, tables, counted;
	struct lm_out *o = lm_audit(_metadata, &self->lm, "audit_clean");

	ASSERT_NE(NULL, o);
	leaves = lm_num(_metadata, o, "leaves");
	pages = lm_num(_metadata, o, "pages_checked");
	tables = lm_num(_metadata, o, "table_pages");
	counted = lm_num(_metadata, o, "table_pages_counted");
	EXPECT_LT(0, leaves);
	EXPECT_LT(0, tables);
	EXPECT_EQ(tables, counted);
	/* Every page of memory is mapped by some leaf. */
	EXPECT_LE(lm_meminfo("MemTotal") / self->lm.st.page_size, pages);
	TH_LOG("audit: %llu leaves, %llu pages, %llu table pages", leaves, pages,
	       tables);
}

/* The auditor must catch each fault in a set of made-up entries. */
TEST_F_TIMEOUT(linmap, audit_detects, LM_TIMEOUT)
{
	struct lm_out *o = lm_get(_metadata, &self->lm, "audit_selftest");
	unsigned long long cases, missed;

	cases = lm_num(_metadata, o, "cases");
	missed = lm_num(_metadata, o, "missed");
	EXPECT_LE(10, cases);
	EXPECT_EQ(0, missed);
	TH_LOG("auditor: %llu made-up cases, %llu missed", cases, missed);
}

/*
 * A violation is what a second walk finds again: a walk that met a change
 * made elsewhere (here one made up by the module, "audit" race=N) is
 * walked again, and one that every walk finds still counts.
 */
TEST_F_TIMEOUT(linmap, audit_walks_again, LM_TIMEOUT)
{
	unsigned long long v;
	int ret, walks;

	ret = lm_write("audit", "race=1");
	ASSERT_EQ(0, ret) TH_LOG("audit race=1: %s", strerror(-ret));
	lm_audit_walks(_metadata, &self->lm, "race=1", &v, &walks);
	EXPECT_EQ(0, v);
	EXPECT_EQ(2, walks);
	ASSERT_EQ(0, lm_write("audit", "race=3"));
	lm_audit_walks(_metadata, &self->lm, "race=3", &v, &walks);
	EXPECT_EQ(1, v);
	EXPECT_EQ(3, walks);
	lm_write("audit", "race=0");
	TH_LOG("one made-up violation: walked again; in every walk: %llu after %d walks",
	       v, walks);
}

TEST_HARNESS_MAIN
