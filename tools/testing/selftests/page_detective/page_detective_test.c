// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective selftests: every value a report gives is checked against a
 * source Page Detective does not use.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "pd_util.h"
#include "../kselftest_harness.h"

FIXTURE(pd)
{
	char *report;
	unsigned long page_size;
};

FIXTURE_SETUP(pd)
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
}

FIXTURE_TEARDOWN(pd)
{
	free(self->report);
}

/* A private anonymous page of ours, populated, never a THP. */
static char *map_private_anon(unsigned long size)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_NOHUGEPAGE);
	memset(p, 0x5a, size);
	return p;
}

/* The report on our private anonymous page, by either route. */
static void check_private_anon(struct __test_metadata *_metadata,
			       const char *report, const char *page,
			       unsigned long pfn)
{
	struct pd_summary s;
	char needle[64];

	ASSERT_EQ(0, pd_parse_summary(report, &s)) TH_LOG("%s", report);
	EXPECT_EQ(pfn, s.pfn);
	EXPECT_EQ(kpage_read("kpagecount", pfn), s.mapcount);
	EXPECT_EQ(1, s.mapcount);
	EXPECT_EQ(1, s.user_mappings);
	EXPECT_EQ(1, s.processes);
	EXPECT_GE(s.refcount, 1);
	EXPECT_GE(s.kernel_mappings, 1);
	EXPECT_STREQ("ok", s.verdict);
	/* The one user mapping is ours, at our address. */
	snprintf(needle, sizeof(needle), "pid %d ", getpid());
	EXPECT_TRUE(pd_has_line(report, "user: ", needle));
	snprintf(needle, sizeof(needle), " %p pte", page);
	EXPECT_TRUE(pd_has_line(report, "user: ", needle)) TH_LOG("%s", report);
	/* The direct map, where the page is, is one of the kernel mappings. */
	EXPECT_TRUE(pd_has_line(report, "kernel: ", "direct map"));
	EXPECT_TRUE(pd_has_line(report, "anon flags: ", "")) TH_LOG("%s", report);
}

TEST_F(pd, virt_private_anon)
{
	char *page = map_private_anon(self->page_size);
	unsigned long pfn;

	ASSERT_NE(NULL, page);
	pfn = pagemap_pfn(0, page);
	ASSERT_NE(0, pfn);

	ASSERT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "leaf: ", "pte"));
	check_private_anon(_metadata, self->report, page, pfn);
	munmap(page, self->page_size);
}

