// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "devmem": device memory (memremap_pages(),
 * MEMORY_DEVICE_GENERIC) as two ranges, A = [START, END - B) and B, the
 * last 2M (4M with 16K pages, 64M with 64K pages, see DEVMEM_B_SIZE) of
 * [START, END), as two drivers would map two regions side by side, a
 * full collapse pass where the kernel has collapse, and B unmapped alone.
 * Device memory comes and goes in 2 MiB subsections, and hot-remove
 * clears whole leaves: no leaf may cover both A and B, and after B is
 * gone A must still be mapped and readable. Then A is unmapped and the
 * auditor checks the whole linear map (it takes any mapping of memory
 * that is not memblock memory for a bug, so not before). Boot RAM right below START (mem=)
 * is reported too: its attributes differ from device memory's (tagged
 * normal memory against normal), so it never folds with it.
 *
 *   echo "range=START,SIZE" > devmem; cat devmem
 */

#include <linux/log2.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "linmap.h"

struct devmem_result {
	unsigned long range[2];		/* range=START,SIZE */
	const char *skip;
	int ret, pass_ret;
	int kind_ram, kind_a, kind_b, kind_a_passed;
	u64 val_ram, val_a;
	/* After the pass, one leaf maps the end of A and B. */
	int spans;
	int a_readable;
	/* Pages of A within DEVMEM_REACH below B unmapped once B is gone. */
	unsigned long a_unmapped, b_mapped_after;
	unsigned long violations;
	char first[160];
};

/* How far a wrong fold would reach: a PMD block, or 32M (4K's CONT_PMD). */
#define DEVMEM_REACH	max_t(unsigned long, PMD_SIZE, SZ_32M)
/*
 * B: a 2M subsection, or more where the memmap of 2M is smaller than a
 * page (16K and 64K pages): 6.12's arm64 vmemmap_free() frees a memmap
 * page that two device ranges share, and the second removal then faults
 * on it. B's memmap must fill whole pages of its own.
 */
#define DEVMEM_B_SIZE	max_t(unsigned long, SZ_2M,				\
			      roundup_pow_of_two(PAGE_SIZE / sizeof(struct page)) \
			      << PAGE_SHIFT)

/* Does the leaf that maps @below also map @above? */
static int devmem_spans(unsigned long below, unsigned long above)
{
	u64 val;
	int kind = lm_lookup(below, &val);
	unsigned long size;

	if (kind < 0)
		return 0;
	/* A contiguous range is one leaf as far as hot-remove goes. */
	size = kind == LM_CONT_PMD ? CONT_PMD_SIZE :
	       kind == LM_CONT_PTE ? CONT_PTE_SIZE : lm_kind_size[kind];
	return ALIGN_DOWN(below, size) + size > above;
}

static struct dev_pagemap *devmem_map(struct devmem_result *r,
				      phys_addr_t start, phys_addr_t size)
{
	struct dev_pagemap *pgmap = kzalloc(sizeof(*pgmap), GFP_KERNEL);
	void *ret;

	if (!pgmap) {
		r->ret = -ENOMEM;
		return NULL;
	}
	pgmap->type = MEMORY_DEVICE_GENERIC;
	pgmap->range.start = start;
	pgmap->range.end = start + size - 1;
	pgmap->nr_range = 1;
	ret = lm_sym.memremap_pages(pgmap, numa_mem_id());
	if (IS_ERR(ret)) {
		r->ret = PTR_ERR(ret);
		scnprintf(r->first, sizeof(r->first),
			  "memremap_pages(%pa+%pa) returned %d", &start, &size,
			  r->ret);
		kfree(pgmap);
		return NULL;
	}
	return pgmap;
}

static void devmem_unmap(struct dev_pagemap *pgmap)
{
	lm_sym.memunmap_pages(pgmap);
	kfree(pgmap);
}

