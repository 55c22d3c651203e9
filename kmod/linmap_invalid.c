// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "invalid_block": set_memory_valid(0) over exactly one PMD
 * block of memory this module owns. The block must stay a leaf, now
 * invalid, that every walker still sees as a leaf (the auditor,
 * kernel_page_present(), and the generic walker of kernel tables that
 * ptdump and its W^X scan use, which asks pmd_leaf()), and come back
 * valid. The first page is filled with values that look like valid PTEs,
 * so that a walker that takes the invalid block for a table reads them as
 * such.
 *
 *   echo run > invalid_block; cat invalid_block
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagewalk.h>
#include <linux/slab.h>

#include "linmap.h"

struct invalid_block_result {
	int ret;			/* 0, or the first error */
	const char *skip;		/* why it could not run */
	int kind_before, kind_invalid, kind_after;
	u64 val_invalid;
	int present_before, present_invalid, present_last_invalid;
	int present_after;
	unsigned long audit_violations, audit_invalid_leaves;
	/* The generic walker over the block: leaves seen, -1 if not run. */
	int generic_leaves, generic_ptes;
	char first[128];
};

/* As ptdump's pmd_entry: a leaf is what pmd_leaf() says is one. */
static int invalid_block_pmd_entry(pmd_t *pmdp, unsigned long addr,
				   unsigned long next, struct mm_walk *walk)
{
	struct invalid_block_result *r = walk->private;

	if (pmd_leaf(READ_ONCE(*pmdp))) {
		r->generic_leaves++;
		walk->action = ACTION_CONTINUE;
	}
	return 0;
}

static int invalid_block_pte_entry(pte_t *ptep, unsigned long addr,
				   unsigned long next, struct mm_walk *walk)
{
	((struct invalid_block_result *)walk->private)->generic_ptes++;
	return 0;
}

static const struct mm_walk_ops invalid_block_walk_ops = {
	.pmd_entry = invalid_block_pmd_entry,
	.pte_entry = invalid_block_pte_entry,
};

static void invalid_block_generic_walk(struct invalid_block_result *r, unsigned long addr)
{
	r->generic_leaves = -1;
	if (!lm_sym.walk_kernel_page_table_range)
		return;
	r->generic_leaves = 0;
	mmap_read_lock(lm_sym.init_mm);
	lm_sym.walk_kernel_page_table_range(addr, addr + PMD_SIZE,
					     &invalid_block_walk_ops, NULL, r);
	mmap_read_unlock(lm_sym.init_mm);
}

static int invalid_block_run(void *v)
{
	struct invalid_block_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	unsigned long addr, n = 1UL << order;
	struct lm_audit *a;
	struct page *page;
	u64 val;

	r->kind_before = -1;
	r->kind_invalid = -1;
	r->kind_after = -1;
	if (!lm_sym.set_memory_valid || !lm_sym.kernel_page_present) {
		r->skip = "the kernel has no set_memory_valid() or kernel_page_present()";
		return 0;
	}
	page = lm_alloc_block(order, &r->kind_before, &r->skip);
	if (!page)
		return 0;
	addr = (unsigned long)page_address(page);
	memset((void *)addr, 0xff, PAGE_SIZE);
	r->present_before = lm_sym.kernel_page_present(page);
	r->ret = lm_sym.set_memory_valid(addr, n, 0);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first), "set_memory_valid(0) returned %d",
			  r->ret);
		goto out;
	}
	r->kind_invalid = lm_lookup(addr, &r->val_invalid);
	r->present_invalid = lm_sym.kernel_page_present(page);
	r->present_last_invalid = lm_sym.kernel_page_present(page + n - 1);
	invalid_block_generic_walk(r, addr);
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (a && !lm_audit_run(a)) {
		r->audit_violations = a->violations;
		r->audit_invalid_leaves = a->invalid_leaves;
		if (a->shown)
			strscpy(r->first, a->msg[0], sizeof(r->first));
	}
	if (a)
		lm_audit_free(a);
	kfree(a);
	r->ret = lm_sym.set_memory_valid(addr, n, 1);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first), "set_memory_valid(1) returned %d",
			  r->ret);
		/* Never hand invalid memory back to the allocator. */
		return 0;
	}
	r->kind_after = lm_lookup(addr, &val);
	r->present_after = lm_sym.kernel_page_present(page);
out:
	__free_pages(page, order);
	return 0;
}

