// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: the page's mappings in the kernel's page tables (init_mm),
 * and what a kernel virtual address maps.
 *
 * walk_kernel_page_tables() keeps the tables alive and leaves out what is
 * not the kernel's to walk.  Kernel addresses go into the report through
 * pd_print_kaddr(), which hashes them in the kernel log.
 */

#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/pagewalk.h>
#include <linux/sched/clock.h>
#include <linux/vmalloc.h>

#include "pd.h"

/*
 * Where the direct map ends: at high_memory, the end of the memory present
 * at boot, unless memory can be hot-added.  x86 moves high_memory past the
 * memory it adds, arm64 does not, and maps that memory in its linear map
 * all the same: then the direct map reaches as far as memory can be
 * plugged with a mapping.
 */
static unsigned long pd_direct_map_end(void)
{
	unsigned long end = (unsigned long)high_memory;
#ifdef CONFIG_MEMORY_HOTPLUG
	struct range pluggable = mhp_get_pluggable_range(true);

	if (pluggable.end > pluggable.start)
		end = max(end, (unsigned long)__va(pluggable.end) + 1);
#endif
	return end;
}

/**
 * pd_kernel_direct - whether a kernel address is one of the direct map
 * @addr: the address
 *
 * Return: true if it is.
 */
bool pd_kernel_direct(unsigned long addr)
{
	return addr >= PAGE_OFFSET && addr < pd_direct_map_end();
}

/*
 * Whether a kernel address holds the struct page of a PFN that has one,
 * where pfn_to_page() puts it.  Around the vmemmap area lies whatever maps
 * no page's struct page: arm64's vmemmap pointer starts below the area, by
 * the PFN its memory starts at, and fixmap and PCI I/O space are near.
 */
static bool pd_kernel_vmemmap(unsigned long addr)
{
#ifdef CONFIG_SPARSEMEM_VMEMMAP
	unsigned long base = (unsigned long)vmemmap;

	return addr >= base && pfn_valid((addr - base) / sizeof(struct page));
#else
	return false;
#endif
}

/* The image first: some architectures (arm64) map it in the vmalloc area. */
static const char *pd_kernel_area(unsigned long addr)
{
	if (pd_kernel_direct(addr))
		return "direct map";
	if (addr - KERNEL_IMAGE_MAP_START < KERNEL_IMAGE_MAP_SIZE)
		return "kernel image";
	if (pd_kernel_vmemmap(addr))
		return "vmemmap";
	if (is_vmalloc_addr((void *)addr))
		return "vmalloc";
	if (is_vmalloc_or_module_addr((void *)addr))
		return "module";
	return "other";
}

/**
 * pd_kernel_leaf - a kernel leaf entry that a walk met
 * @q: the query
 * @addr: an address the leaf maps
 * @first: the first page it maps
 * @size: the size it maps
 * @level: its level
 *
 * If q->pfn is one of the pages the leaf maps, keep where it maps it; the
 * scan of a batch keeps the leaf for each page's query, if it maps one.
 */
void pd_kernel_leaf(struct pd_query *q, unsigned long addr,
		    unsigned long first, unsigned long size, const char *level)
{
	if (q->targets) {
		pd_batch_keep_kernel(q->targets, addr, first, size, level);
		return;
	}
	if (q->pfn - first >= size >> PAGE_SHIFT)
		return;
	addr = ALIGN_DOWN(addr, size) + ((q->pfn - first) << PAGE_SHIFT);
	if (q->kernel_mappings < PD_KERNEL_LISTED_MAX)
		q->kmaps[q->kernel_mappings] = (struct pd_kernel_map) {
			.addr = addr, .level = level,
		};
	q->kernel_mappings++;
}

/* Whether a kernel PTE that maps @pfn maps a page the walk looks for. */
static inline bool pd_kernel_wants(struct pd_query *q, unsigned long pfn)
{
	return q->targets ? pd_pfn_counted(q, pfn) : pfn == q->pfn;
}

