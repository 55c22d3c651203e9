/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core of the linmap_test module, which every feature file uses:
 * kernel symbols, facts about the linear map, the one page-table walker,
 * write probes, the parameter parser and the command skeleton. Features
 * depend on this and on nothing else; linmap_main.c lists them.
 */
#ifndef LINMAP_H
#define LINMAP_H

#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>

#include <asm/memory.h>

#include "linmap_uapi.h"

struct trans_pgd_info;
struct mm_walk_ops;
struct dev_pagemap;
struct kimage;
struct pt_regs;

extern const char *const lm_kind_name[LM_NR_KINDS];
extern const unsigned long lm_kind_size[LM_NR_KINDS];
extern const char *const lm_scope_name[LM_NR_SCOPES];

/*
 * Where the linear map starts for the VA size the kernel runs with.
 * PAGE_OFFSET is that of the configured size: a 52-bit kernel on a CPU
 * without LPA2 (4K, 16K) or LVA (64K) runs with 48 or 47 bits and folds
 * its top level at run time, and a walk from PAGE_OFFSET would wrap over
 * the whole TTBR1 table, kernel image and vmalloc included.
 */
static inline unsigned long lm_linear_start(void)
{
	return _PAGE_OFFSET(vabits_actual);
}

/* The name of a kind, or "none" for a negative (unmapped) one. */
static inline const char *lm_kind_str(int kind)
{
	return kind < 0 ? "none" : lm_kind_name[kind];
}

/*
 * Layout of the test-only per-CPU counter of kernel page-table writes
 * (patches/testing/0006, patches/base-testing/0001), when the kernel has it;
 * it counts only when booted with "linmap_count".
 */
struct lm_pgt_count {
	unsigned long entries;
	unsigned long barriers;
	unsigned long lazy;
};

/*
 * Layout of the test-only linmap_inject hook (patches/testing/0002), when
 * the kernel has it: fail the nth linear-map table allocation of one task,
 * or every one from the nth, count those that could not sleep, and record
 * the pages handed out, each pinned.
 */
#define LM_INJECT_MAX_PAGES	1024

struct lm_inject_hook {
	struct task_struct *task;
	int nth;
	int seen;
	int nr_pages;
	int atomic;
	bool from_nth;
	phys_addr_t pages[LM_INJECT_MAX_PAGES];
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
	/* The generic walker of kernel tables that ptdump uses (or NULL). */
	int (*walk_kernel_page_table_range)(unsigned long start,
					    unsigned long end,
					    const struct mm_walk_ops *ops,
					    pgd_t *pgd, void *private);
	bool (*kernel_page_present)(struct page *page);
	int (*split_kernel_leaf_mapping)(unsigned long start,
					 unsigned long end, gfp_t gfp);
	/* A collapse pass, and whether collapse is on (static in mmu.c). */
	unsigned long (*collapse_pass)(bool all, unsigned long caller);
	int (*collapse_now)(void);
	bool *collapse_active;
	unsigned long *collapse_last_restore;
	void (*hold_folds)(void);
	void (*release_folds)(void);
	/* The sequence of linear_resize_seq, its first member. */
	unsigned int *linear_resize_seq;
	/* How long the last pass took to fold, without freeing tables. */
	u64 *collapse_last_ns;
	/* The copy of kexec and hibernation, and its test-only delay. */
	int (*trans_pgd_create_copy)(struct trans_pgd_info *info,
				     pgd_t **dst_pgdp, unsigned long start,
				     unsigned long end);
	unsigned int *trans_delay_ms;
	unsigned long *trans_delay_addr;
	atomic_t *trans_waits;
	/* kexec_file_load(2), and the image it loaded. */
	long (*sys_kexec_file_load)(const struct pt_regs *regs);
	struct kimage **kexec_image;
	/* Device memory (ZONE_DEVICE). */
	void *(*memremap_pages)(struct dev_pagemap *pgmap, int nid);
	void (*memunmap_pages)(struct dev_pagemap *pgmap);
	int (*walk_system_ram_range)(unsigned long start_pfn,
				     unsigned long nr_pages, void *arg,
				     int (*func)(unsigned long, unsigned long,
						 void *));
	struct vm_struct *(*find_vm_area)(const void *addr);
	struct mm_struct *init_mm;
	bool *rodata_full;
	bool *rodata_enabled;
	int *panic_on_warn;
	/* The boot parameter that keeps the linear map in PTEs (static). */
	bool *linear_map_ptes;
	/*
	 * Present where the kernel keeps blocks under rodata=full on CPUs
	 * with BBML2_NOABORT: the series' force_pte_mapping() (core 0022),
	 * upstream's linear_map_requires_bbml2 (6.18 on).
	 */
	void *block_policy, *block_policy_upstream, *repaint_park;
	bool *kfence_early_init;
	struct lm_inject_hook *inject;
	unsigned int *split_delay_us;
	/* Test-only: ticks spent mapping [0] and unmapping [1] hot-plug. */
	u64 *hotplug_ticks;
	struct lm_pgt_count __percpu *pgt_count;
	struct static_key_false *pgt_counting;
	unsigned long stext, text_start, init_begin;
	/* DirectMap counts and the lock they change under, with the series. */
	unsigned long *linear_map_bytes;
	raw_spinlock_t *split_lock;
	/* Contiguous user PTEs (ARM64_CONTPTE). */
	void (*contpte_try_unfold)(struct mm_struct *mm, unsigned long addr,
				   pte_t *ptep, pte_t pte);
	void (*contpte_try_fold)(struct mm_struct *mm, unsigned long addr,
				 pte_t *ptep, pte_t pte);
};

