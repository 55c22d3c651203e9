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
 *
 *   linmap_vmcore walk FILE
 *	Translate the linear-map addresses makedumpfile reads first (the
 *	mem_section root array and the section arrays it points to) twice,
 *	through the dead kernel's own tables in FILE: as the architecture
 *	walks them, and as makedumpfile's arm64 walk does (1.7.2 to 1.7.9,
 *	vaddr_to_paddr_arm64()), which takes a block in the top level of a
 *	2- or 3-level table for a PUD-level section. Prints one line per
 *	address; exits 3 if makedumpfile's walk lands elsewhere for any, 0 if
 *	not, 4 for a geometry makedumpfile does not walk (4K/52, 16K/52), 1 if
 *	the tables cannot be read.
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

/* The text of the first VMCOREINFO note in the PT_NOTEs, or NULL. */
static char *vmcoreinfo(int fd, const Elf64_Phdr *ph, int nph)
{
	char *info = NULL;
	int i;

	for (i = 0; i < nph && !info; i++) {
		uint64_t off = 0, len = ph[i].p_filesz;
		char *n;

		if (ph[i].p_type != PT_NOTE)
			continue;
		n = malloc(len);
		if (!n || read_at(fd, n, len, ph[i].p_offset)) {
			free(n);
			continue;
		}
		/* Notes: namesz, descsz, type, name and desc padded to 4. */
		while (off + 12 <= len && !info) {
			uint32_t namesz, descsz;
			uint64_t desc;

			memcpy(&namesz, n + off, 4);
			memcpy(&descsz, n + off + 4, 4);
			desc = off + 12 + ((namesz + 3) & ~3U);
			if (desc + descsz > len)
				break;
			if (namesz == 11 && !memcmp(n + off + 12, "VMCOREINFO", 10))
				info = strndup(n + desc, descsz);
			off = desc + ((descsz + 3) & ~3U);
		}
		free(n);
	}
	return info;
}

