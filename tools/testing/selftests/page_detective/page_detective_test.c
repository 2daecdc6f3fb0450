// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective selftests: each case makes a page of a known kind, asks
 * about it with virt and with phys, and checks every value of the report
 * against a source Page Detective does not use: the PFN against
 * /proc/PID/pagemap, the mapcount against /proc/kpagecount, the flags
 * against /proc/kpageflags, the memcg against /proc/kpagecgroup and the
 * cgroup2 mount, the user mappings against the mappings the test made.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <dirent.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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

/* ---- What a report must say -------------------------------------------- */

struct expect_map {
	pid_t pid;
	void *addr;
	const char *level;
	bool counted;
	const char *name;	/* NULL: not checked */
};

struct expect {
	unsigned long pfn;
	const struct expect_map *maps;	/* every user mapping, exactly */
	int nr_maps;
	bool more_maps;		/* others may map the page too */
	bool untracked;		/* the reverse map does not track the page */
	const char *memcg;	/* NULL: only checked against kpagecgroup */
	/*
	 * The counted mappings of any page of the page's large folio, for a
	 * kernel without per-page mapcounts; 0: those of the page (a folio
	 * mapped whole, by a PMD or as hugetlb).
	 */
	long folio_maps;
};

/*
 * The page's own mapcount, from /proc/kpagecount.  Without per-page
 * mapcounts, 7.2's gives a typed page's type there instead of 0
 * (folio_average_page_mapcount() does not test page_mapcount_is_type()): a
 * page that /proc/kpageflags says is typed has none.
 */
static long page_mapcount(unsigned long pfn, uint64_t kpf)
{
	uint64_t typed = BIT64(KPF_SLAB) | BIT64(KPF_PGTABLE) | BIT64(KPF_BUDDY) |
			 BIT64(KPF_OFFLINE);

	if (pd_no_page_mapcount() && (kpf & typed))
		return 0;
	return kpage_read("kpagecount", pfn);
}

/*
 * Check the mapcount that @r judged, on @e's page, against what the test
 * mapped: the page's own, as /proc/kpagecount says; or, without per-page
 * mapcounts (CONFIG_NO_PAGE_MAPCOUNT), for a pinned page of a large folio,
 * the folio's, which counts a mapping of any of its pages: the test's own
 * count of them (e->folio_maps), or, for a folio mapped whole (by a PMD, or
 * hugetlb), /proc/kpagecount, exact there.  @counted: the page's counted
 * mappings that the test made.
 * Return: the counted mappings the report must list at its level.
 */
static long check_mapcount(struct __test_metadata *_metadata,
			   const char *report, const struct pd_parsed *r,
			   const struct expect *e, uint64_t kpf, long counted)
{
	uint64_t large = BIT64(KPF_COMPOUND_HEAD) | BIT64(KPF_COMPOUND_TAIL);
	long mapcount;
	char line[64];

	if (!pd_no_page_mapcount() || !r->pinned || !(kpf & large)) {
		EXPECT_STREQ("page", r->sum.level) TH_LOG("%s", report);
		EXPECT_EQ(page_mapcount(e->pfn, kpf), r->sum.mapcount)
			TH_LOG("%s", report);
		return counted;
	}
	EXPECT_STREQ("folio", r->sum.level) TH_LOG("%s", report);
	EXPECT_EQ(-1, r->sum.mapcount) TH_LOG("%s", report);
	mapcount = e->folio_maps ?: (long)kpage_read("kpagecount", e->pfn);
	snprintf(line, sizeof(line), "folio mapcount %ld matches", mapcount);
	EXPECT_TRUE(pd_has_line(report, "verdict: ok", line)) TH_LOG("%s", report);
	return e->folio_maps ?: counted;
}

/* The address the direct map gives physical address 0, once known. */
static unsigned long direct_map_base;

/* Bit @bit of /proc/kpageflags is @set if it did not change meanwhile. */
static void expect_kpf(struct __test_metadata *_metadata, const char *report,
		       uint64_t kpf, uint64_t stable, int bit, const char *name,
		       bool set)
{
	if (stable & BIT64(bit))
		EXPECT_EQ(!!(kpf & BIT64(bit)), set) TH_LOG("%s %s", name, report);
}

/*
 * Check @report, on the page at e->pfn, against the kernel's other
 * interfaces.  /proc/kpageflags is read after the query too: a bit that
 * changed since @kpf_before (read before it) is not compared.
 */
static void check_report(struct __test_metadata *_metadata, const char *report,
			 const struct expect *e, uint64_t kpf_before)
{
	uint64_t kpf = kpage_read("kpageflags", e->pfn);
	uint64_t stable = ~(kpf ^ kpf_before);
	const struct pd_kernel_map *direct;
	struct pd_parsed *r;
	long counted = 0, pids = 0;
	uint64_t ino;
	int i, j;

	r = malloc(sizeof(*r));
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, pd_parse(report, r)) TH_LOG("%s", report);

	EXPECT_EQ(e->pfn, r->sum.pfn);
	EXPECT_STREQ("ok", r->sum.verdict) TH_LOG("%s", report);

	/* memcg: the cgroup whose inode /proc/kpagecgroup gives. */
	ino = kpage_read("kpagecgroup", e->pfn);
	EXPECT_EQ(strcmp(r->sum.memcg, "none") ? pd_cgroup_ino(r->sum.memcg) : 0,
		  ino) TH_LOG("memcg %s", r->sum.memcg);
	if (e->memcg)
		EXPECT_STREQ(e->memcg, r->sum.memcg);

	/* Flags, where /proc/kpageflags says the same thing otherwise. */
#define EXPECT_KPF(bit, cond) expect_kpf(_metadata, report, kpf, stable, \
					 bit, #bit, cond)
	EXPECT_KPF(KPF_LRU, pd_has_flag(r, "lru"));
	EXPECT_KPF(KPF_DIRTY, pd_has_flag(r, "dirty"));
	EXPECT_KPF(KPF_SWAPBACKED, pd_has_flag(r, "swapbacked"));
	EXPECT_KPF(KPF_UPTODATE, pd_has_flag(r, "uptodate"));
	EXPECT_KPF(KPF_RESERVED, pd_has_flag(r, "reserved"));
	EXPECT_KPF(KPF_SLAB, !strcmp(r->page_type, "slab"));
	EXPECT_KPF(KPF_PGTABLE, !strcmp(r->page_type, "table"));
	EXPECT_KPF(KPF_HUGE, !strcmp(r->page_type, "hugetlb"));
	/*
	 * KPF_KSM only from 7.0: 6.12's stable_page_flags() tests the KSM bits
	 * with "mapping & PAGE_MAPPING_KSM", true for every anonymous page.
	 */
	if (pd_kernel_version() >= 700)
		EXPECT_KPF(KPF_KSM, !strcmp(r->kind, "ksm"));
	if (!r->page_type[0])
		EXPECT_KPF(KPF_ANON,
			   !strcmp(r->kind, "anon") || !strcmp(r->kind, "ksm"));
	if (r->pinned) {
		EXPECT_KPF(KPF_COMPOUND_HEAD, r->order && !r->idx);
		EXPECT_KPF(KPF_COMPOUND_TAIL, r->idx);
		if (!(kpf & BIT64(KPF_HUGE)))
			EXPECT_KPF(KPF_THP, r->order && r->kind[0]);
	}
	/* The huge zero page is a THP that the report does not name. */
	if (!(kpf & BIT64(KPF_THP)))
		EXPECT_KPF(KPF_ZERO_PAGE, r->zero_page);
	/* A free page cannot be pinned. */
	if (stable & kpf & BIT64(KPF_BUDDY))
		EXPECT_FALSE(r->pinned);

	/* User mappings: the ones the test made, and no other. */
	if (!e->more_maps && !e->folio_maps)
		EXPECT_EQ(e->nr_maps, r->nr_user) TH_LOG("%s", report);
	for (i = 0; i < e->nr_maps; i++) {
		const struct expect_map *x = &e->maps[i];
		const struct pd_user_map *m;

		m = pd_user_map(r, x->pid, (unsigned long)x->addr);
		EXPECT_NE(NULL, m) TH_LOG("no pid %d %p: %s", x->pid, x->addr,
					  report);
		/* The process's own pagemap agrees that it maps the page. */
		EXPECT_EQ(e->pfn, pagemap_pfn(x->pid, x->addr));
		if (!m)
			continue;
		EXPECT_STREQ(x->level, m->level);
		EXPECT_EQ(x->counted, m->counted);
		if (x->name)
			EXPECT_STREQ(x->name, m->name);
		counted += x->counted;
		for (j = 0; j < i && e->maps[j].pid != x->pid; j++)
			;
		pids += j == i;
	}
	counted = check_mapcount(_metadata, report, r, e, kpf, counted);
	if (!e->more_maps) {
		EXPECT_EQ(counted, r->sum.user_mappings) TH_LOG("%s", report);
		EXPECT_EQ(pids, r->sum.processes);
	}
	/*
	 * The reverse map knows every counted mapping, and no other; or the
	 * page is one it does not track (vm_insert_page()), and it says so.
	 */
	if (e->untracked) {
		EXPECT_EQ(0, r->sum.rmap_mappings);
		EXPECT_TRUE(pd_has_line(report, "rmap mappings: 0",
					"does not track")) TH_LOG("%s", report);
	} else {
		EXPECT_EQ(r->sum.user_mappings, r->sum.rmap_mappings);
	}
	EXPECT_EQ(0, r->nr_rmap) TH_LOG("%s", report);

	/*
	 * The direct map maps every page at one offset from its physical
	 * address; DEBUG_PAGEALLOC unmaps free pages from it.
	 */
	direct = pd_kernel_map(r, "direct map");
	EXPECT_TRUE(direct || r->direct_map_unmapped) TH_LOG("%s", report);
	if (direct) {
		unsigned long base = direct->addr - e->pfn * pd_page_size();

		if (!direct_map_base)
			direct_map_base = base;
		EXPECT_EQ(direct_map_base, base);
	}
	free(r);
}

/*
 * The quick report on e->pfn: the reverse map alone must name exactly the
 * counted mappings the test made.
 */
static void check_quick(struct __test_metadata *_metadata, char *report,
			const struct expect *e)
{
	struct pd_parsed *r = malloc(sizeof(*r));
	uint64_t kpf = kpage_read("kpageflags", e->pfn);
	long counted = 0;
	int i;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, pd_phys_quick(e->pfn, report, PD_REPORT_SIZE))
		TH_LOG("%s", report);
	ASSERT_EQ(0, pd_parse(report, r)) TH_LOG("%s", report);
	EXPECT_EQ(e->pfn, r->sum.pfn);
	EXPECT_EQ(0, r->nr_user);
	/* Without a reverse map, a quick query has nothing to count. */
	if (e->untracked) {
		check_mapcount(_metadata, report, r, e, kpf, 0);
		EXPECT_STREQ("partial", r->sum.verdict) TH_LOG("%s", report);
		EXPECT_EQ(0, r->sum.rmap_mappings);
		free(r);
		return;
	}
	EXPECT_STREQ("ok", r->sum.verdict) TH_LOG("%s", report);
	for (i = 0; i < e->nr_maps; i++) {
		const struct expect_map *x = &e->maps[i];
		int j;

		if (!x->counted)
			continue;
		counted++;
		for (j = 0; j < r->nr_rmap; j++)
			if (r->rmap[j].pid == x->pid &&
			    r->rmap[j].addr == (unsigned long)x->addr)
				break;
		EXPECT_LT(j, r->nr_rmap) TH_LOG("no pid %d %p: %s", x->pid,
						x->addr, report);
		if (j < r->nr_rmap) {
			EXPECT_STREQ(x->level, r->rmap[j].level);
			if (x->name)
				EXPECT_STREQ(x->name, r->rmap[j].name);
		}
	}
	counted = check_mapcount(_metadata, report, r, e, kpf, counted);
	EXPECT_EQ(counted, r->sum.rmap_mappings);
	EXPECT_EQ(counted, r->sum.user_mappings);
	if (!e->folio_maps)
		EXPECT_EQ(counted, r->nr_rmap);
	free(r);
}

/* The leaf of a virt report: its level, and that it maps @pfn. */
static void check_leaf(struct __test_metadata *_metadata, const char *report,
		       const char *level, unsigned long pfn)
{
	struct pd_parsed *r = malloc(sizeof(*r));

	ASSERT_NE(NULL, r);
	pd_parse(report, r);
	EXPECT_STREQ(level, r->leaf) TH_LOG("%s", report);
	EXPECT_EQ(pfn, r->leaf_pfn);
	free(r);
}

/*
 * Whether @report is "partial" only because a process was exiting while
 * the scan ran (its mappings unseen): true of the machine, not of the page,
 * so a check of a healthy page asks again (CHECK_TRIES times at most).
 */
#define CHECK_TRIES	4

static bool partial_for_exiting(const char *report)
{
	return pd_has_line(report, "verdict: partial",
			   "the scan could not see a process that was exiting");
}

/*
 * Ask about the page at e->pfn, with virt of @addr in @pid or, if @addr is
 * NULL, with phys, until the verdict is not partial_for_exiting(); the
 * kpageflags read before the last query go to @kpf.
 */
static void ask_settled(struct __test_metadata *_metadata, char *report,
			pid_t pid, void *addr, const struct expect *e,
			uint64_t *kpf)
{
	int tries;

	for (tries = 0; tries < CHECK_TRIES; tries++) {
		*kpf = kpage_read("kpageflags", e->pfn);
		ASSERT_EQ(0, addr ? pd_virt(pid, addr, report, PD_REPORT_SIZE) :
				    pd_phys(e->pfn, report, PD_REPORT_SIZE))
			TH_LOG("%s", report);
		if (!partial_for_exiting(report))
			return;
	}
}

/*
 * Ask about the page that @pid maps at @addr, with virt, and about its
 * PFN, with phys; check both reports.
 */
static void check_both(struct __test_metadata *_metadata, char *report,
		       pid_t pid, void *addr, const char *leaf,
		       const struct expect *e)
{
	uint64_t kpf;

	ASSERT_NE(0, e->pfn);
	ask_settled(_metadata, report, pid, addr, e, &kpf);
	check_leaf(_metadata, report, leaf, e->pfn);
	check_report(_metadata, report, e, kpf);

	ask_settled(_metadata, report, pid, NULL, e, &kpf);
	check_report(_metadata, report, e, kpf);

	if (!e->more_maps)
		check_quick(_metadata, report, e);
}

/* ---- Pages to ask about -------------------------------------------------- */

