//! In-kernel checks of the domain continuation (`frame::domain`): a call
//! that panics comes back as a fault, the kernel goes on, and nothing is
//! lost across many faults. Run with `ktest=domain_fault`,
//! `ktest=domain_fault_locked` and `ktest=domain_proxy` (a generated proxy
//! and `RRef`s across many crash-and-restart cycles).

use alloc::string::String;
use alloc::vec::Vec;

use frame::domain::{Domain, DomainStack, Fault, Handle, RRef, call_isolated, faults};
use frame::sync::SpinLock;

fn double(x: u64) -> u64 {
    x * 2
}

/// Indexes past the end of a vector it builds: a failed bounds check.
fn out_of_bounds(v: [u8; 2]) -> u8 {
    let v: Vec<u8> = v.to_vec();
    let i = v.len() + usize::from(v[0]);
    v[i]
}

/// Panics without allocating anything.
fn bounds_fault(i: usize) -> usize {
    let table = [1usize, 2, 3];
    table[core::hint::black_box(i)]
}

/// Makes an inner isolated call that faults, and reports what it saw.
fn nested(_: ()) -> (bool, u64) {
    let Ok(mut inner) = DomainStack::new() else {
        return (false, 0);
    };
    let r = call_isolated(&mut inner, bounds_fault, 7);
    (r == Err(Fault::Panic), double(21))
}

/// Builds a string inside the call (its own heap) and returns plain data.
fn echo(s: [u8; 5]) -> [u8; 10] {
    let mut v = String::from_utf8_lossy(&s).into_owned();
    v.push_str(" back");
    let mut out = [0; 10];
    out.copy_from_slice(&v.as_bytes()[..10]);
    out
}

/// A lock shared with the rest of the kernel.
static SHARED: SpinLock<u64> = SpinLock::new(0);

fn panic_holding_lock(_: ()) {
    let mut g = SHARED.lock();
    *g += 1;
    panic!("ktest: domain panics holding a spin lock");
}

/// `ktest=domain_fault`: Ok(()) if every check held.
pub fn domain_fault() -> Result<(), String> {
    let mut stack = DomainStack::new().map_err(|e| alloc::format!("no domain stack: {e:?}"))?;
    let before = faults();
    if call_isolated(&mut stack, double, 21) != Ok(42) {
        return Err("a plain call did not return its value".into());
    }
    if call_isolated(&mut stack, echo, *b"there") != Ok(*b"there back") {
        return Err("an owned value did not cross and come back".into());
    }
    if call_isolated(&mut stack, out_of_bounds, [3u8, 1]) != Err(Fault::Panic) {
        return Err("a failed bounds check did not come back as a fault".into());
    }
    // The same stack serves again after a fault.
    if call_isolated(&mut stack, double, 5) != Ok(10) {
        return Err("the stack did not serve a call after a fault".into());
    }
    match call_isolated(&mut stack, nested, ()) {
        Ok((true, 42)) => {}
        other => return Err(alloc::format!("nested fault: {other:?}")),
    }
    if faults() != before + 2 {
        return Err(alloc::format!("fault count {} (expected {})", faults(), before + 2));
    }
    // Many faults lose nothing: no frame, no stack slot, no lock state.
    let free = frame::mm::frame_alloc::free_frames();
    for i in 0..1000 {
        if call_isolated(&mut stack, bounds_fault, 3 + i) != Err(Fault::Panic) {
            return Err(alloc::format!("fault {i} was not reported"));
        }
    }
    let after = frame::mm::frame_alloc::free_frames();
    if after + 1 < free {
        return Err(alloc::format!("1000 faults lost {} frames", free - after));
    }
    // Locks still work, and sleeping is still allowed (no spin depth left).
    *SHARED.lock() += 1;
    frame::task::yield_now();
    frame::println!("trellis: ktest domain_fault: {} faults recovered", faults() - before);
    Ok(())
}

/// `ktest=domain_fault_locked`: a fault with a kernel lock held is not the
/// domain's alone; the kernel must panic instead of going on.
pub fn domain_fault_locked() {
    let Ok(mut stack) = DomainStack::new() else {
        return;
    };
    let _ = call_isolated(&mut stack, panic_holding_lock, ());
    frame::println!("trellis: ktest domain_fault_locked: FAILED: the call came back");
}

