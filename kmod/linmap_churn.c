// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_churn: a module with text, read-only data and data spanning
 * several pages, for load/unload churn. Loading it makes parts of a
 * vmalloc'ed area read-only or executable, which under rodata=full also
 * changes the linear aliases of those pages; unloading makes them
 * writable again.
 */
#include <linux/module.h>
#include <linux/init.h>

#define CHURN_WORDS	(4 * PAGE_SIZE / sizeof(unsigned long))

/* Read-only data over several pages, checked on load. */
static const unsigned long churn_ro[CHURN_WORDS] = {
	[0] = 0x6c696e6d6170UL,
	[CHURN_WORDS - 1] = 0x636875726eUL,
};

static unsigned long churn_rw[CHURN_WORDS];

static int __init linmap_churn_init(void)
{
	unsigned int i;

	for (i = 0; i < CHURN_WORDS; i++)
		churn_rw[i] = churn_ro[i] ^ i;
	if (churn_rw[0] != churn_ro[0])
		return -EINVAL;
	return 0;
}

static void __exit linmap_churn_exit(void)
{
}

module_init(linmap_churn_init);
module_exit(linmap_churn_exit);
MODULE_DESCRIPTION("arm64 linear map: module load/unload churn");
MODULE_LICENSE("GPL");
