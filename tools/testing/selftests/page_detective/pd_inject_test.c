// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of Page Detective's corruption injector itself, whatever Page
 * Detective says: each command's raw effect is checked against
 * /proc/self/pagemap and /proc/kpagecount, each undo against the state
 * before, and each error against the documented errno.  The kernel log must
 * stay free of splats however a corrupted process ends (harness/boot scans
 * it): by undo, by munmap of what was corrupted, or by exiting.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pd_util.h"
#include "../kselftest_harness.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102
#endif

FIXTURE(inject)
{
	unsigned long ps;
	char *region;		/* 2 * pd_pmd_size(), of which @win is aligned */
	char *win;		/* pd_pmd_size(), in one PMD: one PTE table */
};

FIXTURE_SETUP(inject)
{
	const char *why;
	bool fail;

	self->ps = pd_page_size();
	self->region = MAP_FAILED;
	why = pd_inject_missing(&fail);
	if (fail)
		ASSERT_EQ(0, 1) TH_LOG("%s", why);
	if (why[0])
		SKIP(return, "%s", why);
	/* Nothing left over from an earlier test of this process. */
	ASSERT_EQ(-ENOENT, pd_inject("undo"));
	self->region = mmap(NULL, 2 * pd_pmd_size(), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->region);
	/* PTEs, not a THP: the commands corrupt order-0 pages. */
	ASSERT_EQ(0, madvise(self->region, 2 * pd_pmd_size(), MADV_NOHUGEPAGE));
	self->win = (char *)(((unsigned long)self->region + pd_pmd_size() - 1) &
			     ~(pd_pmd_size() - 1));
}

FIXTURE_TEARDOWN(inject)
{
	if (self->region != MAP_FAILED)
		munmap(self->region, 2 * pd_pmd_size());
}

/* Page @i of @win, written to (mapped, order-0) if @touch. */
static char *page_of(char *win, int i, bool touch)
{
	char *p = win + i * pd_page_size();

	if (touch)
		memset(p, 0x10 + i, pd_page_size());
	return p;
}

static uint64_t kpagecount(unsigned long pfn)
{
	return kpage_read("kpagecount", pfn);
}

static bool present(const void *addr)
{
	return pagemap_entry(0, addr) & PM_PRESENT;
}

TEST_F(inject, stray_maps_src_page_at_dst)
{
	char *src = page_of(self->win, 0, true), *dst = page_of(self->win, 2, false);
	unsigned long pfn = pagemap_pfn(0, src);
	uint64_t count;

	ASSERT_NE(0, pfn);
	count = kpagecount(pfn);
	EXPECT_EQ(1, count);
	ASSERT_FALSE(present(dst));

	ASSERT_EQ(0, pd_inject("stray %p %p", src, dst));
	EXPECT_EQ(pfn, pagemap_pfn(0, dst));
	EXPECT_EQ(count, kpagecount(pfn));
	/* The same page, through either address (and in the TLB now). */
	EXPECT_EQ(0x10, dst[0]);
	src[1] = 0x55;
	EXPECT_EQ(0x55, dst[1]);
	EXPECT_EQ(pfn, pagemap_pfn(0, src));

	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_FALSE(present(dst));
	EXPECT_EQ(pfn, pagemap_pfn(0, src));
	EXPECT_EQ(count, kpagecount(pfn));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
}

/* Two pages in one PTE table, the second unmapped: a gap in a used table. */
TEST_F(inject, stray_into_gap_outside_every_vma)
{
	char *src = page_of(self->win, 0, true), *gap = page_of(self->win, 1, true);
	unsigned long pfn = pagemap_pfn(0, src);

	ASSERT_EQ(0, munmap(gap, self->ps));
	ASSERT_EQ(0, pd_inject("stray %p %p", src, gap));
	EXPECT_EQ(1, kpagecount(pfn));
	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	EXPECT_EQ(pfn, pagemap_pfn(0, src));
}

/*
 * A stale mapping outlives its source's: SRC unmapped, its page freed,
 * DST still maps it (the use-after-free), until undo clears DST.  SRC lies
 * in another PMD than DST: an unmapping in DST's undoes it, as it could
 * free its PTE table.
 */
