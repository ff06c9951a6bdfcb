//! The CPU model: the interface of `arch::x86_64::cpu`, acting on simulated
//! state instead of the hardware, for host tests under Miri.
//!
//! - Registers (CR0/2/3/4, MSRs, RFLAGS.IF, the TSC, the FPU as an FXSAVE
//!   image, GDTR/IDTR) are fields of one [`Cpu`]; writes are checked
//!   against the contracts the bare-metal wrappers state (a CR3 switch
//!   keeps the kernel mapped, gates lead to the trap stubs, FXRSTOR
//!   refuses reserved MXCSR bits, user entry gets a sanitised frame).
//! - Port I/O goes to `sim::devices`.
//! - Interrupts are raised by tests ([`raise`]) and taken where the CPU
//!   enables interrupts (`sti`, `sti; hlt`) or while in user mode.
//! - Every kernel task is a host thread; a context switch hands a baton
//!   from one to the next, so exactly one of them runs kernel code at a
//!   time, as on the single CPU (Miri checks the hand-overs for races).
//! - User mode runs the "user program" a test installs ([`set_user_program`]).

use std::boxed::Box;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::arch::x86_64::fpu::FpuState;
use crate::arch::x86_64::gdt::{KERNEL_CS, USER_CS, USER_DS};
pub use crate::arch::x86_64::regs::*;
use crate::arch::x86_64::trap::{
    IdtEntry, RFLAGS_FIXED, RFLAGS_IF, SYSCALL_VECTOR, TrapFrame, USER_RFLAGS_MASK, sysret_restores,
};
use crate::mm::image::KERNEL_VMA;
use crate::mm::{KERNEL_LINEAR_BASE, Paddr, kernel_root, linear_ptr, page_table::translate};

use super::devices::{PORTS, TSC_HZ};

const CR0_PE: u64 = 1;
const CR0_WP: u64 = 1 << 16;
const CR0_PG: u64 = 1 << 31;
const CR4_PAE: u64 = 1 << 5;
const EFER_LONG_MODE: u64 = (1 << 8) | (1 << 10) | (1 << 11); // LME, LMA, NXE
/// What an `rdtsc` and an `in` cost in simulated time.
const TSC_PER_RDTSC: u64 = 100;
const TSC_PER_PORT_READ: u64 = 1000;

/// The state of the simulated CPU.
pub struct Cpu {
    pub cr0: u64,
    pub cr2: u64,
    pub cr3: u64,
    pub cr4: u64,
    /// RFLAGS.IF.
    pub interrupts: bool,
    pub msrs: BTreeMap<u32, u64>,
    pub tsc: u64,
    /// The FPU/SSE registers, as FXSAVE would store them.
    pub fpu: [u8; 512],
    pub gdt: Option<&'static [u64]>,
    pub idt: Option<&'static [IdtEntry; 256]>,
    /// Interrupt vectors raised and not yet taken, oldest first.
    pub pending: VecDeque<u8>,
    /// The last entry to user mode, as the user program saw it.
    pub last_user_entry: Option<UserEntry>,
    pub user_entries: u64,
    /// How many of those returned with `sysretq` (the rest: `iretq`).
    pub sysret_entries: u64,
    /// FXSAVE and FXRSTOR instructions executed.
    pub fxsaves: u64,
    pub fxrstors: u64,
    /// The FS and GS selectors.
    pub fs_sel: u16,
    pub gs_sel: u16,
    /// A stall to simulate (see [`stall_after_write`]): the port, how
    /// many more writes to it to let pass, and the nanoseconds.
    pub stall: Option<(u16, u32, u64)>,
}

pub static CPU: Mutex<Cpu> = Mutex::new(Cpu {
    cr0: CR0_PG | CR0_WP | CR0_PE | (1 << 4),
    cr2: 0,
    cr3: 0,
    cr4: CR4_PAE,
    interrupts: false,
    msrs: BTreeMap::new(),
    tsc: 0,
    fpu: [0; 512],
    gdt: None,
    idt: None,
    pending: VecDeque::new(),
    last_user_entry: None,
    user_entries: 0,
    sysret_entries: 0,
    fxsaves: 0,
    fxrstors: 0,
    fs_sel: 0,
    gs_sel: 0,
    stall: None,
});
/// Signalled when an interrupt is raised (wakes a halted CPU).
static INTERRUPT: Condvar = Condvar::new();

