// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test, benchmark part: the cost of set_memory_ro() followed by
 * set_memory_rw() on vmalloc areas of several sizes, the first time (which
 * includes splitting the linear aliases) and in the steady state: time, and,
 * when the kernel has the test-only counter, the kernel entries written, the
 * DSB+ISB pairs issued for them and the lazy MMU sections entered.
 *
 *   echo "sizes=1:16:512:262144 reps=9" > .../linmap_test/setmem
 *   cat .../linmap_test/setmem
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "linmap_test.h"

#define BENCH_MAX_SIZES	8
#define BENCH_MAX_REPS	32

/* One call: its time and its page-table writes. */
struct bench_call {
	u64 ns;
	struct lm_pgt_count c;
};

struct bench_size {
	unsigned long pages;
	int ret;
	struct bench_call first_ro, first_rw;
	struct bench_call ro[BENCH_MAX_REPS], rw[BENCH_MAX_REPS];
};

struct bench_result {
	unsigned int nr_sizes, reps;
	struct bench_size s[BENCH_MAX_SIZES];
};

static struct bench_result *bench_last;

/* Does the kernel count its page-table writes (booted with linmap_count)? */
static bool pgt_on(void)
{
	return sym.pgt_count && sym.pgt_counting &&
	       static_key_enabled(sym.pgt_counting);
}

static void pgt_read(struct lm_pgt_count *c)
{
	if (pgt_on())
		*c = *per_cpu_ptr(sym.pgt_count, raw_smp_processor_id());
}

static void pgt_sub(struct lm_pgt_count *d, const struct lm_pgt_count *a,
		    const struct lm_pgt_count *b)
{
	d->entries = b->entries - a->entries;
	d->barriers = b->barriers - a->barriers;
	d->lazy = b->lazy - a->lazy;
}

static int bench_call(int (*fn)(unsigned long, int), void *vm,
		      unsigned long pages, struct bench_call *call)
{
	struct lm_pgt_count c0 = {}, c1 = {};
	u64 t0;
	int ret;

	/* The counter is per CPU: stay on one for the whole call. */
	migrate_disable();
	pgt_read(&c0);
	t0 = ktime_get_ns();
	ret = fn((unsigned long)vm, pages);
	call->ns = ktime_get_ns() - t0;
	pgt_read(&c1);
	migrate_enable();
	pgt_sub(&call->c, &c0, &c1);
	return ret;
}

/* One set_memory_ro() and one set_memory_rw() of the whole area. */
static int bench_pair(void *vm, unsigned long pages, struct bench_call *ro,
		      struct bench_call *rw)
{
	int ret;

	ret = bench_call(sym.set_memory_ro, vm, pages, ro);
	if (ret)
		return ret;
	return bench_call(sym.set_memory_rw, vm, pages, rw);
}

static void bench_one(struct bench_size *b, unsigned int reps)
{
	unsigned int i;
	void *vm;

	vm = vmalloc(b->pages * PAGE_SIZE);
	if (!vm) {
		b->ret = -ENOMEM;
		return;
	}
	/* Each page written once, so every alias is really in use. */
	for (i = 0; i < b->pages; i++)
		*(u8 *)(vm + (unsigned long)i * PAGE_SIZE) = i;
	b->ret = bench_pair(vm, b->pages, &b->first_ro, &b->first_rw);
	for (i = 0; i < reps && !b->ret; i++) {
		b->ret = bench_pair(vm, b->pages, &b->ro[i], &b->rw[i]);
		cond_resched();
	}
	/* Only ever free an area whose aliases are writable again. */
	if (!b->ret)
		vfree(vm);
}

/*
 * size.N.KEY_ns=t1:t2:... and, with the counter,
 * size.N.KEY_pgt=entries/barriers/lazy:...
 */
static void show_calls(struct seq_file *m, unsigned long pages,
		       const char *key, struct bench_call *v, unsigned int n)
{
	unsigned int i;

	seq_printf(m, "size.%lu.%s_ns=", pages, key);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s%llu", i ? ":" : "", v[i].ns);
	seq_putc(m, '\n');
	if (!pgt_on())
		return;
	seq_printf(m, "size.%lu.%s_pgt=", pages, key);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s%lu/%lu/%lu", i ? ":" : "", v[i].c.entries,
			   v[i].c.barriers, v[i].c.lazy);
	seq_putc(m, '\n');
}

static int setmem_show(struct seq_file *m, void *v)
{
	struct bench_result *r;
	unsigned int i;

	mutex_lock(&lm_lock);
	r = bench_last;
	if (!r) {
		seq_puts(m, "sizes=0\n");
		goto out;
	}
	seq_printf(m, "sizes=%u\nreps=%u\npgt_count=%d\npages=", r->nr_sizes,
		   r->reps, pgt_on());
	for (i = 0; i < r->nr_sizes; i++)
		seq_printf(m, "%s%lu", i ? ":" : "", r->s[i].pages);
	seq_putc(m, '\n');
	for (i = 0; i < r->nr_sizes; i++) {
		struct bench_size *b = &r->s[i];

		seq_printf(m, "size.%lu.ret=%d\n", b->pages, b->ret);
		show_calls(m, b->pages, "first_ro", &b->first_ro, 1);
		show_calls(m, b->pages, "first_rw", &b->first_rw, 1);
		show_calls(m, b->pages, "ro", b->ro, r->reps);
		show_calls(m, b->pages, "rw", b->rw, r->reps);
	}
out:
	mutex_unlock(&lm_lock);
	return 0;
}

static int setmem_parse(char *buf, struct bench_result *r)
{
	char *tok, *size;
	unsigned long val;

	while ((tok = strsep(&buf, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (!strncmp(tok, "reps=", 5)) {
			if (kstrtoul(tok + 5, 0, &val) || !val ||
			    val > BENCH_MAX_REPS)
				return -EINVAL;
			r->reps = val;
		} else if (!strncmp(tok, "sizes=", 6)) {
			tok += 6;
			while ((size = strsep(&tok, ":")) != NULL) {
				if (r->nr_sizes == BENCH_MAX_SIZES ||
				    kstrtoul(size, 0, &val) || !val ||
				    val > INT_MAX)
					return -EINVAL;
				r->s[r->nr_sizes++].pages = val;
			}
		} else {
			return -EINVAL;
		}
	}
	return r->nr_sizes ? 0 : -EINVAL;
}

static ssize_t setmem_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	struct bench_result *r;
	unsigned int i;
	char buf[128];
	int ret;

	ret = read_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->reps = 9;
	ret = setmem_parse(buf, r);
	if (ret) {
		kfree(r);
		return ret;
	}
	mutex_lock(&lm_lock);
	for (i = 0; i < r->nr_sizes; i++) {
		bench_one(&r->s[i], r->reps);
		if (r->s[i].ret && !ret)
			ret = r->s[i].ret;
	}
	kfree(bench_last);
	bench_last = r;
	mutex_unlock(&lm_lock);
	return ret ? ret : len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(setmem);

void lm_bench_init(struct dentry *dir)
{
	debugfs_create_file("setmem", 0644, dir, NULL, &setmem_fops);
}

void lm_bench_exit(void)
{
	mutex_lock(&lm_lock);
	kfree(bench_last);
	bench_last = NULL;
	mutex_unlock(&lm_lock);
}
