// SPDX-License-Identifier: GPL-2.0
/*
 * pd_bench: how fast and how gentle Page Detective's "who maps this PFN?"
 * is, against what userspace would have to do instead.  A benchmark, not a
 * test: it prints figures and asserts nothing about time.
 *
 * For each grid point, P processes each map M MiB, and a target page is
 * mapped by K of them.  In interleaved rounds (so that whatever else the
 * machine does hits every method alike) it measures:
 *  - phys: the full query, the scan of every process's page tables and the
 *    reverse map; the wall time of its write(), and its "cost:" line;
 *  - quick: the "quick" phys query, the reverse map only;
 *  - user: the userspace alternative, /proc/PID/maps and /proc/PID/pagemap
 *    of every process, the mapped ranges only, in large reads;
 *  - floor: a bare loop over as many 8-byte words as the scan read
 *    page-table entries, comparing each with a value.
 * Then, at one grid point, the latency of a loop that page-faults, mmaps
 * and munmaps in another process: idle, beside a CPU hog, and while phys
 * queries run back to back; and at the reference point, phys asked about
 * many pages at once (pd_batch_bench.h).  And how often the vCPU itself
 * stands still (under TCG it is a host thread), which every timing here
 * suffers.
 *
 * Output, on stdout: "bench:" lines for people; "csv:" lines, a header and
 * one row per grid point, for the host, and "batchcsv:" lines for the
 * batches; "stalls:", "gentle:", "holds:", "model:", "quick:", "batch:"
 * and "target:" lines (a target's in one form, see print_target()).  See
 * harness/README.md, "Benchmark".
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <getopt.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "pd_util.h"

/* fprintf(), under a name that checkpatch knows prints a message whole. */
#define bench_err(...)	fprintf(stderr, __VA_ARGS__)

#define MIB		(1024UL * 1024)
/* Queries per method and grid point; -r takes up to 4 times as many. */
#define ROUNDS		11
/* What the report's "user mappings:" line says of the processes scanned. */
#define SCANNED_FMT "\nuser mappings: %*u counted, %*u not counted, in %*u processes; %u processes scanned, %u kernel threads"
/*
 * Quick queries take about a millisecond, short enough for a stall of the
 * vCPU (see probe_stalls()) to double one: take more of them.
 */
#define QUICK_PER_ROUND	5
#define NR_K		2
static const int k_values[NR_K] = { 1, 8 };

/* The userspace scan reads pagemap in chunks of this many entries. */
#define US_CHUNK	(64 * 1024)
#define MAPS_MAX	(1024 * 1024)

/* The latency loop: mmap this much, fault every page in, munmap. */
#define LAT_BYTES	(64 * 1024)
#define LAT_MAX		(256 * 1024)	/* samples kept per phase */

/* The grid point the targets and the latency loop are measured at. */
#define REF_P		200
#define REF_M		16

static char *report;
static int phys_fd;
static unsigned long page_size;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Memory the children must not inherit: every process the benchmark forks
 * is scanned, and should map what the workload says and little else.
 */
static void *alloc_private(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("pd_bench: mmap");
		exit(1);
	}
	madvise(p, size, MADV_DONTFORK);
	return p;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @pct percentile of the @n values at @v, which it sorts. */
static uint64_t pctl(uint64_t *v, int n, int pct)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(long)(n - 1) * pct / 100];
}

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

/* ---- The workload -------------------------------------------------------- */

/*
 * P processes, each mapping M MiB, all of it populated.  The mixed workload,
 * the grid's: three quarters are a shared tmpfs file (one memfd that every
 * process maps, so that P x M fits in the guest's memory while every
 * process has its own page tables), one quarter is private anonymous
 * memory each process writes itself.  The anonymous one, at the reference
 * point only (P x M of memory): all of it private anonymous.  Target page
 * k is a one-page memfd that the first k_values[k] processes map.
 */
enum workload_kind { MIXED, ANON, NR_WORKLOADS };
static const char *const workload_names[NR_WORKLOADS] = { "mixed", "anon" };

struct workload {
	int nr;
	pid_t *pids;
	int file_fd;
	int target_fd[NR_K];
	unsigned long target_pfn[NR_K];
	size_t file_bytes, anon_bytes;
};

static int memfd_filled(const char *name, size_t size)
{
	static char chunk[64 * 1024];
	size_t off;
	int fd;

	fd = memfd_create(name, 0);
	if (fd < 0)
		return -1;
	memset(chunk, 0x5a, sizeof(chunk));
	for (off = 0; off < size; off += sizeof(chunk))
		if (pwrite(fd, chunk, sizeof(chunk) < size - off ?
			   sizeof(chunk) : size - off, off) < 0) {
			close(fd);
			return -1;
		}
	return fd;
}

/* One process of the workload: map, populate, say so, and wait. */
static void worker(struct workload *w, int i, int ready_fd)
{
	char ok = 0, *anon;
	size_t off;
	int k;

	/* Do not outlive the benchmark, whatever happens to it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (w->file_bytes &&
	    mmap(NULL, w->file_bytes, PROT_READ, MAP_SHARED | MAP_POPULATE,
		 w->file_fd, 0) == MAP_FAILED)
		goto out;
	anon = mmap(NULL, w->anon_bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		goto out;
	/* PTEs, not huge PMDs: the scan's worst case, and pagemap's too. */
	madvise(anon, w->anon_bytes, MADV_NOHUGEPAGE);
	for (off = 0; off < w->anon_bytes; off += page_size)
		anon[off] = 1;
	for (k = 0; k < NR_K; k++)
		if (i < k_values[k] &&
		    mmap(NULL, page_size, PROT_READ, MAP_SHARED | MAP_POPULATE,
			 w->target_fd[k], 0) == MAP_FAILED)
			goto out;
	ok = 1;
out:
	if (write(ready_fd, &ok, 1) != 1 || !ok)
		_exit(1);
	for (;;)
		pause();
}

static long mem_available_mib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib / 1024;
}

static void workload_stop(struct workload *w)
{
	int i, k;

	for (i = 0; i < w->nr; i++)
		kill(w->pids[i], SIGKILL);
	for (i = 0; i < w->nr; i++)
		waitpid(w->pids[i], NULL, 0);
	free(w->pids);
	if (w->file_fd >= 0)
		close(w->file_fd);
	for (k = 0; k < NR_K; k++)
		close(w->target_fd[k]);
}

/*
 * Start P processes of M MiB, of workload @kind.  Returns NULL, or why the
 * grid point cannot be run in this guest.
 */
