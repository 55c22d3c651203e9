// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "state", "counts" and "leaf": what the kernel says about its
 * linear map, the leaves and table pages a walk finds, and the leaf that
 * maps one address (LM_IOC_LEAF); "split_tables": the tables one split
 * installs, for a comparison with PageTables.
 */

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/cputype.h>
#include <asm/pgtable.h>
#include <asm/sysreg.h>

#include "linmap.h"

static void show_levels(struct seq_file *m)
{
	bool first = true;
	int k;

	seq_puts(m, "levels=");
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (k == LM_PUD && !lm_pud_blocks())
			continue;
		seq_printf(m, "%s%s", first ? "" : ",", lm_kind_name[k]);
		first = false;
	}
	seq_putc(m, '\n');
}

static int state_show(struct seq_file *m, void *v)
{
	unsigned long s, e;
	int bbml2 = lm_bbml2_state();

	seq_printf(m, "page_size=%lu\n", PAGE_SIZE);
	seq_printf(m, "rodata_full=%d\n", *lm_sym.rodata_full);
	seq_printf(m, "debug_pagealloc=%d\n", debug_pagealloc_enabled());
	seq_printf(m, "kfence=%s\n", lm_kfence_mode());
	if (lm_kfence_pool(&s, &e))
		seq_printf(m, "kfence_pool=0x%lx-0x%lx\n", s, e);
	else
		seq_puts(m, "kfence_pool=none\n");
	if (lm_kfence_pool_tag() >= 0)
		seq_printf(m, "kfence_pool_tag=0x%02x\n", lm_kfence_pool_tag());
	if (bbml2 < 0)
		seq_puts(m, "bbml2=unknown\n");
	else
		seq_printf(m, "bbml2=%d\n", bbml2);
	/* What this CPU says of itself: level 3 means no conflict aborts. */
	seq_printf(m, "bbm_level=%u\nmidr=%#x\n",
		   cpuid_feature_extract_unsigned_field(read_sysreg_s(SYS_ID_AA64MMFR2_EL1),
							ID_AA64MMFR2_EL1_BBM_SHIFT),
		   read_cpuid_id());
	seq_printf(m, "can_set_direct_map=%d\n", lm_sym.can_set_direct_map());
	seq_printf(m, "block_policy=%d\n", lm_block_policy());
	seq_printf(m, "linear_blocks=%d\n", lm_linear_blocks());
	seq_printf(m, "pte_layout=%d\n", lm_pte_layout());
	/* Folding back into blocks: 1 or 0, -1 for a kernel without it. */
	seq_printf(m, "collapse=%d\n", lm_has_collapse() ? lm_collapse_on() : -1);
	lm_kimage_alias(&s, &e);
	seq_printf(m, "kimage_alias=0x%lx-0x%lx\n", s, e);
	seq_printf(m, "linear=0x%lx-0x%lx\n", lm_linear_start(),
		   (unsigned long)PAGE_END);
	seq_printf(m, "cont_ptes=%lu\ncont_pmds=%lu\n", (unsigned long)CONT_PTES,
		   (unsigned long)CONT_PMDS);
	show_levels(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

static int counts_show(struct seq_file *m, void *v)
{
	struct lm_counts *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	lm_count(c);
	lm_counts_show(m, "", c, true);
	kfree(c);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(counts);

static long leaf_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct lm_leaf_query q;
	u64 val = 0;
	int kind;

	if (cmd != LM_IOC_LEAF)
		return -ENOTTY;
	if (copy_from_user(&q, (void __user *)arg, sizeof(q)))
		return -EFAULT;
	/* A linear address may carry a KASAN tag, as page_address() does. */
	q.addr = (u64)kasan_reset_tag((void *)(unsigned long)q.addr);
	if (q.addr < lm_linear_start() || q.addr >= PAGE_END)
		return -EINVAL;
	kind = lm_lookup(q.addr, &val);
	q.kind = kind < 0 ? -1 : kind;
	q.entry = kind < 0 ? 0 : val;
	q.entry_size = kind < 0 ? 0 : lm_kind_size[kind];
	q.valid = kind >= 0 && (val & PTE_VALID);
	q.writable = kind >= 0 && !(val & PTE_RDONLY);
	q.pad = 0;
	return copy_to_user((void __user *)arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static const struct file_operations leaf_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = leaf_ioctl,
};

/*
 * linmap_test "split_tables": split the block over one page of a PMD-sized
 * run this module owns down to PTEs, and report the table pages a walk of
 * the linear map counts before and after. The caller compares the
 * difference with that of PageTables (/proc/meminfo, after a write to
 * /proc/sys/vm/stat_refresh): the kernel counts the tables a split
 * installs as page tables. Of the "over" tables now over the page that
 * are not boot memory, "typed" carry the page-table type.
 *
 *   echo run > split_tables; cat split_tables
 */
struct splittab_result {
	int ret;
	const char *skip;
	int kind_before;
	u64 tables_before, tables_after;
	unsigned int over, typed;
};

struct splittab_walk {
	unsigned int over, typed;
};

static void splittab_table(struct lm_walk *w, enum lm_level level, void *ptr,
			   unsigned long addr, unsigned long end, bool folded,
			   unsigned int used)
{
	struct splittab_walk *sw = w->priv;
	struct page *page = virt_to_page(ptr);

	/* Boot tables come from memblock and are not counted. */
	if (folded || PageReserved(page))
		return;
	sw->over++;
	sw->typed += PageTable(page);
}

static int splittab_run(void *v)
{
	static const struct lm_walk_ops ops = { .table = splittab_table };
	struct splittab_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	struct splittab_walk sw = {};
	struct lm_walk w = { .ops = &ops, .priv = &sw };
	struct lm_counts *c;
	unsigned long addr;
	struct page *blk;

	if (!lm_sym.split_kernel_leaf_mapping) {
		r->skip = "this kernel does not split its linear map";
		return 0;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	blk = lm_alloc_block(order, &r->kind_before, &r->skip);
	if (!blk)
		goto out;
	r->skip = NULL;
	addr = (unsigned long)page_address(blk) + PAGE_SIZE;
	lm_count(c);
	r->tables_before = c->table_pages;
	r->ret = lm_sym.split_kernel_leaf_mapping(addr, addr + PAGE_SIZE,
						  GFP_KERNEL);
	lm_count(c);
	r->tables_after = c->table_pages;
	lm_walk(&w, addr, addr + PAGE_SIZE);
	r->over = sw.over;
	r->typed = sw.typed;
	__free_pages(blk, order);
out:
	kfree(c);
	return 0;
}

static void splittab_show(struct seq_file *m, void *v)
{
	struct splittab_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\nkind_before=%s\ntables_before=%llu\ntables_after=%llu\nover=%u\ntyped=%u\n",
		   r->ret, lm_kind_str(r->kind_before), r->tables_before,
		   r->tables_after, r->over, r->typed);
}

static struct lm_cmd splittab_cmd = {
	.size = sizeof(struct splittab_result),
	.run = splittab_run,
	.show = splittab_show,
};

static const struct lm_file inspect_files[] = {
	{ "state", 0444, &state_fops },
	{ "counts", 0444, &counts_fops },
	{ "leaf", 0444, &leaf_fops },
	{ "split_tables", 0644, NULL, &splittab_cmd },
};

LM_FEATURE(inspect, NULL);
