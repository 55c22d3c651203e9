// SPDX-License-Identifier: GPL-2.0
/*
 * Memory hotplug and the linear map.
 *
 * linmap_test "hotplug": hot-add memory, check that its linear map follows
 * the policy boot memory follows and that the auditor is content, remove
 * its first memory block alone and then the rest, each unmapped exactly;
 * time both and read the test-only counters of the linear map's part.
 *
 *   echo "range=START,SIZE" > hotplug; cat hotplug
 *
 * linmap_test "hotplug_split_end": a split whose range ends where a memory
 * block being hot-removed begins (see split_end_run()).
 *
 *   echo "range=START,SIZE rounds=N" > hotplug_split_end
 *   cat hotplug_split_end
 */

#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <asm/arch_timer.h>

#include "linmap.h"

struct hp_result {
	unsigned long range[2];		/* range=START,SIZE */
	int add_ret, remove_ret;
	bool want_blocks;
	unsigned long leaves[LM_NR_KINDS + 1];
	unsigned long unmapped_after;
	/* The first memory block removed alone, then the rest. */
	unsigned long block_size;
	int partial_ret;
	unsigned long removed_unmapped, rest_unmapped;
	u64 tables_before, tables_added, tables_after;
	/* Under QEMU -icount shift=0, instructions. */
	u64 add_ns, remove_ns;
	/* The linear map's part, from the test-only counters; -1 if none. */
	s64 map_ticks, unmap_ticks;
	unsigned long violations;
	char first[160];
};

/* The auditor over the whole linear map, its findings added to @hp's. */
static void hp_audit(struct hp_result *hp)
{
	long found = lm_audit_once(hp->first, sizeof(hp->first));

	if (found > 0)
		hp->violations += found;
}

static int hp_run(void *v)
{
	struct hp_result *hp = v;
	unsigned long start = hp->range[0], size = hp->range[1];
	struct lm_counts *c = kzalloc(sizeof(*c), GFP_KERNEL);
	unsigned long n[LM_NR_KINDS + 1], removed;
	u64 t0;

	if (!c) {
		hp->add_ret = -ENOMEM;
		return 0;
	}
	hp->want_blocks = lm_linear_blocks();
	hp->map_ticks = -1;
	hp->unmap_ticks = -1;
	if (lm_sym.hotplug_ticks)
		memset(lm_sym.hotplug_ticks, 0, 2 * sizeof(u64));
	lm_count(c);
	hp->tables_before = c->table_pages;
	t0 = ktime_get_ns();
	hp->add_ret = lm_sym.add_memory(0, start, size, 0);
	hp->add_ns = ktime_get_ns() - t0;
	if (hp->add_ret)
		goto out;
	lm_range_leaves(start, size, hp->leaves);
	lm_count(c);
	hp->tables_added = c->table_pages - hp->tables_before;
	hp_audit(hp);
	/*
	 * Memory is removed in memory blocks, possibly one at a time
	 * (virtio-mem): removing the first one alone must unmap exactly
	 * that block and leave the rest of the range mapped.
	 */
	hp->block_size = lm_sym.memory_block_size_bytes ?
			lm_sym.memory_block_size_bytes() : 0;
	removed = 0;
	if (hp->block_size && hp->block_size < size) {
		t0 = ktime_get_ns();
		hp->partial_ret = lm_sym.remove_memory(start, hp->block_size);
		hp->remove_ns = ktime_get_ns() - t0;
		if (!hp->partial_ret) {
			removed = hp->block_size;
			lm_range_leaves(start, removed, n);
			hp->removed_unmapped = n[LM_NR_KINDS];
			lm_range_leaves(start + removed, size - removed, n);
			hp->rest_unmapped = n[LM_NR_KINDS];
		}
	}
	t0 = ktime_get_ns();
	hp->remove_ret = lm_sym.remove_memory(start + removed, size - removed);
	hp->remove_ns += ktime_get_ns() - t0;
	if (lm_sym.hotplug_ticks) {
		hp->map_ticks = lm_sym.hotplug_ticks[0];
		hp->unmap_ticks = lm_sym.hotplug_ticks[1];
	}
	lm_range_leaves(start, size, n);
	hp->unmapped_after = n[LM_NR_KINDS];
	lm_count(c);
	hp->tables_after = c->table_pages;
	hp_audit(hp);
out:
	kfree(c);
	return 0;
}

