// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "collapse_cost": what a collapse pass costs per block it
 * folds. Takes blocks=N naturally aligned PMD-sized runs of free memory,
 * splits the block over each (one page out of the linear map and back,
 * as secretmem does), then times a full pass that folds them all and a
 * second one that finds nothing to fold: the whole call, which waits for
 * an RCU grace period before it frees the tables, and the folding walk
 * alone, as the kernel times it. Under QEMU -icount shift=0 the times of
 * a busy CPU are instruction counts; a wait for RCU is idle time.
 *
 *   echo "blocks=64" > .../linmap_test/collapse_cost
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "linmap.h"

#define HEAL_MAX_BLOCKS	1024

struct collapse_cost_result {
	unsigned long blocks;		/* asked for */
	unsigned long taken, split_errors;
	u64 tables_split, tables_folded;	/* table pages before/after */
	u64 pass_ns, empty_pass_ns;
	u64 fold_ns, empty_fold_ns;	/* the walks alone */
	int pass_ret;
};

static u64 collapse_cost_tables(void)
{
	struct lm_counts *c = kzalloc(sizeof(*c), GFP_KERNEL);
	u64 n = 0;

	if (c) {
		lm_count(c);
		n = c->table_pages;
	}
	kfree(c);
	return n;
}

static u64 collapse_cost_pass(int *ret, u64 *fold_ns)
{
	u64 t0 = ktime_get_ns();

	*ret = lm_collapse();
	t0 = ktime_get_ns() - t0;
	if (fold_ns && lm_sym.collapse_last_ns)
		*fold_ns = READ_ONCE(*lm_sym.collapse_last_ns);
	return t0;
}

static int collapse_cost_run(void *v)
{
	struct collapse_cost_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	struct page **blk;
	u64 before;
	unsigned long i;
	int ret;

	blk = kcalloc(r->blocks, sizeof(*blk), GFP_KERNEL);
	if (!blk)
		return -ENOMEM;
	/* Start from a healed map, so that the pass folds only ours. */
	collapse_cost_pass(&ret, NULL);
	before = collapse_cost_tables();
	for (i = 0; i < r->blocks; i++) {
		blk[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		if (!blk[i])
			break;
		r->taken++;
		if (lm_sym.set_direct_map_invalid_noflush(blk[i]) ||
		    lm_sym.set_direct_map_default_noflush(blk[i]))
			r->split_errors++;
	}
	r->tables_split = collapse_cost_tables() - before;
	r->pass_ns = collapse_cost_pass(&r->pass_ret, &r->fold_ns);
	r->tables_folded = r->tables_split + before - collapse_cost_tables();
	r->empty_pass_ns = collapse_cost_pass(&ret, &r->empty_fold_ns);
	for (i = 0; i < r->taken; i++)
		__free_pages(blk[i], order);
	kfree(blk);
	return r->pass_ret;
}

static void collapse_cost_show(struct seq_file *m, void *v)
{
	struct collapse_cost_result *r = v;

	seq_printf(m, "blocks=%lu\ntaken=%lu\nsplit_errors=%lu\n", r->blocks,
		   r->taken, r->split_errors);
	seq_printf(m, "tables_split=%llu\ntables_folded=%llu\n",
		   r->tables_split, r->tables_folded);
	seq_printf(m, "pass_ns=%llu\nempty_pass_ns=%llu\npass_ret=%d\n",
		   r->pass_ns, r->empty_pass_ns, r->pass_ret);
	seq_printf(m, "fold_ns=%llu\nempty_fold_ns=%llu\n", r->fold_ns,
		   r->empty_fold_ns);
	if (r->tables_folded && r->fold_ns)
		seq_printf(m, "ns_per_table_folded=%llu\n",
			   div_u64(r->fold_ns - min(r->fold_ns, r->empty_fold_ns),
				   r->tables_folded));
}

static void collapse_cost_defaults(void *v)
{
	((struct collapse_cost_result *)v)->blocks = 64;
}

static unsigned int collapse_cost_params(void *v, struct lm_param *p)
{
	p[0] = (struct lm_param){ "blocks", LM_ULONG,
				  &((struct collapse_cost_result *)v)->blocks };
	return 1;
}

static int collapse_cost_check(void *v)
{
	struct collapse_cost_result *r = v;

	return r->blocks && r->blocks <= HEAL_MAX_BLOCKS ? 0 : -EINVAL;
}

static int collapse_cost_available(void)
{
	return lm_has_collapse() ? 0 : -EOPNOTSUPP;
}

static struct lm_cmd collapse_cost_cmd = {
	.size = sizeof(struct collapse_cost_result),
	.defaults = collapse_cost_defaults,
	.params = collapse_cost_params,
	.check = collapse_cost_check,
	.run = collapse_cost_run,
	.show = collapse_cost_show,
	.available = collapse_cost_available,
};

/*
 * linmap_test "collapse_quiet": a page restored with interrupts off, as
 * hibernation's copy restores each unmapped page it saves, must note no
 * hint and queue no pass (the image would hold them half written). The
 * page is taken out of the linear map with interrupts on first. A note
 * shows as the time of the last restore moving, which another CPU's
 * restore can move too: up to QUIET_TRIES tries, and the test fails only
 * if every one saw a note. A full pass then folds what is left split.
 *
 *   echo run > .../linmap_test/collapse_quiet
 */
#define QUIET_TRIES	3

struct quiet_result {
	int ret;
	const char *skip;
	int tries, noted;
};

static int quiet_run(void *v)
{
	struct quiet_result *r = v;
	unsigned long before, flags;
	struct page *page;
	int attempts = 0;
	bool noted, blind;

	if (!lm_collapse_on() || !lm_sym.collapse_last_restore) {
		r->skip = "the kernel does not fold the linear map";
		return 0;
	}
	page = alloc_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	while (r->tries < QUIET_TRIES && attempts++ < 10 * QUIET_TRIES) {
		r->ret = lm_sym.set_direct_map_invalid_noflush(page);
		if (r->ret)
			break;
		/* A note is a time in jiffies: one in this jiffy is unseen. */
		msleep(jiffies_to_msecs(1) + 1);
		local_irq_save(flags);
		before = READ_ONCE(*lm_sym.collapse_last_restore);
		blind = before == jiffies;
		r->ret = lm_sym.set_direct_map_default_noflush(page);
		noted = READ_ONCE(*lm_sym.collapse_last_restore) != before;
		local_irq_restore(flags);
		if (r->ret)
			break;
		if (blind && !noted)
			continue;
		r->tries++;
		if (!noted)
			break;
		r->noted++;
	}
	__free_page(page);
	lm_collapse();
	return 0;
}

static void quiet_show(struct seq_file *m, void *v)
{
	struct quiet_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\ntries=%d\nnoted=%d\n", r->ret, r->tries,
		   r->noted);
}

