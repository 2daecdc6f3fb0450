// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: the reverse map.
 *
 * rmap_walk() tells, in O(mappers), every VMA where the folio should be
 * mapped, and page_vma_mapped_walk() whether each one's page tables do map
 * it, the way damon and page_idle ask for a page userspace named.  What it
 * finds is what the mapcount should count; where it finds no mapping is
 * where a lost one would have been (a candidate).  A pass never waits: it
 * try-locks the folio and the reverse map, as reclaim does, and tells the
 * verdict when it could not finish.
 */

#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "../internal.h"
#include "pd.h"

/* Walks that found the rmap locked, or more than room, before giving up. */
#define PD_RMAP_TRIES		8
/* Room for the hits of one walk, at most: a page mapped 256K times. */
#define PD_RMAP_HITS_MAX	SZ_256K

/* What one walk of the reverse map met, kept until its locks are let go. */
struct pd_hit {
	struct mm_struct *mm;		/* mmgrab()bed */
	unsigned long addr;
	const void *entry;
	const char *level;
	bool mapped;			/* else a candidate */
};

struct pd_rmap_walk {
	struct pd_query *q;
	struct pd_hit *hits;
	unsigned int nr, cap;
	unsigned int nr_candidates;	/* of the hits */
	unsigned long more_candidates;
	bool overflow;
	bool yielded;			/* to a waiter for its locks */
};

/* Whether @pte, which page_vma_mapped_walk() found, maps a counted page. */
static bool pd_pte_counted(struct pd_query *q, pte_t pte)
{
	softleaf_t entry;

	if (pte_present(pte))
		return pd_pfn_counted(q, pte_pfn(pte));
	entry = softleaf_from_pte(pte);
	return pd_softleaf_counted(entry) &&
	       pd_pfn_counted(q, softleaf_to_pfn(entry));
}

/* Keep @hit, taking mmgrab() on its mm: the walk's locks keep it only now. */
static void pd_rmap_keep(struct pd_rmap_walk *rw, struct pd_hit hit)
{
	if (!hit.mapped && rw->nr_candidates == PD_CANDIDATES_MAX) {
		rw->more_candidates++;
		return;
	}
	if (rw->nr == rw->cap) {
		rw->overflow = true;
		return;
	}
	mmgrab(hit.mm);
	rw->hits[rw->nr++] = hit;
	rw->nr_candidates += !hit.mapped;
}

/*
 * Where @vma would map the page asked about, or -EFAULT: @addr, from
 * rmap_walk(), is where it would map the folio's first page, which
 * vma_address() clamps to vm_start when a large folio begins below @vma.
 * A hugetlb folio is mapped whole or not at all; a KSM folio is small.
 */
static unsigned long pd_page_address(struct pd_query *q, struct folio *folio,
				     struct vm_area_struct *vma,
				     unsigned long addr)
{
	if (!folio_test_large(folio) || folio_test_hugetlb(folio))
		return addr + (folio_page_idx(folio, q->page) << PAGE_SHIFT);
	return vma_address(vma, page_pgoff(folio, q->page), 1);
}

/*
 * Whether someone waits for a lock that the walk holds: the folio's (a
 * fault on the page, truncation, writeback) or the reverse map's (an mmap
 * or munmap of the file, a fork, an exit).  A page mapped 10^4 times takes
 * as many steps to walk: rather than make them wait for every step, the
 * walk stops and is tried again after a pause, as when it found a lock
 * taken.  PG_waiters also stands for a wait for writeback to end, which
 * costs a retry and no more.
 */
static bool pd_rmap_wanted(struct folio *folio, struct vm_area_struct *vma)
{
	if (folio_test_waiters(folio))
		return true;
	/*
	 * The walk of an anon folio holds the root of @vma's anon_vma tree,
	 * the folio's: the folio's anon_vma led to @vma.
	 */
	if (folio_test_anon(folio))
		return vma->anon_vma &&
		       rwsem_is_contended(&vma->anon_vma->root->rwsem);
	return folio->mapping &&
	       rwsem_is_contended(&folio->mapping->i_mmap_rwsem);
}

/*
 * rmap_walk() callback: where @folio is mapped in @vma.  It runs under the
 * rmap lock, and under the page-table lock that page_vma_mapped_walk()
 * holds while it finds a mapping: nothing here may sleep but after it.
 */
