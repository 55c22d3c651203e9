// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "inject": fail each page-table allocation of a split, of a
 * permission change and of a memory hot-add in turn, and every one of a
 * vfree() that resets permissions, through the test-only linmap_inject
 * hook (patches/testing/0002), and check that the mapping survives, the
 * call reports the failure and nothing leaks. Every case runs where it may
 * sleep, so no allocation may be atomic. Kernels without the hook refuse
 * the command with -EOPNOTSUPP.
 *
 *   echo "run [case=N] [hotplug=START,SIZE]" > inject; cat inject
 *
 * case=N (enum lm_inject_case) runs that case alone. Below: arming the
 * hook and checking after each call, then the cases (a split, a page made
 * invalid, a vmalloc area made read-only, a vfree() that resets
 * permissions, a memory hot-add), then the command that runs them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

#include "linmap.h"

struct inject_case {
	const char *name;
	const char *skip;		/* why the case did not run */
	const char *leaf;		/* kind of leaf around the target */
	int allocations;		/* needed by the operation */
	int tries, failed, ok;		/* calls made, made to fail, passed */
	int wrong_ret, lost, leaked, audit;
	int atomic;			/* allocations that could not sleep */
	char first[160];
};

struct inject_result {
	struct inject_case c[LM_INJ_NR_CASES];
	unsigned long hp[2];		/* hotplug=START,SIZE */
	unsigned long only;		/* case=N, or every case */
};

static const char *const inject_case_name[LM_INJ_NR_CASES] =
	LM_INJ_CASE_NAMES;

static __printf(2, 3) void inj_bad(struct inject_case *c, const char *fmt, ...)
{
	va_list args;

	if (c->first[0])
		return;
	va_start(args, fmt);
	vscnprintf(c->first, sizeof(c->first), fmt, args);
	va_end(args);
	pr_err("inject %s: %s\n", c->name, c->first);
}

static void __inj_arm(int nth, bool from_nth)
{
	struct lm_inject_hook *li = lm_sym.inject;

	li->nth = nth;
	li->from_nth = from_nth;
	li->seen = 0;
	li->atomic = 0;
	li->nr_pages = 0;
	WRITE_ONCE(li->task, current);
}

static void inj_arm(int nth)
{
	__inj_arm(nth, false);
}

static void inj_disarm(void)
{
	WRITE_ONCE(lm_sym.inject->task, NULL);
}

/*
 * After one call: the auditor must be clean, and every page-table page
 * handed out during the call must be in the page tables or freed. The
 * hook pinned each one, so a freed page has only that reference left and
 * cannot have been reused meanwhile; the pins are dropped here.
 */
static void inj_check(struct inject_case *c, int nth)
{
	struct lm_inject_hook *li = lm_sym.inject;
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	bool audited = a && !lm_audit_run(a);
	int i;

	/* The series never picks its flags by sensing the context. */
	if (li->atomic) {
		c->atomic += li->atomic;
		inj_bad(c, "N=%d: %d allocations could not sleep, in a context that may",
			nth, li->atomic);
	}
	li->atomic = 0;

	if (!audited) {
		c->audit++;
		inj_bad(c, "N=%d: cannot run the auditor", nth);
	} else if (a->violations) {
		c->audit++;
		inj_bad(c, "N=%d: auditor: %s", nth, a->msg[0]);
	}
	for (i = 0; i < li->nr_pages; i++) {
		phys_addr_t pa = li->pages[i];
		struct page *page = phys_to_page(pa);

		if (audited && page_ref_count(page) > 1 &&
		    !lm_audit_has_table(a, pa)) {
			c->leaked++;
			inj_bad(c, "N=%d: page-table page %pa neither used nor freed",
				nth, &pa);
		}
		put_page(page);
	}
	li->nr_pages = 0;
	if (a)
		lm_audit_free(a);
	kfree(a);
}

/*
 * Count one call made with the Nth allocation set to fail. Returns true if
 * that allocation was reached: the call must then have failed. Otherwise
 * the call needed fewer allocations, recorded as the case's count, and
 * must have succeeded.
 */
static bool inj_account(struct inject_case *c, int nth, int ret)
{
	c->tries++;
	if (lm_sym.inject->seen >= nth) {
		c->failed++;
		if (!ret) {
			c->wrong_ret++;
			inj_bad(c, "N=%d: allocation failed, call returned 0",
				nth);
		}
		return true;
	}
	c->allocations = lm_sym.inject->seen;
	if (ret) {
		c->wrong_ret++;
		inj_bad(c, "N=%d: no allocation failed, call returned %d", nth,
			ret);
	} else {
		c->ok++;
	}
	return false;
}

