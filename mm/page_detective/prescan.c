// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: where in a process's page tables the scan must look.
 *
 * Almost every process maps none of the pages a query is about, yet the
 * locked scan (user.c) pays for each of its VMAs: the VMA's lock, a descent
 * from the PGD, a look at its neighbours for the entries no VMA covers.
 * The prescan reads the whole of the mm's page tables first, in one
 * descent and without any of the mm's locks, as gup_fast() reads them,
 * and keeps only the ranges, a PMD's or a PUD's, whose entries may concern
 * the query's pages.  The locked scan then walks those ranges alone: none,
 * for most processes.
 *
 * What keeps the tables alive is what keeps gup_fast()'s: interrupts off
 * on this CPU.  With CONFIG_MMU_GATHER_RCU_TABLE_FREE, a page table that
 * munmap() or khugepaged takes out of the mm is freed only after an RCU
 * grace period (pte_free_defer(), tlb_remove_table()) or after an IPI to
 * every CPU (tlb_remove_table_sync_one()); a CPU with interrupts off holds
 * back both.  Without it, tables are freed once the TLB shootdown IPIs
 * reach the CPUs of the mm's cpumask, which this one is not in, so nothing
 * would keep them: there the prescan does not run, and the locked scan
 * walks the whole mm as before.
 *
 * The prescan only narrows: it names no mapping.  What a range holds is
 * read again, under the locks, by the locked scan, which decides; a range
 * changed between the two is the race every report already has.
 */

#include <linux/irqflags.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "pd.h"

/*
 * PTE tables read in one stretch with interrupts off: a few microseconds
 * natively, some tens under QEMU's TCG.
 */
#define PD_PRESCAN_TABLES	8

/* One mm's prescan. */
struct pd_prescan_walk {
	struct pd_query *q;
	struct mm_struct *mm;
	struct pd_prescan *ps;
	unsigned int tables;		/* read in this stretch */
	/*
	 * The end of the VMA the last look into the maple tree found: up to
	 * there an empty PMD entry is passed over, past it one asks where the
	 * next VMA is.
	 */
	unsigned long vma_end;
};

/*
 * The locked scan must walk [@start, @end) (up to TASK_SIZE_MAX, which the
 * last PMD's range passes): joined to the last range if they touch; past
 * PD_PRESCAN_RANGES, the whole mm.
 */
static void pd_prescan_keep(struct pd_prescan *ps, unsigned long start,
			    unsigned long end)
{
	end = min(end, TASK_SIZE_MAX);
	if (ps->nr && ps->range[ps->nr - 1].end == start) {
		ps->range[ps->nr - 1].end = end;
		return;
	}
	if (ps->nr == PD_PRESCAN_RANGES) {
		ps->whole = true;
		return;
	}
	ps->range[ps->nr].start = start;
	ps->range[ps->nr].end = end;
	ps->nr++;
}

/*
 * A huge leaf of @size bytes at @base, present or not: the locked scan
 * walks its range if it maps one of the query's pages, or if it is not
 * present (a migration or hwpoison entry, which that scan decodes).
 */
static void pd_prescan_leaf(struct pd_prescan_walk *pw, bool present,
			    unsigned long pfn, unsigned long base,
			    unsigned long size)
{
	unsigned long addr;

	pw->q->entries++;
	if (!present ||
	    pd_leaf_maps(pw->q, pfn, size >> PAGE_SHIFT, base, &addr))
		pd_prescan_keep(pw->ps, base, base + size);
}

/*
 * Whether a PTE that pd_pte_may_map() let through concerns the query: it
 * maps, or is a migration, hwpoison or device entry of, one of the pages
 * the query counts.  A swap entry does not.
 */
static bool pd_prescan_pte_concerns(const struct pd_query *q, pte_t pte)
{
	softleaf_t entry;

	if (pte_present(pte))
		return pd_pfn_counted(q, pte_pfn(pte));
	if (pte_none(pte))
		return false;
	entry = softleaf_from_pte(pte);
	return softleaf_has_pfn(entry) &&
	       pd_pfn_counted(q, softleaf_to_pfn(entry));
}

