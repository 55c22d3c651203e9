// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test core: kernel symbols, facts about the linear map, collapse,
 * block allocations and write probes. The one walker of the linear map's
 * page tables is in linmap_walk.c; see linmap.h.
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
	LM_SYM(panic_on_warn, "panic_on_warn", true),
	LM_SYM(stext, "_text", true),
	LM_SYM(text_start, "_stext", true),
	LM_SYM(walk_system_ram_range, "walk_system_ram_range", true),
	LM_SYM(init_begin, "__init_begin", true),
	/* Only present with MEMORY_HOTPLUG and KFENCE respectively. */
	LM_SYM(get_online_mems, "get_online_mems", false),
	LM_SYM(put_online_mems, "put_online_mems", false),
	LM_SYM(kfence_early_init, "kfence_early_init", false),
	LM_SYM(rodata_enabled, "rodata_enabled", false),
	LM_SYM(linear_map_ptes, "linear_map_ptes", false),
	LM_SYM(block_policy, "force_pte_mapping", false),
	LM_SYM(block_policy_upstream, "linear_map_requires_bbml2", false),
	LM_SYM(repaint_park, "idmap_park_for_repaint", false),
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
	LM_SYM(walk_kernel_page_table_range, "walk_kernel_page_table_range", false),
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
		/* state_show() reports the tag; the range goes without. */
		*start = (unsigned long)kasan_reset_tag(__kfence_pool);
		*end = *start + KFENCE_POOL_SIZE;
		return true;
	}
#endif
	return false;
}

/*
 * The tag of the pool's address under tag-based KASAN, -1 without a pool or
 * without tags. KFENCE addresses every pool page from this one pointer, so
 * it must match all tags (0xff), as the memblock pool's does.
 */
int lm_kfence_pool_tag(void)
{
#ifdef CONFIG_KFENCE
	if ((IS_ENABLED(CONFIG_KASAN_SW_TAGS) || IS_ENABLED(CONFIG_KASAN_HW_TAGS)) &&
	    __kfence_pool)
		return __tag_get(__kfence_pool);
#endif
	return -1;
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
 * BBML2_NOABORT to split it, or with it under linear_map_ptes).
 */
/*
 * Does the kernel keep blocks under rodata=full where every CPU has
 * BBML2_NOABORT? 6.12 does not, nor does the series before its patch that
 * makes it so (make check-series boots each).
 */
bool lm_block_policy(void)
{
	/*
	 * Upstream's policy is its linear_map_requires_bbml2. The series has
	 * a flag of that name from its repaint patch on, before the patch
	 * that keeps blocks (force_pte_mapping()); the series' kernels tell
	 * themselves apart by their ID-map park, which upstream lacks.
	 */
	return lm_sym.block_policy ||
	       (lm_sym.block_policy_upstream && !lm_sym.repaint_park);
}

bool lm_linear_blocks(void)
{
	if (debug_pagealloc_enabled())
		return false;
	/* A kernel without the block policy (6.12, a patch before it). */
	if (lm_bbml2_state() > 0 && lm_pte_layout() <= 0 && lm_block_policy())
		return true;
	return !lm_sym.can_set_direct_map();
}

/*
 * Was the kernel booted with linear_map_ptes (the series' parameter)? 1 or
 * 0, or -1 for a kernel without the parameter.
 */
int lm_pte_layout(void)
{
	if (!lm_sym.linear_map_ptes)
		return -1;
	return READ_ONCE(*lm_sym.linear_map_ptes);
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
