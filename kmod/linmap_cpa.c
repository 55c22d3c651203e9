// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "cpa": random concurrent permission and validity changes on
 * every CPU, each thread checking its own pages against a shadow model by
 * page-table walk and by fault-safe probes, then the auditor over the
 * whole linear map. aim=N first runs N aimed rounds (linmap_aim.c), at
 * contiguous PTE groups only with aim_pte=1. audit=0 leaves out the final
 * audit, for a caller that goes on changing the map after the threads end
 * (module loads in the guest's churn) and reads "audit" once it stops.
 *
 *   echo "seed=N threads=N ops=N secs=N pages=N batch=N aim=N" > cpa
 *
 * Longer than 400 lines: the threads, their shadow model and its checks
 * are one concern; the aimed rounds are in linmap_aim.c.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

#include "linmap_cpa.h"

/* destroy_timer_on_stack() is timer_destroy_on_stack() since 6.16. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define lm_timer_destroy_on_stack timer_destroy_on_stack
#else
#define lm_timer_destroy_on_stack destroy_timer_on_stack
#endif

#define CPA_MAX_ORDER		min(MAX_PAGE_ORDER, 9)

struct cpa_thread {
	struct cpa_params *p;
	struct cpa_stats s;
	struct rnd_state rnd;
	unsigned int id;
	unsigned long deadline;
	/* A vmalloc area: its pages and their linear aliases go RO/RW. */
	void *vm;
	unsigned long vm_pages;
	u8 *vm_ro;
	/* Direct-map pages: their linear map goes invalid/valid. */
	struct page *dm;
	unsigned long dm_pages;
	u8 *dm_invalid;
	char first[192];
	struct completion done;
};

static u32 cpa_rand(struct cpa_thread *t, u32 n)
{
	return n ? prandom_u32_state(&t->rnd) % n : 0;
}

static __printf(2, 3) void cpa_mismatch(struct cpa_thread *t,
					const char *fmt, ...)
{
	va_list args;
	int n;

	if (!t->s.mismatches++ && !t->first[0]) {
		n = scnprintf(t->first, sizeof(t->first),
			      "thread %u after %llu ops: ", t->id, t->s.ops);
		va_start(args, fmt);
		vscnprintf(t->first + n, sizeof(t->first) - n, fmt, args);
		va_end(args);
		pr_err("cpa: seed %lu: %s\n", t->p->seed, t->first);
	}
}

static void cpa_call_error(struct cpa_thread *t, const char *what, int ret)
{
	t->s.call_errors++;
	if (!t->first[0]) {
		scnprintf(t->first, sizeof(t->first),
			  "thread %u after %llu ops: %s returned %d",
			  t->id, t->s.ops, what, ret);
		pr_err("cpa: seed %lu: %s\n", t->p->seed, t->first);
	}
}

static void *dm_addr(struct cpa_thread *t, unsigned long i)
{
	return page_address(t->dm + i);
}

/* Give back the targets, with every permission restored first. */
static void cpa_release(struct cpa_thread *t)
{
	unsigned long i;
	int ret;

	if (t->vm) {
		ret = lm_sym.set_memory_rw((unsigned long)t->vm, t->vm_pages);
		if (ret)
			/* Never hand read-only aliases back: keep the area. */
			cpa_call_error(t, "set_memory_rw before vfree", ret);
		else
			vfree(t->vm);
	}
	if (t->dm) {
		for (i = 0; i < t->dm_pages; i++)
			if (t->dm_invalid && t->dm_invalid[i])
				lm_sym.set_direct_map_default_noflush(t->dm + i);
		flush_tlb_kernel_range((unsigned long)dm_addr(t, 0),
				       (unsigned long)dm_addr(t, 0) +
				       t->dm_pages * PAGE_SIZE);
		__free_pages(t->dm, ilog2(t->dm_pages));
	}
	kfree(t->vm_ro);
	kfree(t->dm_invalid);
	t->vm = NULL;
	t->vm_ro = NULL;
	t->dm = NULL;
	t->dm_invalid = NULL;
}

