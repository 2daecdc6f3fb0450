// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page Detective's corruption injector, for its selftests only: it corrupts
 * the page tables and page counts of the process that asks, the way a real
 * bug would, so that the tests can check what Page Detective says about it.
 *
 * A process writes one command to /sys/kernel/debug/page_detective_inject/corrupt;
 * every address is in its own address space, and only pages it maps itself
 * are touched:
 *
 *   stray SRC DST   map at DST the page that SRC maps, by a raw
 *                   page-table write: no rmap, mapcount, refcount, RSS or
 *                   page_table_check accounting.  DST's PTE must be none, in
 *                   a PTE table that exists (none is allocated), inside a VMA
 *                   or in a gap beside one that shares its PMD, where fork
 *                   does not copy it unseen (see pdi_forked_unseen()).  The
 *                   VMA must stay so until undo: a guard region installed
 *                   in it, or userfaultfd write-protection registered over
 *                   it, after the corruption, would let a fork copy it.
 *   stale SRC DST   the same, of an order-0 page, but the stray mapping
 *                   outlives SRC's: once SRC is unmapped, the page is
 *                   freed and reused while DST still maps it, the classic
 *                   use-after-free.  Read only, and DST must be in a VMA
 *                   that nothing can write (a shared mapping of a file
 *                   opened read-only): no write, not even a FOLL_FORCE
 *                   one, may reach the page's new owner or make the fault
 *                   path take it for DST's.
 *   lost ADDR       clear the present PTE at ADDR and nothing else; the
 *                   entry holds a poison marker meanwhile (as UFFDIO_POISON
 *                   leaves), so that a touch is a SIGBUS instead of a fault
 *                   that maps a new page over the lost one's counts.
 *   mapcount ADDR   raise the mapcount of the order-0 page ADDR maps by one.
 *   mm_id ADDR      in the per-mm mapcounts of the large folio ADDR maps
 *                   (CONFIG_MM_ID), count one of this mm's mappings against
 *                   the other mm it counts: its mapcount stays right, one
 *                   mm's count is one short, the other's one over.  This mm
 *                   must map it at least twice, in one piece around ADDR.
 *                   Undone only by this mm's invalidations: the other mm
 *                   must keep its mappings until undo.
 *   ref ADDR        take a reference on the folio ADDR maps, accounted
 *                   nowhere.
 *   lock ADDR       hold the lock of the folio ADDR maps, as reclaim,
 *                   migration or writeback holds it, until undo or for
 *                   10 seconds, whichever comes first: not a corruption, a
 *                   busy page, which the walk of the reverse map must give
 *                   up on.  Bounded, because whoever else needs the lock
 *                   (writeback, truncation, the holder's own write()) waits
 *                   for it unkillably.
 *   undo            undo every corruption of this mm, newest first.
 *
 * Errors: -EINVAL for a malformed command, an address not page aligned or
 * not a user one, or a writer without an address space of its own; -ENXIO
 * when an address maps no such page; -EEXIST when DST is not none; -EACCES
 * when a stale DST could be written, or fork would copy DST's entry without
 * telling this module; -ENOENT
 * when no PTE table holds DST, or undo finds nothing to undo; -EOPNOTSUPP
 * for mm_id without CONFIG_MM_ID; -EBUSY when the page is locked, by an
 * rmap walk that may be unmapping it; -ENOSPC past 1024 corruptions.
 *
 * Every corruption is recorded so that it can be undone, and an mmu notifier
 * makes sure that it is, before the kernel itself could trip over it: its
 * invalidate_range_start() undoes the corruptions in the range about to be
 * unmapped, changed or migrated, and its release(), at the start of
 * exit_mmap(), whatever is left.  Unloading the module undoes everything.
 *
 * Never enable this outside a test kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/pgtable.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <asm/tlbflush.h>

/* The longest command: "stray " and two 64-bit hexadecimal addresses. */
#define PDI_CMD_MAX	64
/* Corruptions an mm may have at once, so that no test can exhaust memory. */
#define PDI_MAX_RECORDS	1024
/* Invalidations of one mm in flight at once that the injector tracks. */
#define PDI_INVALIDATING_MAX	64
/* The longest that lock holds a folio's lock. */
#define PDI_LOCK_MAX		(10 * HZ)

enum pdi_kind {
	PDI_STRAY,
	PDI_STALE,
	PDI_LOST,
	PDI_MAPCOUNT,
	PDI_REF,
	PDI_MM_ID,
	PDI_LOCK,
};

static const char * const pdi_kind_names[] = {
	[PDI_STRAY]	= "stray",
	[PDI_STALE]	= "stale",
	[PDI_LOST]	= "lost",
	[PDI_MAPCOUNT]	= "mapcount",
	[PDI_REF]	= "ref",
	[PDI_MM_ID]	= "mm_id",
	[PDI_LOCK]	= "lock",
};

/* One corruption, and what it takes to undo it. */
struct pdi_record {
	struct list_head node;		/* in pdi_mm.records, newest first */
	enum pdi_kind kind;
	unsigned long addr;		/* the PTE or page corrupted (stray: DST) */
	unsigned long src;		/* SRC; mm_id: its folio's start */
	pte_t pte;			/* lost: the PTE cleared; stray: the one set */
	struct page *page;		/* the page it is about */
	unsigned int other_mm_id;	/* mm_id: the mm counted one over */
	unsigned long expires;		/* lock: when it is let go, in jiffies */
};

/*
 * The corruptions of one mm.  The mmu notifier is this module's subscription
 * to the mm (mmu_notifier_get() finds it again), which holds a reference to
 * the mm_struct (not to the address space) until it is freed.
 */
struct pdi_mm {
	struct mmu_notifier mn;
	struct list_head node;		/* in pdi_mms, while @listed */
	bool listed;			/* under pdi_lock */
	/*
	 * Serialises the records and every PTE write of this module to the mm,
	 * and orders them against the notifier's callbacks.  A spinlock: an
	 * invalidation that cannot block (the OOM reaper's) must still undo
	 * what it covers, and may not fail, having an invalidate_range_end().
	 */
	spinlock_t lock;
	struct list_head records;
	unsigned int nr_records;
	bool dead;			/* released: corrupt nothing more */
	/*
	 * The invalidations started and not ended, by their ranges, so that
	 * an end is only ever matched with its own start.  None can span the
	 * subscription: mmu_notifier_get() registers under mm_take_all_locks(),
	 * which write-locks every VMA and takes every rmap lock of the mm,
	 * under the mmap lock held for write: whatever an invalidator holds.
	 * An end never started here is warned about (see
	 * pdi_invalidate_range_end()).  More at once than there is room for,
	 * and no new corruption is ever made in this mm.
	 */
	const struct mmu_notifier_range *invalidating[PDI_INVALIDATING_MAX];
	unsigned int nr_invalidating;
	bool invalidating_overflow;
	wait_queue_head_t idle;		/* waits for nr_invalidating == 0 */
	struct delayed_work lock_expiry;	/* lets go of expired locks */
};

/* Every pdi_mm that still holds its subscription, for the module's exit. */
static LIST_HEAD(pdi_mms);
static DEFINE_MUTEX(pdi_lock);
static struct dentry *pdi_dir;

/* ---- Page tables ---------------------------------------------------------- */

/*
 * The PMD entry of @addr in @mm, or NULL when an upper level maps nothing
 * there.  Nothing is allocated; pte_offset_map_lock() then tells whether it
 * points to a PTE table, under that table's lock.  The caller keeps the
 * upper tables alive: by the mmap lock and a VMA sharing @addr's PMD, or, in
 * an invalidation, by what the invalidator holds.
 */
static pmd_t *pdi_pmd(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud, pudval;

	pgd = pgd_offset(mm, addr);
	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	pudval = READ_ONCE(*pud);
	if (pud_none(pudval) || !pud_present(pudval) || pud_leaf(pudval) ||
	    pud_bad(pudval))
		return NULL;
	return pmd_offset(pud, addr);
}

/*
 * The page that @pte of @vma at @addr maps if it is present and maps a
 * normal refcounted page (vm_normal_page(): not the zero page nor a PFN
 * map), else NULL.
 */
static struct page *pdi_page(struct vm_area_struct *vma, unsigned long addr,
			     pte_t pte)
{
	return pte_present(pte) ? vm_normal_page(vma, addr, pte) : NULL;
}

/*
 * What a lost PTE holds until it is undone: a fault on a poison marker is a
 * SIGBUS (VM_FAULT_HWPOISON), where one on a none entry would map a new
 * page, with no invalidation to tell this module, over a mapping whose
 * mapcount, reference and RSS the old page still counts.  Fork copies the
 * marker, zap and the rest of the kernel know it, and nothing takes it
 * away without an invalidation first (userspace has no call for it).
 */
static pte_t pdi_lost_marker(void)
{
	return make_pte_marker(PTE_MARKER_POISONED);
}

/* ---- Undo ----------------------------------------------------------------- */

#ifdef CONFIG_X86
static void pdi_flush_tlb_local(void *unused)
{
	__flush_tlb_all();
}

/*
 * flush_tlb_all(), from what x86 gives modules: its TLB flush internals,
 * flush_tlb_mm_range() among them, are hidden from modules on purpose,
 * and undoing a stray that was used is rare enough to flush everything.
 * __flush_tlb_all() flushes every PCID (PGE) or there are none (!PGE).
 */
static void pdi_flush_tlb_all(void)
{
	on_each_cpu(pdi_flush_tlb_local, NULL, 1);
}

/*
 * ptep_get_and_clear() without page_table_check, which never counted the
 * entry (a stray), or must go on counting it (a lost one): one exchange,
 * so that an accessed or dirty bit the CPU sets meanwhile is seen.
 */
static pte_t pdi_ptep_get_and_clear(struct mm_struct *mm, unsigned long addr,
				    pte_t *pte)
{
	return native_ptep_get_and_clear(pte);
}
#else /* CONFIG_ARM64 */
/* arm64's broadcast invalidation of every ASID is inline, modules have it. */
static void pdi_flush_tlb_all(void)
{
	flush_tlb_all();
}

/*
 * As x86's, by arm64's own exchange.  An entry of a contiguous block
 * (contpte) is first unfolded into single entries, as the kernel's
 * ptep_get_and_clear() does: a block with a hole would misprogram the
 * contiguous hint.  The unfold itself keeps every entry's page and its
 * accounting, and flushes the block from the TLB.
 */
static pte_t pdi_ptep_get_and_clear(struct mm_struct *mm, unsigned long addr,
				    pte_t *pte)
{
#ifdef CONFIG_ARM64_CONTPTE
	contpte_try_unfold(mm, addr, pte, __ptep_get(pte));
#endif
	return __pte(xchg_relaxed(&pte_val(*pte), 0));
}
#endif

/* Undo a stray or a lost PTE. */
static void pdi_undo_pte(struct mm_struct *mm, struct pdi_record *rec)
{
	const char *why = NULL;
	bool flush = false;
	spinlock_t *ptl;		/* the PTE table's */
	pte_t *pte, cur, old;
	pmd_t *pmd;

	pmd = pdi_pmd(mm, rec->addr);
	if (!pmd)
		goto gone;
	pte = pte_offset_map_lock(mm, pmd, rec->addr, &ptl);
	if (!pte)
		goto gone;
	cur = ptep_get(pte);
	if (rec->kind == PDI_LOST) {
		/*
		 * The entry goes back as it was, with the accounting it never
		 * lost.  No TLB flush: no CPU caches a translation of an
		 * entry that is not valid, so none can be stale.  Nothing but an
		 * invalidation, which comes here first, takes a poison marker
		 * away: "replaced" would say that something did.
		 */
		if (pte_same(cur, pdi_lost_marker()) || pte_none(cur))
			set_pte(pte, rec->pte);
		else
			why = "replaced meanwhile";
	} else if (pte_present(cur) && pte_pfn(cur) == pte_pfn(rec->pte)) {
		old = pdi_ptep_get_and_clear(mm, rec->addr, pte);
		/*
		 * Writes through the stray mapping dirtied the page: as zap.
		 * Not a stale one's: that page is someone else's now.
		 */
		if (pte_dirty(old) && rec->kind == PDI_STRAY)
			folio_mark_dirty(page_folio(rec->page));
		/*
		 * Nothing but this module knew of the mapping, and nothing
		 * else will flush it: a CPU may still hold it in its TLB and
		 * reach the page after it is freed.  A translation is cached
		 * only once the accessed bit is set (x86's walker sets it
		 * first, as does arm64's hardware access flag; without it,
		 * arm64 faults instead), so an entry never accessed is in no
		 * TLB.
		 */
		flush = pte_young(old);
	} else {
		why = "replaced meanwhile";
	}
	pte_unmap_unlock(pte, ptl);
	if (flush)
		pdi_flush_tlb_all();
	if (why)
		pr_info("%s at %#lx: %s, not undone\n",
			pdi_kind_names[rec->kind], rec->addr, why);
	return;
gone:
	pr_info("%s at %#lx: no page table left, not undone\n",
		pdi_kind_names[rec->kind], rec->addr);
}

#ifdef CONFIG_MM_ID
/* The slot of @folio's per-mm mapcounts that counts @id, or -1. */
static int pdi_mm_id_slot(struct folio *folio, unsigned int id)
{
	if (folio_mm_id(folio, 0) == id)
		return 0;
	return folio_mm_id(folio, 1) == id ? 1 : -1;
}

/*
 * Count one more mapping in slot @to and one fewer in slot @from, as the
 * rmap code would: a slot whose count falls below zero is freed.
 */
static void pdi_move_mm_id_count(struct folio *folio, int from, int to)
{
	folio->_mm_id_mapcount[to]++;
	if (--folio->_mm_id_mapcount[from] < 0) {
		folio->_mm_id_mapcount[from] = -1;
		folio_set_mm_id(folio, from, MM_ID_DUMMY);
	}
}

static int pdi_skew_mm_id(struct mm_struct *mm, struct pdi_record *rec,
			  struct folio *folio)
{
	int mine, other, ret = -ENXIO;

	if (!folio_test_large(folio) || folio_test_hugetlb(folio))
		return -ENXIO;
	folio_lock_large_mapcount(folio);
	mine = pdi_mm_id_slot(folio, mm->mm_id);
	other = !mine;
	/*
	 * A count is the number of mappings less one: keep ours above zero.
	 * Neither count can then reach the folio's own, so the folio is never
	 * taken for mapped by one mm alone (and reused on a write fault).
	 */
	if (mine >= 0 && folio_mm_id(folio, other) != MM_ID_DUMMY &&
	    folio->_mm_id_mapcount[mine] >= 1) {
		rec->other_mm_id = folio_mm_id(folio, other);
		rec->src = rec->addr - folio_page_idx(folio, rec->page) * PAGE_SIZE;
		pdi_move_mm_id_count(folio, mine, other);
		ret = 0;
	}
	folio_unlock_large_mapcount(folio);
	return ret;
}

/*
 * Give this mm its mapping back.  The other mm may have unmapped the folio
 * meanwhile, its count over by one then: the move frees its slot.
 */
static void pdi_undo_mm_id(struct mm_struct *mm, struct pdi_record *rec)
{
	struct folio *folio = page_folio(rec->page);
	int mine, other;

	folio_lock_large_mapcount(folio);
	mine = pdi_mm_id_slot(folio, mm->mm_id);
	other = pdi_mm_id_slot(folio, rec->other_mm_id);
	if (mine >= 0 && other >= 0)
		pdi_move_mm_id_count(folio, other, mine);
	folio_unlock_large_mapcount(folio);
	if (mine < 0 || other < 0)
		pr_info("mm_id at %#lx: an mm's count is gone, not undone\n",
			rec->addr);
}
#else
static int pdi_skew_mm_id(struct mm_struct *mm, struct pdi_record *rec,
			  struct folio *folio)
{
	return -EOPNOTSUPP;
}

static void pdi_undo_mm_id(struct mm_struct *mm, struct pdi_record *rec)
{
}
#endif

/* Undo @rec and forget it.  pdi_mm.lock held: nothing here may sleep. */
static void pdi_undo_one(struct pdi_mm *pm, struct pdi_record *rec)
{
	struct mm_struct *mm = pm->mn.mm;

	switch (rec->kind) {
	case PDI_STRAY:
	case PDI_STALE:
	case PDI_LOST:
		pdi_undo_pte(mm, rec);
		break;
	case PDI_MAPCOUNT:
		atomic_dec(&rec->page->_mapcount);
		break;
	case PDI_REF:
		folio_put(page_folio(rec->page));
		break;
	case PDI_MM_ID:
		pdi_undo_mm_id(mm, rec);
		break;
	case PDI_LOCK:
		folio_unlock(page_folio(rec->page));
		folio_put(page_folio(rec->page));
		break;
	}
	list_del(&rec->node);
	pm->nr_records--;
	kfree(rec);
}

/* Undo every corruption of @pm, newest first; how many.  pdi_mm.lock held. */
static unsigned int pdi_undo_all(struct pdi_mm *pm)
{
	struct pdi_record *rec, *next;
	unsigned int nr = 0;

	list_for_each_entry_safe(rec, next, &pm->records, node) {
		pdi_undo_one(pm, rec);
		nr++;
	}
	return nr;
}

/* Let go of each folio lock held past PDI_LOCK_MAX; wait for the next one. */
static void pdi_lock_expire(struct work_struct *work)
{
	struct pdi_mm *pm = container_of(to_delayed_work(work), struct pdi_mm,
					 lock_expiry);
	struct pdi_record *rec, *next;
	unsigned long first = 0;
	bool held = false;

	spin_lock(&pm->lock);
	list_for_each_entry_safe(rec, next, &pm->records, node) {
		if (rec->kind != PDI_LOCK)
			continue;
		if (time_after_eq(jiffies, rec->expires)) {
			pr_info("lock at %#lx: held for %u s, let go\n",
				rec->addr, PDI_LOCK_MAX / HZ);
			pdi_undo_one(pm, rec);
			continue;
		}
		if (!held || time_before(rec->expires, first))
			first = rec->expires;
		held = true;
	}
	if (held)
		schedule_delayed_work(&pm->lock_expiry, first - jiffies);
	spin_unlock(&pm->lock);
}

/*
 * Whether an invalidation of [@start, @end) must undo @rec first: it is
 * about to unmap, move or change what @rec corrupted.  A stray is undone also
 * when SRC is invalidated, whose unmapping could free the page under it (a
 * stale one is not: that is what it is for), and a stray or stale one when
 * anything in its PMD is: that can free or move the PTE table it lies in,
 * even when it is in a gap that no invalidation covers.  A skewed per-mm
 * count is undone when any of its folio is: this mm's count goes down with
 * each of its mappings.
 */
static bool pdi_affected(struct pdi_record *rec, unsigned long start,
			 unsigned long end)
{
	unsigned long pmd = rec->addr & PMD_MASK;

	if (rec->addr >= start && rec->addr < end)
		return true;
	if (rec->kind == PDI_MM_ID)
		return rec->src < end &&
		       rec->src + folio_size(page_folio(rec->page)) > start;
	if (rec->kind != PDI_STRAY && rec->kind != PDI_STALE)
		return false;
	if (rec->kind == PDI_STRAY && rec->src >= start && rec->src < end)
		return true;
	return pmd < end && pmd + PMD_SIZE > start;
}

/* ---- The mmu notifier ------------------------------------------------------ */

static struct pdi_mm *pdi_mm_of(struct mmu_notifier *mn)
{
	return container_of(mn, struct pdi_mm, mn);
}

/*
 * Called before the kernel unmaps, moves, migrates or changes the
 * protection of [range->start, range->end): put back what it would otherwise
 * find corrupted.  The invalidator holds what keeps these page tables (the
 * mmap lock, the VMA's lock or its rmap lock) and may hold the mmap lock for
 * write: the mmap lock is not taken here, only each PTE table's lock.
 */
static int pdi_invalidate_range_start(struct mmu_notifier *mn,
				      const struct mmu_notifier_range *range)
{
	struct pdi_mm *pm = pdi_mm_of(mn);
	struct pdi_record *rec, *next;

	spin_lock(&pm->lock);
	list_for_each_entry_safe(rec, next, &pm->records, node)
		if (pdi_affected(rec, range->start, range->end))
			pdi_undo_one(pm, rec);
	/* No new corruption until the range is done with: see pdi_corrupt(). */
	if (pm->nr_invalidating < PDI_INVALIDATING_MAX)
		pm->invalidating[pm->nr_invalidating++] = range;
	else
		pm->invalidating_overflow = true;
	spin_unlock(&pm->lock);
	return 0;
}

static void pdi_invalidate_range_end(struct mmu_notifier *mn,
				     const struct mmu_notifier_range *range)
{
	struct pdi_mm *pm = pdi_mm_of(mn);
	bool idle = false, seen = false;
	unsigned int i;

	/* Only the end of a start seen here: the same range, by address. */
	spin_lock(&pm->lock);
	for (i = 0; i < pm->nr_invalidating; i++) {
		if (pm->invalidating[i] != range)
			continue;
		pm->invalidating[i] = pm->invalidating[--pm->nr_invalidating];
		idle = !pm->nr_invalidating;
		seen = true;
		break;
	}
	/*
	 * A start not seen, with room to record it, would be one made before
	 * the subscription, which mm_take_all_locks() rules out: the
	 * injector's tests would be running on a kernel whose rules it does
	 * not know, so say so loudly.
	 */
	WARN_ONCE(!seen && !pm->invalidating_overflow,
		  "an invalidation ended whose start this subscription did not see\n");
	spin_unlock(&pm->lock);
	if (idle)
		wake_up_all(&pm->idle);
}

/*
 * The mm's last user is gone: exit_mmap() calls this before it unmaps
 * anything.  Undo what is left, and let go of the subscription.
 */
static void pdi_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct pdi_mm *pm = pdi_mm_of(mn);
	unsigned int nr;
	bool put;

	mmap_read_lock(mm);
	spin_lock(&pm->lock);
	nr = pdi_undo_all(pm);
	pm->dead = true;
	spin_unlock(&pm->lock);
	mmap_read_unlock(mm);
	/* Dead: nothing schedules it again. */
	cancel_delayed_work_sync(&pm->lock_expiry);
	if (nr)
		pr_info("undid %u corruptions of an exiting process\n", nr);

	mutex_lock(&pdi_lock);
	put = pm->listed;
	if (put)
		list_del(&pm->node);
	pm->listed = false;
	mutex_unlock(&pdi_lock);
	if (put)
		mmu_notifier_put(mn);
}

