// SPDX-License-Identifier: GPL-2.0
/*
 * What the linmap selftests share, compiled once and linked into each
 * program: reading the linmap_test module's debugfs files, the state the
 * kernel claims, the counts and leaf lookups, the auditor after every
 * test, and the fixture's setup and teardown. The kselftest harness can
 * only be in one object of a program, so the checks here report through
 * lm_harness, which linmap_lib.h points at the harness in each program.
 *
 * Longer than 400 lines: one object, so that each program links it once;
 * its parts (module I/O, parsing, the fixture) call one another.
 */
#define LM_LIB_IMPL
#include <strings.h>

#include "linmap_lib.h"

const char * const lm_kind_name[LM_NR_KINDS] = LM_KIND_NAMES;
const char * const lm_scope_name[LM_NR_SCOPES] = LM_SCOPE_NAMES;
const char * const lm_kfence_name[LM_NR_KFENCE] = { "none", "early", "late" };
/* Index in this table is the value stored in lm_state.bbml2 plus one. */
const char * const lm_bbml2_name[3] = { "unknown", "0", "1" };

lm_harness_fn lm_harness;

static void lm_vreport(struct __test_metadata *_metadata, enum lm_how how,
		       const char *file, int line, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!lm_harness) {
		fprintf(stderr, "# %s:%d: %s (no harness)\n", file, line, msg);
		abort();
	}
	lm_harness(_metadata, how, file, line, msg);
	/* An assertion ends the test in the harness; it never comes back. */
	if (how == LM_HOW_ASSERT)
		abort();
}

void lm_report(struct __test_metadata *_metadata, enum lm_how how,
	       const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lm_vreport(_metadata, how, file, line, fmt, ap);
	va_end(ap);
}

char *lm_read_path(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf, *tmp;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf)
		goto fail;
	for (;;) {
		if (cap - len < 2) {
			tmp = realloc(buf, cap * 2);
			if (!tmp)
				goto fail;
			buf = tmp;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return buf;

fail:
	err = errno;
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

/*
 * Send one command.  Each command is a single write() on a fresh open so that
 * the module sees it in one piece.  Returns 0 or -errno.
 */
int lm_write(const char *name, const char *cmd)
{
	char path[256], line[512];
	ssize_t n;
	int fd, len, ret;

	snprintf(path, sizeof(path), "%s/%s", LM_DIR, name);
	len = snprintf(line, sizeof(line), "%s\n", cmd);
	if (len < 0 || len >= (int)sizeof(line))
		return -E2BIG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, line, len);
	if (n < 0)
		ret = -errno;
	else
		ret = n == len ? 0 : -EIO;
	close(fd);
	return ret;
}

/* Log a file as read, a line at a time, so that each keeps TAP's "# ". */
static void lm_show(struct __test_metadata *_metadata, struct lm_out *o)
{
	const char *p;
	int n;

	for (p = o->text; *p; p += n + !!p[n]) {
		n = strcspn(p, "\n");
		LM_LOG(_metadata, "%s: %.*s", o->file, n, p);
	}
	o->shown = true;
}

/*
 * Read @file of the module into @lm, in place of what an earlier read of it
 * left. Returns NULL with errno set if it cannot be read.
 */
static struct lm_out *lm_load(struct lm_ctx *lm, const char *file)
{
	char path[256], *text;
	struct lm_out *o;
	int i;

	snprintf(path, sizeof(path), "%s/%s", LM_DIR, file);
	text = lm_read_path(path);
	if (!text)
		return NULL;
	for (i = 0; i < LM_OUTS - 1; i++)
		if (!lm->out[i].file || !strcmp(lm->out[i].file, file))
			break;
	o = &lm->out[i];
	free(o->text);
	o->file = file;
	o->text = text;
	o->shown = false;
	return o;
}

struct lm_out *lm_get(struct __test_metadata *_metadata,
		      struct lm_ctx *lm, const char *file)
{
	struct lm_out *o = lm_load(lm, file);
	int err = errno;

	LM_ASSERT(_metadata, o, "cannot read %s/%s: %s", LM_DIR, file, strerror(err));
	return o;
}

/*
 * The value of the first @key in @text, made of white-space separated
 * "key=value" tokens. It runs to the end of its line; a number ends at
 * the first blank. NULL when @key is absent.
 */
static const char *lm_kv(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = strstr(text, key); p; p = strstr(p + 1, key))
		if ((p == text || isspace((unsigned char)p[-1])) && p[len] == '=')
			return p + len + 1;
	return NULL;
}

