// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test, reliability part:
 *
 *   audit    walk the whole linear map and check its invariants;
 *   cpa      random concurrent permission and validity changes, checked
 *            against a shadow model by page-table walk and by fault-safe
 *            probes;
 *   inject   fail each page-table allocation of a split or of a memory
 *            hot-add in turn (needs the test-only linmap_inject hook) and
 *            check that the mapping survives and nothing leaks;
 *   hotplug  hot-add memory, check that its linear map follows the same
 *            policy as boot memory, hot-remove it.
 *
 * See Documentation/testing.rst in the kit for the file formats.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bsearch.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/arch_timer.h>
#include <asm/tlbflush.h>

#include "linmap_test.h"

/* ---- auditor ------------------------------------------------------------ */

#define AUDIT_SHOWN	16

struct lm_audit {
	unsigned long violations;
	unsigned long leaves, invalid_leaves, pages_checked;
	unsigned long tables, tables_counted;
	unsigned long ki_start, ki_end;
	bool ki_ro;
	/* System RAM (memblock memory less NOMAP), adjacent ranges merged. */
	unsigned int nr_ram;
	struct { unsigned long start, end; } ram[64];
	/* Every table page seen, to find shared, free or leaked ones. */
	phys_addr_t *table_pa;
	unsigned long max_tables;
	bool table_overflow;
	unsigned int shown;
	char msg[AUDIT_SHOWN][128];
};

