// SPDX-License-Identifier: GPL-2.0
/*
 * What Page Detective says of what devices can DMA into a page: the IOMMU
 * mappings of a page that page_detective_dma (CONFIG_PAGE_DETECTIVE_DMA)
 * maps for DMA through QEMU's edu device, checked against the DMA address
 * and PFN the driver itself reports; the stale DMA mapping of a page let
 * go while still mapped, on the free page and on its new owner's; queries
 * beside a map/unmap storm; a group switched to an identity domain.  Where
 * dma-debug records the DMA API's mappings (CONFIG_DMA_API_DEBUG), its
 * "dma-api:" lines too, with and without the IOMMU's translation; a
 * driver's kmalloc() buffer mapped for DMA, in a slab page; where
 * iommu.debug_pagealloc counts each page's IOMMU mappings, its count, and
 * a mapping in a domain attached to no device, which only the count sees
 * (the tests that free a page still mapped skip there: the kernel warns
 * at the free, as it is meant to); a user buffer that iommufd maps into
 * its mock domain (CONFIG_IOMMUFD_TEST), with iommufd's pin.  On 6.12,
 * whose IOMMU core cannot describe its tables, the report says that the
 * IOMMU mappings are not known, and dma-debug's record is what finds a
 * stale DMA mapping; the tests of the IOMMU's own lines skip there.  It
 * needs an IOMMU and the edu device, and skips without them:
 * harness/check runs it in guests that have both (QEMU's q35 machine with
 * -device intel-iommu or -device amd-iommu, and -device edu), on the debug
 * kernel, which has dma-debug.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/iommufd.h>

#include "pd_util.h"
#include "../kselftest_harness.h"
#include "../../../../drivers/iommu/iommufd/iommufd_test.h"

#define DMA_DEBUG_OFF	"/sys/kernel/debug/dma-api/disabled"

static bool dma_debug_recording(void);

FIXTURE(iommu)
{
	char *report;
	char bdf[256];
	int dma;		/* the mapper's file; its mappings are its */
	char *page;
};

FIXTURE_SETUP(iommu)
{
	self->report = malloc(PD_REPORT_SIZE);
	ASSERT_NE(NULL, self->report);
	self->dma = -1;
	self->page = NULL;
	if (access(PD_DIR "/phys", F_OK))
		SKIP(return, "no Page Detective");
	if (!pd_find_edu(self->bdf, sizeof(self->bdf)))
		SKIP(return, "no edu device to map pages with");
	if (!pd_pci_iommu_group(self->bdf))
		SKIP(return, "no IOMMU translates for %s", self->bdf);
	if (!pd_iommu_walks() && !dma_debug_recording())
		SKIP(return, "neither the IOMMU core nor dma-debug describes DMA mappings here");
	ASSERT_EQ(0, pd_bind_dma_mapper(self->bdf));
	self->dma = open(PD_DMA_FILE, O_RDWR);
	ASSERT_LE(0, self->dma);
	self->page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	memset(self->page, 0x3c, pd_page_size());
}

FIXTURE_TEARDOWN(iommu)
{
	/* Closing the mapper's file undoes its mappings. */
	if (self->dma >= 0)
		close(self->dma);
	free(self->report);
}

static int mapper(int fd, const char *fmt, const void *addr)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), fmt, addr);
	return write(fd, cmd, strlen(cmd)) < 0 ? -errno : 0;
}

/* The DMA address and PFN of the mapper's first mapping; false if none. */
static bool mapping_of(int fd, unsigned long long *dma, unsigned long *pfn)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return sscanf(buf, "dma %llx pfn %lx", dma, pfn) == 2;
}

/*
 * Whether iommu.debug_pagealloc is on, as the kernel command line says
 * (kstrtobool()'s spellings of true).
 */
static bool iommu_pagealloc_on(void)
{
	char cmdline[4096];
	const char *p;

	pd_read_line("/proc/cmdline", cmdline, sizeof(cmdline));
	for (p = cmdline; (p = strstr(p, "iommu.debug_pagealloc=")); p++) {
		const char *v = p + strlen("iommu.debug_pagealloc=");

		if ((p == cmdline || p[-1] == ' ') &&
		    (strchr("1yY", *v) || !strncmp(v, "on", 2)))
			return true;
	}
	return false;
}

/* Whether dma-debug records the DMA API's mappings: built in, and on. */
static bool dma_debug_recording(void)
{
	char buf[8];

	pd_read_line(DMA_DEBUG_OFF, buf, sizeof(buf));
	return !strcmp(buf, "N");
}

/*
 * The report's lines that start with @prefix and have @want and @also in
 * them (NULL: any), counted; the last of them copied into @line, if given.
 */
static int report_lines(const char *report, const char *prefix, const char *want,
			const char *also, char *line, size_t size)
{
	const char *p = report;
	char start[64];
	int n = 0;

	if (line)
		line[0] = '\0';
	snprintf(start, sizeof(start), "\n%s", prefix);
	while ((p = strstr(p, start))) {
		const char *end = strchr(p + 1, '\n');
		size_t len = end ? (size_t)(end - p - 1) : strlen(p + 1);
		char buf[1024];

		snprintf(buf, sizeof(buf), "%.*s", (int)len, p + 1);
		p++;
		if ((want && !strstr(buf, want)) || (also && !strstr(buf, also)))
			continue;
		if (line)
			snprintf(line, size, "%s", buf);
		n++;
	}
	return n;
}

/* The report's "iommu: group" lines with @want and @also in them. */
static int iommu_lines(const char *report, const char *want, const char *also,
		       char *line, size_t size)
{
	return report_lines(report, "iommu: group ", want, also, line, size);
}

/*
 * The report's "iommu: iommu.debug_pagealloc counts" line says @counted
 * mappings of the page, and @found of them in the leaves listed.
 */