/* Read a byte, so that the page is faulted in. */
static char read_byte(const char *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Populated private anonymous memory, never THP unless @thp. */
static char *map_anon(unsigned long size, int flags, bool thp)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 0x5a, size);
	return p;
}

static int do_nothing(void *arg)
{
	return 0;
}

static int pause_until_parent_dies(void *arg)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

static int write_page(void *arg)
{
	memset(arg, 0x6b, 16);
	return 0;
}

/* A shared mapping is not populated in a child until the child faults. */
static int read_page(void *arg)
{
	return read_byte(arg) != 0x5a;
}

/* ---- Anonymous memory ------------------------------------------------------ */

TEST_F(pd, private_anon)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	struct expect_map maps[] = { { getpid(), page, "pte", true } };
	struct expect e = { pagemap_pfn(0, page), maps, 1 };

	ASSERT_NE(NULL, page);
	check_both(_metadata, self->report, getpid(), page, "pte", &e);
	/* An address inside the page is the page. */
	ASSERT_EQ(0, pd_virt(getpid(), page + 123, self->report, PD_REPORT_SIZE));
	check_leaf(_metadata, self->report, "pte", e.pfn);
	munmap(page, self->page_size);
}

/*
 * A page made PROT_NONE stays mapped and counted.  Its PTE has
 * _PAGE_PROTNONE for _PAGE_PRESENT, and x86 keeps such an entry's PFN
 * inverted (L1TF), which every test of a whole page table must undo, as
 * NUMA balancing's hinting entries need too.
 */
TEST_F(pd, private_anon_prot_none)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	struct expect_map maps[] = { { getpid(), page, "pte", true } };
	struct expect e = { 0, maps, 1 };

	ASSERT_NE(NULL, page);
	e.pfn = pagemap_pfn(0, page);
	ASSERT_EQ(0, mprotect(page, self->page_size, PROT_NONE));
	check_both(_metadata, self->report, getpid(), page, "pte", &e);
	munmap(page, self->page_size);
}

/* After fork, both processes map the page until one of them writes. */
TEST_F(pd, anon_after_fork)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	struct pd_child child;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, pd_child_start(&child, do_nothing, NULL));
	struct expect_map maps[] = {
		{ getpid(), page, "pte", true },
		{ child.pid, page, "pte", true },
	};
	struct expect e = { pagemap_pfn(0, page), maps, 2 };

	check_both(_metadata, self->report, child.pid, page, "pte", &e);
	EXPECT_EQ(0, pd_child_end(&child));
	munmap(page, self->page_size);
}

TEST_F(pd, anon_after_fork_and_write)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	unsigned long ours, theirs;
	struct pd_child child;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, pd_child_start(&child, write_page, page));
	ours = pagemap_pfn(0, page);
	theirs = pagemap_pfn(child.pid, page);
	EXPECT_NE(ours, theirs);
	struct expect_map mine[] = { { getpid(), page, "pte", true } };
	struct expect_map its[] = { { child.pid, page, "pte", true } };
	struct expect e_ours = { ours, mine, 1 };
	struct expect e_theirs = { theirs, its, 1 };

	check_both(_metadata, self->report, getpid(), page, "pte", &e_ours);
	check_both(_metadata, self->report, child.pid, page, "pte",
		   &e_theirs);
	EXPECT_EQ(0, pd_child_end(&child));
	munmap(page, self->page_size);
}

TEST_F(pd, shared_anon_three_processes)
{
	char *page = map_anon(self->page_size, MAP_SHARED, false);
	struct pd_child one, two;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, pd_child_start(&one, read_page, page));
	ASSERT_EQ(0, pd_child_start(&two, read_page, page));
	struct expect_map maps[] = {
		{ getpid(), page, "pte", true, "/dev/zero (deleted)" },
		{ one.pid, page, "pte", true, "/dev/zero (deleted)" },
		{ two.pid, page, "pte", true, "/dev/zero (deleted)" },
	};
	struct expect e = { pagemap_pfn(0, page), maps, 3 };

	check_both(_metadata, self->report, two.pid, page, "pte", &e);
	EXPECT_EQ(0, pd_child_end(&one));
	EXPECT_EQ(0, pd_child_end(&two));
	munmap(page, self->page_size);
}

/* The shared zero page: mapped, listed as special, not counted. */
TEST_F(pd, zero_page)
{
	char *p = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct expect_map maps[] = { { getpid(), p, "pte", false } };
	struct expect e = { 0, maps, 1, .more_maps = true };
	struct pd_parsed *r = malloc(sizeof(*r));
	int i;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_NE(NULL, r);
	madvise(p, self->page_size, MADV_NOHUGEPAGE);
	ASSERT_EQ(0, read_byte(p));
	e.pfn = pagemap_pfn(0, p);
	ASSERT_NE(0, kpage_read("kpageflags", e.pfn) & BIT64(KPF_ZERO_PAGE));

	check_both(_metadata, self->report, getpid(), p, "pte", &e);
	ASSERT_EQ(0, pd_parse(self->report, r));
	EXPECT_TRUE(r->zero_page);
	EXPECT_EQ(0, r->sum.mapcount);
	EXPECT_EQ(0, r->sum.user_mappings);
	for (i = 0; i < r->nr_user; i++)
		EXPECT_FALSE(r->user[i].counted);
	free(r);
	munmap(p, self->page_size);
}

/* ---- Files ------------------------------------------------------------------ */

/* A one-page file at @path, mapped shared at an address of our own. */
static char *map_file(const char *path, unsigned long size, int *fd)
{
	char *p;

	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (*fd < 0)
		return NULL;
	if (ftruncate(*fd, size))
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x7c, size);
	return p;
}

struct file_child {
	const char *path;
	char *addr;	/* where the child maps it: shared memory */
};

/* In the child: map the file again, elsewhere, and read it. */
static int map_file_again(void *arg)
{
	struct file_child *fc = arg;
	int fd = open(fc->path, O_RDONLY);

	if (fd < 0)
		return 1;
	/* A page before it makes the address differ from the parent's. */
	mmap(NULL, pd_page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fc->addr = mmap(NULL, pd_page_size(), PROT_READ, MAP_SHARED, fd, 0);
	if (fc->addr == MAP_FAILED)
		return 2;
	return read_byte(fc->addr) != 0x7c;
}

static void check_page_cache(struct __test_metadata *_metadata, char *report,
			     const char *path)
{
	struct file_child *fc = mmap(NULL, sizeof(*fc), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct pd_child child;
	char *page;
	int fd;

	ASSERT_NE(MAP_FAILED, fc);
	page = map_file(path, pd_page_size(), &fd);
	ASSERT_NE(NULL, page);
	fc->path = path;
	ASSERT_EQ(0, pd_child_start(&child, map_file_again, fc));
	EXPECT_NE(page, fc->addr);
	struct expect_map maps[] = {
		{ getpid(), page, "pte", true, path },
		{ child.pid, fc->addr, "pte", true, path },
	};
	struct expect e = { pagemap_pfn(0, page), maps, 2 };

	check_both(_metadata, report, child.pid, fc->addr, "pte", &e);
	EXPECT_EQ(0, pd_child_end(&child));
	munmap(page, pd_page_size());
	close(fd);
	unlink(path);
	munmap(fc, sizeof(*fc));
}

TEST_F(pd, page_cache_tmpfs)
{
	check_page_cache(_metadata, self->report, "/tmp/pd_page_cache");
}

TEST_F(pd, page_cache_ext4)
{
	FILE *f = fopen("/proc/mounts", "r");
	char line[256];
	bool ext4 = false;

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		ext4 |= !!strstr(line, " /mnt/ext4 ext4 ");
	fclose(f);
	if (!ext4)
		SKIP(return, "no ext4 filesystem mounted on /mnt/ext4");
	check_page_cache(_metadata, self->report, "/mnt/ext4/pd_page_cache");
}

/* A memfd page, mapped twice in one process: two VMAs, one process. */
TEST_F(pd, memfd_mapped_twice)
{
	int fd = memfd_create("pd", 0);
	char *one, *two;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, self->page_size));
	one = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	two = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, one);
	ASSERT_NE(MAP_FAILED, two);
	one[0] = 1;
	EXPECT_EQ(1, two[0]);
	struct expect_map maps[] = {
		{ getpid(), one, "pte", true, "/memfd:pd (deleted)" },
		{ getpid(), two, "pte", true, "/memfd:pd (deleted)" },
	};
	struct expect e = { pagemap_pfn(0, one), maps, 2 };

	EXPECT_EQ(e.pfn, pagemap_pfn(0, two));
	check_both(_metadata, self->report, getpid(), two, "pte", &e);
	munmap(one, self->page_size);
	munmap(two, self->page_size);
	close(fd);
}

/* In a child: share our mm with a grandchild (CLONE_VM, not a thread). */
static int share_mm(void *page)
{
	static char stack[64 * 1024];

	memset(page, 0x42, pd_page_size());
	return clone(pause_until_parent_dies, stack + sizeof(stack),
		     CLONE_VM | SIGCHLD, NULL) < 0;
}

/* Processes that share an mm: the page is mapped once, and counted once. */
TEST_F(pd, shared_mm_walked_once)
{
	char *page = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pd_child child;
	struct pd_parsed *r = malloc(sizeof(*r));

	ASSERT_NE(MAP_FAILED, page);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, pd_child_start(&child, share_mm, page));
	struct expect_map maps[] = { { child.pid, page, "pte", true } };
	struct expect e = { pagemap_pfn(child.pid, page), maps, 1 };

	check_both(_metadata, self->report, child.pid, page, "pte", &e);
	ASSERT_EQ(0, pd_phys(e.pfn, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse(self->report, r));
	EXPECT_TRUE(pd_has_line(self->report, "user: ",
				"(mm shared with other processes)"));
	EXPECT_EQ(1, r->sum.processes);
	EXPECT_EQ(0, pd_child_end(&child));
	free(r);
	munmap(page, self->page_size);
}

/* ---- Huge pages ------------------------------------------------------------- */

/*
 * The scan walks each VMA under its own read lock where the kernel can
 * find and lock VMAs one by one for it (lock_next_vma(), which 6.12 has not,
 * with CONFIG_PER_VMA_LOCK), else under the mmap lock alone.  Where the
 * prescan lets it walk only the PTE table that maps the page, that is one
 * short hold (elsewhere, the VMA's 32 tables), which the cost line rounds
 * up: a hold that happened is never 0 us there.
 */
TEST_F(pd, scan_holds_vma_locks)
{
	bool per_vma = pd_kernel_version() >= 700 &&
		       !strcmp(pd_kernel_config("PER_VMA_LOCK"), "y");
	size_t size = 64UL << 20;	/* 32 PTE tables with 4 KiB pages */
	struct pd_cost cost;
	char *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, madvise(p, size, MADV_NOHUGEPAGE));
	memset(p, 0x21, size);
	ASSERT_EQ(0, pd_phys(pagemap_pfn(0, p), self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse_cost(self->report, &cost)) TH_LOG("%s", self->report);
	EXPECT_EQ(per_vma, cost.vma_hold_us > 0) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "verdict: ok", ""))
		TH_LOG("%s", self->report);
	munmap(p, size);
}

/*
 * Map the page of @fd at @nr addresses of a reserved area (of @size), each
 * in a PMD range of its own, @stride apart, and fault it in at each.
 */
static char *map_in_tables(int fd, unsigned long nr, size_t stride,
			   size_t size, struct expect_map *maps)
{
	char *area, *base;
	unsigned long i;

	area = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return NULL;
	base = pd_pmd_align(area);
	for (i = 0; i < nr; i++) {
		char *p = base + i * stride;

		if (mmap(p, pd_page_size(), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) != p)
			return NULL;
		p[0] = 1;
		maps[i] = (struct expect_map){ getpid(), p, "pte", true,
					       "/memfd:pd (deleted)" };
	}
	return area;
}

/*
 * One page mapped in many PTE tables of one process: the scan finds each
 * mapping, whether the PMD ranges where the prescan found the page are few
 * enough to walk alone (PD_PRESCAN_RANGES, 16), touch each other (one
 * range), or are too many (the whole mm is walked).
 */
TEST_F(pd, mapped_in_many_tables)
{
	static const struct {
		unsigned long nr, pmds_apart;
	} layouts[] = { { 12, 2 }, { 40, 1 }, { 40, 2 } };
	unsigned long pmd = pd_pmd_size();
	int fd = memfd_create("pd", 0);
	struct expect_map maps[40];
	unsigned int i;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, self->page_size));
	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		unsigned long nr = layouts[i].nr;
		size_t stride = layouts[i].pmds_apart * pmd;
		size_t size = nr * stride + pmd;
		char *area = map_in_tables(fd, nr, stride, size, maps);
		struct expect e = { 0, maps, nr };

		ASSERT_NE(NULL, area);
		e.pfn = pagemap_pfn(0, maps[0].addr);
		TH_LOG("%lu mappings, %zu KiB apart", nr, stride >> 10);
		check_both(_metadata, self->report, getpid(), maps[nr - 1].addr,
			   "pte", &e);
		munmap(area, size);
	}
	close(fd);
}

/*
 * A page mapped at the last page of the user address space: the last PMD
 * range passes TASK_SIZE, where the walk ends.
 */
