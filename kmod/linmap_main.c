// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test: inspect and stress the arm64 linear map.
 *
 * Reports the leaf entries of the linear map per level and the page-table
 * pages behind them, stresses set_memory_ro()/set_memory_rw() on vmalloc
 * areas (whose linear aliases change too under rodata=full) and proves with
 * fault-safe write probes that read-only really means read-only.
 *
 * Interface: /sys/kernel/debug/linmap_test/{state,counts,leaf,area,stress}.
 * See Documentation/testing.rst in the kit for the format of each file.
 *
 * Several helpers the module needs are not exported to modules; they are
 * looked up with kallsyms (found through a kprobe), so the module also
 * builds and runs against a distribution kernel with KPROBES and
 * KALLSYMS_ALL.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kfence.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>
#include <asm/pgtable.h>

#include "linmap_test.h"

const char *const kind_name[LM_NR_KINDS] = LM_KIND_NAMES;

static const char *const scope_name[LM_NR_SCOPES] = LM_SCOPE_NAMES;

/* Bytes mapped by one entry of each kind. */
const unsigned long kind_size[LM_NR_KINDS] = {
	PUD_SIZE, PMD_SIZE, PMD_SIZE, PAGE_SIZE, PAGE_SIZE
};

struct lm_syms sym;

/* Serialises the commands and the results they leave behind. */
DEFINE_MUTEX(lm_lock);
static struct dentry *lm_dir;

/*
 * Only the 4K granule has level-1 blocks (pud_sect_supported()); with three
 * levels they sit in the PGD itself, as the PUD level is folded into it.
 */
static bool pud_blocks(void)
{
	return IS_ENABLED(CONFIG_ARM64_4K_PAGES);
}

#define LM_SYM(field, name, required) \
	{ (unsigned long *)&sym.field, name, required }

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
	LM_SYM(kernel_page_present, "kernel_page_present", false),
	LM_SYM(pgt_count, "linmap_pgt_count", false),
	LM_SYM(pgt_counting, "linmap_pgt_counting", false),
	LM_SYM(split_kernel_leaf_mapping, "split_kernel_leaf_mapping", false),
};

static int lm_resolve(void)
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
	if (!sym.get_online_mems || !sym.put_online_mems) {
		sym.get_online_mems = NULL;
		sym.put_online_mems = NULL;
	}
	return 0;
}

/* Linear alias of [_text, __init_begin), mapped specially by map_mem(). */
void kimage_alias(unsigned long *start, unsigned long *end)
{
	*start = (unsigned long)__va(__pa_symbol(sym.stext));
	*end = (unsigned long)__va(__pa_symbol(sym.init_begin));
}

bool kfence_pool(unsigned long *start, unsigned long *end)
{
#ifdef CONFIG_KFENCE
	if (__kfence_pool) {
		*start = (unsigned long)__kfence_pool;
		*end = *start + KFENCE_POOL_SIZE;
		return true;
	}
#endif
	return false;
}

static const char *kfence_mode(void)
{
	if (!IS_ENABLED(CONFIG_KFENCE))
		return "none";
	return sym.kfence_early_init && *sym.kfence_early_init ?
		"early" : "late";
}

static int bbml2_state(void)
{
#ifdef ARM64_HAS_BBML2_NOABORT
	return cpus_have_cap(ARM64_HAS_BBML2_NOABORT);
#else
	return -1;	/* the kernel has no such capability */
#endif
}

/* ---- page-table walk ---------------------------------------------------- */

struct lm_walk {
	struct lm_counts *c;
	unsigned long ki_start, ki_end, kf_start, kf_end;
	bool have_kfence;
};

static void count_leaf(struct lm_walk *w, enum lm_kind k, unsigned long addr)
{
	unsigned long end = addr + kind_size[k];
	enum lm_scope s = LM_REST;

	if (addr < w->ki_end && end > w->ki_start)
		s = LM_KIMAGE;
	else if (w->have_kfence && addr < w->kf_end && end > w->kf_start)
		s = LM_KFENCE;
	w->c->n[LM_ALL][k]++;
	w->c->n[s][k]++;
}