static bool counted_line(const char *report, int counted, int found)
{
	char want[160];

	snprintf(want, sizeof(want),
		 "iommu: iommu.debug_pagealloc counts %d mappings of the page, the leaves above map it %d times",
		 counted, found);
	return pd_has_line(report, "iommu: iommu.debug_pagealloc ", want);
}

/*
 * Where the IOMMU core cannot describe its tables (6.12): the report says
 * so, and lists and counts no leaf.
 */
static void expect_iommu_not_known(struct __test_metadata *_metadata,
				   const char *report)
{
	EXPECT_TRUE(pd_has_line(report, "iommu: ", "iommu: not known")) TH_LOG("%s", report);
	EXPECT_EQ(0, report_lines(report, "iommu: group ", NULL, NULL, NULL, 0))
		TH_LOG("%s", report);
}

/* The summary's @field=, or -1. */
static long summary_count(const char *report, const char *field)
{
	const char *p = strstr(report, "\nsummary: ");
	char name[64];
	long n = -1;

	snprintf(name, sizeof(name), " %s=", field);
	p = p ? strstr(p, name) : NULL;
	if (p)
		sscanf(p + strlen(name), "%ld", &n);
	return n;
}

static long summary_iommu_count(const char *report)
{
	return summary_count(report, "iommu_mappings");
}

/*
 * Where dma-debug records: the report's "dma-api:" lines of the mapper's
 * mapping at @dma of @pfn, which name the device, its driver and, in the
 * stack that made it, the mapper; and the summary's count.  Elsewhere:
 * none.
 */
static void expect_dma_api_line(struct __test_metadata *_metadata,
				const char *report, const char *bdf,
				unsigned long long dma, unsigned long pfn)
{
	char want[256], device[320];

	if (!dma_debug_recording()) {
		EXPECT_EQ(0, report_lines(report, "dma-api: ", NULL, NULL, NULL, 0))
			TH_LOG("%s", report);
		return;
	}
	snprintf(want, sizeof(want), " DMA_BIDIRECTIONAL dma %#llx pfn %#lx offset 0x0 size %ld, ",
		 dma, pfn, pd_page_size());
	snprintf(device, sizeof(device), "dma-api: %s (page_detective_dma): ", bdf);
	EXPECT_EQ(1, report_lines(report, device, want, "[page_detective_dma]", NULL, 0))
		TH_LOG("%s", report);
	EXPECT_EQ(1, summary_count(report, "dma_api_mappings")) TH_LOG("%s", report);
}

/*
 * The report's one leaf, the mapper's mapping at @dma of @pfn: the DMA
 * address as the IOVA, the PFN the driver reports, the group's device and
 * driver, a DMA API domain, writable; and the summary's count.
 */
static void expect_mapper_leaf(struct __test_metadata *_metadata,
			       const char *report, const char *bdf,
			       unsigned long long dma, unsigned long pfn)
{
	char line[1024], want[320];

	EXPECT_EQ(1, iommu_lines(report, NULL, NULL, NULL, 0)) TH_LOG("%s", report);
	snprintf(want, sizeof(want), " iova %#llx ", dma);
	iommu_lines(report, want, NULL, line, sizeof(line));
	ASSERT_NE(0, line[0]) TH_LOG("no line of iova %#llx:\n%s", dma, report);
	snprintf(want, sizeof(want), " pfn %#lx 4K writable", pfn);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	snprintf(want, sizeof(want), "%s (page_detective_dma)", bdf);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "(DMA API)")) TH_LOG("%s", line);
	EXPECT_TRUE(strstr(line, ": DMA domain") || strstr(line, ": DMA-FQ domain"))
		TH_LOG("%s", line);
	EXPECT_EQ(1, summary_iommu_count(report)) TH_LOG("%s", report);
}

/*
 * A page mapped for DMA by a driver that holds its pin: one "iommu:" line,
 * with the DMA address as the IOVA and the PFN the driver reports, the
 * group's device and driver, a DMA API domain, writable (on 6.12: the
 * IOMMU mappings not known); the verdict ok.  Unmapped, the line goes.
 */
TEST_F(iommu, mapped_page)
{
	unsigned long long dma;
	struct pd_summary s;
	unsigned long pfn;

	ASSERT_EQ(0, mapper(self->dma, "map %p", self->page));
	ASSERT_TRUE(mapping_of(self->dma, &dma, &pfn));
	/* The long-term pin may have moved the page: the driver's PFN is it. */
	ASSERT_EQ(pfn, pagemap_pfn(0, self->page));
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pfn, s.pfn);
	if (pd_iommu_walks())
		expect_mapper_leaf(_metadata, self->report, self->bdf, dma, pfn);
	else
		expect_iommu_not_known(_metadata, self->report);
	expect_dma_api_line(_metadata, self->report, self->bdf, dma, pfn);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "pins: ", "pins: 1 "))
		TH_LOG("%s", self->report);
	/* Where iommu.debug_pagealloc counts, the count agrees; else no count. */
	if (iommu_pagealloc_on()) {
		EXPECT_TRUE(counted_line(self->report, 1, 1)) TH_LOG("%s", self->report);
	} else {
		EXPECT_EQ(0, report_lines(self->report, "iommu: iommu.debug_pagealloc ",
					  NULL, NULL, NULL, 0))
			TH_LOG("%s", self->report);
	}
	/* Every device is behind the IOMMU here: none reaches every page. */
	ASSERT_EQ(0, pd_unprotected_pci_devices());
	EXPECT_FALSE(pd_has_line(self->report, "iommu: ", "behind no IOMMU"))
		TH_LOG("%s", self->report);

	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	EXPECT_EQ(0, iommu_lines(self->report, NULL, NULL, NULL, 0)) TH_LOG("%s", self->report);
	EXPECT_EQ(0, summary_iommu_count(self->report)) TH_LOG("%s", self->report);
	EXPECT_EQ(0, report_lines(self->report, "dma-api: ", NULL, NULL, NULL, 0))
		TH_LOG("%s", self->report);
	if (iommu_pagealloc_on())
		EXPECT_TRUE(counted_line(self->report, 0, 0)) TH_LOG("%s", self->report);
}

