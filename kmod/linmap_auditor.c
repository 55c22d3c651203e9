// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test auditor: walk the whole linear map and check its invariants,
 * leaf by leaf and table by table. Other features run it after they change
 * the linear map; "audit" shows a run, "audit_selftest" (and the KUnit
 * suite in linmap_kunit.c) feeds its checks made-up entries with one fault
 * each.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bsearch.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "linmap.h"

/* The runs still to report a made-up violation ("audit" race=N). */
atomic_t lm_audit_races = ATOMIC_INIT(0);

static __printf(3, 4) void audit_bad(struct lm_audit *a, unsigned long addr,
				     const char *fmt, ...)
{
	va_list args;
	int n;

	a->violations++;
	if (a->shown >= LM_AUDIT_SHOWN)
		return;
	n = scnprintf(a->msg[a->shown], sizeof(a->msg[0]), "0x%lx: ", addr);
	va_start(args, fmt);
	vscnprintf(a->msg[a->shown] + n, sizeof(a->msg[0]) - n, fmt, args);
	va_end(args);
	a->shown++;
}

static void audit_table(struct lm_audit *a, void *table)
{
	/* By page: a table met twice at two offsets is still one page. */
	if (a->tables < a->max_tables)
		a->table_pa[a->tables] = __pa(table) & PAGE_MASK;
	else
		a->table_overflow = true;
	a->tables++;
}

static int audit_add_ram(unsigned long pfn, unsigned long nr, void *arg)
{
	struct lm_audit *a = arg;

	if (a->nr_ram && a->ram[a->nr_ram - 1].end == pfn) {
		a->ram[a->nr_ram - 1].end += nr;
		return 0;
	}
	if (a->nr_ram == ARRAY_SIZE(a->ram))
		return -ENOSPC;
	a->ram[a->nr_ram].start = pfn;
	a->ram[a->nr_ram].end = pfn + nr;
	a->nr_ram++;
	return 0;
}

/* Fill a->ram with System RAM; non-zero if it cannot be listed. */
int lm_audit_ram(struct lm_audit *a)
{
	a->nr_ram = 0;
	if (lm_sym.walk_system_ram_range(0, PHYS_PFN(PHYS_MASK) + 1, a,
					 audit_add_ram) || !a->nr_ram)
		return -ENOSPC;
	return 0;
}

/* Is [pfn, pfn + nr) inside one System RAM range? */
static bool audit_in_ram(struct lm_audit *a, unsigned long pfn,
			 unsigned long nr)
{
	unsigned int i;

	for (i = 0; i < a->nr_ram; i++)
		if (pfn >= a->ram[i].start && pfn + nr <= a->ram[i].end)
			return true;
	return false;
}

void lm_audit_leaf(struct lm_audit *a, unsigned long addr, unsigned long size,
		   u64 val, phys_addr_t pa, const char *level)
{
	unsigned long pfn;

	a->leaves++;
	if (!(val & PTE_VALID))
		a->invalid_leaves++;
	/*
	 * A block made invalid must stay present (PTE_PRESENT_INVALID) so
	 * that pmd_leaf() and pud_leaf() still see a leaf: the generic page
	 * walker (ptdump, the W^X scan) would take it for a table.
	 */
	if (size > PAGE_SIZE && !(val & PTE_VALID) && !(val & PTE_PRESENT_INVALID))
		audit_bad(a, addr, "%s is invalid but not present-invalid: walkers take it for a table (0x%llx)",
			  level, val);
	if (pa != __pa(addr))
		audit_bad(a, addr, "%s maps %pa, not its linear address", level,
			  &pa);
	else if (!IS_ALIGNED(pa, size))
		audit_bad(a, addr, "%s output %pa is not aligned", level, &pa);
	if (!(val & PTE_PXN))
		audit_bad(a, addr, "%s is executable", level);
	if (a->ki_ro && addr < a->ki_end && addr + size > a->ki_start &&
	    (!(val & PTE_VALID) || !(val & PTE_RDONLY) || (val & PTE_WRITE)))
		audit_bad(a, addr, "%s maps the kernel image alias writable or invalid (0x%llx)",
			  level, val);
	pfn = PHYS_PFN(pa);
	if (!pfn_is_map_memory(pfn) ||
	    !pfn_is_map_memory(pfn + (size >> PAGE_SHIFT) - 1) ||
	    !audit_in_ram(a, pfn, size >> PAGE_SHIFT))
		audit_bad(a, addr, "%s maps %pa+0x%lx, not all memblock memory",
			  level, &pa, size);
	a->pages_checked += size >> PAGE_SHIFT;
}
EXPORT_SYMBOL_GPL(lm_audit_leaf);

