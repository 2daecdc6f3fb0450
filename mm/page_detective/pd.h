/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page Detective: what one query knows, shared by the files that fill it in.
 *
 * core.c     the debugfs files, the input, the report and its publication
 * page.c     the page itself: pinned, or described as a snapshot
 * kernel.c   the page's mappings in the kernel's page tables
 * user.c     the scan of every process's page tables; reading one entry
 * prescan.c  where in a process's page tables the scan must look
 * rmap.c     the reverse map: who should map the page, and where
 * mappings.c the mms and the mappings a query met, looked up by key
 * verdict.c  the sources compared, disagreements re-checked, culprits named
 * secondary.c what secondary MMUs (KVM) map of the page, checked against
 *            the host page tables
 * dma.c      what devices can DMA into the page, from the IOMMUs' tables
 * dma_api.c  what the DMA API has mapped of the page, from dma-debug
 * batch.c    many pages in one query: one scan for all, a verdict each
 *
 * secondary.c, dma.c and dma_api.c are sources of mappings beyond the CPU's page
 * tables (struct pd_source), which the report and the verdict iterate.
 */
#ifndef _MM_PAGE_DETECTIVE_H
#define _MM_PAGE_DETECTIVE_H

#include <linux/dma-map-ops.h>
#include <linux/hashtable.h>
#include <linux/iommu.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/sched.h>
#include <linux/seq_buf.h>
#include <linux/swap.h>
#include <linux/leafops.h>	/* after swap.h, which it needs */

/*
 * A query is one line: "PID VADDR" or "PADDR", or many physical addresses
 * and ranges (batch.c), and "quick".  Errors quote its start.
 */
#define PD_INPUT_MAX		SZ_32K
#define PD_INPUT_QUOTED		64
#define PD_REPORT_MAX		SZ_64K
/* The most a name userspace chose takes in the report: pd_print_untrusted(). */
#define PD_NAME_MAX		2048
/* The longest line a list prints: a few numbers and one name. */
#define PD_LINE_MAX		(PD_NAME_MAX + 512)
/* A task's comm, escaped: each byte takes at most four. */
#define PD_COMM_LEN		(4 * TASK_COMM_LEN)
/* Where lists of mappings stop, and culprits: see pd_report_has_room(). */
#define PD_LISTS_END		(PD_REPORT_MAX / 2)
#define PD_VERDICT_END		(PD_REPORT_MAX - PD_NAME_MAX - SZ_4K)
/* Mapping lines in one report; mappings past these are counted only. */
#define PD_LISTED_MAX		256
#define PD_KERNEL_LISTED_MAX	32
/* Places where the reverse map expects the page, kept for the verdict. */
#define PD_CANDIDATES_MAX	32
/* Kernel addresses in one report, hashed when it goes to the log. */
#define PD_KADDRS_MAX		64
/* Hits found under a page-table lock, recorded once it is let go. */
#define PD_PENDING_MAX		(PTRS_PER_PTE + 64)
/* Mappings of secondary MMUs (KVM) in one report; more are counted only. */
#define PD_SECONDARY_MAX	32
/* What secondary MMUs map of a batch's chunk, kept by its scan: two a page. */
#define PD_BATCH_SECONDARY_MAX	1024
/* IOMMU mappings of the page in one report; more are counted only. */
#define PD_DMA_MAX		32
/* Sources of mappings beyond the CPU's page tables: struct pd_source. */
#define PD_NR_SOURCES		3
/* Disagreements re-read in one round of the re-check. */
#define PD_REREAD_MAX		64
/* Rounds of re-check a disagreement must survive to be believed. */
#define PD_RECHECK_ROUNDS	2
/* The pause before each: what is in flight (a KSM merge, ...) lands. */
#define PD_RECHECK_PAUSE_MS	20
/* How long the scan holds a process's mmap lock, or a VMA's, at a time. */
#define PD_LOCK_HOLD_NS		(200 * NSEC_PER_USEC)
/*
 * Whether the scan walks a VMA under its read lock (user.c), found as
 * /proc/PID/maps finds it, with lock_next_vma().
 */
#define PD_PER_VMA_SCAN		IS_ENABLED(CONFIG_PER_VMA_LOCK)