/*
 * Whether any of @nr kernel PTEs from @pte may map a page the walk looks
 * for: the pages of a batch's scan, or q->pfn, as pd_kernel_wants() says
 * (a query's folio is not known yet: see pd_kernel_mappings()).
 */
static bool pd_kernel_table_may_map(struct pd_query *q, pte_t *pte,
				    unsigned int nr)
{
	if (q->targets)
		return pd_pte_table_may_map(pte, nr, q);
	return pd_pte_range_may_map(pte, nr, q->pfn, 1);
}

/*
 * Whether a kernel PTE maps its page for the MMU.  pte_present() is not
 * enough: arm64 takes a page out of the kernel's map (DEBUG_PAGEALLOC,
 * KFENCE, set_memory_valid()) by making its entry present but invalid,
 * which pte_present() counts as it counts a PROT_NONE user entry.  With no
 * TLB flush pending, as init_mm's tables have none, pte_accessible() is
 * whether the MMU uses the entry: arm64's valid bit, x86's present bit.
 */
static bool pd_kernel_pte_mapped(struct mm_walk *walk, pte_t pte)
{
	return pte_present(pte) && pte_accessible(walk->mm, pte);
}

static int pd_kernel_pud(pud_t *pud, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pud_t val = pudp_get(pud);

	if (pud_present(val) && pud_leaf(val)) {
		/*
		 * Not down to the PMDs even if the leaf is split meanwhile:
		 * its pages would be counted twice.
		 */
		walk->action = ACTION_CONTINUE;
		pd_kernel_leaf(walk->private, addr, pud_pfn(val), PUD_SIZE, "pud");
	}
	return 0;
}

/*
 * A huge leaf, or a PTE table, read here whole: vmalloc and module space
 * are mapped by 4 KiB pages, tens of thousands of them, and a callback per
 * entry would cost more than reading the entry does.  The walker is not
 * let down to the table.
 */
static int pd_kernel_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	struct pd_query *q = walk->private;
	pmd_t val = pmdp_get(pmd);
	pte_t *pte;

	walk->action = ACTION_CONTINUE;
	if (!pmd_present(val))
		return 0;
	if (pmd_leaf(val)) {
		pd_kernel_leaf(q, addr, pmd_pfn(val), PMD_SIZE, "pmd");
		return 0;
	}
	/*
	 * @next is ULONG_MAX for the last table of the address space, which
	 * no page address reaches: the address wraps to 0 after its last page.
	 * Almost no table maps the query's pages: tested whole first, as the
	 * scan tests a process's tables.
	 */
	pte = pte_offset_kernel(pmd, addr);
	if (!pd_kernel_table_may_map(q, pte, ((next - 1 - addr) >> PAGE_SHIFT) + 1))
		return 0;
	do {
		pte_t entry = ptep_get(pte);

		if (pd_kernel_pte_mapped(walk, entry) &&
		    pd_kernel_wants(q, pte_pfn(entry)))
			pd_kernel_leaf(q, addr, pte_pfn(entry), PAGE_SIZE, "pte");
		addr += PAGE_SIZE;
		pte++;
	} while (addr - 1 < next - 1);
	return 0;
}

static const struct mm_walk_ops pd_kernel_ops = {
	.pud_entry	= pd_kernel_pud,
	.pmd_entry	= pd_kernel_pmd,
};

/*
 * The end of the one page at @addr, for a walk: 0, the top of the address
 * space, would be an empty range.
 */
static unsigned long pd_page_end(unsigned long addr)
{
	return addr + PAGE_SIZE ?: ULONG_MAX;
}

/* Whether q->pfn is online memory, which the walk is then about. */
static bool pd_pfn_online(struct pd_query *q)
{
	bool online;

	get_online_mems();
	online = pfn_to_online_page(q->pfn);
	put_online_mems();
	return online;
}

