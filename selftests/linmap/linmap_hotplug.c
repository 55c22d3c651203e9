// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_hotplug.
 *
 * Memory hotplug: hot-added memory mapped under the boot policy and
 * unmapped exactly on removal; device memory mapped and unmapped side by
 * side.
 */

#include "linmap_lib.h"

/*
 * Device memory mapped as two ranges side by side (A, then B at the end:
 * 2M, or 4M and 64M with 16K and 64K pages), a full collapse pass, and B
 * unmapped alone: no leaf may have covered both, and A must still be
 * mapped and readable.
 */
TEST_F_TIMEOUT(linmap, devmem_side_by_side, LM_TIMEOUT)
{
	static const char * const zero[] = {
		"ret", "spans", "a_unmapped", "b_mapped_after",
		"audit.violations",
	};
	unsigned long long start, size;
	char skip[160], ram[16], a[16], b[16], passed[16];
	struct lm_out *o;
	char cmd[96];

	if (!lm_env_range("LINMAP_DEVMEM", &start, &size))
		SKIP(return, "set LINMAP_DEVMEM=START,SIZE to RAM left out by mem=");
	snprintf(cmd, sizeof(cmd), "range=%#llx,%#llx", start, size);
	o = lm_run(_metadata, &self->lm, "devmem", cmd, skip, sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	EXPECT_EQ(1, lm_num(_metadata, o, "a_readable"))
		TH_LOG("device range A is gone after B alone was removed");
	lm_str(_metadata, o, "kind_ram", ram, sizeof(ram));
	lm_str(_metadata, o, "kind_a", a, sizeof(a));
	lm_str(_metadata, o, "kind_b", b, sizeof(b));
	lm_str(_metadata, o, "kind_a_passed", passed, sizeof(passed));
	TH_LOG("device memory %#llx+%#llx: A ends in a %s, B in a %s, after a pass (ret %lld) A ends in a %s; boot RAM below in a %s (%#llx, A %#llx)",
	       start, size, a, b, (long long)lm_num(_metadata, o, "pass_ret"),
	       passed, ram, lm_num(_metadata, o, "val_ram"),
	       lm_num(_metadata, o, "val_a"));
}

/*
 * The module's hot-plug command @file over LINMAP_HOTPLUG ("range=START,SIZE"
 * then @extra), into *start and *size: its output, or NULL with the reason
 * in @skip where no range is given, the kernel lacks what the command needs
 * (@missing) or the module could not run it. Any other failed write fails
 * the test.
 */
static struct lm_out *hotplug_run(struct __test_metadata *_metadata,
				  struct lm_ctx *lm, const char *file,
				  const char *extra, const char *missing,
				  unsigned long long *start,
				  unsigned long long *size, char *skip,
				  size_t skip_size)
{
	struct lm_out *o;
	char cmd[96];
	int ret;

	if (!lm_env_range("LINMAP_HOTPLUG", start, size)) {
		snprintf(skip, skip_size, "set LINMAP_HOTPLUG=START,SIZE to a range of RAM left out by mem=");
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "range=%#llx,%#llx%s", *start, *size, extra);
	ret = lm_write(file, cmd);
	if (ret == -EOPNOTSUPP) {
		snprintf(skip, skip_size, "%s", missing);
		return NULL;
	}
	LM_ASSERT(_metadata, !ret, "%s '%s': %s", file, cmd, strerror(-ret));
	o = lm_get(_metadata, lm, file);
	return lm_skipped(_metadata, o, skip, skip_size) ? NULL : o;
}

/*
 * Hot-add LINMAP_HOTPLUG: its linear map must follow the boot policy
 * (blocks unless page mappings are forced), then hot-remove it: unmapped,
 * with its page-table pages freed.
 */
TEST_F_TIMEOUT(linmap, hotplug_policy, 600)
{
	static const char * const zero[] = {
		"add_ret", "remove_ret", "added.unmapped_pages", "audit_violations",
	};
	const struct lm_state *st = &self->lm.st;
	unsigned long long start, size, v, blocks, pages, want_blocks;
	struct lm_out *o;
	char skip[160];

	o = hotplug_run(_metadata, &self->lm, "hotplug", "",
			"the kernel has no memory hotplug", &start, &size, skip,
			sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	want_blocks = lm_bool(_metadata, o, "want_blocks");
	/* The same policy as boot memory. */
	EXPECT_EQ(st->linear_blocks, want_blocks);
	blocks = lm_num(_metadata, o, "added.cont_pmd") +
		 lm_num(_metadata, o, "added.pmd");
	if (st->has[LM_PUD])
		blocks += lm_num(_metadata, o, "added.pud");
	pages = lm_num(_metadata, o, "added.pte") +
		lm_num(_metadata, o, "added.cont_pte");
	if (want_blocks) {
		EXPECT_LT(0, blocks);
		EXPECT_EQ(0, pages);
	} else {
		EXPECT_EQ(0, blocks);
		EXPECT_EQ(size / st->page_size, lm_num(_metadata, o, "added.pte"));
	}
	/* The first memory block alone: exactly it is unmapped. */
	v = lm_num(_metadata, o, "block_size");
	if (v && v < size) {
		EXPECT_EQ(0, lm_num(_metadata, o, "partial_ret"));
		EXPECT_EQ(v / st->page_size,
			  lm_num(_metadata, o, "partial.removed_unmapped_pages"));
		EXPECT_EQ(0, lm_num(_metadata, o, "partial.rest_unmapped_pages"))
			TH_LOG("removing one memory block unmapped memory outside it");
	}
	v = lm_num(_metadata, o, "unmapped_pages_after");
	EXPECT_EQ(size / st->page_size, v) TH_LOG("range still mapped after removal");
	EXPECT_EQ(lm_num(_metadata, o, "tables_before"),
		  lm_num(_metadata, o, "tables_after"));
	TH_LOG("hot-added %#llx+%#llx: %llu block entries, %llu page entries, %llu table pages",
	       start, size, blocks, pages, lm_num(_metadata, o, "tables_added"));
}

/*
 * A split whose range ends where a memory block being hot-removed begins:
 * the split must read none of that block's tables, which the removal frees
 * meanwhile (a fault under debug_pagealloc, where a freed page is unmapped).
 */
TEST_F_TIMEOUT(linmap, hotplug_split_end, 600)
{
	static const char * const zero[] = {
		"add_ret", "split_ret", "remove_ret", "split_errors",
		"churn.add_ret", "churn.remove_ret", "churn.split_ret",
	};
	unsigned long long start, size;
	struct lm_out *o;
	char skip[160];

	o = hotplug_run(_metadata, &self->lm, "hotplug_split_end", " rounds=16",
			"the kernel has no memory hotplug or no split entry point",
			&start, &size, skip, sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	EXPECT_EQ(16, lm_num(_metadata, o, "churned"));
	TH_LOG("%llu splits at the end of %#llx+%#llx's first block while its second was removed and added back %llu times%s",
	       lm_num(_metadata, o, "splits"), start, size,
	       lm_num(_metadata, o, "churned"),
	       lm_num(_metadata, o, "slowed") ? ", each split held between a PMD entry and its table" : "");
}

TEST_HARNESS_MAIN
