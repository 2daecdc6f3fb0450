// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective hotplug: queries on memory that is taken offline and
 * online again, over and over.
 *
 * The test finds a memory block in /sys/devices/system/memory that can go
 * offline: online, removable, in ZONE_MOVABLE (valid_zones), no page of it
 * reserved at boot, and offline it once to be sure.  A resident process,
 * bound to the block's node, fills the rest of that node's movable memory,
 * so that what it touches next lands in the block: a THP and small pages.
 * Then, in every cycle, the resident touches its memory afresh (into the
 * block, which is the node's only free movable memory), and the test takes
 * the block offline, which migrates the resident's pages out from under
 * the queries, and online again (online_movable).  All the while a querier
 * asks phys about PFNs of the block and about the resident's pages, and
 * virt about the resident's addresses.
 *
 * Every query must get an outcome the documentation allows, and a complete
 * report of the PFN asked about when it returns 0.  A query on the block
 * made wholly while the block is offline must fail with EINVAL and a line
 * saying that the memory is offline; one made wholly while it is online
 * must be answered.  The test itself checks both after each offline and
 * online, and a range of PFNs across the block's start: while the block is
 * offline its pages are counted as not online memory, each with no line of
 * its own; once online, each has its line.  PD_STRESS_SCALE multiplies the
 * cycles.
 *
 * It skips on a kernel without CONFIG_MEMORY_HOTREMOVE, and fails on one
 * with it where no block can go offline (boot with movablecore=, or, on
 * arm64, which will not take boot memory offline, add memory: virtio-mem,
 * as harness/boot does).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "pd_util.h"
#include "../kselftest.h"

#define CYCLES		20
#define MEM		"/sys/devices/system/memory"
#define SMALL_PAGES	256	/* the resident's small pages */
#define FILL_CHUNK	(16UL << 20)
#define OFFLINE_TRIES	10
#define OFFLINE_TIMEOUT	60	/* seconds, for one write of "offline" */
#define MAX_TIMEOUTS	3	/* offlines that time out before the test stops */
#define MPOL_BIND	2

/* The block, found by find_block(). */
struct block {
	int id;			/* memoryID */
	int node;		/* -1 if the kernel has no NUMA */
	unsigned long start_pfn, nr_pages;
};

/* Shared between the test, the resident and the querier. */
struct shared {
	int stop;
	/* The block is offline (1) or online (2) now, 0 while it changes. */
	int state;
	unsigned long generation;	/* of state, incremented at each change */
	/* The resident: its pid, its memory, and what the test asks of it. */
	pid_t resident;
	unsigned long thp, small;	/* addresses */
	unsigned long touch_asked, touch_done;
	unsigned long in_block;		/* resident pages in the block, last touch */
	unsigned long filler_bytes;
	/* The querier's tally. */
	unsigned long queries, phys_block, phys_resident, virt;
	unsigned long reports, by_errno[6], offline_einval, bad;
	unsigned long checked_offline, checked_online, wrong_offline, wrong_online;
	/* The querier's kernel stack, when an offline does not finish. */
	char stack[4096];
};

static struct shared *sh;
static unsigned long page_size;
static struct block blk;
static bool block_taken;	/* offlined by us: online it again at exit */

static int read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int block_attr(int id, const char *attr, char *buf, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), MEM "/memory%d/%s", id, attr);
	return read_str(path, buf, size);
}

static int block_set_state(int id, const char *state)
{
	char path[128];

	snprintf(path, sizeof(path), MEM "/memory%d/state", id);
	return pd_write_file(path, state);
}

static void on_alarm(int sig)
{
}

/*
 * Take block @id offline: retried while the kernel says it is busy (a page
 * that is pinned for a moment).  Offlining retries migrating the block's
 * pages until it succeeds or a signal comes: SIGALRM ends a write that
 * takes longer than OFFLINE_TIMEOUT, and then -ETIMEDOUT is returned, at
 * once.  Returns 0 or the last -errno; *@refused counts the failed writes.
 */
