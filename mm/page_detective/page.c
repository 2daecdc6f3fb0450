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
static const char pd_typed[] = "a typed page, which no process maps";

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
 * Whether @folio has a type of its own (slab, page table, ...), which its
 * other pages share: a large slab's have none of their own.  A free block's
 * first page is typed too (PageBuddy), and is free, not frozen.
 */
static bool pd_folio_typed(struct folio *folio)
{
	return page_has_type(&folio->page) && !folio_test_hugetlb(folio) &&
	       !PageBuddy(&folio->page);
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
	 * Where a folio keeps its mapping a slab keeps its own fields,
	 * nothing to walk a reverse map by.
	 */
	if (pd_folio_typed(folio))
		return pd_typed;
	return NULL;
}

/*
 * Why a page whose refcount is zero cannot be pinned: it is free, or
 * frozen; a typed page is frozen all its life (slabs are, from 7.0).
 */
static const char *pd_unpinned_reason(struct page *page)
{
	return pd_folio_typed(page_folio(page)) ? pd_typed : pd_free;
}

/**
 * pd_page_free - whether a page is free now
 * @page: an online page
 *
 * A refcount of zero is not enough: a typed page (a slab's, from 7.0) is
 * frozen at zero all its life while its owner uses it, and drivers map
 * kmalloc() buffers for DMA.  A free hugetlb page, in its pool, is free.
 *
 * Return: true if @page is free, unowned: in the allocator or a pool.
 */
bool pd_page_free(struct page *page)
{
	return !folio_ref_count(page_folio(page)) &&
	       pd_unpinned_reason(page) == pd_free;
}

/* What an unpinned @page is now, as pd_snapshot_reason() tells. */
static const char *pd_snapshot_of(struct page *page)
{
	if (!folio_ref_count(page_folio(page)))
		return pd_unpinned_reason(page);
	return pd_snapshot_reason(page_folio(page), page);
}