/**
 * pd_kernel_mappings - find every init_mm mapping of the page
 * @q: the query
 *
 * Before the page is pinned: walk_kernel_page_tables() takes
 * get_online_mems(), which memory offlining, holding the hotplug lock for
 * writing, would never let it have while it waits for a pinned page to be
 * migrated.  pd_print_kernel_mappings() reports them, after the page.
 *
 * The direct map maps each page at one known address, so it is looked up
 * there rather than walked: with DEBUG_PAGEALLOC it takes 4 KiB pages,
 * millions of them.  A quick query looks no further.  Might sleep.
 *
 * Return: 0, or -EINTR if a fatal signal came while waiting for the tables.
 */
int pd_kernel_mappings(struct pd_query *q)
{
	u64 start = local_clock();
	int err;

	/* Not memory: pd_describe_page() says so. */
	if (!pd_pfn_online(q))
		return 0;
	q->kernel_walked = true;
	/* A page of a batch: its scan walked for it. */
	if (!q->quick && pd_batch_kernel_replay(q))
		return 0;
	err = pd_kernel_scan_direct(q, q->pfn, 1);
	q->direct_mapped = q->kernel_mappings;
	if (!err && !q->quick)
		err = pd_kernel_scan(q);
	q->kernel_ns = local_clock() - start;
	return err;
}

/**
 * pd_kernel_scan_direct - look up pages where the direct map maps them
 * @q: the query: of one page, or the scan of a batch
 * @pfn: the first page
 * @nr: how many pages from @pfn
 *
 * What it finds pd_kernel_leaf() keeps.  Might sleep.
 *
 * Return: 0, or -EINTR if a fatal signal came while waiting for the tables.
 */
int pd_kernel_scan_direct(struct pd_query *q, unsigned long pfn,
			  unsigned long nr)
{
	unsigned long start = (unsigned long)pfn_to_kaddr(pfn);
	unsigned long last = (unsigned long)pfn_to_kaddr(pfn + nr - 1);

	return walk_kernel_page_tables(start, pd_page_end(last),
				       &pd_kernel_ops, q);
}

/**
 * pd_kernel_scan - walk the kernel's page tables, but the direct map
 * @q: the query: of one page, or the scan of a batch
 *
 * What it finds pd_kernel_leaf() keeps.  Before any page the query is
 * about is pinned: see pd_kernel_mappings().  Might sleep.
 *
 * Return: 0, or -EINTR if a fatal signal came while waiting for the tables.
 */
int pd_kernel_scan(struct pd_query *q)
{
	int err;

	err = walk_kernel_page_tables(0, PAGE_OFFSET, &pd_kernel_ops, q);
	if (!err)
		err = walk_kernel_page_tables(pd_direct_map_end(), ULONG_MAX,
					      &pd_kernel_ops, q);
	return err;
}

/**
 * pd_print_kernel_mappings - report the init_mm mappings found of the page
 * @q: the query, after pd_kernel_mappings()
 */
void pd_print_kernel_mappings(struct pd_query *q)
{
	unsigned int i;

	if (!q->kernel_walked) {
		seq_buf_puts(&q->s,
			     "kernel mappings: not looked for: the page came online during the query\n");
		return;
	}
	if (!q->direct_mapped) {
		seq_buf_puts(&q->s, "kernel: ");
		pd_print_kaddr(q, (unsigned long)pfn_to_kaddr(q->pfn));
		seq_buf_puts(&q->s, " direct map, not mapped\n");
	}
	for (i = 0; i < min(q->kernel_mappings, PD_KERNEL_LISTED_MAX); i++) {
		seq_buf_puts(&q->s, "kernel: ");
		pd_print_kaddr(q, q->kmaps[i].addr);
		seq_buf_printf(&q->s, " %s %s\n", q->kmaps[i].level,
			       pd_kernel_area(q->kmaps[i].addr));
	}
	if (q->kernel_mappings > PD_KERNEL_LISTED_MAX)
		seq_buf_printf(&q->s, "kernel: %u more not listed\n",
			       q->kernel_mappings - PD_KERNEL_LISTED_MAX);
	seq_buf_printf(&q->s, "kernel mappings: %u%s\n", q->kernel_mappings,
		       q->quick ? ", the direct map only (quick)" : "");
}

