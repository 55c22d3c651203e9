/* SPDX-License-Identifier: GPL-2.0 */
/* The "cpa" feature's own parts: random rounds and aimed rounds. */
#ifndef LINMAP_CPA_H
#define LINMAP_CPA_H

#include "linmap.h"

struct cpa_params {
	unsigned long seed, threads, ops, secs, pages, batch, aim;
	unsigned long aim_pte;		/* aim at contiguous PTE groups only */
	unsigned long collapse_ms;	/* a collapse pass this often, 0: none */
	unsigned long audit;		/* 0: the caller audits once quiet */
};

struct cpa_stats {
	u64 ops, ro, rw, invalid, valid, batches, verified;
	u64 mismatches, call_errors, alloc_failures, retargets;
	u64 aimed, aim_calls, aim_slowed, aimed_pte;
	/* Made by the main thread while the others run. */
	u64 collapse_passes, collapse_errors, directmap_checks;
	u64 directmap_mismatches, table_audits, table_violations;
};

struct cpa_result {
	struct cpa_params p;
	struct cpa_stats s;
	u64 elapsed_ms;
	int ret;
	char first[192];
	struct lm_audit audit;
};

void cpa_aim(struct cpa_result *r);

#endif
