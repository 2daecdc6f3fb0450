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

/*
 * Count, in the kernel log after @fd's position, Page Detective's lines and
 * lockdown's refusals of debugfs ("Lockdown: COMM: debugfs access is
 * restricted"), which show that it was lockdown that said EPERM.
 */
static void kmsg_count(int fd, int *pd_lines, int *refusals)
{
	char rec[2048];
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = '\0';
		*pd_lines += !!strstr(rec, ";page_detective: ");
		*refusals += strstr(rec, ";Lockdown: ") && strstr(rec, "debugfs");
	}
}

/*
 * The lockdown level: from securityfs where the kernel has it, else from
 * the command line that asked for it.
 */
static bool locked_down(char *level, size_t size)
{
	FILE *f = fopen(LOCKDOWN, "r");
	size_t len;
	char *p;

	if (f) {
		if (!fgets(level, size, f))
			level[0] = '\0';
		fclose(f);
		level[strcspn(level, "\n")] = '\0';
		return strstr(level, "[integrity]") || strstr(level, "[confidentiality]");
	}
	f = fopen("/proc/cmdline", "r");
	if (!f)
		return false;
	if (!fgets(level, size, f))
		level[0] = '\0';
	fclose(f);
	p = strstr(level, "lockdown=");
	if (!p)
		return false;
	len = strcspn(p, "\n ");
	memmove(level, p, len);
	level[len] = '\0';
	return !strcmp(level, "lockdown=integrity") ||
	       !strcmp(level, "lockdown=confidentiality");
}

int main(void)
{
	static const char *const files[] = { "virt", "phys" };
	static const struct { int flags; const char *name; } modes[] = {
		{ O_WRONLY, "O_WRONLY" }, { O_RDWR, "O_RDWR" }, { O_RDONLY, "O_RDONLY" },
	};
	int kmsg, i, j, pd_lines = 0, refusals = 0;
	char level[1024] = "", path[128];

	ksft_print_header();
	if (!locked_down(level, sizeof(level)))
		ksft_exit_skip("the kernel is not locked down (%s): boot with lockdown=integrity\n",
			       level);
	if (access(PD_DIR, F_OK))
		ksft_exit_skip("no %s: %s\n", PD_DIR,
			       "Page Detective is not built in (a module cannot load under lockdown)");
	pd_info("lockdown: %s\n", level);
	ksft_set_plan(ARRAY_SIZE(files) * ARRAY_SIZE(modes) + 2);

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		for (j = 0; j < ARRAY_SIZE(modes); j++) {
			int fd, err;

			snprintf(path, sizeof(path), PD_DIR "/%s", files[i]);
			fd = open(path, modes[j].flags);
			err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			ksft_test_result(fd < 0 && err == EPERM,
					 "lockdown: open(%s, %s) fails with EPERM (%s)\n",
					 files[i], modes[j].name,
					 fd < 0 ? strerror(err) : "it opened");
		}
	}
	if (kmsg >= 0)
		kmsg_count(kmsg, &pd_lines, &refusals);
	ksft_test_result(kmsg >= 0 && refusals > 0,
			 "lockdown: the refusals are lockdown's (%d in the kernel log)\n",
			 refusals);
	ksft_test_result(kmsg >= 0 && !pd_lines, "lockdown: Page Detective logged nothing\n");
	ksft_finished();
}
