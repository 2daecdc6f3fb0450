// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: the page's mappings in every process's page tables.
 *
 * The scan is what the reverse map cannot be: a look at the page tables
 * themselves, which finds a mapping that nothing else knows about.  It
 * walks every process by PID, holding one mm at a time and nothing between
 * processes, each mm once however many processes share it, every VMA up to
 * TASK_SIZE_MAX where the prescan (prescan.c), which reads the mm's tables
 * without its locks, says the pages may be mapped: for most processes,
 * nowhere.  It walks each VMA under that VMA's read lock, as
 * /proc/PID/smaps reads it, or else under the mmap lock taken for reading;
 * it holds either for a bounded time, lets go, and goes on where it
 * stopped; a fatal signal ends it.
 *
 * Entries that no VMA covers are read too, where a PTE table that a VMA
 * uses holds them: a page table left behind by munmap() is a way for a
 * page to stay mapped, unknown to everyone.  A whole page table in a gap
 * between VMAs is not read here (the prescan reads it, but only to narrow):
 * munmap() frees such tables holding the mmap lock only for reading, so
 * that under that lock nothing keeps them.
 *
 * Where such entries are is where the neighbouring VMAs end and start,
 * which a VMA's lock does not keep: under it they are looked up, and the
 * table read, within one read section of the mmap lock's sequence count
 * (mmap_lock_speculate_try_begin()), as uprobes finds a VMA.  A table whose
 * neighbours an mmap writer may have changed meanwhile is forgotten, and
 * read again under the mmap lock.
 */

#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/pagewalk.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>

#include "pd.h"

/* The walk of one process's page tables. */
struct pd_mm_walk {
	struct pd_query *q;
	struct pd_mm *pdm;
	struct vm_area_struct *vma;	/* being walked */
	struct task_struct *task;
	unsigned long found;		/* mappings found in this mm */
	u64 locked_at;
	unsigned long switches_at;	/* context switches of the task then */
	u64 deadline;			/* when to let go of the lock */
	unsigned long resume;		/* where to go on after letting go */
	unsigned long end;		/* of the range being walked */
	bool progress;			/* walked something in this hold */
	bool vma_locked;		/* this hold is of a VMA's read lock */
	bool need_mmap_lock;		/* at resume, which that cannot walk */
	/*
	 * Of the VMA being walked, the one before it and the one after it, as
	 * this hold of the mmap lock sees them (under a VMA's lock, as
	 * pd_vma_neighbours() looks them up): what an earlier hold saw may
	 * have been unmapped or moved since.
	 */
	unsigned long vma_end;
	unsigned long prev_end;
	unsigned long next_start;
};

/* ---- Naming what was found ----------------------------------------------- */

/* The name /proc/PID/maps shows for @vma, if it has one.  Under mmap lock. */
static void pd_print_vma_name(struct pd_query *q, struct vm_area_struct *vma)
{
	const struct path *path;
	const char *name, *name_fmt;

	get_vma_name(vma, &path, &name, &name_fmt);
	if (path) {
		name = d_path(path, q->path, sizeof(q->path));
		if (IS_ERR(name))
			name = "(unnamed file)";
	} else if (name_fmt) {
		snprintf(q->path, sizeof(q->path), name_fmt, name);
		name = q->path;
	}
	/* Whoever names a file or an anonymous VMA chooses these bytes. */
	if (name)
		pd_print_untrusted(&q->s, name, "");
}

/**
 * pd_print_mm_vma_name - name the VMA at @addr in @mm, as /proc/PID/maps
 * @q: the query
 * @mm: an mm that the caller keeps with mmgrab() only
 * @addr: the user address
 *
 * Nothing is printed if the mm is gone or no VMA covers @addr.  Might sleep.
 */
void pd_print_mm_vma_name(struct pd_query *q, struct mm_struct *mm,
			  unsigned long addr)
{
	struct vm_area_struct *vma;

	if (!mmget_not_zero(mm))
		return;
	if (!mmap_read_lock_killable(mm)) {
		vma = vma_lookup(mm, addr);
		if (vma)
			pd_print_vma_name(q, vma);
		mmap_read_unlock(mm);
	}
	mmput(mm);
}

static const char *pd_swap_entry_kind(softleaf_t entry)
{
	if (softleaf_is_migration(entry))
		return "migration entry";
	if (softleaf_is_hwpoison(entry))
		return "hwpoison entry";
	if (softleaf_is_marker(entry))
		return "pte marker";
	if (softleaf_is_device_private(entry))
		return "device private entry";
	if (softleaf_is_device_exclusive(entry))
		return "device exclusive entry";
	return "swap entry";
}

/**
 * pd_print_leaf - the "leaf:" line of what a user address maps
 * @s: the report
 * @leaf: as pd_read_entry() found it
 */
void pd_print_leaf(struct seq_buf *s, const struct pd_leaf *leaf)
{
	if (leaf->present) {
		seq_buf_printf(s, "leaf: %s, pfn %#lx\n", leaf->level, leaf->pfn);
		return;
	}
	if (!leaf->level) {
		seq_buf_puts(s, "leaf: none, nothing is mapped there\n");
		return;
	}
	seq_buf_printf(s, "leaf: %s, not present: %s", leaf->level,
		       pd_swap_entry_kind(leaf->entry));
	if (softleaf_has_pfn(leaf->entry))
		seq_buf_printf(s, " for pfn %#lx", softleaf_to_pfn(leaf->entry));
	else if (softleaf_is_swap(leaf->entry))
		seq_buf_printf(s, " (type %u, offset %#lx)", swp_type(leaf->entry),
			       swp_offset(leaf->entry));
	seq_buf_putc(s, '\n');
}

/* ---- The scan ------------------------------------------------------------ */

