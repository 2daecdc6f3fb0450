#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
pd_drgn.py: Page Detective's phys job done with drgn, for pd_bench (see
pd_drgn.h and harness/README.md, "Benchmark").

    pd_drgn.py VMLINUX [CAP_SECONDS]

Loads the running kernel (/proc/kcore) with VMLINUX's debug info once,
prints "ready LOAD_MS", then answers requests on stdin, one a line:

    follow PFNS  every task, every VMA, follow_pfn() on each page of it:
                 what "just do this with drgn" means, written with drgn's
                 own helpers;
    tables PFNS  the same tasks and VMAs, but the page tables walked by
                 hand, each PTE table read whole (one read of 512 entries):
                 the best that drgn can do from userspace;

PFNS is a PFN or several, separated by commas: each method looks for all
of them in one pass, as pd_bench's userspace scan does;

with a "map PID ADDR" line per mapping found, then
"end MS ENTRIES CAPPED SKIPPED": drgn's own time, the page-table entries
it looked at, 1 when it stopped at CAP_SECONDS (default 120) before the
end, and how many processes it gave up on because they changed under it
(drgn's own does, as it works).  A query that fails prints "error WHY"
instead of its end line.
"""
import bisect
import struct
import sys
import time

from drgn import FaultError, Program
from drgn.helpers.linux.mm import follow_pfn, for_each_vma, phys_to_virt
from drgn.helpers.linux.pid import for_each_task

PAGE_SHIFT = 12
PAGE_SIZE = 1 << PAGE_SHIFT
# x86_64: present, huge (a leaf above the PTE level), and the PFN's bits.
_PAGE_PRESENT = 1 << 0
_PAGE_PSE = 1 << 7
PFN_MASK = ((1 << 52) - 1) & ~(PAGE_SIZE - 1)


def load(vmlinux):
    """The live kernel, with vmlinux's debug info and nothing else."""
    prog = Program()
    prog.set_kernel()
    prog.load_debug_info([vmlinux])
    return prog


def processes(prog):
    """Each thread group leader with an mm: a process, not a kernel thread."""
    for task in for_each_task(prog):
        if task.pid == task.tgid and task.mm:
            yield task


class Deadline(Exception):
    pass


class Query:
    """One request's answer, its count of entries, and its time cap."""

    def __init__(self, pfns, cap):
        self.pfns = sorted(pfns)
        self.pfnset = set(pfns)
        self.maps = []
        self.entries = 0
        self.skipped = 0
        self.stop = time.monotonic() + cap

    def check(self):
        if time.monotonic() > self.stop:
            raise Deadline()


def each_vma(prog, q, visit):
    """
    visit(mm, pid, vma) for each VMA of each process, checking the time cap
    after each; a process that changes under it is skipped, and counted.
    """
    for task in processes(prog):
        mm = task.mm
        pid = task.pid.value_()
        try:
            for vma in for_each_vma(mm):
                visit(mm, pid, vma)
                q.check()
        except (FaultError, ValueError):
            q.skipped += 1  # it changed under us, as drgn itself does


def by_follow(prog, q):
    """Each page of each VMA of each process, translated by follow_pfn()."""
    def visit(mm, pid, vma):
        for addr in range(vma.vm_start.value_(), vma.vm_end.value_(),
                          PAGE_SIZE):
            q.entries += 1
            try:
                if follow_pfn(mm, addr).value_() in q.pfnset:
                    q.maps.append((pid, addr))
            except FaultError:
                pass  # not mapped

    each_vma(prog, q, visit)


def _table(prog, entry):
    """The page (in the direct map) that a table entry points to."""
    return prog.cache["pd_direct_map"] + (entry & PFN_MASK)


def _entries(prog, table, first, last):
    """Entries first..last of the table at @table, in one read."""
    data = prog.read(table + first * 8, (last - first + 1) * 8)
    return struct.unpack("<%dQ" % (last - first + 1), data)


def _walk(prog, table, level, start, end, pid, q):
    """
    Entries of [start, end) in the table of @level (4: PGD ... 1: PTE),
    into the next level's tables; a leaf's PFNs are looked for in q's.
    """
    shift = PAGE_SHIFT + 9 * (level - 1)
    first = (start >> shift) & 511
    last = ((end - 1) >> shift) & 511
    base = start & ~((1 << (shift + 9)) - 1)
    for i, entry in enumerate(_entries(prog, table, first, last), first):
        q.entries += 1
        if not entry & _PAGE_PRESENT:
            continue
        lo = max(start, base + (i << shift))
        hi = min(end, base + ((i + 1) << shift))
        if level == 1 or (level in (2, 3) and entry & _PAGE_PSE):
            # A leaf: the pages of [lo, hi) follow its first.
            leaf = (entry & PFN_MASK) >> PAGE_SHIFT
            head = base + (i << shift)
            size = 1 << (shift - PAGE_SHIFT)
            if level > 1:
                leaf &= ~(size - 1)
            if size == 1:
                if leaf in q.pfnset:
                    q.maps.append((pid, head))
                continue
            i = bisect.bisect_left(q.pfns, leaf)
            while i < len(q.pfns) and q.pfns[i] < leaf + size:
                addr = head + ((q.pfns[i] - leaf) << PAGE_SHIFT)
                if lo <= addr < hi:
                    q.maps.append((pid, addr))
                i += 1
            continue
        _walk(prog, _table(prog, entry), level - 1, lo, hi, pid, q)


def by_tables(prog, q):
    """The page tables of each VMA walked by hand, a table at a time."""
    # The direct map starts below the 4-level kernel half with 5 levels.
    direct_map = phys_to_virt(prog, 0).value_()
    prog.cache["pd_direct_map"] = direct_map
    levels = 5 if direct_map < 0xffff800000000000 else 4

    def visit(mm, pid, vma):
        _walk(prog, mm.pgd.value_(), levels, vma.vm_start.value_(),
              vma.vm_end.value_(), pid, q)

    each_vma(prog, q, visit)


def serve(prog, cap):
    methods = {"follow": by_follow, "tables": by_tables}
    for line in sys.stdin:
        words = line.split()
        if len(words) != 2 or words[0] not in methods:
            print("error bad request: %s" % line.strip(), flush=True)
            continue
        try:
            q = Query([int(pfn, 0) for pfn in words[1].split(",")], cap)
        except ValueError:
            print("error bad PFNS: %s" % words[1][:64], flush=True)
            continue
        start = time.monotonic()
        capped = 0
        try:
            methods[words[0]](prog, q)
        except Deadline:
            capped = 1
        except Exception as e:
            print("error %s: %s" % (type(e).__name__, e), flush=True)
            continue
        ms = (time.monotonic() - start) * 1000
        for pid, addr in q.maps:
            print("map %d 0x%x" % (pid, addr))
        print("end %.3f %d %d %d" % (ms, q.entries, capped, q.skipped),
              flush=True)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: pd_drgn.py VMLINUX [CAP_SECONDS]")
    start = time.monotonic()
    try:
        prog = load(sys.argv[1])
        prog["init_mm"]		# the debug info is there
    except Exception as e:
        print("error %s: %s" % (type(e).__name__, e), flush=True)
        return 1
    print("ready %.0f" % ((time.monotonic() - start) * 1000), flush=True)
    serve(prog, float(sys.argv[2]) if len(sys.argv) == 3 else 120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