TEST_F(pd, top_of_address_space)
{
	char *p = (char *)(pd_task_size_max() - self->page_size);

	p = mmap(p, self->page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		SKIP(return, "the last page is taken: %s", strerror(errno));
	p[0] = 1;
	struct expect_map maps[] = { { getpid(), p, "pte", true } };
	struct expect e = { pagemap_pfn(0, p), maps, 1 };

	check_both(_metadata, self->report, getpid(), p, "pte", &e);
	munmap(p, self->page_size);
}

TEST_F(pd, thp_pmd_mapped)
{
	void *area = NULL;
	char *thp = pd_map_thp(&area);
	char *tail;

	if (!thp)
		SKIP(goto out, "could not get a PMD-mapped THP");
	tail = thp + 5 * self->page_size;
	struct expect_map head_map[] = { { getpid(), thp, "pmd", true } };
	struct expect_map tail_map[] = { { getpid(), tail, "pmd", true } };
	struct expect head = { pagemap_pfn(0, thp), head_map, 1 };
	struct expect t = { pagemap_pfn(0, tail), tail_map, 1 };

	EXPECT_EQ(head.pfn + 5, t.pfn);
	check_both(_metadata, self->report, getpid(), thp, "pmd", &head);
	check_both(_metadata, self->report, getpid(), tail, "pmd", &t);
out:
	munmap(area, 2 * pd_pmd_size());
}

/* The same THP, after mprotect() on part of it split its PMD mapping. */
TEST_F(pd, thp_pte_mapped)
{
	unsigned long nr = pd_pmd_size() / self->page_size;
	void *area = NULL;
	char *thp = pd_map_thp(&area);
	char *page;

	if (!thp)
		SKIP(goto out, "could not get a PMD-mapped THP");
	ASSERT_EQ(0, mprotect(thp + self->page_size, self->page_size, PROT_READ));
	page = thp + 2 * self->page_size;
	struct expect_map maps[] = { { getpid(), page, "pte", true } };
	struct expect e = { pagemap_pfn(0, page), maps, 1 };

	/* Every page of the folio is still mapped, each by its own PTE. */
	e.folio_maps = pagemap_count(0, thp, pd_pmd_size(), e.pfn - 2, nr);
	EXPECT_EQ((long)nr, e.folio_maps);
	struct pd_parsed *r = malloc(sizeof(*r));

	check_both(_metadata, self->report, getpid(), page, "pte", &e);
	ASSERT_NE(NULL, r);
	pd_parse(self->report, r);
	/* Still one large folio, its pages mapped one by one. */
	EXPECT_EQ((unsigned int)__builtin_ctzl(nr), r->order);
	EXPECT_EQ(2, r->idx);
	free(r);
out:
	munmap(area, 2 * pd_pmd_size());
}

/* Each page of a 64 KiB folio, mapped by its own PTE, is asked about. */
static void check_mthp_pages(struct __test_metadata *_metadata, char *report,
			     char *folio, unsigned long first_pfn,
			     unsigned long nr)
{
	unsigned long i, page_size = pd_page_size();

	for (i = 0; i < nr; i++) {
		struct expect_map maps[] = {
			{ getpid(), folio + i * page_size, "pte", true }
		};
		struct expect e = { first_pfn + i, maps, 1 };

		e.folio_maps = nr;
		check_both(_metadata, report, getpid(), maps[0].addr, "pte", &e);
	}
}

/*
 * An anonymous large folio (mTHP) of the size that arm64 maps with one
 * contiguous-PTE block (contpte: 64 KiB, 2 MiB on larger pages): each of
 * its PTEs still maps one page, and each page gets its own mapping,
 * counted once, and verdict ok.  Then one page made read-only, which
 * splits the VMA and unfolds the block: the same.
 */
TEST_F(pd, mthp_block_pte_mapped)
{
	unsigned long size = pd_mthp_block_size(), nr = size / self->page_size, pfn;
	char *area, *folio;
	int ret;

	area = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	folio = (char *)(((unsigned long)area + size - 1) & ~(size - 1));
	ret = pd_fault_mthp_block(folio);
	if (pd_mthp_block_skip(ret))
		SKIP(goto out, "%s", pd_mthp_block_skip(ret));
	ASSERT_EQ(0, ret);
	pfn = pagemap_pfn(0, folio);
	ASSERT_EQ(nr, pagemap_count(0, folio, size, pfn, nr));
	check_mthp_pages(_metadata, self->report, folio, pfn, nr);

	ASSERT_EQ(0, mprotect(folio + self->page_size, self->page_size, PROT_READ));
	ASSERT_EQ(nr, pagemap_count(0, folio, size, pfn, nr));
	check_mthp_pages(_metadata, self->report, folio, pfn, nr);
out:
	munmap(area, 2 * size);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long val = -1;

	if (f) {
		if (fscanf(f, "%ld", &val) != 1)
			val = -1;
		fclose(f);
	}
	return val;
}

static int write_long(const char *path, long val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", val) > 0 ? 0 : -1;
	return fclose(f) ? -1 : ret;
}

#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"

/* ---- A large folio's per-mm mapcounts ------------------------------------- */

#define SHM_THP_DIR	"/tmp/pd_shm_thp"
#define SHM_THP_SIZE	(2UL << 20)
#define FAULT_AROUND	"/sys/kernel/debug/fault_around_bytes"

/* What a mapper child does, told by a byte on its pipe; it acks each. */
struct mapper {
	pid_t pid;
	int cmd, ack;
	char *addr;		/* where it maps the file: shared memory */
};

/*
 * In a mapper: map the whole file by PTEs, one page off the 2 MiB
 * alignment that a PMD would want, and for each byte read, populate the
 * 64 KiB window it names (0-31), or all of it ('a').
 */
static void mapper_run(int fd, int cmd, int ack, char **addr)
{
	char *area = mmap(NULL, 2 * SHM_THP_SIZE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p, c;

	p = (char *)(((unsigned long)area + SHM_THP_SIZE - 1) & ~(SHM_THP_SIZE - 1)) +
	    pd_page_size();
	if (area == MAP_FAILED ||
	    mmap(p, SHM_THP_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) != p ||
	    madvise(p, SHM_THP_SIZE, MADV_NOHUGEPAGE))
		_exit(1);
	*addr = p;
	while (read(cmd, &c, 1) == 1) {
		unsigned long off = c == 'a' ? 0 : (unsigned long)c << 16;

		if (madvise(p + off, c == 'a' ? SHM_THP_SIZE : 1UL << 16,
			    MADV_POPULATE_READ) || write(ack, "", 1) != 1)
			_exit(2);
	}
	_exit(0);
}

static int mapper_start(struct mapper *m, int fd, char **addr)
{
	int cmd[2], ack[2];

	if (pipe(cmd) || pipe(ack))
		return -1;
	m->pid = fork();
	if (m->pid < 0)
		return -1;
	if (!m->pid) {
		close(cmd[1]);
		close(ack[0]);
		mapper_run(fd, cmd[0], ack[1], addr);
	}
	close(cmd[0]);
	close(ack[1]);
	m->cmd = cmd[1];
	m->ack = ack[0];
	return 0;
}

/* Tell @m to map @what ('a', or a 64 KiB window), and wait until it has. */
static int mapper_map(struct mapper *m, char what)
{
	char c;

	return write(m->cmd, &what, 1) == 1 && read(m->ack, &c, 1) == 1 ? 0 : -1;
}

static void mapper_end(struct mapper *m)
{
	if (m->pid <= 0)
		return;
	kill(m->pid, SIGKILL);
	waitpid(m->pid, NULL, 0);
	close(m->cmd);
	close(m->ack);
	m->pid = 0;
}

/*
 * A large folio's per-mm mapcounts (CONFIG_MM_ID) are lower bounds, not
 * counts: an mm that maps the folio while both slots are taken is counted
 * in neither, and when a slot frees, its next mapping takes it with only
 * the pages it maps from then on (folio_add_return_large_mapcount()).  A
 * 2 MiB shmem folio mapped by PTEs by A and B, then a 64 KiB window of it
 * by C while both slots are taken, B exiting, C mapping a second window:
 * C's count says 16, C maps 32.  A healthy page, on every page asked
 * about: ok.
 */
TEST_F(pd, mm_id_lower_bound)
{
	struct mapper a = { 0 }, b = { 0 }, c = { 0 };
	char **addr = mmap(NULL, 3 * sizeof(char *), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long fault_around = read_long(FAULT_AROUND);
	struct pd_summary s;
	unsigned long pfn;
	char want[64];
	int fd, i;

	ASSERT_NE(MAP_FAILED, addr);
	if (self->page_size != 4096)
		SKIP(return, "its windows are 16 pages of 4 KiB in a 2 MiB folio");
	mkdir(SHM_THP_DIR, 0700);
	if (mount("tmpfs", SHM_THP_DIR, "tmpfs", 0, "huge=always,size=8M"))
		SKIP(return, "no tmpfs with huge=always: %s", strerror(errno));
	fd = open(SHM_THP_DIR "/f", O_RDWR | O_CREAT, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, fallocate(fd, 0, 0, SHM_THP_SIZE));
	/* Each fault maps its page only: the windows are exactly 16 pages. */
	ASSERT_LT(0, fault_around);
	ASSERT_EQ(0, write_long(FAULT_AROUND, pd_page_size()));

	ASSERT_EQ(0, mapper_start(&a, fd, &addr[0]));
	ASSERT_EQ(0, mapper_start(&b, fd, &addr[1]));
	ASSERT_EQ(0, mapper_start(&c, fd, &addr[2]));
	ASSERT_EQ(0, mapper_map(&a, 'a'));
	ASSERT_EQ(0, mapper_map(&b, 'a'));
	pfn = pagemap_pfn(a.pid, addr[0]);
	if (!(kpage_read("kpageflags", pfn) & BIT64(KPF_THP)))
		SKIP(goto out, "the file got no 2 MiB folio");
	/* Both slots are A's and B's: C is counted in neither. */
	ASSERT_EQ(0, mapper_map(&c, 0));
	mapper_end(&b);
	/* B's slot is free: C takes it with this window's 16 pages only. */
	ASSERT_EQ(0, mapper_map(&c, 16));
	EXPECT_EQ(pfn + 256, pagemap_pfn(c.pid, addr[2] + (1UL << 20)));

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pd_phys(pfn + i * 256, self->report, PD_REPORT_SIZE))
			TH_LOG("%s", self->report);
		ASSERT_EQ(0, pd_parse_summary(self->report, &s)) TH_LOG("%s", self->report);
		EXPECT_STREQ("ok", s.verdict) TH_LOG("%s", self->report);
		EXPECT_EQ(0, s.culprits);
		if (!pd_no_page_mapcount())
			continue;
		/* Judged at folio level: the state is there, and is healthy. */
		snprintf(want, sizeof(want), "per-mm mapcount: pid %d (", c.pid);
		EXPECT_TRUE(pd_has_line(self->report, want,
					") 16, mappings found there 32 (a lower bound"))
			TH_LOG("%s", self->report);
	}
out:
	mapper_end(&a);
	mapper_end(&b);
	mapper_end(&c);
	write_long(FAULT_AROUND, fault_around);
	close(fd);
	umount(SHM_THP_DIR);
	rmdir(SHM_THP_DIR);
	munmap(addr, 3 * sizeof(char *));
}

/*
 * A hugetlb page of the default size, which is a PMD's on x86 and arm64
 * (2 MiB with 4 KiB pages, 512 MiB with 64 KiB ones).
 */
TEST_F(pd, hugetlb_2m)
{
	long before = read_long(NR_HUGEPAGES);
	size_t size = pd_pmd_size();
	char *huge;

	ASSERT_GE(before, 0);
	ASSERT_EQ(0, write_long(NR_HUGEPAGES, before + 1));
	huge = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (huge == MAP_FAILED) {
		write_long(NR_HUGEPAGES, before);
		SKIP(return, "no hugetlb page of %zu KiB", size >> 10);
	}
	memset(huge, 0x2e, size);
	char *tail = huge + 3 * self->page_size;
	struct expect_map head_map[] = { { getpid(), huge, "hugetlb", true } };
	struct expect_map tail_map[] = { { getpid(), tail, "hugetlb", true } };
	struct expect head = { pagemap_pfn(0, huge), head_map, 1 };
	struct expect t = { pagemap_pfn(0, tail), tail_map, 1 };

	check_both(_metadata, self->report, getpid(), huge, "hugetlb", &head);
	check_both(_metadata, self->report, getpid(), tail, "hugetlb", &t);
	munmap(huge, size);
	EXPECT_EQ(0, write_long(NR_HUGEPAGES, before));
}

/* ---- KSM ----------------------------------------------------------------------- */

#define KSM "/sys/kernel/mm/ksm/"

TEST_F(pd, ksm_merged)
{
	long run = read_long(KSM "run");
	char *page = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pd_child child;
	int tries;

	if (run < 0)
		SKIP(return, "no KSM");
	ASSERT_NE(MAP_FAILED, page);
	ASSERT_EQ(0, madvise(page, self->page_size, MADV_MERGEABLE));
	ASSERT_EQ(0, pd_child_start(&child, write_page, page));
	write_page(page);
	ASSERT_EQ(0, write_long(KSM "pages_to_scan", 1000));
	ASSERT_EQ(0, write_long(KSM "sleep_millisecs", 10));
	ASSERT_EQ(0, write_long(KSM "run", 1));
	for (tries = 0; tries < 300; tries++) {
		if (pagemap_pfn(0, page) == pagemap_pfn(child.pid, page))
			break;
		usleep(100000);
	}
	ASSERT_EQ(pagemap_pfn(0, page), pagemap_pfn(child.pid, page))
		TH_LOG("ksmd did not merge the pages in 30 s");
	struct expect_map maps[] = {
		{ getpid(), page, "pte", true },
		{ child.pid, page, "pte", true },
	};
	struct expect e = { pagemap_pfn(0, page), maps, 2 };
	struct pd_parsed *r = malloc(sizeof(*r));

	check_both(_metadata, self->report, getpid(), page, "pte", &e);
	ASSERT_NE(NULL, r);
	pd_parse(self->report, r);
	EXPECT_STREQ("ksm", r->kind);
	free(r);
	EXPECT_EQ(0, pd_child_end(&child));
	munmap(page, self->page_size);
	write_long(KSM "run", run);
}

/* ---- Healthy look-alikes: pages whose sources disagree by design --------- */

/* The range of the first mapping of /proc/self/maps named @name. */
static int maps_range(const char *name, unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, name) &&
		    sscanf(line, "%lx-%lx", start, end) == 2) {
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

/* What "user mappings:" says of processes sharing an mm already scanned. */
static long sharing_an_mm(const char *report)
{
	const char *line = strstr(report, "\nuser mappings: ");
	const char *p = line ? strstr(line, "; ") : NULL;
	long sharing = -1;

	/* "...skipped: N exiting; N sharing an mm already scanned" */
	if (p)
		p = strstr(p + 2, "; ");
	if (p && sscanf(p, "; %ld sharing", &sharing) != 1)
		sharing = -1;
	return sharing;
}

/*
 * The vDSO: mapped in every process with a mapcount, but inserted without
 * a reverse map (folio->mapping is NULL): the mapcount is judged against
 * the page tables alone.
 */
TEST_F(pd, vdso_page)
{
	unsigned long start, end;

	if (maps_range("[vdso]", &start, &end))
		SKIP(return, "no [vdso]");
	read_byte((char *)start);
	struct expect_map maps[] = {
		{ getpid(), (void *)start, "pte", true, "[vdso]" },
	};
	struct expect e = { pagemap_pfn(0, (void *)start), maps, 1,
			    .more_maps = true, .untracked = true };

	check_both(_metadata, self->report, getpid(), (void *)start, "pte", &e);
}

/* An io_uring ring: vm_insert_pages(), no reverse map, like the vDSO. */
TEST_F(pd, io_uring_ring)
{
	struct io_uring_params p = {};
	size_t size;
	char *ring;
	int fd;

	if (!pd_kernel_config("IO_URING")[0])
		SKIP(return, "no CONFIG_IO_URING");
	fd = syscall(__NR_io_uring_setup, 4, &p);
	ASSERT_LE(0, fd);
	size = p.sq_off.array + p.sq_entries * sizeof(__u32);
	ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		    fd, IORING_OFF_SQ_RING);
	ASSERT_NE(MAP_FAILED, ring);
	read_byte(ring);
	struct expect_map maps[] = { { getpid(), ring, "pte", true } };
	struct expect e = { pagemap_pfn(0, ring), maps, 1, .untracked = true };

	check_both(_metadata, self->report, getpid(), ring, "pte", &e);
	munmap(ring, size);
	close(fd);
}