static struct mmu_notifier *pdi_alloc_notifier(struct mm_struct *mm)
{
	struct pdi_mm *pm = kzalloc_obj(*pm, GFP_KERNEL);

	if (!pm)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&pm->lock);
	INIT_LIST_HEAD(&pm->records);
	INIT_LIST_HEAD(&pm->node);
	init_waitqueue_head(&pm->idle);
	INIT_DELAYED_WORK(&pm->lock_expiry, pdi_lock_expire);
	return &pm->mn;
}

static void pdi_free_notifier(struct mmu_notifier *mn)
{
	struct pdi_mm *pm = pdi_mm_of(mn);

	kfree(pm);
}

static const struct mmu_notifier_ops pdi_mn_ops = {
	.release		= pdi_release,
	.invalidate_range_start	= pdi_invalidate_range_start,
	.invalidate_range_end	= pdi_invalidate_range_end,
	.alloc_notifier		= pdi_alloc_notifier,
	.free_notifier		= pdi_free_notifier,
};

/* The pdi_mm of @mm, subscribing to it the first time. */
static struct pdi_mm *pdi_mm_get(struct mm_struct *mm)
{
	struct mmu_notifier *mn = mmu_notifier_get(&pdi_mn_ops, mm);
	struct pdi_mm *pm;
	bool extra;

