// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective under kernel lockdown: with lockdown=integrity (or
 * confidentiality) debugfs refuses to open files that have write
 * permission, so neither virt nor phys can be opened, for writing or for
 * reading, even by root with every capability; and nothing is logged.
 *
 * Needs a kernel booted with lockdown=integrity and Page Detective built in
 * (unsigned modules cannot be loaded under lockdown): harness/check's
 * lockdown boot runs it, the ordinary runs do not.
 */
#define _GNU_SOURCE
#include "pd_util.h"
#include "../kselftest.h"

#define LOCKDOWN	"/sys/kernel/security/lockdown"

/* Page Detective's lines in the kernel log after @fd's position. */
static int kmsg_pd_lines(int fd)
{
	char rec[2048];
	int lines = 0;
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = '\0';
		if (strstr(rec, ";page_detective: "))
			lines++;
	}
	return lines;
}

int main(void)
{
	static const char *const files[] = { "virt", "phys" };
	static const struct { int flags; const char *name; } modes[] = {
		{ O_WRONLY, "O_WRONLY" }, { O_RDWR, "O_RDWR" }, { O_RDONLY, "O_RDONLY" },
	};
	char level[256] = "", path[128];
	int kmsg, i, j;
	FILE *f;

	ksft_print_header();
	f = fopen(LOCKDOWN, "r");
	if (!f || !fgets(level, sizeof(level), f))
		ksft_exit_skip("no %s: no lockdown LSM, or securityfs not mounted\n", LOCKDOWN);
	fclose(f);
	level[strcspn(level, "\n")] = '\0';
	if (!strstr(level, "[integrity]") && !strstr(level, "[confidentiality]"))
		ksft_exit_skip("the kernel is not locked down (%s): boot with lockdown=integrity\n",
			       level);
	if (access(PD_DIR, F_OK))
		ksft_exit_skip("no %s: %s\n", PD_DIR,
			       "Page Detective is not built in (a module cannot load under lockdown)");
	pd_info("lockdown: %s\n", level);
	ksft_set_plan(2 * 3 + 1);

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 3; j++) {
			int fd, err;

			snprintf(path, sizeof(path), PD_DIR "/%s", files[i]);
			fd = open(path, modes[j].flags);
			err = fd < 0 ? errno : 0;
			if (fd >= 0) {
				/* Opened: show what a query would do. */
				if (write(fd, "0x1000", 6) < 0)
					err = -errno;
				close(fd);
			}
			ksft_test_result(fd < 0 && err == EPERM,
					 "lockdown: open(%s, %s) fails with EPERM (got %s)\n",
					 files[i], modes[j].name,
					 fd < 0 ? strerror(err) : "an open file");
		}
	}
	ksft_test_result(kmsg >= 0 && kmsg_pd_lines(kmsg) == 0,
			 "lockdown: Page Detective logged nothing\n");
	ksft_finished();
}
