// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page Detective: what devices can DMA into the page.
 *
 * The IOMMU core describes, by value, what can reach a physical range
 * (iommu_describe_phys()): each leaf of its domains' page tables that maps
 * it, with the group, its devices, the domain's type and user, the IOVA and
 * the permission; each group in an identity domain and each PCI device
 * behind no IOMMU, which reach every page, and which the report counts
 * once rather than per page.
 *
 * A page that an IOMMU still maps while it is free, or while it is a
 * process's or a file's page that nobody holds for DMA, is the DMA
 * use-after-free: a driver that let go of its buffer without unmapping it,
 * whose device can still write into the page and its next owner (see
 * pd_dma_unowned()).  An unmap clears the IOMMU's entries at once, even
 * where the IOTLB's flush is deferred (a DMA-FQ domain): a leaf found is a
 * mapping no one undid.  The finding is re-checked, as the host's
 * disagreements are, before it is believed.
 *
 * With iommu.debug_pagealloc, the IOMMU core also counts each page's
 * mappings in every domain, attached or not, as the mapcount counts its
 * page-table entries (iommu_debug_page_mappings()): more counted than the
 * leaves found are mappings in domains no walk reaches, and of a page
 * nobody holds, culprits too.
 */
#include <linux/iommu.h>
#include <linux/memory_hotplug.h>
#include <linux/string.h>

#include "pd.h"

static bool pd_dma_same(const struct iommu_phys_mapping *a,
			const struct iommu_phys_mapping *b)
{
	return a->group == b->group && a->pasid == b->pasid &&
	       a->attached == b->attached && a->iova == b->iova &&
	       a->oa == b->oa && a->oasz_lg2 == b->oasz_lg2;
}

/* Counted once per report: the first one met is named. */
static void pd_dma_count(struct pd_dma_count *c, const char *devices)
{
	if (!c->nr++)
		strscpy(c->first, devices, sizeof(c->first));
}

/* iommu_describe_fn: keep what the IOMMU core found.  Under RCU. */
static void pd_dma_found(void *arg, const struct iommu_phys_mapping *m)
{
	struct pd_query *q = arg;
	unsigned int i;

	switch (m->kind) {
	case IOMMU_PHYS_LEAF:
		for (i = 0; i < q->nr_dma; i++)
			if (pd_dma_same(&q->dma[i].m, m))
				return;
		if (q->nr_dma == PD_DMA_MAX) {
			q->more_dma++;
			return;
		}
		q->dma[q->nr_dma++].m = *m;
		break;
	case IOMMU_PHYS_IDENTITY:
		pd_dma_count(&q->dma_identity, m->devices);
		break;
	case IOMMU_PHYS_NO_IOMMU:
		pd_dma_count(&q->dma_unprotected, m->devices);
		break;
	case IOMMU_PHYS_OPAQUE:
		pd_dma_count(&q->dma_opaque, m->devices);
		break;
	case IOMMU_PHYS_CUT:
		pd_dma_count(&q->dma_cut, m->devices);
		break;
	}
}

/* The range of the pages the query counts, for iommu_describe_phys(). */
static int pd_dma_describe(struct pd_query *q, iommu_describe_fn fn,
			   void *arg)
{
	return iommu_describe_phys(PFN_PHYS(q->first_pfn),
				   q->nr_pfns << PAGE_SHIFT, fn, arg);
}

/*
 * What iommu.debug_pagealloc counts of leaf @m in the pages the query
 * counts: one for each of the domain's smallest pages the leaf maps that
 * starts in one of them (iommufd's mock domain has 2K ones).
 */
static unsigned long pd_dma_leaf_counted(struct pd_query *q,
					 const struct iommu_phys_mapping *m)
{
	u64 lo = max_t(u64, m->oa, PFN_PHYS(q->first_pfn));
	u64 hi = min_t(u64, m->oa + (1ULL << m->oasz_lg2),
		       PFN_PHYS(q->first_pfn + q->nr_pfns));
	u64 unit = 1ULL << m->pgsize_lg2;

	if (hi <= lo)
		return 0;
	return DIV64_U64_ROUND_UP(hi - m->oa, unit) -
	       DIV64_U64_ROUND_UP(lo - m->oa, unit);
}