static __printf(3, 4) void audit_bad(struct lm_audit *a, unsigned long addr,
				     const char *fmt, ...)
{
	va_list args;
	int n;

	a->violations++;
	if (a->shown >= AUDIT_SHOWN)
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

static void audit_leaf(struct lm_audit *a, unsigned long addr,
		       unsigned long size, u64 val, phys_addr_t pa,
		       const char *level)
{
	unsigned long pfn;

	a->leaves++;
	if (!(val & PTE_VALID))
		a->invalid_leaves++;
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

/*
 * A contiguous group must be all-contiguous or not at all, aligned, and
 * entry i must equal entry 0 plus i * @step: same attributes and validity,
 * physically contiguous output.
 */
static void audit_cont(struct lm_audit *a, unsigned long addr, u64 *vals,
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

static void audit_pte_table(struct lm_audit *a, pmd_t *pmdp,
			    unsigned long addr)
{
	pte_t *base = pte_offset_kernel(pmdp, addr);
	u64 vals[CONT_PTES];
	unsigned int i, used = 0;

	audit_table(a, base);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		unsigned long va = addr + i * PAGE_SIZE;
		pte_t pte = __ptep_get(base + i);

		vals[i % CONT_PTES] = pte_val(pte);
		if (!pte_none(pte)) {
			used++;
			audit_leaf(a, va, PAGE_SIZE, pte_val(pte),
				   PFN_PHYS(pte_pfn(pte)),
				   pte_cont(pte) ? "cont_pte" : "pte");
		}
		if (i % CONT_PTES == CONT_PTES - 1)
			audit_cont(a, va - (CONT_PTES - 1) * PAGE_SIZE, vals,
				   CONT_PTES, PAGE_SIZE, "cont_pte");
	}
	if (!used)
		audit_bad(a, addr, "empty PTE table");
}

static void audit_pmd_table(struct lm_audit *a, pud_t *pudp,
			    unsigned long addr, unsigned long end)
{
	pmd_t *base = pmd_offset(pudp, addr);
	bool folded = mm_pmd_folded(sym.init_mm);
	u64 vals[CONT_PMDS];
	unsigned int i, j, used = 0, n = (end - addr) / PMD_SIZE;

	/* Folded into the PGD, an entry is no table page of its own. */
	if (!folded)
		audit_table(a, base);
	for (i = 0; i < n; i++) {
		unsigned long va = addr + i * PMD_SIZE;
		pmd_t pmd = READ_ONCE(base[i]);

		if (!pmd_none(pmd)) {
			used++;
			if (pmd_table(pmd))
				audit_pte_table(a, base + i, va);
			else
				audit_leaf(a, va, PMD_SIZE, pmd_val(pmd),
					   PFN_PHYS(pmd_pfn(pmd)),
					   pmd_cont(pmd) ? "cont_pmd" : "pmd");
		}
		/*
		 * At the last entry of a contiguous group, check the group.
		 * It is found by pointer: when the level is folded, this
		 * call sees a single entry of the PGD, and the group's other
		 * entries are its neighbours there.
		 */
		if (IS_ALIGNED(va + PMD_SIZE, CONT_PMD_SIZE)) {
			pmd_t *first = base + i - (CONT_PMDS - 1);

			for (j = 0; j < CONT_PMDS; j++) {
				pmd = READ_ONCE(first[j]);
				vals[j] = pmd_table(pmd) ? 0 : pmd_val(pmd);
			}
			audit_cont(a, va + PMD_SIZE - CONT_PMD_SIZE, vals,
				   CONT_PMDS, PMD_SIZE, "cont_pmd");
		}
		if (!(i & 63))
			cond_resched();
	}
	if (!used && !folded)
		audit_bad(a, addr, "empty PMD table");
}

static void audit_pud_table(struct lm_audit *a, p4d_t *p4dp,
			    unsigned long addr, unsigned long end)
{
	pud_t *pudp = pud_offset(p4dp, addr);
	unsigned long next;

	/* A folded PUD level has no table page of its own. */
	if (!mm_pud_folded(sym.init_mm))
		audit_table(a, pudp);
	do {
		pud_t pud = READ_ONCE(*pudp);

		next = pud_addr_end(addr, end);
		if (pud_none(pud))
			continue;
		if (pud_table(pud))
			audit_pmd_table(a, pudp, addr, next);
		else
			audit_leaf(a, addr, PUD_SIZE, pud_val(pud),
				   PFN_PHYS(pud_pfn(pud)), "pud");
	} while (pudp++, addr = next, addr != end);
}

/* The P4D level is a table of its own only with five levels (LPA2). */
static void audit_p4d_table(struct lm_audit *a, pgd_t *pgdp,
			    unsigned long addr, unsigned long end)
{
	p4d_t *p4dp = p4d_offset(pgdp, addr);
	unsigned long next;

	if (!mm_p4d_folded(sym.init_mm))
		audit_table(a, p4dp);
	do {
		next = p4d_addr_end(addr, end);
		if (p4d_none(READ_ONCE(*p4dp)))
			continue;
		audit_pud_table(a, p4dp, addr, next);
	} while (p4dp++, addr = next, addr != end);
}

static int cmp_pa(const void *x, const void *y)
{
	phys_addr_t a = *(const phys_addr_t *)x, b = *(const phys_addr_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Walk the linear map and check every leaf and table. Run it with nothing
 * else changing the linear map: a split racing with the walk may look
 * like a violation.
 */
static int lm_audit_run(struct lm_audit *a)
{
	unsigned long addr = PAGE_OFFSET, end = PAGE_END, next, i;
	struct lm_counts *c;
	pgd_t *pgdp;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	lm_count(c);
	memset(a, 0, sizeof(*a));
	a->max_tables = c->table_pages * 2 + 1024;
	a->table_pa = kvmalloc_array(a->max_tables, sizeof(phys_addr_t),
				     GFP_KERNEL);
	if (!a->table_pa) {
		kfree(c);
		return -ENOMEM;
	}
	/* map_mem() maps [_stext, __init_begin) apart, read-only later. */
	a->ki_start = (unsigned long)__va(__pa_symbol(sym.text_start));
	a->ki_end = (unsigned long)__va(__pa_symbol(sym.init_begin));
	a->ki_ro = sym.rodata_enabled ? *sym.rodata_enabled : true;
	if (sym.walk_system_ram_range(0, PHYS_PFN(PHYS_MASK) + 1, a,
				      audit_add_ram) ||
	    !a->nr_ram)
		audit_bad(a, 0, "cannot list System RAM (%u ranges)", a->nr_ram);

	lm_walk_lock();
	pgdp = pgd_offset_pgd(sym.init_mm->pgd, addr);
	do {
		next = pgd_addr_end(addr, end);
		if (pgd_none(READ_ONCE(*pgdp)))
			continue;
		audit_p4d_table(a, pgdp, addr, next);
	} while (pgdp++, addr = next, addr != end);
	lm_walk_unlock();

	/* Each table page is referenced once and is not free. */
	if (!a->table_overflow) {
		sort(a->table_pa, a->tables, sizeof(phys_addr_t), cmp_pa, NULL);
		for (i = 0; i < a->tables; i++) {
			phys_addr_t pa = a->table_pa[i];

			if (i && pa == a->table_pa[i - 1])
				audit_bad(a, (unsigned long)__va(pa),
					  "table page referenced twice");
			if (!page_ref_count(phys_to_page(pa)))
				audit_bad(a, (unsigned long)__va(pa),
					  "table page is free");
		}
	} else {
		audit_bad(a, 0, "more table pages than expected: %lu",
			  a->tables);
	}
	/* The counting walk and this one must agree. */
	lm_count(c);
	a->tables_counted = c->table_pages;
	if (a->tables_counted != a->tables)
		audit_bad(a, 0, "table pages: counted %lu, audited %lu",
			  a->tables_counted, a->tables);
	kfree(c);
	return 0;
}

#ifdef LINMAP_INJECT_MAX_PAGES
/* Only the failure injection needs this. */
static bool audit_has_table(struct lm_audit *a, phys_addr_t pa)
{
	return bsearch(&pa, a->table_pa, min(a->tables, a->max_tables),
		       sizeof(phys_addr_t), cmp_pa);
}
#endif

static void audit_free(struct lm_audit *a)
{
	kvfree(a->table_pa);
	a->table_pa = NULL;
}

static void audit_show(struct seq_file *m, const char *prefix,
		       struct lm_audit *a)
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
	for (i = 0; i < a->shown; i++)
		seq_printf(m, "%sviolation.%u=%s\n", prefix, i, a->msg[i]);
}

static int audit_show_file(struct seq_file *m, void *v)
{
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	int ret;

	if (!a)
		return -ENOMEM;
	mutex_lock(&lm_lock);
	ret = lm_audit_run(a);
	mutex_unlock(&lm_lock);
	if (!ret)
		audit_show(m, "", a);
	audit_free(a);
	kfree(a);
	return ret;
}

/*
 * The auditor's own test: feed its checks made-up entries, each with one
 * fault, and count the faults it misses. Nothing is written to the page
 * tables.
 */
static int audit_selftest_show(struct seq_file *m, void *v)
{
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	unsigned long addr = (unsigned long)page_address(ZERO_PAGE(0));
	unsigned long cases = 0, missed = 0, i;
	u64 vals[CONT_PTES], good[CONT_PTES], prot;
	phys_addr_t pa;

	if (!a)
		return -ENOMEM;
	/* Aligned beyond the largest size the cases below use. */
	addr = ALIGN_DOWN(addr, CONT_PTE_SIZE * 2);
	pa = __pa(addr);
	prot = pgprot_val(PAGE_KERNEL) | PTE_CONT;
	for (i = 0; i < CONT_PTES; i++)
		good[i] = pte_val(pfn_pte(PHYS_PFN(pa) + i, __pgprot(prot)));
	a->nr_ram = 1;
	a->ram[0].start = PHYS_PFN(pa);
	a->ram[0].end = PHYS_PFN(pa) + CONT_PTES;

#define AUDIT_EXPECT(want, stmt) do {				\
		unsigned long before = a->violations;		\
		stmt;						\
		cases++;					\
		if ((a->violations - before) != (want)) {	\
			missed++;				\
			seq_printf(m, "missed=%s\n", #stmt);	\
		}						\
	} while (0)

	memcpy(vals, good, sizeof(vals));
	AUDIT_EXPECT(0, audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "t"));
	vals[3] |= PTE_RDONLY;
	AUDIT_EXPECT(1, audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "t"));
	memcpy(vals, good, sizeof(vals));
	vals[5] &= ~PTE_CONT;
	AUDIT_EXPECT(1, audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "t"));
	memcpy(vals, good, sizeof(vals));
	vals[CONT_PTES - 1] &= ~PTE_VALID;
	AUDIT_EXPECT(1, audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "t"));
	for (i = 0; i < CONT_PTES; i++)	/* all shifted by one page */
		vals[i] = good[i] + PAGE_SIZE;
	AUDIT_EXPECT(1, audit_cont(a, addr, vals, CONT_PTES, PAGE_SIZE, "t"));
	AUDIT_EXPECT(0, audit_leaf(a, addr, PAGE_SIZE, good[0], pa, "t"));
	AUDIT_EXPECT(1, audit_leaf(a, addr, PAGE_SIZE, good[0], pa + PAGE_SIZE,
				   "t"));
	AUDIT_EXPECT(1, audit_leaf(a, addr, PAGE_SIZE, good[0] & ~PTE_PXN, pa,
				   "t"));
	AUDIT_EXPECT(1, audit_leaf(a, addr, CONT_PTE_SIZE * 2, good[0], pa,
				   "t"));
	a->ki_ro = true;
	a->ki_start = addr;
	a->ki_end = addr + PAGE_SIZE;
	AUDIT_EXPECT(1, audit_leaf(a, addr, PAGE_SIZE, good[0], pa, "t"));
	AUDIT_EXPECT(0, audit_leaf(a, addr, PAGE_SIZE,
				   (good[0] | PTE_RDONLY) & ~PTE_WRITE, pa, "t"));
#undef AUDIT_EXPECT
	seq_printf(m, "cases=%lu\nmissed=%lu\n", cases, missed);
	kfree(a);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(audit_selftest);

static int audit_open(struct inode *inode, struct file *file)
{
	return single_open(file, audit_show_file, NULL);
}