/*
 * Whether a PTE table concerns the query: tested whole first, as the
 * locked scan tests it, then, if it may, entry by entry (a batch's pages
 * are bounded by a range that most tables fall in).
 */
static bool pd_prescan_table_concerns(const struct pd_query *q, pte_t *pte)
{
	unsigned int i;

	if (!pd_pte_table_may_map(pte, PTRS_PER_PTE, q))
		return false;
	for (i = 0; i < PTRS_PER_PTE; i++)
		if (pd_prescan_pte_concerns(q, ptep_get(pte + i)))
			return true;
	return false;
}

/* The PTE table of the PMD entry @pmd, which maps the PMD range at @addr. */
static void pd_prescan_pte_table(struct pd_prescan_walk *pw, pmd_t pmd,
				 unsigned long addr)
{
	pte_t *pte = pte_offset_map(&pmd, addr);

	if (!pte) {
		/* No longer a table: the locked scan looks at what it is. */
		pd_prescan_keep(pw->ps, addr, addr + PMD_SIZE);
		return;
	}
	pw->q->tables++;
	pw->q->entries += PTRS_PER_PTE;
	if (pd_prescan_table_concerns(pw->q, pte))
		pd_prescan_keep(pw->ps, addr, addr + PMD_SIZE);
	pte_unmap(pte);
}

/*
 * Where to go on from @addr, where the page tables are empty: the PMD
 * range of the next VMA.  A process's VMAs lie in a few clusters far
 * apart, and a descent a PGD or P4D slot at a time would cost more than
 * the tables; so would reading each PMD table to its end past the last VMA
 * of a cluster (a small process has three PMD tables: some 770 entries, of
 * which 13 meet a VMA).
 * What lies wholly between VMAs the locked scan does not read either
 * (user.c).  The maple tree is read under RCU, as a hint: a VMA mapped
 * since is the race every report has.  The VMA found, its end, is kept in
 * @pw->vma_end.
 */
static unsigned long pd_prescan_skip_gap(struct pd_prescan_walk *pw,
					 unsigned long addr, unsigned long end)
{
	MA_STATE(mas, &pw->mm->mm_mt, addr, addr);
	unsigned long next = end;

	if (addr >= end)
		return end;
	rcu_read_lock();
	if (mas_find(&mas, end - 1)) {
		next = max(addr, mas.index & PMD_MASK);
		pw->vma_end = mas.last + 1;
	}
	rcu_read_unlock();
	return next;
}

/*
 * The entries of the PMD table that @pud points to, from @addr (a PMD's
 * start) to @end, or until PD_PRESCAN_TABLES PTE tables are read, or until
 * an empty entry past the last VMA sends the walk to the next VMA's PMD
 * range, within this table or beyond it.
 * Return: where the next descent begins.
 */
static unsigned long pd_prescan_pmds(struct pd_prescan_walk *pw, pud_t *pudp,
				     pud_t pud, unsigned long addr,
				     unsigned long end)
{
	pmd_t *pmdp = pmd_offset_lockless(pudp, pud, addr);
	unsigned long next;

	/* Each step goes to next's entry: the next one, or past a gap. */
	for (; addr != end; pmdp += (next - addr) >> PMD_SHIFT, addr = next) {
		pmd_t pmd = pmdp_get_lockless(pmdp);

		next = pmd_addr_end(addr, end);
		if (pmd_none(pmd)) {
			if (addr < pw->vma_end)
				continue;
			next = pd_prescan_skip_gap(pw, next, TASK_SIZE_MAX);
			if (next >= end)
				return next;
			continue;
		}
		if (!pmd_present(pmd) || pmd_leaf(pmd)) {
			pd_prescan_leaf(pw, pmd_present(pmd), pmd_pfn(pmd),
					addr, PMD_SIZE);
			continue;
		}
		if (pw->tables == PD_PRESCAN_TABLES)
			return addr;
		pw->tables++;
		pd_prescan_pte_table(pw, pmd, addr);
	}
	return end;
}