/*
 * What iommu.debug_pagealloc counts of the pages the query counts, or -1
 * when it is off.  A 1 GiB folio has 262144 pages: reschedule among them.
 */
static long pd_dma_counted(struct pd_query *q)
{
	unsigned long i;
	long counted = 0;
	int count;

	for (i = 0; i < q->nr_pfns; i++) {
		if (iommu_debug_page_mappings(PFN_PHYS(q->first_pfn + i), &count))
			return -1;
		counted += count;
		if (!(i % 4096))
			cond_resched();
	}
	return counted;
}

/* iommu_describe_fn of the count's re-check: the leaves' pages, again. */
static void pd_dma_found_pages(void *arg, const struct iommu_phys_mapping *m)
{
	struct pd_query *q = arg;

	if (m->kind == IOMMU_PHYS_LEAF)
		q->dma_found += pd_dma_leaf_counted(q, m);
}

/* "iommu: iommu.debug_pagealloc counts 2 mappings of the page, ..." */
static void pd_print_dma_counted(struct pd_query *q)
{
	unsigned int i;

	q->dma_counted = pd_dma_counted(q);
	if (q->dma_counted < 0)
		return;
	q->dma_found = 0;
	for (i = 0; i < q->nr_dma; i++)
		q->dma_found += pd_dma_leaf_counted(q, &q->dma[i].m);
	seq_buf_printf(&q->s, "iommu: iommu.debug_pagealloc counts %ld mappings of ",
		       q->dma_counted);
	if (q->nr_pfns > 1)
		seq_buf_printf(&q->s, "the folio's %lu pages", q->nr_pfns);
	else
		seq_buf_puts(&q->s, "the page");
	seq_buf_printf(&q->s, ", the leaves above map it %lu times\n", q->dma_found);
}

/* "group 5 0000:00:03.0 (drv): DMA-FQ domain (DMA API)" */
static void pd_print_dma_domain(struct pd_query *q,
				const struct iommu_phys_mapping *m)
{
	seq_buf_printf(&q->s, "group %d %s: %s domain (%s%s)", m->group,
		       m->devices, m->domain, m->user,
		       m->attached ? "" : ", not attached");
	if (m->pasid != IOMMU_NO_PASID)
		seq_buf_printf(&q->s, " pasid %u", m->pasid);
}

static void pd_print_dma(struct pd_query *q, const struct pd_dma *dma)
{
	const struct iommu_phys_mapping *m = &dma->m;

	seq_buf_puts(&q->s, "iommu: ");
	pd_print_dma_domain(q, m);
	seq_buf_printf(&q->s, " iova %#llx pfn %#lx ",
		       (unsigned long long)m->iova, (unsigned long)PHYS_PFN(m->oa));
	if (m->oasz_lg2 >= PAGE_SHIFT)
		pd_print_leaf_size(&q->s, 1UL << (m->oasz_lg2 - PAGE_SHIFT));
	else	/* smaller than a page: iommufd's mock domain's 2K */
		seq_buf_printf(&q->s, "%luK", (1UL << m->oasz_lg2) / SZ_1K);
	seq_buf_printf(&q->s, " %s%s\n", m->writable ? "writable" : "read-only",
		       m->dirty < 0 ? "" : m->dirty ? " dirty" : " clean");
}