/* An mm the query met, in the scan or in the reverse map: mmgrab()bed. */
struct pd_mm {
	struct hlist_node node;		/* in pd_query.mms, by mm */
	struct list_head list;		/* in pd_query.mm_list, as met */
	struct mm_struct *mm;
	pid_t tgid;			/* a process it belongs to, 0: none */
	char comm[PD_COMM_LEN];		/* escaped: pd_task_comm() */
	bool walked;			/* the scan walked its page tables */
};

/* Ranges of an mm that one prescan keeps for the scan; more: the whole mm. */
#define PD_PRESCAN_RANGES	16

/* Where the scan walks an mm's page tables: pd_prescan_mm(). */
struct pd_prescan {
	unsigned int nr;
	bool whole;			/* all of it */
	struct {
		unsigned long start, end;
	} range[PD_PRESCAN_RANGES];
};

/* Where a mapping was seen; a pass is one walk of the reverse map. */
#define PD_SEEN_SCAN		BIT(0)	/* the scan of page tables found it */
#define PD_SEEN_OUTSIDE_VMA	BIT(1)	/* in a page table, in no VMA */
#define PD_SEEN_PRESENT		BIT(2)	/* mapped, as the verdict judges now */
#define PD_SEEN_RMAP(pass)	BIT(4 + (pass))
#define PD_SEEN_STILL(round)	BIT(8 + (round))	/* re-read: mapped */
#define PD_SEEN_GONE(round)	BIT(12 + (round))	/* re-read: not mapped */

/* A mapping of the page that its mapcount counts, by (mm, address). */
struct pd_map {
	struct hlist_node node;		/* in pd_query.maps, by (mm, addr) */
	struct list_head list;		/* in pd_query.map_list, as found */
	struct pd_mm *mm;
	unsigned long addr;
	const void *entry;		/* its page-table entry: only compared */
	const char *level;
	unsigned int seen;		/* PD_SEEN_* */
};

/* Where the reverse map expects the page and does not find it mapped. */
struct pd_candidate {
	struct pd_mm *mm;
	unsigned long addr;
};

/* A kernel virtual address in the report, at @offset of it. */
struct pd_kaddr {
	size_t offset, len;
	unsigned long addr;
};

/* A mapping of the page in the kernel's page tables. */
struct pd_kernel_map {
	unsigned long addr;
	const char *level;
};

/* What a single virtual address maps, as a page-table walk found it. */
struct pd_leaf {
	const char *level;		/* "pte", "pmd", "pud", "hugetlb"; NULL */
	bool present;
	unsigned long pfn;		/* when present */
	softleaf_t entry;		/* when not present */
	const void *ptr;		/* the entry: only compared */
	bool table;			/* a PTE table covers the address */
	bool outside_vma;		/* found through a neighbouring VMA */
};

/* A hit of the scan, found under a page-table lock. */
struct pd_pending {
	unsigned long addr;
	const void *entry;
	const char *level;
	const char *note;		/* why it is not counted, or NULL */
	bool outside_vma;
	bool shared_table;
	/* The leaf: it maps [pfn, pfn + nr) from @base; see pd_leaf_maps(). */
	unsigned long pfn, nr, base;
};

/* A mapping of a secondary MMU, of the page or of an address that maps it. */
struct pd_secondary {
	struct pd_mm *mm;		/* whose mmu notifier described it */
	struct mmu_notifier_mapping m;
	const char *fault;		/* "stale", "unlogged", or NULL */
	bool host_present;		/* what the host maps at m.hva */
	unsigned long host_pfn;
};

/* An IOMMU mapping of the page, and what is wrong with it. */
struct pd_dma {
	struct iommu_phys_mapping m;
	const char *fault;		/* why it is a culprit, or NULL */
	bool seen;			/* found again by the re-check */
};

/* A live DMA-API mapping of the page, as dma-debug recorded it. */
struct pd_dma_api {
	struct dma_debug_mapping m;
	const char *fault;		/* why it is a culprit, or NULL */
	bool seen;			/* found again by the re-check */
};

/* Groups or devices counted once in a report, the first one named. */
struct pd_dma_count {
	unsigned int nr;
	char first[sizeof_field(struct iommu_phys_mapping, devices)];
};

/* What a folio's references are: see pd_count_refs(). */
struct pd_refs {
	int refcount;			/* without the query's own */
	int mapped, cached, private;
	int pins;			/* by pin_user_pages() */
	bool exact_pins;		/* else estimated from the refcount */
	int pinned;			/* the references the pins hold */
	int other;			/* the rest, in flight or leaked */
};

