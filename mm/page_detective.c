// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: what is this page, and who maps it?
 *
 * Root writes "PID VADDR" to <debugfs>/page_detective/virt, or a physical
 * address to <debugfs>/page_detective/phys.  The report describes the page
 * (refcount, mapcount, flags, memcg), every kernel mapping of it, and every
 * process whose page tables map it, and ends with a verdict comparing the
 * page's mapcount with the mappings found.  It goes to the kernel log and
 * is read back from the same file.  See Documentation/mm/page_detective.rst.
 */

#define pr_fmt(fmt) "page_detective: " fmt

#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/hugetlb.h>
#include <linux/kref.h>
#include <linux/memcontrol.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmdebug.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagewalk.h>
#include <linux/pid_namespace.h>
#include <linux/rmap.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/swapops.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/* A query is one short line: "PID VADDR" or "PADDR". */
#define PD_INPUT_MAX		64
#define PD_REPORT_MAX		SZ_64K
/* Mapping lines in one report; mappings past these are counted only. */
#define PD_LISTED_MAX		256
#define PD_KERNEL_LISTED_MAX	32
/* Processes that share an mm (CLONE_VM): their mm is walked once. */
#define PD_SHARED_MMS_MAX	32
/* How long the scan holds one process's mmap lock before letting go. */
#define PD_LOCK_HOLD_NS		(200 * NSEC_PER_USEC)
/* Attempts to pin a page whose folio keeps changing under us. */
#define PD_GET_FOLIO_TRIES	3

/* A finished report: immutable, shared by the files that serve it. */
struct pd_report {
	struct kref ref;
	size_t len;
	char text[];
};

/* A user mapping found by the scan, listed once the walk lets go. */
struct pd_user_mapping {
	unsigned long addr;
	const char *level;
	const char *note;	/* why it is not counted, or NULL */
	bool unknown_to_rmap;
};

/* A mapping of the page that the reverse map knows. */
struct pd_rmap_mapping {
	struct mm_struct *mm;	/* mmgrab()bed: the struct, not the memory */
	unsigned long addr;
	const char *level;
	bool in_page_tables;	/* the scan found it too */
};

/* The state of one query, from the input to the summary line. */
struct pd_query {
	char input[PD_INPUT_MAX + 1];	/* as written */
	bool quick;			/* the reverse map only, no scan */
	struct seq_buf s;		/* the report */
	unsigned long pfn;
	struct page *page;		/* the online page at pfn */
	struct folio *folio;		/* its folio, referenced; NULL if free */
	int refcount;			/* without our own reference */
	int mapcount;			/* precise mapcount when we began */
	char memcg[PATH_MAX];
	char path[PATH_MAX];		/* scratch, for d_path() */

	unsigned int kernel_mappings;

	/* The scan of every process's page tables. */
	unsigned long user_mappings;	/* refcounted: what mapcount counts */
	unsigned long other_mappings;	/* special or non-present: listed */
	unsigned int processes;		/* processes that map the page */
	unsigned int scanned;		/* mms walked */
	unsigned int kthreads;
	unsigned int exiting;		/* skipped: mm going away */
	unsigned int shared_full;	/* skipped: too many shared mms */
	bool interrupted;		/* fatal signal: the scan stopped */
	struct mm_struct *shared_mms[PD_SHARED_MMS_MAX];
	unsigned int nr_shared_mms;
	struct pd_user_mapping found[PD_LISTED_MAX];
	unsigned int nr_found;		/* in found[], listed or not yet */
	unsigned int nr_listed;		/* of found[], already in the report */
	unsigned long unlisted;		/* found when found[] was full */
	unsigned long unknown_to_rmap;	/* counted mappings rmap lacks */

	/* The reverse map's mappings of the page. */
	bool rmap_walked;
	unsigned long rmap_mappings;
	struct pd_rmap_mapping rmap[PD_LISTED_MAX];
	unsigned int nr_rmap;

	/* What the query cost. */
	unsigned long entries;		/* user page-table entries read */
	unsigned long tables;		/* user PTE tables read */
	u64 scan_ns, longest_hold_ns, kernel_ns, rmap_ns;
};

/* The walk of one process's page tables. */
struct pd_mm_walk {
	struct pd_query *q;
	unsigned long found;		/* mappings found in this mm */
	u64 locked_at;
	u64 deadline;			/* when to let go of the mmap lock */
	unsigned long resume;		/* where to go on after letting go */
	bool progress;			/* walked something in this hold */
};

/* What a single virtual address maps, as a page-table walk found it. */
struct pd_leaf {
	const char *level;		/* "pte", "pmd", "pud", "hugetlb" */
	bool present;
	unsigned long pfn;		/* when present */
	swp_entry_t entry;		/* when not present */
};

struct pd_command {
	const char *name;
	int (*query)(struct pd_query *q, char *input);
	struct pd_report *latest;	/* under pd_latest_lock */
};

/* What an open file serves: its own last query's report, or the latest. */
struct pd_file {
	struct mutex lock;		/* serialises the file's reads and writes */
	struct pd_command *cmd;
	struct pd_report *report;
	bool unread;			/* report is new: read it from its start */
};

static DEFINE_MUTEX(pd_query_lock);	/* one query at a time */
static DEFINE_SPINLOCK(pd_latest_lock);
static struct dentry *pd_dir;

/* ---- Input --------------------------------------------------------------- */

/* The next white-space separated word of *@cur, "" at the end. */
static char *pd_next_word(char **cur)
{
	char *word = skip_spaces(*cur), *end = word;

	while (*end && !isspace(*end))
		end++;
	*cur = *end ? end + 1 : end;
	*end = '\0';
	return word;
}

/*
 * Parse @nr numbers, each decimal or 0x-prefixed hexadecimal, then the
 * option "quick" if it is there; separated and optionally surrounded by
 * white space.  No sign, no octal, no overflow, nothing else on the line.
 */
static int pd_parse_query(char *input, u64 *val, int nr, bool *quick)
{
	char *word;
	int i;

	for (i = 0; i < nr; i++) {
		word = pd_next_word(&input);
		if (!isdigit(*word))
			return -EINVAL;
		if (kstrtou64(word, word[0] == '0' && tolower(word[1]) == 'x' ?
			      16 : 10, &val[i]))
			return -EINVAL;
	}
	word = pd_next_word(&input);
	*quick = !strcmp(word, "quick");
	if (*quick)
		word = pd_next_word(&input);
	return *word ? -EINVAL : 0;
}

