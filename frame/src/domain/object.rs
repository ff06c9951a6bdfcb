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
    /// Heap bytes the live domain of this name holds (0 until per-domain
    /// heaps account for it).
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
    /// The root object; `None` once the domain is dead.
    root: Option<Box<T>>,
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
    // MIRI: relied on by domain::object::tests::calls_reach_the_root_and_a_fault_kills_the_domain
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
    // MIRI: relied on by domain::object::tests::calls_reach_the_root_and_a_fault_kills_the_domain
    // SAFETY: `Domain::call` passes a pointer to its own
    // `CallState<T, A, R>`, alive and untouched by it until `run_on`
    // returns; its `root` points at the domain's root object, which the
    // call's lock keeps exclusive to this call.
    let state = unsafe { &mut *ctx.cast::<CallState<T, A, R>>() };
    if let Some(arg) = state.arg.take() {
        // MIRI: relied on by domain::object::tests::calls_reach_the_root_and_a_fault_kills_the_domain
        // SAFETY: as above: `root` is valid and borrowed by no one else.
        let root = unsafe { &mut *state.root };
        state.ret = Some((state.f)(root, arg));
    }
}

impl<T: Send + 'static> Domain<T> {
    /// Builds a domain named `name` (a static string that names the domain
    /// across restarts): its root object is `init(arg)`, run inside the
    /// domain. A fault in `init` is returned; the domain is then dead.
    pub fn new<A: Exchangeable>(
        name: &'static str,
        init: fn(A) -> T,
        arg: A,
    ) -> Result<Domain<T>, Fault> {
        let mut stack = DomainStack::new().map_err(|_| Fault::NoMemory)?;
        let (stats, alive) = register(name);
        stats.calls.fetch_add(1, Ordering::Relaxed);
        let owner = rref::new_owner();
        arg.transfer(owner);
        let caller = rref::enter(owner);
        let mut state = InitState {
            init,
            arg: Some(arg),
            root: None,
        };
        // MIRI: relied on by domain::object::tests::calls_reach_the_root_and_a_fault_kills_the_domain
        // SAFETY: `init_entry::<A, T>` reads its context as this
        // `InitState<A, T>`, which lives until `run_on` returns.
        let aborted = unsafe {
            run_on(
                &mut stack,
                init_entry::<A, T>,
                core::ptr::from_mut(&mut state).cast(),
            )
        };
        rref::enter(caller);
        let root = match (aborted, state.root.take()) {
            (false, Some(root)) => root,
            (_, partial) => {
                core::mem::forget(state.arg.take());
                core::mem::forget(partial);
                rref::reclaim(owner);
                stats.crashes.fetch_add(1, Ordering::Relaxed);
                alive.store(false, Ordering::Relaxed);
                return Err(Fault::Panic);
            }
        };
        Ok(Domain {
            name,
            stats,
            alive,
            slot: Mutex::new(Slot {
                stack,
                root: Some(root),
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
        let Some(root) = slot.root.as_mut() else {
            return Err(Fault::Dead);
        };
        self.stats.calls.fetch_add(1, Ordering::Relaxed);
        arg.transfer(self.owner);
        let caller = rref::enter(self.owner);
        let mut state = CallState {
            f,
            root: core::ptr::from_mut(&mut **root),
            arg: Some(arg),
            ret: None,
        };
        // MIRI: relied on by domain::object::tests::calls_reach_the_root_and_a_fault_kills_the_domain
        // SAFETY: `call_entry::<T, A, R>` reads its context as this
        // `CallState<T, A, R>`, which lives until `run_on` returns; its
        // root pointer is the domain's, exclusive while `slot` is locked.
        let aborted = unsafe {
            run_on(
                &mut slot.stack,
                call_entry::<T, A, R>,
                core::ptr::from_mut(&mut state).cast(),
            )
        };
        rref::enter(caller);
        if aborted {
            core::mem::forget(state.arg.take());
            // The root may be half-changed: it is never used again.
            core::mem::forget(slot.root.take());
            rref::reclaim(self.owner);
            self.stats.crashes.fetch_add(1, Ordering::Relaxed);
            self.alive.store(false, Ordering::Relaxed);
            return Err(Fault::Panic);
        }
        let ret = state.ret.take().ok_or(Fault::Panic)?;
        ret.transfer(caller);
        Ok(ret)
    }
}

impl<T: Send + 'static> Drop for Domain<T> {
    fn drop(&mut self) {
        self.alive.store(false, Ordering::Relaxed);
        // The root's own `RRef`s go with it; what the domain still owns
        // after that (an `RRef` it leaked) goes next.
        drop(self.slot.lock().root.take());
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
        });
    }
}
