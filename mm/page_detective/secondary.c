// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page Detective: what secondary MMUs map of the page.
 *
 * A secondary MMU (KVM's, for a VM's guest memory) mirrors a process's page
 * tables and keeps its own.  Each describes its mappings through the mmu
 * notifier's describe() operation, in its own terms (for KVM: the VM, the
 * guest-physical address, the memslot, its dirty log): Page Detective asks
 * every mm the query met that has mmu notifiers, for each address where
 * the mm maps the page and, unless the query is quick, for every mapping of
 * the page itself, wherever it is.
 *
 * A secondary mapping must map what the host page table maps at the address
 * it mirrors: the mmu notifiers make it go before the host's entry changes.
 * One that maps the page while the host maps another page or none there (or
 * that maps another page where the host maps this one) is stale, the
 * corruption that live migration's checksums catch.  So is a mapping its
 * owner says was written while its dirty log has no record of it.  Both are
 * re-checked, as the host's disagreements are, before they are believed.
 */
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "pd.h"

/* Describing into the query: the mm being asked. */
struct pd_secondary_walk {
	struct pd_query *q;
	struct pd_mm *mm;
};

static bool pd_secondary_same(const struct mmu_notifier_mapping *a,
			      const struct mmu_notifier_mapping *b)
{
	return a->owner == b->owner && !strcmp(a->name, b->name) &&
	       a->addr == b->addr && a->present == b->present &&
	       (!a->present || a->pfn == b->pfn);
}

/* mmu_notifier_describe_fn: keep @m, once.  Under the MMU's locks. */
static void pd_secondary_found(void *arg, const struct mmu_notifier_mapping *m)
{
	struct pd_secondary_walk *w = arg;
	struct pd_query *q = w->q;
	struct pd_secondary *sec;
	unsigned int i;

	for (i = 0; i < q->nr_secondary; i++)
		if (pd_secondary_same(&q->secondary[i].m, m))
			return;
	if (q->nr_secondary == PD_SECONDARY_MAX) {
		q->more_secondary++;
		return;
	}
	sec = &q->secondary[q->nr_secondary++];
	sec->mm = w->mm;
	sec->m = *m;
}

static void pd_print_secondary(struct pd_query *q,
			       const struct pd_secondary *sec)
{
	const struct mmu_notifier_mapping *m = &sec->m;

	seq_buf_printf(&q->s, "%s: VM %s (pid %d %s) %s %#llx", m->owner,
		       m->name, sec->mm->tgid,
		       sec->mm->tgid ? sec->mm->comm : "none", m->space,
		       m->addr);
	if (m->hva != ULONG_MAX)
		seq_buf_printf(&q->s, " hva %#lx", m->hva);
	seq_buf_printf(&q->s, " %s: ", m->detail);
	if (!m->present) {
		seq_buf_puts(&q->s, "not mapped\n");
		return;
	}
	seq_buf_printf(&q->s, "pfn %#lx%s ", m->pfn,
		       pd_pfn_counted(q, m->pfn) ? "" : " (another page)");
	pd_print_leaf_size(&q->s, m->nr_pages);
	seq_buf_printf(&q->s, "%s%s%s\n", m->writable ? " writable" : "",
		       m->accessed ? " accessed" : "",
		       m->dirty ? " dirty" : "");
}

/*
 * Ask w->mm's secondary MMUs for every mapping of the page, wherever it is,
 * each given to @found: a walk of all they map, which each reads a share at
 * a time, letting go of its locks between two (see
 * mmu_notifier_describe_pages()).
 * Return: -EINTR if a fatal signal came meanwhile.
 */
static int pd_secondary_describe_pages(struct pd_query *q,
				       struct pd_secondary_walk *w,
				       mmu_notifier_describe_fn found)
{
	u64 pos = 0;

	do {
		pos = mmu_notifier_describe_pages(w->mm->mm, q->first_pfn,
						  q->nr_pfns, pos, found, w);
		cond_resched();
		if (fatal_signal_pending(current)) {
			q->interrupted = true;
			return -EINTR;
		}
	} while (pos != U64_MAX);
	return 0;
}

/*
 * mmu_notifier_describe_fn of a batch's scan: keep the present leaves that
 * map a page the scan looks for, as found (a share read twice is told
 * apart by each page's pd_secondary_found()).
 */
