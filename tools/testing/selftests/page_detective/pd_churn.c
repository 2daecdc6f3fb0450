// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective churn: thousands of queries, by virtual and by physical
 * address, aimed at pages that other processes are freeing, reusing,
 * migrating, splitting and merging meanwhile:
 *
 *  - a forker: children that share its memory copy-on-write, write to it
 *    and exit, some while they are being asked about;
 *  - a mapper: mmap, munmap, mprotect, mremap, MADV_DONTNEED, MADV_FREE,
 *    MADV_COLD and MADV_PAGEOUT on small pages and THPs, KSM-mergeable
 *    pages, page cache it writes and truncates;
 *  - a relayouter: a VMA split at the start of a PTE table and merged
 *    again, over and over, so that a scan that let go of the mmap lock
 *    there comes back to find another VMA starting at the same address;
 *  - the system: THPs split through debugfs split_huge_pages, compaction,
 *    drop_caches, ksmd, NUMA balancing (its PROT_NONE hinting faults and
 *    page migrations, where the kernel has it), and the mapper moved
 *    between memory cgroups that are then removed;
 *  - queriers killed in the middle of a query.
 *
 * Every query must return 0 or a documented errno, and a complete report
 * of the PFN asked about when it returns 0 (some ask about many pages at
 * once: a batch's report, with its totals).  Nobody corrupts memory here:
 * under churn a verdict may be "partial", never "mismatch", which Page
 * Detective only says of a disagreement that survives its re-checks.
 * PD_STRESS_SCALE multiplies the counts.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/prctl.h>

#include "pd_util.h"
#include "../kselftest.h"

#define CHURN_QUERIES	10000
#define REGION_PAGES	512		/* the mapper's churning memory */
#define FORKER_PAGES	64
#define RELAYOUT_BURST	256		/* the relayouter's splits in a row */
#define RECENT		64		/* recent pids and PFNs remembered */
#define CG		"/sys/fs/cgroup"
#define KSM		"/sys/kernel/mm/ksm/"
#define SPLIT		"/sys/kernel/debug/split_huge_pages"
#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"

/* Shared between the processes of the test, read and written with PD_READ/WRITE. */
struct shared {
	int stop;
	pid_t mapper;
	unsigned long region;		/* the mapper's, or 0 */
	pid_t forked[RECENT];		/* children of the forker */
	unsigned long nr_forked;
	unsigned long forker_mem;
	/* What churned, for the figures. */
	unsigned long ops[16];
};

enum op {
	OP_FORK, OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MREMAP, OP_DONTNEED,
	OP_FREE, OP_COLD, OP_PAGEOUT, OP_SPLIT, OP_COMPACT, OP_DROP_CACHES,
	OP_MEMCG_MOVE, OP_MEMCG_RMDIR, OP_TRUNCATE, OP_KILLED_QUERIER,
	OP_RELAYOUT, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"fork+exit", "mmap", "munmap", "mprotect", "mremap", "MADV_DONTNEED",
	"MADV_FREE", "MADV_COLD", "MADV_PAGEOUT", "split_huge_pages",
	"compact_memory", "drop_caches", "memcg move", "memcg rmdir",
	"truncate", "querier killed mid-query", "VMA split+merge bursts",
};

static struct shared *sh;
static unsigned long page_size;

static void op_done(enum op op)
{
	PD_INC(sh->ops[op]);
}

static unsigned long rnd(uint64_t *rng, unsigned long n)
{
	return n ? pd_rand(rng) % n : 0;
}

/*
 * After a churner's work since @since, sleep a random while, as long on
 * average: each churner keeps a CPU busy half of the time at most.  Four
 * of them at full speed would leave the queries they race with a sixth of
 * the guest's two CPUs on the debug kernel, where a fork, an mprotect() or
 * a compaction costs ten times what it does on the default one.
 */
static void pace(uint64_t *rng, double since)
{
	unsigned long worked_us = (pd_now() - since) * 1e6;

	usleep(rnd(rng, 2 * worked_us + 1));
}

/* ---- The churners ------------------------------------------------------ */

/* Fork children that write to shared memory and exit at once. */
static void forker(void)
{
	char *mem = mmap(NULL, FORKER_PAGES * page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t rng = getpid();

	if (mem == MAP_FAILED)
		_exit(1);
	memset(mem, 1, FORKER_PAGES * page_size);
	PD_WRITE(sh->forker_mem, (unsigned long)mem);
	while (!PD_READ(sh->stop)) {
		double since = pd_now();
		pid_t pid = fork();

		if (!pid) {
			unsigned long i, n = rnd(&rng, FORKER_PAGES);

			for (i = 0; i < n; i++)
				mem[rnd(&rng, FORKER_PAGES) * page_size] = 2;
			if (rnd(&rng, 2))
				usleep(rnd(&rng, 2000));
			_exit(0);
		}
		if (pid > 0) {
			PD_WRITE(sh->forked[PD_READ(sh->nr_forked) % RECENT], pid);
			PD_INC(sh->nr_forked);
			waitpid(pid, NULL, 0);
			op_done(OP_FORK);
		}
		pace(&rng, since);
	}
	_exit(0);
}

/* Map, touch, change and unmap memory, small pages and THPs, over and over. */
static void mapper(void)
{
	size_t size = REGION_PAGES * page_size;
	uint64_t rng = getpid();
	int fd = pd_tmpfile(), round;
	char *p, *q;

	PD_WRITE(sh->mapper, getpid());
	while (!PD_READ(sh->stop)) {
		double since = pd_now();
		char *base = mmap(NULL, size + pd_pmd_size(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (base == MAP_FAILED)
			continue;
		op_done(OP_MMAP);
		/* THP-aligned: keep the aligned part only. */
		p = pd_pmd_align(base);
		if (p > base)
			munmap(base, p - base);
		munmap(p + size, base + pd_pmd_size() - p);
		/* Half of the time THPs, KSM-mergeable twins otherwise. */
		if (rnd(&rng, 2)) {
			madvise(p, size, MADV_HUGEPAGE);
			memset(p, 0x77, size);
		} else {
			madvise(p, size, MADV_NOHUGEPAGE);
			memset(p, 0x33, size);
			madvise(p, size, MADV_MERGEABLE);
		}
		PD_WRITE(sh->region, (unsigned long)p);
		for (round = 0; round < 8 && !PD_READ(sh->stop); round++) {
			size_t off = rnd(&rng, REGION_PAGES) * page_size;
			size_t len = (1 + rnd(&rng, REGION_PAGES / 4)) * page_size;

			if (off + len > size)
				len = size - off;
			switch (rnd(&rng, 7)) {
			case 0:
				madvise(p + off, len, MADV_DONTNEED);
				op_done(OP_DONTNEED);
				break;
			case 1:
				madvise(p + off, len, MADV_FREE);
				op_done(OP_FREE);
				break;
			case 2:
				madvise(p + off, len, MADV_COLD);
				op_done(OP_COLD);
				break;
			case 3:
				madvise(p + off, len, MADV_PAGEOUT);
				op_done(OP_PAGEOUT);
				break;
			case 4:
				mprotect(p + off, len, PROT_READ);
				op_done(OP_MPROTECT);
				mprotect(p + off, len, PROT_READ | PROT_WRITE);
				break;
			case 5:
				if (fd < 0 || ftruncate(fd, 0) || ftruncate(fd, len))
					break;
				op_done(OP_TRUNCATE);
				q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
				if (q != MAP_FAILED) {
					memset(q, 0x55, len);
					munmap(q, len);
				}
				break;
			default:
				/* Touch it again, to fault pages back in. */
				memset(p + off, round, len);
			}
			pace(&rng, since);
			since = pd_now();
		}
		/* Move it onto a place reserved for it, and drop it. */
		q = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q != MAP_FAILED) {
			PD_WRITE(sh->region, 0);
			if (mremap(p, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, q) == q) {
				op_done(OP_MREMAP);
				p = q;
			} else {
				munmap(q, size);
			}
		}
		PD_WRITE(sh->region, 0);
		munmap(p, size);
		op_done(OP_MUNMAP);
		pace(&rng, since);
	}
	_exit(0);
}

/*
 * Split a VMA at the start of a PTE table, a page touched there, into a
 * VMA of that one page and the rest, and merge them again, in bursts.
 * Each mprotect() waits for the mmap lock, so that a scan of this process
 * lets go of it at every PMD meanwhile, that one included, and comes back
 * to the other layout.
 */
static void relayouter(void)
{
	int rw = PROT_READ | PROT_WRITE, k;
	uint64_t rng = getpid();
	char *area, *table;

	area = mmap(NULL, 2 * pd_pmd_size(), rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		_exit(1);
	table = pd_pmd_align(area);
	/* A PTE table, not a THP, whose first page is mapped. */
	madvise(area, 2 * pd_pmd_size(), MADV_NOHUGEPAGE);
	*table = 1;
	while (!PD_READ(sh->stop)) {
		double since = pd_now();

		for (k = 0; k < RELAYOUT_BURST; k++) {
			mprotect(table, page_size, PROT_READ);
			mprotect(table, page_size, rw);
		}
		op_done(OP_RELAYOUT);
		pace(&rng, since);
	}
	_exit(0);
}

/* Split, compact, drop caches and move the mapper between cgroups. */
static void system_churner(void)
{
	uint64_t rng = getpid();
	bool memcg = !pd_write_file(CG "/cgroup.subtree_control", "+memory");
	char path[64], val[96];
	unsigned long gen = 0;

	while (!PD_READ(sh->stop)) {
		unsigned long region = PD_READ(sh->region);
		pid_t mapper = PD_READ(sh->mapper);
		double since = pd_now();

		switch (rnd(&rng, 6)) {
		case 0:
			/* The mapper's THPs, or now and then every THP. */
			if (region && rnd(&rng, 8))
				snprintf(val, sizeof(val), "%d,0x%lx,0x%lx", mapper,
					 region, region + REGION_PAGES * page_size);
			else
				snprintf(val, sizeof(val), "1");
			if (!pd_write_file(SPLIT, val))
				op_done(OP_SPLIT);
			break;
		case 1:
			if (!pd_write_file("/proc/sys/vm/compact_memory", "1"))
				op_done(OP_COMPACT);
			break;
		case 2:
			if (!pd_write_file("/proc/sys/vm/drop_caches", rnd(&rng, 2) ? "1" : "3"))
				op_done(OP_DROP_CACHES);
			break;
		default:
			/* A new cgroup for the mapper; the old one goes. */
			if (!memcg || !mapper)
				break;
			snprintf(path, sizeof(path), CG "/pd_churn.%lu", ++gen);
			if (mkdir(path, 0755))
				break;
			snprintf(val, sizeof(val), "%s/cgroup.procs", path);
			snprintf(path, sizeof(path), "%d", mapper);
			if (!pd_write_file(val, path))
				op_done(OP_MEMCG_MOVE);
			usleep(rnd(&rng, 20000));
			pd_write_file(CG "/cgroup.procs", path);
			snprintf(path, sizeof(path), CG "/pd_churn.%lu", gen);
			if (!rmdir(path))
				op_done(OP_MEMCG_RMDIR);
		}
		pace(&rng, since);
	}
	_exit(0);
}

/* A querier that is killed at a random moment, query or not. */
static void doomed_querier(unsigned long pfn)
{
	char input[64];
	int fd = open(PD_DIR "/phys", O_WRONLY);

	if (fd < 0)
		_exit(1);
	snprintf(input, sizeof(input), "0x%lx", pfn * page_size);
	for (;;)
		if (write(fd, input, strlen(input)) < 0 && errno != EINTR &&
		    errno != EAGAIN && errno != EINVAL)
			_exit(2);
}

/* ---- The queries --------------------------------------------------------- */

struct tally {
	unsigned long queries, reports, by_errno[6], bad;
	unsigned long virt, phys, batches, exiting_pids, doomed;
	struct pd_verdicts verdicts;
};

static void tally(struct tally *t, const char *file, int err, const char *report,
		  long pfn, const char *what)
{
	const char *why = pd_check_outcome(file, err, report, pfn);

	t->queries++;
	pd_count_verdict(&t->verdicts, report);
	if (!err)
		t->reports++;
	else if (err == -EINVAL)
		t->by_errno[0]++;
	else if (err == -ESRCH)
		t->by_errno[1]++;
	else if (err == -ENXIO)
		t->by_errno[2]++;
	else if (err == -EAGAIN)
		t->by_errno[3]++;
	else if (err == -EINTR)
		t->by_errno[4]++;
	else
		t->by_errno[5]++;
	if (why && t->bad++ < 10)
		pd_info("%s (%s): %d: %s:\n%s", what, file, err, why, report);
}

/* One of the last RECENT of the @nr PFNs seen, or 0. */
static unsigned long recent(const unsigned long *pfns, unsigned long nr, uint64_t *rng)
{
	return nr ? pfns[rnd(rng, nr < RECENT ? nr : RECENT)] : 0;
}

/*
 * Many churned pages in one query: up to eight recent PFNs, one of them
 * twice, and the eight pages from another, as a range.
 */
static int ask_batch(const unsigned long *pfns, unsigned long nr, uint64_t *rng,
		     char *report)
{
	char input[512];
	size_t len = 0;
	unsigned long pfn;
	int i;

	for (i = 0; i < 8 && (unsigned long)i < nr; i++)
		len += snprintf(input + len, sizeof(input) - len, "0x%lx ",
				recent(pfns, nr, rng) * page_size);
	pfn = recent(pfns, nr, rng) ?: 0x1000;
	snprintf(input + len, sizeof(input) - len, "0x%lx-0x%lx", pfn * page_size,
		 (pfn + 8) * page_size - 1);
	return pd_query("phys", input, report, PD_BATCH_REPORT_SIZE);
}

static pid_t start(void (*fn)(void))
{
	pid_t pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn();
	}
	return pid;
}

int main(void)
{
	unsigned long n = pd_stress_count(CHURN_QUERIES), i;
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[96];
	long ksm_run = pd_read_long(KSM "run");
	long numa_balancing = pd_read_long(NUMA_BALANCING);
	uint64_t rng = time(NULL);
	double t_start = pd_now();
	unsigned long pfns[RECENT] = {}, nr_pfns = 0;
	pid_t churners[4];
	struct tally t = {};
	double t0;
	const char *why;
	bool fail;
	int err, k;

	page_size = pd_page_size();
	ksft_print_header();
	why = pd_missing(&fail);
	if (why[0]) {
		if (fail)
			ksft_exit_fail_msg("%s\n", why);
		ksft_exit_skip("%s\n", why);
	}
	ksft_set_plan(5);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || !report)
		ksft_exit_fail_msg("setup failed\n");
	pd_info("scale %g, seed %#llx\n", pd_stress_scale(), (unsigned long long)rng);

	if (ksm_run >= 0) {
		pd_write_file(KSM "pages_to_scan", "1000");
		pd_write_file(KSM "sleep_millisecs", "20");
		pd_write_file(KSM "run", "1");
	}
	if (numa_balancing >= 0)
		pd_write_file(NUMA_BALANCING, "1");
	churners[0] = start(forker);
	churners[1] = start(mapper);
	churners[2] = start(system_churner);
	churners[3] = start(relayouter);
	while (!PD_READ(sh->region) || !PD_READ(sh->nr_forked))
		usleep(10000);

	t0 = pd_now();
	for (i = 0; i < n; i++) {
		unsigned long region = PD_READ(sh->region), addr, pfn;
		pid_t pid;

		switch (i % 8) {
		case 0:
		case 1:
		case 2:
			/* The mapper's churning memory, by virtual address. */
			pid = PD_READ(sh->mapper);
			addr = region + rnd(&rng, REGION_PAGES) * page_size;
			pfn = pagemap_pfn(pid, (void *)addr);
			if (pfn)
				pfns[nr_pfns++ % RECENT] = pfn;
			err = pd_virt(pid, (void *)addr, report, PD_REPORT_SIZE);
			tally(&t, "virt", err, report, -1, "mapper's page");
			t.virt++;
			break;
		case 3:
			/* A child of the forker: exiting, or gone. */
			pid = PD_READ(sh->forked[(PD_READ(sh->nr_forked) - 1) % RECENT]);
			addr = PD_READ(sh->forker_mem) + rnd(&rng, FORKER_PAGES) * page_size;
			err = pd_virt(pid, (void *)addr, report, PD_REPORT_SIZE);
			tally(&t, "virt", err, report, -1, "forked child's page");
			t.virt++;
			t.exiting_pids += err == -ESRCH;
			break;
		case 4:
		case 5:
		case 6:
			/* PFNs the mapper had: now freed, reused, split or merged. */
			if (i % 32 == 5) {
				err = ask_batch(pfns, nr_pfns, &rng, report);
				tally(&t, "phys", err, report, -1, "churned PFNs, in one batch");
				t.batches++;
				break;
			}
			pfn = recent(pfns, nr_pfns, &rng);
			if (!pfn || i % 16 == 6) {
				addr = region + rnd(&rng, REGION_PAGES) * page_size;
				pfn = pagemap_pfn(PD_READ(sh->mapper), (void *)addr);
			}
			if (!pfn)
				pfn = 0x1000 + rnd(&rng, 0x40000);
			err = pd_phys(pfn, report, PD_REPORT_SIZE);
			tally(&t, "phys", err, report, pfn, "churned PFN");
			t.phys++;
			break;
		default:
			/* Now and then a querier killed mid-query. */
			if (i % 64 == 7 && nr_pfns) {
				pid = fork();
				if (!pid)
					doomed_querier(recent(pfns, nr_pfns, &rng));
				usleep(rnd(&rng, 20000));
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				op_done(OP_KILLED_QUERIER);
				t.doomed++;
			}
			/* The forker's shared memory, by virtual address. */
			addr = PD_READ(sh->forker_mem) + rnd(&rng, FORKER_PAGES) * page_size;
			err = pd_virt(churners[0], (void *)addr, report, PD_REPORT_SIZE);
			tally(&t, "virt", err, report, -1, "forker's page");
			t.virt++;
		}
	}
	PD_WRITE(sh->stop, 1);
	for (k = 0; k < (int)ARRAY_SIZE(churners); k++)
		waitpid(churners[k], NULL, 0);
	if (ksm_run >= 0) {
		snprintf(input, sizeof(input), "%ld", ksm_run);
		pd_write_file(KSM "run", input);
	}
	if (numa_balancing >= 0) {
		snprintf(input, sizeof(input), "%ld", numa_balancing);
		pd_write_file(NUMA_BALANCING, input);
	}

	pd_info("churn: %lu queries (%lu virt, %lu phys, %lu of them batches) in %.1f s\n",
		t.queries, t.virt, t.phys + t.batches, t.batches, pd_now() - t0);
	pd_info("churn: %lu reports, %lu EINVAL, %lu ESRCH (%lu on exiting pids), %lu ENXIO, %lu EAGAIN, %lu EINTR, %lu other\n",
		t.reports, t.by_errno[0], t.by_errno[1], t.exiting_pids,
		t.by_errno[2], t.by_errno[3], t.by_errno[4], t.by_errno[5]);
	for (k = 0; k < NR_OPS; k++)
		pd_info("  churned: %-26s %lu\n", op_name[k], sh->ops[k]);
	pd_info("churn: verdicts %lu ok, %lu partial, %lu mismatch\n",
		t.verdicts.ok, t.verdicts.partial, t.verdicts.mismatch);
	pd_print_mismatches(&t.verdicts);
	pd_print_costs(&t.verdicts);
	pd_info("figures: %lu queries, %lu verdicts ok, %lu partial, %lu mismatch, %.1f s in all\n",
		t.queries, t.verdicts.ok, t.verdicts.partial,
		t.verdicts.mismatch, pd_now() - t_start);

	ksft_test_result(t.queries >= n, "churn: %lu queries\n", t.queries);
	ksft_test_result(!t.bad,
			 "churn: every outcome documented, every report complete (%lu not)\n",
			 t.bad);
	/* The churn happened: each kind that this kernel offers, at least once. */
	fail = false;
	for (k = 0; k < NR_OPS; k++) {
		if (sh->ops[k])
			continue;
		if ((k == OP_SPLIT && access(SPLIT, W_OK)) ||
		    ((k == OP_MEMCG_MOVE || k == OP_MEMCG_RMDIR) &&
		     access(CG "/cgroup.subtree_control", W_OK)))
			continue;
		pd_info("never churned: %s\n", op_name[k]);
		fail = true;
	}
	ksft_test_result(!fail, "churn: every kind of churn happened\n");
	ksft_test_result(!t.verdicts.mismatch && t.verdicts.ok,
			 "churn: no mismatch on pages that are only changing (%lu ok, %lu partial, %lu mismatch)\n",
			 t.verdicts.ok, t.verdicts.partial, t.verdicts.mismatch);

	/* Afterwards, a quiet page is described as it is. */
	{
		char *page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct pd_summary s = {};

		memset(page, 9, page_size);
		err = pd_virt(getpid(), page, report, PD_REPORT_SIZE);
		ksft_test_result(!err && !pd_parse_summary(report, &s) &&
				 !strcmp(s.verdict, "ok") && s.mapcount == 1,
				 "churn: afterwards a quiet page gets verdict ok\n");
	}
	ksft_finished();
}
