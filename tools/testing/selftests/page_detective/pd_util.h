/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the Page Detective selftests: run a query, parse its report,
 * and read what the kernel says about a page through interfaces Page
 * Detective does not use (/proc/PID/pagemap, /proc/kpage*), to check it.
 */
#ifndef PD_UTIL_H
#define PD_UTIL_H

#include <linux/kernel-page-flags.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define PD_DIR		"/sys/kernel/debug/page_detective"
#define PD_REPORT_SIZE	(256 * 1024)

#define PM_PRESENT	((uint64_t)1 << 63)
#define PM_SWAP		((uint64_t)1 << 62)
#define PM_UFFD_WP	((uint64_t)1 << 57)
#define PM_PFN_MASK	(((uint64_t)1 << 55) - 1)

struct pd_summary {
	unsigned long pfn;
	long refcount;
	long mapcount;
	long kernel_mappings;
	long user_mappings;
	long processes;
	char memcg[256];
	char verdict[16];
	long rmap_mappings;	/* -1 if the report does not say */
	long culprits;		/* -1 if the report does not say */
	char level[8];		/* what the mapcount is of: page, folio */
};

static inline unsigned long pd_page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* The value of CONFIG_@name in the running kernel: "y", "m" or "". */
static inline const char *pd_kernel_config(const char *name)
{
	static char value[8];
	char line[256], want[128];
	FILE *f;

	value[0] = '\0';
	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f)
		return value;
	snprintf(want, sizeof(want), "CONFIG_%s=", name);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			sscanf(line + strlen(want), "%7s", value);
	pclose(f);
	return value;
}

/*
 * TASK_SIZE_MAX, where user addresses end: on x86_64, 2^47 less a guard
 * page, or 2^56 with 5-level paging (la57); on arm64, 2^VA_BITS.
 */
static inline unsigned long pd_task_size_max(void)
{
#ifdef __aarch64__
	const char *bits = pd_kernel_config("ARM64_VA_BITS");

	return 1UL << (bits[0] ? atoi(bits) : 48);
#else
	unsigned long size = (1UL << 47) - pd_page_size();
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " la57"))
			size = (1UL << 56) - pd_page_size();
	if (f)
		fclose(f);
	return size;
#endif
}

/*
 * Whether Page Detective is here to test: "" if it is, or why it is not.
 * Its absence is a failure when the kernel was built with it.
 */
static inline const char *pd_missing(bool *fail)
{
	const char *config;

	*fail = false;
	if (!access(PD_DIR, F_OK))
		return "";
	config = pd_kernel_config("PAGE_DETECTIVE");
	*fail = config[0] != '\0';
	return *fail ? "CONFIG_PAGE_DETECTIVE is set but " PD_DIR " is missing" :
		       "the kernel has no CONFIG_PAGE_DETECTIVE";
}

/* ---- The corruption injector (CONFIG_PAGE_DETECTIVE_INJECT) ----------- */

#define PDI_FILE	"/sys/kernel/debug/page_detective_inject/corrupt"

/*
 * Whether the injector is here: "" if it is, or why it is not.  Its absence
 * is a failure when the kernel was built with it.
 */
static inline const char *pd_inject_missing(bool *fail)
{
	const char *config;

	*fail = false;
	if (!access(PDI_FILE, F_OK))
		return "";
	config = pd_kernel_config("PAGE_DETECTIVE_INJECT");
	*fail = config[0] != '\0';
	return *fail ? "CONFIG_PAGE_DETECTIVE_INJECT is set but " PDI_FILE " is missing" :
		       "the kernel has no CONFIG_PAGE_DETECTIVE_INJECT";
}

/*
 * Write the command @fmt to the injector: it corrupts the caller's own
 * address space.  Returns 0, or the write's -errno.
 */
static inline int pd_inject(const char *fmt, ...)
{
	char cmd[128];
	va_list ap;
	int fd, ret = 0;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fd = open(PDI_FILE, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Read what is left to read on @fd into @buf (NUL-terminated). */
static inline ssize_t pd_read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	return len;
}

/*
 * Write @input to the Page Detective file @file and read the report back
 * on the same descriptor into @report.  Returns 0, or the write's -errno.
 */
static inline int pd_query_len(const char *file, const char *input, size_t len,
			       char *report, size_t size)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), PD_DIR "/%s", file);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	if (write(fd, input, len) < 0)
		ret = -errno;
	if (report)
		pd_read_all(fd, report, size);
	close(fd);
	return ret;
}

static inline int pd_query(const char *file, const char *input, char *report,
			   size_t size)
{
	return pd_query_len(file, input, strlen(input), report, size);
}

static inline int pd_virt(pid_t pid, const void *addr, char *report, size_t size)
{
	char input[64];

	snprintf(input, sizeof(input), "%d 0x%lx", pid, (unsigned long)addr);
	return pd_query("virt", input, report, size);
}

static inline int pd_phys(unsigned long pfn, char *report, size_t size)
{
	char input[64];

	snprintf(input, sizeof(input), "0x%lx", pfn * pd_page_size());
	return pd_query("phys", input, report, size);
}

/* The quick query: what the reverse map knows, without the scan. */
static inline int pd_phys_quick(unsigned long pfn, char *report, size_t size)
{
	char input[64];

	snprintf(input, sizeof(input), "0x%lx quick", pfn * pd_page_size());
	return pd_query("phys", input, report, size);
}

/*
 * Parse the summary line, the last line of a complete report: a line that
 * starts with "summary: ", not those words inside another line (a file's
 * name, a comm).
 */