/*
 * A leaf that maps the @nr pages from @pfn at @base: if it maps a page the
 * query counts (pd_leaf_maps()), a mapping of it, which @note says why the
 * mapcount does not count.  Found under a page-table lock, it is recorded
 * by pd_flush_found().
 */
static struct pd_pending *pd_found(struct pd_mm_walk *w, unsigned long pfn,
				   unsigned long nr, unsigned long base,
				   const void *entry, const char *level,
				   const char *note, bool outside_vma)
{
	struct pd_query *q = w->q;
	struct pd_pending *p;
	unsigned long addr;

	if (!pd_leaf_maps(q, pfn, nr, base, &addr))
		return NULL;
	if (WARN_ON_ONCE(q->nr_pending == PD_PENDING_MAX))
		return NULL;
	p = &q->pending[q->nr_pending++];
	*p = (struct pd_pending) {
		.addr = addr, .entry = entry, .level = level, .note = note,
		.outside_vma = outside_vma, .pfn = pfn, .nr = nr, .base = base,
	};
	return p;
}

/**
 * pd_list_user_mapping - the "user:" line of a mapping found by the scan
 * @q: the query
 * @pdm: the mm it is in
 * @p: the mapping
 * @vma: the VMA it is in, whose lock the caller holds; NULL to look it up
 *
 * Mapping lines stop where they would leave no room for the lines that end
 * the report; those left out are counted.  Might sleep.
 */
void pd_list_user_mapping(struct pd_query *q, struct pd_mm *pdm,
			  const struct pd_pending *p,
			  struct vm_area_struct *vma)
{
	if (q->nr_listed == PD_LISTED_MAX ||
	    !pd_report_has_room(q, PD_LISTS_END)) {
		q->unlisted++;
		return;
	}
	q->nr_listed++;
	seq_buf_printf(&q->s, "user: pid %d (%s) %#lx %s ",
		       pdm->tgid, pdm->comm, p->addr, p->level);
	if (p->note)
		seq_buf_printf(&q->s, "(%s, not counted) ", p->note);
	if (p->outside_vma)
		seq_buf_puts(&q->s, "(outside every VMA) ");
	if (p->shared_table)
		seq_buf_puts(&q->s, "(page table shared) ");
	if (mm_flags_test(MMF_MULTIPROCESS, pdm->mm))
		seq_buf_puts(&q->s, "(mm shared with other processes) ");
	if (vma)
		pd_print_vma_name(q, vma);
	else if (!p->outside_vma)
		pd_print_mm_vma_name(q, pdm->mm, p->addr);
	seq_buf_putc(&q->s, '\n');
}

/**
 * pd_record_user_mapping - record a mapping found by the scan
 * @q: the query
 * @pdm: the mm it is in
 * @p: the mapping, listed first by pd_list_user_mapping()
 *
 * A counted one is recorded with PD_SEEN_SCAN for the verdict; the others
 * are only counted.  Might sleep.
 */
void pd_record_user_mapping(struct pd_query *q, struct pd_mm *pdm,
			    const struct pd_pending *p)
{
	if (p->note) {
		q->other_mappings++;
		return;
	}
	pd_map_see(q, pdm, p->addr, p->entry, p->level,
		   PD_SEEN_SCAN | (p->outside_vma ? PD_SEEN_OUTSIDE_VMA : 0));
}

/*
 * Record and list what the walk found since the last call, or, scanning for
 * a batch, keep it for each page's query.  Under the lock that keeps the
 * VMA, which its name needs, and under no spinlock, as it allocates.
 */
static void pd_flush_found(struct pd_mm_walk *w)
{
	struct pd_query *q = w->q;
	unsigned int i;

	for (i = 0; i < q->nr_pending; i++) {
		struct pd_pending *p = &q->pending[i];

		w->found++;
		if (q->targets) {
			pd_batch_keep(q->targets, w->pdm, p);
			continue;
		}
		pd_list_user_mapping(q, w->pdm, p, p->outside_vma ? NULL : w->vma);
		pd_record_user_mapping(q, w->pdm, p);
	}
	q->nr_pending = 0;
}

#if PD_PER_VMA_SCAN
/*
 * Whether an mmap writer holds @mm's lock now: it may be waiting for a VMA
 * that the scan has read-locked.
 */
static bool pd_mmap_write_locked(struct mm_struct *mm)
{
	unsigned int seq;

	return !mmap_lock_speculate_try_begin(mm, &seq);
}
#else
static bool pd_mmap_write_locked(struct mm_struct *mm)
{
	return false;
}
#endif

/*
 * Let others have the lock: after PD_LOCK_HOLD_NS, or as soon as someone
 * may wait for it (for a VMA's, an mmap writer may), but only after walking
 * something in this hold.
 */
static bool pd_should_let_go(struct pd_mm_walk *w, struct mm_struct *mm)
{
	if (!w->progress)
		return false;
	if (local_clock() > w->deadline)
		return true;
	return w->vma_locked ? pd_mmap_write_locked(mm) :
			       mmap_lock_is_contended(mm);
}

/*
 * A non-present entry naming q->pfn: a migration, hwpoison or device entry.
 * The page's mapcount counts only a device-exclusive one.
 */
static void pd_user_swap_entry(struct pd_mm_walk *w, unsigned long addr,
			       const void *ptr, softleaf_t entry,
			       const char *level, bool outside_vma)
{
	if (softleaf_has_pfn(entry))
		pd_found(w, softleaf_to_pfn(entry), 1, addr, ptr, level,
			 pd_softleaf_counted(entry) ? NULL : pd_swap_entry_kind(entry),
			 outside_vma);
}

