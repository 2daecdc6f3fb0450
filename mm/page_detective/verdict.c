// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: the verdict.
 *
 * Three sources say how often the page is mapped: its mapcount, the
 * reverse map (what should map it, and does), and the page tables of every
 * process (what does map it).  On a healthy, quiet page they agree; the
 * verdict says "ok" then, "mismatch" when they disagree in a way that only
 * corruption explains, naming the culprit, and "partial", with why, when
 * the answer is not known.
 *
 * A query races with the system it describes: a fork between the walk of
 * the reverse map and the scan, a mapping moved across the scan by mremap()
 * or a process exiting meanwhile make the sources disagree on a healthy
 * page.  So a disagreement is never believed at once.  It is re-checked,
 * PD_RECHECK_ROUNDS times, each after a pause: the reverse map is walked
 * again and each mapping it does not confirm is read again under its
 * page-table lock.
 * Only a disagreement that survives every round, with the mapcount
 * unchanged, is a mismatch; one that went away was the page changing.
 */

#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/rmap.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/swap.h>

#include "pd.h"

/* A large folio's count of its mappings in one mm (MM_ID), and the scan's. */
struct pd_mm_id {
	unsigned int id;
	int mapcount;
	unsigned long found;		/* mappings found in that mm */
	struct pd_mm *pdm;		/* that mm, if the query met it */
};

/* What the sources say in one round of the verdict. */
struct pd_round {
	unsigned int round;		/* 0: the first look, then re-checks */
	int mapcount;
	bool mapcount_changed;		/* during this round */
	unsigned long mappings;		/* page-table entries that map it */
	unsigned long suspects;		/* mapped, unknown to the rmap */
	unsigned long reread, gone;
	bool reread_incomplete;		/* more suspects than re-read */
	bool rmap_unfinished;		/* this round's walk of the rmap */
	/* The folio's per-mm mapcounts, compared where pd_weigh_mm_ids() can. */
	struct pd_mm_id mm_ids[2];
	unsigned int nr_mm_ids;
	bool mm_ids_differ;
};

/*
 * Whether @map maps the page as round @r sees it: in the first look, if
 * the scan or the first walk of the reverse map found it; in a re-check, if
 * that round's walk found it or a re-read found it still mapped.
 */
static bool pd_map_present(const struct pd_map *map, unsigned int r)
{
	if (map->seen & PD_SEEN_RMAP(r))
		return true;
	if (!r)
		return map->seen & PD_SEEN_SCAN;
	return map->seen & PD_SEEN_STILL(r);
}

/*
 * Whether the walk of the reverse map in round @r went through every
 * mapping: one that gave up on a lock (reclaim, migration or a split holds
 * the folio's) knows nothing of the mappings it did not reach.
 */
static bool pd_rmap_finished(const struct pd_query *q, unsigned int r)
{
	return q->rmap_finished & PD_SEEN_RMAP(r);
}

/*
 * Whether the reverse map, tracking the page, does not know @map: only a
 * walk of it that finished can say so.
 */
static bool pd_map_suspect(const struct pd_query *q, const struct pd_map *map,
			   unsigned int r)
{
	return q->has_rmap && pd_rmap_finished(q, r) &&
	       pd_map_present(map, r) && !(map->seen & PD_SEEN_RMAP(r));
}

/* A mapping that every re-check found mapped and unknown to the rmap. */
static bool pd_map_stray(const struct pd_query *q, const struct pd_map *map)
{
	unsigned int r;

	for (r = 1; r <= PD_RECHECK_ROUNDS; r++)
		if (!pd_map_suspect(q, map, r))
			return false;
	return true;
}

/**
 * pd_reread - read the entry at @addr in @mm again, under the page-table lock
 * @q: the query
 * @mm: the mm, mmgrab()bed
 * @addr: a user address
 * @leaf: what the entry maps, filled in; all zero if @mm has no address
 *	space any more
 *
 * Might sleep.
 *
 * Return: whether it maps the page; -EINTR on a fatal signal.
 */
int pd_reread(struct pd_query *q, struct mm_struct *mm, unsigned long addr,
	      struct pd_leaf *leaf)
{
	int err;