/*
 * The "pinned" references of the report's refcount line, and the pins of
 * its "pins:" line; -1 where a line is missing.
 */
static void read_pins(const char *report, long *pinned, long *pins)
{
	const char *line = strstr(report, "\npins: ");
	struct pd_refs r;

	pd_parse_refs(report, &r);
	*pinned = r.pinned;
	*pins = -1;
	if (line && !strncmp(line, "\npins: none\n", 12))
		*pins = 0;
	else if (line)
		sscanf(line, "\npins: %ld by pin_user_pages()", pins);
}

/*
 * @nr pages from @addr registered as io_uring fixed buffers of a page
 * each, so that each pins its page once: io_uring pins a buffer of many
 * pages of one folio only once.  The ring's fd, which keeps them, or -1.
 */
static int pin_by_io_uring(char *addr, unsigned int nr)
{
	struct io_uring_params p = {};
	struct iovec iov[8];
	unsigned int i;
	int fd;

	if (nr > ARRAY_SIZE(iov))
		return -1;
	for (i = 0; i < nr; i++)
		iov[i] = (struct iovec){ addr + i * pd_page_size(), pd_page_size() };
	fd = syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0)
		return -1;
	if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_BUFFERS, iov, nr)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Let go of the buffers of the ring @fd: unpinned before this returns. */
static int unpin_by_io_uring(int fd)
{
	int err = syscall(__NR_io_uring_register, fd, IORING_UNREGISTER_BUFFERS, NULL, 0);

	close(fd);
	return err;
}

/*
 * Pages pinned by pin_user_pages(), as an io_uring fixed buffer pins them:
 * the "pins:" line counts them, estimated for a small folio (1024
 * references each), exactly for a THP (one in its pin count per page
 * pinned, 512 for the whole), and they are gone once the buffer is.
 */
TEST_F(pd, io_uring_fixed_buffer_pins)
{
	char *page = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long pinned, pins;
	void *area = NULL;
	char *thp;
	int fd;

	if (!pd_kernel_config("IO_URING")[0])
		SKIP(return, "no CONFIG_IO_URING");
	ASSERT_NE(MAP_FAILED, page);
	memset(page, 0x17, self->page_size);
	fd = pin_by_io_uring(page, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	read_pins(self->report, &pinned, &pins);
	EXPECT_EQ(1, pins) TH_LOG("%s", self->report);
	EXPECT_EQ(1024, pinned) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "pins: ", "estimated"))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, unpin_by_io_uring(fd));
	ASSERT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	read_pins(self->report, &pinned, &pins);
	EXPECT_EQ(0, pins) TH_LOG("%s", self->report);
	EXPECT_EQ(0, pinned) TH_LOG("%s", self->report);
	munmap(page, self->page_size);

	thp = pd_map_thp(&area);
	if (!thp) {
		if (area)
			munmap(area, 2 * pd_pmd_size());
		SKIP(return, "could not get a PMD-mapped THP for its exact pin count");
	}
	/* Three of its pages, whichever is asked about: the folio's count. */
	fd = pin_by_io_uring(thp + 5 * self->page_size, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pd_virt(getpid(), thp + 100 * self->page_size, self->report,
			     PD_REPORT_SIZE));
	read_pins(self->report, &pinned, &pins);
	EXPECT_EQ(3, pins) TH_LOG("%s", self->report);
	EXPECT_EQ(3, pinned) TH_LOG("%s", self->report);
	EXPECT_FALSE(pd_has_line(self->report, "pins: ", "estimated"))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, unpin_by_io_uring(fd));
	ASSERT_EQ(0, pd_virt(getpid(), thp, self->report, PD_REPORT_SIZE));
	read_pins(self->report, &pinned, &pins);
	EXPECT_EQ(0, pins) TH_LOG("%s", self->report);
	munmap(area, 2 * pd_pmd_size());
}

/*
 * Devices behind no IOMMU reach every page: the report counts them once,
 * as many as sysfs lists without an IOMMU group, and no line when there
 * are none.  Every guest can check this one, with an IOMMU or without;
 * on 6.12, the report says that it cannot tell.
 */
TEST_F(pd, unprotected_devices_counted_once)
{
	char *page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *report = self->report, want[96];
	int n = pd_unprotected_pci_devices();

	ASSERT_NE(MAP_FAILED, page);
	if (!pd_kernel_config("IOMMU_API")[0])
		SKIP(return, "no CONFIG_IOMMU_API: the kernel cannot tell");
	page[0] = 1;
	ASSERT_EQ(0, pd_virt(getpid(), page, report, PD_REPORT_SIZE));
	snprintf(want, sizeof(want), "iommu: %d PCI devices behind no IOMMU,", n);
	if (!pd_iommu_walks()) {
		/* 6.12 has no IOMMU core that can tell: the report says so. */
		EXPECT_TRUE(pd_has_line(report, "iommu: ", "iommu: not known"))
			TH_LOG("%s", report);
	} else if (n) {
		EXPECT_TRUE(pd_has_line(report, "iommu: ", want)) TH_LOG("%s", report);
	} else {
		EXPECT_FALSE(pd_has_line(report, "iommu: ", "behind no IOMMU"))
			TH_LOG("%s", report);
	}
	munmap(page, pd_page_size());
}

/* The vfork()ed grandchild: tells its PID, then stays, sharing the mm. */
static int vfork_ready_fd;

static int tell_pid_and_stay(void *arg)
{
	pid_t pid = getpid();

	if (write(vfork_ready_fd, &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	for (;;)
		pause();
	return 0;
}

/*
 * A process suspended in vfork() shares its mm with the child (CLONE_VM |
 * CLONE_VFORK, which sets no MMF_MULTIPROCESS): the mm is walked once, and
 * the page mapped once is counted once.
 */
TEST_F(pd, vfork_child_shares_mm)
{
	char *page = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char stack[64 * 1024];
	int ready[2], status;
	pid_t parent, child;

	ASSERT_NE(MAP_FAILED, page);
	ASSERT_EQ(0, pipe(ready));
	parent = fork();
	ASSERT_LE(0, parent);
	if (!parent) {
		memset(page, 0x42, pd_page_size());
		vfork_ready_fd = ready[1];
		clone(tell_pid_and_stay, stack + sizeof(stack),
		      CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
		_exit(0);
	}
	ASSERT_EQ(sizeof(child), read(ready[0], &child, sizeof(child)));
	struct expect_map maps[] = { { parent, page, "pte", true } };
	struct expect e = { pagemap_pfn(parent, page), maps, 1 };

	check_both(_metadata, self->report, parent, page, "pte", &e);
	ASSERT_EQ(0, pd_phys(e.pfn, self->report, PD_REPORT_SIZE));
	EXPECT_LE(1, sharing_an_mm(self->report)) TH_LOG("%s", self->report);
	kill(child, SIGKILL);
	kill(parent, SIGKILL);
	waitpid(parent, &status, 0);
	close(ready[0]);
	close(ready[1]);
	munmap(page, self->page_size);
}

/* The PID of a child of @parent, or 0. */
static pid_t child_of(pid_t parent)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	pid_t found = 0;

	while (proc && !found && (d = readdir(proc))) {
		char path[288], comm[64], *end;
		int pid, ppid;
		FILE *f;

		pid = strtol(d->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%*d %63s %*c %d", comm, &ppid) == 2 && ppid == parent)
			found = pid;
		fclose(f);
	}
	if (proc)
		closedir(proc);
	return found;
}

#define SPAWN_FIFO	"/tmp/pd_spawn_fifo"

/*
 * posix_spawn() runs its child with CLONE_VM | CLONE_VFORK until exec: a
 * file action that opens a FIFO holds it there, sharing the parent's mm,
 * while the parent waits in posix_spawn().
 */
TEST_F(pd, posix_spawn_child_shares_mm)
{
	char *page = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t parent, child = 0;
	int status, tries, fd;

	ASSERT_NE(MAP_FAILED, page);
	unlink(SPAWN_FIFO);
	ASSERT_EQ(0, mkfifo(SPAWN_FIFO, 0600));
	parent = fork();
	ASSERT_LE(0, parent);
	if (!parent) {
		char *const argv[] = { "true", NULL };
		posix_spawn_file_actions_t fa;
		pid_t spawned;

		memset(page, 0x42, pd_page_size());
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 3, SPAWN_FIFO, O_RDONLY, 0);
		if (posix_spawn(&spawned, "/bin/true", &fa, NULL, argv, environ))
			_exit(1);
		_exit(waitpid(spawned, NULL, 0) != spawned);
	}
	for (tries = 0; tries < 1000 && !child; tries++) {
		child = child_of(parent);
		if (!child)
			usleep(10000);
	}
	ASSERT_NE(0, child) TH_LOG("posix_spawn() made no child");
	struct expect_map maps[] = { { parent, page, "pte", true } };
	struct expect e = { pagemap_pfn(parent, page), maps, 1 };

	check_both(_metadata, self->report, parent, page, "pte", &e);
	ASSERT_EQ(0, pd_phys(e.pfn, self->report, PD_REPORT_SIZE));
	EXPECT_LE(1, sharing_an_mm(self->report)) TH_LOG("%s", self->report);
	/* Let the child open the FIFO, exec and exit. */
	fd = open(SPAWN_FIFO, O_WRONLY);
	EXPECT_LE(0, fd);
	close(fd);
	EXPECT_EQ(parent, waitpid(parent, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	unlink(SPAWN_FIFO);
	munmap(page, self->page_size);
}

/*
 * @fd mapped MAP_SHARED over a whole PUD-aligned PUD range (1 GiB with
 * 4 KiB pages, 64 GiB with 16 KiB ones), or NULL.
 */
static char *map_pud_aligned(int fd)
{
	unsigned long pud = pd_pud_size();
	char *area = mmap(NULL, 2 * pud, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *aligned, *p;

	if (area == MAP_FAILED)
		return NULL;
	aligned = (char *)(((unsigned long)area + pud - 1) & ~(pud - 1));
	p = mmap(aligned, pud, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
	if (aligned > area)
		munmap(area, aligned - area);
	munmap(aligned + pud, area + pud - aligned);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * Processes that MAP_SHARED a PUD-aligned hugetlb region share its PMD
 * table (huge_pmd_share()): one entry maps the page in all of them, and
 * the mapcount, 1, counts that entry once.
 */
TEST_F(pd, hugetlb_pmd_shared)
{
	long before = read_long(NR_HUGEPAGES);
	struct pd_child child;
	char *huge;
	int fd;

	if (strcmp(pd_kernel_config("HUGETLB_PMD_PAGE_TABLE_SHARING"), "y"))
		SKIP(return, "no CONFIG_HUGETLB_PMD_PAGE_TABLE_SHARING");
	ASSERT_GE(before, 0);
	ASSERT_EQ(0, write_long(NR_HUGEPAGES, before + 1));
	fd = memfd_create("pd_pmd_share", MFD_HUGETLB);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, pd_pud_size()));
	huge = map_pud_aligned(fd);
	ASSERT_NE(NULL, huge);
	memset(huge, 0x5a, self->page_size);
	/* The child faults the page in through the parent's PMD table. */
	ASSERT_EQ(0, pd_child_start(&child, read_page, huge));
	struct expect_map maps[] = {
		{ getpid(), huge, "hugetlb", true },
		{ child.pid, huge, "hugetlb", true },
	};
	struct expect e = { pagemap_pfn(0, huge), maps, 2 };

	check_both(_metadata, self->report, getpid(), huge, "hugetlb", &e);
	EXPECT_EQ(1, kpage_read("kpagecount", e.pfn));
	ASSERT_EQ(0, pd_phys(e.pfn, self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "user: ", "(page table shared)"))
		TH_LOG("%s", self->report);
	EXPECT_EQ(0, pd_child_end(&child));
	munmap(huge, pd_pud_size());
	close(fd);
	EXPECT_EQ(0, write_long(NR_HUGEPAGES, before));
}

/*
 * A KSM page with more mappers than a report lists (256): each of them is
 * counted once, however often the reverse map visits it.
 */
#define KSM_MAPPERS	300

TEST_F(pd, ksm_many_mappers)
{
	long run = read_long(KSM "run"), sharing = read_long(KSM "max_page_sharing");
	size_t size = KSM_MAPPERS * self->page_size;
	struct pd_summary sum;
	char *area;
	int i, tries;

	if (run < 0 || sharing < 0)
		SKIP(return, "no KSM");
	/* max_page_sharing can only change when KSM shares no page. */
	ASSERT_EQ(0, write_long(KSM "run", 2));
	ASSERT_EQ(0, write_long(KSM "max_page_sharing", 2 * KSM_MAPPERS));
	area = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	ASSERT_EQ(0, madvise(area, size, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, madvise(area, size, MADV_MERGEABLE));
	memset(area, 0x3d, size);
	ASSERT_EQ(0, write_long(KSM "pages_to_scan", 1000));
	ASSERT_EQ(0, write_long(KSM "sleep_millisecs", 10));
	ASSERT_EQ(0, write_long(KSM "run", 1));
	for (tries = 0; tries < 600; tries++) {
		unsigned long pfn = pagemap_pfn(0, area);

		for (i = 1; i < KSM_MAPPERS; i++)
			if (pagemap_pfn(0, area + i * self->page_size) != pfn)
				break;
		if (i == KSM_MAPPERS)
			break;
		usleep(100000);
	}
	ASSERT_EQ(KSM_MAPPERS, i) TH_LOG("ksmd merged %d pages in 60 s", i);

	ASSERT_EQ(0, pd_phys(pagemap_pfn(0, area), self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &sum));
	EXPECT_EQ(KSM_MAPPERS, sum.mapcount);
	EXPECT_EQ(KSM_MAPPERS, kpage_read("kpagecount", sum.pfn));
	EXPECT_EQ(KSM_MAPPERS, sum.user_mappings) TH_LOG("%s", self->report);
	EXPECT_EQ(KSM_MAPPERS, sum.rmap_mappings) TH_LOG("%s", self->report);
	EXPECT_STREQ("ok", sum.verdict) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "user: ", "more not listed"));
	ASSERT_EQ(0, pd_phys_quick(sum.pfn, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &sum));
	EXPECT_EQ(KSM_MAPPERS, sum.rmap_mappings) TH_LOG("%s", self->report);
	EXPECT_STREQ("ok", sum.verdict) TH_LOG("%s", self->report);

	munmap(area, size);
	write_long(KSM "run", 2);
	write_long(KSM "max_page_sharing", sharing);
	write_long(KSM "run", run);
}

/*
 * userfaultfd write-protection: the PTEs of populated pages carry the
 * uffd-wp bit, unpopulated ones become PTE markers, and the scan reads
 * through both.
 */
TEST_F(pd, uffd_wp_range)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_UNPOPULATED };
	size_t size = 4 * self->page_size;
	struct uffdio_register reg = {};
	struct uffdio_writeprotect wp = {};
	char *area;
	int uffd;

	if (!pd_kernel_config("USERFAULTFD")[0])
		SKIP(return, "no CONFIG_USERFAULTFD");
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, uffd);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	area = map_anon(size, MAP_PRIVATE, false);
	ASSERT_NE(NULL, area);
	/* Half populated, half not. */
	ASSERT_EQ(0, madvise(area + 2 * self->page_size, 2 * self->page_size,
			     MADV_DONTNEED));
	reg.range.start = (unsigned long)area;
	reg.range.len = size;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	wp.range = reg.range;
	wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_WRITEPROTECT, &wp));
	/* A marker where nothing is mapped, the bit where a page is. */
	EXPECT_TRUE(pagemap_entry(0, area + 3 * self->page_size) & PM_UFFD_WP);
	EXPECT_TRUE(pagemap_entry(0, area) & PM_UFFD_WP);
	struct expect_map maps[] = { { getpid(), area, "pte", true } };
	struct expect e = { pagemap_pfn(0, area), maps, 1 };

	check_both(_metadata, self->report, getpid(), area, "pte", &e);
	ASSERT_EQ(-ENXIO, pd_virt(getpid(), area + 3 * self->page_size,
				  self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "leaf: ", "pte marker"))
		TH_LOG("%s", self->report);
	munmap(area, size);
	close(uffd);
}