/* ---- The page ------------------------------------------------------------ */

/*
 * Take a reference to the folio @page belongs to, the way GUP-fast and
 * compaction do with pages they do not own: folio_try_get() fails on a free
 * page, and once it succeeds the page must still belong to that folio, which
 * a concurrent split, or a free and reuse, could have changed.
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

/* Why pfn_to_online_page() found no page at @pfn. */
static const char *pd_no_page_reason(unsigned long pfn)
{
	if (pfn >= pd_end_of_memory())
		return "beyond the end of memory";
	if (!pfn_valid(pfn))
		return "in a hole without a memory map";
	return "in offline or device memory";
}

#ifdef CONFIG_MEMCG
/*
 * The memcg the folio is charged to, as /proc/kpagecgroup has it: the
 * closest online ancestor of the one recorded in the folio.
 */
static void pd_find_memcg(struct pd_query *q)
{
	struct mem_cgroup *memcg;
	int len;

	strscpy(q->memcg, "none");
	if (mem_cgroup_disabled()) {
		strscpy(q->memcg, "unavailable");
		return;
	}
	if (!q->folio)
		return;

	rcu_read_lock();
	memcg = folio_memcg_check(q->folio);
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
static void pd_find_memcg(struct pd_query *q)
{
	strscpy(q->memcg, "unavailable");
}
#endif

/*
 * Describe the page at q->pfn and pin its folio for the rest of the query,
 * so that what follows is about this page and not about whatever reused it.
 */
static int pd_describe_page(struct pd_query *q)
{
	struct folio *folio;

	q->page = pfn_to_online_page(q->pfn);
	if (!q->page) {
		seq_buf_printf(&q->s, "pfn %#lx paddr %#llx: not online memory, %s\n",
			       q->pfn, (unsigned long long)PFN_PHYS(q->pfn),
			       pd_no_page_reason(q->pfn));
		return -EINVAL;
	}

	folio = pd_get_folio(q->page);
	if (IS_ERR(folio)) {
		seq_buf_printf(&q->s, "pfn %#lx kept changing folio, try again\n",
			       q->pfn);
		return PTR_ERR(folio);
	}
	q->folio = folio;

	seq_buf_printf(&q->s, "pfn %#lx paddr %#llx: node %d, zone %s\n",
		       q->pfn, (unsigned long long)PFN_PHYS(q->pfn),
		       page_to_nid(q->page), page_zone(q->page)->name);
	dump_page_seq_buf(&q->s, q->page, folio ? 1 : 0);
	if (folio) {
		q->refcount = folio_ref_count(folio) - 1;
		q->mapcount = folio_precise_page_mapcount(folio, q->page);
		seq_buf_printf(&q->s, "folio: order %u, %zu bytes, page %lu of it%s\n",
			       folio_order(folio), folio_size(folio),
			       folio_page_idx(folio, q->page),
			       is_zero_pfn(q->pfn) ? ", the shared zero page" : "");
	} else {
		/* Nothing pins a free page: this is all a snapshot. */
		q->refcount = page_ref_count(q->page);
		q->mapcount = atomic_read(&q->page->_mapcount) + 1;
		if (page_mapcount_is_type(q->mapcount))
			q->mapcount = 0;
		seq_buf_puts(&q->s,
			     "folio: none, the refcount is zero: free, or frozen while being split, migrated or freed\n");
	}

	pd_find_memcg(q);
	seq_buf_printf(&q->s, "memcg: %s\n", q->memcg);
	return 0;
}

/* ---- Kernel mappings ----------------------------------------------------- */

static const char *pd_kernel_area(unsigned long addr)
{
	if (addr >= PAGE_OFFSET && addr < (unsigned long)high_memory)
		return "direct map";
	if (is_vmalloc_addr((void *)addr))
		return "vmalloc";
	if (is_vmalloc_or_module_addr((void *)addr))
		return "module";
	if (addr - __START_KERNEL_map < KERNEL_IMAGE_SIZE)
		return "kernel image";
	return "other";
}

/*
 * A kernel leaf entry of @size maps the pages from @first, at @addr or
 * around it: if q->pfn is one of them, report where it is mapped.
 */
static void pd_kernel_leaf(struct pd_query *q, unsigned long addr,
			   unsigned long first, unsigned long size,
			   const char *level)
{
	if (q->pfn - first >= size >> PAGE_SHIFT)
		return;
	addr = ALIGN_DOWN(addr, size) + ((q->pfn - first) << PAGE_SHIFT);
	if (q->kernel_mappings++ < PD_KERNEL_LISTED_MAX)
		seq_buf_printf(&q->s, "kernel: %#lx %s %s\n", addr, level,
			       pd_kernel_area(addr));
}

static int pd_kernel_pud(pud_t *pud, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pud_t val = pudp_get(pud);

	if (pud_present(val) && pud_leaf(val))
		pd_kernel_leaf(walk->private, addr, pud_pfn(val), PUD_SIZE, "pud");
	return 0;
}

static int pd_kernel_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pmd_t val = pmdp_get(pmd);

	if (pmd_present(val) && pmd_leaf(val))
		pd_kernel_leaf(walk->private, addr, pmd_pfn(val), PMD_SIZE, "pmd");
	return 0;
}

static int pd_kernel_pte(pte_t *pte, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pte_t val = ptep_get(pte);

	if (pte_present(val))
		pd_kernel_leaf(walk->private, addr, pte_pfn(val), PAGE_SIZE, "pte");
	return 0;
}

static const struct mm_walk_ops pd_kernel_ops = {
	.pud_entry	= pd_kernel_pud,
	.pmd_entry	= pd_kernel_pmd,
	.pte_entry	= pd_kernel_pte,
};

/*
 * Every init_mm mapping of the page.  The direct map maps each page at one
 * known address, so it is looked up there rather than walked: with
 * DEBUG_PAGEALLOC it takes 4 KiB pages, millions of them.
 */