static void pd_print_dma_counts(struct pd_query *q)
{
	if (q->dma_identity.nr)
		seq_buf_printf(&q->s,
			       "iommu: %u groups in identity domains, whose DMA reaches all memory, this page included (first: %s)\n",
			       q->dma_identity.nr, q->dma_identity.first);
	if (q->dma_unprotected.nr)
		seq_buf_printf(&q->s,
			       "iommu: %u PCI devices behind no IOMMU, whose DMA reaches all memory, this page included (first: %s)\n",
			       q->dma_unprotected.nr, q->dma_unprotected.first);
	if (q->dma_opaque.nr)
		seq_buf_printf(&q->s,
			       "iommu: %u domains whose tables cannot be read here (first: of %s): their mappings are not known\n",
			       q->dma_opaque.nr, q->dma_opaque.first);
	if (q->dma_cut.nr)
		seq_buf_printf(&q->s,
			       "iommu: %u domains too large to read whole (first: of %s): their mappings past the bound are not known\n",
			       q->dma_cut.nr, q->dma_cut.first);
}

/*
 * iommu_describe_fn of a batch's scan: what pd_dma_found() keeps, but of
 * the leaves only those that map a page the scan looks for.
 */
static void pd_dma_found_for_batch(void *arg, const struct iommu_phys_mapping *m)
{
	struct pd_query *scan = arg;
	unsigned long nr = m->oasz_lg2 > PAGE_SHIFT ?
			   1UL << (m->oasz_lg2 - PAGE_SHIFT) : 1;

	if (m->kind == IOMMU_PHYS_LEAF &&
	    !pd_batch_looks_for(scan->targets, PHYS_PFN(m->oa), nr))
		return;
	pd_dma_found(scan, m);
}

/*
 * source.scan: one walk of the IOMMUs' tables for the pages of a batch's
 * chunk (scan->first_pfn and scan->nr_pfns bound them), instead of one a
 * page: a walk reads every leaf of every domain, whatever it looks for.
 */
static void pd_dma_scan(struct pd_query *scan)
{
	scan->dma_err = pd_dma_describe(scan, pd_dma_found_for_batch, scan);
}

/*
 * What the chunk's scan found for the page of @q: its leaves and the
 * counts, which are of every page alike.  Return: the scan's error, or
 * -EAGAIN when the scan could not keep every leaf: @q walks alone.
 */
static int pd_dma_take(struct pd_query *q, const struct pd_query *scan)
{
	u64 lo = PFN_PHYS(q->first_pfn), hi = PFN_PHYS(q->first_pfn + q->nr_pfns);
	unsigned int i;

	if (scan->more_dma)
		return -EAGAIN;
	for (i = 0; i < scan->nr_dma; i++) {
		const struct iommu_phys_mapping *m = &scan->dma[i].m;

		if (m->oa < hi && lo < m->oa + (1ULL << m->oasz_lg2))
			pd_dma_found(q, m);
	}
	q->dma_identity = scan->dma_identity;
	q->dma_unprotected = scan->dma_unprotected;
	q->dma_opaque = scan->dma_opaque;
	q->dma_cut = scan->dma_cut;
	return scan->dma_err;
}

/* source.list: what the IOMMUs map of the page, and who else reaches it. */
static void pd_dma_list(struct pd_query *q)
{
	const struct pd_query *scan = pd_batch_scanned(q);
	unsigned long unlisted;
	unsigned int i;
	int err = -EAGAIN;

	if (scan)
		err = pd_dma_take(q, scan);
	if (err == -EAGAIN)
		err = pd_dma_describe(q, pd_dma_found, q);
	if (err == -EINTR)
		q->interrupted = true;
	else if (err == -EOPNOTSUPP)
		seq_buf_puts(&q->s,
			     "iommu: not known: this kernel cannot describe IOMMU mappings\n");
	/* Those found but not kept, then those kept for which there is no room. */
	unlisted = q->more_dma;
	for (i = 0; i < q->nr_dma; i++) {
		if (pd_report_has_room(q, PD_LISTS_END))
			pd_print_dma(q, &q->dma[i]);
		else
			unlisted++;
	}
	if (unlisted)
		seq_buf_printf(&q->s, "iommu: %lu more not listed\n", unlisted);
	pd_print_dma_counts(q);
	pd_print_dma_counted(q);
}