static inline int pd_parse_summary(const char *report, struct pd_summary *s)
{
	const char *line = report, *end, *p;

	while (line && strncmp(line, "summary: ", 9)) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}

	if (!line)
		return -1;
	if (sscanf(line,
		   "summary: pfn=%lx refcount=%ld mapcount=%ld kernel_mappings=%ld user_mappings=%ld processes=%ld memcg=%255s verdict=%15s",
		   &s->pfn, &s->refcount, &s->mapcount, &s->kernel_mappings,
		   &s->user_mappings, &s->processes, s->memcg, s->verdict) != 8)
		return -1;
	end = strchr(line, '\n');
	s->rmap_mappings = -1;
	s->culprits = -1;
	p = strstr(line, " rmap_mappings=");
	if (p && (!end || p < end))
		sscanf(p, " rmap_mappings=%ld", &s->rmap_mappings);
	p = strstr(line, " culprits=");
	if (p && (!end || p < end))
		sscanf(p, " culprits=%ld", &s->culprits);
	s->level[0] = '\0';
	p = strstr(line, " level=");
	if (p && (!end || p < end))
		sscanf(p, " level=%7s", s->level);
	return 0;
}

/* The longest input a query takes, in bytes. */
#define PD_INPUT_LIMIT		32768
/* A batch's report (a list or a range of PFNs) is at most 1 MiB. */
#define PD_BATCH_REPORT_SIZE	(1024 * 1024 + 1)

/* The phys input of a list of @nr pages, @pfns, into @buf of @size bytes. */
static inline void pd_pfn_list(char *buf, size_t size, const unsigned long *pfns,
			       int nr)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < nr && len < size; i++)
		len += snprintf(buf + len, size - len, "%#lx ",
				pfns[i] * pd_page_size());
}

/* A batch's line of one page: "batch page: pfn=... verdict=...". */
struct pd_batch_page {
	unsigned long pfn;
	char kind[16], level[8], verdict[16];
	long refcount, mapcount, kernel_mappings, user_mappings, rmap_mappings;
	long processes, culprits;
	const char *line;	/* where it is in the report */
};

/* Whether @line is the "batch page:" line of one page; parsed into @b. */
static inline bool pd_parse_batch_line(const char *line, struct pd_batch_page *b)
{
	if (strncmp(line, "batch page: pfn=", 16) ||
	    sscanf(line,
		   "batch page: pfn=%lx kind=%15s refcount=%ld mapcount=%ld kernel_mappings=%ld user_mappings=%ld rmap_mappings=%ld processes=%ld culprits=%ld level=%7s verdict=%15s",
		   &b->pfn, b->kind, &b->refcount, &b->mapcount,
		   &b->kernel_mappings, &b->user_mappings, &b->rmap_mappings,
		   &b->processes, &b->culprits, b->level, b->verdict) != 11)
		return false;
	b->line = line;
	return true;
}

/*
 * The "batch page:" lines of @pfn in @report: how many there are, the
 * first parsed into @p.
 */
static inline int pd_batch_page(const char *report, unsigned long pfn,
				struct pd_batch_page *p)
{
	const char *line = report;
	struct pd_batch_page b;
	int found = 0;

	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!pd_parse_batch_line(line, &b) || b.pfn != pfn)
			continue;
		if (!found++)
			*p = b;
	}
	return found;
}

/* The totals of a batch: its "batch:" line, which ends its report. */
struct pd_batch_totals {
	long pages, ok, partial, mismatch, not_memory, reported, scans;
};

static inline int pd_parse_batch(const char *report, struct pd_batch_totals *t)
{
	size_t len = strlen(report);
	const char *last;

	if (!len || report[len - 1] != '\n')
		return -1;
	for (last = report + len - 1; last > report && last[-1] != '\n'; last--)
		;
	if (sscanf(last,
		   "batch: pages=%ld ok=%ld partial=%ld mismatch=%ld not_memory=%ld reported=%ld scans=%ld",
		   &t->pages, &t->ok, &t->partial, &t->mismatch, &t->not_memory,
		   &t->reported, &t->scans) != 7)
		return -1;
	return 0;
}

#define PD_PCI_DEVICES	"/sys/bus/pci/devices"
/* The DMA mapper's file (page_detective_dma, mm/page_detective_dma.c). */
#define PD_DMA_FILE	"/sys/kernel/debug/page_detective_dma/map"

/* Whether PCI device @bdf is in an IOMMU group: behind an IOMMU. */
static inline bool pd_pci_iommu_group(const char *bdf)
{
	char path[512];

	snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/iommu_group", bdf);
	return !access(path, F_OK);
}

/*
 * Whether sysfs shows @bdf as an IOMMU's own hardware (AMD-Vi is a PCI
 * function): its IOMMU's class device (ivhd0) is under it, in a directory,
 * where a device behind an IOMMU has a link to its IOMMU.
 */
static inline bool pd_pci_is_iommu(const char *bdf)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/iommu", bdf);
	return !lstat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * The PCI devices without an IOMMU group, as sysfs lists them, but the
 * IOMMUs' own.
 */
static inline int pd_unprotected_pci_devices(void)
{
	DIR *dir = opendir(PD_PCI_DEVICES);
	struct dirent *d;
	int n = 0;

	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && !pd_pci_iommu_group(d->d_name) &&
		    !pd_pci_is_iommu(d->d_name))
			n++;
	closedir(dir);
	return n;
}

/* The running kernel's version, as major * 100 + minor (7.2: 702). */
static inline int pd_kernel_version(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return -1;
	return major * 100 + minor;
}

/*
 * Whether the IOMMU core describes its domains' tables (iommu: lines of
 * leaves, identity domains, devices behind no IOMMU): 7.2's does, through
 * generic_pt; 6.12's cannot, and the report says the mappings are not known.
 */
