// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite of the linmap_test auditor: each case feeds its checks
 * made-up entries with one fault (or none) and expects exactly the
 * violations the fault makes. The cases are the ones "audit_selftest"
 * runs; this module only reports them as KTAP, one line per case. Built
 * when the kernel has KUnit; load it after linmap_test.ko.
 */

#include <kunit/test.h>
#include <linux/module.h>

#include "linmap.h"

static void lm_audit_case_test(struct kunit *test)
{
	const unsigned int *i = test->param_value;
	unsigned long want;
	long found;

	found = lm_audit_case(*i, &want);
	KUNIT_ASSERT_GE_MSG(test, found, 0, "case could not run: %ld", found);
	KUNIT_EXPECT_EQ_MSG(test, (unsigned long)found, want,
			    "%s: %ld violations found, %lu wanted",
			    lm_audit_case_name(*i), found, want);
}

static unsigned int lm_case_ids[32];

static const void *lm_audit_case_gen(const void *prev, char *desc)
{
	const unsigned int *p = prev;
	unsigned int i = p ? *p + 1 : 0;

	if (i >= lm_audit_nr_cases() || i >= ARRAY_SIZE(lm_case_ids))
		return NULL;
	lm_case_ids[i] = i;
	strscpy(desc, lm_audit_case_name(i), KUNIT_PARAM_DESC_SIZE);
	return &lm_case_ids[i];
}

static struct kunit_case lm_audit_test_cases[] = {
	KUNIT_CASE_PARAM(lm_audit_case_test, lm_audit_case_gen),
	{}
};

static struct kunit_suite lm_audit_suite = {
	.name = "linmap_audit",
	.test_cases = lm_audit_test_cases,
};

kunit_test_suite(lm_audit_suite);

MODULE_DESCRIPTION("KUnit suite of the linmap_test auditor");
MODULE_LICENSE("GPL");
