// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective fuzz: thousands of malformed and random writes to virt and
 * phys: random bytes, huge and negative numbers, signs, bases, white-space
 * variants, missing and extra fields, NUL bytes, empty writes, writes over
 * the input limit and over a page, writes at a non-zero offset (pwrite),
 * and a query split over several writes.  Each must return a documented
 * errno with a one-line explanation, or a complete report.
 *
 * Each input is also parsed here, by the grammar that
 * Documentation/mm/page_detective.rst gives (decimal, or hexadecimal with
 * 0x; for phys, addresses and START-END ranges, up to 1024; for virt, a
 * PID and an address or a range; then the word "quick" or not; white space
 * around; nothing else; at most 32 KiB),
 * independently of the kernel's parser: malformed input must get -EINVAL,
 * and well-formed input the outcome its meaning calls for (a phys address
 * with a memory map gets a report of that PFN, one without gets -EINVAL, as
 * /proc/kpageflags says; a list or a range gets a batch's report, with a
 * line for each page and the pages without a memory map counted).  A batch
 * of more than BATCH_SENT_MAX pages is parsed, not sent: answering it would
 * take the run's time.
 * The seed is printed, so that a failure can be replayed with PD_FUZZ_SEED.
 * PD_STRESS_SCALE multiplies the counts.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <sys/mman.h>

#include "pd_util.h"
#include "../kselftest.h"

#define FUZZ_INPUTS	10000
#define INPUT_MAX	PD_INPUT_LIMIT	/* what the documentation accepts */
#define SHORT_INPUT	64	/* what most generators write, at most */
#define WORDS_MAX	1024	/* addresses and ranges in a phys query */
#define BATCH_SENT_MAX	64	/* pages in a batch that is sent */
#define PID_MAX_LIMIT	(4 * 1024 * 1024)

static unsigned long page_size;
static uint64_t rng;
static unsigned long task_size_max;	/* the first kernel address, as Page Detective has it */
static char *anon;			/* our own memory, for valid virt queries */
static unsigned long end_paddr;

struct input {
	const char *file;
	char buf[INPUT_MAX + 8];
	size_t len;
	const char *how;	/* the generator, for the figures */
};

static unsigned long rnd(unsigned long n)
{
	return n ? pd_rand(&rng) % n : 0;
}

/* ---- The documented grammar -------------------------------------------- */

static bool ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* One number: decimal, or 0x/0X and hexadecimal; fits in 64 bits. */
static bool parse_number(const char *tok, size_t len, uint64_t *val)
{
	unsigned __int128 v = 0;
	int base = 10;
	size_t i = 0;

	if (len >= 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		int d;

		if (isdigit((unsigned char)tok[i]))
			d = tok[i] - '0';
		else if (base == 16 && isxdigit((unsigned char)tok[i]))
			d = tolower(tok[i]) - 'a' + 10;
		else
			return false;
		v = v * base + d;
		if (v > UINT64_MAX)
			return false;
	}
	*val = v;
	return true;
}

enum verdict { MALFORMED, WELL_FORMED, UNSURE };

/* What a well-formed input asks: numbers, or for a batch byte ranges. */
struct parsed {
	uint64_t val[2];		/* virt's two numbers, or phys's one */
	bool batch;			/* phys: a list, or a range */
	uint64_t first[WORDS_MAX], last[WORDS_MAX];	/* the batch's words */
	int words;
};

/* One word of a phys query: an address, or START-END, both inclusive. */
static bool parse_phys_word(const char *tok, size_t len, uint64_t *first,
			    uint64_t *last)
{
	const char *dash = memchr(tok, '-', len);

	if (!dash)
		return parse_number(tok, len, first) && (*last = *first, true);
	return parse_number(tok, dash - tok, first) &&
	       parse_number(dash + 1, tok + len - dash - 1, last) &&
	       *first <= *last;
}