/* ---- Memory cgroups ------------------------------------------------------------ */

#define CG "/sys/fs/cgroup"

static int fault_in_cgroup(void *arg)
{
	char pid[32];
	int fd = open(CG "/pd_test/cgroup.procs", O_WRONLY);

	if (fd < 0)
		return 1;
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, strlen(pid)) < 0)
		return 2;
	close(fd);
	memset(arg, 0x11, pd_page_size());
	return 0;
}

TEST_F(pd, memcg_child)
{
	char *page = mmap(NULL, self->page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pd_child child;
	int fd;

	if (access(CG "/cgroup.subtree_control", W_OK))
		SKIP(return, "no cgroup2 mount at " CG);
	ASSERT_NE(MAP_FAILED, page);
	fd = open(CG "/cgroup.subtree_control", O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(8, write(fd, "+memory\n", 8));
	close(fd);
	ASSERT_TRUE(!mkdir(CG "/pd_test", 0755) || errno == EEXIST);

	/* Not touched yet: the child's write faults it in, in pd_test. */
	ASSERT_EQ(0, pd_child_start(&child, fault_in_cgroup, page));
	struct expect_map maps[] = { { child.pid, page, "pte", true } };
	struct expect e = { pagemap_pfn(child.pid, page), maps, 1,
			    .memcg = "/pd_test" };

	check_both(_metadata, self->report, child.pid, page, "pte", &e);
	EXPECT_EQ(0, pd_child_end(&child));
	munmap(page, self->page_size);
	EXPECT_EQ(0, rmdir(CG "/pd_test"));
}

/* ---- Kernel pages ------------------------------------------------------------- */

/*
 * Whether @report shows that the page was not what /proc/kpageflags said,
 * @bits, for the whole query, though it said so before and after: a free
 * page allocated meanwhile is pinned by the query (and freed by it, if its
 * owner freed it first), or found changed by the verdict.
 */
static bool changed_during_query(const char *report, uint64_t bits)
{
	struct pd_parsed *r = malloc(sizeof(*r));
	bool changed;

	if (!r || pd_parse(report, r)) {
		free(r);
		return false;	/* check_report() fails on it */
	}
	changed = ((bits & BIT64(KPF_BUDDY)) && r->pinned) ||
		  pd_has_line(report, "verdict: partial", "kept changing");
	free(r);
	return changed;
}

/*
 * Ask phys about the first pages that /proc/kpageflags gives all the @bits
 * of, from @start on, until one stays what it was while we asked; check it.
 * The report on it is left in @report.  Twenty pages that all change is a
 * failure: a report that always says so is wrong.
 */
static void check_kernel_page(struct __test_metadata *_metadata, char *report,
			      uint64_t bits, unsigned long start,
			      const char *memcg)
{
	static uint64_t flags[4096];
	int fd = open("/proc/kpageflags", O_RDONLY);
	unsigned long pfn = start, tried = 0;
	ssize_t n;

	ASSERT_GE(fd, 0);
	while ((n = pread(fd, flags, sizeof(flags), pfn * 8)) > 0 && tried < 20) {
		int i;

		for (i = 0; i < n / 8 && tried < 20; i++) {
			struct expect e = { pfn + i, NULL, 0, .memcg = memcg };
			uint64_t before = flags[i];
			int err;

			if ((before & bits) != bits)
				continue;
			tried++;
			err = pd_phys(pfn + i, report, PD_REPORT_SIZE);
			if (err || ((kpage_read("kpageflags", pfn + i) ^ before) &
				    bits) || changed_during_query(report, bits))
				continue;
			/* Between the scan and the query, it stayed one. */
			check_report(_metadata, report, &e, before);
			close(fd);
			return;
		}
		pfn += n / 8;
	}
	close(fd);
	ASSERT_TRUE(0) TH_LOG("no stable page with kpageflags bits %#llx",
			      (unsigned long long)bits);
}

TEST_F(pd, slab_page)
{
	check_kernel_page(_metadata, self->report, BIT64(KPF_SLAB), 0, "none");
}

/*
 * A page of a large slab other than its first: the slab's type is its
 * folio's, and the fields of struct page that a folio's mapping is read
 * from hold the slab's own (a partial list's length), which are nothing
 * to walk a reverse map by.
 */
TEST_F(pd, slab_tail_page)
{
	check_kernel_page(_metadata, self->report,
			  BIT64(KPF_SLAB) | BIT64(KPF_COMPOUND_TAIL), 0, "none");
	EXPECT_TRUE(pd_has_line(self->report, "folio: not kept pinned: ",
				"a typed page"))
		TH_LOG("%s", self->report);
}

TEST_F(pd, page_table_page)
{
	check_kernel_page(_metadata, self->report, BIT64(KPF_PGTABLE), 0, NULL);
}

TEST_F(pd, free_page)
{
	check_kernel_page(_metadata, self->report, BIT64(KPF_BUDDY), 0, "none");
}

/*
 * A free page's PFN, from /proc/kpageflags, or 0.  Where free pages lie
 * depends on the kernel's size and the memory layout: look everywhere
 * above the first 16 MiB, where the kernel and the boot allocations are.
 */
static unsigned long free_pfn(void)
{
	static uint64_t flags[4096];
	int fd = open("/proc/kpageflags", O_RDONLY);
	unsigned long pfn, found = 0;
	ssize_t n;
	int i;

	if (fd < 0)
		return 0;
	for (pfn = 0x1000; !found; pfn += n / 8) {
		n = pread(fd, flags, sizeof(flags), pfn * 8);
		if (n <= 0)
			break;
		for (i = 0; i < n / 8 && !found; i++)
			if (flags[i] & BIT64(KPF_BUDDY))
				found = pfn + i;
	}
	close(fd);
	return found;
}

/* The direct map's address of @pfn, from the report on another page. */
static unsigned long direct_map_address(char *report, unsigned long pfn)
{
	char *page = map_anon(pd_page_size(), MAP_PRIVATE, false);
	struct pd_parsed *r = malloc(sizeof(*r));
	const struct pd_kernel_map *direct;
	unsigned long addr = 0, own;

	if (!page || !r)
		goto out;
	own = pagemap_pfn(0, page);
	if (pd_virt(getpid(), page, report, PD_REPORT_SIZE) || pd_parse(report, r))
		goto out;
	direct = pd_kernel_map(r, "direct map");
	if (direct)
		addr = direct->addr - own * pd_page_size() + pfn * pd_page_size();
out:
	free(r);
	if (page)
		munmap(page, pd_page_size());
	return addr;
}

/*
 * A free page asked about by its direct-map address, with PID 0: with
 * DEBUG_PAGEALLOC the direct map does not map it, and that entry is no swap
 * entry; either way the address names the page.
 */
TEST_F(pd, free_page_by_kernel_address)
{
	unsigned long pfn = free_pfn(), addr;
	struct pd_summary sum;
	char input[64];

	ASSERT_NE(0, pfn) TH_LOG("no free page in /proc/kpageflags");
	addr = direct_map_address(self->report, pfn);
	ASSERT_NE(0, addr);
	snprintf(input, sizeof(input), "0 0x%lx", addr);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse_summary(self->report, &sum));
	EXPECT_EQ(pfn, sum.pfn);
	EXPECT_FALSE(pd_has_line(self->report, "leaf: ", "migration"))
		TH_LOG("%s", self->report);
	EXPECT_FALSE(pd_has_line(self->report, "leaf: ", "swap entry"))
		TH_LOG("%s", self->report);
	/* Unless it was allocated meanwhile, and mapped again. */
	if (!strcmp(pd_kernel_config("DEBUG_PAGEALLOC"), "y") &&
	    pd_has_line(self->report, "folio: none", ""))
		EXPECT_TRUE(pd_has_line(self->report, "leaf: pte, not present",
					"a kernel entry")) TH_LOG("%s", self->report);
}

TEST_F(pd, reserved_page)
{
	check_kernel_page(_metadata, self->report, BIT64(KPF_RESERVED), 0x100,
			  NULL);
}

/* The first resource of /proc/iomem named @name: its physical range. */
static int iomem_range(const char *name, unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/iomem", "r");
	struct pd_iomem r;
	int ret = -1;

	if (!f)
		return -1;
	while (ret && pd_iomem_next(f, &r))
		if (!strcmp(r.name, name)) {
			*start = r.start;
			*end = r.end;
			ret = 0;
		}
	fclose(f);
	return ret;
}

/* The address /proc/kallsyms gives @sym. */
static unsigned long symbol_address(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128];
	unsigned long addr, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %*s %127s", &addr, name) == 2 &&
		    !strcmp(name, sym))
			found = addr;
	fclose(f);
	return found;
}

/* Kernel text, by its virtual address: the kernel image maps it. */
TEST_F(pd, kernel_text)
{
	unsigned long text = symbol_address("_stext"), code_start, code_end;
	struct pd_parsed *r = malloc(sizeof(*r));
	const struct pd_kernel_map *image;
	struct expect e = { 0 };
	uint64_t kpf;
	char input[64];

	ASSERT_NE(0, text);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, iomem_range("Kernel code", &code_start, &code_end));
	snprintf(input, sizeof(input), "0 0x%lx", text);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse(self->report, r));
	/* Where /proc/iomem says the kernel code is. */
	EXPECT_GE(r->sum.pfn * self->page_size, code_start);
	EXPECT_LE(r->sum.pfn * self->page_size, code_end);
	image = pd_kernel_map(r, "kernel image");
	ASSERT_NE(NULL, image) TH_LOG("%s", self->report);
	EXPECT_EQ(text & ~(self->page_size - 1), image->addr);

	e.pfn = r->sum.pfn;
	kpf = kpage_read("kpageflags", e.pfn);
	ASSERT_EQ(0, pd_phys(e.pfn, self->report, PD_REPORT_SIZE));
	check_report(_metadata, self->report, &e, kpf);
	free(r);
}

/* A page of a vmalloc area: mapped in vmalloc space and in the direct map. */
/*
 * The page of @s asked about as a range of one page: a batch, whose scan
 * walks the kernel's page tables once for all its pages, finds the same
 * kernel mappings.
 */
static void check_batch_kernel_mappings(struct __test_metadata *_metadata,
					const struct pd_summary *s)
{
	char *batch = malloc(PD_BATCH_REPORT_SIZE), input[64];
	unsigned long ps = pd_page_size();
	struct pd_batch_page b;

	ASSERT_NE(NULL, batch);
	snprintf(input, sizeof(input), "%#lx-%#lx", s->pfn * ps, (s->pfn + 1) * ps - 1);
	ASSERT_EQ(0, pd_query("phys", input, batch, PD_BATCH_REPORT_SIZE));
	ASSERT_EQ(1, pd_batch_page(batch, s->pfn, &b)) TH_LOG("%s", batch);
	EXPECT_EQ(s->kernel_mappings, b.kernel_mappings) TH_LOG("%s", batch);
	free(batch);
}

TEST_F(pd, vmalloc_page)
{
	long kptr_restrict = read_long("/proc/sys/kernel/kptr_restrict");
	struct pd_parsed *r = malloc(sizeof(*r));
	const struct pd_kernel_map *vm;
	unsigned long start = 0, end;
	char line[512], input[64];
	FILE *f;

	ASSERT_NE(NULL, r);
	/* %pK shows root the real addresses only with kptr_restrict=1. */
	ASSERT_EQ(0, write_long("/proc/sys/kernel/kptr_restrict", 1));
	f = fopen("/proc/vmallocinfo", "r");
	ASSERT_NE(NULL, f);
	/*
	 * Not execmem's (modules', BPF's): arm64 puts them in module space,
	 * below vmalloc's.  7.2 names them by execmem's functions, 6.12 by
	 * load_module().
	 */
	while (!start && fgets(line, sizeof(line), f))
		if (strstr(line, " pages=") && strstr(line, " vmalloc") &&
		    !strstr(line, "execmem") && !strstr(line, "load_module"))
			sscanf(line, "%lx-%lx", &start, &end);
	fclose(f);
	write_long("/proc/sys/kernel/kptr_restrict", kptr_restrict);
	ASSERT_NE(0, start) TH_LOG("no vmalloc area in /proc/vmallocinfo");
	snprintf(input, sizeof(input), "0 0x%lx", start);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse(self->report, r));
	vm = pd_kernel_map(r, "vmalloc");
	ASSERT_NE(NULL, vm) TH_LOG("%s", self->report);
	EXPECT_EQ(start, vm->addr);
	EXPECT_NE(NULL, pd_kernel_map(r, "direct map"));
	EXPECT_EQ(r->leaf_pfn, r->sum.pfn);
	EXPECT_EQ(0, r->nr_user);
	check_batch_kernel_mappings(_metadata, &r->sum);
	free(r);
}

