// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_secret: take pages out of the linear map with memfd_secret() and
 * give them back, as a workload for the bench and a helper for the tests.
 *
 *   linmap_secret PAGES HOLD_MS [ROUNDS]
 *
 * Each round maps PAGES pages of a secret memory file, touches each (every
 * fault removes one page from the linear map), holds them HOLD_MS, then
 * closes the file (the pages go back). Exit status 2: no memfd_secret().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif

static int secret_round(unsigned long pages, unsigned long hold_ms)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t size = pages * ps;
	unsigned long i;
	char *p;
	int fd;

	fd = syscall(__NR_memfd_secret, 0);
	if (fd < 0) {
		fprintf(stderr, "memfd_secret: %s\n", strerror(errno));
		return errno == ENOSYS ? 2 : 1;
	}
	if (ftruncate(fd, size)) {
		perror("ftruncate");
		close(fd);
		return 1;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		close(fd);
		return 1;
	}
	for (i = 0; i < pages; i++)
		p[i * ps] = 1;
	usleep(hold_ms * 1000);
	munmap(p, size);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long pages, hold, rounds = 1, r;
	int ret = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PAGES HOLD_MS [ROUNDS]\n", argv[0]);
		return 1;
	}
	pages = strtoul(argv[1], NULL, 0);
	hold = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		rounds = strtoul(argv[3], NULL, 0);
	for (r = 0; r < rounds && !ret; r++)
		ret = secret_round(pages, hold);
	return ret;
}