	if (IS_ERR(mn))
		return ERR_CAST(mn);
	pm = pdi_mm_of(mn);
	/* pdi_mms holds one reference to each subscription: drop any other. */
	mutex_lock(&pdi_lock);
	extra = pm->listed;
	if (!extra) {
		list_add(&pm->node, &pdi_mms);
		pm->listed = true;
	}
	mutex_unlock(&pdi_lock);
	if (extra)
		mmu_notifier_put(mn);
	return pm;
}

/* The pdi_mm of @mm if it has one: for undo, which must not subscribe. */
static struct pdi_mm *pdi_mm_find(struct mm_struct *mm)
{
	struct pdi_mm *pm, *found = NULL;

	mutex_lock(&pdi_lock);
	list_for_each_entry(pm, &pdi_mms, node) {
		if (pm->mn.mm == mm) {
			found = pm;
			break;
		}
	}
	mutex_unlock(&pdi_lock);
	return found;
}

/* ---- Corruptions ------------------------------------------------------------ */

/*
 * Lock the folio about to be corrupted, or -EBUSY.  An rmap walk that
 * unmaps it (reclaim, migration, split) holds its lock from before its
 * invalidation until after it, and may have started it before this module
 * subscribed to the mm, so that pm->invalidating does not show it.
 */