pub fn state() -> MutexGuard<'static, Cpu> {
    CPU.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn outb(port: u16, value: u8) {
    let tsc = state().tsc;
    PORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .write(port, value, tsc);
    let mut c = state();
    if let Some((p, skip, ns)) = c.stall
        && p == port
    {
        if skip == 0 {
            c.stall = None;
            c.tsc += ns * (TSC_HZ / 1_000_000_000);
            super::devices::sync_apic_current(c.tsc);
        } else {
            c.stall = Some((p, skip - 1, ns));
        }
    }
}

/// Simulates the host taking the CPU away (QEMU's thread descheduled):
/// right after the write to `port` that follows `skip` others, `ns`
/// nanoseconds pass.
pub fn stall_after_write(port: u16, skip: u32, ns: u64) {
    state().stall = Some((port, skip, ns));
}

pub fn inb(port: u16) -> u8 {
    let tsc = {
        let mut c = state();
        c.tsc += TSC_PER_PORT_READ;
        super::devices::sync_apic_current(c.tsc);
        c.tsc
    };
    PORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .read(port, tsc)
}

/// Wider port accesses: the simulated machine has no device behind a
/// 16- or 32-bit port (no PCI configuration mechanism, no I/O BAR); reads
/// float high as on a real bus, writes are dropped.
pub fn outw(_port: u16, _value: u16) {}

pub fn outl(_port: u16, _value: u32) {}

pub fn inw(_port: u16) -> u16 {
    0xffff
}

pub fn inl(_port: u16) -> u32 {
    u32::MAX
}

pub fn rdmsr(msr: u32) -> u64 {
    let c = state();
    match msr {
        MSR_EFER => c.msrs.get(&msr).copied().unwrap_or(EFER_LONG_MODE),
        // The BSP's APIC, enabled, at the architectural default base.
        MSR_APIC_BASE => 0xfee0_0900,
        _ => c.msrs.get(&msr).copied().unwrap_or(0),
    }
}

fn canonical(v: u64) -> bool {
    !(0x0000_8000_0000_0000..0xffff_8000_0000_0000).contains(&v)
}

/// # Safety
/// As `arch::x86_64::cpu::wrmsr`; the model checks what the hardware would
/// fault on (a non-canonical base) and the values frame relies on.
pub unsafe fn wrmsr(msr: u32, value: u64) {
    match msr {
        MSR_FS_BASE | MSR_GS_BASE => {
            assert!(
                canonical(value),
                "sim: #GP: non-canonical segment base {value:#x}"
            )
        }
        MSR_LSTAR => assert_eq!(
            value,
            syscall_entry(),
            "sim: LSTAR is not the syscall entry"
        ),
        MSR_EFER => assert_eq!(
            value & EFER_LONG_MODE,
            EFER_LONG_MODE,
            "sim: EFER write leaves long mode or NX"
        ),
        _ => {}
    }
    state().msrs.insert(msr, value);
}

pub fn read_cr2() -> u64 {
    state().cr2
}

/// # Safety
/// As `arch::x86_64::cpu::write_cr3`, which the model checks: the new root
/// is a page-table frame that maps the kernel as the current one does.
pub unsafe fn write_cr3(pml4_paddr: u64) {
    let root = pml4_paddr as Paddr;
    let usage = crate::mm::meta::slot(root).map(|s| s.usage.load(Ordering::Relaxed));
    assert_eq!(
        usage,
        Some(crate::mm::frame_alloc::FrameUsage::PageTable as u8),
        "sim: CR3 loaded with a frame that is not a page table"
    );
    match kernel_root() {
        // The kernel page table itself: it must map the image (where the
        // code and the boot stack are) and the direct map.
        None => {
            let image = crate::mm::image::sections();
            for va in [image.text.0, image.data.0, image.data.1 - 1] {
                assert_eq!(
                    translate(root, va),
                    Some(va - KERNEL_VMA),
                    "sim: new CR3 does not map the kernel image at {va:#x}"
                );
            }
            assert_eq!(translate(root, KERNEL_LINEAR_BASE + 0x1000), Some(0x1000));
        }
        // Any other table shares the kernel's top-half root entries.
        Some(kroot) => {
            for i in 256..512 {
                // SAFETY (model): both roots are page-table frames in
                // simulated RAM; the model reads them as the MMU would.
                let (a, b) = unsafe {
                    (
                        linear_ptr::<u64>(KERNEL_LINEAR_BASE + root + i * 8).read(),
                        linear_ptr::<u64>(KERNEL_LINEAR_BASE + kroot + i * 8).read(),
                    )
                };
                assert_eq!(a, b, "sim: new CR3 does not share kernel root entry {i}");
            }
        }
    }
    state().cr3 = pml4_paddr;
}

