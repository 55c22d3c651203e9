// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test: the one walker of the linear map's page tables, right for
 * every geometry (folded levels are walked through their p?d_offset()),
 * and what is built on it: leaf and table counts, DirectMap as walked,
 * the leaves of a range, and the leaf of one address.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/seq_file.h>
#include <asm/pgtable.h>

#include "linmap.h"

static bool walk_leaf(struct lm_walk *w, int kind, void *ptr,
		      unsigned long addr, u64 val)
{
	return w->ops->leaf && w->ops->leaf(w, kind, ptr, addr, val);
}

/* A folded level is its parent's entry, not a table page of its own. */
static void walk_done(struct lm_walk *w, enum lm_level level, void *first,
		      unsigned long start, unsigned long end, bool folded,
		      unsigned int used)
{
	if (w->ops->table)
		w->ops->table(w, level, first, start, end, folded, used);
}

static void walk_pte(struct lm_walk *w, pmd_t *pmdp, unsigned long addr,
		     unsigned long end)
{
	pte_t *first = pte_offset_kernel(pmdp, addr), *ptep = first;
	unsigned long start = addr;
	unsigned int used = 0;

	do {
		pte_t pte = __ptep_get(ptep);

		if (pte_none(pte))
			continue;
		used++;
		w->stop = walk_leaf(w, pte_cont(pte) ? LM_CONT_PTE : LM_PTE,
				    ptep, addr, pte_val(pte));
	} while (ptep++, addr += PAGE_SIZE, addr != end && !w->stop);
	walk_done(w, LM_LVL_PTE, first, start, end, false, used);
}

static void walk_pmd(struct lm_walk *w, pud_t *pudp, unsigned long addr,
		     unsigned long end)
{
	pmd_t *first = pmd_offset(pudp, addr), *pmdp;
	unsigned long start = addr, next;
	unsigned int used = 0;

	for (pmdp = first; addr != end && !w->stop; pmdp++, addr = next) {
		pmd_t pmd = READ_ONCE(*pmdp);

		next = pmd_addr_end(addr, end);
		if (pmd_none(pmd))
			continue;
		if (!(++used & 63) && !w->split_lock)
			cond_resched();
		if (pmd_table(pmd))
			walk_pte(w, pmdp, addr, next);
		else
			w->stop = walk_leaf(w, pmd_cont(pmd) ? LM_CONT_PMD :
					    LM_PMD, pmdp, addr, pmd_val(pmd));
	}
	walk_done(w, LM_LVL_PMD, first, start, end,
		  mm_pmd_folded(lm_sym.init_mm), used);
}

static void walk_pud(struct lm_walk *w, p4d_t *p4dp, unsigned long start,
		     unsigned long end)
{
	pud_t *first = pud_offset(p4dp, start), *pudp = first;
	unsigned long addr = start, next;
	unsigned int used = 0;

	do {
		pud_t pud = READ_ONCE(*pudp);

		next = pud_addr_end(addr, end);
		/* Without PUD blocks pud_table() is true of any entry. */
		if (pud_none(pud))
			continue;
		used++;
		if (pud_table(pud))
			walk_pmd(w, pudp, addr, next);
		else
			w->stop = walk_leaf(w, LM_PUD, pudp, addr, pud_val(pud));
	} while (pudp++, addr = next, addr != end && !w->stop);
	walk_done(w, LM_LVL_PUD, first, start, end,
		  mm_pud_folded(lm_sym.init_mm), used);
}

/* A table of its own only with five levels (LPA2). */
static void walk_p4d(struct lm_walk *w, pgd_t *pgdp, unsigned long addr,
		     unsigned long end)
{
	p4d_t *first = p4d_offset(pgdp, addr), *p4dp;
	unsigned long start = addr, next;
	unsigned int used = 0;

	for (p4dp = first; addr != end && !w->stop; p4dp++, addr = next) {
		next = p4d_addr_end(addr, end);
		/* Folded levels read as never none: check each one. */
		if (p4d_none(READ_ONCE(*p4dp)))
			continue;
		used++;
		walk_pud(w, p4dp, addr, next);
	}
	walk_done(w, LM_LVL_P4D, first, start, end,
		  mm_p4d_folded(lm_sym.init_mm), used);
}

