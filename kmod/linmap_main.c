// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test: inspect, check and stress the arm64 linear map.
 *
 * One debugfs directory, /sys/kernel/debug/linmap_test, with a file or
 * two per feature; see Documentation/testing.rst in the kit for each one.
 * This file only lists the features: each lives in its own file and uses
 * the core (linmap.h) and nothing else.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "linmap.h"

extern const struct lm_feature lm_feature_inspect, lm_feature_area,
	lm_feature_stress, lm_feature_audit, lm_feature_cpa,
	lm_feature_invalid_block, lm_feature_inject, lm_feature_hotplug,
	lm_feature_setmem, lm_feature_collapse, lm_feature_trans_copy,
	lm_feature_kexec_copy, lm_feature_devmem, lm_feature_cont_edge,
	lm_feature_contpte, lm_feature_dmap, lm_feature_restore_block;

static const struct lm_feature *const lm_features[] = {
	&lm_feature_inspect,
	&lm_feature_area,
	&lm_feature_stress,
	&lm_feature_audit,
	&lm_feature_cpa,
	&lm_feature_invalid_block,
	&lm_feature_cont_edge,
	&lm_feature_inject,
	&lm_feature_hotplug,
	&lm_feature_setmem,
	&lm_feature_collapse,
	&lm_feature_trans_copy,
	&lm_feature_kexec_copy,
	&lm_feature_devmem,
	&lm_feature_contpte,
	&lm_feature_dmap,
	&lm_feature_restore_block,
};

static struct dentry *lm_dir;

static int __init linmap_test_init(void)
{
	unsigned int i;
	int ret;

	ret = lm_resolve();
	if (ret)
		return ret;
	lm_dir = debugfs_create_dir(LM_DIR_NAME, NULL);
	if (IS_ERR(lm_dir))
		return PTR_ERR(lm_dir);
	for (i = 0; i < ARRAY_SIZE(lm_features); i++)
		lm_files_create(lm_dir, lm_features[i]->files,
				lm_features[i]->nr_files);
	pr_info("ready: %lu-byte pages, rodata_full=%d, bbml2=%d\n",
		PAGE_SIZE, *lm_sym.rodata_full, lm_bbml2_state());
	return 0;
}

static void __exit linmap_test_exit(void)
{
	unsigned int i;

	/* No command can start once the files are gone. */
	debugfs_remove_recursive(lm_dir);
	for (i = 0; i < ARRAY_SIZE(lm_features); i++) {
		const struct lm_feature *f = lm_features[i];
		unsigned int j;

		for (j = 0; j < f->nr_files; j++)
			if (f->files[j].cmd)
				lm_cmd_forget(f->files[j].cmd);
		if (f->exit)
			f->exit();
	}
}

module_init(linmap_test_init);
module_exit(linmap_test_exit);
MODULE_DESCRIPTION("arm64 linear map inspection, checks and stress");
MODULE_LICENSE("GPL");