	memset(leaf, 0, sizeof(*leaf));
	if (!mmget_not_zero(mm))
		return 0;
	err = mmap_read_lock_killable(mm);
	if (!err) {
		err = pd_read_entry(mm, addr, leaf);
		mmap_read_unlock(mm);
	}
	mmput(mm);
	if (err)
		return err;
	return leaf->present && pd_pfn_counted(q, leaf->pfn);
}

/*
 * Re-read, for round @r, every mapping the scan found that this round's
 * walk of the reverse map did not confirm.
 */
static int pd_reread_unconfirmed(struct pd_query *q, struct pd_round *rd)
{
	struct pd_leaf leaf;
	struct pd_map *map;
	int still;

	list_for_each_entry(map, &q->map_list, list) {
		if (!(map->seen & PD_SEEN_SCAN) ||
		    (map->seen & PD_SEEN_RMAP(rd->round)))
			continue;
		if (rd->reread == PD_REREAD_MAX) {
			rd->reread_incomplete = true;
			break;
		}
		rd->reread++;
		still = pd_reread(q, map->mm->mm, map->addr, &leaf);
		if (still < 0)
			return still;
		map->seen |= still ? PD_SEEN_STILL(rd->round) :
				     PD_SEEN_GONE(rd->round);
		rd->gone += !still;
	}
	return 0;
}

/*
 * Whether a per-mm mapcount counts more mappings than its mm has: all it
 * can prove.  It is a lower bound, not a count: an mm that maps the folio
 * while both slots are taken is counted in neither, and when a slot frees,
 * its next mapping takes it with only the pages it maps from then on (see
 * folio_add_return_large_mapcount() and, for the "valid corner cases" that
 * follow, folio_sub_return_large_mapcount()).  So it may count fewer.
 */
static bool pd_mm_id_over(const struct pd_mm_id *m)
{
	return m->found < m->mapcount;
}

#ifdef CONFIG_MM_ID
/* The mappings present in round @rd in the mm whose id is @id. */
static unsigned long pd_mm_id_found(struct pd_query *q, unsigned int id,
				    struct pd_mm **pdm)
{
	unsigned long found = 0;
	struct pd_map *map;

	*pdm = NULL;
	list_for_each_entry(map, &q->map_list, list) {
		if (!(map->seen & PD_SEEN_PRESENT) || map->mm->mm->mm_id != id)
			continue;
		*pdm = map->mm;
		found++;
	}
	return found;
}

/*
 * A large folio also counts its mappings per mm, for up to two mms
 * (folio->_mm_id[], which the rmap code keeps under the folio's
 * large-mapcount lock, taken here for a consistent copy): at folio level,
 * as many mappings must be found in each of them.  Compared only while the
 * folio's mapcount is the one round @rd judges, steady, as the mappings
 * found are; a hugetlb folio has no per-mm counts.
 */
static void pd_weigh_mm_ids(struct pd_query *q, struct pd_round *rd)
{
	struct folio *folio = q->folio;
	struct pd_mm_id ids[2];
	unsigned int i;
	int mapcount;

	rd->nr_mm_ids = 0;
	rd->mm_ids_differ = false;
	if (!q->folio_level || !folio || folio_test_hugetlb(folio) ||
	    rd->mapcount_changed)
		return;
	folio_lock_large_mapcount(folio);
	mapcount = folio_large_mapcount(folio);
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		ids[i].id = folio_mm_id(folio, i);
		ids[i].mapcount = folio->_mm_id_mapcount[i] + 1;
	}
	folio_unlock_large_mapcount(folio);
	if (mapcount != rd->mapcount)
		return;
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		struct pd_mm_id *m = &rd->mm_ids[rd->nr_mm_ids];

		if (ids[i].id == MM_ID_DUMMY)
			continue;
		*m = ids[i];
		m->found = pd_mm_id_found(q, m->id, &m->pdm);
		rd->mm_ids_differ |= pd_mm_id_over(m);
		rd->nr_mm_ids++;
	}
}
#else
static void pd_weigh_mm_ids(struct pd_query *q, struct pd_round *rd)
{
}
#endif