TEST_F(inject, stale_outlives_src)
{
	/* DST's PTE table exists: a neighbour in it is mapped. */
	char *dst = pd_map_readonly_file("/tmp/pdi_stale"), *src;
	unsigned long pfn;
	uint64_t count;

	ASSERT_NE(NULL, dst);
	/*
	 * At the start of a PMD range, as DST is at the start of its own: a
	 * plain mmap() may take the gap DST's range leaves after DST.
	 */
	src = pd_mmap_in_pmd(self->ps, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1);
	ASSERT_NE(NULL, src);
	ASSERT_NE((unsigned long)src & ~(pd_pmd_size() - 1),
		  (unsigned long)dst & ~(pd_pmd_size() - 1));
	memset(src, 0x33, self->ps);
	pfn = pagemap_pfn(0, src);
	ASSERT_NE(0, pfn);
	ASSERT_EQ(0, pd_inject("stale %p %p", src, dst));
	EXPECT_EQ(pfn, pagemap_pfn(0, dst));
	ASSERT_EQ(0, munmap(src, self->ps));
	EXPECT_EQ(pfn, pagemap_pfn(0, dst));
	/*
	 * Freed, the page has no mapping that its mapcount counts, unless it
	 * was allocated again meanwhile (the kselftest runner's processes run
	 * too): its new owner then wrote it, zeroes at least, as the stale
	 * mapping shows.
	 */
	count = kpagecount(pfn);
	if (count && dst[0] != 0x33)
		TH_LOG("pfn %#lx allocated again meanwhile: kpagecount %llu not checked",
		       pfn, (unsigned long long)count);
	else
		EXPECT_EQ(0, count);
	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_FALSE(present(dst));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	munmap(dst, 2 * self->ps);
	unlink("/tmp/pdi_stale");
}

/*
 * A stale PTE maps a page someone else owns by then: only where nothing
 * can write through it, not in a writable VMA (a write fault would take
 * that page for this VMA's), not outside every VMA (a mapping could be
 * made over it), and read-only itself.
 */
TEST_F(inject, stale_only_where_never_written)
{
	char *src = page_of(self->win, 0, true), *gap = page_of(self->win, 1, true);
	char *dst = pd_map_readonly_file("/tmp/pdi_stale_ro");

	ASSERT_NE(NULL, dst);
	EXPECT_EQ(-EACCES, pd_inject("stale %p %p", src, page_of(self->win, 2, false)));
	ASSERT_EQ(0, munmap(gap, self->ps));
	EXPECT_EQ(-EACCES, pd_inject("stale %p %p", src, gap));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));

	ASSERT_EQ(0, pd_inject("stale %p %p", src, dst));
	EXPECT_TRUE(present(dst));
	EXPECT_EQ(0x10, dst[0]);
	EXPECT_EQ(0, pd_inject("undo"));
	munmap(dst, 2 * self->ps);
	unlink("/tmp/pdi_stale_ro");
}

/* Fork, and the child's exit status (its exit puts back what it copied). */
static int fork_and_exit(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Write-protect [@addr, @addr + @len) with userfaultfd, or return -1. */
static int uffd_wp_register(void *addr, unsigned long len)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) ||
	    ioctl(uffd, UFFDIO_REGISTER, &reg))
		return -1;
	return uffd;
}

/*
 * fork copies the page tables of a copy-on-write VMA after an invalidation
 * of the parent's range, which undoes the strays in it first; those of a
 * shared VMA it copies only when userfaultfd write-protects it, a guard
 * region is in it, or it maps PFNs, and then with no invalidation at all:
 * a stray or stale entry there would be copied into the child, a reference
 * on a page not its own (in the buddy allocator, for a stale one) that its
 * exit would drop.  The injector refuses those VMAs, and allows a shared
 * one that fork leaves alone.  harness/boot finds any "Bad page" splat.
 */