static const struct file_operations audit_fops = {
	.owner = THIS_MODULE,
	.open = audit_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ---- a whole block made invalid ----------------------------------------- */

/*
 * set_memory_valid(0) over exactly one PMD block of memory this module
 * owns: the block must stay a leaf, now invalid, that every walker still
 * sees as a leaf (the auditor, kernel_page_present()), and come back valid.
 * The first page is filled with values that look like valid PTEs, so that
 * a walker that takes the invalid block for a table reads them as such.
 */
struct inval_result {
	int ret;			/* 0, or the first error */
	const char *skip;		/* why it could not run */
	int kind_before, kind_invalid, kind_after;
	u64 val_invalid;
	int present_before, present_invalid, present_last_invalid;
	int present_after;
	unsigned long audit_violations, audit_invalid_leaves;
	char first[128];
};

static struct inval_result *inval_last;

#define INVAL_TRIES	32

static struct page *inval_alloc(unsigned int order, int *kind)
{
	struct page *tried[INVAL_TRIES], *page = NULL;
	unsigned int i, n;
	u64 val;

	*kind = -ENOMEM;
	for (n = 0; n < INVAL_TRIES && !page; n++) {
		tried[n] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		if (!tried[n])
			break;
		*kind = lm_lookup((unsigned long)page_address(tried[n]), &val);
		if (*kind == LM_PMD || *kind == LM_CONT_PMD)
			page = tried[n];
	}
	for (i = 0; i < n; i++)
		if (tried[i] && tried[i] != page)
			__free_pages(tried[i], order);
	return page;
}

static void inval_run(struct inval_result *r)
{
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	unsigned long addr, n = 1UL << order;
	struct lm_audit *a;
	struct page *page;
	u64 val;

	r->kind_before = -1;
	r->kind_invalid = -1;
	r->kind_after = -1;
	if (!sym.set_memory_valid || !sym.kernel_page_present) {
		r->skip = "the kernel has no set_memory_valid() or kernel_page_present()";
		return;
	}
	if (order > MAX_PAGE_ORDER) {
		r->skip = "a PMD block is larger than the page allocator's largest block";
		return;
	}
	/* Earlier splits leave some free blocks page-mapped: try a few. */
	page = inval_alloc(order, &r->kind_before);
	if (!page) {
		r->skip = r->kind_before == -ENOMEM ?
			  "no free PMD-sized block of memory" :
			  "no free PMD-sized block is mapped by a PMD block";
		return;
	}
	addr = (unsigned long)page_address(page);
	memset((void *)addr, 0xff, PAGE_SIZE);
	r->present_before = sym.kernel_page_present(page);
	r->ret = sym.set_memory_valid(addr, n, 0);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first), "set_memory_valid(0) returned %d",
			  r->ret);
		goto out;
	}
	r->kind_invalid = lm_lookup(addr, &r->val_invalid);
	r->present_invalid = sym.kernel_page_present(page);
	r->present_last_invalid = sym.kernel_page_present(page + n - 1);
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (a) {
		if (!lm_audit_run(a)) {
			r->audit_violations = a->violations;
			r->audit_invalid_leaves = a->invalid_leaves;
			if (a->shown)
				strscpy(r->first, a->msg[0], sizeof(r->first));
		}
		audit_free(a);
		kfree(a);
	}
	r->ret = sym.set_memory_valid(addr, n, 1);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first), "set_memory_valid(1) returned %d",
			  r->ret);
		/* Never hand invalid memory back to the allocator. */
		return;
	}
	r->kind_after = lm_lookup(addr, &val);
	r->present_after = sym.kernel_page_present(page);
out:
	__free_pages(page, order);
}

static int inval_show(struct seq_file *m, void *v)
{
	struct inval_result *r;

	mutex_lock(&lm_lock);
	r = inval_last;
	if (!r) {
		seq_puts(m, "none\n");
		goto out;
	}
	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\n", r->ret);
	seq_printf(m, "kind_before=%s\nkind_invalid=%s\nkind_after=%s\n",
		   r->kind_before < 0 ? "none" : kind_name[r->kind_before],
		   r->kind_invalid < 0 ? "none" : kind_name[r->kind_invalid],
		   r->kind_after < 0 ? "none" : kind_name[r->kind_after]);
	seq_printf(m, "valid_bit_invalid=%d\n",
		   !!(r->val_invalid & PTE_VALID));
	seq_printf(m, "present_before=%d\npresent_invalid=%d\n",
		   r->present_before, r->present_invalid);
	seq_printf(m, "present_last_invalid=%d\npresent_after=%d\n",
		   r->present_last_invalid, r->present_after);
	seq_printf(m, "audit.violations=%lu\naudit.invalid_leaves=%lu\n",
		   r->audit_violations, r->audit_invalid_leaves);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
out:
	mutex_unlock(&lm_lock);
	return 0;
}

static ssize_t inval_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	struct inval_result *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return -ENOMEM;
	mutex_lock(&lm_lock);
	inval_run(r);
	kfree(inval_last);
	inval_last = r;
	mutex_unlock(&lm_lock);
	return len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(inval);

/* ---- cpa: random concurrent changes against a shadow model -------------- */

#define CPA_MAX_THREADS		64
#define CPA_MAX_ORDER		min(MAX_PAGE_ORDER, 9)

struct cpa_params {
	unsigned long seed, threads, ops, secs, pages, batch, aim;
};

struct cpa_stats {
	u64 ops, ro, rw, invalid, valid, batches, verified;
	u64 mismatches, call_errors, alloc_failures, retargets;
	u64 aimed, aim_calls, aim_slowed;
};

struct cpa_thread {
	struct cpa_params *p;
	struct cpa_stats s;
	struct rnd_state rnd;
	unsigned int id;
	unsigned long deadline;
	/* A vmalloc area: its pages and their linear aliases go RO/RW. */
	void *vm;
	unsigned long vm_pages;
	u8 *vm_ro;
	/* Direct-map pages: their linear map goes invalid/valid. */
	struct page *dm;
	unsigned long dm_pages;
	u8 *dm_invalid;
	char first[192];
	struct completion done;
};

struct cpa_result {
	struct cpa_params p;
	struct cpa_stats s;
	u64 elapsed_ms;
	int ret;
	char first[192];
	struct lm_audit audit;
};

static struct cpa_result *cpa_last;

static u32 cpa_rand(struct cpa_thread *t, u32 n)
{
	return n ? prandom_u32_state(&t->rnd) % n : 0;
}

static __printf(2, 3) void cpa_mismatch(struct cpa_thread *t,
					const char *fmt, ...)
{
	va_list args;
	int n;

	if (!t->s.mismatches++ && !t->first[0]) {
		n = scnprintf(t->first, sizeof(t->first),
			      "thread %u after %llu ops: ", t->id, t->s.ops);
		va_start(args, fmt);
		vscnprintf(t->first + n, sizeof(t->first) - n, fmt, args);
		va_end(args);
		pr_err("cpa: seed %lu: %s\n", t->p->seed, t->first);
	}
}

static void cpa_call_error(struct cpa_thread *t, const char *what, int ret)
{
	t->s.call_errors++;
	if (!t->first[0]) {
		scnprintf(t->first, sizeof(t->first),
			  "thread %u after %llu ops: %s returned %d",
			  t->id, t->s.ops, what, ret);
		pr_err("cpa: seed %lu: %s\n", t->p->seed, t->first);
	}
}

static void *dm_addr(struct cpa_thread *t, unsigned long i)
{
	return page_address(t->dm + i);
}

