// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective sweep: ask about thousands of distinct PFNs of every kind
 * (first and last, holes, reserved, kernel code and data, page tables,
 * slab, vmalloc, per-cpu, free buddy pages, THP heads and tails, hugetlb,
 * page cache, anonymous, the zero page, zone edges and random ones), about
 * every page of a large process by virtual address, and about kernel
 * ranges with PID 0.  Every query must return 0 or a documented errno, and
 * a complete report, of the PFN asked about, when it returns 0.  Where the
 * kernel says the same thing elsewhere, the outcome must agree with it:
 * /proc/kpageflags on which PFNs have a memory map, /proc/PID/pagemap on
 * what a virtual address maps.
 *
 * The kinds are found through /proc/kpageflags, /proc/iomem,
 * /proc/zoneinfo, /proc/vmallocinfo, /proc/kallsyms and /proc/modules.
 * PD_STRESS_SCALE multiplies the counts.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/prctl.h>

#include "pd_util.h"
#include "../kselftest.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

/* PFNs asked about with phys, at least; and per kind, at most. */
#define SWEEP_PFNS	5000
#define PER_KIND	150
/* Pages of the large process's anonymous memory, and of its file. */
#define PROC_ANON_PAGES	512
#define PROC_FILE_PAGES	128
/* Kernel pages asked about with PID 0, per range. */
#define KERNEL_PAGES	96

enum kind {
	K_EDGE,		/* first and last PFN, of memory and its ranges */
	K_BEYOND,	/* past the end of memory */
	K_HOLE,		/* no memory map: KPF_NOPAGE, or a hole in iomem */
	K_ZONE_EDGE,
	K_RESERVED,
	K_KERNEL_CODE,
	K_KERNEL_DATA,
	K_PGTABLE,
	K_SLAB,
	K_VMALLOC,
	K_PERCPU,
	K_BUDDY,
	K_THP_HEAD,
	K_THP_TAIL,
	K_HUGETLB,
	K_PAGE_CACHE,
	K_ANON,
	K_ZERO,
	K_RANDOM,
	NR_KINDS
};

static const char *const kind_name[NR_KINDS] = {
	"first/last", "beyond end", "hole", "zone edge", "reserved",
	"kernel code", "kernel data", "page table", "slab", "vmalloc",
	"per-cpu", "free buddy", "THP head", "THP tail", "hugetlb",
	"page cache", "anonymous", "zero page", "random",
};

struct sweep {
	unsigned long end_pfn;		/* the end of memory */
	unsigned long *pfn;		/* distinct PFNs to ask about */
	unsigned char *kind;
	unsigned int nr, max;
	uint8_t *seen;			/* bitmap over [0, seen_bits) */
	unsigned long seen_bits;
	unsigned int found[NR_KINDS];	/* PFNs added, per kind */
	bool percpu_known;		/* some per-cpu memory's address */
	/* Reservoir samples of the kinds /proc/kpageflags tells. */
	unsigned long sample[NR_KINDS][PER_KIND];
	unsigned long seen_of[NR_KINDS];
	uint64_t rng;
	unsigned long per_kind;
	char *report;
	unsigned long queries;
	/* Nobody corrupts this guest: every mismatch is a false alarm. */
	struct pd_verdicts verdicts;
};

static unsigned long page_size;

static bool add_pfn(struct sweep *s, unsigned long pfn, enum kind k)
{
	if (pfn < s->seen_bits) {
		if (s->seen[pfn / 8] & (1 << (pfn % 8)))
			return false;
		s->seen[pfn / 8] |= 1 << (pfn % 8);
	} else {
		unsigned int i;

		for (i = 0; i < s->nr; i++)
			if (s->pfn[i] == pfn)
				return false;
	}
	if (s->nr == s->max) {
		s->max *= 2;
		s->pfn = realloc(s->pfn, s->max * sizeof(*s->pfn));
		s->kind = realloc(s->kind, s->max);
		if (!s->pfn || !s->kind)
			ksft_exit_fail_msg("out of memory\n");
	}
	s->pfn[s->nr] = pfn;
	s->kind[s->nr++] = k;
	s->found[k]++;
	return true;
}