static bool pd_rmap_one(struct folio *folio, struct vm_area_struct *vma,
			unsigned long addr, void *arg)
{
	struct pd_rmap_walk *rw = arg;
	struct pd_query *q = rw->q;
	unsigned long page_addr = pd_page_address(q, folio, vma, addr);
	DEFINE_FOLIO_VMA_WALK(pvmw, folio, vma, addr, 0);
	struct pd_hit hit = { .mm = vma->vm_mm, .addr = page_addr };
	bool mapped = false;

	while (page_vma_mapped_walk(&pvmw)) {
		pte_t pte;

		/* A huge mapping maps the whole folio, the page included. */
		if (folio_test_hugetlb(folio)) {
			hit.entry = pvmw.pte;
			hit.level = "hugetlb";
		} else if (!pvmw.pte) {
			hit.entry = pvmw.pmd;
			hit.level = "pmd";
		} else {
			pte = ptep_get(pvmw.pte);
			if (!pd_pte_counted(q, pte))
				continue;
			hit.entry = pvmw.pte;
			hit.level = "pte";
			hit.addr = pvmw.address;
		}
		hit.mapped = true;
		mapped = true;
		/* At folio level, each mapping of any of its pages counts. */
		if (q->folio_level) {
			pd_rmap_keep(rw, hit);
			hit.addr = page_addr;
		}
	}
	if (!q->folio_level || !mapped) {
		if (mapped || (page_addr >= vma->vm_start && page_addr < vma->vm_end))
			pd_rmap_keep(rw, hit);
	}
	/* Returning false ends the walk. */
	rw->yielded = pd_rmap_wanted(folio, vma);
	return !rw->yielded;
}

static void pd_rmap_drop_hits(struct pd_rmap_walk *rw)
{
	while (rw->nr)
		mmdrop(rw->hits[--rw->nr].mm);
	rw->nr_candidates = 0;
	rw->more_candidates = 0;
	rw->overflow = false;
	rw->yielded = false;
}

/*
 * One rmap_walk() of q->folio into @rw, without waiting for a lock nor
 * keeping one from a waiter.
 * Return: false if a lock was contended or wanted, or the hits did not fit.
 */
static bool pd_rmap_walk_once(struct pd_query *q, struct pd_rmap_walk *rw)
{
	struct rmap_walk_control rwc = {
		.rmap_one = pd_rmap_one,
		/*
		 * Nothing holds an anon folio's anon_vma for us (no mmap
		 * lock, and the folio may be unmapped meanwhile): take it
		 * as page_idle and damon do.
		 */
		.anon_lock = folio_lock_anon_vma_read,
		.try_lock = true,
		.arg = rw,
	};
	struct folio *folio = q->folio;

	/*
	 * Locked whatever its kind, so that its mapping stays: a file
	 * folio's, and a KSM folio's stable node.  Testing for KSM first
	 * and locking only then would race with ksmd, which makes an anon
	 * folio KSM under the folio's lock: the walk would then follow a
	 * stable node that the lock holder is changing (seen in pd_churn:
	 * a fault in rmap_walk_ksm() on a poisoned list).
	 */
	if (!folio_trylock(folio))
		return false;
	rmap_walk(folio, &rwc);
	folio_unlock(folio);
	return !rwc.contended && !rw->yielded && !rw->overflow;
}

/* Record what a complete walk found, as pass @pass. */
static void pd_rmap_record(struct pd_query *q, struct pd_rmap_walk *rw,
			   unsigned int pass)
{
	unsigned int i;

	q->nr_candidates = 0;
	q->more_candidates = rw->more_candidates;
	for (i = 0; i < rw->nr; i++) {
		struct pd_hit *hit = &rw->hits[i];
		struct pd_mm *pdm = pd_mm_get(q, hit->mm);

		if (!pdm)
			continue;
		if (!hit->mapped) {
			q->candidates[q->nr_candidates++] =
				(struct pd_candidate) { pdm, hit->addr };
			continue;
		}
		pd_map_see(q, pdm, hit->addr, hit->entry, hit->level,
			   PD_SEEN_RMAP(pass));
	}
}

/**
 * pd_rmap_pass - walk the page's reverse map once more
 * @q: the query
 *
 * Each mapping found is recorded with PD_SEEN_RMAP() of this pass, and the
 * places where the page should be mapped and is not replace the
 * candidates of the pass before.  A walk that finds a lock contended, or
 * more mappings than there is room for, is tried again; one that finishes
 * sets this pass's bit in q->rmap_finished, one that never does sets
 * q->rmap_incomplete.  Might sleep.
 */