/*
 * Parse @in as the documentation says into @p, @nr numbers for virt, or for
 * phys addresses and ranges; UNSURE where it does not say (bytes outside
 * ASCII: is a non-breaking space white space?).
 */
static enum verdict parse(const struct input *in, struct parsed *p, int nr)
{
	bool phys = !strcmp(in->file, "phys"), quick = false, range = false;
	size_t i = 0, start;
	int n = 0;

	if (!in->len || in->len > INPUT_MAX || memchr(in->buf, '\0', in->len))
		return MALFORMED;
	for (i = 0; i < in->len; i++)
		if ((unsigned char)in->buf[i] >= 0x80)
			return UNSURE;
	for (i = 0; ; ) {
		const char *tok;

		while (i < in->len && ws(in->buf[i]))
			i++;
		if (i == in->len)
			break;
		start = i;
		while (i < in->len && !ws(in->buf[i]))
			i++;
		tok = in->buf + start;
		if (quick)
			return MALFORMED;	/* the option is last */
		if (n && i - start == 5 && !memcmp(tok, "quick", 5)) {
			quick = true;
			continue;
		}
		if (phys || n == 1) {
			/* phys: each word; virt: the address, or a range. */
			if (n == WORDS_MAX || (!phys && n >= nr) ||
			    !parse_phys_word(tok, i - start, &p->first[n], &p->last[n]))
				return MALFORMED;
			range |= !!memchr(tok, '-', i - start);
			if (n < 2)
				p->val[n] = p->first[n];
		} else if (n >= nr || !parse_number(tok, i - start, &p->val[n])) {
			return MALFORMED;
		}
		n++;
	}
	p->words = n;
	p->batch = phys ? n > 1 || range : range;
	return (phys && p->batch) || n == nr ? WELL_FORMED : MALFORMED;
}

/*
 * The pages a batch asks, each once, in @pfns (up to @max); return how many
 * there are, however many that is.
 */
static unsigned long batch_pages(const struct parsed *p, unsigned long *pfns,
				 unsigned long max)
{
	unsigned long nr = 0, pfn;
	int w, v;

	for (w = 0; w < p->words; w++) {
		for (pfn = p->first[w] / page_size; pfn <= p->last[w] / page_size; pfn++) {
			bool seen = false;

			/* Asked before, by an earlier word? */
			for (v = 0; v < w && !seen; v++)
				seen = pfn >= p->first[v] / page_size &&
				       pfn <= p->last[v] / page_size;
			if (seen)
				continue;
			if (nr < max)
				pfns[nr] = pfn;
			if (++nr > max)
				return nr;	/* enough to know it is too many */
		}
	}
	return nr;
}

/* ---- Inputs ---------------------------------------------------------------- */

static const char *const numbers[] = {
	"0", "1", "-1", "+1", "-0", "+0", "00", "007", "010", "0x", "0X",
	"0x0", "0xg", "0x-1", "0x+1", "0b101", "0o17", "1e3", "1.5", "0x1p3",
	"4096", "0x1000", "0X1000", "0x00000000001000", "000000000000000004096",
	"18446744073709551615", "18446744073709551616", "99999999999999999999999",
	"0xffffffffffffffff", "0x10000000000000000", "0xFFFFFFFFFFFFF000",
	"9223372036854775807", "-9223372036854775808", "4194304", "4194305",
	"2147483648", "4294967296", "0x7ffffffff000", "0x800000000000",
	"0xffff888000000000", "0xffffffff81000000", "0xfffffe0000000000",
	"inf", "nan", "abc", "x", "0x1000z", "1_000", "1,000", "\xef\xbc\x91",
	"quick", "QUICK", "Quick", "quickly", "quic", "quick\n",
	"0x1000-0x1fff", "4096-8191", "0x2000-0x1000", "0x1000-", "-0x1000",
	"1--2", "1-2-3", "0x1000-0x1000", "0-0", "0x1000-0x",
};

static const char *const options[] = {
	"", "", " quick", "\tquick\n", " quick quick", " QUICK", " quickly",
	" quick 1", " -quick", "quick", " q", " fast",
};