/* ---- the cases ---------------------------------------------------------- */

/* Is the page at @la mapped valid and writable, and does a write work? */
static bool inj_page_ok(void *la)
{
	bool valid, writable;

	lm_page_state((unsigned long)la, &valid, &writable);
	return valid && writable && lm_probe_write(la);
}

/*
 * Find a page inside the largest leaf there is, not aligned to any
 * contiguous range, so that splitting around it allocates at every level
 * the page size has. Returns the block holding it, to be freed by the
 * caller, or NULL.
 */
static struct page *inj_find_target(unsigned int *order, struct page **target,
				    int *kind)
{
	struct page *blk[64], *best = NULL;
	unsigned int i, n = 0;
	u64 val;

	/* Big enough to hold a page off every contiguous boundary. */
	*order = min(MAX_PAGE_ORDER, 10);
	*kind = LM_NR_KINDS;
	for (n = 0; n < ARRAY_SIZE(blk); n++) {
		int k;

		blk[n] = alloc_pages(GFP_KERNEL | __GFP_NOWARN | __GFP_NORETRY,
				     *order);
		if (!blk[n])
			break;
		k = lm_lookup((unsigned long)page_address(blk[n] + CONT_PTES + 1),
			      &val);
		if (k >= 0 && k < *kind) {
			*kind = k;
			best = blk[n];
		}
	}
	for (i = 0; i < n; i++)
		if (blk[i] != best)
			__free_pages(blk[i], *order);
	if (best)
		*target = best + CONT_PTES + 1;
	return best;
}

/* set_direct_map_invalid_noflush() on one page inside a block. */
static void inj_case_page(struct inject_case *c)
{
	struct page *blk, *page;
	unsigned int order;
	int kind, nth, ret;
	u8 byte;
	void *la;

	blk = inj_find_target(&order, &page, &kind);
	if (!blk) {
		c->skip = "no memory for a target block";
		return;
	}
	if (kind >= LM_PTE) {
		c->skip = "the linear map has no blocks or contiguous ranges to split";
		goto out;
	}
	c->leaf = lm_kind_name[kind];
	la = page_address(page);
	for (nth = 1; nth <= LM_INJECT_MAX_PAGES; nth++) {
		inj_arm(nth);
		ret = lm_sym.set_direct_map_invalid_noflush(page);
		inj_disarm();
		flush_tlb_kernel_range((unsigned long)la,
				       (unsigned long)la + PAGE_SIZE);
		if (inj_account(c, nth, ret)) {
			if (!ret) {
				lm_sym.set_direct_map_default_noflush(page);
				flush_tlb_kernel_range((unsigned long)la,
						       (unsigned long)la + PAGE_SIZE);
			}
			/* Documented: valid, permissions unchanged. */
			if (!inj_page_ok(la)) {
				c->lost++;
				inj_bad(c, "N=%d: page no longer valid and writable",
					nth);
			}
			inj_check(c, nth);
			continue;
		}
		if (!ret) {
			if (!copy_from_kernel_nofault(&byte, la, 1)) {
				c->lost++;
				inj_bad(c, "page still readable after invalidation");
			}
			lm_sym.set_direct_map_default_noflush(page);
			flush_tlb_kernel_range((unsigned long)la,
					       (unsigned long)la + PAGE_SIZE);
			if (!inj_page_ok(la)) {
				c->lost++;
				inj_bad(c, "page not valid again");
			}
		}
		inj_check(c, nth);
		break;
	}
out:
	__free_pages(blk, order);
}

/* The first leaf of the largest kind there is, by a scan. */
static unsigned long inj_largest_leaf(int *kind)
{
	unsigned long addr, found = 0;
	u64 val;
	int k;

	*kind = LM_NR_KINDS;
	for (addr = lm_linear_start(); addr < (unsigned long)high_memory &&
	     *kind > LM_PUD; addr += PMD_SIZE) {
		k = lm_lookup(addr, &val);
		if (k >= 0 && k < *kind && (val & PTE_VALID)) {
			*kind = k;
			found = addr;
		}
		if (!(addr & (PUD_SIZE - 1)))
			cond_resched();
	}
	return found;
}

/*
 * split_kernel_leaf_mapping() of one page inside the largest leaf: no
 * permission changes, so any memory will do, and the split allocates at
 * every level the granule has.
 */
