/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The interface of the linmap_test module, shared by the module and by
 * selftests/linmap: file names, limits, the kinds of leaf and their names,
 * and the one ioctl. Everything else the module offers is key=value text
 * (see Documentation/testing.rst in the kit).
 */
#ifndef LINMAP_UAPI_H
#define LINMAP_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Under debugfs. */
#define LM_DIR_NAME		"linmap_test"

/* Areas up to this many pages also report a per-page probe map. */
#define LM_MAP_MAX		256
/* Limits of the stress, shadow-model stress and setmem commands. */
#define LM_STRESS_MAX_THREADS	64
#define LM_STRESS_MAX_ROUNDS	64
#define LM_CPA_MAX_THREADS	64
#define LM_SETMEM_MAX_SIZES	8
#define LM_SETMEM_MAX_REPS	32

/* Leaf kinds, largest first: the order of "levels=" in the state file. */
enum lm_kind {
	LM_PUD,
	LM_CONT_PMD,
	LM_PMD,
	LM_CONT_PTE,
	LM_PTE,
	LM_NR_KINDS,
};

#define LM_KIND_NAMES	{ "pud", "cont_pmd", "pmd", "cont_pte", "pte" }

/* Parts of the linear map "counts" reports apart; rest = all - the others. */
enum lm_scope {
	LM_ALL,
	LM_KIMAGE,
	LM_KFENCE,
	LM_REST,
	LM_NR_SCOPES,
};

#define LM_SCOPE_NAMES	{ "all", "kimage", "kfence", "rest" }

/* The cases of "inject", numbered for its case= parameter. */
enum lm_inject_case {
	LM_INJ_SPLIT_BLOCK,
	LM_INJ_DIRECT_MAP_PAGE,
	LM_INJ_VMALLOC_RO,
	LM_INJ_HOT_ADD,
	LM_INJ_RESET_PERMS,
	LM_INJ_NR_CASES,
};

#define LM_INJ_CASE_NAMES	\
	{ "split_block", "direct_map_page", "vmalloc_ro", "hot_add",	\
	  "reset_perms" }

/*
 * LM_IOC_LEAF on the "leaf" file: the leaf entry that maps @addr, a
 * linear-map address. A lookup is one call with several results, so it is
 * an ioctl rather than a write followed by a read.
 */
struct lm_leaf_query {
	__u64 addr;		/* in */
	__u64 entry;		/* out: the descriptor, 0 if unmapped */
	__u64 entry_size;	/* out: bytes one entry maps, 0 if unmapped */
	__s32 kind;		/* out: enum lm_kind, -1 if unmapped */
	__u32 valid;		/* out: 1 if PTE_VALID */
	__u32 writable;		/* out: 1 if mapped and not read-only */
	__u32 pad;
};

#define LM_IOC_MAGIC	'L'
#define LM_IOC_LEAF	_IOWR(LM_IOC_MAGIC, 1, struct lm_leaf_query)

#endif /* LINMAP_UAPI_H */