static const size_t sizes[] = {
	0, 1, 63, 64, 65, 100, 4095, 4096, 4097, 8192, INPUT_MAX, INPUT_MAX + 1,
};

static const char *const spaces[] = {
	" ", "  ", "\t", "\n", "\r", "\v", "\f", "\r\n", " \t ", "\xa0", "",
};

static void add(struct input *in, const char *s)
{
	size_t len = strlen(s);

	if (in->len + len < sizeof(in->buf)) {
		memcpy(in->buf + in->len, s, len);
		in->len += len;
	}
}

static void add_num(struct input *in, uint64_t v, bool hex)
{
	char num[32];

	snprintf(num, sizeof(num), hex ? "0x%llx" : "%llu", (unsigned long long)v);
	add(in, num);
}

/* A physical address somewhere in memory, or just past it. */
static uint64_t some_paddr(void)
{
	return rnd(end_paddr + end_paddr / 8) & ~(rnd(2) ? page_size - 1 : 0);
}

/* A pid and address that a valid virt query could name. */
static void some_target(struct input *in, bool hex)
{
	switch (rnd(4)) {
	case 0:		/* our own memory */
		add_num(in, getpid(), false);
		add(in, " ");
		add_num(in, (unsigned long)anon + rnd(64) * page_size + rnd(page_size), hex);
		break;
	case 1:		/* init's, mapped or not */
		add(in, "1 ");
		add_num(in, rnd(1UL << 47), hex);
		break;
	case 2:		/* the kernel's */
		add(in, "0 ");
		add_num(in, 0xffff800000000000UL + rnd(1UL << 47), hex);
		break;
	default:	/* whoever */
		add_num(in, rnd(rnd(2) ? 4096 : PID_MAX_LIMIT + 10), false);
		add(in, " ");
		add_num(in, pd_rand(&rng), hex);
	}
}

