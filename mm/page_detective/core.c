// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: what is this page, and who maps it?
 *
 * Root writes "PID VADDR" to <debugfs>/page_detective/virt, or a physical
 * address to <debugfs>/page_detective/phys.  The report describes the page
 * (refcount, mapcount, flags, memcg), every kernel mapping of it, every
 * process whose page tables map it and what the reverse map says, and ends
 * with a verdict comparing them.  It goes to the kernel log and is read
 * back from the same file.  See Documentation/mm/page_detective.rst.
 *
 * This file has the debugfs files, the input, and the report: formatted
 * once into a seq_buf, printed to the log with every kernel address hashed,
 * and served whole from the file, which only root can open.
 */

#define pr_fmt(fmt) "page_detective: " fmt

#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pd.h"

/* A finished report: immutable, shared by the files that serve it. */
struct pd_report {
	struct kref ref;
	size_t len;
	char text[];
};

struct pd_command {
	const char *name;
	int (*query)(struct pd_query *q, char *input);
	struct pd_report *latest;	/* under pd_latest_lock */
};

/* What an open file serves: its own last query's report, or the latest. */
struct pd_file {
	struct mutex lock;		/* serialises the file's reads and writes */
	struct pd_command *cmd;
	struct pd_report *report;
	bool unread;			/* report is new: read it from its start */
};

/*
 * Whether the kernel log gets the whole report, or only its verdict: and
 * summary: lines.  A report holds PFNs, physical addresses, other
 * processes' addresses and names, and page_owner's stacks; the log may be
 * readable by others than root (dmesg_restrict=0) and kept (pstore).  The
 * file, which only root can open, always gives the whole report.
 */
static bool log_full = true;
module_param(log_full, bool, 0600);
MODULE_PARM_DESC(log_full,
		 "the whole report to the kernel log (default), or only its verdict and summary lines");

static DEFINE_MUTEX(pd_query_lock);	/* one query at a time */
static DEFINE_SPINLOCK(pd_latest_lock);
static struct dentry *pd_dir;

/* ---- Input --------------------------------------------------------------- */

/**
 * pd_next_word - cut the next white-space separated word off a line
 * @cur: where the rest of the line begins; moved past the word
 *
 * Return: the word, NUL-terminated in place; "" at the end of the line.
 */
char *pd_next_word(char **cur)
{
	char *word = skip_spaces(*cur), *end = word;

	while (*end && !isspace(*end))
		end++;
	*cur = *end ? end + 1 : end;
	*end = '\0';
	return word;
}

/**
 * pd_parse_number - parse a number of the input
 * @word: decimal, or hexadecimal after "0x"; no sign, no octal
 * @val: the number
 *
 * Return: 0, or -EINVAL if @word is not such a number or overflows.
 */
int pd_parse_number(const char *word, u64 *val)
{
	if (!isdigit(*word))
		return -EINVAL;
	return kstrtou64(word, word[0] == '0' && tolower(word[1]) == 'x' ?
			 16 : 10, val);
}

/*
 * Parse @nr numbers (pd_parse_number()), then the option "quick" if it is
 * there; separated and optionally surrounded by white space.  Nothing else
 * on the line.
 */
static int pd_parse_query(char *input, u64 *val, int nr, bool *quick)
{
	char *word;
	int i;

	for (i = 0; i < nr; i++)
		if (pd_parse_number(pd_next_word(&input), &val[i]))
			return -EINVAL;
	word = pd_next_word(&input);
	*quick = !strcmp(word, "quick");
	if (*quick)
		word = pd_next_word(&input);
	return *word ? -EINVAL : 0;
}

/**
 * pd_print_invalid - say that the input is not what @name expects
 * @q: the query
 * @name: the file's name
 * @expected: what it expects
 *
 * The input is quoted escaped, and only its start if it is long.
 */
void pd_print_invalid(struct pd_query *q, const char *name,
		      const char *expected)
{
	size_t len = strlen(q->input);

	seq_buf_printf(&q->s, "%s: invalid input \"%*pE%s\", expected %s\n",
		       name, (int)min_t(size_t, len, PD_INPUT_QUOTED), q->input,
		       len > PD_INPUT_QUOTED ? "..." : "", expected);
}

