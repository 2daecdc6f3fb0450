// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective on pages that really are corrupted: each case corrupts a
 * page of its own with the test-only injector (CONFIG_PAGE_DETECTIVE_INJECT,
 * <debugfs>/page_detective_inject/corrupt) the way real bugs do, by raw
 * page-table writes that keep the rmap, the mapcount and the refcount out
 * of step, asks Page Detective about it, checks that the verdict is
 * "mismatch" and that the report names the culprit, and undoes the
 * corruption before it unmaps anything.  A page that is only busy, its
 * lock held, must not be called corrupted.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>

#include "pd_util.h"
#include "../kselftest_harness.h"

FIXTURE(corrupt)
{
	char *report;
	unsigned long page_size;
};

FIXTURE_SETUP(corrupt)
{
	const char *why;
	bool fail;

	self->page_size = pd_page_size();
	self->report = malloc(PD_REPORT_SIZE);
	ASSERT_NE(NULL, self->report);
	why = pd_missing(&fail);
	if (fail)
		ASSERT_EQ(0, 1) TH_LOG("%s", why);
	if (why[0])
		SKIP(return, "%s", why);
	why = pd_inject_missing(&fail);
	if (fail)
		ASSERT_EQ(0, 1) TH_LOG("%s", why);
	if (why[0])
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(corrupt)
{
	/* Whatever a failed case left corrupted: nothing, as a rule. */
	pd_inject("undo");
	free(self->report);
}

/* @pages populated private anonymous pages, all in one PMD range. */
static char *map_pages(unsigned long pages)
{
	unsigned long size = pages * pd_page_size();
	char *p = pd_mmap_in_pmd(size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (!p)
		return NULL;
	madvise(p, size, MADV_NOHUGEPAGE);
	memset(p, 0x5c, size);
	return p;
}

/* The report's "culprit:" line of @pid at @addr, or NULL. */
static const char *find_culprit(const char *report, pid_t pid, const void *addr)
{
	static char line[1024];
	char want[96];
	const char *p;

	snprintf(want, sizeof(want), "culprit: pid %d (", pid);
	for (p = strstr(report, want); p; p = strstr(p + 1, want)) {
		unsigned long at;
		const char *q = strstr(p, ") 0x");

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (q && sscanf(q + 2, "%lx", &at) == 1 && at == (unsigned long)addr)
			return line;
	}
	return NULL;
}

/* Whether @report has a line @prefix of @pid with @needle in it. */
static bool has_pid_line(const char *report, const char *prefix, pid_t pid,
			 const char *needle)
{
	char want[96];

	snprintf(want, sizeof(want), "%spid %d (", prefix, pid);
	return pd_has_line(report, want, needle);
}

/* Ask phys about @pfn; the summary, and that the query answered. */
static void ask(struct __test_metadata *_metadata, char *report,
		unsigned long pfn, struct pd_summary *s)
{
	ASSERT_EQ(0, pd_phys(pfn, report, PD_REPORT_SIZE)) TH_LOG("%s", report);
	ASSERT_EQ(0, pd_parse_summary(report, s)) TH_LOG("%s", report);
}

/* After the undo, the page is healthy again, and said to be. */
static void expect_healed(struct __test_metadata *_metadata, char *report,
			  unsigned long pfn)
{
	struct pd_summary s;

	ASSERT_EQ(0, pd_inject("undo"));
	ask(_metadata, report, pfn, &s);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", report);
	EXPECT_EQ(0, s.culprits);
}

/*
 * 1. A stray PTE: the page mapped at a second address of the process's own
 * page tables, unknown to the rmap and uncounted by the mapcount.
 */
TEST_F(corrupt, stray_pte)
{
	char *p = map_pages(4);
	struct pd_summary s;
	const char *line;
	unsigned long pfn;

	ASSERT_NE(NULL, p);
	pfn = pagemap_pfn(0, p);
	ASSERT_EQ(0, madvise(p + 2 * self->page_size, self->page_size,
			     MADV_DONTNEED));
	ASSERT_EQ(0, pd_inject("stray %p %p", p, p + 2 * self->page_size));
	ASSERT_EQ(pfn, pagemap_pfn(0, p + 2 * self->page_size));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.mapcount);
	EXPECT_EQ(1, s.culprits);
	line = find_culprit(self->report, getpid(), p + 2 * self->page_size);
	ASSERT_NE(NULL, line) TH_LOG("%s", self->report);
	EXPECT_NE(NULL, strstr(line, "(unknown to rmap)")) TH_LOG("%s", line);
	/* The legitimate mapping is not blamed. */
	EXPECT_EQ(NULL, find_culprit(self->report, getpid(), p));
	/* Asked by virtual address, the same. */
	ASSERT_EQ(0, pd_virt(getpid(), p, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);

	expect_healed(_metadata, self->report, pfn);
	munmap(p, 4 * self->page_size);
}

/*
 * 1b. A stray PTE of a page of a large folio that arm64 maps with one
 * contiguous block (contpte: 64 KiB, 2 MiB on larger pages): ptep_get() of
 * any entry of the block folds the whole block's accessed and dirty bits
 * into it, yet each entry maps its own page once.  The page mapped twice,
 * the stray outside the block: "mismatch", the stray named and none of the
 * block's entries.
 */
TEST_F(corrupt, stray_pte_of_contpte_block)
{
	unsigned long size = pd_mthp_block_size(), ps = self->page_size, pfn, i;
	char *folio = pd_mmap_in_pmd(2 * size, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *src, *dst;
	struct pd_summary s;
	const char *line;
	int ret;

	ASSERT_NE(NULL, folio);
	ret = pd_fault_mthp_block(folio);
	if (pd_mthp_block_skip(ret))
		SKIP(goto out, "%s", pd_mthp_block_skip(ret));
	ASSERT_EQ(0, ret);
	/* A page inside the block, and a none entry in its PTE table. */
	src = folio + 5 * ps;
	dst = folio + size + 2 * ps;
	pfn = pagemap_pfn(0, src);
	ASSERT_EQ(0, pd_inject("stray %p %p", src, dst));
	ASSERT_EQ(pfn, pagemap_pfn(0, dst));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.culprits) TH_LOG("%s", self->report);
	line = find_culprit(self->report, getpid(), dst);
	ASSERT_NE(NULL, line) TH_LOG("%s", self->report);
	EXPECT_NE(NULL, strstr(line, "(unknown to rmap)")) TH_LOG("%s", line);
	for (i = 0; i < size / ps; i++)
		EXPECT_EQ(NULL, find_culprit(self->report, getpid(), folio + i * ps))
			TH_LOG("page %lu of the block blamed: %s", i, self->report);
	ASSERT_EQ(0, pd_virt(getpid(), src, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);

	expect_healed(_metadata, self->report, pfn);
	EXPECT_EQ(0, pagemap_pfn(0, dst));
out:
	munmap(folio, 2 * size);
}

/*
 * 2. A lost PTE: the mapping cleared while the mapcount and the rmap still
 * count it (the injector leaves a poison marker, so that a touch cannot map
 * a new page over it).  The report says where the rmap expects the page and
 * what the entry holds instead; but nothing there proves that the mapping
 * was lost at that place rather than the mapcount leaked (the rmap visits
 * every VMA that could map the page, a child that broke COW there, a
 * process that never faulted it): a place looked at, not a culprit, and a
 * partial verdict that says so.
 */
TEST_F(corrupt, lost_pte)
{
	char *p = map_pages(2);
	struct pd_summary s;
	unsigned long pfn;
	char want[96];

	ASSERT_NE(NULL, p);
	pfn = pagemap_pfn(0, p);

	ASSERT_EQ(0, pd_inject("lost %p", p));
	ASSERT_EQ(0, pagemap_pfn(0, p));
	ASSERT_EQ(1, kpage_read("kpagecount", pfn));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("partial", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.mapcount);
	EXPECT_EQ(0, s.user_mappings);
	EXPECT_EQ(0, s.culprits);
	EXPECT_EQ(NULL, find_culprit(self->report, getpid(), p));
	snprintf(want, sizeof(want), "%p pte (expected by the reverse map, holds a marker)", p);
	EXPECT_TRUE(has_pid_line(self->report, "looked at: ", getpid(), want))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "note: mapcount 1, mappings found 0",
				"nothing shows which of the places looked at lost a mapping"))
		TH_LOG("%s", self->report);

	expect_healed(_metadata, self->report, pfn);
	munmap(p, 2 * self->page_size);
}

/*
 * Both in one batch, among healthy pages: a list of six pages of which one
 * has a stray PTE and one a lost one.  Each page gets its own verdict, the
 * stray one "mismatch" naming its culprit, the lost one "partial", the
 * others "ok"; the two that are not ok are reported in full.
 */
TEST_F(corrupt, batch_stray_and_lost)
{
	char *p = map_pages(8), *report = malloc(PD_BATCH_REPORT_SIZE);
	unsigned long pfns[6];
	struct pd_batch_totals t;
	struct pd_batch_page b;
	char input[512];
	size_t len = 0;
	int i;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, report);
	for (i = 0; i < 6; i++) {
		pfns[i] = pagemap_pfn(0, p + i * self->page_size);
		ASSERT_NE(0, pfns[i]);
	}
	for (i = 0; i < 6; i++)
		len += snprintf(input + len, sizeof(input) - len, "%#lx ",
				pfns[(i + 3) % 6] * self->page_size);
	ASSERT_EQ(0, madvise(p + 7 * self->page_size, self->page_size,
			     MADV_DONTNEED));
	ASSERT_EQ(0, pd_inject("stray %p %p", p + self->page_size,
			       p + 7 * self->page_size));
	ASSERT_EQ(0, pd_inject("lost %p", p + 4 * self->page_size));

	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	ASSERT_EQ(0, pd_parse_batch(report, &t)) TH_LOG("%s", report);
	EXPECT_EQ(6, t.pages);
	EXPECT_EQ(4, t.ok) TH_LOG("%s", report);
	EXPECT_EQ(1, t.mismatch);
	EXPECT_EQ(1, t.partial);
	EXPECT_EQ(2, t.reported);
	EXPECT_EQ(1, t.scans);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(1, pd_batch_page(report, pfns[i], &b)) TH_LOG("%s", report);
		EXPECT_STREQ(i == 1 ? "mismatch" : i == 4 ? "partial" : "ok",
			     b.verdict) TH_LOG("page %d: %s", i, report);
		EXPECT_EQ(i == 1, b.culprits);
		EXPECT_EQ(i == 1 ? 2 : i != 4, b.user_mappings);
	}
	/* The culprit, named in the stray page's report alone. */
	EXPECT_NE(NULL, find_culprit(report, getpid(), p + 7 * self->page_size))
		TH_LOG("%s", report);
	EXPECT_EQ(NULL, find_culprit(report, getpid(), p + self->page_size));
	EXPECT_EQ(NULL, find_culprit(report, getpid(), p + 4 * self->page_size));
	EXPECT_TRUE(has_pid_line(report, "looked at: ", getpid(), "holds a marker"))
		TH_LOG("%s", report);

	ASSERT_EQ(0, pd_inject("undo"));
	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_batch(report, &t)) TH_LOG("%s", report);
	EXPECT_EQ(6, t.ok) TH_LOG("%s", report);
	free(report);
	munmap(p, 8 * self->page_size);
}