pub fn read_cr0() -> u64 {
    state().cr0
}

pub fn read_cr4() -> u64 {
    state().cr4
}

/// # Safety
/// As `arch::x86_64::cpu::write_cr0`; the model refuses to leave paging.
pub unsafe fn write_cr0(v: u64) {
    let keep = CR0_PG | CR0_PE | CR0_WP;
    assert_eq!(v & keep, keep, "sim: CR0 write turns off paging or WP");
    state().cr0 = v;
}

/// # Safety
/// As `arch::x86_64::cpu::write_cr4`; the model refuses to leave PAE.
pub unsafe fn write_cr4(v: u64) {
    assert!(v & CR4_PAE != 0, "sim: CR4 write turns off PAE");
    let c = cpuid(7, 0);
    for (bit, feature) in [(20, 7), (21, 20)] {
        assert!(
            v & (1 << bit) == 0 || c.ebx & (1 << feature) != 0,
            "sim: #GP: CR4 bit {bit} set without the CPU feature"
        );
    }
    state().cr4 = v;
}

pub fn flush_tlb_page(_vaddr: usize) {
    // The model has no TLB: every access walks the page table.
}

pub fn rflags() -> u64 {
    // The model's kernel never runs with a flag but IF (and the fixed bit).
    RFLAGS_FIXED | if state().interrupts { RFLAGS_IF } else { 0 }
}

pub fn interrupts_enabled() -> bool {
    state().interrupts
}

pub fn read_fs_gs_packed() -> u32 {
    let c = state();
    u32::from(c.fs_sel) | u32::from(c.gs_sel) << 16
}

/// As the bare-metal one: a selector that is not null or a user segment
/// is replaced by null; loading anything else would be a #GP, which the
/// model checks against the loaded GDT.
pub fn load_fs_gs_selectors(fs: u16, gs: u16) {
    use crate::arch::x86_64::gdt::user_selector_or_null;
    let (fs, gs) = (user_selector_or_null(fs), user_selector_or_null(gs));
    let mut c = state();
    let gdt = c.gdt.expect("sim: segment load before the GDT");
    for sel in [fs, gs].into_iter().filter(|s| *s & !3 != 0) {
        let d = descriptor(gdt, sel);
        assert!(
            d & (1 << 47) != 0 && (d >> 45) & 3 == 3,
            "sim: #GP: loading {sel:#x} into FS/GS"
        );
    }
    (c.fs_sel, c.gs_sel) = (fs, gs);
}

pub fn disable_interrupts() {
    state().interrupts = false;
}

/// Takes pending interrupts while interrupts are enabled, each through the
/// kernel's trap entry as from ring 0 (the interrupt gate clears IF, the
/// `iretq` sets it again).
fn take_pending() {
    loop {
        let vector = {
            let mut c = state();
            if !c.interrupts {
                return;
            }
            let Some(v) = c.pending.pop_front() else {
                return;
            };
            c.interrupts = false;
            v
        };
        let mut frame = TrapFrame {
            vector: u64::from(vector),
            cs: u64::from(KERNEL_CS),
            rflags: RFLAGS_IF | RFLAGS_FIXED,
            ..TrapFrame::default()
        };
        crate::arch::x86_64::trap::kernel_trap_entry(&mut frame);
        state().interrupts = true;
    }
}

pub fn enable_interrupts() {
    state().interrupts = true;
    take_pending();
}