/* ---- The report ---------------------------------------------------------- */

/**
 * pd_print_leaf_size - print a leaf entry's size, as page sizes are said
 * @s: where
 * @nr_pages: the pages it maps
 */
void pd_print_leaf_size(struct seq_buf *s, unsigned long nr_pages)
{
	unsigned long kib = nr_pages << (PAGE_SHIFT - 10);

	if (kib >= SZ_1M && !(kib % SZ_1M))
		seq_buf_printf(s, "%luG", kib / SZ_1M);
	else if (kib >= SZ_1K && !(kib % SZ_1K))
		seq_buf_printf(s, "%luM", kib / SZ_1K);
	else
		seq_buf_printf(s, "%luK", kib);
}

/* What maps pages beyond the CPU's page tables, in the report's order. */
const struct pd_source *const pd_sources[PD_NR_SOURCES] = {
	&pd_secondary_source,
	&pd_dma_source,
	&pd_dma_api_source,
};

/* Whether pd_print_untrusted() writes @c escaped. */
static bool pd_escaped(unsigned char c, const char *esc)
{
	return c < ' ' || c == 0x7f || c == '\\' || strchr(esc, c);
}

/**
 * pd_print_untrusted - put a string that userspace chose into the report
 * @s: the report
 * @str: the string: a file's path, a task's comm, a cgroup's name, ...
 * @esc: characters to escape besides those always escaped
 *
 * Control characters, DEL and the backslash are written as a backslash and
 * three octal digits, as mangle_path() writes the paths of
 * /proc/PID/mountinfo: whatever a name holds, it can neither end a line of
 * the report nor add one ("summary: ... verdict=ok").  At most PD_NAME_MAX
 * bytes are written, "..." ending a name cut short, so that one line stays
 * within what pd_report_has_room() allows for.
 */
void pd_print_untrusted(struct seq_buf *s, const char *str, const char *esc)
{
	size_t start = seq_buf_used(s);

	for (; *str; str++) {
		unsigned char c = *str;

		if (seq_buf_used(s) - start > PD_NAME_MAX - 8) {
			seq_buf_puts(s, "...");
			return;
		}
		if (pd_escaped(c, esc))
			seq_buf_printf(s, "\\%03o", c);
		else
			seq_buf_putc(s, c);
	}
}

/**
 * pd_task_comm - a task's comm, as the report prints it
 * @buf: PD_COMM_LEN bytes, filled in
 * @task: the task
 *
 * Any process can name itself anything (prctl(PR_SET_NAME)): escaped as
 * pd_print_untrusted() escapes.
 */
void pd_task_comm(char *buf, struct task_struct *task)
{
	char comm[TASK_COMM_LEN];
	struct seq_buf s;
	unsigned int i;

	get_task_comm(comm, task);
	/*
	 * Most need nothing escaped: copied as they are, the scan of every
	 * process names each, and escaping goes a call a byte.
	 */
	for (i = 0; comm[i] && !pd_escaped(comm[i], ""); i++)
		;
	if (!comm[i]) {
		strscpy(buf, comm, PD_COMM_LEN);
		return;
	}
	seq_buf_init(&s, buf, PD_COMM_LEN);
	pd_print_untrusted(&s, comm, "");
	seq_buf_str(&s);
}

/**
 * pd_report_has_room - whether the report can take one more listed line
 * @q: the query
 * @end: where the list must stop: PD_LISTS_END for mappings, PD_VERDICT_END
 *	for culprits and the places looked at
 *
 * A list stops where its next line might not fit before @end, so that the
 * mappings leave room for the culprits, and the culprits for the lines that
 * end every report (the verdict, the cost and the summary).  What a list
 * leaves out it counts.
 *
 * Return: true if a line of up to PD_LINE_MAX bytes fits before @end.
 */
bool pd_report_has_room(struct pd_query *q, size_t end)
{
	return seq_buf_used(&q->s) + PD_LINE_MAX <= end;
}

/**
 * pd_print_kaddr - put a kernel virtual address into the report
 * @q: the query
 * @addr: the address
 *
 * The file, which only root can open, shows it; the kernel log, which may
 * be readable by others (dmesg_restrict=0) and kept (pstore), shows it
 * hashed, as %p does, lest the report defeat KASLR.
 */
