// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "trans_copy": copy the linear map around a PMD block this
 * module owns with trans_pgd_create_copy(), the copy kexec's relocation
 * and hibernation's restore run on, and check the copy page by page: each
 * page the live map maps must be mapped valid in the copy, at its own
 * physical address.
 *
 *   case=plain    the block as it is
 *   case=invalid  the block made invalid by set_memory_valid(0) first
 *   case=fold     the block split and restored, so that a collapse pass
 *                 would fold it, and a full pass made while the copy
 *                 sleeps after allocating the block's PTE table (test-only
 *                 linmap_trans_delay_ms): the pass must keep off the
 *                 block until the copy is done, then fold it
 *   case=kexec fd=N  the same window, in the copy kexec_file_load(2)
 *                 makes of the whole linear map: the writer's file N (an
 *                 arm64 Image) is loaded, the copy in the loaded image
 *                 checked over the block, and the image unloaded
 *
 *   echo "case=fold" > trans_copy; cat trans_copy
 *
 * Longer than 400 lines: the four cases share the walk of the copy and
 * its checks.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kexec.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <asm/trans_pgd.h>

#include "linmap.h"

enum {
	TRANS_COPY_PLAIN, TRANS_COPY_INVALID, TRANS_COPY_FOLD, TRANS_COPY_KEXEC,
	TRANS_COPY_NR_CASES
};

static const char *const trans_copy_case_name[TRANS_COPY_NR_CASES] = {
	"plain", "invalid", "fold", "kexec",
};

/* The copy's table pages; more than a PMD range ever needs. */
#define TRANS_COPY_MAX_TABLES	16
/* How long the copy sleeps with the block's PMD entry read. */
#define TRANS_COPY_DELAY_MS	300

struct trans_copy_result {
	unsigned long which;		/* case=, an index of trans_copy_case_name */
	int fd;				/* fd=, for case=kexec */
	const char *skip;
	int ret;
	int kind_before, kind_copying, kind_after;
	int pass_ret, pass_after_ret;
	unsigned int tables, leaves;	/* of the copy */
	unsigned long pages, mismatches;
	char first[160];
};

struct trans_copy_copy {
	struct trans_pgd_info info;
	unsigned int nr;
	struct page *pages[TRANS_COPY_MAX_TABLES];
	unsigned long start, end;
	pgd_t *pgd;
	int ret;
	struct completion done;
};

static void *trans_copy_alloc_page(void *arg)
{
	struct trans_copy_copy *c = arg;
	struct page *page;

	if (c->nr == TRANS_COPY_MAX_TABLES)
		return NULL;
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return NULL;
	c->pages[c->nr++] = page;
	return page_address(page);
}

static void trans_copy_free(struct trans_copy_copy *c)
{
	while (c->nr)
		__free_page(c->pages[--c->nr]);
}

static int trans_copy_copy_fn(void *arg)
{
	struct trans_copy_copy *c = arg;

	c->ret = lm_sym.trans_pgd_create_copy(&c->info, &c->pgd, c->start,
					      c->end);
	complete(&c->done);
	return 0;
}

/*
 * The leaf of the copy that maps @addr: its value, and the size it maps
 * (0: none). The walk reads the tables as trans_pgd wrote them, with the
 * same helpers, so folded levels are the entry above them.
 */
static unsigned long trans_copy_lookup(pgd_t *pgd, unsigned long addr, u64 *val)
{
	pgd_t *pgdp = pgd_offset_pgd(pgd, addr);
	p4d_t *p4dp;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;
	pte_t pte;

	if (pgd_none(READ_ONCE(*pgdp)))
		return 0;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)))
		return 0;
	pudp = pud_offset(p4dp, addr);
	pud = READ_ONCE(*pudp);
	if (pud_none(pud))
		return 0;
	if (!pud_table(pud)) {
		*val = pud_val(pud);
		return PUD_SIZE;
	}
	pmdp = pmd_offset(pudp, addr);
	pmd = READ_ONCE(*pmdp);
	if (pmd_none(pmd))
		return 0;
	if (!pmd_table(pmd)) {
		*val = pmd_val(pmd);
		return PMD_SIZE;
	}
	pte = __ptep_get(pte_offset_kernel(pmdp, addr));
	if (pte_none(pte))
		return 0;
	*val = pte_val(pte);
	return PAGE_SIZE;
}