void lm_walk(struct lm_walk *w, unsigned long addr, unsigned long end)
{
	unsigned long next, flags = 0;
	pgd_t *pgdp;

	w->stop = false;
	if (w->split_lock && !lm_sym.split_lock)
		w->split_lock = false;
	if (lm_sym.get_online_mems)
		lm_sym.get_online_mems();
	mmap_read_lock(lm_sym.init_mm);
	if (w->split_lock)
		raw_spin_lock_irqsave(lm_sym.split_lock, flags);
	pgdp = pgd_offset_pgd(w->pgd ?: lm_sym.init_mm->pgd, addr);
	do {
		next = pgd_addr_end(addr, end);
		if (pgd_none(READ_ONCE(*pgdp)))
			continue;
		walk_p4d(w, pgdp, addr, next);
	} while (pgdp++, addr = next, addr != end && !w->stop);
	if (w->split_lock) {
		if (w->ops->locked)
			w->ops->locked(w);
		raw_spin_unlock_irqrestore(lm_sym.split_lock, flags);
	}
	mmap_read_unlock(lm_sym.init_mm);
	if (lm_sym.put_online_mems)
		lm_sym.put_online_mems();
}

struct count_walk {
	struct lm_counts *c;
	unsigned long ki_start, ki_end, kf_start, kf_end;
};

static int count_leaf(struct lm_walk *w, int kind, void *ptr,
		      unsigned long addr, u64 val)
{
	struct count_walk *cw = w->priv;
	unsigned long end = addr + lm_kind_size[kind];
	enum lm_scope s = LM_REST;

	if (addr < cw->ki_end && end > cw->ki_start)
		s = LM_KIMAGE;
	else if (addr < cw->kf_end && end > cw->kf_start)
		s = LM_KFENCE;
	cw->c->n[LM_ALL][kind]++;
	cw->c->n[s][kind]++;
	return 0;
}

static void count_table(struct lm_walk *w, enum lm_level level, void *ptr,
			unsigned long addr, unsigned long end, bool folded,
			unsigned int used)
{
	struct count_walk *cw = w->priv;

	cw->c->table_pages += !folded;
}

/* Count the leaves and table pages of the whole linear map. */
void lm_count_pgd(pgd_t *pgd, struct lm_counts *c)
{
	static const struct lm_walk_ops ops = {
		.leaf = count_leaf, .table = count_table,
	};
	struct count_walk cw = { .c = c };
	struct lm_walk w = { .ops = &ops, .priv = &cw, .pgd = pgd };

	memset(c, 0, sizeof(*c));
	lm_kimage_alias(&cw.ki_start, &cw.ki_end);
	lm_kfence_pool(&cw.kf_start, &cw.kf_end);
	lm_walk_linear(&w);
}

void lm_count(struct lm_counts *c)
{
	lm_count_pgd(NULL, c);
}

struct directmap_walk {
	u64 *walk, *kern;
};

static int directmap_leaf(struct lm_walk *w, int kind, void *ptr,
			  unsigned long addr, u64 val)
{
	struct directmap_walk *dw = w->priv;

	dw->walk[kind] += lm_kind_size[kind];
	return 0;
}

/* The kernel counts PTE first, the module PUD first. */
static void directmap_locked(struct lm_walk *w)
{
	struct directmap_walk *dw = w->priv;
	int k;

	for (k = 0; k < LM_NR_KINDS; k++)
		dw->kern[k] = lm_sym.linear_map_bytes[LM_NR_KINDS - 1 - k];
}