void pd_print_kaddr(struct pd_query *q, unsigned long addr)
{
	size_t at = seq_buf_used(&q->s);

	if (q->nr_kaddrs == PD_KADDRS_MAX) {
		seq_buf_printf(&q->s, "%p", (void *)addr);
		return;
	}
	seq_buf_printf(&q->s, "%#lx", addr);
	q->kaddrs[q->nr_kaddrs++] = (struct pd_kaddr) {
		.offset = at, .len = seq_buf_used(&q->s) - at, .addr = addr,
	};
}

/*
 * Whether the line at @line, @len bytes, goes to the log: see log_full.  Of
 * a batch, the log has the pages that are not "ok", and the totals.
 */
static bool pd_line_logged(const char *line, size_t len)
{
	static const char ok[] = " verdict=ok";

	if (str_has_prefix(line, "batch page: "))
		return log_full && !(len >= strlen(ok) &&
				     !memcmp(line + len - strlen(ok), ok, strlen(ok)));
	return log_full || str_has_prefix(line, "verdict: ") ||
	       str_has_prefix(line, "summary: ") ||
	       str_has_prefix(line, "batch: ");
}

/*
 * Print the first @max lines of the report to the kernel log, a line per
 * printk(), each kernel address that pd_print_kaddr() put in replaced by
 * its hash.
 */
static void pd_log_lines(struct pd_query *q, unsigned int max)
{
	const char *text = seq_buf_str(&q->s);
	size_t len = seq_buf_used(&q->s), start = 0, pos, end;
	unsigned int k = 0, lines = 0;
	struct seq_buf line;

	while (start < len && lines++ < max) {
		end = start + strcspn(text + start, "\n");
		seq_buf_init(&line, q->path, sizeof(q->path));
		for (pos = start; k < q->nr_kaddrs &&
		     q->kaddrs[k].offset < end; k++) {
			const struct pd_kaddr *ka = &q->kaddrs[k];

			seq_buf_printf(&line, "%.*s%p", (int)(ka->offset - pos),
				       text + pos, (void *)ka->addr);
			pos = ka->offset + ka->len;
		}
		seq_buf_printf(&line, "%.*s", (int)(end - pos), text + pos);
		if (pd_line_logged(text + start, end - start))
			pr_info("%s\n", seq_buf_str(&line));
		start = end + 1;
	}
}

static void pd_report_release(struct kref *ref)
{
	kvfree(container_of(ref, struct pd_report, ref));
}

static void pd_report_put(struct pd_report *report)
{
	if (report)
		kref_put(&report->ref, pd_report_release);
}

static struct pd_report *pd_latest_get(struct pd_command *cmd)
{
	struct pd_report *report;

	spin_lock(&pd_latest_lock);
	report = cmd->latest;
	if (report)
		kref_get(&report->ref);
	spin_unlock(&pd_latest_lock);
	return report;
}

static void pd_latest_set(struct pd_command *cmd, struct pd_report *report)
{
	struct pd_report *old;

	kref_get(&report->ref);
	spin_lock(&pd_latest_lock);
	old = cmd->latest;
	cmd->latest = report;
	spin_unlock(&pd_latest_lock);
	pd_report_put(old);
}

/*
 * Print the report to the kernel log, and keep it for reading back.  A
 * query that failed before its summary (bad input, no such process, not
 * memory) logs only the line that says why, and at most a few such lines
 * in a while: whoever writes nonsense to the files cannot flood the log.
 */
static struct pd_report *pd_publish(struct pd_command *cmd, struct pd_query *q)
{
	static DEFINE_RATELIMIT_STATE(pd_failure_rs, DEFAULT_RATELIMIT_INTERVAL,
				      DEFAULT_RATELIMIT_BURST);
	size_t len = seq_buf_used(&q->s);
	struct pd_report *report;

	if (q->summarized)
		pd_log_lines(q, UINT_MAX);
	else if (__ratelimit(&pd_failure_rs))
		pd_log_lines(q, 1);
	if (seq_buf_has_overflowed(&q->s))
		pr_warn("%s: the report above is truncated\n", cmd->name);

