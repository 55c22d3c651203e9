// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_ro.
 *
 * Read-only enforcement: set_memory_ro() of one page or a contiguous
 * range splits no more than it must and takes write access from the vmalloc
 * mapping and (rodata=full) its linear alias, page by page; the last page
 * of a contiguous range, an invalid block; a guard page, a percpu chunk.
 */

#include "linmap_lib.h"

/*
 * Making one page read-only must split at most the leaves that covered its
 * alias: each kind may lose at most one entry, or one contiguous group, and
 * gain no more than the old leaf (group) mapped; the page itself becomes a
 * PTE, and one new table is needed per level crossed.
 */
static void lm_expect_split(struct __test_metadata *_metadata,
			    const struct lm_state *st, int old_kind,
			    const struct lm_counts *before,
			    const struct lm_counts *after)
{
	unsigned long long ps = st->page_size, b, a, limit, old_group;
	long long tables, min_tables, max_tables;
	int k;

	/* Everything that changes kind lies inside the old leaf (group). */
	old_group = before->size[old_kind] * lm_group_entries(old_kind, ps);
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (!st->has[k])
			continue;
		b = lm_stable_bytes(before, k);
		a = lm_stable_bytes(after, k);
		limit = before->size[k] * lm_group_entries(k, ps);
		if (b > a) {
			EXPECT_LE(b - a, limit)
				TH_LOG("%s lost more than one group", lm_kind_name[k]);
		} else {
			EXPECT_LE(a - b, old_group)
				TH_LOG("%s grew beyond the %s that was split", lm_kind_name[k],
				       lm_kind_name[old_kind]);
		}
	}
	/* Splitting never merges PTEs, and the alias is a PTE now. */
	EXPECT_LE(lm_stable_bytes(before, LM_PTE) + ps, lm_stable_bytes(after, LM_PTE));
	EXPECT_EQ(lm_stable_mapped(before), lm_stable_mapped(after));

	/* A PUD needs a PMD and a PTE table, a PMD a PTE table, CONT none. */
	max_tables = old_kind == LM_PUD ? 2 : old_kind == LM_CONT_PTE ? 0 : 1;
	min_tables = old_kind == LM_CONT_PTE ? 0 : 1;
	tables = (long long)(after->table_pages - before->table_pages);
	EXPECT_LE(min_tables, tables) TH_LOG("split of a %s", lm_kind_name[old_kind]);
	EXPECT_GE(max_tables, tables) TH_LOG("split of a %s", lm_kind_name[old_kind]);
}

/*
 * set_memory_ro() of a one-page area made by @alloc ("alloc_block", or
 * "alloc 1" where the map has no blocks; NULL: the caller made it): the
 * alias must become a PTE and only the leaves over it split.
 */
static void lm_ro_one_page(struct __test_metadata *_metadata,
			   struct lm_ctx *lm, const char *alloc)
{
	const struct lm_state *st = &lm->st;
	struct lm_counts before, after;
	struct lm_leaf_query lb, la, lr;
	struct lm_area a;

	bool blocks = st->rodata_full && st->linear_blocks;

	if (alloc)
		lm_area_cmd(_metadata, lm, blocks ? alloc : "alloc 1");
	lm_area_read(_metadata, lm, &a);
	ASSERT_EQ(1, a.pages);
	lm_get_counts(_metadata, lm, st, &before);
	lm_get_leaf(_metadata, st, a.alias0, &lb);
	if (blocks)
		EXPECT_NE(LM_PTE, lb.kind) TH_LOG("%s gave a PTE-mapped alias",
						  alloc ?: "alloc_cont");
	ASSERT_EQ(1, lb.valid) TH_LOG("alias 0x%llx of a live page is invalid", a.alias0);
	ASSERT_LE(0, lb.kind) TH_LOG("alias 0x%llx of a live page is unmapped", a.alias0);
	EXPECT_EQ(1, lb.writable);
	EXPECT_EQ(before.size[lb.kind], lb.entry_size);

