// SPDX-License-Identifier: GPL-2.0
/*
 * What KVM costs a phys query, and what the queries cost a VM.
 *
 * For each VM size N (MiB, -m; 0: no VM), this program makes a VM whose
 * second memslot is N MiB of 4 KiB pages (no THP: the most leaves KVM can
 * have for N MiB) that the guest has written, so that KVM maps all of them,
 * and times, over -r queries each:
 *   - phys of a page of that memory (a guest page), exhaustive and quick,
 *   - phys of a page of the same process outside every memslot: its mm is
 *     met, so the exhaustive query asks KVM for every mapping of that
 *     page, which walks every leaf of the VM;
 *   - phys of BATCH_PAGES guest pages as one list, whose scan walks every
 *     leaf of the VM once for all of them (pd_source.scan), not once a
 *     page;
 * then runs the vCPU in a loop that enters the guest and exits on an I/O
 * write, each KVM_RUN timed, for -t seconds idle and -t seconds beside a
 * process that asks phys of a guest page back to back.  Lines "kvm: ..."
 * (harness/bench collects them).  Figures only: nothing here is a test.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "pd_kvm.h"

#define BIG_SLOT	2
#define BIG_GPA		0x40000000UL	/* 1 GiB, above slot 0 */
#define MAX_RUNS	4000000

/* The VM's 4 KiB leaves, as KVM's debugfs counts them, or -1. */
static long kvm_pages_4k(const struct vm *vm)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%s/pages_4k",
		 vm->name);
	return pd_read_long(path);
}

/*
 * The median, min and max time in ms of @rounds queries of @pfn (quick or
 * not), into @out; returns how many of the reports had a "kvm:" line
 * naming VM @name.
 */
static int time_query(unsigned long pfn, bool quick, int rounds,
		      const char *name, char *report, double out[3])
{
	double t[rounds], start;
	int i, kvm_lines = 0;

	for (i = 0; i < rounds; i++) {
		start = pd_now();
		if (quick)
			pd_phys_quick(pfn, report, PD_REPORT_SIZE);
		else
			pd_phys(pfn, report, PD_REPORT_SIZE);
		t[i] = (pd_now() - start) * 1e3;
		kvm_lines += pd_has_line(report, "kvm: ", name);
	}
	out[0] = pd_quantile(t, rounds, 0.5);	/* sorts t */
	out[1] = t[0];
	out[2] = t[rounds - 1];
	return kvm_lines;
}

/* Guest pages in one batch query, spread evenly over the VM's memory. */
#define BATCH_PAGES	64

/*
 * The median, min and max time in ms of @rounds queries of BATCH_PAGES
 * pages of @big, @size bytes, as one list, into @out; returns how many of
 * the reports called every page ok.
 */
static int time_batch(char *big, unsigned long size, int rounds,
		      double out[3])
{
	char *report = malloc(PD_BATCH_REPORT_SIZE), input[BATCH_PAGES * 24];
	unsigned long pfns[BATCH_PAGES];
	struct pd_batch_totals totals;
	const char *line;
	double t[rounds], start;
	int i, all_ok = 0;

	if (!report)
		return 0;
	for (i = 0; i < BATCH_PAGES; i++)
		pfns[i] = pagemap_pfn(getpid(), big + i * (size / BATCH_PAGES));
	pd_pfn_list(input, sizeof(input), pfns, BATCH_PAGES);
	for (i = 0; i < rounds; i++) {
		start = pd_now();
		pd_query("phys", input, report, PD_BATCH_REPORT_SIZE);
		t[i] = (pd_now() - start) * 1e3;
		all_ok += !pd_parse_batch(report, &totals) &&
			  totals.ok == BATCH_PAGES;
	}
	out[0] = pd_quantile(t, rounds, 0.5);	/* sorts t */
	out[1] = t[0];
	out[2] = t[rounds - 1];
	/* Where the last one's time went. */
	for (line = strstr(report, "\nbatch cost: "); line;
	     line = strstr(line + 1, "\nbatch cost: "))
		printf("kvm:     %.*s\n", (int)strcspn(line + 1, "\n"), line + 1);
	free(report);
	return all_ok;
}

/* A process that asks phys of @pfn back to back until it is killed. */
static pid_t start_querier(unsigned long pfn, unsigned long *count)
{
	pid_t pid = fork();
	char *report;

	if (pid)
		return pid;
	report = malloc(PD_REPORT_SIZE);
	for (;;) {
		pd_phys(pfn, report, PD_REPORT_SIZE);
		PD_INC(*count);
	}
}

/*
 * Time each KVM_RUN of the I/O loop for @seconds into @runs; prints their
 * median, 99th percentile and max in us, as the loop's "@what".
 */
static int time_kvm_run(struct vm *vm, double seconds, double *runs,
			const char *what)
{
	double start, t, end = pd_now() + seconds;
	size_t n = 0;

	while (n < MAX_RUNS && (start = pd_now()) < end) {
		if (vm_run_once(vm))
			return -1;
		t = pd_now();
		runs[n++] = (t - start) * 1e6;
	}
	printf("kvm:   KVM_RUN loop %s: %zu runs, median %.1f us, p99 %.1f us, max %.1f us\n",
	       what, n, pd_quantile(runs, n, 0.5), pd_quantile(runs, n, 0.99),
	       pd_quantile(runs, n, 1.0));
	return 0;
}