/* Keep a uniform sample of up to per_kind PFNs of kind @k. */
static void sample_pfn(struct sweep *s, enum kind k, unsigned long pfn)
{
	unsigned long n = s->seen_of[k]++, j;

	if (n < s->per_kind) {
		s->sample[k][n] = pfn;
		return;
	}
	j = pd_rand(&s->rng) % (n + 1);
	if (j < s->per_kind)
		s->sample[k][j] = pfn;
}

/* @count PFNs spread evenly over [@first, @last]. */
static void add_range(struct sweep *s, unsigned long first, unsigned long last,
		      unsigned long count, enum kind k)
{
	unsigned long i, span = last - first + 1;

	if (last < first)
		return;
	if (count > span)
		count = span;
	for (i = 0; i < count; i++)
		add_pfn(s, first + (count > 1 ? i * (span - 1) / (count - 1) : 0), k);
}

/* ---- Where the kinds are ---------------------------------------------- */

/*
 * /proc/iomem: the first and last PFN of each System RAM range and the
 * PFNs on either side, the holes between the ranges, the kernel's code and
 * data.  Returns the end of memory.
 */
static unsigned long scan_iomem(struct sweep *s)
{
	unsigned long start, end, last_end = 0, first = ~0UL;
	FILE *f = fopen("/proc/iomem", "r");
	struct pd_iomem r;

	if (!f)
		ksft_exit_fail_perror("/proc/iomem");
	while (pd_iomem_next(f, &r)) {
		start = r.start / page_size;
		end = r.end / page_size;
		if (pd_iomem_is_ram(&r)) {
			if (start < first)
				first = start;
			add_pfn(s, start, K_EDGE);
			add_pfn(s, end, K_EDGE);
			if (start)
				add_pfn(s, start - 1, K_EDGE);
			if (last_end && start > last_end + 1)
				add_range(s, last_end + 1, start - 1, 8, K_HOLE);
			if (end > last_end)
				last_end = end;
		} else if (!strcmp(r.name, "Kernel code")) {
			add_range(s, start, end, s->per_kind, K_KERNEL_CODE);
		} else if (!strncmp(r.name, "Kernel ", 7)) {
			add_range(s, start, end, s->per_kind / 3, K_KERNEL_DATA);
		}
	}
	fclose(f);
	add_pfn(s, 0, K_EDGE);
	if (first != ~0UL)
		add_pfn(s, first, K_EDGE);
	return last_end + 1;
}

/* /proc/zoneinfo: the first and last PFN each zone spans. */
static void scan_zoneinfo(struct sweep *s)
{
	unsigned long start = 0, spanned = 0, val;
	char line[256];
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		ksft_exit_fail_perror("/proc/zoneinfo");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " spanned %lu", &val) == 1) {
			spanned = val;
		} else if (sscanf(line, " start_pfn: %lu", &val) == 1) {
			start = val;
			if (spanned) {
				add_pfn(s, start, K_ZONE_EDGE);
				add_pfn(s, start + spanned - 1, K_ZONE_EDGE);
				add_pfn(s, start + spanned, K_ZONE_EDGE);
			}
			spanned = 0;
		}
	}
	fclose(f);
}