/* Count what round @rd sees: mappings, and suspects of corruption. */
static void pd_weigh(struct pd_query *q, struct pd_round *rd)
{
	struct pd_map *map;

	rd->suspects = 0;
	list_for_each_entry(map, &q->map_list, list) {
		map->seen &= ~PD_SEEN_PRESENT;
		if (pd_map_present(map, rd->round))
			map->seen |= PD_SEEN_PRESENT;
		rd->suspects += pd_map_suspect(q, map, rd->round);
	}
	rd->mappings = pd_count_entries(q, PD_SEEN_PRESENT);
	rd->rmap_unfinished = q->has_rmap && !pd_rmap_finished(q, rd->round);
	pd_weigh_mm_ids(q, rd);
}

/*
 * Whether the sources agree in round @rd; a walk of the reverse map that
 * did not finish agrees with nothing, and is tried again.
 */
static bool pd_agree(const struct pd_round *rd)
{
	return !rd->mapcount_changed && !rd->suspects && !rd->rmap_unfinished &&
	       rd->mappings == rd->mapcount && !rd->mm_ids_differ;
}

/*
 * One round of re-check: the reverse map again, the rest re-read.  After a
 * pause: the kernel goes through states where the sources disagree, and
 * holds some of them while it waits for a lock that the walk of the
 * reverse map took (ksmd maps a KSM page before it adds the mapping to
 * the page's reverse map, under the page's lock): let it finish.
 */
static int pd_recheck(struct pd_query *q, struct pd_round *rd)
{
	int before, err;

	schedule_timeout_killable(msecs_to_jiffies(PD_RECHECK_PAUSE_MS));
	if (fatal_signal_pending(current))
		return -EINTR;
	before = pd_page_mapcount(q);

	pd_rmap_pass(q);
	err = pd_reread_unconfirmed(q, rd);
	if (err)
		return err;
	rd->mapcount = pd_page_mapcount(q);
	rd->mapcount_changed = rd->mapcount != before || pd_page_changed(q);
	pd_weigh(q, rd);
	return 0;
}

/* ---- Culprits ------------------------------------------------------------ */

/**
 * pd_culprit_listed - whether the report lists one more culprit
 * @q: the query
 *
 * Culprits are capped as mappings are, so that the summary still ends the
 * report on a page with hundreds of them; each one not listed is counted,
 * for pd_print_unlisted_culprits().
 *
 * Return: true if its culprit: line is to be printed.
 */
bool pd_culprit_listed(struct pd_query *q)
{
	if (q->culprits_listed < PD_LISTED_MAX &&
	    pd_report_has_room(q, PD_VERDICT_END)) {
		q->culprits_listed++;
		return true;
	}
	q->culprits_unlisted++;
	return false;
}

/**
 * pd_print_unlisted_culprits - say how many culprits a list left out
 * @q: the query, after a list of culprits
 */
void pd_print_unlisted_culprits(struct pd_query *q)
{
	if (q->culprits_unlisted)
		seq_buf_printf(&q->s, "culprit: %lu more, not listed\n",
			       q->culprits_unlisted);
	q->culprits_unlisted = 0;
}

/* The start of a culprit: line, if the report lists it: see above. */
/* "@prefix pid N (comm) ADDR LEVEL ": the start of a line about a place. */
static void pd_print_place(struct pd_query *q, const char *prefix,
			   struct pd_mm *pdm, unsigned long addr,
			   const char *level)
{
	seq_buf_printf(&q->s, "%spid %d (%s) %#lx %s ", prefix, pdm->tgid,
		       pdm->tgid ? pdm->comm : "none", addr, level);
}

static bool pd_print_culprit_start(struct pd_query *q, struct pd_mm *pdm,
				   unsigned long addr, const char *level)
{
	if (!pd_culprit_listed(q))
		return false;
	pd_print_place(q, "culprit: ", pdm, addr, level);
	return true;
}

/* The mappings that the re-checks confirmed unknown to the reverse map. */
static unsigned int pd_name_strays(struct pd_query *q)
{
	unsigned int culprits = 0;
	struct pd_map *map;

	list_for_each_entry(map, &q->map_list, list) {
		if (!pd_map_stray(q, map))
			continue;
		culprits++;
		if (!pd_print_culprit_start(q, map->mm, map->addr, map->level))
			continue;
		seq_buf_puts(&q->s, "(unknown to rmap) ");
		if (map->seen & PD_SEEN_OUTSIDE_VMA)
			seq_buf_puts(&q->s, "(outside every VMA) ");
		else
			pd_print_mm_vma_name(q, map->mm->mm, map->addr);
		seq_buf_putc(&q->s, '\n');
	}
	pd_print_unlisted_culprits(q);
	return culprits;
}

