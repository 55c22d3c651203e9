/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between the parts of the linmap_test module. */
#ifndef LINMAP_TEST_H
#define LINMAP_TEST_H

#include <linux/mutex.h>
#include <linux/seq_file.h>

#include "linmap_uapi.h"


extern const char *const kind_name[LM_NR_KINDS];
extern const unsigned long kind_size[LM_NR_KINDS];


struct lm_counts {
	u64 n[LM_NR_SCOPES][LM_NR_KINDS];
	u64 table_pages;
};

struct linmap_inject;

/*
 * Layout of the test-only per-CPU counter of kernel page-table writes
 * (patches/testing/0003, patches/base-testing/0001), when the kernel has it;
 * it counts only when booted with "linmap_count".
 */
struct lm_pgt_count {
	unsigned long entries;
	unsigned long barriers;
	unsigned long lazy;
};

/* Not exported to modules: resolved through kallsyms at load time. */
struct lm_syms {
	int (*set_memory_ro)(unsigned long addr, int numpages);
	int (*set_memory_rw)(unsigned long addr, int numpages);
	bool (*can_set_direct_map)(void);
	int (*set_direct_map_invalid_noflush)(struct page *page);
	int (*set_direct_map_default_noflush)(struct page *page);
	void (*get_online_mems)(void);
	void (*put_online_mems)(void);
	int (*add_memory)(int nid, u64 start, u64 size, int mhp_flags);
	int (*remove_memory)(u64 start, u64 size);
	unsigned long (*memory_block_size_bytes)(void);
	int (*set_memory_valid)(unsigned long addr, int numpages, int enable);
	bool (*kernel_page_present)(struct page *page);
	int (*split_kernel_leaf_mapping)(unsigned long start,
					 unsigned long end, gfp_t gfp);
	int (*walk_system_ram_range)(unsigned long start_pfn,
				     unsigned long nr_pages, void *arg,
				     int (*func)(unsigned long, unsigned long,
						 void *));
	struct mm_struct *init_mm;
	bool *rodata_full;
	bool *rodata_enabled;
	bool *kfence_early_init;
	struct linmap_inject *inject;
	unsigned int *split_delay_us;
	/* Test-only: ticks spent mapping [0] and unmapping [1] hot-plug. */
	u64 *hotplug_ticks;
	struct lm_pgt_count __percpu *pgt_count;
	struct static_key_false *pgt_counting;
	unsigned long stext, text_start, init_begin;
};

extern struct lm_syms sym;
extern struct mutex lm_lock;

void kimage_alias(unsigned long *start, unsigned long *end);
bool kfence_pool(unsigned long *start, unsigned long *end);
void lm_walk_lock(void);
void lm_walk_unlock(void);
void lm_count(struct lm_counts *c);
int lm_lookup(unsigned long addr, u64 *val);
bool lm_probe_write(void *addr);
bool lm_linear_blocks(void);
void *alias_of(void *vaddr);
int read_cmd(const char __user *ubuf, size_t len, char *buf, size_t size);

struct lm_param {
	const char *name;
	unsigned long *val;
};

int lm_parse_params(char *buf, const struct lm_param *params, unsigned int n);

/* linmap_rel.c: auditor, shadow-model stress, failure injection, hotplug */
int lm_rel_init(struct dentry *dir);
void lm_rel_exit(void);

/* linmap_bench.c: set_memory_ro/rw cost */
void lm_bench_init(struct dentry *dir);
void lm_bench_exit(void);

#endif