static int block_offline(int id, unsigned long *refused)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int tries, err = 0;

	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART */
	for (tries = 0; tries < OFFLINE_TRIES; tries++) {
		alarm(OFFLINE_TIMEOUT);
		err = block_set_state(id, "offline");
		if (err == -EINTR && !alarm(0))
			return -ETIMEDOUT;
		alarm(0);
		if (!err)
			return 0;
		(*refused)++;
		if (err != -EBUSY && err != -EAGAIN && err != -EINTR)
			break;
		usleep(100000);
	}
	return err;
}

/* Online again, in ZONE_MOVABLE, so that it can go offline again. */
static int block_online(int id)
{
	return block_set_state(id, "online_movable");
}

static void put_block_back(void)
{
	char state[32];

	if (block_taken && !block_attr(blk.id, "state", state, sizeof(state)) &&
	    !strcmp(state, "offline"))
		block_online(blk.id);
}

/* The node of block @id: its nodeN link, or -1. */
static int block_node(int id)
{
	char path[128];
	struct dirent *d;
	int node = -1;
	DIR *dir;

	snprintf(path, sizeof(path), MEM "/memory%d", id);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (sscanf(d->d_name, "node%d", &node) == 1)
			break;
	closedir(dir);
	return node;
}

/*
 * How many pages of @nr_pages from @pfn keep their block from going offline
 * and online again: those /proc/kpageflags says are reserved or hwpoisoned.
 * A block with a reserved page cannot go offline; one with a hwpoisoned
 * page (page_detective_test's hwpoisoned_page leaves one, in any block)
 * can, but then never online again: memory_block_online() refuses it with
 * -EHWPOISON.
 */
static unsigned long blocking_pages(unsigned long pfn, unsigned long nr_pages)
{
	size_t size = nr_pages * sizeof(uint64_t);
	uint64_t *flags = malloc(size);
	unsigned long i, blocking = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0 || !flags ||
	    pread(fd, flags, size, pfn * sizeof(uint64_t)) != (ssize_t)size)
		blocking = nr_pages;
	else
		for (i = 0; i < nr_pages; i++)
			blocking += !!(flags[i] & (BIT64(KPF_RESERVED) |
						   BIT64(KPF_HWPOISON)));
	if (fd >= 0)
		close(fd);
	free(flags);
	return blocking;
}

/*
 * Whether the kernel can offline memory: CONFIG_MEMORY_HOTREMOVE, or,
 * without /proc/config.gz, a block whose "removable" says 1 (which it
 * says exactly when the kernel has CONFIG_MEMORY_HOTREMOVE).
 */
static bool kernel_has_hotremove(void)
{
	char buf[8];
	struct dirent *d;
	bool removable = false;
	DIR *dir;
	int id;

	if (!strcmp(pd_kernel_config("MEMORY_HOTREMOVE"), "y"))
		return true;
	dir = opendir(MEM);
	if (!dir)
		return false;
	while (!removable && (d = readdir(dir)))
		if (sscanf(d->d_name, "memory%d", &id) == 1 &&
		    !block_attr(id, "removable", buf, sizeof(buf)))
			removable = !strcmp(buf, "1");
	closedir(dir);
	return removable;
}

/*
 * Find a block that can go offline: online, removable, in ZONE_MOVABLE
 * only, no page reserved; offline it (and online it again) to be sure.
 * 0, or -1 with @why saying what was found.
 */
static int find_block(char *why, size_t size)
{
	unsigned long block_size, movable = 0, clean = 0, refused = 0;
	char buf[64];
	struct dirent *d;
	int id, err = 0;
	DIR *dir;

	if (read_str(MEM "/block_size_bytes", buf, sizeof(buf))) {
		snprintf(why, size, "no " MEM "/block_size_bytes");
		return -1;
	}
	block_size = strtoul(buf, NULL, 16);
	dir = opendir(MEM);
	if (!dir || !block_size) {
		snprintf(why, size, "no " MEM);
		return -1;
	}
	while ((d = readdir(dir))) {
		if (sscanf(d->d_name, "memory%d", &id) != 1 ||
		    block_attr(id, "state", buf, sizeof(buf)) || strcmp(buf, "online") ||
		    block_attr(id, "removable", buf, sizeof(buf)) || strcmp(buf, "1") ||
		    block_attr(id, "valid_zones", buf, sizeof(buf)) || strcmp(buf, "Movable"))
			continue;
		movable++;
		blk.id = id;
		blk.nr_pages = block_size / page_size;
		blk.start_pfn = (unsigned long)id * blk.nr_pages;
		if (blocking_pages(blk.start_pfn, blk.nr_pages))
			continue;
		clean++;
		err = block_offline(id, &refused);
		if (err)
			continue;
		block_taken = true;
		err = block_online(id);
		if (err) {
			snprintf(why, size, "memory%d went offline, but not online again: %s",
				 id, strerror(-err));
			closedir(dir);
			return -1;
		}
		blk.node = block_node(id);
		closedir(dir);
		return 0;
	}
	closedir(dir);
	snprintf(why, size,
		 "no memory block can go offline: %lu online in ZONE_MOVABLE, %lu of them without reserved or hwpoisoned pages, offline refused %lu times (last: %s); boot with movablecore=",
		 movable, clean, refused, err ? strerror(-err) : "none tried");
	return -1;
}