static const char *workload_start(struct workload *w, enum workload_kind kind,
				  int P, int M)
{
	static char why[128];
	long need, avail;
	int ready[2], i, k;
	char ok;
	void *t;

	memset(w, 0, sizeof(*w));
	w->file_bytes = kind == MIXED ? M * MIB / 4 * 3 : 0;
	w->anon_bytes = M * MIB - w->file_bytes;

	/*
	 * What the kernel needs: the private part, page tables, and a task
	 * with its stack and mm per process (a generous 128 KiB).
	 */
	need = (P * (w->anon_bytes + (M * MIB / 512) + 128 * 1024) +
		w->file_bytes) / MIB;
	avail = mem_available_mib();
	if (need > avail * 9 / 10) {
		snprintf(why, sizeof(why), "needs %ld MiB of %ld MiB available",
			 need, avail);
		return why;
	}

	w->file_fd = w->file_bytes ?
		     memfd_filled("pd_bench_file", w->file_bytes) : -1;
	for (k = 0; k < NR_K; k++)
		w->target_fd[k] = memfd_filled("pd_bench_target", page_size);
	if ((w->file_bytes && w->file_fd < 0) || w->target_fd[0] < 0 ||
	    w->target_fd[1] < 0)
		return "memfd_create failed";

	/* The target's PFN: map it a moment, ask pagemap, unmap it. */
	for (k = 0; k < NR_K; k++) {
		t = mmap(NULL, page_size, PROT_READ, MAP_SHARED | MAP_POPULATE,
			 w->target_fd[k], 0);
		if (t == MAP_FAILED)
			return "mmap of the target failed";
		w->target_pfn[k] = pagemap_pfn(0, t);
		munmap(t, page_size);
		if (!w->target_pfn[k])
			return "no PFN in pagemap (not root?)";
	}

	w->pids = calloc(P, sizeof(*w->pids));
	if (!w->pids || pipe(ready))
		return "out of memory";
	for (i = 0; i < P; i++) {
		w->pids[i] = fork();
		if (w->pids[i] < 0)
			break;
		if (!w->pids[i]) {
			close(ready[0]);
			worker(w, i, ready[1]);
		}
		w->nr++;
	}
	close(ready[1]);
	ok = w->nr == P;
	for (i = 0; i < w->nr; i++) {
		char one = 0;

		if (read(ready[0], &one, 1) != 1 || !one)
			ok = 0;
	}
	close(ready[0]);
	if (!ok) {
		workload_stop(w);
		return "a process could not be started or populated";
	}
	return NULL;
}

/* ---- Page Detective ------------------------------------------------------ */

/*
 * Ask phys about @pfn, quick or not, and read the report back on the same
 * descriptor.  Only the write() is timed: the query is done when it returns.
 */
static int pd_timed_phys(unsigned long pfn, bool quick, uint64_t *ns)
{
	char input[64];
	uint64_t start;
	ssize_t ret;
	int len;

	len = snprintf(input, sizeof(input), "0x%lx%s", pfn * page_size,
		       quick ? " quick" : "");
	start = now_ns();
	ret = write(phys_fd, input, len);
	*ns = now_ns() - start;
	if (ret < 0)
		return -errno;
	pd_read_all(phys_fd, report, PD_REPORT_SIZE);
	return 0;
}

/* ---- The userspace alternative ------------------------------------------- */

struct us_result {
	unsigned long entries;		/* pagemap entries read */
	unsigned int processes;		/* /proc/PID directories read */
	int nr;
	struct { int pid; unsigned long addr; } found[PD_MAX_MAPS];
};

/*
 * The PFNs looked for: [@lo, @hi], and of those only the ones set in @bits
 * (bit 0 is @lo) when there is a bitmap: the best test of a pagemap entry
 * against a set, one range check and one bit, whatever its size.
 */
struct pfn_set {
	unsigned long lo, hi;
	uint64_t *bits;
};

static bool pfn_set_has(const struct pfn_set *set, unsigned long pfn)
{
	unsigned long bit = pfn - set->lo;

	if (bit > set->hi - set->lo)
		return false;
	return !set->bits || (set->bits[bit / 64] >> (bit % 64) & 1);
}

static char *maps_buf;
static uint64_t *pm_buf;

/* Scan the pagemap entries of [@start, @end) in @pid's @pm for @set. */
static void us_scan_range(int pm, int pid, unsigned long start,
			  unsigned long end, const struct pfn_set *set,
			  struct us_result *r)
{
	unsigned long vpn = start / page_size, last = end / page_size;

	while (vpn < last) {
		size_t n = last - vpn < US_CHUNK ? last - vpn : US_CHUNK;
		ssize_t got = pread(pm, pm_buf, n * 8, vpn * 8);
		size_t i;

		if (got <= 0)
			return;
		n = got / 8;
		r->entries += n;
		for (i = 0; i < n; i++) {
			if (!(pm_buf[i] & PM_PRESENT) ||
			    !pfn_set_has(set, pm_buf[i] & PM_PFN_MASK))
				continue;
			if (r->nr < PD_MAX_MAPS) {
				r->found[r->nr].pid = pid;
				r->found[r->nr].addr = (vpn + i) * page_size;
			}
			r->nr++;
		}
		vpn += n;
	}
}

/*
 * What a tool like page-types has to do to find who maps the pages of
 * @set: for every process, read its VMAs from /proc/PID/maps, then the
 * pagemap entries of each VMA in large pread()s, each read once whatever
 * the number of pages, and test each against the set.  Exhaustive, like
 * the kernel's scan: stopping at the page's mapcount would miss the
 * mapping that a corrupted mapcount does not count.
 */