/* Whether every page the query counts is free: unowned, unmappable. */
static bool pd_dma_pages_free(struct pd_query *q)
{
	unsigned long pfn;
	bool free = true;

	get_online_mems();
	for (pfn = q->first_pfn; free && pfn < q->first_pfn + q->nr_pfns; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		free = page && pd_page_free(page);
	}
	put_online_mems();
	return free;
}

/* iommu_describe_fn of a re-check: mark the suspects found again. */
static void pd_dma_found_again(void *arg, const struct iommu_phys_mapping *m)
{
	struct pd_query *q = arg;
	unsigned int i;

	if (m->kind != IOMMU_PHYS_LEAF)
		return;
	for (i = 0; i < q->nr_dma; i++)
		if (q->dma[i].fault && pd_dma_same(&q->dma[i].m, m))
			q->dma[i].seen = true;
}

/**
 * pd_dma_unowned - why nobody can hold the page for a DMA mapping now
 * @q: the query
 *
 * A free
 * page has no owner.  A page that user space maps or that the page cache
 * holds has its DMA mappings' owners among its references: the DMA API
 * asks the mapper to keep the memory, and who maps a process's or a file's
 * page for DMA pins it (O_DIRECT, RDMA, VFIO, iommufd), takes a reference
 * on it (zero-copy networking), or holds its lock or writeback (block I/O
 * into or out of the page cache, swap).  When its references are all its
 * mappings', its caches' and private data's, with none in flight, nobody
 * does.  A kernel page (no mapping) is judged only when free: its owner's
 * reference looks like any other.
 *
 * Return: why, or NULL when someone may hold it.
 */
const char *pd_dma_unowned(struct pd_query *q)
{
	struct folio *folio = q->folio;
	struct pd_refs r;

	if (!folio)
		return pd_dma_pages_free(q) ? "a free page" : NULL;
	if (folio_test_hugetlb(folio) || is_zero_pfn(q->pfn) ||
	    (!folio_test_anon(folio) && !folio->mapping))
		return NULL;
	if (folio_test_locked(folio) || folio_test_writeback(folio))
		return NULL;
	pd_count_refs(folio, &r);
	if (r.pins || r.other)
		return NULL;
	return "a page whose references are all its mappings' and caches': nobody holds it for DMA";
}

/* recheck of pd_recheck_rounds(): the suspects still mapped, still unowned. */
static unsigned int pd_dma_recheck(struct pd_query *q)
{
	unsigned int i, suspects = 0;
	const char *why;

	for (i = 0; i < q->nr_dma; i++)
		q->dma[i].seen = false;
	if (pd_dma_describe(q, pd_dma_found_again, q) == -EINTR) {
		q->interrupted = true;
		return 0;
	}
	why = pd_dma_unowned(q);
	for (i = 0; i < q->nr_dma; i++) {
		struct pd_dma *dma = &q->dma[i];

		if (dma->fault)
			dma->fault = dma->seen ? why : NULL;
		suspects += !!dma->fault;
	}
	return suspects;
}

static void pd_print_dma_culprit(struct pd_query *q, const struct pd_dma *dma)
{
	seq_buf_puts(&q->s, "culprit: iommu: ");
	pd_print_dma_domain(q, &dma->m);
	seq_buf_printf(&q->s,
		       " iova %#llx maps pfn %#lx%s, %s: a DMA mapping that outlived its page\n",
		       (unsigned long long)dma->m.iova,
		       (unsigned long)PHYS_PFN(dma->m.oa),
		       dma->m.writable ? " writable" : "", dma->fault);
}

/*
 * The leaves' culprits: each leaf that maps the page while nobody can hold
 * it for DMA (pd_dma_unowned()), found again in each of PD_RECHECK_ROUNDS
 * re-checks, each after a pause, with the page still so.
 */