static struct lm_cmd quiet_cmd = {
	.size = sizeof(struct quiet_result),
	.run = quiet_run,
	.show = quiet_show,
};

/*
 * linmap_test "collapse_idle": a full pass that finds nothing to fold must
 * not move the resize sequence, or every lock-free change meanwhile takes
 * the split lock for nothing. One pass folds what it can, then a second
 * is timed by the sequence alone. A split elsewhere moves it too: up to
 * IDLE_TRIES tries, and the test fails only if every one saw it move.
 *
 *   echo run > .../linmap_test/collapse_idle
 */
#define IDLE_TRIES	3

struct idle_result {
	int ret;
	const char *skip;
	int tries, moved;
	unsigned int last_delta;
};

static int idle_run(void *v)
{
	struct idle_result *r = v;
	unsigned int before;

	if (!lm_collapse_on() || !lm_sym.linear_resize_seq) {
		r->skip = "the kernel does not fold the linear map";
		return 0;
	}
	while (r->tries < IDLE_TRIES) {
		r->ret = lm_collapse();
		if (r->ret)
			break;
		before = READ_ONCE(*lm_sym.linear_resize_seq);
		r->ret = lm_collapse();
		r->last_delta = READ_ONCE(*lm_sym.linear_resize_seq) - before;
		r->tries++;
		if (r->ret || !r->last_delta)
			break;
		r->moved++;
	}
	return 0;
}

static void idle_show(struct seq_file *m, void *v)
{
	struct idle_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\ntries=%d\nmoved=%d\nlast_delta=%u\n", r->ret,
		   r->tries, r->moved, r->last_delta);
}

static struct lm_cmd idle_cmd = {
	.size = sizeof(struct idle_result),
	.run = idle_run,
	.show = idle_show,
};

static const struct lm_file collapse_files[] = {
	{ "collapse_cost", 0644, NULL, &collapse_cost_cmd },
	{ "collapse_quiet", 0644, NULL, &quiet_cmd },
	{ "collapse_idle", 0644, NULL, &idle_cmd },
};

LM_FEATURE(collapse, NULL);