static void us_scan_set(const struct pfn_set *set, struct us_result *r)
{
	struct dirent *de;
	DIR *proc;

	memset(r, 0, sizeof(*r));
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((de = readdir(proc))) {
		char path[64], *line, *end;
		ssize_t len = 0, n;
		int pid, fd;

		if (!isdigit(de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		while (len < MAPS_MAX - 1 &&
		       (n = read(fd, maps_buf + len, MAPS_MAX - 1 - len)) > 0)
			len += n;
		close(fd);
		maps_buf[len] = '\0';
		r->processes++;
		if (!len)
			continue;	/* a kernel thread */

		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		for (line = maps_buf; *line; line = end + 1) {
			unsigned long start = strtoul(line, &end, 16);
			unsigned long stop = strtoul(end + 1, &end, 16);

			us_scan_range(fd, pid, start, stop, set, r);
			end = strchr(end, '\n');
			if (!end)
				break;
		}
		close(fd);
	}
	closedir(proc);
}

/* The same for one PFN. */
static void us_scan(unsigned long pfn, struct us_result *r)
{
	struct pfn_set one = { .lo = pfn, .hi = pfn };

	us_scan_set(&one, r);
}

/* ---- The floor ----------------------------------------------------------- */

/* A word read as READ_ONCE() reads it: once, whole, never elided. */
static inline uint64_t load(const uint64_t *w)
{
	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

/*
 * The least a scan of @n page-table entries can do: load each 8-byte word
 * once and compare it with a value.  Not vectorised, as the kernel's loop
 * is not (no SIMD in the kernel); each load a relaxed atomic one, as
 * ptep_get()'s READ_ONCE() is.
 */
static __attribute__((noipa, optimize("no-tree-vectorize")))
unsigned long floor_loop(const uint64_t *w, unsigned long n,
			 uint64_t v)
{
	unsigned long i, hits = 0;

	for (i = 0; i < n; i++)
		hits += load(&w[i]) == v;
	return hits;
}

/*
 * Two loops beside the floor, written with the architecture's pte_none(),
 * pte_present() and pte_pfn(), inlined as the kernel's -O2 build inlines
 * them: the test of each entry that pd_user_pte_table() used to make,
 * three branches an entry, and the test of a whole table it makes now,
 * pd_pte_table_may_map(), with none but the loop's.  Under TCG every branch
 * ends a translated block.  MODEL_PTE is a present entry of PFN 0.
 */
#if defined(__x86_64__)
#define MODEL_PTE	0x67ULL		/* present, RW, user, accessed, dirty */

static inline uint64_t model_pte_pfn(uint64_t v)
{
	uint64_t invert = v && !(v & 1) ? ~0ULL : 0;	/* protnone_mask() */

	return ((v ^ invert) >> 12) & ((1ULL << 40) - 1);
}

static inline bool model_pte_none(uint64_t v)
{
	return !(v & ~0x60ULL);			/* but the KNL erratum bits */
}

static inline bool model_pte_present(uint64_t v)
{
	return v & 0x101;			/* present or PROT_NONE */
}
#elif defined(__aarch64__)
/* 4 KiB pages, 48-bit physical addresses, as harness/guest-arm64.config. */
#define MODEL_PTE	0x403ULL	/* valid, page, access flag */

static inline uint64_t model_pte_pfn(uint64_t v)
{
	return (v >> 12) & ((1ULL << 36) - 1);	/* PTE_ADDR_LOW */
}

static inline bool model_pte_none(uint64_t v)
{
	return !v;
}

static inline bool model_pte_present(uint64_t v)
{
	/* valid, or PTE_PRESENT_INVALID (nG) without it: PROT_NONE */
	return v & 0x801;
}
#else
#error "pd_bench: no model of this architecture's PTEs"
#endif

static __attribute__((noipa, optimize("no-tree-vectorize")))
unsigned long per_entry_loop(const uint64_t *w, unsigned long n,
			     uint64_t pfn)
{
	unsigned long i, hits = 0;

	for (i = 0; i < n; i++) {
		uint64_t v = load(&w[i]);

		if (model_pte_none(v))
			continue;
		if (model_pte_present(v)) {
			if (model_pte_pfn(v) == pfn)
				hits++;
		} else {
			hits++;				/* a swap entry */
		}
	}
	return hits;
}

static inline bool model_pte_may_map(uint64_t v, uint64_t pfn)
{
	return (model_pte_pfn(v) == pfn) | (!model_pte_none(v) & !model_pte_present(v));
}

/* Four entries a turn, as pd_pte_table_may_map() takes them. */
static __attribute__((noipa, optimize("no-tree-vectorize")))
unsigned long table_loop(const uint64_t *w, unsigned long n,
			 uint64_t pfn)
{
	unsigned long i;
	bool may = false;

	for (i = 0; i + 4 <= n; i += 4)
		may |= model_pte_may_map(load(&w[i]), pfn) |
		       model_pte_may_map(load(&w[i + 1]), pfn) |
		       model_pte_may_map(load(&w[i + 2]), pfn) |
		       model_pte_may_map(load(&w[i + 3]), pfn);
	for (; i < n; i++)
		may |= model_pte_may_map(load(&w[i]), pfn);
	return may;
}

enum floor_kind { FLOOR, PER_ENTRY, TABLE };

/*
 * Time floor_loop() (or one of the others) over @n words, filled with
 * values that look like present PTEs just before.  The mapping is freed
 * after, so that the scans never see it.
 */
static uint64_t floor_ns(unsigned long n, enum floor_kind kind)
{
	size_t size = (n * 8 + page_size - 1) / page_size * page_size;
	uint64_t *w, start, ns;
	unsigned long i, hits;

	if (!n)
		return 0;
	w = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (w == MAP_FAILED)
		return 0;
	for (i = 0; i < n; i++)
		w[i] = ((i + 0x100000) << 12) | MODEL_PTE;
	start = now_ns();
	switch (kind) {
	case FLOOR:
		hits = floor_loop(w, n, 0);
		break;
	case PER_ENTRY:
		hits = per_entry_loop(w, n, 1);
		break;
	default:
		hits = table_loop(w, n, 1);
		break;
	}
	ns = now_ns() - start;
	if (hits)
		printf("bench: the floor loop found what is not there\n");
	munmap(w, size);
	return ns;
}

/* ---- One grid point ------------------------------------------------------ */

struct point {
	int P, M, K;
	enum workload_kind kind;
	const char *impossible;
	unsigned int processes, kthreads;	/* the full scan's */
	struct pd_cost cost;	/* entries, tables; hold_us: the longest */
	/* Medians, in ns, of what took ROUNDS measures. */
	uint64_t full_med, full_p90, full_min, scan_med, kernel_med, rmap_med;
	uint64_t prescan_med;	/* of the scan: its lockless prescan */
	uint64_t full_rest;	/* the query less its scan, tables and rmap */
	uint64_t quick_med, quick_p90, quick_min, quick_rmap, quick_rest;
	uint64_t user_med, user_min, floor_med;
	unsigned long user_entries;
	unsigned int user_processes;
	int k_full, k_quick, k_user;	/* mappings found, last round */
	bool agree, verdict_ok;
	int errors;
};

/*
 * The longest lock holds of every full query of the run, in us: of the mmap
 * lock and of a VMA's, each of all holds and of those through which the
 * query's task was never switched out (the difference: other tasks ran).
 */
#define HOLDS_MAX	8192
enum { MMAP_HOLD, MMAP_HOLD_UNSWITCHED, VMA_HOLD, VMA_HOLD_UNSWITCHED, NR_HOLDS };
static const char *const hold_names[NR_HOLDS] = {
	"mmap lock", "mmap lock, not switched out",
	"VMA lock", "VMA lock, not switched out",
};

static uint64_t holds[NR_HOLDS][HOLDS_MAX];
static int nr_holds;

static void note_hold(struct point *pt, const struct pd_cost *c)
{
	if (nr_holds < HOLDS_MAX) {
		holds[MMAP_HOLD][nr_holds] = c->hold_us;
		holds[MMAP_HOLD_UNSWITCHED][nr_holds] = c->hold_unswitched_us;
		holds[VMA_HOLD][nr_holds] = c->vma_hold_us;
		holds[VMA_HOLD_UNSWITCHED][nr_holds] = c->vma_hold_unswitched_us;
		nr_holds++;
	}
	if (pt && c->hold_us > pt->cost.hold_us)
		pt->cost.hold_us = c->hold_us;
}

/* Whether the (pid, addr) pairs of @maps are exactly those of @r. */
static bool same_mappers(const struct pd_user_map *maps, int nr,
			 const struct us_result *r)
{
	int i, j;

	if (nr != r->nr || r->nr > PD_MAX_MAPS)
		return false;
	for (i = 0; i < nr; i++) {
		for (j = 0; j < r->nr; j++)
			if (maps[i].pid == r->found[j].pid &&
			    maps[i].addr == r->found[j].addr)
				break;
		if (j == r->nr)
			return false;
	}
	return true;
}

/* Query phys on @pfn and parse the report: 0, or count an error. */
static int pd_query_parsed(unsigned long pfn, bool quick, uint64_t *ns,
			   struct pd_parsed *parsed, struct pd_cost *cost,
			   struct point *pt)
{
	if (pd_timed_phys(pfn, quick, ns) || pd_parse(report, parsed) ||
	    pd_parse_cost(report, cost)) {
		pt->errors++;
		return -1;
	}
	pt->verdict_ok &= !strcmp(parsed->sum.verdict, "ok");
	return 0;
}

static void measure_point(struct workload *w, int kidx, struct point *pt,
			  int rounds)
{
	static struct pd_parsed full_parsed, quick_parsed;
	uint64_t full[ROUNDS * 4], scan[ROUNDS * 4], kern[ROUNDS * 4];
	uint64_t rmap[ROUNDS * 4], full_rest[ROUNDS * 4];
	uint64_t quick[ROUNDS * 4 * QUICK_PER_ROUND];
	uint64_t quick_rmap[ROUNDS * 4 * QUICK_PER_ROUND];
	uint64_t quick_rest[ROUNDS * 4 * QUICK_PER_ROUND];
	uint64_t user[ROUNDS * 4], flr[ROUNDS * 4], prescan[ROUNDS * 4];
	uint64_t ns, parts;
	unsigned long pfn = w->target_pfn[kidx];
	struct pd_cost cost = {};
	struct us_result ur;
	const char *line;
	int r, step, n, i, q;

	pt->agree = true;
	pt->verdict_ok = true;
	/*
	 * Round -1 warms up: under TCG the first run of any code is
	 * translated first, and that is not what is measured here.  Each
	 * round runs the methods in a different order, so that none is
	 * always the one that comes after another.
	 */
	for (r = -1, n = 0; r < rounds; r++) {
		memset(&full_parsed, 0, sizeof(full_parsed));
		memset(&quick_parsed, 0, sizeof(quick_parsed));
		for (step = 0; step < 4; step++) {
			switch ((step + (r < 0 ? 0 : r)) % 4) {
			case 0:
				if (pd_query_parsed(pfn, false, &ns, &full_parsed,
						    &cost, pt))
					break;
				note_hold(pt, &cost);
				parts = (cost.scan_us + cost.kernel_us +
					 cost.rmap_us) * 1000;
				full[n] = ns;
				scan[n] = cost.scan_us * 1000;
				prescan[n] = cost.prescan_us * 1000;
				kern[n] = cost.kernel_us * 1000;
				rmap[n] = cost.rmap_us * 1000;
				full_rest[n] = ns > parts ? ns - parts : 0;
				pt->cost.entries = cost.entries;
				pt->cost.tables = cost.tables;
				pt->cost.locked_mms = cost.locked_mms;
				pt->cost.scanned_mms = cost.scanned_mms;
				line = strstr(report, "\nuser mappings: ");
				if (line)
					sscanf(line, SCANNED_FMT, &pt->processes, &pt->kthreads);
				break;
			case 1:
				for (i = 0; i < QUICK_PER_ROUND; i++) {
					if (pd_query_parsed(pfn, true, &ns,
							    &quick_parsed, &cost, pt))
						break;
					q = n * QUICK_PER_ROUND + i;
					quick[q] = ns;
					quick_rmap[q] = cost.rmap_us * 1000;
					quick_rest[q] = ns > quick_rmap[q] ?
							ns - quick_rmap[q] : 0;
				}
				break;
			case 2:
				ns = now_ns();
				us_scan(pfn, &ur);
				user[n] = now_ns() - ns;
				pt->user_entries = ur.entries;
				pt->user_processes = ur.processes;
				break;
			case 3:
				flr[n] = floor_ns(pt->cost.entries, FLOOR);
				break;
			}
		}
		/* Who maps the page, by each method, in this round. */
		pt->k_full = full_parsed.sum.user_mappings;
		pt->k_quick = quick_parsed.sum.rmap_mappings;
		pt->k_user = ur.nr;
		if (!same_mappers(full_parsed.user, full_parsed.nr_user, &ur) ||
		    !same_mappers(quick_parsed.rmap, quick_parsed.nr_rmap, &ur))
			pt->agree = false;
		if (r >= 0)
			n++;
	}
	pt->full_min = pctl(full, n, 0);
	pt->full_med = pctl(full, n, 50);
	pt->full_p90 = pctl(full, n, 90);
	pt->scan_med = pctl(scan, n, 50);
	pt->prescan_med = pctl(prescan, n, 50);
	pt->kernel_med = pctl(kern, n, 50);
	pt->rmap_med = pctl(rmap, n, 50);
	pt->full_rest = pctl(full_rest, n, 50);
	pt->quick_min = pctl(quick, n * QUICK_PER_ROUND, 0);
	pt->quick_med = pctl(quick, n * QUICK_PER_ROUND, 50);
	pt->quick_p90 = pctl(quick, n * QUICK_PER_ROUND, 90);
	pt->quick_rmap = pctl(quick_rmap, n * QUICK_PER_ROUND, 50);
	pt->quick_rest = pctl(quick_rest, n * QUICK_PER_ROUND, 50);
	pt->user_min = pctl(user, n, 0);
	pt->user_med = pctl(user, n, 50);
	pt->floor_med = pctl(flr, n, 50);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / b : 0;
}

#define CSV_HEADER "P,M,K,workload,processes,entries,tables,phys_ms,phys_p90_ms,phys_min_ms,scan_ms,Mentries_per_s,longest_hold_us,kernel_tables_ms,rmap_ms,phys_rest_ms,quick_ms,quick_p90_ms,quick_min_ms,quick_rmap_ms,quick_rest_ms,user_ms,user_min_ms,user_entries,user_processes,floor_ms,scan_per_floor,user_per_phys,user_per_quick,mappers_phys_quick_user,agree,note"

/*
 * In a CSV row of @header whose first @printed fields are printed: the
 * commas of the empty fields after them, up to the last field (the note).
 */
static void skip_to_last_field(const char *header, int printed)
{
	int left = 0;

	for (header = strchr(header, ','); header;
	     header = strchr(header + 1, ','))
		left++;
	for (left -= printed - 1; left > 0; left--)
		putchar(',');
}

static void print_point(const struct point *pt)
{
	if (pt->impossible) {
		printf("csv: %d,%d,%d,%s", pt->P, pt->M, pt->K,
		       workload_names[pt->kind]);
		skip_to_last_field(CSV_HEADER, 4);
		printf("impossible: %s\n", pt->impossible);
		return;
	}
	printf("csv: %d,%d,%d,%s,%u,%lu,%lu,", pt->P, pt->M, pt->K,
	       workload_names[pt->kind], pt->processes, pt->cost.entries,
	       pt->cost.tables);
	printf("%.3f,%.3f,%.3f,%.3f,%.1f,%lu,", ms(pt->full_med),
	       ms(pt->full_p90), ms(pt->full_min), ms(pt->scan_med),
	       pt->scan_med ? pt->cost.entries * 1e3 / pt->scan_med : 0,
	       pt->cost.hold_us);
	printf("%.3f,%.3f,%.3f,", ms(pt->kernel_med), ms(pt->rmap_med),
	       ms(pt->full_rest));
	printf("%.3f,%.3f,%.3f,%.3f,%.3f,", ms(pt->quick_med),
	       ms(pt->quick_p90), ms(pt->quick_min), ms(pt->quick_rmap),
	       ms(pt->quick_rest));
	printf("%.3f,%.3f,%lu,%u,%.3f,", ms(pt->user_med), ms(pt->user_min),
	       pt->user_entries, pt->user_processes, ms(pt->floor_med));
	printf("%.2f,%.1f,%.1f,", ratio(pt->scan_med, pt->floor_med),
	       ratio(pt->user_med, pt->full_med),
	       ratio(pt->user_med, pt->quick_med));
	printf("%d/%d/%d,%s,%s\n", pt->k_full, pt->k_quick, pt->k_user,
	       pt->agree ? "yes" : "NO",
	       pt->errors ? "query errors" :
	       !pt->verdict_ok ? "verdict not ok" :
	       pt->k_full != pt->K || pt->k_quick != pt->K ||
	       pt->k_user != pt->K ? "mappers != K" : "");
	bench_info("scan: %s P=%d M=%d K=%d: %.2f ms, of which the lockless prescan %.2f ms; %u of %u mms then walked under their locks\n",
		   workload_names[pt->kind], pt->P, pt->M, pt->K,
		   ms(pt->scan_med), ms(pt->prescan_med), pt->cost.locked_mms,
		   pt->cost.scanned_mms);
	fflush(stdout);
}

/* ---- Stalls --------------------------------------------------------------- */

/*
 * Under TCG a vCPU is a host thread: when the host runs something else, the
 * guest's clock goes on and the vCPU stands still.  A loop that does nothing
 * but read the clock sees those stalls as gaps; any hold of a lock, in the
 * kernel or not, that a stall falls into is that much longer.
 */
#define GAPS_MAX	4096

struct stalls {
	uint64_t spun;			/* ns spent in the loop */
	uint64_t lost;			/* ns in gaps over 100 us */
	uint64_t longest;
	unsigned int over_100us, over_1ms;
	uint64_t at[GAPS_MAX];		/* when the gaps over 100 us began */
};

static void probe_stalls(struct stalls *st, uint64_t duration)
{
	uint64_t start = now_ns(), prev = start, t, gap;

	while ((t = now_ns()) - start < duration) {
		gap = t - prev;
		prev = t;
		if (gap > st->longest)
			st->longest = gap;
		if (gap < 100000)
			continue;
		if (st->over_100us < GAPS_MAX)
			st->at[st->over_100us] = t - gap;
		st->over_100us++;
		st->over_1ms += gap >= 1000000;
		st->lost += gap;
	}
	st->spun += prev - start;
}

/*
 * How many gaps, how long, and how far apart: gaps HZ apart are the guest's
 * own timer ticks, which TCG makes slow; the rest is the host.
 */
static void print_stalls(const char *when, struct stalls *st)
{
	static uint64_t apart[GAPS_MAX];
	int i, n = st->over_100us < GAPS_MAX ? st->over_100us : GAPS_MAX;

	for (i = 1; i < n; i++)
		apart[i - 1] = st->at[i] - st->at[i - 1];
	bench_info("stalls: %s: in %.1f s of a loop reading the clock, %u gaps over 100 us (%.1f%% of the time, median %.0f us apart), %u over 1 ms, the longest %.0f us\n",
		   when, st->spun / 1e9, st->over_100us,
		   st->spun ? 100.0 * st->lost / st->spun : 0,
		   n > 1 ? pctl(apart, n - 1, 50) / 1e3 : 0, st->over_1ms,
		   st->longest / 1e3);
}

/*
 * The queries' longest lock holds beside the vCPU's stalls: a hold that a
 * stall falls into is that much longer, and a hold of a query whose task
 * was switched out includes what ran instead.
 */
static void print_holds(const struct stalls *alone)
{
	int h;

	for (h = 0; h < NR_HOLDS; h++)
		bench_info("holds: %s: p50 %lu us, p99 %lu us, max %lu us, over %d phys queries\n",
			   hold_names[h], pctl(holds[h], nr_holds, 50),
			   pctl(holds[h], nr_holds, 99),
			   pctl(holds[h], nr_holds, 100), nr_holds);
	bench_info("holds: vCPU stalls, the clock loop alone: %u gaps over 1 ms in %.1f s, the longest %.0f us\n",
		   alone->over_1ms, alone->spun / 1e9, alone->longest / 1e3);
}

/* ---- Gentleness ---------------------------------------------------------- */

/* The phases of the latency loop. */
enum { LAT_IDLE, LAT_HOG, LAT_PHYS, NR_LAT };
static const char *const lat_names[NR_LAT] = {
	"idle", "beside a CPU hog", "beside phys queries",
};

struct lat_phase {
	int n;
	uint64_t ns[LAT_MAX];
};

/* The latency loop, in its own process: a phase per byte read on @go. */
static void lat_loop(struct lat_phase *phase, int go, int done,
		     uint64_t duration)
{
	uint64_t start, end;
	char c;
	int p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (p = 0; p < NR_LAT && read(go, &c, 1) == 1; p++) {
		struct lat_phase *ph = &phase[p];

		end = now_ns() + duration;
		for (ph->n = 0; ph->n < LAT_MAX && (start = now_ns()) < end;) {
			char *m = mmap(NULL, LAT_BYTES, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			size_t off;

			if (m == MAP_FAILED)
				_exit(1);
			for (off = 0; off < LAT_BYTES; off += page_size)
				m[off] = 1;
			munmap(m, LAT_BYTES);
			ph->ns[ph->n++] = now_ns() - start;
		}
		if (write(done, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* Print the latencies of @ph; its p99. */
static uint64_t print_lat(int p, struct lat_phase *ph)
{
	uint64_t p50, p99;

	if (!ph->n) {
		printf("gentle: %s: the loop did not run\n", lat_names[p]);
		return 0;
	}
	p50 = pctl(ph->ns, ph->n, 50);
	p99 = pctl(ph->ns, ph->n, 99);
	bench_info("gentle: %s: %d iterations of mmap %d KiB, fault %d pages, munmap: p50 %.1f us, p99 %.1f us, max %.1f us\n",
		   lat_names[p], ph->n, LAT_BYTES / 1024,
		   (int)(LAT_BYTES / page_size), p50 / 1e3, p99 / 1e3,
		   ph->ns[ph->n - 1] / 1e3);
	return p99;
}

/*
 * The latency of the loop in another process: idle; beside a CPU hog (this
 * process spinning in userspace), which tells what merely keeping the
 * other vCPU busy does to it; and while phys queries on @pfn run back to
 * back.  Returns p99 with phys queries / idle p99.
 */
static double gentleness(unsigned long pfn, int seconds)
{
	static uint64_t walls[HOLDS_MAX], qholds[HOLDS_MAX];
	uint64_t p99[NR_LAT], ns;
	struct lat_phase *phase;
	int go[2], done[2], p, nq = 0;
	struct stalls st = {};
	struct pd_cost cost;
	struct pollfd pfd;
	pid_t pid;
	char c = 1;

	phase = mmap(NULL, NR_LAT * sizeof(*phase), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (phase == MAP_FAILED || pipe(go) || pipe(done))
		return 0;
	pid = fork();
	if (!pid) {
		close(go[1]);
		close(done[0]);
		lat_loop(phase, go[0], done[1], seconds * 1000000000ULL);
	}
	close(go[0]);
	close(done[1]);
	pfd = (struct pollfd){ .fd = done[0], .events = POLLIN };

	for (p = 0; p < NR_LAT; p++) {
		if (write(go[1], &c, 1) != 1)
			break;
		while (!poll(&pfd, 1, p == LAT_IDLE ? -1 : 0)) {
			if (p == LAT_HOG) {
				/* Spin in userspace, looking up now and then. */
				probe_stalls(&st, 1000000);
				continue;
			}
			if (pd_timed_phys(pfn, false, &ns) ||
			    pd_parse_cost(report, &cost))
				continue;
			note_hold(NULL, &cost);
			if (nq < HOLDS_MAX) {
				qholds[nq] = cost.hold_us > cost.vma_hold_us ?
					     cost.hold_us : cost.vma_hold_us;
				walls[nq++] = ns;
			}
		}
		if (read(done[0], &c, 1) != 1)
			break;
	}
	close(go[1]);
	close(done[0]);
	waitpid(pid, NULL, 0);

	for (p = 0; p < NR_LAT; p++)
		p99[p] = print_lat(p, &phase[p]);
	print_stalls("the CPU hog, beside the latency loop", &st);
	bench_info("gentle: %d phys queries back to back, median %.3f ms; their longest lock hold, mmap or VMA: p50 %lu us, p99 %lu us, max %lu us\n",
		   nq, ms(pctl(walls, nq, 50)), pctl(qholds, nq, 50),
		   pctl(qholds, nq, 99), pctl(qholds, nq, 100));
	printf("gentle: p99 / idle p99: %.2f beside a CPU hog, %.2f beside phys queries\n",
	       ratio(p99[LAT_HOG], p99[LAT_IDLE]),
	       ratio(p99[LAT_PHYS], p99[LAT_IDLE]));
	munmap(phase, NR_LAT * sizeof(*phase));
	return ratio(p99[LAT_PHYS], p99[LAT_IDLE]);
}

/* ---- The whole benchmark ------------------------------------------------- */

/*
 * Per-entry and per-process costs of the phys scan (or, with @user, of the
 * userspace scan), fitted by least squares to t = a * entries + b *
 * processes over the grid; no constant, as a scan of nothing costs nothing.
 * And what the floor costs per word.  Sets *@a, in s per entry, and *@b, in
 * s per process (0 where the grid cannot tell them apart).
 */
static void fit(const char *name, const struct point *pts, int nr, bool user,
		double *a, double *b)
{
	double see = 0, spp = 0, sep = 0, ste = 0, stp = 0, det;
	double words = 0, floor = 0;
	int i;

	for (i = 0; i < nr; i++) {
		const struct point *pt = &pts[i];
		double t = (user ? pt->user_med : pt->scan_med) / 1e9;
		double e = user ? pt->user_entries : pt->cost.entries;
		double p = user ? pt->user_processes : pt->processes;

		if (pt->impossible)
			continue;
		see += e * e;
		spp += p * p;
		sep += e * p;
		ste += t * e;
		stp += t * p;
		words += pt->cost.entries;
		floor += pt->floor_med / 1e9;
	}
	det = see * spp - sep * sep;
	*a = *b = 0;
	if (det != 0) {
		*a = (ste * spp - stp * sep) / det;
		*b = (stp * see - ste * sep) / det;
		printf("model: %s: %.1f ns per page-table entry + %.1f us per process\n",
		       name, *a * 1e9, *b * 1e6);
	}
	if (!user && words)
		printf("model: floor: %.1f ns per word\n", floor / words * 1e9);
}

/*
 * What the fitted costs make of a big host: 1 TiB mapped by 10,000
 * processes, in 4 KiB pages (the scan's worst case: one entry a page), at
 * this guest's speed.  A quick query asks only where the reverse map says
 * the page is mapped: it costs what it costs at the reference point, for
 * as many mappers, whatever the memory.
 */
#define BIG_BYTES	(1024ULL * 1024 * 1024 * 1024)
#define BIG_PROCESSES	10000

static void project(double a, double b, double ua, double ub,
		    const struct point *ref)
{
	double entries = (double)BIG_BYTES / page_size;

	if (!a || !ua) {
		printf("model: 1 TiB by %d processes: the grid is too small to fit the costs to\n",
		       BIG_PROCESSES);
		return;
	}
	bench_info("model: 1 TiB mapped in 4 KiB pages by %d processes (%.0f entries): phys %.1f s, the userspace scan %.1f s (fitted costs, this guest's speed)\n",
		   BIG_PROCESSES, entries, a * entries + b * BIG_PROCESSES,
		   ua * entries + ub * BIG_PROCESSES);
	if (ref)
		bench_info("model: 1 TiB by %d processes: quick %.2f ms for a page with %d mappers (as at P=%d M=%d)\n",
			   BIG_PROCESSES, ms(ref->quick_med), ref->K, REF_P,
			   REF_M);
}

/*
 * What any query costs, whatever it asks: the write(), the report's
 * buffers, and a one-line report printed to the log and kept.  An input
 * Page Detective refuses gives just that.
 */
static void query_overhead(void)
{
	uint64_t ns[ROUNDS], start;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		start = now_ns();
		if (write(phys_fd, "x", 1) >= 0)
			printf("bench: phys took \"x\"\n");
		ns[i] = now_ns() - start;
	}
	printf("model: a phys query refused (one line of report): %.1f us\n",
	       pctl(ns, ROUNDS, 50) / 1e3);
}

/*
 * The floor against the kernel's test of each entry, as it was, and of a
 * whole table, as it is.
 */
static void floor_loops(void)
{
	uint64_t ns[3][5];
	unsigned long n = 1UL << 20;
	int i, kind;

	for (i = 0; i < 5; i++)
		for (kind = FLOOR; kind <= TABLE; kind++)
			ns[kind][i] = floor_ns(n, kind);
	bench_info("model: per word: the floor %.1f ns; testing each entry %.1f ns; testing the table %.1f ns\n",
		   pctl(ns[FLOOR], 5, 50) / (double)n,
		   pctl(ns[PER_ENTRY], 5, 50) / (double)n,
		   pctl(ns[TABLE], 5, 50) / (double)n);
}

static void parse_list(const char *arg, int *v, int *n, int max)
{
	char *copy = strdup(arg), *tok, *save;

	for (*n = 0, tok = strtok_r(copy, ",", &save); tok && *n < max;
	     tok = strtok_r(NULL, ",", &save))
		v[(*n)++] = atoi(tok);
	free(copy);
}

/*
 * A target's line, in the one form harness/bench sums up over runs:
 * "target: WHAT: VALUEUNIT (<= LIMITUNIT): met" (or ">=", or "MISSED").
 */
static void print_target(const char *what, double value, int decimals,
			 const char *unit, bool at_most, double limit)
{
	bool ok = at_most ? value <= limit : value >= limit;

	printf("target: %s: %.*f%s (%s %g%s): %s\n", what, decimals, value,
	       unit, at_most ? "<=" : ">=", limit, unit, ok ? "met" : "MISSED");
}

/*
 * Start workload @kind of @P processes of @M MiB, and measure and print its
 * points, one per K, into @pts.  Returns NULL with the workload running, or
 * why it cannot run in this guest.
 */
static const char *measure_workload(struct workload *w, enum workload_kind kind,
				    int P, int M, int rounds, struct point *pts)
{
	uint64_t start = now_ns();
	const char *why;
	int k;

	printf("bench: %s P=%d M=%d: starting the processes\n",
	       workload_names[kind], P, M);
	fflush(stdout);
	why = workload_start(w, kind, P, M);
	if (!why)
		printf("bench: %s P=%d M=%d: %d processes up in %.1f s\n",
		       workload_names[kind], P, M, P, (now_ns() - start) / 1e9);
	for (k = 0; k < NR_K; k++) {
		struct point *pt = &pts[k];

		*pt = (struct point){ .P = P, .M = M, .K = k_values[k],
				      .kind = kind, .impossible = why };
		if (pt->K > P)
			pt->impossible = "K > P";
		if (!pt->impossible)
			measure_point(w, k, pt, rounds);
		print_point(pt);
	}
	return why;
}

/* The targets of the point of workload @kind and K index @k at REF_P, REF_M. */
static void ref_targets(enum workload_kind kind, int k, const struct point *r)
{
	const char *name = workload_names[kind];
	char what[128];

	if (!r) {
		printf("bench: %s K=%d: the grid has no P=%d M=%d, no targets\n",
		       name, k_values[k], REF_P, REF_M);
		return;
	}
	snprintf(what, sizeof(what),
		 "%s K=%d: phys faster than the userspace scan at P=%d M=%d",
		 name, r->K, REF_P, REF_M);
	print_target(what, ratio(r->user_med, r->full_med), 1, "x", false, 10);
	snprintf(what, sizeof(what), "%s K=%d: scan / its floor at P=%d M=%d",
		 name, r->K, REF_P, REF_M);
	print_target(what, ratio(r->scan_med, r->floor_med), 2, "x", true, 2.5);
	snprintf(what, sizeof(what),
		 "%s K=%d: quick faster than the userspace scan at P=%d M=%d",
		 name, r->K, REF_P, REF_M);
	print_target(what, ratio(r->user_med, r->quick_med), 0, "x", false,
		     100);
}

/*
 * Whether (@P, @M) is the point of the grid where the one-off measures are
 * made (the latency loop, show_page_info.py): the reference point if
 * @has_ref, or else @last, the grid's last point.
 */
static bool is_ref_point(bool has_ref, int P, int M, bool last)
{
	return has_ref ? P == REF_P && M == REF_M : last;
}

/* Whether the grid of @p_values by @m_values has the reference point. */
static bool grid_has_ref(const int *p_values, int nr_p, const int *m_values,
			 int nr_m)
{
	bool has_ref = false;
	int ip, im;

	for (ip = 0; ip < nr_p; ip++)
		for (im = 0; im < nr_m; im++)
			has_ref |= p_values[ip] == REF_P && m_values[im] == REF_M;
	return has_ref;
}

/* Note the points of @row that were measured at the reference point. */
static void note_ref(struct point *row, struct point **ref)
{
	int k;

	for (k = 0; k < NR_K; k++)
		if (row[k].P == REF_P && row[k].M == REF_M &&
		    !row[k].impossible)
			ref[k] = &row[k];
}

/* The batch rows, and the drgn pass (-D, -S): after all of the above. */
#include "pd_batch_bench.h"
#include "pd_drgn.h"

int main(int argc, char **argv)
{
	int p_values[8] = { 10, 50, 200, 500 }, nr_p = 4;
	int m_values[8] = { 1, 16 }, nr_m = 2;
	int rounds = ROUNDS, seconds = 5, ip, im, k, opt, nr_pts = 0;
	struct point pts[(8 * 8 + 1) * NR_K], *ref[NR_WORKLOADS][NR_K] = {};
	struct point *row;
	const char *why;
	enum workload_kind kind;
	double gentle = -1, flat_median, scan_a, scan_b, user_a, user_b;
	uint64_t flat[64];
	int nr_flat = 0;
	unsigned long gentle_pfn = 0;
	struct stalls alone = {};
	struct workload w;
	bool fail, has_ref, gentle_here;
	const char *drgn_server = NULL, *drgn_show = NULL;

	while ((opt = getopt(argc, argv, "P:M:r:d:D:S:")) != -1) {
		switch (opt) {
		case 'P':
			parse_list(optarg, p_values, &nr_p, 8);
			break;
		case 'M':
			parse_list(optarg, m_values, &nr_m, 8);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'd':
			seconds = atoi(optarg);
			break;
		case 'D':
			drgn_server = optarg;
			break;
		case 'S':
			drgn_show = optarg;
			break;
		default:
			bench_err("usage: %s [-P 10,50,...] [-M 1,16] [-r rounds] [-d seconds] [-D drgn-server] [-S show_page_info]\n",
				  argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > ROUNDS * 4)
		rounds = ROUNDS;

	has_ref = grid_has_ref(p_values, nr_p, m_values, nr_m);

	page_size = pd_page_size();
	if (pd_missing(&fail)[0]) {
		printf("bench: %s\n", pd_missing(&fail));
		return 1;
	}
	phys_fd = open(PD_DIR "/phys", O_RDWR);
	if (phys_fd < 0) {
		perror("pd_bench: " PD_DIR "/phys");
		return 1;
	}
	report = alloc_private(PD_REPORT_SIZE);
	batch_report = alloc_private(PD_BATCH_REPORT_SIZE);
	maps_buf = alloc_private(MAPS_MAX);
	pm_buf = alloc_private(US_CHUNK * 8);

	bench_info("bench: %d rounds per method and grid point, interleaved; each process maps M MiB, all populated: mixed, 3/4 a shared tmpfs file and 1/4 private anonymous; anon (at P=%d M=%d only), all private anonymous\n",
		   rounds, REF_P, REF_M);
	probe_stalls(&alone, 2000000000ULL);
	print_stalls("alone", &alone);
	printf("csv: %s\n", CSV_HEADER);
	for (ip = 0; ip < nr_p; ip++) {
		for (im = 0; im < nr_m; im++) {
			int P = p_values[ip], M = m_values[im];

			row = &pts[nr_pts];
			why = measure_workload(&w, MIXED, P, M, rounds, row);
			nr_pts += NR_K;
			note_ref(row, ref[MIXED]);
			gentle_here = is_ref_point(has_ref, P, M,
						   ip == nr_p - 1 && im == nr_m - 1);
			if (!why && gentle_here) {
				gentle_pfn = w.target_pfn[NR_K - 1];
				bench_info("bench: P=%d M=%d: latency loop, %d s idle, %d s with phys queries back to back\n",
					   P, M, seconds, seconds);
				fflush(stdout);
				gentle = gentleness(gentle_pfn, seconds);
			}
			if (!why && P == REF_P && M == REF_M)
				batch_bench(&w, rounds);
			if (!why)
				workload_stop(&w);
		}
	}
	/* The same scan over private anonymous memory only. */
	if (has_ref) {
		row = &pts[nr_pts];
		why = measure_workload(&w, ANON, REF_P, REF_M, rounds, row);
		nr_pts += NR_K;
		note_ref(row, ref[ANON]);
		if (!why)
			workload_stop(&w);
	}

	if (drgn_server)
		drgn_grid(drgn_server, drgn_show, p_values, nr_p, m_values,
			  nr_m);

	fit("phys scan", pts, nr_pts, false, &scan_a, &scan_b);
	fit("userspace pagemap scan", pts, nr_pts, true, &user_a, &user_b);
	project(scan_a, scan_b, user_a, user_b, ref[MIXED][NR_K - 1]);
	batch_project(scan_a, scan_b, user_a, user_b);
	floor_loops();
	query_overhead();

	for (kind = MIXED; kind < NR_WORKLOADS; kind++)
		for (k = 0; k < NR_K; k++)
			ref_targets(kind, k, ref[kind][k]);
	batch_targets();
	/*
	 * Flat in M: quick at the largest M against the smallest, same P and
	 * K.  Judged on the median of those ratios: a quick query lasts about
	 * a millisecond, as long as one stall of the vCPU, which can double
	 * any single point's median.  The rmap part, which a stall rarely
	 * hits, says the same without noise.
	 */
	for (k = 0; k < nr_pts; k++) {
		struct point *a = &pts[k], *b;
		int j;

		for (j = 0; j < nr_pts && nr_flat < 64; j++) {
			b = &pts[j];
			if (a->impossible || b->impossible || a->kind != MIXED ||
			    b->kind != MIXED || a->P != b->P ||
			    a->K != b->K || a->M != m_values[0] ||
			    b->M != m_values[nr_m - 1] || a == b)
				continue;
			bench_info("quick: at P=%d K=%d: M=%d %.3f ms (rmap %.3f), M=%d %.3f ms (rmap %.3f): %.2fx\n",
				   a->P, a->K, a->M, ms(a->quick_med),
				   ms(a->quick_rmap), b->M, ms(b->quick_med),
				   ms(b->quick_rmap), ratio(b->quick_med, a->quick_med));
			flat[nr_flat++] = ratio(b->quick_med, a->quick_med) * 1000;
		}
	}
	if (nr_flat) {
		flat_median = pctl(flat, nr_flat, 50) / 1000.0;
		bench_info("quick: largest M / smallest M, from %.2fx to %.2fx over P and K\n",
			   pctl(flat, nr_flat, 0) / 1000.0,
			   pctl(flat, nr_flat, 100) / 1000.0);
		print_target("quick flat in M: largest M / smallest M, median over P and K",
			     flat_median, 2, "x", true, 1.25);
	}
	if (gentle > 0)
		print_target("latency loop's p99 beside phys queries / idle",
			     gentle, 2, "x", true, 2);
	print_target("longest mmap lock hold over the run's phys queries",
		     pctl(holds[MMAP_HOLD], nr_holds, 100), 0, " us", true,
		     1000);
	print_holds(&alone);
	return 0;
}
