// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "inject": memory hot-add with its Nth page-table allocation
 * failing; nothing may be left mapped or allocated after it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memory_hotplug.h>
#include <linux/slab.h>

#include "linmap.h"
#include "linmap_inject.h"

static void inj_hot_gone(struct inject_case *c, int nth, u64 tables,
			 struct lm_counts *cnt, unsigned long *hp)
{
	unsigned long n[LM_NR_KINDS + 1];

	lm_range_leaves(hp[0], hp[1], n);
	if (n[LM_NR_KINDS] != hp[1] >> PAGE_SHIFT) {
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
void inj_case_hotplug(struct inject_case *c, unsigned long *hp)
{
	unsigned long start = hp[0], size = hp[1];
	struct lm_counts *cnt;
	u64 tables;
	int nth, ret;

	if (!lm_sym.add_memory || !lm_sym.remove_memory) {
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
	ret = lm_sym.add_memory(0, start, size, 0);
	inj_disarm();
	c->tries++;
	c->allocations = lm_sym.inject->seen;
	if (ret) {
		c->wrong_ret++;
		inj_bad(c, "add_memory returned %d", ret);
		inj_check(c, 0);
		goto out;
	}
	c->ok++;
	ret = lm_sym.remove_memory(start, size);
	if (ret) {
		c->lost++;
		inj_bad(c, "remove_memory returned %d", ret);
		inj_check(c, 0);
		goto out;
	}
	inj_hot_gone(c, 0, tables, cnt, hp);

	for (nth = 1; nth <= c->allocations; ) {
		inj_arm(nth);
		ret = lm_sym.add_memory(0, start, size, 0);
		inj_disarm();
		c->tries++;
		c->failed++;
		if (!ret) {
			c->wrong_ret++;
			inj_bad(c, "N=%d: allocation failed, add_memory returned 0",
				nth);
			if (lm_sym.remove_memory(start, size)) {
				inj_check(c, nth);
				break;
			}
		}
		inj_hot_gone(c, nth, tables, cnt, hp);
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
