//! A domain: a root object of its own, a stack of its own, and calls into
//! it that come back with [`Fault`] when it panics. After a fault the
//! domain is dead: its root object is never touched again (it may be
//! half-changed), and every later call returns [`Fault::Dead`]. A shadow
//! (kernel code) restarts a driver by building a new `Domain`.
//!
//! The root object is built *inside* the domain, by the `init` function
//! given to [`Domain::new`], from an [`Exchangeable`] argument, so it
//! can only hold what it built itself, exchangeable values and statics.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::Exchangeable;
use super::call::{DomainStack, Fault, run_on};
use super::exchange::Owner;
use super::heap::DomainHeap;
use super::rref;
use crate::sync::{Mutex, SpinLock, level};

/// Counters of one domain name, kept across restarts (`/proc/domains`).
#[derive(Debug, Default)]
pub struct DomainStats {
    /// Calls made into the domain (initialisation included).
    pub calls: AtomicU64,
    /// Calls that ended in a fault.
    pub crashes: AtomicU64,
    /// Domains built under this name after the first one.
    pub restarts: AtomicU64,
    /// Bytes of memory (whole pages: slabs and large blocks) the heap of
    /// the live domain of this name holds, as of the end of its latest
    /// call; 0 once it is dead.
    pub heap_bytes: AtomicU64,
}

/// One line of [`domains`].
#[derive(Clone, Debug)]
pub struct DomainInfo {
    pub name: &'static str,
    pub alive: bool,
    pub calls: u64,
    pub crashes: u64,
    pub restarts: u64,
    pub heap_bytes: u64,
}

struct Registered {
    name: &'static str,
    stats: Arc<DomainStats>,
    alive: Arc<AtomicBool>,
}

/// Every domain name seen since boot, with the liveness of its newest
/// domain.
static REGISTRY: SpinLock<Vec<Registered>, { level::HEAP - 1 }> = SpinLock::new(Vec::new());

/// The domains built since boot, one line per name.
pub fn domains() -> Vec<DomainInfo> {
    let reg = REGISTRY.lock_irq_disabled();
    reg.iter()
        .map(|r| DomainInfo {
            name: r.name,
            alive: r.alive.load(Ordering::Relaxed),
            calls: r.stats.calls.load(Ordering::Relaxed),
            crashes: r.stats.crashes.load(Ordering::Relaxed),
            restarts: r.stats.restarts.load(Ordering::Relaxed),
            heap_bytes: r.stats.heap_bytes.load(Ordering::Relaxed),
        })
        .collect()
}

/// The stats and liveness flag of a new domain named `name`.
fn register(name: &'static str) -> (Arc<DomainStats>, Arc<AtomicBool>) {
    let alive = Arc::new(AtomicBool::new(true));
    let mut reg = REGISTRY.lock_irq_disabled();
    if let Some(r) = reg.iter_mut().find(|r| r.name == name) {
        r.stats.restarts.fetch_add(1, Ordering::Relaxed);
        r.alive = alive.clone();
        return (r.stats.clone(), alive);
    }
    let stats = Arc::new(DomainStats::default());
    reg.push(Registered {
        name,
        stats: stats.clone(),
        alive: alive.clone(),
    });
    (stats, alive)
}

struct Slot<T> {
    stack: DomainStack,
    /// The root object (on the domain's heap); `None` once the domain is
    /// dead.
    root: Option<Box<T>>,
    /// The domain's heap; `None` once the domain is dead (freed
    /// wholesale).
    heap: Option<DomainHeap>,
    /// Stops the device the domain drives (`Domain::new_device`): run when
    /// the domain dies, before the DMA memory it made is freed.
    reset: Option<DeviceReset>,
}

/// Stops a device from reaching the memory a dead driver gave it.
pub type DeviceReset = Box<dyn Fn() + Send + Sync>;

impl<T> Slot<T> {
    /// Kills the domain: its root is forgotten (no destructor runs: it may
    /// be half-changed, and it lives on the heap freed next), what it
    /// registered with frame is revoked (timer callbacks, interrupt lines),
    /// then its heap is freed wholesale.
    fn kill(&mut self) {
        core::mem::forget(self.root.take());
        if let Some(heap) = self.heap.take() {
            revoke(heap, self.reset.as_deref());
        }
    }
}

