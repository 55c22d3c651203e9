// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "inject": the cases that change the linear map (a split, a
 * page made invalid, a vmalloc area made read-only, a vfree() that resets
 * permissions), each run with its Nth page-table allocation failing.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

#include "linmap.h"
#include "linmap_inject.h"

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
void inj_case_page(struct inject_case *c)
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
void inj_case_split(struct inject_case *c)
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
void inj_case_vmalloc(struct inject_case *c)
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
void inj_case_reset_perms(struct inject_case *c)
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