TEST_F(inject, never_where_fork_copies_unseen)
{
	char *src = page_of(self->win, 0, true), *dst = page_of(self->win, 2, false);
	unsigned long ps = self->ps;
	char *shm, *ro;
	bool guarded;
	int uffd;

	/* Copy-on-write: fork's invalidation undoes the stray. */
	ASSERT_EQ(0, pd_inject("stray %p %p", src, dst));
	EXPECT_EQ(0, fork_and_exit());
	EXPECT_FALSE(present(dst));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));

	/*
	 * Shared, which fork does not copy: allowed, and left alone, SRC
	 * too (a fork's invalidation of SRC would undo the stray).
	 */
	shm = pd_mmap_in_pmd(2 * ps, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1);
	ASSERT_NE(NULL, shm);
	shm[ps] = 1;
	ASSERT_EQ(0, pd_inject("stray %p %p", shm + ps, shm));
	EXPECT_EQ(0, fork_and_exit());
	EXPECT_EQ(pagemap_pfn(0, shm + ps), pagemap_pfn(0, shm));
	EXPECT_EQ(0, pd_inject("undo"));

	/* Shared and write-protected by userfaultfd: fork copies it. */
	uffd = uffd_wp_register(shm, 2 * ps);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd write-protect on shmem: %s",
				  strerror(errno));
	EXPECT_EQ(-EACCES, pd_inject("stray %p %p", shm + ps, shm));
	close(uffd);
	munmap(shm, 2 * ps);

	/* A never-written file mapping with a guard region (7.2 on). */
	ro = pd_map_readonly_file("/tmp/pdi_fork_guard");
	ASSERT_NE(NULL, ro);
	guarded = !madvise(ro + ps, ps, MADV_GUARD_INSTALL);
	if (!guarded)
		TH_LOG("no guard regions in this kernel: %s", strerror(errno));
	if (guarded)
		EXPECT_EQ(-EACCES, pd_inject("stale %p %p", src, ro));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	munmap(ro, 2 * ps);
	unlink("/tmp/pdi_fork_guard");
}

/* In a child: lost, a touch (SIGBUS), undo, the page back as it was. */
static sigjmp_buf lost_touched;

static void on_sigbus(int sig)
{
	siglongjmp(lost_touched, 1);
}

/*
 * @rounds times, @fn(@win) in a new process, each a new mm, which must
 * exit with 0.
 */
static void in_new_processes(struct __test_metadata *_metadata, int rounds,
			     int (*fn)(char *win), char *win)
{
	int i, status;

	for (i = 0; i < rounds; i++) {
		pid_t pid = fork();

		ASSERT_GE(pid, 0);
		if (!pid)
			_exit(fn(win));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status)) TH_LOG("round %d: status %#x", i, status);
		ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("round %d", i);
	}
}

/* lost on page 1 of @win, a touch, undo: 0 if each did as documented. */
static int lose_touch_undo(char *win)
{
	char *page = page_of(win, 1, false);

	memset(page, 0x42, pd_page_size());
	if (pd_inject("lost %p", page))
		return 1;
	signal(SIGBUS, on_sigbus);
	if (!sigsetjmp(lost_touched, 1)) {
		(void)PD_READ(page[0]);
		return 2;	/* a new page was mapped over the lost one */
	}
	if (pd_inject("undo") || page[0] != 0x42)
		return 3;
	return 0;
}

/*
 * lost, then a touch of the address: the fault must not map a new page
 * over the lost mapping, whose page still counts it (mapcount, reference,
 * RSS): the entry is a poison marker, the touch a SIGBUS, and undo puts
 * the page back.  Twenty times, each process exiting after: any count left
 * behind is a "Bad rss-counter state" or "Bad page" splat in the log.
 */
TEST_F(inject, lost_then_touched)
{
	in_new_processes(_metadata, 20, lose_touch_undo, self->win);
}

/* A thread that faults in, zaps and re-protects its own mapping, in a loop. */
struct invalidator {
	char *mem;
	size_t len;
	int rounds;		/* done so far */
	bool stop;
};

