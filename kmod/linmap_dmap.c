// SPDX-License-Identifier: GPL-2.0
/*
 * Checks of how the series changes the direct map for its callers: with
 * interrupts off, for vmalloc areas (core patches 19 and 20), and across
 * hibernation (heal patch 5).
 *
 * linmap_test "direct_map_irqs_off": set_direct_map_invalid_noflush() of a
 * page in a PMD block, with interrupts off. Its split would allocate, which
 * may sleep; the series refuses with -EBUSY and warns once instead. The page
 * must stay valid and writable in an unsplit block. The kernel log marks
 * where the warning is expected, at the warning's own level, so that the
 * kit's log scan lets exactly that one through (scripts/lib/scan-log.sh).
 * With panic_on_warn set that warning would panic the machine: the case is
 * skipped, saying so.
 *
 *   echo run > direct_map_irqs_off; cat direct_map_irqs_off
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "linmap.h"

struct dmirq_result {
	int ret;
	const char *skip;
	int kind_before, kind_after;
	bool valid, writable;
};

static int dmirq_run(void *v)
{
	struct dmirq_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	unsigned long flags, addr;
	struct page *page;
	u64 val;

	if (READ_ONCE(*lm_sym.panic_on_warn)) {
		r->skip = "the refusal warns, and panic_on_warn is set";
		return 0;
	}
	page = lm_alloc_block(order, &r->kind_before, &r->skip);
	if (!page)
		return 0;
	r->skip = NULL;
	addr = (unsigned long)page_address(page + 1);
	pr_warn("expected warning: set_direct_map() with interrupts off, begin\n");
	local_irq_save(flags);
	r->ret = lm_sym.set_direct_map_invalid_noflush(page + 1);
	local_irq_restore(flags);
	pr_warn("expected warning: set_direct_map() with interrupts off, end\n");
	r->kind_after = lm_lookup(addr, &val);
	lm_page_state(addr, &r->valid, &r->writable);
	/* A kernel that did split and change it: give the page back whole. */
	if (!r->valid)
		lm_sym.set_direct_map_default_noflush(page + 1);
	__free_pages(page, order);
	return 0;
}

static void dmirq_show(struct seq_file *m, void *v)
{
	struct dmirq_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\nkind_before=%s\nkind_after=%s\n", r->ret,
		   lm_kind_str(r->kind_before), lm_kind_str(r->kind_after));
	seq_printf(m, "valid=%d\nwritable=%d\n", r->valid, r->writable);
}

static struct lm_cmd dmirq_cmd = {
	.size = sizeof(struct dmirq_result),
	.run = dmirq_run,
	.show = dmirq_show,
};

/*
 * linmap_test "ro_alias_leaves": one page of a PMD block mapped by a
 * VM_FLUSH_RESET_PERMS area, as a module's read-only page is, and made
 * read-only: the leaves over its block after that. Only the contiguous
 * group that holds the page needs to lose its contiguous bit; the rest of
 * the block stays in contiguous PTEs.
 *
 *   echo run > ro_alias_leaves; cat ro_alias_leaves
 */
#define RO_PAGE	40	/* a page inside the block, not its first */

struct roleaves_result {
	int ret;
	const char *skip;
	int kind_before;
	unsigned long n[LM_NR_KINDS + 1];
};

static int roleaves_run(void *v)
{
	struct roleaves_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT, i;
	struct page *blk, **pages;
	struct vm_struct *area;
	void *vm = NULL;

	if (!*lm_sym.rodata_full) {
		r->skip = "linear aliases only change with rodata=full";
		return 0;
	}
	blk = lm_alloc_block(order, &r->kind_before, &r->skip);
	if (!blk)
		return 0;
	r->skip = NULL;
	split_page(blk, order);
	/* vfree() puts the page and frees the array. */
	pages = kmalloc_array(1, sizeof(*pages), GFP_KERNEL);
	if (pages) {
		pages[0] = blk + RO_PAGE;
		vm = vmap(pages, 1, VM_MAP | VM_MAP_PUT_PAGES, PAGE_KERNEL);
		if (!vm)
			kfree(pages);
	}
	if (!pages || !vm) {
		r->ret = -ENOMEM;
		goto out;
	}
	/* As execmem's areas are; vmap() refuses VM_FLUSH_RESET_PERMS. */
	area = lm_sym.find_vm_area(vm);
	area->flags |= VM_ALLOC | VM_FLUSH_RESET_PERMS;
	get_page(blk + RO_PAGE);
	r->ret = lm_sym.set_memory_ro((unsigned long)vm, 1);
	lm_range_leaves(page_to_phys(blk), PMD_SIZE, r->n);
	vfree(vm);
out:
	for (i = 0; i < 1U << order; i++)
		__free_page(blk + i);
	return 0;
}