static int pd_user_pud(pud_t *pud, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	pud_t val = pudp_get(pud);

	if (!pud_present(val) || !pud_leaf(val))
		return 0;
	/*
	 * A user PUD leaf that maps online memory, the only memory a query
	 * is about (pd_describe_page()), is a PFN map's, which the mapcount
	 * does not count: the counted ones, fsdax's and device-dax's, map
	 * ZONE_DEVICE pages.  Hugetlb's go to the hugetlb callback.
	 */
	walk->action = ACTION_CONTINUE;
	pd_found(w, pud_pfn(val), PUD_SIZE >> PAGE_SHIFT, addr & PUD_MASK, pud,
		 "pud", "special", false);
	pd_flush_found(w);
	return 0;
}

/* Whether a huge PMD maps a page that the page's mapcount counts. */
static bool pd_pmd_counted(struct vm_area_struct *vma, unsigned long addr,
			   pmd_t pmd)
{
	if (!IS_ENABLED(CONFIG_PGTABLE_HAS_HUGE_LEAVES))
		return false;
	return vm_normal_page_pmd(vma, addr, pmd);
}

/*
 * One entry that pd_pte_may_map() let through, at @addr of @vma, or of no
 * VMA if @vma is NULL (where only the special bit says what the mapcount
 * counts).
 */
static void pd_user_pte(struct pd_mm_walk *w, struct vm_area_struct *vma,
			unsigned long addr, pte_t *ptep, pte_t pte)
{
	bool counted;

	if (pte_present(pte)) {
		if (!pd_pfn_counted(w->q, pte_pfn(pte)))
			return;
		counted = vma ? !!vm_normal_page(vma, addr, pte) :
				!pte_special(pte) && !is_zero_pfn(pte_pfn(pte));
		pd_found(w, pte_pfn(pte), 1, addr, ptep, "pte",
			 counted ? NULL : "special", !vma);
	} else if (!pte_none(pte)) {
		pd_user_swap_entry(w, addr, ptep, softleaf_from_pte(pte), "pte",
				   !vma);
	}
}

/*
 * Whether the PTE table of [@addr, @end), a part of @vma, holds entries
 * that no VMA may cover: before the VMA on its first table, after it on its
 * last.
 */
static bool pd_table_may_have_gaps(struct vm_area_struct *vma,
				   unsigned long addr, unsigned long end)
{
	return (addr == vma->vm_start && (addr & ~PMD_MASK)) ||
	       (end == vma->vm_end && (end & ~PMD_MASK));
}

/*
 * The part of the PTE table at @addr that no VMA covers and that the walk
 * of this VMA reads: on its first table, back to the VMA before it; on its
 * last, on to the end of the table if the next VMA starts beyond it (if it
 * starts inside, its own first table reads that gap).
 */
static void pd_table_gaps(struct pd_mm_walk *w, struct vm_area_struct *vma,
			  unsigned long addr, unsigned long end,
			  unsigned long *lo, unsigned long *hi)
{
	unsigned long table = addr & PMD_MASK;

	*lo = addr;
	*hi = end;
	if (addr == vma->vm_start)
		*lo = clamp(w->prev_end, table, addr);
	if (end == vma->vm_end && w->next_start - table >= PMD_SIZE)
		*hi = table + PMD_SIZE;
}

/*
 * Where the gap before @addr begins, within @addr's PTE table: the end of
 * the last VMA that ends at or below @addr there, or the table's start.
 * One step back in the maple tree from the VMA or the gap at @addr, not a
 * walk over every VMA of the table: a table may hold hundreds of small
 * VMAs, each asking.  Under the mmap lock, or under RCU, where the caller
 * checks the mmap lock's sequence count after.
 */
static unsigned long pd_gap_start(struct mm_struct *mm, unsigned long addr)
{
	unsigned long table = addr & PMD_MASK;
	struct vm_area_struct *prev = mt_prev(&mm->mm_mt, addr, table);

	return prev ? max(table, READ_ONCE(prev->vm_end)) : table;
}

/*
 * Where the VMAs around @vma end and start, as the maple tree says under
 * RCU, for pd_table_gaps(): nothing keeps them, so the caller reads them
 * inside a read section of the mmap lock's sequence count, begun at *@seq,
 * and checks it after.  Return: false if an mmap writer holds the lock now.
 */
#if PD_PER_VMA_SCAN
static bool pd_vma_neighbours(struct pd_mm_walk *w, struct vm_area_struct *vma,
			      unsigned int *seq)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long index = vma->vm_end;
	struct vm_area_struct *next;

	if (!mmap_lock_speculate_try_begin(mm, seq))
		return false;
	rcu_read_lock();
	w->prev_end = pd_gap_start(mm, vma->vm_start);
	next = mt_find(&mm->mm_mt, &index, ULONG_MAX);
	w->next_start = next ? READ_ONCE(next->vm_start) : TASK_SIZE_MAX;
	rcu_read_unlock();
	return true;
}

/* Whether an mmap writer came since pd_vma_neighbours() began at @seq. */
static bool pd_neighbours_changed(struct mm_struct *mm, unsigned int seq)
{
	return mmap_lock_speculate_retry(mm, seq);
}
#else
static bool pd_vma_neighbours(struct pd_mm_walk *w, struct vm_area_struct *vma,
			      unsigned int *seq)
{
	return false;
}

static bool pd_neighbours_changed(struct mm_struct *mm, unsigned int seq)
{
	return true;
}
#endif

/*
 * Read the PTE table of [@addr, @end) whole, and its entries outside every
 * VMA that pd_table_gaps() gives: a callback per entry would cost more
 * than reading the entry does.
 */
static void pd_user_pte_table(struct pd_mm_walk *w, pmd_t *pmd,
			      unsigned long addr, unsigned long end,
			      struct mm_walk *walk)
{
	bool speculated = false;
	unsigned long lo, hi, a;
	pte_t *start, *pte;
	spinlock_t *ptl;		/* the PTE table's */
	unsigned int seq;