static int cpa_acquire(struct cpa_thread *t)
{
	unsigned int order = cpa_rand(t, CPA_MAX_ORDER + 1);

	t->vm_pages = 1 + cpa_rand(t, t->p->pages);
	t->dm_pages = 1UL << order;
	t->vm = vmalloc(t->vm_pages * PAGE_SIZE);
	t->vm_ro = kcalloc(t->vm_pages, 1, GFP_KERNEL);
	t->dm = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
	t->dm_invalid = kcalloc(t->dm_pages, 1, GFP_KERNEL);
	if (!t->vm || !t->vm_ro || !t->dm || !t->dm_invalid) {
		/* Nothing is read-only or invalid yet: all goes back as is. */
		cpa_release(t);
		return -ENOMEM;
	}
	t->s.retargets++;
	return 0;
}

/* A random sub-range of @n: mostly short, sometimes up to the end. */
static void cpa_range(struct cpa_thread *t, unsigned long n,
		      unsigned long *off, unsigned long *cnt)
{
	*off = cpa_rand(t, n);
	if (cpa_rand(t, 4))
		*cnt = 1 + cpa_rand(t, min(n - *off, 16UL));
	else
		*cnt = 1 + cpa_rand(t, n - *off);
}

static void cpa_op(struct cpa_thread *t)
{
	unsigned long off, cnt, i;
	u32 op = cpa_rand(t, 4);
	int ret;

	if (op < 2) {
		bool ro = op == 0;
		unsigned long addr;

		cpa_range(t, t->vm_pages, &off, &cnt);
		addr = (unsigned long)t->vm + off * PAGE_SIZE;
		ret = ro ? lm_sym.set_memory_ro(addr, cnt) :
			   lm_sym.set_memory_rw(addr, cnt);
		if (ret) {
			/* Documented: permissions are left unchanged. */
			cpa_call_error(t, ro ? "set_memory_ro" : "set_memory_rw",
				       ret);
		} else {
			memset(t->vm_ro + off, ro, cnt);
		}
		if (ro)
			t->s.ro++;
		else
			t->s.rw++;
	} else {
		bool inv = op == 2;

		cpa_range(t, t->dm_pages, &off, &cnt);
		for (i = off; i < off + cnt; i++) {
			ret = inv ? lm_sym.set_direct_map_invalid_noflush(t->dm + i) :
				    lm_sym.set_direct_map_default_noflush(t->dm + i);
			if (ret) {
				cpa_call_error(t, inv ?
					       "set_direct_map_invalid_noflush" :
					       "set_direct_map_default_noflush",
					       ret);
				break;
			}
			t->dm_invalid[i] = inv;
		}
		flush_tlb_kernel_range((unsigned long)dm_addr(t, off),
				       (unsigned long)dm_addr(t, off + cnt));
		if (inv)
			t->s.invalid++;
		else
			t->s.valid++;
	}
	t->s.ops++;
}

/* Check every page of the thread's targets, by walk and by probe. */
static void cpa_verify(struct cpa_thread *t)
{
	bool rodata_full = *lm_sym.rodata_full;
	bool direct = lm_sym.can_set_direct_map();
	bool valid, writable, want;
	unsigned long i;
	u8 byte;

	for (i = 0; i < t->vm_pages; i++) {
		void *va = t->vm + i * PAGE_SIZE;
		void *alias = lm_alias_of(va);

		want = !t->vm_ro[i];
		if (lm_probe_write(va) != want)
			cpa_mismatch(t, "vmalloc page %lu of %lu: writable=%d, shadow says %d",
				     i, t->vm_pages, !want, want);
		/* The alias follows only under rodata=full. */
		want = want || !rodata_full;
		if (lm_probe_write(alias) != want)
			cpa_mismatch(t, "alias %px of vmalloc page %lu: writable=%d, shadow says %d",
				     alias, i, !want, want);
		lm_page_state((unsigned long)alias, &valid, &writable);
		if (!valid || writable != want)
			cpa_mismatch(t, "alias %px of vmalloc page %lu: walk says valid=%d writable=%d, shadow says writable=%d",
				     alias, i, valid, writable, want);
		t->s.verified++;
	}
	for (i = 0; i < t->dm_pages; i++) {
		void *la = dm_addr(t, i);

		/* Without can_set_direct_map() the calls change nothing. */
		want = !t->dm_invalid[i] || !direct;
		if (!copy_from_kernel_nofault(&byte, la, 1) != want)
			cpa_mismatch(t, "direct page %px: readable=%d, shadow says %d",
				     la, !want, want);
		if (want && !lm_probe_write(la))
			cpa_mismatch(t, "direct page %px: valid but not writable",
				     la);
		lm_page_state((unsigned long)la, &valid, &writable);
		if (valid != want || (want && !writable))
			cpa_mismatch(t, "direct page %px: walk says valid=%d writable=%d, shadow says valid=%d",
				     la, valid, writable, want);
		t->s.verified++;
	}
}

