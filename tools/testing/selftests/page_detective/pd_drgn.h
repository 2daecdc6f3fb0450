/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pd_bench's drgn rows (see harness/README.md, "Benchmark").  The RFC's
 * question "why not just do this with drgn?", measured: the same jobs as
 * phys and virt, done by drgn from userspace, on the same workload, their
 * answers checked against Page Detective's.
 *
 * pd_drgn.py, the drgn server, is started once with pd_bench -D CMD (it
 * loads the kernel's debug info once), and asked at each grid point, for
 * the target page of the largest K, by each of its methods, once: a drgn
 * query takes seconds to minutes, not milliseconds.  At the reference grid
 * point, drgn's show_page_info.py (tools/mm/ of the kernel) is run whole
 * with pd_bench -S CMD, as a user would run it, against a virt query.
 *
 * It runs as a second pass over the grid, after pd_bench's own: the drgn
 * server is a process of several hundred MiB, whose page tables phys
 * would scan too, and the main figures are measured without it.  Included
 * by pd_bench.c after the workload and the phys query it uses.
 */
#ifndef PD_DRGN_H
#define PD_DRGN_H

#include <signal.h>

/* A query that would take longer stops there (pd_drgn.py's CAP_SECONDS). */
#define DRGN_CAP_S	120
/* phys queries per grid point: the phys column of drgn's table. */
#define DRGN_PHYS_ROUNDS	5

#define DRGN_CSV_HEADER "P,M,K,processes,entries,phys_ms,follow_ms,follow_self_ms,follow_entries,follow_capped,follow_us_per_entry,tables_ms,tables_self_ms,tables_entries,tables_capped,tables_us_per_entry,follow_per_phys,tables_per_phys,mappers_phys_follow_tables,agree,note"

struct drgn_server {
	pid_t pid;
	FILE *to, *from;
};

/* One answer of the server: the mappings found, and what it cost. */
struct drgn_answer {
	uint64_t wall_ns;		/* from pd_bench: the whole request */
	double self_ms;			/* drgn's own count */
	unsigned long entries;		/* page-table entries looked at */
	bool capped;			/* stopped at DRGN_CAP_S */
	int skipped;			/* processes that changed under it */
	char error[512];
	struct us_result maps;		/* nr and found[] only */
	long nr_maps;			/* mappings found, kept or not */
};

/*
 * Start @cmd (a shell command line) with pipes on its stdin and stdout,
 * and wait for its "ready LOAD_MS".  Returns 0, or -1 with why in @why.
 */
static int drgn_start(struct drgn_server *s, const char *cmd, char *why,
		      size_t len)
{
	int in[2], out[2];
	char line[512];
	uint64_t start = now_ns();
	double load_ms;

	if (pipe(in) || pipe(out)) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return -1;
	}
	s->pid = fork();
	if (!s->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->to = fdopen(in[1], "w");
	s->from = fdopen(out[0], "r");
	if (!fgets(line, sizeof(line), s->from)) {
		snprintf(why, len, "%s: exited before it was ready", cmd);
		return -1;
	}
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "ready %lf", &load_ms) != 1) {
		snprintf(why, len, "%s", line);
		return -1;
	}
	bench_info("drgn: loaded the running kernel (/proc/kcore, vmlinux's debug info) in %.1f s (drgn's count), %.1f s with Python's start\n",
		   load_ms / 1000, (now_ns() - start) / 1e9);
	return 0;
}

static void drgn_stop(struct drgn_server *s)
{
	if (s->to)
		fclose(s->to);
	if (s->from)
		fclose(s->from);
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
	}
}

/*
 * Ask the server's @method who maps @pfns (PFNs separated by commas);
 * a->error says when it failed.
 */
