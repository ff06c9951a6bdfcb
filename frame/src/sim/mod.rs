//! A simulated machine for host tests, the stand-in for the bare-metal
//! pieces that Miri cannot run: a host allocation plays the RAM, the
//! firmware's PVH start-info structure and a kernel image are laid out in
//! it, devices (`devices`) and a CPU model (`cpu`) stand in for the
//! hardware, and the machine boots through frame's real entry path
//! (`boot::rust_entry`: start-info parsing, GDT, IDT, FPU, then
//! `frame::init` and `run_first_task` from the `main` below). Kernel
//! virtual addresses are the bare-metal ones; [`kernel_ptr`] turns them
//! into pointers into the simulated RAM the way the MMU would.
//!
//! Tests run kernel code on the machine with [`run`]: the closure becomes
//! a job of the first task (the "driver"), so it runs in task context on
//! the one simulated CPU, and may spawn tasks, sleep, take interrupts and
//! enter user mode.

pub mod cpu;
pub mod devices;

use std::boxed::Box;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, mpsc};
use std::vec::Vec;

use crate::mm::frame_alloc::FrameAllocPolicy;
use crate::mm::heap::{HeapPolicy, HeapSlot, MAX_SLOT, MIN_SLOT, Slab, SlabList};
use crate::mm::image::{KERNEL_VMA, Sections};
use crate::mm::{KERNEL_LINEAR_BASE, PAGE_SIZE, Paddr, Vaddr, kernel_root, page_table};
use crate::sync::SpinLock;
use crate::task::{Scheduler, Task};

pub const SIM_BYTES: usize = 16 * 1024 * 1024;

/// Where the simulated firmware and loader put things (physical addresses).
pub const START_INFO: Paddr = 0x7000;
const MODLIST: Paddr = 0x7100;
const CMDLINE_AT: Paddr = 0x7200;
const MEMMAP: Paddr = 0x7400;
pub const CMDLINE: &str = "init=/sbin/init loglevel=2 -- a b";
/// The initrd starts and ends inside pages, as a loader may place it.
pub const INITRD_AT: Paddr = 0x13_0800;
pub const INITRD_LEN: usize = 5000;

/// The E820 map the firmware reports: (start, size, type).
pub const MEMORY_MAP: [(Paddr, usize, u32); 6] = [
    (0, 0x9_fc00, 1),
    (0x9_fc00, 0x400, 2),
    (0xf_0000, 0x1_0000, 2),
    (0x10_0000, SIM_BYTES - 0x10_0000, 1),
    (0xfec0_0000, 0x1000, 2),
    (0xfee0_0000, 0x1000, 2),
];

/// The simulated kernel image, loaded at 1 MiB like the real one.
pub(crate) const IMAGE: Sections = Sections {
    text: (KERNEL_VMA + 0x10_1000, KERNEL_VMA + 0x11_1000),
    rodata: (KERNEL_VMA + 0x11_1000, KERNEL_VMA + 0x11_9000),
    data: (KERNEL_VMA + 0x11_9000, KERNEL_VMA + 0x12_1000),
    ksyms: (KERNEL_VMA + 0x11_5000, KERNEL_VMA + 0x11_9000),
};

/// The symbols `xtask` would have written into the image's `.ksyms`.
pub const SYMBOLS: [(Vaddr, &str); 3] = [
    (KERNEL_VMA + 0x10_1000, "__trellis_rust_entry"),
    (KERNEL_VMA + 0x10_2000, "frame::task::reschedule"),
    (KERNEL_VMA + 0x10_2400, "kernel::main"),
];

/// The byte at offset `i` of the simulated initrd.
pub fn initrd_byte(i: usize) -> u8 {
    (i * 7 + i / 256) as u8
}

/// A page of RAM (page aligned, so that alignment in the simulated
/// physical memory is alignment on the host, where Miri checks it).
#[derive(Clone)]
#[repr(C, align(4096))]
struct Page([u8; PAGE_SIZE]);

fn poke(ram: &mut [Page], pa: Paddr, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        ram[(pa + i) / PAGE_SIZE].0[(pa + i) % PAGE_SIZE] = *b;
    }
}