static int pd_kernel_mappings(struct pd_query *q)
{
	unsigned long direct = (unsigned long)page_to_virt(q->page);
	u64 start = local_clock();
	int err;

	err = walk_kernel_page_tables(direct, direct + PAGE_SIZE,
				      &pd_kernel_ops, q);
	if (!err && !q->kernel_mappings)
		seq_buf_printf(&q->s, "kernel: %#lx direct map, not mapped\n",
			       direct);
	/* A quick query looks no further than the direct map. */
	if (!err && !q->quick)
		err = walk_kernel_page_tables(0, PAGE_OFFSET, &pd_kernel_ops, q);
	if (!err && !q->quick)
		err = walk_kernel_page_tables((unsigned long)high_memory,
					      ULONG_MAX, &pd_kernel_ops, q);
	q->kernel_ns = local_clock() - start;
	if (err)
		return err;

	if (q->kernel_mappings > PD_KERNEL_LISTED_MAX)
		seq_buf_printf(&q->s, "kernel: %u more not listed\n",
			       q->kernel_mappings - PD_KERNEL_LISTED_MAX);
	seq_buf_printf(&q->s, "kernel mappings: %u%s\n", q->kernel_mappings,
		       q->quick ? ", the direct map only (quick)" : "");
	return 0;
}

/* ---- User mappings ------------------------------------------------------- */

/* The name /proc/PID/maps shows for @vma, if it has one.  Under mmap lock. */
static void pd_print_vma_name(struct pd_query *q, struct vm_area_struct *vma)
{
	const struct path *path;
	const char *name, *name_fmt;

	get_vma_name(vma, &path, &name, &name_fmt);
	if (path) {
		name = d_path(path, q->path, sizeof(q->path));
		seq_buf_puts(&q->s, IS_ERR(name) ? "(unnamed file)" : name);
	} else if (name_fmt) {
		seq_buf_printf(&q->s, name_fmt, name);
	} else if (name) {
		seq_buf_puts(&q->s, name);
	}
}

/*
 * Whether the reverse map knows the mapping of the page at @addr in @mm, and
 * mark it found.  Only a complete list of its mappings can say it does not.
 */
static bool pd_rmap_knows(struct pd_query *q, struct mm_struct *mm,
			  unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < q->nr_rmap; i++) {
		if (q->rmap[i].mm == mm && q->rmap[i].addr == addr) {
			q->rmap[i].in_page_tables = true;
			return true;
		}
	}
	return !q->rmap_walked || q->nr_rmap < q->rmap_mappings;
}

/* The page is mapped at @addr in @mm; @note says why it is not counted. */
static void pd_found(struct pd_mm_walk *w, struct mm_struct *mm,
		     unsigned long addr, const char *level, const char *note)
{
	struct pd_query *q = w->q;
	bool unknown = false;

	w->found++;
	if (note) {
		q->other_mappings++;
	} else {
		q->user_mappings++;
		unknown = !pd_rmap_knows(q, mm, addr);
		q->unknown_to_rmap += unknown;
	}

	if (q->nr_found == PD_LISTED_MAX) {
		q->unlisted++;
		return;
	}
	q->found[q->nr_found++] = (struct pd_user_mapping) {
		.addr = addr, .level = level, .note = note,
		.unknown_to_rmap = unknown,
	};
}

/*
 * List what the walk found since it last let go of the mmap lock, while it
 * still holds it: the VMAs the lines name are only stable under it.
 */
static void pd_list_found(struct pd_query *q, struct task_struct *task,
			  struct mm_struct *mm)
{
	bool shared = test_bit(MMF_MULTIPROCESS, &mm->flags);

	for (; q->nr_listed < q->nr_found; q->nr_listed++) {
		struct pd_user_mapping *m = &q->found[q->nr_listed];
		struct vm_area_struct *vma = vma_lookup(mm, m->addr);

		/* Leave room for the lines that end the report. */
		if (seq_buf_used(&q->s) > PD_REPORT_MAX / 4 * 3) {
			q->unlisted++;
			continue;
		}
		seq_buf_printf(&q->s, "user: pid %d (%s) %#lx %s ",
			       task_tgid_nr(task), task->comm, m->addr, m->level);
		if (m->note)
			seq_buf_printf(&q->s, "(%s, not counted) ", m->note);
		if (m->unknown_to_rmap)
			seq_buf_puts(&q->s, "(unknown to rmap) ");
		if (shared)
			seq_buf_puts(&q->s, "(mm shared with other processes) ");
		if (vma)
			pd_print_vma_name(q, vma);
		seq_buf_putc(&q->s, '\n');
	}
}

/*
 * Let others have the mmap lock: after PD_LOCK_HOLD_NS, or as soon as
 * someone waits for it, but only after walking something in this hold.
 */
static bool pd_should_let_go(struct pd_mm_walk *w, struct mm_struct *mm)
{
	if (!w->progress)
		return false;
	return local_clock() > w->deadline || mmap_lock_is_contended(mm);
}

static const char *pd_swap_entry_kind(swp_entry_t entry)
{
	if (is_migration_entry(entry))
		return "migration entry";
	if (is_hwpoison_entry(entry))
		return "hwpoison entry";
	if (is_pte_marker_entry(entry))
		return "pte marker";
	if (is_device_private_entry(entry))
		return "device private entry";
	if (is_device_exclusive_entry(entry))
		return "device exclusive entry";
	return "swap entry";
}

/*
 * A non-present entry naming q->pfn: a migration, hwpoison or device entry.
 * The page's mapcount does not count them.
 */
static void pd_user_swap_entry(struct pd_mm_walk *w, struct mm_struct *mm,
			       unsigned long addr, swp_entry_t entry,
			       const char *level)
{
	if (is_pfn_swap_entry(entry) && swp_offset_pfn(entry) == w->q->pfn)
		pd_found(w, mm, addr, level, pd_swap_entry_kind(entry));
}