/*
 * Where the kernel image is: from the first to the last of its parts that
 * /proc/iomem names "Kernel ..." (code, rodata, data, bss on x86; code and
 * data on arm64).
 */
static int iomem_kernel_image(unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/iomem", "r");
	struct pd_iomem r;
	int ret = -1;

	if (!f)
		return -1;
	while (pd_iomem_next(f, &r))
		if (!strncmp(r.name, "Kernel ", 7)) {
			*start = ret || r.start < *start ? r.start : *start;
			*end = ret || r.end > *end ? r.end : *end;
			ret = 0;
		}
	fclose(f);
	return ret;
}

/*
 * The reserved pages of System RAM (KPF_RESERVED: memblock's, the memory
 * map among them), read once from /proc/kpageflags: up to @max of them,
 * spread evenly over all of them, into @pfns.  Returns how many.
 */
static int reserved_pfns(unsigned long *pfns, int max)
{
	static uint64_t flags[4096];
	unsigned long pfn, ps = pd_page_size(), *all = NULL, *more;
	size_t total = 0, cap = 0, n;
	FILE *f = fopen("/proc/iomem", "r");
	int fd = open("/proc/kpageflags", O_RDONLY), nr = 0;
	struct pd_iomem r;
	ssize_t got, i;

	if (!f || fd < 0)
		goto out;
	while (pd_iomem_next(f, &r)) {
		if (!pd_iomem_is_ram(&r))
			continue;
		for (pfn = r.start / ps; pfn <= r.end / ps; pfn += got) {
			got = pread(fd, flags, sizeof(flags), pfn * 8) / 8;
			if (got <= 0)
				break;
			if (got > (ssize_t)(r.end / ps - pfn + 1))
				got = r.end / ps - pfn + 1;
			for (i = 0; i < got; i++) {
				if (!(flags[i] & BIT64(KPF_RESERVED)))
					continue;
				if (total == cap) {
					cap = cap ? 2 * cap : 4096;
					more = realloc(all, cap * sizeof(*all));
					if (!more)
						goto out;
					all = more;
				}
				all[total++] = pfn + i;
			}
		}
	}
	n = total < (size_t)max ? total : (size_t)max;
	for (nr = 0; (size_t)nr < n; nr++)
		pfns[nr] = all[nr * total / n];
out:
	free(all);
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	return nr;
}

/*
 * A page of the memory map (vmemmap): found among the reserved pages by a
 * batch, as the pages mapped twice that are not the kernel image's, then
 * asked about alone, from the top of memory down, where memblock puts the
 * memory map.  It is mapped where its struct pages are and in the direct
 * map, and the kernel address leads back to it.  On 4 KiB pages the memory
 * map of a whole section is mapped by PMD leaves, by x86 and arm64 alike:
 * the walk reads a block mapping of the kernel's.
 */