/* Fill @in with the @i-th input: each kind in turn, both files. */
static void make_input(struct input *in, unsigned long i)
{
	bool virt = i & 1;
	int fields, f;

	in->file = virt ? "virt" : "phys";
	in->len = 0;
	switch ((i / 2) % 12) {
	case 0:
		in->how = "random bytes";
		in->len = rnd(SHORT_INPUT + 8);
		for (f = 0; f < (int)in->len; f++)
			in->buf[f] = pd_rand(&rng);
		break;
	case 1:
		in->how = "random characters of numbers";
		in->len = 1 + rnd(SHORT_INPUT + 4);
		for (f = 0; f < (int)in->len; f++)
			in->buf[f] = "0123456789abcdefxX +-\t\n"[rnd(23)];
		break;
	case 2:
		in->how = "odd numbers";
		fields = virt ? 2 : 1;
		for (f = 0; f < fields; f++) {
			add(in, spaces[rnd(3)]);
			add(in, numbers[rnd(ARRAY_SIZE(numbers))]);
		}
		add(in, spaces[rnd(ARRAY_SIZE(spaces))]);
		break;
	case 3:
		in->how = "white space around valid fields";
		add(in, spaces[rnd(ARRAY_SIZE(spaces))]);
		if (virt)
			some_target(in, rnd(2));
		else
			add_num(in, some_paddr(), rnd(2));
		add(in, spaces[rnd(ARRAY_SIZE(spaces))]);
		if (virt && rnd(2)) {
			/* The separator itself: any white space, or none. */
			char *sp = memchr(in->buf, ' ', in->len);

			if (sp)
				*sp = spaces[rnd(8)][0];
		}
		break;
	case 4:
		in->how = "missing or extra fields";
		fields = rnd(5);
		for (f = 0; f < fields; f++) {
			add(in, f ? spaces[rnd(3)] : "");
			add_num(in, f == 0 && virt ? (uint64_t)getpid() : some_paddr(), rnd(2));
		}
		break;
	case 5:
		in->how = "NUL bytes";
		if (virt)
			some_target(in, true);
		else
			add_num(in, some_paddr(), true);
		if (in->len && rnd(3))
			in->buf[rnd(in->len)] = '\0';
		if (in->len < SHORT_INPUT && rnd(2))
			in->buf[in->len++] = '\0';
		if (!memchr(in->buf, '\0', in->len))
			in->buf[in->len++] = '\0';
		break;
	case 6:
		in->how = "sizes: empty, at and past the limit, past a page";
		in->len = sizes[rnd(ARRAY_SIZE(sizes))];
		memset(in->buf, ' ', in->len);
		if (in->len > 1) {
			char head[64];
			int n;

			if (virt)
				n = snprintf(head, sizeof(head), "%d %p", getpid(), anon);
			else
				n = snprintf(head, sizeof(head), "0x%lx",
					     (unsigned long)some_paddr());

			memcpy(in->buf, head, n < (int)in->len ? n : in->len);
		}
		break;
	case 7:
		in->how = "huge, negative and signed numbers";
		if (virt) {
			add(in, rnd(2) ? "-" : rnd(2) ? "+" : "");
			add_num(in, rnd(2) ? pd_rand(&rng) : getpid(), false);
			add(in, " ");
		}
		add(in, rnd(2) ? "-" : rnd(2) ? "+" : "");
		add_num(in, pd_rand(&rng) >> rnd(64), rnd(2));
		if (rnd(3) == 0)
			add(in, "0000000000");
		break;
	case 8:
		in->how = "the quick option, and words like it";
		if (virt)
			some_target(in, rnd(2));
		else
			add_num(in, some_paddr(), rnd(2));
		add(in, options[rnd(ARRAY_SIZE(options))]);
		break;
	case 10:
		in->how = "lists and ranges";
		if (virt) {
			some_target(in, rnd(2));
			break;
		}
		fields = 1 + rnd(rnd(8) ? 6 : WORDS_MAX + 2);
		for (f = 0; f < fields; f++) {
			uint64_t a = some_paddr();

			add(in, spaces[rnd(3)]);
			add_num(in, a, rnd(2));
			if (rnd(3))
				continue;
			add(in, "-");
			add_num(in, rnd(8) ? a + rnd(8 * page_size) :
				rnd(2) ? a + rnd(1UL << 30) : a - rnd(page_size),
				rnd(2));
		}
		add(in, rnd(4) ? rnd(2) ? "" : " quick" : options[rnd(ARRAY_SIZE(options))]);
		break;
	default:
		in->how = "valid queries";
		if (virt)
			some_target(in, rnd(2));
		else
			add_num(in, some_paddr(), rnd(2));
		if (rnd(2))
			add(in, "\n");
	}
}

/* ---- Checking one outcome ------------------------------------------------ */

struct tally {
	unsigned long inputs, writes, reports, bad, by_errno[4];
	unsigned long malformed, well_formed, unsure, pwrites, split;
	unsigned long not_sent;		/* batches too long: see too_long() */
};

/* A batch's outcome: every page once, those without a memory map counted. */
static const char *expect_batch(const struct parsed *p, int err, const char *report)
{
	unsigned long pfns[BATCH_SENT_MAX], nr, i, no_page = 0;
	struct pd_batch_totals t;
	struct pd_batch_page line;

	if (err == -EINTR)
		return NULL;
	if (err)
		return "a well-formed batch refused";
	if (pd_parse_batch(report, &t))
		return "a batch without its totals";
	nr = batch_pages(p, pfns, BATCH_SENT_MAX);
	if ((unsigned long)t.pages != nr)
		return "a batch that does not answer each page asked once";
	for (i = 0; i < nr; i++) {
		bool none = pd_pfn_has_no_page(pfns[i]);

		no_page += none;
		if (!none && pd_batch_page(report, pfns[i], &line) != 1 &&
		    !strstr(report, "kept changing"))
			return "a page of a batch without its one line";
	}
	if ((unsigned long)t.not_memory != no_page)
		return "a batch that miscounts the pages without a memory map";
	return NULL;
}

