// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "stress": rounds of vmalloc, set_memory_ro(), write probes,
 * set_memory_rw(), probes and vfree() on every CPU at once, timed, with the
 * linear map counted while the first round's areas are read-only.
 *
 *   echo "pages=N rounds=N threads=N" > stress    (pages=0: 80% of free)
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "linmap.h"

struct lm_stress_result {
	unsigned long pages, rounds, threads;
	bool alias_checked;
	atomic64_t ro_fail, rw_fail, alloc_fail;
	atomic64_t vm_w_ro, alias_w_ro, not_w_rw;
	u64 alloc_ns[LM_STRESS_MAX_ROUNDS], ro_ns[LM_STRESS_MAX_ROUNDS];
	u64 probe_ns[LM_STRESS_MAX_ROUNDS], rw_ns[LM_STRESS_MAX_ROUNDS];
	u64 free_ns[LM_STRESS_MAX_ROUNDS];
	struct lm_counts during;
	bool have_during;
	int ret;
};

/* One worker's share of a round; all workers run each phase together. */
struct lm_worker {
	struct lm_stress_result *r;
	void *addr;
	unsigned long pages;
	int phase;		/* 0: alloc, ro, probe; 1: rw, probe, free */
	u64 t[3];
	struct completion done;
};

static int lm_worker_fn(void *data)
{
	struct lm_worker *w = data;
	struct lm_stress_result *r = w->r;
	unsigned long vm_w, alias_w;
	u64 t0 = ktime_get_ns();

	if (w->phase == 0) {
		w->addr = __vmalloc(w->pages * PAGE_SIZE,
				    GFP_KERNEL | __GFP_NOWARN |
				    __GFP_RETRY_MAYFAIL);
		w->t[0] = ktime_get_ns() - t0;
		if (!w->addr) {
			atomic64_inc(&r->alloc_fail);
			goto out;
		}
		t0 = ktime_get_ns();
		if (lm_sym.set_memory_ro((unsigned long)w->addr, w->pages))
			atomic64_inc(&r->ro_fail);
		w->t[1] = ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		lm_probe_range(w->addr, w->pages, &vm_w, &alias_w);
		w->t[2] = ktime_get_ns() - t0;
		atomic64_add(vm_w, &r->vm_w_ro);
		if (r->alias_checked)
			atomic64_add(alias_w, &r->alias_w_ro);
	} else if (w->addr) {
		if (lm_sym.set_memory_rw((unsigned long)w->addr, w->pages))
			atomic64_inc(&r->rw_fail);
		w->t[0] = ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		lm_probe_range(w->addr, w->pages, &vm_w, &alias_w);
		w->t[1] = ktime_get_ns() - t0;
		atomic64_add(2 * w->pages - vm_w - alias_w, &r->not_w_rw);
		t0 = ktime_get_ns();
		vfree(w->addr);
		w->addr = NULL;
		w->t[2] = ktime_get_ns() - t0;
	}
out:
	complete(&w->done);
	return 0;
}

/* Run one phase on every worker and wait for all of them. */
static void lm_run_phase(struct lm_worker *w, unsigned long n, int phase)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct task_struct *t;

		w[i].phase = phase;
		memset(w[i].t, 0, sizeof(w[i].t));
		init_completion(&w[i].done);
		t = kthread_run(lm_worker_fn, &w[i], "linmap_stress/%lu", i);
		if (IS_ERR(t)) {
			/* Run it here rather than lose the work. */
			lm_worker_fn(&w[i]);
		}
	}
	for (i = 0; i < n; i++)
		wait_for_completion(&w[i].done);
}

static u64 max_t3(struct lm_worker *w, unsigned long n, int idx)
{
	u64 m = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		m = max(m, w[i].t[idx]);
	return m;
}