void pd_rmap_pass(struct pd_query *q)
{
	unsigned int pass = q->rmap_passes++, tries;
	struct pd_rmap_walk rw = { .q = q };
	u64 start = local_clock();

	q->rmap_incomplete = NULL;
	if (!q->folio || !q->has_rmap || WARN_ON_ONCE(pass > PD_RECHECK_ROUNDS))
		return;
	/* Room for every mapping the mapcount admits, and more. */
	rw.cap = min(2 * folio_mapcount(q->folio) + PD_CANDIDATES_MAX + 16,
		     PD_RMAP_HITS_MAX);
	for (tries = 0; tries < PD_RMAP_TRIES; tries++) {
		if (fatal_signal_pending(current)) {
			q->interrupted = true;
			break;
		}
		if (!rw.hits)
			rw.hits = kvmalloc_array(rw.cap, sizeof(*rw.hits),
						 GFP_KERNEL);
		if (!rw.hits) {
			q->out_of_memory = true;
			break;
		}
		if (pd_rmap_walk_once(q, &rw)) {
			pd_rmap_record(q, &rw, pass);
			q->rmap_finished |= PD_SEEN_RMAP(pass);
			break;
		}
		if (!rw.overflow) {
			/* Contended or wanted: give the other side a moment. */
			pd_rmap_drop_hits(&rw);
			usleep_range(100, 200);
			continue;
		}
		pd_rmap_drop_hits(&rw);
		if (rw.cap == PD_RMAP_HITS_MAX) {
			q->rmap_incomplete = "the page has more mappings than a query keeps";
			break;
		}
		kvfree(rw.hits);
		rw.hits = NULL;
		rw.cap = min(4 * rw.cap, PD_RMAP_HITS_MAX);
	}
	if (tries == PD_RMAP_TRIES)
		q->rmap_incomplete =
			"its folio or its reverse map stayed locked, or wanted, by others";
	if (rw.hits)
		pd_rmap_drop_hits(&rw);
	kvfree(rw.hits);
	q->rmap_ns += local_clock() - start;
}

/* The process an mm belongs to, for an mm the scan did not walk. */
#ifdef CONFIG_MEMCG
static void pd_find_owner(struct pd_mm *pdm)
{
	struct task_struct *owner;

	rcu_read_lock();
	owner = rcu_dereference(pdm->mm->owner);
	if (owner) {
		pdm->tgid = task_tgid_nr(owner);
		pd_task_comm(pdm->comm, owner);
	}
	rcu_read_unlock();
}

/**
 * pd_find_owners - name a process for every mm that the scan did not walk
 * @q: the query
 *
 * With CONFIG_MEMCG each mm knows its owner; without, one pass over the
 * processes finds them all.
 */
void pd_find_owners(struct pd_query *q)
{
	struct pd_mm *pdm;

	list_for_each_entry(pdm, &q->mm_list, list)
		if (!pdm->tgid)
			pd_find_owner(pdm);
}
#else
void pd_find_owners(struct pd_query *q)
{
	struct task_struct *p;
	struct pd_mm *pdm;

	rcu_read_lock();
	for_each_process(p) {
		struct mm_struct *mm = READ_ONCE(p->mm);

		if (!mm)
			continue;
		hash_for_each_possible(q->mms, pdm, node, (unsigned long)mm) {
			if (pdm->mm == mm && !pdm->tgid) {
				pdm->tgid = task_tgid_nr(p);
				pd_task_comm(pdm->comm, p);
			}
		}
	}
	rcu_read_unlock();
}
#endif

static unsigned long pd_rmap_count(struct pd_query *q, unsigned int pass)
{
	unsigned long nr = 0;
	struct pd_map *map;

	list_for_each_entry(map, &q->map_list, list)
		nr += !!(map->seen & PD_SEEN_RMAP(pass));
	return nr;
}

/**
 * pd_list_rmap - list what the first pass of the reverse map found
 * @q: the query, after pd_find_owners()
 *
 * A quick query lists every mapping; any other lists those the scan of
 * page tables did not find.
 */
void pd_list_rmap(struct pd_query *q)
{
	unsigned long unlisted = 0;
	unsigned int listed = 0;
	struct pd_map *map;

	list_for_each_entry(map, &q->map_list, list) {
		if (!(map->seen & PD_SEEN_RMAP(0)) ||
		    (map->seen & PD_SEEN_SCAN))
			continue;
		if (listed == PD_LISTED_MAX ||
		    !pd_report_has_room(q, PD_LISTS_END)) {
			unlisted++;
			continue;
		}
		listed++;
		seq_buf_printf(&q->s, "rmap: pid %d (%s) %#lx %s ",
			       map->mm->tgid, map->mm->tgid ? map->mm->comm : "none",
			       map->addr, map->level);
		if (!q->quick)
			seq_buf_puts(&q->s, "(not in page tables) ");
		pd_print_mm_vma_name(q, map->mm->mm, map->addr);
		seq_buf_putc(&q->s, '\n');
	}
	if (unlisted)
		seq_buf_printf(&q->s, "rmap: %lu more not listed\n", unlisted);
	seq_buf_printf(&q->s, "rmap mappings: %lu", pd_rmap_count(q, 0));
	if (q->snapshot)
		seq_buf_puts(&q->s, ", not walked: the page is not pinned");
	else if (!q->has_rmap)
		seq_buf_puts(&q->s,
			     ", the reverse map does not track this page (no mapping: inserted with vm_insert_page() or not mappable)");
	else if (q->rmap_incomplete)
		seq_buf_printf(&q->s, ", incomplete: %s", q->rmap_incomplete);
	seq_buf_putc(&q->s, '\n');
}