/* Whether @in is a batch too long to answer in a fuzz run: not sent. */
static bool too_long(const struct input *in)
{
	static unsigned long pfns[BATCH_SENT_MAX];
	static struct parsed p;

	return parse(in, &p, strcmp(in->file, "virt") ? 1 : 2) == WELL_FORMED &&
	       p.batch && !strcmp(in->file, "phys") &&
	       batch_pages(&p, pfns, BATCH_SENT_MAX) > BATCH_SENT_MAX;
}

static const char *expect(const struct input *in, int err, const char *report)
{
	static struct parsed p;
	uint64_t *val = p.val;
	enum verdict v = parse(in, &p, strcmp(in->file, "virt") ? 1 : 2);
	const char *why = pd_check_outcome(in->file, err, report, -1);

	if (why)
		return why;
	if (v == MALFORMED && err != -EINVAL)
		return "malformed input accepted";
	if (v != WELL_FORMED)
		return NULL;
	if (p.batch && !strcmp(in->file, "phys"))
		return expect_batch(&p, err, report);
	if (p.batch) {
		/* virt, a range: of a process's user addresses. */
		if (!val[0] || val[0] > PID_MAX_LIMIT || p.last[1] >= task_size_max)
			return err == -EINVAL ? NULL : "a range out of bounds, but no -EINVAL";
		if (err == -EINVAL && !pd_has_line(report, "virt: ", "kernel thread"))
			return "a well-formed range, but -EINVAL";
		return NULL;
	}
	if (!strcmp(in->file, "phys")) {
		unsigned long pfn = val[0] / page_size;
		bool no_page = val[0] / page_size > (~0UL >> 12) || pd_pfn_has_no_page(pfn);
		struct pd_summary s;

		if (no_page && err != -EINVAL)
			return "no memory map there, but no -EINVAL";
		if (!no_page && err && err != -EAGAIN)
			return "well-formed and a page there, but refused";
		if (!err && (pd_parse_summary(report, &s) || s.pfn != pfn))
			return "a report of another PFN";
		return NULL;
	}
	/* virt: the pid and the kind of address decide -EINVAL. */
	if (val[0] > PID_MAX_LIMIT ||
	    (!val[0] && (val[1] & ~(page_size - 1)) < task_size_max) ||
	    (val[0] && (val[1] & ~(page_size - 1)) >= task_size_max)) {
		if (err != -EINVAL)
			return "a pid or address out of range, but no -EINVAL";
	} else if (err == -EINVAL &&
		   !pd_has_line(report, "virt: ", "kernel thread")) {
		return "well-formed, but -EINVAL";
	}
	return NULL;
}

static void count(struct tally *t, int err)
{
	t->writes++;
	if (!err)
		t->reports++;
	else if (err == -EINVAL)
		t->by_errno[0]++;
	else if (err == -ESRCH)
		t->by_errno[1]++;
	else if (err == -ENXIO)
		t->by_errno[2]++;
	else
		t->by_errno[3]++;
}

static void fail(struct tally *t, const struct input *in, const char *what,
		 int err, const char *why, const char *report)
{
	char shown[4 * SHORT_INPUT + 1];
	size_t i, n = 0;

	if (t->bad++ >= 10)
		return;
	for (i = 0; i < in->len && n + 5 < sizeof(shown); i++)
		n += snprintf(shown + n, sizeof(shown) - n,
			      isprint((unsigned char)in->buf[i]) ? "%c" : "\\x%02x",
			      (unsigned char)in->buf[i]);
	pd_info("%s \"%s\" (%zu bytes, %s, %s): %d: %s:\n%s", in->file, shown,
		in->len, in->how, what, err, why, report);
}

/* Read the whole report on @fd from offset 0, with pread(). */
static void pread_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size && (n = pread(fd, buf + len, size - 1 - len, len)) > 0)
		len += n;
	buf[len] = '\0';
}