static int check(int argc, char **argv)
{
	struct range ram[MAX_RANGES], crash;
	int nram, fd, i, full, loads = 0, inside = 1, found_info;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	uint64_t missing = 0, ram_bytes = 0;
	char *info;

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
	info = vmcoreinfo(fd, ph, eh.e_phnum);
	found_info = !!info;
	if (info) {
		char want[128];
		int named;

		snprintf(want, sizeof(want), "OSRELEASE=%s\n", argv[5]);
		named = !!strstr(info, want);
		finding(named, "VMCOREINFO %s release %s",
			named ? "names" : "does not name", argv[5]);
		free(info);
	}
	for (i = 0; i < eh.e_phnum; i++) {
		int r, in = 0;

		if (ph[i].p_type == PT_NOTE)
			continue;
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

/* The dump, for the walk: its PT_LOADs and what VMCOREINFO says. */
struct core {
	int fd, nph;
	Elf64_Phdr *ph;
	char *info;
};

static int core_open(struct core *c, const char *path)
{
	Elf64_Ehdr eh;

	c->info = NULL;
	c->fd = open(path, O_RDONLY);
	if (c->fd < 0 || read_at(c->fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phentsize != sizeof(*c->ph)) {
		fprintf(stderr, "%s: not an ELF core\n", path);
		return -1;
	}
	c->nph = eh.e_phnum;
	c->ph = calloc(c->nph, sizeof(*c->ph));
	if (!c->ph || read_at(c->fd, c->ph, c->nph * sizeof(*c->ph), eh.e_phoff))
		return -1;
	c->info = vmcoreinfo(c->fd, c->ph, c->nph);
	if (!c->info)
		fprintf(stderr, "%s: no VMCOREINFO note\n", path);
	return c->info ? 0 : -1;
}

/* KEY=value from VMCOREINFO; SYMBOL()s are hexadecimal without 0x. */
static int info_get(const struct core *c, const char *key, uint64_t *val)
{
	size_t klen = strlen(key);
	const char *p = c->info;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			*val = strtoull(p + klen + 1, NULL, strncmp(key, "SYMBOL(", 7) ? 0 : 16);
			return 0;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	fprintf(stderr, "VMCOREINFO has no %s\n", key);
	return -1;
}

static int read_phys(const struct core *c, uint64_t pa, void *buf, size_t len)
{
	int i;

	for (i = 0; i < c->nph; i++)
		if (c->ph[i].p_type == PT_LOAD && pa >= c->ph[i].p_paddr &&
		    pa + len <= c->ph[i].p_paddr + c->ph[i].p_filesz)
			return read_at(c->fd, buf, len, c->ph[i].p_offset + pa - c->ph[i].p_paddr);
	return -1;
}

struct geom {
	unsigned int page_shift, levels, va_bits;
	uint64_t pgd;		/* physical */
};

#define DESC_TYPE(d)	((d) & 3)
/*
 * Output address bits [47:page shift]. With 52-bit physical addresses the
 * top bits sit elsewhere (bits [15:12] with 64K pages); no dump here has
 * them, and a page-size mask keeps them out of the address.
 */
#define DESC_OUT(g, d) ((d) & 0x0000ffffffffffffULL & ~((1ULL << (g)->page_shift) - 1))

static uint64_t desc_at(const struct core *c, uint64_t table, uint64_t idx, int *err)
{
	uint64_t d = 0;

	if (read_phys(c, table + idx * 8, &d, 8))
		*err = 1;
	return d;
}

/* The entry for @va in the table @d points to, at @shift. */
static uint64_t step(const struct core *c, const struct geom *g, uint64_t d,
		     unsigned int shift, uint64_t va, int *err)
{
	return desc_at(c, DESC_OUT(g, d), (va >> shift) & ((1ULL << (g->page_shift - 3)) - 1),
		       err);
}

/* @va through the leaf @d, which maps 1 << @shift bytes. */
static uint64_t leaf_pa(const struct geom *g, uint64_t d, unsigned int shift, uint64_t va)
{
	uint64_t mask = (1ULL << shift) - 1;

	return (DESC_OUT(g, d) & ~mask) + (va & mask);
}

/* The level-N shift of arm64's ARM64_HW_PGTABLE_LEVEL_SHIFT(n). */
static unsigned int level_shift(const struct geom *g, int n)
{
	return (g->page_shift - 3) * (4 - n) + 3;
}

/* As the MMU walks: physical address, or ~0 if not mapped; *size the leaf. */
static uint64_t walk_arch(const struct core *c, const struct geom *g, uint64_t va,
			  uint64_t *size, int *top_block, int *err)
{
	unsigned int shift = level_shift(g, 4 - g->levels), bits = g->page_shift - 3;
	uint64_t table = g->pgd, d, idx;
	unsigned int lvl;

	*top_block = 0;
	for (lvl = 0; lvl < g->levels; lvl++, shift -= bits) {
		idx = (va >> shift) & (lvl ? (1ULL << bits) - 1 :
				      (1ULL << (g->va_bits - shift)) - 1);
		d = desc_at(c, table, idx, err);
		if (*err || !(d & 1))
			return ~0ULL;
		if (lvl + 1 == g->levels || DESC_TYPE(d) == 1) {
			if (lvl + 1 == g->levels && DESC_TYPE(d) != 3)
				return ~0ULL;
			/* Blocks: 4K at levels 1 and 2, 16K and 64K at level 2. */
			if (lvl + 1 < g->levels &&
			    4 - g->levels + lvl < (g->page_shift == 12 ? 1U : 2U))
				return ~0ULL;
			*size = 1ULL << shift;
			*top_block = !lvl && lvl + 1 < g->levels;
			return leaf_pa(g, d, shift, va);
		}
		table = DESC_OUT(g, d);
	}
	return ~0ULL;
}

/*
 * As makedumpfile's vaddr_to_paddr_arm64() walks: the top-level entry,
 * with fewer than 4 levels, stands for the PUD, and a block there is
 * read as a section of PUD_SHIFT = level_shift(1) bits whatever its
 * level; with 2 levels the same entry then stands for the PMD too.
 */
static uint64_t walk_mdf(const struct core *c, const struct geom *g, uint64_t va, int *err)
{
	unsigned int top = level_shift(g, 4 - g->levels);
	unsigned int pud_shift = level_shift(g, 1), pmd_shift = level_shift(g, 2);
	uint64_t pud, pmd, pte;

	pud = desc_at(c, g->pgd, (va >> top) & ((1ULL << (g->va_bits - top)) - 1), err);
	if (g->levels > 3)
		pud = step(c, g, pud, pud_shift, va, err);
	if (*err)
		return ~0ULL;
	if (DESC_TYPE(pud) == 1)
		return leaf_pa(g, pud, pud_shift, va);
	pmd = g->levels > 2 ? step(c, g, pud, pmd_shift, va, err) : pud;
	if (*err)
		return ~0ULL;
	if (DESC_TYPE(pmd) == 1)
		return leaf_pa(g, pmd, pmd_shift, va);
	pte = step(c, g, pmd, g->page_shift, va, err);
	if (*err || !(pte & 1))
		return ~0ULL;
	return leaf_pa(g, pte, g->page_shift, va);
}

static const char *size_str(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	bytes >>= 10;
	while (u < 3 && bytes >= 1024 && !(bytes & 1023)) {
		bytes >>= 10;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", bytes, unit[u]);
	return buf;
}

/* One address both ways; 1 if makedumpfile's walk lands elsewhere. */
static int walk_one(const struct core *c, const struct geom *g, const char *what,
		    uint64_t va, int *err)
{
	uint64_t size = 0, pa, mdf;
	char sz[24];
	int top_block;

	pa = walk_arch(c, g, va, &size, &top_block, err);
	if (*err || pa == ~0ULL) {
		printf("FAIL: %s %#" PRIx64 ": %s\n", what, va,
		       *err ? "its tables are not in the dump" : "not mapped");
		*err = 1;
		return 0;
	}
	mdf = walk_mdf(c, g, va, err);
	if (mdf == pa) {
		printf("ok: %s %#" PRIx64 " -> %#" PRIx64 " (a %s leaf), makedumpfile agrees\n",
		       what, va, pa, size_str(size, sz, sizeof(sz)));
		return 0;
	}
	printf("misread: %s %#" PRIx64 " -> %#" PRIx64 " (a %s %sblock); makedumpfile's walk gives %#" PRIx64 "\n",
	       what, va, pa, size_str(size, sz, sizeof(sz)), top_block ? "top-level " : "", mdf);
	return 1;
}

static int mdf_geometry(uint64_t page, uint64_t va_bits)
{
	switch (page) {
	case 4096:
		return va_bits == 39 || va_bits == 48;
	case 16384:
		return va_bits == 36 || va_bits == 47 || va_bits == 48;
	case 65536:
		return va_bits == 42 || va_bits == 48 || va_bits == 52;
	}
	return 0;
}

static int walk(const char *path)
{
	uint64_t page, va_bits, pgd_va, voff, ms_va, roots;
	struct geom g;
	struct core c;
	int err = 0, misread = 0;
	uint64_t r;

	if (core_open(&c, path) || info_get(&c, "PAGESIZE", &page) ||
	    info_get(&c, "NUMBER(VA_BITS)", &va_bits) ||
	    info_get(&c, "SYMBOL(swapper_pg_dir)", &pgd_va) ||
	    info_get(&c, "NUMBER(kimage_voffset)", &voff) ||
	    info_get(&c, "SYMBOL(mem_section)", &ms_va) ||
	    info_get(&c, "LENGTH(mem_section)", &roots))
		return 1;
	if (page != 4096 && page != 16384 && page != 65536) {
		fprintf(stderr, "PAGESIZE %" PRIu64 "\n", page);
		return 1;
	}
	g.page_shift = __builtin_ctzll(page);
	g.va_bits = va_bits;
	/* ARM64_HW_PGTABLE_LEVELS(va_bits) */
	g.levels = (va_bits - 4) / (g.page_shift - 3);
	/* swapper_pg_dir is in the kernel image. */
	g.pgd = pgd_va - voff;
	printf("# %" PRIu64 " KiB pages, %u-bit VA, %u levels, swapper_pg_dir at %#" PRIx64 "\n",
	       page >> 10, g.va_bits, g.levels, g.pgd);
	/* The geometries makedumpfile's calculate_plat_config() accepts. */
	if (!mdf_geometry(page, va_bits)) {
		printf("# makedumpfile does not walk %" PRIu64 " KiB pages with %u-bit VA: nothing to compare\n",
		       page >> 10, g.va_bits);
		return 4;
	}
	/* VMCOREINFO_SYMBOL_ARRAY(): the root array's own (linear) address. */
	misread |= walk_one(&c, &g, "mem_section root", ms_va, &err);
	/* Its entries a page at a time: one walk and one read per page. */
	for (r = 0; r < roots && !err;) {
		uint64_t va = ms_va + r * 8, pa, size, ent[65536 / 8], n, k;
		int top;

		n = (page - (va & (page - 1))) / 8;
		if (n > roots - r)
			n = roots - r;
		pa = walk_arch(&c, &g, va, &size, &top, &err);
		if (err || pa == ~0ULL || read_phys(&c, pa, ent, n * 8)) {
			printf("FAIL: mem_section[%" PRIu64 "] cannot be read\n", r);
			return 1;
		}
		for (k = 0; k < n && !err; k++, r++) {
			char what[48];

			if (!ent[k])
				continue;
			snprintf(what, sizeof(what), "mem_section[%" PRIu64 "]", r);
			misread |= walk_one(&c, &g, what, ent[k], &err);
		}
	}
	if (err)
		return 1;
	return misread ? 3 : 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc == 2 && !strcmp(argv[1], "mark"))
		return mark();
	if (argc >= 2 && !strcmp(argv[1], "check"))
		ret = check(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "walk"))
		return walk(argv[2]);
	if (ret == 2)
		fprintf(stderr, "usage: %s mark | check [--whole] FILE RAM CRASH RELEASE [PHYS:COOKIE] | walk FILE\n",
			argv[0]);
	return ret;
}