static int pd_user_pud(pud_t *pud, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	pud_t val = pudp_get(pud);
	unsigned long first;

	if (!pud_present(val) || !pud_leaf(val))
		return 0;
	/* A user PUD leaf is a DAX or PFN mapping: no rmap, no mapcount. */
	walk->action = ACTION_CONTINUE;
	first = pud_pfn(val);
	if (w->q->pfn - first < (PUD_SIZE >> PAGE_SHIFT))
		pd_found(w, walk->mm,
			 (addr & PUD_MASK) + ((w->q->pfn - first) << PAGE_SHIFT),
			 "pud", "special");
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
 * Whether a PTE may concern @pfn: it maps @pfn, or it is neither empty nor
 * present (a swap, migration or device entry, which pd_user_pte() decodes).
 */
static inline bool pd_pte_may_map(pte_t pte, unsigned long pfn)
{
	bool neither = (pte_none(pte) | pte_present(pte)) == 0;

	return (pte_pfn(pte) == pfn) | neither;
}

/*
 * Whether any of @nr PTEs from @pte may concern @pfn.  Almost every table
 * has none, so a table is first tested whole, with one data-dependent
 * branch an entry (pte_pfn()'s) where testing each entry as pd_user_pte()
 * does takes three: the scan's inner loop, the cost that grows with the
 * memory mapped on the machine.
 */
static bool pd_pte_table_may_map(pte_t *pte, unsigned int nr,
				 unsigned long pfn)
{
	bool may = false;
	unsigned int i;

	for (i = 0; i < nr; i++)
		may |= pd_pte_may_map(ptep_get(pte + i), pfn);
	return may;
}

/* One entry that pd_pte_may_map() let through. */
static void pd_user_pte(struct pd_mm_walk *w, struct mm_walk *walk,
			unsigned long addr, pte_t pte)
{
	if (pte_present(pte)) {
		if (pte_pfn(pte) == w->q->pfn)
			pd_found(w, walk->mm, addr, "pte",
				 vm_normal_page(walk->vma, addr, pte) ?
				 NULL : "special");
	} else if (is_swap_pte(pte)) {
		pd_user_swap_entry(w, walk->mm, addr, pte_to_swp_entry(pte),
				   "pte");
	}
}

/*
 * Read a whole PTE table in one go: a callback per entry would cost more
 * than reading the entry does.
 */
static void pd_user_pte_table(struct pd_mm_walk *w, pmd_t *pmd,
			      unsigned long addr, unsigned long end,
			      struct mm_walk *walk)
{
	unsigned long pfn = w->q->pfn;
	pte_t *start, *pte;
	spinlock_t *ptl;		/* the PTE table's */

	start = pte_offset_map_lock(walk->mm, pmd, addr, &ptl);
	if (!start) {
		/* The table went away, or became a huge PMD: look again. */
		walk->action = ACTION_AGAIN;
		return;
	}
	w->q->tables++;
	w->q->entries += (end - addr) >> PAGE_SHIFT;
	if (pd_pte_table_may_map(start, (end - addr) >> PAGE_SHIFT, pfn)) {
		for (pte = start; addr != end; pte++, addr += PAGE_SIZE) {
			pte_t val = ptep_get(pte);

			if (pd_pte_may_map(val, pfn))
				pd_user_pte(w, walk, addr, val);
		}
	}
	pte_unmap_unlock(start, ptl);
}

static int pd_user_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
		       struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	pmd_t val = pmdp_get(pmd);
	unsigned long first;

	if (pd_should_let_go(w, walk->mm)) {
		w->resume = addr;
		return 1;
	}
	w->progress = true;
	/* Never let the walker go down to PTEs, nor split a huge PMD. */
	walk->action = ACTION_CONTINUE;

	if (is_pmd_migration_entry(val)) {
		pd_user_swap_entry(w, walk->mm, addr, pmd_to_swp_entry(val), "pmd");
		return 0;
	}
	if (!pmd_present(val))
		return 0;
	if (!pmd_leaf(val)) {
		pd_user_pte_table(w, pmd, addr, next, walk);
		return 0;
	}

	/* A huge PMD: the mmap lock keeps a PTE table from becoming one. */
	w->q->entries++;
	first = pmd_pfn(val);
	if (w->q->pfn - first < (PMD_SIZE >> PAGE_SHIFT))
		pd_found(w, walk->mm,
			 (addr & PMD_MASK) + ((w->q->pfn - first) << PAGE_SHIFT),
			 "pmd", pd_pmd_counted(walk->vma, addr, val) ? NULL : "special");
	return 0;
}

static int pd_user_hugetlb(pte_t *pte, unsigned long hmask, unsigned long addr,
			   unsigned long next, struct mm_walk *walk)
{
	struct pd_mm_walk *w = walk->private;
	pte_t val = huge_ptep_get(walk->mm, addr, pte);
	unsigned long first;

	if (pd_should_let_go(w, walk->mm)) {
		w->resume = addr;
		return 1;
	}
	w->progress = true;

	addr &= hmask;
	w->q->entries++;
	if (pte_present(val)) {
		first = pte_pfn(val);
		if (w->q->pfn - first < ((~hmask + 1) >> PAGE_SHIFT))
			pd_found(w, walk->mm,
				 addr + ((w->q->pfn - first) << PAGE_SHIFT),
				 "hugetlb", NULL);
	} else if (!huge_pte_none(val)) {
		pd_user_swap_entry(w, walk->mm, addr, pte_to_swp_entry(val),
				   "hugetlb");
	}
	return 0;
}

/* Walk VM_PFNMAP VMAs too: their mappings are listed, as special. */
static int pd_walk_every_vma(unsigned long addr, unsigned long next,
			     struct mm_walk *walk)
{
	return 0;
}

static const struct mm_walk_ops pd_user_ops = {
	.pud_entry	= pd_user_pud,
	.pmd_entry	= pd_user_pmd,
	.hugetlb_entry	= pd_user_hugetlb,
	.test_walk	= pd_walk_every_vma,
	.walk_lock	= PGWALK_RDLOCK,
};

/*
 * Walk the page tables of @mm, on behalf of @task, for mappings of q->pfn.
 * The mmap lock is taken for a bounded time, let go, and taken again where
 * the walk stopped; what changed meanwhile is the race every report has.
 */
static void pd_walk_mm(struct pd_query *q, struct task_struct *task,
		       struct mm_struct *mm)
{
	struct pd_mm_walk w = { .q = q };
	unsigned long addr = 0;
	int err;

	q->scanned++;
	while (addr < TASK_SIZE_MAX) {
		if (mmap_read_lock_killable(mm)) {
			q->interrupted = true;
			break;
		}
		w.locked_at = local_clock();
		w.deadline = w.locked_at + PD_LOCK_HOLD_NS;
		w.progress = false;
		w.resume = TASK_SIZE_MAX;
		err = walk_page_range(mm, addr, TASK_SIZE_MAX, &pd_user_ops, &w);
		pd_list_found(q, task, mm);
		mmap_read_unlock(mm);
		q->longest_hold_ns = max(q->longest_hold_ns,
					 local_clock() - w.locked_at);

		if (err < 0 || fatal_signal_pending(current)) {
			q->interrupted = true;
			break;
		}
		addr = w.resume;
		cond_resched();
	}
	if (w.found)
		q->processes++;
}