/* Give back the targets, with every permission restored first. */
static void cpa_release(struct cpa_thread *t)
{
	unsigned long i;
	int ret;

	if (t->vm) {
		ret = sym.set_memory_rw((unsigned long)t->vm, t->vm_pages);
		if (ret)
			/* Never hand read-only aliases back: keep the area. */
			cpa_call_error(t, "set_memory_rw before vfree", ret);
		else
			vfree(t->vm);
	}
	if (t->dm) {
		for (i = 0; i < t->dm_pages; i++)
			if (t->dm_invalid[i])
				sym.set_direct_map_default_noflush(t->dm + i);
		flush_tlb_kernel_range((unsigned long)dm_addr(t, 0),
				       (unsigned long)dm_addr(t, 0) +
				       t->dm_pages * PAGE_SIZE);
		__free_pages(t->dm, ilog2(t->dm_pages));
	}
	kfree(t->vm_ro);
	kfree(t->dm_invalid);
	t->vm = NULL;
	t->vm_ro = NULL;
	t->dm = NULL;
	t->dm_invalid = NULL;
}

static int cpa_acquire(struct cpa_thread *t)
{
	unsigned int order = cpa_rand(t, CPA_MAX_ORDER + 1);

	t->vm_pages = 1 + cpa_rand(t, t->p->pages);
	t->dm_pages = 1UL << order;
	t->vm = vmalloc(t->vm_pages * PAGE_SIZE);
	t->vm_ro = kcalloc(t->vm_pages, 1, GFP_KERNEL);
	t->dm = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
	t->dm_invalid = kcalloc(t->dm_pages, 1, GFP_KERNEL);
	if (!t->vm || !t->vm_ro || !t->dm || !t->dm_invalid) {
		if (t->vm)
			vfree(t->vm);
		if (t->dm)
			__free_pages(t->dm, order);
		kfree(t->vm_ro);
		kfree(t->dm_invalid);
		t->vm = NULL;
		t->vm_ro = NULL;
		t->dm = NULL;
		t->dm_invalid = NULL;
		return -ENOMEM;
	}
	t->s.retargets++;
	return 0;
}

/* A random sub-range of @n: mostly short, sometimes up to the end. */
static void cpa_range(struct cpa_thread *t, unsigned long n,
		      unsigned long *off, unsigned long *cnt)
{
	*off = cpa_rand(t, n);
	if (cpa_rand(t, 4))
		*cnt = 1 + cpa_rand(t, min(n - *off, 16UL));
	else
		*cnt = 1 + cpa_rand(t, n - *off);
}

static void cpa_op(struct cpa_thread *t)
{
	unsigned long off, cnt, i;
	u32 op = cpa_rand(t, 4);
	int ret;

	if (op < 2) {
		bool ro = op == 0;
		unsigned long addr;

		cpa_range(t, t->vm_pages, &off, &cnt);
		addr = (unsigned long)t->vm + off * PAGE_SIZE;
		ret = ro ? sym.set_memory_ro(addr, cnt) :
			   sym.set_memory_rw(addr, cnt);
		if (ret) {
			/* Documented: permissions are left unchanged. */
			cpa_call_error(t, ro ? "set_memory_ro" : "set_memory_rw",
				       ret);
		} else {
			memset(t->vm_ro + off, ro, cnt);
		}
		if (ro)
			t->s.ro++;
		else
			t->s.rw++;
	} else {
		bool inv = op == 2;

		cpa_range(t, t->dm_pages, &off, &cnt);
		for (i = off; i < off + cnt; i++) {
			ret = inv ? sym.set_direct_map_invalid_noflush(t->dm + i) :
				    sym.set_direct_map_default_noflush(t->dm + i);
			if (ret) {
				cpa_call_error(t, inv ?
					       "set_direct_map_invalid_noflush" :
					       "set_direct_map_default_noflush",
					       ret);
				break;
			}
			t->dm_invalid[i] = inv;
		}
		flush_tlb_kernel_range((unsigned long)dm_addr(t, off),
				       (unsigned long)dm_addr(t, off + cnt));
		if (inv)
			t->s.invalid++;
		else
			t->s.valid++;
	}
	t->s.ops++;
}

/* Leaf entry of a linear-map address: valid, writable. */
static void cpa_walk(unsigned long addr, bool *valid, bool *writable)
{
	u64 val = 0;
	int kind = lm_lookup(addr, &val);

	*valid = kind >= 0 && (val & PTE_VALID);
	*writable = *valid && !(val & PTE_RDONLY);
}

/* Check every page of the thread's targets, by walk and by probe. */
static void cpa_verify(struct cpa_thread *t)
{
	bool rodata_full = *sym.rodata_full;
	bool direct = sym.can_set_direct_map();
	bool valid, writable, want;
	unsigned long i;
	u8 byte;

	for (i = 0; i < t->vm_pages; i++) {
		void *va = t->vm + i * PAGE_SIZE;
		void *alias = alias_of(va);

		want = !t->vm_ro[i];
		if (lm_probe_write(va) != want)
			cpa_mismatch(t, "vmalloc page %lu of %lu: writable=%d, shadow says %d",
				     i, t->vm_pages, !want, want);
		/* The alias follows only under rodata=full. */
		want = want || !rodata_full;
		if (lm_probe_write(alias) != want)
			cpa_mismatch(t, "alias %px of vmalloc page %lu: writable=%d, shadow says %d",
				     alias, i, !want, want);
		cpa_walk((unsigned long)alias, &valid, &writable);
		if (!valid || writable != want)
			cpa_mismatch(t, "alias %px of vmalloc page %lu: walk says valid=%d writable=%d, shadow says writable=%d",
				     alias, i, valid, writable, want);
		t->s.verified++;
	}
	for (i = 0; i < t->dm_pages; i++) {
		void *la = dm_addr(t, i);

		/* Without can_set_direct_map() the calls change nothing. */
		want = !t->dm_invalid[i] || !direct;
		if (!copy_from_kernel_nofault(&byte, la, 1) != want)
			cpa_mismatch(t, "direct page %px: readable=%d, shadow says %d",
				     la, !want, want);
		if (want && !lm_probe_write(la))
			cpa_mismatch(t, "direct page %px: valid but not writable",
				     la);
		cpa_walk((unsigned long)la, &valid, &writable);
		if (valid != want || (want && !writable))
			cpa_mismatch(t, "direct page %px: walk says valid=%d writable=%d, shadow says valid=%d",
				     la, valid, writable, want);
		t->s.verified++;
	}
}

static int cpa_thread_fn(void *data)
{
	struct cpa_thread *t = data;
	unsigned long i;

	while (t->s.ops < t->p->ops && time_before(jiffies, t->deadline) &&
	       !t->s.mismatches) {
		if (!t->vm || !cpa_rand(t, 32)) {
			cpa_release(t);
			if (cpa_acquire(t)) {
				t->s.alloc_failures++;
				msleep(20);
				continue;
			}
		}
		for (i = 0; i < t->p->batch && t->s.ops < t->p->ops; i++)
			cpa_op(t);
		t->s.batches++;
		cpa_verify(t);
		cond_resched();
	}
	cpa_release(t);
	kthread_complete_and_exit(&t->done, 0);
}

static void cpa_add(struct cpa_stats *sum, const struct cpa_stats *s)
{
	const u64 *src = (const u64 *)s;
	u64 *dst = (u64 *)sum;
	unsigned int i;

	for (i = 0; i < sizeof(*s) / sizeof(u64); i++)
		dst[i] += src[i];
}