/// RAM as the firmware and the loader leave it at the kernel's entry.
fn power_on() -> Vec<Page> {
    let mut ram = vec![Page([0; PAGE_SIZE]); SIM_BYTES / PAGE_SIZE];
    let u32b = |v: u32| v.to_le_bytes();
    let u64b = |v: u64| v.to_le_bytes();
    // hvm_start_info (Xen public header arch-x86/hvm/start_info.h), version 1.
    poke(&mut ram, START_INFO, &u32b(crate::boot::PVH_MAGIC));
    poke(&mut ram, START_INFO + 4, &u32b(1));
    poke(&mut ram, START_INFO + 12, &u32b(1));
    poke(&mut ram, START_INFO + 16, &u64b(MODLIST as u64));
    poke(&mut ram, START_INFO + 24, &u64b(CMDLINE_AT as u64));
    poke(&mut ram, START_INFO + 40, &u64b(MEMMAP as u64));
    poke(&mut ram, START_INFO + 48, &u32b(MEMORY_MAP.len() as u32));
    poke(&mut ram, MODLIST, &u64b(INITRD_AT as u64));
    poke(&mut ram, MODLIST + 8, &u64b(INITRD_LEN as u64));
    poke(&mut ram, CMDLINE_AT, CMDLINE.as_bytes());
    for (i, (start, size, kind)) in MEMORY_MAP.iter().enumerate() {
        let e = MEMMAP + i * 24;
        poke(&mut ram, e, &u64b(*start as u64));
        poke(&mut ram, e + 8, &u64b(*size as u64));
        poke(&mut ram, e + 16, &u32b(*kind));
    }
    let initrd: Vec<u8> = (0..INITRD_LEN).map(initrd_byte).collect();
    poke(&mut ram, INITRD_AT, &initrd);
    // The image's symbol table: "KSYM", count, {addr, name offset, name
    // length} sorted by address, then the names.
    let mut ksyms = b"KSYM".to_vec();
    ksyms.extend(u32b(SYMBOLS.len() as u32));
    let mut names: Vec<u8> = Vec::new();
    for (addr, name) in SYMBOLS {
        ksyms.extend(u64b(addr as u64));
        ksyms.extend(u32b(names.len() as u32));
        ksyms.extend(u32b(name.len() as u32));
        names.extend(name.as_bytes());
    }
    ksyms.extend(names);
    poke(&mut ram, IMAGE.ksyms.0 - KERNEL_VMA, &ksyms);
    ram
}

/// The simulated RAM. Every pointer into it derives from this one, so that
/// it keeps the allocation's provenance (Miri then checks each access
/// against the simulated RAM, with no integer-to-pointer casts); holding it
/// in a static also keeps the allocation reachable.
static RAM: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());

/// A pointer to simulated physical address `pa`: RAM or a device's MMIO
/// page. Anything else is a bus error in this machine.
fn phys_ptr<T>(pa: Paddr) -> *mut T {
    if let Some(page) = devices::mmio_page(pa) {
        return (&raw const page.0)
            .cast::<u8>()
            .cast_mut()
            .wrapping_add(pa & 0xfff)
            .cast();
    }
    assert!(
        pa < SIM_BYTES,
        "simulated bus error: no RAM or device at physical address {pa:#x}"
    );
    let ram = RAM.load(Ordering::Relaxed);
    assert!(
        !ram.is_null(),
        "simulated RAM used before the machine booted"
    );
    ram.wrapping_add(pa).cast()
}

/// The direct-map address of a pointer into the simulated RAM (the inverse
/// of [`kernel_ptr`] there); anything else is not a kernel address.
pub(crate) fn kernel_vaddr(ptr: *const u8) -> Vaddr {
    let pa = ptr.addr().wrapping_sub(RAM.load(Ordering::Relaxed).addr());
    assert!(pa < SIM_BYTES, "sim: {ptr:p} is not in the simulated RAM");
    KERNEL_LINEAR_BASE + pa
}

/// The direct map of the boot page tables (and of the kernel page table
/// built later): the low 4 GiB.
const DIRECT_MAP_SIZE: usize = 1 << 32;

/// The MMU: a pointer for kernel virtual address `va`. The direct map is
/// linear; anything else (the kernel image, kernel stacks) is looked up in
/// the kernel page table, and an unmapped address is a page fault, which
/// in kernel mode is fatal.
pub(crate) fn kernel_ptr<T>(va: Vaddr) -> *mut T {
    if let Some(pa) = va
        .checked_sub(KERNEL_LINEAR_BASE)
        .filter(|pa| *pa < DIRECT_MAP_SIZE)
    {
        return phys_ptr(pa);
    }
    let root = kernel_root()
        .unwrap_or_else(|| panic!("simulated page fault at {va:#x}: no kernel page table yet"));
    match page_table::translate(root, va) {
        Some(pa) => phys_ptr(pa),
        None => panic!("simulated page fault: kernel access to unmapped {va:#x}"),
    }
}

