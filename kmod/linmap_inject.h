/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linmap_test "inject": what its framework (linmap_inject.c) and its
 * cases (linmap_inject_cases.c, linmap_inject_hotplug.c) share.
 */
#ifndef LINMAP_INJECT_H
#define LINMAP_INJECT_H

#include <linux/types.h>

struct inject_case {
	const char *name;
	const char *skip;		/* why the case did not run */
	const char *leaf;		/* kind of leaf around the target */
	int allocations;		/* needed by the operation */
	int tries, failed, ok;		/* calls made, made to fail, passed */
	int wrong_ret, lost, leaked, audit;
	int atomic;			/* allocations that could not sleep */
	char first[160];
};

/* Note the first thing that went wrong in a case. */
__printf(2, 3) void inj_bad(struct inject_case *c, const char *fmt, ...);
/* Fail the @nth page-table allocation of this task (and each after it). */
void __inj_arm(int nth, bool from_nth);
void inj_arm(int nth);
void inj_disarm(void);
void inj_check(struct inject_case *c, int nth);
bool inj_account(struct inject_case *c, int nth, int ret);

void inj_case_page(struct inject_case *c);
void inj_case_split(struct inject_case *c);
void inj_case_vmalloc(struct inject_case *c);
void inj_case_reset_perms(struct inject_case *c);
void inj_case_hotplug(struct inject_case *c, unsigned long *hp);

#endif /* LINMAP_INJECT_H */