/// Revokes what the domain of `heap` registered with frame (timer
/// callbacks, interrupt lines, DMA memory), then frees its heap. The DMA
/// memory is freed after `reset` has stopped the device; with no reset it
/// is leaked (a device may still be writing it).
fn revoke(heap: DomainHeap, reset: Option<&(dyn Fn() + Send + Sync)>) {
    let tag = heap.tag();
    crate::timer::revoke_domain(tag);
    crate::irq::revoke_domain(tag);
    let dma = crate::dma::revoke_domain(tag);
    drop(heap);
    match reset {
        Some(reset) => {
            reset();
            drop(dma);
        }
        None if dma.is_empty() => {}
        None => {
            crate::log_warn!(
                "domain: a dead domain's DMA memory is leaked (no device reset given)"
            );
            core::mem::forget(dma);
        }
    }
}

/// A domain whose root object is a `T`.
pub struct Domain<T: Send + 'static> {
    name: &'static str,
    stats: Arc<DomainStats>,
    alive: Arc<AtomicBool>,
    slot: Mutex<Slot<T>, { level::DOMAIN }>,
    /// The owner of the shared-heap objects this incarnation holds.
    owner: Owner,
}

struct InitState<A, T> {
    init: fn(A) -> T,
    arg: Option<A>,
    root: Option<Box<T>>,
}

extern "C-unwind" fn init_entry<A, T>(ctx: *mut u8) {
    // SAFETY: `Domain::new` passes a pointer to its own `InitState<A, T>`,
    // alive and untouched by it until `run_on` returns.
    let state = unsafe { &mut *ctx.cast::<InitState<A, T>>() };
    if let Some(arg) = state.arg.take() {
        state.root = Some(Box::new((state.init)(arg)));
    }
}

struct CallState<T, A, R> {
    f: fn(&mut T, A) -> R,
    root: *mut T,
    arg: Option<A>,
    ret: Option<R>,
}

extern "C-unwind" fn call_entry<T, A, R>(ctx: *mut u8) {
    // SAFETY: `Domain::call` passes a pointer to its own
    // `CallState<T, A, R>`, alive and untouched by it until `run_on`
    // returns; its `root` points at the domain's root object, which the
    // call's lock keeps exclusive to this call.
    let state = unsafe { &mut *ctx.cast::<CallState<T, A, R>>() };
    if let Some(arg) = state.arg.take() {
        // SAFETY: as above: `root` is valid and borrowed by no one else.
        let root = unsafe { &mut *state.root };
        state.ret = Some((state.f)(root, arg));
    }
}

