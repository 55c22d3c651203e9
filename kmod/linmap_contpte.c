// SPDX-License-Identifier: GPL-2.0
/*
 * Contiguous user PTEs (arch/arm64/mm/contpte.c), for the tests of
 * contpte_convert(): the entries of the writer's own pages as they are in
 * its page table, and the cost of unfolding and refolding one block.
 *
 * linmap_test "user_ptes": the PTEs of @pages pages of the calling process
 * from @addr, each read as stored (not the contpte view, which gathers the
 * access and dirty bits of the whole block): how many are valid,
 * contiguous, dirty, young and writable, and a map of each bit, one
 * character a page, for the selftests to check page by page.
 *
 *   echo addr=0x... pages=16 > user_ptes; cat user_ptes
 *
 * linmap_test "contpte_cost": @rounds times, unfold the contiguous block at
 * @addr of the calling process and fold it again, with the page table lock
 * held as the core mm holds it, and time each half. Under QEMU -icount the
 * times count instructions.
 *
 *   echo addr=0x... rounds=64 > contpte_cost; cat contpte_cost
 */

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/sort.h>

#include "linmap.h"

#define UPTES_MAX	512
#define COST_ROUNDS_MAX	256

/*
 * The PTE table entry for @addr in @mm, or NULL when no PTE table maps it.
 * Under mmap_read_lock(); every level through its p?d_offset(), so that
 * folded levels are stepped over as the core does.
 */
static pte_t *user_ptep(struct mm_struct *mm, unsigned long addr,
			pmd_t **pmdpp)
{
	pgd_t *pgdp = pgd_offset(mm, addr);
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t *pmdp;
	pmd_t pmd;

	if (pgd_none(READ_ONCE(*pgdp)))
		return NULL;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)))
		return NULL;
	pudp = pud_offset(p4dp, addr);
	if (pud_none(READ_ONCE(*pudp)) || pud_leaf(READ_ONCE(*pudp)))
		return NULL;
	pmdp = pmd_offset(pudp, addr);
	pmd = pmdp_get(pmdp);
	if (pmd_none(pmd) || pmd_leaf(pmd) || pmd_bad(pmd))
		return NULL;
	*pmdpp = pmdp;
	return pte_offset_kernel(pmdp, addr);
}

struct uptes_result {
	unsigned long addr, pages;
	unsigned long mapped, valid, cont, dirty, young, write;
	char cont_map[UPTES_MAX + 1];
	char dirty_map[UPTES_MAX + 1];
	char young_map[UPTES_MAX + 1];
	const char *err;
};

static unsigned int uptes_params(void *v, struct lm_param *p)
{
	struct uptes_result *r = v;

	p[0] = (struct lm_param){ "addr", LM_ULONG, &r->addr };
	p[1] = (struct lm_param){ "pages", LM_ULONG, &r->pages };
	return 2;
}

static int uptes_check(void *v)
{
	struct uptes_result *r = v;

	if (!r->pages || r->pages > UPTES_MAX || !PAGE_ALIGNED(r->addr))
		return -EINVAL;
	return 0;
}

static int uptes_run(void *v)
{
	struct uptes_result *r = v;
	struct mm_struct *mm = current->mm;
	unsigned long i;

	if (!mm) {
		r->err = "no user address space";
		return 0;
	}
	mmap_read_lock(mm);
	for (i = 0; i < r->pages; i++) {
		unsigned long addr = r->addr + i * PAGE_SIZE;
		spinlock_t *ptl;
		pmd_t *pmdp;
		pte_t *ptep;
		pte_t pte;

		r->cont_map[i] = '-';
		r->dirty_map[i] = '-';
		r->young_map[i] = '-';
		ptep = user_ptep(mm, addr, &pmdp);
		if (!ptep)
			continue;
		ptl = pte_lockptr(mm, pmdp);
		spin_lock(ptl);
		pte = __ptep_get(ptep);
		spin_unlock(ptl);
		r->mapped++;
		if (!pte_valid(pte))
			continue;
		r->valid++;
		r->cont_map[i] = pte_cont(pte) ? 'c' : 'n';
		r->dirty_map[i] = pte_dirty(pte) ? 'd' : '.';
		r->young_map[i] = pte_young(pte) ? 'y' : '.';
		r->cont += pte_cont(pte);
		r->dirty += !!pte_dirty(pte);
		r->young += !!pte_young(pte);
		r->write += !!pte_write(pte);
	}
	mmap_read_unlock(mm);
	return 0;
}