/* What the entry at a candidate holds instead of the page. */
static void pd_print_held(struct seq_buf *s, const struct pd_leaf *leaf)
{
	if (leaf->present)
		seq_buf_printf(s, "pfn %#lx", leaf->pfn);
	else if (leaf->level && softleaf_has_pfn(leaf->entry))
		seq_buf_printf(s, "an entry for pfn %#lx", softleaf_to_pfn(leaf->entry));
	else if (leaf->level && softleaf_is_marker(leaf->entry))
		seq_buf_puts(s, "a marker");
	else if (leaf->level)
		seq_buf_puts(s, "a swap entry");
	else
		seq_buf_puts(s, leaf->table ? "none" : "no page table");
}

/*
 * Whether the per-mm mapcounts of round @rd say that @pdm maps the folio
 * more often than was found there: then a place in @pdm where the reverse
 * map expects the folio and finds it not is where a mapping was lost.
 */
static bool pd_mm_lost_mapping(const struct pd_round *rd,
			       const struct pd_mm *pdm)
{
	unsigned int i;

	for (i = 0; i < rd->nr_mm_ids; i++)
		if (rd->mm_ids[i].pdm == pdm && pd_mm_id_over(&rd->mm_ids[i]))
			return true;
	return false;
}

/*
 * The places where the reverse map expects the page and finds it not
 * mapped, each with what its entry holds instead.  The reverse map visits
 * every VMA that could map the page: a child that broke COW there, a
 * process that never faulted that page of the file, one that unmapped it
 * with MADV_DONTNEED.  A place is named a culprit, where a lost mapping
 * was, only with evidence there (its mm's per-mm mapcount counting more
 * than was found in it); the others are only places looked at.
 */
static int pd_name_candidates(struct pd_query *q, struct pd_round *rd,
			      unsigned int *culprits)
{
	unsigned long unlisted = q->more_candidates;
	struct pd_leaf leaf;
	unsigned int i;
	int err;

	for (i = 0; i < q->nr_candidates; i++) {
		struct pd_candidate *c = &q->candidates[i];
		const char *level;

		err = pd_reread(q, c->mm->mm, c->addr, &leaf);
		if (err < 0)
			return err;
		if (err)
			continue;	/* mapped again meanwhile */
		level = leaf.level ?: "pte";
		if (pd_mm_lost_mapping(rd, c->mm)) {
			(*culprits)++;
			if (!pd_print_culprit_start(q, c->mm, c->addr, level))
				continue;
		} else {
			if (!pd_report_has_room(q, PD_VERDICT_END)) {
				unlisted++;
				continue;
			}
			pd_print_place(q, "looked at: ", c->mm, c->addr, level);
		}
		seq_buf_puts(&q->s, "(expected by the reverse map, holds ");
		pd_print_held(&q->s, &leaf);
		seq_buf_puts(&q->s, ") ");
		pd_print_mm_vma_name(q, c->mm->mm, c->addr);
		seq_buf_putc(&q->s, '\n');
	}
	pd_print_unlisted_culprits(q);
	if (unlisted)
		seq_buf_printf(&q->s,
			       "looked at: %lu more places where the reverse map expects the page, not listed\n",
			       unlisted);
	return 0;
}

/* Which mm a per-mm mapcount is of: a process, or one the query never met. */
static void pd_print_mm_id(struct pd_query *q, const struct pd_mm_id *m)
{
	if (m->pdm && m->pdm->tgid)
		seq_buf_printf(&q->s, "pid %d (%s)", m->pdm->tgid,
			       m->pdm->comm);
	else
		seq_buf_printf(&q->s, "mm id %u, of no process the scan met",
			       m->id);
}