/*
 * 3. A leaked mapcount: raised, mapped nowhere.  Nothing can say where the
 * extra mapping should be, so it is a note and a partial verdict, not a
 * mismatch.
 */
TEST_F(corrupt, leaked_mapcount)
{
	char *p = map_pages(1);
	struct pd_summary s;
	unsigned long pfn;

	ASSERT_NE(NULL, p);
	pfn = pagemap_pfn(0, p);
	ASSERT_EQ(0, pd_inject("mapcount %p", p));
	ASSERT_EQ(2, kpage_read("kpagecount", pfn));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("partial", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(2, s.mapcount);
	EXPECT_EQ(1, s.user_mappings);
	EXPECT_TRUE(pd_has_line(self->report, "note: mapcount 2, mappings found 1",
				"leaked mapcount")) TH_LOG("%s", self->report);

	expect_healed(_metadata, self->report, pfn);
	munmap(p, self->page_size);
}

/* The "other" references of the report's refcount line, or -1. */
static long other_refs(const char *report)
{
	struct pd_refs r;

	pd_parse_refs(report, &r);
	return r.other;
}

/*
 * 3. A leaked reference: a refcount that nothing accounts for.  Not a
 * mismatch (pins and references in flight look the same), but the report
 * shows it.
 */
TEST_F(corrupt, leaked_reference)
{
	char *p = map_pages(1);
	struct pd_summary s;
	unsigned long pfn;
	long before;

	ASSERT_NE(NULL, p);
	pfn = pagemap_pfn(0, p);
	ask(_metadata, self->report, pfn, &s);
	before = other_refs(self->report);
	ASSERT_LE(0, before) TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_inject("ref %p", p));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(before + 1, other_refs(self->report)) TH_LOG("%s", self->report);

	expect_healed(_metadata, self->report, pfn);
	munmap(p, self->page_size);
}