static void drgn_ask(struct drgn_server *s, const char *method,
		     const char *pfns, struct drgn_answer *a)
{
	char line[512];
	uint64_t start = now_ns();
	int capped, pid;
	unsigned long addr;

	memset(a, 0, sizeof(*a));
	fprintf(s->to, "%s %s\n", method, pfns);
	fflush(s->to);
	while (fgets(line, sizeof(line), s->from)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "map %d %lx", &pid, &addr) == 2) {
			if (a->maps.nr < PD_MAX_MAPS) {
				a->maps.found[a->maps.nr].pid = pid;
				a->maps.found[a->maps.nr++].addr = addr;
			}
			a->nr_maps++;
		} else if (sscanf(line, "end %lf %lu %d %d", &a->self_ms,
				  &a->entries, &capped, &a->skipped) == 4) {
			a->capped = capped;
			a->wall_ns = now_ns() - start;
			return;
		} else if (!strncmp(line, "error ", 6)) {
			snprintf(a->error, sizeof(a->error), "%.200s", line + 6);
			return;
		}
	}
	snprintf(a->error, sizeof(a->error), "the drgn server died");
}

/* Whether drgn found exactly the (pid, address) pairs that phys did. */
static bool drgn_same(const struct pd_parsed *p, const struct drgn_answer *a)
{
	return !a->error[0] && !a->capped &&
	       same_mappers(p->user, p->nr_user, &a->maps);
}

static double drgn_us_per_entry(const struct drgn_answer *a)
{
	return a->entries ? a->self_ms * 1000 / a->entries : 0;
}

/* "N" mappings, or what stopped the method from counting them. */
static const char *drgn_count(const struct drgn_answer *a, char *buf,
			      size_t len)
{
	if (a->error[0])
		return "error";
	if (a->capped)
		return "capped";
	snprintf(buf, len, "%d", a->maps.nr);
	return buf;
}

/*
 * One grid point: phys (for its time, and the mappers to check drgn's
 * against), then drgn's two methods once each, on the page @pfn.
 */
static void drgn_point(struct drgn_server *s, int P, int M, int K,
		       unsigned long pfn)
{
	static struct pd_parsed parsed;
	uint64_t phys[DRGN_PHYS_ROUNDS], phys_ns;
	struct drgn_answer follow, tables;
	unsigned int processes = 0, kthreads;
	struct pd_cost cost = {};
	char note[600] = "", nf[16], nt[16], pfn_arg[24];
	const char *line;
	const char *agree;
	int i;

	memset(&parsed, 0, sizeof(parsed));
	for (i = 0; i < DRGN_PHYS_ROUNDS; i++)
		if (pd_timed_phys(pfn, false, &phys[i]))
			phys[i] = 0;
	phys_ns = pctl(phys, DRGN_PHYS_ROUNDS, 50);
	pd_parse(report, &parsed);
	pd_parse_cost(report, &cost);
	line = strstr(report, "\nuser mappings: ");
	if (line)
		sscanf(line, SCANNED_FMT, &processes, &kthreads);

	snprintf(pfn_arg, sizeof(pfn_arg), "0x%lx", pfn);
	drgn_ask(s, "follow", pfn_arg, &follow);
	drgn_ask(s, "tables", pfn_arg, &tables);
	/* A capped answer is partial: judge the others, and say so. */
	if ((!follow.capped && !drgn_same(&parsed, &follow)) ||
	    (!tables.capped && !drgn_same(&parsed, &tables)))
		agree = "no";
	else
		agree = follow.capped || tables.capped ? "capped" : "yes";
	if (follow.error[0] || tables.error[0])
		snprintf(note, sizeof(note), "drgn error: %s",
			 follow.error[0] ? follow.error : tables.error);
	else if (follow.capped || tables.capped)
		snprintf(note, sizeof(note), "capped at %d s", DRGN_CAP_S);
	else if (follow.skipped || tables.skipped)
		snprintf(note, sizeof(note),
			 "processes that changed under drgn: %d follow, %d tables",
			 follow.skipped, tables.skipped);

	bench_info("drgncsv: %d,%d,%d,%u,%lu,%.3f,%.1f,%.1f,%lu,%d,%.2f,%.1f,%.1f,%lu,%d,%.2f,%.0f,%.0f,%d/%s/%s,%s,%s\n",
		   P, M, K, processes, cost.entries, ms(phys_ns),
		   ms(follow.wall_ns), follow.self_ms, follow.entries,
		   follow.capped, drgn_us_per_entry(&follow),
		   ms(tables.wall_ns), tables.self_ms, tables.entries,
		   tables.capped, drgn_us_per_entry(&tables),
		   ratio(follow.wall_ns, phys_ns), ratio(tables.wall_ns, phys_ns),
		   parsed.nr_user, drgn_count(&follow, nf, sizeof(nf)),
		   drgn_count(&tables, nt, sizeof(nt)), agree,
		   note);
	if (follow.capped)
		bench_info("drgn: P=%d M=%d K=%d: follow_pfn() stopped at its cap of %d s, after %lu pages of VMAs (%.1f us each)\n",
			   P, M, K, DRGN_CAP_S, follow.entries,
			   drgn_us_per_entry(&follow));
	if (tables.capped)
		bench_info("drgn: P=%d M=%d K=%d: the table walk stopped at its cap of %d s, after %lu entries (%.1f us each)\n",
			   P, M, K, DRGN_CAP_S, tables.entries,
			   drgn_us_per_entry(&tables));
	fflush(stdout);
}