	report = kvmalloc(struct_size(report, text, len), GFP_KERNEL);
	if (!report)
		return NULL;
	kref_init(&report->ref);
	report->len = len;
	memcpy(report->text, seq_buf_str(&q->s), len);
	pd_latest_set(cmd, report);
	return report;
}

/* ---- Queries ------------------------------------------------------------- */

/* What the summary line counts of mappings, from the scan or the rmap. */
static void pd_summary_counts(struct pd_query *q, unsigned long *user,
			      unsigned long *rmap, unsigned int *processes)
{
	unsigned int last = q->rmap_passes - 1, mms = 0;
	struct pd_map *map, *other;

	*user = 0;
	*rmap = 0;
	list_for_each_entry(map, &q->map_list, list) {
		*user += !!(map->seen & PD_SEEN_SCAN);
		*rmap += !!(map->seen & PD_SEEN_RMAP(last));
	}
	*processes = q->processes;
	if (!q->quick)
		return;
	/* No scan: what the summary says of mappings is the reverse map's. */
	*user = *rmap;
	list_for_each_entry(map, &q->map_list, list) {
		if (!(map->seen & PD_SEEN_RMAP(last)))
			continue;
		list_for_each_entry(other, &q->map_list, list)
			if (other == map || (other->mm == map->mm &&
					     other->seen & PD_SEEN_RMAP(last)))
				break;
		mms += other == map;
	}
	*processes = mms;
}

/*
 * A lock hold in the cost line, in microseconds rounded up: a hold that
 * happened, however short, is never printed as none.
 */
static u64 pd_hold_us(u64 ns)
{
	return DIV_ROUND_UP_ULL(ns, NSEC_PER_USEC);
}

/**
 * pd_report_pfn - the whole report on the page at q->pfn
 * @q: the query, with q->pfn set
 *
 * Its summary line is in q->summary too.  Might sleep.
 *
 * Return: 0, -EINVAL if q->pfn is not online memory, -EAGAIN if its folio
 * kept changing, -EINTR on a fatal signal (the report is then summarized).
 */
int pd_report_pfn(struct pd_query *q)
{
	struct pd_summary *sum = &q->summary;
	unsigned int i;
	u64 start;
	int err;

	/* Before the page is pinned: see pd_kernel_mappings(). */
	err = pd_kernel_mappings(q);
	if (err)
		return err;
	start = local_clock();
	err = pd_describe_page(q);
	q->describe_ns = local_clock() - start;
	if (err)
		return err;
	pd_print_kernel_mappings(q);
	/* The reverse map first: the verdict re-checks what the scan adds. */
	pd_rmap_pass(q);
	if (!q->quick)
		pd_user_mappings(q);
	pd_find_owners(q);
	pd_list_rmap(q);
	for (i = 0; i < PD_NR_SOURCES; i++) {
		start = local_clock();
		pd_sources[i]->list(q);
		q->source_ns[i] = local_clock() - start;
	}
	pd_note_refcount(q);
	sum->verdict = pd_verdict(q, &sum->culprits);
	seq_buf_printf(&q->s,
		       "cost: %lu page-table entries in %lu PTE tables in %llu us, longest mmap lock hold %llu us (%llu us not switched out), longest VMA lock hold %llu us (%llu us not switched out); kernel page tables %llu us; rmap %llu us; verdict %llu us",
		       q->entries, q->tables, div_u64(q->scan_ns, NSEC_PER_USEC),
		       pd_hold_us(q->mmap_holds.longest_ns),
		       pd_hold_us(q->mmap_holds.longest_unswitched_ns),
		       pd_hold_us(q->vma_holds.longest_ns),
		       pd_hold_us(q->vma_holds.longest_unswitched_ns),
		       div_u64(q->kernel_ns, NSEC_PER_USEC),
		       div_u64(q->rmap_ns, NSEC_PER_USEC),
		       div_u64(q->recheck_ns, NSEC_PER_USEC));
	for (i = 0; i < PD_NR_SOURCES; i++)
		seq_buf_printf(&q->s, "; %s %llu us", pd_sources[i]->name,
			       div_u64(q->source_ns[i], NSEC_PER_USEC));
	seq_buf_printf(&q->s,
		       "; of the scan, prescan %llu us, %u of %u mms walked under their locks\n",
		       div_u64(q->prescan_ns, NSEC_PER_USEC), q->locked_mms,
		       q->scanned);
	pd_summary_counts(q, &sum->user, &sum->rmap, &sum->processes);
	seq_buf_printf(&q->s,
		       "summary: pfn=%#lx refcount=%d mapcount=%d kernel_mappings=%u user_mappings=%lu processes=%u memcg=",
		       q->pfn, q->refcount, q->folio_level ? -1 : q->mapcount,
		       q->kernel_mappings, sum->user, sum->processes);
	/* A cgroup's name is anyone's who may make one: no space in it here. */
	pd_print_untrusted(&q->s, q->memcg, " ");
	seq_buf_printf(&q->s,
		       " verdict=%s rmap_mappings=%lu culprits=%u level=%s",
		       sum->verdict, sum->rmap, sum->culprits,
		       q->folio_level ? "folio" : "page");
	for (i = 0; i < PD_NR_SOURCES; i++)
		if (pd_sources[i]->summary)
			seq_buf_printf(&q->s, " %s_mappings=%u",
				       pd_sources[i]->name,
				       pd_sources[i]->summary(q));
	seq_buf_putc(&q->s, '\n');
	q->summarized = true;
	return q->interrupted ? -EINTR : 0;
}