static void walk_pte(struct lm_walk *w, pmd_t *pmdp, unsigned long addr,
		     unsigned long end)
{
	pte_t *ptep = pte_offset_kernel(pmdp, addr);

	w->c->table_pages++;
	do {
		pte_t pte = __ptep_get(ptep);

		if (pte_none(pte))
			continue;
		count_leaf(w, pte_cont(pte) ? LM_CONT_PTE : LM_PTE, addr);
	} while (ptep++, addr += PAGE_SIZE, addr != end);
}

static void walk_pmd(struct lm_walk *w, pud_t *pudp, unsigned long addr,
		     unsigned long end)
{
	pmd_t *pmdp = pmd_offset(pudp, addr);
	unsigned long next;

	/* A folded level is its parent's entry, not a table page. */
	if (!mm_pmd_folded(sym.init_mm))
		w->c->table_pages++;
	do {
		pmd_t pmd = READ_ONCE(*pmdp);

		next = pmd_addr_end(addr, end);
		if (pmd_none(pmd))
			continue;
		if (pmd_table(pmd))
			walk_pte(w, pmdp, addr, next);
		else
			count_leaf(w, pmd_cont(pmd) ? LM_CONT_PMD : LM_PMD, addr);
	} while (pmdp++, addr = next, addr != end);
}

static void walk_pud(struct lm_walk *w, p4d_t *p4dp, unsigned long addr,
		     unsigned long end)
{
	pud_t *pudp = pud_offset(p4dp, addr);
	unsigned long next;

	if (!mm_pud_folded(sym.init_mm))
		w->c->table_pages++;
	do {
		pud_t pud = READ_ONCE(*pudp);

		next = pud_addr_end(addr, end);
		if (pud_none(pud))
			continue;
		if (pud_table(pud))
			walk_pmd(w, pudp, addr, next);
		else
			count_leaf(w, LM_PUD, addr);
	} while (pudp++, addr = next, addr != end);
}

static void walk_p4d(struct lm_walk *w, pgd_t *pgdp, unsigned long addr,
		     unsigned long end)
{
	p4d_t *p4dp = p4d_offset(pgdp, addr);
	unsigned long next;

	/* Five levels (LPA2) only: otherwise folded at build or boot time. */
	if (!mm_p4d_folded(sym.init_mm))
		w->c->table_pages++;
	do {
		next = p4d_addr_end(addr, end);
		/* Folded levels read as never none: check each one. */
		if (p4d_none(READ_ONCE(*p4dp)))
			continue;
		walk_pud(w, p4dp, addr, next);
	} while (p4dp++, addr = next, addr != end);
}

void lm_walk_lock(void)
{
	if (sym.get_online_mems)
		sym.get_online_mems();
	mmap_read_lock(sym.init_mm);
}

void lm_walk_unlock(void)
{
	mmap_read_unlock(sym.init_mm);
	if (sym.put_online_mems)
		sym.put_online_mems();
}

/*
 * Count the leaves of the linear map. Memory hotplug, the only path that
 * frees linear-map tables, is held off; splits only ever replace a leaf by
 * a table, so a concurrent split can make counts stale but never unsafe.
 */
void lm_count(struct lm_counts *c)
{
	unsigned long addr = PAGE_OFFSET, end = PAGE_END, next;
	struct lm_walk w = { .c = c };
	pgd_t *pgdp;

	memset(c, 0, sizeof(*c));
	kimage_alias(&w.ki_start, &w.ki_end);
	w.have_kfence = kfence_pool(&w.kf_start, &w.kf_end);

	lm_walk_lock();
	pgdp = pgd_offset_pgd(sym.init_mm->pgd, addr);
	do {
		next = pgd_addr_end(addr, end);
		if (pgd_none(READ_ONCE(*pgdp)))
			continue;
		walk_p4d(&w, pgdp, addr, next);
	} while (pgdp++, addr = next, addr != end);
	lm_walk_unlock();
}

