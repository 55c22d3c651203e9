// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test core: kernel symbols, facts about the linear map, the one
 * walker of its page tables, write probes, the parameter parser and the
 * skeleton of every command file. See linmap.h.
 *
 * Several helpers the module needs are not exported to modules; they are
 * looked up with kallsyms (found through a kprobe), so the module also
 * builds and runs against a distribution kernel with KPROBES and
 * KALLSYMS_ALL.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kfence.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>
#include <asm/pgtable.h>

#include "linmap.h"

const char *const lm_kind_name[LM_NR_KINDS] = LM_KIND_NAMES;
const char *const lm_scope_name[LM_NR_SCOPES] = LM_SCOPE_NAMES;

/* Bytes mapped by one entry of each kind. */
const unsigned long lm_kind_size[LM_NR_KINDS] = {
	PUD_SIZE, PMD_SIZE, PMD_SIZE, PAGE_SIZE, PAGE_SIZE
};

struct lm_syms lm_sym;
/* Serialises the commands and the results they keep. */
DEFINE_MUTEX(lm_lock);

#define LM_SYM(field, name, required) \
	{ (unsigned long *)&lm_sym.field, name, required }

static const struct {
	unsigned long *addr;
	const char *name;
	bool required;
} lm_syms[] = {
	LM_SYM(set_memory_ro, "set_memory_ro", true),
	LM_SYM(set_memory_rw, "set_memory_rw", true),
	LM_SYM(can_set_direct_map, "can_set_direct_map", true),
	LM_SYM(init_mm, "init_mm", true),
	LM_SYM(rodata_full, "rodata_full", true),
	LM_SYM(stext, "_text", true),
	LM_SYM(text_start, "_stext", true),
	LM_SYM(walk_system_ram_range, "walk_system_ram_range", true),
	LM_SYM(init_begin, "__init_begin", true),
	/* Only present with MEMORY_HOTPLUG and KFENCE respectively. */
	LM_SYM(get_online_mems, "get_online_mems", false),
	LM_SYM(put_online_mems, "put_online_mems", false),
	LM_SYM(kfence_early_init, "kfence_early_init", false),
	LM_SYM(rodata_enabled, "rodata_enabled", false),
	LM_SYM(set_direct_map_invalid_noflush,
	       "set_direct_map_invalid_noflush", true),
	LM_SYM(set_direct_map_default_noflush,
	       "set_direct_map_default_noflush", true),
	/* Memory hotplug, and the test-only allocation failure hook. */
	LM_SYM(add_memory, "add_memory", false),
	LM_SYM(remove_memory, "remove_memory", false),
	LM_SYM(memory_block_size_bytes, "memory_block_size_bytes", false),
	LM_SYM(inject, "linmap_inject", false),
	LM_SYM(split_delay_us, "linmap_split_delay_us", false),
	LM_SYM(hotplug_ticks, "linmap_hotplug_ticks", false),
	LM_SYM(set_memory_valid, "set_memory_valid", false),
	LM_SYM(find_vm_area, "find_vm_area", true),
	LM_SYM(kernel_page_present, "kernel_page_present", false),
	LM_SYM(pgt_count, "linmap_pgt_count", false),
	LM_SYM(pgt_counting, "linmap_pgt_counting", false),
	LM_SYM(split_kernel_leaf_mapping, "split_kernel_leaf_mapping", false),
	LM_SYM(linear_map_bytes, "linear_map_bytes", false),
	LM_SYM(collapse_pass, "collapse_pass", false),
	LM_SYM(collapse_now, "linmap_collapse_pass", false),
	LM_SYM(collapse_active, "collapse_active", false),
	LM_SYM(collapse_last_restore, "collapse_last_restore", false),
	LM_SYM(hold_folds, "linear_map_hold_folds", false),
	LM_SYM(release_folds, "linear_map_release_folds", false),
	LM_SYM(linear_resize_seq, "linear_resize_seq", false),
	LM_SYM(collapse_last_ns, "collapse_last_pass_ns", false),
	LM_SYM(trans_pgd_create_copy, "trans_pgd_create_copy", false),
	LM_SYM(trans_delay_ms, "linmap_trans_delay_ms", false),
	LM_SYM(trans_delay_addr, "linmap_trans_delay_addr", false),
	LM_SYM(sys_kexec_file_load, "__arm64_sys_kexec_file_load", false),
	LM_SYM(kexec_image, "kexec_image", false),
	LM_SYM(trans_waits, "linmap_trans_waits", false),
	LM_SYM(memremap_pages, "memremap_pages", false),
	LM_SYM(memunmap_pages, "memunmap_pages", false),
	LM_SYM(split_lock, "linear_split_lock", false),
	LM_SYM(contpte_try_unfold, "__contpte_try_unfold", false),
	LM_SYM(contpte_try_fold, "__contpte_try_fold", false),
};

int lm_resolve(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long (*lookup)(const char *name);
	unsigned int i;
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cannot find kallsyms_lookup_name (needs KPROBES): %d\n",
		       ret);
		return ret;
	}
	lookup = (void *)kp.addr;
	unregister_kprobe(&kp);

	for (i = 0; i < ARRAY_SIZE(lm_syms); i++) {
		*lm_syms[i].addr = lookup(lm_syms[i].name);
		if (lm_syms[i].required && !*lm_syms[i].addr) {
			pr_err("symbol %s not found (needs KALLSYMS_ALL)\n",
			       lm_syms[i].name);
			return -ENOENT;
		}
	}
	if (!lm_sym.get_online_mems || !lm_sym.put_online_mems) {
		lm_sym.get_online_mems = NULL;
		lm_sym.put_online_mems = NULL;
	}
	return 0;
}