/* Decimal, or hex after 0x, perhaps negative; anything else is malformed. */
int lm_kv_num(const char *text, const char *key, unsigned long long *val)
{
	const char *v = lm_kv(text, key);
	int base = 10;
	char *end;
	bool neg;

	if (!v)
		return -ENOENT;
	neg = *v == '-';
	v += neg;
	if (!strncmp(v, "0x", 2)) {
		base = 16;
		v += 2;
	}
	/* strtoull() would accept a sign or leading blanks; the format does not. */
	if (!isxdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	*val = strtoull(v, &end, base);
	if (errno || (*end && !isspace((unsigned char)*end)))
		return -EINVAL;
	if (neg)
		*val = -*val;
	return 0;
}

/*
 * The number under the key printf() makes of @fmt in @o. A missing or
 * malformed value fails the test and shows the file.
 */
unsigned long long __printf(3, 4)
lm_num(struct __test_metadata *_metadata, struct lm_out *o, const char *fmt, ...)
{
	unsigned long long val = 0;
	char key[96];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	ret = lm_kv_num(o->text, key, &val);
	if (ret) {
		lm_show(_metadata, o);
		LM_ASSERT(_metadata, !ret, "%s: key '%s' %s", o->file, key,
			  ret == -ENOENT ? "missing" : "not a number");
	}
	return val;
}

bool lm_bool(struct __test_metadata *_metadata, struct lm_out *o,
	     const char *key)
{
	unsigned long long val = lm_num(_metadata, o, "%s", key);

	LM_ASSERT(_metadata, val <= 1, "%s: %s=%llu, expected 0 or 1", o->file, key, val);
	return val;
}

/* The rest of the line after "@key=", copied to @buf. */
void lm_str(struct __test_metadata *_metadata, struct lm_out *o,
	    const char *key, char *buf, size_t size)
{
	const char *v = lm_kv(o->text, key);
	size_t len = v ? strcspn(v, "\n") : 0;

	if (!v || len >= size) {
		lm_show(_metadata, o);
		LM_ASSERT(_metadata, v && len < size, "%s: key '%s' %s", o->file, key,
			  v ? "too long" : "missing");
	}
	snprintf(buf, size, "%.*s", (int)len, v);
}

bool lm_skipped(struct __test_metadata *_metadata, struct lm_out *o,
		char *skip, size_t size)
{
	if (!lm_kv(o->text, "skip"))
		return false;
	lm_str(_metadata, o, "skip", skip, size);
	return true;
}

/*
 * Write @cmd to the module's @file and read its result. NULL, with the
 * module's reason in @skip, where the module could not run it; otherwise
 * the write must have succeeded.
 */
struct lm_out *lm_run(struct __test_metadata *_metadata,
		      struct lm_ctx *lm, const char *file,
		      const char *cmd, char *skip, size_t size)
{
	int ret = lm_write(file, cmd);
	struct lm_out *o = lm_get(_metadata, lm, file);

	if (lm_skipped(_metadata, o, skip, size))
		return NULL;
	LM_EXPECT(_metadata, !ret, "%s: '%s': %s", file, cmd, strerror(-ret));
	return o;
}

/* Ranges are "0xSTART-0xEND" (END exclusive), or "none" where allowed. */
static void lm_range(struct __test_metadata *_metadata, struct lm_out *o,
		     const char *key, struct lm_range *r, bool may_be_none)
{
	char str[80], extra;
	int n;

	lm_str(_metadata, o, key, str, sizeof(str));
	memset(r, 0, sizeof(*r));
	r->none = may_be_none && !strcmp(str, "none");
	if (r->none)
		return;
	n = sscanf(str, "0x%llx-0x%llx%c", &r->start, &r->end, &extra);
	LM_ASSERT(_metadata, n == 2, "%s: %s=%s is not a range", o->file, key, str);
}

static int lm_index(const char *name, const char * const *names, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

void lm_parse_state(struct __test_metadata *_metadata,
		    struct lm_ctx *lm, struct lm_state *st)
{
	struct lm_out *o = lm_get(_metadata, lm, "state");
	char str[128], *tok, *save = NULL;
	unsigned long long v;
	int k;

	memset(st, 0, sizeof(*st));
	st->page_size = lm_num(_metadata, o, "page_size");
	st->rodata_full = lm_bool(_metadata, o, "rodata_full");
	st->debug_pagealloc = lm_bool(_metadata, o, "debug_pagealloc");
	st->can_set_direct_map = lm_bool(_metadata, o, "can_set_direct_map");
	st->linear_blocks = lm_bool(_metadata, o, "linear_blocks");
	st->block_policy = lm_bool(_metadata, o, "block_policy");
	/* Optional; state_sane checks them where given. */
	lm_kv_num(o->text, "cont_ptes", &st->cont_ptes);
	lm_kv_num(o->text, "cont_pmds", &st->cont_pmds);
	lm_str(_metadata, o, "kfence", str, sizeof(str));
	st->kfence = lm_index(str, lm_kfence_name, ARRAY_SIZE(lm_kfence_name));
	LM_ASSERT(_metadata, st->kfence >= 0, "state: unexpected kfence=%s", str);
	lm_str(_metadata, o, "bbml2", str, sizeof(str));
	st->bbml2 = lm_index(str, lm_bbml2_name, ARRAY_SIZE(lm_bbml2_name)) - 1;
	LM_ASSERT(_metadata, st->bbml2 >= -1, "state: unexpected bbml2=%s", str);
	/* Only a module that knows of linear_map_ptes says it. */
	st->pte_layout = -1;
	if (!lm_kv_num(o->text, "pte_layout", &v))
		st->pte_layout = (int)v;
	st->collapse = -1;
	if (!lm_kv_num(o->text, "collapse", &v))
		st->collapse = (int)v;
	st->midr = 0;
	lm_kv_num(o->text, "midr", &st->midr);
	lm_range(_metadata, o, "kfence_pool", &st->kfence_pool, true);
	st->kfence_pool_tag = -1;
	if (!lm_kv_num(o->text, "kfence_pool_tag", &v))
		st->kfence_pool_tag = (long long)v;
	lm_range(_metadata, o, "kimage_alias", &st->kimage, false);
	lm_range(_metadata, o, "linear", &st->linear, false);

	/* Unknown or repeated kinds make every later check meaningless. */
	lm_str(_metadata, o, "levels", str, sizeof(str));
	for (tok = strtok_r(str, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		k = lm_index(tok, lm_kind_name, LM_NR_KINDS);
		LM_ASSERT(_metadata, k >= 0, "state: unknown leaf kind '%s' in levels", tok);
		LM_ASSERT(_metadata, !st->has[k], "state: '%s' listed twice in levels", tok);
		st->has[k] = true;
		st->level[st->nr_levels++] = k;
	}
	LM_ASSERT(_metadata, st->nr_levels > 0, "state: empty levels");
}

void lm_get_counts(struct __test_metadata *_metadata, struct lm_ctx *lm,
		   const struct lm_state *st, struct lm_counts *c)
{
	struct lm_out *o = lm_get(_metadata, lm, "counts");
	const char *kind;
	int k, s;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (!st->has[k])
			continue;
		kind = lm_kind_name[k];
		c->size[k] = lm_num(_metadata, o, "%s_size", kind);
		for (s = 0; s < LM_NR_SCOPES; s++) {
			c->n[s][k] = lm_num(_metadata, o, "%s.%s",
					    lm_scope_name[s], kind);
			c->bytes[s][k] = lm_num(_metadata, o, "%s.%s_bytes",
						lm_scope_name[s], kind);
		}
	}
	c->table_pages = lm_num(_metadata, o, "table_pages");
	c->table_bytes = lm_num(_metadata, o, "table_bytes");
	c->mapped_bytes = lm_num(_metadata, o, "mapped_bytes");
}

void lm_log_counts(struct __test_metadata *_metadata,
		   const struct lm_state *st, const char *tag,
		   const struct lm_counts *c)
{
	int i, k;

	LM_LOG(_metadata, "counts %s: table_pages=%llu mapped_bytes=%llu", tag,
	       c->table_pages, c->mapped_bytes);
	for (i = 0; i < st->nr_levels; i++) {
		k = st->level[i];
		LM_LOG(_metadata, "counts %s: %-8s all=%llu kimage=%llu kfence=%llu rest=%llu",
		       tag,
		       lm_kind_name[k], c->n[LM_ALL][k], c->n[LM_KIMAGE][k],
		       c->n[LM_KFENCE][k], c->n[LM_REST][k]);
	}
}

/* The name of a kind, or "none" for an unmapped (negative) one. */
const char *lm_kind_str(int kind)
{
	return kind < 0 ? "none" : lm_kind_name[kind];
}

/* Entries in one contiguous group (CONT_PTES/CONT_PMDS), 1 for other kinds. */
unsigned long long lm_group_entries(int kind, unsigned long long ps)
{
	switch (kind) {
	case LM_CONT_PTE:
		return ps == 4096 ? 16 : ps == 16384 ? 128 : 32;
	case LM_CONT_PMD:
		return ps == 4096 ? 16 : 32;
	default:
		return 1;
	}
}

/* Bytes one entry of @kind maps: each table holds ps / 8 descriptors. */
unsigned long long lm_entry_size(int kind, unsigned long long ps)
{
	unsigned long long ptrs = ps / 8;

	switch (kind) {
	case LM_PUD:
		return ps * ptrs * ptrs;
	case LM_CONT_PMD:
	case LM_PMD:
		return ps * ptrs;
	default:
		return ps;
	}
}

/* LM_IOC_LEAF on the "leaf" file. Returns 0 or -errno. */
int lm_leaf(struct lm_leaf_query *q)
{
	int fd, ret = 0;

	fd = open(LM_DIR "/leaf", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, LM_IOC_LEAF, q))
		ret = -errno;
	close(fd);
	return ret;
}

void lm_get_leaf(struct __test_metadata *_metadata,
		 const struct lm_state *st, unsigned long long va,
		 struct lm_leaf_query *q)
{
	int ret;

	memset(q, 0, sizeof(*q));
	q->addr = va;
	ret = lm_leaf(q);
	LM_ASSERT(_metadata, !ret, "leaf 0x%llx: %s", va, strerror(-ret));
	if (q->kind < 0) {
		LM_ASSERT(_metadata, q->kind == -1, "leaf 0x%llx: kind %d", va, q->kind);
		/* Unmapped: nothing may be claimed about an entry. */
		LM_ASSERT(_metadata, !(q->entry | q->entry_size | q->valid | q->writable),
			  "leaf 0x%llx: unmapped, yet an entry is reported", va);
		return;
	}
	LM_ASSERT(_metadata, q->kind < LM_NR_KINDS, "leaf 0x%llx: kind %d", va, q->kind);
	LM_ASSERT(_metadata, st->has[q->kind], "leaf: kind %s not in levels",
		  lm_kind_name[q->kind]);
	/* The answer must be an entry of that kind, as the walk sees it. */
	LM_ASSERT(_metadata, lm_entry_size(q->kind, st->page_size) == q->entry_size,
		  "leaf 0x%llx: %s of %llu bytes", va, lm_kind_name[q->kind],
		  (unsigned long long)q->entry_size);
	LM_ASSERT(_metadata, q->entry, "leaf 0x%llx: a mapped leaf of 0", va);
	LM_ASSERT(_metadata, q->valid <= 1 && q->writable <= 1,
		  "leaf 0x%llx: valid=%d writable=%d", va, (int)q->valid, (int)q->writable);
}

void lm_area_cmd(struct __test_metadata *_metadata, struct lm_ctx *lm,
		 const char *cmd)
{
	int ret = lm_write("area", cmd);

	LM_ASSERT(_metadata, !ret, "area '%s': %s", cmd, strerror(-ret));
	if (!strncmp(cmd, "alloc", 5))
		lm->area_used = true;
	else if (!strcmp(cmd, "free"))
		lm->area_used = false;
}

void lm_area_read(struct __test_metadata *_metadata, struct lm_ctx *lm,
		  struct lm_area *a)
{
	struct lm_out *o = lm_get(_metadata, lm, "area");

	a->pages = lm_num(_metadata, o, "pages");
	a->addr = lm_num(_metadata, o, "addr");
	a->alias0 = lm_num(_metadata, o, "alias0");
	a->last_ret = lm_num(_metadata, o, "last_ret");
	a->vmalloc_writable = lm_num(_metadata, o, "vmalloc_writable");
	a->alias_writable = lm_num(_metadata, o, "alias_writable");
	a->alias_map[0] = '\0';
	if (a->pages && a->pages <= LM_MAP_MAX)
		lm_str(_metadata, o, "alias_map", a->alias_map, sizeof(a->alias_map));
}

/*
 * The part of the walk that only our own operations change.  KFENCE toggles
 * the valid bit of its pool pages behind our back, and with debug_pagealloc
 * every page allocation in the system does the same to a PTE, so those parts
 * are left out.
 */
static unsigned long long lm_stable_n(const struct lm_counts *c, int k)
{
	return c->n[LM_KIMAGE][k] + c->n[LM_REST][k];
}

unsigned long long lm_stable_bytes(const struct lm_counts *c, int k)
{
	return c->bytes[LM_KIMAGE][k] + c->bytes[LM_REST][k];
}

unsigned long long lm_stable_mapped(const struct lm_counts *c)
{
	unsigned long long sum = 0;
	int k;

	for (k = 0; k < LM_NR_KINDS; k++)
		sum += lm_stable_bytes(c, k);
	return sum;
}

void lm_expect_unchanged(struct __test_metadata *_metadata,
			 const struct lm_state *st,
			 const struct lm_counts *before,
			 const struct lm_counts *after)
{
	int k;

	for (k = 0; k < LM_NR_KINDS; k++) {
		if (!st->has[k] || (k == LM_PTE && st->debug_pagealloc))
			continue;
		LM_EXPECT(_metadata, lm_stable_n(before, k) == lm_stable_n(after, k),
			  "%s leaves changed: %llu, then %llu", lm_kind_name[k],
			  lm_stable_n(before, k), lm_stable_n(after, k));
	}
	LM_EXPECT(_metadata, before->table_pages == after->table_pages,
		  "table pages changed: %llu, then %llu", before->table_pages,
		  after->table_pages);
}

/*
 * The module to load: LINMAP_KO if set, else linmap_test.ko next to this
 * binary (where a kselftest install puts it), else LM_KO (the kit's
 * initramfs).
 */
static const char *lm_ko_path(void)
{
	static char buf[PATH_MAX];
	const char *env = getenv("LINMAP_KO");
	size_t size = sizeof(buf);
	char *slash;
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", buf, size - 1);
	if (n > 0) {
		buf[n] = '\0';
		slash = strrchr(buf, '/');
		if (slash && slash + sizeof("/linmap_test.ko") <= buf + size) {
			memcpy(slash + 1, "linmap_test.ko", sizeof("linmap_test.ko"));
			if (!access(buf, R_OK))
				return buf;
		}
	}
	return LM_KO;
}

/*
 * Returns 0 when the module's debugfs directory is there (loading the module
 * if needed), 1 when the test has to be skipped, -1 when it must fail.
 */
static int lm_module_ready(char *why, size_t size)
{
	const char *ko = lm_ko_path();
	struct statfs sfs;
	int fd, ret, err;

	if (!access(LM_DIR "/state", R_OK))
		return 0;
	if (errno == EACCES) {
		snprintf(why, size, "no access to %s (not root?)", LM_DIR);
		return 1;
	}
	if (statfs(LM_DEBUGFS, &sfs) || sfs.f_type != LM_DEBUGFS_MAGIC) {
		snprintf(why, size, "debugfs is not mounted at %s", LM_DEBUGFS);
		return 1;
	}
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size,
			 "%s missing and cannot open %.200s: %s (set LINMAP_KO to the module)",
			 LM_DIR, ko, strerror(errno));
		return 1;
	}
	ret = syscall(__NR_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	if (ret && err != EEXIST) {
		snprintf(why, size, "%s missing and insmod %.200s failed: %s", LM_DIR, ko,
			 strerror(err));
		return 1;
	}
	if (access(LM_DIR "/state", R_OK)) {
		snprintf(why, size, "module loaded but %s/state is missing: %s", LM_DIR,
			 strerror(errno));
		return -1;
	}
	return 0;
}