/// A first-fit policy over a `Vec<bool>` (with a hint: no free frame lies
/// below `first`, which keeps the scans short under Miri); `force_pfn`
/// makes it propose a chosen frame, to test that frame refuses bad
/// proposals.
pub struct TestPolicy {
    free: Mutex<FreeMap>,
    pub force_pfn: AtomicUsize,
}

struct FreeMap {
    free: Vec<bool>,
    first: usize,
}

impl FreeMap {
    fn set(&mut self, start: usize, count: usize, free: bool) {
        let end = (start + count).min(self.free.len());
        self.free[start.min(end)..end]
            .iter_mut()
            .for_each(|b| *b = free);
        if free {
            self.first = self.first.min(start);
        }
    }
}

impl FrameAllocPolicy for TestPolicy {
    fn add_free(&self, start: usize, count: usize) {
        self.free.lock().unwrap().set(start, count, true);
    }

    fn alloc(&self, count: usize, _align: usize) -> Option<usize> {
        let forced = self.force_pfn.load(Ordering::Relaxed);
        if forced != 0 {
            return Some(forced);
        }
        let mut m = self.free.lock().unwrap();
        let first = m.first + m.free[m.first..].iter().position(|&b| b)?;
        m.first = first;
        let start = (first..m.free.len().saturating_sub(count))
            .find(|&s| m.free[s..s + count].iter().all(|&b| b))?;
        m.set(start, count, false);
        Some(start)
    }

    fn dealloc(&self, start: usize, count: usize) {
        self.free.lock().unwrap().set(start, count, true);
    }

    fn free_count(&self) -> usize {
        self.free
            .lock()
            .unwrap()
            .free
            .iter()
            .filter(|&&b| b)
            .count()
    }
}

static POLICY: std::sync::OnceLock<TestPolicy> = std::sync::OnceLock::new();

pub fn policy() -> &'static TestPolicy {
    POLICY.get_or_init(|| TestPolicy {
        free: Mutex::new(FreeMap {
            free: vec![false; SIM_BYTES / PAGE_SIZE],
            first: SIM_BYTES / PAGE_SIZE,
        }),
        force_pfn: AtomicUsize::new(0),
    })
}

/// A slab heap policy: one list of slabs with free slots per power-of-two
/// size class, and one of full slabs; larger requests take whole frames.
pub struct TestHeap {
    classes: [SpinLock<(SlabList, SlabList)>; 8],
}

fn class_of(size: usize) -> Option<(usize, usize)> {
    let slot = size.max(MIN_SLOT).next_power_of_two();
    (slot <= MAX_SLOT).then(|| (slot, (slot / MIN_SLOT).trailing_zeros() as usize))
}

impl HeapPolicy for TestHeap {
    fn alloc(&self, layout: core::alloc::Layout) -> Option<HeapSlot> {
        let size = layout.size().max(layout.align());
        let Some((slot_size, class)) = class_of(size) else {
            return HeapSlot::alloc_large(size).ok();
        };
        let mut lists = self.classes[class].lock();
        let (partial, full) = &mut *lists;
        if partial.is_empty() {
            partial.push(Slab::new(slot_size).ok()?);
        }
        let (slot, now_full) = partial.alloc_front()?;
        if now_full && let Some(slab) = partial.pop() {
            full.push(slab);
        }
        Some(slot)
    }

    fn dealloc(&self, slot: HeapSlot) {
        if slot.is_large() {
            return slot.free_large();
        }
        let Some((_, class)) = class_of(slot.size()) else {
            return;
        };
        let mut lists = self.classes[class].lock();
        let (partial, full) = &mut *lists;
        let release = partial.len() > 1;
        let slot = match partial.dealloc_in(slot, release) {
            Ok(emptied) => return drop(emptied),
            Err(slot) => slot,
        };
        let Some(mut slab) = full.take_containing(&slot) else {
            panic!("sim heap: a slot of no slab of this heap");
        };
        slab.dealloc(slot).expect("the slab that contains the slot");
        if slab.is_empty() && !partial.is_empty() {
            drop(slab);
        } else {
            partial.push(slab);
        }
    }
}

