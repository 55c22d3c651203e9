// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "inject": fail each page-table allocation of a split, of a
 * permission change and of a memory hot-add in turn, and every one of a
 * vfree() that resets permissions, through the test-only linmap_inject
 * hook (patches/testing/0002), and check that the mapping survives, the
 * call reports the failure and nothing leaks. Every case runs where it may
 * sleep, so no allocation may be atomic. Kernels without the hook refuse
 * the command with -EOPNOTSUPP.
 *
 *   echo "run [case=N] [hotplug=START,SIZE]" > inject; cat inject
 *
 * case=N (enum lm_inject_case) runs that case alone. This file is the
 * framework: arming the hook, checking after each call, running the
 * cases (linmap_inject_cases.c, linmap_inject_hotplug.c) and showing
 * their results.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

#include "linmap.h"
#include "linmap_inject.h"

struct inject_result {
	struct inject_case c[LM_INJ_NR_CASES];
	unsigned long hp[2];		/* hotplug=START,SIZE */
	unsigned long only;		/* case=N, or every case */
};

static const char *const inject_case_name[LM_INJ_NR_CASES] =
	LM_INJ_CASE_NAMES;

__printf(2, 3) void inj_bad(struct inject_case *c, const char *fmt, ...)
{
	va_list args;

	if (c->first[0])
		return;
	va_start(args, fmt);
	vscnprintf(c->first, sizeof(c->first), fmt, args);
	va_end(args);
	pr_err("inject %s: %s\n", c->name, c->first);
}

void __inj_arm(int nth, bool from_nth)
{
	struct lm_inject_hook *li = lm_sym.inject;

	li->nth = nth;
	li->from_nth = from_nth;
	li->seen = 0;
	li->atomic = 0;
	li->nr_pages = 0;
	WRITE_ONCE(li->task, current);
}

void inj_arm(int nth)
{
	__inj_arm(nth, false);
}

void inj_disarm(void)
{
	WRITE_ONCE(lm_sym.inject->task, NULL);
}

/*
 * After one call: the auditor must be clean, and every page-table page
 * handed out during the call must be in the page tables or freed. The
 * hook pinned each one, so a freed page has only that reference left and
 * cannot have been reused meanwhile; the pins are dropped here.
 */
void inj_check(struct inject_case *c, int nth)
{
	struct lm_inject_hook *li = lm_sym.inject;
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);
	bool audited = a && !lm_audit_run(a);
	int i;

	/* The series never picks its flags by sensing the context. */
	if (li->atomic) {
		c->atomic += li->atomic;
		inj_bad(c, "N=%d: %d allocations could not sleep, in a context that may",
			nth, li->atomic);
	}
	li->atomic = 0;

	if (!audited) {
		c->audit++;
		inj_bad(c, "N=%d: cannot run the auditor", nth);
	} else if (a->violations) {
		c->audit++;
		inj_bad(c, "N=%d: auditor: %s", nth, a->msg[0]);
	}
	for (i = 0; i < li->nr_pages; i++) {
		phys_addr_t pa = li->pages[i];
		struct page *page = phys_to_page(pa);

		if (audited && page_ref_count(page) > 1 &&
		    !lm_audit_has_table(a, pa)) {
			c->leaked++;
			inj_bad(c, "N=%d: page-table page %pa neither used nor freed",
				nth, &pa);
		}
		put_page(page);
	}
	li->nr_pages = 0;
	if (a)
		lm_audit_free(a);
	kfree(a);
}

/*
 * Count one call made with the Nth allocation set to fail. Returns true if
 * that allocation was reached: the call must then have failed. Otherwise
 * the call needed fewer allocations, recorded as the case's count, and
 * must have succeeded.
 */
bool inj_account(struct inject_case *c, int nth, int ret)
{
	c->tries++;
	if (lm_sym.inject->seen >= nth) {
		c->failed++;
		if (!ret) {
			c->wrong_ret++;
			inj_bad(c, "N=%d: allocation failed, call returned 0",
				nth);
		}
		return true;
	}
	c->allocations = lm_sym.inject->seen;
	if (ret) {
		c->wrong_ret++;
		inj_bad(c, "N=%d: no allocation failed, call returned %d", nth,
			ret);
	} else {
		c->ok++;
	}
	return false;
}

/* Is the page at @la mapped valid and writable, and does a write work? */

static int inject_run(void *v)
{
	struct inject_result *r = v;
	unsigned int i;

	for (i = 0; i < LM_INJ_NR_CASES; i++) {
		struct inject_case *c = &r->c[i];

		c->name = inject_case_name[i];
		if (r->only != ULONG_MAX && r->only != i) {
			c->skip = "not asked for (case=)";
			continue;
		}
		switch (i) {
		case LM_INJ_SPLIT_BLOCK:
			inj_case_split(c);
			break;
		case LM_INJ_DIRECT_MAP_PAGE:
			inj_case_page(c);
			break;
		case LM_INJ_VMALLOC_RO:
			inj_case_vmalloc(c);
			break;
		case LM_INJ_HOT_ADD:
			inj_case_hotplug(c, r->hp);
			break;
		case LM_INJ_RESET_PERMS:
			inj_case_reset_perms(c);
			break;
		}
	}
	return 0;
}

static void inject_show(struct seq_file *m, void *v)
{
	struct inject_result *r = v;
	int i;

	seq_printf(m, "cases=%d\n", LM_INJ_NR_CASES);
	for (i = 0; i < LM_INJ_NR_CASES; i++) {
		struct inject_case *c = &r->c[i];

		seq_printf(m, "%s.skip=%s\n", c->name, c->skip ?: "");
		seq_printf(m, "%s.leaf=%s\n", c->name, c->leaf ?: "");
		seq_printf(m, "%s.allocations=%d\n%s.tries=%d\n", c->name,
			   c->allocations, c->name, c->tries);
		seq_printf(m, "%s.failed=%d\n%s.ok=%d\n", c->name, c->failed,
			   c->name, c->ok);
		seq_printf(m, "%s.wrong_ret=%d\n%s.lost=%d\n", c->name,
			   c->wrong_ret, c->name, c->lost);
		seq_printf(m, "%s.leaked=%d\n%s.audit=%d\n", c->name,
			   c->leaked, c->name, c->audit);
		seq_printf(m, "%s.atomic=%d\n", c->name, c->atomic);
		if (c->first[0])
			seq_printf(m, "%s.first=%s\n", c->name, c->first);
	}
}

static unsigned int inject_params(void *v, struct lm_param *p)
{
	struct inject_result *r = v;

	p[0] = (struct lm_param){ "hotplug", LM_RANGE, r->hp };
	p[1] = (struct lm_param){ "case", LM_ULONG, &r->only };
	return 2;
}

static void inject_defaults(void *v)
{
	((struct inject_result *)v)->only = ULONG_MAX;
}

static int inject_check(void *v)
{
	unsigned long only = ((struct inject_result *)v)->only;

	return only == ULONG_MAX || only < LM_INJ_NR_CASES ? 0 : -EINVAL;
}

/* Only kernels with the test-only hook can fail their allocations. */
static int inject_available(void)
{
	return lm_sym.inject ? 0 : -EOPNOTSUPP;
}

static struct lm_cmd inject_cmd = {
	.size = sizeof(struct inject_result),
	.defaults = inject_defaults,
	.params = inject_params,
	.check = inject_check,
	.available = inject_available,
	.run = inject_run,
	.show = inject_show,
};

LM_COMMAND_FEATURE(inject, "inject");
