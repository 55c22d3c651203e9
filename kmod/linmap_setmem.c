// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "setmem": the cost of set_memory_ro() followed by
 * set_memory_rw() on vmalloc areas of several sizes, the first time (which
 * includes splitting the linear aliases) and in the steady state: time, and,
 * when the kernel has the test-only counter, the kernel entries written, the
 * DSB+ISB pairs issued for them and the lazy MMU sections entered. Also
 * the time of vm_unmap_aliases() alone, which each call makes and which
 * the series does not change, so that the rest can be told apart.
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

#include "linmap.h"

/* One call: its time and its page-table writes. */
struct bench_call {
	u64 ns;
	struct lm_pgt_count c;
};

struct bench_size {
	unsigned long pages;
	int ret;
	struct bench_call first_ro, first_rw;
	struct bench_call ro[LM_SETMEM_MAX_REPS], rw[LM_SETMEM_MAX_REPS];
};

struct bench_result {
	unsigned int nr_sizes;
	unsigned long reps;
	unsigned long pages[LM_SETMEM_MAX_SIZES];
	struct bench_size s[LM_SETMEM_MAX_SIZES];
	u64 unmap_ns[LM_SETMEM_MAX_REPS];
};

/* Does the kernel count its page-table writes (booted with linmap_count)? */
static bool pgt_on(void)
{
	return lm_sym.pgt_count && lm_sym.pgt_counting &&
	       static_key_enabled(lm_sym.pgt_counting);
}

static void pgt_read(struct lm_pgt_count *c)
{
	if (pgt_on())
		*c = *per_cpu_ptr(lm_sym.pgt_count, raw_smp_processor_id());
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

	ret = bench_call(lm_sym.set_memory_ro, vm, pages, ro);
	if (ret)
		return ret;
	return bench_call(lm_sym.set_memory_rw, vm, pages, rw);
}

static void bench_one(struct bench_size *b, unsigned long reps)
{
	unsigned long i;
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

static void setmem_show(struct seq_file *m, void *v)
{
	struct bench_result *r = v;
	unsigned int i;

	seq_printf(m, "sizes=%u\nreps=%lu\npgt_count=%d\npages=", r->nr_sizes,
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
	seq_puts(m, "vm_unmap_aliases_ns=");
	for (i = 0; i < r->reps; i++)
		seq_printf(m, "%s%llu", i ? ":" : "", r->unmap_ns[i]);
	seq_putc(m, '\n');
}

static void setmem_defaults(void *v)
{
	struct bench_result *r = v;

	r->reps = 9;
}

static unsigned int setmem_params(void *v, struct lm_param *p)
{
	struct bench_result *r = v;

	p[0] = (struct lm_param){ "reps", LM_ULONG, &r->reps };
	p[1] = (struct lm_param){ "sizes", LM_LIST, r->pages,
				  LM_SETMEM_MAX_SIZES, &r->nr_sizes };
	return 2;
}

static int setmem_check(void *v)
{
	struct bench_result *r = v;
	unsigned int i;

	if (!r->nr_sizes || !r->reps || r->reps > LM_SETMEM_MAX_REPS)
		return -EINVAL;
	for (i = 0; i < r->nr_sizes; i++) {
		if (!r->pages[i] || r->pages[i] > INT_MAX)
			return -EINVAL;
		r->s[i].pages = r->pages[i];
	}
	return 0;
}

static int setmem_run(void *v)
{
	struct bench_result *r = v;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < r->nr_sizes; i++) {
		bench_one(&r->s[i], r->reps);
		if (r->s[i].ret && !ret)
			ret = r->s[i].ret;
	}
	for (i = 0; i < r->reps; i++) {
		u64 t0 = ktime_get_ns();

		vm_unmap_aliases();
		r->unmap_ns[i] = ktime_get_ns() - t0;
	}
	return ret;
}

static struct lm_cmd setmem_cmd = {
	.size = sizeof(struct bench_result),
	.defaults = setmem_defaults,
	.params = setmem_params,
	.check = setmem_check,
	.run = setmem_run,
	.show = setmem_show,
};

LM_COMMAND_FEATURE(setmem, "setmem");