/*
 * A contiguous group must be all-contiguous or not at all, aligned, and
 * entry i must equal entry 0 plus i * @step: same attributes and validity,
 * physically contiguous output.
 */
void lm_audit_cont(struct lm_audit *a, unsigned long addr, u64 *vals,
		   unsigned int nr, unsigned long step, const char *level)
{
	unsigned int i, cont = 0;

	for (i = 0; i < nr; i++)
		cont += !!(vals[i] & PTE_CONT);
	if (!cont)
		return;
	if (cont != nr) {
		audit_bad(a, addr, "%s group has %u of %u entries contiguous",
			  level, cont, nr);
		return;
	}
	if (!IS_ALIGNED(__pte_to_phys(__pte(vals[0])), nr * step))
		audit_bad(a, addr, "%s group output is not aligned", level);
	for (i = 1; i < nr; i++) {
		if (vals[i] != vals[0] + i * step) {
			audit_bad(a, addr, "%s group entry %u is 0x%llx, wants 0x%llx",
				  level, i, vals[i], vals[0] + i * step);
			return;
		}
	}
}
EXPORT_SYMBOL_GPL(lm_audit_cont);

static int audit_walk_leaf(struct lm_walk *w, int kind, void *ptr,
			   unsigned long addr, u64 val)
{
	lm_audit_leaf(w->priv, addr, lm_kind_size[kind], val,
		      __pte_to_phys(__pte(val)), lm_kind_name[kind]);
	return 0;
}

/* The groups of CONT_PTES entries of a PTE table, from its first entry. */
static void audit_pte_groups(struct lm_audit *a, pte_t *first,
			     unsigned long addr, unsigned long end)
{
	u64 vals[CONT_PTES];
	unsigned int i;

	for (; addr < end; addr += CONT_PTE_SIZE, first += CONT_PTES) {
		for (i = 0; i < CONT_PTES; i++)
			vals[i] = pte_val(__ptep_get(first + i));
		lm_audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "cont_pte");
	}
}

/*
 * The groups of CONT_PMDS entries ending in [addr, end), found by pointer:
 * when the level is folded, the walk sees a single entry of the PGD, and
 * the group's other entries are its neighbours there.
 */
static void audit_pmd_groups(struct lm_audit *a, pmd_t *first,
			     unsigned long addr, unsigned long end)
{
	u64 vals[CONT_PMDS];
	unsigned int i, j;

	for (i = 0; addr < end; i++, addr += PMD_SIZE) {
		pmd_t *group = first + i - (CONT_PMDS - 1);

		if (!IS_ALIGNED(addr + PMD_SIZE, CONT_PMD_SIZE))
			continue;
		for (j = 0; j < CONT_PMDS; j++) {
			pmd_t pmd = READ_ONCE(group[j]);

			vals[j] = pmd_table(pmd) ? 0 : pmd_val(pmd);
		}
		lm_audit_cont(a, addr + PMD_SIZE - CONT_PMD_SIZE, vals,
			      CONT_PMDS, PMD_SIZE, "cont_pmd");
	}
}

/*
 * A kernel that splits its linear map counts the tables it adds at run
 * time (splits, hot-add) in PageTables: each table page that is not boot
 * memory has the page-table type.
 */