/*
 * The scan's longest hold of a lock, and its longest hold of it through
 * which it was never switched out: the first includes what other tasks ran
 * while the scan held the lock, the second only the walk (and whatever
 * stopped the CPU itself).
 */
struct pd_holds {
	u64 longest_ns;
	u64 longest_unswitched_ns;
};

/* What the summary line of a one-page report says: pd_report_pfn(). */
struct pd_summary {
	const char *verdict;
	const char *kind;		/* what the page is, in a word */
	unsigned long user, rmap;	/* mappings found */
	unsigned int processes, culprits;
};

struct pd_batch;

/* The state of one query, from the input to the summary line. */
struct pd_query {
	char *input;			/* as written: the file's query's */
	bool quick;			/* the reverse map only, no scan */
	struct seq_buf s;		/* the report */
	bool summarized;		/* it has its summary line */
	struct pd_summary summary;
	struct pd_kaddr kaddrs[PD_KADDRS_MAX];
	unsigned int nr_kaddrs;

	/* The page. */
	unsigned long pfn;
	struct page *page;		/* the online page at pfn */
	struct folio *folio;		/* its folio, pinned; NULL if not */
	const char *snapshot;		/* why it is not pinned, or NULL */
	bool has_rmap;			/* the reverse map tracks it */
	int refcount;			/* without our own reference */
	int mapcount;			/* judged mapcount when we began */
	/*
	 * The level the mapcount is judged at: the page's own, or, without
	 * per-page mapcounts (CONFIG_NO_PAGE_MAPCOUNT), a large folio's, with
	 * a mapping of any of its pages found counted.  The pages whose
	 * mappings are counted: [first_pfn, first_pfn + nr_pfns).
	 */
	bool folio_level;
	unsigned long first_pfn, nr_pfns;
	/*
	 * Of a batch (batch.c): in the query that scans for its pages, what
	 * it looks for (then first_pfn and nr_pfns bound them); in the query
	 * of one of them, the scan that looked for it.
	 */
	struct pd_batch *targets;
	const struct pd_batch *batch;
	/*
	 * A batch's first answer of a page: what its line needs, without
	 * the page's history (page_owner's stacks, whose symbols cost more
	 * than the rest of the page's query) and without the report's text,
	 * which is not written (pd_batch_ask()); a page that is reported
	 * whole is answered again, not briefly.
	 */
	bool brief;

	/* Found before the page is pinned: see pd_kernel_mappings(). */
	struct pd_kernel_map kmaps[PD_KERNEL_LISTED_MAX];
	unsigned int kernel_mappings;
	bool kernel_walked, direct_mapped;

	/* Some of the mms or mappings met could not be kept. */
	bool out_of_memory;

	/* The scan of every process's page tables. */
	unsigned long other_mappings;	/* special or non-present: listed */
	unsigned int processes;		/* processes that map the page */
	unsigned int scanned;		/* mms walked */
	unsigned int kthreads;
	unsigned int exiting;		/* skipped: mm going away */
	unsigned int sharing;		/* processes of an mm already walked */
	bool interrupted;		/* fatal signal: the query stopped */
	unsigned int nr_listed;		/* user: lines */
	unsigned long unlisted;
	unsigned int nr_pending;

	/* The reverse map, walked once or more (passes). */
	unsigned int rmap_passes;
	unsigned int rmap_finished;	/* PD_SEEN_RMAP() of passes that did */
	const char *rmap_incomplete;	/* why the last pass did not finish */
	unsigned int nr_candidates;	/* kept, of the last pass */
	unsigned long more_candidates;	/* not kept */
	unsigned int culprits_listed;	/* culprit: lines */
	unsigned long culprits_unlisted;	/* of the list being printed */

	/* What secondary MMUs map. */
	unsigned int nr_secondary;
	unsigned long more_secondary;	/* not kept */
	/* Of a batch's scan: in batch_secondary, and whether all were kept. */
	unsigned int nr_batch_secondary;
	bool batch_secondary_whole;

	/* What devices can DMA into: IOMMU mappings, and who reaches all. */
	unsigned int nr_dma;
	unsigned long more_dma;		/* not kept */
	int dma_err;			/* a batch's scan's describe */
	struct pd_dma_count dma_identity, dma_unprotected;
	struct pd_dma_count dma_opaque, dma_cut;
	/* What iommu.debug_pagealloc counts of the pages; -1: not counted. */
	long dma_counted;
	unsigned long dma_found;	/* the pages' leaves, as it counts */
	long dma_unseen;		/* counted, not found, by the re-check */
	const char *dma_unseen_fault;	/* why those are culprits, or NULL */