unsigned long long lm_meminfo(const char *key)
{
	unsigned long long kb = 0;
	char line[256];
	size_t len = strlen(key);
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) && line[len] == ':' &&
		    sscanf(line + len + 1, "%llu", &kb) == 1)
			break;
	}
	fclose(f);
	return kb * 1024;
}

/* The last value of @key on the kernel command line (the one that counts). */
const char *lm_cmdline(const char *key, char *out, size_t size)
{
	char *cmdline = lm_read_path("/proc/cmdline");
	const char *v, *last = NULL;

	for (v = cmdline; v && (v = lm_kv(v, key)); )
		last = v;
	if (last)
		snprintf(out, size, "%.*s", (int)strcspn(last, " \t\n"), last);
	free(cmdline);
	return last ? out : NULL;
}

/*
 * A boolean kernel parameter as the kernel reads it: the last occurrence
 * counts, alone it means on, and =1, y, t or on (kstrtobool) too.
 */
bool lm_cmdline_flag(const char *key)
{
	char *cmdline = lm_read_path("/proc/cmdline"), *tok, *save = NULL;
	size_t len = strlen(key);
	bool on = false;

	for (tok = cmdline ? strtok_r(cmdline, " \t\n", &save) : NULL; tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(tok, key, len))
			continue;
		if (!tok[len])
			on = true;
		else if (tok[len] == '=')
			on = (tok[len + 1] && strchr("1yYtT", tok[len + 1])) ||
			     !strcasecmp(tok + len + 1, "on");
	}
	free(cmdline);
	return on;
}