extern struct lm_syms lm_sym;
/* Serialises the commands and the results they keep. */
extern struct mutex lm_lock;

int lm_resolve(void);

/* ---- facts -------------------------------------------------------------- */

void lm_kimage_alias(unsigned long *start, unsigned long *end);
bool lm_kfence_pool(unsigned long *start, unsigned long *end);
int lm_kfence_pool_tag(void);
const char *lm_kfence_mode(void);
int lm_bbml2_state(void);
bool lm_block_policy(void);
bool lm_linear_blocks(void);
int lm_pte_layout(void);
bool lm_pud_blocks(void);

/* ---- the walker --------------------------------------------------------- */

enum lm_level { LM_LVL_P4D, LM_LVL_PUD, LM_LVL_PMD, LM_LVL_PTE };

struct lm_walk;

struct lm_walk_ops {
	/*
	 * A leaf, valid or not, of @kind at @addr; @ptr is its entry, @val
	 * its value. Return non-zero to stop the walk.
	 */
	int (*leaf)(struct lm_walk *w, int kind, void *ptr, unsigned long addr,
		    u64 val);
	/*
	 * A level walked over [addr, end) from entry @ptr: a table page of
	 * its own unless @folded, with @used entries not none. Called after
	 * its entries.
	 */
	void (*table)(struct lm_walk *w, enum lm_level level, void *ptr,
		      unsigned long addr, unsigned long end, bool folded,
		      unsigned int used);
	/* With @split_lock: called at the end, the lock still held. */
	void (*locked)(struct lm_walk *w);
};

struct lm_walk {
	const struct lm_walk_ops *ops;
	void *priv;
	bool stop;
	/* Walk under the kernel's linear_split_lock, interrupts off. */
	bool split_lock;
	/* Tables to walk other than init_mm's: a copy no one else changes. */
	pgd_t *pgd;
};

/*
 * Walk the linear map over [start, end) with memory hotplug and the
 * kernel's collapse passes, the only paths that free linear-map tables,
 * held off (both take init_mm's mmap lock or the hotplug lock for
 * writing). A concurrent split makes a walk stale, never unsafe; with
 * @split_lock, splits and collapses wait, so the sizes of leaf seen are
 * exact.
 */
void lm_walk(struct lm_walk *w, unsigned long start, unsigned long end);

/* lm_walk() over the whole linear map, from where it starts. */
static inline void lm_walk_linear(struct lm_walk *w)
{
	lm_walk(w, lm_linear_start(), PAGE_END);
}

struct lm_counts {
	u64 n[LM_NR_SCOPES][LM_NR_KINDS];
	u64 table_pages;
};

void lm_count(struct lm_counts *c);
/* The same of a copy of the linear map (trans_pgd) at @pgd. */
void lm_count_pgd(pgd_t *pgd, struct lm_counts *c);
/*
 * The bytes of each kind of leaf by a walk, and the kernel's DirectMap
 * counts, both under linear_split_lock; -EOPNOTSUPP without the counts.
 */
int lm_directmap(u64 walk[LM_NR_KINDS], u64 kern[LM_NR_KINDS]);
void lm_counts_show(struct seq_file *m, const char *prefix,
		    struct lm_counts *c, bool scopes);
/*
 * Leaves of the linear map of physical [start, start + size) by kind;
 * n[LM_NR_KINDS]: pages not mapped.
 */
void lm_range_leaves(phys_addr_t start, unsigned long size,
		     unsigned long n[LM_NR_KINDS + 1]);
/* The leaf mapping @addr: its kind, or -ENOENT if unmapped. */
int lm_lookup(unsigned long addr, u64 *val);
/* Is the linear-map page at @addr mapped valid, and writable? */
void lm_page_state(unsigned long addr, bool *valid, bool *writable);

/* ---- collapse ----------------------------------------------------------- */

/* A full collapse pass now; -EOPNOTSUPP without collapse or with it off. */
int lm_collapse(void);
/* Does the kernel have collapse (on or off)? Is it on? */
bool lm_has_collapse(void);
bool lm_collapse_on(void);

/* ---- memory ------------------------------------------------------------- */

struct page *lm_alloc_block(unsigned int order, int *kind, const char **why);

/* ---- probes ------------------------------------------------------------- */

bool lm_probe_write(void *addr);
void *lm_alias_of(void *vaddr);
void lm_probe_range(void *addr, unsigned long pages, unsigned long *vm_w,
		    unsigned long *alias_w);