/*
 * Move the folios this CPU batched on their way to the LRU onto it, as
 * MADV_COLD does first, here on a range with no pages to make cold: a
 * batch's reference would otherwise outlive munmap() (7.2), and the page
 * would be freed only by whoever drains the batch.
 */
static void drain_lru_batches_here(void)
{
	void *none = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (none == MAP_FAILED)
		return;
	madvise(none, pd_page_size(), MADV_COLD);
	munmap(none, pd_page_size());
}

/*
 * A driver's kmalloc() buffer mapped for DMA: its slab page's refcount is
 * zero all its life (slabs are allocated frozen, from 7.0), and it is no
 * free page.
 * The report lists the mapping, with the driver's DMA address (the
 * IOMMU's leaf, and dma-debug's record), and the verdict is not
 * "mismatch".
 */
TEST_F(iommu, kmalloc_buffer_mapped)
{
	unsigned long long dma;
	struct pd_summary s;
	unsigned long pfn;
	char want[128], device[320];

	ASSERT_EQ(0, mapper(self->dma, "map-kmalloc", NULL));
	ASSERT_TRUE(mapping_of(self->dma, &dma, &pfn));
	ASSERT_EQ(0, pd_phys(pfn, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pfn, s.pfn);
	/* Slabs are allocated frozen from 7.0; 6.12's hold a reference. */
	if (pd_kernel_version() >= 700)
		EXPECT_EQ(0, s.refcount) TH_LOG("%s", self->report);
	EXPECT_STRNE("mismatch", s.verdict) TH_LOG("%s", self->report);
	snprintf(want, sizeof(want), " iova %#llx pfn %#lx 4K writable",
		 dma & ~(unsigned long long)(pd_page_size() - 1), pfn);
	if (pd_iommu_walks()) {
		EXPECT_EQ(1, iommu_lines(self->report, want, "(page_detective_dma)", NULL, 0))
			TH_LOG("%s", self->report);
	} else {
		expect_iommu_not_known(_metadata, self->report);
	}
	if (dma_debug_recording()) {
		snprintf(want, sizeof(want), " dma %#llx pfn %#lx ", dma, pfn);
		snprintf(device, sizeof(device), "dma-api: %s (page_detective_dma): ",
			 self->bdf);
		EXPECT_EQ(1, report_lines(self->report, device, want, NULL, NULL, 0))
			TH_LOG("%s", self->report);
	}
}

/*
 * A page mapped into a domain attached to no device: no walk sees it, and
 * iommu.debug_pagealloc counts it.  While its mapper holds its pin, the
 * verdict is "partial", saying so; once the mapper let go of it, which
 * this process still maps, nobody holds it for DMA: "mismatch", the
 * culprit the count.  Unmapped, the count is 0 and the verdict ok.
 */
TEST_F(iommu, unattached_domain_counted)
{
	unsigned long long iova;
	struct pd_summary s;
	unsigned long pfn;

	if (!iommu_pagealloc_on())
		SKIP(return, "iommu.debug_pagealloc is off: no count to see the mapping by");
	ASSERT_EQ(0, mapper(self->dma, "map-unattached %p", self->page));
	ASSERT_TRUE(mapping_of(self->dma, &iova, &pfn));
	ASSERT_EQ(pfn, pagemap_pfn(0, self->page));
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(0, iommu_lines(self->report, NULL, "(page_detective_dma)", NULL, 0))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(counted_line(self->report, 1, 0)) TH_LOG("%s", self->report);
	EXPECT_STREQ("partial", s.verdict) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "verdict: partial", "in domains no walk reaches"))
		TH_LOG("%s", self->report);

	ASSERT_EQ(0, mapper(self->dma, "leak", NULL));
	drain_lru_batches_here();
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.culprits) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "culprit: iommu: iommu.debug_pagealloc counts 1 ",
				"nobody holds it for DMA"))
		TH_LOG("%s", self->report);

	/* Undone before the page is freed, which would warn. */
	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_TRUE(counted_line(self->report, 0, 0)) TH_LOG("%s", self->report);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
}

/*
 * Where dma-debug records, the report names the mapper's mapping at @dma of
 * @pfn in a "culprit: dma-api:" line, with @why, and the mapper in the
 * stack that made it.  Returns the culprits it names (0 or 1).
 */
static int expect_dma_api_culprit(struct __test_metadata *_metadata,
				  const char *report, const char *bdf,
				  unsigned long long dma, unsigned long pfn,
				  const char *why)
{
	char want[256], device[320];

	if (!dma_debug_recording())
		return 0;
	snprintf(want, sizeof(want), " dma %#llx pfn %#lx offset 0x0 size %ld, %s",
		 dma, pfn, pd_page_size(), why);
	snprintf(device, sizeof(device), "culprit: dma-api: %s (page_detective_dma): ", bdf);
	EXPECT_EQ(1, report_lines(report, device, want, "[page_detective_dma]", NULL, 0))
		TH_LOG("%s", report);
	return 1;
}

/*
 * With both sources naming the stale mapping (@culprits 2), the verdict
 * line says what each found, the IOMMU's first.
 */
static void expect_both_dma_sources(struct __test_metadata *_metadata,
				    const char *report, int culprits)
{
	if (culprits != 2)
		return;
	EXPECT_TRUE(pd_has_line(report,
				"verdict: mismatch, an IOMMU maps the page for DMA while nobody holds it for that",
				"for that; the DMA API maps the page for a device"))
		TH_LOG("%s", report);
}

