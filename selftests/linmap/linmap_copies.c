// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 linear map tests, linmap_copies.
 *
 * The copies of the linear map kexec's relocation and hibernation's
 * restore run on (trans_pgd): a block, an invalid block, a copy during a
 * fold, and the copy kexec_file_load(2) makes.
 */

#include "linmap_lib.h"

/*
 * trans_pgd's copy of the linear map (kexec's relocation, hibernation's
 * restore) around a PMD block of the module's: every page the live map
 * maps must be mapped valid, at its own physical address, in the copy.
 * Returns the module's output, or NULL with the reason in @skip.
 */
static struct lm_out *lm_trans_copy(struct __test_metadata *_metadata,
				    struct lm_ctx *lm, const char *which,
				    char *skip, size_t size)
{
	static const char * const zero[] = { "ret", "mismatches" };
	struct lm_out *o;
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "case=%s", which);
	o = lm_run(_metadata, lm, "trans_copy", cmd, skip, size);
	if (!o)
		return NULL;
	lm_expect_zero(_metadata, o, "", zero, ARRAY_SIZE(zero));
	/* The copy covers the block's PMD range, page by page. */
	EXPECT_EQ(lm->st.page_size / 8, lm_num(_metadata, o, "pages"));
	TH_LOG("case=%s: %llu pages, %llu leaves and %llu tables in the copy",
	       which, lm_num(_metadata, o, "pages"),
	       lm_num(_metadata, o, "copy_leaves"),
	       lm_num(_metadata, o, "copy_tables"));
	return o;
}

TEST_F_TIMEOUT(linmap, trans_copy_block, LM_TIMEOUT)
{
	char skip[160];

	if (!lm_trans_copy(_metadata, &self->lm, "plain", skip, sizeof(skip)))
		SKIP(return, "%s", skip);
}

/* A block made invalid must be mapped valid in the copy, as pages are. */
TEST_F_TIMEOUT(linmap, trans_copy_invalid_block, LM_TIMEOUT)
{
	char skip[160];

	if (!lm_trans_copy(_metadata, &self->lm, "invalid", skip, sizeof(skip)))
		SKIP(return, "%s", skip);
}

/*
 * A full collapse pass while the copy sleeps (test-only delay) between
 * reading the block's PMD entry, a table then, and walking the table: the
 * pass must keep off until the copy is done, and fold the block after.
 */
static void lm_expect_fold_after_copy(struct __test_metadata *_metadata,
				      struct lm_out *o)
{
	char kind[16];

	lm_str(_metadata, o, "kind_copying", kind, sizeof(kind));
	EXPECT_TRUE(!strcmp(kind, "pte") || !strcmp(kind, "cont_pte"))
		TH_LOG("the pass folded the block (%s) while the copy walked it", kind);
	lm_str(_metadata, o, "kind_after", kind, sizeof(kind));
	EXPECT_TRUE(!strcmp(kind, "pmd") || !strcmp(kind, "cont_pmd") ||
		    !strcmp(kind, "pud"))
		TH_LOG("no fold after the copy (%s): the race was not set up", kind);
}

TEST_F_TIMEOUT(linmap, trans_copy_during_fold, LM_TIMEOUT)
{
	char skip[160];
	struct lm_out *o;

	o = lm_trans_copy(_metadata, &self->lm, "fold", skip, sizeof(skip));
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_fold_after_copy(_metadata, o);
}

/*
 * A file with an arm64 Image header that kexec's loader accepts: it is
 * loaded and its copy of the linear map checked, never run.
 */
static int lm_stand_in_image(struct __test_metadata *_metadata)
{
	static char buf[64 << 10];
	struct {
		uint32_t code0, code1;
		uint64_t text_offset, image_size, flags, res2, res3, res4;
		uint32_t magic, res5;
	} h = {
		.image_size = 2 << 20,
		.magic = 0x644d5241,		/* "ARM\x64", little-endian */
	};
	char path[] = "/tmp/linmap-image-XXXXXX";
	int fd = syscall(__NR_memfd_create, "linmap-image", 0), ro, err;

	/* Kernels without CONFIG_MEMFD_CREATE: a file in /tmp, unlinked. */
	if (fd < 0) {
		fd = mkstemp(path);
		if (fd < 0)
			return -errno;
		unlink(path);
	}
	memcpy(buf, &h, sizeof(h));
	if (write(fd, buf, sizeof(buf)) != sizeof(buf)) {
		close(fd);
		return -EIO;
	}
	/* The loader refuses a file open for writing (ETXTBSY). */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY);
	err = errno;
	close(fd);
	return ro < 0 ? -err : ro;
}

/*
 * The same window in the copy of the whole linear map that
 * kexec_file_load(2) makes: the image is loaded while a full pass runs
 * (the delay aimed at the module's block), then the copy the loaded image
 * holds is checked over the block, and the image unloaded.
 */
TEST_F_TIMEOUT(linmap, kexec_load_during_fold, LM_TIMEOUT)
{
	char skip[160], which[32];
	struct lm_out *o;
	int fd;

	fd = lm_stand_in_image(_metadata);
	ASSERT_LE(0, fd) TH_LOG("no image file: %s", strerror(-fd));
	snprintf(which, sizeof(which), "kexec fd=%d", fd);
	o = lm_trans_copy(_metadata, &self->lm, which, skip, sizeof(skip));
	close(fd);
	if (!o)
		SKIP(return, "%s", skip);
	lm_expect_fold_after_copy(_metadata, o);
}

TEST_HARNESS_MAIN
