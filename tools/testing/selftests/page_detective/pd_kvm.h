/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMs for Page Detective's tests and benchmark, made as
 * tools/testing/selftests/kvm/ makes them: memslots over memory the program
 * mmaps, one vCPU running a few instructions that the program writes into
 * guest memory: in real mode on x86_64; at EL1 with the MMU off on arm64,
 * where a store outside every memslot (EXIT_GPA) is how the code exits.
 */
#ifndef PD_KVM_H
#define PD_KVM_H

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "pd_util.h"

/*
 * Slot 0: the code and the data pages, base pages of its own: 2 MiB, room
 * for the code below 64 KiB and 16 data pages of 64 KiB above it.
 */
#define MAIN_SLOT	0
#define MAIN_SIZE	0x200000UL
#define CODE_GPA	0x1000UL

struct vm {
	int kvm, fd, vcpu;
	struct kvm_run *run;
	size_t run_size;
	char *main;			/* slot 0's memory */
	void *thp_area;			/* slot 1's, if any */
	char *thp;
	char name[32];			/* the VM's debugfs directory: PID-FD */
};

/* Load kvm_amd (with @params) if KVM is a module not loaded yet. */
static inline int load_kvm_amd(const char *params)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "modprobe kvm_amd %s 2>/dev/null", params);
	return system(cmd) ? -1 : 0;
}

/*
 * Whether KVM is here to test: "" if it is, or why not.  Its absence is a
 * failure when the kernel was built with KVM for AMD, which the guest CPU
 * has (harness/boot).
 */
static inline const char *kvm_missing(bool *fail)
{
	*fail = false;
#ifdef __aarch64__
	/* KVM runs where the kernel was booted at EL2 (harness/boot). */
	if (!access("/dev/kvm", F_OK))
		return "";
	*fail = !system("dmesg | grep -q 'started at EL2'");
	return *fail ? "the CPUs started at EL2 but /dev/kvm is missing" :
		       "the CPUs did not start at EL2: no KVM";
#endif
	if (access("/dev/kvm", F_OK))
		load_kvm_amd("");
	if (!access("/dev/kvm", F_OK))
		return "";
	*fail = pd_kernel_config("KVM_AMD")[0] != '\0';
	return *fail ? "CONFIG_KVM_AMD is set but /dev/kvm is missing" :
		       "the kernel has no CONFIG_KVM_AMD";
}

static inline int set_slot(struct vm *vm, unsigned int slot,
			   unsigned long gpa, void *mem, unsigned long size,
			   unsigned int flags)
{
	struct kvm_userspace_memory_region region = {
		.slot = slot,
		.flags = flags,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (unsigned long)mem,
	};

	return ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region);
}

#ifdef __aarch64__
#include <stddef.h>
#include <stdint.h>

/* Guest-physical addresses outside every memslot: a store there exits. */
#define EXIT_GPA	0xf0000000UL

/* The vCPU as the host CPU's kind, at EL1 with the MMU and caches off. */
static inline int vm_vcpu_init(struct vm *vm)
{
	struct kvm_vcpu_init init;

	if (ioctl(vm->fd, KVM_ARM_PREFERRED_TARGET, &init))
		return -1;
	return ioctl(vm->vcpu, KVM_ARM_VCPU_INIT, &init);
}
#else
static inline int vm_vcpu_init(struct vm *vm)
{
	return 0;
}
#endif

static inline int vm_create(struct vm *vm)
{
	memset(vm, 0, sizeof(*vm));
	vm->kvm = open("/dev/kvm", O_RDWR);
	if (vm->kvm < 0)
		return -1;
	vm->fd = ioctl(vm->kvm, KVM_CREATE_VM, 0);
	if (vm->fd < 0)
		return -1;
	snprintf(vm->name, sizeof(vm->name), "%d-%d", getpid(), vm->fd);
	vm->main = mmap(NULL, MAIN_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm->main == MAP_FAILED)
		return -1;
	/* 4 KiB pages: the corruption injector's "lost" takes no THP. */
	madvise(vm->main, MAIN_SIZE, MADV_NOHUGEPAGE);
	memset(vm->main, 0, MAIN_SIZE);
	if (set_slot(vm, MAIN_SLOT, 0, vm->main, MAIN_SIZE, 0))
		return -1;
	vm->vcpu = ioctl(vm->fd, KVM_CREATE_VCPU, 0);
	if (vm->vcpu < 0 || vm_vcpu_init(vm))
		return -1;
	vm->run_size = ioctl(vm->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	vm->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       vm->vcpu, 0);
	return vm->run == MAP_FAILED ? -1 : 0;
}