/* The report names a "culprit: iommu:" line with @want and @also in it. */
static void expect_dma_culprit(struct __test_metadata *_metadata,
			       const char *report, const char *want,
			       const char *also)
{
	const char *culprit = strstr(report, "\nculprit: iommu: group ");

	ASSERT_NE(NULL, culprit) TH_LOG("%s", report);
	EXPECT_TRUE(pd_has_line(culprit + 1, "culprit: iommu: ", want))
		TH_LOG("%s", report);
	EXPECT_TRUE(pd_has_line(culprit + 1, "culprit: iommu: ", also))
		TH_LOG("%s", report);
}

/*
 * The IOMMU's culprit for the mapper's mapping at @dma of @pfn, with @why:
 * the one leaf; returns the culprits it names (0 or 1).  On 6.12, whose
 * IOMMU core cannot describe its tables, none: the report says so.
 */
static int expect_iommu_culprit(struct __test_metadata *_metadata,
				const char *report, unsigned long long dma,
				unsigned long pfn, const char *why, const char *also)
{
	char want[320];

	if (!pd_iommu_walks()) {
		expect_iommu_not_known(_metadata, report);
		return 0;
	}
	EXPECT_EQ(1, summary_iommu_count(report)) TH_LOG("%s", report);
	snprintf(want, sizeof(want), " iova %#llx maps pfn %#lx writable, %s", dma, pfn, why);
	expect_dma_culprit(_metadata, report, want, also);
	return 1;
}

/*
 * The DMA use-after-free: map a new page through the mapper, let go of it
 * with its mapping kept, unmap it here: the page is free, and still mapped
 * for DMA.  The page is freed on one CPU, where it waits on that CPU's free
 * list, and asked about from the other, whose allocations (the query's
 * own) do not take it.  Something may still take it, then or during the
 * query's re-checks, and let it go again (the free list drained to the
 * buddy allocator, a short-lived allocation): the query then rightly
 * believes nothing, and the test starts again with a new page.  A query
 * that never calls the free, stale-mapped page a mismatch fails.  The
 * mapper is @fd.  The page's PFN, its DMA address and the summary go to
 * @pfn, @dma and @s, the report to @report.
 */
static void free_while_mapped(struct __test_metadata *_metadata, int fd,
			      char *report, unsigned long long *dma,
			      unsigned long *pfn, struct pd_summary *s)
{
	int tries;

	for (tries = 0; tries < 8; tries++) {
		char *page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, page);
		memset(page, 0x5a, pd_page_size());
		pd_stay_on_cpu(0);
		ASSERT_EQ(0, mapper(fd, "map %p", page));
		ASSERT_TRUE(mapping_of(fd, dma, pfn));
		ASSERT_EQ(0, mapper(fd, "leak", NULL));
		drain_lru_batches_here();
		munmap(page, pd_page_size());
		pd_stay_on_cpu(1);
		ASSERT_EQ(0, pd_phys(*pfn, report, PD_REPORT_SIZE));
		ASSERT_EQ(0, pd_parse_summary(report, s));
		if (s->refcount == 0 && !strcmp(s->verdict, "mismatch"))
			return;
		TH_LOG("try %d: the freed page was %s, verdict %s: again", tries,
		       s->refcount ? "taken" : "taken and let go meanwhile", s->verdict);
		ASSERT_EQ(0, mapper(fd, "unmap", NULL));
	}
	ASSERT_STREQ("mismatch", s->verdict)
		TH_LOG("a free page still mapped for DMA, never a mismatch in %d tries: %s",
		       tries, report);
}

/*
 * The page at @pfn, mapped at @dma and free, asked in a batch after the
 * next page: the chunk's one walk of the IOMMUs finds its leaf for it,
 * which its whole report names as the culprit, first in the report.  As in
 * free_while_mapped(), something may take the page and let it go during
 * the query: asked again then.  Taken and kept (by the kernel, whose
 * pages' owners the report cannot tell), it is no longer a free page.
 */
static void expect_batch_dma_culprit(struct __test_metadata *_metadata,
				     unsigned long long dma, unsigned long pfn)
{
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[64];
	unsigned long ps = pd_page_size();
	struct pd_batch_page p;
	int tries;

	ASSERT_NE(NULL, report);
	snprintf(input, sizeof(input), "%#lx %#lx", (pfn + 1) * ps, pfn * ps);
	for (tries = 0; tries < 8; tries++) {
		ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE));
		ASSERT_EQ(1, pd_batch_page(report, pfn, &p)) TH_LOG("%s", report);
		if (!strcmp(p.verdict, "mismatch") || p.refcount)
			break;
		TH_LOG("try %d: the page taken and let go meanwhile, verdict %s: again",
		       tries, p.verdict);
	}
	if (p.refcount && strcmp(p.verdict, "mismatch")) {
		TH_LOG("the page was taken (refcount %ld) before the batch asked",
		       p.refcount);
		goto out;
	}
	EXPECT_STREQ("mismatch", p.verdict) TH_LOG("%s", report);
	expect_iommu_culprit(_metadata, report, dma, pfn, "a free page",
			     "(page_detective_dma)");
out:
	free(report);
}

/*
 * The mapper's lines in @report: its IOMMU leaves and dma-debug's records
 * of its mappings.  Other devices may map the page once it is free again.
 */
static int mapper_lines(const char *report)
{
	return iommu_lines(report, "(page_detective_dma)", NULL, NULL, 0) +
	       report_lines(report, "dma-api: ", "(page_detective_dma)", NULL, NULL, 0);
}

/*
 * The DMA use-after-free on the free page: "mismatch", the culprit the
 * IOMMU's mapping, with the driver's DMA address, and dma-debug's record
 * of it.  Undone, the page is not mapped.
 */