/*
 * Whether @mm, which other processes may share (CLONE_VM, as vfork() does),
 * was already walked.  The shared mms walked are remembered with mmgrab(),
 * which keeps the struct alive for the comparison, not the address space.
 */
static bool pd_mm_walked(struct pd_query *q, struct mm_struct *mm)
{
	unsigned int i;

	if (!test_bit(MMF_MULTIPROCESS, &mm->flags))
		return false;
	for (i = 0; i < q->nr_shared_mms; i++)
		if (q->shared_mms[i] == mm)
			return true;
	if (q->nr_shared_mms == PD_SHARED_MMS_MAX) {
		q->shared_full++;
		return true;
	}
	mmgrab(mm);
	q->shared_mms[q->nr_shared_mms++] = mm;
	return false;
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
	if (!pd_mm_walked(q, mm))
		pd_walk_mm(q, task, mm);
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

static void pd_user_mappings(struct pd_query *q)
{
	u64 start = local_clock();
	struct task_struct *task;
	unsigned int i;
	pid_t nr = 1;

	while (!q->interrupted && (task = pd_next_process(&nr))) {
		pd_scan_process(q, task);
		put_task_struct(task);
		cond_resched();
	}
	for (i = 0; i < q->nr_shared_mms; i++)
		mmdrop(q->shared_mms[i]);
	q->scan_ns = local_clock() - start;

	if (q->unlisted)
		seq_buf_printf(&q->s, "user: %lu more not listed\n", q->unlisted);
	seq_buf_printf(&q->s,
		       "user mappings: %lu counted, %lu not counted, in %u processes; %u processes scanned, %u kernel threads, skipped: %u exiting, %u with a shared mm%s\n",
		       q->user_mappings, q->other_mappings, q->processes,
		       q->scanned, q->kthreads, q->exiting, q->shared_full,
		       q->interrupted ? "; interrupted" : "");
}

/* ---- The reverse map ----------------------------------------------------- */

static void pd_rmap_found(struct pd_query *q, struct mm_struct *mm,
			  unsigned long addr, const char *level)
{
	unsigned int i;

	/* KSM's rmap walk can visit a VMA twice: once for a forked child. */
	for (i = 0; i < q->nr_rmap; i++)
		if (q->rmap[i].mm == mm && q->rmap[i].addr == addr)
			return;
	q->rmap_mappings++;
	if (q->nr_rmap == PD_LISTED_MAX)
		return;
	mmgrab(mm);
	q->rmap[q->nr_rmap++] = (struct pd_rmap_mapping) {
		.mm = mm, .addr = addr, .level = level,
	};
}

/*
 * rmap_walk() callback: where @folio is mapped in @vma; keep the mappings of
 * the page asked about.  It runs under the rmap lock, and under the page
 * table lock that page_vma_mapped_walk() holds when it finds a mapping.
 */
static bool pd_rmap_one(struct folio *folio, struct vm_area_struct *vma,
			unsigned long addr, void *arg)
{
	struct pd_query *q = arg;
	unsigned long offset = folio_page_idx(folio, q->page) << PAGE_SHIFT;
	DEFINE_FOLIO_VMA_WALK(pvmw, folio, vma, addr, 0);

	while (page_vma_mapped_walk(&pvmw)) {
		pte_t pte;

		/* A huge mapping maps the whole folio, the page included. */
		if (folio_test_hugetlb(folio)) {
			pd_rmap_found(q, vma->vm_mm, pvmw.address + offset,
				      "hugetlb");
			continue;
		}
		if (!pvmw.pte) {
			pd_rmap_found(q, vma->vm_mm, pvmw.address + offset, "pmd");
			continue;
		}
		pte = ptep_get(pvmw.pte);
		if (pte_present(pte) && pte_pfn(pte) == q->pfn)
			pd_rmap_found(q, vma->vm_mm, pvmw.address, "pte");
	}
	return true;
}

/* Whether the reverse map tracks where @folio is mapped. */
static bool pd_folio_has_rmap(struct folio *folio)
{
	unsigned long mapping = (unsigned long)READ_ONCE(folio->mapping);

	if (page_has_type(&folio->page) && !folio_test_hugetlb(folio))
		return false;
	return mapping &&
	       (mapping & PAGE_MAPPING_FLAGS) != PAGE_MAPPING_MOVABLE;
}

/*
 * Where the reverse map says the page is mapped: O(mappers), where the scan
 * of page tables is O(memory mapped), but only what the rmap knows.  A file
 * or KSM folio is locked for the walk, as damon and page_idle do, so that
 * its mapping cannot go away.
 */
static void pd_rmap_mappings(struct pd_query *q)
{
	/*
	 * Nothing holds an anon folio's anon_vma for us (no mmap lock, and
	 * the folio may be unmapped meanwhile): take it as page_idle and
	 * damon do, with a reference if it must wait for the lock.
	 */
	struct rmap_walk_control rwc = {
		.rmap_one = pd_rmap_one,
		.anon_lock = folio_lock_anon_vma_read,
		.arg = q,
	};
	struct folio *folio = q->folio;
	u64 start = local_clock();
	bool lock;

	q->rmap_walked = true;
	if (!folio || !pd_folio_has_rmap(folio))
		return;
	lock = !folio_test_anon(folio) || folio_test_ksm(folio);
	if (lock && folio_lock_killable(folio)) {
		q->rmap_walked = false;
		q->interrupted = true;
		return;
	}
	rmap_walk(folio, &rwc);
	if (lock)
		folio_unlock(folio);
	q->rmap_ns = local_clock() - start;
}

/* A process that @mm belongs to, referenced, or NULL. */
static struct task_struct *pd_mm_owner(struct mm_struct *mm)
{
	struct task_struct *p, *t, *owner = NULL;

	rcu_read_lock();
	for_each_process_thread(p, t) {
		if (READ_ONCE(t->mm) == mm) {
			owner = p;
			get_task_struct(owner);
			goto out;
		}
	}
out:
	rcu_read_unlock();
	return owner;
}

/* The name of the VMA at @addr in @mm, which nothing but mmgrab() holds. */
static void pd_print_mm_vma_name(struct pd_query *q, struct mm_struct *mm,
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

/*
 * List the reverse map's mappings: all of them for a quick query, else the
 * ones the scan of page tables did not find.
 */
static void pd_list_rmap(struct pd_query *q)
{
	unsigned long unlisted = q->rmap_mappings - q->nr_rmap;
	unsigned int i, j, mms = 0;

	for (i = 0; i < q->nr_rmap; i++) {
		struct pd_rmap_mapping *m = &q->rmap[i];
		struct task_struct *owner;

		for (j = 0; j < i && q->rmap[j].mm != m->mm; j++)
			;
		mms += j == i;
		if (m->in_page_tables)
			continue;
		if (seq_buf_used(&q->s) > PD_REPORT_MAX / 4 * 3) {
			unlisted++;
			continue;
		}
		owner = pd_mm_owner(m->mm);
		seq_buf_printf(&q->s, "rmap: pid %d (%s) %#lx %s ",
			       owner ? task_tgid_nr(owner) : 0,
			       owner ? owner->comm : "none", m->addr, m->level);
		if (!q->quick)
			seq_buf_puts(&q->s, "(not in page tables) ");
		pd_print_mm_vma_name(q, m->mm, m->addr);
		seq_buf_putc(&q->s, '\n');
		if (owner)
			put_task_struct(owner);
	}
	if (unlisted)
		seq_buf_printf(&q->s, "rmap: %lu more not listed\n", unlisted);
	seq_buf_printf(&q->s, "rmap mappings: %lu%s\n", q->rmap_mappings,
		       q->rmap_walked ? "" : ", the reverse map was not walked");
	if (q->quick) {
		/* No scan: what the summary says of mappings is the rmap's. */
		q->user_mappings = q->rmap_mappings;
		q->processes = mms;
	}
}

/* ---- Verdict ------------------------------------------------------------- */

static const char *pd_verdict(struct pd_query *q)
{
	int now = q->folio ? folio_precise_page_mapcount(q->folio, q->page) :
			     q->mapcount;

	if (q->interrupted || q->exiting || q->shared_full || !q->rmap_walked) {
		seq_buf_puts(&q->s, "verdict: partial, the scan did not see every process\n");
		return "partial";
	}
	if (now != q->mapcount) {
		seq_buf_printf(&q->s,
			       "verdict: partial, mapcount changed from %d to %d during the scan\n",
			       q->mapcount, now);
		return "partial";
	}
	if (q->user_mappings != q->mapcount) {
		seq_buf_printf(&q->s, "verdict: mismatch, mapcount %d but %lu mappings in %s\n",
			       q->mapcount, q->user_mappings,
			       q->quick ? "the reverse map" : "page tables");
		return "mismatch";
	}
	if (!q->quick && (q->rmap_mappings != q->user_mappings ||
			  q->unknown_to_rmap)) {
		seq_buf_printf(&q->s,
			       "verdict: mismatch, %lu mappings in page tables, %lu in the reverse map, %lu unknown to it\n",
			       q->user_mappings, q->rmap_mappings,
			       q->unknown_to_rmap);
		return "mismatch";
	}
	seq_buf_printf(&q->s, "verdict: ok, mapcount %d matches the mappings in %s\n",
		       q->mapcount, q->quick ? "the reverse map" :
		       "page tables and the reverse map");
	return "ok";
}

/* ---- Queries ------------------------------------------------------------- */

/* The whole report on the page at q->pfn. */
static int pd_report_pfn(struct pd_query *q)
{
	const char *verdict;
	int err;

	err = pd_describe_page(q);
	if (err)
		return err;
	err = pd_kernel_mappings(q);
	if (err)
		return err;
	pd_rmap_mappings(q);
	if (!q->quick)
		pd_user_mappings(q);
	pd_list_rmap(q);
	seq_buf_printf(&q->s,
		       "cost: %lu page-table entries in %lu PTE tables in %llu us, longest mmap lock hold %llu us; kernel page tables %llu us; rmap %llu us\n",
		       q->entries, q->tables, div_u64(q->scan_ns, NSEC_PER_USEC),
		       div_u64(q->longest_hold_ns, NSEC_PER_USEC),
		       div_u64(q->kernel_ns, NSEC_PER_USEC),
		       div_u64(q->rmap_ns, NSEC_PER_USEC));
	verdict = pd_verdict(q);
	seq_buf_printf(&q->s,
		       "summary: pfn=%#lx refcount=%d mapcount=%d kernel_mappings=%u user_mappings=%lu processes=%u memcg=%s verdict=%s rmap_mappings=%lu\n",
		       q->pfn, q->refcount, q->mapcount, q->kernel_mappings,
		       q->user_mappings, q->processes, q->memcg, verdict,
		       q->rmap_mappings);
	return q->interrupted ? -EINTR : 0;
}

static int pd_phys(struct pd_query *q, char *input)
{
	u64 paddr;

	if (pd_parse_query(input, &paddr, 1, &q->quick)) {
		seq_buf_printf(&q->s, "phys: invalid input \"%*pE\", expected PADDR [quick]\n",
			       (int)strlen(q->input), q->input);
		return -EINVAL;
	}
	q->pfn = PHYS_PFN(paddr);
	return pd_report_pfn(q);
}

/* Describe a non-present entry, where userspace asked for a page. */
static void pd_print_missing(struct seq_buf *s, const struct pd_leaf *leaf)
{
	if (!leaf->level) {
		seq_buf_puts(s, "leaf: none, nothing is mapped there\n");
		return;
	}
	seq_buf_printf(s, "leaf: %s, not present: %s", leaf->level,
		       pd_swap_entry_kind(leaf->entry));
	if (is_pfn_swap_entry(leaf->entry))
		seq_buf_printf(s, " for pfn %#lx", swp_offset_pfn(leaf->entry));
	else if (!non_swap_entry(leaf->entry))
		seq_buf_printf(s, " (type %u, offset %#lx)", swp_type(leaf->entry),
			       swp_offset(leaf->entry));
	seq_buf_putc(s, '\n');
}

static void pd_leaf_present(struct pd_leaf *leaf, unsigned long addr,
			    unsigned long first, unsigned long size,
			    const char *level)
{
	leaf->level = level;
	leaf->present = true;
	leaf->pfn = first + ((addr & (size - 1)) >> PAGE_SHIFT);
}

static void pd_leaf_missing(struct pd_leaf *leaf, swp_entry_t entry,
			    const char *level)
{
	leaf->level = level;
	leaf->entry = entry;
}

static int pd_lookup_pud(pud_t *pud, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pud_t val = pudp_get(pud);

	if (pud_present(val) && pud_leaf(val)) {
		walk->action = ACTION_CONTINUE;
		pd_leaf_present(walk->private, addr, pud_pfn(val), PUD_SIZE, "pud");
	}
	return 0;
}

static int pd_lookup_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pmd_t val = pmdp_get(pmd);

	if (is_pmd_migration_entry(val)) {
		walk->action = ACTION_CONTINUE;
		pd_leaf_missing(walk->private, pmd_to_swp_entry(val), "pmd");
	} else if (pmd_present(val) && pmd_leaf(val)) {
		/* As in pd_user_pmd(): do not let the walker split it. */
		walk->action = ACTION_CONTINUE;
		pd_leaf_present(walk->private, addr, pmd_pfn(val), PMD_SIZE, "pmd");
	}
	return 0;
}

static int pd_lookup_pte(pte_t *pte, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	pte_t val = ptep_get(pte);

	if (pte_present(val))
		pd_leaf_present(walk->private, addr, pte_pfn(val), PAGE_SIZE, "pte");
	else if (!pte_none(val))
		pd_leaf_missing(walk->private, pte_to_swp_entry(val), "pte");
	return 0;
}

static int pd_lookup_hugetlb(pte_t *pte, unsigned long hmask,
			     unsigned long addr, unsigned long next,
			     struct mm_walk *walk)
{
	pte_t val = huge_ptep_get(walk->mm, addr, pte);

	if (pte_present(val))
		pd_leaf_present(walk->private, addr, pte_pfn(val), ~hmask + 1,
				"hugetlb");
	else if (!huge_pte_none(val))
		pd_leaf_missing(walk->private, pte_to_swp_entry(val), "hugetlb");
	return 0;
}

static const struct mm_walk_ops pd_lookup_ops = {
	.pud_entry	= pd_lookup_pud,
	.pmd_entry	= pd_lookup_pmd,
	.pte_entry	= pd_lookup_pte,
	.hugetlb_entry	= pd_lookup_hugetlb,
	.test_walk	= pd_walk_every_vma,
	.walk_lock	= PGWALK_RDLOCK,
};

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

/* Find what @vaddr maps in @mm, under its mmap lock. */
static int pd_lookup_user(struct pd_query *q, struct mm_struct *mm,
			  unsigned long vaddr, struct pd_leaf *leaf)
{
	struct vm_area_struct *vma;
	int err;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, vaddr);
	if (vma) {
		pd_print_vma(q, vma);
		err = walk_page_range(mm, vaddr, vaddr + PAGE_SIZE,
				      &pd_lookup_ops, leaf);
	} else {
		seq_buf_puts(&q->s, "vma: none\n");
		err = 0;
	}
	mmap_read_unlock(mm);
	return err;
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

static int pd_virt_user(struct pd_query *q, pid_t nr, unsigned long vaddr,
			struct pd_leaf *leaf)
{
	struct task_struct *task;
	struct mm_struct *mm;
	int err;

	task = pd_get_task(nr);
	if (!task) {
		seq_buf_printf(&q->s, "virt: no process with pid %d\n", nr);
		return -ESRCH;
	}
	if (task->flags & PF_KTHREAD) {
		seq_buf_printf(&q->s,
			       "virt: pid %d (%s) is a kernel thread, use pid 0 for kernel addresses\n",
			       nr, task->comm);
		err = -EINVAL;
		goto put_task;
	}
	mm = get_task_mm(task);
	if (!mm) {
		seq_buf_printf(&q->s, "virt: pid %d (%s) is exiting, its memory is gone\n",
			       nr, task->comm);
		err = -ESRCH;
		goto put_task;
	}
	seq_buf_printf(&q->s, "virt: pid %d (%s) vaddr %#lx\n", nr, task->comm,
		       vaddr);
	err = pd_lookup_user(q, mm, vaddr, leaf);
	mmput(mm);
put_task:
	put_task_struct(task);
	return err;
}

static int pd_virt(struct pd_query *q, char *input)
{
	struct pd_leaf leaf = {};
	unsigned long vaddr;
	bool kernel, kernel_addr;
	u64 val[2];
	int err;

	if (pd_parse_query(input, val, 2, &q->quick)) {
		seq_buf_printf(&q->s, "virt: invalid input \"%*pE\", expected PID VADDR [quick]\n",
			       (int)strlen(q->input), q->input);
		return -EINVAL;
	}
	if (val[0] > PID_MAX_LIMIT) {
		seq_buf_printf(&q->s, "virt: pid %llu out of range\n", val[0]);
		return -EINVAL;
	}
	vaddr = val[1] & PAGE_MASK;

	/* PID 0 asks about a kernel address, any other about a user one. */
	kernel = !val[0];
	kernel_addr = vaddr >= TASK_SIZE_MAX;
	if (kernel != kernel_addr) {
		seq_buf_printf(&q->s,
			       "virt: %#lx is not a %s address, use %s\n", vaddr,
			       val[0] ? "user" : "kernel",
			       val[0] ? "pid 0 for kernel addresses" :
					"the pid of its process");
		return -EINVAL;
	}
	if (kernel) {
		seq_buf_printf(&q->s, "virt: kernel vaddr %#lx\n", vaddr);
		err = walk_kernel_page_tables(vaddr, vaddr + PAGE_SIZE,
					      &pd_lookup_ops, &leaf);
	} else {
		err = pd_virt_user(q, val[0], vaddr, &leaf);
	}
	if (err)
		return err;

	if (!leaf.present) {
		pd_print_missing(&q->s, &leaf);
		return -ENXIO;
	}
	seq_buf_printf(&q->s, "leaf: %s, pfn %#lx\n", leaf.level, leaf.pfn);
	q->pfn = leaf.pfn;
	err = pd_report_pfn(q);
	/* A mapping of something that is not memory: nothing to report on. */
	return err == -EINVAL ? -ENXIO : err;
}

/* ---- Reports and files --------------------------------------------------- */

static void pd_report_release(struct kref *ref)
{
	kfree(container_of(ref, struct pd_report, ref));
}

static void pd_report_put(struct pd_report *report)
{
	if (report)
		kref_put(&report->ref, pd_report_release);
}

static struct pd_report *pd_latest_get(struct pd_command *cmd)
{
	struct pd_report *report;

	spin_lock(&pd_latest_lock);
	report = cmd->latest;
	if (report)
		kref_get(&report->ref);
	spin_unlock(&pd_latest_lock);
	return report;
}

static void pd_latest_set(struct pd_command *cmd, struct pd_report *report)
{
	struct pd_report *old;

	kref_get(&report->ref);
	spin_lock(&pd_latest_lock);
	old = cmd->latest;
	cmd->latest = report;
	spin_unlock(&pd_latest_lock);
	pd_report_put(old);
}

/* Print the report to the kernel log, and keep it for reading back. */
static struct pd_report *pd_publish(struct pd_command *cmd, struct seq_buf *s)
{
	struct pd_report *report;
	size_t len = seq_buf_used(s);

	seq_buf_do_printk(s, KERN_INFO pr_fmt(""));
	if (seq_buf_has_overflowed(s))
		pr_warn("%s: the report above is truncated\n", cmd->name);

	report = kmalloc(struct_size(report, text, len), GFP_KERNEL);
	if (!report)
		return NULL;
	kref_init(&report->ref);
	report->len = len;
	memcpy(report->text, seq_buf_str(s), len);
	pd_latest_set(cmd, report);
	return report;
}

/* Copy in @count bytes of input: at most PD_INPUT_MAX, without NUL. */
static int pd_copy_input(struct pd_query *q, const char *name,
			 const char __user *ubuf, size_t count)
{
	if (!count || count > PD_INPUT_MAX) {
		seq_buf_printf(&q->s, "%s: %zu bytes of input, expected 1 to %d\n",
			       name, count, PD_INPUT_MAX);
		return -EINVAL;
	}
	if (copy_from_user(q->input, ubuf, count)) {
		seq_buf_printf(&q->s, "%s: cannot read the input\n", name);
		return -EFAULT;
	}
	q->input[count] = '\0';
	if (strlen(q->input) != count) {
		seq_buf_printf(&q->s, "%s: the input contains a NUL byte\n", name);
		return -EINVAL;
	}
	return 0;
}

static struct pd_query *pd_query_alloc(void)
{
	struct pd_query *q;
	char *buf;

	q = kvzalloc(sizeof(*q), GFP_KERNEL);
	buf = kvmalloc(PD_REPORT_MAX, GFP_KERNEL);
	if (!q || !buf) {
		kvfree(q);
		kvfree(buf);
		return NULL;
	}
	seq_buf_init(&q->s, buf, PD_REPORT_MAX);
	return q;
}

static void pd_query_free(struct pd_query *q)
{
	unsigned int i;

	for (i = 0; i < q->nr_rmap; i++)
		mmdrop(q->rmap[i].mm);
	if (q->folio)
		folio_put(q->folio);
	kvfree(q->s.buffer);
	kvfree(q);
}

/*
 * Run the query written to @file.  Its report, error or not, goes to the
 * log and becomes what @file reads back, and the latest report of the file.
 */
static ssize_t pd_write(struct file *file, const char __user *ubuf,
			size_t count, loff_t *ppos)
{
	struct pd_file *f = file->private_data;
	struct pd_report *report;
	char input[PD_INPUT_MAX + 1];
	struct pd_query *q;
	int err;

	q = pd_query_alloc();
	if (!q)
		return -ENOMEM;
	if (mutex_lock_killable(&pd_query_lock)) {
		err = -EINTR;
		goto free;
	}
	err = pd_copy_input(q, f->cmd->name, ubuf, count);
	if (!err) {
		/* The query may cut its input up; errors quote it whole. */
		memcpy(input, q->input, count + 1);
		err = f->cmd->query(q, input);
	}
	report = pd_publish(f->cmd, &q->s);
	mutex_unlock(&pd_query_lock);

	mutex_lock(&f->lock);
	pd_report_put(f->report);
	f->report = report;
	/*
	 * The next read starts at the new report's beginning, wherever the
	 * last one left the file: the position a write sets is dropped when
	 * it fails, and a pwrite() sets none.
	 */
	f->unread = true;
	mutex_unlock(&f->lock);
free:
	pd_query_free(q);
	return err ?: count;
}

static ssize_t pd_read(struct file *file, char __user *ubuf, size_t count,
		       loff_t *ppos)
{
	struct pd_file *f = file->private_data;
	ssize_t ret = 0;

	mutex_lock(&f->lock);
	if (!f->report)
		f->report = pd_latest_get(f->cmd);
	if (f->unread)
		*ppos = 0;
	f->unread = false;
	if (f->report)
		ret = simple_read_from_buffer(ubuf, count, ppos, f->report->text,
					      f->report->len);
	mutex_unlock(&f->lock);
	return ret;
}

static int pd_open(struct inode *inode, struct file *file)
{
	struct pd_file *f;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	f->cmd = inode->i_private;
	file->private_data = f;
	return 0;
}

static int pd_release(struct inode *inode, struct file *file)
{
	struct pd_file *f = file->private_data;

	pd_report_put(f->report);
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

static const struct file_operations pd_fops = {
	.owner		= THIS_MODULE,
	.open		= pd_open,
	.read		= pd_read,
	.write		= pd_write,
	.release	= pd_release,
	.llseek		= default_llseek,
};

static struct pd_command pd_commands[] = {
	{ .name = "virt", .query = pd_virt },
	{ .name = "phys", .query = pd_phys },
};

static int __init page_detective_init(void)
{
	int i;

	pd_dir = debugfs_create_dir("page_detective", NULL);
	for (i = 0; i < ARRAY_SIZE(pd_commands); i++)
		debugfs_create_file(pd_commands[i].name, 0600, pd_dir,
				    &pd_commands[i], &pd_fops);
	return 0;
}
module_init(page_detective_init);

static void __exit page_detective_exit(void)
{
	int i;

	debugfs_remove_recursive(pd_dir);
	for (i = 0; i < ARRAY_SIZE(pd_commands); i++)
		pd_report_put(pd_commands[i].latest);
}
module_exit(page_detective_exit);

MODULE_DESCRIPTION("Page Detective: what is this page, and who maps it?");
MODULE_LICENSE("GPL");