/*
 * Aimed rounds: many CPUs at one contiguous group at once. One CPU splits
 * the group at an address inside its second entry, which clears the
 * contiguous bit of all its entries one by one; the others change ranges
 * from a later entry of the group to its end, so both of their ends look
 * like boundaries once the clearing has passed their start. A
 * change that does not wait for that split meets entries still contiguous
 * across its start and fails (or worse). Every change sets PTE_VALID on
 * valid memory: the entries are rewritten with the values they had.
 * Kernels with the test-only linmap_split_delay_us hook are slowed down
 * while clearing, so that the window is wide enough to hit every time.
 */
#define AIM_DELAY_US	50

struct aim_shared {
	atomic_t ready;
	bool go;
	unsigned long group, entry, size;
	int errors[CPA_MAX_THREADS];
};

struct aim_thread {
	struct aim_shared *sh;
	unsigned int id;
	struct completion done;
};

static int aim_thread_fn(void *data)
{
	struct aim_thread *t = data;
	struct aim_shared *sh = t->sh;
	unsigned long start, end;

	/* Not a bare spin: the kernel may not preempt, and CPUs are shared. */
	atomic_inc(&sh->ready);
	/* Pairs with the release in cpa_aim(): the group is set before go. */
	while (!smp_load_acquire(&sh->go))
		cond_resched();
	if (!t->id) {
		start = sh->group + sh->entry + PAGE_SIZE;
		end = start + PAGE_SIZE;
	} else {
		/* Staggered: each starts after a few more entries are clear. */
		udelay(t->id * 2 * AIM_DELAY_US);
		start = sh->group + (1 + t->id) * sh->entry;
		end = sh->group + sh->size;
	}
	sh->errors[t->id] = sym.set_memory_valid(start, (end - start) >> PAGE_SHIFT,
						 1);
	kthread_complete_and_exit(&t->done, 0);
}

/*
 * An intact contiguous group of System RAM outside the kernel image alias
 * and the KFENCE pool: CONT_PMD if any is left, else CONT_PTE. Returns the
 * group's entry size, 0 if none.
 */
static unsigned long aim_find(struct lm_audit *ram, unsigned long *group)
{
	static const struct { int kind; unsigned long size, entry; } want[] = {
		{ LM_CONT_PMD, CONT_PMD_SIZE, PMD_SIZE },
		{ LM_CONT_PTE, CONT_PTE_SIZE, PAGE_SIZE },
	};
	unsigned long ki_start, ki_end, kf_start = 0, kf_end = 0;
	unsigned int i, r;
	u64 val;

	kimage_alias(&ki_start, &ki_end);
	kfence_pool(&kf_start, &kf_end);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		for (r = 0; r < ram->nr_ram; r++) {
			unsigned long va = ALIGN((unsigned long)__va(PFN_PHYS(ram->ram[r].start)),
						 want[i].size);
			unsigned long lim = (unsigned long)__va(PFN_PHYS(ram->ram[r].end));

			for (; va + want[i].size <= lim; va += want[i].size) {
				unsigned long last = va + want[i].size - PAGE_SIZE;
				unsigned long end = va + want[i].size;

				if (va < ki_end && end > ki_start)
					continue;
				if (va < kf_end && end > kf_start)
					continue;
				if (lm_lookup(va, &val) != want[i].kind ||
				    !(val & PTE_VALID) ||
				    lm_lookup(last, &val) != want[i].kind ||
				    !(val & PTE_VALID))
					continue;
				*group = va;
				return want[i].entry;
			}
		}
	}
	return 0;
}

static void cpa_aim(struct cpa_result *r)
{
	unsigned int nr = min_t(unsigned long, r->p.threads, CPA_MAX_THREADS);
	struct aim_shared *sh;
	struct aim_thread *th;
	struct lm_audit *ram;
	unsigned long round;
	unsigned int i, started, cpu;

	if (!sym.set_memory_valid || nr < 2 || num_online_cpus() < 2)
		return;
	sh = kzalloc(sizeof(*sh), GFP_KERNEL);
	th = kcalloc(nr, sizeof(*th), GFP_KERNEL);
	ram = kzalloc(sizeof(*ram), GFP_KERNEL);
	if (!sh || !th || !ram)
		goto out;
	if (sym.walk_system_ram_range(0, PHYS_PFN(PHYS_MASK) + 1, ram,
				      audit_add_ram))
		goto out;
	cpus_read_lock();
	if (sym.split_delay_us) {
		WRITE_ONCE(*sym.split_delay_us, AIM_DELAY_US);
		r->s.aim_slowed = 1;
	}
	for (round = 0; round < r->p.aim; round++) {
		memset(sh, 0, sizeof(*sh));
		sh->entry = aim_find(ram, &sh->group);
		if (!sh->entry)
			break;
		sh->size = sh->entry == PMD_SIZE ? CONT_PMD_SIZE : CONT_PTE_SIZE;
		cpu = cpumask_first(cpu_online_mask);
		for (i = started = 0; i < nr && cpu < nr_cpu_ids; i++) {
			struct task_struct *task;

			th[i].sh = sh;
			th[i].id = i;
			init_completion(&th[i].done);
			task = kthread_create(aim_thread_fn, &th[i],
					      "linmap_aim/%u", i);
			if (IS_ERR(task))
				break;
			/* One CPU each, so that they really run at once. */
			kthread_bind(task, cpu);
			wake_up_process(task);
			started++;
			cpu = cpumask_next(cpu, cpu_online_mask);
		}
		while (atomic_read(&sh->ready) < started)
			cond_resched();
		/* Publish the group to the threads before they start. */
		smp_store_release(&sh->go, true);
		for (i = 0; i < started; i++) {
			wait_for_completion(&th[i].done);
			r->s.aim_calls++;
			if (sh->errors[i] && !r->s.call_errors++)
				scnprintf(r->first, sizeof(r->first),
					  "aimed round %lu at %s group 0x%lx: thread %u got %d",
					  round, sh->entry == PMD_SIZE ?
					  "cont_pmd" : "cont_pte", sh->group,
					  i, sh->errors[i]);
		}
		r->s.aimed++;
		if (started < 2)
			break;
	}
	if (sym.split_delay_us)
		WRITE_ONCE(*sym.split_delay_us, 0);
	cpus_read_unlock();
out:
	kfree(ram);
	kfree(th);
	kfree(sh);
}

static int cpa_run(struct cpa_result *r)
{
	struct cpa_thread *th;
	u64 start = ktime_get_ns();
	unsigned long i, started = 0;

	if (r->p.aim)
		cpa_aim(r);
	th = kcalloc(r->p.threads, sizeof(*th), GFP_KERNEL);
	if (!th)
		return -ENOMEM;
	pr_info("cpa: seed=%lu threads=%lu ops=%lu secs=%lu pages=%lu batch=%lu aim=%lu\n",
		r->p.seed, r->p.threads, r->p.ops, r->p.secs, r->p.pages,
		r->p.batch, r->p.aim);
	for (i = 0; i < r->p.threads; i++) {
		struct cpa_thread *t = &th[i];
		struct task_struct *task;

		t->p = &r->p;
		t->id = i;
		t->deadline = jiffies + r->p.secs * HZ;
		prandom_seed_state(&t->rnd, r->p.seed + i * 0x9e3779b97f4a7c15ULL);
		init_completion(&t->done);
		task = kthread_run(cpa_thread_fn, t, "linmap_cpa/%lu", i);
		if (IS_ERR(task))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		wait_for_completion(&th[i].done);
		cpa_add(&r->s, &th[i].s);
		if (!r->first[0] && th[i].first[0])
			strscpy(r->first, th[i].first, sizeof(r->first));
	}
	kfree(th);
	r->elapsed_ms = div_u64(ktime_get_ns() - start, NSEC_PER_MSEC);
	if (started < r->p.threads)
		return -EAGAIN;
	/* Quiescent again: the whole linear map must still be sound. */
	return lm_audit_run(&r->audit);
}