TEST_F(iommu, free_page_still_mapped)
{
	unsigned long long dma = 0;
	unsigned long pfn = 0;
	struct pd_summary s = {};
	int culprits;

	if (iommu_pagealloc_on())
		SKIP(return, "iommu.debug_pagealloc warns when a page still mapped is freed");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: the query would take the freed page");
	free_while_mapped(_metadata, self->dma, self->report, &dma, &pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	culprits = expect_iommu_culprit(_metadata, self->report, dma, pfn, "a free page",
					"(page_detective_dma)");
	culprits += expect_dma_api_culprit(_metadata, self->report, self->bdf, dma, pfn,
					      "a free page: a DMA mapping that outlived its page");
	EXPECT_EQ(culprits, s.culprits) TH_LOG("%s", self->report);
	expect_both_dma_sources(_metadata, self->report, culprits);
	expect_batch_dma_culprit(_metadata, dma, pfn);

	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	ASSERT_EQ(0, pd_phys(pfn, self->report, PD_REPORT_SIZE));
	EXPECT_EQ(0, mapper_lines(self->report)) TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_STRNE("mismatch", s.verdict) TH_LOG("%s", self->report);
}

/*
 * Allocate pages here until this process owns @pfn again: the address of
 * the one it got, or NULL.  The folios' references in this CPU's LRU
 * batches are then let go, so that the page's are its mapping's alone.
 */
static char *reuse(unsigned long pfn, unsigned long pages)
{
	char *fresh = mmap(NULL, pages * pd_page_size(), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i;

	if (fresh == MAP_FAILED)
		return NULL;
	madvise(fresh, pages * pd_page_size(), MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++) {
		char *page = fresh + i * pd_page_size();

		*page = 1;
		if (pagemap_pfn(0, page) == pfn) {
			drain_lru_batches_here();
			return page;
		}
	}
	return NULL;
}

/*
 * The DMA use-after-free once the page has a new owner: the driver let go
 * of it and kept its mapping, and the page now backs this process's
 * memory, which nobody holds for DMA (no pin, no reference beyond its
 * mapping): "mismatch", the culprit the mapping, with the driver's DMA
 * address.  Undone, the page is ok.
 */
TEST_F(iommu, reused_page_still_mapped)
{
	unsigned long long dma = 0;
	unsigned long pfn = 0;
	struct pd_summary s;
	char *fresh = NULL;
	int tries, culprits;

	if (iommu_pagealloc_on())
		SKIP(return, "iommu.debug_pagealloc warns when a page still mapped is freed");
	pd_stay_on_cpu(0);
	for (tries = 0; tries < 8 && !fresh; tries++) {
		char *page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, page);
		memset(page, 0x6b, pd_page_size());
		ASSERT_EQ(0, mapper(self->dma, "map %p", page));
		ASSERT_TRUE(mapping_of(self->dma, &dma, &pfn));
		ASSERT_EQ(0, mapper(self->dma, "leak", NULL));
		drain_lru_batches_here();
		munmap(page, pd_page_size());
		fresh = reuse(pfn, 64);
		/* Someone else got it: undo, and try again. */
		if (!fresh)
			ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	}
	ASSERT_NE(NULL, fresh) TH_LOG("the freed page was never reused here");

	ASSERT_EQ(0, pd_virt(getpid(), fresh, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pfn, s.pfn);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	culprits = expect_iommu_culprit(_metadata, self->report, dma, pfn, "a page whose",
					"nobody holds it for DMA");
	culprits += expect_dma_api_culprit(_metadata, self->report, self->bdf, dma, pfn,
					      "a page whose references are all its mappings' and caches'");
	EXPECT_EQ(culprits, s.culprits) TH_LOG("%s", self->report);
	expect_both_dma_sources(_metadata, self->report, culprits);

	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	ASSERT_EQ(0, pd_virt(getpid(), fresh, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(0, summary_iommu_count(self->report)) TH_LOG("%s", self->report);
	EXPECT_EQ(0, report_lines(self->report, "dma-api: ", NULL, NULL, NULL, 0))
		TH_LOG("%s", self->report);
}

/*
 * Map and unmap @page through the mapper, over and over, until killed: a
 * driver's map/unmap storm on the domain the queries walk.
 */
static void storm(char *page)
{
	int fd = open(PD_DMA_FILE, O_RDWR);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fd < 0)
		_exit(1);
	for (;;) {
		if (mapper(fd, "map %p", page) || mapper(fd, "unmap", NULL))
			_exit(2);
	}
}

/* What queries beside a storm saw. */
struct beside_storm {
	int queries, mapped, mismatches;
};

/*
 * Until the stress time is up, ask about the page that process @storm maps
 * and unmaps in a loop (virt of @addr in it, or phys of @pfn if @addr is
 * NULL): as many of the mapper's "iommu:" lines as the summary counts, one
 * mapping at a time but the walk not atomic, each whole (a single page: a
 * 4K leaf of its PFN; a range may take larger leaves).  Then stop the
 * storm, which must have run all along.
 */
static void ask_beside_storm(struct __test_metadata *_metadata, char *report,
			     pid_t storm, char *addr, unsigned long pfn,
			     struct beside_storm *b)
{
	time_t end = time(NULL) + pd_stress_count(8);
	struct pd_summary s;
	char want[64];
	int status;

	while (time(NULL) < end) {
		long n, whole;

		if (addr ? pd_virt(storm, addr, report, PD_REPORT_SIZE) :
			   pd_phys(pfn, report, PD_REPORT_SIZE))
			continue;
		ASSERT_EQ(0, pd_parse_summary(report, &s));
		n = summary_iommu_count(report);
		ASSERT_LE(0, n) TH_LOG("%s", report);
		snprintf(want, sizeof(want), " pfn %#lx 4K ", s.pfn);
		whole = iommu_lines(report, addr ? want : NULL, "(page_detective_dma)", NULL, 0);
		ASSERT_EQ(n, whole) TH_LOG("%s", report);
		b->mapped += !!n;
		b->queries++;
		if (!strcmp(s.verdict, "mismatch")) {
			b->mismatches++;
			TH_LOG("%s", report);
		}
	}
	ASSERT_EQ(0, waitpid(storm, &status, WNOHANG)) TH_LOG("the storm stopped");
	kill(storm, SIGKILL);
	waitpid(storm, &status, 0);
}

/*
 * Queries walk the domain while another process maps and unmaps its page
 * in a loop, which the IOMMU core does not stop for them: a mapped page is
 * pinned, so that no verdict may be "mismatch"; a report may see the
 * mapping at no IOVA, one, or, since the walk is not atomic and a lazy
 * domain maps each time at a new IOVA, more, but each one whole: the
 * page's PFN, by the mapper's device (the kernel log is checked for
 * splats: KASAN and lockdep on the debug kernel).
 */
TEST_F(iommu, map_unmap_storm)
{
	struct beside_storm b = {};
	pid_t child;

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		storm(self->page);
	ask_beside_storm(_metadata, self->report, child, self->page, 0, &b);
	pd_info("figures: %d queries beside a map/unmap storm: %d mapped, %d mismatch\n",
		b.queries, b.mapped, b.mismatches);
	EXPECT_LT(0, b.queries);
	EXPECT_EQ(0, b.mismatches);
}

/*
 * /proc/vmstat's nr_iommu_pages: the IOMMUs' table pages; -1 if not there.
 * The CPUs' pending differences are folded in first (vm.stat_refresh),
 * without which a table page's coming and going may not show.
 */
static long iommu_table_pages(void)
{
	char name[64];
	long n = -1, v;
	FILE *f;

	if (pd_write_file("/proc/sys/vm/stat_refresh", "1"))
		return -1;
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (n < 0 && fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, "nr_iommu_pages"))
			n = v;
	fclose(f);
	return n;
}

/* nr_iommu_pages once down to @want, or after 2 s: what it is then. */
static long iommu_table_pages_down_to(long want)
{
	long n = iommu_table_pages();
	int i;

	for (i = 0; i < 200 && n > want; i++) {
		usleep(10000);
		n = iommu_table_pages();
	}
	return n;
}

/* 2 MiB of 4 KiB pages: a last-level table's whole span. */
#define RANGE_PAGES	512

/* Map @buf's RANGE_PAGES pages as one range and unmap it, until killed. */
static void range_storm(char *buf)
{
	int fd = open(PD_DMA_FILE, O_RDWR);
	char cmd[64];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fd < 0)
		_exit(1);
	snprintf(cmd, sizeof(cmd), "map-range %p %d", buf, RANGE_PAGES);
	for (;;) {
		if (write(fd, cmd, strlen(cmd)) < 0 || mapper(fd, "unmap", NULL))
			_exit(2);
	}
}

/*
 * Whole IOMMU tables freed while queries walk them.  2 MiB mapped as one
 * range (a scatter-gather list, at one size-aligned IOVA range: a
 * last-level table of its own) and unmapped whole frees that table's page,
 * after an RCU grace period (iommu_put_pages_list()).  Once: the page
 * asked about in one leaf of the mapper's (4K on VT-d; AMD v1 maps runs of
 * contiguous pages in larger leaves), and /proc/vmstat's nr_iommu_pages lower after the
 * unmap than with the mapping (whether the range's table was new, or one
 * that earlier mappings left), so that the storm does free tables.  The
 * pages are shared memory, so that the storm's process maps the very
 * pages asked about.  Then it maps and unmaps the range in a loop while
 * queries walk
 * the domain: no "mismatch", each report's lines of the page whole, and
 * the kernel log clean (KASAN on the debug kernel: no walk reads a freed
 * table page).
 */
TEST_F(iommu, range_storm_frees_tables)
{
	size_t size = RANGE_PAGES * pd_page_size();
	struct beside_storm b = {};
	long during, after;
	unsigned long long dma;
	unsigned long pfn, first;
	char cmd[64];
	pid_t child;
	char *buf;

	if (!pd_iommu_walks())
		SKIP(return, "this kernel's IOMMU core cannot describe its tables (6.12)");
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	madvise(buf, size, MADV_NOHUGEPAGE);
	memset(buf, 0x7e, size);
	snprintf(cmd, sizeof(cmd), "map-range %p %d", buf, RANGE_PAGES);
	ASSERT_LT(0, write(self->dma, cmd, strlen(cmd)));
	during = iommu_table_pages();
	ASSERT_LE(0, during) TH_LOG("no nr_iommu_pages in /proc/vmstat");
	ASSERT_TRUE(mapping_of(self->dma, &dma, &first));
	/* The long-term pin may have moved the pages: ask after it. */
	pfn = pagemap_pfn(0, buf + 100 * pd_page_size());
	ASSERT_EQ(first, pagemap_pfn(0, buf));
	ASSERT_EQ(0, pd_phys(pfn, self->report, PD_REPORT_SIZE));
	EXPECT_EQ(1, iommu_lines(self->report, "(page_detective_dma)", NULL, NULL, 0))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	after = iommu_table_pages_down_to(during - 1);
	EXPECT_GT(during, after) TH_LOG("the table page of the range at %#llx was not freed", dma);

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		range_storm(buf);
	ask_beside_storm(_metadata, self->report, child, NULL, pfn, &b);
	pd_info("figures: %d queries beside a 2 MiB map-range/unmap storm: %d mapped, %d mismatch; IOMMU table pages %ld mapped, %ld unmapped\n",
		b.queries, b.mapped, b.mismatches, during, after);
	EXPECT_LT(0, b.queries);
	EXPECT_EQ(0, b.mismatches);
	munmap(buf, size);
}

/* The IOMMU groups whose type sysfs says is @type. */
static int groups_of_type(const char *type)
{
	DIR *dir = opendir("/sys/kernel/iommu_groups");
	char path[512], buf[32];
	struct dirent *d;
	int n = 0;

	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%s/type",
			 d->d_name);
		pd_read_line(path, buf, sizeof(buf));
		n += !strcmp(buf, type);
	}
	closedir(dir);
	return n;
}

