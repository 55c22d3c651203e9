// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test, benchmark part: the cost of set_memory_ro() followed by
 * set_memory_rw() on vmalloc areas of several sizes, the first time (which
 * includes splitting the linear aliases) and in the steady state.
 *
 *   echo "sizes=1:16:512:262144 reps=9" > .../linmap_test/setmem
 *   cat .../linmap_test/setmem
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "linmap_test.h"

#define BENCH_MAX_SIZES	8
#define BENCH_MAX_REPS	32

struct bench_size {
	unsigned long pages;
	int ret;
	u64 first_ro, first_rw;
	u64 ro[BENCH_MAX_REPS], rw[BENCH_MAX_REPS];
};

struct bench_result {
	unsigned int nr_sizes, reps;
	struct bench_size s[BENCH_MAX_SIZES];
};

static struct bench_result *bench_last;

/* One set_memory_ro() and one set_memory_rw() of the whole area. */
static int bench_pair(void *vm, unsigned long pages, u64 *ro, u64 *rw)
{
	u64 t0, t1, t2;
	int ret;

	t0 = ktime_get_ns();
	ret = sym.set_memory_ro((unsigned long)vm, pages);
	t1 = ktime_get_ns();
	if (ret)
		return ret;
	ret = sym.set_memory_rw((unsigned long)vm, pages);
	t2 = ktime_get_ns();
	*ro = t1 - t0;
	*rw = t2 - t1;
	return ret;
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

static void show_list(struct seq_file *m, unsigned long pages,
		      const char *key, u64 *v, unsigned int n)
{
	unsigned int i;

	seq_printf(m, "size.%lu.%s=", pages, key);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s%llu", i ? ":" : "", v[i]);
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
	seq_printf(m, "sizes=%u\nreps=%u\npages=", r->nr_sizes, r->reps);
	for (i = 0; i < r->nr_sizes; i++)
		seq_printf(m, "%s%lu", i ? ":" : "", r->s[i].pages);
	seq_putc(m, '\n');
	for (i = 0; i < r->nr_sizes; i++) {
		struct bench_size *b = &r->s[i];

		seq_printf(m, "size.%lu.ret=%d\n", b->pages, b->ret);
		seq_printf(m, "size.%lu.first_ro_ns=%llu\n", b->pages,
			   b->first_ro);
		seq_printf(m, "size.%lu.first_rw_ns=%llu\n", b->pages,
			   b->first_rw);
		show_list(m, b->pages, "ro_ns", b->ro, r->reps);
		show_list(m, b->pages, "rw_ns", b->rw, r->reps);
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