/* Every page of [c->start, c->end) mapped valid at its own address? */
static void trans_copy_check(struct trans_copy_copy *c, struct trans_copy_result *r)
{
	unsigned long addr, last = 0;

	for (addr = c->start; addr < c->end; addr += PAGE_SIZE) {
		unsigned long size;
		phys_addr_t pa;
		u64 val = 0;

		r->pages++;
		size = trans_copy_lookup(c->pgd, addr, &val);
		if (size && ALIGN_DOWN(addr, size) != last) {
			last = ALIGN_DOWN(addr, size);
			r->leaves++;
		}
		pa = size ? (__pte_to_phys(__pte(val)) & ~(size - 1)) +
			    (addr & (size - 1)) : 0;
		if (size && (val & PTE_VALID) && pa == __pa(addr))
			continue;
		if (!r->mismatches++)
			scnprintf(r->first, sizeof(r->first),
				  "copy at %#lx: %s, entry %#llx, maps %pa, want %#llx",
				  addr, !size ? "not mapped" :
				  !(val & PTE_VALID) ? "invalid" : "wrong address",
				  val, &pa, (u64)__pa(addr));
	}
}

/* Wait until the copy sleeps inside the block, then make a full pass. */
struct trans_copy_pass {
	struct trans_copy_result *r;
	unsigned long addr;
	int waits;
	struct completion done;
};

static void trans_copy_pass_when_copying(struct trans_copy_result *r,
					 unsigned long addr, int waits)
{
	unsigned int ms;
	u64 val;

	for (ms = 0; ms < 10 * TRANS_COPY_DELAY_MS &&
	     atomic_read(lm_sym.trans_waits) == waits; ms += 20)
		msleep(20);
	r->pass_ret = lm_collapse();
	r->kind_copying = lm_lookup(addr, &val);
}

#ifdef CONFIG_KEXEC_FILE
static int trans_copy_pass_fn(void *arg)
{
	struct trans_copy_pass *p = arg;

	trans_copy_pass_when_copying(p->r, p->addr, p->waits);
	complete(&p->done);
	return 0;
}

/* kexec_file_load(2) as the writer of the command, who owns @fd. */
static long trans_copy_kexec_file_load(int fd, unsigned long flags)
{
	struct pt_regs regs = {};

	regs.regs[0] = fd;
	regs.regs[1] = -1;		/* no initrd */
	regs.regs[4] = flags;		/* no command line: length 0 */
	return lm_sym.sys_kexec_file_load(&regs);
}
#endif

/*
 * Load the writer's Image with the delay aimed at the block, a full pass
 * made while the copy of the linear map sleeps there, then check the
 * copy the loaded image holds and unload it.
 */
static void trans_copy_kexec(struct trans_copy_result *r, struct trans_copy_copy *c)
{
#ifdef CONFIG_KEXEC_FILE
	struct trans_copy_pass p = { .r = r, .addr = c->start };
	struct task_struct *t;
	struct kimage *image;

	init_completion(&p.done);
	p.waits = atomic_read(lm_sym.trans_waits);
	t = kthread_run(trans_copy_pass_fn, &p, "linmap_pass");
	if (IS_ERR(t)) {
		r->ret = PTR_ERR(t);
		return;
	}
	r->ret = trans_copy_kexec_file_load(r->fd, KEXEC_FILE_NO_INITRAMFS);
	wait_for_completion(&p.done);
	WRITE_ONCE(*lm_sym.trans_delay_ms, 0);
	if (r->ret) {
		scnprintf(r->first, sizeof(r->first),
			  "kexec_file_load() returned %d", r->ret);
		return;
	}
	if (atomic_read(lm_sym.trans_waits) == p.waits)
		r->skip = "the image was loaded in place: kexec made no copy of the linear map";
	image = READ_ONCE(*lm_sym.kexec_image);
	if (!r->skip && image && image->arch.ttbr1) {
		c->pgd = __va(image->arch.ttbr1);
		trans_copy_check(c, r);
	}
	trans_copy_kexec_file_load(-1, KEXEC_FILE_UNLOAD);
#endif
}