static void hotplug_show(struct seq_file *m, void *v)
{
	struct hp_result *hp = v;
	int k;

	seq_printf(m, "add_ret=%d\nremove_ret=%d\nwant_blocks=%d\n",
		   hp->add_ret, hp->remove_ret, hp->want_blocks);
	for (k = 0; k < LM_NR_KINDS; k++)
		seq_printf(m, "added.%s=%lu\n", lm_kind_name[k], hp->leaves[k]);
	seq_printf(m, "added.unmapped_pages=%lu\n", hp->leaves[LM_NR_KINDS]);
	seq_printf(m, "unmapped_pages_after=%lu\n", hp->unmapped_after);
	seq_printf(m, "block_size=%lu\npartial_ret=%d\n", hp->block_size,
		   hp->partial_ret);
	seq_printf(m, "partial.removed_unmapped_pages=%lu\n",
		   hp->removed_unmapped);
	seq_printf(m, "partial.rest_unmapped_pages=%lu\n", hp->rest_unmapped);
	seq_printf(m, "tables_before=%llu\ntables_added=%llu\ntables_after=%llu\n",
		   hp->tables_before, hp->tables_added, hp->tables_after);
	seq_printf(m, "add_ns=%llu\nremove_ns=%llu\n", hp->add_ns, hp->remove_ns);
	seq_printf(m, "map_ticks=%lld\nunmap_ticks=%lld\ntimer_hz=%u\n",
		   hp->map_ticks, hp->unmap_ticks, arch_timer_get_cntfrq());
	seq_printf(m, "audit_violations=%lu\n", hp->violations);
	if (hp->first[0])
		seq_printf(m, "first=%s\n", hp->first);
}

static unsigned int hotplug_params(void *v, struct lm_param *p)
{
	struct hp_result *hp = v;

	p[0] = (struct lm_param){ "range", LM_RANGE, hp->range };
	return 1;
}

static int hotplug_check(void *v)
{
	return ((struct hp_result *)v)->range[1] ? 0 : -EINVAL;
}

static int hotplug_available(void)
{
	return lm_sym.add_memory && lm_sym.remove_memory ? 0 : -EOPNOTSUPP;
}

static struct lm_cmd hotplug_cmd = {
	.size = sizeof(struct hp_result),
	.params = hotplug_params,
	.check = hotplug_check,
	.available = hotplug_available,
	.run = hp_run,
	.show = hotplug_show,
};

/* Test-only wait between a split's read of a PMD entry and of its table. */
#define SPLIT_END_DELAY_US	50

struct split_end {
	/* The second memory block, B: removed and added back @rounds times. */
	unsigned long b, size, rounds, churned;
	int add_ret, remove_ret, split_ret;
	bool b_added;
	struct completion done;		/* the churn has stopped */
};

struct split_end_result {
	unsigned long range[2];		/* range=START,SIZE */
	unsigned long rounds;		/* rounds=N */
	const char *skip;
	int add_ret, split_ret, remove_ret;
	unsigned long splits, split_errors, churned;
	int churn_add_ret, churn_remove_ret, churn_split_ret;
	bool slowed;
	char first[160];
};

/* Give the PMD range at @phys a PTE table, by a split inside it. */
static int split_end_table(unsigned long phys)
{
	unsigned long va = (unsigned long)__va(phys) + PAGE_SIZE;

	return lm_sym.split_kernel_leaf_mapping(va, va + PAGE_SIZE, GFP_KERNEL);
}

static int split_end_churn(void *v)
{
	struct split_end *se = v;
	int ret;

	while (se->churned < se->rounds) {
		ret = lm_sym.remove_memory(se->b, se->size);
		if (ret) {
			se->remove_ret = ret;
			break;
		}
		se->b_added = false;
		ret = lm_sym.add_memory(0, se->b, se->size, 0);
		if (ret) {
			se->add_ret = ret;
			break;
		}
		se->b_added = true;
		ret = split_end_table(se->b);
		if (ret) {
			se->split_ret = ret;
			break;
		}
		se->churned++;
	}
	complete(&se->done);
	return 0;
}

/*
 * Hot-add two adjacent memory blocks A and B and give B's first PMD range
 * a PTE table. Then split at the last page of A, a range that ends where B
 * begins, over and over on this CPU, while a thread on another CPU removes
 * B (freeing that table with no lock a split takes) and adds it back. A
 * split may read no entry of B's own tables. The test-only split delay
 * holds a split between reading a PMD entry and its table, and under
 * debug_pagealloc a freed table is unmapped: a read of it faults.
 */