/// The root of the driver-like domain of `ktest=domain_heap`: memory of
/// every size class and a large block, all on the domain's heap.
struct HeapDriver {
    small: Vec<Vec<u8>>,
    large: Vec<u8>,
}

/// Timer callbacks of dead domains that ran anyway (must stay 0).
static REVOKED_TIMER_RAN: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
/// The generation of the domain being started, and the newest generation
/// known dead: a callback of generation `g` that runs once `g <= DEAD`
/// belongs to a dead domain.
static GENERATION: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
static DEAD: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
/// The latest deadline armed.
static LAST_DUE: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

fn heap_driver_start(n: u64) -> HeapDriver {
    use core::sync::atomic::Ordering::Relaxed;
    let small = (0..n as usize).map(|i| alloc::vec![i as u8; 16 << (i % 8)]).collect();
    // A timer due in a millisecond (on the domain's heap, with a boxed
    // value of it): it may run while the domain lives, never after.
    let due = frame::timer::monotonic_ns() + 1_000_000;
    LAST_DUE.store(due, Relaxed);
    let generation = alloc::boxed::Box::new(GENERATION.load(Relaxed));
    frame::timer::call_at(
        due,
        alloc::boxed::Box::new(move || {
            if *generation <= DEAD.load(Relaxed) {
                REVOKED_TIMER_RAN.fetch_add(1, Relaxed);
            }
        }),
    );
    HeapDriver {
        small,
        large: alloc::vec![0xa5; 3 * frame::mm::PAGE_SIZE],
    }
}

fn heap_driver_work(d: &mut HeapDriver, n: u64) -> u64 {
    d.small.push(alloc::vec![1; n as usize]);
    d.large.extend_from_slice(&[1, 2, 3]);
    d.small.iter().map(|v| v.len() as u64).sum()
}

fn heap_driver_crash(d: &mut HeapDriver, i: u64) -> u64 {
    d.small.push(alloc::vec![2; 100]);
    let k = d.small.len() + i as usize;
    d.small[k].len() as u64
}

fn heap_driver_hog(d: &mut HeapDriver, bytes: u64) -> u64 {
    d.large = alloc::vec![3; bytes as usize];
    d.large.len() as u64
}

fn heap_driver_spawn(_: &mut HeapDriver, _: u64) -> bool {
    frame::task::TaskOptions::new(|| {}).spawn().is_err()
}

/// A kernel wait queue a domain's task sleeps on.
static KERNEL_QUEUE: frame::sync::WaitQueue = frame::sync::WaitQueue::new();

/// Faults while its task is queued on `KERNEL_QUEUE` (at the re-check
/// after queueing).
fn heap_driver_sleep_and_crash(_: &mut HeapDriver, _: u64) -> u64 {
    let mut checks = 0;
    KERNEL_QUEUE.wait_until(|| {
        checks += 1;
        let v = alloc::vec![checks; 10];
        if checks == 2 {
            panic!("ktest: fault while queued on a kernel wait queue ({})", v[0]);
        }
        None::<u64>
    })
}