static int pdi_folio_trylock(struct folio *folio)
{
	return folio_trylock(folio) ? 0 : -EBUSY;
}

/*
 * Whether nothing can write through a PTE of @vma: not the CPU (read-only
 * PTE), not a fault (no VM_WRITE), not mprotect() or a FOLL_FORCE write
 * (no VM_MAYWRITE, which only a shared mapping of a file opened read-only
 * lacks).  A stale PTE maps a page that belongs to someone else by now: a
 * write fault on it would take that page for this VMA's (copy on write,
 * page_mkwrite) and unmap it from its owner's counts.  Outside every VMA
 * (@vma NULL) a mapping could be made later, over it, with no invalidation.
 */
static bool pdi_never_written(struct vm_area_struct *vma)
{
	return vma && !(vma->vm_flags & (VM_WRITE | VM_MAYWRITE));
}

/*
 * Whether fork would copy @vma's page tables without an invalidation of
 * this mm: copy_page_range() starts one, which undoes the strays and stale
 * entries in the VMA first, only for a copy-on-write mapping.  A shared one
 * that vma_needs_copy() copies anyway (userfaultfd write-protect, a guard
 * region, a PFN map) is copied with its corrupted entries: the child would
 * take a reference on a page that is not its own, and, for a stale entry,
 * on a page in the buddy allocator, which its exit would free again.
 * Outside every VMA (@vma NULL) nothing is copied.
 */