/* Set the type of @bdf's group, which no driver may hold; 0 or -errno. */
static int set_group_type(const char *bdf, const char *type)
{
	char path[512];

	snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/iommu_group/type", bdf);
	return pd_write_file(path, type);
}

/*
 * A group in an identity domain reaches all memory: the report says so
 * once, with as many groups as sysfs says are identity, naming edu's (its
 * driver unbound, its group switched to identity through sysfs, as an
 * administrator does for a device that wants no translation), and not
 * once it is translated again.
 */
TEST_F(iommu, identity_domain_counted_once)
{
	char want[320];
	int n;

	if (!pd_iommu_walks())
		SKIP(return, "this kernel's IOMMU core cannot describe its tables (6.12)");
	ASSERT_EQ(0, pd_write_file("/sys/bus/pci/drivers/page_detective_dma/unbind",
				   self->bdf));
	ASSERT_EQ(0, set_group_type(self->bdf, "identity"));
	n = groups_of_type("identity");
	ASSERT_LE(1, n);
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	snprintf(want, sizeof(want),
		 "iommu: %d groups in identity domains, whose DMA reaches all memory, this page included (first: ",
		 n);
	EXPECT_TRUE(pd_has_line(self->report, "iommu: ", want)) TH_LOG("%s", self->report);
	if (n == 1) {
		snprintf(want, sizeof(want), "(first: %s (no driver))", self->bdf);
		EXPECT_TRUE(pd_has_line(self->report, "iommu: ", want))
			TH_LOG("%s", self->report);
	}

	ASSERT_EQ(0, set_group_type(self->bdf, "auto"));
	EXPECT_EQ(n - 1, groups_of_type("identity"));
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	if (n == 1) {
		EXPECT_FALSE(pd_has_line(self->report, "iommu: ", "identity domains"))
			TH_LOG("%s", self->report);
	}
	ASSERT_EQ(0, pd_bind_dma_mapper(self->bdf));
}