/* /proc/kpageflags, all of it: a uniform sample of each kind it tells. */
static void scan_kpageflags(struct sweep *s)
{
	const size_t chunk = 65536;
	uint64_t *flags = malloc(chunk * sizeof(*flags));
	unsigned long pfn = 0, i;
	int fd = open("/proc/kpageflags", O_RDONLY);
	ssize_t n;

	if (fd < 0 || !flags)
		ksft_exit_fail_perror("/proc/kpageflags");
	while ((n = pread(fd, flags, chunk * sizeof(*flags),
			  pfn * sizeof(*flags))) > 0) {
		for (i = 0; i < n / sizeof(*flags); i++, pfn++) {
			uint64_t f = flags[i];

			if ((f & BIT64(KPF_NOPAGE)) ||
			    (!f && pd_pfn_block_online(pfn) == 0))
				sample_pfn(s, K_HOLE, pfn);
			else if (f & BIT64(KPF_BUDDY))
				sample_pfn(s, K_BUDDY, pfn);
			else if (f & BIT64(KPF_SLAB))
				sample_pfn(s, K_SLAB, pfn);
			else if (f & BIT64(KPF_PGTABLE))
				sample_pfn(s, K_PGTABLE, pfn);
			else if (f & BIT64(KPF_ZERO_PAGE))
				sample_pfn(s, K_ZERO, pfn);
			else if (f & BIT64(KPF_HUGE))
				sample_pfn(s, K_HUGETLB, pfn);
			else if ((f & BIT64(KPF_THP)) && (f & BIT64(KPF_COMPOUND_HEAD)))
				sample_pfn(s, K_THP_HEAD, pfn);
			else if ((f & BIT64(KPF_THP)) && (f & BIT64(KPF_COMPOUND_TAIL)))
				sample_pfn(s, K_THP_TAIL, pfn);
			else if (f & BIT64(KPF_ANON))
				sample_pfn(s, K_ANON, pfn);
			else if (f & (BIT64(KPF_LRU) | BIT64(KPF_MMAP)))
				sample_pfn(s, K_PAGE_CACHE, pfn);
			else if (f & BIT64(KPF_RESERVED))
				sample_pfn(s, K_RESERVED, pfn);
		}
	}
	close(fd);
	free(flags);
	if (!s->end_pfn || pfn > s->end_pfn)
		s->end_pfn = pfn;
}

static void add_samples(struct sweep *s)
{
	unsigned long i;
	int k;

	/* A PFN already on the list under another kind is swept all the same. */
	for (k = 0; k < NR_KINDS; k++)
		for (i = 0; i < s->seen_of[k] && i < s->per_kind; i++)
			if (!add_pfn(s, s->sample[k][i], k))
				s->found[k]++;
}

/*
 * Ask with PID 0 about @nr pages from @addr; each page that maps memory
 * is a PFN of kind @k for the phys sweep.  Returns the queries that failed.
 */
static unsigned int kernel_range(struct sweep *s, unsigned long addr,
				 unsigned long nr, enum kind k, unsigned long step,
				 unsigned int *mapped)
{
	unsigned int bad = 0;
	struct pd_parsed *r = malloc(sizeof(*r));
	unsigned long i;
	const char *why;
	char input[64];
	int err;

	for (i = 0; i < nr; i++, addr += step) {
		snprintf(input, sizeof(input), "0 0x%lx", addr);
		err = pd_query("virt", input, s->report, PD_REPORT_SIZE);
		s->queries++;
		pd_count_verdict(&s->verdicts, s->report);
		pd_parse(s->report, r);
		why = pd_check_outcome("virt", err, s->report,
				       r->leaf[0] ? (long)r->leaf_pfn : -1);
		if (why) {
			pd_info("virt \"%s\": %s:\n%s", input, why, s->report);
			bad++;
		}
		if (!err) {
			add_pfn(s, r->leaf_pfn, k);
			(*mapped)++;
		}
	}
	free(r);
	return bad;
}