int lm_directmap(u64 walk[LM_NR_KINDS], u64 kern[LM_NR_KINDS])
{
	static const struct lm_walk_ops ops = {
		.leaf = directmap_leaf, .locked = directmap_locked,
	};
	struct directmap_walk dw = { .walk = walk, .kern = kern };
	struct lm_walk w = { .ops = &ops, .priv = &dw, .split_lock = true };

	if (!lm_sym.linear_map_bytes || !lm_sym.split_lock)
		return -EOPNOTSUPP;
	memset(walk, 0, sizeof(u64) * LM_NR_KINDS);
	memset(kern, 0, sizeof(u64) * LM_NR_KINDS);
	lm_walk_linear(&w);
	return 0;
}

/*
 * KEY=N and KEY_bytes=N per kind (and per scope with @scopes), then the
 * table pages and the bytes mapped, each key after @prefix.
 */
void lm_counts_show(struct seq_file *m, const char *prefix,
		    struct lm_counts *c, bool scopes)
{
	u64 mapped = 0;
	int k, s;

	for (k = 0; k < LM_NR_KINDS; k++) {
		if (k == LM_PUD && !lm_pud_blocks())
			continue;
		if (scopes)
			seq_printf(m, "%s_size=%lu\n", lm_kind_name[k],
				   lm_kind_size[k]);
		for (s = 0; s < (scopes ? LM_NR_SCOPES : 1); s++) {
			seq_printf(m, "%s%s.%s=%llu\n", prefix, lm_scope_name[s],
				   lm_kind_name[k], c->n[s][k]);
			seq_printf(m, "%s%s.%s_bytes=%llu\n", prefix,
				   lm_scope_name[s], lm_kind_name[k],
				   c->n[s][k] * lm_kind_size[k]);
		}
		mapped += c->n[LM_ALL][k] * lm_kind_size[k];
	}
	seq_printf(m, "%stable_pages=%llu\n", prefix, c->table_pages);
	seq_printf(m, "%stable_bytes=%llu\n", prefix,
		   c->table_pages * PAGE_SIZE);
	seq_printf(m, "%smapped_bytes=%llu\n", prefix, mapped);
}

static int range_leaf(struct lm_walk *w, int kind, void *ptr,
		      unsigned long addr, u64 val)
{
	unsigned long *n = w->priv;

	n[kind]++;
	return 0;
}

/*
 * Pages a leaf maps are found by their first page: the ranges asked for
 * (memory blocks) are aligned to every leaf that can map them.
 */
void lm_range_leaves(phys_addr_t start, unsigned long size,
		     unsigned long n[LM_NR_KINDS + 1])
{
	static const struct lm_walk_ops ops = { .leaf = range_leaf };
	struct lm_walk w = { .ops = &ops, .priv = n };
	unsigned long addr = (unsigned long)__va(start), mapped = 0;
	int k;

	memset(n, 0, sizeof(*n) * (LM_NR_KINDS + 1));
	lm_walk(&w, addr, addr + size);
	for (k = 0; k < LM_NR_KINDS; k++)
		mapped += n[k] * (lm_kind_size[k] >> PAGE_SHIFT);
	n[LM_NR_KINDS] = size / PAGE_SIZE - min(size / PAGE_SIZE, mapped);
}

struct lookup_walk {
	int kind;
	u64 val;
};

static int lookup_leaf(struct lm_walk *w, int kind, void *ptr,
		       unsigned long addr, u64 val)
{
	struct lookup_walk *lw = w->priv;

	lw->kind = kind;
	lw->val = val;
	return 1;
}

int lm_lookup(unsigned long addr, u64 *val)
{
	static const struct lm_walk_ops ops = { .leaf = lookup_leaf };
	struct lookup_walk lw = { .kind = -ENOENT };
	struct lm_walk w = { .ops = &ops, .priv = &lw };

	addr &= PAGE_MASK;
	lm_walk(&w, addr, addr + PAGE_SIZE);
	*val = lw.val;
	return lw.kind;
}

void lm_page_state(unsigned long addr, bool *valid, bool *writable)
{
	u64 val = 0;
	int kind = lm_lookup(addr, &val);

	*valid = kind >= 0 && (val & PTE_VALID);
	*writable = *valid && !(val & PTE_RDONLY);
}
