// SPDX-License-Identifier: GPL-2.0
/*
 * tlbmark start|stop ID, tlbmark layout: speak to the tlbtrace plugin on
 * the host. QEMU 7.2's plugins see the addresses of guest memory accesses
 * and nothing else the guest could say, so each word is a load from a
 * fixed user range at an offset that names it (tlbtrace.h). The pages are
 * populated by the kernel (MAP_POPULATE), so that the loads are the only
 * user accesses to them.
 *
 * layout: the kernel's page tables, as /sys/kernel/debug/kernel_page_tables
 * shows them, sent as ranges of leaves of one size each. dczid: prints the
 * bytes one DC ZVA zeroes (the plugin cannot see those stores).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tlbtrace.h"

static volatile uint8_t *base;

static void cmd(unsigned int op, unsigned int arg)
{
	(void)base[op << 8 | arg];
}

static void word(uint64_t w)
{
	int i;

	for (i = 0; i < 4; i++, w >>= 16)
		(void)base[4096 + (w & 0xffff)];
}

/* log2 of a leaf's size: page, contiguous pages, PMD, contiguous PMDs, PUD. */
static int leaf_shift(int page_shift, const char *level, int cont)
{
	static const int shifts[3][5] = {
		{ 12, 16, 21, 25, 30 }, { 14, 21, 25, 30, 36 }, { 16, 21, 29, 34, 42 },
	};
	int g = page_shift == 12 ? 0 : page_shift == 14 ? 1 : 2;

	if (!strcmp(level, "PTE"))
		return shifts[g][cont ? 1 : 0];
	if (!strcmp(level, "PMD"))
		return shifts[g][cont ? 3 : 2];
	if (!strcmp(level, "PUD"))
		return shifts[g][4];
	return -1;
}

static int send_layout(void)
{
	FILE *f = fopen("/sys/kernel/debug/kernel_page_tables", "r");
	int page_shift = __builtin_ctz(getpagesize()), linear = 0, n;
	unsigned long long a, b;
	unsigned int count = 0;
	char line[512], level[8];

	if (!f) {
		perror("tlbmark: /sys/kernel/debug/kernel_page_tables");
		return 1;
	}
	cmd(LM_MARK_LAYOUT, 0);
	while (fgets(line, sizeof(line), f)) {
		int shift;
		char *rest;

		if (strstr(line, "Linear Mapping start"))
			linear = 1;
		else if (strstr(line, "Linear Mapping end"))
			linear = 0;
		if (sscanf(line, "0x%llx-0x%llx %*s %7s %n", &a, &b, level, &n) != 3)
			continue;
		rest = line + n;
		/* Nothing mapped there, or entries not valid (F) */
		if (!*rest || *rest == '\n' || *rest == 'F')
			continue;
		shift = leaf_shift(page_shift, level, strstr(rest, " CON ") != NULL);
		if (shift < 0)
			continue;
		word(a | (uint64_t)linear << 6 | shift);
		word(b);
		count++;
	}
	fclose(f);
	cmd(LM_MARK_LAYOUT_END, count & 0xff);
	printf("tlbmark: layout of %u ranges sent\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long id = 0;
	unsigned int op = 0;
	char *end;
	void *p;

	if (argc == 2 && !strcmp(argv[1], "dczid")) {
		uint64_t dczid;

		/* The bytes one DC ZVA zeroes (make bench-tlb's bound). */
		asm volatile("mrs %0, dczid_el0" : "=r"(dczid));
		printf("%u\n", 4U << (dczid & 0xf));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "layout")) {
		op = LM_MARK_LAYOUT;
	} else if (argc == 3 && !strcmp(argv[1], "start")) {
		op = LM_MARK_START;
	} else if (argc == 3 && !strcmp(argv[1], "stop")) {
		op = LM_MARK_STOP;
	} else {
		fprintf(stderr, "usage: tlbmark start|stop ID (ID 0 to 255) | tlbmark layout | tlbmark dczid\n");
		return 2;
	}
	if (op != LM_MARK_LAYOUT) {
		id = strtoul(argv[2], &end, 0);
		if (*end || id > 255) {
			fprintf(stderr, "tlbmark: bad ID '%s' (0 to 255)\n", argv[2]);
			return 2;
		}
	}
	p = mmap((void *)LM_MARK_PAGE, LM_MARK_PAGES * 4096, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE,
		 -1, 0);
	if (p != (void *)LM_MARK_PAGE) {
		perror("tlbmark: mmap of the marker pages");
		return 1;
	}
	base = p;
	if (op == LM_MARK_LAYOUT)
		return send_layout();
	cmd(op, id);
	return 0;
}