static int cpa_thread_fn(void *data)
{
	struct cpa_thread *t = data;
	unsigned long i;

	while (t->s.ops < t->p->ops && time_before(jiffies, t->deadline) &&
	       !t->s.mismatches) {
		if (!t->vm || !cpa_rand(t, 32)) {
			cpa_release(t);
			if (cpa_acquire(t)) {
				t->s.alloc_failures++;
				msleep(20);
				continue;
			}
		}
		for (i = 0; i < t->p->batch && t->s.ops < t->p->ops; i++)
			cpa_op(t);
		t->s.batches++;
		cpa_verify(t);
		cond_resched();
	}
	cpa_release(t);
	kthread_complete_and_exit(&t->done, 0);
}

static void cpa_add(struct cpa_stats *sum, const struct cpa_stats *s)
{
	const u64 *src = (const u64 *)s;
	u64 *dst = (u64 *)sum;
	unsigned int i;

	for (i = 0; i < sizeof(*s) / sizeof(u64); i++)
		dst[i] += src[i];
}

/*
 * One change from softirq context, as KFENCE makes them from RCU
 * callbacks: lockdep then knows the split lock is taken there, and checks
 * every lock the other changes take inside it against that.
 */
struct cpa_softirq {
	struct timer_list timer;
	struct page *page;
	int ret;
	struct completion done;
};

static void cpa_softirq_fn(struct timer_list *timer)
{
	struct cpa_softirq *s = container_of(timer, struct cpa_softirq, timer);

	s->ret = lm_sym.set_direct_map_default_noflush(s->page);
	complete(&s->done);
}

static int cpa_softirq(void)
{
	struct cpa_softirq s = { .page = alloc_page(GFP_KERNEL) };

	if (!s.page)
		return -ENOMEM;
	init_completion(&s.done);
	timer_setup_on_stack(&s.timer, cpa_softirq_fn, 0);
	mod_timer(&s.timer, jiffies + 1);
	wait_for_completion(&s.done);
	timer_delete_sync(&s.timer);
	lm_timer_destroy_on_stack(&s.timer);
	__free_page(s.page);
	return s.ret;
}

/* DirectMap against a locked walk; the first mismatch is kept. */
static void cpa_directmap(struct cpa_result *r)
{
	u64 walk[LM_NR_KINDS], kern[LM_NR_KINDS];
	int k;

	if (lm_directmap(walk, kern))
		return;
	r->s.directmap_checks++;
	for (k = 0; k < LM_NR_KINDS; k++) {
		if (walk[k] == kern[k])
			continue;
		r->s.directmap_mismatches++;
		if (!r->first[0])
			scnprintf(r->first, sizeof(r->first),
				  "DirectMap %s during the stress: kernel %llu bytes, walk %llu",
				  lm_kind_name[k], kern[k], walk[k]);
		break;
	}
}