static int cpa_show(struct seq_file *m, void *v)
{
	struct cpa_result *r;

	mutex_lock(&lm_lock);
	r = cpa_last;
	if (!r) {
		seq_puts(m, "none\n");
		goto out;
	}
	seq_printf(m, "seed=%lu\nthreads=%lu\nops_limit=%lu\nsecs_limit=%lu\n",
		   r->p.seed, r->p.threads, r->p.ops, r->p.secs);
	seq_printf(m, "pages=%lu\nbatch=%lu\nret=%d\n", r->p.pages, r->p.batch,
		   r->ret);
	seq_printf(m, "ops=%llu\nro=%llu\nrw=%llu\ninvalid=%llu\nvalid=%llu\n",
		   r->s.ops, r->s.ro, r->s.rw, r->s.invalid, r->s.valid);
	seq_printf(m, "batches=%llu\nverified_pages=%llu\nretargets=%llu\n",
		   r->s.batches, r->s.verified, r->s.retargets);
	seq_printf(m, "mismatches=%llu\ncall_errors=%llu\nalloc_failures=%llu\n",
		   r->s.mismatches, r->s.call_errors, r->s.alloc_failures);
	seq_printf(m, "aim=%lu\naimed_rounds=%llu\naimed_calls=%llu\naim_slowed=%llu\n",
		   r->p.aim, r->s.aimed, r->s.aim_calls, r->s.aim_slowed);
	seq_printf(m, "elapsed_ms=%llu\n", r->elapsed_ms);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
	audit_show(m, "audit.", &r->audit);
out:
	mutex_unlock(&lm_lock);
	return 0;
}

static int cpa_parse(char *buf, struct cpa_params *p)
{
	const struct lm_param params[] = {
		{ "seed", &p->seed },
		{ "threads", &p->threads },
		{ "ops", &p->ops },
		{ "secs", &p->secs },
		{ "pages", &p->pages },
		{ "batch", &p->batch },
		{ "aim", &p->aim },
	};
	int ret = lm_parse_params(buf, params, ARRAY_SIZE(params));

	if (ret)
		return ret;
	if (!p->threads || p->threads > CPA_MAX_THREADS || !p->ops ||
	    !p->secs || !p->pages || p->pages > INT_MAX || !p->batch)
		return -EINVAL;
	return 0;
}

static ssize_t cpa_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	struct cpa_result *r;
	char buf[160];
	int ret;

	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->p.seed = get_random_u32();
	r->p.threads = num_online_cpus();
	r->p.ops = 1000;
	r->p.secs = 10;
	r->p.pages = 256;
	r->p.batch = 8;
	ret = cpa_parse(buf, &r->p);
	if (ret) {
		kfree(r);
		return ret;
	}
	mutex_lock(&lm_lock);
	r->ret = cpa_run(r);
	ret = r->ret;
	if (!ret && (r->s.mismatches || r->s.call_errors ||
		     r->audit.violations))
		ret = -EIO;
	audit_free(&r->audit);
	kfree(cpa_last);
	cpa_last = r;
	mutex_unlock(&lm_lock);
	return ret ? ret : len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(cpa);

static int parse_range(const char *arg, unsigned long *start,
		       unsigned long *size)
{
	char buf[64], *comma;

	strscpy(buf, arg, sizeof(buf));
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma++ = '\0';
	if (kstrtoul(buf, 0, start) || kstrtoul(comma, 0, size))
		return -EINVAL;
	/* add_memory() checks the memory-block alignment itself. */
	if (!*size || !PAGE_ALIGNED(*start | *size))
		return -EINVAL;
	return 0;
}

/* Leaf entries of the linear map of [start, start + size) by kind. */
static void range_leaves(unsigned long start, unsigned long size,
			 unsigned long *n)
{
	unsigned long addr = (unsigned long)__va(start), end = addr + size;
	u64 val;
	int k;

	memset(n, 0, sizeof(*n) * (LM_NR_KINDS + 1));
	while (addr < end) {
		k = lm_lookup(addr, &val);
		if (k < 0) {
			n[LM_NR_KINDS]++;	/* unmapped pages */
			addr += PAGE_SIZE;
			continue;
		}
		n[k]++;
		addr = ALIGN_DOWN(addr, kind_size[k]) + kind_size[k];
		if (!(n[k] & 1023))
			cond_resched();
	}
}

#ifdef LINMAP_INJECT_MAX_PAGES
/* Only the failure injection needs this. */
static int range_unmapped(unsigned long start, unsigned long size)
{
	unsigned long n[LM_NR_KINDS + 1], k, mapped = 0;

	range_leaves(start, size, n);
	for (k = 0; k < LM_NR_KINDS; k++)
		mapped += n[k];
	return !mapped;
}
#endif

/* ---- inject: page-table allocation failures ----------------------------- */

#ifdef LINMAP_INJECT_MAX_PAGES
#define INJECT_CASES	4

struct inject_case {
	const char *name;
	const char *skip;		/* why the case did not run */
	const char *leaf;		/* kind of leaf around the target */
	int allocations;		/* needed by the operation */
	int tries, failed, ok;		/* calls made, made to fail, passed */
	int wrong_ret, lost, leaked, audit;
	char first[160];
};

static struct {
	struct inject_case c[INJECT_CASES];
	unsigned long hp_start, hp_size;
	bool done;
} inj;

static __printf(2, 3) void inj_bad(struct inject_case *c, const char *fmt,
				   ...)
{
	va_list args;

	if (c->first[0])
		return;
	va_start(args, fmt);
	vscnprintf(c->first, sizeof(c->first), fmt, args);
	va_end(args);
	pr_err("inject %s: %s\n", c->name, c->first);
}

static void inj_arm(int nth)
{
	struct linmap_inject *li = sym.inject;

	li->nth = nth;
	li->seen = 0;
	li->nr_pages = 0;
	WRITE_ONCE(li->task, current);
}

static void inj_disarm(void)
{
	WRITE_ONCE(sym.inject->task, NULL);
}

/*
 * After one call: the auditor must be clean, and every page-table page
 * handed out during the call must be in the page tables or freed. The
 * hook pinned each one, so a freed page has only that reference left and
 * cannot have been reused meanwhile; the pins are dropped here.
 */
