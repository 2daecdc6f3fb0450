// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: many pages in one query.
 *
 * "phys" takes a list of physical addresses and ranges, a range written as
 * /proc/iomem writes one (START-END, both ends inclusive); "virt" a range of
 * a process's addresses, which asks about every page mapped there.  The pages are
 * answered in ascending order, each once, PD_BATCH_CHUNK at a time: one
 * scan of every process's page tables looks for all the pages of a chunk,
 * keeping what it finds; then each page gets the query of one page
 * (pd_report_pfn()), which takes what the scan found of it instead of
 * scanning again (pd_batch_replay()), and its own verdict, by the same
 * rules and re-checks.
 *
 * The report has a line per page, the whole report of each page that is
 * not "ok" (up to PD_BATCH_FULL_MAX of them), and ends with the "batch:"
 * line, which totals them.  What the report leaves out it counts.  Memory
 * is bounded by the chunk, not by the range, and a fatal signal ends the
 * query between two pages.
 */

#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "pd.h"

/* Addresses and ranges in one query. */
#define PD_BATCH_WORDS_MAX	1024
/* Runs of pages that a virt range asks about, at most. */
#define PD_BATCH_RUNS_MAX	SZ_16K
/* Pages that one scan looks for. */
#define PD_BATCH_CHUNK		512
/* Mappings one scan keeps; the pages of those it cannot keep walk alone. */
#define PD_BATCH_HITS_MAX	SZ_32K
/*
 * Classes of hits of more than one page: up to a PMD's worth (THPs, arm64's
 * contiguous PTEs), and more (PUD leaves: the direct map's, hugetlb's).
 */
#define PD_BATCH_WIDE_CLASSES	2
/* Whole reports of the pages that are not "ok", in one batch's report. */
#define PD_BATCH_FULL_MAX	8
#define PD_BATCH_REPORT_MAX	SZ_1M
/* Where the lines of "ok" pages stop, and those of the others. */
#define PD_BATCH_OK_END		(PD_BATCH_REPORT_MAX / 2)
#define PD_BATCH_LINES_END	(PD_BATCH_REPORT_MAX - SZ_4K)
/* The bit of the filter that a PFN sets: see pd_batch_looks_for(). */
#define PD_BATCH_FILTER_BITS	SZ_4M
#define pd_filter_bit(pfn)	((pfn) & (PD_BATCH_FILTER_BITS - 1))

/* The PFNs [start, end). */
struct pd_range {
	unsigned long start, end;
	bool dropped;		/* the scan could not keep all it found */
};

/*
 * A mapping the scan found of a page it looks for: in a process's page
 * tables, or in the kernel's (@pdm NULL; p.base is then an address the
 * leaf maps, as pd_kernel_leaf() takes it).
 */
struct pd_batch_hit {
	struct pd_mm *pdm;	/* the scan query's */
	struct pd_pending p;
};

/*
 * The hits of one class of width, by PFN: a page's hits that begin before
 * it are looked for among these, which are few, not among all hits.
 */
struct pd_batch_wide {
	unsigned int *hits;	/* indexes into pd_batch.hits */
	unsigned int nr;
	unsigned long widest;	/* the most pages one of them maps */
};

struct pd_batch {
	struct pd_query *q;			/* the query it answers */
	/* What was asked: sorted, merged; and the next page to answer. */
	struct pd_range *asked;
	unsigned int nr_asked, max_asked, cur;
	unsigned long next;
	unsigned long nr_words, words_pages;	/* as written, or mapped */
	unsigned long leaves_unlisted;		/* of a virt range */

	/* The chunk: its pages, and what its scan looks for: each, or its folio. */
	unsigned long pfns[PD_BATCH_CHUNK];
	unsigned int nr_pfns;
	struct pd_range looked[PD_BATCH_CHUNK];
	unsigned int nr_looked;
	bool scattered;		/* they are few of those they span */
	DECLARE_BITMAP(filter, PD_BATCH_FILTER_BITS);
	bool filter_all;	/* every bit is, in effect, set */

	/* What its scan found, by PFN. */
	struct pd_query *scan;
	struct pd_batch_hit *hits;
	unsigned int nr_hits;
	struct pd_batch_wide wide[PD_BATCH_WIDE_CLASSES];

	/* The totals. */
	unsigned long pages, ok, partial, mismatch, not_memory, unlisted;
	unsigned long not_reported;		/* in full: pages not "ok" */
	unsigned int reported, scans;
	unsigned long entries, tables;		/* what the scans read */
	u64 scan_ns, kernel_ns;
	/* What the pages' own queries took, summed: see pd_batch_count(). */
	u64 sources_ns;		/* the sources' scans (pd_source.scan) */
	u64 page_describe_ns, page_rmap_ns, page_verdict_ns;
	u64 page_source_ns[PD_NR_SOURCES];
};

/* ---- The input ----------------------------------------------------------- */