static void pd_secondary_found_for_batch(void *arg,
					 const struct mmu_notifier_mapping *m)
{
	struct pd_secondary_walk *w = arg;
	struct pd_query *scan = w->q;

	if (!m->present ||
	    !pd_batch_looks_for(scan->targets, m->pfn, m->nr_pages))
		return;
	if (scan->nr_batch_secondary == PD_BATCH_SECONDARY_MAX) {
		scan->more_secondary++;
		return;
	}
	scan->batch_secondary[scan->nr_batch_secondary++] =
		(struct pd_secondary) { .mm = w->mm, .m = *m };
}

/*
 * source.scan: one walk of what the secondary MMUs of each mm the chunk's
 * scan met map (scan->first_pfn and scan->nr_pfns bound its pages),
 * instead of one a page: a walk reads every leaf of a VM, whatever it
 * looks for.  Each page's query meets only the mms that map it; the scan
 * meets every process's, as a page's query alone does, so a VM that maps
 * a page its VMM no longer does is asked too.
 */
static void pd_secondary_scan(struct pd_query *scan)
{
	struct pd_secondary_walk w = { .q = scan };
	struct pd_mm *pdm;

	list_for_each_entry(pdm, &scan->mm_list, list) {
		w.mm = pdm;
		if (pd_secondary_describe_pages(scan, &w,
						pd_secondary_found_for_batch))
			return;
	}
	scan->batch_secondary_whole = !scan->more_secondary;
}

/*
 * What the chunk's scan found of the page of @q, in the mms that map it
 * (an mm met only by the scan is named as the scan named it).
 * Return: false if @q is not of a batch, or the scan did not finish or
 * could not keep all it found: @q asks the mms it met itself.
 */
static bool pd_secondary_take(struct pd_query *q)
{
	const struct pd_query *scan = pd_batch_scanned(q);
	struct pd_secondary_walk w = { .q = q };
	const struct pd_secondary *sec;
	unsigned int i;

	if (!scan || !scan->batch_secondary_whole)
		return false;
	for (i = 0; i < scan->nr_batch_secondary; i++) {
		sec = &scan->batch_secondary[i];
		if (sec->m.pfn >= q->first_pfn + q->nr_pfns ||
		    sec->m.pfn + sec->m.nr_pages <= q->first_pfn)
			continue;
		w.mm = pd_mm_get(q, sec->mm->mm);
		if (!w.mm)
			continue;
		if (!w.mm->tgid) {
			w.mm->tgid = sec->mm->tgid;
			strscpy(w.mm->comm, sec->mm->comm);
		}
		pd_secondary_found(&w, &sec->m);
	}
	return true;
}

/*
 * source.list: ask the secondary MMUs of the mms met what they map.  Every
 * mapping of the page found in an mm is asked about; unless the query is
 * quick, every mm met is asked for its mappings of the page itself (in a
 * batch, its chunk's scan asked).
 */
static void pd_secondary_list(struct pd_query *q)
{
	struct pd_secondary_walk w = { .q = q };
	unsigned long unlisted;
	struct pd_map *map;
	struct pd_mm *pdm;
	unsigned int i;

	list_for_each_entry(map, &q->map_list, list) {
		w.mm = map->mm;
		mmu_notifier_describe(map->mm->mm, map->addr,
				      pd_secondary_found, &w);
	}
	if (!q->quick && !pd_secondary_take(q)) {
		list_for_each_entry(pdm, &q->mm_list, list) {
			w.mm = pdm;
			if (pd_secondary_describe_pages(q, &w,
							pd_secondary_found))
				break;
		}
	}
	/* Those found but not kept, then those kept for which there is no room. */
	unlisted = q->more_secondary;
	for (i = 0; i < q->nr_secondary; i++) {
		if (pd_report_has_room(q, PD_LISTS_END))
			pd_print_secondary(q, &q->secondary[i]);
		else
			unlisted++;
	}
	if (unlisted)
		seq_buf_printf(&q->s, "secondary: %lu more not listed\n",
			       unlisted);
}

/* Looking for one secondary mapping again: by owner, name and address. */
struct pd_secondary_lookup {
	const struct mmu_notifier_mapping *want;
	struct mmu_notifier_mapping found;
	bool seen;
};

static void pd_secondary_again(void *arg, const struct mmu_notifier_mapping *m)
{
	struct pd_secondary_lookup *l = arg;

	if (m->owner != l->want->owner || strcmp(m->name, l->want->name) ||
	    m->addr != l->want->addr)
		return;
	l->found = *m;
	l->seen = true;
}