/* ---- The resident ------------------------------------------------------ */

/* The free memory of ZONE_MOVABLE on @node (node 0 without NUMA), or 0. */
static unsigned long movable_free_bytes(int node)
{
	char line[256], want[64];
	unsigned long pages = 0;
	bool zone = false;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "Node %d, zone", node < 0 ? 0 : node);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Node ", 5))
			zone = !strncmp(line, want, strlen(want)) && strstr(line, " Movable");
		else if (zone && sscanf(line, " pages free %lu", &pages) == 1)
			break;
	}
	fclose(f);
	return pages * page_size;
}

static bool pfn_in_block(unsigned long pfn)
{
	return pfn >= blk.start_pfn && pfn < blk.start_pfn + blk.nr_pages;
}

/*
 * Which of the @nr pages from @addr of this process are in the block: the
 * number, and in @in (if not NULL) a flag for each.  One read of pagemap.
 */
static unsigned long pages_in_block(unsigned long addr, unsigned long nr, bool *in)
{
	uint64_t *entries = malloc(nr * sizeof(*entries));
	unsigned long i, n = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0 && entries &&
	    pread(fd, entries, nr * sizeof(*entries), addr / page_size * sizeof(*entries)) ==
	    (ssize_t)(nr * sizeof(*entries))) {
		for (i = 0; i < nr; i++) {
			bool here = (entries[i] & PM_PRESENT) &&
				    pfn_in_block(entries[i] & PM_PFN_MASK);

			if (in)
				in[i] = here;
			n += here;
		}
	}
	if (fd >= 0)
		close(fd);
	free(entries);
	return n;
}