/*
 * Put @bdf's group in a domain of @type, the mapper's file @dma closed (which
 * undoes its mappings, as the driver must have none when unbound), the
 * mapper unbound, then bound again; 0 or -errno.
 */
static int remap_in_domain(int *dma, const char *bdf, const char *type)
{
	int ret;

	close(*dma);
	*dma = -1;
	ret = pd_write_file("/sys/bus/pci/drivers/page_detective_dma/unbind", bdf);
	if (!ret)
		ret = set_group_type(bdf, type);
	return ret ?: pd_bind_dma_mapper(bdf);
}

/*
 * Without the IOMMU's translation (edu's group in an identity domain), the
 * DMA API maps directly: no IOMMU table has the mapping, dma-debug's record
 * alone does.  A mapped page: its "dma-api:" line, at the DMA address the
 * driver got, which is the page's physical address (x86 has no DMA
 * offset); no "iommu: group" line; ok.  Let go of with its mapping kept,
 * and freed: "mismatch", the culprit dma-debug's record, naming the mapper
 * in the stack that made it.
 */
TEST_F(iommu, dma_api_direct_use_after_free)
{
	unsigned long long dma = 0;
	unsigned long pfn = 0;
	struct pd_summary s = {};

	if (!dma_debug_recording())
		SKIP(return, "dma-debug does not record here (CONFIG_DMA_API_DEBUG)");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: the query would take the freed page");
	ASSERT_EQ(0, remap_in_domain(&self->dma, self->bdf, "identity"));
	self->dma = open(PD_DMA_FILE, O_RDWR);
	ASSERT_LE(0, self->dma);

	ASSERT_EQ(0, mapper(self->dma, "map %p", self->page));
	ASSERT_TRUE(mapping_of(self->dma, &dma, &pfn));
	EXPECT_EQ((unsigned long long)pfn * pd_page_size(), dma);
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pfn, s.pfn);
	EXPECT_EQ(0, iommu_lines(self->report, NULL, NULL, NULL, 0)) TH_LOG("%s", self->report);
	expect_dma_api_line(_metadata, self->report, self->bdf, dma, pfn);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));

	free_while_mapped(_metadata, self->dma, self->report, &dma, &pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(0, summary_iommu_count(self->report)) TH_LOG("%s", self->report);
	EXPECT_EQ(1, expect_dma_api_culprit(_metadata, self->report, self->bdf, dma, pfn,
					    "a free page: a DMA mapping that outlived its page"));
	EXPECT_EQ(1, s.culprits) TH_LOG("%s", self->report);
	ASSERT_EQ(0, mapper(self->dma, "unmap", NULL));
	ASSERT_EQ(0, pd_phys(pfn, self->report, PD_REPORT_SIZE));
	EXPECT_EQ(0, mapper_lines(self->report)) TH_LOG("%s", self->report);

	ASSERT_EQ(0, remap_in_domain(&self->dma, self->bdf, "auto"));
}

/*
 * iommufd (/dev/iommu) and an IOAS with its mock domain attached to a mock
 * device (CONFIG_IOMMUFD_TEST), as tools/testing/selftests/iommu has them:
 * a domain that user space fills, on any machine.
 */
FIXTURE(iommufd)
{
	char *report;
	int fd;
	__u32 ioas, hwpt;
	char *page;
};