static void *invalidate_in_a_loop(void *arg)
{
	struct invalidator *inv = arg;

	while (!__atomic_load_n(&inv->stop, __ATOMIC_RELAXED)) {
		memset(inv->mem, 1, inv->len);
		/* A zap under the VMA's lock, then two under the mmap lock. */
		madvise(inv->mem, inv->len, MADV_DONTNEED);
		mprotect(inv->mem, inv->len, PROT_READ);
		mprotect(inv->mem, inv->len, PROT_READ | PROT_WRITE);
		__atomic_add_fetch(&inv->rounds, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * In a new mm whose threads invalidate without a pause: the first command
 * subscribes, amid them, then stray and undo, eight times.  0 if all went
 * as documented.
 */
static int stray_amid_invalidations(char *win)
{
	struct invalidator inv[2];
	char *a = page_of(win, 0, true), *c = page_of(win, 2, false);
	pthread_t thread[2];
	int i, ret = 0;

	for (i = 0; i < 2; i++) {
		inv[i] = (struct invalidator){ .len = 64 * pd_page_size() };
		inv[i].mem = mmap(NULL, inv[i].len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (inv[i].mem == MAP_FAILED ||
		    pthread_create(&thread[i], NULL, invalidate_in_a_loop, &inv[i]))
			return 1;
	}
	for (i = 0; i < 2; i++)
		while (!__atomic_load_n(&inv[i].rounds, __ATOMIC_ACQUIRE))
			sched_yield();
	for (i = 0; i < 8 && !ret; i++) {
		if (pd_inject("stray %p %p", a, c) || c[0] != 0x10)
			ret = 2;
		else if (pd_inject("undo") || present(c))
			ret = 3;
	}
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&inv[i].stop, true, __ATOMIC_RELAXED);
		pthread_join(thread[i], NULL);
	}
	return ret;
}

/*
 * No invalidation can span the injector's subscription to an mm (its
 * mm_take_all_locks() excludes every invalidator), so no invalidation's
 * end can cancel the wait of a corruption for another in flight: tried
 * thirty times, each in a new mm subscribed to while two of its threads
 * zap and re-protect their memory.  The injector warns about an end whose
 * start it did not see; harness/boot finds the warning, and any "Bad
 * rss-counter state" or "Bad page" that a stray left behind would cause.
 */
TEST_F(inject, subscribed_while_invalidating)
{
	in_new_processes(_metadata, 30, stray_amid_invalidations, self->win);
}

/* A page of a new memfd, mapped shared and written; NULL on failure. */
static char *memfd_page(size_t ps, int *fd)
{
	char *page;

	*fd = memfd_create("pdi", 0);
	if (*fd < 0 || ftruncate(*fd, ps))
		return NULL;
	page = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (page == MAP_FAILED)
		return NULL;
	page[0] = 1;
	return page;
}

/*
 * lock holds a folio's lock for at most PDI_LOCK_MAX (10 s): a write() to
 * the page, which waits for the lock unkillably, then goes through.
 */
TEST_F(inject, lock_let_go_in_time)
{
	int fd, status = 0, waited;
	char *page = memfd_page(self->ps, &fd);
	pid_t pid;

	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, pd_inject("lock %p", page));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(pwrite(fd, "x", 1, 0) == 1 ? 0 : 1);
	for (waited = 0; waited < 30; waited++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		sleep(1);
	}
	/* Let go of it ourselves if the injector did not, so that the child ends. */
	if (waited == 30) {
		pd_inject("undo");
		waitpid(pid, &status, 0);
	}
	EXPECT_LT(waited, 30) TH_LOG("the folio lock was still held after 30 s");
	EXPECT_GE(waited, 5) TH_LOG("the write did not wait for the lock");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ('x', page[0]);
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	munmap(page, self->ps);
	close(fd);
}

TEST_F(inject, lost_clears_pte_only)
{
	char *addr = page_of(self->win, 3, true);
	unsigned long pfn = pagemap_pfn(0, addr);
	uint64_t count = kpagecount(pfn);

	ASSERT_NE(0, pfn);
	ASSERT_EQ(0, pd_inject("lost %p", addr));
	/* Not touched until undone: a fault would map a new page. */
	EXPECT_FALSE(present(addr));
	EXPECT_EQ(count, kpagecount(pfn));

	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_EQ(pfn, pagemap_pfn(0, addr));
	EXPECT_EQ(count, kpagecount(pfn));
	EXPECT_EQ(0x13, addr[0]);
}

TEST_F(inject, mapcount_raised_by_one)
{
	char *addr = page_of(self->win, 0, true);
	unsigned long pfn = pagemap_pfn(0, addr);
	uint64_t count = kpagecount(pfn);

	ASSERT_EQ(0, pd_inject("mapcount %p", addr));
	EXPECT_EQ(count + 1, kpagecount(pfn));
	ASSERT_EQ(0, pd_inject("mapcount 0x%lx", (unsigned long)addr));
	EXPECT_EQ(count + 2, kpagecount(pfn));
	EXPECT_EQ(pfn, pagemap_pfn(0, addr));

	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_EQ(count, kpagecount(pfn));
}

/*
 * mm_id wants a large folio whose per-mm mapcounts (CONFIG_MM_ID, which
 * 6.12 has not) count another mm too: not a small page, nor a THP that
 * only this process maps.
 */
TEST_F(inject, mm_id_refused_without_another_mm)
{
	int expect = pd_kernel_version() >= 700 ? -ENXIO : -EOPNOTSUPP;
	char *small = page_of(self->win, 0, true), *thp;
	void *area = NULL;

	EXPECT_EQ(expect, pd_inject("mm_id %p", small));
	thp = pd_map_thp(&area);
	if (thp) {
		/* Mapped by PTEs, which is what the command reads. */
		ASSERT_EQ(0, mprotect(thp + self->ps, self->ps, PROT_READ));
		EXPECT_EQ(expect, pd_inject("mm_id %p", thp + 2 * self->ps));
	}
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	if (area)
		munmap(area, 2 * pd_pmd_size());
}

/* No counter of userspace shows the reference: undo must be taken. */
TEST_F(inject, ref_taken_and_dropped)
{
	char *addr = page_of(self->win, 0, true);
	unsigned long pfn = pagemap_pfn(0, addr);

	ASSERT_EQ(0, pd_inject("ref %lu", (unsigned long)addr));
	EXPECT_EQ(1, kpagecount(pfn));
	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	EXPECT_EQ(pfn, pagemap_pfn(0, addr));
}

/* Undo takes back every kind at once, newest first. */
TEST_F(inject, undo_restores_each)
{
	char *a = page_of(self->win, 0, true), *b = page_of(self->win, 1, true);
	char *c = page_of(self->win, 2, false), *d = page_of(self->win, 3, false);
	unsigned long pa = pagemap_pfn(0, a), pb = pagemap_pfn(0, b);

	ASSERT_EQ(0, pd_inject("lost %p", b));
	/* b's PTE holds a poison marker now: no stray can take it. */
	EXPECT_EQ(-EEXIST, pd_inject("stray %p %p", a, b));
	ASSERT_EQ(0, pd_inject("stray %p %p", a, c));
	ASSERT_EQ(0, pd_inject("stray %p %p", a, d));
	ASSERT_EQ(0, pd_inject("mapcount %p", a));
	ASSERT_EQ(0, pd_inject("ref %p", a));
	EXPECT_FALSE(present(b));
	EXPECT_EQ(pa, pagemap_pfn(0, c));
	EXPECT_EQ(pa, pagemap_pfn(0, d));
	EXPECT_EQ(2, kpagecount(pa));
	EXPECT_EQ(1, kpagecount(pb));

	EXPECT_EQ(0, pd_inject("undo"));
	EXPECT_EQ(pa, pagemap_pfn(0, a));
	EXPECT_EQ(pb, pagemap_pfn(0, b));
	EXPECT_FALSE(present(c));
	EXPECT_FALSE(present(d));
	EXPECT_EQ(1, kpagecount(pa));
	EXPECT_EQ(1, kpagecount(pb));
	EXPECT_EQ(0x11, b[0]);
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
}

TEST_F(inject, errors)
{
	char *page = page_of(self->win, 0, true), *none = page_of(self->win, 1, false);
	char *zero = page_of(self->win, 4, false);
	char *gone, *fresh = mmap(NULL, 3 * pd_pmd_size(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const char * const malformed[] = {
		"", "\n", "bogus", "stray", "stray 0x1000", "lost", "undo now",
		"lost 0x1000 0x2000", "stray 0x1000 0x2000 0x3000", "LOST 0x1000",
		"lost -4096", "lost +4096", "lost 0x", "lost 4096x", "lost 0x1g000",
		"lost 99999999999999999999999", "ref\t", "mapcount 0x1000 quick",
		"lock", "lock 0x1000 0x2000",
	};
	unsigned int i;

	/* A PMD of a VMA never touched: no PTE table.  A PMD of no VMA. */
	ASSERT_NE(MAP_FAILED, fresh);
	fresh = (char *)(((unsigned long)fresh + pd_pmd_size() - 1) & ~(pd_pmd_size() - 1));
	gone = mmap(NULL, self->ps, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, self->ps));

	for (i = 0; i < ARRAY_SIZE(malformed); i++) {
		EXPECT_EQ(-EINVAL, pd_inject("%s", malformed[i]))
			TH_LOG("'%s'", malformed[i]);
	}
	/* Not page aligned; kernel addresses; past TASK_SIZE. */
	EXPECT_EQ(-EINVAL, pd_inject("lost %p", page + 1));
	EXPECT_EQ(-EINVAL, pd_inject("stray %p %p", page, none + 8));
	EXPECT_EQ(-EINVAL, pd_inject("mapcount 0xffff888000000000"));
	EXPECT_EQ(-EINVAL, pd_inject("stray %p 0xffffffff81000000", page));
	EXPECT_EQ(-EINVAL, pd_inject("ref %#lx", pd_task_size_max()));

	/* No page mapped: none, the zero page, no VMA at all. */
	EXPECT_EQ(0, zero[0]);
	EXPECT_EQ(-ENXIO, pd_inject("lost %p", none));
	EXPECT_EQ(-ENXIO, pd_inject("mapcount %p", zero));
	EXPECT_EQ(-ENXIO, pd_inject("ref %p", gone));
	EXPECT_EQ(-ENXIO, pd_inject("lock %p", none));
	EXPECT_EQ(-ENXIO, pd_inject("stray %p %p", none, page_of(self->win, 5, false)));
	EXPECT_EQ(-ENXIO, pd_inject("stray %p %p", zero, page_of(self->win, 5, false)));

	/* DST taken. */
	EXPECT_EQ(-EEXIST, pd_inject("stray %p %p", page, page));
	EXPECT_EQ(-EEXIST, pd_inject("stray %p %p", page, zero));

	/* No PTE table at DST. */
	EXPECT_EQ(-ENOENT, pd_inject("stray %p %p", page, fresh));
	EXPECT_EQ(-ENOENT, pd_inject("stray %p %p", page, fresh + pd_pmd_size() - self->ps));

	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	EXPECT_EQ(1, kpagecount(pagemap_pfn(0, page)));
}

/* A gap whose PMD no VMA shares: its PTE table could go at any time. */
TEST_F(inject, stray_into_gap_without_vma)
{
	char *src = page_of(self->win, 0, true);
	char *hole = mmap(NULL, 3 * pd_pmd_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst;

	ASSERT_NE(MAP_FAILED, hole);
	dst = (char *)(((unsigned long)hole + pd_pmd_size() - 1) & ~(pd_pmd_size() - 1));
	ASSERT_EQ(0, munmap(hole, 3 * pd_pmd_size()));
	EXPECT_EQ(-ENOENT, pd_inject("stray %p %p", src, dst));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
}

/* In a child: drop CAP_SYS_ADMIN; opening the file must fail. */
static int open_without_sys_admin(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return 1;
	data[0].effective &= ~(1U << CAP_SYS_ADMIN);
	data[0].permitted &= ~(1U << CAP_SYS_ADMIN);
	if (syscall(SYS_capset, &hdr, data))
		return 1;
	if (open(PDI_FILE, O_WRONLY) >= 0)
		return 2;
	return errno == EPERM ? 0 : 3;
}

TEST_F(inject, refused_without_sys_admin)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(open_without_sys_admin());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A child corrupts its address space with every kind and exits without
 * undo: the mmu notifier's release undoes it all before exit_mmap()
 * unmaps anything.  The page the child shares with us through a memfd
 * ends mapped once, by us: its raised mapcount went with the child.
 */
TEST_F(inject, exit_without_undo)
{
	int fd, status;
	char *shared = memfd_page(self->ps, &fd);
	unsigned long pfn;
	pid_t pid;

	ASSERT_NE(NULL, shared);
	pfn = pagemap_pfn(0, shared);
	ASSERT_EQ(1, kpagecount(pfn));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char *a = page_of(self->win, 0, true), *b = page_of(self->win, 1, true);
		char *c = page_of(self->win, 2, false), *d = page_of(self->win, 3, true);

		shared[1] = 2;
		if (pd_inject("mapcount %p", shared) ||
		    pd_inject("mapcount %p", a) || pd_inject("lost %p", b) ||
		    pd_inject("stray %p %p", a, c) || pd_inject("ref %p", d) ||
		    pd_inject("ref %p", shared) || c[0] != 0x10 ||
		    kpagecount(pfn) != 3)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(1, kpagecount(pfn));
	EXPECT_EQ(2, shared[1]);
	munmap(shared, self->ps);
	close(fd);
}

/* The same, killed: release runs just the same. */
TEST_F(inject, killed_without_undo)
{
	int ready[2], status;
	char byte;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char *a = page_of(self->win, 0, true), *b = page_of(self->win, 1, true);
		char *c = page_of(self->win, 2, false);

		close(ready[0]);
		if (pd_inject("lost %p", b) || pd_inject("stray %p %p", a, c) ||
		    pd_inject("mapcount %p", a) || write(ready[1], "", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &byte, 1));
	close(ready[0]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
}

/*
 * munmap of what was corrupted undoes it first, by the notifier's
 * invalidate_range_start: the memfd page mapped twice keeps the one
 * mapping left, counted once.
 */
TEST_F(inject, munmap_undoes_first)
{
	int fd = memfd_create("pdi", 0);
	char *one, *two, *a, *b, *c, *d;
	unsigned long pfn;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, self->ps));
	one = mmap(NULL, self->ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	two = mmap(NULL, self->ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, one);
	ASSERT_NE(MAP_FAILED, two);
	one[0] = 1;
	EXPECT_EQ(1, two[0]);
	pfn = pagemap_pfn(0, one);
	ASSERT_EQ(2, kpagecount(pfn));

	ASSERT_EQ(0, pd_inject("mapcount %p", one));
	ASSERT_EQ(0, pd_inject("ref %p", one));
	EXPECT_EQ(3, kpagecount(pfn));
	ASSERT_EQ(0, munmap(one, self->ps));
	EXPECT_EQ(1, kpagecount(pfn));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));

	/* lost, and a stray at DST, each in a range that goes. */
	a = page_of(self->win, 0, true);
	b = page_of(self->win, 1, true);
	c = page_of(self->win, 2, false);
	ASSERT_EQ(0, pd_inject("lost %p", b));
	ASSERT_EQ(0, pd_inject("stray %p %p", a, c));
	ASSERT_EQ(0, munmap(b, 2 * self->ps));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
	EXPECT_EQ(1, kpagecount(pagemap_pfn(0, a)));

	/* A stray whose SRC goes: undone before SRC's page can be freed. */
	d = page_of(self->win, 4, false);
	ASSERT_EQ(0, pd_inject("stray %p %p", a, d));
	EXPECT_EQ(0x10, d[0]);
	ASSERT_EQ(0, munmap(a, self->ps));
	EXPECT_FALSE(present(d));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));

	munmap(two, self->ps);
	close(fd);
}