/* An anonymous mapping of @size at a multiple of pd_pmd_size(), or NULL. */
static char *map_aligned(size_t size, int advice)
{
	char *base = mmap(NULL, size + pd_pmd_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *p;

	if (base == MAP_FAILED)
		return NULL;
	p = pd_pmd_align(base);
	if (p > base)
		munmap(base, p - base);
	munmap(p + size, base + pd_pmd_size() - p);
	madvise(p, size, advice);
	return p;
}

/*
 * Fill the node's movable memory that is not the block, THPs first, then
 * small pages (which the allocator takes from smaller free pieces first),
 * until what is touched lands in the block, or @limit bytes are filled.
 * What landed in the block is given back; the rest stays mapped until the
 * resident exits.
 */
static void fill_node(unsigned long limit)
{
	unsigned long filled = 0, nr = FILL_CHUNK / page_size, per_thp, i;
	int advice = MADV_HUGEPAGE;
	bool *in = malloc(nr);
	char *chunk;

	per_thp = pd_pmd_size() / page_size;
	while (in && filled < limit) {
		chunk = map_aligned(FILL_CHUNK, advice);
		if (!chunk)
			break;
		for (i = 0; i < FILL_CHUNK; i += page_size)
			chunk[i] = 1;
		filled += FILL_CHUNK;
		if (!pages_in_block((unsigned long)chunk, nr, in))
			continue;
		/* The block's turn: give back what of the chunk is in it. */
		for (i = 0; i < nr; i++) {
			if (!in[i])
				continue;
			if (advice == MADV_HUGEPAGE && !(i % per_thp)) {
				/* A THP, whole: it is as aligned as the block. */
				madvise(chunk + i * page_size, pd_pmd_size(), MADV_DONTNEED);
				i += per_thp - 1;
			} else {
				madvise(chunk + i * page_size, page_size, MADV_DONTNEED);
			}
		}
		if (advice == MADV_NOHUGEPAGE)
			break;
		advice = MADV_NOHUGEPAGE;
	}
	free(in);
	PD_WRITE(sh->filler_bytes, filled);
}

/* Touch the resident's memory afresh: new pages, from the block if it can. */
static void touch_again(char *thp, char *small)
{
	unsigned long i;

	madvise(thp, pd_pmd_size(), MADV_DONTNEED);
	madvise(small, SMALL_PAGES * page_size, MADV_DONTNEED);
	memset(thp, 0x5a, pd_pmd_size());
	for (i = 0; i < SMALL_PAGES; i++)
		small[i * page_size] = (char)i;
	PD_WRITE(sh->in_block,
		 pages_in_block((unsigned long)thp, pd_pmd_size() / page_size, NULL) +
		 pages_in_block((unsigned long)small, SMALL_PAGES, NULL));
}

static void resident(unsigned long fill_limit)
{
	unsigned long mask, done = 0;
	char *thp, *small;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The block's node only, for this process's pages and page tables. */
	if (blk.node >= 0 && blk.node < 63) {
		mask = 1UL << blk.node;
		syscall(SYS_set_mempolicy, MPOL_BIND, &mask, sizeof(mask) * 8);
	}
	fill_node(fill_limit);
	thp = map_aligned(pd_pmd_size(), MADV_HUGEPAGE);
	small = map_aligned(SMALL_PAGES * page_size, MADV_NOHUGEPAGE);
	if (!thp || !small)
		_exit(1);
	touch_again(thp, small);
	PD_WRITE(sh->thp, (unsigned long)thp);
	PD_WRITE(sh->small, (unsigned long)small);
	while (!PD_READ(sh->stop)) {
		if (PD_READ(sh->touch_asked) != done) {
			touch_again(thp, small);
			done = PD_READ(sh->touch_asked);
			PD_WRITE(sh->touch_done, done);
		}
		usleep(1000);
	}
	_exit(0);
}

/* ---- The querier -------------------------------------------------------- */

static unsigned long rnd(uint64_t *rng, unsigned long n)
{
	return n ? pd_rand(rng) % n : 0;
}

static void tally(int err, const char *file, const char *report, long pfn)
{
	const char *why = pd_check_outcome(file, err, report, pfn);

	PD_INC(sh->queries);
	if (!err)
		PD_INC(sh->reports);
	else if (err == -EINVAL)
		PD_INC(sh->by_errno[0]);
	else if (err == -ESRCH)
		PD_INC(sh->by_errno[1]);
	else if (err == -ENXIO)
		PD_INC(sh->by_errno[2]);
	else if (err == -EAGAIN)
		PD_INC(sh->by_errno[3]);
	else if (err == -EINTR)
		PD_INC(sh->by_errno[4]);
	else
		PD_INC(sh->by_errno[5]);
	if (why && PD_INC(sh->bad) < 10)
		pd_info("%s pfn %#lx: %d: %s:\n%s", file, pfn, err, why, report);
}

/* Whether @report is the one line of a phys query on offline memory. */
static bool says_offline(int err, const char *report)
{
	return err == -EINVAL && strstr(report, "not online memory") &&
	       strstr(report, "offline");
}

/* A phys query on @pfn of the block, checked against the block's state. */
static void query_block_pfn(unsigned long pfn, char *report)
{
	unsigned long gen = PD_READ(sh->generation);
	int state = PD_READ(sh->state), err;

	err = pd_phys(pfn, report, PD_REPORT_SIZE);
	tally(err, "phys", report, pfn);
	PD_INC(sh->phys_block);
	if (says_offline(err, report))
		PD_INC(sh->offline_einval);
	/* The block did not change state during the query. */
	if (!state || PD_READ(sh->generation) != gen)
		return;
	if (state == 1) {
		PD_INC(sh->checked_offline);
		if (!says_offline(err, report) && PD_INC(sh->wrong_offline) < 5)
			pd_info("phys %#lx, block offline: %d:\n%s", pfn, err, report);
	} else {
		PD_INC(sh->checked_online);
		if (err && err != -EAGAIN && err != -EINTR &&
		    PD_INC(sh->wrong_online) < 5)
			pd_info("phys %#lx, block online: %d:\n%s", pfn, err, report);
	}
}

static void querier(void)
{
	char *report = malloc(PD_REPORT_SIZE);
	uint64_t rng = getpid();
	unsigned long i, addr, pfn;
	pid_t pid;
	int err;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!report)
		_exit(1);
	for (i = 0; !PD_READ(sh->stop); i++) {
		pid = PD_READ(sh->resident);
		if (rnd(&rng, 2))
			addr = PD_READ(sh->thp) + rnd(&rng, pd_pmd_size() / page_size) * page_size;
		else
			addr = PD_READ(sh->small) + rnd(&rng, SMALL_PAGES) * page_size;
		switch (i % 4) {
		case 0:
		case 1:
			/* Anywhere in the block: free, the resident's, others'. */
			query_block_pfn(blk.start_pfn + rnd(&rng, blk.nr_pages), report);
			break;
		case 2:
			/* The resident's page: in the block, or migrated out of it. */
			pfn = pagemap_pfn(pid, (void *)addr);
			if (!pfn)
				break;
			if (pfn_in_block(pfn)) {
				query_block_pfn(pfn, report);
			} else {
				err = pd_phys(pfn, report, PD_REPORT_SIZE);
				tally(err, "phys", report, pfn);
			}
			PD_INC(sh->phys_resident);
			break;
		default:
			err = pd_virt(pid, (void *)addr, report, PD_REPORT_SIZE);
			tally(err, "virt", report, -1);
			PD_INC(sh->virt);
		}
	}
	_exit(0);
}

