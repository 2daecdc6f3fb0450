// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: the page itself.
 *
 * A page that a user names can be freed, split or reused while it is
 * described, so it is pinned first, the way GUP-fast and compaction pin
 * pages they do not own, and the pin is kept for the rest of the query:
 * what follows is then about this page.  A page that must not be held
 * (see pd_snapshot_reason()) is described under the pin, which is then let
 * go: the report says it is a snapshot.
 */

#include <linux/cgroup.h>
#include <linux/memcontrol.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmdebug.h>
#include <linux/page_owner.h>
#include <linux/pagemap.h>

#include "pd.h"

/* Attempts to pin a page whose folio keeps changing under us. */
#define PD_GET_FOLIO_TRIES	3

/* What a page that could not be pinned was: its snapshot's reason. */
static const char pd_free[] = "free";

/*
 * Take a reference to the folio @page belongs to: folio_try_get() fails on
 * a free page, and once it succeeds the page must still belong to that
 * folio, which a concurrent split, or a free and reuse, could have changed.
 */
static struct folio *pd_get_folio(struct page *page)
{
	int tries;

	for (tries = 0; tries < PD_GET_FOLIO_TRIES; tries++) {
		struct folio *folio = page_folio(page);

		if (!folio_try_get(folio))
			return NULL;
		if (likely(page_folio(page) == folio))
			return folio;
		folio_put(folio);
	}
	return ERR_PTR(-EAGAIN);
}

static unsigned long pd_end_of_memory(void)
{
	unsigned long end = 0;
	int nid;

	for_each_online_node(nid)
		end = max(end, node_end_pfn(nid));
	return end;
}

/*
 * Why pfn_to_online_page() found no page at @pfn.  A memory map makes it
 * offline or device memory first: offlining a node's last block shrinks
 * the node's span, which would make it look beyond the end.
 */
static const char *pd_no_page_reason(unsigned long pfn)
{
	if (pfn_valid(pfn))
		return "in offline or device memory";
	if (pfn >= pd_end_of_memory())
		return "beyond the end of memory";
	return "in a hole without a memory map";
}

/*
 * Why a pinned page must be let go at once, or NULL.  Memory offlining
 * treats a hwpoisoned page as isolated whatever its refcount, and lets its
 * driver decide about a PageOffline() one: a reference held for the whole
 * scan would not keep their memory map alive.  Other typed pages (slab,
 * page tables, ...) have no mapcount and no reverse map to re-read.
 */
static const char *pd_snapshot_reason(struct folio *folio, struct page *page)
{
	if (PageHWPoison(page) || folio_test_hwpoison(folio))
		return "hwpoisoned";
	if (PageOffline(page))
		return "offline (ballooned or being unplugged)";
	/*
	 * The type is the folio's: the other pages of a large slab have none
	 * of their own, and where a folio keeps its mapping the slab keeps
	 * its own fields, nothing to walk a reverse map by.
	 */
	if (page_has_type(&folio->page) && !folio_test_hugetlb(folio))
		return "a typed page, which no process maps";
	return NULL;
}

/* What an unpinned @page is now, as pd_snapshot_reason() tells. */
static const char *pd_snapshot_of(struct page *page)
{
	if (!folio_ref_count(page_folio(page)))
		return pd_free;
	return pd_snapshot_reason(page_folio(page), page);
}

/* Whether the reverse map tracks where @folio is mapped. */
static bool pd_folio_has_rmap(struct folio *folio)
{
	unsigned long mapping = (unsigned long)READ_ONCE(folio->mapping);

	if (!mapping)
		return false;	/* vm_insert_page(), as for the vDSO */
	return (mapping & PAGE_MAPPING_FLAGS) != PAGE_MAPPING_MOVABLE;
}

#ifdef CONFIG_MEMCG
/*
 * The memcg the folio is charged to, as /proc/kpagecgroup has it: the
 * closest online ancestor of the one recorded in the folio.
 */
static void pd_find_memcg(struct pd_query *q, struct folio *folio)
{
	struct mem_cgroup *memcg;
	int len;

	strscpy(q->memcg, "none");
	if (mem_cgroup_disabled()) {
		strscpy(q->memcg, "unavailable");
		return;
	}
	if (!folio)
		return;

	rcu_read_lock();
	memcg = folio_memcg_check(folio);
	while (memcg && !mem_cgroup_online(memcg))
		memcg = parent_mem_cgroup(memcg);
	if (memcg && !css_tryget(&memcg->css))
		memcg = NULL;
	rcu_read_unlock();
	if (!memcg)
		return;

	len = cgroup_path(memcg->css.cgroup, q->memcg, sizeof(q->memcg));
	if (len < 0 || len >= sizeof(q->memcg))
		strscpy(q->memcg, "unavailable");
	css_put(&memcg->css);
}
#else
static void pd_find_memcg(struct pd_query *q, struct folio *folio)
{
	strscpy(q->memcg, "unavailable");
}
#endif

/* Describe the page at q->pfn, pinned as @folio or free (NULL). */
static void pd_print_page(struct pd_query *q, struct folio *folio)
{
	seq_buf_printf(&q->s, "pfn %#lx paddr %#llx: node %d, zone %s\n",
		       q->pfn, (unsigned long long)PFN_PHYS(q->pfn),
		       page_to_nid(q->page), page_zone(q->page)->name);
	dump_page_seq_buf(&q->s, q->page, folio ? 1 : 0);
	if (!folio) {
		seq_buf_puts(&q->s,
			     "folio: none, the refcount is zero: free, or frozen while being split, migrated or freed\n");
		return;
	}
	seq_buf_printf(&q->s, "folio: order %u, %zu bytes, page %lu of it%s\n",
		       folio_order(folio), folio_size(folio),
		       folio_page_idx(folio, q->page),
		       is_zero_pfn(q->pfn) ? ", the shared zero page" : "");
}

