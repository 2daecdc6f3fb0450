// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective and a process with very many VMAs over a large, sparse
 * address space: tens of thousands of VMAs, some packed into a few page
 * tables, some each alone in page tables of their own across the whole user
 * address space, and a huge mapping touched here and there.  A query that
 * has to walk it returns a complete report; a querier killed with SIGKILL in
 * the middle of such a query ends, and the query lock is free again.  How
 * long the walk takes and how long the kill takes are printed (figures,
 * not assertions).  PD_STRESS_SCALE multiplies the counts.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/prctl.h>

#include "pd_util.h"
#include "../kselftest.h"

#define DENSE_VMAS	16000	/* alternating protections, in few page tables */
#define SPARSE_VMAS	4000	/* one page each, spread over user space */
#define SPARSE_TOUCHES	256	/* pages touched in one huge mapping */
#define HUGE_MAPPING	(16UL << 40)
#define KILLS		5
#define KILL_WAIT_MAX	120	/* seconds: a querier still there is hung */

static unsigned long page_size;

struct layout {
	unsigned long dense, sparse, touched;
	char *first;		/* a page the big process maps */
};

/* The big process: builds its address space, then waits to be asked about. */
static int big_process(void *arg)
{
	struct layout *l = arg;
	unsigned long i, nr_dense, nr_sparse, stride;
	long max_maps = pd_read_long("/proc/sys/vm/max_map_count");
	char *p, *huge;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	nr_dense = pd_stress_size(DENSE_VMAS);
	nr_sparse = pd_stress_size(SPARSE_VMAS);
	/* Stay below the limit, with room for what the process has. */
	if (max_maps > 0 && nr_dense + nr_sparse + 2000 > (unsigned long)max_maps) {
		nr_sparse = (max_maps - 2000) / 5;
		nr_dense = max_maps - 2000 - nr_sparse;
	}

	/* Dense: every other page read-only, so that no two VMAs merge. */
	p = mmap(NULL, nr_dense * page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 0x42, nr_dense * page_size);
	l->first = p;
	for (i = 1; i < nr_dense; i += 2)
		if (!mprotect(p + i * page_size, page_size, PROT_READ))
			l->dense += 2;

	/* Sparse: one touched page every stride bytes, up to 2^46. */
	stride = ((1UL << 46) / nr_sparse) & ~((2UL << 20) - 1);
	for (i = 1; i <= nr_sparse; i++) {
		char *want = (char *)(i * stride + (i % 512) * page_size);

		p = mmap(want, page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		*p = 1;
		l->sparse++;
	}

	/* Huge and sparse: 16 TiB reserved, touched every 64 GiB. */
	huge = mmap(NULL, HUGE_MAPPING, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (huge != MAP_FAILED)
		for (i = 0; i < SPARSE_TOUCHES; i++, l->touched++)
			huge[i * (HUGE_MAPPING / SPARSE_TOUCHES)] = 1;
	return 0;
}

static int vma_count(pid_t pid)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/*
 * A querier asking about @pfn again and again, until killed; or, if
 * @range, about the GiB of pages from it, a batch far longer than the wait.
 */
static void querier(unsigned long pfn, bool range, int ready)
{
	unsigned long paddr = pfn * page_size;
	int fd = open(PD_DIR "/phys", O_WRONLY);
	char input[96];

	if (range)
		snprintf(input, sizeof(input), "0x%lx-0x%lx", paddr,
			 paddr + (1UL << 30) - 1);
	else
		snprintf(input, sizeof(input), "0x%lx", paddr);
	if (fd < 0 || write(ready, "r", 1) != 1)
		_exit(1);
	for (;;)
		if (write(fd, input, strlen(input)) < 0 && errno != EINTR)
			_exit(2);
}

int main(void)
{
	struct layout *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *report = malloc(PD_REPORT_SIZE);
	double t, query_s, virt_s, lat[KILLS * 8], t_start = pd_now();
	unsigned long pfn, kills = pd_stress_count(KILLS), i;
	unsigned int killed = 0, hung = 0;
	struct pd_parsed *r = malloc(sizeof(*r));
	struct pd_summary s = {};
	struct pd_child big;
	const char *why;
	bool fail;
	int err, vmas;

	page_size = pd_page_size();
	ksft_print_header();
	why = pd_missing(&fail);
	if (why[0]) {
		if (fail)
			ksft_exit_fail_msg("%s\n", why);
		ksft_exit_skip("%s\n", why);
	}
	ksft_set_plan(4);
	if (l == MAP_FAILED || !report || !r)
		ksft_exit_fail_msg("setup failed\n");
	if (kills > ARRAY_SIZE(lat))
		kills = ARRAY_SIZE(lat);
	if (kills < 2)
		kills = 2;	/* one of one page, one of a range */

	t = pd_now();
	if (pd_child_start(&big, big_process, l))
		ksft_exit_fail_msg("the big process did not get ready\n");
	vmas = vma_count(big.pid);
	pd_info("big process %d: %d VMAs (%lu dense, %lu sparse), %lu pages touched over %lu TiB, built in %.1f s\n",
		big.pid, vmas, l->dense, l->sparse, l->touched,
		HUGE_MAPPING >> 40, pd_now() - t);

	/* virt: the lookup, then the scan of every process, the big one too. */
	t = pd_now();
	err = pd_virt(big.pid, l->first, report, PD_REPORT_SIZE);
	virt_s = pd_now() - t;
	pfn = pagemap_pfn(big.pid, l->first);
	why = pd_check_outcome("virt", err, report, pfn);
	ksft_test_result(!why && !err, "many VMAs: virt query returns a complete report%s%s\n",
			 why ? ": " : "", why ?: "");

	/* phys: the same page; the big process maps it once. */
	t = pd_now();
	err = pd_phys(pfn, report, PD_REPORT_SIZE);
	query_s = pd_now() - t;
	why = pd_check_outcome("phys", err, report, pfn);
	if (!why && pd_parse(report, r))
		why = "no summary";
	s = r->sum;
	ksft_test_result(!why && !err && s.processes >= 1 && s.user_mappings >= 1 &&
			 pd_user_map(r, big.pid, (unsigned long)l->first),
			 "many VMAs: phys query finds the big process's mapping%s%s\n",
			 why ? ": " : "", why ?: "");
	if (why || err)
		pd_info("%s", report);
	pd_info("many VMAs: virt query %.3f s, phys query %.3f s (verdict %s)\n",
		virt_s, query_s, s.verdict);

	/*
	 * kill -9 a querier in the middle of such a query: at a random point
	 * of its first query, whose length we now know; every other one in
	 * the middle of a query of a range of pages.
	 */
	for (i = 0; i < kills; i++) {
		int ready[2], status = 0;
		double deadline;
		pid_t pid, got = 0;
		char byte;

		if (pipe(ready))
			break;
		pid = fork();
		if (!pid) {
			close(ready[0]);
			querier(pfn, i % 2, ready[1]);
		}
		close(ready[1]);
		if (read(ready[0], &byte, 1) != 1) {
			close(ready[0]);
			waitpid(pid, NULL, 0);
			continue;
		}
		close(ready[0]);
		usleep((useconds_t)(query_s * 1e6 * (0.2 + 0.6 * (i % 4) / 3.0)));
		t = pd_now();
		kill(pid, SIGKILL);
		deadline = t + KILL_WAIT_MAX;
		while (pd_now() < deadline) {
			got = waitpid(pid, &status, WNOHANG);
			if (got)
				break;
			usleep(500);
		}
		if (got == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			lat[killed++] = (pd_now() - t) * 1000;
		} else {
			hung++;
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	if (killed) {
		qsort(lat, killed, sizeof(lat[0]), pd_cmp_double);
		pd_info("kill -9 of a querier mid-query (half of them of a range): %u kills, ended after min %.1f ms, median %.1f ms, max %.1f ms (one query takes %.1f ms)\n",
			killed, lat[0], lat[killed / 2], lat[killed - 1], query_s * 1000);
	}
	ksft_test_result(killed == kills && !hung,
			 "many VMAs: kill -9 ends every querier (%u of %lu, %u still there after %d s)\n",
			 killed, kills, hung, KILL_WAIT_MAX);

	/* The killed queries left the lock free: a query goes through. */
	err = pd_virt(big.pid, l->first, report, PD_REPORT_SIZE);
	ksft_test_result(!err && !pd_check_outcome("virt", err, report, pfn),
			 "many VMAs: queries go on after the kills\n");
	pd_child_end(&big);
	pd_info("figures: %lu queries at least, %d VMAs, %.1f s in all\n", kills + 3, vmas,
		pd_now() - t_start);
	ksft_finished();
}