/*
 * Free the page at @old, by munmap() in this process, while a stale PTE
 * still maps it, then allocate until this process is its new owner; the
 * new address, or NULL.
 */
static char *free_and_reuse(char *old, unsigned long pfn, unsigned long pages)
{
	unsigned long i, size = pages * pd_page_size();
	char *fresh;

	fresh = mmap(NULL, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fresh == MAP_FAILED)
		return NULL;
	madvise(fresh, size, MADV_NOHUGEPAGE);
	/*
	 * MADV_COLD, here where there is no page to make cold, first moves
	 * the folios this CPU batched on their way to the LRU onto it.  A
	 * batch holds a reference: undrained, munmap() (7.2) could leave it
	 * the last one, and whoever drains the batch next would free the
	 * page, maybe a kworker for lru_add_drain_all(), which khugepaged
	 * calls at every scan.  No munmap() of a range of its own: that
	 * could undo the stale PTE, were the range in the PTE's PMD.
	 */
	madvise(fresh, size, MADV_COLD);
	munmap(old, pd_page_size());
	for (i = 0; i < pages; i++) {
		char *page = fresh + i * pd_page_size();

		*page = 1;
		if (pagemap_pfn(0, page) == pfn)
			return page;
	}
	return NULL;
}

/*
 * 4. A use-after-free: the page freed while a process still maps it (the
 * stray PTE holds no reference), then reused.  The report on the page in
 * its new life names the stale mapping; with page_owner, it also says who
 * freed it and who has it now.
 */