/* ---- facts -------------------------------------------------------------- */

/*
 * Only the 4K granule has level-1 blocks (pud_sect_supported()); with three
 * levels they sit in the PGD itself, as the PUD level is folded into it.
 */
bool lm_pud_blocks(void)
{
	return IS_ENABLED(CONFIG_ARM64_4K_PAGES);
}

/* Linear alias of [_text, __init_begin), mapped specially by map_mem(). */
void lm_kimage_alias(unsigned long *start, unsigned long *end)
{
	*start = (unsigned long)__va(__pa_symbol(lm_sym.stext));
	*end = (unsigned long)__va(__pa_symbol(lm_sym.init_begin));
}

bool lm_kfence_pool(unsigned long *start, unsigned long *end)
{
#ifdef CONFIG_KFENCE
	if (__kfence_pool) {
		/* A late pool's address is tagged under KASAN_SW_TAGS. */
		*start = (unsigned long)kasan_reset_tag(__kfence_pool);
		*end = *start + KFENCE_POOL_SIZE;
		return true;
	}
#endif
	return false;
}

const char *lm_kfence_mode(void)
{
	if (!IS_ENABLED(CONFIG_KFENCE))
		return "none";
	return lm_sym.kfence_early_init && *lm_sym.kfence_early_init ?
		"early" : "late";
}

int lm_bbml2_state(void)
{
#ifdef ARM64_HAS_BBML2_NOABORT
	return cpus_have_cap(ARM64_HAS_BBML2_NOABORT);
#else
	return -1;	/* the kernel has no such capability */
#endif
}

/*
 * The policy the kernel applies to the linear map, boot and hot-added
 * memory alike: blocks and contiguous ranges unless page mappings are
 * forced (debug_pagealloc, or a direct map that can change without
 * BBML2_NOABORT to split it).
 */
bool lm_linear_blocks(void)
{
	if (debug_pagealloc_enabled())
		return false;
	if (lm_bbml2_state() > 0)
		return true;
	return !lm_sym.can_set_direct_map();
}

/* ---- the walker --------------------------------------------------------- */

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
	lm_walk(&w, PAGE_OFFSET, PAGE_END);
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
	lm_walk(&w, PAGE_OFFSET, PAGE_END);
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

/* ---- collapse ----------------------------------------------------------- */

/*
 * A full collapse pass, as a write to debugfs linear_map/collapse makes
 * one (the module cannot write that file from inside a write to its own
 * debugfs files: both take the same superblock's write protection).
 * Through the test-only linmap_collapse_pass() where the kernel has it;
 * else the static collapse_pass() by kallsyms, found under that name only
 * while the compiler has not cloned it with another signature (it does
 * without debug options: collapse_pass.isra.0). collapse_active is found
 * through kallsyms too. -EOPNOTSUPP where the kernel has no collapse or
 * it is off.
 */
int lm_collapse(void)
{
	if (!lm_collapse_on())
		return -EOPNOTSUPP;
	if (lm_sym.collapse_now)
		return lm_sym.collapse_now();
	lm_sym.collapse_pass(true, _RET_IP_);
	return 0;
}

bool lm_has_collapse(void)
{
	return (lm_sym.collapse_now || lm_sym.collapse_pass) &&
	       lm_sym.collapse_active;
}

bool lm_collapse_on(void)
{
	return lm_has_collapse() && READ_ONCE(*lm_sym.collapse_active);
}

/* ---- memory ------------------------------------------------------------- */

#define LM_BLOCK_TRIES	32

/*
 * A free run of 2^@order pages mapped by a PMD block or a contiguous PMD
 * range, or NULL with the reason in *@why; *@kind is the leaf kind of the
 * last run tried, or -ENOMEM. Earlier splits leave some free runs
 * page-mapped: try a few.
 */
struct page *lm_alloc_block(unsigned int order, int *kind, const char **why)
{
	struct page *tried[LM_BLOCK_TRIES], *page = NULL;
	unsigned int i, n;
	u64 val;

	*kind = -ENOMEM;
	if (order > MAX_PAGE_ORDER) {
		*why = "a PMD block is larger than the page allocator's largest block";
		return NULL;
	}
	for (n = 0; n < LM_BLOCK_TRIES && !page; n++) {
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
	if (!page)
		*why = *kind == -ENOMEM ? "no free PMD-sized block of memory" :
		       "no free PMD-sized block is mapped by a PMD block";
	return page;
}

/* ---- probes ------------------------------------------------------------- */

/* Write a byte back over itself; false if the write faulted. */
bool lm_probe_write(void *addr)
{
	u8 v;

	if (copy_from_kernel_nofault(&v, addr, 1))
		return false;
	pagefault_disable();
	__put_kernel_nofault(addr, &v, u8, fault);
	pagefault_enable();
	return true;
fault:
	pagefault_enable();
	return false;
}

void *lm_alias_of(void *vaddr)
{
	return page_address(vmalloc_to_page(vaddr));
}

/* Count the pages of [addr, addr + pages) that accept writes. */
void lm_probe_range(void *addr, unsigned long pages, unsigned long *vm_w,
		    unsigned long *alias_w)
{
	unsigned long i;

	*vm_w = 0;
	*alias_w = 0;
	for (i = 0; i < pages; i++) {
		void *va = addr + i * PAGE_SIZE;

		*vm_w += lm_probe_write(va);
		*alias_w += lm_probe_write(lm_alias_of(va));
		if (!(i & 1023))
			cond_resched();
	}
}
