// SPDX-License-Identifier: GPL-2.0
/*
 * Page Detective unload: with Page Detective a module, rmmod it while
 * queriers are opening, writing and reading its files, then load it again
 * and query; many times.  An open file holds the module, so rmmod is
 * refused (EWOULDBLOCK) until it catches the queriers between two opens;
 * then the files are gone (ENOENT, or ENXIO while the module is going),
 * and after modprobe they answer again.  Every query that got a file must
 * get a documented outcome.  The kernel's side of it (debugfs removal,
 * the reports freed at exit) is watched by KASAN and lockdep in the debug
 * kernel.  PD_STRESS_SCALE multiplies the cycles.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pd_util.h"
#include "../kselftest.h"

#define CYCLES		50
#define QUERIERS	2
#define RMMOD_TRIES	5000

/* Shared with the queriers, read and written with PD_READ/WRITE/INC. */
struct shared {
	int stop;
	unsigned long queries, reports, gone, bad;
	unsigned long since_reload[QUERIERS];
};

static struct shared *sh;

static bool is_module(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd),
		 "grep -q page_detective.ko /lib/modules/$(uname -r)/modules.dep 2>/dev/null");
	return system(cmd) == 0;
}

/* Open, query, read back, close, until told to stop. */
static void querier(int id)
{
	char *page = mmap(NULL, pd_page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *report = malloc(PD_REPORT_SIZE), input[64];
	const char *file = id & 1 ? "virt" : "phys";
	uint64_t rng = getpid();
	unsigned long pfn;

	if (page == MAP_FAILED || !report)
		_exit(1);
	memset(page, id, pd_page_size());
	pfn = pagemap_pfn(0, page);
	if (id & 1)
		snprintf(input, sizeof(input), "%d %p", getpid(), page);
	else
		snprintf(input, sizeof(input), "0x%lx", pfn * pd_page_size());
	while (!PD_READ(sh->stop)) {
		double start = pd_now();
		char path[64];
		const char *why;
		int fd, err = 0;

		/* Not there: unloaded (ENOENT), or going (ENXIO). */
		snprintf(path, sizeof(path), PD_DIR "/%s", file);
		fd = open(path, O_RDWR);
		if (fd < 0 && (errno == ENOENT || errno == ENXIO)) {
			PD_INC(sh->gone);
			usleep(1000);
			continue;
		}
		PD_INC(sh->queries);
		if (fd < 0) {
			snprintf(report, PD_REPORT_SIZE, "open: %s\n", strerror(errno));
			err = -errno;
		} else {
			if (write(fd, input, strlen(input)) < 0)
				err = -errno;
			pd_read_all(fd, report, PD_REPORT_SIZE);
			close(fd);
		}
		why = fd < 0 ? "open failed" : pd_check_outcome(file, err, report, pfn);
		if (why) {
			if (PD_READ(sh->bad) < 5)
				pd_info("%s %d: %s \"%s\": %d: %s:\n%s", __func__, id,
					file, input, err, why, report);
			PD_INC(sh->bad);
			continue;
		}
		if (!err) {
			PD_INC(sh->reports);
			PD_INC(sh->since_reload[id]);
		}
		/*
		 * Gaps between queries, for rmmod to get through: as long as
		 * the query on average, or rmmod would wait for both queriers
		 * to pause at once on a kernel where a query is slow (the
		 * debug kernel under TCG: tens of ms), for thousands of tries.
		 */
		usleep(pd_rand(&rng) % (3000 + (useconds_t)(2e6 * (pd_now() - start))));
	}
	_exit(0);
}

/* Whether every querier got a report since the reload, within @secs. */
static bool all_answer(double secs)
{
	double deadline = pd_now() + secs;
	int i;

	while (pd_now() < deadline) {
		for (i = 0; i < QUERIERS && PD_READ(sh->since_reload[i]); i++)
			;
		if (i == QUERIERS)
			return true;
		usleep(1000);
	}
	return false;
}

int main(void)
{
	unsigned long cycles = pd_stress_count(CYCLES), c;
	unsigned long unloaded = 0, busy = 0, reloaded = 0, answered = 0, other = 0;
	unsigned long queries = 0;
	pid_t pids[QUERIERS];
	uint64_t rng = time(NULL);
	double t0 = pd_now();
	const char *why;
	bool fail;
	int i;

	ksft_print_header();
	if (!is_module())
		ksft_exit_skip("Page Detective is built in, not a module\n");
	if (access(PD_DIR, F_OK) && system("modprobe page_detective"))
		ksft_exit_fail_msg("modprobe page_detective failed\n");
	why = pd_missing(&fail);
	if (why[0])
		ksft_exit_fail_msg("%s\n", why);
	ksft_set_plan(4);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("setup failed\n");

	for (c = 0; c < cycles; c++) {
		double t_rmmod, t_modprobe, t_answer;
		int tries, refused;

		memset(sh, 0, sizeof(*sh));
		for (i = 0; i < QUERIERS; i++) {
			pids[i] = fork();
			if (!pids[i])
				querier(i);
		}
		usleep(pd_rand(&rng) % 20000);

		/* rmmod, in flight: refused while a querier holds a file open. */
		t_rmmod = pd_now();
		for (tries = 0; tries < RMMOD_TRIES; tries++) {
			if (!syscall(SYS_delete_module, "page_detective", O_NONBLOCK))
				break;
			if (errno != EWOULDBLOCK && errno != EBUSY) {
				pd_info("cycle %lu: rmmod: %s\n", c, strerror(errno));
				other++;
				break;
			}
			busy++;
			usleep(pd_rand(&rng) % 1000);
		}
		refused = tries;
		if (tries < RMMOD_TRIES && access(PD_DIR, F_OK) && errno == ENOENT)
			unloaded++;
		t_rmmod = pd_now() - t_rmmod;
		usleep(pd_rand(&rng) % 10000);

		/* Back again; the queriers must get answers again. */
		for (i = 0; i < QUERIERS; i++)
			PD_WRITE(sh->since_reload[i], 0);
		t_modprobe = pd_now();
		if (!system("modprobe page_detective") && !access(PD_DIR, F_OK))
			reloaded++;
		t_answer = pd_now();
		t_modprobe = t_answer - t_modprobe;
		if (all_answer(10))
			answered++;
		t_answer = pd_now() - t_answer;
		PD_WRITE(sh->stop, 1);
		for (i = 0; i < QUERIERS; i++)
			waitpid(pids[i], NULL, 0);
		if (sh->bad)
			other++;
		queries += sh->queries;
		if (c < 3 || c % 10 == 9)
			pd_info("cycle %lu: %lu queries (%lu reports, %lu opens found no file); rmmod refused %d times, %.2f s; modprobe %.2f s; answers %.2f s later\n",
				c, sh->queries, sh->reports, sh->gone, refused, t_rmmod,
				t_modprobe, t_answer);
	}

	pd_info("unload: %lu cycles, %lu unloaded in flight, %lu reloaded and answering, rmmod refused %lu times, %.1f s\n",
		cycles, unloaded, answered, busy, pd_now() - t0);
	pd_info("figures: %lu queries, %lu unload cycles, %.1f s in all\n", queries, cycles,
		pd_now() - t0);
	ksft_test_result(unloaded == cycles,
			 "unload: rmmod with queries in flight, %lu of %lu cycles\n",
			 unloaded, cycles);
	ksft_test_result(reloaded == cycles,
			 "unload: modprobe brings the files back, %lu of %lu\n",
			 reloaded, cycles);
	ksft_test_result(answered == cycles,
			 "unload: queries answered after each reload, %lu of %lu\n",
			 answered, cycles);
	ksft_test_result(!other, "unload: every outcome documented, %lu cycles not\n", other);
	ksft_finished();
}