	if (w->vma_locked && pd_table_may_have_gaps(walk->vma, addr, end)) {
		if (!pd_vma_neighbours(w, walk->vma, &seq))
			goto need_mmap_lock;
		speculated = true;
	}
	pd_table_gaps(w, walk->vma, addr, end, &lo, &hi);
	start = pte_offset_map_lock(walk->mm, pmd, lo, &ptl);
	if (!start) {
		/* The table went away, or became a huge PMD: look again. */
		walk->action = ACTION_AGAIN;
		return;
	}
	w->q->tables++;
	w->q->entries += (hi - lo) >> PAGE_SHIFT;
	if (pd_pte_table_may_map(start, (hi - lo) >> PAGE_SHIFT, w->q)) {
		for (pte = start, a = lo; a != hi; pte++, a += PAGE_SIZE) {
			pte_t val = ptep_get(pte);

			if (pd_pte_may_map(val, w->q->first_pfn, w->q->nr_pfns))
				pd_user_pte(w, a >= addr && a < end ?
					    walk->vma : NULL, a, pte, val);
		}
	}
	pte_unmap_unlock(start, ptl);
	if (speculated && pd_neighbours_changed(walk->mm, seq)) {
		/* What was found in this table (nothing else) is forgotten. */
		w->q->nr_pending = 0;
		goto need_mmap_lock;
	}
	pd_flush_found(w);
	return;

need_mmap_lock:
	w->need_mmap_lock = true;
}

static int pd_user_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	pmd_t val = pmdp_get(pmd);
	struct pd_pending *p;

	if (pd_should_let_go(w, walk->mm)) {
		w->resume = addr;
		return 1;
	}
	w->progress = true;
	/* Never let the walker go down to PTEs, nor split a huge PMD. */
	walk->action = ACTION_CONTINUE;

	if (pmd_is_valid_softleaf(val)) {
		pd_user_swap_entry(w, addr, pmd, softleaf_from_pmd(val), "pmd",
				   false);
		pd_flush_found(w);
		return 0;
	}
	if (!pmd_present(val))
		return 0;
	if (!pmd_leaf(val)) {
		pd_user_pte_table(w, pmd, addr, next, walk);
		if (w->need_mmap_lock) {
			w->resume = addr;
			return 1;
		}
		return 0;
	}

	/* A huge PMD: the mmap lock keeps a PTE table from becoming one. */
	w->q->entries++;
	p = pd_found(w, pmd_pfn(val), PMD_SIZE >> PAGE_SHIFT, addr & PMD_MASK,
		     pmd, "pmd", NULL, false);
	if (p && !pd_pmd_counted(walk->vma, addr, val))
		p->note = "special";
	pd_flush_found(w);
	return 0;
}

#ifdef CONFIG_HUGETLB_PAGE
/* Whether a hugetlb entry lies in a PMD table that processes share. */
static bool pd_hugetlb_table_shared(pte_t *pte, unsigned long hmask)
{
#ifdef CONFIG_HUGETLB_PMD_PAGE_TABLE_SHARING
	if (~hmask + 1 == PMD_SIZE)
		return ptdesc_pmd_is_shared(virt_to_ptdesc(pte));
#endif
	return false;
}

static int pd_user_hugetlb(pte_t *pte, unsigned long hmask, unsigned long addr,
			   unsigned long next, struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	pte_t val = huge_ptep_get(walk->mm, addr, pte);

	if (pd_should_let_go(w, walk->mm)) {
		w->resume = addr;
		return 1;
	}
	w->progress = true;

	addr &= hmask;
	w->q->entries++;
	if (pte_present(val)) {
		struct pd_pending *p;

		p = pd_found(w, pte_pfn(val), (~hmask + 1) >> PAGE_SHIFT, addr,
			     pte, "hugetlb", NULL, false);
		if (p)
			p->shared_table = pd_hugetlb_table_shared(pte, hmask);
	} else if (!huge_pte_none(val)) {
		pd_user_swap_entry(w, addr, pte, softleaf_from_pte(val),
				   "hugetlb", false);
	}
	pd_flush_found(w);
	return 0;
}
#else
#define pd_user_hugetlb NULL
#endif

/*
 * Walk every VMA, VM_PFNMAP ones too (their mappings are listed, as
 * special), and note where the VMAs around it end and start, for the
 * entries of its page tables that no VMA covers.
 */
static int pd_user_test_walk(unsigned long start, unsigned long end,
			     struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	struct vm_area_struct *next;

	w->vma = walk->vma;
	w->prev_end = w->vma_end;
	w->vma_end = walk->vma->vm_end;
	next = find_vma(walk->mm, walk->vma->vm_end);
	w->next_start = next ? next->vm_start : TASK_SIZE_MAX;
	return 0;
}

static const struct mm_walk_ops pd_user_ops = {
	.pud_entry	= pd_user_pud,
	.pmd_entry	= pd_user_pmd,
	.hugetlb_entry	= pd_user_hugetlb,
	.test_walk	= pd_user_test_walk,
	.walk_lock	= PGWALK_RDLOCK,
};

/* How many times the task has been switched out, for either reason. */
static unsigned long pd_switches(void)
{
	return READ_ONCE(current->nvcsw) + READ_ONCE(current->nivcsw);
}

/* Begin a hold of a lock of the mm: of a VMA's if @vma_locked. */
static void pd_begin_hold(struct pd_mm_walk *w, bool vma_locked)
{
	w->switches_at = pd_switches();
	w->locked_at = local_clock();
	w->deadline = w->locked_at + PD_LOCK_HOLD_NS;
	w->progress = false;
	w->resume = w->end;
	w->vma_locked = vma_locked;
	w->need_mmap_lock = false;
}

