// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective: the mms and the mappings of the page that one query met.
 *
 * The scan of page tables and every walk of the reverse map report what
 * they find here, keyed so that nothing is counted twice however often it
 * is met: an mm by its address (processes that share one, with CLONE_VM as
 * vfork() does, are walked once), a mapping by (mm, address) (KSM's reverse
 * map can visit a VMA twice).  Nothing here is bounded but by memory: a
 * page mapped by ten thousand processes is compared whole.
 */

#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "pd.h"

/**
 * pd_mappings_init - start a new query with no mm and no mapping met
 * @q: the query
 */
void pd_mappings_init(struct pd_query *q)
{
	hash_init(q->mms);
	hash_init(q->maps);
	INIT_LIST_HEAD(&q->mm_list);
	INIT_LIST_HEAD(&q->map_list);
}

/**
 * pd_mappings_free - forget every mm and mapping the query met
 * @q: the query
 *
 * The query is left as pd_mappings_init() left it, each entry taken out
 * of its table in turn: the next page of a batch does not pay for the
 * tables' 2048 buckets.
 */
void pd_mappings_free(struct pd_query *q)
{
	struct pd_map *map, *next_map;
	struct pd_mm *pdm, *next_mm;

	list_for_each_entry_safe(map, next_map, &q->map_list, list) {
		hash_del(&map->node);
		kfree(map);
	}
	INIT_LIST_HEAD(&q->map_list);
	list_for_each_entry_safe(pdm, next_mm, &q->mm_list, list) {
		hash_del(&pdm->node);
		mmdrop(pdm->mm);
		kfree(pdm);
	}
	INIT_LIST_HEAD(&q->mm_list);
}

/**
 * pd_mm_get - the query's record of @mm, made on first meeting
 * @q: the query
 * @mm: an mm the caller keeps alive for the duration of the call
 *
 * The first record of an mm takes mmgrab() on it, which keeps the struct,
 * not the address space, until the query ends: an mm compared by address
 * must not be freed and another allocated in its place meanwhile.
 * Might sleep.
 *
 * Return: the record, or NULL if it could not be allocated.
 */
struct pd_mm *pd_mm_get(struct pd_query *q, struct mm_struct *mm)
{
	struct pd_mm *pdm;

	hash_for_each_possible(q->mms, pdm, node, (unsigned long)mm)
		if (pdm->mm == mm)
			return pdm;
	pdm = kzalloc_obj(*pdm, GFP_KERNEL);
	if (!pdm) {
		q->out_of_memory = true;
		return NULL;
	}
	mmgrab(mm);
	pdm->mm = mm;
	hash_add(q->mms, &pdm->node, (unsigned long)mm);
	list_add_tail(&pdm->list, &q->mm_list);
	return pdm;
}

static unsigned long pd_map_key(struct pd_mm *pdm, unsigned long addr)
{
	return (unsigned long)pdm ^ (addr >> PAGE_SHIFT);
}

/**
 * pd_map_get - the query's record of the mapping at @addr in @pdm
 * @q: the query
 * @pdm: the mm, as pd_mm_get() gave it
 * @addr: the user address of the page in that mm
 *
 * Might sleep.
 *
 * Return: the record, new and not seen by anyone yet (pd_map.seen is 0)
 * if the query had not met it, or NULL if it could not be allocated.
 */
struct pd_map *pd_map_get(struct pd_query *q, struct pd_mm *pdm,
			  unsigned long addr)
{
	unsigned long key = pd_map_key(pdm, addr);
	struct pd_map *map;

	hash_for_each_possible(q->maps, map, node, key)
		if (map->mm == pdm && map->addr == addr)
			return map;
	map = kzalloc_obj(*map, GFP_KERNEL);
	if (!map) {
		q->out_of_memory = true;
		return NULL;
	}
	map->mm = pdm;
	map->addr = addr;
	hash_add(q->maps, &map->node, key);
	list_add_tail(&map->list, &q->map_list);
	return map;
}

static int pd_cmp_ptr(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/**
 * pd_map_see - record that a source saw the mapping at @addr in @pdm
 * @q: the query
 * @pdm: the mm, as pd_mm_get() gave it
 * @addr: the user address of the page in that mm
 * @entry: its page-table entry, kept by the first source to see it
 * @level: its level, likewise
 * @seen: what saw it: PD_SEEN_*
 *
 * Might sleep.
 */
void pd_map_see(struct pd_query *q, struct pd_mm *pdm, unsigned long addr,
		const void *entry, const char *level, unsigned int seen)
{
	struct pd_map *map = pd_map_get(q, pdm, addr);

	if (!map)
		return;
	if (!map->seen) {
		map->entry = entry;
		map->level = level;
	}
	map->seen |= seen;
}

/**
 * pd_count_entries - how many page-table entries map the page
 * @q: the query
 * @seen: count the mappings with any of these PD_SEEN_* bits
 *
 * The page's mapcount counts page-table entries, not (mm, address) pairs:
 * processes that MAP_SHARED a hugetlb region share its PMD table (see
 * huge_pmd_share()), and one entry maps the page in all of them.  Might
 * sleep.
 *
 * Return: the number of distinct entries among those mappings, or, if
 * there is no memory to tell, the number of mappings.
 */
unsigned long pd_count_entries(struct pd_query *q, unsigned int seen)
{
	unsigned long nr = 0, i, distinct;
	unsigned long *entries;
	struct pd_map *map;

	list_for_each_entry(map, &q->map_list, list)
		nr += !!(map->seen & seen);
	if (nr < 2)
		return nr;
	entries = kvmalloc_array(nr, sizeof(*entries), GFP_KERNEL);
	if (!entries)
		return nr;
	i = 0;
	list_for_each_entry(map, &q->map_list, list)
		if (map->seen & seen)
			entries[i++] = (unsigned long)map->entry;
	sort(entries, nr, sizeof(*entries), pd_cmp_ptr, NULL);
	for (distinct = 1, i = 1; i < nr; i++)
		distinct += entries[i] != entries[i - 1];
	kvfree(entries);
	return distinct;
}
