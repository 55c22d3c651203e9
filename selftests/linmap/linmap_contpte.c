// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_contpte: the cost of folding and unfolding contiguous user PTEs
 * (contpte_convert()), for the bench.
 *
 *   linmap_contpte ROUNDS
 *
 * Faults in one contiguous block of anonymous memory (an mTHP of the
 * block's size), then times ROUNDS of mprotect() of its last page to
 * read-only and back, each an unfold and a fold, and asks the test module
 * (contpte_cost) to time the two conversions alone on the same block.
 * Prints key=value lines; under QEMU -icount the nanoseconds count
 * instructions. Exit status 2: no contiguous user PTEs (no THP, no mTHP
 * of that size, or no module).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "linmap_uapi.h"

#define DIR	"/sys/kernel/debug/" LM_DIR_NAME

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The number after "@key=" in @text, or -1. */
static long long kv(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = strstr(text, key); p; p = strstr(p + 1, key))
		if ((p == text || p[-1] == '\n') && p[len] == '=')
			return strtoll(p + len + 1, NULL, 0);
	return -1;
}

int main(int argc, char **argv)
{
	char path[128], buf[4096], cmd[96], saved[32] = "";
	unsigned long long *pair;
	unsigned long ps = sysconf(_SC_PAGESIZE), rounds, r, i;
	long long cont;
	size_t block;
	char *raw, *base, *sel;
	int ret = 1;

	rounds = argc < 2 ? 0 : strtoul(argv[1], NULL, 0);
	if (!rounds) {
		fprintf(stderr, "usage: %s ROUNDS\n", argv[0]);
		return 1;
	}
	if (read_file(DIR "/state", buf, sizeof(buf))) {
		fprintf(stderr, "no %s/state: load linmap_test.ko\n", DIR);
		return 2;
	}
	cont = kv(buf, "cont_ptes");
	if (cont <= 0) {
		fprintf(stderr, "the module reports no cont_ptes\n");
		return 1;
	}
	block = cont * ps;
	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%zukB/enabled",
		 block / 1024);
	if (read_file(path, buf, sizeof(buf))) {
		fprintf(stderr, "no %s: no THP of the block's size\n", path);
		return 2;
	}
	sel = strchr(buf, '[');
	if (sel)
		sscanf(sel + 1, "%31[^]]", saved);
	if (write_file(path, "always")) {
		fprintf(stderr, "cannot write %s\n", path);
		return 1;
	}
	pair = calloc(rounds, sizeof(*pair));
	raw = mmap(NULL, 2 * block, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pair || raw == MAP_FAILED) {
		perror("mmap");
		goto out;
	}
	base = (char *)(((uintptr_t)raw + block - 1) & ~(uintptr_t)(block - 1));
	for (i = 0; i < block; i += ps)
		base[i] = 1;

	/* The kernel's own path: mprotect() of the last page and back. */
	for (r = 0; r < rounds; r++) {
		unsigned long long t0 = now_ns();

		if (mprotect(base + block - ps, ps, PROT_READ) ||
		    mprotect(base + block - ps, ps, PROT_READ | PROT_WRITE)) {
			perror("mprotect");
			goto out;
		}
		pair[r] = now_ns() - t0;
	}
	qsort(pair, rounds, sizeof(*pair), cmp_ull);
	printf("cont_ptes=%lld\nrounds=%lu\n", cont, rounds);
	printf("mprotect_pair_ns.min=%llu\nmprotect_pair_ns.median=%llu\n",
	       pair[0], pair[rounds / 2]);

	/* contpte_convert() alone, unfold and fold, from the module. */
	snprintf(cmd, sizeof(cmd), "addr=%p rounds=%lu", base,
		 rounds > 256 ? 256 : rounds);
	if (write_file(DIR "/contpte_cost", cmd) ||
	    read_file(DIR "/contpte_cost", buf, sizeof(buf))) {
		fprintf(stderr, "contpte_cost failed\n");
		goto out;
	}
	fputs(buf, stdout);
	ret = strstr(buf, "skip=") ? 2 : 0;
out:
	if (saved[0])
		write_file(path, saved);
	return ret;
}