static unsigned int pd_dma_leaf_culprits(struct pd_query *q)
{
	unsigned int i, culprits = 0;
	const char *why;

	if (!q->nr_dma)
		return 0;
	why = pd_dma_unowned(q);
	if (!why)
		return 0;
	for (i = 0; i < q->nr_dma; i++)
		q->dma[i].fault = why;
	if (!pd_recheck_rounds(q, q->nr_dma, pd_dma_recheck))
		return 0;
	for (i = 0; i < q->nr_dma; i++) {
		if (!q->dma[i].fault)
			continue;
		culprits++;
		if (pd_culprit_listed(q))
			pd_print_dma_culprit(q, &q->dma[i]);
	}
	pd_print_unlisted_culprits(q);
	return culprits;
}

/*
 * recheck of pd_recheck_rounds(): the count and the leaves read again, and
 * whether more are counted than found, of a page still nobody's.
 */
static unsigned int pd_dma_recheck_counted(struct pd_query *q)
{
	long counted = pd_dma_counted(q);

	q->dma_found = 0;
	if (pd_dma_describe(q, pd_dma_found_pages, q) == -EINTR) {
		q->interrupted = true;
		return 0;
	}
	q->dma_unseen_fault = pd_dma_unowned(q);
	q->dma_unseen = counted - (long)q->dma_found;
	return q->dma_unseen_fault && q->dma_unseen > 0;
}

/*
 * The count's culprit: mappings that iommu.debug_pagealloc counts and no
 * walk found, of a page nobody can hold for DMA, re-checked as the leaves
 * are.  A leaf found has its own culprit line; these are in domains that no
 * walk reaches (attached to no device), or past a walk's bound.
 */
static unsigned int pd_dma_counted_culprit(struct pd_query *q)
{
	if (q->dma_counted <= (long)q->dma_found || !pd_dma_unowned(q))
		return 0;
	if (!pd_recheck_rounds(q, 1, pd_dma_recheck_counted))
		return 0;
	if (pd_culprit_listed(q))
		seq_buf_printf(&q->s,
			       "culprit: iommu: iommu.debug_pagealloc counts %ld mappings of the page that no IOMMU table walked holds (a domain attached to no device), %s: a DMA mapping that outlived its page\n",
			       q->dma_unseen, q->dma_unseen_fault);
	pd_print_unlisted_culprits(q);
	return 1;
}

/* source.verdict: the leaves' culprits, then the count's. */
static unsigned int pd_dma_verdict(struct pd_query *q)
{
	unsigned int culprits = pd_dma_leaf_culprits(q);

	if (q->interrupted)
		return culprits;
	return culprits + pd_dma_counted_culprit(q);
}

/* source.incomplete: why what the IOMMUs map is not known whole, or NULL. */
static const char *pd_dma_incomplete(struct pd_query *q)
{
	if (q->dma_opaque.nr)
		return "an IOMMU domain's table cannot be read here";
	if (q->dma_cut.nr)
		return "an IOMMU domain was too large to read whole";
	if (q->more_dma)
		return "more IOMMU mappings than a report keeps";
	/*
	 * More counted than found: domains attached to no device.  Fewer: a
	 * map or an unmap in flight, or a domain attached to several groups,
	 * whose leaves are listed once for each.
	 */
	if (q->dma_counted > (long)q->dma_found)
		return "iommu.debug_pagealloc counts mappings in domains no walk reaches";
	if (q->dma_counted >= 0 && q->dma_counted < (long)q->dma_found)
		return "the IOMMU tables hold more mappings than iommu.debug_pagealloc counts";
	return NULL;
}

static unsigned int pd_dma_summary(struct pd_query *q)
{
	return q->nr_dma + q->more_dma;
}

const struct pd_source pd_dma_source = {
	.name = "iommu",
	.mismatch = "an IOMMU maps the page for DMA while nobody holds it for that",
	.list = pd_dma_list,
	.scan = pd_dma_scan,
	.verdict = pd_dma_verdict,
	.incomplete = pd_dma_incomplete,
	.summary = pd_dma_summary,
};