/*
 * show_page_info.py PID VADDR (@cmd, then the two arguments), run whole as
 * a user would, drgn's start included, against virt on the same address:
 * the K = 8 target page @pfn in the first process that phys says maps it.
 */
static void drgn_show_page(const char *cmd, unsigned long pfn)
{
	static struct pd_parsed parsed;
	char line[1024], run[1024], error[256] = "", verdict[300];
	unsigned long shown = 0;
	uint64_t start, took, virt_ns[DRGN_PHYS_ROUNDS];
	int i, pid, status;
	unsigned long addr;
	FILE *f;

	memset(&parsed, 0, sizeof(parsed));
	if (pd_phys(pfn, report, PD_REPORT_SIZE) || pd_parse(report, &parsed) ||
	    !parsed.nr_user) {
		bench_info("drgn: show_page_info.py: phys found no mapping of PFN 0x%lx to ask it about\n",
			   pfn);
		return;
	}
	pid = parsed.user[0].pid;
	addr = parsed.user[0].addr;
	for (i = 0; i < DRGN_PHYS_ROUNDS; i++) {
		start = now_ns();
		pd_virt(pid, (void *)addr, report, PD_REPORT_SIZE);
		virt_ns[i] = now_ns() - start;
	}

	snprintf(run, sizeof(run), "%s %d 0x%lx 2>&1", cmd, pid, addr);
	start = now_ns();
	f = popen(run, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!shown && sscanf(line, "Page PFN: %lx", &shown) != 1 &&
		    strstr(line, "rror"))
			snprintf(error, sizeof(error), "%.200s", line);
	}
	status = f ? pclose(f) : -1;
	took = now_ns() - start;
	if (shown)
		snprintf(verdict, sizeof(verdict), "PFN 0x%lx, %s", shown,
			 shown == pfn ? "the target's" : "NOT the target's");
	else
		snprintf(verdict, sizeof(verdict), "no PFN printed: %.200s",
			 error[0] ? error : "no error line either");
	bench_info("drgn: show_page_info.py %d 0x%lx: %.1f s, drgn's start included, exit status %d, %s; virt of the same: %.2f ms (median of %d); show_page_info / virt: %.0fx\n",
		   pid, addr, took / 1e9, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		   verdict, ms(pctl(virt_ns, DRGN_PHYS_ROUNDS, 50)),
		   DRGN_PHYS_ROUNDS, ratio(took, pctl(virt_ns, DRGN_PHYS_ROUNDS, 50)));
	fflush(stdout);
}

/*
 * The batches of BATCH_MAX pages of pd_batch_bench.h, scattered and as a
 * range, each asked of phys and of drgn's table walk, which looks for all
 * of them in one pass: one answer each, against phys's median.
 */