static int split_end_run(void *v)
{
	struct split_end_result *r = v;
	unsigned long start = r->range[0], size = r->range[1], bs, last;
	struct split_end se = { .rounds = r->rounds };
	struct task_struct *task;
	int cpu, ret;

	bs = lm_sym.memory_block_size_bytes ? lm_sym.memory_block_size_bytes() : 0;
	if (!bs || size < 2 * bs || !IS_ALIGNED(start, bs)) {
		r->skip = "the range does not hold two whole memory blocks";
		return 0;
	}
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids) {
		r->skip = "one CPU online: nothing races with the split";
		return 0;
	}
	se.b = start + bs;
	se.size = bs;
	init_completion(&se.done);
	r->add_ret = lm_sym.add_memory(0, start, 2 * bs, 0);
	if (r->add_ret)
		return 0;
	se.b_added = true;
	r->split_ret = split_end_table(se.b);
	if (r->split_ret)
		goto remove;
	task = kthread_create(split_end_churn, &se, "linmap_split_end");
	if (IS_ERR(task)) {
		r->split_ret = PTR_ERR(task);
		goto remove;
	}
	kthread_bind(task, cpu);
	if (lm_sym.split_delay_us) {
		WRITE_ONCE(*lm_sym.split_delay_us, SPLIT_END_DELAY_US);
		r->slowed = true;
	}
	wake_up_process(task);
	last = (unsigned long)__va(se.b) - PAGE_SIZE;
	while (!completion_done(&se.done)) {
		ret = lm_sym.split_kernel_leaf_mapping(last, last + PAGE_SIZE,
						       GFP_KERNEL);
		r->splits++;
		if (ret && !r->split_errors++)
			scnprintf(r->first, sizeof(r->first),
				  "split at 0x%lx after %lu churns: %d", last,
				  se.churned, ret);
		cond_resched();
	}
	wait_for_completion(&se.done);
	if (lm_sym.split_delay_us)
		WRITE_ONCE(*lm_sym.split_delay_us, 0);
	r->churned = se.churned;
	r->churn_add_ret = se.add_ret;
	r->churn_remove_ret = se.remove_ret;
	r->churn_split_ret = se.split_ret;
remove:
	r->remove_ret = lm_sym.remove_memory(start, se.b_added ? 2 * bs : bs);
	return 0;
}

static void split_end_defaults(void *v)
{
	((struct split_end_result *)v)->rounds = 16;
}

static void split_end_show(struct seq_file *m, void *v)
{
	struct split_end_result *r = v;

	if (r->skip) {
		seq_printf(m, "skip=%s\n", r->skip);
		return;
	}
	seq_printf(m, "add_ret=%d\nsplit_ret=%d\nremove_ret=%d\n", r->add_ret,
		   r->split_ret, r->remove_ret);
	seq_printf(m, "rounds=%lu\nchurned=%lu\nsplits=%lu\nsplit_errors=%lu\n",
		   r->rounds, r->churned, r->splits, r->split_errors);
	seq_printf(m, "churn.add_ret=%d\nchurn.remove_ret=%d\nchurn.split_ret=%d\n",
		   r->churn_add_ret, r->churn_remove_ret, r->churn_split_ret);
	seq_printf(m, "slowed=%d\n", r->slowed);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
}

static unsigned int split_end_params(void *v, struct lm_param *p)
{
	struct split_end_result *r = v;

	p[0] = (struct lm_param){ "range", LM_RANGE, r->range };
	p[1] = (struct lm_param){ "rounds", LM_ULONG, &r->rounds };
	return 2;
}

static int split_end_check(void *v)
{
	struct split_end_result *r = v;

	return r->range[1] && r->rounds && r->rounds <= 1000 ? 0 : -EINVAL;
}

static int split_end_available(void)
{
	return lm_sym.add_memory && lm_sym.remove_memory &&
	       lm_sym.split_kernel_leaf_mapping ? 0 : -EOPNOTSUPP;
}

static struct lm_cmd split_end_cmd = {
	.size = sizeof(struct split_end_result),
	.defaults = split_end_defaults,
	.params = split_end_params,
	.check = split_end_check,
	.available = split_end_available,
	.run = split_end_run,
	.show = split_end_show,
};

static const struct lm_file hotplug_files[] = {
	{ "hotplug", 0644, NULL, &hotplug_cmd },
	{ "hotplug_split_end", 0644, NULL, &split_end_cmd },
};
LM_FEATURE(hotplug, NULL);
