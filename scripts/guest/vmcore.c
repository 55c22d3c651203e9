// SPDX-License-Identifier: GPL-2.0
/*
 * The kdump guests' check of the crashed kernel's memory, a static arm64
 * program in the initramfs (scripts/job/initramfs.sh).
 *
 *   linmap_vmcore mark
 *	In the first kernel: fill a locked page of this process with a
 *	pattern made of a random cookie, print "PHYS:COOKIE" (the page's
 *	physical address from /proc/self/pagemap) and wait for the panic
 *	that ends the kernel, holding the page.
 *
 *   linmap_vmcore check [--whole] FILE RAM CRASH RELEASE [PHYS:COOKIE]
 *	In the crash kernel: FILE (/proc/vmcore, or a dump made from it) must
 *	be an arm64 ELF core whose PT_LOADs lie in RAM (the first kernel's
 *	System RAM, "START-END,..." inclusive, hexadecimal) and, with --whole
 *	(/proc/vmcore, not a filtered dump), cover all of it outside CRASH
 *	(the crash kernel's reservation, START-END); its VMCOREINFO note must
 *	name RELEASE; and
 *	the page at PHYS must hold the pattern of COOKIE. Prints one line per
 *	finding and exits 1 on any failure.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_RANGES	64
/* The bytes of the pattern: the start of a page of any size. */
#define PAGE		4096

struct range {
	uint64_t start, end;	/* end exclusive */
};

static int failed;

static void finding(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void finding(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		failed = 1;
}

static uint64_t pattern_word(uint64_t cookie, unsigned int i)
{
	return cookie ^ (0x9e3779b97f4a7c15ULL * (i + 1));
}

static int mark(void)
{
	uint64_t cookie, entry, *p;
	long ps = sysconf(_SC_PAGESIZE);
	unsigned int i;
	int fd;

	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, &cookie, sizeof(cookie)) != sizeof(cookie)) {
		perror("/dev/urandom");
		return 1;
	}
	close(fd);
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mlock(p, ps)) {
		perror("mmap/mlock");
		return 1;
	}
	for (i = 0; i < PAGE / 8; i++)
		p[i] = pattern_word(cookie, i);
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pread(fd, &entry, sizeof(entry),
			    (uintptr_t)p / ps * sizeof(entry)) != sizeof(entry)) {
		perror("/proc/self/pagemap");
		return 1;
	}
	close(fd);
	/* Bit 63: present; bits 0-54: the PFN (zero without CAP_SYS_ADMIN). */
	if (!(entry >> 63) || !(entry & ((1ULL << 55) - 1))) {
		fprintf(stderr, "no PFN in /proc/self/pagemap (entry %#" PRIx64 ")\n", entry);
		return 1;
	}
	printf("%#" PRIx64 ":%#" PRIx64 "\n", (uint64_t)((entry & ((1ULL << 55) - 1)) * ps),
	       cookie);
	fflush(stdout);
	for (;;)
		pause();
}