	lm_area_cmd(_metadata, lm, "ro");
	lm_area_read(_metadata, lm, &a);
	EXPECT_EQ(0, a.last_ret);
	lm_get_counts(_metadata, lm, st, &after);
	lm_get_leaf(_metadata, st, a.alias0, &la);
	TH_LOG("alias0 0x%llx: %s writable=%u -> %s writable=%u", a.alias0,
	       lm_kind_name[lb.kind], lb.writable,
	       la.kind < 0 ? "none" : lm_kind_name[la.kind], la.writable);
	EXPECT_EQ(1, la.valid);

	if (!st->rodata_full) {
		/* Only rodata=full makes set_memory_ro() touch the alias. */
		EXPECT_EQ(lb.kind, la.kind);
		EXPECT_EQ(1, la.writable);
		lm_expect_unchanged(_metadata, st, &before, &after);
	} else if (lb.kind == LM_PTE) {
		/* Nothing to split: only the permission may change. */
		EXPECT_EQ(LM_PTE, la.kind);
		EXPECT_EQ(0, la.writable);
		lm_expect_unchanged(_metadata, st, &before, &after);
	} else {
		EXPECT_EQ(LM_PTE, la.kind);
		EXPECT_EQ(0, la.writable);
		EXPECT_EQ(st->page_size, la.entry_size);
		lm_expect_split(_metadata, st, lb.kind, &before, &after);
	}
	if (_metadata->exit_code == KSFT_FAIL) {
		lm_log_counts(_metadata, st, "before", &before);
		lm_log_counts(_metadata, st, "after", &after);
	}

	lm_area_cmd(_metadata, lm, "rw");
	lm_get_leaf(_metadata, st, a.alias0, &lr);
	EXPECT_EQ(1, lr.writable) TH_LOG("alias still read-only after rw");
	lm_area_cmd(_metadata, lm, "free");
}

/*
 * Where the linear map keeps blocks under rodata=full, a page whose alias
 * is in one, so that there is a split to watch. Its walks of a map of
 * PTEs alone (the unpatched kernel's, after kexec) can take more than
 * the harness's default 30 s under TCG with lockdep.
 */
TEST_F_TIMEOUT(linmap, ro_single_page_split, 300)
{
	lm_ro_one_page(_metadata, &self->lm, "alloc_block");
}

/*
 * The same inside a contiguous PTE range: the range lies in one PTE table,
 * where pageattr's one-walk path must see the group and split it first.
 */
TEST_F_TIMEOUT(linmap, ro_cont_pte_page_split, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	int ret;

	if (!st->rodata_full || !st->linear_blocks) {
		lm_ro_one_page(_metadata, &self->lm, "alloc 1");
		return;
	}
	ret = lm_write("area", "alloc_cont");
	if (ret == -ENOENT) {
		/* Split a block: its other pages stay in contiguous ranges. */
		lm_area_cmd(_metadata, &self->lm, "alloc_block");
		lm_area_cmd(_metadata, &self->lm, "ro");
		lm_area_cmd(_metadata, &self->lm, "rw");
		lm_area_cmd(_metadata, &self->lm, "free");
		ret = lm_write("area", "alloc_cont");
	}
	if (ret == -ENOENT)
		SKIP(return, "no free page whose alias is in a contiguous PTE range");
	ASSERT_EQ(0, ret) TH_LOG("area 'alloc_cont': %s", strerror(-ret));
	self->lm.area_used = true;
	lm_ro_one_page(_metadata, &self->lm, NULL);
}

/*
 * set_memory_valid(0) of the last page of a contiguous PTE range: its end
 * is a leaf boundary, its start is not. The range must split, the auditor
 * stay clean, and the page come back valid.
 */