/*
 * Write @buf on @fd, at @off with pwrite() if @off >= 0, and read the report
 * back with pread() from 0: read() would not always start at it (see
 * read_after_failed_write()).
 */
static int query_fd(int fd, const char *buf, size_t len, off_t off, char *report)
{
	ssize_t n = off >= 0 ? pwrite(fd, buf, len, off) : write(fd, buf, len);
	int err = n < 0 ? -errno : 0;

	if (n >= 0 && (size_t)n != len)
		err = -EIO;	/* a short write is documented nowhere */
	pread_all(fd, report, PD_BATCH_REPORT_SIZE);
	return err;
}

/*
 * The documentation: "a program that writes a query and reads on the same
 * open file gets the report of its own query", whether the write failed or
 * was a pwrite().  write() stores the file position back only when it
 * succeeds, and pwrite() never, so the first read after a query cannot rely
 * on a position set by the write; this fuzzer found that once, and keeps
 * checking it.
 */
static void read_after_failed_write(void)
{
	const char *what = "read() after a failed write() or a pwrite() gets its report";
	char *first = malloc(PD_BATCH_REPORT_SIZE), *second = malloc(PD_BATCH_REPORT_SIZE);
	char input[64];
	int fd = open(PD_DIR "/phys", O_RDWR), failed = 0, stale = 0, wrong = 0;
	int round;

	snprintf(input, sizeof(input), "0x%lx", pagemap_pfn(0, anon) * page_size);
	for (round = 0; fd >= 0 && first && second && round < 2; round++) {
		/* A good query, read to its end: the file position is there. */
		if (write(fd, input, strlen(input)) < 0)
			failed++;
		pd_read_all(fd, first, PD_BATCH_REPORT_SIZE);
		/* Then a failed write(), or a good pwrite(), and read(). */
		if (round == 0 && write(fd, "garbage", 7) != -1)
			failed++;
		if (round == 1 && pwrite(fd, input, strlen(input), 0) < 0)
			failed++;
		pd_read_all(fd, second, PD_BATCH_REPORT_SIZE);
		/* The symptom: not the start of a report, or nothing. */
		if (!pd_check_outcome("phys", round ? 0 : -EINVAL, second, -1))
			continue;
		if (!strncmp(second, "pfn ", 4) || !strncmp(second, "phys: ", 6))
			wrong++;
		else
			stale++;
	}
	ksft_test_result(fd >= 0 && !failed && !wrong && !stale,
			 "%s (%d writes failed, %d wrong reports, %d read from the old position)\n",
			 what, failed, wrong, stale);
	if (fd >= 0)
		close(fd);
	free(first);
	free(second);
}