/// `ktest=domain_heap`: per-domain heaps. Allocations inside a domain are
/// charged to it and freed wholesale by a fault, with its timer revoked;
/// 1,000 crash-and-restart cycles leave the free-frame count within a page;
/// an allocation past the quota faults the domain; a fault while queued on
/// a kernel wait queue leaves the queue usable; a domain cannot spawn.
pub fn domain_heap() -> Result<(), String> {
    use core::sync::atomic::Ordering;
    use frame::domain::Domain;
    use frame::mm::frame_alloc::free_frames;

    // One warm-up cycle: the kernel's own structures (the registry line of
    // the name, the timer queue's nodes) are made once.
    let cycle = |i: u64| -> Result<(), String> {
        GENERATION.store(i + 1, Ordering::Relaxed);
        let d = Domain::new("ktest-heap", heap_driver_start, 12)
            .map_err(|f| alloc::format!("init {i}: {f:?}"))?;
        let total = d
            .call(heap_driver_work, 5000)
            .map_err(|f| alloc::format!("work {i}: {f:?}"))?;
        if total < 5000 {
            return Err(alloc::format!("cycle {i}: work returned {total}"));
        }
        let usage = d.heap_usage();
        if usage.pages < 4 || d.stats().heap_bytes.load(Ordering::Relaxed) == 0 {
            return Err(alloc::format!("cycle {i}: heap not charged: {usage:?}"));
        }
        if d.call(heap_driver_crash, i) != Err(Fault::Panic) {
            return Err(alloc::format!("cycle {i}: the crash did not fault"));
        }
        DEAD.store(i + 1, Ordering::Relaxed);
        if d.heap_usage().pages != 0 || d.stats().heap_bytes.load(Ordering::Relaxed) != 0 {
            return Err(alloc::format!("cycle {i}: heap not freed: {:?}", d.heap_usage()));
        }
        Ok(())
    };
    cycle(0)?;
    let before = free_frames();
    for i in 1..=1000 {
        cycle(i)?;
    }
    let after = free_frames();
    if after + 1 < before {
        return Err(alloc::format!(
            "1000 crash-and-restart cycles lost {} frames",
            before - after
        ));
    }
    // The timers were due a millisecond after each start: once the last
    // deadline has passed (and a few ticks more), none of a dead domain's
    // may have run.
    while frame::timer::monotonic_ns() <= LAST_DUE.load(Ordering::Relaxed) {
        frame::task::yield_now();
    }
    crate::ktest::wait_ticks(3);
    if REVOKED_TIMER_RAN.load(Ordering::Relaxed) != 0 {
        return Err("a dead domain's timer callback ran".into());
    }

    // The quota: 64 KiB; a 1 MiB vector fails inside the domain, the
    // allocation error panics, and the domain faults.
    let d = Domain::new_with("ktest-quota", 64 * 1024, heap_driver_start, 2)
        .map_err(|f| alloc::format!("quota init: {f:?}"))?;
    if d.call(heap_driver_hog, 16 * 1024) != Ok(16 * 1024) {
        return Err("an allocation within the quota failed".into());
    }
    if d.call(heap_driver_hog, 1 << 20) != Err(Fault::Panic) {
        return Err("an allocation past the quota did not fault the domain".into());
    }
    drop(d);

    // A fault with the task queued on a kernel wait queue.
    let d = Domain::new("ktest-sleeper", heap_driver_start, 1)
        .map_err(|f| alloc::format!("sleeper init: {f:?}"))?;
    if d.call(heap_driver_sleep_and_crash, 0) != Err(Fault::Panic) {
        return Err("the queued sleeper's fault did not come back".into());
    }
    KERNEL_QUEUE.wake_all();
    frame::task::yield_now();
    drop(d);

    let d = Domain::new("ktest-spawn", heap_driver_start, 1)
        .map_err(|f| alloc::format!("spawn init: {f:?}"))?;
    if d.call(heap_driver_spawn, 0) != Ok(true) {
        return Err("a domain could spawn a task".into());
    }
    drop(d);
    let end = free_frames();
    if end + 1 < before {
        return Err(alloc::format!("the later checks lost {} frames", before - end));
    }
    frame::println!(
        "trellis: ktest domain_heap: 1000 crash-and-restart cycles, free frames {before} -> {after}"
    );
    Ok(())
}

frame::exchangeable_struct! {
    /// Errors of the test interface: the fault that ended the call, or a
    /// refusal by the domain.
    #[derive(Debug, PartialEq, Eq)]
    pub struct SumError {
        pub fault: Option<Fault>,
        pub refused: bool,
    }
}

impl From<Fault> for SumError {
    fn from(f: Fault) -> Self {
        SumError {
            fault: Some(f),
            refused: false,
        }
    }
}

const REFUSED: SumError = SumError {
    fault: None,
    refused: true,
};

frame::exchangeable_struct! {
    /// What crosses back from a summing call.
    #[derive(Debug, PartialEq, Eq)]
    pub struct SumReport {
        pub sum: u64,
        pub calls: u64,
    }
}