TEST_F(pd, vmemmap_page)
{
	char *batch = malloc(PD_BATCH_REPORT_SIZE), *input = malloc(PD_INPUT_LIMIT);
	struct pd_parsed *r = malloc(sizeof(*r)), *v = malloc(sizeof(*v));
	unsigned long pfns[512], image_start = 0, image_end = 0;
	const struct pd_kernel_map *map = NULL;
	struct pd_batch_page b, twice[512];
	int nr, i, asked = 0, nr_twice = 0;
	const char *line;
	char q[64];

	ASSERT_TRUE(batch && input && r && v);
	ASSERT_EQ(0, iomem_kernel_image(&image_start, &image_end));
	nr = reserved_pfns(pfns, 512);
	ASSERT_LT(0, nr) TH_LOG("no reserved page in /proc/kpageflags");
	pd_pfn_list(input, PD_INPUT_LIMIT, pfns, nr);
	ASSERT_EQ(0, pd_query("phys", input, batch, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", batch);
	for (line = batch; line && nr_twice < 512;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (pd_parse_batch_line(line, &b) && b.kernel_mappings >= 2 &&
		    (b.pfn < image_start / self->page_size ||
		     b.pfn > image_end / self->page_size))
			twice[nr_twice++] = b;
	for (i = nr_twice - 1; !map && i >= 0 && asked < 16; i--, asked++) {
		b = twice[i];
		ASSERT_EQ(0, pd_phys(b.pfn, self->report, PD_REPORT_SIZE));
		ASSERT_EQ(0, pd_parse(self->report, r));
		map = pd_kernel_map(r, "vmemmap");
	}
	ASSERT_NE(NULL, map)
		TH_LOG("no vmemmap mapping in %d of the %d reserved pages mapped twice",
		       asked, nr_twice);
	EXPECT_EQ(b.kernel_mappings, r->sum.kernel_mappings) TH_LOG("%s", self->report);
	EXPECT_NE(NULL, pd_kernel_map(r, "direct map")) TH_LOG("%s", self->report);
	if (self->page_size == 4096)
		EXPECT_STREQ("pmd", map->level) TH_LOG("%s", self->report);
	/* And back: what the kernel address maps. */
	snprintf(q, sizeof(q), "0 %#lx", map->addr);
	ASSERT_EQ(0, pd_query("virt", q, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse(self->report, v));
	EXPECT_EQ(r->sum.pfn, v->leaf_pfn) TH_LOG("%s", self->report);
	EXPECT_STREQ(map->level, v->leaf) TH_LOG("%s", self->report);
	EXPECT_NE(NULL, pd_kernel_map(v, "vmemmap")) TH_LOG("%s", self->report);
	free(v);
	free(r);
	free(input);
	free(batch);
}

/* A module's memory: vmalloc'ed, so mapped in module space and directly. */
TEST_F(pd, module_memory)
{
	unsigned long text = 0;
	struct pd_parsed *r = malloc(sizeof(*r));
	const struct pd_kernel_map *mod;
	FILE *f = fopen("/sys/module/page_detective/sections/.text", "r");
	char input[64];

	ASSERT_NE(NULL, r);
	if (!f)
		SKIP(return, "Page Detective is not a module");
	ASSERT_EQ(1, fscanf(f, "%lx", &text));
	fclose(f);
	snprintf(input, sizeof(input), "0 0x%lx", text);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse(self->report, r));
	mod = pd_kernel_map(r, "module");
	ASSERT_NE(NULL, mod) TH_LOG("%s", self->report);
	EXPECT_EQ(text & ~(self->page_size - 1), mod->addr);
	EXPECT_NE(NULL, pd_kernel_map(r, "direct map"));
	EXPECT_EQ(r->leaf_pfn, r->sum.pfn);
	check_batch_kernel_mappings(_metadata, &r->sum);
	free(r);
}

/* ---- Bad input ------------------------------------------------------------------ */

/* Malformed input: -EINVAL, and an explanation instead of a report. */
TEST_F(pd, malformed_input)
{
	static const struct {
		const char *file, *input;
		size_t len;
	} bad[] = {
		{ "phys", "\n" }, { "phys", "abc" }, { "phys", "0x" },
		{ "phys", "-4096" }, { "phys", "+4096" }, { "phys", "4096 x" },
		{ "phys", "4096 x" }, { "phys", "0x1000z" },
		{ "phys", "0x2000-0x1000" }, { "phys", "0x1000-" },
		{ "phys", "-0x1000" }, { "phys", "1--2" }, { "phys", "1-2-3" },
		{ "phys", "quick" }, { "phys", "quick 4096" },
		{ "phys", "4096 4096 quick quick" }, { "phys", "4096 - 8192" },
		{ "phys", "99999999999999999999999" },
		{ "phys", "0x10000000000000000" }, { "phys", "010x" },
		{ "phys", "0x1000\0", 7 }, { "phys", "\0", 1 },
		{ "virt", "1" }, { "virt", "1 2 3" }, { "virt", "x 0x1000" },
		{ "virt", "1 -1" }, { "virt", "99999999999 0x1000" },
		{ "virt", "-1 0x1000" }, { "virt", " " },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t len = bad[i].len ?: strlen(bad[i].input);
		int err = pd_query_len(bad[i].file, bad[i].input, len,
				       self->report, PD_REPORT_SIZE);

		EXPECT_EQ(-EINVAL, err) TH_LOG("%s \"%s\"", bad[i].file,
					       bad[i].input);
		/* One line saying why, no report. */
		EXPECT_EQ(NULL, strstr(self->report, "summary: "));
		EXPECT_EQ(strlen(self->report) - 1,
			  strcspn(self->report, "\n")) TH_LOG("%s", self->report);
	}
}

/* Over-long and empty writes. */
TEST_F(pd, write_sizes)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	char *big = malloc(PD_INPUT_LIMIT + 1);
	int fd, len;

	ASSERT_NE(NULL, page);
	ASSERT_NE(NULL, big);
	memset(big, ' ', PD_INPUT_LIMIT + 1);
	/* A page of RAM, wherever the machine's RAM begins. */
	len = sprintf(big, "0x%lx", pagemap_pfn(0, page) * self->page_size);
	big[len] = ' ';
	/* The limit is 32 KiB, for lists; a byte more is refused. */
	EXPECT_EQ(-EINVAL, pd_query_len("phys", big, PD_INPUT_LIMIT + 1, NULL, 0));
	EXPECT_EQ(0, pd_query_len("phys", big, PD_INPUT_LIMIT, NULL, 0));
	fd = open(PD_DIR "/phys", O_WRONLY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, write(fd, big, 0));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	free(big);
	munmap(page, self->page_size);
}

/* Surrounding white space, a trailing newline, hex or decimal: accepted. */
TEST_F(pd, accepted_input_forms)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	unsigned long paddr;
	struct pd_summary s;
	char input[128];

	ASSERT_NE(NULL, page);
	paddr = pagemap_pfn(0, page) * self->page_size;

	snprintf(input, sizeof(input), "  %lu%c\n", paddr, ' ');
	ASSERT_EQ(0, pd_query("phys", input, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(paddr / self->page_size, s.pfn);

	snprintf(input, sizeof(input), "\t%d\t 0X%lX\n", getpid(),
		 (unsigned long)page + 17);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(paddr / self->page_size, s.pfn);
	munmap(page, self->page_size);
}

/* ---- Many pages in one query ------------------------------------------------ */

/* Whether the batch line @p of @pfn says what the page's own query does. */
static void check_batch_line_as_alone(struct __test_metadata *_metadata,
				      const struct pd_batch_page *p,
				      unsigned long pfn, char *single)
{
	struct pd_summary s;

	ASSERT_EQ(0, pd_phys(pfn, single, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(single, &s));
	EXPECT_EQ(s.mapcount, p->mapcount);
	EXPECT_EQ(s.kernel_mappings, p->kernel_mappings);
	EXPECT_EQ(s.user_mappings, p->user_mappings);
	EXPECT_EQ(s.rmap_mappings, p->rmap_mappings);
	EXPECT_EQ(s.processes, p->processes);
	EXPECT_STREQ(s.level, p->level);
	EXPECT_STREQ(s.verdict, p->verdict);
}

/*
 * Check a batch's @report on @nr distinct @pfns of our own private anonymous
 * memory, and the lines of the first @checked: one line each, in ascending
 * order, "ok", and what a query of that page alone says, which pagemap and
 * kpagecount check.
 */
static void check_batch_anon(struct __test_metadata *_metadata,
			     const char *report, const unsigned long *pfns,
			     int nr, int checked, char *single)
{
	struct pd_batch_totals t;
	struct pd_batch_page p;
	int i, j;

	ASSERT_EQ(0, pd_parse_batch(report, &t)) TH_LOG("%s", report);
	EXPECT_EQ(nr, t.pages);
	EXPECT_EQ(nr, t.ok) TH_LOG("%s", report);
	EXPECT_EQ(0, t.mismatch);
	EXPECT_EQ(0, t.not_memory);
	EXPECT_EQ(1, t.scans);
	for (i = 0; i < checked; i++) {
		ASSERT_EQ(1, pd_batch_page(report, pfns[i], &p))
			TH_LOG("pfn %#lx: %s", pfns[i], report);
		EXPECT_STREQ("anon", p.kind);
		EXPECT_STREQ("ok", p.verdict) TH_LOG("%s", report);
		EXPECT_EQ(1, p.user_mappings) TH_LOG("%s", report);
		EXPECT_EQ(1, p.rmap_mappings);
		EXPECT_EQ(1, p.processes);
		EXPECT_EQ(0, p.culprits);
		if (!strcmp(p.level, "page"))
			EXPECT_EQ(kpage_read("kpagecount", pfns[i]), p.mapcount);
		/* In order: after the line of each smaller PFN. */
		for (j = 0; j < nr; j++) {
			struct pd_batch_page o;

			if (pfns[j] < pfns[i] && pd_batch_page(report, pfns[j], &o))
				EXPECT_LT(o.line, p.line);
		}
		check_batch_line_as_alone(_metadata, &p, pfns[i], single);
	}
}

/*
 * A list out of order, with an address twice and two addresses in one
 * page: each page answered once, by one scan.
 */
TEST_F(pd, batch_list)
{
	const int nr = 8;
	char *area = map_anon(nr * self->page_size, MAP_PRIVATE, false);
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[1024];
	unsigned long pfns[8];
	size_t len = 0;
	int i;

	ASSERT_NE(NULL, area);
	ASSERT_NE(NULL, report);
	for (i = 0; i < nr; i++) {
		pfns[i] = pagemap_pfn(0, area + i * self->page_size);
		ASSERT_NE(0, pfns[i]);
	}
	for (i = nr - 1; i >= 0; i--)
		len += snprintf(input + len, sizeof(input) - len, "%#lx ",
				pfns[i] * self->page_size + i * 8);
	len += snprintf(input + len, sizeof(input) - len, "%lu\t%#lx\n",
			pfns[2] * self->page_size, pfns[5] * self->page_size + 1);
	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	EXPECT_EQ(NULL, pd_check_outcome("phys", 0, report, -1));
	check_batch_anon(_metadata, report, pfns, nr, nr, self->report);
	/* Quick: no scan, each page by its reverse map. */
	snprintf(input, sizeof(input), "%#lx %#lx quick",
		 pfns[1] * self->page_size, pfns[0] * self->page_size);
	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	EXPECT_NE(NULL, strstr(report, " scans=0\n")) TH_LOG("%s", report);
	EXPECT_EQ(1, pd_batch_page(report, pfns[0], &(struct pd_batch_page){}));
	free(report);
	munmap(area, nr * self->page_size);
}

/*
 * A range inside one THP: its first 512 pages (all of a 2 MiB one), each
 * "ok", by one scan.
 */
TEST_F(pd, batch_range_thp)
{
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[128];
	unsigned long pfns[512] = {}, nr, i;
	void *area;
	char *thp = pd_map_thp(&area);

	ASSERT_NE(NULL, report);
	if (!thp)
		SKIP(return, "no THP");
	nr = pd_pmd_size() / self->page_size;
	nr = nr < ARRAY_SIZE(pfns) ? nr : ARRAY_SIZE(pfns);
	for (i = 0; i < nr; i++)
		pfns[i] = pagemap_pfn(0, thp + i * self->page_size);
	ASSERT_EQ(pfns[0] + nr - 1, pfns[nr - 1]);
	snprintf(input, sizeof(input), "%#lx-%#lx", pfns[0] * self->page_size,
		 (pfns[0] + nr) * self->page_size - 1);
	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	/* Each page's own query too, for 16 of them: the rest by pagemap. */
	check_batch_anon(_metadata, report, pfns, nr, 16, self->report);
	for (i = 16; i < nr; i++) {
		struct pd_batch_page p;

		ASSERT_EQ(1, pd_batch_page(report, pfns[i], &p));
		EXPECT_STREQ("ok", p.verdict);
		EXPECT_EQ(1, p.user_mappings);
	}
	free(report);
	munmap(area, 2 * pd_pmd_size());
}

/*
 * Two hugetlb pages of the default size (hugetlb_2m), the first 512 pages
 * of each (all of a 2 MiB one) asked for as a range, in one query: each of
 * those pages once, a hugetlb page mapped once, ok, and the first, a middle
 * and the last page of each range as its own query says.
 */
TEST_F(pd, batch_range_hugetlb)
{
	const size_t size = pd_pmd_size();
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[128], *huge;
	long before = read_long(NR_HUGEPAGES);
	unsigned char seen[2][512] = {};
	unsigned long nr = size / self->page_size;
	unsigned long pfn[2], i, k, missing = 0;
	const char *line;
	struct pd_batch_totals t;
	struct pd_batch_page p;

	ASSERT_NE(NULL, report);
	ASSERT_GE(before, 0);
	nr = nr < ARRAY_SIZE(seen[0]) ? nr : ARRAY_SIZE(seen[0]);
	ASSERT_EQ(0, write_long(NR_HUGEPAGES, before + 2));
	huge = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (huge == MAP_FAILED) {
		write_long(NR_HUGEPAGES, before);
		SKIP(return, "no two hugetlb pages of %zu KiB", size >> 10);
	}
	memset(huge, 0x2f, 2 * size);
	for (k = 0; k < 2; k++)
		pfn[k] = pagemap_pfn(0, huge + k * size);
	snprintf(input, sizeof(input), "%#lx-%#lx %#lx-%#lx",
		 pfn[1] * self->page_size, (pfn[1] + nr) * self->page_size - 1,
		 pfn[0] * self->page_size, (pfn[0] + nr) * self->page_size - 1);
	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	ASSERT_EQ(0, pd_parse_batch(report, &t)) TH_LOG("%s", report);
	EXPECT_EQ(2 * nr, t.pages);
	EXPECT_EQ(2 * nr, t.ok) TH_LOG("%s", report);
	/* Each line once, in one pass: the report has 2 * nr of them. */
	for (line = report; line; line = pd_next_line(line)) {
		if (!pd_parse_batch_line(line, &p))
			continue;
		k = p.pfn - pfn[0] < nr ? 0 : 1;
		i = p.pfn - pfn[k];
		ASSERT_LT(i, nr) TH_LOG("pfn %#lx is not asked for", p.pfn);
		EXPECT_EQ(0, seen[k][i]++) TH_LOG("pfn %#lx twice", p.pfn);
		EXPECT_STREQ("hugetlb", p.kind);
		EXPECT_STREQ("ok", p.verdict);
		EXPECT_EQ(1, p.user_mappings);
		EXPECT_EQ(1, p.processes);
		if (i == 0 || i == nr / 2 || i == nr - 1)
			check_batch_line_as_alone(_metadata, &p, p.pfn,
						  self->report);
	}
	for (k = 0; k < 2; k++)
		for (i = 0; i < nr; i++)
			missing += !seen[k][i];
	EXPECT_EQ(0, missing) TH_LOG("pages with no line: %lu", missing);
	munmap(huge, 2 * size);
	EXPECT_EQ(0, write_long(NR_HUGEPAGES, before));
	free(report);
}

/*
 * A range of our own addresses across three VMAs and two unpopulated pages:
 * every page mapped there, listed by address, each answered once.
 */
TEST_F(pd, batch_virt_range)
{
	const int nr = 16;
	char *area = map_anon(nr * self->page_size, MAP_PRIVATE, false);
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[128], want[96];
	unsigned long pfns[16], ps = self->page_size;
	struct pd_batch_totals t;
	struct pd_batch_page p;
	int i, mapped = 0;

	ASSERT_NE(NULL, area);
	ASSERT_NE(NULL, report);
	ASSERT_EQ(0, mprotect(area + 6 * ps, 4 * ps, PROT_READ));
	ASSERT_EQ(0, madvise(area + 2 * ps, ps, MADV_DONTNEED));
	ASSERT_EQ(0, madvise(area + 13 * ps, ps, MADV_DONTNEED));
	for (i = 0; i < nr; i++) {
		pfns[i] = pagemap_pfn(0, area + i * ps);
		mapped += !!pfns[i];
	}
	ASSERT_EQ(nr - 2, mapped);
	snprintf(input, sizeof(input), "%d %p-%p", getpid(), area,
		 area + nr * ps - 1);
	ASSERT_EQ(0, pd_query("virt", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	EXPECT_EQ(NULL, pd_check_outcome("virt", 0, report, -1));
	ASSERT_EQ(0, pd_parse_batch(report, &t)) TH_LOG("%s", report);
	EXPECT_EQ(mapped, t.pages);
	EXPECT_EQ(mapped, t.ok) TH_LOG("%s", report);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(!!pfns[i], pd_batch_page(report, pfns[i], &p))
			TH_LOG("page %d: %s", i, report);
		if (!pfns[i])
			continue;
		EXPECT_STREQ("anon", p.kind);
		EXPECT_EQ(1, p.user_mappings);
		snprintf(want, sizeof(want), "%#lx pte, pfn %#lx",
			 (unsigned long)area + i * ps, pfns[i]);
		EXPECT_TRUE(pd_has_line(report, "leaf: ", want)) TH_LOG("%s", report);
	}

	/* Nothing mapped there; a range that ends first; no process's. */
	snprintf(input, sizeof(input), "%d %p-%p", getpid(), area + 2 * ps,
		 area + 3 * ps - 1);
	EXPECT_EQ(-ENXIO, pd_query("virt", input, report, PD_BATCH_REPORT_SIZE));
	snprintf(input, sizeof(input), "%d %p-%p", getpid(), area + ps, area);
	EXPECT_EQ(-EINVAL, pd_query("virt", input, report, PD_BATCH_REPORT_SIZE));
	snprintf(input, sizeof(input), "0 %p-%p", area, area + ps);
	EXPECT_EQ(-EINVAL, pd_query("virt", input, report, PD_BATCH_REPORT_SIZE));
	free(report);
	munmap(area, nr * ps);
}

/* The last range of System RAM that /proc/iomem gives. */
static int iomem_last_ram(unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/iomem", "r");
	struct pd_iomem r;
	int ret = -1;

	if (!f)
		return -1;
	while (pd_iomem_next(f, &r))
		if (pd_iomem_is_ram(&r) && (ret || r.end > *end)) {
			*start = r.start;
			*end = r.end;
			ret = 0;
		}
	fclose(f);
	return ret;
}

/*
 * A range across the end of memory and two that overlap it: the pages
 * without a memory map (as /proc/kpageflags says) said to be no memory in
 * runs, the others answered.
 */
TEST_F(pd, batch_range_past_memory)
{
	unsigned long start, end, pfn, first, last, no_page = 0;
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[128];
	struct pd_batch_totals t;
	struct pd_batch_page p;

	ASSERT_NE(NULL, report);
	ASSERT_EQ(0, iomem_last_ram(&start, &end));
	first = (end + 1) / self->page_size - 4;
	last = first + 8 + 2 * pd_pmd_size() / self->page_size;
	for (pfn = first; pfn <= last; pfn++)
		no_page += pd_pfn_has_no_page(pfn);
	ASSERT_NE(0, no_page);
	snprintf(input, sizeof(input), "%#lx-%#lx %#lx-%#lx",
		 (first + 2) * self->page_size, last * self->page_size + 7,
		 first * self->page_size, (first + 3) * self->page_size);
	ASSERT_EQ(0, pd_query("phys", input, report, PD_BATCH_REPORT_SIZE))
		TH_LOG("%s", report);
	ASSERT_EQ(0, pd_parse_batch(report, &t)) TH_LOG("%s", report);
	EXPECT_EQ(last - first + 1, t.pages);
	EXPECT_EQ(no_page, t.not_memory) TH_LOG("%s", report);
	EXPECT_EQ(t.pages, t.ok + t.partial + t.mismatch + t.not_memory);
	EXPECT_EQ(0, t.mismatch) TH_LOG("%s", report);
	for (pfn = first; pfn <= last; pfn++) {
		int lines = pd_batch_page(report, pfn, &p);

		EXPECT_EQ(!pd_pfn_has_no_page(pfn), lines) TH_LOG("pfn %#lx", pfn);
	}
	EXPECT_TRUE(pd_has_line(report, "batch page: pfn=", " not online memory ("))
		TH_LOG("%s", report);
	free(report);
}

/* Another descriptor, or `cat`, reads the file's latest report. */
TEST_F(pd, read_back_latest)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
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

/* The number of kernel log records from Page Detective after @fd's position. */
static int kmsg_pd_lines(int fd, const char *want)
{
	char rec[2048];
	int lines = 0;
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		char *text;

		rec[n] = '\0';
		rec[strcspn(rec, "\n")] = '\0';
		text = strchr(rec, ';');
		/* "prio,seq,time,flags;text" */
		if (text && !strncmp(text + 1, "page_detective: ", 16) &&
		    (!want || !strcmp(text + 1, want)))
			lines++;
	}
	return lines;
}

static int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* The report goes to the kernel log too, each line prefixed. */
TEST_F(pd, report_in_kernel_log)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	char want[256], *summary;
	int fd = kmsg_open_at_end();

	ASSERT_NE(NULL, page);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	summary = strstr(self->report, "summary: ");
	ASSERT_NE(NULL, summary);
	snprintf(want, sizeof(want), "page_detective: %.*s",
		 (int)strcspn(summary, "\n"), summary);
	EXPECT_EQ(1, kmsg_pd_lines(fd, want)) TH_LOG("no \"%s\" in the log", want);
	close(fd);
	munmap(page, self->page_size);
}

/*
 * Whether @text holds a number that may be a kernel address: in the top
 * 1/256 of the 64-bit space, where every 64-bit kernel's half begins (x86's
 * at 0xff11000000000000 with 5-level paging, 0xffff800000000000 without;
 * arm64's linear map at 0xffff000000000000 with 48-bit VAs).
 */
static bool has_kernel_address(const char *text)
{
	const char *p;

	for (p = strstr(text, "0x"); p; p = strstr(p + 2, "0x"))
		if (strtoull(p, NULL, 16) >= 0xff00000000000000ULL)
			return true;
	return false;
}

/* The page_detective lines in the log from @fd on with a kernel address. */
static int kmsg_kernel_addresses(int fd)
{
	char rec[2048];
	int lines = 0;
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		char *text;

		rec[n] = '\0';
		text = strchr(rec, ';');
		if (text && !strncmp(text + 1, "page_detective: ", 16) &&
		    has_kernel_address(text))
			lines++;
	}
	return lines;
}

/*
 * The file, which only root opens, shows kernel addresses; the kernel log,
 * which others may read and pstore keeps, shows them hashed.
 */
TEST_F(pd, no_kernel_address_in_log)
{
	/* _stext: arm64's kallsyms has no _text. */
	unsigned long text = symbol_address("_stext");
	char input[64];
	int fd = kmsg_open_at_end();

	ASSERT_GE(fd, 0);
	ASSERT_NE(0, text);
	snprintf(input, sizeof(input), "0 0x%lx", text);
	ASSERT_EQ(0, pd_query("virt", input, self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(has_kernel_address(self->report)) TH_LOG("%s", self->report);
	snprintf(input, sizeof(input), "0 0x%lx", text + (1UL << 40));
	pd_query("virt", input, self->report, PD_REPORT_SIZE);
	EXPECT_EQ(0, kmsg_kernel_addresses(fd));
	close(fd);
}

/*
 * The text of each of Page Detective's kernel log records after @fd's
 * position, without the "page_detective: " prefix, a line each, into @buf.
 */
static void kmsg_pd_text(int fd, char *buf, size_t size)
{
	char rec[2048];
	size_t len = 0;
	ssize_t n;

	buf[0] = '\0';
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		char *text;

		rec[n] = '\0';
		rec[strcspn(rec, "\n")] = '\0';
		text = strchr(rec, ';');
		if (!text || strncmp(text + 1, "page_detective: ", 16))
			continue;
		len += snprintf(buf + len, size - len, "%s\n", text + 17);
		if (len >= size)
			break;
	}
}

/* The lines of @text that start with @prefix. */
static int count_lines(const char *text, const char *prefix)
{
	int n = 0;

	for (; *text; text += strcspn(text, "\n") + (text[strcspn(text, "\n")] != 0))
		n += !strncmp(text, prefix, strlen(prefix));
	return n;
}

#define FORGED_PATH "/tmp/pd\nsummary: pfn=0x1 refcount=1 mapcount=1 kernel_mappings=0 user_mappings=1 processes=1 memcg=(none) verdict=ok\nverdict: ok, forged"

/*
 * A file's name and a process's comm are anyone's to choose: a file named
 * "...\nsummary: ... verdict=ok" mapped by a process named "\nverdict: ok"
 * must not add a line to the report or to the log.  Escaped as
 * /proc/PID/mountinfo escapes paths, the report has one summary and one
 * verdict, the true ones, and so has the log.
 */
TEST_F(pd, forged_lines)
{
	char comm[16] = "", *page, *log = malloc(PD_REPORT_SIZE);
	int fd, kmsg = kmsg_open_at_end();
	struct pd_summary s;

	ASSERT_NE(NULL, log);
	ASSERT_GE(kmsg, 0);
	page = map_file(FORGED_PATH, self->page_size, &fd);
	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, prctl(PR_GET_NAME, comm));
	ASSERT_EQ(0, prctl(PR_SET_NAME, "\nverdict: ok"));
	EXPECT_EQ(0, pd_phys(pagemap_pfn(0, page), self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, prctl(PR_SET_NAME, comm));

	EXPECT_EQ(1, count_lines(self->report, "summary: ")) TH_LOG("%s", self->report);
	EXPECT_EQ(1, count_lines(self->report, "verdict: ")) TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_parse_summary(self->report, &s));
	EXPECT_EQ(pagemap_pfn(0, page), s.pfn);
	EXPECT_STREQ("ok", s.verdict);
	/* Each newline written as /proc/PID/mountinfo writes it. */
	EXPECT_NE(NULL, strstr(self->report, "/tmp/pd\\012summary: pfn=0x1 "))
		TH_LOG("%s", self->report);
	EXPECT_NE(NULL, strstr(self->report, "(\\012verdict: ok)")) TH_LOG("%s", self->report);

	kmsg_pd_text(kmsg, log, PD_REPORT_SIZE);
	EXPECT_EQ(1, count_lines(log, "summary: ")) TH_LOG("%s", log);
	EXPECT_EQ(1, count_lines(log, "verdict: ")) TH_LOG("%s", log);
	munmap(page, self->page_size);
	close(fd);
	unlink(FORGED_PATH);
	close(kmsg);
	free(log);
}

/*
 * Nonsense written to the files, again and again: each write fails with
 * EINVAL, and the log gets at most a few lines in a while (printk's
 * default rate limit: ten in five seconds), never a report.
 */
TEST_F(pd, malformed_input_rate_limited)
{
	int i, kmsg = kmsg_open_at_end();
	char *log = malloc(PD_REPORT_SIZE);

	ASSERT_NE(NULL, log);
	ASSERT_GE(kmsg, 0);
	/* A new window of the rate limit (5 s), whatever tests ran before. */
	usleep(5500 * 1000);
	for (i = 0; i < 50; i++)
		EXPECT_EQ(-EINVAL, pd_query(i % 2 ? "virt" : "phys", "nonsense",
					    self->report, PD_REPORT_SIZE));
	kmsg_pd_text(kmsg, log, PD_REPORT_SIZE);
	EXPECT_GE(10, count_lines(log, "")) TH_LOG("%s", log);
	EXPECT_LE(1, count_lines(log, "")) TH_LOG("%s", log);
	EXPECT_EQ(0, count_lines(log, "summary: ")) TH_LOG("%s", log);
	close(kmsg);
	free(log);
}

#define LOG_FULL "/sys/module/page_detective/parameters/log_full"

/*
 * log_full=N: the log gets only the verdict: and summary: lines (PFNs and
 * other processes' addresses and names stay in the root-only file); Y,
 * the default, the whole report.
 */
TEST_F(pd, log_full_or_not)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	char *log = malloc(PD_REPORT_SIZE);
	int kmsg = kmsg_open_at_end();
	FILE *f;

	ASSERT_NE(NULL, page);
	ASSERT_NE(NULL, log);
	ASSERT_GE(kmsg, 0);
	f = fopen(LOG_FULL, "w");
	ASSERT_NE(NULL, f) TH_LOG("no %s", LOG_FULL);
	ASSERT_LT(0, fputs("N", f));
	ASSERT_EQ(0, fclose(f));
	EXPECT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	kmsg_pd_text(kmsg, log, PD_REPORT_SIZE);
	EXPECT_EQ(2, count_lines(log, "")) TH_LOG("%s", log);
	EXPECT_EQ(1, count_lines(log, "verdict: ok")) TH_LOG("%s", log);
	EXPECT_EQ(1, count_lines(log, "summary: ")) TH_LOG("%s", log);
	/* The file has it all. */
	EXPECT_LT(2, count_lines(self->report, ""));

	f = fopen(LOG_FULL, "w");
	ASSERT_NE(NULL, f);
	ASSERT_LT(0, fputs("Y", f));
	ASSERT_EQ(0, fclose(f));
	EXPECT_EQ(0, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	kmsg_pd_text(kmsg, log, PD_REPORT_SIZE);
	EXPECT_EQ(count_lines(self->report, ""), count_lines(log, "")) TH_LOG("%s", log);
	close(kmsg);
	free(log);
	munmap(page, self->page_size);
}

/* A pid with no process: -ESRCH. */
TEST_F(pd, reaped_process)
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

/* A zombie has no memory any more: -ESRCH. */
TEST_F(pd, zombie_process)
{
	pid_t pid = fork();
	siginfo_t info;

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(0);
	ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
	EXPECT_EQ(-ESRCH, pd_virt(pid, (void *)0x400000, self->report,
				  PD_REPORT_SIZE)) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "virt: ", "exiting"));
	waitpid(pid, NULL, 0);
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

/* A user address with pid 0, a kernel address with a pid: -EINVAL. */
TEST_F(pd, address_spaces_mixed)
{
	EXPECT_EQ(-EINVAL, pd_query("virt", "0 0x400000", self->report,
				    PD_REPORT_SIZE));
	EXPECT_EQ(-EINVAL, pd_virt(getpid(), (void *)0xffffffff81000000UL,
				   self->report, PD_REPORT_SIZE));
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

/* A page swapped out: -ENXIO, and its swap entry. */
TEST_F(pd, swapped_out)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	int tries;

	ASSERT_NE(NULL, page);
	if (read_long("/proc/sys/vm/swappiness") < 0 ||
	    !(kpage_read("kpageflags", pagemap_pfn(0, page)) & BIT64(KPF_ANON)))
		SKIP(return, "no anonymous page to swap");
	for (tries = 0; tries < 10; tries++) {
		madvise(page, self->page_size, MADV_PAGEOUT);
		if (pagemap_entry(0, page) & PM_SWAP)
			break;
	}
	if (!(pagemap_entry(0, page) & PM_SWAP))
		SKIP(return, "the page was not swapped out (no swap?)");
	EXPECT_EQ(-ENXIO, pd_virt(getpid(), page, self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "leaf: ", "swap entry"))
		TH_LOG("%s", self->report);
	munmap(page, self->page_size);
}

/* A physical address past the end of memory: -EINVAL, with the reason. */
/* The hwpoisoned child: tells its page, poisons it, stays in SIGBUS. */
static int hwpoison_pipe[2];

static void stay_in_sigbus(int sig)
{
	char byte = 1;

	if (write(hwpoison_pipe[1], &byte, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int poison_own_page(void *page)
{
	unsigned long pfn = pagemap_pfn(0, page);

	signal(SIGBUS, stay_in_sigbus);
	if (write(hwpoison_pipe[1], &pfn, sizeof(pfn)) != sizeof(pfn))
		return 1;
	/* memory_failure() sends the SIGBUS of an access that needs it. */
	madvise(page, pd_page_size(), MADV_HWPOISON);
	return 1;
}

/*
 * A hwpoisoned page: memory offlining ignores its references, so it is
 * described and let go; its process's entry is a hwpoison entry.
 */
TEST_F(pd, hwpoisoned_page)
{
	char *page = map_anon(self->page_size, MAP_PRIVATE, false);
	struct pd_summary sum;
	unsigned long pfn;
	pid_t child;
	char byte;

	if (!pd_kernel_config("MEMORY_FAILURE")[0])
		SKIP(return, "no CONFIG_MEMORY_FAILURE");
	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, pipe(hwpoison_pipe));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		memset(page, 0x11, pd_page_size());
		_exit(poison_own_page(page));
	}
	ASSERT_EQ(sizeof(pfn), read(hwpoison_pipe[0], &pfn, sizeof(pfn)));
	ASSERT_EQ(1, read(hwpoison_pipe[0], &byte, 1));

	ASSERT_EQ(-ENXIO, pd_virt(child, page, self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "leaf: ", "hwpoison entry"))
		TH_LOG("%s", self->report);
	ASSERT_EQ(0, pd_phys(pfn, self->report, PD_REPORT_SIZE));
	ASSERT_EQ(0, pd_parse_summary(self->report, &sum));
	EXPECT_TRUE(pd_has_line(self->report, "folio: not kept pinned: ",
				"hwpoisoned")) TH_LOG("%s", self->report);
	EXPECT_TRUE(pd_has_line(self->report, "user: ", "(hwpoison entry, not counted)"))
		TH_LOG("%s", self->report);
	EXPECT_STREQ("ok", sum.verdict) TH_LOG("%s", self->report);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	munmap(page, self->page_size);
}

TEST_F(pd, phys_beyond_memory)
{
	EXPECT_EQ(-EINVAL, pd_query("phys", "0x7fffffff000000", self->report,
				    PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "pfn ", "beyond the end of memory"))
		TH_LOG("%s", self->report);
}

/*
 * A physical address in a hole without a memory map: a 128 MiB section
 * that /proc/iomem has no System RAM in, below the end of memory.
 */
TEST_F(pd, phys_in_hole)
{
	const unsigned long section = 128UL << 20;
	unsigned long ram[64][2], last = pd_iomem_ram_end(), addr;
	FILE *f = fopen("/proc/iomem", "r");
	struct pd_iomem r;
	char input[64];
	int nr = 0, i;

	ASSERT_NE(NULL, f);
	while (nr < 64 && pd_iomem_next(f, &r))
		if (pd_iomem_is_ram(&r)) {
			ram[nr][0] = r.start;
			ram[nr++][1] = r.end;
		}
	fclose(f);
	for (addr = 0; addr + section <= last; addr += section) {
		for (i = 0; i < nr; i++)
			if (ram[i][0] < addr + section && ram[i][1] >= addr)
				break;
		if (i == nr)
			break;
	}
	if (addr + section > last)
		SKIP(return, "no hole of a whole section below the end of memory");
	snprintf(input, sizeof(input), "0x%lx", addr);
	EXPECT_EQ(-EINVAL, pd_query("phys", input, self->report, PD_REPORT_SIZE));
	EXPECT_TRUE(pd_has_line(self->report, "pfn ", "in a hole"))
		TH_LOG("%s", self->report);
}

/* The lines of @report that start with "kernel: " and name @what. */
static int kernel_lines(const char *report, const char *what)
{
	const char *line;
	char buf[256];
	int n = 0;

	for (line = report; line && *line; line = pd_next_line(line)) {
		snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(line, "\n"), line);
		n += !strncmp(buf, "kernel: ", 8) && strstr(buf, what);
	}
	return n;
}

/*
 * Memory added after boot (the arm64 guests' virtio-mem, harness/boot):
 * the direct map maps its pages where it maps every page, past
 * high_memory on arm64, which leaves it at the end of boot memory.  Each
 * of 16 pages spread over the first such range has one direct map line,
 * and no kernel mapping in no known area ("other").
 */
TEST_F(pd, hot_added_memory)
{
	unsigned long first = 0, last = 0, pfn, answered = 0;
	FILE *f = fopen("/proc/iomem", "r");
	struct pd_iomem r;
	int i;

	ASSERT_NE(NULL, f);
	while (!last && pd_iomem_next(f, &r))
		if (!r.top && pd_iomem_is_ram(&r)) {
			first = r.start / self->page_size;
			last = r.end / self->page_size;
		}
	fclose(f);
	if (!last)
		SKIP(return, "no memory added after boot (the arm64 guests have virtio-mem)");
	for (i = 0; i < 16; i++) {
		pfn = first + (last - first) * i / 15;
		if (pd_phys(pfn, self->report, PD_REPORT_SIZE))
			continue;	/* offline */
		answered++;
		EXPECT_EQ(1, kernel_lines(self->report, " direct map"))
			TH_LOG("%s", self->report);
		EXPECT_EQ(0, kernel_lines(self->report, " other"))
			TH_LOG("%s", self->report);
	}
	EXPECT_LT(0UL, answered);
}

/* ---- Privilege and concurrency --------------------------------------------- */

/* In a child: drop CAP_SYS_ADMIN, or all of root; open must fail. */
static int open_without(void *arg)
{
	bool nobody = arg;
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (nobody) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			return 1;
	} else {
		if (syscall(SYS_capget, &hdr, data))
			return 1;
		data[0].effective &= ~(1U << CAP_SYS_ADMIN);
		data[0].permitted &= ~(1U << CAP_SYS_ADMIN);
		if (syscall(SYS_capset, &hdr, data))
			return 1;
	}
	if (open(PD_DIR "/phys", O_RDWR) >= 0 || open(PD_DIR "/virt", O_RDONLY) >= 0)
		return 2;
	return errno == (nobody ? EACCES : EPERM) ? 0 : 3;
}