/* ---- The test ----------------------------------------------------------- */

static void set_state(int state)
{
	PD_WRITE(sh->state, 0);
	PD_INC(sh->generation);
	if (state) {
		PD_WRITE(sh->state, state);
		PD_INC(sh->generation);
	}
}

/*
 * A watcher: if the offline has not finished @secs seconds from now, keep
 * what the kernel says the querier @pid is doing (/proc/PID/stack) in
 * sh->stack; by the time the offline is ended, the querier has moved on.
 */
static pid_t watch_querier(pid_t pid, unsigned int secs)
{
	pid_t watcher = fork();
	char path[64];
	size_t len;
	int fd;

	if (watcher)
		return watcher;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sleep(secs);
	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		len = pd_read_all(fd, sh->stack, sizeof(sh->stack));
		close(fd);
		if (!len)
			snprintf(sh->stack, sizeof(sh->stack), "(empty)\n");
	}
	_exit(0);
}

/* @text as "# " lines. */
static void print_lines(const char *text)
{
	const char *line;

	for (line = text; line && *line; line = pd_next_line(line))
		pd_info("  %.*s\n", (int)strcspn(line, "\n"), line);
}

static void end_watcher(pid_t watcher)
{
	if (watcher > 0) {
		kill(watcher, SIGKILL);
		waitpid(watcher, NULL, 0);
	}
}

static double median(double *v, unsigned long n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), pd_cmp_double);
	return v[n / 2];
}

/* The parent's own query on the block's first PFN; 0, or -errno. */
static int query_first_pfn(char *report, int *tries)
{
	int err = -EAGAIN;

	for (*tries = 0; *tries < 10 && err == -EAGAIN; (*tries)++)
		err = pd_phys(blk.start_pfn, report, PD_REPORT_SIZE);
	return err;
}

/*
 * phys of the range of 64 pages each side of the block's start, while the
 * block is @online or not, into @report (PD_BATCH_REPORT_SIZE): 0 if the
 * block's pages are answered as they should be.
 */
static int query_across_block(bool online, char *report)
{
	unsigned long pfn, first = blk.start_pfn - 64, last = blk.start_pfn + 63;
	struct pd_batch_totals t;
	struct pd_batch_page p;
	char input[64];

	snprintf(input, sizeof(input), "%#lx-%#lx", first * page_size,
		 (last + 1) * page_size - 1);
	if (pd_query("phys", input, report, PD_BATCH_REPORT_SIZE) ||
	    pd_parse_batch(report, &t) || t.pages != last - first + 1 ||
	    t.pages != t.ok + t.partial + t.mismatch + t.not_memory)
		return -1;
	if (!online && t.not_memory < last - blk.start_pfn + 1)
		return -1;
	for (pfn = blk.start_pfn; pfn <= last; pfn++)
		if (pd_batch_page(report, pfn, &p) != online)
			return -1;
	return 0;
}

