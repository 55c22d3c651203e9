// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "hotplug": hot-add memory, check that its linear map follows
 * the policy boot memory follows and that the auditor is content, remove
 * its first memory block alone and then the rest, each unmapped exactly;
 * time both and read the test-only counters of the linear map's part.
 *
 *   echo "range=START,SIZE" > hotplug; cat hotplug
 */

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

LM_COMMAND_FEATURE(hotplug, "hotplug");