/* Find the leaf mapping @addr; returns its kind or -ENOENT if unmapped. */
int lm_lookup(unsigned long addr, u64 *val)
{
	pgd_t *pgdp;
	p4d_t *p4dp;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;
	pte_t pte;
	int ret = -ENOENT;

	lm_walk_lock();
	pgdp = pgd_offset_pgd(sym.init_mm->pgd, addr);
	if (pgd_none(READ_ONCE(*pgdp)))
		goto out;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)))
		goto out;
	pudp = pud_offset(p4dp, addr);
	pud = READ_ONCE(*pudp);
	if (pud_none(pud))
		goto out;
	if (!pud_table(pud)) {
		*val = pud_val(pud);
		ret = LM_PUD;
		goto out;
	}
	pmdp = pmd_offset(pudp, addr);
	pmd = READ_ONCE(*pmdp);
	if (pmd_none(pmd))
		goto out;
	if (!pmd_table(pmd)) {
		*val = pmd_val(pmd);
		ret = pmd_cont(pmd) ? LM_CONT_PMD : LM_PMD;
		goto out;
	}
	pte = __ptep_get(pte_offset_kernel(pmdp, addr));
	if (pte_none(pte))
		goto out;
	*val = pte_val(pte);
	ret = pte_cont(pte) ? LM_CONT_PTE : LM_PTE;
out:
	lm_walk_unlock();
	return ret;
}

/* ---- fault-safe probes -------------------------------------------------- */

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

void *alias_of(void *vaddr)
{
	return page_address(vmalloc_to_page(vaddr));
}

/* Count the pages of [addr, addr + pages) that accept writes. */
static void lm_probe_range(void *addr, unsigned long pages,
			   unsigned long *vm_w, unsigned long *alias_w)
{
	unsigned long i;

	*vm_w = 0;
	*alias_w = 0;
	for (i = 0; i < pages; i++) {
		void *va = addr + i * PAGE_SIZE;

		*vm_w += lm_probe_write(va);
		*alias_w += lm_probe_write(alias_of(va));
		if (!(i & 1023))
			cond_resched();
	}
}

/* ---- debugfs: state, counts, leaf --------------------------------------- */

static void show_levels(struct seq_file *m)
{
	int k;
	bool first = true;

	seq_puts(m, "levels=");
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (k == LM_PUD && !pud_blocks())
			continue;
		seq_printf(m, "%s%s", first ? "" : ",", kind_name[k]);
		first = false;
	}
	seq_putc(m, '\n');
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
	if (bbml2_state() > 0)
		return true;
	return !sym.can_set_direct_map();
}