/*
 * One descent from the PGD to @addr's PMD table, and along it.  Each
 * level's entry ends within the one above it: a folded level's
 * *_addr_end() gives back the end it is passed, so that where the P4D and
 * PUD levels are folded (arm64 with 64 KiB pages, or with 39-bit
 * addresses) the PMD table ends where the PGD entry does, not at @end.
 * Return: where the next begins.
 */
static unsigned long pd_prescan_descend(struct pd_prescan_walk *pw,
					unsigned long addr, unsigned long end)
{
	pgd_t *pgdp = pgd_offset(pw->mm, addr);
	pgd_t pgd = pgdp_get(pgdp);
	unsigned long next;
	p4d_t *p4dp;
	pud_t *pudp;
	p4d_t p4d;
	pud_t pud;

	next = pgd_addr_end(addr, end);
	if (!pgd_present(pgd))
		return pd_prescan_skip_gap(pw, next, end);
	p4dp = p4d_offset_lockless(pgdp, pgd, addr);
	p4d = p4dp_get(p4dp);
	next = p4d_addr_end(addr, next);
	if (!p4d_present(p4d))
		return pd_prescan_skip_gap(pw, next, end);
	pudp = pud_offset_lockless(p4dp, p4d, addr);
	pud = pudp_get(pudp);
	next = pud_addr_end(addr, next);
	if (pud_none(pud))
		return pd_prescan_skip_gap(pw, next, end);
	if (!pud_present(pud) || pud_leaf(pud)) {
		pd_prescan_leaf(pw, pud_present(pud), pud_pfn(pud),
				addr & PUD_MASK, PUD_SIZE);
		return next;
	}
	return pd_prescan_pmds(pw, pudp, pud, addr, next);
}

/*
 * One stretch with interrupts off: descents from @addr on, until
 * PD_PRESCAN_TABLES PTE tables are read.  Return: where the next begins.
 */
static unsigned long pd_prescan_stretch(struct pd_prescan_walk *pw,
					unsigned long addr, unsigned long end)
{
	unsigned long flags;

	pw->tables = 0;
	local_irq_save(flags);
	while (addr < end && pw->tables < PD_PRESCAN_TABLES)
		addr = pd_prescan_descend(pw, addr, end);
	local_irq_restore(flags);
	return addr;
}

/**
 * pd_prescan_mm - find where an mm's page tables may map the query's pages
 * @q: the query; its cost counts the tables read
 * @mm: the mm, mmget()
 * @ps: the ranges the locked scan must walk, in address order
 *
 * Without CONFIG_MMU_GATHER_RCU_TABLE_FREE, or past PD_PRESCAN_RANGES
 * ranges, @ps is the whole of the mm's user addresses.  Might sleep.
 *
 * Return: 0, or -EINTR if a fatal signal came (@ps is then empty).
 */
int pd_prescan_mm(struct pd_query *q, struct mm_struct *mm,
		  struct pd_prescan *ps)
{
	struct pd_prescan_walk pw = { .q = q, .mm = mm, .ps = ps };
	unsigned long addr = 0;

	ps->nr = 0;
	ps->whole = false;
	if (!IS_ENABLED(CONFIG_MMU_GATHER_RCU_TABLE_FREE))
		goto whole;
	while (addr < TASK_SIZE_MAX && !ps->whole) {
		addr = pd_prescan_stretch(&pw, addr, TASK_SIZE_MAX);
		if (fatal_signal_pending(current)) {
			ps->nr = 0;
			return -EINTR;
		}
		cond_resched();
	}
	if (!ps->whole)
		return 0;
whole:
	ps->whole = true;
	ps->nr = 1;
	ps->range[0].start = 0;
	ps->range[0].end = TASK_SIZE_MAX;
	return 0;
}