/* One address: the page's report; more, or a range: a batch's. */
static int pd_phys(struct pd_query *q, char *input)
{
	u64 paddr;

	if (pd_parse_query(input, &paddr, 1, &q->quick)) {
		/* Cut up by the parse: the batch parses it again, whole. */
		strscpy(input, q->input, PD_INPUT_MAX + 1);
		return pd_phys_batch(q, input);
	}
	q->pfn = PHYS_PFN(paddr);
	return pd_report_pfn(q);
}

static int pd_virt(struct pd_query *q, char *input)
{
	struct pd_leaf leaf = {};
	unsigned long vaddr;
	bool kernel, kernel_addr;
	u64 val[2];
	int err;

	if (pd_parse_query(input, val, 2, &q->quick)) {
		/* Cut up by the parse: the batch parses it again, whole. */
		strscpy(input, q->input, PD_INPUT_MAX + 1);
		return pd_virt_batch(q, input);
	}
	if (val[0] > PID_MAX_LIMIT) {
		seq_buf_printf(&q->s, "virt: pid %llu out of range\n", val[0]);
		return -EINVAL;
	}
	vaddr = val[1] & PAGE_MASK;

	/* PID 0 asks about a kernel address, any other about a user one. */
	kernel = !val[0];
	kernel_addr = vaddr >= TASK_SIZE_MAX;
	if (kernel != kernel_addr) {
		seq_buf_puts(&q->s, "virt: ");
		if (kernel_addr)
			pd_print_kaddr(q, vaddr);
		else
			seq_buf_printf(&q->s, "%#lx", vaddr);
		seq_buf_printf(&q->s, " is not a %s address, use %s\n",
			       val[0] ? "user" : "kernel",
			       val[0] ? "pid 0 for kernel addresses" :
					"the pid of its process");
		return -EINVAL;
	}
	if (kernel)
		err = pd_kernel_lookup(q, vaddr, &leaf);
	else
		err = pd_virt_user(q, val[0], vaddr, &leaf);
	if (err)
		return err;
	if (!leaf.present)
		return -ENXIO;
	q->pfn = leaf.pfn;
	err = pd_report_pfn(q);
	/* A mapping of something that is not memory: nothing to report on. */
	return err == -EINVAL ? -ENXIO : err;
}

/* ---- Files --------------------------------------------------------------- */

/* Copy in @count bytes of input: at most PD_INPUT_MAX, without NUL. */
static int pd_copy_input(struct pd_query *q, const char *name,
			 const char __user *ubuf, size_t count)
{
	if (!count || count > PD_INPUT_MAX) {
		seq_buf_printf(&q->s, "%s: %zu bytes of input, expected 1 to %d\n",
			       name, count, PD_INPUT_MAX);
		return -EINVAL;
	}
	if (copy_from_user(q->input, ubuf, count)) {
		seq_buf_printf(&q->s, "%s: cannot read the input\n", name);
		return -EFAULT;
	}
	q->input[count] = '\0';
	if (strlen(q->input) != count) {
		seq_buf_printf(&q->s, "%s: the input contains a NUL byte\n", name);
		return -EINVAL;
	}
	return 0;
}