	/* What the DMA API maps, as dma-debug recorded it. */
	unsigned int nr_dma_api;
	unsigned long more_dma_api;	/* not kept */
	int dma_api_err;		/* debug_dma_describe_phys()'s */

	/* The mismatch of each source that named culprits, "; " between. */
	char sources_mismatch[320];

	/* What the query cost. */
	unsigned long entries;		/* user page-table entries read */
	unsigned long tables;		/* user PTE tables read */
	u64 scan_ns, kernel_ns, rmap_ns, recheck_ns, describe_ns;
	u64 prescan_ns;			/* of scan_ns: prescan.c's */
	unsigned int locked_mms;	/* of scanned: walked under locks */
	u64 source_ns[PD_NR_SOURCES];	/* each source's list */
	struct pd_holds mmap_holds, vma_holds;	/* the mmap lock's, a VMA's */

	/*
	 * The query's tables, which pd_query_reset() does not clear: each
	 * is read only as far as what is counted above (nr_pending,
	 * nr_candidates, nr_secondary, nr_dma, nr_dma_api), or once written
	 * (memcg, by the page's description; path, scratch for d_path()), or
	 * is left empty by pd_mappings_free() (the mms and mappings met).
	 * Clearing their 70 KiB would cost each page of a batch more than its
	 * query.
	 */
	char memcg[PATH_MAX];
	char path[PATH_MAX];
	/*
	 * The mms met, from any source, and the counted mappings met: hashed
	 * to be found, listed to be gone through (1024 buckets are too many
	 * to visit for each page of a batch).
	 */
	DECLARE_HASHTABLE(mms, 10);
	DECLARE_HASHTABLE(maps, 10);
	struct list_head mm_list, map_list;
	struct pd_pending pending[PD_PENDING_MAX];	/* the scan's */
	struct pd_candidate candidates[PD_CANDIDATES_MAX];	/* the rmap's */
	struct pd_secondary secondary[PD_SECONDARY_MAX];
	/*
	 * Of a batch's scan, which keeps there what secondary MMUs map of all
	 * its pages (PD_BATCH_SECONDARY_MAX), for each page to take its own:
	 * pd_batch_alloc()'s, freed with the query.  NULL in any other.
	 */
	struct pd_secondary *batch_secondary;
	struct pd_dma dma[PD_DMA_MAX];
	struct pd_dma_api dma_api[PD_DMA_MAX];
};

/*
 * Whether a non-present entry is a mapping that the mapcount counts and the
 * reverse map finds: a device-exclusive entry keeps its page mapped.
 */
static inline bool pd_softleaf_counted(softleaf_t entry)
{
	return softleaf_is_device_exclusive(entry);
}

bool pd_batch_looks_for(const struct pd_batch *b, unsigned long pfn,
			unsigned long nr);
bool pd_batch_table_may_map(const struct pd_query *scan, pte_t *pte,
			    unsigned int nr);

/* Whether a mapping of @pfn is one the query counts. */
static inline bool pd_pfn_counted(const struct pd_query *q, unsigned long pfn)
{
	if (q->targets)
		return pd_batch_looks_for(q->targets, pfn, 1);
	return pfn - q->first_pfn < q->nr_pfns;
}

/*
 * Whether a PTE may concern the @nr pages from @pfn: it maps one of them,
 * or it is neither empty nor present (a swap, migration or device entry,
 * which pd_user_pte() decodes).
 */
static inline bool pd_pte_may_map(pte_t pte, unsigned long pfn,
				  unsigned long nr)
{
	bool neither = (pte_none(pte) | pte_present(pte)) == 0;

	return (pte_pfn(pte) - pfn < nr) | neither;
}

/*
 * Whether any of @nr PTEs from @pte may concern the @nr_pfns pages from
 * @pfn.  Almost every table has none, so a table is first tested whole,
 * with one data-dependent branch an entry (pte_pfn()'s) where testing each
 * entry as pd_user_pte() does takes three: the inner loop of the prescan
 * and of the scan, the cost that grows with the memory mapped on the
 * machine.  Four entries a turn, so that the loop's own branch is paid once
 * for four (under QEMU's TCG, where every branch ends a translated block,
 * that took an eighth off the loop's time).
 */
