// SPDX-License-Identifier: GPL-2.0
/*
 * What describing a page's IOMMU mappings costs.  The DMA mapper
 * (page_detective_dma, bound to QEMU's edu device behind an IOMMU) maps
 * 0, 4096 and -m MiB (256: 65536 leaves of 4 KiB) of this process's
 * memory, one page per mapping, as a driver mapping buffers does; each
 * time, -q phys queries of a page outside them are timed by their "cost:"
 * line's iommu field, the walk of every domain's table: the walk's cost
 * per leaf is the slope.  Then a map/unmap storm (another process mapping
 * and unmapping one page through the mapper, which frees IOVAs and, in a
 * strict domain, flushes the IOTLB each time) runs -t seconds alone, then
 * -t seconds beside a process querying back to back while the -m MiB stay
 * mapped: the storm's throughput with the walks against without, the cost
 * to a driver of walks under rcu_read_lock() and of the table pages freed
 * after a grace period.  Lines "iommu: ..." (harness/bench collects them).
 * Figures only: nothing here is a test.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "pd_util.h"

/* What the processes share: when to stop, and what each counted. */
struct shared {
	int stop;			/* read with PD_READ() */
	unsigned long pairs;		/* the storm's map/unmap pairs */
	unsigned long queries;
};

static int mapper(int fd, const char *cmd)
{
	return write(fd, cmd, strlen(cmd)) < 0 ? -errno : 0;
}

/* Map @pages pages at @addr through the mapper; 0 or -errno. */
static int map_pages(int fd, char *addr, unsigned long pages)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "map %p %lu", addr, pages);
	return mapper(fd, cmd);
}

/* The iommu field of a report's "cost:" line, in us, or -1. */
static long iommu_us(const char *report)
{
	const char *p = strstr(report, "\ncost: ");
	long us = -1;

	p = p ? strstr(p, "; iommu ") : NULL;
	if (p)
		sscanf(p, "; iommu %ld us", &us);
	return us;
}

#define MAX_QUERIES	64

/* The median iommu time of @queries phys queries of @pfn, in us; or -1. */
static double median_walk_us(unsigned long pfn, int queries, char *report)
{
	double v[MAX_QUERIES];
	int i;

	for (i = 0; i < queries; i++) {
		if (pd_phys(pfn, report, PD_REPORT_SIZE))
			return -1;
		v[i] = iommu_us(report);
		if (v[i] < 0)
			return -1;
	}
	return pd_quantile(v, queries, 0.5);
}

/* The storm, in a process of its own: map and unmap @page until stopped. */
static void storm(struct shared *sh, char *page)
{
	int fd = open(PD_DMA_FILE, O_RDWR);

	if (fd < 0)
		_exit(1);
	while (!PD_READ(sh->stop)) {
		if (map_pages(fd, page, 1) || mapper(fd, "unmap"))
			_exit(1);
		sh->pairs++;
	}
	_exit(0);
}

/* The querier, in a process of its own: phys of @pfn until stopped. */
static void query(struct shared *sh, unsigned long pfn)
{
	char *report = malloc(PD_REPORT_SIZE);

	if (!report)
		_exit(1);
	while (!PD_READ(sh->stop)) {
		if (pd_phys(pfn, report, PD_REPORT_SIZE))
			_exit(1);
		sh->queries++;
	}
	_exit(0);
}

/* Run the storm for @seconds, beside the querier if @querier: pairs/s. */
static double storm_rate(struct shared *sh, char *page, unsigned long pfn,
			 bool querier, double seconds)
{
	pid_t pids[2] = { -1, -1 };
	double start, rate;
	int i, status;
	bool ok = true;

	memset(sh, 0, sizeof(*sh));
	start = pd_now();
	pids[0] = fork();
	if (!pids[0])
		storm(sh, page);
	if (querier) {
		pids[1] = fork();
		if (!pids[1])
			query(sh, pfn);
	}
	usleep(seconds * 1e6);
	PD_WRITE(sh->stop, 1);
	rate = sh->pairs / (pd_now() - start);
	for (i = 0; i < 2; i++) {
		if (pids[i] < 0)
			continue;
		ok &= waitpid(pids[i], &status, 0) == pids[i] &&
		      WIFEXITED(status) && !WEXITSTATUS(status);
	}
	return ok ? rate : -1;
}