static int devmem_run(void *v)
{
	struct devmem_result *r = v;
	phys_addr_t start = r->range[0], size = r->range[1];
	phys_addr_t b_start = start + size - DEVMEM_B_SIZE;
	unsigned long n[LM_NR_KINDS + 1], a, b;
	struct dev_pagemap *pa, *pb;
	u64 val;
	u8 byte;

	r->kind_ram = -1;
	r->kind_a = -1;
	r->kind_b = -1;
	r->kind_a_passed = -1;
	if (!lm_sym.memremap_pages || !lm_sym.memunmap_pages) {
		r->skip = "the kernel has no memremap_pages() (no ZONE_DEVICE)";
		return 0;
	}
	a = (unsigned long)__va(start);
	b = (unsigned long)__va(b_start);
	r->kind_ram = lm_lookup(a - PAGE_SIZE, &r->val_ram);
	pa = devmem_map(r, start, size - DEVMEM_B_SIZE);
	if (!pa)
		return 0;
	pb = devmem_map(r, b_start, DEVMEM_B_SIZE);
	if (!pb) {
		devmem_unmap(pa);
		return 0;
	}
	r->kind_a = lm_lookup(b - PAGE_SIZE, &r->val_a);
	r->kind_b = lm_lookup(b, &val);
	r->pass_ret = lm_collapse();
	r->kind_a_passed = lm_lookup(b - PAGE_SIZE, &val);
	r->spans = devmem_spans(b - PAGE_SIZE, b);
	devmem_unmap(pb);

	r->a_readable = !copy_from_kernel_nofault(&byte, (void *)(b - PAGE_SIZE), 1);
	lm_range_leaves(b_start - (DEVMEM_REACH - DEVMEM_B_SIZE), DEVMEM_REACH - DEVMEM_B_SIZE, n);
	r->a_unmapped = n[LM_NR_KINDS];
	lm_range_leaves(b_start, DEVMEM_B_SIZE, n);
	r->b_mapped_after = (DEVMEM_B_SIZE >> PAGE_SHIFT) - n[LM_NR_KINDS];
	devmem_unmap(pa);
	/* The auditor takes any mapping of non-memblock memory for a bug. */
	r->violations = max(lm_audit_once(r->first, sizeof(r->first)), 0L);
	return 0;
}

static unsigned int devmem_params(void *v, struct lm_param *p)
{
	struct devmem_result *r = v;

	p[0] = (struct lm_param){ "range", LM_RANGE, r->range };
	return 1;
}

/* A range A and B fit in: B-aligned, with room for A, ending where folds do. */
static int devmem_check(void *v)
{
	struct devmem_result *r = v;
	phys_addr_t start = r->range[0], size = r->range[1];

	if (!IS_ALIGNED(start | size, DEVMEM_B_SIZE) || size < DEVMEM_REACH ||
	    size <= DEVMEM_B_SIZE || !IS_ALIGNED(start + size, DEVMEM_REACH))
		return -EINVAL;
	return 0;
}

static void devmem_show(struct seq_file *m, void *v)
{
	struct devmem_result *r = v;

	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	seq_printf(m, "ret=%d\npass_ret=%d\n", r->ret, r->pass_ret);
	seq_printf(m, "kind_ram=%s\nkind_a=%s\nkind_b=%s\nkind_a_passed=%s\n",
		   lm_kind_str(r->kind_ram), lm_kind_str(r->kind_a),
		   lm_kind_str(r->kind_b), lm_kind_str(r->kind_a_passed));
	seq_printf(m, "val_ram=%#llx\nval_a=%#llx\n", r->val_ram, r->val_a);
	seq_printf(m, "spans=%d\na_readable=%d\n", r->spans, r->a_readable);
	seq_printf(m, "a_unmapped=%lu\nb_mapped_after=%lu\n", r->a_unmapped,
		   r->b_mapped_after);
	seq_printf(m, "audit.violations=%lu\n", r->violations);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
}

static struct lm_cmd devmem_cmd = {
	.size = sizeof(struct devmem_result),
	.params = devmem_params,
	.check = devmem_check,
	.run = devmem_run,
	.show = devmem_show,
};

LM_COMMAND_FEATURE(devmem, "devmem");