impl<T: Send + 'static> Domain<T> {
    /// Builds a domain named `name` (a static string that names the domain
    /// across restarts): its root object is `init(arg)`, run inside the
    /// domain. A fault in `init` is returned; the domain is then dead. Its
    /// heap has no quota beyond free memory ([`Domain::new_with`]).
    pub fn new<A: Exchangeable>(
        name: &'static str,
        init: fn(A) -> T,
        arg: A,
    ) -> Result<Domain<T>, Fault> {
        Self::new_with(name, usize::MAX, init, arg)
    }

    /// As [`Domain::new`], with a heap of at most `quota_bytes` (counted in
    /// whole pages of slabs and large blocks, rounded up). An allocation
    /// past the quota fails inside the domain: the allocation error panics
    /// and faults the domain like any other panic. `Fault::NoMemory` if no
    /// stack or heap can be had ([`super::MAX_DOMAINS`] domains alive);
    /// `Fault::Nested` inside a domain (domains are built by the kernel).
    pub fn new_with<A: Exchangeable>(
        name: &'static str,
        quota_bytes: usize,
        init: fn(A) -> T,
        arg: A,
    ) -> Result<Domain<T>, Fault> {
        Self::build(name, quota_bytes, None, init, arg)
    }

    /// As [`Domain::new`], for a driver of a device: when the domain dies
    /// (a fault, a fault in `init`, or a drop), `reset` runs after its
    /// timers and interrupt lines are revoked and before the DMA memory it
    /// made is freed. It must leave the device unable to reach that memory
    /// (a virtio device reset does).
    pub fn new_device<A: Exchangeable>(
        name: &'static str,
        reset: DeviceReset,
        init: fn(A) -> T,
        arg: A,
    ) -> Result<Domain<T>, Fault> {
        Self::build(name, usize::MAX, Some(reset), init, arg)
    }

    fn build<A: Exchangeable>(
        name: &'static str,
        quota_bytes: usize,
        reset: Option<DeviceReset>,
        init: fn(A) -> T,
        arg: A,
    ) -> Result<Domain<T>, Fault> {
        // Built inside a domain, its registry entry, handle and reset
        // closure would live on the builder's heap, freed wholesale when
        // the builder dies, while the kernel may still reach them (as a
        // task would outlive its maker: `TaskOptions::build`).
        if super::heap::current_tag() != 0 {
            return Err(Fault::Nested);
        }
        let mut stack = DomainStack::new().map_err(|_| Fault::NoMemory)?;
        let heap = DomainHeap::new(quota_bytes).ok_or(Fault::NoMemory)?;
        let (stats, alive) = register(name);
        stats.calls.fetch_add(1, Ordering::Relaxed);
        let owner = rref::new_owner();
        arg.transfer(owner);
        let mut state = InitState {
            init,
            arg: Some(arg),
            root: None,
        };
        // SAFETY: `init_entry::<A, T>` reads its context as this
        // `InitState<A, T>`, which lives until `run_on` returns.
        let (aborted, _) = unsafe {
            run_on(
                &mut stack,
                Some(heap.tag()),
                Some(owner),
                init_entry::<A, T>,
                core::ptr::from_mut(&mut state).cast(),
            )
        };
        let root = match (aborted, state.root.take()) {
            (false, Some(root)) => root,
            (_, partial) => {
                core::mem::forget(state.arg.take());
                core::mem::forget(partial);
                revoke(heap, reset.as_deref());
                rref::reclaim(owner);
                stats.crashes.fetch_add(1, Ordering::Relaxed);
                stats.heap_bytes.store(0, Ordering::Relaxed);
                alive.store(false, Ordering::Relaxed);
                return Err(Fault::Panic);
            }
        };
        stats.heap_bytes.store(heap.bytes(), Ordering::Relaxed);
        Ok(Domain {
            name,
            stats,
            alive,
            slot: Mutex::new(Slot {
                stack,
                root: Some(root),
                heap: Some(heap),
                reset,
            }),
            owner,
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the domain has not faulted.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// The counters of this domain's name.
    pub fn stats(&self) -> &DomainStats {
        &self.stats
    }

    /// Calls `f(root, arg)` inside the domain; calls are serialised (the
    /// caller sleeps while another call runs). A panic in `f` returns
    /// `Err(Fault::Panic)` and kills the domain; a dead domain returns
    /// `Err(Fault::Dead)` without running anything. Must not be called from
    /// interrupt context.
    pub fn call<A: Exchangeable, R: Exchangeable>(
        &self,
        f: fn(&mut T, A) -> R,
        arg: A,
    ) -> Result<R, Fault> {
        let mut slot = self.slot.lock();
        let slot = &mut *slot;
        let (Some(root), Some(heap)) = (slot.root.as_mut(), slot.heap.as_ref()) else {
            return Err(Fault::Dead);
        };
        let tag = heap.tag();
        self.stats.calls.fetch_add(1, Ordering::Relaxed);
        arg.transfer(self.owner);
        let mut state = CallState {
            f,
            root: core::ptr::from_mut(&mut **root),
            arg: Some(arg),
            ret: None,
        };
        // SAFETY: `call_entry::<T, A, R>` reads its context as this
        // `CallState<T, A, R>`, which lives until `run_on` returns; its
        // root pointer is the domain's, exclusive while `slot` is locked.
        let (aborted, caller) = unsafe {
            run_on(
                &mut slot.stack,
                Some(tag),
                Some(self.owner),
                call_entry::<T, A, R>,
                core::ptr::from_mut(&mut state).cast(),
            )
        };
        if aborted {
            core::mem::forget(state.arg.take());
            // The root may be half-changed: it is never used again.
            slot.kill();
            rref::reclaim(self.owner);
            self.stats.crashes.fetch_add(1, Ordering::Relaxed);
            self.stats.heap_bytes.store(0, Ordering::Relaxed);
            self.alive.store(false, Ordering::Relaxed);
            return Err(Fault::Panic);
        }
        if let Some(heap) = slot.heap.as_ref() {
            self.stats.heap_bytes.store(heap.bytes(), Ordering::Relaxed);
        }
        let ret = state.ret.take().ok_or(Fault::Panic)?;
        ret.transfer(caller);
        Ok(ret)
    }

    /// The domain's heap usage now (zero once it is dead).
    pub fn heap_usage(&self) -> super::HeapUsage {
        let slot = self.slot.lock();
        slot.heap
            .as_ref()
            .map(DomainHeap::usage)
            .unwrap_or_default()
    }
}

impl<T: Send + 'static> Drop for Domain<T> {
    /// A dropped domain is killed like a faulted one: no destructor of its
    /// objects runs, its heap is freed wholesale.
    fn drop(&mut self) {
        let was_alive = self.alive.swap(false, Ordering::Relaxed);
        self.slot.lock().kill();
        if was_alive {
            self.stats.heap_bytes.store(0, Ordering::Relaxed);
        }
        rref::reclaim(self.owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim;

    struct Counter {
        n: u64,
    }

    fn start(n: u64) -> Counter {
        Counter { n }
    }

    fn add(c: &mut Counter, k: u64) -> u64 {
        c.n += k;
        c.n
    }

    fn crash(c: &mut Counter, k: u64) -> u64 {
        c.n += k;
        panic!("injected")
    }

    fn bad_start(n: u64) -> Counter {
        assert!(n < 10, "refused");
        Counter { n }
    }

    #[test]
    fn calls_reach_the_root_and_a_fault_kills_the_domain() {
        sim::run(|| {
            let d = Domain::new("test-counter", start, 5u64).unwrap();
            assert_eq!(d.call(add, 2), Ok(7));
            assert_eq!(d.call(add, 3), Ok(10));
            assert_eq!(d.call(crash, 1), Err(Fault::Panic));
            assert!(!d.is_alive());
            assert_eq!(
                d.call(add, 1),
                Err(Fault::Dead),
                "nothing runs in a dead domain"
            );
            let again = Domain::new("test-counter", start, 1u64).unwrap();
            assert_eq!(again.call(add, 1), Ok(2));
            let info = domains()
                .into_iter()
                .find(|i| i.name == "test-counter")
                .unwrap();
            assert_eq!((info.calls, info.crashes, info.restarts), (6, 1, 1));
            assert!(info.alive);
            assert!(matches!(
                Domain::new("test-bad-start", bad_start, 11u64),
                Err(Fault::Panic)
            ));
            // A domain cannot build another: the inner build is refused,
            // and the outer one goes on.
            let outer = Domain::new("test-outer", start, 0u64).unwrap();
            assert_eq!(outer.call(build_inner, 3), Ok(true));
            assert_eq!(outer.call(add, 1), Ok(1));
            assert!(!domains().iter().any(|i| i.name == "test-inner"));
        });
    }

    fn build_inner(_: &mut Counter, n: u64) -> bool {
        matches!(
            Domain::new("test-inner", start, n),
            Err(Fault::Nested)
        )
    }
}

#[cfg(test)]
mod heap_tests {
    use alloc::vec::Vec;
    use core::alloc::{GlobalAlloc, Layout};

    use super::*;
    use crate::domain::HeapUsage;
    use crate::mm::frame_alloc::free_frames;
    use crate::mm::heap::global::FrameHeap;
    use crate::mm::{PAGE_SIZE, ptr_to_vaddr, vaddr_to_paddr};
    use crate::sim;

    const SMALL: Layout = match Layout::from_size_align(64, 8) {
        Ok(l) => l,
        Err(_) => panic!(),
    };
    const LARGE: Layout = match Layout::from_size_align(3 * PAGE_SIZE, 8) {
        Ok(l) => l,
        Err(_) => panic!(),
    };

    /// The root: addresses of what the domain allocated through the kernel
    /// allocator (the host test binary keeps the host's allocator for its
    /// own `Vec`s, so only these go through `FrameHeap`).
    struct Holder {
        small: Vec<usize>,
        large: Vec<usize>,
    }

    fn start(_: u64) -> Holder {
        Holder {
            small: Vec::new(),
            large: Vec::new(),
        }
    }

    fn alloc_or_panic(layout: Layout) -> usize {
        // SAFETY: a valid, non-zero-sized layout.
        let p = unsafe { FrameHeap.alloc(layout) };
        // As `handle_alloc_error` does in the kernel: a failed allocation
        // panics.
        assert!(!p.is_null(), "memory allocation failed");
        ptr_to_vaddr(p)
    }

    fn free(va: usize, layout: Layout) {
        // SAFETY: `va` came from `FrameHeap.alloc(layout)` and is
        // freed once.
        unsafe { FrameHeap.dealloc(crate::mm::linear_ptr(va), layout) };
    }

    fn grab(h: &mut Holder, n: u64) -> u64 {
        for _ in 0..n {
            h.small.push(alloc_or_panic(SMALL));
        }
        h.large.push(alloc_or_panic(LARGE));
        n
    }

    /// Frees the first small slot the domain holds, inside the domain.
    fn give_back(h: &mut Holder, _: u64) -> u64 {
        let va = h.small.remove(0);
        free(va, SMALL);
        h.small.len() as u64
    }

    fn take_small(h: &mut Holder, _: u64) -> usize {
        h.small.pop().unwrap_or(0)
    }

    fn crash(_: &mut Holder, _: u64) -> u64 {
        panic!("injected")
    }

    fn owner(va: usize) -> u8 {
        crate::domain::heap::owner_of(vaddr_to_paddr(va).unwrap())
    }

    #[test]
    fn domain_allocations_are_charged_to_its_heap_and_freed_wholesale() {
        sim::run(|| {
            // Outside any domain, the kernel heap serves (it may keep the
            // slab it took: measure after).
            let k = alloc_or_panic(SMALL);
            assert_eq!(owner(k), 0, "a kernel allocation is not a domain's");
            free(k, SMALL);
            let before = free_frames();
            let d = Domain::new("test-heap", start, 0u64).unwrap();
            let with_d = free_frames();
            let other = Domain::new("test-heap-other", start, 0u64).unwrap();
            let other_stack = with_d - free_frames();
            let built = free_frames();
            assert_eq!(d.heap_usage(), HeapUsage::default());
            assert_eq!(d.call(grab, 3), Ok(3));
            assert_eq!(
                d.heap_usage(),
                HeapUsage {
                    pages: 1 + 3,
                    live_bytes: 3 * 64 + 3 * PAGE_SIZE,
                }
            );
            assert_eq!(free_frames(), built - 4);
            assert_eq!(
                d.stats().heap_bytes.load(Ordering::Relaxed),
                4 * PAGE_SIZE as u64
            );

            // A slot taken out of the domain and freed by the kernel goes
            // back to the domain's heap (routed by its page's owner), and
            // so does one freed inside the other domain.
            assert_eq!(d.call(give_back, 0), Ok(2));
            let out = d.call(take_small, 0).unwrap();
            let tag = owner(out);
            assert_ne!(tag, 0, "a domain's slot carries its heap's tag");
            free(out, SMALL);
            assert_eq!(d.heap_usage().live_bytes, 64 + 3 * PAGE_SIZE);
            assert_eq!(other.call(grab, 1), Ok(1));
            assert_ne!(other.call(take_small, 0), Ok(0));
            assert_eq!(other.heap_usage().pages, 1 + 3);

            // A fault frees the heap wholesale: the live slot and the large
            // block go back with their pages.
            assert_eq!(d.call(crash, 0), Err(Fault::Panic));
            assert_eq!(d.heap_usage(), HeapUsage::default());
            assert_eq!(d.stats().heap_bytes.load(Ordering::Relaxed), 0);
            assert_eq!(free_frames(), built - 4, "only the other domain's pages");
            drop(other);
            assert_eq!(
                free_frames(),
                built + other_stack,
                "dropping a domain frees its heap and stack"
            );
            drop(d);
            assert_eq!(free_frames(), before, "stacks and heaps all back");
        });
    }

    fn big(_: &mut Holder, pages: u64) -> u64 {
        let layout = Layout::from_size_align(pages as usize * PAGE_SIZE, 8).unwrap();
        alloc_or_panic(layout);
        pages
    }

    #[test]
    fn exceeding_the_quota_faults_the_domain() {
        sim::run(|| {
            let before = free_frames();
            let d = Domain::new_with("test-quota", 3 * PAGE_SIZE, start, 0u64).unwrap();
            assert_eq!(d.call(big, 2), Ok(2), "within the quota");
            assert_eq!(d.heap_usage().pages, 2);
            assert_eq!(d.call(big, 2), Err(Fault::Panic), "past the quota");
            assert!(!d.is_alive());
            assert_eq!(d.call(big, 1), Err(Fault::Dead));
            drop(d);
            assert_eq!(free_frames(), before);
            // More domains in a row than the table has entries: dead ones'
            // entries are reused (too slow for Miri's sizes).
            let n = if sim::miri_sized() {
                2
            } else {
                crate::domain::MAX_DOMAINS + 2
            };
            for _ in 0..n {
                let d = Domain::new("test-quota", start, 0u64).unwrap();
                assert_eq!(d.call(grab, 1), Ok(1));
                assert_eq!(d.call(crash, 0), Err(Fault::Panic));
            }
            assert_eq!(free_frames(), before);
        });
    }
}