/* MADV_DONTNEED zaps under the mmap read lock: undone first as well. */
TEST_F(inject, madv_dontneed_undoes_first)
{
	char *a = page_of(self->win, 0, true), *b = page_of(self->win, 1, false);

	ASSERT_EQ(0, pd_inject("mapcount %p", a));
	ASSERT_EQ(0, pd_inject("stray %p %p", a, b));
	ASSERT_EQ(0, madvise(a, 2 * self->ps, MADV_DONTNEED));
	EXPECT_FALSE(present(a));
	EXPECT_FALSE(present(b));
	EXPECT_EQ(-ENOENT, pd_inject("undo"));
}

/*
 * rmmod with a process still corrupted undoes its corruptions, from the
 * module's exit: the memfd page the child raised the mapcount of is
 * counted right again while the child lives on.
 */
TEST_F(inject, unload_undoes_all)
{
	int fd = memfd_create("pdi", 0), ready[2], status;
	unsigned long pfn;
	char *shared, byte;
	pid_t pid;

	if (access("/sys/module/page_detective_inject/refcnt", F_OK))
		SKIP(return, "page_detective_inject is not a module");
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, self->ps));
	shared = mmap(NULL, self->ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, shared);
	shared[0] = 1;
	pfn = pagemap_pfn(0, shared);
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char *a = page_of(self->win, 0, true), *b = page_of(self->win, 1, false);

		close(ready[0]);
		shared[1] = 2;
		if (pd_inject("mapcount %p", shared) ||
		    pd_inject("stray %p %p", a, b) || b[0] != 0x10 ||
		    write(ready[1], "", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &byte, 1));
	close(ready[0]);
	EXPECT_EQ(3, kpagecount(pfn));
	EXPECT_EQ(0, system("rmmod page_detective_inject"));
	EXPECT_EQ(2, kpagecount(pfn));
	EXPECT_EQ(0, system("modprobe page_detective_inject"));
	EXPECT_EQ(0, access(PDI_FILE, F_OK));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(1, kpagecount(pfn));
	munmap(shared, self->ps);
	close(fd);
}

TEST_HARNESS_MAIN
