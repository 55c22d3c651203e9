// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "area": one vmalloc area that a test allocates, makes
 * read-only or writable in part or whole, and reads back as write probes
 * of each page and of its linear alias. Commands (one per write):
 *
 *   alloc N | alloc_block | alloc_cont | free | ro [OFF CNT] | rw [OFF CNT]
 *
 * alloc_block picks a one-page area whose alias lies in a block or
 * contiguous range, for watching that leaf split; alloc_cont one whose
 * alias lies in a contiguous PTE range (-ENOENT if none is found).
 */

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "linmap.h"

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
	lm_sym.set_memory_rw((unsigned long)area.addr, area.pages);
	vfree(area.addr);
	area.addr = NULL;
	area.pages = 0;
}

static int area_show(struct seq_file *m, void *v)
{
	unsigned long vm_w = 0, alias_w = 0, alias0 = 0;

	mutex_lock(&lm_lock);
	if (area.addr) {
		lm_probe_range(area.addr, area.pages, &vm_w, &alias_w);
		/* As the tables and the trace events know it: no KASAN tag. */
		alias0 = (unsigned long)kasan_reset_tag(lm_alias_of(area.addr));
	}
	seq_printf(m, "pages=%lu\naddr=0x%lx\nalias0=0x%lx\nlast_ret=%d\n",
		   area.pages, (unsigned long)area.addr, alias0, area.last_ret);
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
				 lm_probe_write(lm_alias_of(area.addr + i * PAGE_SIZE)));
		seq_putc(m, '\n');
	}
	mutex_unlock(&lm_lock);
	return 0;
}

/*
 * Allocate a one-page area whose linear alias lies in a block or contiguous
 * range, so that a test can watch that leaf being split. Recently freed
 * pages have usually been split already: keep trying, holding on to the
 * rejects until done so that they are not handed out again.
 */
#define LM_BLOCK_TRIES	512

static int area_alloc_block(bool cont_only)
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
		kind = lm_lookup((unsigned long)lm_alias_of(p), &val);
		if (kind >= 0 && kind < LM_CONT_PTE && !cont_only) {
			if (area.addr)
				rejects[n++] = area.addr;
			area.addr = p;
			break;
		}
		if (kind == LM_CONT_PTE && !area.addr)
			area.addr = p;
		else
			rejects[n++] = p;
		if (cont_only && area.addr)
			break;
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
		return area_alloc_block(false);
	if (!strcmp(op, "alloc_cont") && args == 1)
		return area_alloc_block(true);
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
		return lm_sym.set_memory_ro((unsigned long)area.addr +
					 off * PAGE_SIZE, cnt);
	return lm_sym.set_memory_rw((unsigned long)area.addr + off * PAGE_SIZE,
				 cnt);
}

static ssize_t area_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	char buf[64];
	int ret;

	ret = lm_copy_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	strim(buf);
	mutex_lock(&lm_lock);
	ret = area_cmd(buf);
	area.last_ret = ret;
	mutex_unlock(&lm_lock);
	return ret ? ret : len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(area);

static void area_exit(void)
{
	mutex_lock(&lm_lock);
	area_free();
	mutex_unlock(&lm_lock);
}

/*
 * linmap_test "area_guard" and "area_percpu": set_memory_ro() and
 * set_memory_rw() where a VM_ALLOC area has no page whose alias could
 * change: its guard page (the bound set_memory_*() checks is area->size,
 * which holds the guard) and a percpu chunk, whose area has no pages
 * array. The calls must return without reading the area's pages: a read
 * past the array only KASAN sees, a NULL array oopses any kernel.
 *
 *   echo run > area_guard; cat area_guard
 */
#define LM_PCPU_TRIES	64
#define LM_PCPU_SIZE	(16 << 10)

struct edge_area_result {
	int ret;
	const char *skip;
	int tries;
	unsigned long addr;
};

static const char *edge_area_skip(void)
{
	if (!*lm_sym.rodata_full)
		return "without rodata=full set_memory_ro() changes no alias";
	/* Unpatched 6.12 would write the guard page's empty PTE. */
	if (!lm_sym.split_kernel_leaf_mapping)
		return "the kernel's set_memory_*() writes unmapped PTEs too";
	return NULL;
}

static int guard_run(void *v)
{
	struct edge_area_result *r = v;
	void *a;

	r->skip = edge_area_skip();
	if (r->skip)
		return 0;
	a = vmalloc(2 * PAGE_SIZE);
	if (!a)
		return -ENOMEM;
	r->addr = (unsigned long)a + 2 * PAGE_SIZE;
	r->ret = lm_sym.set_memory_ro(r->addr, 1);
	if (!r->ret)
		r->ret = lm_sym.set_memory_rw(r->addr, 1);
	vfree(a);
	return 0;
}

/* A writable page of a vmalloc'd percpu chunk made writable: a no-op. */
static int percpu_run(void *v)
{
	struct edge_area_result *r = v;
	void __percpu **p;
	int i;

	r->skip = edge_area_skip();
	if (r->skip)
		return 0;
	p = kcalloc(LM_PCPU_TRIES, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	/* The first chunk is in the linear map: fill it until one is not. */
	for (i = 0; i < LM_PCPU_TRIES && !r->addr; i++) {
		void *cpu0;

		p[i] = __alloc_percpu(LM_PCPU_SIZE, PAGE_SIZE);
		if (!p[i])
			break;
		r->tries = i + 1;
		cpu0 = per_cpu_ptr(p[i], cpumask_first(cpu_possible_mask));
		if (is_vmalloc_addr(cpu0))
			r->addr = (unsigned long)cpu0;
	}
	if (r->addr)
		r->ret = lm_sym.set_memory_rw(r->addr, 1);
	else
		r->skip = "no percpu allocation came from a vmalloc'd chunk";
	for (i = 0; i < LM_PCPU_TRIES; i++)
		free_percpu(p[i]);
	kfree(p);
	return 0;
}

static void edge_area_show(struct seq_file *m, void *v)
{
	struct edge_area_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\ntries=%d\naddr=0x%lx\n", r->ret, r->tries,
		   r->addr);
}

static struct lm_cmd guard_cmd = {
	.size = sizeof(struct edge_area_result),
	.run = guard_run,
	.show = edge_area_show,
};

static struct lm_cmd percpu_cmd = {
	.size = sizeof(struct edge_area_result),
	.run = percpu_run,
	.show = edge_area_show,
};

static const struct lm_file area_files[] = {
	{ "area", 0644, &area_fops },
	{ "area_guard", 0644, NULL, &guard_cmd },
	{ "area_percpu", 0644, NULL, &percpu_cmd },
};

LM_FEATURE(area, area_exit);