static void invalid_block_show(struct seq_file *m, void *v)
{
	struct invalid_block_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\n", r->ret);
	seq_printf(m, "kind_before=%s\nkind_invalid=%s\nkind_after=%s\n",
		   lm_kind_str(r->kind_before), lm_kind_str(r->kind_invalid),
		   lm_kind_str(r->kind_after));
	seq_printf(m, "valid_bit_invalid=%d\n",
		   !!(r->val_invalid & PTE_VALID));
	seq_printf(m, "present_before=%d\npresent_invalid=%d\n",
		   r->present_before, r->present_invalid);
	seq_printf(m, "present_last_invalid=%d\npresent_after=%d\n",
		   r->present_last_invalid, r->present_after);
	seq_printf(m, "audit.violations=%lu\naudit.invalid_leaves=%lu\n",
		   r->audit_violations, r->audit_invalid_leaves);
	seq_printf(m, "generic_walk.leaves=%d\ngeneric_walk.ptes=%d\n",
		   r->generic_leaves, r->generic_ptes);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
}

static struct lm_cmd invalid_block_cmd = {
	.size = sizeof(struct invalid_block_result),
	.run = invalid_block_run,
	.show = invalid_block_show,
};

LM_COMMAND_FEATURE(invalid_block, "invalid_block");

/*
 * linmap_test "cont_edge": set_memory_valid(0) of the last page of a
 * contiguous PTE range, inside a PMD block of this module's that an
 * earlier change of its first page split into a table of contiguous
 * ranges. The range ends on a leaf boundary but its page is inside the
 * range: the range must be split first (the page a PTE of its own, the
 * range's first page no longer contiguous), the auditor must stay clean,
 * and the page come back valid. A change that took the boundary at the
 * end for "nothing to split" would leave one invalid entry inside a
 * contiguous range.
 *
 *   echo run > cont_edge; cat cont_edge
 */
struct cont_edge_result {
	int ret;
	const char *skip;
	int kind_block, kind_before, kind_invalid, kind_first, kind_after;
	unsigned long audit_violations;
	char first[128];
};

static int cont_edge_run(void *v)
{
	struct cont_edge_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	unsigned long addr, group, last;
	struct page *page;
	long audit;
	u64 val;

	r->kind_before = -1;
	r->kind_invalid = -1;
	r->kind_first = -1;
	r->kind_after = -1;
	if (!lm_sym.set_memory_valid) {
		r->skip = "the kernel has no set_memory_valid()";
		return 0;
	}
	page = lm_alloc_block(order, &r->kind_block, &r->skip);
	if (!page)
		return 0;
	addr = (unsigned long)page_address(page);
	r->ret = lm_sym.set_memory_valid(addr, 1, 0);
	if (!r->ret)
		r->ret = lm_sym.set_memory_valid(addr, 1, 1);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first),
			  "set_memory_valid() of the first page returned %d", r->ret);
		goto out;
	}
	/* The second range of the table, untouched by that change. */
	group = addr + CONT_PTE_SIZE;
	last = group + CONT_PTE_SIZE - PAGE_SIZE;
	r->kind_before = lm_lookup(last, &val);
	if (r->kind_before != LM_CONT_PTE) {
		r->skip = "the split left no contiguous PTE range to aim at";
		goto out;
	}
	r->ret = lm_sym.set_memory_valid(last, 1, 0);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first),
			  "set_memory_valid(0) returned %d", r->ret);
		goto out;
	}
	r->kind_invalid = lm_lookup(last, &val);
	r->kind_first = lm_lookup(group, &val);
	audit = lm_audit_once(r->first, sizeof(r->first));
	r->audit_violations = audit > 0 ? audit : 0;
	r->ret = lm_sym.set_memory_valid(last, 1, 1);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first),
			  "set_memory_valid(1) returned %d", r->ret);
		/* Never hand invalid memory back to the allocator. */
		return 0;
	}
	r->kind_after = lm_lookup(last, &val);
out:
	__free_pages(page, order);
	return 0;
}

static void cont_edge_show(struct seq_file *m, void *v)
{
	struct cont_edge_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\n", r->ret);
	seq_printf(m, "kind_block=%s\nkind_before=%s\nkind_invalid=%s\n",
		   lm_kind_str(r->kind_block), lm_kind_str(r->kind_before),
		   lm_kind_str(r->kind_invalid));
	seq_printf(m, "kind_first=%s\nkind_after=%s\n",
		   lm_kind_str(r->kind_first), lm_kind_str(r->kind_after));
	seq_printf(m, "audit.violations=%lu\n", r->audit_violations);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
}

static struct lm_cmd cont_edge_cmd = {
	.size = sizeof(struct cont_edge_result),
	.run = cont_edge_run,
	.show = cont_edge_show,
};

LM_COMMAND_FEATURE(cont_edge, "cont_edge");