/* The block is in a PTE table and no change is pending: a pass folds it. */
static int trans_copy_make_foldable(struct trans_copy_result *r, unsigned long addr)
{
	int ret;

	/* Not the first page: the copy reads that one if it goes wrong. */
	ret = lm_sym.set_memory_valid(addr + PAGE_SIZE, 1, 0);
	if (!ret)
		ret = lm_sym.set_memory_valid(addr + PAGE_SIZE, 1, 1);
	if (ret)
		scnprintf(r->first, sizeof(r->first),
			  "set_memory_valid() of one page returned %d", ret);
	return ret;
}

static int trans_copy_run(void *v)
{
	struct trans_copy_result *r = v;
	unsigned int order = PMD_SHIFT - PAGE_SHIFT;
	unsigned long addr, n = 1UL << order;
	struct task_struct *t;
	struct trans_copy_copy *c;
	struct page *page;
	u64 val;
	int waits = 0;

	r->kind_before = -1;
	r->kind_copying = -1;
	r->kind_after = -1;
	if (!lm_sym.trans_pgd_create_copy || !lm_sym.set_memory_valid) {
		r->skip = "no trans_pgd_create_copy() (kexec, hibernation) or set_memory_valid()";
		return 0;
	}
	if (r->which == TRANS_COPY_KEXEC &&
	    (!IS_ENABLED(CONFIG_KEXEC_FILE) || !lm_sym.sys_kexec_file_load ||
	     !lm_sym.kexec_image || !lm_sym.trans_delay_addr)) {
		r->skip = "the kernel has no kexec_file_load() or no test-only trans_pgd delay by address";
		return 0;
	}
	if (r->which >= TRANS_COPY_FOLD &&
	    (!lm_has_collapse() || !lm_sym.trans_delay_ms || !lm_sym.trans_waits)) {
		r->skip = "the kernel has no collapse or no test-only trans_pgd delay";
		return 0;
	}
	if (r->which >= TRANS_COPY_FOLD && !lm_collapse_on()) {
		r->skip = "collapse is off in this kernel";
		return 0;
	}
	page = lm_alloc_block(order, &r->kind_before, &r->skip);
	if (!page)
		return 0;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		r->ret = -ENOMEM;
		goto out_page;
	}
	addr = (unsigned long)page_address(page);
	/* What a copy that took the block for a table would read: nothing. */
	clear_page((void *)addr);
	c->info.trans_alloc_page = trans_copy_alloc_page;
	c->info.trans_alloc_arg = c;
	c->start = addr;
	c->end = addr + PMD_SIZE;
	init_completion(&c->done);

	if (r->which == TRANS_COPY_INVALID) {
		r->ret = lm_sym.set_memory_valid(addr, n, 0);
		if (r->ret) {
			scnprintf(r->first, sizeof(r->first),
				  "set_memory_valid(0) returned %d", r->ret);
			goto out_copy;
		}
	}
	if (r->which >= TRANS_COPY_FOLD) {
		r->ret = trans_copy_make_foldable(r, addr);
		if (r->ret)
			goto out_copy;
		WRITE_ONCE(*lm_sym.trans_delay_ms, TRANS_COPY_DELAY_MS);
	}
	if (r->which == TRANS_COPY_KEXEC) {
		/* kexec copies the whole linear map: sleep at the block only. */
		WRITE_ONCE(*lm_sym.trans_delay_addr, addr);
		trans_copy_kexec(r, c);
		WRITE_ONCE(*lm_sym.trans_delay_addr, 0);
		goto after;
	}
	if (r->which == TRANS_COPY_FOLD)
		waits = atomic_read(lm_sym.trans_waits);
	t = kthread_run(trans_copy_copy_fn, c, "linmap_trans");
	if (IS_ERR(t)) {
		r->ret = PTR_ERR(t);
		complete(&c->done);
	} else if (r->which == TRANS_COPY_FOLD) {
		trans_copy_pass_when_copying(r, addr, waits);
	}
	wait_for_completion(&c->done);
	if (lm_sym.trans_delay_ms)
		WRITE_ONCE(*lm_sym.trans_delay_ms, 0);
	if (!r->ret)
		r->ret = c->ret;
	if (r->ret) {
		if (!r->first[0])
			scnprintf(r->first, sizeof(r->first),
				  "trans_pgd_create_copy() returned %d", r->ret);
	} else {
		r->tables = c->nr;
		trans_copy_check(c, r);
	}
	if (r->which == TRANS_COPY_INVALID && lm_sym.set_memory_valid(addr, n, 1)) {
		/* Never hand invalid memory back to the allocator. */
		trans_copy_free(c);
		kfree(c);
		return 0;
	}