int main(void)
{
	unsigned long cycles = pd_stress_count(CYCLES), c;
	unsigned long offlined = 0, onlined = 0, offline_ok = 0, online_ok = 0;
	unsigned long refused = 0, in_block_min = ~0UL, in_block_sum = 0;
	unsigned long in_block_cycles = 0, fill_limit, timeouts = 0, ran = 0;
	unsigned long n_off = 0, n_on = 0;
	char *report = malloc(PD_BATCH_REPORT_SIZE), why[512];
	double t_start = pd_now(), *t_off, *t_on, t;
	pid_t resident_pid, querier_pid, watcher;
	const char *missing;
	bool fail;
	int err, tries;

	page_size = pd_page_size();
	ksft_print_header();
	missing = pd_missing(&fail);
	if (missing[0]) {
		if (fail)
			ksft_exit_fail_msg("%s\n", missing);
		ksft_exit_skip("%s\n", missing);
	}
	if (!kernel_has_hotremove())
		ksft_exit_skip("the kernel has no CONFIG_MEMORY_HOTREMOVE\n");
	ksft_set_plan(7);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	t_off = calloc(cycles, sizeof(*t_off));
	t_on = calloc(cycles, sizeof(*t_on));
	if (sh == MAP_FAILED || !report || !t_off || !t_on)
		ksft_exit_fail_msg("setup failed\n");
	atexit(put_block_back);

	if (find_block(why, sizeof(why)))
		ksft_exit_fail_msg("%s\n", why);
	ksft_test_result_pass("hotplug: memory%d (node %d, pfn %#lx-%#lx) can go offline\n",
			      blk.id, blk.node, blk.start_pfn,
			      blk.start_pfn + blk.nr_pages - 1);

	/* At most what the node's ZONE_MOVABLE has free, to find the block's turn. */
	fill_limit = movable_free_bytes(blk.node);
	resident_pid = fork();
	if (!resident_pid)
		resident(fill_limit);
	PD_WRITE(sh->resident, resident_pid);
	while (!PD_READ(sh->small) && !waitpid(resident_pid, NULL, WNOHANG))
		usleep(10000);
	if (!PD_READ(sh->small))
		ksft_exit_fail_msg("the resident process failed\n");
	pd_info("resident: %lu MiB of filler, %lu pages in the block, %.1f s\n",
		PD_READ(sh->filler_bytes) >> 20, PD_READ(sh->in_block),
		pd_now() - t_start);
	set_state(2);
	querier_pid = fork();
	if (!querier_pid)
		querier();

	for (c = 0; c < cycles; c++, ran++) {
		unsigned long in;

		/* The resident's memory into the block, afresh. */
		PD_WRITE(sh->touch_asked, c + 1);
		while (PD_READ(sh->touch_done) != c + 1 &&
		       !waitpid(resident_pid, NULL, WNOHANG))
			usleep(1000);
		in = PD_READ(sh->in_block);
		in_block_sum += in;
		in_block_cycles += in > 0;
		if (in < in_block_min)
			in_block_min = in;
		usleep(20000);

		set_state(0);
		sh->stack[0] = '\0';
		watcher = watch_querier(querier_pid, OFFLINE_TIMEOUT - 5);
		t = pd_now();
		err = block_offline(blk.id, &refused);
		t_off[n_off++] = pd_now() - t;
		end_watcher(watcher);
		if (err == -ETIMEDOUT) {
			pd_info("cycle %lu: offline did not finish in %d s; %d s in, the querier was at:\n",
				c, OFFLINE_TIMEOUT, OFFLINE_TIMEOUT - 5);
			print_lines(sh->stack);
			set_state(2);
			if (++timeouts == MAX_TIMEOUTS) {
				ran++;
				break;
			}
			continue;
		}
		if (err) {
			pd_info("cycle %lu: offline: %s\n", c, strerror(-err));
			set_state(2);
			continue;
		}
		offlined++;
		set_state(1);
		err = pd_phys(blk.start_pfn, report, PD_REPORT_SIZE);
		if (!says_offline(err, report) || pd_report_lines(report) != 1)
			pd_info("cycle %lu: phys %#lx, offline: %d:\n%s", c,
				blk.start_pfn, err, report);
		else if (query_across_block(false, report))
			pd_info("cycle %lu: phys across the offline block's start:\n%s",
				c, report);
		else
			offline_ok++;
		usleep(20000);

		set_state(0);
		t = pd_now();
		err = block_online(blk.id);
		t_on[n_on++] = pd_now() - t;
		if (err) {
			pd_info("cycle %lu: online_movable: %s\n", c, strerror(-err));
			ran++;
			break;
		}
		onlined++;
		err = query_first_pfn(report, &tries);
		if (err || pd_check_outcome("phys", err, report, blk.start_pfn))
			pd_info("cycle %lu: phys %#lx, online again: %d (%d tries):\n%s",
				c, blk.start_pfn, err, tries, report);
		else if (query_across_block(true, report))
			pd_info("cycle %lu: phys across the block's start, online again:\n%s",
				c, report);
		else
			online_ok++;
		set_state(2);
		if (c < 3 || c % 10 == 9)
			pd_info("cycle %lu: %lu resident pages in the block; offline %.2f s, online %.2f s; %lu queries so far\n",
				c, in, t_off[n_off - 1], t_on[n_on - 1], PD_READ(sh->queries));
	}
	PD_WRITE(sh->stop, 1);
	waitpid(querier_pid, NULL, 0);
	waitpid(resident_pid, NULL, 0);

	pd_info("figures: %lu of %lu cycles (%lu offlined, %lu onlined, offline refused %lu times), offline %.2f s, online %.2f s (medians)\n",
		ran, cycles, offlined, onlined, refused, median(t_off, n_off),
		median(t_on, n_on));
	pd_info("figures: %lu queries (%lu phys in the block, %lu phys on the resident's pages, %lu virt), %.1f s in all\n",
		sh->queries, sh->phys_block, sh->phys_resident, sh->virt,
		pd_now() - t_start);
	pd_info("figures: %lu reports, %lu EINVAL (%lu memory offline), %lu ESRCH, %lu ENXIO, %lu EAGAIN, %lu EINTR, %lu other\n",
		sh->reports, sh->by_errno[0], sh->offline_einval, sh->by_errno[1],
		sh->by_errno[2], sh->by_errno[3], sh->by_errno[4], sh->by_errno[5]);
	pd_info("figures: resident pages in the block at offline: min %lu, mean %lu of %lu (in the block at %lu of %lu cycles)\n",
		in_block_min == ~0UL ? 0 : in_block_min,
		ran ? in_block_sum / ran : 0,
		pd_pmd_size() / page_size + SMALL_PAGES, in_block_cycles, ran);

	ksft_test_result(!timeouts,
			 "hotplug: every offline finished within %d s (%lu did not)\n",
			 OFFLINE_TIMEOUT, timeouts);
	ksft_test_result(offlined == cycles && onlined == cycles,
			 "hotplug: offline and online again, %lu and %lu of %lu cycles\n",
			 offlined, onlined, cycles);
	ksft_test_result(!sh->bad && sh->queries,
			 "hotplug: every outcome documented, every report complete (%lu of %lu not)\n",
			 sh->bad, sh->queries);
	ksft_test_result(offline_ok == offlined && !sh->wrong_offline,
			 "hotplug: phys on the offline block: EINVAL, memory offline; across it, its pages not online memory (%lu of %lu cycles; querier %lu of %lu)\n",
			 offline_ok, offlined, sh->checked_offline - sh->wrong_offline,
			 sh->checked_offline);
	ksft_test_result(online_ok == onlined && !sh->wrong_online,
			 "hotplug: phys on the block answered once it is online again, across it too (%lu of %lu cycles; querier %lu of %lu)\n",
			 online_ok, onlined, sh->checked_online - sh->wrong_online,
			 sh->checked_online);
	ksft_test_result(ran && in_block_cycles == ran && sh->virt,
			 "hotplug: virt on a process whose memory was in the block at each offline (%lu of %lu cycles, %lu queries)\n",
			 in_block_cycles, ran, sh->virt);
	ksft_finished();
}
