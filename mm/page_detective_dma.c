// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page Detective's DMA mapper, for its selftests only: a PCI driver that
 * maps the caller's pages for DMA on command, so that the tests can check
 * what Page Detective says of a page an IOMMU maps.  It never starts DMA:
 * it binds, by driver_override only, to a device that does nothing by
 * itself (QEMU's edu or pci-testdev), and uses the device for its DMA
 * mask and its IOMMU domain.
 *
 * A process writes one command to /sys/kernel/debug/page_detective_dma/map:
 *
 *   map ADDR [PAGES]
 *              pin the caller's page at ADDR (pin_user_pages_fast(),
 *              FOLL_WRITE | FOLL_LONGTERM) and dma_map_page() it
 *              bidirectionally: what a driver does for a user buffer;
 *              with PAGES (decimal), each of the PAGES pages from ADDR,
 *              one mapping per page, as a driver mapping many buffers
 *              does (make bench fills a domain so).  On an error, the
 *              pages mapped before it stay mapped.
 *   map-range ADDR PAGES
 *              pin the PAGES pages from ADDR and map them as one
 *              scatter-gather list (dma_map_sgtable()), which an IOMMU maps
 *              at one IOVA range, as a block driver maps a request:
 *              undone whole, a range that fills an IOMMU table frees the
 *              table's page.
 *   map-kmalloc
 *              kmalloc() a buffer of PD_DMA_KMALLOC_SIZE bytes and
 *              dma_map_single() it: a driver's command or header buffer,
 *              which lies in a slab page, whose refcount is zero all its
 *              life (slabs are allocated frozen, from 7.0).
 *   map-unattached ADDR
 *              pin the caller's page at ADDR and iommu_map() it at IOVA
 *              PD_DMA_UNATTACHED_IOVA into a paging domain of its own,
 *              allocated for the device and attached to nothing: a
 *              mapping that no walk of the domains attached to devices
 *              can see, and that iommu.debug_pagealloc counts.
 *   leak       unpin every page mapped through this open file, but keep
 *              their DMA mappings: the driver bug of a buffer let go while
 *              still mapped, whose page the allocator then gives to
 *              someone else while the device can still write into it.
 *   unmap      dma_unmap_page() every mapping of this open file, and
 *              unpin the pages still pinned.
 *
 * Reading the file gives one line per mapping of this open file, for the
 * first PD_DMA_READ_MAX of them, then how many more there are:
 * "dma DMA_ADDR pfn PFN pages N pinned|leaked|kernel" (its first byte's DMA
 * address, or IOVA, and its first page; kernel: map-kmalloc's buffer),
 * "N more".  The mappings belong to the open
 * file: closing it undoes them, as do unbinding the device and unloading
 * the module.  An unmap never syncs a page for the CPU
 * (DMA_ATTR_SKIP_CPU_SYNC): a leaked page may be someone else's by then,
 * and a bounce buffer's stale content must not be copied over it.
 *
 * Errors: -EINVAL for a malformed command or an address not page aligned;
 * -ENODEV when no device is bound; -EFAULT when ADDR maps no page the
 * caller may write; -ENOSPC past PD_DMA_PAGES_MAX pages; -EINTR when
 * killed; what dma_map_page() fails with (-ENOMEM); map-unattached: -ENODEV
 * when no IOMMU translates for the device.
 *
 * Never enable this outside a test kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/* The longest command: "map-range ", a 64-bit hexadecimal address, PAGES. */
#define PD_DMA_CMD_MAX		48
/*
 * Pages mapped by all open files at once, so that no test can exhaust
 * memory: 256 MiB, what make bench maps (pd_iommu_bench), and a few more,
 * for the map/unmap storm it runs beside them.
 */
#define PD_DMA_PAGES_MAX	(SZ_256M / PAGE_SIZE + 64)
/* The mappings a read lists; the others are counted. */
#define PD_DMA_READ_MAX		64
/* map-kmalloc's buffer: a slab object smaller than a page. */
#define PD_DMA_KMALLOC_SIZE	512
/* Where map-unattached maps its page, in a domain of its own. */
#define PD_DMA_UNATTACHED_IOVA	SZ_1M

struct pd_dma_map {
	struct list_head node;
	struct file *owner;		/* the open file that made it */
	struct sg_table sgt;		/* map-range's; else unused */
	void *buf;			/* map-kmalloc's; else NULL */
	struct iommu_domain *domain;	/* map-unattached's; else NULL */
	dma_addr_t dma;			/* its first byte's */
	unsigned long pfn;		/* its first page's */
	bool leaked;			/* its pages unpinned, kept mapped */
	unsigned int nr_pages;
	struct page *pages[] __counted_by(nr_pages);
};

/* The bound device and every mapping made through it. */
static DEFINE_MUTEX(pd_dma_lock);
static struct pci_dev *pd_dma_pdev;
static LIST_HEAD(pd_dma_maps);
static unsigned long pd_dma_nr_pages;
static struct dentry *pd_dma_dir;

/* Undo @map: unmap it, unpin its pages if still pinned.  pd_dma_lock held. */
static void pd_dma_undo(struct pd_dma_map *map)
{
	struct device *dev = &pd_dma_pdev->dev;

	if (map->sgt.sgl) {
		dma_unmap_sgtable(dev, &map->sgt, DMA_BIDIRECTIONAL,
				  DMA_ATTR_SKIP_CPU_SYNC);
		sg_free_table(&map->sgt);
	} else if (map->buf) {
		dma_unmap_single(dev, map->dma, PD_DMA_KMALLOC_SIZE,
				 DMA_BIDIRECTIONAL);
		kfree(map->buf);
	} else if (map->domain) {
		iommu_unmap(map->domain, map->dma, PAGE_SIZE);
		iommu_domain_free(map->domain);
	} else {
		dma_unmap_page_attrs(dev, map->dma, PAGE_SIZE,
				     DMA_BIDIRECTIONAL, DMA_ATTR_SKIP_CPU_SYNC);
	}
	if (!map->buf && !map->leaked)
		unpin_user_pages(map->pages, map->nr_pages);
	list_del(&map->node);
	pd_dma_nr_pages -= map->nr_pages;
	kvfree(map);
}

/* Undo the mappings of @owner, or of every file if NULL.  pd_dma_lock held. */
static void pd_dma_undo_all(struct file *owner)
{
	struct pd_dma_map *map, *next;

	list_for_each_entry_safe(map, next, &pd_dma_maps, node) {
		if (!owner || map->owner == owner)
			pd_dma_undo(map);
		cond_resched();
	}
}

/* A new mapping of @nr_pages pages for @file, not kept yet; or ERR_PTR. */
static struct pd_dma_map *pd_dma_new(struct file *file, unsigned int nr_pages)
{
	struct pd_dma_map *map;

	if (!pd_dma_pdev)
		return ERR_PTR(-ENODEV);
	if (nr_pages > PD_DMA_PAGES_MAX - pd_dma_nr_pages)
		return ERR_PTR(-ENOSPC);
	map = kvzalloc(struct_size(map, pages, nr_pages), GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	map->nr_pages = nr_pages;
	map->owner = file;
	return map;
}

/* Pin @nr_pages pages of the caller's from @addr, for @file; or ERR_PTR. */
static struct pd_dma_map *pd_dma_pin(struct file *file, unsigned long addr,
				     unsigned int nr_pages)
{
	struct pd_dma_map *map;
	int pinned;

	if (!PAGE_ALIGNED(addr))
		return ERR_PTR(-EINVAL);
	map = pd_dma_new(file, nr_pages);
	if (IS_ERR(map))
		return map;
	pinned = pin_user_pages_fast(addr, nr_pages, FOLL_WRITE | FOLL_LONGTERM,
				     map->pages);
	if (pinned != nr_pages) {
		if (pinned > 0)
			unpin_user_pages(map->pages, pinned);
		kvfree(map);
		return ERR_PTR(pinned < 0 ? pinned : -EFAULT);
	}
	map->pfn = page_to_pfn(map->pages[0]);
	return map;
}

/* Undo pd_dma_pin() of @map, which was not mapped. */
static void pd_dma_unpin(struct pd_dma_map *map)
{
	unpin_user_pages(map->pages, map->nr_pages);
	kvfree(map);
}

/* Keep @map, now mapped, among the mappings. */
static void pd_dma_keep(struct pd_dma_map *map)
{
	list_add_tail(&map->node, &pd_dma_maps);
	pd_dma_nr_pages += map->nr_pages;
}

/* "map ADDR": the page at @addr, by dma_map_page(). */
static int pd_dma_map(struct file *file, unsigned long addr)
{
	struct pd_dma_map *map = pd_dma_pin(file, addr, 1);
	int ret;

	if (IS_ERR(map))
		return PTR_ERR(map);
	map->dma = dma_map_page(&pd_dma_pdev->dev, map->pages[0], 0, PAGE_SIZE,
				DMA_BIDIRECTIONAL);
	ret = dma_mapping_error(&pd_dma_pdev->dev, map->dma);
	if (ret)
		goto unpin;
	pd_dma_keep(map);
	return 0;
unpin:
	pd_dma_unpin(map);
	return ret;
}

/* "map-kmalloc": a kmalloc() buffer of the driver's own, in a slab page. */
static int pd_dma_map_kmalloc(struct file *file)
{
	struct pd_dma_map *map = pd_dma_new(file, 1);
	int ret;

	if (IS_ERR(map))
		return PTR_ERR(map);
	map->buf = kmalloc(PD_DMA_KMALLOC_SIZE, GFP_KERNEL);
	if (!map->buf) {
		ret = -ENOMEM;
		goto free_map;
	}
	map->pages[0] = virt_to_page(map->buf);
	map->pfn = page_to_pfn(map->pages[0]);
	map->dma = dma_map_single(&pd_dma_pdev->dev, map->buf,
				  PD_DMA_KMALLOC_SIZE, DMA_BIDIRECTIONAL);
	ret = dma_mapping_error(&pd_dma_pdev->dev, map->dma);
	if (ret)
		goto free_buf;
	pd_dma_keep(map);
	return 0;
free_buf:
	kfree(map->buf);
free_map:
	kvfree(map);
	return ret;
}

/*
 * "map-unattached ADDR": the page at @addr, into a domain attached to no
 * device, where only iommu.debug_pagealloc's count sees it.
 */
static int pd_dma_map_unattached(struct file *file, unsigned long addr)
{
	struct pd_dma_map *map = pd_dma_pin(file, addr, 1);
	int ret;

	if (IS_ERR(map))
		return PTR_ERR(map);
	map->domain = iommu_paging_domain_alloc(&pd_dma_pdev->dev);
	if (IS_ERR(map->domain)) {
		ret = PTR_ERR(map->domain);
		goto unpin;
	}
	map->dma = PD_DMA_UNATTACHED_IOVA;
	ret = iommu_map(map->domain, map->dma, page_to_phys(map->pages[0]),
			PAGE_SIZE, IOMMU_READ | IOMMU_WRITE, GFP_KERNEL);
	if (ret)
		goto free_domain;
	pd_dma_keep(map);
	return 0;
free_domain:
	iommu_domain_free(map->domain);
unpin:
	pd_dma_unpin(map);
	return ret;
}

/* "map-range ADDR PAGES": the pages from @addr, as one scatter-gather list. */
static int pd_dma_map_range(struct file *file, unsigned long addr,
			    unsigned long pages)
{
	struct pd_dma_map *map;
	int ret;

	if (!pages || pages > PD_DMA_PAGES_MAX)
		return pages ? -ENOSPC : -EINVAL;
	map = pd_dma_pin(file, addr, pages);
	if (IS_ERR(map))
		return PTR_ERR(map);
	/* Segments no longer than the device takes, as its driver would. */
	ret = sg_alloc_table_from_pages_segment(&map->sgt, map->pages, pages, 0,
						pages << PAGE_SHIFT,
						dma_get_max_seg_size(&pd_dma_pdev->dev),
						GFP_KERNEL);
	if (ret)
		goto unpin;
	ret = dma_map_sgtable(&pd_dma_pdev->dev, &map->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto free_table;
	map->dma = sg_dma_address(map->sgt.sgl);
	pd_dma_keep(map);
	return 0;
free_table:
	sg_free_table(&map->sgt);
unpin:
	pd_dma_unpin(map);
	return ret;
}

/* Map each of @pages pages from @addr, one mapping per page. */
static int pd_dma_map_pages(struct file *file, unsigned long addr,
			    unsigned long pages)
{
	unsigned long i;
	int ret;

	if (!pages)
		return -EINVAL;
	if (pages > PD_DMA_PAGES_MAX - pd_dma_nr_pages)
		return -ENOSPC;
	for (i = 0; i < pages; i++) {
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = pd_dma_map(file, addr + i * PAGE_SIZE);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/* Let go of the pages of @file's mappings, and keep the mappings. */
static void pd_dma_leak(struct file *file)
{
	struct pd_dma_map *map;

	list_for_each_entry(map, &pd_dma_maps, node) {
		if (map->owner != file || map->leaked || map->buf)
			continue;
		unpin_user_pages(map->pages, map->nr_pages);
		map->leaked = true;
	}
}

/*
 * "map ADDR [PAGES]", "map-range ADDR PAGES" and "map-unattached ADDR": the
 * words after the command's, each one space apart.
 */
static int pd_dma_map_command(struct file *file, const char *cmd, char *args)
{
	bool range = !strcmp(cmd, "map-range");
	bool unattached = !strcmp(cmd, "map-unattached");
	unsigned long addr, pages = 1;
	char *word = strsep(&args, " ");

	if (!word || kstrtoul(word, 16, &addr))
		return -EINVAL;
	if ((range && !args) || (unattached && args) ||
	    (args && kstrtoul(args, 10, &pages)))
		return -EINVAL;
	if (range)
		return pd_dma_map_range(file, addr, pages);
	if (unattached)
		return pd_dma_map_unattached(file, addr);
	return pd_dma_map_pages(file, addr, pages);
}

static int pd_dma_command(struct file *file, char *cmd)
{
	char *word = strsep(&cmd, " ");

	if (!strcmp(word, "map") || !strcmp(word, "map-range") ||
	    !strcmp(word, "map-unattached"))
		return pd_dma_map_command(file, word, cmd);
	if (cmd)
		return -EINVAL;
	if (!strcmp(word, "map-kmalloc"))
		return pd_dma_map_kmalloc(file);
	if (!strcmp(word, "leak"))
		pd_dma_leak(file);
	else if (!strcmp(word, "unmap"))
		pd_dma_undo_all(file);
	else
		return -EINVAL;
	return 0;
}

static ssize_t pd_dma_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char cmd[PD_DMA_CMD_MAX + 1];
	int ret;

	if (!len || len > PD_DMA_CMD_MAX)
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	strim(cmd);
	mutex_lock(&pd_dma_lock);
	ret = pd_dma_command(file, cmd);
	mutex_unlock(&pd_dma_lock);
	return ret ?: len;
}

static ssize_t pd_dma_read(struct file *file, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	size_t size = (PD_DMA_READ_MAX + 1) * 64, n = 0;
	unsigned int listed = 0, more = 0;
	struct pd_dma_map *map;
	ssize_t ret;
	char *buf;

	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&pd_dma_lock);
	list_for_each_entry(map, &pd_dma_maps, node) {
		if (map->owner != file)
			continue;
		if (listed == PD_DMA_READ_MAX) {
			more++;
			continue;
		}
		listed++;
		n += scnprintf(buf + n, size - n, "dma %#llx pfn %#lx pages %u %s\n",
			       (unsigned long long)map->dma, map->pfn, map->nr_pages,
			       map->buf ? "kernel" :
			       map->leaked ? "leaked" : "pinned");
	}
	mutex_unlock(&pd_dma_lock);
	if (more)
		n += scnprintf(buf + n, size - n, "%u more\n", more);
	ret = simple_read_from_buffer(ubuf, len, ppos, buf, n);
	kfree(buf);
	return ret;
}

static int pd_dma_open(struct inode *inode, struct file *file)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

static int pd_dma_release(struct inode *inode, struct file *file)
{
	mutex_lock(&pd_dma_lock);
	if (pd_dma_pdev)
		pd_dma_undo_all(file);
	mutex_unlock(&pd_dma_lock);
	return 0;
}

static const struct file_operations pd_dma_fops = {
	.owner = THIS_MODULE,
	.open = pd_dma_open,
	.read = pd_dma_read,
	.write = pd_dma_write,
	.release = pd_dma_release,
	.llseek = default_llseek,
};

/* One device at a time: the mappings are made with it. */
static int pd_dma_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	mutex_lock(&pd_dma_lock);
	if (pd_dma_pdev)
		ret = -EBUSY;
	else
		pd_dma_pdev = pdev;
	mutex_unlock(&pd_dma_lock);
	return ret;
}

static void pd_dma_remove(struct pci_dev *pdev)
{
	mutex_lock(&pd_dma_lock);
	if (pd_dma_pdev == pdev) {
		pd_dma_undo_all(NULL);
		pd_dma_pdev = NULL;
	}
	mutex_unlock(&pd_dma_lock);
}

/* No IDs: the driver binds only where driver_override names it. */
static struct pci_driver pd_dma_driver = {
	.name = "page_detective_dma",
	.probe = pd_dma_probe,
	.remove = pd_dma_remove,
};

static int __init pd_dma_init(void)
{
	int ret;

	pd_dma_dir = debugfs_create_dir("page_detective_dma", NULL);
	debugfs_create_file("map", 0600, pd_dma_dir, NULL, &pd_dma_fops);
	ret = pci_register_driver(&pd_dma_driver);
	if (ret)
		debugfs_remove_recursive(pd_dma_dir);
	return ret;
}

static void __exit pd_dma_exit(void)
{
	/* No new open file after this: then undo what the device has. */
	debugfs_remove_recursive(pd_dma_dir);
	pci_unregister_driver(&pd_dma_driver);
}

module_init(pd_dma_init);
module_exit(pd_dma_exit);
MODULE_DESCRIPTION("Page Detective's DMA mapper, for its selftests only");
MODULE_LICENSE("GPL");
