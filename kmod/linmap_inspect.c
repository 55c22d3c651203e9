// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "state", "counts" and "leaf": what the kernel says about its
 * linear map, the leaves and table pages a walk finds, and the leaf that
 * maps one address (LM_IOC_LEAF).
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

static const struct lm_file inspect_files[] = {
	{ "state", 0444, &state_fops },
	{ "counts", 0444, &counts_fops },
	{ "leaf", 0444, &leaf_fops },
};

LM_FEATURE(inspect, NULL);