static inline bool pd_pte_range_may_map(pte_t *pte, unsigned int nr,
					unsigned long pfn,
					unsigned long nr_pfns)
{
	bool may = false;
	unsigned int i;

	for (i = 0; i + 4 <= nr; i += 4)
		may |= pd_pte_may_map(ptep_get(pte + i), pfn, nr_pfns) |
		       pd_pte_may_map(ptep_get(pte + i + 1), pfn, nr_pfns) |
		       pd_pte_may_map(ptep_get(pte + i + 2), pfn, nr_pfns) |
		       pd_pte_may_map(ptep_get(pte + i + 3), pfn, nr_pfns);
	for (; i < nr; i++)
		may |= pd_pte_may_map(ptep_get(pte + i), pfn, nr_pfns);
	return may;
}

/* Whether any of @nr PTEs from @pte may concern the query's pages. */
static inline bool pd_pte_table_may_map(pte_t *pte, unsigned int nr,
					const struct pd_query *q)
{
	if (q->targets)
		return pd_batch_table_may_map(q, pte, nr);
	return pd_pte_range_may_map(pte, nr, q->first_pfn, q->nr_pfns);
}

/*
 * A source of mappings beyond the CPU's page tables: secondary MMUs (KVM),
 * IOMMUs.  Each lists what it maps of the page into the report, re-checks
 * its own disagreements with the page's state and names their culprits;
 * the verdict is "mismatch" when any has one.
 */
struct pd_source {
	const char *name;		/* its summary field: NAME_mappings= */
	const char *mismatch;		/* what its culprits are */
	void (*list)(struct pd_query *q);
	/*
	 * Optional, for a batch: find the mappings of every page the chunk's
	 * scan looks for (@scan->targets) in one pass, kept in @scan; each
	 * page's list then takes its own from there (pd_batch_scanned()).
	 * Called after the scan of every process: @scan->mm_list holds the
	 * mms it walked.
	 */
	void (*scan)(struct pd_query *scan);
	/* The culprit: lines it printed, after its re-checks. */
	unsigned int (*verdict)(struct pd_query *q);
	/* Optional: why what it maps is not known whole, or NULL. */
	const char *(*incomplete)(struct pd_query *q);
	/* Optional: its mappings, for the summary line. */
	unsigned int (*summary)(struct pd_query *q);
};

extern const struct pd_source *const pd_sources[PD_NR_SOURCES];
extern const struct pd_source pd_secondary_source;
extern const struct pd_source pd_dma_source;
extern const struct pd_source pd_dma_api_source;

/*
 * Whether a huge leaf mapping @nr pages from @first at @base maps a page the
 * query counts, and at which address: q->pfn's if it maps q->pfn, else (at
 * folio level) the first counted page's.  A huge leaf is one mapping.  The
 * scan of a batch keeps each leaf whole, at @base: each page's query tells.
 */
static inline bool pd_leaf_maps(const struct pd_query *q, unsigned long first,
				unsigned long nr, unsigned long base,
				unsigned long *addr)
{
	unsigned long pfn = q->pfn;

	if (q->targets) {
		*addr = base;
		return pd_batch_looks_for(q->targets, first, nr);
	}
	if (pfn - first >= nr) {
		if (first + nr <= q->first_pfn ||
		    first >= q->first_pfn + q->nr_pfns)
			return false;
		pfn = max(first, q->first_pfn);
	}
	*addr = base + ((pfn - first) << PAGE_SHIFT);
	return true;
}

/* core.c */
void pd_print_kaddr(struct pd_query *q, unsigned long addr);
void pd_print_untrusted(struct seq_buf *s, const char *str, const char *esc);
bool pd_report_has_room(struct pd_query *q, size_t end);
void pd_task_comm(char *buf, struct task_struct *task);
void pd_print_leaf_size(struct seq_buf *s, unsigned long nr_pages);
char *pd_next_word(char **cur);
int pd_parse_number(const char *word, u64 *val);
void pd_print_invalid(struct pd_query *q, const char *name,
		      const char *expected);
int pd_report_pfn(struct pd_query *q);
struct pd_query *pd_query_alloc(void);
void pd_query_reset(struct pd_query *q);
void pd_query_free(struct pd_query *q);
int pd_query_report_size(struct pd_query *q, size_t size);
void pd_append_report(struct pd_query *q, struct pd_query *from);