after:
	if (r->which >= TRANS_COPY_FOLD)
		r->pass_after_ret = lm_collapse();
	r->kind_after = lm_lookup(addr, &val);
out_copy:
	trans_copy_free(c);
	kfree(c);
out_page:
	__free_pages(page, order);
	return 0;
}

/* "case=NAME", and " fd=N" with case=kexec only. */
static int trans_copy_parse(char *buf, void *v)
{
	struct trans_copy_result *r = v;
	char *arg = strim(buf), *fd = strchr(arg, ' ');
	unsigned int i;

	if (fd) {
		*fd++ = '\0';
		fd = skip_spaces(fd);
		if (strncmp(fd, "fd=", 3) || kstrtoint(fd + 3, 10, &r->fd) ||
		    r->fd < 0)
			return -EINVAL;
	}
	if (strncmp(arg, "case=", 5))
		return -EINVAL;
	for (i = 0; i < TRANS_COPY_NR_CASES; i++)
		if (!strcmp(arg + 5, trans_copy_case_name[i])) {
			r->which = i;
			return (i == TRANS_COPY_KEXEC) == !!fd ? 0 : -EINVAL;
		}
	return -EINVAL;
}

static void trans_copy_show(struct seq_file *m, void *v)
{
	struct trans_copy_result *r = v;

	seq_printf(m, "case=%s\n", trans_copy_case_name[r->which]);
	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\n", r->ret);
	seq_printf(m, "kind_before=%s\nkind_copying=%s\nkind_after=%s\n",
		   lm_kind_str(r->kind_before), lm_kind_str(r->kind_copying),
		   lm_kind_str(r->kind_after));
	seq_printf(m, "pass_ret=%d\npass_after_ret=%d\n", r->pass_ret,
		   r->pass_after_ret);
	seq_printf(m, "copy_tables=%u\ncopy_leaves=%u\n", r->tables, r->leaves);
	seq_printf(m, "pages=%lu\nmismatches=%lu\n", r->pages, r->mismatches);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
}

static struct lm_cmd trans_copy_cmd = {
	.size = sizeof(struct trans_copy_result),
	.parse = trans_copy_parse,
	.run = trans_copy_run,
	.show = trans_copy_show,
};

LM_COMMAND_FEATURE(trans_copy, "trans_copy");