/**
 * pd_describe_page - describe the page at q->pfn and pin it for the query
 * @q: the query, with q->pfn set
 *
 * pfn_to_online_page() and the description run under get_online_mems(),
 * so that the memory map cannot go away while it is read; after that, the
 * pin on the folio is what keeps it, as memory offlining cannot migrate a
 * pinned folio.  Nothing may wait for get_online_mems() while the pin is
 * held: an offline holding the hotplug lock waits for the pin to go.  A
 * page that must not stay pinned is described, then let go (q->snapshot
 * says why).  Might sleep.
 *
 * Return: 0, -EINVAL if q->pfn is not online memory, or -EAGAIN if its
 * folio kept changing.
 */
int pd_describe_page(struct pd_query *q)
{
	struct folio *folio;
	int err = 0;

	get_online_mems();
	q->page = pfn_to_online_page(q->pfn);
	if (!q->page) {
		seq_buf_printf(&q->s, "pfn %#lx paddr %#llx: not online memory, %s\n",
			       q->pfn, (unsigned long long)PFN_PHYS(q->pfn),
			       pd_no_page_reason(q->pfn));
		err = -EINVAL;
		goto out;
	}
	folio = pd_get_folio(q->page);
	if (IS_ERR(folio)) {
		seq_buf_printf(&q->s, "pfn %#lx kept changing folio, try again\n",
			       q->pfn);
		err = PTR_ERR(folio);
		goto out;
	}

	pd_print_page(q, folio);
	if (!folio) {
		/* Nothing pins a free page: this is all a snapshot. */
		q->snapshot = pd_free;
		q->refcount = folio_ref_count(page_folio(q->page));
		q->mapcount = atomic_read(&q->page->_mapcount) + 1;
		if (page_mapcount_is_type(q->mapcount))
			q->mapcount = 0;
	} else {
		q->refcount = folio_ref_count(folio) - 1;
		q->mapcount = folio_precise_page_mapcount(folio, q->page);
		q->snapshot = pd_snapshot_reason(folio, q->page);
		q->has_rmap = !q->snapshot && pd_folio_has_rmap(folio);
		if (q->snapshot) {
			seq_buf_printf(&q->s,
				       "folio: not kept pinned: %s; the above is a snapshot\n",
				       q->snapshot);
			folio_put(folio);
			folio = NULL;
		}
	}
	q->folio = folio;
	pd_find_memcg(q, folio);
	seq_buf_printf(&q->s, "memcg: %s\n", q->memcg);
	dump_page_owner_seq_buf(&q->s, q->page);
out:
	put_online_mems();
	return err;
}

/**
 * pd_page_changed - whether a page described as a snapshot changed since
 * @q: the query, after pd_describe_page()
 *
 * A free or typed page has no mapcount to re-read, but it can be
 * allocated, freed or retyped during the query: then a mapping found of
 * it may be its new owner's, and proves nothing.  Might sleep.
 *
 * Return: true if the page is not what its snapshot says any more; false
 * for a pinned page, whose mapcount tells.
 */
bool pd_page_changed(struct pd_query *q)
{
	struct page *page;
	bool changed;

	if (q->folio || !q->snapshot)
		return false;
	get_online_mems();
	page = pfn_to_online_page(q->pfn);
	changed = !page || pd_snapshot_of(page) != q->snapshot ||
		  folio_ref_count(page_folio(page)) != q->refcount;
	put_online_mems();
	return changed;
}

/**
 * pd_page_mapcount - the page's precise mapcount now
 * @q: the query, after pd_describe_page()
 *
 * Return: the mapcount of the pinned page now, or of a page described as a
 * snapshot the mapcount it had then.
 */
int pd_page_mapcount(struct pd_query *q)
{
	return q->folio ? folio_precise_page_mapcount(q->folio, q->page) :
			  q->mapcount;
}

/**
 * pd_note_refcount - say which references the page's refcount is made of
 * @q: the query, after pd_describe_page()
 *
 * Mappings and the page or swap cache account for most references of a
 * folio; the rest are GUP pins, references in flight (LRU batches,
 * migration, readers) or a leak, which nothing here can tell apart.  Fewer
 * references than the mappings and caches hold is a reference dropped too
 * often: a use-after-free in the making.
 */
void pd_note_refcount(struct pd_query *q)
{
	struct folio *folio = q->folio;
	int mapped, cached, private, other;

	if (!folio || is_zero_pfn(q->pfn) || folio_test_hugetlb(folio))
		return;
	mapped = folio_mapcount(folio);
	cached = folio_test_swapcache(folio) ||
		 (folio->mapping && !folio_test_anon(folio)) ?
		 folio_nr_pages(folio) : 0;
	private = folio_test_private(folio);
	other = folio_ref_count(folio) - 1 - mapped - cached - private;
	if (other >= 0) {
		seq_buf_printf(&q->s,
			       "refcount: %d = %d mapped + %d cache + %d private + %d other (GUP pins, references in flight, or a leak)%s\n",
			       folio_ref_count(folio) - 1, mapped, cached,
			       private, other,
			       folio_maybe_dma_pinned(folio) ? ", maybe DMA-pinned" : "");
		return;
	}
	seq_buf_printf(&q->s,
		       "note: refcount %d is %d below the %d mapped + %d cache + %d private references: a reference was dropped too often\n",
		       folio_ref_count(folio) - 1, -other, mapped, cached,
		       private);
}