/* The per-mm mapcounts that round @rd compared, and what was found. */
static void pd_print_mm_ids(struct pd_query *q, const struct pd_round *rd)
{
	unsigned int i;

	for (i = 0; i < rd->nr_mm_ids; i++) {
		const struct pd_mm_id *m = &rd->mm_ids[i];

		seq_buf_puts(&q->s, "per-mm mapcount: ");
		pd_print_mm_id(q, m);
		seq_buf_printf(&q->s, " %d, mappings found there %lu",
			       m->mapcount, m->found);
		if (pd_mm_id_over(m))
			seq_buf_puts(&q->s, ": more than are mapped there");
		else if (m->found > m->mapcount)
			seq_buf_puts(&q->s,
				     " (a lower bound: mappings made while both slots were taken are not counted)");
		seq_buf_putc(&q->s, '\n');
	}
}

/*
 * The folio's mapcount matches the mappings found, but its count for an
 * mm does not: one mm's mappings are counted against another, or a
 * per-mm count is corrupted.
 */
static const char *pd_judge_mm_ids(struct pd_query *q, struct pd_round *rd,
				   unsigned int *culprits)
{
	unsigned int i;

	for (i = 0; i < rd->nr_mm_ids; i++) {
		const struct pd_mm_id *m = &rd->mm_ids[i];

		if (!pd_mm_id_over(m))
			continue;
		(*culprits)++;
		if (!pd_culprit_listed(q))
			continue;
		seq_buf_puts(&q->s, "culprit: ");
		pd_print_mm_id(q, m);
		seq_buf_printf(&q->s,
			       " (the folio counts at least %d mappings in this mm, %lu are in its page tables)\n",
			       m->mapcount, m->found);
	}
	pd_print_unlisted_culprits(q);
	seq_buf_printf(&q->s,
		       "verdict: mismatch, folio mapcount %d matches the mappings found, but a per-mm mapcount (MM_ID) counts more than its mm maps (culprit: lines)\n",
		       rd->mapcount);
	return "mismatch";
}

/* ---- The verdict --------------------------------------------------------- */

/* Why the answer cannot be known whatever the sources say, or NULL. */
static const char *pd_unknowable(struct pd_query *q)
{
	if (q->interrupted)
		return "the query was interrupted";
	if (q->out_of_memory)
		return "out of memory to keep what the sources said";
	if (q->rmap_incomplete)
		return "the walk of the reverse map could not finish";
	if (q->exiting)
		return "the scan could not see a process that was exiting";
	return NULL;
}

/* What the mapcount judged is: see pd_query.folio_level. */
static const char *pd_mapcount_name(const struct pd_query *q)
{
	return q->folio_level ? "folio mapcount" : "mapcount";
}

static const char *pd_compared(struct pd_query *q)
{
	if (q->quick)
		return "the reverse map";
	if (!q->has_rmap)
		return "page tables; the reverse map does not track this page";
	return "page tables and the reverse map";
}

/*
 * A page the reverse map does not track and the mapcount does not count
 * (free, or typed: slab, page table, ...) is mapped: each mapping is one
 * that should not be there.
 */
static unsigned int pd_name_uncounted(struct pd_query *q, unsigned int r)
{
	unsigned int culprits = 0;
	struct pd_map *map;

	list_for_each_entry(map, &q->map_list, list) {
		if (!pd_map_present(map, r))
			continue;
		culprits++;
		if (!pd_print_culprit_start(q, map->mm, map->addr, map->level))
			continue;
		seq_buf_printf(&q->s, "(mapped, but the page is %s) ",
			       q->snapshot ?: "not counted by its mapcount");
		if (map->seen & PD_SEEN_OUTSIDE_VMA)
			seq_buf_puts(&q->s, "(outside every VMA) ");
		else
			pd_print_mm_vma_name(q, map->mm->mm, map->addr);
		seq_buf_putc(&q->s, '\n');
	}
	pd_print_unlisted_culprits(q);
	return culprits;
}

/* More mappings were found than the mapcount counts, none unknown. */
static const char *pd_judge_too_many(struct pd_query *q, struct pd_round *rd,
				     unsigned int *culprits)
{
	if (!q->has_rmap && !rd->mapcount)
		*culprits = pd_name_uncounted(q, rd->round);
	seq_buf_printf(&q->s, "verdict: mismatch, %s %d, mappings found %lu, in %s\n",
		       pd_mapcount_name(q), rd->mapcount, rd->mappings, pd_compared(q));
	return "mismatch";
}