TEST_F(corrupt, use_after_free)
{
	char *p, *old, *fresh = NULL;
	bool page_owner = !access("/sys/kernel/debug/page_owner", F_OK);
	struct pd_summary s;
	const char *line;
	unsigned long pfn = 0;
	char want[96];
	int tries;

	/* The guests boot with page_owner=on where the kernel has it. */
	if (!page_owner)
		ASSERT_STREQ("", pd_kernel_config("PAGE_OWNER"))
			TH_LOG("CONFIG_PAGE_OWNER without page_owner=on");
	/* One CPU, so that a page freed is the next one it allocates. */
	pd_stay_on_cpu(sched_getcpu());
	/*
	 * The stale mapping, in a PTE table of its own PMD, beside a page, in
	 * a VMA that nothing can write: the injector refuses any other.
	 */
	p = pd_map_readonly_file("/tmp/pd_use_after_free");
	ASSERT_NE(NULL, p);
	for (tries = 0; tries < 8 && !fresh; tries++) {
		old = map_pages(1);
		ASSERT_NE(NULL, old);
		pfn = pagemap_pfn(0, old);
		ASSERT_EQ(0, pd_inject("stale %p %p", old, p));
		fresh = free_and_reuse(old, pfn, 64);
		/* Someone else got it: undo, and try again. */
		if (!fresh)
			ASSERT_EQ(0, pd_inject("undo"));
	}
	ASSERT_NE(NULL, fresh) TH_LOG("the freed page was never reused here");

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.mapcount);
	EXPECT_EQ(1, s.culprits);
	line = find_culprit(self->report, getpid(), p);
	ASSERT_NE(NULL, line) TH_LOG("%s", self->report);
	EXPECT_NE(NULL, strstr(line, "(unknown to rmap)")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, find_culprit(self->report, getpid(), fresh));
	if (page_owner) {
		/* Allocated by this process, freed by it, by munmap(). */
		snprintf(want, sizeof(want), "pid %d,", getpid());
		EXPECT_TRUE(pd_has_line(self->report, "page_owner: allocated;", want))
			TH_LOG("%s", self->report);
		snprintf(want, sizeof(want), "pid %d,", getpid());
		EXPECT_TRUE(pd_has_line(self->report, "page_owner: last freed:", want))
			TH_LOG("%s", self->report);
		EXPECT_TRUE(pd_has_line(self->report, "page_owner: freed:", "munmap"))
			TH_LOG("%s", self->report);
	}

	ASSERT_EQ(0, pd_inject("undo"));
	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	munmap(p, 2 * self->page_size);
	unlink("/tmp/pd_use_after_free");
	munmap(fresh, self->page_size);
}