/* After a collapse pass: no table empty, shared or free, as they stand. */
static void cpa_table_audit(struct cpa_result *r)
{
	struct lm_audit *a = kzalloc(sizeof(*a), GFP_KERNEL);

	if (a && !lm_audit_tables(a)) {
		r->s.table_audits++;
		r->s.table_violations += a->violations;
		if (a->violations && !r->first[0])
			scnprintf(r->first, sizeof(r->first),
				  "after a collapse pass: %s", a->msg[0]);
	}
	if (a)
		lm_audit_free(a);
	kfree(a);
}

/*
 * While the threads run: a collapse pass every collapse_ms followed by an
 * audit of the tables, and DirectMap checked against a locked walk after
 * each (or every 100 ms without).
 */
static void cpa_watch(struct cpa_result *r, struct cpa_thread *th,
		      unsigned long n)
{
	unsigned long ms = r->p.collapse_ms ? : 100, i = 0;
	int ret;

	/* completion_done() does not consume: the caller waits for each. */
	while (i < n) {
		if (completion_done(&th[i].done)) {
			i++;
			continue;
		}
		msleep(ms);
		if (r->p.collapse_ms && lm_has_collapse()) {
			ret = lm_collapse();
			r->s.collapse_passes += !ret;
			r->s.collapse_errors += ret && ret != -EOPNOTSUPP;
			if (!ret)
				cpa_table_audit(r);
		}
		cpa_directmap(r);
	}
	cpa_directmap(r);
}

static int cpa_run_threads(struct cpa_result *r)
{
	struct cpa_thread *th;
	u64 start = ktime_get_ns();
	unsigned long i, started = 0;
	int ret;

	ret = cpa_softirq();
	if (ret) {
		r->s.call_errors++;
		scnprintf(r->first, sizeof(r->first),
			  "set_direct_map_default_noflush() from softirq: %d",
			  ret);
	}
	if (r->p.aim)
		cpa_aim(r);
	th = kcalloc(r->p.threads, sizeof(*th), GFP_KERNEL);
	if (!th)
		return -ENOMEM;
	pr_info("cpa: seed=%lu threads=%lu ops=%lu secs=%lu pages=%lu batch=%lu aim=%lu\n",
		r->p.seed, r->p.threads, r->p.ops, r->p.secs, r->p.pages,
		r->p.batch, r->p.aim);
	for (i = 0; i < r->p.threads; i++) {
		struct cpa_thread *t = &th[i];
		struct task_struct *task;

		t->p = &r->p;
		t->id = i;
		t->deadline = jiffies + r->p.secs * HZ;
		prandom_seed_state(&t->rnd, r->p.seed + i * 0x9e3779b97f4a7c15ULL);
		init_completion(&t->done);
		task = kthread_run(cpa_thread_fn, t, "linmap_cpa/%lu", i);
		if (IS_ERR(task))
			break;
		started++;
	}
	cpa_watch(r, th, started);
	for (i = 0; i < started; i++) {
		wait_for_completion(&th[i].done);
		cpa_add(&r->s, &th[i].s);
		if (!r->first[0] && th[i].first[0])
			strscpy(r->first, th[i].first, sizeof(r->first));
	}
	kfree(th);
	r->elapsed_ms = div_u64(ktime_get_ns() - start, NSEC_PER_MSEC);
	if (started < r->p.threads)
		return -EAGAIN;
	/*
	 * The auditor needs a map nothing else changes (a split between its
	 * walk and its count reads as a violation): only the caller knows.
	 */
	if (!r->p.audit)
		return 0;
	return lm_audit_run(&r->audit);
}

