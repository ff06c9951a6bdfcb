//! GDT and TSS. Selector layout is fixed by `syscall`/`sysret`: kernel
//! code 0x08, kernel data 0x10, then the user selectors Linux uses (so
//! programs see the same %cs/%ss and signal frames agree with them): an
//! empty slot where Linux's 32-bit user code is (0x20; compat mode is not
//! offered, loading 0x23 faults), user data 0x2b, 64-bit user code 0x33;
//! TSS 0x38.

use core::cell::UnsafeCell;
use core::mem::size_of;

use super::cpu;
use crate::sync::Once;

pub const KERNEL_CS: u16 = 0x08;
pub const KERNEL_DS: u16 = 0x10;
pub const USER_DS: u16 = 0x28 | 3;
pub const USER_CS: u16 = 0x30 | 3;
const TSS_SEL: u16 = 0x38;
const GDT_ENTRIES: usize = 9;

/// Interrupt stack table slot used for double faults (1-based as in the IDT).
pub const IST_DOUBLE_FAULT: u8 = 1;
/// IST slot for #DB, NMI and #MC, which may arrive before the syscall entry
/// has switched away from the user stack.
pub const IST_DEBUG: u8 = 2;
const DF_STACK_SIZE: usize = 16 * 1024;

#[repr(C, packed(4))]
struct Tss {
    _reserved0: u32,
    rsp: [u64; 3],
    _reserved1: u64,
    ist: [u64; 7],
    _reserved2: u64,
    _reserved3: u16,
    iomap_base: u16,
}
const _: () = assert!(size_of::<Tss>() == 104);

#[repr(C, align(16))]
struct DfStack([u8; DF_STACK_SIZE]);

/// The GDT: built once at boot (the TSS descriptor needs the TSS's
/// address), never changed after.
static GDT: Once<[u64; GDT_ENTRIES]> = Once::new();

/// CPU-owned tables the CPU also writes or that change at run time.
/// Single CPU for now; becomes per-CPU with SMP.
struct CpuTables {
    tss: UnsafeCell<Tss>,
    df_stack: UnsafeCell<DfStack>,
    debug_stack: UnsafeCell<DfStack>,
}
// SAFETY: the TSS is written only during `init` (before interrupts are
// enabled, on the boot CPU) and by `set_kernel_stack`, which runs with
// interrupts disabled on the only CPU; the stacks are used by the CPU
// alone. The hardware reads them concurrently, which is the intended use.
// MIRI: relied on by arch::x86_64::tests::boot_cpu_tables_are_loaded_and_checked, user::tests::user_mode_is_entered_with_sanitised_state_and_syscalls_come_back
unsafe impl Sync for CpuTables {}

static TABLES: CpuTables = CpuTables {
    tss: UnsafeCell::new(Tss {
        _reserved0: 0,
        rsp: [0; 3],
        _reserved1: 0,
        ist: [0; 7],
        _reserved2: 0,
        _reserved3: 0,
        iomap_base: size_of::<Tss>() as u16,
    }),
    df_stack: UnsafeCell::new(DfStack([0; DF_STACK_SIZE])),
    debug_stack: UnsafeCell::new(DfStack([0; DF_STACK_SIZE])),
};

pub(crate) fn init() {
    let tss_addr = TABLES.tss.get() as u64;
    let df_top = TABLES.df_stack.get() as u64 + DF_STACK_SIZE as u64;
    let debug_top = TABLES.debug_stack.get() as u64 + DF_STACK_SIZE as u64;
    let tss_limit = (size_of::<Tss>() - 1) as u64;
    let tss_low = (tss_limit & 0xffff)
        | ((tss_addr & 0xff_ffff) << 16)
        | (0x89 << 40) // present, 64-bit available TSS
        | ((tss_limit >> 16) & 0xf) << 48
        | ((tss_addr >> 24) & 0xff) << 56;
    let tss_high = tss_addr >> 32;
    // SAFETY: boot CPU, interrupts disabled: nothing else accesses the TSS yet.
    unsafe {
        (*TABLES.tss.get()).ist[usize::from(IST_DOUBLE_FAULT) - 1] = df_top;
        (*TABLES.tss.get()).ist[usize::from(IST_DEBUG) - 1] = debug_top;
    }
    let gdt = GDT.call_once(|| {
        [
            0,
            0x00af_9a00_0000_ffff, // kernel code: 64-bit, DPL 0
            0x00cf_9200_0000_ffff, // kernel data
            0,                     // unused
            0,                     // sysret base (Linux: 32-bit user code)
            0x00cf_f200_0000_ffff, // user data, DPL 3
            0x00af_fa00_0000_ffff, // user code: 64-bit, DPL 3
            tss_low,
            tss_high,
        ]
    });
    // SAFETY: KERNEL_CS and KERNEL_DS index the kernel code and data
    // descriptors above, TSS_SEL the descriptor of the static TSS.
    unsafe { cpu::load_gdt(gdt, KERNEL_CS, KERNEL_DS, TSS_SEL) };
}

/// `sel` if it is null or selects one of the user segments above (any
/// RPL), else null: the selectors the kernel may load for user code.
pub(crate) fn user_selector_or_null(sel: u16) -> u16 {
    let index = sel & !3;
    if index == USER_DS & !3 || index == USER_CS & !3 {
        sel
    } else {
        0
    }
}

/// Sets the stack the CPU switches to on a trap from user mode (TSS.RSP0).
/// `_irq` proves that interrupts are off, so no trap can read RSP0 while
/// it changes.
#[inline(always)]
pub(crate) fn set_kernel_stack(top: u64, _irq: &crate::irq::DisabledLocalIrqGuard) {
    // SAFETY: single CPU with interrupts disabled (`_irq`); the CPU only
    // reads RSP0 when a trap from ring 3 happens, which cannot happen
    // concurrently.
    unsafe { (*TABLES.tss.get()).rsp[0] = top };
}