static void inj_case_split(struct inject_case *c)
{
	unsigned long leaf, addr, i;
	bool valid, writable, was_writable[4];
	int kind, nth, ret;

	if (!lm_sym.split_kernel_leaf_mapping) {
		c->skip = "the kernel does not split the linear map";
		return;
	}
	if (lm_bbml2_state() != 1) {
		c->skip = "live leaves are not split without BBML2_NOABORT";
		return;
	}
	leaf = inj_largest_leaf(&kind);
	if (kind >= LM_CONT_PTE) {
		c->skip = "the linear map has no blocks to split";
		return;
	}
	c->leaf = lm_kind_name[kind];
	leaf = ALIGN_DOWN(leaf, kind == LM_PUD ? PUD_SIZE : PMD_SIZE);
	/* Off every contiguous and block boundary. */
	addr = leaf + (CONT_PTES + 1) * PAGE_SIZE;
	/* Probes at the target, before it and after it. */
#define SPLIT_PROBE(i)	(addr + ((long)(i) - 1) * CONT_PTES * PAGE_SIZE)
	for (i = 0; i < ARRAY_SIZE(was_writable); i++)
		lm_page_state(SPLIT_PROBE(i), &valid, &was_writable[i]);
	for (nth = 1; nth <= LM_INJECT_MAX_PAGES; nth++) {
		inj_arm(nth);
		ret = lm_sym.split_kernel_leaf_mapping(addr, addr + PAGE_SIZE,
						    GFP_KERNEL);
		inj_disarm();
		inj_account(c, nth, ret);
		/* Still mapped, with the same permission, around the target. */
		for (i = 0; i < ARRAY_SIZE(was_writable); i++) {
			lm_page_state(SPLIT_PROBE(i), &valid, &writable);
			if (!valid || writable != was_writable[i]) {
				c->lost++;
				inj_bad(c, "N=%d: 0x%lx valid=%d writable=%d, was writable=%d",
					nth, SPLIT_PROBE(i), valid, writable,
					was_writable[i]);
			}
		}
		inj_check(c, nth);
		if (c->ok || c->wrong_ret)
			break;
	}
#undef SPLIT_PROBE
}

/* set_memory_ro() on a vmalloc area: the aliases of its pages split. */
static void inj_case_vmalloc(struct inject_case *c)
{
	unsigned long pages = 2048, i;
	int nth, ret;
	void *vm;

	if (!*lm_sym.rodata_full) {
		c->skip = "linear aliases only change with rodata=full";
		return;
	}
	vm = vmalloc(pages * PAGE_SIZE);
	if (!vm) {
		c->skip = "vmalloc failed";
		return;
	}
	for (nth = 1; nth <= LM_INJECT_MAX_PAGES; nth++) {
		inj_arm(nth);
		ret = lm_sym.set_memory_ro((unsigned long)vm, pages);
		inj_disarm();
		if (inj_account(c, nth, ret)) {
			if (!ret)
				lm_sym.set_memory_rw((unsigned long)vm, pages);
			/* Documented: on failure nothing changed. */
			for (i = 0; i < pages; i++) {
				void *va = vm + i * PAGE_SIZE;

				if (!lm_probe_write(va) ||
				    !inj_page_ok(lm_alias_of(va))) {
					c->lost++;
					inj_bad(c, "N=%d: page %lu changed although the call failed",
						nth, i);
					break;
				}
			}
			inj_check(c, nth);
			continue;
		}
		ret = lm_sym.set_memory_rw((unsigned long)vm, pages);
		inj_check(c, nth);
		if (ret) {
			inj_bad(c, "set_memory_rw failed: area leaked");
			return;
		}
		break;
	}
	vfree(vm);
}

/*
 * vfree() of a VM_FLUSH_RESET_PERMS area whose pages fill a PMD block and
 * whose aliases set_memory_ro() made read-only, with every page-table
 * allocation failing from the first: vm_reset_perms() gives the aliases
 * back their default with set_direct_map_*_noflush(), whose failure
 * nobody sees, so none may need an allocation. Each page must leave with
 * a valid, writable alias. The pages are held past vfree() to be looked at.
 */