static bool pdi_forked_unseen(struct vm_area_struct *vma)
{
	if (!vma || is_cow_mapping(vma->vm_flags) ||
	    (vma->vm_flags & VM_DONTCOPY))
		return false;
	return (vma->vm_flags & VM_COPY_ON_FORK) || vma->anon_vma;
}

/*
 * Each one is called with the mmap lock held for read and pm->lock, and
 * fills @rec on success.
 */

static int pdi_stray(struct mm_struct *mm, struct pdi_record *rec)
{
	struct vm_area_struct *vma = vma_lookup(mm, rec->src), *dst_vma;
	unsigned long dst_pmd = rec->addr & PMD_MASK;
	spinlock_t *ptl;		/* the PTE table's */
	struct folio *folio;
	struct page *page;
	pte_t *pte, val;
	pmd_t *pmd;
	int ret = -ENXIO;

	if (!vma)
		return -ENXIO;
	pmd = pdi_pmd(mm, rec->src);
	if (!pmd)
		return -ENXIO;
	pte = pte_offset_map_lock(mm, pmd, rec->src, &ptl);
	if (!pte)
		return -ENXIO;
	val = ptep_get(pte);
	page = pdi_page(vma, rec->src, val);
	/*
	 * A stray may map a page of a large folio (of a contiguous block, on
	 * arm64): whatever unmaps that page at SRC, or splits or migrates its
	 * folio, invalidates SRC first, which undoes the stray.  A stale one
	 * maps an order-0 page, which is freed and reused whole.
	 */
	if (page && (rec->kind == PDI_STRAY || !folio_test_large(page_folio(page))))
		ret = pdi_folio_trylock(page_folio(page));
	pte_unmap_unlock(pte, ptl);
	if (ret)
		return ret;
	/*
	 * The page stays mapped at SRC while pm->lock is held: its unmapping
	 * would start with an invalidation, which waits for pm->lock and then
	 * undoes the stray.
	 */
	folio = page_folio(page);

	/*
	 * A PTE table that no VMA's PMD covers could be freed under the mmap
	 * read lock, by an munmap that downgraded it; one that a VMA shares is
	 * not freed before that VMA goes.
	 */
	ret = -ENOENT;
	if (!find_vma_intersection(mm, dst_pmd, dst_pmd + PMD_SIZE))
		goto out;
	dst_vma = vma_lookup(mm, rec->addr);
	if ((rec->kind == PDI_STALE && !pdi_never_written(dst_vma)) ||
	    pdi_forked_unseen(dst_vma)) {
		ret = -EACCES;
		goto out;
	}
	pmd = pdi_pmd(mm, rec->addr);
	if (!pmd)
		goto out;
	pte = pte_offset_map_lock(mm, pmd, rec->addr, &ptl);
	if (!pte)
		goto out;
	ret = -EEXIST;
	if (pte_none(ptep_get(pte))) {
		/*
		 * A raw write, the way a bug makes one: set_pte() and not
		 * set_pte_at(), which would tell page_table_check; no rmap,
		 * mapcount, refcount or RSS.  Old and clean, so that writes
		 * are seen (dirty) and an entry never used needs no TLB flush
		 * when it is undone.  No flush now: no CPU caches a
		 * translation of a none entry.
		 */
		rec->pte = pte_mkold(pte_mkclean(val));
		if (rec->kind == PDI_STALE)
			rec->pte = pte_wrprotect(rec->pte);
		rec->page = page;
		set_pte(pte, rec->pte);
		ret = 0;
	}
	pte_unmap_unlock(pte, ptl);
out:
	folio_unlock(folio);
	return ret;
}