/* Fewer mappings were found than the mapcount counts. */
static const char *pd_judge_too_few(struct pd_query *q, struct pd_round *rd,
				    unsigned int *culprits)
{
	if (q->has_rmap && pd_name_candidates(q, rd, culprits))
		return "partial";
	if (*culprits) {
		seq_buf_printf(&q->s,
			       "verdict: mismatch, %s %d, mappings found %lu: a per-mm mapcount says where the reverse map expects the page and it is not mapped (culprit: lines)\n",
			       pd_mapcount_name(q), rd->mapcount, rd->mappings);
		return "mismatch";
	}
	seq_buf_printf(&q->s,
		       "note: %s %d, mappings found %lu, and %s: a leaked mapcount, a lost mapping, or one in a page table that no VMA covers\n",
		       pd_mapcount_name(q), rd->mapcount, rd->mappings,
		       !q->has_rmap ? "the reverse map does not track the page" :
		       q->nr_candidates || q->more_candidates ?
		       "nothing shows which of the places looked at lost a mapping" :
		       "the reverse map expects the page nowhere else");
	seq_buf_puts(&q->s,
		     "verdict: partial, the mapcount counts more mappings than can be found\n");
	return "partial";
}

/*
 * Whether the page's reverse map lags its page tables, so that a
 * disagreement with it alone proves nothing.  A KSM folio's reverse map is
 * its stable node's list of rmap_items, which ksmd keeps lazily: it maps
 * the folio at an address before it adds that address to the list (and
 * without the folio's lock, which it takes only then), and leaves an item
 * on the list after the mapping is gone (copy-on-write, munmap) until it
 * scans that address again.  Only the mapcount and the page tables are
 * kept in step, under the page-table lock.
 */
static bool pd_rmap_lags(const struct pd_query *q)
{
	return q->folio && folio_test_ksm(q->folio);
}

/*
 * The sources still disagree after every re-check, in round @rd: say what
 * that means, and name the culprits where they can be named.
 */
static const char *pd_judge(struct pd_query *q, struct pd_round *rd,
			    unsigned int *culprits)
{
	const char *why = pd_unknowable(q);

	/* There, only more mappings than a steady mapcount is corruption. */
	if (pd_rmap_lags(q) &&
	    (rd->mappings <= rd->mapcount || rd->mapcount_changed)) {
		seq_buf_printf(&q->s,
			       "verdict: partial, mapcount %d, mappings found %lu, and KSM's reverse map lags the page tables: it lists a mapping after ksmd makes it and until ksmd rescans it\n",
			       rd->mapcount, rd->mappings);
		return "partial";
	}
	*culprits = pd_name_strays(q);
	if (*culprits) {
		seq_buf_printf(&q->s,
			       "verdict: mismatch, the reverse map does not know %u of the mappings in page tables (culprit: lines)\n",
			       *culprits);
		return "mismatch";
	}
	if (rd->mapcount_changed) {
		seq_buf_printf(&q->s, "verdict: partial, %s kept changing during the query\n",
			       q->snapshot ? "the page" : "the mapcount");
		return "partial";
	}
	if (why || rd->suspects || rd->reread_incomplete) {
		seq_buf_printf(&q->s, "verdict: partial, %s\n",
			       why ?: "the mappings kept changing during the query");
		return "partial";
	}
	if (rd->mappings > rd->mapcount)
		return pd_judge_too_many(q, rd, culprits);
	if (rd->mappings == rd->mapcount)
		return pd_judge_mm_ids(q, rd, culprits);
	return pd_judge_too_few(q, rd, culprits);
}

/**
 * pd_recheck_rounds - look again at a source's suspects before naming them
 * @q: the query
 * @suspects: how many suspects the first look found
 * @recheck: one round of looking again: returns how many are left
 *
 * A disagreement between a source and the page's state must survive
 * PD_RECHECK_ROUNDS rounds, each after a pause in which what is in flight
 * (a map or an unmap, a fault, a free) lands, to be believed.
 *
 * Return: the suspects left after the last round; 0 if the query was
 * interrupted (q->interrupted is then set), when none is believed.
 */