static inline void vm_destroy(struct vm *vm)
{
	if (vm->run && vm->run != MAP_FAILED)
		munmap(vm->run, vm->run_size);
	if (vm->vcpu > 0)
		close(vm->vcpu);
	if (vm->fd > 0)
		close(vm->fd);
	if (vm->kvm > 0)
		close(vm->kvm);
	if (vm->main && vm->main != MAP_FAILED)
		munmap(vm->main, MAIN_SIZE);
	if (vm->thp_area)
		munmap(vm->thp_area, 2 * pd_pmd_size());
}

#ifdef __x86_64__
/*
 * Start the vCPU, in real mode, at the code at CODE_GPA, with ds's base at
 * @ds_base, so that any guest address below 4 GiB can be reached without
 * leaving real mode.
 */
static inline int vm_start_code(struct vm *vm, unsigned long ds_base)
{
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 2 };
	struct kvm_sregs sregs;

	if (ioctl(vm->vcpu, KVM_GET_SREGS, &sregs))
		return -1;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	sregs.ds.base = ds_base;
	sregs.ds.selector = 0;
	if (ioctl(vm->vcpu, KVM_SET_SREGS, &sregs) ||
	    ioctl(vm->vcpu, KVM_SET_REGS, &regs))
		return -1;
	return 0;
}

/*
 * Run the vCPU over code that writes @val to the first byte of each page
 * @base + @offsets[i], then halts.
 */
static inline int vm_write_pages(struct vm *vm, unsigned long base,
				 const unsigned int *offsets, int n,
				 unsigned char val)
{
	unsigned char *code = (unsigned char *)vm->main + CODE_GPA;
	int i;

	for (i = 0; i < n; i++) {
		/* mov byte [offset], val */
		*code++ = 0xc6;
		*code++ = 0x06;
		*code++ = offsets[i] & 0xff;
		*code++ = offsets[i] >> 8;
		*code++ = val;
	}
	*code = 0xf4;	/* hlt */
	if (vm_start_code(vm, base) || ioctl(vm->vcpu, KVM_RUN, 0))
		return -1;
	return vm->run->exit_reason == KVM_EXIT_HLT ? 0 : -1;
}

/*
 * Point the vCPU at a loop that increments the first byte of guest page
 * @gpa and exits to the program on an I/O port write, so that each KVM_RUN
 * (vm_run_once()) is one round trip into the guest and out.
 */
static inline int vm_start_io_loop(struct vm *vm, unsigned long gpa)
{
	static const unsigned char loop[] = {
		0xfe, 0x06, 0x00, 0x00,	/* inc byte [0] */
		0xe6, 0x80,		/* out 0x80, al */
		0xeb, 0xf8,		/* jmp back to the inc */
	};

	memcpy(vm->main + CODE_GPA, loop, sizeof(loop));
	return vm_start_code(vm, gpa);
}

/* How the loop of vm_start_io_loop() exits, each time round. */
#define VM_LOOP_EXIT	KVM_EXIT_IO
#elif defined(__aarch64__)
#define A64_NOP			0xd503201fU
#define A64_STRB_W1_X0		0x39000001U	/* strb w1, [x0] */
#define A64_STRB_W1_X2		0x39000041U	/* strb w1, [x2] */
#define A64_LDRB_W1_X0		0x39400001U	/* ldrb w1, [x0] */
#define A64_ADD_W1_1		0x11000421U	/* add w1, w1, #1 */
#define A64_B(insns)		(0x14000000U | ((insns) & 0x3ffffff))