/* ---- parameters --------------------------------------------------------- */

enum lm_param_type { LM_ULONG, LM_LIST, LM_RANGE };

/*
 * "name=value": LM_ULONG, LM_LIST "a:b:c" into val[0..max) with the count
 * in *nr, LM_RANGE "start,size" (page-aligned, size non-zero) into val[0]
 * and val[1].
 */
struct lm_param {
	const char *name;
	enum lm_param_type type;
	unsigned long *val;
	unsigned int max;
	unsigned int *nr;
};

int lm_parse_params(char *buf, const struct lm_param *params, unsigned int n);
int lm_copy_cmd(const char __user *ubuf, size_t len, char *buf, size_t size);

/* ---- commands ----------------------------------------------------------- */

/*
 * A debugfs file that takes a command and shows the result of the last
 * one. A write allocates a result of @size, fills in the defaults, parses
 * the parameters into it, runs it under lm_lock and keeps it in place of
 * the previous one; a read shows the kept result, "none" before the first.
 */
struct lm_cmd {
	size_t size;
	void (*defaults)(void *r);
	/* Parse into @r; NULL means lm_parse_params() of params(). */
	int (*parse)(char *buf, void *r);
	unsigned int (*params)(void *r, struct lm_param *p);
	/* Refuse parameters out of range, before anything runs (optional). */
	int (*check)(void *r);
	/* Run under lm_lock; a negative return is the write's error. */
	int (*run)(void *r);
	void (*show)(struct seq_file *m, void *r);
	/* Frees what @r holds besides itself (optional). */
	void (*release)(void *r);
	int (*available)(void);	/* -EOPNOTSUPP when it cannot run */
	void *last;
};

#define LM_PARAMS_MAX	12

struct lm_file {
	const char *name;
	umode_t mode;
	const struct file_operations *fops;	/* or a command: */
	struct lm_cmd *cmd;
};

void lm_files_create(struct dentry *dir, const struct lm_file *f,
		     unsigned int n);
void lm_cmd_forget(struct lm_cmd *cmd);

/* A feature: its files, and what to undo at unload (optional). */
struct lm_feature {
	const struct lm_file *files;
	unsigned int nr_files;
	void (*exit)(void);
};

/* A feature that is one command file, run by NAME_cmd. */
#define LM_COMMAND_FEATURE(_name, _file)				\
	static const struct lm_file _name##_files[] = {			\
		{ _file, 0644, NULL, &_name##_cmd },			\
	};								\
	LM_FEATURE(_name, NULL)

/* Defines lm_feature_NAME from the array NAME_files. */
#define LM_FEATURE(_name, _exit)					\
	const struct lm_feature lm_feature_##_name = {			\
		.files = _name##_files,					\
		.nr_files = ARRAY_SIZE(_name##_files),			\
		.exit = (_exit),					\
	}

/* ---- the auditor (linmap_auditor.c), for every feature that checks ------ */

#define LM_AUDIT_SHOWN	16

struct lm_audit {
	unsigned long violations;
	unsigned long leaves, invalid_leaves, pages_checked;
	unsigned long tables, tables_counted;
	/* 1: DirectMap agrees with a locked walk, 0: not, -1: no counts. */
	int directmap;
	unsigned long ki_start, ki_end;
	bool ki_ro;
	/* System RAM (memblock memory less NOMAP), adjacent ranges merged. */
	unsigned int nr_ram;
	struct { unsigned long start, end; } ram[64];
	/* Every table page seen, to find shared, free or leaked ones. */
	phys_addr_t *table_pa;
	unsigned long max_tables;
	bool table_overflow;
	unsigned int shown;
	char msg[LM_AUDIT_SHOWN][128];
};

int lm_audit_run(struct lm_audit *a);
extern atomic_t lm_audit_races;
/*
 * The tables alone, walked under the kernel's split lock: none empty,
 * referenced twice or free. Splits and folds wait for that lock and
 * permission changes leave tables alone, so this may run while other CPUs
 * change permissions. Free a->table_pa with lm_audit_free().
 */
int lm_audit_tables(struct lm_audit *a);
void lm_audit_free(struct lm_audit *a);
int lm_audit_ram(struct lm_audit *a);
bool lm_audit_has_table(struct lm_audit *a, phys_addr_t pa);
void lm_audit_show(struct seq_file *m, const char *prefix,
		   struct lm_audit *a);
/* Run the auditor; its violations and first message, -errno if none ran. */
long lm_audit_once(char *first, size_t size);
/* The auditor's own test cases (linmap_audit.c). */
unsigned int lm_audit_nr_cases(void);
const char *lm_audit_case_name(unsigned int i);
long lm_audit_case(unsigned int i, unsigned long *want);
/* The checks, for the auditor's own tests. */
void lm_audit_leaf(struct lm_audit *a, unsigned long addr, unsigned long size,
		   u64 val, phys_addr_t pa, const char *level);
void lm_audit_cont(struct lm_audit *a, unsigned long addr, u64 *vals,
		   unsigned int nr, unsigned long step, const char *level);

#endif