/* Account the hold that pd_begin_hold() began, as it ends, in @holds. */
static void pd_end_hold(struct pd_mm_walk *w, struct pd_holds *holds)
{
	u64 ns = local_clock() - w->locked_at;

	holds->longest_ns = max(holds->longest_ns, ns);
	if (pd_switches() == w->switches_at)
		holds->longest_unswitched_ns =
			max(holds->longest_unswitched_ns, ns);
}

/*
 * One hold of the mmap lock, for reading: the walk from @addr on, across
 * VMAs, until it lets go.  Return: 0, the walker's error, or -EINTR.
 */
static int pd_walk_mmap_locked(struct pd_mm_walk *w, unsigned long addr)
{
	struct mm_struct *mm = w->pdm->mm;
	int err;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	pd_begin_hold(w, false);
	/*
	 * The gap before this hold's first VMA starts where this hold sees
	 * the VMA before it end, not where an earlier hold saw one end: that
	 * VMA may have been unmapped or moved since, and its end now lie
	 * above the first VMA (a gap the wrong way round, read past the end
	 * of its PTE table).
	 */
	w->vma_end = pd_gap_start(mm, addr);
	err = walk_page_range(mm, addr, w->end, &pd_user_ops, w);
	pd_flush_found(w);
	mmap_read_unlock(mm);
	pd_end_hold(w, &w->q->mmap_holds);
	return err < 0 ? err : 0;
}

#if PD_PER_VMA_SCAN
/* pd_user_ops, for one VMA under its read lock, which the caller holds. */
static const struct mm_walk_ops pd_user_vma_ops = {
	.pud_entry	= pd_user_pud,
	.pmd_entry	= pd_user_pmd,
	.hugetlb_entry	= pd_user_hugetlb,
	.walk_lock	= PGWALK_VMA_RDLOCK_VERIFY,
};

/*
 * One hold of a VMA's read lock: the VMA at or after @addr, found and
 * locked as /proc/PID/maps finds the next one, walked from @addr until it
 * or the range ends, or the walk lets go.  Return: 0, the walker's error,
 * -EINTR, or -EAGAIN if the VMA could not be locked: the mmap lock is for
 * that.
 */
static int pd_walk_vma_locked(struct pd_mm_walk *w, unsigned long addr)
{
	VMA_ITERATOR(vmi, w->pdm->mm, addr);
	struct mm_struct *mm = w->pdm->mm;
	struct vm_area_struct *vma;
	int err;

	rcu_read_lock();
	vma = lock_next_vma(mm, &vmi, addr);
	rcu_read_unlock();
	if (IS_ERR(vma))
		return PTR_ERR(vma);
	pd_begin_hold(w, true);
	if (!vma)
		return 0;		/* no VMA left: resume is the end */
	if (vma->vm_start >= w->end) {
		vma_end_read(vma);	/* none left in the range */
		return 0;
	}
	w->vma = vma;
	w->resume = min(vma->vm_end, w->end);
	err = walk_page_range_vma(vma, max(addr, vma->vm_start), w->resume,
				  &pd_user_vma_ops, w);
	pd_flush_found(w);
	vma_end_read(vma);
	pd_end_hold(w, &w->q->vma_holds);
	return err < 0 ? err : 0;
}
#else
static int pd_walk_vma_locked(struct pd_mm_walk *w, unsigned long addr)
{
	return -EAGAIN;
}
#endif

/*
 * Walk the page tables of @w's mm in [@addr, w->end): a VMA at a time
 * under its read lock, or, where that cannot be, a stretch under the mmap
 * lock.  Either is held for a bounded time, let go, and taken again where
 * the walk stopped; what changed meanwhile is the race every report has.
 * Return: 0, or an error that ends the scan.
 */
static int pd_walk_range(struct pd_mm_walk *w, unsigned long addr)
{
	int err;

	while (addr < w->end) {
		err = -EAGAIN;
		if (!w->need_mmap_lock)
			err = pd_walk_vma_locked(w, addr);
		if (err == -EAGAIN)
			err = pd_walk_mmap_locked(w, addr);
		if (err)
			return err;
		if (fatal_signal_pending(current))
			return -EINTR;
		addr = w->resume;
		cond_resched();
	}
	return 0;
}

/*
 * Walk the page tables of @pdm's mm for mappings of the query's pages,
 * where the prescan says they may be.  The ranges it gives begin and end
 * on a PMD's bounds, so that each PTE table read is read whole, with the
 * entries no VMA covers, as a walk of the whole mm reads it.
 */
static void pd_walk_mm(struct pd_query *q, struct pd_mm *pdm)
{
	struct pd_mm_walk w = { .q = q, .pdm = pdm };
	struct pd_prescan ps;
	unsigned int i;
	u64 start;
	int err;

	q->scanned++;
	start = local_clock();
	err = pd_prescan_mm(q, pdm->mm, &ps);
	q->prescan_ns += local_clock() - start;
	if (ps.nr)
		q->locked_mms++;
	for (i = 0; i < ps.nr && !err; i++) {
		w.end = ps.range[i].end;
		err = pd_walk_range(&w, ps.range[i].start);
	}
	if (err)
		q->interrupted = true;
	if (w.found)
		q->processes++;
}

/* The mm of a process whose leader may have exited before its threads. */
static struct mm_struct *pd_get_process_mm(struct task_struct *leader)
{
	struct mm_struct *mm = NULL;
	struct task_struct *t;

	rcu_read_lock();
	for_each_thread(leader, t) {
		mm = get_task_mm(t);
		if (mm)
			break;
	}
	rcu_read_unlock();
	return mm;
}

