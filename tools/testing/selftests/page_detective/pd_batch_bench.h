/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pd_bench's batch rows (see harness/README.md, "Benchmark"): phys asked
 * about many pages in one query, 1, 8, 64 and 512 of them, at the
 * reference grid point.  Scattered: private anonymous pages, each mapped
 * by one process, spread over the workload's processes and their memory;
 * or as one range: that many physically contiguous pages from the middle
 * of the workload's memory, whatever they are.  Each against one page's
 * query (the one-page scattered row), and against the userspace scan
 * that reads each pagemap once for the whole set (us_scan_set()).
 *
 * Output: "batchcsv:" lines (a header and a row per size and layout),
 * "batch:" lines for people, the targets, and a "model:" line for 1 TiB.
 * Included by pd_bench.c after the workload, the userspace scan and the
 * targets' printer, which it uses.
 */
#ifndef PD_BATCH_BENCH_H
#define PD_BATCH_BENCH_H

#define NR_BATCH	4
static const int batch_sizes[NR_BATCH] = { 1, 8, 64, 512 };
#define BATCH_MAX	512

enum batch_layout { SCATTERED, RANGE, NR_LAYOUTS };
static const char *const layout_names[NR_LAYOUTS] = { "scattered", "range" };

#define BATCH_CSV_HEADER "pages,layout,asked,ok,partial,mismatch,not_memory,phys_ms,phys_min_ms,scans,scan_ms,kernel_tables_ms,rest_ms,rest_per_page_us,user_ms,user_min_ms,phys_per_one_page,user_per_phys,mappings_phys_user,agree,note"

/* The pages of one batch, and the phys input that asks about them. */
struct batch {
	enum batch_layout layout;
	int nr;
	unsigned long pfns[BATCH_MAX];	/* sorted */
	struct pfn_set set;
	char input[PD_INPUT_LIMIT];
};

/* One row: medians over the rounds, in ns; the rest from the last round. */
struct batch_row {
	int size;
	enum batch_layout layout;
	const char *impossible;
	uint64_t phys_med, phys_min, user_med, user_min;
	struct pd_batch_totals totals;	/* a one-page query: pages = 1 */
	unsigned long scans, scan_us, kernel_us;
	long phys_maps, user_maps;	/* user mappings found */
	bool agree;
};

static struct batch_row batch_rows[NR_LAYOUTS][NR_BATCH];
static bool batch_measured;
static char *batch_report;

/*
 * The start of worker @pid's private anonymous memory: its VMA of @bytes,
 * read-write, private, with no name.  0 if it has none.
 */
static unsigned long worker_anon(pid_t pid, size_t bytes)
{
	unsigned long start, end, found = 0;
	char path[64], line[512], perms[8];
	int name;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		name = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end,
			   perms, &name) == 3 && name && !line[name] &&
		    end - start == bytes && !strcmp(perms, "rw-p"))
			found = start;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Where the anonymous memory of each of @w's workers starts, in a new
 * array; NULL, and why in *@why, when it cannot be told.
 */
