// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page Detective: what the DMA API has mapped of the page.
 *
 * With CONFIG_DMA_API_DEBUG, the DMA API records every mapping a driver
 * makes and has not undone, with the stack that made it
 * (debug_dma_describe_phys()).  That record covers what the IOMMUs' tables
 * cannot: dma-direct and swiotlb, where there is no table, and the driver
 * and the code behind each mapping.
 *
 * A streaming mapping (single, scatter-gather, phy) maps memory that its
 * driver owns and must keep until it unmaps it: one that maps a free page,
 * or a process's or a file's page that nobody holds for DMA, is the DMA
 * use-after-free, whichever path the DMA takes (pd_dma_unowned()).  A
 * coherent or noncoherent allocation is memory the DMA API allocated for
 * the mapping itself, and is only listed.  The finding is re-checked, as
 * the IOMMUs' are, before it is believed.
 */
#include <linux/dma-map-ops.h>
#include <linux/kallsyms.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "pd.h"

static bool pd_dma_api_same(const struct dma_debug_mapping *a,
			    const struct dma_debug_mapping *b)
{
	return !strcmp(a->device, b->device) && a->dev_addr == b->dev_addr &&
	       a->paddr == b->paddr && a->size == b->size;
}

/* Memory its driver gave to the DMA API, which the driver must keep. */
static bool pd_dma_api_streaming(const struct dma_debug_mapping *m)
{
	return strcmp(m->type, "coherent") && strcmp(m->type, "noncoherent");
}

/* dma_debug_describe_fn: keep what dma-debug recorded.  Under a spinlock. */
static void pd_dma_api_found(void *arg, const struct dma_debug_mapping *m)
{
	struct pd_query *q = arg;
	unsigned int i;

	for (i = 0; i < q->nr_dma_api; i++)
		if (pd_dma_api_same(&q->dma_api[i].m, m))
			return;
	if (q->nr_dma_api == PD_DMA_MAX) {
		q->more_dma_api++;
		return;
	}
	q->dma_api[q->nr_dma_api++].m = *m;
}

/* The range of the pages the query counts, for debug_dma_describe_phys(). */
static int pd_dma_api_describe(struct pd_query *q, dma_debug_describe_fn fn)
{
	return debug_dma_describe_phys(PFN_PHYS(q->first_pfn),
				       q->nr_pfns << PAGE_SHIFT, fn, q);
}

/*
 * "0000:00:03.0 (drv): single DMA_BIDIRECTIONAL dma 0xfffff000 pfn 0x178d
 * offset 0 size 4096"
 */
static void pd_print_dma_api_mapping(struct pd_query *q,
				     const struct dma_debug_mapping *m)
{
	seq_buf_printf(&q->s,
		       "%s (%s): %s %s dma %#llx pfn %#lx offset %#lx size %llu",
		       m->device, m->driver, m->type, m->direction,
		       (unsigned long long)m->dev_addr,
		       (unsigned long)PHYS_PFN(m->paddr),
		       (unsigned long)offset_in_page(m->paddr),
		       (unsigned long long)m->size);
}

/*
 * Where the mapping was made, innermost call first, by symbol only: without
 * kallsyms a frame would be a raw kernel address, which a report never
 * shows.
 */
static void pd_print_dma_api_stack(struct pd_query *q,
				   const struct dma_debug_mapping *m)
{
	unsigned int i;

	if (!IS_ENABLED(CONFIG_KALLSYMS) || !m->stack_len)
		return;
	seq_buf_puts(&q->s, ", mapped at");
	for (i = 0; i < m->stack_len; i++)
		seq_buf_printf(&q->s, "%s%pS", i ? " < " : " ",
			       (void *)m->stack[i]);
}