static void pd_kernel_found(struct mm_walk *walk, unsigned long addr,
			    unsigned long first, unsigned long size,
			    const char *level)
{
	struct pd_leaf *leaf = walk->private;

	leaf->level = level;
	leaf->present = true;
	leaf->pfn = first + ((addr & (size - 1)) >> PAGE_SHIFT);
}

static int pd_lookup_kernel_pud(pud_t *pud, unsigned long addr,
				unsigned long next, struct mm_walk *walk)
{
	pud_t val = pudp_get(pud);

	if (pud_present(val) && pud_leaf(val)) {
		walk->action = ACTION_CONTINUE;
		pd_kernel_found(walk, addr, pud_pfn(val), PUD_SIZE, "pud");
	}
	return 0;
}

static int pd_lookup_kernel_pmd(pmd_t *pmd, unsigned long addr,
				unsigned long next, struct mm_walk *walk)
{
	pmd_t val = pmdp_get(pmd);

	if (pmd_present(val) && pmd_leaf(val)) {
		walk->action = ACTION_CONTINUE;
		pd_kernel_found(walk, addr, pmd_pfn(val), PMD_SIZE, "pmd");
	}
	return 0;
}

/*
 * Kernel entries are never swap entries: one that does not map its page is
 * a page that DEBUG_PAGEALLOC or KFENCE unmapped, or nothing.
 */
static int pd_lookup_kernel_pte(pte_t *pte, unsigned long addr,
				unsigned long next, struct mm_walk *walk)
{
	pte_t val = ptep_get(pte);
	struct pd_leaf *leaf = walk->private;

	if (pd_kernel_pte_mapped(walk, val))
		pd_kernel_found(walk, addr, pte_pfn(val), PAGE_SIZE, "pte");
	else if (!pte_none(val))
		leaf->level = "pte";
	return 0;
}

static const struct mm_walk_ops pd_lookup_kernel_ops = {
	.pud_entry	= pd_lookup_kernel_pud,
	.pmd_entry	= pd_lookup_kernel_pmd,
	.pte_entry	= pd_lookup_kernel_pte,
};

/**
 * pd_kernel_lookup - what the kernel virtual address @vaddr maps
 * @q: the query
 * @vaddr: a page-aligned kernel virtual address
 * @leaf: what it maps, filled in
 *
 * An address of the direct map names its page whether or not the direct
 * map maps it now: DEBUG_PAGEALLOC and KFENCE unmap pages from it, and
 * that page is then still the one asked about.  Might sleep.
 *
 * Return: 0, or -EINTR if a fatal signal came while waiting for the tables.
 */
int pd_kernel_lookup(struct pd_query *q, unsigned long vaddr,
		     struct pd_leaf *leaf)
{
	int err;

	seq_buf_puts(&q->s, "virt: kernel vaddr ");
	pd_print_kaddr(q, vaddr);
	seq_buf_putc(&q->s, '\n');
	err = walk_kernel_page_tables(vaddr, pd_page_end(vaddr),
				      &pd_lookup_kernel_ops, leaf);
	if (err)
		return err;
	if (leaf->present) {
		seq_buf_printf(&q->s, "leaf: %s, pfn %#lx\n", leaf->level,
			       leaf->pfn);
		return 0;
	}
	if (leaf->level)
		seq_buf_printf(&q->s,
			       "leaf: %s, not present (a kernel entry: unmapped by DEBUG_PAGEALLOC or KFENCE, or never mapped)\n",
			       leaf->level);
	else
		seq_buf_puts(&q->s, "leaf: none, nothing is mapped there\n");
	/* Past memory the direct map's region names no page: __pa() is not for it. */
	if (pd_kernel_direct(vaddr) && virt_addr_valid((void *)vaddr)) {
		leaf->present = true;
		leaf->pfn = PHYS_PFN(__pa(vaddr));
		seq_buf_printf(&q->s, "leaf: a direct map address, of pfn %#lx\n",
			       leaf->pfn);
	}
	return 0;
}