static void pd_scan_process(struct pd_query *q, struct task_struct *task)
{
	struct mm_struct *mm;
	struct pd_mm *pdm;

	if (task->flags & PF_KTHREAD) {
		q->kthreads++;
		return;
	}
	mm = pd_get_process_mm(task);
	if (!mm) {
		/* A zombie's mm is gone; an exiting one's may still map it. */
		if (!READ_ONCE(task->exit_state))
			q->exiting++;
		return;
	}
	pdm = pd_mm_get(q, mm);
	if (!pdm) {
		q->exiting++;	/* not walked: the verdict is partial */
	} else if (pdm->walked) {
		/* CLONE_VM without CLONE_THREAD, as vfork() and spawn do. */
		q->sharing++;
	} else {
		pdm->walked = true;
		pdm->tgid = task_tgid_nr(task);
		pd_task_comm(pdm->comm, task);
		pd_walk_mm(q, pdm);
	}
	mmput(mm);
}

/*
 * The thread-group leader with the lowest PID at or above *@nr, referenced.
 * Walking by PID number lets the scan hold nothing between processes.
 */
static struct task_struct *pd_next_process(pid_t *nr)
{
	struct task_struct *task = NULL;
	struct pid *pid;

	rcu_read_lock();
	while (!task && (pid = find_ge_pid(*nr, &init_pid_ns))) {
		*nr = pid_nr(pid) + 1;
		task = pid_task(pid, PIDTYPE_TGID);
		if (task)
			get_task_struct(task);
	}
	rcu_read_unlock();
	return task;
}

/**
 * pd_scan_processes - walk every process's page tables for the query's pages
 * @q: the query
 *
 * What it finds pd_flush_found() records, or keeps for a batch.  Might
 * sleep; a fatal signal ends it (q->interrupted).
 */
void pd_scan_processes(struct pd_query *q)
{
	u64 start = local_clock();
	struct task_struct *task;
	pid_t nr = 1;

	while (!q->interrupted && (task = pd_next_process(&nr))) {
		pd_scan_process(q, task);
		put_task_struct(task);
		cond_resched();
	}
	q->scan_ns = local_clock() - start;
}

/**
 * pd_print_user_totals - the line that ends the list of user mappings
 * @q: the query, after its scan
 */
void pd_print_user_totals(struct pd_query *q)
{
	unsigned long counted = 0;
	struct pd_map *map;

	list_for_each_entry(map, &q->map_list, list)
		counted += !!(map->seen & PD_SEEN_SCAN);
	if (q->unlisted)
		seq_buf_printf(&q->s, "user: %lu more not listed\n", q->unlisted);
	seq_buf_printf(&q->s,
		       "user mappings: %lu counted, %lu not counted, in %u processes; %u processes scanned, %u kernel threads, skipped: %u exiting; %u sharing an mm already scanned%s\n",
		       counted, q->other_mappings, q->processes, q->scanned,
		       q->kthreads, q->exiting, q->sharing,
		       q->interrupted ? "; interrupted" : "");
}

/**
 * pd_user_mappings - scan every process's page tables for the page
 * @q: the query
 *
 * Each counted mapping found is recorded with PD_SEEN_SCAN; each is listed,
 * counted or not, up to PD_LISTED_MAX.  A page of a batch takes what the
 * batch's scan found of it, if that scan looked for all it counts.  Might
 * sleep.
 */
void pd_user_mappings(struct pd_query *q)
{
	if (!pd_batch_replay(q))
		pd_scan_processes(q);
	pd_print_user_totals(q);
}

/* ---- One entry ------------------------------------------------------------ */

/* Reading the entry at one address, through the VMA around it or near it. */
struct pd_entry_walk {
	unsigned long addr;
	struct pd_leaf *leaf;
};

static void pd_entry_present(struct pd_leaf *leaf, unsigned long addr,
			     unsigned long first, unsigned long size,
			     const char *level, const void *ptr)
{
	leaf->level = level;
	leaf->present = true;
	leaf->pfn = first + ((addr & (size - 1)) >> PAGE_SHIFT);
	leaf->ptr = ptr;
}

static void pd_entry_missing(struct pd_leaf *leaf, softleaf_t entry,
			     const char *level, const void *ptr)
{
	leaf->level = level;
	leaf->entry = entry;
	leaf->ptr = ptr;
}

static int pd_entry_pud(pud_t *pud, unsigned long addr, unsigned long next,
			struct mm_walk *walk)
{
	struct pd_entry_walk *ew = walk->private;
	pud_t val = pudp_get(pud);

	if (pud_present(val) && pud_leaf(val)) {
		walk->action = ACTION_CONTINUE;
		pd_entry_present(ew->leaf, ew->addr, pud_pfn(val), PUD_SIZE,
				 "pud", pud);
	}
	return 0;
}

static int pd_entry_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			struct mm_walk *walk)
{
	struct pd_entry_walk *ew = walk->private;
	pmd_t val = pmdp_get(pmd);
	spinlock_t *ptl;		/* the PTE table's */
	pte_t *ptep, pte;

	/* As in pd_user_pmd(): do not let the walker split a huge PMD. */
	walk->action = ACTION_CONTINUE;
	if (pmd_is_valid_softleaf(val)) {
		pd_entry_missing(ew->leaf, softleaf_from_pmd(val), "pmd", pmd);
		return 0;
	}
	if (!pmd_present(val))
		return 0;
	if (pmd_leaf(val)) {
		pd_entry_present(ew->leaf, ew->addr, pmd_pfn(val), PMD_SIZE,
				 "pmd", pmd);
		return 0;
	}
	/* ew->addr shares this PTE table with addr, maybe outside the VMA. */
	ptep = pte_offset_map_lock(walk->mm, pmd, ew->addr, &ptl);
	if (!ptep) {
		walk->action = ACTION_AGAIN;
		return 0;
	}
	ew->leaf->table = true;
	pte = ptep_get(ptep);
	if (pte_present(pte))
		pd_entry_present(ew->leaf, ew->addr, pte_pfn(pte), PAGE_SIZE,
				 "pte", ptep);
	else if (!pte_none(pte))
		pd_entry_missing(ew->leaf, softleaf_from_pte(pte), "pte", ptep);
	pte_unmap_unlock(ptep, ptl);
	return 0;
}