/// Raises interrupt `vector` (a device or a test), to be taken at the next
/// point where the CPU has interrupts enabled.
pub fn raise(vector: u8) {
    state().pending.push_back(vector);
    INTERRUPT.notify_all();
}

/// Enables interrupts and halts until an interrupt comes, then takes it.
/// With nothing else pending, the local APIC timer (if armed) fires at the
/// end of its count, which is simulated time passing; in one-shot mode it
/// is then disarmed (the model keeps no current count: the initial count
/// goes to 0, so the next halt waits for another interrupt).
pub fn enable_interrupts_and_halt() {
    let mut c = state();
    c.interrupts = true;
    if c.pending.is_empty() {
        let lapic = |off| super::devices::LAPIC.reg(off).load(Ordering::Relaxed);
        let (lvt, initial) = (lapic(0x320), lapic(0x380));
        if lvt & (1 << 16) == 0 && initial != 0 {
            // Divided by 16, counting `initial` ticks of APIC_TIMER_HZ.
            c.tsc += u64::from(initial) * TSC_HZ / u64::from(super::devices::APIC_TIMER_HZ);
            super::devices::sync_apic_current(c.tsc);
            c.pending.push_back(lvt as u8);
            if lvt & (0b11 << 17) == 0 {
                super::devices::LAPIC.reg(0x380).store(0, Ordering::Relaxed);
            }
        }
    }
    while c.pending.is_empty() {
        c = INTERRUPT.wait(c).unwrap_or_else(|e| e.into_inner());
    }
    drop(c);
    take_pending();
}

pub fn halt_forever() -> ! {
    disable_interrupts();
    loop {
        std::thread::park();
    }
}

pub fn rdtsc() -> u64 {
    let mut c = state();
    c.tsc += TSC_PER_RDTSC;
    super::devices::sync_apic_current(c.tsc);
    c.tsc
}

/// Lets `ns` nanoseconds of simulated time pass.
pub fn advance_time(ns: u64) {
    let mut c = state();
    c.tsc += ns * (TSC_HZ / 1_000_000_000);
    super::devices::sync_apic_current(c.tsc);
}

pub use crate::cpu::CpuidResult;

/// A CPU with FXSR/SSE/SSE2, SMEP and SMAP; vendor "SimulatedCPU".
pub fn cpuid(leaf: u32, _subleaf: u32) -> CpuidResult {
    let w = |s: &[u8; 4]| u32::from_le_bytes(*s);
    match leaf {
        0 => CpuidResult {
            eax: 7,
            ebx: w(b"Simu"),
            edx: w(b"late"),
            ecx: w(b"dCPU"),
        },
        1 => CpuidResult {
            eax: 0,
            ebx: 0,
            ecx: 0,
            edx: (1 << 24) | (1 << 25) | (1 << 26),
        },
        7 => CpuidResult {
            eax: 0,
            ebx: (1 << 7) | (1 << 20),
            ecx: 0,
            edx: 0,
        },
        _ => CpuidResult {
            eax: 0,
            ebx: 0,
            ecx: 0,
            edx: 0,
        },
    }
}

/// Host threads have no kernel frame-pointer chain to offer.
pub fn frame_pointer() -> usize {
    0
}

const MXCSR_MASK: u32 = 0xffbf;

pub fn fxsave(state_area: &mut FpuState) {
    assert!((&raw const *state_area).addr().is_multiple_of(16));
    let mut c = state();
    c.fxsaves += 1;
    state_area.0 = c.fpu;
}

pub fn fxrstor(state_area: &FpuState) {
    assert!((&raw const *state_area).addr().is_multiple_of(16));
    let mxcsr = u32::from_le_bytes(state_area.0[24..28].try_into().unwrap());
    assert!(
        mxcsr & !MXCSR_MASK == 0,
        "sim: #GP in ring 0: FXRSTOR of an MXCSR with reserved bits {mxcsr:#x}"
    );
    let mut c = state();
    c.fxrstors += 1;
    c.fpu = state_area.0;
}