bool lm_overlap(const struct lm_range *a, const struct lm_range *b)
{
	return a->start < b->end && b->start < a->end;
}

bool lm_within(const struct lm_range *in, const struct lm_range *out)
{
	return in->start >= out->start && in->end <= out->end;
}

/*
 * Run the module's page-table auditor: the linear map must have no
 * violation. Returns its report, or NULL if it cannot be read. It only
 * EXPECTs: the teardown goes on to show what the test read.
 *
 * The walk may see a change made elsewhere while it runs as a violation
 * (a split between the walk and its recount, for one): the init sections
 * of a module that this program has just loaded are freed by a worker
 * after insmod returns, and their linear aliases change then. A
 * violation is one that a second walk, a moment later, finds again (up to
 * LM_AUDIT_TRIES walks); each walk that found one is logged.
 * lm_audit_walks() gives the count of the last walk and the number of
 * walks, with no verdict.
 */
#define LM_AUDIT_TRIES 3

struct lm_out *lm_audit_walks(struct __test_metadata *_metadata,
			      struct lm_ctx *lm, const char *when,
			      unsigned long long *v, int *walks)
{
	struct lm_out *o;
	int ret;

	*v = 0;
	for (*walks = 1; ; (*walks)++) {
		o = lm_load(lm, "audit");
		ret = o ? 0 : -errno;
		LM_EXPECT(_metadata, !ret, "%s: cannot read %s/audit: %s", when,
			  LM_DIR, strerror(-ret));
		if (!o)
			return NULL;
		ret = lm_kv_num(o->text, "violations", v);
		LM_EXPECT(_metadata, !ret, "%s: audit: no number of violations",
			  when);
		if (ret || !*v)
			return o;
		lm_show(_metadata, o);
		if (*walks == LM_AUDIT_TRIES)
			return o;
		LM_LOG(_metadata, "%s: walk %d of %d found %llu violations; again in 0.2 s",
		       when, *walks, LM_AUDIT_TRIES, *v);
		usleep(200000);
	}
}