FIXTURE_SETUP(iommufd)
{
	struct iommu_ioas_alloc alloc = { .size = sizeof(alloc) };
	struct iommu_test_cmd mock = {
		.size = sizeof(mock),
		.op = IOMMU_TEST_OP_MOCK_DOMAIN,
	};

	self->report = malloc(PD_REPORT_SIZE);
	ASSERT_NE(NULL, self->report);
	self->page = NULL;
	self->fd = -1;
	if (access(PD_DIR "/phys", F_OK))
		SKIP(return, "no Page Detective");
	self->fd = open("/dev/iommu", O_RDWR);
	if (self->fd < 0)
		SKIP(return, "no iommufd (CONFIG_IOMMUFD)");
	ASSERT_EQ(0, ioctl(self->fd, IOMMU_IOAS_ALLOC, &alloc));
	self->ioas = alloc.out_ioas_id;
	mock.id = self->ioas;
	if (ioctl(self->fd, IOMMU_TEST_CMD, &mock))
		SKIP(return, "no iommufd mock domain (CONFIG_IOMMUFD_TEST): %s",
		     strerror(errno));
	self->hwpt = mock.mock_domain.out_hwpt_id;
	self->page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	memset(self->page, 0x4d, pd_page_size());
}

FIXTURE_TEARDOWN(iommufd)
{
	/* Closing iommufd destroys the IOAS, the mock device and its domain. */
	if (self->fd >= 0)
		close(self->fd);
	if (self->page)
		munmap(self->page, pd_page_size());
	free(self->report);
}

/*
 * The smallest page of the IOAS's domains, in which iommu.debug_pagealloc
 * counts their mappings: IOMMU_IOAS_IOVA_RANGES's alignment (the mock
 * domain's pages are 2K); 0 if unknown.
 */
static unsigned long ioas_iova_alignment(int fd, __u32 ioas)
{
	struct iommu_iova_range ranges[16];
	struct iommu_ioas_iova_ranges cmd = {
		.size = sizeof(cmd),
		.ioas_id = ioas,
		.num_iovas = 16,
		.allowed_iovas = (uintptr_t)ranges,
	};

	return ioctl(fd, IOMMU_IOAS_IOVA_RANGES, &cmd) ? 0 : cmd.out_iova_alignment;
}

/*
 * A user buffer that IOMMU_IOAS_MAP maps into the IOAS: the mock domain's
 * own check (IOMMU_TEST_OP_MD_CHECK_MAP) says the IOVA iommufd chose maps
 * it.  The report has the domain's leaf of the page's PFN at that IOVA, in
 * an iommufd domain, writable; iommufd's long-term pin in the "pins:"
 * line; the verdict ok; where iommu.debug_pagealloc counts, one mapping per
 * domain page in the CPU's page, as the leaf counts.  Unmapped, the lines
 * and the pin go.  On 6.12, the pin, and the IOMMU mappings not known.
 */
TEST_F(iommufd, ioas_map_on_mock_domain)
{
	struct iommu_ioas_map map = {
		.size = sizeof(map),
		.flags = IOMMU_IOAS_MAP_WRITEABLE | IOMMU_IOAS_MAP_READABLE,
		.ioas_id = self->ioas,
		.user_va = (uintptr_t)self->page,
		.length = pd_page_size(),
	};
	struct iommu_test_cmd check = {
		.size = sizeof(check),
		.op = IOMMU_TEST_OP_MD_CHECK_MAP,
		.id = self->hwpt,
	};
	struct iommu_ioas_unmap unmap = {
		.size = sizeof(unmap),
		.ioas_id = self->ioas,
		.length = pd_page_size(),
	};
	struct pd_summary s;
	char want[128], line[1024];
	unsigned long pfn;
	long leaves;

	ASSERT_EQ(0, ioctl(self->fd, IOMMU_IOAS_MAP, &map));
	check.check_map.iova = map.iova;
	check.check_map.length = pd_page_size();
	check.check_map.uptr = (uintptr_t)self->page;
	ASSERT_EQ(0, ioctl(self->fd, IOMMU_TEST_CMD, &check));
	pfn = pagemap_pfn(0, self->page);
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pfn, s.pfn);
	EXPECT_TRUE(pd_has_line(self->report, "pins: ", "pins: 1 "))
		TH_LOG("%s", self->report);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	if (!pd_iommu_walks()) {
		expect_iommu_not_known(_metadata, self->report);
		return;
	}
	leaves = summary_iommu_count(self->report);
	EXPECT_LE(1, leaves) TH_LOG("%s", self->report);
	EXPECT_EQ(leaves, iommu_lines(self->report, NULL, "(iommufd)", NULL, 0))
		TH_LOG("%s", self->report);
	snprintf(want, sizeof(want), " iova %#llx pfn %#lx ",
		 (unsigned long long)map.iova, pfn);
	iommu_lines(self->report, want, "(iommufd)", line, sizeof(line));
	ASSERT_NE(0, line[0]) TH_LOG("no line of iova %#llx:\n%s",
				     (unsigned long long)map.iova, self->report);
	EXPECT_NE(NULL, strstr(line, " writable")) TH_LOG("%s", line);
	if (iommu_pagealloc_on()) {
		unsigned long unit = ioas_iova_alignment(self->fd, self->ioas);
		int chunks = unit ? pd_page_size() / unit : 0;

		ASSERT_NE(0, chunks) TH_LOG("IOVA alignment %lu", unit);
		EXPECT_TRUE(counted_line(self->report, chunks, chunks)) TH_LOG("%s", self->report);
	}

	unmap.iova = map.iova;
	ASSERT_EQ(0, ioctl(self->fd, IOMMU_IOAS_UNMAP, &unmap));
	ASSERT_EQ(0, pd_virt(getpid(), self->page, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(0, iommu_lines(self->report, NULL, "(iommufd)", NULL, 0))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "pins: ", "pins: none"))
		TH_LOG("%s", self->report);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
}

TEST_HARNESS_MAIN