pub fn fxrstor_bytes(image: &[u8; 512]) {
    assert!(
        image.as_ptr().addr().is_multiple_of(16),
        "sim: #GP in ring 0: FXRSTOR of an unaligned image"
    );
    let mxcsr = u32::from_le_bytes(image[24..28].try_into().unwrap());
    assert!(
        mxcsr & !MXCSR_MASK == 0,
        "sim: #GP in ring 0: FXRSTOR of an MXCSR with reserved bits {mxcsr:#x}"
    );
    let mut c = state();
    c.fxrstors += 1;
    c.fpu = *image;
}

/// The descriptor at `sel` of `gdt`.
fn descriptor(gdt: &[u64], sel: u16) -> u64 {
    gdt.get(usize::from(sel >> 3))
        .copied()
        .unwrap_or_else(|| panic!("sim: #GP: selector {sel:#x} beyond the GDT"))
}

/// # Safety
/// As `arch::x86_64::cpu::load_gdt`, which the model checks.
pub unsafe fn load_gdt(gdt: &'static [u64], code: u16, data: u16, tss: u16) {
    let present = 1u64 << 47;
    let c = descriptor(gdt, code);
    assert!(
        c & present != 0 && c & (1 << 43) != 0,
        "sim: CS is not a present code segment"
    );
    assert!(c & (1 << 53) != 0, "sim: CS is not a 64-bit code segment");
    assert_eq!((c >> 45) & 3, 0, "sim: kernel CS is not DPL 0");
    let d = descriptor(gdt, data);
    assert!(
        d & present != 0 && d & (1 << 43) == 0 && d & (1 << 41) != 0,
        "sim: SS is not a present writable data segment"
    );
    let t = descriptor(gdt, tss);
    assert_eq!(
        (t >> 40) & 0xff,
        0x89,
        "sim: TR is not an available 64-bit TSS"
    );
    assert!((t & 0xffff) >= 103, "sim: TSS limit too small");
    assert!(
        usize::from(tss >> 3) + 1 < gdt.len(),
        "sim: TSS descriptor cut short"
    );
    // The user selectors `sysret` and `iretq` load must be valid too.
    for (sel, l) in [(USER_CS, true), (USER_DS, false)] {
        let u = descriptor(gdt, sel);
        assert!(
            u & present != 0 && (u >> 45) & 3 == 3,
            "sim: {sel:#x} is not a DPL 3 segment"
        );
        assert_eq!(u & (1 << 53) != 0, l, "sim: {sel:#x} has the wrong L bit");
    }
    state().gdt = Some(gdt);
}

/// # Safety
/// As `arch::x86_64::cpu::load_idt`, which the model checks.
pub unsafe fn load_idt(idt: &'static [IdtEntry; 256]) {
    let mut c = state();
    let gdt = c.gdt.expect("sim: IDT loaded before the GDT");
    let stubs = trap_stubs();
    for (v, g) in idt.iter().enumerate() {
        assert_eq!(
            g.handler(),
            stubs + 16 * v as u64,
            "sim: gate {v} misses its stub"
        );
        assert_eq!(g.selector, KERNEL_CS, "sim: gate {v} selector");
        assert!(descriptor(gdt, g.selector) & (1 << 53) != 0);
        let dpl = if v == 3 { 3 } else { 0 };
        assert_eq!(g.type_attr, 0x8e | (dpl << 5), "sim: gate {v} type");
        let ist = match v {
            1 | 2 | 18 => 2,
            8 => 1,
            _ => 0,
        };
        assert_eq!(g.ist, ist, "sim: gate {v} stack");
    }
    c.idt = Some(idt);
}

/// Where the simulated image keeps the assembly routines.
pub fn trap_stubs() -> u64 {
    (crate::mm::image::sections().text.0 + 0x8000) as u64
}

pub fn syscall_entry() -> u64 {
    trap_stubs() + 0x1000
}

pub fn task_trampoline() -> u64 {
    trap_stubs() + 0x1100
}

/// What the user program saw when it was entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserEntry {
    pub rip: u64,
    pub rsp: u64,
    pub rflags: u64,
    pub fs_base: u64,
    pub gs_base: u64,
    pub cr3: u64,
}

/// How the user program leaves user mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserExit {
    /// `syscall` (2 bytes long); the CPU puts RIP in RCX and RFLAGS in R11.
    Syscall,
    /// A CPU exception, with its error code and (for #PF) CR2.
    Exception {
        vector: u8,
        error_code: u64,
        cr2: u64,
    },
}