/* The kernel ranges, with PID 0: test result, and PFNs for the sweep. */
static void sweep_kernel_ranges(struct sweep *s)
{
	unsigned long start, end, text = 0, etext = 0, addr, size, nr;
	unsigned int bad = 0, mapped = 0, areas = 0;
	char line[512], sym[128], type;
	double t0 = pd_now();
	unsigned long q0 = s->queries;
	long kptr;
	FILE *f;

#ifdef __x86_64__
	/*
	 * x86_64's cpu_entry_area maps each CPU's GDT, entry stack and TSS,
	 * which are per-cpu variables: their PFNs are per-cpu memory.
	 */
	bad += kernel_range(s, 0xfffffe0000000000UL, KERNEL_PAGES, K_PERCPU,
			    page_size, &mapped);
	s->percpu_known = true;
#endif

	/*
	 * vmalloc areas: each page of the first few, and of every per-cpu
	 * chunk the percpu allocator mapped there (pcpu_get_vm_areas(), at
	 * the top).  /proc/vmallocinfo shows their addresses (%pK) to root
	 * only with kptr_restrict=1.
	 */
	kptr = pd_read_long("/proc/sys/kernel/kptr_restrict");
	pd_write_file("/proc/sys/kernel/kptr_restrict", "1");
	f = fopen("/proc/vmallocinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		bool percpu = strstr(line, "pcpu_get_vm_areas");

		if (sscanf(line, "0x%lx-0x%lx", &start, &end) != 2 ||
		    !strstr(line, " vmalloc") || (!percpu && areas == 24))
			continue;
		nr = (end - start) / page_size - 1;	/* the guard page */
		if (nr > 8)
			nr = 8;
		bad += kernel_range(s, start, nr, percpu ? K_PERCPU : K_VMALLOC,
				    page_size, &mapped);
		areas += !percpu;
		s->percpu_known |= percpu;
	}
	if (f)
		fclose(f);
	if (kptr >= 0) {
		snprintf(line, sizeof(line), "%ld", kptr);
		pd_write_file("/proc/sys/kernel/kptr_restrict", line);
	}

	/* The kernel's text, evenly, from /proc/kallsyms. */
	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) != 3)
			continue;
		if (!strcmp(sym, "_stext"))
			text = addr;
		else if (!strcmp(sym, "_etext"))
			etext = addr;
	}
	if (f)
		fclose(f);
	if (text && etext > text) {
		size = ((etext - text) / KERNEL_PAGES) & ~(page_size - 1);
		bad += kernel_range(s, text, KERNEL_PAGES, K_KERNEL_CODE,
				    size > page_size ? size : page_size, &mapped);
	}

	/* Every page of each module, from /proc/modules. */
	f = fopen("/proc/modules", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lu %*s %*s %*s 0x%lx", sym, &size, &addr) == 3)
			bad += kernel_range(s, addr, size / page_size, K_KERNEL_CODE,
					    page_size, &mapped);
	if (f)
		fclose(f);

	pd_info("kernel ranges (pid 0): %lu queries, %u pages mapped, %u vmalloc areas, %.1f s\n",
		s->queries - q0, mapped, areas, pd_now() - t0);
	ksft_test_result(!bad && mapped && text, "pid 0: kernel ranges, %u bad outcomes\n", bad);
}

/* ---- Pages to find: made here, so that the kinds exist --------------- */

struct made {
	char *thp, *huge, *anon, *file_map;
	long hugepages_before;
};