static inline bool pd_iommu_walks(void)
{
	return pd_kernel_version() >= 702;
}

/*
 * Whether the running kernel keeps no per-page mapcounts
 * (CONFIG_NO_PAGE_MAPCOUNT): a large folio's mapcount is then judged at
 * folio level, and /proc/kpagecount shows a per-page average.
 */
static inline bool pd_no_page_mapcount(void)
{
	return !strcmp(pd_kernel_config("NO_PAGE_MAPCOUNT"), "y");
}

/* The references of the report's "refcount:" line; -1 where it is missing. */
struct pd_refs {
	long refcount, mapped, cache, private_refs, pinned, other;
};

static inline void pd_parse_refs(const char *report, struct pd_refs *r)
{
	const char *line = strstr(report, "\nrefcount: ");

	*r = (struct pd_refs){ -1, -1, -1, -1, -1, -1 };
	if (line)
		sscanf(line,
		       "\nrefcount: %ld = %ld mapped + %ld cache + %ld private + %ld pinned + %ld other",
		       &r->refcount, &r->mapped, &r->cache, &r->private_refs,
		       &r->pinned, &r->other);
}

/* Run on CPU @cpu only: a page freed there waits on its free lists. */
static inline void pd_stay_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* What a query cost, from its "cost:" line. */
struct pd_cost {
	unsigned long entries;		/* user page-table entries read */
	unsigned long tables;		/* user PTE tables read */
	unsigned long scan_us;		/* the scan of every process */
	unsigned long hold_us;		/* longest mmap lock hold */
	unsigned long hold_unswitched_us;	/* of those never switched out */
	unsigned long vma_hold_us;	/* longest hold of a VMA's read lock */
	unsigned long vma_hold_unswitched_us;
	unsigned long kernel_us;	/* the kernel's page tables */
	unsigned long rmap_us;		/* the reverse map */
	/* Of the scan: the lockless prescan, and the mms walked after it. */
	unsigned long prescan_us;
	unsigned int locked_mms, scanned_mms;
};

/* The report's "cost:" line, for sscanf(). */
#define PD_COST_FMT "cost: %lu page-table entries in %lu PTE tables in %lu us, longest mmap lock hold %lu us (%lu us not switched out), longest VMA lock hold %lu us (%lu us not switched out); kernel page tables %lu us; rmap %lu us"

/* Its end: what the scan's lockless prescan cost and left to walk. */
#define PD_COST_PRESCAN_FMT "; of the scan, prescan %lu us, %u of %u mms walked under their locks"

static inline int pd_parse_cost(const char *report, struct pd_cost *c)
{
	const char *line = strstr(report, "\ncost: ");

	if (!line)
		return -1;
	if (sscanf(line + 1, PD_COST_FMT, &c->entries, &c->tables, &c->scan_us,
		   &c->hold_us, &c->hold_unswitched_us, &c->vma_hold_us,
		   &c->vma_hold_unswitched_us, &c->kernel_us, &c->rmap_us) != 9)
		return -1;
	line = strstr(line, "; of the scan, prescan ");
	if (!line || sscanf(line, PD_COST_PRESCAN_FMT, &c->prescan_us,
			    &c->locked_mms, &c->scanned_mms) != 3)
		return -1;
	return 0;
}

/* The report's line that starts with @prefix and contains @needle. */
static inline bool pd_has_line(const char *report, const char *prefix,
			       const char *needle)
{
	const char *line = report;
	size_t plen = strlen(prefix);

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len >= plen && !strncmp(line, prefix, plen)) {
			char buf[1024];

			snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
			if (strstr(buf, needle))
				return true;
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

/* The /proc/PID/pagemap entry of @addr in process @pid (0: ourselves). */
static inline uint64_t pagemap_entry(pid_t pid, const void *addr)
{
	char path[64];
	uint64_t entry = 0;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &entry, sizeof(entry),
		  (unsigned long)addr / pd_page_size() * sizeof(entry)) != sizeof(entry))
		entry = 0;
	close(fd);
	return entry;
}

/* The PFN that @addr maps in @pid, or 0 if none. */
static inline unsigned long pagemap_pfn(pid_t pid, const void *addr)
{
	uint64_t entry = pagemap_entry(pid, addr);

	return entry & PM_PRESENT ? entry & PM_PFN_MASK : 0;
}

/*
 * How many of the pages in [@addr, @addr + @len) that @pid maps are pages of
 * the @nr from @first_pfn, as its pagemap says.
 */
static inline long pagemap_count(pid_t pid, const void *addr, unsigned long len,
				 unsigned long first_pfn, unsigned long nr)
{
	unsigned long off;
	long count = 0;

	for (off = 0; off < len; off += pd_page_size())
		count += pagemap_pfn(pid, (const char *)addr + off) - first_pfn < nr;
	return count;
}

/* A /proc/kpageflags bit's mask, and the kernel-internal bit tests read. */
#define BIT64(nr)	((uint64_t)1 << (nr))
#define KPF_RESERVED	32	/* include/linux/kernel-page-flags.h */

/* The entry for @pfn in /proc/kpagecount, kpageflags or kpagecgroup. */
static inline uint64_t kpage_read(const char *file, unsigned long pfn)
{
	char path[64];
	uint64_t val = ~0ULL;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s", file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return ~0ULL;
	if (pread(fd, &val, sizeof(val), pfn * sizeof(val)) != sizeof(val))
		val = ~0ULL;
	close(fd);
	return val;
}

/* A resource of /proc/iomem (its addresses are root's to read). */
struct pd_iomem {
	unsigned long start, end;	/* physical, both inclusive */
	bool top;			/* top level, not a child */
	char name[64];
};