static void inj_case_reset_perms(struct inject_case *c)
{
	unsigned int order = PMD_SHIFT - PAGE_SHIFT, n = 1U << order, i;
	struct page *blk, **pages;
	struct vm_struct *area;
	const char *why;
	bool valid, writable;
	int kind, ro = 0;
	u64 val;
	void *vm;

	if (!*lm_sym.rodata_full) {
		c->skip = "linear aliases only change with rodata=full";
		return;
	}
	blk = lm_alloc_block(order, &kind, &why);
	if (!blk) {
		c->skip = why;
		return;
	}
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		__free_pages(blk, order);
		c->skip = "no memory for the page array";
		return;
	}
	split_page(blk, order);
	for (i = 0; i < n; i++)
		pages[i] = blk + i;
	/* vfree() puts the pages and frees the array. */
	vm = vmap(pages, n, VM_MAP | VM_MAP_PUT_PAGES, PAGE_KERNEL);
	if (!vm) {
		for (i = 0; i < n; i++)
			__free_page(blk + i);
		kvfree(pages);
		c->skip = "vmap failed";
		return;
	}
	/*
	 * As execmem's areas are: set_memory_*() take VM_ALLOC areas only,
	 * and vmap() refuses VM_FLUSH_RESET_PERMS.
	 */
	area = lm_sym.find_vm_area(vm);
	area->flags |= VM_ALLOC | VM_FLUSH_RESET_PERMS;
	for (i = 0; i < n; i++)
		get_page(blk + i);

	if (lm_sym.set_memory_ro((unsigned long)vm, n)) {
		c->skip = "set_memory_ro failed";
		lm_sym.set_memory_rw((unsigned long)vm, n);
		vfree(vm);
		goto out;
	}
	/* A pass now may fold the read-only aliases back into a block. */
	lm_collapse();
	kind = lm_lookup((unsigned long)page_address(blk), &val);
	c->leaf = kind < 0 ? "none" : lm_kind_name[kind];

	__inj_arm(1, true);
	vfree(vm);
	inj_disarm();
	c->tries = 1;
	c->allocations = lm_sym.inject->seen;
	c->failed = c->allocations;
	for (i = 0; i < n; i++) {
		lm_page_state((unsigned long)page_address(blk + i), &valid,
			      &writable);
		if (valid && writable)
			continue;
		ro++;
		/* Mend it, or the next owner of the page would oops. */
		lm_sym.set_direct_map_default_noflush(blk + i);
	}
	flush_tlb_kernel_range((unsigned long)page_address(blk),
			       (unsigned long)page_address(blk) + n * PAGE_SIZE);
	if (ro) {
		c->lost = ro;
		inj_bad(c, "%d of %u pages freed with a read-only or invalid alias (leaf %s)",
			ro, n, c->leaf);
	} else {
		c->ok = 1;
	}
	inj_check(c, 1);
out:
	for (i = 0; i < n; i++)
		put_page(blk + i);
}

/* After a hot-add that failed or was undone: nothing left behind. */

static void inj_hot_gone(struct inject_case *c, int nth, u64 tables,
			 struct lm_counts *cnt, unsigned long *hp)
{
	unsigned long n[LM_NR_KINDS + 1];

	lm_range_leaves(hp[0], hp[1], n);
	if (n[LM_NR_KINDS] != hp[1] >> PAGE_SHIFT) {
		c->lost++;
		inj_bad(c, "N=%d: range still mapped", nth);
	}
	lm_count(cnt);
	if (cnt->table_pages != tables) {
		c->leaked++;
		inj_bad(c, "N=%d: %llu table pages before, %llu after", nth,
			tables, cnt->table_pages);
	}
	inj_check(c, nth);
}

/*
 * add_memory() of a range that is not in the linear map yet. A first run
 * with no failure counts the allocations; then N = 1, 2, 3, every half
 * again as far, and the last one.
 */