/* page.c */
int pd_describe_page(struct pd_query *q);
int pd_page_mapcount(struct pd_query *q);
bool pd_page_changed(struct pd_query *q);
bool pd_page_free(struct page *page);
void pd_note_refcount(struct pd_query *q);
void pd_count_refs(struct folio *folio, struct pd_refs *r);

/* kernel.c */
int pd_kernel_mappings(struct pd_query *q);
int pd_kernel_scan(struct pd_query *q);
int pd_kernel_scan_direct(struct pd_query *q, unsigned long pfn,
			  unsigned long nr);
bool pd_kernel_direct(unsigned long addr);
void pd_kernel_leaf(struct pd_query *q, unsigned long addr,
		    unsigned long first, unsigned long size, const char *level);
void pd_print_kernel_mappings(struct pd_query *q);
int pd_kernel_lookup(struct pd_query *q, unsigned long vaddr,
		     struct pd_leaf *leaf);

/* prescan.c */
int pd_prescan_mm(struct pd_query *q, struct mm_struct *mm,
		  struct pd_prescan *ps);

/* user.c */
void pd_user_mappings(struct pd_query *q);
void pd_scan_processes(struct pd_query *q);
void pd_list_user_mapping(struct pd_query *q, struct pd_mm *pdm,
			  const struct pd_pending *p,
			  struct vm_area_struct *vma);
void pd_record_user_mapping(struct pd_query *q, struct pd_mm *pdm,
			    const struct pd_pending *p);
void pd_print_user_totals(struct pd_query *q);
int pd_read_entry(struct mm_struct *mm, unsigned long addr,
		  struct pd_leaf *leaf);
int pd_virt_user(struct pd_query *q, pid_t nr, unsigned long vaddr,
		 struct pd_leaf *leaf);
int pd_virt_user_range(struct pd_query *q, pid_t nr, unsigned long start,
		       unsigned long end,
		       int (*found)(void *arg, unsigned long addr,
				    unsigned long pfn, unsigned long nr,
				    const char *level),
		       void *arg);
void pd_print_leaf(struct seq_buf *s, const struct pd_leaf *leaf);
void pd_print_mm_vma_name(struct pd_query *q, struct mm_struct *mm,
			  unsigned long addr);

/* rmap.c */
void pd_rmap_pass(struct pd_query *q);
void pd_list_rmap(struct pd_query *q);
void pd_find_owners(struct pd_query *q);

/* mappings.c */
void pd_mappings_init(struct pd_query *q);
void pd_mappings_free(struct pd_query *q);
struct pd_mm *pd_mm_get(struct pd_query *q, struct mm_struct *mm);
struct pd_map *pd_map_get(struct pd_query *q, struct pd_mm *pdm,
			  unsigned long addr);
void pd_map_see(struct pd_query *q, struct pd_mm *pdm, unsigned long addr,
		const void *entry, const char *level, unsigned int seen);
unsigned long pd_count_entries(struct pd_query *q, unsigned int seen);

/* dma.c */
const char *pd_dma_unowned(struct pd_query *q);

/* batch.c */
int pd_phys_batch(struct pd_query *q, char *input);
int pd_virt_batch(struct pd_query *q, char *input);
void pd_batch_keep(struct pd_batch *b, struct pd_mm *pdm,
		   const struct pd_pending *p);
bool pd_batch_replay(struct pd_query *q);
void pd_batch_keep_kernel(struct pd_batch *b, unsigned long addr,
			  unsigned long first, unsigned long size,
			  const char *level);
bool pd_batch_kernel_replay(struct pd_query *q);
const struct pd_query *pd_batch_scanned(const struct pd_query *q);

/* verdict.c */
const char *pd_verdict(struct pd_query *q, unsigned int *culprits);
bool pd_culprit_listed(struct pd_query *q);
void pd_print_unlisted_culprits(struct pd_query *q);
unsigned int pd_recheck_rounds(struct pd_query *q, unsigned int suspects,
			       unsigned int (*recheck)(struct pd_query *q));
int pd_reread(struct pd_query *q, struct mm_struct *mm, unsigned long addr,
	      struct pd_leaf *leaf);

#endif /* _MM_PAGE_DETECTIVE_H */