static void inj_check(struct inject_case *c, int nth)
{
	struct linmap_inject *li = sym.inject;
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	bool audited = a && !lm_audit_run(a);
	int i;

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
		    !audit_has_table(a, pa)) {
			c->leaked++;
			inj_bad(c, "N=%d: page-table page %pa neither used nor freed",
				nth, &pa);
		}
		put_page(page);
	}
	li->nr_pages = 0;
	if (a)
		audit_free(a);
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
	if (sym.inject->seen >= nth) {
		c->failed++;
		if (!ret) {
			c->wrong_ret++;
			inj_bad(c, "N=%d: allocation failed, call returned 0",
				nth);
		}
		return true;
	}
	c->allocations = sym.inject->seen;
	if (ret) {
		c->wrong_ret++;
		inj_bad(c, "N=%d: no allocation failed, call returned %d", nth,
			ret);
	} else {
		c->ok++;
	}
	return false;
}

/* Is the page at @la mapped valid and writable, and does a write work? */
static bool inj_page_ok(void *la)
{
	bool valid, writable;

	cpa_walk((unsigned long)la, &valid, &writable);
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

	c->name = "direct_map_page";
	blk = inj_find_target(&order, &page, &kind);
	if (!blk) {
		c->skip = "no memory for a target block";
		return;
	}
	if (kind >= LM_PTE) {
		c->skip = "the linear map has no blocks or contiguous ranges to split";
		goto out;
	}
	c->leaf = kind_name[kind];
	la = page_address(page);
	for (nth = 1; nth <= LINMAP_INJECT_MAX_PAGES; nth++) {
		inj_arm(nth);
		ret = sym.set_direct_map_invalid_noflush(page);
		inj_disarm();
		flush_tlb_kernel_range((unsigned long)la,
				       (unsigned long)la + PAGE_SIZE);
		if (inj_account(c, nth, ret)) {
			if (!ret) {
				sym.set_direct_map_default_noflush(page);
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
			sym.set_direct_map_default_noflush(page);
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
	for (addr = PAGE_OFFSET; addr < (unsigned long)high_memory &&
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

	c->name = "split_block";
	if (!sym.split_kernel_leaf_mapping) {
		c->skip = "the kernel does not split the linear map";
		return;
	}
#ifdef ARM64_HAS_BBML2_NOABORT
	if (!cpus_have_cap(ARM64_HAS_BBML2_NOABORT)) {
		c->skip = "live leaves are not split without BBML2_NOABORT";
		return;
	}
#endif
	leaf = inj_largest_leaf(&kind);
	if (kind >= LM_CONT_PTE) {
		c->skip = "the linear map has no blocks to split";
		return;
	}
	c->leaf = kind_name[kind];
	leaf = ALIGN_DOWN(leaf, kind == LM_PUD ? PUD_SIZE : PMD_SIZE);
	/* Off every contiguous and block boundary. */
	addr = leaf + (CONT_PTES + 1) * PAGE_SIZE;
	/* Probes at the target, before it and after it. */
#define SPLIT_PROBE(i)	(addr + ((long)(i) - 1) * CONT_PTES * PAGE_SIZE)
	for (i = 0; i < ARRAY_SIZE(was_writable); i++)
		cpa_walk(SPLIT_PROBE(i), &valid, &was_writable[i]);
	for (nth = 1; nth <= LINMAP_INJECT_MAX_PAGES; nth++) {
		inj_arm(nth);
		ret = sym.split_kernel_leaf_mapping(addr, addr + PAGE_SIZE,
						    GFP_KERNEL);
		inj_disarm();
		inj_account(c, nth, ret);
		/* Still mapped, with the same permission, around the target. */
		for (i = 0; i < ARRAY_SIZE(was_writable); i++) {
			cpa_walk(SPLIT_PROBE(i), &valid, &writable);
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

	c->name = "vmalloc_ro";
	if (!*sym.rodata_full) {
		c->skip = "linear aliases only change with rodata=full";
		return;
	}
	vm = vmalloc(pages * PAGE_SIZE);
	if (!vm) {
		c->skip = "vmalloc failed";
		return;
	}
	for (nth = 1; nth <= LINMAP_INJECT_MAX_PAGES; nth++) {
		inj_arm(nth);
		ret = sym.set_memory_ro((unsigned long)vm, pages);
		inj_disarm();
		if (inj_account(c, nth, ret)) {
			if (!ret)
				sym.set_memory_rw((unsigned long)vm, pages);
			/* Documented: on failure nothing changed. */
			for (i = 0; i < pages; i++) {
				void *va = vm + i * PAGE_SIZE;

				if (!lm_probe_write(va) ||
				    !inj_page_ok(alias_of(va))) {
					c->lost++;
					inj_bad(c, "N=%d: page %lu changed although the call failed",
						nth, i);
					break;
				}
			}
			inj_check(c, nth);
			continue;
		}
		ret = sym.set_memory_rw((unsigned long)vm, pages);
		inj_check(c, nth);
		if (ret) {
			inj_bad(c, "set_memory_rw failed: area leaked");
			return;
		}
		break;
	}
	vfree(vm);
}

/* After a hot-add that failed or was undone: nothing left behind. */
static void inj_hot_gone(struct inject_case *c, int nth, u64 tables,
			 struct lm_counts *cnt)
{
	if (!range_unmapped(inj.hp_start, inj.hp_size)) {
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
static void inj_case_hotplug(struct inject_case *c)
{
	unsigned long start = inj.hp_start, size = inj.hp_size;
	struct lm_counts *cnt;
	u64 tables;
	int nth, ret;

	c->name = "hot_add";
	if (!sym.add_memory || !sym.remove_memory) {
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
	ret = sym.add_memory(0, start, size, 0);
	inj_disarm();
	c->tries++;
	c->allocations = sym.inject->seen;
	if (ret) {
		c->wrong_ret++;
		inj_bad(c, "add_memory returned %d", ret);
		inj_check(c, 0);
		goto out;
	}
	c->ok++;
	ret = sym.remove_memory(start, size);
	if (ret) {
		c->lost++;
		inj_bad(c, "remove_memory returned %d", ret);
		inj_check(c, 0);
		goto out;
	}
	inj_hot_gone(c, 0, tables, cnt);

	for (nth = 1; nth <= c->allocations; ) {
		inj_arm(nth);
		ret = sym.add_memory(0, start, size, 0);
		inj_disarm();
		c->tries++;
		c->failed++;
		if (!ret) {
			c->wrong_ret++;
			inj_bad(c, "N=%d: allocation failed, add_memory returned 0",
				nth);
			if (sym.remove_memory(start, size)) {
				inj_check(c, nth);
				break;
			}
		}
		inj_hot_gone(c, nth, tables, cnt);
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

static void inject_run(void)
{
	memset(inj.c, 0, sizeof(inj.c));
	inj_case_split(&inj.c[0]);
	inj_case_page(&inj.c[1]);
	inj_case_vmalloc(&inj.c[2]);
	inj_case_hotplug(&inj.c[3]);
	inj.done = true;
}

static int inject_show(struct seq_file *m, void *v)
{
	int i;

	mutex_lock(&lm_lock);
	if (!inj.done) {
		seq_puts(m, "none\n");
		goto out;
	}
	seq_printf(m, "cases=%d\n", INJECT_CASES);
	for (i = 0; i < INJECT_CASES; i++) {
		struct inject_case *c = &inj.c[i];

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
		if (c->first[0])
			seq_printf(m, "%s.first=%s\n", c->name, c->first);
	}
out:
	mutex_unlock(&lm_lock);
	return 0;
}

#else
static int inject_show(struct seq_file *m, void *v)
{
	return -EOPNOTSUPP;
}
#endif /* LINMAP_INJECT_MAX_PAGES */

/* "run" or "run hotplug=START,SIZE": every case, each N in turn. */
static ssize_t inject_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
#ifdef LINMAP_INJECT_MAX_PAGES
	char buf[96], *arg;
	int ret;

	if (!sym.inject)
		return -EOPNOTSUPP;
	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (strncmp(buf, "run", 3) || (buf[3] && buf[3] != ' '))
		return -EINVAL;
	mutex_lock(&lm_lock);
	inj.hp_start = 0;
	inj.hp_size = 0;
	arg = strstr(buf, "hotplug=");
	if (arg && parse_range(arg + 8, &inj.hp_start, &inj.hp_size)) {
		mutex_unlock(&lm_lock);
		return -EINVAL;
	}
	inject_run();
	mutex_unlock(&lm_lock);
	return len;
#else
	return -EOPNOTSUPP;
#endif
}

DEFINE_SHOW_STORE_ATTRIBUTE(inject);

/* ---- hotplug: the policy for hot-added memory --------------------------- */

static struct {
	bool done;
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
} hp;

static void hp_run(unsigned long start, unsigned long size)
{
	struct lm_counts *c = kzalloc(sizeof(*c), GFP_KERNEL);
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	unsigned long n[LM_NR_KINDS + 1], removed;
	u64 t0;

	memset(&hp, 0, sizeof(hp));
	hp.done = true;
	if (!c || !a) {
		hp.add_ret = -ENOMEM;
		goto out;
	}
	hp.want_blocks = lm_linear_blocks();
	hp.map_ticks = hp.unmap_ticks = -1;
	if (sym.hotplug_ticks)
		sym.hotplug_ticks[0] = sym.hotplug_ticks[1] = 0;
	lm_count(c);
	hp.tables_before = c->table_pages;
	t0 = ktime_get_ns();
	hp.add_ret = sym.add_memory(0, start, size, 0);
	hp.add_ns = ktime_get_ns() - t0;
	if (hp.add_ret)
		goto out;
	range_leaves(start, size, hp.leaves);
	lm_count(c);
	hp.tables_added = c->table_pages - hp.tables_before;
	if (!lm_audit_run(a)) {
		hp.violations += a->violations;
		if (a->violations)
			strscpy(hp.first, a->msg[0], sizeof(hp.first));
	}
	audit_free(a);
	/*
	 * Memory is removed in memory blocks, possibly one at a time
	 * (virtio-mem): removing the first one alone must unmap exactly
	 * that block and leave the rest of the range mapped.
	 */
	hp.block_size = sym.memory_block_size_bytes ?
			sym.memory_block_size_bytes() : 0;
	removed = 0;
	if (hp.block_size && hp.block_size < size) {
		t0 = ktime_get_ns();
		hp.partial_ret = sym.remove_memory(start, hp.block_size);
		hp.remove_ns = ktime_get_ns() - t0;
		if (!hp.partial_ret) {
			removed = hp.block_size;
			range_leaves(start, removed, n);
			hp.removed_unmapped = n[LM_NR_KINDS];
			range_leaves(start + removed, size - removed, n);
			hp.rest_unmapped = n[LM_NR_KINDS];
		}
	}
	t0 = ktime_get_ns();
	hp.remove_ret = sym.remove_memory(start + removed, size - removed);
	hp.remove_ns += ktime_get_ns() - t0;
	if (sym.hotplug_ticks) {
		hp.map_ticks = sym.hotplug_ticks[0];
		hp.unmap_ticks = sym.hotplug_ticks[1];
	}
	range_leaves(start, size, n);
	hp.unmapped_after = n[LM_NR_KINDS];
	lm_count(c);
	hp.tables_after = c->table_pages;
	if (!lm_audit_run(a)) {
		hp.violations += a->violations;
		if (a->violations && !hp.first[0])
			strscpy(hp.first, a->msg[0], sizeof(hp.first));
	}
	audit_free(a);
out:
	kfree(a);
	kfree(c);
}

static int hotplug_show(struct seq_file *m, void *v)
{
	int k;

	mutex_lock(&lm_lock);
	if (!hp.done) {
		seq_puts(m, "none\n");
		goto out;
	}
	seq_printf(m, "add_ret=%d\nremove_ret=%d\nwant_blocks=%d\n",
		   hp.add_ret, hp.remove_ret, hp.want_blocks);
	for (k = 0; k < LM_NR_KINDS; k++)
		seq_printf(m, "added.%s=%lu\n", kind_name[k], hp.leaves[k]);
	seq_printf(m, "added.unmapped_pages=%lu\n", hp.leaves[LM_NR_KINDS]);
	seq_printf(m, "unmapped_pages_after=%lu\n", hp.unmapped_after);
	seq_printf(m, "block_size=%lu\npartial_ret=%d\n", hp.block_size,
		   hp.partial_ret);
	seq_printf(m, "partial.removed_unmapped_pages=%lu\n",
		   hp.removed_unmapped);
	seq_printf(m, "partial.rest_unmapped_pages=%lu\n", hp.rest_unmapped);
	seq_printf(m, "tables_before=%llu\ntables_added=%llu\ntables_after=%llu\n",
		   hp.tables_before, hp.tables_added, hp.tables_after);
	seq_printf(m, "add_ns=%llu\nremove_ns=%llu\n", hp.add_ns, hp.remove_ns);
	seq_printf(m, "map_ticks=%lld\nunmap_ticks=%lld\ntimer_hz=%u\n",
		   hp.map_ticks, hp.unmap_ticks, arch_timer_get_cntfrq());
	seq_printf(m, "audit_violations=%lu\n", hp.violations);
	if (hp.first[0])
		seq_printf(m, "first=%s\n", hp.first);
out:
	mutex_unlock(&lm_lock);
	return 0;
}

/* "START,SIZE": hot-add, inspect, hot-remove. */
static ssize_t hotplug_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	unsigned long start, size;
	char buf[64];
	int ret;

	if (!sym.add_memory || !sym.remove_memory)
		return -EOPNOTSUPP;
	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (parse_range(buf, &start, &size))
		return -EINVAL;
	mutex_lock(&lm_lock);
	hp_run(start, size);
	mutex_unlock(&lm_lock);
	return len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(hotplug);

int lm_rel_init(struct dentry *dir)
{
	debugfs_create_file("audit", 0444, dir, NULL, &audit_fops);
	debugfs_create_file("audit_selftest", 0444, dir, NULL,
			    &audit_selftest_fops);
	debugfs_create_file("cpa", 0644, dir, NULL, &cpa_fops);
	debugfs_create_file("invalid_block", 0644, dir, NULL, &inval_fops);
	debugfs_create_file("inject", 0644, dir, NULL, &inject_fops);
	debugfs_create_file("hotplug", 0644, dir, NULL, &hotplug_fops);
	return 0;
}

void lm_rel_exit(void)
{
	mutex_lock(&lm_lock);
	kfree(cpa_last);
	cpa_last = NULL;
	kfree(inval_last);
	inval_last = NULL;
	mutex_unlock(&lm_lock);
}