/* Whether the reverse map tracks where @folio is mapped. */
static bool pd_folio_has_rmap(struct folio *folio)
{
	if (!READ_ONCE(folio->mapping))
		return false;	/* vm_insert_page(), as for the vDSO */
	return !page_has_movable_ops(&folio->page);
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

/*
 * What the page is, in a word, for a batch's line per page: @folio pinned,
 * or NULL, when its refcount was zero.
 */
static const char *pd_page_kind(struct pd_query *q, struct folio *folio)
{
	struct folio *f = folio ?: page_folio(q->page);

	if (is_zero_pfn(q->pfn))
		return "zero";
	if (!folio && !pd_folio_typed(f))
		return "free";
	if (folio_test_hugetlb(f))
		return "hugetlb";
	if (folio_test_slab(f))
		return "slab";
	if (PageTable(&f->page))
		return "pagetable";
	if (pd_folio_typed(f))
		return "typed";
	if (folio_test_ksm(f))
		return "ksm";
	if (folio_test_anon(f))
		return "anon";
	if (folio_test_swapcache(f))
		return "swapcache";
	if (READ_ONCE(f->mapping))
		return folio_test_swapbacked(f) ? "shmem" : "file";
	return "kernel";
}

/*
 * Describe the page at q->pfn, pinned as @folio, or not pinned (NULL): then
 * q->snapshot says why.
 */
static void pd_print_page(struct pd_query *q, struct folio *folio)
{
	seq_buf_printf(&q->s, "pfn %#lx paddr %#llx: node %d, zone %s\n",
		       q->pfn, (unsigned long long)PFN_PHYS(q->pfn),
		       page_to_nid(q->page), page_zone(q->page)->name);
	dump_page_seq_buf(&q->s, q->page, folio ? 1 : 0);
	if (!folio && q->snapshot == pd_typed) {
		seq_buf_printf(&q->s,
			       "folio: not kept pinned: %s, frozen (refcount zero); the above is a snapshot\n",
			       pd_typed);
		return;
	}
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

/* The page's own _mapcount, which a typed page uses for its type. */
static int pd_own_mapcount(struct page *page)
{
	int mapcount = atomic_read(&page->_mapcount) + 1;

	return page_mapcount_is_type(mapcount) ? 0 : mapcount;
}

/*
 * Judge a large folio's mapcount when its pages have none of their own
 * (CONFIG_NO_PAGE_MAPCOUNT): then the mappings of any page of the folio
 * count.  A snapshot keeps the page level: nothing is compared with it.
 */
static void pd_choose_level(struct pd_query *q, struct folio *folio)
{
	if (!IS_ENABLED(CONFIG_NO_PAGE_MAPCOUNT) || q->snapshot ||
	    !folio_test_large(folio))
		return;
	q->folio_level = true;
	q->first_pfn = folio_pfn(folio);
	q->nr_pfns = folio_nr_pages(folio);
}

/*
 * The mapcount the query judges of the pinned @folio: the page's precise
 * one; at folio level, the folio's, which counts each PTE and each PMD or
 * PUD mapping of any of its pages once.  Without per-page mapcounts a
 * small folio's is its page's own.
 */
static int pd_pinned_mapcount(struct pd_query *q, struct folio *folio)
{
	if (q->folio_level)
		return folio_mapcount(folio);
	if (IS_ENABLED(CONFIG_NO_PAGE_MAPCOUNT))
		return pd_own_mapcount(q->page);
	return folio_precise_page_mapcount(folio, q->page);
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

	q->first_pfn = q->pfn;
	q->nr_pfns = 1;
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

	/* Nothing pins a free or frozen page: this is all a snapshot. */
	if (!folio)
		q->snapshot = pd_unpinned_reason(q->page);
	q->summary.kind = pd_page_kind(q, folio);
	pd_print_page(q, folio);
	if (!folio) {
		q->refcount = folio_ref_count(page_folio(q->page));
		q->mapcount = pd_own_mapcount(q->page);
	} else {
		q->refcount = folio_ref_count(folio) - 1;
		q->snapshot = pd_snapshot_reason(folio, q->page);
		q->has_rmap = !q->snapshot && pd_folio_has_rmap(folio);
		pd_choose_level(q, folio);
		q->mapcount = pd_pinned_mapcount(q, folio);
		if (q->snapshot) {
			seq_buf_printf(&q->s,
				       "folio: not kept pinned: %s; the above is a snapshot\n",
				       q->snapshot);
			folio_put(folio);
			folio = NULL;
		}
	}
	q->folio = folio;
	if (q->folio_level)
		seq_buf_printf(&q->s,
			       "mapcount: per folio (CONFIG_NO_PAGE_MAPCOUNT): the mappings of its %lu pages, %d in all, are what is judged\n",
			       q->nr_pfns, q->mapcount);
	pd_find_memcg(q, folio);
	seq_buf_puts(&q->s, "memcg: ");
	pd_print_untrusted(&q->s, q->memcg, " ");
	seq_buf_putc(&q->s, '\n');
	if (!q->brief)
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
 * pd_page_mapcount - the mapcount the query judges, now
 * @q: the query, after pd_describe_page()
 *
 * Return: the mapcount of the pinned page (or at folio level, of its folio)
 * now, or of a page described as a snapshot the mapcount it had then.
 */
int pd_page_mapcount(struct pd_query *q)
{
	return q->folio ? pd_pinned_mapcount(q, q->folio) : q->mapcount;
}

/*
 * The pins of @r's folio by pin_user_pages() (O_DIRECT, io_uring's fixed
 * buffers, RDMA, VFIO, iommufd), and the references they hold.  A large
 * folio counts its pins apart, one reference each; a small one only adds
 * GUP_PIN_COUNTING_BIAS references per pin, so that its pins are
 * estimated from its refcount, as folio_maybe_dma_pinned() does: 1024
 * references of any kind look like a pin.
 */
static void pd_count_pins(struct folio *folio, struct pd_refs *r)
{
	r->exact_pins = folio_has_pincount(folio);
	if (r->exact_pins) {
		r->pins = atomic_read(&folio->_pincount);
		r->pinned = r->pins;
	} else {
		r->pins = r->refcount / GUP_PIN_COUNTING_BIAS;
		r->pinned = r->pins * GUP_PIN_COUNTING_BIAS;
	}
}

/**
 * pd_count_refs - say which references a pinned folio's refcount is made of
 * @folio: the folio, with the query's own reference on it
 * @r: the counts, filled in
 *
 * Mappings, the page or swap cache, private data and pins by
 * pin_user_pages() account for most references of a folio; r->other is
 * the rest: references in flight (LRU batches, migration, readers) or a
 * leak, which nothing here can tell apart, or, below zero, references
 * dropped too often.  The counts are read one after the other, with no
 * lock that keeps them together: a mapping made or a reference taken
 * between two reads skews the sum, so that it is an estimate.
 */
void pd_count_refs(struct folio *folio, struct pd_refs *r)
{
	r->refcount = folio_ref_count(folio) - 1;
	r->mapped = folio_mapcount(folio);
	r->cached = folio_test_swapcache(folio) ||
		    (folio->mapping && !folio_test_anon(folio)) ?
		    folio_nr_pages(folio) : 0;
	r->private = folio_test_private(folio);
	pd_count_pins(folio, r);
	r->other = r->refcount - r->mapped - r->cached - r->private - r->pinned;
}

/* The "pins:" line: how many, and how sure. */
static void pd_print_pins(struct pd_query *q, const struct pd_refs *r)
{
	if (!r->pins) {
		seq_buf_puts(&q->s, "pins: none\n");
		return;
	}
	seq_buf_printf(&q->s,
		       "pins: %d by pin_user_pages() (O_DIRECT, io_uring, RDMA, VFIO, iommufd: DMA may write the page)%s\n",
		       r->pins, r->exact_pins ? "" :
		       ", estimated: a small folio counts a pin as 1024 references");
}

/**
 * pd_note_refcount - say which references the page's refcount is made of
 * @q: the query, after pd_describe_page()
 *
 * See pd_count_refs().  Fewer references than the mappings, caches and
 * pins hold is a reference dropped too often: a use-after-free in the
 * making.  An estimate, which says so; the verdict does not use it.
 */
void pd_note_refcount(struct pd_query *q)
{
	struct folio *folio = q->folio;
	struct pd_refs r;

	if (!folio || is_zero_pfn(q->pfn) || folio_test_hugetlb(folio))
		return;
	pd_count_refs(folio, &r);
	if (r.other >= 0)
		seq_buf_printf(&q->s,
			       "refcount: %d = %d mapped + %d cache + %d private + %d pinned + %d other (references in flight, or a leak)\n",
			       r.refcount, r.mapped, r.cached, r.private,
			       r.pinned, r.other);
	else
		seq_buf_printf(&q->s,
			       "note: refcount %d is %d below the %d mapped + %d cache + %d private + %d pinned references: a reference was dropped too often (an estimate: the counts are read apart)\n",
			       r.refcount, -r.other, r.mapped, r.cached,
			       r.private, r.pinned);
	pd_print_pins(q, &r);
}