/*
 * 5. A PTE outside every VMA, as page tables left behind by munmap() would
 * be: in a PTE table that a VMA still uses, so the scan reads it.
 */
TEST_F(corrupt, pte_outside_vma)
{
	char *p = map_pages(2);
	struct pd_summary s;
	const char *line;
	unsigned long pfn;

	ASSERT_NE(NULL, p);
	pfn = pagemap_pfn(0, p);
	ASSERT_EQ(0, munmap(p + self->page_size, self->page_size));
	ASSERT_EQ(0, pd_inject("stray %p %p", p, p + self->page_size));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.culprits);
	line = find_culprit(self->report, getpid(), p + self->page_size);
	ASSERT_NE(NULL, line) TH_LOG("%s", self->report);
	EXPECT_NE(NULL, strstr(line, "(unknown to rmap) (outside every VMA)"))
		TH_LOG("%s", line);

	expect_healed(_metadata, self->report, pfn);
	munmap(p, self->page_size);
}

static int stay(void *unused)
{
	return 0;
}

/*
 * 6. A large folio's per-mm mapcount (CONFIG_MM_ID) skewed: one of this
 * process's mappings counted against its child's mm instead.  The folio's
 * mapcount still matches the mappings found; only the per-mm counts tell,
 * which the verdict compares where it judges the folio whole
 * (CONFIG_NO_PAGE_MAPCOUNT).  The child keeps its mapping until the undo.
 */
TEST_F(corrupt, skewed_mm_id)
{
	unsigned long nr = pd_pmd_size() / self->page_size, pfn;
	struct pd_child child = { 0 };
	struct pd_summary s;
	void *area = NULL;
	char *thp, *page, want[96];

	if (!pd_no_page_mapcount())
		SKIP(return, "per-mm mapcounts are judged at folio level only: NO_PAGE_MAPCOUNT");
	thp = pd_map_thp(&area);
	if (!thp)
		SKIP(goto out, "could not get a PMD-mapped THP");
	ASSERT_EQ(0, pd_child_start(&child, stay, NULL));
	/* Here nr PTEs map the folio, as mprotect() split the PMD; there one PMD. */
	ASSERT_EQ(0, mprotect(thp + self->page_size, self->page_size, PROT_READ));
	page = thp + 2 * self->page_size;
	pfn = pagemap_pfn(0, page);

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
	snprintf(want, sizeof(want), ") %lu, mappings found there %lu", nr, nr);
	EXPECT_TRUE(has_pid_line(self->report, "per-mm mapcount: ", getpid(), want))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(has_pid_line(self->report, "per-mm mapcount: ", child.pid,
				 ") 1, mappings found there 1"))
		TH_LOG("%s", self->report);

	/*
	 * A per-mm count is a lower bound (see mm_id_lower_bound in
	 * page_detective_test): only the one over what its mm maps is proof.
	 */
	ASSERT_EQ(0, pd_inject("mm_id %p", page));
	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(1, s.culprits);
	snprintf(want, sizeof(want), "verdict: mismatch, folio mapcount %lu", nr + 1);
	EXPECT_TRUE(pd_has_line(self->report, want,
				"a per-mm mapcount (MM_ID) counts more than its mm maps"))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(has_pid_line(self->report, "culprit: ", child.pid,
				 "counts at least 2 mappings in this mm, 1 are"))
		TH_LOG("%s", self->report);
	EXPECT_FALSE(has_pid_line(self->report, "culprit: ", getpid(), ""))
		TH_LOG("%s", self->report);
	snprintf(want, sizeof(want), ") %lu, mappings found there %lu (a lower bound",
		 nr - 1, nr);
	EXPECT_TRUE(has_pid_line(self->report, "per-mm mapcount: ", getpid(), want))
		TH_LOG("%s", self->report);

	expect_healed(_metadata, self->report, pfn);
out:
	if (child.pid > 0)
		EXPECT_EQ(0, pd_child_end(&child));
	munmap(area, 2 * pd_pmd_size());
}