/*
 * lost, mapcount, ref, mm_id and lock: the page the present PTE at
 * rec->addr maps.
 */
static int pdi_corrupt_page(struct mm_struct *mm, struct pdi_record *rec)
{
	struct vm_area_struct *vma = vma_lookup(mm, rec->addr);
	spinlock_t *ptl;		/* the PTE table's */
	struct folio *folio;
	struct page *page;
	pmd_t *pmd;
	pte_t *pte;
	int ret = -ENXIO;

	if (!vma)
		return -ENXIO;
	pmd = pdi_pmd(mm, rec->addr);
	if (!pmd)
		return -ENXIO;
	pte = pte_offset_map_lock(mm, pmd, rec->addr, &ptl);
	if (!pte)
		return -ENXIO;
	page = pdi_page(vma, rec->addr, ptep_get(pte));
	if (!page)
		goto unlock;
	folio = page_folio(page);
	rec->page = page;
	switch (rec->kind) {
	case PDI_REF:
		/* Mapped, under the PTE lock: the folio holds a reference already. */
		folio_get(folio);
		ret = 0;
		break;
	case PDI_MM_ID:
		ret = pdi_skew_mm_id(mm, rec, folio);
		break;
	case PDI_LOCK:
		/*
		 * Held past this call, with a reference, until undo, or until
		 * an invalidation of ADDR, which comes before the folio is
		 * unmapped there (and before its reference could be the last).
		 */
		ret = pdi_folio_trylock(folio);
		if (!ret)
			folio_get(folio);
		break;
	case PDI_MAPCOUNT:
		/* A large folio counts its mappings elsewhere too. */
		if (folio_test_large(folio))
			break;
		ret = pdi_folio_trylock(folio);
		if (ret)
			break;
		atomic_inc(&page->_mapcount);
		folio_unlock(folio);
		break;
	case PDI_LOST:
		ret = pdi_folio_trylock(folio);
		if (ret)
			break;
		/*
		 * pte_clear(), reading the entry in the same exchange so that
		 * an accessed or dirty bit the CPU sets meanwhile is kept for
		 * the undo, then the marker, under the same lock.  Unlike
		 * ptep_get_and_clear(), page_table_check is not told: the
		 * accounting is left as the mapping had it.  The TLB is
		 * flushed after: the page stays allocated and counted as mapped
		 * here, so a stale TLB entry could reach only the page it
		 * mapped, but until it goes a touch reads that page instead of
		 * taking the marker's SIGBUS.
		 */
		rec->pte = pdi_ptep_get_and_clear(mm, rec->addr, pte);
		set_pte(pte, pdi_lost_marker());
		folio_unlock(folio);
		break;
	default:
		break;
	}
unlock:
	pte_unmap_unlock(pte, ptl);
	if (!ret && rec->kind == PDI_LOST)
		pdi_flush_tlb_all();
	return ret;
}