int main(void)
{
	unsigned long n = pd_stress_count(FUZZ_INPUTS), i;
	char *report = malloc(PD_BATCH_REPORT_SIZE), *again = malloc(PD_BATCH_REPORT_SIZE);
	struct input *in = malloc(sizeof(*in));
	struct tally t = {};
	const char *why, *seed = getenv("PD_FUZZ_SEED");
	int fds[2], err;
	double t0 = pd_now();
	bool missing;

	page_size = pd_page_size();
	ksft_print_header();
	why = pd_missing(&missing);
	if (why[0]) {
		if (missing)
			ksft_exit_fail_msg("%s\n", why);
		ksft_exit_skip("%s\n", why);
	}
	ksft_set_plan(5);
	rng = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) * 2654435761ULL;
	pd_info("scale %g, PD_FUZZ_SEED=%#llx\n", pd_stress_scale(),
		(unsigned long long)rng);

	task_size_max = pd_task_size_max();
	end_paddr = pd_iomem_ram_end();
	anon = mmap(NULL, 64 * page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!report || !again || !in || anon == MAP_FAILED || !end_paddr)
		ksft_exit_fail_msg("setup failed\n");
	memset(anon, 1, 64 * page_size);
	fds[0] = open(PD_DIR "/phys", O_RDWR);
	fds[1] = open(PD_DIR "/virt", O_RDWR);
	if (fds[0] < 0 || fds[1] < 0)
		ksft_exit_fail_perror("open");

	for (i = 0; i < n; i++) {
		int fd;
		off_t off = -1;
		static struct parsed parsed;
		enum verdict v;

		make_input(in, i);
		if (too_long(in)) {
			t.not_sent++;
			continue;
		}
		fd = fds[!strcmp(in->file, "virt")];
		/* Every 10th input at an offset: the offset is not the input. */
		if (i % 10 == 9) {
			off = 1 + rnd(rnd(2) ? 64 : 1UL << 40);
			t.pwrites++;
		}
		err = query_fd(fd, in->buf, in->len, off, report);
		t.inputs++;
		count(&t, err);
		v = parse(in, &parsed, strcmp(in->file, "virt") ? 1 : 2);
		t.malformed += v == MALFORMED;
		t.well_formed += v == WELL_FORMED;
		t.unsure += v == UNSURE;
		why = expect(in, err, report);
		if (why)
			fail(&t, in, off >= 0 ? "pwrite" : "write", err, why, report);

		/* The report reads back the same from any offset. */
		if (i % 16 == 0) {
			size_t len = strlen(report), at = rnd(len + 2);
			ssize_t got = pread(fd, again, PD_BATCH_REPORT_SIZE - 1, at);

			if (got < 0 || (size_t)got != (at < len ? len - at : 0) ||
			    memcmp(again, report + (at < len ? at : len), got))
				fail(&t, in, "pread", err, "a read back that differs", report);
		}

		/*
		 * Every 25th input again, as several writes of its pieces:
		 * each write is a query of its own, judged on its own.
		 */
		if (i % 25 == 12 && in->len > 1 && in->len <= INPUT_MAX) {
			struct input *piece = malloc(sizeof(*piece));
			size_t at = 0, cut;

			t.split++;
			while (piece && at < in->len) {
				cut = 1 + rnd(in->len - at);
				*piece = (struct input){ .file = in->file, .len = cut,
							 .how = "a piece of a split write" };
				memcpy(piece->buf, in->buf + at, cut);
				at += cut;
				if (too_long(piece)) {
					t.not_sent++;
					continue;
				}
				err = query_fd(fd, piece->buf, piece->len, -1, report);
				t.inputs++;
				count(&t, err);
				why = expect(piece, err, report);
				if (why)
					fail(&t, piece, "write", err, why, report);
			}
			free(piece);
		}
	}
	close(fds[0]);
	close(fds[1]);

	pd_info("fuzz: %lu inputs in %lu writes (%lu at an offset, %lu split), %.1f s\n",
		t.inputs, t.writes, t.pwrites, t.split, pd_now() - t0);
	pd_info("fuzz: by the documented grammar %lu malformed, %lu well-formed, %lu not said; %lu batches over %d pages parsed, not sent\n",
		t.malformed, t.well_formed, t.unsure, t.not_sent, BATCH_SENT_MAX);
	pd_info("fuzz: outcomes %lu reports, %lu EINVAL, %lu ESRCH, %lu ENXIO, %lu other\n",
		t.reports, t.by_errno[0], t.by_errno[1], t.by_errno[2], t.by_errno[3]);
	pd_info("figures: %lu queries, %lu fuzz inputs, %.1f s in all\n", t.writes, t.inputs,
		pd_now() - t0);
	ksft_test_result(t.inputs >= n, "fuzz: %lu inputs tried\n", t.inputs);
	ksft_test_result(t.malformed && t.well_formed,
			 "fuzz: both malformed and well-formed inputs\n");
	ksft_test_result(t.reports > 0, "fuzz: some inputs got a report\n");
	ksft_test_result(!t.bad, "fuzz: every outcome as documented (%lu not)\n", t.bad);
	read_after_failed_write();
	ksft_finished();
}