static void uptes_show(struct seq_file *m, void *v)
{
	struct uptes_result *r = v;

	if (r->err)
		seq_printf(m, "error=%s\n", r->err);
	seq_printf(m, "pages=%lu\nmapped=%lu\nvalid=%lu\ncont=%lu\n",
		   r->pages, r->mapped, r->valid, r->cont);
	seq_printf(m, "dirty=%lu\nyoung=%lu\nwrite=%lu\n",
		   r->dirty, r->young, r->write);
	seq_printf(m, "cont_map=%s\ndirty_map=%s\nyoung_map=%s\n",
		   r->cont_map, r->dirty_map, r->young_map);
}

static struct lm_cmd uptes_cmd = {
	.size = sizeof(struct uptes_result),
	.params = uptes_params,
	.check = uptes_check,
	.run = uptes_run,
	.show = uptes_show,
};

struct cost_result {
	unsigned long addr, rounds, done;
	u64 unfold_ns[COST_ROUNDS_MAX], fold_ns[COST_ROUNDS_MAX];
	int bbml2;
	const char *skip;
};

static void cost_defaults(void *v)
{
	struct cost_result *r = v;

	r->rounds = 64;
}

static unsigned int cost_params(void *v, struct lm_param *p)
{
	struct cost_result *r = v;

	p[0] = (struct lm_param){ "addr", LM_ULONG, &r->addr };
	p[1] = (struct lm_param){ "rounds", LM_ULONG, &r->rounds };
	return 2;
}

static int cost_check(void *v)
{
	struct cost_result *r = v;

	if (!r->rounds || r->rounds > COST_ROUNDS_MAX ||
	    !IS_ALIGNED(r->addr, CONT_PTE_SIZE))
		return -EINVAL;
	return 0;
}

static int cost_run(void *v)
{
	struct cost_result *r = v;
	struct mm_struct *mm = current->mm;
	unsigned long last = r->addr + CONT_PTE_SIZE - PAGE_SIZE;
	spinlock_t *ptl;
	pmd_t *pmdp;
	pte_t *ptep;

	r->bbml2 = lm_bbml2_state();
	if (!lm_sym.contpte_try_unfold || !lm_sym.contpte_try_fold) {
		r->skip = "the kernel has no contiguous user PTEs (ARM64_CONTPTE)";
		return 0;
	}
	if (!mm) {
		r->skip = "no user address space";
		return 0;
	}
	mmap_read_lock(mm);
	ptep = user_ptep(mm, r->addr, &pmdp);
	if (!ptep || !pte_cont(__ptep_get(ptep))) {
		r->skip = "addr= is not a contiguous block of this process";
		goto out;
	}
	ptl = pte_lockptr(mm, pmdp);
	for (r->done = 0; r->done < r->rounds; r->done++) {
		pte_t *lastp = ptep + CONT_PTES - 1;
		u64 t0, t1, t2;

		spin_lock(ptl);
		t0 = ktime_get_ns();
		lm_sym.contpte_try_unfold(mm, r->addr, ptep, __ptep_get(ptep));
		t1 = ktime_get_ns();
		/* As set_ptes() folds: from the block's last entry. */
		lm_sym.contpte_try_fold(mm, last, lastp, __ptep_get(lastp));
		t2 = ktime_get_ns();
		spin_unlock(ptl);
		r->unfold_ns[r->done] = t1 - t0;
		r->fold_ns[r->done] = t2 - t1;
		if (!pte_cont(__ptep_get(ptep))) {
			r->skip = "the block did not fold again";
			break;
		}
	}
out:
	mmap_read_unlock(mm);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void cost_show(struct seq_file *m, void *v)
{
	struct cost_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "bbml2=%d\nrounds=%lu\ncont_ptes=%lu\n", r->bbml2,
		   r->done, (unsigned long)CONT_PTES);
	if (!r->done)
		return;
	sort(r->unfold_ns, r->done, sizeof(u64), cmp_u64, NULL);
	sort(r->fold_ns, r->done, sizeof(u64), cmp_u64, NULL);
	seq_printf(m, "unfold_ns.min=%llu\nunfold_ns.median=%llu\n",
		   r->unfold_ns[0], r->unfold_ns[r->done / 2]);
	seq_printf(m, "fold_ns.min=%llu\nfold_ns.median=%llu\n",
		   r->fold_ns[0], r->fold_ns[r->done / 2]);
}

static struct lm_cmd cost_cmd = {
	.size = sizeof(struct cost_result),
	.defaults = cost_defaults,
	.params = cost_params,
	.check = cost_check,
	.run = cost_run,
	.show = cost_show,
};

static const struct lm_file contpte_files[] = {
	{ "user_ptes", 0644, NULL, &uptes_cmd },
	{ "contpte_cost", 0644, NULL, &cost_cmd },
};

LM_FEATURE(contpte, NULL);