static int pdi_corrupt(struct mm_struct *mm, struct pdi_record *rec)
{
	struct pdi_mm *pm;
	int ret;

	pm = pdi_mm_get(mm);
	if (IS_ERR(pm))
		return PTR_ERR(pm);
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	/*
	 * Corrupt nothing while an invalidation is in flight: one that started
	 * before has undone nothing of it, and may be about to zap the very
	 * entry corrupted (MADV_DONTNEED holds the mmap lock only for read).
	 * Any later one starts after pm->lock is let go, and undoes it first.
	 */
	for (;;) {
		spin_lock(&pm->lock);
		if (!READ_ONCE(pm->nr_invalidating))
			break;
		spin_unlock(&pm->lock);
		if (wait_event_killable(pm->idle, !READ_ONCE(pm->nr_invalidating))) {
			mmap_read_unlock(mm);
			return -EINTR;
		}
	}
	if (pm->invalidating_overflow)
		ret = -EBUSY;
	else if (pm->dead || pm->nr_records >= PDI_MAX_RECORDS)
		ret = -ENOSPC;
	else if (rec->kind == PDI_STRAY || rec->kind == PDI_STALE)
		ret = pdi_stray(mm, rec);
	else
		ret = pdi_corrupt_page(mm, rec);
	if (!ret) {
		list_add(&rec->node, &pm->records);
		pm->nr_records++;
	}
	if (!ret && rec->kind == PDI_LOCK) {
		rec->expires = jiffies + PDI_LOCK_MAX;
		/* If it is pending already, for an older lock, that one goes first. */
		schedule_delayed_work(&pm->lock_expiry, PDI_LOCK_MAX);
	}
	spin_unlock(&pm->lock);
	mmap_read_unlock(mm);
	return ret;
}