/* A file at a path of about @len bytes, newlines in it, its folders made. */
static int make_long_path(char *path, size_t len)
{
	size_t at;

	memcpy(path, "/tmp/pd_long", sizeof("/tmp/pd_long"));
	mkdir(path, 0700);
	for (at = strlen(path); at + 210 < len; at = strlen(path)) {
		snprintf(path + at, 210, "/%0190d\nsummary: x", 0);
		if (mkdir(path, 0700) && errno != EEXIST)
			return -1;
	}
	strcat(path, "/file");
	return 0;
}

/*
 * 7. Many culprits, each named with a long path (as a page freed while
 * hundreds of processes map it would have): their lines are capped, as
 * mapping lines are, and counted, and the summary still ends the report.
 */
TEST_F(corrupt, many_culprits_keep_the_summary)
{
	/* No more than one round of re-check re-reads (PD_REREAD_MAX). */
	unsigned long pfn, listed = 0, unlisted = 0, i, n = 60;
	char *p = map_pages(1), *win, *path = malloc(PATH_MAX), *end;
	const char *line, *last;
	struct pd_summary s;
	int fd;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, path);
	ASSERT_EQ(0, make_long_path(path, 1500));
	win = pd_map_file_pmd(path, 512, &fd);
	ASSERT_NE(NULL, win) TH_LOG("%s", strerror(errno));
	pfn = pagemap_pfn(0, p);
	/* The first read maps the first 16 pages: one PTE table for them all. */
	ASSERT_EQ(0, win[0]);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pd_inject("stray %p %p", p, win + (100 + i) * self->page_size));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("mismatch", s.verdict) TH_LOG("%.2000s", self->report);
	EXPECT_EQ(n, s.culprits);
	/* The last line is the summary, and only one line is. */
	end = self->report + strlen(self->report);
	ASSERT_EQ('\n', end[-1]);
	for (last = end - 1; last > self->report && last[-1] != '\n'; last--)
		;
	EXPECT_EQ(0, strncmp(last, "summary: ", 9)) TH_LOG("%s", last);
	for (line = self->report; *line; line += strcspn(line, "\n") + 1) {
		EXPECT_TRUE(line == last || strncmp(line, "summary: ", 9));
		listed += !strncmp(line, "culprit: pid ", 13);
		if (!strncmp(line, "culprit: ", 9))
			sscanf(line, "culprit: %lu more, not listed", &unlisted);
	}
	EXPECT_LT(0, listed);
	EXPECT_EQ(n, listed + unlisted) TH_LOG("%lu listed, %lu not", listed, unlisted);

	expect_healed(_metadata, self->report, pfn);
	munmap(win, 512 * self->page_size);
	close(fd);
	unlink(path);
	free(path);
	munmap(p, self->page_size);
}

/*
 * 8. Not a corruption: a busy page, its folio locked by someone else (the
 * injector holds the lock, as reclaim, migration or writeback would), so
 * that no walk of the reverse map can finish.  The scan still finds the
 * mapping, which an unfinished walk cannot confirm: partial, and no
 * culprit, never a mismatch.  With a stray PTE beside it, the same: what
 * cannot be checked is not blamed.
 */
TEST_F(corrupt, busy_page_is_partial)
{
	char *p = map_pages(4);
	struct pd_summary s;
	unsigned long pfn;

	ASSERT_NE(NULL, p);
	pfn = pagemap_pfn(0, p);
	ASSERT_EQ(0, pd_inject("lock %p", p));
	/* Locked already: the injector's own corruptions back off too. */
	ASSERT_EQ(-EBUSY, pd_inject("lock %p", p));

	ask(_metadata, self->report, pfn, &s);
	EXPECT_STREQ("partial", s.verdict) TH_LOG("%s", self->report);
	EXPECT_EQ(0, s.culprits);
	EXPECT_EQ(1, s.user_mappings);
	EXPECT_TRUE(pd_has_line(self->report, "rmap mappings: 0",
				"incomplete: its folio or its reverse map stayed locked"))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "verdict: partial",
				"the walk of the reverse map could not finish"))
		TH_LOG("%s", self->report);

	/* Healthy again once the lock is let go. */
	expect_healed(_metadata, self->report, pfn);
	munmap(p, 4 * self->page_size);
}

TEST_HARNESS_MAIN