/// The user-visible machine state a user program may change. Loading a
/// selector (`mov %eax,%fs`) sets `fs_sel` and the base from the
/// descriptor: 0 for every user segment.
pub struct UserState<'a> {
    pub regs: &'a mut TrapFrame,
    pub fs_base: u64,
    pub gs_base: u64,
    pub fs_sel: u16,
    pub gs_sel: u16,
    pub fpu: &'a mut [u8; 512],
}

type UserProgram = Box<dyn FnMut(&mut UserState) -> UserExit + Send>;
static USER_PROGRAM: Mutex<Option<UserProgram>> = Mutex::new(None);

/// Installs what runs whenever the CPU enters user mode.
pub fn set_user_program(p: impl FnMut(&mut UserState) -> UserExit + Send + 'static) {
    *USER_PROGRAM.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(p));
}

/// # Safety
/// As `arch::x86_64::cpu::enter_user`; the model checks the frame as
/// `iretq` to ring 3 needs it, and that interrupts are off.
pub unsafe fn enter_user(frame: &mut TrapFrame) -> u64 {
    // Like the assembly: the counter just before user mode and just after
    // the trap; the difference is the stay's ticks.
    let t0 = rdtsc();
    let (fs_base, gs_base, fs_sel, gs_sel, pending) = {
        let mut c = state();
        assert!(!c.interrupts, "sim: user entry with interrupts enabled");
        assert_eq!(frame.cs, u64::from(USER_CS), "sim: iretq to a non-user CS");
        assert_eq!(frame.ss, u64::from(USER_DS), "sim: iretq to a non-user SS");
        assert_eq!(
            frame.rflags & !USER_RFLAGS_MASK,
            RFLAGS_IF | RFLAGS_FIXED,
            "sim: user RFLAGS with a privileged bit"
        );
        assert!(frame.rip < 0x0000_8000_0000_0000 && frame.rsp < 0x0000_8000_0000_0000);
        // The assembly's choice: `sysretq` exactly when it restores the
        // frame (RCX = RIP, R11 = RFLAGS, no trap flag).
        if sysret_restores(frame) {
            c.sysret_entries += 1;
        }
        assert_ne!(
            Some(c.cr3 as usize),
            kernel_root(),
            "sim: user mode on the kernel table"
        );
        let fs = c.msrs.get(&MSR_FS_BASE).copied().unwrap_or(0);
        let gs = c.msrs.get(&MSR_GS_BASE).copied().unwrap_or(0);
        c.last_user_entry = Some(UserEntry {
            rip: frame.rip,
            rsp: frame.rsp,
            rflags: frame.rflags,
            fs_base: fs,
            gs_base: gs,
            cr3: c.cr3,
        });
        c.user_entries += 1;
        (fs, gs, c.fs_sel, c.gs_sel, c.pending.pop_front())
    };
    frame.error_code = 0;
    // An interrupt raised meanwhile is taken as soon as user mode runs.
    if let Some(v) = pending {
        frame.vector = u64::from(v);
        return rdtsc() - t0;
    }
    let mut fpu = state().fpu;
    let mut user = UserState {
        regs: frame,
        fs_base,
        gs_base,
        fs_sel,
        gs_sel,
        fpu: &mut fpu,
    };
    let exit = {
        let mut program = USER_PROGRAM.lock().unwrap_or_else(|e| e.into_inner());
        let program = program
            .as_mut()
            .expect("sim: user mode entered with no user program installed");
        program(&mut user)
    };
    let (fs, gs, fs_sel, gs_sel) = (user.fs_base, user.gs_base, user.fs_sel, user.gs_sel);
    let mut c = state();
    c.fpu = fpu;
    // User code may have loaded selectors, which changed the bases.
    c.msrs.insert(MSR_FS_BASE, fs);
    c.msrs.insert(MSR_GS_BASE, gs);
    (c.fs_sel, c.gs_sel) = (fs_sel, gs_sel);
    match exit {
        UserExit::Syscall => {
            frame.rip += 2;
            frame.rcx = frame.rip;
            frame.r11 = frame.rflags;
            frame.vector = SYSCALL_VECTOR;
        }
        UserExit::Exception {
            vector,
            error_code,
            cr2,
        } => {
            frame.vector = u64::from(vector);
            frame.error_code = error_code;
            if vector == 14 {
                c.cr2 = cr2;
            }
        }
    }
    drop(c);
    rdtsc() - t0
}