#ifdef CONFIG_HUGETLB_PAGE
static int pd_entry_hugetlb(pte_t *pte, unsigned long hmask,
			    unsigned long addr, unsigned long next,
			    struct mm_walk *walk)
{
	struct pd_entry_walk *ew = walk->private;
	pte_t val = huge_ptep_get(walk->mm, addr, pte);

	if (pte_present(val))
		pd_entry_present(ew->leaf, ew->addr, pte_pfn(val), ~hmask + 1,
				 "hugetlb", pte);
	else if (!huge_pte_none(val))
		pd_entry_missing(ew->leaf, softleaf_from_pte(val), "hugetlb",
				 pte);
	return 0;
}
#else
#define pd_entry_hugetlb NULL
#endif

/* Read VM_PFNMAP VMAs too. */
static int pd_walk_every_vma(unsigned long addr, unsigned long next,
			     struct mm_walk *walk)
{
	return 0;
}

static const struct mm_walk_ops pd_entry_ops = {
	.pud_entry	= pd_entry_pud,
	.pmd_entry	= pd_entry_pmd,
	.hugetlb_entry	= pd_entry_hugetlb,
	.test_walk	= pd_walk_every_vma,
	.walk_lock	= PGWALK_RDLOCK,
};

/**
 * pd_read_entry - what the page-table entry for @addr in @mm holds
 * @mm: the mm, whose mmap lock the caller holds for reading
 * @addr: a page-aligned user address
 * @leaf: what the entry maps, filled in; leaf->level is NULL if nothing
 *
 * An address that no VMA covers is read through a VMA that shares its PTE
 * table, as the scan reads it; if none does, nothing maps it that can be
 * read under the mmap lock held for reading.
 *
 * Return: 0, or the page-table walker's error.
 */
int pd_read_entry(struct mm_struct *mm, unsigned long addr,
		  struct pd_leaf *leaf)
{
	struct pd_entry_walk ew = { .addr = addr, .leaf = leaf };
	unsigned long table = addr & PMD_MASK;
	struct vm_area_struct *vma;

	mmap_assert_locked(mm);
	memset(leaf, 0, sizeof(*leaf));
	vma = vma_lookup(mm, addr);
	if (vma)
		return walk_page_range(mm, addr, addr + PAGE_SIZE,
				       &pd_entry_ops, &ew);
	vma = find_vma_intersection(mm, table, table + PMD_SIZE);
	if (!vma || is_vm_hugetlb_page(vma))
		return 0;
	leaf->outside_vma = true;
	table = max(table, vma->vm_start);
	return walk_page_range(mm, table, table + PAGE_SIZE, &pd_entry_ops,
			       &ew);
}

/* The VMA as /proc/PID/maps shows it. */
static void pd_print_vma(struct pd_query *q, struct vm_area_struct *vma)
{
	vm_flags_t flags = vma->vm_flags;
	unsigned long long pgoff = 0;
	unsigned long ino = 0;
	dev_t dev = 0;

	if (vma->vm_file) {
		const struct inode *inode = file_user_inode(vma->vm_file);

		dev = inode->i_sb->s_dev;
		ino = inode->i_ino;
		pgoff = ((loff_t)vma->vm_pgoff) << PAGE_SHIFT;
	}
	seq_buf_printf(&q->s, "vma: %08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu ",
		       vma->vm_start, vma->vm_end,
		       flags & VM_READ ? 'r' : '-',
		       flags & VM_WRITE ? 'w' : '-',
		       flags & VM_EXEC ? 'x' : '-',
		       flags & VM_MAYSHARE ? 's' : 'p',
		       pgoff, MAJOR(dev), MINOR(dev), ino);
	pd_print_vma_name(q, vma);
	seq_buf_putc(&q->s, '\n');
}

static struct task_struct *pd_get_task(pid_t nr)
{
	struct task_struct *task;

	rcu_read_lock();
	task = pid_task(find_pid_ns(nr, &init_pid_ns), PIDTYPE_PID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	return task;
}

/*
 * The mm of the process with PID @nr, referenced, its comm in @comm
 * (PD_COMM_LEN); or an error after the line that says why: -ESRCH if
 * there is no such process or it is exiting, -EINVAL if it is a kernel
 * thread.
 */
static struct mm_struct *pd_virt_mm(struct pd_query *q, pid_t nr, char *comm)
{
	struct task_struct *task;
	struct mm_struct *mm;

	task = pd_get_task(nr);
	if (!task) {
		seq_buf_printf(&q->s, "virt: no process with pid %d\n", nr);
		return ERR_PTR(-ESRCH);
	}
	pd_task_comm(comm, task);
	if (task->flags & PF_KTHREAD) {
		seq_buf_printf(&q->s,
			       "virt: pid %d (%s) is a kernel thread, use pid 0 for kernel addresses\n",
			       nr, comm);
		mm = ERR_PTR(-EINVAL);
		goto put_task;
	}
	mm = get_task_mm(task);
	if (!mm) {
		seq_buf_printf(&q->s, "virt: pid %d (%s) is exiting, its memory is gone\n",
			       nr, comm);
		mm = ERR_PTR(-ESRCH);
	}
put_task:
	put_task_struct(task);
	return mm;
}

/* Find what @vaddr maps in @mm, and describe its VMA. */
static int pd_lookup_user(struct pd_query *q, struct mm_struct *mm,
			  unsigned long vaddr, struct pd_leaf *leaf)
{
	struct vm_area_struct *vma;
	int err;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, vaddr);
	if (vma)
		pd_print_vma(q, vma);
	else
		seq_buf_puts(&q->s, "vma: none\n");
	err = vma ? pd_read_entry(mm, vaddr, leaf) : 0;
	mmap_read_unlock(mm);
	if (!err)
		pd_print_leaf(&q->s, leaf);
	return err;
}

