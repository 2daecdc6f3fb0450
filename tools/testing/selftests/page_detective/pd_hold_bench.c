// SPDX-License-Identifier: GPL-2.0
/*
 * What a phys query's walk of the reverse map costs the others who need
 * the page's locks.  A page of a shmem file is mapped in -n VMAs (10,000)
 * of this process; a second process maps the same page afresh, touches it
 * and unmaps it, in a loop, each round timed: its fault takes the folio's
 * lock, its mmap() and munmap() the file's i_mmap lock, both of which the
 * walk holds.  The loop runs for -t seconds idle, then -t seconds beside a
 * third process that asks phys of the page back to back.  The query's own
 * reverse-map time (its "cost:" line) is how long a waiter would wait if
 * the walk did not stop for it.  Lines "holds: ..." (harness/bench
 * collects them).  Figures only: nothing here is a test.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "pd_util.h"

#define MAX_ROUNDS	1000000

/* What the processes share: when to stop, and what the querier saw. */
struct shared {
	int stop;			/* read with PD_READ() */
	unsigned long queries;
	unsigned long rmap_us_max, rmap_us_sum;
};

/* Map @fd's page, touch it, unmap it, for @seconds: each round's us in @v. */
static size_t map_touch_unmap(int fd, double seconds, double *v)
{
	double end = pd_now() + seconds, start;
	size_t n = 0;
	char *p;

	while (n < MAX_ROUNDS && (start = pd_now()) < end) {
		p = mmap(NULL, pd_page_size(), PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			break;
		(void)PD_READ(p[0]);
		munmap(p, pd_page_size());
		v[n++] = (pd_now() - start) * 1e6;
	}
	return n;
}

/* The querier: phys of @pfn until told to stop, its rmap times kept. */
static int ask_until_stopped(struct shared *sh, unsigned long pfn)
{
	char *report = malloc(PD_REPORT_SIZE);
	struct pd_cost c;

	if (!report)
		return 1;
	while (!PD_READ(sh->stop)) {
		if (pd_phys(pfn, report, PD_REPORT_SIZE) ||
		    pd_parse_cost(report, &c))
			return 1;
		sh->queries++;
		sh->rmap_us_sum += c.rmap_us;
		if (c.rmap_us > sh->rmap_us_max)
			sh->rmap_us_max = c.rmap_us;
	}
	return 0;
}

/* The timed loop in a process of its own, @seconds long; figures printed. */
static int time_rounds(const char *what, int fd, double seconds, double *v)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		size_t n = map_touch_unmap(fd, seconds, v);

		if (!n)
			_exit(1);
		printf("holds: rmap: mmap, touch, munmap %s: %zu rounds, ",
		       what, n);
		printf("median %.0f us, p99 %.0f us, max %.0f us\n",
		       pd_quantile(v, n, 0.5), pd_quantile(v, n, 0.99),
		       pd_quantile(v, n, 1));
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	unsigned long i, nr = 10000, pfn;
	double seconds = 3, *v;
	int opt, fd, status, ret;
	struct shared *sh;
	const char *why;
	pid_t querier;
	bool fail;
	char *p;

	while ((opt = getopt(argc, argv, "n:t:")) != -1) {
		switch (opt) {
		case 'n':
			nr = strtoul(optarg, NULL, 0) ?: nr;
			break;
		case 't':
			seconds = atof(optarg) > 0 ? atof(optarg) : seconds;
			break;
		default:
			fprintf(stderr, "usage: %s [-n VMAs] [-t seconds]\n", argv[0]);
			return 2;
		}
	}
	why = pd_missing(&fail);
	if (why[0]) {
		printf("holds: rmap: not measured: %s\n", why);
		return fail;
	}
	fd = memfd_create("pd_hold_bench", 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	v = malloc(MAX_ROUNDS * sizeof(*v));
	if (fd < 0 || ftruncate(fd, pd_page_size()) || sh == MAP_FAILED || !v)
		return 1;
	for (i = 0; i < nr; i++) {
		p = mmap(NULL, pd_page_size(), PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			printf("holds: rmap: mapping %lu of %lu: %s\n", i, nr,
			       strerror(errno));
			return 1;
		}
		(void)PD_READ(p[0]);
	}
	pfn = pagemap_pfn(0, p);
	if (!pfn)
		return 1;
	printf("holds: rmap: a page of a shmem file mapped in %lu VMAs\n", nr);
	fflush(stdout);
	ret = time_rounds("idle", fd, seconds, v);
	querier = fork();
	if (!querier)
		_exit(ask_until_stopped(sh, pfn));
	ret |= time_rounds("beside phys queries of it", fd, seconds, v);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	if (querier < 0 || waitpid(querier, &status, 0) != querier ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		ret = 1;
	/* What a waiter would wait if the walk did not stop for it. */
	if (sh->queries)
		printf("holds: rmap: %lu queries, reverse map %.1f ms mean, %.1f ms max\n",
		       sh->queries, sh->rmap_us_sum / 1e3 / sh->queries,
		       sh->rmap_us_max / 1e3);
	return ret;
}