static int stress_run_rounds(struct lm_stress_result *r)
{
	struct lm_worker *w;
	unsigned long i, round, per;

	if (!r->threads || r->threads > LM_STRESS_MAX_THREADS ||
	    !r->rounds || r->rounds > LM_STRESS_MAX_ROUNDS)
		return -EINVAL;
	if (!r->pages)
		r->pages = si_mem_available() / 10 * 8;
	per = r->pages / r->threads;
	if (!per || per > INT_MAX)
		return -EINVAL;
	r->pages = per * r->threads;
	/* Under rodata=full set_memory_ro() also write-protects the alias. */
	r->alias_checked = *lm_sym.rodata_full;

	w = kcalloc(r->threads, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	for (i = 0; i < r->threads; i++) {
		w[i].r = r;
		w[i].pages = per;
	}
	pr_info("stress: %lu rounds, %lu threads, %lu pages each\n",
		r->rounds, r->threads, per);
	for (round = 0; round < r->rounds; round++) {
		lm_run_phase(w, r->threads, 0);
		r->alloc_ns[round] = max_t3(w, r->threads, 0);
		r->ro_ns[round] = max_t3(w, r->threads, 1);
		r->probe_ns[round] = max_t3(w, r->threads, 2);
		if (round == 0) {
			lm_count(&r->during);
			r->have_during = true;
		}
		lm_run_phase(w, r->threads, 1);
		r->rw_ns[round] = max_t3(w, r->threads, 0);
		r->probe_ns[round] += max_t3(w, r->threads, 1);
		r->free_ns[round] = max_t3(w, r->threads, 2);
	}
	kfree(w);
	return 0;
}

static u64 lm_errors(struct lm_stress_result *r)
{
	return atomic64_read(&r->ro_fail) + atomic64_read(&r->rw_fail) +
	       atomic64_read(&r->alloc_fail) + atomic64_read(&r->vm_w_ro) +
	       atomic64_read(&r->alias_w_ro) + atomic64_read(&r->not_w_rw);
}

static void stress_show(struct seq_file *m, void *v)
{
	struct lm_stress_result *r = v;
	unsigned long i;

	seq_printf(m, "rounds=%lu\nthreads=%lu\npages=%lu\nret=%d\n",
		   r->rounds, r->threads, r->pages, r->ret);
	seq_printf(m, "errors=%llu\nro_fail=%lld\nrw_fail=%lld\nalloc_fail=%lld\n",
		   lm_errors(r), atomic64_read(&r->ro_fail),
		   atomic64_read(&r->rw_fail), atomic64_read(&r->alloc_fail));
	seq_printf(m, "vmalloc_writable_when_ro=%lld\nalias_writable_when_ro=%lld\nnot_writable_when_rw=%lld\n",
		   atomic64_read(&r->vm_w_ro), atomic64_read(&r->alias_w_ro),
		   atomic64_read(&r->not_w_rw));
	seq_printf(m, "alias_checked=%d\n", r->alias_checked);
	for (i = 0; i < r->rounds && !r->ret; i++)
		seq_printf(m, "round.%lu.alloc_ns=%llu\nround.%lu.ro_ns=%llu\nround.%lu.probe_ns=%llu\nround.%lu.rw_ns=%llu\nround.%lu.free_ns=%llu\n",
			   i + 1, r->alloc_ns[i], i + 1, r->ro_ns[i],
			   i + 1, r->probe_ns[i], i + 1, r->rw_ns[i],
			   i + 1, r->free_ns[i]);
	if (r->have_during)
		lm_counts_show(m, "during.", &r->during, false);
}

static void stress_defaults(void *v)
{
	struct lm_stress_result *r = v;

	r->rounds = 1;
	r->threads = num_online_cpus();
}

static unsigned int stress_params(void *v, struct lm_param *p)
{
	struct lm_stress_result *r = v;

	p[0] = (struct lm_param){ "pages", LM_ULONG, &r->pages };
	p[1] = (struct lm_param){ "rounds", LM_ULONG, &r->rounds };
	p[2] = (struct lm_param){ "threads", LM_ULONG, &r->threads };
	return 3;
}

static int stress_run(void *v)
{
	struct lm_stress_result *r = v;

	r->ret = stress_run_rounds(r);
	if (!r->ret && lm_errors(r))
		return -EIO;
	return r->ret;
}

static struct lm_cmd stress_cmd = {
	.size = sizeof(struct lm_stress_result),
	.defaults = stress_defaults,
	.params = stress_params,
	.run = stress_run,
	.show = stress_show,
};

LM_COMMAND_FEATURE(stress, "stress");