/**
 * pd_virt_user - what @vaddr maps in the process with PID @nr
 * @q: the query
 * @nr: a PID of the initial PID namespace
 * @vaddr: a page-aligned user address
 * @leaf: what it maps, filled in
 *
 * Might sleep.
 *
 * Return: 0, -ESRCH if there is no such process or it is exiting, -EINVAL
 * if it is a kernel thread, -EINTR on a fatal signal.
 */
int pd_virt_user(struct pd_query *q, pid_t nr, unsigned long vaddr,
		 struct pd_leaf *leaf)
{
	char comm[PD_COMM_LEN];
	struct mm_struct *mm;
	int err;

	mm = pd_virt_mm(q, nr, comm);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	seq_buf_printf(&q->s, "virt: pid %d (%s) vaddr %#lx\n", nr, comm, vaddr);
	err = pd_lookup_user(q, mm, vaddr, leaf);
	mmput(mm);
	return err;
}

/* Walking a range of a process's addresses for what they map. */
struct pd_range_walk {
	struct pd_query *q;
	int (*found)(void *arg, unsigned long addr, unsigned long pfn,
		     unsigned long nr, const char *level);
	void *arg;
};

static int pd_range_leaf(struct mm_walk *walk, unsigned long addr,
			 unsigned long next, unsigned long first,
			 unsigned long size, const char *level)
{
	struct pd_range_walk *rw = walk->private;

	return rw->found(rw->arg, addr, first + ((addr & (size - 1)) >> PAGE_SHIFT),
			 (next - addr) >> PAGE_SHIFT, level);
}

static int pd_range_pud(pud_t *pud, unsigned long addr, unsigned long next,
			struct mm_walk *walk)
{
	pud_t val = pudp_get(pud);

	if (!pud_present(val) || !pud_leaf(val))
		return 0;
	walk->action = ACTION_CONTINUE;
	return pd_range_leaf(walk, addr, next, pud_pfn(val), PUD_SIZE, "pud");
}

static int pd_range_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			struct mm_walk *walk)
{
	pmd_t val = pmdp_get(pmd);

	if (!pmd_present(val) || !pmd_leaf(val))
		return 0;	/* a table: its PTEs, or nothing */
	/* Not down to PTEs, which would split the huge PMD. */
	walk->action = ACTION_CONTINUE;
	return pd_range_leaf(walk, addr, next, pmd_pfn(val), PMD_SIZE, "pmd");
}

static int pd_range_pte(pte_t *pte, unsigned long addr, unsigned long next,
			struct mm_walk *walk)
{
	pte_t val = ptep_get(pte);

	if (!pte_present(val))
		return 0;
	return pd_range_leaf(walk, addr, next, pte_pfn(val), PAGE_SIZE, "pte");
}

#ifdef CONFIG_HUGETLB_PAGE
static int pd_range_hugetlb(pte_t *pte, unsigned long hmask,
			    unsigned long addr, unsigned long next,
			    struct mm_walk *walk)
{
	pte_t val = huge_ptep_get(walk->mm, addr, pte);

	if (!pte_present(val))
		return 0;
	return pd_range_leaf(walk, addr, next, pte_pfn(val), ~hmask + 1,
			     "hugetlb");
}
#else
#define pd_range_hugetlb NULL
#endif

static const struct mm_walk_ops pd_range_ops = {
	.pud_entry	= pd_range_pud,
	.pmd_entry	= pd_range_pmd,
	.pte_entry	= pd_range_pte,
	.hugetlb_entry	= pd_range_hugetlb,
	.test_walk	= pd_walk_every_vma,
	.walk_lock	= PGWALK_RDLOCK,
};

/**
 * pd_virt_user_range - what the process with PID @nr maps in a range
 * @q: the query
 * @nr: a PID of the initial PID namespace
 * @start: the first page-aligned user address
 * @end: the address after the last, at most TASK_SIZE_MAX
 * @found: called for each run of pages that a leaf maps there, with @arg,
 *	its first address and page, its pages and its level; an error it
 *	returns ends the walk
 * @arg: for @found
 *
 * The mmap lock is held for one PMD's range of one VMA at a time, as the
 * scan holds it for a bounded time; gaps between VMAs cost nothing.  Might
 * sleep.
 *
 * Return: 0, @found's error, -ESRCH if there is no such process or it is
 * exiting, -EINVAL if it is a kernel thread, -EINTR on a fatal signal.
 */
int pd_virt_user_range(struct pd_query *q, pid_t nr, unsigned long start,
		       unsigned long end,
		       int (*found)(void *arg, unsigned long addr,
				    unsigned long pfn, unsigned long nr,
				    const char *level),
		       void *arg)
{
	struct pd_range_walk rw = { .q = q, .found = found, .arg = arg };
	struct vm_area_struct *vma;
	char comm[PD_COMM_LEN];
	struct mm_struct *mm;
	unsigned long addr, next;
	int err = 0;

	mm = pd_virt_mm(q, nr, comm);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	seq_buf_printf(&q->s, "virt: pid %d (%s) vaddr %#lx-%#lx\n", nr, comm,
		       start, end - 1);
	for (addr = start; !err && addr < end; addr = next) {
		if (mmap_read_lock_killable(mm)) {
			err = -EINTR;
			break;
		}
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start >= end) {
			mmap_read_unlock(mm);
			break;
		}
		addr = max(addr, vma->vm_start);
		next = min(pmd_addr_end(addr, end), vma->vm_end);
		err = walk_page_range(mm, addr, next, &pd_range_ops, &rw);
		mmap_read_unlock(mm);
		cond_resched();
		if (!err && fatal_signal_pending(current))
			err = -EINTR;
	}
	mmput(mm);
	return err;
}