static void audit_table_type(struct lm_audit *a, void *table,
			     unsigned long addr)
{
	struct page *page = virt_to_page(table);

	if (lm_sym.split_kernel_leaf_mapping && !PageReserved(page) &&
	    !PageTable(page))
		audit_bad(a, addr, "table page at 0x%llx is no page table: missing from PageTables",
			  (u64)__pa(table));
}

static void audit_walk_table(struct lm_walk *w, enum lm_level level,
			     void *ptr, unsigned long addr, unsigned long end,
			     bool folded, unsigned int used)
{
	struct lm_audit *a = w->priv;

	/* A folded level is its parent's entry, no table page of its own. */
	if (!folded) {
		audit_table(a, ptr);
		audit_table_type(a, ptr, addr);
	}
	if (level == LM_LVL_PTE)
		audit_pte_groups(a, ptr, addr, end);
	else if (level == LM_LVL_PMD)
		audit_pmd_groups(a, ptr, addr, end);
	if (!used && !folded && level >= LM_LVL_PMD)
		audit_bad(a, addr, "empty %s table",
			  level == LM_LVL_PTE ? "PTE" : "PMD");
}

static int cmp_pa(const void *x, const void *y)
{
	phys_addr_t a = *(const phys_addr_t *)x, b = *(const phys_addr_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Each table page is referenced once and, with @check_free, is not free
 * (lm_audit_tables() checks that under the lock, during its walk).
 */
static void audit_tables(struct lm_audit *a, bool check_free)
{
	unsigned long i;

	if (a->table_overflow) {
		audit_bad(a, 0, "more table pages than expected: %lu",
			  a->tables);
		return;
	}
	sort(a->table_pa, a->tables, sizeof(phys_addr_t), cmp_pa, NULL);
	for (i = 0; i < a->tables; i++) {
		phys_addr_t pa = a->table_pa[i];

		if (i && pa == a->table_pa[i - 1])
			audit_bad(a, (unsigned long)__va(pa),
				  "table page referenced twice");
		if (check_free && !page_ref_count(phys_to_page(pa)))
			audit_bad(a, (unsigned long)__va(pa),
				  "table page is free");
	}
}

/* A fresh audit, with room for twice the table pages @c counts now. */
static int audit_start(struct lm_audit *a, struct lm_counts *c)
{
	lm_count(c);
	memset(a, 0, sizeof(*a));
	a->max_tables = c->table_pages * 2 + 1024;
	a->table_pa = kvmalloc_array(a->max_tables, sizeof(phys_addr_t),
				     GFP_KERNEL);
	return a->table_pa ? 0 : -ENOMEM;
}

static void audit_struct_table(struct lm_walk *w, enum lm_level level,
			       void *ptr, unsigned long addr, unsigned long end,
			       bool folded, unsigned int used)
{
	struct lm_audit *a = w->priv;

	if (folded)
		return;
	audit_table(a, ptr);
	audit_table_type(a, ptr, addr);
	/* Here, under the lock: a pass may free the page once it is dropped. */
	if (!page_ref_count(virt_to_page(ptr)))
		audit_bad(a, addr, "table page is free");
	if (!used && level >= LM_LVL_PMD)
		audit_bad(a, addr, "empty %s table",
			  level == LM_LVL_PTE ? "PTE" : "PMD");
}

int lm_audit_tables(struct lm_audit *a)
{
	static const struct lm_walk_ops ops = { .table = audit_struct_table };
	struct lm_walk w = { .ops = &ops, .priv = a, .split_lock = true };
	struct lm_counts *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int ret = c ? audit_start(a, c) : -ENOMEM;

	kfree(c);
	if (ret)
		return ret;
	lm_walk_linear(&w);
	audit_tables(a, false);
	return 0;
}

/* The kernel's DirectMap counts must match a locked walk byte for byte. */
static void audit_directmap(struct lm_audit *a)
{
	u64 walk[LM_NR_KINDS], kern[LM_NR_KINDS];
	int k;

	a->directmap = -1;
	if (lm_directmap(walk, kern))
		return;
	a->directmap = 1;
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (walk[k] == kern[k])
			continue;
		a->directmap = 0;
		audit_bad(a, 0, "DirectMap %s: kernel counts %llu bytes, walk finds %llu",
			  lm_kind_name[k], kern[k], walk[k]);
	}
}

/*
 * Walk the linear map and check every leaf and table. Run it with nothing
 * else changing the linear map: a split racing with the walk may look
 * like a violation.
 */
int lm_audit_run(struct lm_audit *a)
{
	static const struct lm_walk_ops ops = {
		.leaf = audit_walk_leaf, .table = audit_walk_table,
	};
	struct lm_walk w = { .ops = &ops, .priv = a };
	struct lm_counts *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	if (audit_start(a, c)) {
		kfree(c);
		return -ENOMEM;
	}
	/* map_mem() maps [_stext, __init_begin) apart, read-only later. */
	a->ki_start = (unsigned long)__va(__pa_symbol(lm_sym.text_start));
	a->ki_end = (unsigned long)__va(__pa_symbol(lm_sym.init_begin));
	a->ki_ro = lm_sym.rodata_enabled ? *lm_sym.rodata_enabled : true;
	if (lm_audit_ram(a))
		audit_bad(a, 0, "cannot list System RAM (%u ranges)", a->nr_ram);
	if (atomic_add_unless(&lm_audit_races, -1, 0))
		audit_bad(a, 0, "made up: a change met during the walk (audit race=)");
	/*
	 * A background collapse pass (restores queue one) must not fold a
	 * table away between the walk and the count: hold folds off, as
	 * trans_pgd's copy does, where the kernel folds.
	 */
	if (lm_sym.hold_folds)
		lm_sym.hold_folds();
	lm_walk_linear(&w);
	audit_tables(a, true);
	/* The counting walk, run again, must agree. */
	lm_count(c);
	if (lm_sym.hold_folds)
		lm_sym.release_folds();
	a->tables_counted = c->table_pages;
	if (a->tables_counted != a->tables)
		audit_bad(a, 0, "table pages: counted %lu, audited %lu",
			  a->tables_counted, a->tables);
	kfree(c);
	audit_directmap(a);
	return 0;
}

bool lm_audit_has_table(struct lm_audit *a, phys_addr_t pa)
{
	return bsearch(&pa, a->table_pa, min(a->tables, a->max_tables),
		       sizeof(phys_addr_t), cmp_pa);
}

void lm_audit_free(struct lm_audit *a)
{
	kvfree(a->table_pa);
	a->table_pa = NULL;
}

long lm_audit_once(char *first, size_t size)
{
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	long ret = -ENOMEM;

	if (a)
		ret = lm_audit_run(a);
	if (!ret) {
		ret = a->violations;
		if (a->shown && first && !first[0])
			strscpy(first, a->msg[0], size);
	}
	if (a)
		lm_audit_free(a);
	kfree(a);
	return ret;
}

void lm_audit_show(struct seq_file *m, const char *prefix, struct lm_audit *a)
{
	unsigned int i;

	seq_printf(m, "%sviolations=%lu\n", prefix, a->violations);
	seq_printf(m, "%sleaves=%lu\n", prefix, a->leaves);
	seq_printf(m, "%sinvalid_leaves=%lu\n", prefix, a->invalid_leaves);
	seq_printf(m, "%spages_checked=%lu\n", prefix, a->pages_checked);
	seq_printf(m, "%stable_pages=%lu\n", prefix, a->tables);
	seq_printf(m, "%stable_pages_counted=%lu\n", prefix,
		   a->tables_counted);
	seq_printf(m, "%skimage_alias_ro=%d\n", prefix, a->ki_ro);
	seq_printf(m, "%sdirectmap=%s\n", prefix, a->directmap < 0 ?
		   "no_counts" : a->directmap ? "exact" : "mismatch");
	for (i = 0; i < a->shown; i++)
		seq_printf(m, "%sviolation.%u=%s\n", prefix, i, a->msg[i]);
}