static int bench_size(unsigned long mib, int rounds, double seconds,
		      char *report, double *runs)
{
	unsigned long size = mib << 20, *count, pfn, outside_pfn;
	double guest[3], quick[3], outside[3], batch[3] = {}, start;
	int lines, quick_lines, outside_lines, batch_ok;
	char *big = NULL, *outside_page;
	unsigned long queries;
	struct vm vm;
	pid_t pid;
	int ret = -1;

	outside_page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	count = mmap(NULL, sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (outside_page == MAP_FAILED || count == MAP_FAILED)
		return -1;
	outside_page[0] = 1;
	outside_pfn = pagemap_pfn(getpid(), outside_page);
	if (!mib) {
		time_query(outside_pfn, false, rounds, "", report, outside);
		printf("kvm: no VM: phys of a page of this process %.2f ms (min %.2f, max %.2f)\n",
		       outside[0], outside[1], outside[2]);
		ret = 0;
		goto out_unmap;
	}
	if (vm_create(&vm))
		goto out_vm;
	big = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED) {
		big = NULL;
		goto out_vm;
	}
	madvise(big, size, MADV_NOHUGEPAGE);
	start = pd_now();
	if (set_slot(&vm, BIG_SLOT, BIG_GPA, big, size, 0) ||
	    vm_write_range(&vm, BIG_GPA, size))
		goto out_vm;
	pfn = pagemap_pfn(getpid(), big + size / 2);
	bench_info("kvm: VM %s of %lu MiB: the guest wrote its %lu pages in %.1f s\n",
		   vm.name, mib, size / pd_page_size(), pd_now() - start);
	/* x86's MMU counts its leaves by size; arm64's stage 2 does not. */
	if (kvm_pages_4k(&vm) >= 0)
		bench_info("kvm:   KVM maps %ld 4K pages\n", kvm_pages_4k(&vm));
	lines = time_query(pfn, false, rounds, vm.name, report, guest);
	quick_lines = time_query(pfn, true, rounds, vm.name, report, quick);
	outside_lines = time_query(outside_pfn, false, rounds, vm.name, report,
				   outside);
	bench_info("kvm:   phys of a guest page %.2f ms (min %.2f, max %.2f; its kvm: line in %d of %d reports), quick %.2f ms (in %d of %d)\n",
		   guest[0], guest[1], guest[2], lines, rounds, quick[0],
		   quick_lines, rounds);
	bench_info("kvm:   phys of a page of the VMM outside the VM's memory %.2f ms (min %.2f, max %.2f; a kvm: line in %d of %d)\n",
		   outside[0], outside[1], outside[2], outside_lines, rounds);
	batch_ok = time_batch(big, size, rounds, batch);
	bench_info("kvm:   phys of %d guest pages as one list %.2f ms (min %.2f, max %.2f; all ok in %d of %d), %.1f times one guest page's\n",
		   BATCH_PAGES, batch[0], batch[1], batch[2], batch_ok, rounds,
		   batch[0] / guest[0]);

	if (vm_start_io_loop(&vm, BIG_GPA + size / 2) ||
	    time_kvm_run(&vm, seconds, runs, "idle"))
		goto out_vm;
	*count = 0;
	pid = start_querier(pfn, count);
	if (pid < 0)
		goto out_vm;
	start = pd_now();
	ret = time_kvm_run(&vm, seconds, runs,
			   "beside back-to-back phys queries of a guest page");
	queries = PD_READ(*count);
	printf("kvm:   (%lu queries in %.1f s beside it)\n", queries,
	       pd_now() - start);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out_vm:
	if (ret)
		printf("kvm: VM of %lu MiB: %s\n", mib, strerror(errno));
	if (big)
		munmap(big, size);
	vm_destroy(&vm);
out_unmap:
	munmap(count, sizeof(*count));
	munmap(outside_page, pd_page_size());
	return ret;
}

int main(int argc, char **argv)
{
	char sizes[128] = "0,64,256", *size, *save;
	double seconds = 3, *runs;
	int opt, rounds = 9, ret = 0;
	const char *why;
	char *report;
	bool fail;

	while ((opt = getopt(argc, argv, "m:r:t:")) != -1) {
		switch (opt) {
		case 'm':
			snprintf(sizes, sizeof(sizes), "%s", optarg);
			break;
		case 'r':
			rounds = atoi(optarg) > 0 ? atoi(optarg) : rounds;
			break;
		case 't':
			seconds = atof(optarg) > 0 ? atof(optarg) : seconds;
			break;
		default:
			fprintf(stderr, "usage: %s [-m MiB,...] [-r rounds] [-t seconds]\n",
				argv[0]);
			return 2;
		}
	}
	why = pd_missing(&fail);
	if (!why[0])
		why = kvm_missing(&fail);
	if (why[0]) {
		printf("kvm: not measured: %s\n", why);
		return fail;
	}
	report = malloc(PD_REPORT_SIZE);
	runs = malloc(MAX_RUNS * sizeof(*runs));
	if (!report || !runs)
		return 1;
	for (size = strtok_r(sizes, ",", &save); size;
	     size = strtok_r(NULL, ",", &save))
		if (bench_size(strtoul(size, NULL, 0), rounds, seconds, report,
			       runs))
			ret = 1;
	return ret;
}