/* The next resource of @f, /proc/iomem open: true, or false at its end. */
static inline bool pd_iomem_next(FILE *f, struct pd_iomem *r)
{
	char line[256];
	int name = 0;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %lx-%lx : %n", &r->start, &r->end, &name) != 2 || !name)
			continue;
		r->top = line[0] != ' ';
		line[strcspn(line, "\n")] = 0;
		snprintf(r->name, sizeof(r->name), "%s", line + name);
		return true;
	}
	return false;
}

/*
 * Whether @r is a range of memory: System RAM, at the top level, or
 * hot-added by a driver into a region of its device ("System RAM
 * (virtio_mem)", "System RAM (kmem)"), a child of it.
 */
static inline bool pd_iomem_is_ram(const struct pd_iomem *r)
{
	return r->top ? !strcmp(r->name, "System RAM") :
			!strncmp(r->name, "System RAM (", 12);
}

/* The end of memory: past the last byte of System RAM, or 0. */
static inline unsigned long pd_iomem_ram_end(void)
{
	FILE *f = fopen("/proc/iomem", "r");
	unsigned long end = 0;
	struct pd_iomem r;

	if (!f)
		return 0;
	while (pd_iomem_next(f, &r))
		if (pd_iomem_is_ram(&r) && r.end + 1 > end)
			end = r.end + 1;
	fclose(f);
	return end;
}

/*
 * What one PTE table maps, a PMD entry's range: 2 MiB with 4 KiB pages,
 * 512 MiB with 64 KiB ones (a table is a page of 8-byte entries).
 */
static inline unsigned long pd_pmd_size(void)
{
	return pd_page_size() / 8 * pd_page_size();
}

/*
 * What one PMD table maps, a PUD entry's range: 1 GiB with 4 KiB pages,
 * 64 GiB with 16 KiB ones, 4 TiB with 64 KiB ones.
 */
static inline unsigned long pd_pud_size(void)
{
	return pd_page_size() / 8 * pd_pmd_size();
}

/* @p rounded up to the start of a PMD range. */
static inline char *pd_pmd_align(const void *p)
{
	unsigned long pmd = pd_pmd_size();

	return (char *)(((unsigned long)p + pmd - 1) & ~(pmd - 1));
}

/*
 * A PMD-mapped anonymous THP of pd_pmd_size(), aligned inside a mapping of
 * twice its size that *@area is set to (to munmap() whole), or NULL (the
 * test then skips).
 */
static inline char *pd_map_thp(void **area)
{
	unsigned long size = pd_pmd_size();
	char *p = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *thp;

	if (p == MAP_FAILED)
		return NULL;
	*area = p;
	thp = pd_pmd_align(p);
	madvise(thp, size, MADV_HUGEPAGE);
	memset(thp, 0x3d, size);
	if (!(kpage_read("kpageflags", pagemap_pfn(0, thp)) & BIT64(KPF_THP)))
		return NULL;
	return thp;
}