int main(int argc, char **argv)
{
	unsigned long mib = 256, leaves[3], pfn, i;
	double seconds = 5, us[3], alone, beside;
	int opt, queries = 9, fd;
	char *buf, *outside, *storm_page, bdf[256], *report;
	struct shared *sh;

	while ((opt = getopt(argc, argv, "m:q:t:")) != -1) {
		switch (opt) {
		case 'm':
			mib = strtoul(optarg, NULL, 0) ?: mib;
			break;
		case 'q':
			queries = atoi(optarg) > 0 ? atoi(optarg) : queries;
			queries = queries < MAX_QUERIES ? queries : MAX_QUERIES;
			break;
		case 't':
			seconds = atof(optarg) > 0 ? atof(optarg) : seconds;
			break;
		default:
			fprintf(stderr, "usage: %s [-m MiB] [-q queries] [-t seconds]\n", argv[0]);
			return 2;
		}
	}
	if (access(PD_DIR "/phys", F_OK) || !pd_find_edu(bdf, sizeof(bdf)) ||
	    !pd_pci_iommu_group(bdf) || pd_bind_dma_mapper(bdf)) {
		bench_info("iommu: not measured: no Page Detective, edu device behind an IOMMU or DMA mapper\n");
		return 0;
	}
	leaves[0] = 0;
	leaves[1] = 4096;
	leaves[2] = mib * (1 << 20) / pd_page_size();
	buf = mmap(NULL, (leaves[2] + 2) * pd_page_size(), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	report = malloc(PD_REPORT_SIZE);
	fd = open(PD_DMA_FILE, O_RDWR);
	if (buf == MAP_FAILED || sh == MAP_FAILED || !report || fd < 0)
		return 1;
	/*
	 * The page asked about is never mapped for DMA: the walk is all.  The
	 * storm maps a page of its own.
	 */
	outside = buf + leaves[2] * pd_page_size();
	storm_page = outside + pd_page_size();
	pfn = pagemap_pfn(0, outside);
	if (!pfn)
		return 1;
	bench_info("iommu: a page's IOMMU mappings asked for, %d queries each, with the domain of %s mapping:\n",
		   queries, bdf);
	for (i = 0; i < ARRAY_SIZE(leaves); i++) {
		double start = pd_now();

		if (leaves[i] && map_pages(fd, buf, leaves[i])) {
			bench_info("iommu: mapping %lu pages: %s\n", leaves[i], strerror(errno));
			return 1;
		}
		us[i] = median_walk_us(pfn, queries, report);
		bench_info("iommu: %lu leaves of 4K (mapped in %.1f s): walk median %.0f us\n",
			   leaves[i], pd_now() - start, us[i]);
		fflush(stdout);
		if (i < ARRAY_SIZE(leaves) - 1 && mapper(fd, "unmap"))
			return 1;
	}
	if (us[0] < 0 || us[2] < 0)
		return 1;
	bench_info("iommu: walk cost per leaf: %.0f ns (%lu leaves against none)\n",
		   (us[2] - us[0]) * 1000 / leaves[2], leaves[2]);
	alone = storm_rate(sh, storm_page, pfn, false, seconds);
	beside = storm_rate(sh, storm_page, pfn, true, seconds);
	mapper(fd, "unmap");
	if (alone <= 0 || beside < 0) {
		bench_info("iommu: map/unmap storm: not measured: the storm or the querier failed\n");
		return 1;
	}
	bench_info("iommu: map/unmap storm: %.0f pairs/s alone, %.0f pairs/s beside %lu queries (%.1f/s) walking %lu leaves: %.0f%% of alone\n",
		   alone, beside, sh->queries, sh->queries / seconds, leaves[2],
		   100 * beside / alone);
	return 0;
}