static void roleaves_show(struct seq_file *m, void *v)
{
	struct roleaves_result *r = v;
	int k;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\nkind_before=%s\ncont_ptes=%lu\n", r->ret,
		   lm_kind_str(r->kind_before), (unsigned long)CONT_PTES);
	for (k = 0; k < LM_NR_KINDS; k++)
		seq_printf(m, "%s=%lu\n", lm_kind_name[k], r->n[k]);
	seq_printf(m, "unmapped=%lu\n", r->n[LM_NR_KINDS]);
}

static struct lm_cmd roleaves_cmd = {
	.size = sizeof(struct roleaves_result),
	.run = roleaves_run,
	.show = roleaves_show,
};

/*
 * linmap_test "hold_unmapped": take a page of a PMD block out of the
 * linear map and keep it so across writes, as secretmem does; hibernation
 * then copies it with interrupts off, mapping it for the copy only. After
 * the resume, "release" maps it again with interrupts on: the collapse
 * worker of the resumed kernel must fold its block back by itself, within
 * HOLD_WAIT_MS. "give" maps it again and returns at once, with the block's
 * address, for a caller that watches the worker itself.
 *
 *   echo hold > hold_unmapped; ...hibernate, resume...
 *   echo release > hold_unmapped; cat hold_unmapped
 */
#define HOLD_WAIT_MS	30000

static struct page *held_blk;

struct hold_result {
	bool release, nowait;
	int ret;
	unsigned long addr;
	const char *skip;
	int kind_held, kind_after;
	unsigned int folded_ms;
};

static int hold_parse(char *buf, void *v)
{
	struct hold_result *r = v;

	buf = strim(buf);
	r->nowait = !strcmp(buf, "give");
	r->release = r->nowait || !strcmp(buf, "release");
	if (!r->release && strcmp(buf, "hold"))
		return -EINVAL;
	return 0;
}

static int hold_run(void *v)
{
	struct hold_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT, t;
	unsigned long addr;
	u64 val;

	if (!r->release) {
		if (held_blk)
			return -EBUSY;
		if (!lm_collapse_on()) {
			r->skip = "the kernel does not fold the linear map";
			return 0;
		}
		held_blk = lm_alloc_block(order, &r->kind_held, &r->skip);
		if (!held_blk)
			return 0;
		r->skip = NULL;
		r->ret = lm_sym.set_direct_map_invalid_noflush(held_blk + 1);
		r->kind_held = lm_lookup((unsigned long)page_address(held_blk + 1),
					 &val);
		return 0;
	}
	if (!held_blk) {
		r->skip = "nothing held (no block, or no collapse, at hold)";
		return 0;
	}
	addr = (unsigned long)page_address(held_blk);
	r->addr = addr;
	r->ret = lm_sym.set_direct_map_default_noflush(held_blk + 1);
	/* No pass of our own: the worker the restore queued must fold it. */
	for (t = 0; !r->ret && !r->nowait && t < HOLD_WAIT_MS; t += 20) {
		r->kind_after = lm_lookup(addr, &val);
		if (r->kind_after == LM_PMD || r->kind_after == LM_CONT_PMD ||
		    r->kind_after == LM_PUD)
			break;
		msleep(20);
	}
	r->folded_ms = t;
	__free_pages(held_blk, order);
	held_blk = NULL;
	return 0;
}

static void hold_show(struct seq_file *m, void *v)
{
	struct hold_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\nrelease=%d\n", r->ret, r->release);
	if (r->nowait)
		seq_printf(m, "addr=0x%lx\n", r->addr);
	else if (r->release)
		seq_printf(m, "kind_after=%s\nfolded_ms=%u\n",
			   lm_kind_str(r->kind_after), r->folded_ms);
	else
		seq_printf(m, "kind_held=%s\n", lm_kind_str(r->kind_held));
}

static struct lm_cmd hold_cmd = {
	.size = sizeof(struct hold_result),
	.parse = hold_parse,
	.run = hold_run,
	.show = hold_show,
};

/* A page still held at unload goes back mapped. */
static void dmap_exit(void)
{
	if (held_blk) {
		lm_sym.set_direct_map_default_noflush(held_blk + 1);
		__free_pages(held_blk, PMD_SHIFT - PAGE_SHIFT);
		held_blk = NULL;
	}
}

static const struct lm_file dmap_files[] = {
	{ "direct_map_irqs_off", 0644, NULL, &dmirq_cmd },
	{ "ro_alias_leaves", 0644, NULL, &roleaves_cmd },
	{ "hold_unmapped", 0644, NULL, &hold_cmd },
};

LM_FEATURE(dmap, dmap_exit);
