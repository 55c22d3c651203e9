// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "restore_block": a block that the live linear map holds
 * invalid, written through trans_pgd's copy of that map: hibernation's
 * restore copies each page of the image to its place, kexec's relocation
 * each page of the new kernel, both through the copy. There the block
 * must be valid (patches/0010), or the copy faults.
 *
 * Hibernation:
 *   hibernating kernel:  echo hold > restore_block
 *                        a PMD-sized block filled with a pattern, kept;
 *                        its pfn goes to the console for the next boot
 *   restoring kernel:    echo "invalidate pfn=N" > restore_block
 *                        the same pfn range taken (alloc_contig_range())
 *                        and made invalid by set_memory_valid(0), so the
 *                        image's copy of the block lands on it
 *   resumed kernel:      echo check > restore_block; cat restore_block
 *                        the pattern must be back, page by page
 * kexec:
 *   echo kexec_dest > restore_block   the PMD block around the loaded
 *                        image's first destination; unload, invalidate
 *                        it as above, load again: the relocation writes
 *                        the new kernel into it
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/kexec.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "linmap.h"

enum { RB_HOLD, RB_INVALIDATE, RB_CHECK, RB_KEXEC_DEST, RB_NR_OPS };
static const char *const restore_block_op_name[RB_NR_OPS] = {
	"hold", "invalidate", "check", "kexec_dest",
};

/* The block the hibernating kernel filled, kept across the image. */
static struct page *restore_block_page;

struct restore_block_result {
	int op;
	unsigned long pfn;
	int ret;
	const char *skip;
	int kind_before, kind_after;
	bool valid_after;
	unsigned long pages, mismatches;
	char first[128];
};

static unsigned int restore_block_order(void)
{
	return PMD_SHIFT - PAGE_SHIFT;
}

/* What word @i of the block at @pfn holds: differs per page and word. */
static unsigned long restore_block_word(unsigned long pfn, unsigned long i)
{
	return (pfn + i) * 0x9e3779b97f4a7c15UL ^ 0x6c696e6d6170UL;
}

static int restore_block_parse(char *buf, void *v)
{
	struct restore_block_result *r = v;
	struct lm_param p = { "pfn", LM_ULONG, &r->pfn };
	char *word;

	buf = strim(buf);
	word = strsep(&buf, " \t");
	r->op = match_string(restore_block_op_name, RB_NR_OPS, word);
	if (r->op < 0)
		return -EINVAL;
	if (r->op != RB_INVALIDATE)
		return buf && *skip_spaces(buf) ? -EINVAL : 0;
	/* The block's first pfn, which the hibernating kernel printed. */
	if (!buf || lm_parse_params(buf, &p, 1))
		return -EINVAL;
	return 0;
}

static int restore_block_hold(struct restore_block_result *r)
{
	unsigned long i, n = PAGE_SIZE / sizeof(unsigned long) << restore_block_order();
	unsigned long *w;

	if (restore_block_page)
		return -EBUSY;
	if (restore_block_order() > MAX_PAGE_ORDER) {
		r->skip = "a PMD block is larger than the page allocator's largest block";
		return 0;
	}
	restore_block_page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, restore_block_order());
	if (!restore_block_page) {
		r->skip = "no free PMD-sized block of memory";
		return 0;
	}
	r->pfn = page_to_pfn(restore_block_page);
	w = page_address(restore_block_page);
	for (i = 0; i < n; i++)
		w[i] = restore_block_word(r->pfn, i);
	pr_info("restore_block: holding pfn=%#lx, %lu pages\n", r->pfn,
		1UL << restore_block_order());
	return 0;
}

static int restore_block_invalidate(struct restore_block_result *r)
{
	unsigned long n = 1UL << restore_block_order(), addr;
	u64 val;

	r->kind_before = -1;
	r->kind_after = -1;
	if (!IS_ALIGNED(r->pfn, n) || !pfn_valid(r->pfn) ||
	    !pfn_valid(r->pfn + n - 1))
		return -EINVAL;
	if (!IS_ENABLED(CONFIG_CONTIG_ALLOC)) {
		r->skip = "the kernel has no alloc_contig_range() (CONFIG_CONTIG_ALLOC)";
		return 0;
	}
	if (!lm_sym.set_memory_valid) {
		r->skip = "the kernel has no set_memory_valid()";
		return 0;
	}
#ifdef CONFIG_CONTIG_ALLOC
	r->ret = alloc_contig_range(r->pfn, r->pfn + n, MIGRATE_MOVABLE,
				    GFP_KERNEL | __GFP_NOWARN);
#endif
	if (r->ret) {
		r->skip = "this kernel could not take the block's pages (alloc_contig_range())";
		return 0;
	}
	addr = (unsigned long)page_address(pfn_to_page(r->pfn));
	r->kind_before = lm_lookup(addr, &val);
	/*
	 * Never given back: the restore replaces this kernel. Made invalid
	 * whole, so that a block leaf stays a block, now invalid.
	 */
	r->ret = lm_sym.set_memory_valid(addr, n, 0);
	r->kind_after = lm_lookup(addr, &val);
	r->valid_after = val & PTE_VALID;
	pr_info("restore_block: pfn=%#lx: %s leaf before, %s leaf after set_memory_valid(0) (ret %d, valid bit %d)\n",
		r->pfn, lm_kind_str(r->kind_before), lm_kind_str(r->kind_after),
		r->ret, r->valid_after);
	return 0;
}