TEST_F_TIMEOUT(linmap, cont_range_last_page, LM_TIMEOUT)
{
	static const char * const zero[] = { "ret", "audit.violations" };
	char skip[160], kind[16];
	struct lm_out *o;

	o = lm_run(_metadata, &self->lm, "cont_edge", "run", skip, sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	lm_str(_metadata, o, "kind_invalid", kind, sizeof(kind));
	EXPECT_STREQ("pte", kind) TH_LOG("the page was changed inside its contiguous range");
	lm_str(_metadata, o, "kind_first", kind, sizeof(kind));
	EXPECT_STREQ("pte", kind) TH_LOG("the range's first page is still contiguous");
	lm_str(_metadata, o, "kind_after", kind, sizeof(kind));
	EXPECT_STREQ("pte", kind);
}

/*
 * set_memory_valid(0) over one whole PMD block: the block stays a leaf,
 * invalid, which the auditor, kernel_page_present() and the generic walker
 * of kernel tables (ptdump's, which asks pmd_leaf()) must still read as a
 * leaf (not as a table at its output address), and it comes back valid.
 * The auditor also wants it present-invalid. kpti=0 and kpti=1 differ
 * here: PTE_PRESENT_INVALID is the nG bit, which KPTI sets anyway.
 */
TEST_F_TIMEOUT(linmap, invalid_block, LM_TIMEOUT)
{
	static const char * const zero[] = {
		"ret", "valid_bit_invalid", "audit.violations",
	};
	char skip[160];
	struct lm_out *o;

	o = lm_run(_metadata, &self->lm, "invalid_block", "run", skip,
		   sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	EXPECT_EQ(1, lm_num(_metadata, o, "present_before"));
	EXPECT_EQ(0, lm_num(_metadata, o, "present_invalid"))
		TH_LOG("kernel_page_present() says an invalid block's first page is present");
	EXPECT_EQ(0, lm_num(_metadata, o, "present_last_invalid"))
		TH_LOG("kernel_page_present() says an invalid block's last page is present");
	EXPECT_LT(0, lm_num(_metadata, o, "audit.invalid_leaves"))
		TH_LOG("the auditor saw no invalid leaf");
	EXPECT_EQ(1, lm_num(_metadata, o, "present_after"));
	if ((long long)lm_num(_metadata, o, "generic_walk.leaves") < 0)
		SKIP(return, "no walk_kernel_page_table_range() in this kernel: ptdump's walker not tried");
	EXPECT_EQ(1, lm_num(_metadata, o, "generic_walk.leaves"))
		TH_LOG("ptdump's walker does not see the invalid block as a leaf");
	EXPECT_EQ(0, lm_num(_metadata, o, "generic_walk.ptes"));
}

/*
 * Under rodata=full the aliases of pages [off, off + cnt) must be read-only
 * and, where the kernel gets it right, only those. Unpatched 6.12 changes
 * the alias of every page of the area whatever the range (bbml2=unknown
 * identifies such a kernel): that is logged, not asserted.
 */
static void lm_check_alias_map(struct __test_metadata *_metadata,
			       const struct lm_state *st,
			       const struct lm_area *a, unsigned int off,
			       unsigned long long cnt, const char *cmd)
{
	unsigned int i, outside_ro = 0;

	ASSERT_EQ(a->pages, strlen(a->alias_map))
		TH_LOG("alias_map missing or short");
	for (i = 0; i < a->pages; i++) {
		bool inside = i >= off && i < off + cnt;

		if (inside) {
			EXPECT_EQ('0', a->alias_map[i])
				TH_LOG("alias of page %u writable after %s", i, cmd);
		} else if (a->alias_map[i] == '0') {
			outside_ro++;
		}
	}
	if (st->bbml2 >= 0) {
		EXPECT_EQ(0, outside_ro)
			TH_LOG("%u aliases outside the range read-only after %s",
			       outside_ro, cmd);
	} else if (outside_ro) {
		TH_LOG("%u aliases outside the range also read-only (6.12 behaviour)",
		       outside_ro);
	}
}

/* set_memory_ro() and back on a vmalloc area, a part of it or all of it. */
FIXTURE(linmap_ro) {
	struct lm_ctx lm;
};

FIXTURE_VARIANT(linmap_ro) {
	unsigned int pages;
	unsigned int off;
	unsigned int cnt;		/* 0: the whole area */
};

FIXTURE_VARIANT_ADD(linmap_ro, one_page) {
	.pages = 1,
};

FIXTURE_VARIANT_ADD(linmap_ro, pages_64) {
	.pages = 64,
};

FIXTURE_VARIANT_ADD(linmap_ro, pages_4_to_11_of_16) {
	.pages = 16,
	.off = 4,
	.cnt = 8,
};

LM_FIXTURE(linmap_ro);

TEST_F_TIMEOUT(linmap_ro, ro_enforced, LM_TIMEOUT)
{
	const struct lm_state *st = &self->lm.st;
	unsigned int pages = variant->pages, cnt = variant->cnt;
	unsigned long long ro = cnt ? cnt : pages;
	char cmd[64], range[32] = "";
	struct lm_area a;

	if (cnt)
		snprintf(range, sizeof(range), " %u %u", variant->off, cnt);

	snprintf(cmd, sizeof(cmd), "alloc %u", pages);
	lm_area_cmd(_metadata, &self->lm, cmd);
	lm_area_read(_metadata, &self->lm, &a);
	ASSERT_EQ(pages, a.pages);
	EXPECT_EQ(pages, a.vmalloc_writable) TH_LOG("fresh area");
	EXPECT_EQ(pages, a.alias_writable) TH_LOG("fresh area");

	snprintf(cmd, sizeof(cmd), "ro%s", range);
	lm_area_cmd(_metadata, &self->lm, cmd);
	lm_area_read(_metadata, &self->lm, &a);
	EXPECT_EQ(0, a.last_ret) TH_LOG("%s", cmd);
	EXPECT_EQ(pages - ro, a.vmalloc_writable) TH_LOG("after %s", cmd);
	/* Without rodata=full the alias stays writable by design. */
	if (st->rodata_full) {
		lm_check_alias_map(_metadata, st, &a, variant->off, ro, cmd);
	} else {
		TH_LOG("rodata_full=0, %llu of %u aliases writable after %s",
		       a.alias_writable, pages, cmd);
	}

	snprintf(cmd, sizeof(cmd), "rw%s", range);
	lm_area_cmd(_metadata, &self->lm, cmd);
	lm_area_read(_metadata, &self->lm, &a);
	EXPECT_EQ(0, a.last_ret) TH_LOG("%s", cmd);
	EXPECT_EQ(pages, a.vmalloc_writable) TH_LOG("after %s", cmd);
	EXPECT_EQ(pages, a.alias_writable) TH_LOG("linear alias after %s", cmd);

	lm_area_cmd(_metadata, &self->lm, "free");
}

/*
 * set_memory_ro()/rw() of a vmalloc area's guard page and of a page of a
 * vmalloc'd percpu chunk (an area without a pages array): no alias to
 * change, and no read of the area's pages. The guard case reads past the
 * array where it is wrong, which a KASAN kernel reports; the percpu case
 * oopses any kernel.
 */
static void lm_area_edge(struct __test_metadata *_metadata, struct lm_ctx *lm,
			 const char *file)
{
	char skip[160];
	struct lm_out *o;

	o = lm_run(_metadata, lm, file, "run", skip, sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	EXPECT_EQ(0, lm_num(_metadata, o, "ret"));
	TH_LOG("%s: page 0x%llx after %llu tries", file, lm_num(_metadata, o, "addr"),
	       lm_num(_metadata, o, "tries"));
}

TEST_F_TIMEOUT(linmap, ro_guard_page, LM_TIMEOUT)
{
	lm_area_edge(_metadata, &self->lm, "area_guard");
}

TEST_F_TIMEOUT(linmap, ro_percpu_chunk, LM_TIMEOUT)
{
	lm_area_edge(_metadata, &self->lm, "area_percpu");
}

TEST_HARNESS_MAIN
