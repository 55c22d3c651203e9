// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "audit" and "audit_selftest": a run of the auditor over the
 * live linear map (a write of "race=N" makes the next N runs each report a
 * made-up violation), and the auditor's own test. The test feeds the checks
 * made-up entries, each case with one fault (or none), and compares the
 * violations found with those wanted; nothing is written to the page
 * tables. The same cases run as a KUnit suite (linmap_kunit.c).
 */

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "linmap.h"

enum {
	C_CONT_GOOD, C_CONT_ATTR, C_CONT_BIT, C_CONT_INVALID, C_CONT_SHIFTED,
	C_LEAF_GOOD, C_LEAF_OUTPUT, C_LEAF_EXEC, C_LEAF_NOT_RAM,
	C_KIMAGE_WRITABLE, C_KIMAGE_RO, C_BLOCK_INVALID, C_BLOCK_NOT_PRESENT,
	LM_AUDIT_NR_CASES
};

static const struct {
	const char *name;
	unsigned long want;
} audit_cases[LM_AUDIT_NR_CASES] = {
	[C_CONT_GOOD]		= { "cont_group_sound", 0 },
	[C_CONT_ATTR]		= { "cont_entry_other_attributes", 1 },
	[C_CONT_BIT]		= { "cont_entry_without_cont_bit", 1 },
	[C_CONT_INVALID]	= { "cont_entry_invalid", 1 },
	[C_CONT_SHIFTED]	= { "cont_group_output_misaligned", 1 },
	[C_LEAF_GOOD]		= { "leaf_sound", 0 },
	[C_LEAF_OUTPUT]		= { "leaf_wrong_output", 1 },
	[C_LEAF_EXEC]		= { "leaf_executable", 1 },
	[C_LEAF_NOT_RAM]	= { "leaf_beyond_ram", 1 },
	[C_KIMAGE_WRITABLE]	= { "kimage_alias_writable", 1 },
	[C_KIMAGE_RO]		= { "kimage_alias_read_only", 0 },
	[C_BLOCK_INVALID]	= { "block_present_invalid", 0 },
	[C_BLOCK_NOT_PRESENT]	= { "block_invalid_not_present", 1 },
};

unsigned int lm_audit_nr_cases(void)
{
	return LM_AUDIT_NR_CASES;
}
EXPORT_SYMBOL_GPL(lm_audit_nr_cases);

const char *lm_audit_case_name(unsigned int i)
{
	return audit_cases[i].name;
}
EXPORT_SYMBOL_GPL(lm_audit_case_name);

/*
 * Run case @i on made-up entries around the zero page, aligned beyond the
 * largest size a case uses. Returns the violations found (-ENOMEM if it
 * could not run); *want is what the case should find.
 */
long lm_audit_case(unsigned int i, unsigned long *want)
{
	unsigned long addr = (unsigned long)page_address(ZERO_PAGE(0));
	u64 vals[CONT_PTES], prot;
	struct lm_audit *a;
	unsigned int j;
	long found;
	phys_addr_t pa;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	*want = audit_cases[i].want;
	addr = ALIGN_DOWN(addr, CONT_PTE_SIZE * 2);
	pa = __pa(addr);
	prot = pgprot_val(PAGE_KERNEL) | PTE_CONT;
	for (j = 0; j < CONT_PTES; j++)
		vals[j] = pte_val(pfn_pte(PHYS_PFN(pa) + j, __pgprot(prot)));
	a->nr_ram = 1;
	a->ram[0].start = PHYS_PFN(pa);
	a->ram[0].end = PHYS_PFN(pa) + CONT_PTES;
	a->ki_start = addr;
	a->ki_end = addr + PAGE_SIZE;

	switch (i) {
	case C_CONT_ATTR:
		vals[3] |= PTE_RDONLY;
		break;
	case C_CONT_BIT:
		vals[5] &= ~PTE_CONT;
		break;
	case C_CONT_INVALID:
		vals[CONT_PTES - 1] &= ~PTE_VALID;
		break;
	case C_CONT_SHIFTED:
		for (j = 0; j < CONT_PTES; j++)
			vals[j] += PAGE_SIZE;
		break;
	case C_LEAF_OUTPUT:
		pa += PAGE_SIZE;
		break;
	case C_LEAF_EXEC:
		vals[0] &= ~PTE_PXN;
		break;
	case C_KIMAGE_RO:
		vals[0] = (vals[0] | PTE_RDONLY) & ~PTE_WRITE;
		fallthrough;
	case C_KIMAGE_WRITABLE:
		a->ki_ro = true;
		break;
	case C_BLOCK_INVALID:
		vals[0] = (vals[0] & ~PTE_VALID) | PTE_PRESENT_INVALID;
		break;
	case C_BLOCK_NOT_PRESENT:
		vals[0] &= ~(PTE_VALID | PTE_PRESENT_INVALID);
		break;
	}
	if (i <= C_CONT_SHIFTED)
		lm_audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "t");
	else if (i >= C_BLOCK_INVALID)
		/* A leaf larger than a page, as a block is. */
		lm_audit_leaf(a, addr, CONT_PTE_SIZE, vals[0] & ~PTE_CONT, pa, "t");
	else
		lm_audit_leaf(a, addr, i == C_LEAF_NOT_RAM ?
			      CONT_PTE_SIZE * 2 : PAGE_SIZE, vals[0], pa, "t");
	found = a->violations;
	kfree(a);
	return found;
}
EXPORT_SYMBOL_GPL(lm_audit_case);

static int audit_selftest_show(struct seq_file *m, void *v)
{
	unsigned long want, missed = 0;
	unsigned int i;
	long found;

	for (i = 0; i < LM_AUDIT_NR_CASES; i++) {
		found = lm_audit_case(i, &want);
		if (found < 0)
			return found;
		missed += found != want;
		seq_printf(m, "case.%s=%s\n", audit_cases[i].name,
			   found == want ? "ok" : "missed");
	}
	seq_printf(m, "cases=%u\nmissed=%lu\n", LM_AUDIT_NR_CASES, missed);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(audit_selftest);

static int audit_show(struct seq_file *m, void *v)
{
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	int ret;

	if (!a)
		return -ENOMEM;
	mutex_lock(&lm_lock);
	ret = lm_audit_run(a);
	mutex_unlock(&lm_lock);
	if (!ret)
		lm_audit_show(m, "", a);
	lm_audit_free(a);
	kfree(a);
	return ret;
}

/*
 * "race=N": the next N runs of the auditor each report one violation, as a
 * walk that met a change made elsewhere does; the selftests' retry of a
 * walk (lm_audit()) is tested with it.
 */
static ssize_t audit_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	char buf[32];
	unsigned int n;
	int ret;

	ret = lm_copy_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	strim(buf);
	if (strncmp(buf, "race=", 5) || kstrtouint(buf + 5, 0, &n))
		return -EINVAL;
	atomic_set(&lm_audit_races, n);
	return len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(audit);

static const struct lm_file audit_files[] = {
	{ "audit", 0644, &audit_fops },
	{ "audit_selftest", 0444, &audit_selftest_fops },
};

LM_FEATURE(audit, NULL);