TEST_F(pd, phys_private_anon)
{
	char *page = map_private_anon(self->page_size);
	unsigned long pfn;

	ASSERT_NE(NULL, page);
	pfn = pagemap_pfn(0, page);
	ASSERT_NE(0, pfn);

	ASSERT_EQ(0, pd_phys(pfn, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	check_private_anon(_metadata, self->report, page, pfn);
	munmap(page, self->page_size);
}

/* An address inside the page works as well as its start. */
TEST_F(pd, virt_unaligned_address)
{
	char *page = map_private_anon(self->page_size);
	struct pd_summary s;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, pd_virt(getpid(), page + 123, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pagemap_pfn(0, page), s.pfn);
	munmap(page, self->page_size);
}

/* Another descriptor, or `cat`, reads the file's latest report. */
TEST_F(pd, read_back_latest)
{
	char *page = map_private_anon(self->page_size);
	char *again = malloc(PD_REPORT_SIZE);
	int fd;

	ASSERT_NE(NULL, page);
	ASSERT_NE(NULL, again);
	ASSERT_EQ(0, pd_phys(pagemap_pfn(0, page), self->report, PD_REPORT_SIZE));
	fd = open(PD_DIR "/phys", O_RDONLY);
	ASSERT_GE(fd, 0);
	pd_read_all(fd, again, PD_REPORT_SIZE);
	close(fd);
	EXPECT_STREQ(self->report, again);
	free(again);
	munmap(page, self->page_size);
}

/* The report goes to the kernel log too, each line prefixed. */
TEST_F(pd, report_in_kernel_log)
{
	char *page = map_private_anon(self->page_size);
	char want[256], rec[1024], *summary;
	bool found = false;
	ssize_t n;
	int fd;

	ASSERT_NE(NULL, page);
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_GE(fd, 0);
	lseek(fd, 0, SEEK_END);

	ASSERT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	summary = strstr(self->report, "summary: ");
	ASSERT_NE(NULL, summary);
	snprintf(want, sizeof(want), "page_detective: %.*s",
		 (int)strcspn(summary, "\n"), summary);

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = '\0';
		rec[strcspn(rec, "\n")] = '\0';
		/* "prio,seq,time,flags;text" */
		if (strchr(rec, ';') && !strcmp(strchr(rec, ';') + 1, want))
			found = true;
	}
	close(fd);
	EXPECT_TRUE(found) TH_LOG("no \"%s\" in the kernel log", want);
	munmap(page, self->page_size);
}

/* Malformed input: -EINVAL, and an explanation instead of a report. */
TEST_F(pd, malformed_input)
{
	static const struct {
		const char *file, *input;
	} bad[] = {
		{ "phys", "" }, { "phys", "\n" }, { "phys", "abc" },
		{ "phys", "0x" }, { "phys", "-4096" }, { "phys", "+4096" },
		{ "phys", "4096 x" }, { "phys", "4096 4096" },
		{ "phys", "0x1000z" }, { "phys", "99999999999999999999999" },
		{ "phys", "0x10000000000000000" }, { "phys", "010x" },
		{ "virt", "1" }, { "virt", "1 2 3" }, { "virt", "x 0x1000" },
		{ "virt", "1 -1" }, { "virt", "99999999999 0x1000" },
		{ "virt", "-1 0x1000" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = pd_query(bad[i].file, bad[i].input, self->report,
				   PD_REPORT_SIZE);

		EXPECT_EQ(-EINVAL, err) TH_LOG("%s \"%s\"", bad[i].file, bad[i].input);
		EXPECT_EQ(NULL, strstr(self->report, "summary: "));
	}
}

/* Surrounding white space, a trailing newline, hex or decimal: accepted. */
TEST_F(pd, accepted_input_forms)
{
	char *page = map_private_anon(self->page_size);
	unsigned long paddr;
	char input[128];
	struct pd_summary s;

	ASSERT_NE(NULL, page);
	paddr = pagemap_pfn(0, page) * self->page_size;

	snprintf(input, sizeof(input), "  %lu \n", paddr);
	ASSERT_EQ(0, pd_query("phys", input, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(paddr / self->page_size, s.pfn);

	snprintf(input, sizeof(input), "\t%d\t 0X%lX\n", getpid(),
		 (unsigned long)page);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(paddr / self->page_size, s.pfn);
	munmap(page, self->page_size);
}

/* A pid with no process: -ESRCH. */
TEST_F(pd, no_such_process)
{
	pid_t pid = fork();
	int status;

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Reaped: its pid is free, until the pid space wraps. */
	EXPECT_EQ(-ESRCH, pd_virt(pid, (void *)0x400000, self->report,
				  PD_REPORT_SIZE)) TH_LOG("%s", self->report);
}

/* A kernel thread (kthreadd is pid 2) has no user memory: -EINVAL. */
TEST_F(pd, kernel_thread)
{
	char comm[32] = "";
	FILE *f = fopen("/proc/2/comm", "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(comm, sizeof(comm), f));
	fclose(f);
	ASSERT_STREQ("kthreadd\n", comm);
	EXPECT_EQ(-EINVAL, pd_virt(2, (void *)0x400000, self->report,
				   PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "virt: ", "kernel thread"));
}

/* Nothing mapped: -ENXIO, and the report says what is there instead. */
TEST_F(pd, unmapped_addresses)
{
	char *p = mmap(NULL, 2 * self->page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	/* p: a VMA, never touched; p + page_size: no VMA at all. */
	munmap(p + self->page_size, self->page_size);

	EXPECT_EQ(-ENXIO, pd_virt(getpid(), p, self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "leaf: ", "none"))
		TH_LOG("%s", self->report);
	EXPECT_EQ(NULL, strstr(self->report, "summary: "));

	EXPECT_EQ(-ENXIO, pd_virt(getpid(), p + self->page_size, self->report,
				  PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "vma: ", "none"));
	munmap(p, self->page_size);
}

/* A physical address past the end of memory: -EINVAL, with the reason. */
TEST_F(pd, phys_beyond_memory)
{
	EXPECT_EQ(-EINVAL, pd_query("phys", "0x7fffffff000000", self->report,
				    PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "pfn ", "beyond the end of memory"))
		TH_LOG("%s", self->report);
}

TEST_HARNESS_MAIN