static int pd_cmp_range(const void *a, const void *b)
{
	const struct pd_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort @r and merge what overlaps or touches: each page is answered once. */
static unsigned int pd_merge_ranges(struct pd_range *r, unsigned int nr)
{
	unsigned int i, out = 0;

	sort(r, nr, sizeof(*r), pd_cmp_range, NULL);
	for (i = 0; i < nr; i++) {
		if (out && r[i].start <= r[out - 1].end) {
			r[out - 1].end = max(r[out - 1].end, r[i].end);
			continue;
		}
		r[out++] = r[i];
	}
	return out;
}

/*
 * One word of the input: an address, or START-END, both ends inclusive.  The
 * pages: [*start, *end).
 */
static int pd_parse_word(char *word, unsigned long *start, unsigned long *end)
{
	char *dash = strchr(word, '-');
	u64 first, last;

	if (dash)
		*dash = '\0';
	if (pd_parse_number(word, &first))
		return -EINVAL;
	last = first;
	if (dash && pd_parse_number(dash + 1, &last))
		return -EINVAL;
	if (last < first)
		return -ERANGE;
	*start = PHYS_PFN(first);
	*end = PHYS_PFN(last) + 1;
	return 0;
}

/*
 * Parse the batch's input: addresses and ranges, then "quick" if it is
 * there.  Return: 0, or an errno after the line that says why.
 */
static int pd_batch_parse(struct pd_query *q, struct pd_batch *b, char *input)
{
	static const char expected[] =
		"PADDR, START-END or a list of them, up to 1024, then optionally quick";
	char *word;
	int err;

	while (*(word = pd_next_word(&input))) {
		struct pd_range *r = &b->asked[b->nr_asked];

		if (!strcmp(word, "quick") && b->nr_asked) {
			q->quick = true;
			if (*pd_next_word(&input))
				goto invalid;
			break;
		}
		if (b->nr_asked == b->max_asked)
			goto invalid;
		err = pd_parse_word(word, &r->start, &r->end);
		if (err == -ERANGE) {
			seq_buf_puts(&q->s, "phys: a range ends before it starts\n");
			return -EINVAL;
		}
		if (err)
			goto invalid;
		b->words_pages += r->end - r->start;
		b->nr_asked++;
	}
	if (!b->nr_asked)
		goto invalid;
	b->nr_words = b->nr_asked;
	return 0;

invalid:
	pd_print_invalid(q, "phys", expected);
	return -EINVAL;
}

/* ---- What the scan looks for --------------------------------------------- */

/* The first range the scan looks for that ends after @pfn, or NULL. */
static const struct pd_range *pd_batch_range_after(const struct pd_batch *b,
						   unsigned long pfn)
{
	unsigned int lo = 0, hi = b->nr_looked;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (b->looked[mid].end <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nr_looked ? &b->looked[lo] : NULL;
}

/**
 * pd_batch_looks_for - whether a batch's scan looks for any of some pages
 * @b: the batch
 * @pfn: the first page
 * @nr: how many pages from @pfn
 *
 * Called for each entry that may map a page, under its page-table lock: a
 * filter with a bit per PFN modulo its size answers most of them, a binary
 * search over the chunk's ranges the rest.
 *
 * Return: true if the scan looks for one of them.
 */
bool pd_batch_looks_for(const struct pd_batch *b, unsigned long pfn,
			unsigned long nr)
{
	const struct pd_range *r;

	if (nr == 1 && !b->filter_all &&
	    !test_bit(pd_filter_bit(pfn), b->filter))
		return false;
	r = pd_batch_range_after(b, pfn);
	return r && r->start < pfn + nr;
}

/*
 * Whether the scan looked for each of the @nr pages from @pfn and kept all
 * it found of them: else their query scans for them alone.
 */
static bool pd_batch_covers(const struct pd_batch *b, unsigned long pfn,
			    unsigned long nr)
{
	const struct pd_range *r = pd_batch_range_after(b, pfn);

	return r && r->start <= pfn && pfn + nr <= r->end && !r->dropped;
}

/*
 * What the scan looks for of the page at @pfn: the page, or, where a large
 * folio's mapcount is judged as a whole (CONFIG_NO_PAGE_MAPCOUNT), the
 * folio it seems to be in.  Unpinned: the page's own query finds out, and
 * scans alone if its folio was not looked for whole (pd_batch_covers()).
 */
static void pd_batch_look_for(struct pd_batch *b, unsigned long pfn)
{
	struct pd_range *r = &b->looked[b->nr_looked++];
	struct page *page = pfn_to_online_page(pfn);

	*r = (struct pd_range) { .start = pfn, .end = pfn + 1 };
	if (IS_ENABLED(CONFIG_NO_PAGE_MAPCOUNT) && page) {
		struct folio *folio = page_folio(page);
		unsigned long first = folio_pfn(folio);
		unsigned long nr = folio_nr_pages(folio);

		if (pfn - first < nr && nr <= MAX_FOLIO_NR_PAGES) {
			r->start = first;
			r->end = first + nr;
		}
	}
}

/* How many pages the chunk's scan looks for. */
static unsigned long pd_batch_looked_pages(const struct pd_batch *b)
{
	unsigned long nr = 0;
	unsigned int i;

	for (i = 0; i < b->nr_looked; i++)
		nr += b->looked[i].end - b->looked[i].start;
	return nr;
}

/*
 * Set, or clear, the filter's bits for the chunk's ranges; a range as wide
 * as the filter sets them all (filter_all).  Cleared bit by bit, as they
 * were set: the filter is too large to clear whole for each chunk of a
 * long range.
 */
static void pd_batch_mark_filter(struct pd_batch *b, bool set)
{
	unsigned long pfn;
	unsigned int i;

	for (i = 0; i < b->nr_looked; i++) {
		const struct pd_range *r = &b->looked[i];

		if (r->end - r->start >= PD_BATCH_FILTER_BITS) {
			b->filter_all = set;
			return;
		}
		for (pfn = r->start; pfn < r->end; pfn++)
			__assign_bit(pd_filter_bit(pfn), b->filter, set);
	}
}

/*
 * Whether a PTE may concern the pages a batch's scan looks for: the
 * filter's bit of what it maps is set, or it is neither empty nor present.
 */
static inline bool pd_batch_pte_may_map(const struct pd_batch *b, pte_t pte)
{
	bool neither = (pte_none(pte) | pte_present(pte)) == 0;

	return test_bit(pd_filter_bit(pte_pfn(pte)), b->filter) | neither;
}

/**
 * pd_batch_table_may_map - whether PTEs may concern a batch's pages
 * @scan: the query of the batch's scan
 * @pte: the first PTE
 * @nr: how many from @pte
 *
 * pd_pte_table_may_map() for a batch's scan.  The pages of a scattered
 * batch span most of memory, and their range would let every table
 * through: the filter lets few through, for a little more an entry than
 * the range's test, which the pages of a range keep.
 *
 * Return: true if one of them may.
 */
bool pd_batch_table_may_map(const struct pd_query *scan, pte_t *pte,
			    unsigned int nr)
{
	const struct pd_batch *b = scan->targets;
	bool may = false;
	unsigned int i;

	if (!b->scattered || b->filter_all)
		return pd_pte_range_may_map(pte, nr, scan->first_pfn,
					    scan->nr_pfns);

	for (i = 0; i + 4 <= nr; i += 4)
		may |= pd_batch_pte_may_map(b, ptep_get(pte + i)) |
		       pd_batch_pte_may_map(b, ptep_get(pte + i + 1)) |
		       pd_batch_pte_may_map(b, ptep_get(pte + i + 2)) |
		       pd_batch_pte_may_map(b, ptep_get(pte + i + 3));
	for (; i < nr; i++)
		may |= pd_batch_pte_may_map(b, ptep_get(pte + i));
	return may;
}

/* ---- What the scan finds --------------------------------------------------- */

/*
 * Mark the pages of the ranges that [@pfn, @pfn + @nr) meets: the scan did
 * not keep all it found of them, and their queries walk alone.
 */
static void pd_batch_drop(struct pd_batch *b, unsigned long pfn,
			  unsigned long nr)
{
	unsigned int i;

	for (i = 0; i < b->nr_looked; i++)
		if (b->looked[i].start < pfn + nr && pfn < b->looked[i].end)
			b->looked[i].dropped = true;
}

/**
 * pd_batch_keep - keep a mapping that a batch's scan found
 * @b: the batch
 * @pdm: the mm, the scan query's; NULL for the kernel's page tables
 * @p: the mapping: the leaf and where it maps
 *
 * Without room, what it maps is dropped: pd_batch_drop().
 */
void pd_batch_keep(struct pd_batch *b, struct pd_mm *pdm,
		   const struct pd_pending *p)
{
	if (b->nr_hits == PD_BATCH_HITS_MAX) {
		pd_batch_drop(b, p->pfn, p->nr);
		return;
	}
	b->hits[b->nr_hits++] = (struct pd_batch_hit) { .pdm = pdm, .p = *p };
}

static int pd_cmp_hit(const void *a, const void *b)
{
	const struct pd_batch_hit *x = a, *y = b;

	return x->p.pfn < y->p.pfn ? -1 : x->p.pfn > y->p.pfn;
}

/*
 * The first of @nr hits, @idx's (indexes into b->hits) or, @idx NULL,
 * b->hits themselves, that begins at @pfn or after: hits are sorted by PFN.
 */
static unsigned int pd_batch_first_hit(const struct pd_batch *b,
				       const unsigned int *idx,
				       unsigned int nr, unsigned long pfn)
{
	unsigned int lo = 0, hi = nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (b->hits[idx ? idx[mid] : mid].p.pfn < pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index the wide hits by class, once the hits are sorted. */
static void pd_batch_index_wide(struct pd_batch *b)
{
	struct pd_batch_wide *w;
	unsigned int i;

	for (i = 0; i < PD_BATCH_WIDE_CLASSES; i++) {
		b->wide[i].nr = 0;
		b->wide[i].widest = 1;
	}
	for (i = 0; i < b->nr_hits; i++) {
		unsigned long nr = b->hits[i].p.nr;

		if (nr == 1)
			continue;
		w = &b->wide[nr > PTRS_PER_PTE];
		w->hits[w->nr++] = i;
		w->widest = max(w->widest, nr);
	}
}

/* Where a page's hits are, for pd_batch_next_hit(). */
struct pd_hit_cursor {
	const struct pd_batch *b;
	unsigned long pfn, end;		/* the pages: [pfn, end) */
	unsigned int class, wide;	/* the wide hits before pfn */
	unsigned int next;		/* the hits from pfn on */
};

/* The first wide hit of @class that may reach c->pfn. */
static void pd_hit_cursor_class(struct pd_hit_cursor *c, unsigned int class)
{
	const struct pd_batch_wide *w = &c->b->wide[class];
	unsigned long from = c->pfn > w->widest ? c->pfn - w->widest + 1 : 0;

	c->class = class;
	c->wide = pd_batch_first_hit(c->b, w->hits, w->nr, from);
}

static void pd_hit_cursor_init(struct pd_hit_cursor *c,
			       const struct pd_batch *b, unsigned long pfn,
			       unsigned long nr)
{
	*c = (struct pd_hit_cursor) { .b = b, .pfn = pfn, .end = pfn + nr };
	c->next = pd_batch_first_hit(b, NULL, b->nr_hits, pfn);
	pd_hit_cursor_class(c, 0);
}

/*
 * The next hit that maps one of the cursor's pages: first those that begin
 * before them (wide ones), class by class, then those that begin among
 * them; NULL after the last.
 */
static const struct pd_batch_hit *pd_batch_next_hit(struct pd_hit_cursor *c)
{
	const struct pd_batch *b = c->b;
	const struct pd_batch_hit *hit;

	while (c->class < PD_BATCH_WIDE_CLASSES) {
		const struct pd_batch_wide *w = &b->wide[c->class];

		hit = c->wide < w->nr ? &b->hits[w->hits[c->wide]] : NULL;
		if (!hit || hit->p.pfn >= c->pfn) {
			if (c->class + 1 < PD_BATCH_WIDE_CLASSES)
				pd_hit_cursor_class(c, c->class + 1);
			else
				c->class++;
			continue;
		}
		c->wide++;
		if (hit->p.pfn + hit->p.nr > c->pfn)
			return hit;
	}
	if (c->next < b->nr_hits && b->hits[c->next].p.pfn < c->end)
		return &b->hits[c->next++];
	return NULL;
}

/**
 * pd_batch_replay - give a page's query what its batch's scan found of it
 * @q: the query of one page of a batch, after its first walk of the rmap
 *
 * The mappings are listed and recorded as the query's own scan would, and
 * the scan's figures are the query's.
 *
 * Return: false if @q is not of a batch, or the scan did not look for all
 * the pages @q counts, or could not keep all it found: @q scans alone.
 */
bool pd_batch_replay(struct pd_query *q)
{
	const struct pd_query *scan = pd_batch_scanned(q);
	const struct pd_batch_hit *hit;
	struct pd_hit_cursor c;

	if (!scan)
		return false;
	q->scanned = scan->scanned;
	q->kthreads = scan->kthreads;
	q->exiting = scan->exiting;
	q->sharing = scan->sharing;
	q->interrupted = scan->interrupted;
	q->entries = scan->entries;
	q->tables = scan->tables;
	q->scan_ns = scan->scan_ns;
	q->prescan_ns = scan->prescan_ns;
	q->locked_mms = scan->locked_mms;
	q->mmap_holds = scan->mmap_holds;
	q->vma_holds = scan->vma_holds;

	pd_hit_cursor_init(&c, q->batch, q->first_pfn, q->nr_pfns);
	while ((hit = pd_batch_next_hit(&c))) {
		struct pd_pending p = hit->p;
		struct pd_mm *pdm;

		if (!hit->pdm || !pd_leaf_maps(q, p.pfn, p.nr, p.base, &p.addr))
			continue;
		pdm = pd_mm_get(q, hit->pdm->mm);
		if (!pdm)
			continue;
		if (!pdm->walked) {
			pdm->walked = true;
			pdm->tgid = hit->pdm->tgid;
			strscpy(pdm->comm, hit->pdm->comm);
			q->processes++;
		}
		pd_list_user_mapping(q, pdm, &p, NULL);
		pd_record_user_mapping(q, pdm, &p);
	}
	return true;
}

/**
 * pd_batch_keep_kernel - keep a kernel leaf that a batch's scan met
 * @b: the batch
 * @addr: an address the leaf maps
 * @first: the first page it maps
 * @size: the size it maps
 * @level: its level
 *
 * Kept if it maps a page the scan looks for; if there is no room, each
 * page's query walks the kernel's page tables alone.
 */
void pd_batch_keep_kernel(struct pd_batch *b, unsigned long addr,
			  unsigned long first, unsigned long size,
			  const char *level)
{
	struct pd_pending p = {
		.pfn = first, .nr = size >> PAGE_SHIFT,
		.base = ALIGN_DOWN(addr, size), .level = level,
	};
	const struct pd_batch_hit *last;

	if (!pd_batch_looks_for(b, p.pfn, p.nr))
		return;
	/*
	 * The direct map is walked a run of pages at a time: a huge leaf
	 * that maps several runs is met once by each walk, and kept once.
	 */
	last = b->nr_hits ? &b->hits[b->nr_hits - 1] : NULL;
	if (last && !last->pdm && last->p.base == p.base &&
	    last->p.pfn == p.pfn && last->p.nr == p.nr)
		return;
	pd_batch_keep(b, NULL, &p);
}

/* Give @q the kernel leaves that map its page, in the direct map or not. */
static void pd_batch_kernel_leaves(struct pd_query *q, bool direct)
{
	const struct pd_batch_hit *hit;
	struct pd_hit_cursor c;

	pd_hit_cursor_init(&c, q->batch, q->pfn, 1);
	while ((hit = pd_batch_next_hit(&c))) {
		const struct pd_pending *p = &hit->p;

		if (!hit->pdm && pd_kernel_direct(p->base) == direct)
			pd_kernel_leaf(q, p->base, p->pfn, p->nr << PAGE_SHIFT,
				       p->level);
	}
}

/**
 * pd_batch_kernel_replay - give a page's query what the batch's walk of
 *	the kernel's page tables met of its page
 * @q: the query of one page of a batch
 *
 * The direct map's mappings first, as the query's own walk finds them;
 * the walk's cost is the query's, as the scan's is (pd_batch_replay()).
 *
 * Return: false if @q is not of a batch, or the walk did not look for its
 * page or could not keep all it met: @q walks alone.
 */
bool pd_batch_kernel_replay(struct pd_query *q)
{
	const struct pd_batch *b = q->batch;

	if (!b || !pd_batch_covers(b, q->pfn, 1))
		return false;
	pd_batch_kernel_leaves(q, true);
	q->direct_mapped = q->kernel_mappings;
	pd_batch_kernel_leaves(q, false);
	q->kernel_ns = b->scan->kernel_ns;
	return true;
}

/**
 * pd_batch_scanned - the scan of a batch that looked for a page's pages
 * @q: the query of one page of a batch
 *
 * Where a source's scan (pd_source.scan) keeps what it found for the
 * page's list to take.
 *
 * Return: the chunk's scan query, or NULL if @q is not of a batch or the
 * scan did not look for all its pages: @q looks alone.
 */
const struct pd_query *pd_batch_scanned(const struct pd_query *q)
{
	const struct pd_batch *b = q->batch;

	if (!b || !pd_batch_covers(b, q->first_pfn, q->nr_pfns))
		return NULL;
	return b->scan;
}

/* ---- The chunks ------------------------------------------------------------ */

/*
 * Where the pages from @pfn that are not online memory end, before @end: a
 * section at a time where the whole section is not online.
 */
static unsigned long pd_offline_end(unsigned long pfn, unsigned long end)
{
	while (pfn < end && !pfn_to_online_page(pfn)) {
#ifdef CONFIG_SPARSEMEM
		unsigned long nr = pfn_to_section_nr(pfn);

		if (nr >= NR_MEM_SECTIONS) {
			pfn = end;
			break;
		}
		if (!online_section_nr(nr)) {
			pfn = ALIGN(pfn + 1, PAGES_PER_SECTION);
			continue;
		}
#endif
		pfn++;
	}
	return min(pfn, end);
}

/* Say and count that the pages [@from, @to) are not online memory. */
static void pd_batch_not_memory(struct pd_query *q, struct pd_batch *b,
				unsigned long from, unsigned long to)
{
	seq_buf_printf(&q->s, "batch page: pfn=%#lx", from);
	if (to - from > 1)
		seq_buf_printf(&q->s, "-%#lx", to - 1);
	seq_buf_printf(&q->s, " not online memory (%lu page%s)\n", to - from,
		       to - from > 1 ? "s" : "");
	b->pages += to - from;
	b->not_memory += to - from;
}

/*
 * The next pages to answer, at most PD_BATCH_CHUNK, into b->pfns; a run of
 * pages that are not memory, met before any, is said in one line and
 * counted.  Return: false when every page asked has been answered.
 */
static bool pd_batch_next_chunk(struct pd_query *q, struct pd_batch *b)
{
	b->nr_pfns = 0;
	pd_batch_mark_filter(b, false);
	b->nr_looked = 0;
	while (b->nr_pfns < PD_BATCH_CHUNK && b->cur < b->nr_asked) {
		unsigned long end = b->asked[b->cur].end, to;

		if (b->next >= end) {
			if (++b->cur < b->nr_asked)
				b->next = b->asked[b->cur].start;
			continue;
		}
		to = pd_offline_end(b->next, end);
		if (to == b->next) {
			b->pfns[b->nr_pfns++] = b->next++;
			continue;
		}
		if (b->nr_pfns)
			break;		/* said after the pages before it */
		pd_batch_not_memory(q, b, b->next, to);
		b->next = to;
		cond_resched();
		if (fatal_signal_pending(current))
			return false;
	}
	return b->nr_pfns;
}

/*
 * One scan of every process's page tables for the pages of the chunk, its
 * mappings kept in b->hits, by PFN.
 */
static void pd_batch_scan(struct pd_batch *b)
{
	struct pd_query *scan = b->scan;
	unsigned int i, nr;
	int err = 0;
	u64 start;

	pd_query_reset(scan);
	b->nr_hits = 0;
	for (i = 0; i < b->nr_pfns; i++)
		pd_batch_look_for(b, b->pfns[i]);
	b->nr_looked = pd_merge_ranges(b->looked, b->nr_looked);
	pd_batch_mark_filter(b, true);

	scan->targets = b;
	scan->first_pfn = b->looked[0].start;
	scan->nr_pfns = b->looked[b->nr_looked - 1].end - scan->first_pfn;
	b->scattered = scan->nr_pfns > 2 * pd_batch_looked_pages(b);
	start = local_clock();
	for (i = 0; i < b->nr_pfns; i += nr) {
		for (nr = 1; i + nr < b->nr_pfns; nr++)
			if (b->pfns[i + nr] != b->pfns[i] + nr)
				break;
		err = pd_kernel_scan_direct(scan, b->pfns[i], nr);
		if (err)
			break;
	}
	if (!err)
		err = pd_kernel_scan(scan);
	if (err)	/* what was not walked, each page's query walks */
		pd_batch_drop(b, 0, ULONG_MAX);
	scan->kernel_ns = local_clock() - start;
	b->kernel_ns += scan->kernel_ns;
	pd_scan_processes(scan);
	/* After the processes': a source may ask each mm the scan met. */
	start = local_clock();
	for (i = 0; i < PD_NR_SOURCES; i++)
		if (pd_sources[i]->scan)
			pd_sources[i]->scan(scan);
	b->sources_ns += local_clock() - start;
	sort(b->hits, b->nr_hits, sizeof(*b->hits), pd_cmp_hit, NULL);
	pd_batch_index_wide(b);
	b->scans++;
	b->scan_ns += scan->scan_ns;
	b->entries += scan->entries;
	b->tables += scan->tables;
}

/* The line of a page that its query answered, and its count. */
static void pd_batch_count(struct pd_query *q, struct pd_batch *b,
			   struct pd_query *page)
{
	const struct pd_summary *sum = &page->summary;
	bool ok = !strcmp(sum->verdict, "ok");
	unsigned int i;

	b->page_describe_ns += page->describe_ns;
	b->page_rmap_ns += page->rmap_ns;
	b->page_verdict_ns += page->recheck_ns;
	for (i = 0; i < PD_NR_SOURCES; i++)
		b->page_source_ns[i] += page->source_ns[i];

	b->ok += ok;
	b->mismatch += !strcmp(sum->verdict, "mismatch");
	b->partial += !strcmp(sum->verdict, "partial");
	if (!pd_report_has_room(q, ok ? PD_BATCH_OK_END : PD_BATCH_LINES_END)) {
		b->unlisted++;
		return;
	}
	seq_buf_printf(&q->s,
		       "batch page: pfn=%#lx kind=%s refcount=%d mapcount=%d kernel_mappings=%u user_mappings=%lu rmap_mappings=%lu processes=%u culprits=%u level=%s verdict=%s\n",
		       page->pfn, sum->kind, page->refcount,
		       page->folio_level ? -1 : page->mapcount,
		       page->kernel_mappings, sum->user, sum->rmap,
		       sum->processes, sum->culprits,
		       page->folio_level ? "folio" : "page", sum->verdict);
}

/* The whole report of a page that is not "ok", if the report has room. */
static void pd_batch_report_in_full(struct pd_query *q, struct pd_batch *b,
				    struct pd_query *page)
{
	if (!strcmp(page->summary.verdict, "ok"))
		return;
	/* Answered briefly alone (a fatal signal came first): no text. */
	if (page->brief || b->reported == PD_BATCH_FULL_MAX ||
	    seq_buf_used(&q->s) + seq_buf_used(&page->s) + SZ_4K >
	    PD_BATCH_LINES_END) {
		b->not_reported++;
		return;
	}
	b->reported++;
	pd_append_report(q, page);
}

/* Answer the page at @pfn with @page's query, @brief or not. */
static int pd_batch_ask(struct pd_query *q, struct pd_batch *b,
			struct pd_query *page, unsigned long pfn, bool brief)
{
	pd_query_reset(page);
	page->pfn = pfn;
	page->quick = q->quick;
	page->batch = b;
	page->brief = brief;
	/*
	 * A brief answer's text is never read (a page reported whole is
	 * answered again): a full report formats nothing, and lists nothing
	 * (pd_report_has_room()), which took half of a page's time.
	 */
	if (brief)
		seq_buf_set_overflow(&page->s);
	return pd_report_pfn(page);
}

/* Whether @page, answered, is one to report whole, if there is room. */
static bool pd_batch_reports_whole(const struct pd_batch *b,
				   const struct pd_query *page)
{
	return page->summarized && strcmp(page->summary.verdict, "ok") &&
	       b->reported < PD_BATCH_FULL_MAX;
}

/*
 * Answer the page at @pfn with @page's query: briefly, then, if it is to
 * be reported whole, again, whole; its line and its counts are those of
 * its last answer.  Return: 0, or -EINTR on a fatal signal, or another
 * errno that ends the batch.
 */
static int pd_batch_page(struct pd_query *q, struct pd_batch *b,
			 struct pd_query *page, unsigned long pfn)
{
	int err;

	err = pd_batch_ask(q, b, page, pfn, true);
	if (!err && pd_batch_reports_whole(b, page))
		err = pd_batch_ask(q, b, page, pfn, false);
	if (err == -EINVAL && !page->summarized) {
		/* Went offline since the chunk was made. */
		pd_batch_not_memory(q, b, pfn, pfn + 1);
		return 0;
	}
	b->pages++;
	if (page->summarized) {
		pd_batch_count(q, b, page);
		pd_batch_report_in_full(q, b, page);
		return err;
	}
	if (err == -EAGAIN) {
		b->partial++;
		seq_buf_printf(&q->s,
			       "batch page: pfn=%#lx kind=changing verdict=partial (its folio kept changing)\n",
			       pfn);
		return 0;
	}
	return err;
}

/* The lines that end a batch's report: its cost, and its totals. */
static void pd_batch_summary(struct pd_query *q, struct pd_batch *b,
			     u64 ns, bool interrupted)
{
	unsigned int i;

	if (b->unlisted)
		seq_buf_printf(&q->s, "batch page: %lu more not listed\n",
			       b->unlisted);
	if (b->not_reported)
		seq_buf_printf(&q->s,
			       "batch reports: %lu pages that are not ok are not reported in full, only by their line\n",
			       b->not_reported);
	seq_buf_printf(&q->s,
		       "batch cost: %u scans of every process, %lu page-table entries in %lu PTE tables in %llu us; kernel page tables %llu us; the sources' scans %llu us; %llu us in all\n",
		       b->scans, b->entries, b->tables,
		       div_u64(b->scan_ns, NSEC_PER_USEC),
		       div_u64(b->kernel_ns, NSEC_PER_USEC),
		       div_u64(b->sources_ns, NSEC_PER_USEC),
		       div_u64(ns, NSEC_PER_USEC));
	seq_buf_printf(&q->s,
		       "batch cost: the pages' own, summed: description %llu us; rmap %llu us; verdict %llu us",
		       div_u64(b->page_describe_ns, NSEC_PER_USEC),
		       div_u64(b->page_rmap_ns, NSEC_PER_USEC),
		       div_u64(b->page_verdict_ns, NSEC_PER_USEC));
	for (i = 0; i < PD_NR_SOURCES; i++)
		seq_buf_printf(&q->s, "; %s %llu us", pd_sources[i]->name,
			       div_u64(b->page_source_ns[i], NSEC_PER_USEC));
	seq_buf_putc(&q->s, '\n');
	seq_buf_printf(&q->s,
		       "batch: pages=%lu ok=%lu partial=%lu mismatch=%lu not_memory=%lu reported=%u scans=%u%s\n",
		       b->pages, b->ok, b->partial, b->mismatch, b->not_memory,
		       b->reported, b->scans, interrupted ? " interrupted" : "");
	q->summarized = true;
}

/* Answer every page asked, a chunk at a time. */
static int pd_batch_answer(struct pd_query *q, struct pd_batch *b,
			   struct pd_query *page)
{
	unsigned int i;
	int err = 0;

	while (!err && pd_batch_next_chunk(q, b)) {
		if (!q->quick)
			pd_batch_scan(b);
		for (i = 0; i < b->nr_pfns && !err; i++) {
			err = pd_batch_page(q, b, page, b->pfns[i]);
			if (!err && fatal_signal_pending(current))
				err = -EINTR;
		}
	}
	if (!err && fatal_signal_pending(current))
		err = -EINTR;
	return err;
}

static void pd_batch_free(struct pd_batch *b)
{
	pd_query_free(b->scan);
	kvfree(b->hits);
	kvfree(b->wide[0].hits);
	kvfree(b->asked);
	kvfree(b);
}

/* A batch for @q, of up to @max_asked runs of pages; its report grown. */
static struct pd_batch *pd_batch_alloc(struct pd_query *q,
				       unsigned int max_asked)
{
	struct pd_batch *b = kvzalloc_obj(*b, GFP_KERNEL);
	unsigned int i;

	if (!b)
		return NULL;
	b->q = q;
	b->max_asked = max_asked;
	b->asked = kvmalloc_array(max_asked, sizeof(*b->asked), GFP_KERNEL);
	b->hits = kvmalloc_array(PD_BATCH_HITS_MAX, sizeof(*b->hits),
				 GFP_KERNEL);
	/* Each class's indexes in one allocation: PD_BATCH_HITS_MAX each. */
	b->wide[0].hits = kvmalloc_array(PD_BATCH_WIDE_CLASSES *
					 PD_BATCH_HITS_MAX,
					 sizeof(*b->wide[0].hits), GFP_KERNEL);
	for (i = 1; b->wide[0].hits && i < PD_BATCH_WIDE_CLASSES; i++)
		b->wide[i].hits = b->wide[0].hits + i * PD_BATCH_HITS_MAX;
	b->scan = pd_query_alloc();
	if (b->scan)
		b->scan->batch_secondary =
			kvmalloc_array(PD_BATCH_SECONDARY_MAX,
				       sizeof(*b->scan->batch_secondary),
				       GFP_KERNEL);
	if (!b->asked || !b->hits || !b->wide[0].hits || !b->scan ||
	    !b->scan->batch_secondary ||
	    pd_query_report_size(q, PD_BATCH_REPORT_MAX)) {
		pd_batch_free(b);
		return NULL;
	}
	return b;
}

/*
 * Answer the pages asked, sorted and merged here, each with the query of
 * one page, and end the report with the totals.
 */
static int pd_batch_run(struct pd_query *q, struct pd_batch *b, u64 start)
{
	struct pd_query *page = pd_query_alloc();
	int err;

	if (!page)
		return -ENOMEM;
	b->nr_asked = pd_merge_ranges(b->asked, b->nr_asked);
	b->next = b->asked[0].start;
	err = pd_batch_answer(q, b, page);
	if (!err || err == -EINTR)
		pd_batch_summary(q, b, local_clock() - start, err);
	pd_query_free(page);
	return err;
}

/**
 * pd_phys_batch - the query of many pages: a list, or a range
 * @q: the query
 * @input: its input, which is cut up
 *
 * Might sleep.
 *
 * Return: 0, -EINVAL on bad input, -ENOMEM, or -EINTR on a fatal signal
 * (the report is then summarized, its totals so far).
 */
int pd_phys_batch(struct pd_query *q, char *input)
{
	u64 start = local_clock();
	struct pd_batch *b;
	int err;

	b = pd_batch_alloc(q, PD_BATCH_WORDS_MAX);
	if (!b)
		return -ENOMEM;
	err = pd_batch_parse(q, b, input);
	if (!err) {
		seq_buf_printf(&q->s,
			       "phys: %lu addresses and ranges, %lu pages, each answered once, in order%s\n",
			       b->nr_words, b->words_pages,
			       q->quick ? " (quick)" : "");
		err = pd_batch_run(q, b, start);
	}
	pd_batch_free(b);
	return err;
}

/*
 * A run of @nr pages from @pfn that a leaf maps at @addr in a virt range:
 * listed, and asked about.  Return: 0, or -E2BIG when there is no more
 * room, which ends the walk.
 */
static int pd_batch_mapped(void *arg, unsigned long addr, unsigned long pfn,
			   unsigned long nr, const char *level)
{
	struct pd_batch *b = arg;
	struct pd_range *last = b->nr_asked ? &b->asked[b->nr_asked - 1] : NULL;

	if (!last || last->end != pfn) {
		if (b->nr_asked == b->max_asked) {
			seq_buf_printf(&b->q->s,
				       "virt: more than %u runs of pages mapped: those from %#lx on are not asked about\n",
				       b->max_asked, addr);
			return -E2BIG;
		}
		last = &b->asked[b->nr_asked++];
		*last = (struct pd_range) { .start = pfn, .end = pfn };
	}
	last->end += nr;
	b->nr_words++;
	b->words_pages += nr;
	if (b->nr_words > PD_LISTED_MAX) {
		b->leaves_unlisted++;
		return 0;
	}
	seq_buf_printf(&b->q->s, "leaf: %#lx %s, pfn %#lx", addr, level, pfn);
	if (nr > 1)
		seq_buf_printf(&b->q->s, "-%#lx", pfn + nr - 1);
	seq_buf_putc(&b->q->s, '\n');
	return 0;
}

/*
 * Parse a virt range, "PID START-END [quick]", into @pid and the page
 * addresses [@start, @end).  Return: 0, or -EINVAL after the line that
 * says why.
 */
static int pd_virt_parse(struct pd_query *q, char *input, u64 *pid,
			 unsigned long *start, unsigned long *end)
{
	char *word, *dash;
	u64 first, last;

	if (pd_parse_number(pd_next_word(&input), pid))
		goto invalid;
	word = pd_next_word(&input);
	dash = strchr(word, '-');
	if (!dash)
		goto invalid;
	*dash = '\0';
	if (pd_parse_number(word, &first) || pd_parse_number(dash + 1, &last))
		goto invalid;
	word = pd_next_word(&input);
	q->quick = !strcmp(word, "quick");
	if (q->quick)
		word = pd_next_word(&input);
	if (*word)
		goto invalid;
	if (!*pid || *pid > PID_MAX_LIMIT) {
		seq_buf_printf(&q->s, "virt: pid %llu: a range is of a process's addresses\n",
			       *pid);
		return -EINVAL;
	}
	if (last < first || last >= TASK_SIZE_MAX) {
		seq_buf_puts(&q->s,
			     "virt: a range of user addresses, from its first to its last, is expected\n");
		return -EINVAL;
	}
	*start = first & PAGE_MASK;
	*end = (last & PAGE_MASK) + PAGE_SIZE;
	return 0;

invalid:
	pd_print_invalid(q, "virt", "PID VADDR [quick] or PID START-END [quick]");
	return -EINVAL;
}

/**
 * pd_virt_batch - the query of every page a range of a process's
 *	addresses maps
 * @q: the query
 * @input: its input, "PID START-END [quick]", which is cut up
 *
 * Might sleep.
 *
 * Return: 0, -EINVAL on bad input, -ESRCH if there is no such process,
 * -ENXIO if nothing is mapped in the range, -ENOMEM, or -EINTR on a fatal
 * signal (the report is then summarized, its totals so far).
 */
int pd_virt_batch(struct pd_query *q, char *input)
{
	unsigned long first, end;
	u64 start = local_clock();
	struct pd_batch *b;
	u64 pid;
	int err;

	err = pd_virt_parse(q, input, &pid, &first, &end);
	if (err)
		return err;
	b = pd_batch_alloc(q, PD_BATCH_RUNS_MAX);
	if (!b)
		return -ENOMEM;
	err = pd_virt_user_range(q, pid, first, end, pd_batch_mapped, b);
	if (err == -E2BIG)
		err = 0;
	if (!err && !b->nr_asked) {
		seq_buf_puts(&q->s, "virt: nothing is mapped in the range\n");
		err = -ENXIO;
	}
	if (!err) {
		if (b->leaves_unlisted)
			seq_buf_printf(&q->s, "leaf: %lu more not listed\n",
				       b->leaves_unlisted);
		seq_buf_printf(&q->s,
			       "virt: %lu leaves map %lu pages, each answered once, in order%s\n",
			       b->nr_words, b->words_pages,
			       q->quick ? " (quick)" : "");
		err = pd_batch_run(q, b, start);
	}
	pd_batch_free(b);
	return err;
}