unsigned int pd_recheck_rounds(struct pd_query *q, unsigned int suspects,
			       unsigned int (*recheck)(struct pd_query *q))
{
	unsigned int round;

	for (round = 0; suspects && round < PD_RECHECK_ROUNDS; round++) {
		if (msleep_interruptible(PD_RECHECK_PAUSE_MS) ||
		    fatal_signal_pending(current)) {
			q->interrupted = true;
			return 0;
		}
		suspects = recheck(q);
		if (q->interrupted)
			return 0;
	}
	return suspects;
}

/*
 * Each source beyond the CPU's page tables re-checks its own findings and
 * names its culprits: what they are, each such source's in turn (the IOMMU
 * and the DMA API both name a stale DMA mapping), or NULL when none has
 * any.
 */
static const char *pd_sources_verdict(struct pd_query *q,
				      unsigned int *culprits)
{
	unsigned int i, named;
	struct seq_buf what;

	seq_buf_init(&what, q->sources_mismatch, sizeof(q->sources_mismatch));
	for (i = 0; i < PD_NR_SOURCES && !q->interrupted; i++) {
		named = pd_sources[i]->verdict(q);
		if (!named)
			continue;
		seq_buf_printf(&what, "%s%s", seq_buf_used(&what) ? "; " : "",
			       pd_sources[i]->mismatch);
		*culprits += named;
	}
	return seq_buf_used(&what) ? seq_buf_str(&what) : NULL;
}

/* Why a source beyond the CPU's page tables is not known whole, or NULL. */
static const char *pd_sources_incomplete(struct pd_query *q)
{
	const char *why;
	unsigned int i;

	for (i = 0; i < PD_NR_SOURCES; i++) {
		if (!pd_sources[i]->incomplete)
			continue;
		why = pd_sources[i]->incomplete(q);
		if (why)
			return why;
	}
	return NULL;
}

/**
 * pd_verdict - compare the sources, re-check a disagreement, say the verdict
 * @q: the query, after the scan (if any) and the first walk of the reverse
 *	map
 * @culprits: the number of culprits named, set
 *
 * Might sleep.
 *
 * Return: "ok", "mismatch" or "partial", for the summary line.
 */
const char *pd_verdict(struct pd_query *q, unsigned int *culprits)
{
	struct pd_round rd = { .round = 0 };
	unsigned long reread = 0, gone = 0;
	u64 start = local_clock();
	const char *what;

	*culprits = 0;
	rd.mapcount = pd_page_mapcount(q);
	rd.mapcount_changed = rd.mapcount != q->mapcount || pd_page_changed(q);
	if (q->quick && !q->has_rmap && rd.mapcount) {
		seq_buf_puts(&q->s,
			     "verdict: partial, the reverse map does not track this page: a quick query cannot count its mappings\n");
		return "partial";
	}
	pd_weigh(q, &rd);
	while (!pd_agree(&rd) && !q->interrupted &&
	       rd.round < PD_RECHECK_ROUNDS) {
		rd = (struct pd_round) { .round = rd.round + 1 };
		if (pd_recheck(q, &rd))
			q->interrupted = true;
		reread += rd.reread;
		gone += rd.gone;
	}
	q->recheck_ns = local_clock() - start;
	pd_print_mm_ids(q, &rd);
	if (rd.round)
		seq_buf_printf(&q->s,
			       "re-check: %u rounds, %lu mappings read again, %lu of them no longer mapped%s\n",
			       rd.round, reread, gone,
			       pd_agree(&rd) ? "; the sources agree now" : "");

	/* A source's culprit is corruption, whatever the host says. */
	what = pd_sources_verdict(q, culprits);
	if (*culprits) {
		seq_buf_printf(&q->s,
			       "verdict: mismatch, %s: %u culprit: lines%s\n",
			       what, *culprits, pd_agree(&rd) ? "" :
			       "; the host's own sources disagree too");
		return "mismatch";
	}
	if (!pd_agree(&rd) || pd_unknowable(q))
		return pd_judge(q, &rd, culprits);
	what = pd_sources_incomplete(q);
	if (what) {
		seq_buf_printf(&q->s, "verdict: partial, %s\n", what);
		return "partial";
	}
	seq_buf_printf(&q->s, "verdict: ok, %s %d matches the mappings in %s%s\n",
		       pd_mapcount_name(q), rd.mapcount, pd_compared(q),
		       rd.round ? ", after a re-check: the page changed during the query" : "");
	return "ok";
}