/*
 * linmap_test "kexec_copy": the copy of the whole linear map that kexec
 * makes for its relocation (machine_kexec_post_load()) and hibernation for
 * its restore, made the same way, trans_pgd_create_copy() over
 * [PAGE_OFFSET, PAGE_END), from freshly allocated pages. Shows the live
 * map's leaves and table pages, the copy's, the pages the copy allocated
 * and the time it took: under QEMU -icount shift=0, instructions. With
 * runs=N the copy is made N times and the fastest kept.
 *
 *   echo "runs=1" > kexec_copy; cat kexec_copy
 */
struct kexec_copy_result {
	unsigned long runs;
	const char *skip;
	int ret;
	unsigned long allocated;
	u64 ns;
	struct lm_counts live, copy;
};

struct kexec_copy_pages {
	struct list_head list;
	unsigned long nr;
};

static void *kexec_copy_alloc_page(void *arg)
{
	struct kexec_copy_pages *p = arg;
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

	if (!page)
		return NULL;
	list_add(&page->lru, &p->list);
	p->nr++;
	return page_address(page);
}

static void kexec_copy_free(struct kexec_copy_pages *p)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &p->list, lru)
		__free_page(page);
	INIT_LIST_HEAD(&p->list);
	p->nr = 0;
}

static void kexec_copy_defaults(void *v)
{
	struct kexec_copy_result *r = v;

	r->runs = 1;
}

static unsigned int kexec_copy_params(void *v, struct lm_param *p)
{
	struct kexec_copy_result *r = v;

	p[0] = (struct lm_param){ "runs", LM_ULONG, &r->runs };
	return 1;
}

static int kexec_copy_check(void *v)
{
	struct kexec_copy_result *r = v;

	return r->runs >= 1 && r->runs <= 100 ? 0 : -EINVAL;
}

static int kexec_copy_run(void *v)
{
	struct kexec_copy_result *r = v;
	struct kexec_copy_pages p = { .list = LIST_HEAD_INIT(p.list) };
	struct trans_pgd_info info = {
		.trans_alloc_page = kexec_copy_alloc_page,
		.trans_alloc_arg = &p,
	};
	unsigned long i;
	pgd_t *pgd;
	u64 t0, ns;

	if (!lm_sym.trans_pgd_create_copy) {
		r->skip = "no trans_pgd_create_copy() (kexec, hibernation)";
		return 0;
	}
	lm_count(&r->live);
	for (i = 0; i < r->runs; i++) {
		t0 = ktime_get_ns();
		r->ret = lm_sym.trans_pgd_create_copy(&info, &pgd, PAGE_OFFSET,
						      PAGE_END);
		ns = ktime_get_ns() - t0;
		if (r->ret)
			break;
		if (!i || ns < r->ns)
			r->ns = ns;
		r->allocated = p.nr;
		if (!i)
			lm_count_pgd(pgd, &r->copy);
		kexec_copy_free(&p);
	}
	kexec_copy_free(&p);
	return 0;
}

static u64 kexec_copy_leaves(const struct lm_counts *c)
{
	u64 n = 0;
	int k;

	for (k = 0; k < LM_NR_KINDS; k++)
		n += c->n[LM_ALL][k];
	return n;
}

static void kexec_copy_show(struct seq_file *m, void *v)
{
	struct kexec_copy_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\nruns=%lu\n", r->ret, r->runs);
	seq_printf(m, "live_leaves=%llu\nlive_tables=%llu\n",
		   kexec_copy_leaves(&r->live), r->live.table_pages);
	seq_printf(m, "copy_leaves=%llu\ncopy_tables=%llu\n",
		   kexec_copy_leaves(&r->copy), r->copy.table_pages);
	seq_printf(m, "copy_allocated=%lu\ncopy_ns=%llu\n", r->allocated, r->ns);
}

static struct lm_cmd kexec_copy_cmd = {
	.size = sizeof(struct kexec_copy_result),
	.defaults = kexec_copy_defaults,
	.params = kexec_copy_params,
	.check = kexec_copy_check,
	.run = kexec_copy_run,
	.show = kexec_copy_show,
};

LM_COMMAND_FEATURE(kexec_copy, "kexec_copy");