/**
 * pd_query_report_size - give the query's report room for @size bytes
 * @q: the query, which has not written its report yet
 * @size: more than PD_REPORT_MAX
 *
 * Return: 0, or -ENOMEM.
 */
int pd_query_report_size(struct pd_query *q, size_t size)
{
	char *buf;

	if (WARN_ON_ONCE(seq_buf_used(&q->s)))
		return -EINVAL;
	buf = kvzalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	kvfree(q->s.buffer);
	seq_buf_init(&q->s, buf, size);
	return 0;
}

/**
 * pd_append_report - put another query's report into this one's
 * @q: the query
 * @from: the other query, summarized
 *
 * The kernel addresses of @from stay kernel addresses of @q: hashed in the
 * log.
 */
void pd_append_report(struct pd_query *q, struct pd_query *from)
{
	const char *text = seq_buf_str(&from->s);
	size_t len = seq_buf_used(&from->s), pos = 0;
	unsigned int k;

	for (k = 0; k < from->nr_kaddrs; k++) {
		const struct pd_kaddr *ka = &from->kaddrs[k];

		seq_buf_printf(&q->s, "%.*s", (int)(ka->offset - pos),
			       text + pos);
		pd_print_kaddr(q, ka->addr);
		pos = ka->offset + ka->len;
	}
	seq_buf_printf(&q->s, "%.*s", (int)(len - pos), text + pos);
}

/*
 * The query of the last write, emptied, kept for the next: a new query
 * and its report's buffer are some 130 KiB to zero, which with freeing
 * them took about 0.3 ms of each query under QEMU's TCG, a page's scan of
 * 200 processes taking 9.  One is kept at most, from the module's loading
 * to its unloading.
 */
static struct pd_query *pd_spare_query;

/**
 * pd_query_alloc - a new query, with an empty report
 *
 * Return: the query, or NULL.
 */
struct pd_query *pd_query_alloc(void)
{
	struct pd_query *q = xchg(&pd_spare_query, NULL);
	char *buf;

	if (q)
		return q;
	q = kvzalloc_obj(*q, GFP_KERNEL);
	/* Zeroed: a truncated report shows nothing it did not write. */
	buf = kvzalloc(PD_REPORT_MAX, GFP_KERNEL);
	if (!q || !buf) {
		kvfree(q);
		kvfree(buf);
		return NULL;
	}
	seq_buf_init(&q->s, buf, PD_REPORT_MAX);
	pd_mappings_init(q);
	return q;
}

/* What a query holds: the mms and mappings it met, and the page's pin. */
static void pd_query_release(struct pd_query *q)
{
	pd_mappings_free(q);
	if (q->folio)
		folio_put(q->folio);
}

/**
 * pd_query_reset - make a query new again, keeping its report's buffer
 * @q: the query
 */
void pd_query_reset(struct pd_query *q)
{
	struct seq_buf s = q->s;

	pd_query_release(q);
	/* Not its tables: see struct pd_query. */
	memset(q, 0, offsetof(struct pd_query, memcg));
	seq_buf_init(&q->s, s.buffer, s.size);
}

static void pd_query_destroy(struct pd_query *q)
{
	if (!q)
		return;
	pd_query_release(q);
	kvfree(q->batch_secondary);
	kvfree(q->s.buffer);
	kvfree(q);
}

/*
 * Keep @q as pd_spare_query, as empty as a new one: its report's buffer
 * zeroed where it was written (pd_query_alloc()).  Not a batch scan's,
 * whose report and secondary MMUs' table are larger.  Return: whether it
 * was kept.
 */
static bool pd_query_keep(struct pd_query *q)
{
	size_t written = min(seq_buf_used(&q->s) + 1, q->s.size);

	if (q->s.size != PD_REPORT_MAX || q->batch_secondary)
		return false;
	memset(q->s.buffer, 0, written);
	pd_query_reset(q);
	return !cmpxchg(&pd_spare_query, NULL, q);
}