static void make_pages(struct made *m)
{
	char path[] = "/tmp/pd_sweep.XXXXXX";
	size_t thp_size = 4 * pd_pmd_size();
	char *p;
	int fd;

	/* THP: aligned, advised, touched. */
	p = mmap(NULL, thp_size + pd_pmd_size(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		m->thp = pd_pmd_align(p);
		madvise(m->thp, thp_size, MADV_HUGEPAGE);
		memset(m->thp, 0x3c, thp_size);
	}

	/* hugetlb: two pages more than there were. */
	m->hugepages_before = pd_read_long("/proc/sys/vm/nr_hugepages");
	if (m->hugepages_before >= 0) {
		char val[32];

		snprintf(val, sizeof(val), "%ld", m->hugepages_before + 2);
		pd_write_file("/proc/sys/vm/nr_hugepages", val);
		p = mmap(NULL, 2 * pd_pmd_size(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p != MAP_FAILED) {
			m->huge = p;
			memset(p, 0x4d, 2 * pd_pmd_size());
		}
	}

	/* Anonymous pages, and page cache that is mapped. */
	m->anon = mmap(NULL, 64 * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->anon != MAP_FAILED)
		memset(m->anon, 0x11, 64 * page_size);
	fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
		if (!ftruncate(fd, 64 * page_size)) {
			m->file_map = mmap(NULL, 64 * page_size, PROT_READ | PROT_WRITE,
					   MAP_SHARED, fd, 0);
			if (m->file_map != MAP_FAILED)
				memset(m->file_map, 0x22, 64 * page_size);
		}
		close(fd);
	}
}

static void unmake_pages(struct made *m)
{
	char val[32];

	if (m->huge)
		munmap(m->huge, 2 * pd_pmd_size());
	if (m->hugepages_before >= 0) {
		snprintf(val, sizeof(val), "%ld", m->hugepages_before);
		pd_write_file("/proc/sys/vm/nr_hugepages", val);
	}
}

/* ---- The phys sweep ---------------------------------------------------- */

static void sweep_phys(struct sweep *s)
{
	unsigned int ok[NR_KINDS] = {}, einval[NR_KINDS] = {}, other[NR_KINDS] = {};
	unsigned int bad = 0, disagree = 0, i;
	double t0 = pd_now();
	const char *why;
	char input[64];
	int err, k;

	for (i = 0; i < s->nr; i++) {
		unsigned long pfn = s->pfn[i];
		bool no_page = pd_pfn_has_no_page(pfn);

		k = s->kind[i];
		snprintf(input, sizeof(input), "0x%llx",
			 (unsigned long long)pfn * page_size);
		err = pd_query("phys", input, s->report, PD_REPORT_SIZE);
		s->queries++;
		pd_count_verdict(&s->verdicts, s->report);
		why = pd_check_outcome("phys", err, s->report, pfn);
		if (why) {
			if (bad++ < 5)
				pd_info("phys %s (%s): %s:\n%s", input,
					kind_name[k], why, s->report);
		}
		/* No memory map: -EINVAL; a page: a report (or -EAGAIN). */
		if (no_page != (err == -EINVAL)) {
			if (disagree++ < 5)
				pd_info("phys %s (%s): %d, but kpageflags says %s:\n%s",
					input, kind_name[k], err,
					no_page ? "no page" : "a page", s->report);
		}
		if (!err)
			ok[k]++;
		else if (err == -EINVAL)
			einval[k]++;
		else
			other[k]++;
	}

	pd_info("phys sweep: %u distinct PFNs (end of memory %#lx), %.1f s, %.2f ms a query\n",
		s->nr, s->end_pfn, pd_now() - t0,
		s->nr ? (pd_now() - t0) * 1000 / s->nr : 0);
	for (k = 0; k < NR_KINDS; k++) {
		pd_info("  %-12s %5u PFNs: %5u reports, %5u EINVAL, %u other (kpageflags has %lu)\n",
			kind_name[k], s->found[k], ok[k], einval[k], other[k],
			s->seen_of[k]);
	}
	ksft_test_result(s->nr >= pd_stress_count(SWEEP_PFNS),
			 "phys: %u distinct PFNs swept\n", s->nr);
	ksft_test_result(!bad,
			 "phys: every outcome documented, every report complete (%u bad)\n",
			 bad);
	ksft_test_result(!disagree,
			 "phys: -EINVAL exactly where kpageflags has no page (%u disagree)\n",
			 disagree);
	/*
	 * Every kind was found: the sweep covered what it claims.  Per-cpu
	 * memory only where its address can be known: off x86, the first
	 * chunk lies in the linear map, where nothing tells userspace.
	 */
	for (k = 0; k < NR_KINDS; k++) {
		if (k == K_PERCPU && !s->percpu_known) {
			ksft_test_result_skip("phys: kind %s: no per-cpu chunk in vmalloc space\n",
					      kind_name[k]);
			continue;
		}
		ksft_test_result(s->found[k] > 0, "phys: kind %s found and asked about\n",
				 kind_name[k]);
	}
}

/* ---- The virt sweep of a large process --------------------------------- */

/* The large process: every kind of user mapping, then it waits. */
static int large_process(void *arg)
{
	size_t anon = pd_stress_size(PROC_ANON_PAGES) * page_size;
	char *p, *buf;
	size_t i;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Anonymous memory with holes, some of it never touched. */
	p = mmap(NULL, anon, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, anon, MADV_NOHUGEPAGE);
	for (i = 0; i < anon; i += page_size)
		if ((i / page_size) % 7)
			p[i] = 1;
	/* A THP, mapped by a PMD: the aligned PMD range of a mapping of two. */
	p = mmap(NULL, 2 * pd_pmd_size(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	buf = pd_pmd_align(p);
	if (buf > p)
		munmap(p, buf - p);
	munmap(buf + pd_pmd_size(), p + pd_pmd_size() - buf);
	p = buf;
	madvise(p, pd_pmd_size(), MADV_HUGEPAGE);
	memset(p, 2, pd_pmd_size());
	/* Read-only faults map the shared zero page. */
	p = mmap(NULL, 64 * page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, 64 * page_size, MADV_POPULATE_READ))
		return 1;
	/* Shared anonymous memory, and a PROT_NONE reservation. */
	p = mmap(NULL, 64 * page_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 3, 64 * page_size);
	if (mmap(NULL, 64 * page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return 1;
	/* A file, mapped, every other page read. */
	fd = pd_tmpfile();
	buf = calloc(1, PROC_FILE_PAGES * page_size);
	if (fd < 0 || !buf || write(fd, buf, PROC_FILE_PAGES * page_size) < 0)
		return 1;
	p = mmap(NULL, PROC_FILE_PAGES * page_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	for (i = 0; i < PROC_FILE_PAGES * page_size; i += 2 * page_size)
		if (madvise(p + i, page_size, MADV_POPULATE_READ))
			return 1;
	return 0;
}

/*
 * What a virt query on a page of the waiting process, whose pagemap entry
 * is @entry, must give; NULL if it did.  The page tables agree with the
 * pagemap: present, a report of that PFN (-ENXIO if it is no memory, a PFN
 * map); not present, -ENXIO.  Above user space ([vsyscall]): -EINVAL.
 * pagemap does not walk PFN maps ([vvar], @blind): it tells nothing there.
 */
static const char *virt_outcome(int err, const char *report, uint64_t entry,
				bool user, bool blind)
{
	unsigned long pfn = entry & PM_PFN_MASK;
	bool present = entry & PM_PRESENT;
	const char *why;

	why = pd_check_outcome("virt", err, report, present ? (long)pfn : -1);
	if (why)
		return why;
	if (blind)
		return err && err != -ENXIO ? "a PFN map refused" : NULL;
	if (!user)
		return err != -EINVAL ? "a kernel address with a pid answered" : NULL;
	if (!present)
		return err != -ENXIO ? "an address that maps nothing answered" : NULL;
	if (err && err != -EAGAIN && !(err == -ENXIO && pd_pfn_has_no_page(pfn)))
		return "an address that maps a page refused";
	return NULL;
}

static void sweep_process(struct sweep *s)
{
	unsigned long start, end, addr, pages = 0, present = 0, bad = 0, q0 = s->queries;
	unsigned long task_size_max = pd_task_size_max();
	struct pd_child child;
	double t0 = pd_now();
	char path[64], line[512];
	FILE *maps;

	if (pd_child_start(&child, large_process, NULL)) {
		ksft_test_result_fail("virt: every page of a large process: no process\n");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", child.pid);
	maps = fopen(path, "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		/* pagemap does not walk PFN maps ([vvar]): it says nothing there. */
		bool blind = strstr(line, "[vvar");

		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		for (addr = start; addr < end; addr += page_size) {
			uint64_t entry = pagemap_entry(child.pid, (void *)addr);
			bool user = addr < task_size_max;
			const char *why;
			int err;

			err = pd_virt(child.pid, (void *)addr, s->report, PD_REPORT_SIZE);
			s->queries++;
			pd_count_verdict(&s->verdicts, s->report);
			pages++;
			why = virt_outcome(err, s->report, entry, user, blind);
			if (why && bad++ < 5)
				pd_info("virt %d %#lx (pagemap %#llx, err %d): %s:\n%s",
					child.pid, addr, (unsigned long long)entry,
					err, why, s->report);
			present += !err;
		}
	}
	if (maps)
		fclose(maps);
	pd_child_end(&child);
	pd_info("virt sweep of a process: %lu pages of its address space, %lu with a report, %lu queries, %.1f s\n",
		pages, present, s->queries - q0, pd_now() - t0);
	ksft_test_result(!bad && present > PROC_ANON_PAGES / 2,
			 "virt: every page of a large process agrees with its pagemap (%lu bad)\n",
			 bad);
}

int main(void)
{
	struct sweep *s = calloc(1, sizeof(*s));
	unsigned long target;
	struct made made = {};
	double t0 = pd_now();
	const char *why;
	bool fail;

	page_size = pd_page_size();
	ksft_print_header();
	why = pd_missing(&fail);
	if (why[0]) {
		if (fail)
			ksft_exit_fail_msg("%s\n", why);
		ksft_exit_skip("%s\n", why);
	}
	ksft_set_plan(6 + NR_KINDS);
	if (!s)
		ksft_exit_fail_msg("out of memory\n");
	s->report = malloc(PD_REPORT_SIZE);
	s->max = 1024;
	s->pfn = malloc(s->max * sizeof(*s->pfn));
	s->kind = malloc(s->max);
	s->rng = 0x5eed0001 + time(NULL);
	s->per_kind = PER_KIND;
	target = pd_stress_count(SWEEP_PFNS);
	if (!s->report || !s->pfn || !s->kind)
		ksft_exit_fail_msg("out of memory\n");
	pd_info("scale %g, seed %#llx\n", pd_stress_scale(), (unsigned long long)s->rng);

	make_pages(&made);
	s->end_pfn = scan_iomem(s);
	s->seen_bits = s->end_pfn + s->end_pfn / 8 + 1024;
	s->seen = calloc(s->seen_bits / 8 + 1, 1);
	if (!s->seen)
		ksft_exit_fail_msg("out of memory\n");
	/* The PFNs of the first pass were added before the bitmap existed. */
	{
		unsigned int i, nr = s->nr;

		s->nr = 0;
		memset(s->found, 0, sizeof(s->found));
		for (i = 0; i < nr; i++)
			add_pfn(s, s->pfn[i], s->kind[i]);
	}
	scan_zoneinfo(s);
	/* Before the samples: per-cpu and vmalloc pages look reserved or flagless. */
	sweep_kernel_ranges(s);
	scan_kpageflags(s);
	add_samples(s);

	/* Past the end: by a page, by far, and the largest addresses. */
	add_pfn(s, s->end_pfn, K_BEYOND);
	add_pfn(s, s->end_pfn + 1, K_BEYOND);
	add_range(s, s->end_pfn + 2, s->seen_bits - 1, 16, K_BEYOND);
	add_pfn(s, (1UL << 40) - 1, K_BEYOND);
	add_pfn(s, ~0UL / page_size, K_BEYOND);

	/*
	 * The rest at random, up to and a little past the end of memory: at
	 * least a kind's share, however few PFNs a fraction of the scale asks.
	 */
	if (target < s->nr + s->per_kind)
		target = s->nr + s->per_kind;
	while (s->nr < target)
		add_pfn(s, pd_rand(&s->rng) % (s->end_pfn + s->end_pfn / 16), K_RANDOM);

	sweep_phys(s);
	unmake_pages(&made);
	sweep_process(s);

	pd_print_mismatches(&s->verdicts);
	pd_print_costs(&s->verdicts);
	ksft_test_result(!s->verdicts.mismatch && s->verdicts.ok,
			 "every verdict of the quiet sweep: %lu ok, %lu partial, %lu mismatch\n",
			 s->verdicts.ok, s->verdicts.partial, s->verdicts.mismatch);
	pd_info("figures: %lu queries, %u PFNs swept, %lu verdicts ok, %lu partial, %lu mismatch, %.1f s in all\n",
		s->queries, s->nr, s->verdicts.ok, s->verdicts.partial,
		s->verdicts.mismatch, pd_now() - t0);
	ksft_finished();
}