static int state_show(struct seq_file *m, void *v)
{
	unsigned long s, e;
	int bbml2 = bbml2_state();

	seq_printf(m, "page_size=%lu\n", PAGE_SIZE);
	seq_printf(m, "rodata_full=%d\n", *sym.rodata_full);
	seq_printf(m, "debug_pagealloc=%d\n", debug_pagealloc_enabled());
	seq_printf(m, "kfence=%s\n", kfence_mode());
	if (kfence_pool(&s, &e))
		seq_printf(m, "kfence_pool=0x%lx-0x%lx\n", s, e);
	else
		seq_puts(m, "kfence_pool=none\n");
	if (bbml2 < 0)
		seq_puts(m, "bbml2=unknown\n");
	else
		seq_printf(m, "bbml2=%d\n", bbml2);
	seq_printf(m, "can_set_direct_map=%d\n", sym.can_set_direct_map());
	seq_printf(m, "linear_blocks=%d\n", lm_linear_blocks());
	kimage_alias(&s, &e);
	seq_printf(m, "kimage_alias=0x%lx-0x%lx\n", s, e);
	seq_printf(m, "linear=0x%lx-0x%lx\n", (unsigned long)PAGE_OFFSET,
		   (unsigned long)PAGE_END);
	seq_printf(m, "cont_ptes=%lu\ncont_pmds=%lu\n", (unsigned long)CONT_PTES,
		   (unsigned long)CONT_PMDS);
	show_levels(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

static void show_counts(struct seq_file *m, const char *prefix,
			struct lm_counts *c, bool scopes)
{
	u64 mapped = 0;
	int k, s;

	for (k = 0; k < LM_NR_KINDS; k++) {
		if (k == LM_PUD && !pud_blocks())
			continue;
		if (scopes)
			seq_printf(m, "%s_size=%lu\n", kind_name[k],
				   kind_size[k]);
		for (s = 0; s < (scopes ? LM_NR_SCOPES : 1); s++) {
			seq_printf(m, "%s%s.%s=%llu\n", prefix, scope_name[s],
				   kind_name[k], c->n[s][k]);
			seq_printf(m, "%s%s.%s_bytes=%llu\n", prefix,
				   scope_name[s], kind_name[k],
				   c->n[s][k] * kind_size[k]);
		}
		mapped += c->n[LM_ALL][k] * kind_size[k];
	}
	seq_printf(m, "%stable_pages=%llu\n", prefix, c->table_pages);
	seq_printf(m, "%stable_bytes=%llu\n", prefix,
		   c->table_pages * PAGE_SIZE);
	seq_printf(m, "%smapped_bytes=%llu\n", prefix, mapped);
}

static int counts_show(struct seq_file *m, void *v)
{
	struct lm_counts *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	lm_count(c);
	show_counts(m, "", c, true);
	kfree(c);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(counts);

static unsigned long leaf_addr;

static int leaf_show(struct seq_file *m, void *v)
{
	u64 val = 0;
	int kind = lm_lookup(READ_ONCE(leaf_addr), &val);

	seq_printf(m, "addr=0x%lx kind=%s entry_size=%lu valid=%d writable=%d\n",
		   leaf_addr, kind < 0 ? "none" : kind_name[kind],
		   kind < 0 ? 0 : kind_size[kind], !!(val & PTE_VALID),
		   kind >= 0 && !(val & PTE_RDONLY));
	return 0;
}

static int leaf_open(struct inode *inode, struct file *file)
{
	return single_open(file, leaf_show, NULL);
}

int read_cmd(const char __user *ubuf, size_t len, char *buf, size_t size)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	return 0;
}

static ssize_t leaf_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	unsigned long addr;
	char buf[32];
	int ret;

	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (kstrtoul(buf, 0, &addr))
		return -EINVAL;
	if (addr < PAGE_OFFSET || addr >= PAGE_END)
		return -EINVAL;
	WRITE_ONCE(leaf_addr, addr);
	return len;
}

static long leaf_ioctl(struct file *file, unsigned int cmd,
		       unsigned long arg)
{
	struct lm_leaf_query q;
	u64 val = 0;
	int kind;

	if (cmd != LM_IOC_LEAF)
		return -ENOTTY;
	if (copy_from_user(&q, (void __user *)arg, sizeof(q)))
		return -EFAULT;
	if (q.addr < PAGE_OFFSET || q.addr >= PAGE_END)
		return -EINVAL;
	kind = lm_lookup(q.addr, &val);
	q.kind = kind < 0 ? -1 : kind;
	q.entry = kind < 0 ? 0 : val;
	q.entry_size = kind < 0 ? 0 : kind_size[kind];
	q.valid = kind >= 0 && (val & PTE_VALID);
	q.writable = kind >= 0 && !(val & PTE_RDONLY);
	q.pad = 0;
	return copy_to_user((void __user *)arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static const struct file_operations leaf_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = leaf_ioctl,
	.open = leaf_open,
	.read = seq_read,
	.write = leaf_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ---- debugfs: area (single-range operations) ---------------------------- */

static struct {
	void *addr;
	unsigned long pages;
	int last_ret;
} area;

static void area_free(void)
{
	if (!area.addr)
		return;
	/* Never hand read-only pages back to the allocator. */
	sym.set_memory_rw((unsigned long)area.addr, area.pages);
	vfree(area.addr);
	area.addr = NULL;
	area.pages = 0;
}

static int area_show(struct seq_file *m, void *v)
{
	unsigned long vm_w = 0, alias_w = 0;

	mutex_lock(&lm_lock);
	if (area.addr)
		lm_probe_range(area.addr, area.pages, &vm_w, &alias_w);
	seq_printf(m, "pages=%lu\naddr=0x%lx\nalias0=0x%lx\nlast_ret=%d\n",
		   area.pages, (unsigned long)area.addr,
		   area.addr ? (unsigned long)alias_of(area.addr) : 0UL,
		   area.last_ret);
	seq_printf(m, "vmalloc_writable=%lu\nalias_writable=%lu\n",
		   vm_w, alias_w);
	/* Per-page detail for small areas: 1 = the write probe succeeded. */
	if (area.addr && area.pages <= LM_MAP_MAX) {
		unsigned long i;

		seq_puts(m, "vmalloc_map=");
		for (i = 0; i < area.pages; i++)
			seq_putc(m, '0' + lm_probe_write(area.addr + i * PAGE_SIZE));
		seq_puts(m, "\nalias_map=");
		for (i = 0; i < area.pages; i++)
			seq_putc(m, '0' +
				 lm_probe_write(alias_of(area.addr + i * PAGE_SIZE)));
		seq_putc(m, '\n');
	}
	mutex_unlock(&lm_lock);
	return 0;
}

static int area_open(struct inode *inode, struct file *file)
{
	return single_open(file, area_show, NULL);
}

/*
 * Allocate a one-page area whose linear alias lies in a block or contiguous
 * range, so that a test can watch that leaf being split. Recently freed
 * pages have usually been split already: keep trying, holding on to the
 * rejects until done so that they are not handed out again.
 */
#define LM_BLOCK_TRIES	512

static int area_alloc_block(void)
{
	void **rejects;
	int i, n = 0, ret = -ENOENT;
	u64 val;

	rejects = kcalloc(LM_BLOCK_TRIES, sizeof(*rejects), GFP_KERNEL);
	if (!rejects)
		return -ENOMEM;
	area_free();
	/* Prefer a PMD-level leaf, settle for a contiguous PTE range. */
	for (i = 0; i < LM_BLOCK_TRIES; i++) {
		void *p = vmalloc(PAGE_SIZE);
		int kind;

		if (!p) {
			ret = -ENOMEM;
			break;
		}
		kind = lm_lookup((unsigned long)alias_of(p), &val);
		if (kind >= 0 && kind < LM_CONT_PTE) {
			if (area.addr)
				rejects[n++] = area.addr;
			area.addr = p;
			break;
		}
		if (kind == LM_CONT_PTE && !area.addr)
			area.addr = p;
		else
			rejects[n++] = p;
	}
	while (n)
		vfree(rejects[--n]);
	if (area.addr) {
		area.pages = 1;
		ret = 0;
	}
	kfree(rejects);
	return ret;
}

static int area_cmd(char *buf)
{
	unsigned long n, off, cnt;
	char op[16];
	int args;

	args = sscanf(buf, "%15s %lu %lu", op, &off, &cnt);
	if (args < 1)
		return -EINVAL;
	if (!strcmp(op, "free") && args == 1) {
		area_free();
		return 0;
	}
	if (!strcmp(op, "alloc_block") && args == 1)
		return area_alloc_block();
	if (!strcmp(op, "alloc") && args == 2) {
		n = off;
		if (!n || n > totalram_pages())
			return -EINVAL;
		area_free();
		area.addr = vmalloc(n * PAGE_SIZE);
		if (!area.addr)
			return -ENOMEM;
		area.pages = n;
		return 0;
	}
	if (strcmp(op, "ro") && strcmp(op, "rw"))
		return -EINVAL;
	if (!area.addr)
		return -ENXIO;
	if (args == 1) {
		off = 0;
		cnt = area.pages;
	} else if (args != 3 || !cnt || off >= area.pages ||
		   cnt > area.pages - off) {
		return -EINVAL;
	}
	if (op[1] == 'o')
		return sym.set_memory_ro((unsigned long)area.addr +
					 off * PAGE_SIZE, cnt);
	return sym.set_memory_rw((unsigned long)area.addr + off * PAGE_SIZE,
				 cnt);
}

static ssize_t area_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	char buf[64];
	int ret;

	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	mutex_lock(&lm_lock);
	ret = area_cmd(buf);
	area.last_ret = ret;
	mutex_unlock(&lm_lock);
	return ret ? ret : len;
}

static const struct file_operations area_fops = {
	.owner = THIS_MODULE,
	.open = area_open,
	.read = seq_read,
	.write = area_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ---- debugfs: stress ---------------------------------------------------- */

#define LM_MAX_THREADS	64
#define LM_MAX_ROUNDS	64

struct lm_stress_result {
	unsigned long pages, rounds, threads;
	bool alias_checked;
	atomic64_t ro_fail, rw_fail, alloc_fail;
	atomic64_t vm_w_ro, alias_w_ro, not_w_rw;
	u64 alloc_ns[LM_MAX_ROUNDS], ro_ns[LM_MAX_ROUNDS];
	u64 probe_ns[LM_MAX_ROUNDS], rw_ns[LM_MAX_ROUNDS];
	u64 free_ns[LM_MAX_ROUNDS];
	struct lm_counts during;
	bool have_during;
	int ret;
};

static struct lm_stress_result *result;

/* One worker's share of a round; all workers run each phase together. */
struct lm_worker {
	struct lm_stress_result *r;
	void *addr;
	unsigned long pages;
	int phase;		/* 0: alloc, ro, probe; 1: rw, probe, free */
	u64 t[3];
	struct completion done;
};

static int lm_worker_fn(void *data)
{
	struct lm_worker *w = data;
	struct lm_stress_result *r = w->r;
	unsigned long vm_w, alias_w;
	u64 t0 = ktime_get_ns();

	if (w->phase == 0) {
		w->addr = __vmalloc(w->pages * PAGE_SIZE,
				    GFP_KERNEL | __GFP_NOWARN |
				    __GFP_RETRY_MAYFAIL);
		w->t[0] = ktime_get_ns() - t0;
		if (!w->addr) {
			atomic64_inc(&r->alloc_fail);
			goto out;
		}
		t0 = ktime_get_ns();
		if (sym.set_memory_ro((unsigned long)w->addr, w->pages))
			atomic64_inc(&r->ro_fail);
		w->t[1] = ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		lm_probe_range(w->addr, w->pages, &vm_w, &alias_w);
		w->t[2] = ktime_get_ns() - t0;
		atomic64_add(vm_w, &r->vm_w_ro);
		if (r->alias_checked)
			atomic64_add(alias_w, &r->alias_w_ro);
	} else if (w->addr) {
		if (sym.set_memory_rw((unsigned long)w->addr, w->pages))
			atomic64_inc(&r->rw_fail);
		w->t[0] = ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		lm_probe_range(w->addr, w->pages, &vm_w, &alias_w);
		w->t[1] = ktime_get_ns() - t0;
		atomic64_add(2 * w->pages - vm_w - alias_w, &r->not_w_rw);
		t0 = ktime_get_ns();
		vfree(w->addr);
		w->addr = NULL;
		w->t[2] = ktime_get_ns() - t0;
	}
out:
	complete(&w->done);
	return 0;
}

/* Run one phase on every worker and wait for all of them. */
static void lm_run_phase(struct lm_worker *w, unsigned long n, int phase)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct task_struct *t;

		w[i].phase = phase;
		memset(w[i].t, 0, sizeof(w[i].t));
		init_completion(&w[i].done);
		t = kthread_run(lm_worker_fn, &w[i], "linmap_stress/%lu", i);
		if (IS_ERR(t)) {
			/* Run it here rather than lose the work. */
			lm_worker_fn(&w[i]);
		}
	}
	for (i = 0; i < n; i++)
		wait_for_completion(&w[i].done);
}

static u64 max_t3(struct lm_worker *w, unsigned long n, int idx)
{
	u64 m = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		m = max(m, w[i].t[idx]);
	return m;
}

static int lm_stress(struct lm_stress_result *r)
{
	struct lm_worker *w;
	unsigned long i, round, per;

	if (!r->threads || r->threads > LM_MAX_THREADS ||
	    !r->rounds || r->rounds > LM_MAX_ROUNDS)
		return -EINVAL;
	if (!r->pages)
		r->pages = si_mem_available() / 10 * 8;
	per = r->pages / r->threads;
	if (!per || per > INT_MAX)
		return -EINVAL;
	r->pages = per * r->threads;
	/* Under rodata=full set_memory_ro() also write-protects the alias. */
	r->alias_checked = *sym.rodata_full;

	w = kcalloc(r->threads, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	for (i = 0; i < r->threads; i++) {
		w[i].r = r;
		w[i].pages = per;
	}
	pr_info("stress: %lu rounds, %lu threads, %lu pages each\n",
		r->rounds, r->threads, per);
	for (round = 0; round < r->rounds; round++) {
		lm_run_phase(w, r->threads, 0);
		r->alloc_ns[round] = max_t3(w, r->threads, 0);
		r->ro_ns[round] = max_t3(w, r->threads, 1);
		r->probe_ns[round] = max_t3(w, r->threads, 2);
		if (round == 0) {
			lm_count(&r->during);
			r->have_during = true;
		}
		lm_run_phase(w, r->threads, 1);
		r->rw_ns[round] = max_t3(w, r->threads, 0);
		r->probe_ns[round] += max_t3(w, r->threads, 1);
		r->free_ns[round] = max_t3(w, r->threads, 2);
	}
	kfree(w);
	return 0;
}

static u64 lm_errors(struct lm_stress_result *r)
{
	return atomic64_read(&r->ro_fail) + atomic64_read(&r->rw_fail) +
	       atomic64_read(&r->alloc_fail) + atomic64_read(&r->vm_w_ro) +
	       atomic64_read(&r->alias_w_ro) + atomic64_read(&r->not_w_rw);
}

static int stress_show(struct seq_file *m, void *v)
{
	struct lm_stress_result *r;
	unsigned long i;

	mutex_lock(&lm_lock);
	r = result;
	if (!r) {
		seq_puts(m, "rounds=0\n");
		goto out;
	}
	seq_printf(m, "rounds=%lu\nthreads=%lu\npages=%lu\nret=%d\n",
		   r->rounds, r->threads, r->pages, r->ret);
	seq_printf(m, "errors=%llu\nro_fail=%lld\nrw_fail=%lld\nalloc_fail=%lld\n",
		   lm_errors(r), atomic64_read(&r->ro_fail),
		   atomic64_read(&r->rw_fail), atomic64_read(&r->alloc_fail));
	seq_printf(m, "vmalloc_writable_when_ro=%lld\nalias_writable_when_ro=%lld\nnot_writable_when_rw=%lld\n",
		   atomic64_read(&r->vm_w_ro), atomic64_read(&r->alias_w_ro),
		   atomic64_read(&r->not_w_rw));
	seq_printf(m, "alias_checked=%d\n", r->alias_checked);
	for (i = 0; i < r->rounds && !r->ret; i++)
		seq_printf(m, "round.%lu.alloc_ns=%llu\nround.%lu.ro_ns=%llu\nround.%lu.probe_ns=%llu\nround.%lu.rw_ns=%llu\nround.%lu.free_ns=%llu\n",
			   i + 1, r->alloc_ns[i], i + 1, r->ro_ns[i],
			   i + 1, r->probe_ns[i], i + 1, r->rw_ns[i],
			   i + 1, r->free_ns[i]);
	if (r->have_during)
		show_counts(m, "during.", &r->during, false);
out:
	mutex_unlock(&lm_lock);
	return 0;
}

/*
 * Parse white-space separated "name=value" tokens into the unsigned longs
 * that @params names; an unknown name, or a token without a value, is
 * -EINVAL.
 */
int lm_parse_params(char *buf, const struct lm_param *params, unsigned int n)
{
	char *tok;
	unsigned int i;

	while ((tok = strsep(&buf, " \t\n")) != NULL) {
		char *val = strchr(tok, '=');

		if (!*tok)
			continue;
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		for (i = 0; i < n && strcmp(tok, params[i].name); i++)
			;
		if (i == n || kstrtoul(val, 0, params[i].val))
			return -EINVAL;
	}
	return 0;
}

static int parse_stress(char *buf, struct lm_stress_result *r)
{
	const struct lm_param params[] = {
		{ "pages", &r->pages },
		{ "rounds", &r->rounds },
		{ "threads", &r->threads },
	};

	return lm_parse_params(buf, params, ARRAY_SIZE(params));
}

static ssize_t stress_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	struct lm_stress_result *r;
	char buf[128];
	int ret;

	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->rounds = 1;
	r->threads = num_online_cpus();
	ret = parse_stress(buf, r);
	if (ret) {
		kfree(r);
		return ret;
	}
	mutex_lock(&lm_lock);
	r->ret = lm_stress(r);
	kfree(result);
	result = r;
	ret = r->ret;
	if (!ret && lm_errors(r))
		ret = -EIO;
	mutex_unlock(&lm_lock);
	return ret ? ret : len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(stress);

static int __init linmap_test_init(void)
{
	int ret = lm_resolve();

	if (ret)
		return ret;
	lm_dir = debugfs_create_dir("linmap_test", NULL);
	if (IS_ERR(lm_dir))
		return PTR_ERR(lm_dir);
	debugfs_create_file("state", 0444, lm_dir, NULL, &state_fops);
	debugfs_create_file("counts", 0444, lm_dir, NULL, &counts_fops);
	debugfs_create_file("leaf", 0644, lm_dir, NULL, &leaf_fops);
	debugfs_create_file("area", 0644, lm_dir, NULL, &area_fops);
	debugfs_create_file("stress", 0644, lm_dir, NULL, &stress_fops);
	lm_bench_init(lm_dir);
	ret = lm_rel_init(lm_dir);
	if (ret) {
		debugfs_remove_recursive(lm_dir);
		return ret;
	}
	pr_info("ready: %lu-byte pages, rodata_full=%d, bbml2=%d\n",
		PAGE_SIZE, *sym.rodata_full, bbml2_state());
	return 0;
}

static void __exit linmap_test_exit(void)
{
	debugfs_remove_recursive(lm_dir);
	lm_rel_exit();
	lm_bench_exit();
	mutex_lock(&lm_lock);
	area_free();
	kfree(result);
	result = NULL;
	mutex_unlock(&lm_lock);
}

module_init(linmap_test_init);
module_exit(linmap_test_exit);
MODULE_DESCRIPTION("arm64 linear map inspection and permission stress");
MODULE_LICENSE("GPL");
