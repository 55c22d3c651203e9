/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the linmap selftests share: the declarations of linmap_lib.c
 * (reading the linmap_test module's debugfs files, the state the kernel
 * claims, the counts and leaf lookups, the auditor after every test) and
 * the fixture every test runs in (struct lm_ctx, LM_FIXTURE; "linmap" has
 * no variants, so its tests keep their names). A test program includes
 * it, which brings in the kselftest harness; linmap_lib.c includes it
 * with LM_LIB_IMPL defined, without the harness.
 */
#ifndef LINMAP_LIB_H
#define LINMAP_LIB_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef LM_LIB_IMPL
#include "kselftest.h"
#else
#include "kselftest_harness.h"
#endif
#include "linmap_uapi.h"

#define LM_DEBUGFS		"/sys/kernel/debug"
#ifndef LM_DIR
#define LM_DIR			LM_DEBUGFS "/" LM_DIR_NAME
#endif
#define LM_KO			"/lib/modules/linmap_test.ko"
#define LM_DEBUGFS_MAGIC	0x64626720

/* The kernel's collapse files under debugfs, with the series. */
#define LM_HEAL_DIR		LM_DEBUGFS "/linear_map"

extern const char * const lm_kind_name[LM_NR_KINDS];
extern const char * const lm_scope_name[LM_NR_SCOPES];

enum lm_kfence {
	LM_KFENCE_NONE,
	LM_KFENCE_EARLY,
	LM_KFENCE_LATE,
	LM_NR_KFENCE,
};

extern const char * const lm_kfence_name[LM_NR_KFENCE];
/* Index in this table is the value stored in lm_state.bbml2 plus one. */
extern const char * const lm_bbml2_name[3];

struct lm_range {
	unsigned long long start;
	unsigned long long end;
	bool none;
};

struct lm_state {
	unsigned long long page_size;
	unsigned long long rodata_full;
	unsigned long long debug_pagealloc;
	unsigned long long can_set_direct_map;
	unsigned long long linear_blocks;	/* the module's reading of the policy */
	unsigned long long block_policy;	/* blocks with BBML2 under rodata=full */
	unsigned long long cont_ptes;		/* 0 when not reported */
	unsigned long long cont_pmds;
	int kfence;
	int bbml2;			/* 1, 0, or -1 for unknown */
	int pte_layout;			/* linear_map_ptes: 1, 0, -1 for none */
	int collapse;			/* folding back: 1, 0, -1 for none */
	unsigned long long midr;	/* of the CPU the module read it on */
	struct lm_range kfence_pool;
	long long kfence_pool_tag;	/* tag-based KASAN only, else -1 */
	struct lm_range kimage;
	struct lm_range linear;
	bool has[LM_NR_KINDS];
	int nr_levels;
	int level[LM_NR_KINDS];		/* kinds in the order listed */
};

struct lm_counts {
	unsigned long long size[LM_NR_KINDS];
	unsigned long long n[LM_NR_SCOPES][LM_NR_KINDS];
	unsigned long long bytes[LM_NR_SCOPES][LM_NR_KINDS];
	unsigned long long table_pages;
	unsigned long long table_bytes;
	unsigned long long mapped_bytes;
};

struct lm_area {
	unsigned long long pages;
	unsigned long long addr;
	unsigned long long alias0;
	unsigned long long vmalloc_writable;
	unsigned long long alias_writable;
	long long last_ret;
	char alias_map[LM_MAP_MAX + 1];	/* per page: 1 = writable */
};

/* A file of the module as last read, kept to be shown if the test fails. */
struct lm_out {
	const char *file;
	char *text;
	bool shown;			/* already in the log */
};

/* One per file of the module's directory. */
#define LM_OUTS			12

/* What every fixture holds. */
struct lm_ctx {
	struct lm_state st;
	struct lm_out out[LM_OUTS];
	bool area_used;
	bool ready;
};

/*
 * Read a whole file.  Returns a malloc()ed NUL-terminated string, or NULL
 * with errno set.
 */

/*
 * How the helpers of linmap_lib.c report to the harness, which only the
 * test program links: a log line, a failed EXPECT (the test goes on), a
 * failed ASSERT (the test ends there) or a SKIP.
 */
struct __test_metadata;
enum lm_how { LM_HOW_LOG, LM_HOW_EXPECT, LM_HOW_ASSERT, LM_HOW_SKIP };
typedef void (*lm_harness_fn)(struct __test_metadata *_metadata, enum lm_how how,
			      const char *file, int line, const char *msg);
extern lm_harness_fn lm_harness;
void __printf(5, 6) lm_report(struct __test_metadata *_metadata, enum lm_how how,
			      const char *file, int line, const char *fmt, ...);
