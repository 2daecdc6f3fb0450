/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the Page Detective selftests: run a query, parse its report,
 * and read what the kernel says about a page through interfaces Page
 * Detective does not use (/proc/PID/pagemap, /proc/kpage*), to check it.
 */
#ifndef PD_UTIL_H
#define PD_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PD_DIR		"/sys/kernel/debug/page_detective"
#define PD_REPORT_SIZE	(256 * 1024)

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)

struct pd_summary {
	unsigned long pfn;
	long refcount;
	long mapcount;
	long kernel_mappings;
	long user_mappings;
	long processes;
	char memcg[256];
	char verdict[16];
};

static inline unsigned long pd_page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* The value of CONFIG_@name in the running kernel: "y", "m" or "". */
static inline const char *pd_kernel_config(const char *name)
{
	static char value[8];
	char line[256], want[128];
	FILE *f;

	value[0] = '\0';
	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f)
		return value;
	snprintf(want, sizeof(want), "CONFIG_%s=", name);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			sscanf(line + strlen(want), "%7s", value);
	pclose(f);
	return value;
}

/*
 * Whether Page Detective is here to test: "" if it is, or why it is not.
 * Its absence is a failure when the kernel was built with it.
 */
static inline const char *pd_missing(bool *fail)
{
	const char *config;

	*fail = false;
	if (!access(PD_DIR, F_OK))
		return "";
	config = pd_kernel_config("PAGE_DETECTIVE");
	*fail = config[0] != '\0';
	return *fail ? "CONFIG_PAGE_DETECTIVE is set but " PD_DIR " is missing" :
		       "the kernel has no CONFIG_PAGE_DETECTIVE";
}

/* Read what is left to read on @fd into @buf (NUL-terminated). */
static inline ssize_t pd_read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	return len;
}

/*
 * Write @input to the Page Detective file @file and read the report back
 * on the same descriptor into @report.  Returns 0, or the write's -errno.
 */
static inline int pd_query_len(const char *file, const char *input, size_t len,
			       char *report, size_t size)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), PD_DIR "/%s", file);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	if (write(fd, input, len) < 0)
		ret = -errno;
	if (report)
		pd_read_all(fd, report, size);
	close(fd);
	return ret;
}

static inline int pd_query(const char *file, const char *input, char *report,
			   size_t size)
{
	return pd_query_len(file, input, strlen(input), report, size);
}

static inline int pd_virt(pid_t pid, const void *addr, char *report, size_t size)
{
	char input[64];

	snprintf(input, sizeof(input), "%d 0x%lx", pid, (unsigned long)addr);
	return pd_query("virt", input, report, size);
}

static inline int pd_phys(unsigned long pfn, char *report, size_t size)
{
	char input[64];

	snprintf(input, sizeof(input), "0x%lx", pfn * pd_page_size());
	return pd_query("phys", input, report, size);
}

/* Parse the summary line, the last line of a complete report. */
static inline int pd_parse_summary(const char *report, struct pd_summary *s)
{
	const char *line = strstr(report, "summary: ");

	if (!line)
		return -1;
	if (sscanf(line, "summary: pfn=%lx refcount=%ld mapcount=%ld kernel_mappings=%ld user_mappings=%ld processes=%ld memcg=%255s verdict=%15s",
		   &s->pfn, &s->refcount, &s->mapcount, &s->kernel_mappings,
		   &s->user_mappings, &s->processes, s->memcg, s->verdict) != 8)
		return -1;
	return 0;
}

/* The report's line that starts with @prefix and contains @needle. */
static inline bool pd_has_line(const char *report, const char *prefix,
			       const char *needle)
{
	const char *line = report;
	size_t plen = strlen(prefix);

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len >= plen && !strncmp(line, prefix, plen)) {
			char buf[1024];

			snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
			if (strstr(buf, needle))
				return true;
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

/* The /proc/PID/pagemap entry of @addr in process @pid (0: ourselves). */
static inline uint64_t pagemap_entry(pid_t pid, const void *addr)
{
	char path[64];
	uint64_t entry = 0;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &entry, sizeof(entry),
		  (unsigned long)addr / pd_page_size() * sizeof(entry)) != sizeof(entry))
		entry = 0;
	close(fd);
	return entry;
}

/* The PFN that @addr maps in @pid, or 0 if none. */
static inline unsigned long pagemap_pfn(pid_t pid, const void *addr)
{
	uint64_t entry = pagemap_entry(pid, addr);

	return entry & PM_PRESENT ? entry & PM_PFN_MASK : 0;
}

/* The entry for @pfn in /proc/kpagecount, kpageflags or kpagecgroup. */
static inline uint64_t kpage_read(const char *file, unsigned long pfn)
{
	char path[64];
	uint64_t val = ~0ULL;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s", file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return ~0ULL;
	if (pread(fd, &val, sizeof(val), pfn * sizeof(val)) != sizeof(val))
		val = ~0ULL;
	close(fd);
	return val;
}

#endif /* PD_UTIL_H */