/* @size bytes of @fd (or anonymous) mapped at the start of a PMD range. */
static inline char *pd_mmap_in_pmd(unsigned long size, int prot, int flags, int fd)
{
	unsigned long pmd = pd_pmd_size();
	char *area = mmap(NULL, pmd + size, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;

	if (area == MAP_FAILED)
		return NULL;
	p = pd_pmd_align(area);
	if (mmap(p, size, prot, flags | MAP_FIXED, fd, 0) == MAP_FAILED) {
		munmap(area, pmd + size);
		return NULL;
	}
	if (p > area)
		munmap(area, p - area);
	munmap(p + size, area + pmd + size - (p + size));
	return p;
}

/* @pages pages of a new file at @path, mapped shared in one PMD range. */
static inline char *pd_map_file_pmd(const char *path, unsigned long pages, int *fd)
{
	unsigned long size = pages * pd_page_size();

	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (*fd < 0 || ftruncate(*fd, size))
		return NULL;
	return pd_mmap_in_pmd(size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd);
}

/*
 * Two pages of a new file that nothing can write, mapped shared and
 * read-only in one PMD range: where the injector may put a stale PTE (see
 * its "stale").  The first page is not mapped, the second is, so that a
 * PTE table holds the first one's entry.
 */
static inline char *pd_map_readonly_file(const char *path)
{
	unsigned long size = 2 * pd_page_size();
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *p;

	if (fd < 0 || ftruncate(fd, size) || close(fd))
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	p = pd_mmap_in_pmd(size, PROT_READ, MAP_SHARED, fd);
	close(fd);
	/* A read maps both pages (fault-around); then only the second. */
	if (!p || p[pd_page_size()] != 0 || madvise(p, pd_page_size(), MADV_DONTNEED))
		return NULL;
	return p;
}

/* A report, parsed into the parts the tests check. */
#define PD_MAX_MAPS	64

struct pd_user_map {
	int pid;
	unsigned long addr;
	char level[16];
	bool counted;
	char name[256];
};

struct pd_kernel_map {
	unsigned long addr;
	char level[8];
	char area[32];
};

struct pd_parsed {
	struct pd_summary sum;
	struct pd_user_map user[PD_MAX_MAPS];
	int nr_user;
	struct pd_user_map rmap[PD_MAX_MAPS];	/* "rmap:" lines */
	int nr_rmap;
	struct pd_kernel_map kernel[PD_MAX_MAPS];
	int nr_kernel;
	bool direct_map_unmapped;
	char kind[16];		/* before "flags:": anon, ksm, file, movable */
	char flags[512];	/* the names between the parentheses */
	char page_type[32];
	bool pinned;		/* a folio line with an order, not "none" */
	unsigned int order;
	unsigned long idx;
	bool zero_page;
	char leaf[16];		/* virt: the level of the leaf entry */
	unsigned long leaf_pfn;
};

/*
 * "user: pid PID (COMM) ADDR LEVEL [(NOTE...) ...][NAME]", and the same
 * for "rmap:"; a mapping with a "not counted" note is not counted.
 */
static inline void pd_parse_map_line(const char *line, struct pd_user_map *maps,
				     int *nr)
{
	struct pd_user_map *m = &maps[*nr];
	const char *p = strstr(line, ") 0x");
	int n = 0;

	if (*nr == PD_MAX_MAPS || !p)
		return;
	if (sscanf(strchr(line, ':'), ": pid %d", &m->pid) != 1 ||
	    sscanf(p + 2, "%lx %15s %n", &m->addr, m->level, &n) != 2 || !n)
		return;
	p += 2 + n;
	m->counted = true;
	while (*p == '(') {
		if (strstr(p, ", not counted) ") == p + strcspn(p, ","))
			m->counted = false;
		p = strstr(p, ") ");
		if (!p)
			return;
		p += 2;
	}
	snprintf(m->name, sizeof(m->name), "%.*s", (int)strcspn(p, "\n"), p);
	/* Drop the space that ends a line without a name. */
	m->name[strcspn(m->name, "\n")] = '\0';
	while (strlen(m->name) && m->name[strlen(m->name) - 1] == ' ')
		m->name[strlen(m->name) - 1] = '\0';
	(*nr)++;
}

static inline void pd_parse_kernel_line(const char *line, struct pd_parsed *r)
{
	struct pd_kernel_map *m = &r->kernel[r->nr_kernel];
	int n = 0;

	if (strstr(line, ", not mapped")) {
		r->direct_map_unmapped = true;
		return;
	}
	if (r->nr_kernel == PD_MAX_MAPS ||
	    sscanf(line, "kernel: %lx %7s %n", &m->addr, m->level, &n) != 2 || !n)
		return;
	snprintf(m->area, sizeof(m->area), "%.*s", (int)strcspn(line + n, "\n"),
		 line + n);
	r->nr_kernel++;
}

/* The line after @line, or NULL. */
static inline const char *pd_next_line(const char *line)
{
	line = strchr(line, '\n');
	return line ? line + 1 : NULL;
}

/* Parse @report into @r; 0 if it has a summary line. */
static inline int pd_parse(const char *report, struct pd_parsed *r)
{
	const char *line, *f;

	memset(r, 0, sizeof(*r));
	for (line = report; line && *line; line = pd_next_line(line)) {
		if (!strncmp(line, "user: pid ", 10))
			pd_parse_map_line(line, r->user, &r->nr_user);
		else if (!strncmp(line, "rmap: pid ", 10))
			pd_parse_map_line(line, r->rmap, &r->nr_rmap);
		else if (!strncmp(line, "kernel: 0x", 10))
			pd_parse_kernel_line(line, r);
		else if (!strncmp(line, "page_type: ", 11))
			sscanf(line, "page_type: %*x(%31[^)])", r->page_type);
		else if (!strncmp(line, "folio: order ", 13))
			r->pinned = sscanf(line, "folio: order %u, %*u bytes, page %lu",
					   &r->order, &r->idx) == 2;
		else if (!strncmp(line, "leaf: ", 6))
			sscanf(line, "leaf: %15[^,], pfn %lx", r->leaf, &r->leaf_pfn);
		if (!strncmp(line, "folio: ", 7) && strstr(line, "zero page"))
			r->zero_page = true;
		f = strstr(line, "flags: 0x");
		if (f && f < strchr(line, '\n') && !r->flags[0]) {
			/* "[KIND ]flags: 0xHEX(NAME|NAME...)" */
			if (sscanf(line, "%15s flags:", r->kind) != 1 ||
			    !strcmp(r->kind, "flags:"))
				r->kind[0] = '\0';
			if (sscanf(f, "flags: %*[^(](%511[^)])", r->flags) != 1)
				r->flags[0] = '\0';
		}
	}
	return pd_parse_summary(report, &r->sum);
}

/* Whether flag @name is among the flag names of @r. */
static inline bool pd_has_flag(const struct pd_parsed *r, const char *name)
{
	const char *p = r->flags;
	size_t len = strlen(name);

	while ((p = strstr(p, name))) {
		if ((p == r->flags || p[-1] == '|') && (p[len] == '|' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

/* The user mapping of @r at @pid and @addr, or NULL. */
static inline const struct pd_user_map *pd_user_map(const struct pd_parsed *r,
						    int pid, unsigned long addr)
{
	int i;

	for (i = 0; i < r->nr_user; i++)
		if (r->user[i].pid == pid && r->user[i].addr == addr)
			return &r->user[i];
	return NULL;
}

/* The first kernel mapping of @r in @area, or NULL. */
static inline const struct pd_kernel_map *pd_kernel_map(const struct pd_parsed *r,
							const char *area)
{
	int i;

	for (i = 0; i < r->nr_kernel; i++)
		if (!strcmp(r->kernel[i].area, area))
			return &r->kernel[i];
	return NULL;
}

/* The inode number of the cgroup at @path of the cgroup2 mount. */
static inline unsigned long pd_cgroup_ino(const char *path)
{
	char full[512];
	struct stat st;

	snprintf(full, sizeof(full), "/sys/fs/cgroup%s", path);
	if (stat(full, &st))
		return 0;
	return st.st_ino;
}

/*
 * A child process that runs @fn(@arg), and then stays, for the parent to
 * look at, until pd_child_end() kills it.  @fn returns 0 when it is ready;
 * otherwise the child exits at once and pd_child_start() fails.
 */
struct pd_child {
	pid_t pid;
};

static inline int pd_child_start(struct pd_child *c, int (*fn)(void *), void *arg)
{
	int ready[2];
	char byte = 0;

	if (pipe(ready))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		close(ready[0]);
		if (fn(arg) || write(ready[1], &byte, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &byte, 1) != 1) {
		close(ready[0]);
		waitpid(c->pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	return 0;
}

/* Kill the child; 0 if it was still there, waiting. */
static inline int pd_child_end(struct pd_child *c)
{
	int status;

	if (kill(c->pid, SIGKILL) || waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

/* ---- For the stress tests --------------------------------------------- */

/*
 * PD_STRESS_SCALE (environment; harness/boot passes it on the kernel
 * command line) scales the counts of the stress tests: 1, the full counts,
 * is `make soak`'s; `make check` runs a fraction of them (harness/check),
 * and a long soak a multiple.  Anything else but a positive number is 1.
 */
static inline double pd_stress_scale(void)
{
	const char *env = getenv("PD_STRESS_SCALE");
	double scale = env ? strtod(env, NULL) : 1;

	return scale > 0 ? scale : 1;
}

/* A stress test's count, @full at scale 1, at PD_STRESS_SCALE: at least 1. */
static inline unsigned long pd_stress_count(unsigned long full)
{
	double n = full * pd_stress_scale() + 0.5;

	return n < 1 ? 1 : (unsigned long)n;
}

/*
 * The size of what a stress test builds (VMAs, pages), @full at scale 1:
 * a soak makes it larger, but a fraction does not make it smaller, since
 * the size is what such a test is about; only its repetitions shrink.
 */
static inline unsigned long pd_stress_size(unsigned long full)
{
	return pd_stress_scale() > 1 ? pd_stress_count(full) : full;
}

/* For what processes of a test share through a MAP_SHARED mapping. */
#define PD_READ(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define PD_WRITE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define PD_INC(x)	__atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

/*
 * ksft_print_msg(), for the "# " lines of figures, under a name that
 * checkpatch knows for a logging function (long format strings stay whole).
 */
#define pd_info(...)	ksft_print_msg(__VA_ARGS__)
/* printf(), for the benchmarks' figures, under such a name too. */
#define bench_info(...)	printf(__VA_ARGS__)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* qsort()'s comparison of doubles, for the figures' medians. */
static inline int pd_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v and return its @q quantile (0.5: the median). */
static inline double pd_quantile(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), pd_cmp_double);
	return v[(size_t)(q * (n - 1))];
}

/* Seconds on CLOCK_MONOTONIC. */
static inline double pd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A small, fast, seedable PRNG (xorshift64*), so that a run can be replayed. */
static inline uint64_t pd_rand(uint64_t *state)
{
	uint64_t x = *state ?: 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* The errnos Documentation/mm/page_detective.rst gives a write to @file. */
static inline bool pd_errno_documented(const char *file, int err)
{
	switch (-err) {
	case 0:
	case EINVAL:
	case EAGAIN:
	case EINTR:
		return true;
	case ESRCH:
	case ENXIO:
		return !strcmp(file, "virt");
	}
	return false;
}

/* The number of lines of @report. */
static inline int pd_report_lines(const char *report)
{
	int lines = 0;

	for (; *report; report++)
		lines += *report == '\n';
	return lines;
}

/*
 * Whether a query on @file that returned -errno @err and read back @report
 * did what the documentation says; NULL if it did, or what is wrong.  With
 * 0 the report is complete: it ends with a summary line, of @pfn unless
 * @pfn is -1.  Some errors are explained in exactly one line, none has a
 * summary.  A report cut short by a fatal signal (-EINTR) may be anything.
 */
static inline const char *pd_check_outcome(const char *file, int err,
					   const char *report, long pfn)
{
	static char why[128];
	const char *last;
	struct pd_summary s;
	size_t len = strlen(report);

	if (!pd_errno_documented(file, err)) {
		snprintf(why, sizeof(why), "%s: undocumented error %d (%s)",
			 file, err, strerror(-err));
		return why;
	}
	if (err == -EINTR)
		return NULL;
	if (err) {
		if (strstr(report, "summary: "))
			return "an error with a summary line";
		if ((err == -EINVAL || err == -ESRCH) && pd_report_lines(report) != 1)
			return "an error not explained in exactly one line";
		if (!len)
			return "an error without an explanation";
		return NULL;
	}
	if (!len || report[len - 1] != '\n')
		return "a report that does not end with a whole line";
	for (last = report + len - 1; last > report && last[-1] != '\n'; last--)
		;
	if (!strncmp(last, "batch: ", 7)) {
		struct pd_batch_totals t;

		if (pd_parse_batch(last, &t))
			return "a batch whose last line does not parse";
		return pfn == -1 ? NULL : "a batch's report, where one page was asked";
	}
	if (strncmp(last, "summary: ", 9) || pd_parse_summary(last, &s))
		return "a report whose last line is no summary";
	if (pfn != -1 && s.pfn != (unsigned long)pfn) {
		snprintf(why, sizeof(why), "a summary of pfn %#lx, not %#lx",
			 s.pfn, pfn);
		return why;
	}
	return NULL;
}

/*
 * The verdicts of complete reports, counted.  On a guest where nobody
 * corrupts memory, a "mismatch" is a false alarm: the first few are kept
 * for the log.
 */
struct pd_verdicts {
	unsigned long ok, partial, mismatch;
	char first_mismatch[4096];
	char why[8][160];	/* the verdict lines of the first mismatches */
	/* What the reports' cost: lines add up to, where they parse. */
	unsigned long costed;
	unsigned long long scan_us, kernel_us, rmap_us, verdict_us;
};

/* Add the report's cost: line to @v's sums. */
static inline void pd_count_cost(struct pd_verdicts *v, const char *report)
{
	const char *tail = strstr(report, "us; verdict ");
	unsigned long verdict_us;
	struct pd_cost c;

	if (pd_parse_cost(report, &c) || !tail ||
	    sscanf(tail, "us; verdict %lu us", &verdict_us) != 1)
		return;
	v->costed++;
	v->scan_us += c.scan_us;
	v->kernel_us += c.kernel_us;
	v->rmap_us += c.rmap_us;
	v->verdict_us += verdict_us;
}

static inline void pd_count_verdict(struct pd_verdicts *v, const char *report)
{
	struct pd_batch_totals t;
	struct pd_summary s;

	/* A batch: its pages' verdicts, the lines of the mismatches kept. */
	if (!pd_parse_batch(report, &t)) {
		const char *line = report, *start;
		long i;

		v->ok += t.ok;
		v->partial += t.partial;
		if (t.mismatch && !v->mismatch)
			snprintf(v->first_mismatch, sizeof(v->first_mismatch),
				 "%s", report);
		for (i = 0; i < t.mismatch; i++, line++) {
			line = strstr(line, " verdict=mismatch\n");
			if (!line)
				break;
			for (start = line; start > report && start[-1] != '\n'; start--)
				;
			if (v->mismatch + i < ARRAY_SIZE(v->why))
				snprintf(v->why[v->mismatch + i], sizeof(v->why[0]),
					 "%.*s", (int)(line - start) + 17, start);
		}
		v->mismatch += t.mismatch;
		return;
	}
	if (pd_parse_summary(report, &s))
		return;
	pd_count_cost(v, report);
	if (!strcmp(s.verdict, "ok")) {
		v->ok++;
	} else if (!strcmp(s.verdict, "partial")) {
		v->partial++;
	} else {
		const char *line = strstr(report, "\nverdict: ");

		if (!v->mismatch)
			snprintf(v->first_mismatch, sizeof(v->first_mismatch),
				 "%s", report);
		if (line && v->mismatch < ARRAY_SIZE(v->why))
			snprintf(v->why[v->mismatch], sizeof(v->why[0]), "%.*s",
				 (int)strcspn(line + 1, "\n"), line + 1);
		v->mismatch++;
	}
}

/*
 * Print the first mismatch whole, and the verdict lines of the next: a
 * macro, as pd_info() needs kselftest.h, which not every user includes.
 */
#define pd_print_mismatches(verdicts) do {				\
	const struct pd_verdicts *__v = (verdicts);			\
	unsigned long __i;						\
									\
	if (__v->mismatch)						\
		pd_info("the first mismatch:\n%s", __v->first_mismatch);	\
	for (__i = 0; __i < __v->mismatch && __i < ARRAY_SIZE(__v->why); __i++) \
		pd_info("mismatch %lu: %s\n", __i + 1, __v->why[__i]);	\
} while (0)

/* Where the reports' time went, on average: a figure, never a test. */
#define pd_print_costs(verdicts) do {					\
	const struct pd_verdicts *__v = (verdicts);			\
	unsigned long __n = __v->costed ?: 1;				\
									\
	pd_info("cost per report (mean of %lu): "			\
		"scan %llu us, kernel page tables %llu us, "		\
		"rmap %llu us, verdict %llu us\n",			\
		__v->costed, __v->scan_us / __n, __v->kernel_us / __n,	\
		__v->rmap_us / __n, __v->verdict_us / __n);		\
} while (0)

/* One more than the highest memory block number in sysfs. */
static inline unsigned long pd_memory_blocks(void)
{
	DIR *dir = opendir("/sys/devices/system/memory");
	unsigned long nr = 0, block;
	struct dirent *d;

	while (dir && (d = readdir(dir)))
		if (sscanf(d->d_name, "memory%lu", &block) == 1 && block >= nr)
			nr = block + 1;
	if (dir)
		closedir(dir);
	return nr;
}

/*
 * Whether @pfn lies in an online memory block, as sysfs tells: where the
 * kernel has an online memory map.  1 or 0; -1 without memory blocks in
 * sysfs (no memory hotplug), where all memory is online.
 * The blocks' states are read once: the callers do not offline memory.
 */
static inline int pd_pfn_block_online(unsigned long pfn)
{
	static unsigned long block_pages, nr_blocks;
	static bool *online;
	unsigned long block;

	if (!online) {
		char path[80], state[16];
		unsigned long bytes;
		FILE *f = fopen("/sys/devices/system/memory/block_size_bytes", "r");

		if (!f)
			return -1;
		if (fscanf(f, "%lx", &bytes) != 1 || bytes < (unsigned long)getpagesize()) {
			fclose(f);
			return -1;
		}
		fclose(f);
		block_pages = bytes / getpagesize();
		nr_blocks = pd_memory_blocks();
		online = calloc(nr_blocks + 1, sizeof(*online));
		if (!online)
			return -1;
		for (block = 0; block < nr_blocks; block++) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/memory/memory%lu/state", block);
			f = fopen(path, "r");
			if (!f)
				continue;
			online[block] = fscanf(f, "%15s", state) == 1 &&
					!strcmp(state, "online");
			fclose(f);
		}
	}
	block = pfn / block_pages;
	return block < nr_blocks && online[block];
}

/*
 * Whether @pfn has no online memory map: /proc/kpageflags says KPF_NOPAGE
 * (6.12) or lies beyond the memory it describes, or no online memory block
 * holds it (7.2's /proc/kpageflags gives 0 there, as for a page with no
 * flags).
 */
static inline bool pd_pfn_has_no_page(unsigned long pfn)
{
	uint64_t flags = kpage_read("kpageflags", pfn);

	return flags == ~0ULL || (flags & (1ULL << 20 /* KPF_NOPAGE */)) ||
	       pd_pfn_block_online(pfn) == 0;
}

/*
 * A new, unlinked file for page cache: on the guest's ext4 filesystem
 * (a block device) when it is mounted, else in /tmp.  -1 on failure.
 */
static inline int pd_tmpfile(void)
{
	char ext4[] = "/mnt/ext4/pd.XXXXXX", tmp[] = "/tmp/pd.XXXXXX";
	char *path = ext4;
	int fd = mkstemp(ext4);

	if (fd < 0) {
		path = tmp;
		fd = mkstemp(tmp);
	}
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Write @val to the file at @path; 0 or -errno. */
static inline int pd_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The setting of a sysfs choice file ("always [never]"): the bracketed one. */
static inline int pd_sysfs_choice(const char *path, char *val, size_t size)
{
	char line[128], *open_br, *close_br;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	open_br = fgets(line, sizeof(line), f) ? strchr(line, '[') : NULL;
	fclose(f);
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (!close_br || (size_t)(close_br - open_br) > size)
		return -1;
	snprintf(val, size, "%.*s", (int)(close_br - open_br - 1), open_br + 1);
	return 0;
}

/*
 * The size of the anonymous large folio (mTHP) that arm64 maps with one
 * contiguous-PTE block (contpte, CONT_PTE_SIZE): 16 entries of 4 KiB, 128
 * of 16 KiB or 32 of 64 KiB, so 64 KiB or 2 MiB.  x86 has no such block:
 * there the 64 KiB size is an mTHP size like another.
 */
static inline unsigned long pd_mthp_block_size(void)
{
	return pd_page_size() == 4096 ? 64UL << 10 : 2UL << 20;
}

/* The sysfs setting of that mTHP size, in a buffer of its own. */
static inline const char *pd_mthp_block_setting(void)
{
	static char path[96];

	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%lukB/enabled",
		 pd_mthp_block_size() >> 10);
	return path;
}

/*
 * Fault in an anonymous large folio of pd_mthp_block_size() at @at,
 * aligned to that size in a private anonymous mapping, with that size
 * enabled for this one fault, and fill it.  0 when it did; -ENOENT where
 * there is no such mTHP size; -EAGAIN when the fault allocated something
 * else; or the error of writing the setting.
 */
static inline int pd_fault_mthp_block(char *at)
{
	const char *setting = pd_mthp_block_setting();
	char old[32];
	int ret;

	if (pd_sysfs_choice(setting, old, sizeof(old)))
		return -ENOENT;
	ret = pd_write_file(setting, "always");
	if (ret)
		return ret;
	at[0] = 1;
	ret = pd_write_file(setting, old);
	if (ret)
		return ret;
	memset(at, 1, pd_mthp_block_size());
	if (!(kpage_read("kpageflags", pagemap_pfn(0, at)) & BIT64(KPF_COMPOUND_HEAD)))
		return -EAGAIN;
	return 0;
}

/* Why a test skips after pd_fault_mthp_block() returned @ret, or NULL. */
static inline const char *pd_mthp_block_skip(int ret)
{
	static char why[160];

	if (ret == -ENOENT)
		snprintf(why, sizeof(why), "no %lu KiB mTHP size here (%s)",
			 pd_mthp_block_size() >> 10, pd_mthp_block_setting());
	else if (ret == -EAGAIN)
		snprintf(why, sizeof(why), "the fault allocated no %lu KiB folio",
			 pd_mthp_block_size() >> 10);
	else
		return NULL;
	return why;
}

/* The first line of @path, without its newline, into @buf; or "". */
static inline void pd_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The PCI address of QEMU's edu device (1234:11e8) into @bdf, or false. */
static inline bool pd_find_edu(char *bdf, size_t size)
{
	DIR *dir = opendir(PD_PCI_DEVICES);
	char path[512], vendor[16], device[16];
	struct dirent *d;
	bool found = false;

	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/vendor", d->d_name);
		pd_read_line(path, vendor, sizeof(vendor));
		snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/device", d->d_name);
		pd_read_line(path, device, sizeof(device));
		if (!strcmp(vendor, "0x1234") && !strcmp(device, "0x11e8")) {
			snprintf(bdf, size, "%s", d->d_name);
			found = true;
		}
	}
	closedir(dir);
	return found;
}

/* Bind page_detective_dma to @bdf by driver_override; 0 or -errno. */
static inline int pd_bind_dma_mapper(const char *bdf)
{
	char path[512], link[256];
	ssize_t n;
	int ret;

	if (system("modprobe page_detective_dma") != 0)
		return -ENOENT;
	snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/driver", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		if (strstr(link, "/page_detective_dma"))
			return 0;
		snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/driver/unbind", bdf);
		ret = pd_write_file(path, bdf);
		if (ret)
			return ret;
	}
	snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/driver_override", bdf);
	ret = pd_write_file(path, "page_detective_dma");
	if (ret)
		return ret;
	ret = pd_write_file("/sys/bus/pci/drivers_probe", bdf);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), PD_PCI_DEVICES "/%s/driver", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -ENODEV;
	link[n] = '\0';
	return strstr(link, "/page_detective_dma") ? 0 : -ENODEV;
}

/* A number read from the file at @path, or -1. */
static inline long pd_read_long(const char *path)
{
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

#endif /* PD_UTIL_H */