#[domain_proxy::interface]
pub trait Summer {
    fn sum(&mut self, scale: u64, block: &RRef<[u8; 256]>) -> Result<SumReport, SumError>;
    fn fill(&mut self, v: u8, block: &mut RRef<[u8; 256]>) -> Result<(), SumError>;
    fn keep(&mut self, block: RRef<[u8; 256]>) -> Result<u64, SumError>;
    fn crash(&mut self, at: u64) -> Result<(), SumError>;
}

struct Adder {
    calls: u64,
    kept: Vec<RRef<[u8; 256]>>,
}

impl Summer for Adder {
    fn sum(&mut self, scale: u64, block: &RRef<[u8; 256]>) -> Result<SumReport, SumError> {
        self.calls += 1;
        let sum = block.iter().map(|&b| u64::from(b)).sum::<u64>() * scale;
        Ok(SumReport {
            sum,
            calls: self.calls,
        })
    }
    fn fill(&mut self, v: u8, block: &mut RRef<[u8; 256]>) -> Result<(), SumError> {
        self.calls += 1;
        block.fill(v);
        Ok(())
    }
    fn keep(&mut self, block: RRef<[u8; 256]>) -> Result<u64, SumError> {
        self.kept.push(block);
        // And one of its own, which dies with it.
        self.kept.push(RRef::new([1; 256]).map_err(|_| REFUSED)?);
        Ok(self.kept.len() as u64)
    }
    fn crash(&mut self, at: u64) -> Result<(), SumError> {
        let table = [0u64; 4];
        self.calls += table[core::hint::black_box(at as usize)];
        Ok(())
    }
}

fn start_adder(_: ()) -> Adder {
    Adder {
        calls: 0,
        kept: Vec::new(),
    }
}

/// `ktest=domain_proxy`: Ok(()) if every check held.
pub fn domain_proxy() -> Result<(), String> {
    let new = || {
        Domain::new("ktest-summer", start_adder, ())
            .map(Handle::new)
            .map_err(|f| alloc::format!("no domain: {f:?}"))
    };
    let mut p: SummerProxy<Adder> = new()?;
    let mut block = RRef::new([2u8; 256]).map_err(|e| alloc::format!("no RRef: {e:?}"))?;
    match p.sum(3, &block) {
        Ok(SumReport {
            sum: 1536,
            calls: 1,
        }) => {}
        other => return Err(alloc::format!("sum through the proxy: {other:?}")),
    }
    p.fill(5, &mut block)
        .map_err(|e| alloc::format!("fill: {e:?}"))?;
    if *block != [5u8; 256] {
        return Err("an exclusive lend did not write in place".into());
    }
    // Many crash-and-restart cycles, each with an object moved in and one
    // made inside: the shared heap and free memory end where they began.
    let rrefs = frame::domain::live_rrefs();
    let free = frame::mm::frame_alloc::free_frames();
    for i in 0..1000u64 {
        let moved = RRef::new([i as u8; 256]).map_err(|e| alloc::format!("no RRef: {e:?}"))?;
        if p.keep(moved) != Ok(2) {
            return Err(alloc::format!("cycle {i}: keep failed"));
        }
        if p.crash(4 + i) != Err(SumError::from(Fault::Panic)) {
            return Err(alloc::format!("cycle {i}: the crash was not reported"));
        }
        if p.sum(1, &block) != Err(SumError::from(Fault::Dead)) {
            return Err(alloc::format!("cycle {i}: a dead domain answered"));
        }
        if *block != [5u8; 256] {
            return Err(alloc::format!("cycle {i}: a lent object changed"));
        }
        p = new()?;
    }
    drop(p);
    if frame::domain::live_rrefs() != rrefs {
        return Err(alloc::format!(
            "1000 crashes left {} shared-heap objects (expected {rrefs})",
            frame::domain::live_rrefs()
        ));
    }
    let after = frame::mm::frame_alloc::free_frames();
    frame::println!("trellis: ktest domain_proxy: free frames {free} before, {after} after");
    Ok(())
}