static int restore_block_check(struct restore_block_result *r)
{
	unsigned long i, n = PAGE_SIZE / sizeof(unsigned long) << restore_block_order();
	unsigned long *w;

	if (!restore_block_page) {
		r->skip = "nothing held (no block at hold)";
		return 0;
	}
	r->pfn = page_to_pfn(restore_block_page);
	w = page_address(restore_block_page);
	for (i = 0; i < n; i++) {
		if (w[i] == restore_block_word(r->pfn, i))
			continue;
		if (!r->mismatches++)
			scnprintf(r->first, sizeof(r->first),
				  "page %lu word %lu: %#lx, want %#lx",
				  i * sizeof(*w) / PAGE_SIZE,
				  i % (PAGE_SIZE / sizeof(*w)), w[i],
				  restore_block_word(r->pfn, i));
	}
	r->pages = 1UL << restore_block_order();
	__free_pages(restore_block_page, restore_block_order());
	restore_block_page = NULL;
	return 0;
}

/* Where the loaded kexec image's first segment goes, as a block's pfn. */
static int restore_block_kexec_dest(struct restore_block_result *r)
{
#ifdef CONFIG_KEXEC_CORE
	struct kimage *image;

	if (!lm_sym.kexec_image) {
		r->skip = "the kernel has no kexec_image";
		return 0;
	}
	image = READ_ONCE(*lm_sym.kexec_image);
	if (!image || !image->nr_segments) {
		r->skip = "no kexec image is loaded";
		return 0;
	}
	r->pfn = ALIGN_DOWN(PHYS_PFN(image->segment[0].mem), 1UL << restore_block_order());
	r->pages = PHYS_PFN(image->segment[0].memsz);
#else
	r->skip = "the kernel has no kexec";
#endif
	return 0;
}

static int restore_block_run(void *v)
{
	struct restore_block_result *r = v;

	switch (r->op) {
	case RB_HOLD:
		return restore_block_hold(r);
	case RB_INVALIDATE:
		return restore_block_invalidate(r);
	case RB_KEXEC_DEST:
		return restore_block_kexec_dest(r);
	default:
		return restore_block_check(r);
	}
}

static void restore_block_show(struct seq_file *m, void *v)
{
	struct restore_block_result *r = v;

	seq_printf(m, "op=%s\nret=%d\npfn=%#lx\n", restore_block_op_name[r->op], r->ret,
		   r->pfn);
	if (r->skip)
		seq_printf(m, "skip=%s\n", r->skip);
	/*
	 * invalid_block: what the tests want, a block leaf (kinds run from
	 * the largest) left invalid, said once for the guest and the host.
	 */
	if (r->op == RB_INVALIDATE)
		seq_printf(m, "kind_before=%s\nkind_after=%s\nvalid_after=%d\ninvalid_block=%d\n",
			   lm_kind_str(r->kind_before),
			   lm_kind_str(r->kind_after), r->valid_after,
			   !r->ret && !r->valid_after && r->kind_after >= 0 &&
			   r->kind_after <= LM_PMD);
	if (r->op == RB_CHECK)
		seq_printf(m, "pages=%lu\nmismatches=%lu\n", r->pages,
			   r->mismatches);
	if (r->op == RB_KEXEC_DEST)
		seq_printf(m, "segment_pages=%lu\n", r->pages);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
}

static struct lm_cmd restore_block_cmd = {
	.size = sizeof(struct restore_block_result),
	.parse = restore_block_parse,
	.run = restore_block_run,
	.show = restore_block_show,
};

/* A block still held at unload goes back to the allocator. */
static void restore_block_exit(void)
{
	if (restore_block_page) {
		__free_pages(restore_block_page, restore_block_order());
		restore_block_page = NULL;
	}
}

static const struct lm_file restore_block_files[] = {
	{ "restore_block", 0644, NULL, &restore_block_cmd },
};

LM_FEATURE(restore_block, restore_block_exit);