pub static HEAP: TestHeap = TestHeap {
    classes: [const { SpinLock::new((SlabList::new(), SlabList::new())) }; 8],
};

/// First come, first served; the timer asks to preempt at every tick.
pub struct Fifo {
    queue: Mutex<VecDeque<Arc<Task>>>,
}

impl Fifo {
    fn queue(&self) -> MutexGuard<'_, VecDeque<Arc<Task>>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a task waits to run.
    pub fn has_runnable(&self) -> bool {
        !self.queue().is_empty()
    }
}

impl Scheduler for Fifo {
    fn enqueue(&self, task: Arc<Task>) {
        self.queue().push_back(task);
    }

    fn pick_next(&self) -> Option<Arc<Task>> {
        self.queue().pop_front()
    }

    fn tick(&self, _current: &Task) -> bool {
        true
    }
}

pub static SCHEDULER: Fifo = Fifo {
    queue: Mutex::new(VecDeque::new()),
};

type Job = Box<dyn FnOnce() + Send>;
/// Jobs for the driver task, and the signal that one arrived.
static JOBS: (Mutex<VecDeque<Job>>, Condvar) = (Mutex::new(VecDeque::new()), Condvar::new());
static BOOTED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
static INIT: Once = Once::new();
static LOCK: Mutex<()> = Mutex::new(());

crate::main!(sim_main);

/// The kernel's `main` on the simulated machine.
fn sim_main() -> ! {
    crate::init(crate::Policies {
        frame_alloc: policy(),
        heap: &HEAP,
        scheduler: &SCHEDULER,
    });
    crate::run_first_task(crate::task::TaskOptions::new(driver))
}

/// The first task: runs the tests' jobs one at a time, and after each lets
/// the tasks it spawned or woke run until none is runnable. Between jobs
/// it waits outside the simulation (the machine stands still).
fn driver() {
    *BOOTED.0.lock().unwrap() = true;
    BOOTED.1.notify_all();
    loop {
        let job = {
            let mut jobs = JOBS.0.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(job) = jobs.pop_front() {
                    break job;
                }
                jobs = JOBS.1.wait(jobs).unwrap_or_else(|e| e.into_inner());
            }
        };
        job();
        while SCHEDULER.has_runnable() {
            crate::task::yield_now();
        }
    }
}

/// Powers the machine on and boots it (once per test process).
fn boot() {
    let ram = Vec::leak(power_on());
    RAM.store(ram.as_mut_ptr().cast(), Ordering::Relaxed);
    devices::sync_apic_current(0);
    std::thread::Builder::new()
        .name("sim-cpu0-boot".into())
        .spawn(|| crate::boot::rust_entry(START_INFO as u32))
        .expect("sim: cannot start the boot CPU");
    let mut up = BOOTED.0.lock().unwrap();
    while !*up {
        up = BOOTED.1.wait(up).unwrap();
    }
}

/// Serialises tests that use the machine, booting it first if needed.
pub fn lock() -> MutexGuard<'static, ()> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    INIT.call_once(boot);
    guard
}

/// Runs `f` on the simulated machine, in the driver task, and returns its
/// result (a panic in `f` is passed on to the caller).
pub fn run<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let _g = lock();
    let (tx, rx) = mpsc::channel();
    JOBS.0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push_back(Box::new(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r);
        }));
    JOBS.1.notify_all();
    match rx.recv() {
        Ok(Ok(r)) => r,
        // Panic again here, so that the message lands in this test's output
        // (the machine's threads are not the test's).
        Ok(Err(panic)) => match panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
        {
            Some(msg) => panic!("{msg}"),
            None => std::panic::resume_unwind(panic),
        },
        Err(_) => panic!("sim: the machine died running the job"),
    }
}

/// Whether tests should take Miri's (small) sizes: under Miri, and in the
/// coverage run of `cargo xtask miri`, which measures what Miri runs.
pub fn miri_sized() -> bool {
    cfg!(miri) || std::env::var_os("TRELLIS_MIRI_SIZES").is_some()
}

/// What the kernel wrote to the serial console so far.
pub fn serial_output() -> String {
    String::from_utf8_lossy(
        &devices::PORTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .uart_out,
    )
    .into_owned()
}