static int pdi_undo(struct mm_struct *mm)
{
	struct pdi_mm *pm = pdi_mm_find(mm);
	unsigned int nr;

	if (!pm)
		return -ENOENT;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	spin_lock(&pm->lock);
	nr = pdi_undo_all(pm);
	spin_unlock(&pm->lock);
	mmap_read_unlock(mm);
	return nr ? 0 : -ENOENT;
}

/* ---- The debugfs file ---------------------------------------------------------- */

/* The next word of *@cur, NUL-terminated; "" at the end. */
static char *pdi_next_word(char **cur)
{
	char *word = skip_spaces(*cur), *end = word;

	while (*end && !isspace(*end))
		end++;
	*cur = *end ? end + 1 : end;
	*end = '\0';
	return word;
}

/* A user address: decimal or 0x-hexadecimal, page aligned, below TASK_SIZE. */
static int pdi_parse_addr(char **cur, unsigned long *addr)
{
	char *word = pdi_next_word(cur);

	if (!isdigit(*word) ||
	    kstrtoul(word, word[0] == '0' && tolower(word[1]) == 'x' ? 16 : 10,
		     addr))
		return -EINVAL;
	if (!PAGE_ALIGNED(*addr) || *addr >= TASK_SIZE)
		return -EINVAL;
	return 0;
}

static int pdi_command(char *input, struct mm_struct *mm)
{
	struct pdi_record *rec;
	char *word = pdi_next_word(&input);
	int kind, ret;

	if (!strcmp(word, "undo"))
		return *pdi_next_word(&input) ? -EINVAL : pdi_undo(mm);
	kind = match_string(pdi_kind_names, ARRAY_SIZE(pdi_kind_names), word);
	if (kind < 0)
		return -EINVAL;

	rec = kzalloc_obj(*rec, GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	rec->kind = kind;
	if (kind == PDI_STRAY || kind == PDI_STALE)
		ret = pdi_parse_addr(&input, &rec->src);
	else
		ret = 0;
	if (!ret)
		ret = pdi_parse_addr(&input, &rec->addr);
	if (!ret && *pdi_next_word(&input))
		ret = -EINVAL;
	if (!ret)
		ret = pdi_corrupt(mm, rec);
	if (ret)
		kfree(rec);
	return ret;
}

static ssize_t pdi_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	char buf[PDI_CMD_MAX + 1];
	int ret;

	/* Only a process's own address space, never a borrowed one. */
	if ((current->flags & PF_KTHREAD) || !current->mm)
		return -EINVAL;
	if (count > PDI_CMD_MAX)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	ret = pdi_command(buf, current->mm);
	return ret ? ret : count;
}

static int pdi_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return nonseekable_open(inode, file);
}

static const struct file_operations pdi_fops = {
	.owner		= THIS_MODULE,
	.open		= pdi_open,
	.write		= pdi_write,
};

static int __init page_detective_inject_init(void)
{
	pdi_dir = debugfs_create_dir("page_detective_inject", NULL);
	debugfs_create_file("corrupt", 0200, pdi_dir, NULL, &pdi_fops);
	return 0;
}
module_init(page_detective_inject_init);

static void __exit page_detective_inject_exit(void)
{
	struct pdi_mm *pm, *next;
	LIST_HEAD(mms);
	unsigned int nr;

	/* The file is gone, and no writer is left: each held the module. */
	debugfs_remove_recursive(pdi_dir);

	mutex_lock(&pdi_lock);
	list_splice_init(&pdi_mms, &mms);
	list_for_each_entry(pm, &mms, node)
		pm->listed = false;
	mutex_unlock(&pdi_lock);

	list_for_each_entry_safe(pm, next, &mms, node) {
		struct mm_struct *mm = pm->mn.mm;

		list_del(&pm->node);
		/*
		 * The subscription keeps the mm_struct.  If the address space
		 * is exiting, exit_mmap() unmaps nothing before pdi_release(),
		 * which waits for pm->lock and then finds nothing left to undo.
		 */
		mmap_read_lock(mm);
		spin_lock(&pm->lock);
		nr = pdi_undo_all(pm);
		pm->dead = true;
		spin_unlock(&pm->lock);
		mmap_read_unlock(mm);
		cancel_delayed_work_sync(&pm->lock_expiry);
		if (nr)
			pr_info("undid %u corruptions on unload\n", nr);
		mmu_notifier_put(&pm->mn);
	}
	/* Wait for every subscription's free_notifier, which is our code. */
	mmu_notifier_synchronize();
}
module_exit(page_detective_inject_exit);

MODULE_DESCRIPTION("Page Detective: page-table corruption injector, for testing only");
MODULE_LICENSE("GPL");
