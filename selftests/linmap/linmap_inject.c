// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_inject.
 *
 * Failure injection: every page-table allocation of a split and of a
 * memory hot-add made to fail in turn, with no lost mapping and no leak.
 */

#include "linmap_lib.h"

/*
 * The N-th page-table allocation of a call made to fail, for each N, in
 * one case of the module's "inject": the call must fail, the mapping stay
 * valid with its permissions, the auditor stay clean and no page-table
 * page leak. The module runs all its cases on each "run"; each variant
 * checks its own.
 */
FIXTURE(linmap_inject) {
	struct lm_ctx lm;
};

FIXTURE_VARIANT(linmap_inject) {
	const char *name;		/* the module's name of the case */
	/*
	 * A vmalloc area needs one split call per alias run: a call that
	 * fails keeps the splits of the runs before, so the last call may
	 * need fewer allocations than were made to fail.
	 */
	bool keeps_splits;
	/* What a split needs follows from the leaf it splits. */
	bool splits_leaf;
};

/* split_kernel_leaf_mapping() of a page inside the largest leaf. */
FIXTURE_VARIANT_ADD(linmap_inject, split_block) {
	.name = "split_block",
	.splits_leaf = true,
};

/* set_direct_map_invalid_noflush() of a page inside a block. */
FIXTURE_VARIANT_ADD(linmap_inject, direct_map_page) {
	.name = "direct_map_page",
};

/* set_memory_ro() of a vmalloc area whose aliases lie in blocks. */
FIXTURE_VARIANT_ADD(linmap_inject, vmalloc_ro) {
	.name = "vmalloc_ro",
	.keeps_splits = true,
};

/* add_memory() of the upper half of LINMAP_HOTPLUG. */
FIXTURE_VARIANT_ADD(linmap_inject, hot_add) {
	.name = "hot_add",
};

/*
 * vfree() of a VM_FLUSH_RESET_PERMS area with read-only aliases in a
 * block, every allocation failing: no page may leave read-only.
 */
FIXTURE_VARIANT_ADD(linmap_inject, reset_perms) {
	.name = "reset_perms",
};

LM_FIXTURE(linmap_inject);

/* Allocations a single-page split needs around a leaf of this kind. */
static unsigned long long lm_split_allocs(const char *leaf)
{
	if (!strcmp(leaf, "pud"))
		return 2;
	if (!strcmp(leaf, "cont_pmd") || !strcmp(leaf, "pmd"))
		return 1;
	return 0;
}

TEST_F_TIMEOUT(linmap_inject, inject_alloc_failures, 1800)
{
	static const char * const zero[] = {
		"wrong_ret", "lost", "leaked", "audit", "atomic",
	};
	static const char * const cases[] = LM_INJ_CASE_NAMES;
	unsigned long long start, size, allocs, failed, tries;
	char cmd[128], key[64], skip[128], leaf[32];
	const char *name = variant->name;
	struct lm_out *o;
	int i, n, ret;

	/* Only this variant's case: the module runs it alone. */
	for (i = 0; i < LM_INJ_NR_CASES && strcmp(cases[i], name); i++)
		;
	ASSERT_LT(i, LM_INJ_NR_CASES) TH_LOG("no inject case '%s'", name);
	n = snprintf(cmd, sizeof(cmd), "case=%d", i);
	if (lm_env_range("LINMAP_HOTPLUG", &start, &size))
		/* The upper half: a part of a block, so tables are needed. */
		snprintf(cmd + n, sizeof(cmd) - n, " hotplug=%#llx,%#llx",
			 start + size / 2, size / 2);
	ret = lm_write("inject", cmd);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "the kernel lacks the test-only linmap_inject hook");
	ASSERT_EQ(0, ret) TH_LOG("inject '%s': %s", cmd, strerror(-ret));
	o = lm_get(_metadata, &self->lm, "inject");
	snprintf(key, sizeof(key), "%s.skip", name);
	lm_str(_metadata, o, key, skip, sizeof(skip));
	if (*skip)
		SKIP(return, "%s", skip);

	/* Every case may sleep: no allocation of its may be atomic. */
	snprintf(key, sizeof(key), "%s.", name);
	lm_expect_zero(_metadata, o, key, zero, ARRAY_SIZE(zero));
	EXPECT_EQ(1, lm_num(_metadata, o, "%s.ok", name))
		TH_LOG("the call without a failure did not succeed");
	allocs = lm_num(_metadata, o, "%s.allocations", name);
	failed = lm_num(_metadata, o, "%s.failed", name);
	tries = lm_num(_metadata, o, "%s.tries", name);
	snprintf(key, sizeof(key), "%s.leaf", name);
	lm_str(_metadata, o, key, leaf, sizeof(leaf));
	/* Every allocation failed once, or a sample of a long run. */
	if (variant->keeps_splits) {
		EXPECT_LE(allocs, failed);
	} else if (allocs <= 8) {
		EXPECT_EQ(allocs, failed);
	} else {
		EXPECT_LE(8, failed);
	}
	if (variant->splits_leaf && self->lm.st.bbml2 == 1) {
		EXPECT_LE(lm_split_allocs(leaf), allocs)
			TH_LOG("a split around a %s leaf allocates", leaf);
	}
	TH_LOG("%s: %llu allocations, %llu made to fail, %llu calls%s%s",
	       name, allocs, failed, tries, *leaf ? ", leaf " : "", leaf);
}

TEST_HARNESS_MAIN
