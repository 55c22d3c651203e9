/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tlbtrace plugin and the guest's tlbmark share, and the events
 * the plugin hands the TLB model (tlbmodel.h), one 64-bit record each, in
 * the order they happened (one lock orders them across vCPUs).
 *
 * A record: bits 63..12 a 4 KiB-aligned virtual address or a value,
 * bits 11..8 the type, bits 7..0 the vCPU. A data access is typed by the
 * exception level of the instruction that made it (perf's :k and :u),
 * whatever the address it reaches.
 */
#ifndef LINMAP_TLBTRACE_H
#define LINMAP_TLBTRACE_H

#include <stdint.h>
#include <string.h>

/* Accesses are traced at this granule whatever the guest's page size. */
#define LM_TRACE_SHIFT		12
/*
 * A vCPU's data (and, separately, instruction) access to the same 4 KiB
 * page as its previous one is left out. It changes nothing in the model:
 * the entry that covers the page is the one the previous access used, so
 * it is the first level's most recently used entry already, the access
 * hits there and the second level is not looked up. Only the last page
 * can be left out so: an access to the one before it would reorder the
 * LRU order (tlbsim's self-test shows the difference), so the filter
 * keeps LM_FILTER = 1 page. The plugin refuses a first level that is not
 * fully associative.
 */
#define LM_FILTER		1
/*
 * Instruction counts are recorded at least every LM_TICK instructions a
 * vCPU runs, and its filters are emptied then, so that every page a
 * window of instructions touches is in the trace inside that window.
 */
#define LM_TICK			4096

/*
 * The guest speaks to the plugin (tlbmark.c) by loads from LM_MARK_PAGES
 * user pages at a fixed address, the only thing a QEMU 7.2 plugin can
 * see of what the guest does besides its instructions. A load from the
 * first page at offset op << 8 | arg is a command; one from page 1 + p
 * at offset o carries the 16 bits p << 12 | o of a layout being sent:
 * each range as two 64-bit words, four symbols each, low first: its
 * start | linear << 6 | shift, then its end.
 */
/* Below 2^38: inside the smallest user address space (39-bit VA). */
#define LM_MARK_PAGE		0x4c4d000000ULL
#define LM_MARK_PAGES		17
#define LM_MARK_START		1	/* arg: the window's id */
#define LM_MARK_STOP		2
#define LM_MARK_LAYOUT		3	/* a layout follows */
#define LM_MARK_LAYOUT_END	4	/* arg: its number of ranges, mod 256 */

enum lm_rec_type {
	LM_T_DATA,		/* a load or store to the page, by EL0 */
	LM_T_INSN,		/* instructions fetched from the page */
	LM_T_COUNT,		/* value: kernel << 26 | user instructions */
	LM_T_MARK,		/* value: op << 8 | id */
	LM_T_FLUSH_ALL,		/* TLBI VMALLE1{,IS,OS}: value 1 if broadcast */
	LM_T_FLUSH_USER,	/* TLBI ASIDE1{,IS,OS}: value 1 if broadcast */
	LM_T_FLUSH_VA,		/* TLBI by address: value 1 if broadcast */
	LM_T_KDATA,		/* a load or store to the page, by EL1 */
	LM_T_LAYOUT,		/* value: n; 2n raw words follow (recordings) */
	LM_T_LAYOUT_ON,		/* the same, rodata=on's linear map (recordings) */
	LM_T_ZVA,		/* DC ZVA: value 1 by EL1; no address (counted) */
	LM_T_PRFM,		/* PRFM: value bit 0 by EL1, bit 1 before an
				 * exclusive load of its address; counted */
	LM_NR_TYPES,
};

/*
 * A recording (tlbtrace's rec=FILE, tlbsim replay): this header, then
 * the records the model was handed, in its order, from the first layout
 * on. A layout record is followed by its ranges, two raw words each:
 * start | linear << 6 | shift, then end, as the guest sent them.
 */
#define LM_REC_MAGIC		0x3143455242544c4cULL	/* "LLTBREC1" */

#define LM_REC(val, type, cpu) \
	(((uint64_t)(val) << LM_TRACE_SHIFT) | ((uint64_t)(type) << 8) | (cpu))
#define LM_REC_ADDR(r)		((r) & ~0xfffULL)
#define LM_REC_VAL(r)		((r) >> LM_TRACE_SHIFT)
#define LM_REC_TYPE(r)		(((r) >> 8) & 0xf)
#define LM_REC_CPU(r)		((r) & 0xff)
#define LM_COUNT_BITS		26
#define LM_MAX_VCPUS		256

/*
 * A prefetch: PRFM (immediate, register or literal) or PRFUM. QEMU runs
 * it as a no-op with no memory callback, so its address is not seen; a
 * core's L1D_TLB_REFILL may count its lookup (the Neoverse N1's does).
 */
static inline int lm_is_prfm(uint32_t insn)
{
	return (insn & 0xffc00000) == 0xf9800000 ||	/* PRFM (immediate) */
	       (insn & 0xffe00c00) == 0xf8a00800 ||	/* PRFM (register) */
	       (insn & 0xffe00c00) == 0xf8800000 ||	/* PRFUM */
	       (insn & 0xff000000) == 0xd8000000;	/* PRFM (literal) */
}

/*
 * The prefetch LL/SC atomics issue before their exclusive load of the
 * same address (PRFM PSTL1STRM, [Xn], then LDXR, LDAXR, LDXP or LDAXP
 * [Xn]): its lookup is the load's, so it is no refill of its own.
 */
static inline int lm_prfm_before_exclusive(uint32_t prfm, uint32_t next)
{
	return (prfm & 0xffc00000) == 0xf9800000 && !((prfm >> 10) & 0xfff) &&
	       (next & 0x3fc00000) == 0x08400000 &&
	       ((prfm >> 5) & 31) == ((next >> 5) & 31);
}

/* The filter: the last LM_FILTER distinct pages, most recent first. */
static inline void lm_filter_reset(uint64_t *f)
{
	int i;

	for (i = 0; i < LM_FILTER; i++)
		f[i] = 1;	/* no page is at an odd address */
}

/*
 * True if @page is among the last @depth in @f; it becomes the most
 * recent. The plugin's depth is LM_FILTER; the self-test tries others.
 */
static inline int lm_filter_hit_depth(uint64_t *f, int depth, uint64_t page)
{
	int i, hit;

	if (f[0] == page)
		return 1;
	for (i = 1; i < depth && f[i] != page; i++)
		;
	hit = i < depth;
	if (!hit)
		i = depth - 1;	/* the least recent one drops out */
	memmove(&f[1], &f[0], i * sizeof(f[0]));
	f[0] = page;
	return hit;
}

static inline int lm_filter_hit(uint64_t *f, uint64_t page)
{
	return lm_filter_hit_depth(f, LM_FILTER, page);
}

#endif