/**
 * pd_query_free - free a query, or keep it for the next
 * @q: the query, or NULL
 */
void pd_query_free(struct pd_query *q)
{
	if (q && !pd_query_keep(q))
		pd_query_destroy(q);
}

/*
 * Run the query written to @file.  Its report, error or not, goes to the
 * log and becomes what @file reads back, and the latest report of the file.
 */
static ssize_t pd_write(struct file *file, const char __user *ubuf,
			size_t count, loff_t *ppos)
{
	struct pd_file *f = file->private_data;
	struct pd_report *report;
	struct pd_query *q;
	char *input = NULL;
	int err = -ENOMEM;

	q = pd_query_alloc();
	/* The input as written, then a copy that the query may cut up. */
	if (q)
		q->input = kmalloc(2 * (PD_INPUT_MAX + 1), GFP_KERNEL);
	if (!q || !q->input)
		goto free;
	/* Read only once written, up to its NUL: not zeroed. */
	q->input[0] = '\0';
	input = q->input + PD_INPUT_MAX + 1;
	/*
	 * Before the query lock: a fault on the buffer can take as long as
	 * its writer likes (userfaultfd), and other queries must not wait.
	 */
	err = pd_copy_input(q, f->cmd->name, ubuf, count);
	if (mutex_lock_killable(&pd_query_lock)) {
		err = -EINTR;
		goto free;
	}
	if (!err) {
		/* Errors quote the input whole. */
		memcpy(input, q->input, count + 1);
		err = f->cmd->query(q, input);
	}
	report = pd_publish(f->cmd, q);
	mutex_unlock(&pd_query_lock);

	mutex_lock(&f->lock);
	pd_report_put(f->report);
	f->report = report;
	/*
	 * The next read starts at the new report's beginning, wherever the
	 * last one left the file: the position a write sets is dropped when
	 * it fails, and a pwrite() sets none.
	 */
	f->unread = true;
	mutex_unlock(&f->lock);
free:
	if (q)
		kfree(q->input);
	pd_query_free(q);
	return err ?: count;
}

static ssize_t pd_read(struct file *file, char __user *ubuf, size_t count,
		       loff_t *ppos)
{
	struct pd_file *f = file->private_data;
	ssize_t ret = 0;

	mutex_lock(&f->lock);
	if (!f->report)
		f->report = pd_latest_get(f->cmd);
	if (f->unread)
		*ppos = 0;
	f->unread = false;
	if (f->report)
		ret = simple_read_from_buffer(ubuf, count, ppos, f->report->text,
					      f->report->len);
	mutex_unlock(&f->lock);
	return ret;
}

static int pd_open(struct inode *inode, struct file *file)
{
	struct pd_file *f;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	f = kzalloc_obj(*f, GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	f->cmd = inode->i_private;
	file->private_data = f;
	return 0;
}

static int pd_release(struct inode *inode, struct file *file)
{
	struct pd_file *f = file->private_data;

	pd_report_put(f->report);
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

static const struct file_operations pd_fops = {
	.owner		= THIS_MODULE,
	.open		= pd_open,
	.read		= pd_read,
	.write		= pd_write,
	.release	= pd_release,
	.llseek		= default_llseek,
};

static struct pd_command pd_commands[] = {
	{ .name = "virt", .query = pd_virt },
	{ .name = "phys", .query = pd_phys },
};

static int __init page_detective_init(void)
{
	int i;

	pd_dir = debugfs_create_dir("page_detective", NULL);
	for (i = 0; i < ARRAY_SIZE(pd_commands); i++)
		debugfs_create_file(pd_commands[i].name, 0600, pd_dir,
				    &pd_commands[i], &pd_fops);
	return 0;
}
module_init(page_detective_init);

static void __exit page_detective_exit(void)
{
	int i;

	debugfs_remove_recursive(pd_dir);
	for (i = 0; i < ARRAY_SIZE(pd_commands); i++)
		pd_report_put(pd_commands[i].latest);
	pd_query_destroy(xchg(&pd_spare_query, NULL));
}
module_exit(page_detective_exit);

MODULE_DESCRIPTION("Page Detective: what is this page, and who maps it?");
MODULE_LICENSE("GPL");