/* movz/movk of @val into x@reg, at @code.  Return: past them. */
static inline uint32_t *a64_mov(uint32_t *code, unsigned int reg,
				unsigned long val)
{
	unsigned int hw;

	*code++ = 0xd2800000U | (val & 0xffff) << 5 | reg;
	for (hw = 1; hw < 4; hw++)
		if ((val >> 16 * hw) & 0xffff)
			*code++ = 0xf2800000U | hw << 21 |
				  ((val >> 16 * hw) & 0xffff) << 5 | reg;
	return code;
}

/*
 * Start the vCPU at CODE_GPA.  The code begins with a nop: after an exit
 * on a store to EXIT_GPA, the next KVM_RUN completes that store by
 * stepping the PC over one instruction, whatever the PC is now.  With the
 * MMU off, the guest's accesses are uncached; KVM's stage 2 makes them
 * coherent with the program's writes (FEAT_S2FWB, which QEMU's "max" CPU
 * has).
 */
static inline int vm_start_code(struct vm *vm)
{
	unsigned long pc = CODE_GPA;
	struct kvm_one_reg reg = {
		.id = KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE |
		      KVM_REG_ARM_CORE_REG(regs.pc),
		.addr = (unsigned long)&pc,
	};

	return ioctl(vm->vcpu, KVM_SET_ONE_REG, &reg);
}

/* As x86's: a strb to each page, then a store to EXIT_GPA. */
static inline int vm_write_pages(struct vm *vm, unsigned long base,
				 const unsigned int *offsets, int n,
				 unsigned char val)
{
	uint32_t *code = (uint32_t *)(vm->main + CODE_GPA);
	int i;

	*code++ = A64_NOP;
	code = a64_mov(code, 1, val);
	for (i = 0; i < n; i++) {
		code = a64_mov(code, 0, base + offsets[i]);
		*code++ = A64_STRB_W1_X0;
	}
	code = a64_mov(code, 0, EXIT_GPA);
	*code = A64_STRB_W1_X0;
	if (vm_start_code(vm) || ioctl(vm->vcpu, KVM_RUN, 0))
		return -1;
	return vm->run->exit_reason == KVM_EXIT_MMIO &&
	       vm->run->mmio.phys_addr == EXIT_GPA ? 0 : -1;
}

/* As x86's: increment the byte at @gpa, store to EXIT_GPA, again. */
static inline int vm_start_io_loop(struct vm *vm, unsigned long gpa)
{
	uint32_t *code = (uint32_t *)(vm->main + CODE_GPA);

	*code++ = A64_NOP;
	code = a64_mov(code, 0, gpa);
	code = a64_mov(code, 2, EXIT_GPA);
	*code++ = A64_LDRB_W1_X0;
	*code++ = A64_ADD_W1_1;
	*code++ = A64_STRB_W1_X0;
	*code++ = A64_STRB_W1_X2;
	*code = A64_B(-4);
	return vm_start_code(vm);
}

#define VM_LOOP_EXIT	KVM_EXIT_MMIO
#else
#error "pd_kvm.h: guest code for x86_64 and arm64 only"
#endif

/*
 * The span of the offsets of one vm_write_pages(): what one real-mode ds
 * reaches on x86; on arm64, 256 stores of 4 KiB pages, whose code fits
 * below the data at 64 KiB.
 */
#ifdef __x86_64__
#define VM_SEGMENT	0x10000UL
#else
#define VM_SEGMENT	0x100000UL
#endif

/* Have the guest write the first byte of every page of [gpa, gpa + size). */
static inline int vm_write_range(struct vm *vm, unsigned long gpa,
				 unsigned long size)
{
	unsigned int offsets[VM_SEGMENT / 4096];
	int i, n = VM_SEGMENT / pd_page_size();
	unsigned long base;

	for (i = 0; i < n; i++)
		offsets[i] = i * pd_page_size();
	for (base = gpa; base < gpa + size; base += VM_SEGMENT)
		if (vm_write_pages(vm, base, offsets, n, 1))
			return -1;
	return 0;
}

/* One KVM_RUN of the loop of vm_start_io_loop(): 0 if it exited on its I/O. */
static inline int vm_run_once(struct vm *vm)
{
	if (ioctl(vm->vcpu, KVM_RUN, 0))
		return -1;
	return vm->run->exit_reason == VM_LOOP_EXIT ? 0 : -1;
}

#endif /* PD_KVM_H */