static void inj_case_hotplug(struct inject_case *c, unsigned long *hp)
{
	unsigned long start = hp[0], size = hp[1];
	struct lm_counts *cnt;
	u64 tables;
	int nth, ret;

	if (!lm_sym.add_memory || !lm_sym.remove_memory) {
		c->skip = "the kernel has no memory hotplug";
		return;
	}
	if (!size) {
		c->skip = "no hotplug range given (hotplug=START,SIZE)";
		return;
	}
	cnt = kzalloc(sizeof(*cnt), GFP_KERNEL);
	if (!cnt)
		return;
	lm_count(cnt);
	tables = cnt->table_pages;

	inj_arm(0);
	ret = lm_sym.add_memory(0, start, size, 0);
	inj_disarm();
	c->tries++;
	c->allocations = lm_sym.inject->seen;
	if (ret) {
		c->wrong_ret++;
		inj_bad(c, "add_memory returned %d", ret);
		inj_check(c, 0);
		goto out;
	}
	c->ok++;
	ret = lm_sym.remove_memory(start, size);
	if (ret) {
		c->lost++;
		inj_bad(c, "remove_memory returned %d", ret);
		inj_check(c, 0);
		goto out;
	}
	inj_hot_gone(c, 0, tables, cnt, hp);

	for (nth = 1; nth <= c->allocations; ) {
		inj_arm(nth);
		ret = lm_sym.add_memory(0, start, size, 0);
		inj_disarm();
		c->tries++;
		c->failed++;
		if (!ret) {
			c->wrong_ret++;
			inj_bad(c, "N=%d: allocation failed, add_memory returned 0",
				nth);
			if (lm_sym.remove_memory(start, size)) {
				inj_check(c, nth);
				break;
			}
		}
		inj_hot_gone(c, nth, tables, cnt, hp);
		if (nth < 3)
			nth++;
		else if (nth < c->allocations)
			nth = min(nth + nth / 2, c->allocations);
		else
			break;
	}
out:
	kfree(cnt);
}

/* ---- the command --------------------------------------------------------- */

static int inject_run(void *v)
{
	struct inject_result *r = v;
	unsigned int i;

	for (i = 0; i < LM_INJ_NR_CASES; i++) {
		struct inject_case *c = &r->c[i];

		c->name = inject_case_name[i];
		if (r->only != ULONG_MAX && r->only != i) {
			c->skip = "not asked for (case=)";
			continue;
		}
		switch (i) {
		case LM_INJ_SPLIT_BLOCK:
			inj_case_split(c);
			break;
		case LM_INJ_DIRECT_MAP_PAGE:
			inj_case_page(c);
			break;
		case LM_INJ_VMALLOC_RO:
			inj_case_vmalloc(c);
			break;
		case LM_INJ_HOT_ADD:
			inj_case_hotplug(c, r->hp);
			break;
		case LM_INJ_RESET_PERMS:
			inj_case_reset_perms(c);
			break;
		}
	}
	return 0;
}

static void inject_show(struct seq_file *m, void *v)
{
	struct inject_result *r = v;
	int i;

	seq_printf(m, "cases=%d\n", LM_INJ_NR_CASES);
	for (i = 0; i < LM_INJ_NR_CASES; i++) {
		struct inject_case *c = &r->c[i];

		seq_printf(m, "%s.skip=%s\n", c->name, c->skip ?: "");
		seq_printf(m, "%s.leaf=%s\n", c->name, c->leaf ?: "");
		seq_printf(m, "%s.allocations=%d\n%s.tries=%d\n", c->name,
			   c->allocations, c->name, c->tries);
		seq_printf(m, "%s.failed=%d\n%s.ok=%d\n", c->name, c->failed,
			   c->name, c->ok);
		seq_printf(m, "%s.wrong_ret=%d\n%s.lost=%d\n", c->name,
			   c->wrong_ret, c->name, c->lost);
		seq_printf(m, "%s.leaked=%d\n%s.audit=%d\n", c->name,
			   c->leaked, c->name, c->audit);
		seq_printf(m, "%s.atomic=%d\n", c->name, c->atomic);
		if (c->first[0])
			seq_printf(m, "%s.first=%s\n", c->name, c->first);
	}
}

static unsigned int inject_params(void *v, struct lm_param *p)
{
	struct inject_result *r = v;

	p[0] = (struct lm_param){ "hotplug", LM_RANGE, r->hp };
	p[1] = (struct lm_param){ "case", LM_ULONG, &r->only };
	return 2;
}

static void inject_defaults(void *v)
{
	((struct inject_result *)v)->only = ULONG_MAX;
}

static int inject_check(void *v)
{
	unsigned long only = ((struct inject_result *)v)->only;

	return only == ULONG_MAX || only < LM_INJ_NR_CASES ? 0 : -EINVAL;
}

/* Only kernels with the test-only hook can fail their allocations. */
static int inject_available(void)
{
	return lm_sym.inject ? 0 : -EOPNOTSUPP;
}

static struct lm_cmd inject_cmd = {
	.size = sizeof(struct inject_result),
	.defaults = inject_defaults,
	.params = inject_params,
	.check = inject_check,
	.available = inject_available,
	.run = inject_run,
	.show = inject_show,
};

LM_COMMAND_FEATURE(inject, "inject");