static unsigned long *workers_anon(const struct workload *w, const char **why)
{
	unsigned long *anon = calloc(w->nr, sizeof(*anon));
	int i;

	if (!anon) {
		*why = "out of memory";
		return NULL;
	}
	for (i = 0; i < w->nr; i++) {
		anon[i] = worker_anon(w->pids[i], w->anon_bytes);
		if (!anon[i]) {
			*why = "a process's anonymous memory not found in its maps";
			free(anon);
			return NULL;
		}
	}
	return anon;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Page @j of @n scattered ones: in worker j mod P, at a page of its
 * anonymous memory that a multiplicative hash of @j spreads over it.
 */
static unsigned long scattered_pfn(const struct workload *w,
				   const unsigned long *anon, int j)
{
	unsigned long pages = w->anon_bytes / page_size;
	unsigned long idx = (unsigned long)j * 2654435761UL % pages;
	int i = j % w->nr;

	return pagemap_pfn(w->pids[i], (void *)(anon[i] + idx * page_size));
}

/* Fill @b->set from its sorted PFNs: a bitmap when they are scattered. */
static int batch_set(struct batch *b)
{
	unsigned long bit;
	int j;

	b->set = (struct pfn_set){ .lo = b->pfns[0], .hi = b->pfns[b->nr - 1] };
	if (b->layout == RANGE)
		return 0;
	b->set.bits = calloc((b->set.hi - b->set.lo) / 64 + 1, sizeof(uint64_t));
	if (!b->set.bits)
		return -1;
	for (j = 0; j < b->nr; j++) {
		bit = b->pfns[j] - b->set.lo;
		b->set.bits[bit / 64] |= 1ULL << (bit % 64);
	}
	return 0;
}

/*
 * Pick @n pages of workload @w laid out as @layout into @b, with its phys
 * input: a list of addresses, or "START-END".  NULL, or why not.
 */
static const char *batch_pick(const struct workload *w, const unsigned long *anon,
			      enum batch_layout layout, int n, struct batch *b)
{
	unsigned long pages = w->anon_bytes / page_size, pfn;
	size_t len = 0;
	int j;

	memset(b, 0, sizeof(*b));
	b->layout = layout;
	if (layout == RANGE) {
		/* The middle of the middle process's memory, aligned to n. */
		pfn = pagemap_pfn(w->pids[w->nr / 2],
				  (void *)(anon[w->nr / 2] + pages / 2 * page_size));
		if (!pfn)
			return "no PFN in pagemap";
		for (j = 0; j < n; j++)
			b->pfns[b->nr++] = (pfn & ~(n - 1UL)) + j;
		snprintf(b->input, sizeof(b->input), "0x%lx-0x%lx",
			 b->pfns[0] * page_size,
			 (b->pfns[n - 1] + 1) * page_size - 1);
	} else {
		for (j = 0; j < n; j++) {
			pfn = scattered_pfn(w, anon, j);
			if (!pfn)
				return "no PFN in pagemap";
			b->pfns[b->nr++] = pfn;
			len += snprintf(b->input + len, sizeof(b->input) - len,
					"%s0x%lx", j ? " " : "", pfn * page_size);
		}
		qsort(b->pfns, b->nr, sizeof(b->pfns[0]), cmp_ulong);
	}
	return batch_set(b) ? "out of memory" : NULL;
}

/* The sum of the "user_mappings=" of the "batch page:" lines of @report. */
static long batch_user_mappings(const char *report)
{
	const char *line, *eol, *field;
	long sum = 0;

	for (line = report; *line; line = eol + 1) {
		eol = strchrnul(line, '\n');
		field = strstr(line, " user_mappings=");
		if (!strncmp(line, "batch page: pfn=", 16) && field && field < eol)
			sum += strtol(field + 15, NULL, 10);
		if (!*eol)
			break;
	}
	return sum;
}

/*
 * What the report of @b says: its totals, cost and user mappings.  A
 * single page is answered by the one-page report, read the same way.
 */
static int batch_parse(const char *report, struct batch_row *row)
{
	const char *line = strstr(report, "\nbatch cost: ");
	static struct pd_parsed parsed;
	struct pd_cost cost;

	if (!pd_parse_batch(report, &row->totals)) {
		row->phys_maps = batch_user_mappings(report);
		if (!line || sscanf(line + 1,
				    "batch cost: %lu scans of every process, %*u page-table entries in %*u PTE tables in %lu us; kernel page tables %lu us",
				    &row->scans, &row->scan_us, &row->kernel_us) != 3)
			return -1;
		return 0;
	}
	memset(&parsed, 0, sizeof(parsed));
	if (pd_parse(report, &parsed) || pd_parse_cost(report, &cost))
		return -1;
	row->totals = (struct pd_batch_totals){ .pages = 1 };
	row->phys_maps = parsed.nr_user;
	row->scans = 1;
	row->scan_us = cost.scan_us;
	row->kernel_us = cost.kernel_us;
	return 0;
}

/* phys of @b, timed (the write() alone), its report into batch_report. */
static int batch_phys(const struct batch *b, uint64_t *ns)
{
	uint64_t start = now_ns();
	ssize_t ret = write(phys_fd, b->input, strlen(b->input));

	*ns = now_ns() - start;
	if (ret < 0)
		return -errno;
	pd_read_all(phys_fd, batch_report, PD_BATCH_REPORT_SIZE);
	return 0;
}

/* Measure @b into @row: phys and the userspace scan, interleaved. */
static void batch_measure(const struct batch *b, int rounds,
			  struct batch_row *row)
{
	uint64_t phys[ROUNDS * 4], user[ROUNDS * 4];
	static struct us_result ur;
	int i;

	for (i = 0; i < rounds; i++) {
		if (batch_phys(b, &phys[i])) {
			row->impossible = "phys refused the batch";
			return;
		}
		user[i] = now_ns();
		us_scan_set(&b->set, &ur);
		user[i] = now_ns() - user[i];
	}
	if (batch_parse(batch_report, row)) {
		row->impossible = "phys's report did not parse";
		return;
	}
	row->user_maps = ur.nr;
	row->agree = row->user_maps == row->phys_maps;
	row->phys_min = pctl(phys, rounds, 0);
	row->phys_med = pctl(phys, rounds, 50);
	row->user_min = pctl(user, rounds, 0);
	row->user_med = pctl(user, rounds, 50);
}

/* The one-page scattered row, which the others are set against. */
static const struct batch_row *batch_one_page(void)
{
	const struct batch_row *one = &batch_rows[SCATTERED][0];

	return one->impossible ? NULL : one;
}

static void batch_print(const struct batch_row *row)
{
	const struct batch_row *one = batch_one_page();
	double rest = row->phys_med / 1e6 - (row->scan_us + row->kernel_us) / 1e3;
	const char *own;

	printf("batchcsv: %d,%s", row->size, layout_names[row->layout]);
	if (row->impossible) {
		skip_to_last_field(BATCH_CSV_HEADER, 2);
		printf("impossible: %s\n", row->impossible);
		return;
	}
	bench_info(",%ld,%ld,%ld,%ld,%ld,%.3f,%.3f,%lu,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%.2f,%.1f,%ld/%ld,%s,\n",
		   row->totals.pages, row->totals.ok, row->totals.partial,
		   row->totals.mismatch, row->totals.not_memory,
		   ms(row->phys_med), ms(row->phys_min), row->scans,
		   row->scan_us / 1e3, row->kernel_us / 1e3, rest,
		   rest * 1e3 / row->size, ms(row->user_med), ms(row->user_min),
		   one ? ratio(row->phys_med, one->phys_med) : 0,
		   ratio(row->user_med, row->phys_med), row->phys_maps,
		   row->user_maps, row->agree ? "yes" : "no");
	bench_info("batch: %d %s pages: phys %.2f ms (%lu scans %.2f ms, %.1f us a page beyond them and the kernel's tables), %.2f times one page; the userspace scan %.2f ms, %.1f times phys; %ld mismatch; user mappings phys/userspace %ld/%ld\n",
		   row->size, layout_names[row->layout], ms(row->phys_med),
		   row->scans, row->scan_us / 1e3, rest * 1e3 / row->size,
		   one ? ratio(row->phys_med, one->phys_med) : 0,
		   ms(row->user_med), ratio(row->user_med, row->phys_med),
		   row->totals.mismatch, row->phys_maps, row->user_maps);
	/* Where the pages' own time went, in the last round's report. */
	own = strstr(batch_report, "\nbatch cost: the pages' own");
	if (own && row->size == BATCH_MAX)
		bench_info("batch: %d %s pages: %.*s\n", row->size,
			   layout_names[row->layout],
			   (int)strcspn(own + 13, "\n"), own + 13);
}

/*
 * The batch rows of workload @w (at the reference point), @rounds each:
 * every size and layout.
 */
static void batch_bench(const struct workload *w, int rounds)
{
	static struct batch b;
	enum batch_layout layout;
	const char *why = NULL;
	unsigned long *anon;
	int k;

	bench_info("bench: batches at P=%d M=%d: %d rounds each, phys and the userspace scan of the same set interleaved\n",
		   w->nr, REF_M, rounds);
	fflush(stdout);
	anon = workers_anon(w, &why);
	printf("batchcsv: %s\n", BATCH_CSV_HEADER);
	for (layout = SCATTERED; layout < NR_LAYOUTS; layout++) {
		for (k = 0; k < NR_BATCH; k++) {
			struct batch_row *row = &batch_rows[layout][k];

			*row = (struct batch_row){ .size = batch_sizes[k],
						   .layout = layout,
						   .impossible = why };
			if (!why)
				row->impossible = batch_pick(w, anon, layout,
							     row->size, &b);
			if (!row->impossible)
				batch_measure(&b, rounds, row);
			free(b.set.bits);
			b.set.bits = NULL;
			batch_print(row);
			fflush(stdout);
		}
	}
	free(anon);
	batch_measured = true;
}

/* The row of @size pages laid out as @layout, if it was measured. */
static const struct batch_row *batch_row_of(enum batch_layout layout, int size)
{
	int k;

	for (k = 0; batch_measured && k < NR_BATCH; k++)
		if (batch_sizes[k] == size && !batch_rows[layout][k].impossible)
			return &batch_rows[layout][k];
	return NULL;
}

/* The batch targets, at the reference point. */
static void batch_targets(void)
{
	const struct batch_row *one = batch_one_page();
	const struct batch_row *many = batch_row_of(SCATTERED, BATCH_MAX);
	char what[128];

	if (!one || !many) {
		printf("bench: batches: not measured, no targets\n");
		return;
	}
	snprintf(what, sizeof(what),
		 "batch: %d scattered pages / one page at P=%d M=%d",
		 BATCH_MAX, REF_P, REF_M);
	print_target(what, ratio(many->phys_med, one->phys_med), 2, "x", true, 2);
	snprintf(what, sizeof(what),
		 "batch: phys of %d scattered pages faster than the userspace scan at P=%d M=%d",
		 BATCH_MAX, REF_P, REF_M);
	print_target(what, ratio(many->user_med, many->phys_med), 1, "x", false,
		     10);
}

/*
 * 512 scattered pages on the big host of project(): one scan, which costs
 * what one page's does times what it cost here against one page's (each
 * entry is tested against the set), plus what the batch cost here beyond
 * its scan (the kernel's tables and each page's own query), which does
 * not grow with the processes' memory; the userspace scan reads as much
 * as for one page, at the cost measured here for the set against one page.
 */
static void batch_project(double a, double b, double ua, double ub)
{
	const struct batch_row *one = batch_one_page();
	const struct batch_row *many = batch_row_of(SCATTERED, BATCH_MAX);
	double entries = (double)BIG_BYTES / page_size;
	double scan, rest;

	if (!one || !many || !a || !ua || !one->scan_us)
		return;
	scan = (double)many->scan_us / one->scan_us;
	rest = many->phys_med / 1e9 - many->scan_us / 1e6;
	bench_info("model: 1 TiB by %d processes: %d scattered pages: phys %.1f s (one scan, %.2f times one page's as here, and %.0f ms beyond it as here), the userspace scan %.1f s (%.2f times one page's, as here)\n",
		   BIG_PROCESSES, BATCH_MAX,
		   (a * entries + b * BIG_PROCESSES) * scan + rest, scan,
		   rest * 1e3,
		   (ua * entries + ub * BIG_PROCESSES) *
		   ratio(many->user_med, one->user_med),
		   ratio(many->user_med, one->user_med));
}

#endif /* PD_BATCH_BENCH_H */