static void drgn_batch(struct drgn_server *s, const struct workload *w)
{
	uint64_t phys[DRGN_PHYS_ROUNDS];
	static char pfns[BATCH_MAX * 20];
	static struct batch b;
	struct batch_row row;
	struct drgn_answer tables;
	enum batch_layout layout;
	const char *why = NULL;
	unsigned long *anon = workers_anon(w, &why);
	size_t len;
	int i;

	for (layout = SCATTERED; layout < NR_LAYOUTS && !why; layout++) {
		memset(&row, 0, sizeof(row));
		why = batch_pick(w, anon, layout, BATCH_MAX, &b);
		for (i = 0; !why && i < DRGN_PHYS_ROUNDS; i++)
			if (batch_phys(&b, &phys[i]))
				why = "phys refused the batch";
		if (!why && batch_parse(batch_report, &row))
			why = "phys's report did not parse";
		for (i = 0, len = 0; !why && i < b.nr; i++)
			len += snprintf(pfns + len, sizeof(pfns) - len, "%s0x%lx",
					i ? "," : "", b.pfns[i]);
		free(b.set.bits);
		b.set.bits = NULL;
		if (why)
			break;
		drgn_ask(s, "tables", pfns, &tables);
		bench_info("drgn: %d %s pages at P=%d M=%d: tables %.1f s (%lu entries%s%s), phys %.2f ms (median of %d): %.0fx; user mappings phys/tables %ld/%ld\n",
			   BATCH_MAX, layout_names[layout], w->nr, REF_M,
			   tables.wall_ns / 1e9, tables.entries,
			   tables.capped ? ", capped" : "",
			   tables.error[0] ? ", failed" : "",
			   ms(pctl(phys, DRGN_PHYS_ROUNDS, 50)), DRGN_PHYS_ROUNDS,
			   ratio(tables.wall_ns, pctl(phys, DRGN_PHYS_ROUNDS, 50)),
			   row.phys_maps, tables.nr_maps);
		fflush(stdout);
	}
	if (why)
		printf("drgn: batches not asked: %s\n", why);
	free(anon);
}

/* A row of P, M, K, empty fields, and why last, as in the header. */
static void drgn_impossible(int P, int M, int K, const char *why)
{
	printf("drgncsv: %d,%d,%d", P, M, K);
	skip_to_last_field(DRGN_CSV_HEADER, 3);
	printf("impossible: %s\n", why);
}

/*
 * The drgn pass over the grid: @server is pd_drgn.py's command line, @show
 * show_page_info.py's (or NULL).  Prints "drgncsv:" lines (a header, a row
 * per grid point) and "drgn:" lines.
 */
static void drgn_grid(const char *server, const char *show,
		      const int *p_values, int nr_p, const int *m_values,
		      int nr_m)
{
	struct drgn_server s = {};
	bool has_ref, here;
	struct workload w;
	char err[512];
	int ip, im;

	if (drgn_start(&s, server, err, sizeof(err))) {
		printf("drgn: not available: %s\n", err);
		drgn_stop(&s);
		return;
	}
	has_ref = grid_has_ref(p_values, nr_p, m_values, nr_m);
	printf("drgncsv: %s\n", DRGN_CSV_HEADER);
	for (ip = 0; ip < nr_p; ip++) {
		for (im = 0; im < nr_m; im++) {
			int P = p_values[ip], M = m_values[im];
			int K = k_values[NR_K - 1];
			const char *why = "K > P";

			printf("bench: drgn pass: P=%d M=%d: starting the processes\n",
			       P, M);
			fflush(stdout);
			if (K <= P)
				why = workload_start(&w, MIXED, P, M);
			if (why) {
				drgn_impossible(P, M, K, why);
				continue;
			}
			drgn_point(&s, P, M, K, w.target_pfn[NR_K - 1]);
			here = is_ref_point(has_ref, P, M,
					    ip == nr_p - 1 && im == nr_m - 1);
			if (show && here)
				drgn_show_page(show, w.target_pfn[NR_K - 1]);
			if (P == REF_P && M == REF_M)
				drgn_batch(&s, &w);
			workload_stop(&w);
		}
	}
	drgn_stop(&s);
}

#endif /* PD_DRGN_H */