static int parse_ranges(const char *s, struct range *r, int max)
{
	int n = 0;

	while (*s && n < max) {
		char *end;

		r[n].start = strtoull(s, &end, 16);
		if (*end != '-')
			return -1;
		r[n].end = strtoull(end + 1, &end, 16) + 1;
		if (r[n].end <= r[n].start)
			return -1;
		n++;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return *s ? -1 : n;
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t got = pread(fd, buf, len, off);

	return got == (ssize_t)len ? 0 : -1;
}

/* Bytes of [start, end) that no PT_LOAD covers. */
static uint64_t uncovered(const Elf64_Phdr *ph, int nr, uint64_t start, uint64_t end)
{
	uint64_t missing = 0, at = start;

	while (at < end) {
		uint64_t next = end;
		int i, hit = 0;

		for (i = 0; i < nr; i++) {
			uint64_t s = ph[i].p_paddr, e = s + ph[i].p_memsz;

			if (ph[i].p_type != PT_LOAD)
				continue;
			if (s <= at && at < e) {
				hit = 1;
				next = e < end ? e : end;
				break;
			}
			if (s > at && s < next)
				next = s;
		}
		if (!hit)
			missing += next - at;
		at = next;
	}
	return missing;
}

static int check(int argc, char **argv)
{
	struct range ram[MAX_RANGES], crash;
	int nram, fd, i, full, loads = 0, inside = 1, found_info = 0;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	uint64_t missing = 0, ram_bytes = 0;

	full = argc > 2 && !strcmp(argv[2], "--whole");
	if (full) {
		argv++;
		argc--;
	}
	if (argc < 6 || argc > 7)
		return 2;
	nram = parse_ranges(argv[3], ram, MAX_RANGES);
	if (nram <= 0 || parse_ranges(argv[4], &crash, 1) != 1) {
		fprintf(stderr, "bad RAM '%s' or CRASH '%s'\n", argv[3], argv[4]);
		return 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		finding(0, "%s: %s", argv[2], strerror(errno));
		return 1;
	}
	if (read_at(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		finding(0, "%s: not a 64-bit ELF file", argv[2]);
		return 1;
	}
	finding(eh.e_type == ET_CORE && eh.e_machine == EM_AARCH64,
		"ELF type %u (ET_CORE is %u), machine %u (EM_AARCH64 is %u)",
		eh.e_type, ET_CORE, eh.e_machine, EM_AARCH64);
	if (eh.e_phentsize != sizeof(*ph) || !eh.e_phnum) {
		finding(0, "program headers: %u of %u bytes", eh.e_phnum, eh.e_phentsize);
		return 1;
	}
	ph = calloc(eh.e_phnum, sizeof(*ph));
	if (!ph || read_at(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff)) {
		finding(0, "cannot read %u program headers", eh.e_phnum);
		return 1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		int r, in = 0;

		if (ph[i].p_type == PT_NOTE) {
			char *n = malloc(ph[i].p_filesz + 1);
			uint64_t off = 0;

			if (!n || read_at(fd, n, ph[i].p_filesz, ph[i].p_offset))
				continue;
			n[ph[i].p_filesz] = 0;
			/* Notes: namesz, descsz, type, name and desc padded to 4. */
			while (off + 12 <= ph[i].p_filesz) {
				uint32_t namesz, descsz;
				char *name, *desc;

				memcpy(&namesz, n + off, 4);
				memcpy(&descsz, n + off + 4, 4);
				name = n + off + 12;
				desc = name + ((namesz + 3) & ~3U);
				if (desc + descsz > n + ph[i].p_filesz)
					break;
				if (namesz == 11 && !memcmp(name, "VMCOREINFO", 10)) {
					char want[128], *text = strndup(desc, descsz);

					snprintf(want, sizeof(want), "OSRELEASE=%s\n", argv[5]);
					int named = text && strstr(text, want);

					found_info = 1;
					finding(named, "VMCOREINFO %s release %s",
						named ? "names" : "does not name", argv[5]);
					free(text);
				}
				off = desc + ((descsz + 3) & ~3U) - n;
			}
			free(n);
			continue;
		}
		if (ph[i].p_type != PT_LOAD)
			continue;
		loads++;
		for (r = 0; r < nram; r++)
			if (ph[i].p_paddr >= ram[r].start &&
			    ph[i].p_paddr + ph[i].p_memsz <= ram[r].end)
				in = 1;
		if (!in) {
			inside = 0;
			finding(0, "PT_LOAD %#" PRIx64 "+%#" PRIx64 " is outside the first kernel's RAM",
				(uint64_t)ph[i].p_paddr, (uint64_t)ph[i].p_memsz);
		}
	}
	if (!found_info)
		finding(0, "no VMCOREINFO note");
	if (inside)
		finding(loads > 0, "%d PT_LOADs, all in the first kernel's RAM", loads);
	for (i = 0; i < nram; i++) {
		ram_bytes += ram[i].end - ram[i].start;
		/* The crash kernel's own memory is left out of the core. */
		if (crash.start >= ram[i].start && crash.end <= ram[i].end) {
			missing += uncovered(ph, eh.e_phnum, ram[i].start, crash.start);
			missing += uncovered(ph, eh.e_phnum, crash.end, ram[i].end);
		} else {
			missing += uncovered(ph, eh.e_phnum, ram[i].start, ram[i].end);
		}
	}
	if (full)
		finding(!missing, "PT_LOADs cover the first kernel's %" PRIu64
			" MiB of RAM outside the crash kernel's: %" PRIu64 " bytes missing",
			ram_bytes >> 20, missing);
	if (argc == 7) {
		uint64_t phys, cookie, buf[PAGE / 8];
		char *end;
		int hit = 0, match = 1;

		phys = strtoull(argv[6], &end, 16);
		cookie = *end == ':' ? strtoull(end + 1, NULL, 16) : 0;
		for (i = 0; i < eh.e_phnum && !hit; i++) {
			if (ph[i].p_type != PT_LOAD || phys < ph[i].p_paddr ||
			    phys + PAGE > ph[i].p_paddr + ph[i].p_filesz)
				continue;
			hit = 1;
			if (read_at(fd, buf, PAGE, ph[i].p_offset + phys - ph[i].p_paddr))
				match = 0;
			for (unsigned int w = 0; match && w < PAGE / 8; w++)
				match = buf[w] == pattern_word(cookie, w);
		}
		finding(hit && match, "the page the first kernel marked at %#" PRIx64 " %s",
			phys, !hit ? "is in no PT_LOAD" : match ? "holds its pattern" :
			"does not hold its pattern");
	}
	close(fd);
	return failed;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc == 2 && !strcmp(argv[1], "mark"))
		return mark();
	if (argc >= 2 && !strcmp(argv[1], "check"))
		ret = check(argc, argv);
	if (ret == 2)
		fprintf(stderr, "usage: %s mark | check [--whole] FILE RAM CRASH RELEASE [PHYS:COOKIE]\n",
			argv[0]);
	return ret;
}