#define LM_LOG(md, ...)	lm_report(md, LM_HOW_LOG, __FILE__, __LINE__, __VA_ARGS__)
#define lm_skip(md, ...) lm_report(md, LM_HOW_SKIP, __FILE__, __LINE__, __VA_ARGS__)
#define LM_CHECK(md, how, cond, ...)					\
	do {								\
		if (!(cond))						\
			lm_report(md, how, __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)
#define LM_EXPECT(md, cond, ...)	LM_CHECK(md, LM_HOW_EXPECT, cond, __VA_ARGS__)
#define LM_ASSERT(md, cond, ...)	LM_CHECK(md, LM_HOW_ASSERT, cond, __VA_ARGS__)

char *lm_read_path(const char *path);
int lm_write(const char *name, const char *cmd);
struct lm_out *lm_get(struct __test_metadata *_metadata,
		      struct lm_ctx *lm, const char *file);
int lm_kv_num(const char *text, const char *key, unsigned long long *val);
unsigned long long __printf(3, 4)
lm_num(struct __test_metadata *_metadata, struct lm_out *o, const char *fmt, ...);
bool lm_bool(struct __test_metadata *_metadata, struct lm_out *o,
	     const char *key);
void lm_str(struct __test_metadata *_metadata, struct lm_out *o,
	    const char *key, char *buf, size_t size);
/* Did the command report a skip? Its reason into @skip. */
bool lm_skipped(struct __test_metadata *_metadata, struct lm_out *o,
		char *skip, size_t size);
struct lm_out *lm_run(struct __test_metadata *_metadata,
		      struct lm_ctx *lm, const char *file,
		      const char *cmd, char *skip, size_t size);
void lm_parse_state(struct __test_metadata *_metadata,
		    struct lm_ctx *lm, struct lm_state *st);
void lm_get_counts(struct __test_metadata *_metadata, struct lm_ctx *lm,
		   const struct lm_state *st, struct lm_counts *c);
void lm_log_counts(struct __test_metadata *_metadata,
		   const struct lm_state *st, const char *tag,
		   const struct lm_counts *c);
const char *lm_kind_str(int kind);
unsigned long long lm_group_entries(int kind, unsigned long long ps);
unsigned long long lm_entry_size(int kind, unsigned long long ps);
int lm_leaf(struct lm_leaf_query *q);
void lm_get_leaf(struct __test_metadata *_metadata,
		 const struct lm_state *st, unsigned long long va,
		 struct lm_leaf_query *q);
void lm_area_cmd(struct __test_metadata *_metadata, struct lm_ctx *lm,
		 const char *cmd);
void lm_area_read(struct __test_metadata *_metadata, struct lm_ctx *lm,
		  struct lm_area *a);
unsigned long long lm_stable_bytes(const struct lm_counts *c, int k);
unsigned long long lm_stable_mapped(const struct lm_counts *c);
void lm_expect_unchanged(struct __test_metadata *_metadata,
			 const struct lm_state *st,
			 const struct lm_counts *before,
			 const struct lm_counts *after);
unsigned long long lm_meminfo(const char *key);
const char *lm_cmdline(const char *key, char *out, size_t size);
bool lm_cmdline_flag(const char *key);
bool lm_overlap(const struct lm_range *a, const struct lm_range *b);
bool lm_within(const struct lm_range *in, const struct lm_range *out);
struct lm_out *lm_audit_walks(struct __test_metadata *_metadata,
			      struct lm_ctx *lm, const char *when,
			      unsigned long long *v, int *walks);
struct lm_out *lm_audit(struct __test_metadata *_metadata,
			struct lm_ctx *lm, const char *when);
int lm_write_path(const char *path, const char *text);
void lm_setup(struct __test_metadata *_metadata, struct lm_ctx *lm);
void lm_teardown(struct __test_metadata *_metadata, struct lm_ctx *lm, bool failed);
bool lm_collapse_on(char *why, size_t size);
void lm_expect_zero(struct __test_metadata *_metadata, struct lm_out *o,
		    const char *prefix, const char * const *keys, int nr);
bool lm_env_range(const char *name, unsigned long long *start,
		  unsigned long long *size);

#ifndef LM_LIB_IMPL
/* The harness's side of lm_report(), as its own macros would do it. */
static void lm_harness_report(struct __test_metadata *_metadata, enum lm_how how,
			      const char *file, int line, const char *msg)
{
	if (how == LM_HOW_SKIP)
		SKIP(return, "%s", msg);
	if (TH_LOG_ENABLED)
		fprintf(TH_LOG_STREAM, "# %s:%d:%s:%s\n", file, line,
			_metadata->name, msg);
	if (how == LM_HOW_LOG)
		return;
	_metadata->exit_code = KSFT_FAIL;
	if (how == LM_HOW_ASSERT)
		__bail(1, _metadata);
}

static void __attribute__((constructor)) lm_harness_init(void)
{
	lm_harness = lm_harness_report;
}

/*
 * The harness's own limit is 30 s a test.  Every test's teardown audits the
 * whole linear map, and a kernel that maps 4 GiB with pages (the unpatched
 * base under rodata=full: a million leaves) takes a good part of that under
 * TCG for each audit.  Tests with more to do name their own, longer limits.
 */
#define LM_TIMEOUT	240

/*
 * The setup and teardown of every fixture, which holds a struct lm_ctx lm.
 * "linmap" has no variants, so its tests keep their names; the others run
 * a test once per case.
 */
#define LM_FIXTURE(fixture)						\
	FIXTURE_SETUP(fixture)						\
	{								\
		lm_setup(_metadata, &self->lm);				\
	}								\
	FIXTURE_TEARDOWN(fixture)					\
	{								\
		lm_teardown(_metadata, &self->lm,			\
			    _metadata->exit_code == KSFT_FAIL);	\
	}								\
	struct lm_fixture_##fixture /* for the caller's semicolon */

FIXTURE(linmap) {
	struct lm_ctx lm;
};

LM_FIXTURE(linmap);

#endif /* LM_LIB_IMPL */

#endif /* LINMAP_LIB_H */