static void cpa_show(struct seq_file *m, void *v)
{
	struct cpa_result *r = v;

	seq_printf(m, "seed=%lu\nthreads=%lu\nops_limit=%lu\nsecs_limit=%lu\n",
		   r->p.seed, r->p.threads, r->p.ops, r->p.secs);
	seq_printf(m, "pages=%lu\nbatch=%lu\nret=%d\n", r->p.pages, r->p.batch,
		   r->ret);
	seq_printf(m, "ops=%llu\nro=%llu\nrw=%llu\ninvalid=%llu\nvalid=%llu\n",
		   r->s.ops, r->s.ro, r->s.rw, r->s.invalid, r->s.valid);
	seq_printf(m, "batches=%llu\nverified_pages=%llu\nretargets=%llu\n",
		   r->s.batches, r->s.verified, r->s.retargets);
	seq_printf(m, "mismatches=%llu\ncall_errors=%llu\nalloc_failures=%llu\n",
		   r->s.mismatches, r->s.call_errors, r->s.alloc_failures);
	seq_printf(m, "aim=%lu\naimed_rounds=%llu\naimed_calls=%llu\naim_slowed=%llu\n",
		   r->p.aim, r->s.aimed, r->s.aim_calls, r->s.aim_slowed);
	seq_printf(m, "aim_pte=%lu\naimed_pte_rounds=%llu\n", r->p.aim_pte,
		   r->s.aimed_pte);
	seq_printf(m, "collapse_ms=%lu\ncollapse_passes=%llu\ncollapse_errors=%llu\n",
		   r->p.collapse_ms, r->s.collapse_passes, r->s.collapse_errors);
	seq_printf(m, "directmap_checks=%llu\ndirectmap_mismatches=%llu\n",
		   r->s.directmap_checks, r->s.directmap_mismatches);
	seq_printf(m, "table_audits=%llu\ntable_violations=%llu\n",
		   r->s.table_audits, r->s.table_violations);
	seq_printf(m, "elapsed_ms=%llu\n", r->elapsed_ms);
	if (r->first[0])
		seq_printf(m, "first=%s\n", r->first);
	/* No audit.* keys at all: a reader wanting them must not see zeros. */
	if (r->p.audit)
		lm_audit_show(m, "audit.", &r->audit);
	else
		seq_puts(m, "audit=left_to_caller\n");
}

static void cpa_defaults(void *v)
{
	struct cpa_params *p = &((struct cpa_result *)v)->p;

	p->seed = get_random_u32();
	p->threads = num_online_cpus();
	p->ops = 1000;
	p->secs = 10;
	p->pages = 256;
	p->batch = 8;
	p->audit = 1;
}

static unsigned int cpa_params(void *v, struct lm_param *prm)
{
	struct cpa_params *p = &((struct cpa_result *)v)->p;
	static const char *const names[] = {
		"seed", "threads", "ops", "secs", "pages", "batch", "aim",
		"collapse", "aim_pte", "audit",
	};
	unsigned long *vals[] = {
		&p->seed, &p->threads, &p->ops, &p->secs, &p->pages, &p->batch,
		&p->aim, &p->collapse_ms, &p->aim_pte, &p->audit,
	};
	unsigned int i;

	/* @prm holds LM_PARAMS_MAX: more would overrun the caller's stack. */
	BUILD_BUG_ON(ARRAY_SIZE(names) > LM_PARAMS_MAX);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		prm[i] = (struct lm_param){ names[i], LM_ULONG, vals[i] };
	return i;
}

static int cpa_check(void *v)
{
	struct cpa_params *p = &((struct cpa_result *)v)->p;

	if (!p->threads || p->threads > LM_CPA_MAX_THREADS || !p->ops ||
	    !p->secs || !p->pages || p->pages > INT_MAX || !p->batch ||
	    p->aim_pte > 1 || p->audit > 1)
		return -EINVAL;
	return 0;
}

static int cpa_run(void *v)
{
	struct cpa_result *r = v;

	r->ret = cpa_run_threads(r);
	/* The table list is only needed during the run. */
	lm_audit_free(&r->audit);
	if (!r->ret && (r->s.mismatches || r->s.call_errors ||
			r->s.collapse_errors || r->s.directmap_mismatches ||
			r->s.table_violations ||
			r->audit.violations))
		return -EIO;
	return r->ret;
}

static struct lm_cmd cpa_cmd = {
	.size = sizeof(struct cpa_result),
	.defaults = cpa_defaults,
	.params = cpa_params,
	.check = cpa_check,
	.run = cpa_run,
	.show = cpa_show,
};

LM_COMMAND_FEATURE(cpa, "cpa");