/// Which host thread may run kernel code: the token of the context that
/// holds the CPU.
static BATON: Mutex<usize> = Mutex::new(0);
static BATON_MOVED: Condvar = Condvar::new();
/// Tokens of contexts parked in `context_switch`, waiting to be resumed.
static PARKED: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());
/// Context tokens: small numbers, never kernel-stack addresses, so the
/// model tells a saved context from a fresh task's stack pointer.
static NEXT_TOKEN: AtomicUsize = AtomicUsize::new(1);

fn wait_for_baton(token: usize) {
    let mut b = BATON.lock().unwrap_or_else(|e| e.into_inner());
    while *b != token {
        b = BATON_MOVED.wait(b).unwrap_or_else(|e| e.into_inner());
    }
}

/// # Safety
/// As `arch::x86_64::cpu::context_switch`, which the model checks: the
/// target is either a context parked here (and not resumed since) or a
/// fresh task's initial frame, whose return address is the trampoline.
pub unsafe fn context_switch(save_rsp: *mut usize, next_rsp: usize) {
    let mine = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    // SAFETY (model): the caller guarantees `save_rsp` is valid; this is
    // the store of the stack pointer the assembly does.
    unsafe { save_rsp.write(mine) };
    let resumes = PARKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&next_rsp);
    if !resumes {
        assert!(
            next_rsp >= crate::mm::kspace::KSTACK_REGION_BASE,
            "sim: switch to {next_rsp:#x}, neither a parked context nor a kernel stack"
        );
        // The initial frame `switch::initial_stack` wrote: six callee-saved
        // registers, then the return address.
        // SAFETY (model): `next_rsp` is in the kernel-stack region; the
        // model's MMU panics if it is not mapped.
        let ret = unsafe { linear_ptr::<u64>(next_rsp + 6 * 8).read() };
        assert_eq!(
            ret,
            task_trampoline(),
            "sim: switch to a stack that is not a new task"
        );
        std::thread::Builder::new()
            .name(format!("sim-task@{next_rsp:#x}"))
            .spawn(move || {
                wait_for_baton(next_rsp);
                crate::task::task_entry()
            })
            .expect("sim: cannot start a task thread");
    }
    PARKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(mine);
    *BATON.lock().unwrap_or_else(|e| e.into_inner()) = next_rsp;
    BATON_MOVED.notify_all();
    wait_for_baton(mine);
}

/// The boot thread starts out holding the CPU.
pub fn boot_token() -> usize {
    0
}

/// As `arch::x86_64::cpu::isolated_call`, which the model checks: the stack
/// is a mapped kernel stack, aligned, and the record is writable. The host
/// runs `entry` on the calling thread and unwinds a panic back to here
/// (where the machine's panic handler would jump back instead).
///
/// # Safety
/// As the machine's: `rec` valid for the call, `stack_top` a kernel stack.
pub unsafe fn isolated_call(
    rec: *mut crate::domain::Recovery,
    stack_top: usize,
    entry: extern "C-unwind" fn(*mut u8),
    ctx: *mut u8,
) -> bool {
    assert!(
        stack_top >= crate::mm::kspace::KSTACK_REGION_BASE && stack_top.is_multiple_of(16),
        "sim: isolated call on {stack_top:#x}, not an aligned kernel stack top"
    );
    // SAFETY (model): the word below the top must be mapped (the model's
    // MMU panics if it is not); the caller guarantees `rec` is valid.
    unsafe {
        let _ = linear_ptr::<u64>(stack_top - 8).read();
        rec.cast::<usize>().write(stack_top);
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry(ctx))).is_err()
}

/// As `arch::x86_64::cpu::isolated_abort`: never reached on the host, where
/// a panic unwinds to `isolated_call` instead.
///
/// # Safety
/// As the machine's (never called on the host).
pub unsafe fn isolated_abort(_saved_rsp: usize) -> ! {
    unreachable!("sim: the host unwinds panics instead of aborting isolated calls")
}