struct lm_out *lm_audit(struct __test_metadata *_metadata,
			struct lm_ctx *lm, const char *when)
{
	unsigned long long v;
	struct lm_out *o;
	int walks;

	o = lm_audit_walks(_metadata, lm, when, &v, &walks);
	LM_EXPECT(_metadata, !v,
		  "%s: the page-table auditor found %llu violations, %d walks in a row",
		  when, v, walks);
	return o;
}

/* Write @text to a file outside the module's directory; 0 or -errno. */
int lm_write_path(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

void lm_setup(struct __test_metadata *_metadata, struct lm_ctx *lm)
{
	char why[512];
	int ret;

	ret = lm_module_ready(why, sizeof(why));
	if (ret > 0) {
		lm_skip(_metadata, "%s", why);
		return;
	}
	LM_ASSERT(_metadata, !ret, "%s", why);
	lm_parse_state(_metadata, lm, &lm->st);
	/*
	 * Fold now what earlier tests gave back, so that the kernel's collapse
	 * worker has nothing due while this test compares counts (no such
	 * file: a kernel without collapse).
	 */
	lm_write_path(LM_HEAL_DIR "/collapse", "1");
	lm->ready = true;
}

void lm_teardown(struct __test_metadata *_metadata, struct lm_ctx *lm, bool failed)
{
	int i;

	/*
	 * A failed assertion can leave the area read-only; make it writable
	 * before freeing so that no read-only alias goes back to the page
	 * allocator, whatever the module does on free.
	 */
	if (lm->area_used) {
		lm_write("area", "rw");
		lm_write("area", "free");
	}
	/* Whatever the test did, the linear map must still be sound. */
	if (lm->ready)
		lm_audit(_metadata, lm, "after the test");
	/* What the module said last, to see why a test failed. */
	for (i = 0; i < LM_OUTS; i++) {
		if (lm->out[i].text && !lm->out[i].shown && failed)
			lm_show(_metadata, &lm->out[i]);
		free(lm->out[i].text);
	}
}

/* Is collapse on? Otherwise the reason, for a SKIP. */
bool lm_collapse_on(char *why, size_t size)
{
	char *text = lm_read_path(LM_HEAL_DIR "/collapse");
	unsigned long long on = 0;

	if (!text) {
		snprintf(why, size, "no %s/collapse: kernel without collapse",
			 LM_HEAL_DIR);
		return false;
	}
	lm_kv_num(text, "enabled", &on);
	free(text);
	if (!on)
		snprintf(why, size, "collapse is off here (repainted, debug_pagealloc, no rodata=full, no BBML2 or linear_map_collapse=off)");
	return on;
}

/* Each of @keys must be 0 in @o. */
void lm_expect_zero(struct __test_metadata *_metadata, struct lm_out *o,
		    const char *prefix, const char * const *keys, int nr)
{
	unsigned long long v;
	int i;

	for (i = 0; i < nr; i++) {
		v = lm_num(_metadata, o, "%s%s", prefix, keys[i]);
		LM_EXPECT(_metadata, !v, "%s: %s%s=%lld", o->file, prefix, keys[i],
			  (long long)v);
	}
}

/*
 * START,SIZE from the environment: a range of RAM left out by mem=
 * (LINMAP_HOTPLUG for hotplug, LINMAP_DEVMEM for device memory).
 */
bool lm_env_range(const char *name, unsigned long long *start,
		  unsigned long long *size)
{
	const char *env = getenv(name);

	return env && sscanf(env, "%lli,%lli", start, size) == 2 && *size;
}
