// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test "cpa", aimed rounds (aim=N): many CPUs at one contiguous
 * group at once, a window the random rounds reach only by chance.
 */

#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "linmap.h"
#include "linmap_cpa.h"

/*
 * Aimed rounds: many CPUs at one contiguous group at once. One CPU splits
 * the group at an address inside its second entry, which clears the
 * contiguous bit of all its entries one by one; the others change ranges
 * from a later entry of the group to its end, so both of their ends look
 * like boundaries once the clearing has passed their start. A
 * change that does not wait for that split meets entries still contiguous
 * across its start and fails (or worse). Every change sets PTE_VALID on
 * valid memory: the entries are rewritten with the values they had.
 * Kernels with the test-only linmap_split_delay_us hook are slowed down
 * while clearing, so that the window is wide enough to hit every time.
 */
#define AIM_DELAY_US	50

struct aim_shared {
	atomic_t ready;
	bool go;
	unsigned long group, entry, size;
	int errors[LM_CPA_MAX_THREADS];
};

struct aim_thread {
	struct aim_shared *sh;
	unsigned int id;
	struct completion done;
};

static int aim_thread_fn(void *data)
{
	struct aim_thread *t = data;
	struct aim_shared *sh = t->sh;
	unsigned long start, end;

	/* Not a bare spin: the kernel may not preempt, and CPUs are shared. */
	atomic_inc(&sh->ready);
	/* Pairs with the release in cpa_aim(): the group is set before go. */
	while (!smp_load_acquire(&sh->go))
		cond_resched();
	if (!t->id) {
		start = sh->group + sh->entry + PAGE_SIZE;
		end = start + PAGE_SIZE;
	} else {
		/* Staggered: each starts after a few more entries are clear. */
		udelay(t->id * 2 * AIM_DELAY_US);
		start = sh->group + (1 + t->id) * sh->entry;
		end = sh->group + sh->size;
	}
	sh->errors[t->id] = lm_sym.set_memory_valid(start, (end - start) >> PAGE_SHIFT,
						 1);
	kthread_complete_and_exit(&t->done, 0);
}

/*
 * An intact contiguous group of System RAM outside the kernel image alias
 * and the KFENCE pool: CONT_PMD if any is left (and not @pte_only), else
 * CONT_PTE. A CONT_PTE group lies in one PTE table, where a small change
 * takes pageattr's one-walk path. Returns the group's entry size, 0 if
 * none.
 */
static unsigned long aim_find(struct lm_audit *ram, unsigned long *group,
			      bool pte_only)
{
	static const struct { int kind; unsigned long size, entry; } want[] = {
		{ LM_CONT_PMD, CONT_PMD_SIZE, PMD_SIZE },
		{ LM_CONT_PTE, CONT_PTE_SIZE, PAGE_SIZE },
	};
	unsigned long ki_start, ki_end, kf_start = 0, kf_end = 0;
	unsigned int i, r;
	u64 val;

	lm_kimage_alias(&ki_start, &ki_end);
	lm_kfence_pool(&kf_start, &kf_end);
	for (i = pte_only; i < ARRAY_SIZE(want); i++) {
		for (r = 0; r < ram->nr_ram; r++) {
			unsigned long va = ALIGN((unsigned long)__va(PFN_PHYS(ram->ram[r].start)),
						 want[i].size);
			unsigned long lim = (unsigned long)__va(PFN_PHYS(ram->ram[r].end));

			for (; va + want[i].size <= lim; va += want[i].size) {
				unsigned long last = va + want[i].size - PAGE_SIZE;
				unsigned long end = va + want[i].size;

				if (va < ki_end && end > ki_start)
					continue;
				if (va < kf_end && end > kf_start)
					continue;
				if (lm_lookup(va, &val) != want[i].kind ||
				    !(val & PTE_VALID) ||
				    lm_lookup(last, &val) != want[i].kind ||
				    !(val & PTE_VALID))
					continue;
				*group = va;
				return want[i].entry;
			}
		}
	}
	return 0;
}

void cpa_aim(struct cpa_result *r)
{
	unsigned int nr = min_t(unsigned long, r->p.threads, LM_CPA_MAX_THREADS);
	struct aim_shared *sh;
	struct aim_thread *th;
	struct lm_audit *ram;
	unsigned long round;
	unsigned int i, started, cpu;

	if (!lm_sym.set_memory_valid || nr < 2 || num_online_cpus() < 2)
		return;
	sh = kzalloc(sizeof(*sh), GFP_KERNEL);
	th = kcalloc(nr, sizeof(*th), GFP_KERNEL);
	ram = kzalloc(sizeof(*ram), GFP_KERNEL);
	if (!sh || !th || !ram)
		goto out;
	if (lm_audit_ram(ram))
		goto out;
	cpus_read_lock();
	if (lm_sym.split_delay_us) {
		WRITE_ONCE(*lm_sym.split_delay_us, AIM_DELAY_US);
		r->s.aim_slowed = 1;
	}
	for (round = 0; round < r->p.aim; round++) {
		memset(sh, 0, sizeof(*sh));
		sh->entry = aim_find(ram, &sh->group, r->p.aim_pte);
		if (!sh->entry)
			break;
		r->s.aimed_pte += sh->entry == PAGE_SIZE;
		sh->size = sh->entry == PMD_SIZE ? CONT_PMD_SIZE : CONT_PTE_SIZE;
		cpu = cpumask_first(cpu_online_mask);
		for (i = started = 0; i < nr && cpu < nr_cpu_ids; i++) {
			struct task_struct *task;

			th[i].sh = sh;
			th[i].id = i;
			init_completion(&th[i].done);
			task = kthread_create(aim_thread_fn, &th[i],
					      "linmap_aim/%u", i);
			if (IS_ERR(task))
				break;
			/* One CPU each, so that they really run at once. */
			kthread_bind(task, cpu);
			wake_up_process(task);
			started++;
			cpu = cpumask_next(cpu, cpu_online_mask);
		}
		while (atomic_read(&sh->ready) < started)
			cond_resched();
		/* Publish the group to the threads before they start. */
		smp_store_release(&sh->go, true);
		for (i = 0; i < started; i++) {
			wait_for_completion(&th[i].done);
			r->s.aim_calls++;
			if (sh->errors[i] && !r->s.call_errors++)
				scnprintf(r->first, sizeof(r->first),
					  "aimed round %lu at %s group 0x%lx: thread %u got %d",
					  round, sh->entry == PMD_SIZE ?
					  "cont_pmd" : "cont_pte", sh->group,
					  i, sh->errors[i]);
		}
		r->s.aimed++;
		if (started < 2)
			break;
	}
	if (lm_sym.split_delay_us)
		WRITE_ONCE(*lm_sym.split_delay_us, 0);
	cpus_read_unlock();
out:
	kfree(ram);
	kfree(th);
	kfree(sh);
}