/* source.list: what the DMA API has mapped of the page. */
static void pd_dma_api_list(struct pd_query *q)
{
	unsigned long unlisted;
	unsigned int i;

	q->dma_api_err = pd_dma_api_describe(q, pd_dma_api_found);
	switch (q->dma_api_err) {
	case -EINTR:
		q->interrupted = true;
		return;
	case -ENODEV:
		/* What dma-debug held when it turned itself off may be stale. */
		q->nr_dma_api = 0;
		q->more_dma_api = 0;
		seq_buf_puts(&q->s,
			     "dma-api: not known: dma-debug is off (dma_debug=off, or it turned itself off)\n");
		return;
	case -EOPNOTSUPP:	/* no CONFIG_DMA_API_DEBUG: nothing to say */
		return;
	}
	unlisted = q->more_dma_api;
	for (i = 0; i < q->nr_dma_api; i++) {
		if (!pd_report_has_room(q, PD_LISTS_END)) {
			unlisted++;
			continue;
		}
		seq_buf_puts(&q->s, "dma-api: ");
		pd_print_dma_api_mapping(q, &q->dma_api[i].m);
		pd_print_dma_api_stack(q, &q->dma_api[i].m);
		seq_buf_putc(&q->s, '\n');
	}
	if (unlisted)
		seq_buf_printf(&q->s, "dma-api: %lu more not listed\n", unlisted);
}

/* dma_debug_describe_fn of a re-check: mark the suspects found again. */
static void pd_dma_api_found_again(void *arg,
				   const struct dma_debug_mapping *m)
{
	struct pd_query *q = arg;
	unsigned int i;

	for (i = 0; i < q->nr_dma_api; i++)
		if (q->dma_api[i].fault && pd_dma_api_same(&q->dma_api[i].m, m))
			q->dma_api[i].seen = true;
}

/* recheck of pd_recheck_rounds(): the suspects still mapped, still unowned. */
static unsigned int pd_dma_api_recheck(struct pd_query *q)
{
	unsigned int i, suspects = 0;
	const char *why;

	for (i = 0; i < q->nr_dma_api; i++)
		q->dma_api[i].seen = false;
	if (pd_dma_api_describe(q, pd_dma_api_found_again)) {
		/* Killed, or dma-debug turned off: nothing is believed. */
		q->interrupted = fatal_signal_pending(current);
		return 0;
	}
	why = pd_dma_unowned(q);
	for (i = 0; i < q->nr_dma_api; i++) {
		struct pd_dma_api *dma = &q->dma_api[i];

		if (dma->fault)
			dma->fault = dma->seen ? why : NULL;
		suspects += !!dma->fault;
	}
	return suspects;
}

/*
 * source.verdict: a streaming mapping of the page while nobody can hold it
 * for DMA (pd_dma_unowned()), found again in each re-check.
 */
static unsigned int pd_dma_api_verdict(struct pd_query *q)
{
	unsigned int i, suspects = 0, culprits = 0;
	const char *why;

	if (!q->nr_dma_api)
		return 0;
	why = pd_dma_unowned(q);
	if (!why)
		return 0;
	for (i = 0; i < q->nr_dma_api; i++) {
		if (pd_dma_api_streaming(&q->dma_api[i].m))
			q->dma_api[i].fault = why;
		suspects += !!q->dma_api[i].fault;
	}
	if (!pd_recheck_rounds(q, suspects, pd_dma_api_recheck))
		return 0;
	for (i = 0; i < q->nr_dma_api; i++) {
		if (!q->dma_api[i].fault)
			continue;
		culprits++;
		if (!pd_culprit_listed(q))
			continue;
		seq_buf_puts(&q->s, "culprit: dma-api: ");
		pd_print_dma_api_mapping(q, &q->dma_api[i].m);
		seq_buf_printf(&q->s,
			       ", %s: a DMA mapping that outlived its page",
			       q->dma_api[i].fault);
		pd_print_dma_api_stack(q, &q->dma_api[i].m);
		seq_buf_putc(&q->s, '\n');
	}
	pd_print_unlisted_culprits(q);
	return culprits;
}

/* source.incomplete: why what the DMA API maps is not known whole, or NULL. */
static const char *pd_dma_api_incomplete(struct pd_query *q)
{
	return q->more_dma_api ? "more DMA-API mappings than a report keeps" : NULL;
}

static unsigned int pd_dma_api_summary(struct pd_query *q)
{
	return q->nr_dma_api + q->more_dma_api;
}

const struct pd_source pd_dma_api_source = {
	.name = "dma_api",
	.mismatch = "the DMA API maps the page for a device while nobody holds it for that",
	.list = pd_dma_api_list,
	.verdict = pd_dma_api_verdict,
	.incomplete = pd_dma_api_incomplete,
	.summary = pd_dma_api_summary,
};