/*
 * Whether @sec, as its MMU described it last, disagrees with the host page
 * table at the address it mirrors, about the page: the reason, or NULL.
 * What the host maps there is kept in @sec.  An mm whose address space is
 * going away cannot be read, and is not judged: its mmu notifiers' release()
 * is about to take the secondary mappings down.
 */
static const char *pd_secondary_fault(struct pd_query *q,
				      struct pd_secondary *sec)
{
	const struct mmu_notifier_mapping *m = &sec->m;
	struct mm_struct *mm = sec->mm->mm;
	struct pd_leaf host;
	bool ours;
	int ret;

	if (!m->present || m->hva == ULONG_MAX || !mmget_not_zero(mm))
		return NULL;
	ret = pd_reread(q, mm, m->hva, &host);
	mmput(mm);
	if (ret < 0)
		return NULL;
	sec->host_present = host.present;
	sec->host_pfn = host.pfn;
	ours = pd_pfn_counted(q, m->pfn) || ret;
	if (ours && !(host.present && host.pfn == m->pfn))
		return "stale";
	if (ours && m->unlogged_write)
		return "unlogged";
	return NULL;
}

/* Describe @sec's mapping again; false if it is gone. */
static bool pd_secondary_reread(struct pd_secondary *sec)
{
	struct pd_secondary_lookup l = { .want = &sec->m };

	if (sec->m.hva == ULONG_MAX)
		return false;
	mmu_notifier_describe(sec->mm->mm, sec->m.hva, pd_secondary_again, &l);
	if (!l.seen)
		return false;
	sec->m = l.found;
	return true;
}

static void pd_print_secondary_culprit(struct pd_query *q,
				       const struct pd_secondary *sec)
{
	const struct mmu_notifier_mapping *m = &sec->m;

	seq_buf_printf(&q->s, "culprit: %s: VM %s (pid %d %s) %s %#llx maps pfn %#lx",
		       m->owner, m->name, sec->mm->tgid,
		       sec->mm->tgid ? sec->mm->comm : "none", m->space,
		       m->addr, m->pfn);
	if (!strcmp(sec->fault, "unlogged")) {
		seq_buf_printf(&q->s, " writable, written without dirty tracking: %s\n",
			       m->detail);
		return;
	}
	if (sec->host_present)
		seq_buf_printf(&q->s,
			       ", the host page table at hva %#lx maps pfn %#lx: a stale %s mapping\n",
			       m->hva, sec->host_pfn, m->owner);
	else
		seq_buf_printf(&q->s,
			       ", the host page table at hva %#lx maps no page: a stale %s mapping\n",
			       m->hva, m->owner);
}

/* recheck of pd_recheck_rounds(): the suspects that still disagree. */
static unsigned int pd_secondary_recheck(struct pd_query *q)
{
	unsigned int i, suspects = 0;
	struct pd_secondary *sec;

	for (i = 0; i < q->nr_secondary; i++) {
		sec = &q->secondary[i];
		if (!sec->fault)
			continue;
		sec->fault = pd_secondary_reread(sec) ?
			     pd_secondary_fault(q, sec) : NULL;
		suspects += !!sec->fault;
	}
	return suspects;
}

/*
 * source.verdict: re-check the secondary mappings against the host's.  A
 * disagreement must survive PD_RECHECK_ROUNDS re-reads of both sides, each
 * after a pause, to be named.
 */
static unsigned int pd_secondary_verdict(struct pd_query *q)
{
	unsigned int i, suspects = 0, culprits = 0;
	struct pd_secondary *sec;

	for (i = 0; i < q->nr_secondary; i++) {
		sec = &q->secondary[i];
		sec->fault = pd_secondary_fault(q, sec);
		suspects += !!sec->fault;
	}
	if (!pd_recheck_rounds(q, suspects, pd_secondary_recheck))
		return 0;
	for (i = 0; i < q->nr_secondary; i++) {
		sec = &q->secondary[i];
		if (!sec->fault)
			continue;
		culprits++;
		if (pd_culprit_listed(q))
			pd_print_secondary_culprit(q, sec);
	}
	pd_print_unlisted_culprits(q);
	return culprits;
}

const struct pd_source pd_secondary_source = {
	.name = "secondary",
	.mismatch =
		"a secondary MMU (KVM) disagrees with the host page tables or with its own dirty log",
	.list = pd_secondary_list,
	.scan = pd_secondary_scan,
	.verdict = pd_secondary_verdict,
};