TEST_F(pd, refused_without_privilege)
{
	int fd = kmsg_open_at_end();
	struct pd_child child;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pd_child_start(&child, open_without, (void *)false));
	EXPECT_EQ(0, pd_child_end(&child)) TH_LOG("root without CAP_SYS_ADMIN");
	ASSERT_EQ(0, pd_child_start(&child, open_without, (void *)true));
	EXPECT_EQ(0, pd_child_end(&child)) TH_LOG("nobody");
	/* Nothing is logged for a refused open. */
	EXPECT_EQ(0, kmsg_pd_lines(fd, NULL));
	close(fd);
}

#define CONCURRENT_QUERIES 25

/* In a child: query its own page on one descriptor, again and again. */
static int query_own_page(void *arg)
{
	char *page = map_anon(pd_page_size(), MAP_PRIVATE, false);
	char *report = malloc(PD_REPORT_SIZE), input[64];
	unsigned long pfn = pagemap_pfn(0, page);
	struct pd_summary s;
	int fd, i;

	if (!page || !report || !pfn)
		return 1;
	fd = open(PD_DIR "/virt", O_RDWR);
	if (fd < 0)
		return 2;
	snprintf(input, sizeof(input), "%d %p", getpid(), page);
	for (i = 0; i < CONCURRENT_QUERIES; i++) {
		if (write(fd, input, strlen(input)) < 0)
			return 3;
		pd_read_all(fd, report, PD_REPORT_SIZE);
		if (pd_parse_summary(report, &s) || s.pfn != pfn)
			return 4;
	}
	return 0;
}

TEST_F(pd, concurrent_queries_read_their_own)
{
	pid_t pids[2];
	int i, status;

	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			_exit(query_own_page(NULL));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
}

TEST_HARNESS_MAIN
