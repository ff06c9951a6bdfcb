//! Local interrupt control, whether the CPU is running an interrupt
//! handler (in which nothing may sleep, yield or exit), and device
//! interrupt lines ([`IrqLine`]).

use core::sync::atomic::{AtomicU32, Ordering};

#[cfg(any(target_os = "none", test))]
use crate::arch::cpu;

/// Interrupts stay disabled on this CPU while the guard lives; dropping it
/// restores the previous state.
pub(crate) struct DisabledLocalIrqGuard {
    was_enabled: bool,
    _not_send: core::marker::PhantomData<*const ()>,
}

pub(crate) fn disable_local() -> DisabledLocalIrqGuard {
    #[cfg(any(target_os = "none", test))]
    let was_enabled = {
        let e = cpu::interrupts_enabled();
        cpu::disable_interrupts();
        e
    };
    #[cfg(not(any(target_os = "none", test)))]
    let was_enabled = false;
    DisabledLocalIrqGuard {
        was_enabled,
        _not_send: core::marker::PhantomData,
    }
}

impl Drop for DisabledLocalIrqGuard {
    fn drop(&mut self) {
        #[cfg(any(target_os = "none", test))]
        if self.was_enabled {
            cpu::enable_interrupts();
        }
    }
}

/// Enables interrupts on this CPU (kernel code runs with them on).
pub(crate) fn enable_local() {
    #[cfg(any(target_os = "none", test))]
    cpu::enable_interrupts();
}

/// Interrupt handlers running on this CPU (single CPU for now).
static IRQ_DEPTH: AtomicU32 = AtomicU32::new(0);

/// Runs `f` as an interrupt handler: [`in_interrupt`] is true meanwhile.
pub(crate) fn run_handler(f: impl FnOnce()) {
    IRQ_DEPTH.fetch_add(1, Ordering::Relaxed);
    f();
    IRQ_DEPTH.fetch_sub(1, Ordering::Relaxed);
}

/// How many interrupt handlers are executing (nested) on this CPU.
pub(crate) fn depth() -> u32 {
    IRQ_DEPTH.load(Ordering::Relaxed)
}

/// Whether interrupts are enabled on this CPU.
pub(crate) fn local_enabled() -> bool {
    #[cfg(any(target_os = "none", test))]
    return cpu::interrupts_enabled();
    #[cfg(not(any(target_os = "none", test)))]
    false
}

/// Whether an interrupt handler (or a timer callback it runs) is executing.
#[inline]
pub(crate) fn in_interrupt() -> bool {
    IRQ_DEPTH.load(Ordering::Relaxed) != 0
}

/// Device interrupts: vectors frame reserves for devices, the callbacks
/// registered on them, and [`IrqLine`], a client's handle on one.
#[cfg(any(target_os = "none", test))]
mod device {
    use alloc::sync::Arc;
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicU64, Ordering};

    use crate::Error;
    use crate::sync::SpinLock;

    /// IDT vectors `[DEVICE_VECTOR_BASE, DEVICE_VECTOR_END)` are for
    /// devices (MSI-X messages and I/O APIC pins of PCI INTx); below are the
    /// exceptions, the timer and the console, above the masked 8259s and the
    /// spurious vector.
    pub(crate) const DEVICE_VECTOR_BASE: u8 = 0x30;
    pub(crate) const DEVICE_VECTOR_END: u8 = 0xe0;
    const NVEC: usize = (DEVICE_VECTOR_END - DEVICE_VECTOR_BASE) as usize;
    /// Callbacks that may share one vector (legacy INTx pins are shared).
    pub(crate) const MAX_SHARED: usize = 16;

    type Callback = Arc<dyn Fn() + Send + Sync>;

    /// What an interrupt source needs from its owner: masking at the
    /// source (MSI-X vector control, the INTx disable bit), and whether it
    /// is asserting (for shared lines).
    pub(crate) trait IrqSource: Send + Sync {
        fn mask(&self);
        fn unmask(&self);
        /// Whether the source may have raised the interrupt (shared lines
        /// call only the callbacks of asserting sources).
        fn pending(&self) -> bool {
            true
        }
    }

    struct Handler {
        id: u64,
        source: Arc<dyn IrqSource>,
        callback: Option<Callback>,
        /// The driver domain (heap tag) that made the line or set its
        /// callback, 0 for none: revoked when it dies ([`revoke_domain`]).
        owner: u8,
        /// Whether the vector is this line's alone.
        owns_vector: bool,
    }

    struct Table {
        /// Vectors handed out (`true`) among the device vectors.
        used: [bool; NVEC],
        handlers: [Vec<Handler>; NVEC],
    }

    /// A leaf lock (no lock is taken and nothing allocated or dropped
    /// under it), always with interrupts off.
    static TABLE: SpinLock<Table> = SpinLock::new(Table {
        used: [false; NVEC],
        handlers: [const { Vec::new() }; NVEC],
    });
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);

    /// Claims a free device vector.
    pub(crate) fn alloc_vector() -> Result<u8, Error> {
        let mut t = TABLE.lock_irq_disabled();
        let i = t.used.iter().position(|u| !u).ok_or(Error::NoMemory)?;
        t.used[i] = true;
        Ok(DEVICE_VECTOR_BASE + i as u8)
    }

    /// Gives back a vector from [`alloc_vector`] with no handler left on it.
    pub(crate) fn free_vector(vector: u8) {
        let i = usize::from(vector - DEVICE_VECTOR_BASE);
        let mut t = TABLE.lock_irq_disabled();
        assert!(t.handlers[i].is_empty(), "freed an IRQ vector in use");
        t.used[i] = false;
    }

    /// A client's handle on one interrupt source delivered at one vector.
    ///
    /// [`IrqLine::on_active`] installs a callback that runs in interrupt
    /// context (it must not sleep; it may wake tasks). Dropping the line
    /// masks the source, removes the callback and, for a vector of its own,
    /// frees the vector.
    pub struct IrqLine {
        vector: u8,
        id: u64,
        source: Arc<dyn IrqSource>,
        /// Whether the vector is this line's alone (MSI-X) or shared (INTx).
        owns_vector: bool,
    }

    impl core::fmt::Debug for IrqLine {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("IrqLine")
                .field("vector", &self.vector)
                .field("owns_vector", &self.owns_vector)
                .finish()
        }
    }

    impl IrqLine {
        /// Registers `source` at `vector` (masked until a callback is set).
        pub(crate) fn new(
            vector: u8,
            source: Arc<dyn IrqSource>,
            owns_vector: bool,
        ) -> Result<IrqLine, Error> {
            assert!((DEVICE_VECTOR_BASE..DEVICE_VECTOR_END).contains(&vector));
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            let i = usize::from(vector - DEVICE_VECTOR_BASE);
            // The table lock is a leaf: a vector's list gets room for
            // MAX_SHARED handlers once, allocated outside the lock, so
            // that pushing under it never allocates.
            if TABLE.lock_irq_disabled().handlers[i].capacity() < MAX_SHARED {
                let mut room = Vec::new();
                // The table's storage is the kernel's, even for a line
                // made inside a driver domain.
                crate::domain::heap::with_kernel_heap(|| room.try_reserve_exact(MAX_SHARED))
                    .map_err(|_| Error::NoMemory)?;
                let mut t = TABLE.lock_irq_disabled();
                if t.handlers[i].capacity() < MAX_SHARED {
                    room.append(&mut t.handlers[i]);
                    core::mem::swap(&mut room, &mut t.handlers[i]);
                }
                drop(t);
                drop(room); // the old, empty list, outside the lock
            }
            let mut t = TABLE.lock_irq_disabled();
            if t.handlers[i].len() >= MAX_SHARED {
                return Err(Error::NoMemory);
            }
            t.handlers[i].push(Handler {
                id,
                source: source.clone(),
                callback: None,
                owner: crate::domain::heap::current_tag(),
                owns_vector,
            });
            drop(t);
            source.mask();
            Ok(IrqLine {
                vector,
                id,
                source,
                owns_vector,
            })
        }

        /// The CPU vector this line is delivered at.
        pub fn vector(&self) -> u8 {
            self.vector
        }

        /// Installs (or replaces) the callback and unmasks the source. It
        /// runs in interrupt context: no sleeping, yielding or exiting
        /// (those panic there); waking a wait queue is fine.
        pub fn on_active(&self, callback: impl Fn() + Send + Sync + 'static) {
            let cb: Callback = Arc::new(callback);
            let owner = crate::domain::heap::current_tag();
            let old = {
                let mut t = TABLE.lock_irq_disabled();
                let i = usize::from(self.vector - DEVICE_VECTOR_BASE);
                let h = t.handlers[i]
                    .iter_mut()
                    .find(|h| h.id == self.id)
                    .expect("IrqLine without its handler");
                if owner != 0 {
                    h.owner = owner;
                }
                h.callback.replace(cb)
            };
            drop(old);
            self.source.unmask();
        }

        /// Stops the source from interrupting (at the source).
        pub fn mask(&self) {
            self.source.mask();
        }

        pub fn unmask(&self) {
            self.source.unmask();
        }
    }

    impl Drop for IrqLine {
        fn drop(&mut self) {
            self.source.mask();
            let removed = {
                let mut t = TABLE.lock_irq_disabled();
                let i = usize::from(self.vector - DEVICE_VECTOR_BASE);
                let pos = t.handlers[i].iter().position(|h| h.id == self.id);
                pos.map(|p| t.handlers[i].swap_remove(p))
            };
            // The callback (and what it captured) is dropped outside the lock.
            drop(removed);
            if self.owns_vector {
                free_vector(self.vector);
            }
        }
    }

    /// Runs the callbacks of a device vector (interrupt context), then
    /// acknowledges the interrupt. Callbacks run outside the table lock.
    pub(crate) fn dispatch(vector: u8) {
        if !(DEVICE_VECTOR_BASE..DEVICE_VECTOR_END).contains(&vector) {
            return;
        }
        let i = usize::from(vector - DEVICE_VECTOR_BASE);
        type Entry = Option<(Arc<dyn IrqSource>, Callback)>;
        let mut run: [Entry; MAX_SHARED] = [const { None }; MAX_SHARED];
        let (n, shared) = {
            let t = TABLE.lock_irq_disabled();
            let mut n = 0;
            for h in t.handlers[i].iter() {
                if let Some(cb) = &h.callback {
                    run[n] = Some((h.source.clone(), cb.clone()));
                    n += 1;
                }
            }
            (n, t.handlers[i].len() > 1)
        };
        // Outside the (leaf) table lock: asking a shared source whether it
        // asserts reads its configuration space, which takes locks.
        for (source, cb) in run[..n].iter().flatten() {
            if !shared || source.pending() {
                cb();
            }
        }
    }

    /// Revokes every line that the driver domain with heap tag `tag` made
    /// or set a callback on: masks its source, removes its handler, frees
    /// its vector if it had one of its own. The callback and the source
    /// reference are forgotten, not dropped: the callback lives on the dead
    /// domain's heap, and dropping either would run code of the domain.
    /// Called when the domain dies, before its heap is freed; returns how
    /// many lines were revoked.
    pub(crate) fn revoke_domain(tag: u8) -> usize {
        let mut revoked = 0;
        loop {
            let found = {
                let mut t = TABLE.lock_irq_disabled();
                t.handlers.iter_mut().enumerate().find_map(|(i, hs)| {
                    let p = hs.iter().position(|h| h.owner == tag)?;
                    Some((i, hs.swap_remove(p)))
                })
            };
            let Some((i, h)) = found else {
                return revoked;
            };
            h.source.mask();
            if h.owns_vector {
                free_vector(DEVICE_VECTOR_BASE + i as u8);
            }
            core::mem::forget(h);
            revoked += 1;
        }
    }

    /// Number of callbacks installed on `vector` (tests).
    #[allow(dead_code)]
    pub(crate) fn handler_count(vector: u8) -> usize {
        let i = usize::from(vector - DEVICE_VECTOR_BASE);
        TABLE.lock_irq_disabled().handlers[i].len()
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::sim;
        use core::sync::atomic::{AtomicBool, AtomicU32};

        /// An interrupt source that records masking and says whether it
        /// is asserting.
        #[derive(Default)]
        struct TestSource {
            masked: AtomicBool,
            asserting: AtomicBool,
            mask_calls: AtomicU32,
        }

        impl IrqSource for TestSource {
            fn mask(&self) {
                self.masked.store(true, Ordering::Relaxed);
                self.mask_calls.fetch_add(1, Ordering::Relaxed);
            }
            fn unmask(&self) {
                self.masked.store(false, Ordering::Relaxed);
            }
            fn pending(&self) -> bool {
                self.asserting.load(Ordering::Relaxed)
            }
        }

        /// Raises `vector` and lets the CPU take it (in this task).
        fn interrupt(vector: u8) {
            let _off = super::super::disable_local();
            sim::cpu::raise(vector);
            // Dropping the guard re-enables interrupts: the CPU takes it.
        }

        /// A source whose masking a test sees through statics (the domain
        /// below owns the only handle on it).
        struct DomainSource;
        static DOMAIN_SRC_MASKED: AtomicBool = AtomicBool::new(false);
        static DOMAIN_HITS: AtomicU32 = AtomicU32::new(0);
        static DOMAIN_TIMER_HITS: AtomicU32 = AtomicU32::new(0);

        impl IrqSource for DomainSource {
            fn mask(&self) {
                DOMAIN_SRC_MASKED.store(true, Ordering::Relaxed);
            }
            fn unmask(&self) {
                DOMAIN_SRC_MASKED.store(false, Ordering::Relaxed);
            }
        }

        /// A driver's root: an interrupt line and a timer armed inside the
        /// domain.
        struct Driver {
            _line: IrqLine,
        }

        fn start_driver(v: u8) -> Driver {
            let line = IrqLine::new(v, Arc::new(DomainSource), true).unwrap();
            line.on_active(|| {
                DOMAIN_HITS.fetch_add(1, Ordering::Relaxed);
            });
            crate::timer::call_at(
                u64::MAX - 1,
                alloc::boxed::Box::new(|| {
                    DOMAIN_TIMER_HITS.fetch_add(1, Ordering::Relaxed);
                }),
            );
            Driver { _line: line }
        }

        fn crash(_: &mut Driver, _: u8) -> u8 {
            panic!("injected")
        }

        #[test]
        fn a_dead_domain_s_interrupt_lines_and_timers_are_revoked() {
            sim::run(|| {
                use crate::domain::{Domain, Fault};
                let v = alloc_vector().unwrap();
                let timers = crate::timer::pending_callbacks();
                let d = Domain::new("test-irq-driver", start_driver, v).unwrap();
                assert_eq!(handler_count(v), 1);
                assert_eq!(crate::timer::pending_callbacks(), timers + 1);
                assert!(!DOMAIN_SRC_MASKED.load(Ordering::Relaxed));
                interrupt(v);
                assert_eq!(DOMAIN_HITS.load(Ordering::Relaxed), 1);
                assert_eq!(d.call(crash, 0), Err(Fault::Panic));
                assert!(DOMAIN_SRC_MASKED.load(Ordering::Relaxed), "masked");
                assert_eq!(handler_count(v), 0, "the handler is gone");
                assert_eq!(
                    crate::timer::pending_callbacks(),
                    timers,
                    "the timer is gone"
                );
                interrupt(v); // nothing of the dead domain runs
                assert_eq!(DOMAIN_HITS.load(Ordering::Relaxed), 1);
                assert_eq!(DOMAIN_TIMER_HITS.load(Ordering::Relaxed), 0);
                // The vector went back: the next line may have it.
                let mut got = alloc::vec::Vec::new();
                while let Ok(w) = alloc_vector() {
                    got.push(w);
                }
                assert!(got.contains(&v), "the revoked vector is free again");
                for w in got {
                    free_vector(w);
                }
                drop(d);
            });
        }

        #[test]
        fn device_vectors_run_their_callback_in_interrupt_context() {
            sim::run(|| {
                let v = alloc_vector().unwrap();
                assert!((DEVICE_VECTOR_BASE..DEVICE_VECTOR_END).contains(&v));
                let src = Arc::new(TestSource::default());
                let line = IrqLine::new(v, src.clone(), true).unwrap();
                assert_eq!(line.vector(), v);
                assert!(
                    src.masked.load(Ordering::Relaxed),
                    "masked until a callback is set"
                );
                let hits = Arc::new(AtomicU32::new(0));
                let h = hits.clone();
                line.on_active(move || {
                    assert!(crate::irq::in_interrupt());
                    h.fetch_add(1, Ordering::Relaxed);
                });
                assert!(!src.masked.load(Ordering::Relaxed));
                let eoi = crate::sim::devices::LAPIC.reg(0xb0);
                eoi.store(u32::MAX, Ordering::Relaxed);
                interrupt(v);
                interrupt(v);
                assert_eq!(hits.load(Ordering::Relaxed), 2);
                assert_eq!(eoi.load(Ordering::Relaxed), 0, "EOI written");
                // A new callback replaces the old one.
                let h2 = hits.clone();
                line.on_active(move || {
                    h2.fetch_add(100, Ordering::Relaxed);
                });
                interrupt(v);
                assert_eq!(hits.load(Ordering::Relaxed), 102);
                line.mask();
                assert!(src.masked.load(Ordering::Relaxed));
                line.unmask();
                assert!(!src.masked.load(Ordering::Relaxed));
                // Dropping masks, unregisters and frees the vector.
                let calls = src.mask_calls.load(Ordering::Relaxed);
                drop(line);
                assert_eq!(src.mask_calls.load(Ordering::Relaxed), calls + 1);
                assert_eq!(handler_count(v), 0);
                assert_eq!(Arc::strong_count(&src), 1, "the table let go of the source");
                interrupt(v); // a stray interrupt on a free vector is harmless
                assert_eq!(hits.load(Ordering::Relaxed), 102);
                let again = alloc_vector().unwrap();
                assert_eq!(again, v, "the lowest free vector is reused");
                free_vector(again);
            })
        }

        #[test]
        fn a_shared_vector_calls_only_asserting_sources() {
            sim::run(|| {
                let v = alloc_vector().unwrap();
                let (a, b) = (
                    Arc::new(TestSource::default()),
                    Arc::new(TestSource::default()),
                );
                let la = IrqLine::new(v, a.clone(), false).unwrap();
                let lb = IrqLine::new(v, b.clone(), false).unwrap();
                let hits = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
                for (i, l) in [&la, &lb].into_iter().enumerate() {
                    let h = hits.clone();
                    l.on_active(move || {
                        h[i].fetch_add(1, Ordering::Relaxed);
                    });
                }
                b.asserting.store(true, Ordering::Relaxed);
                interrupt(v);
                let got = |i: usize| hits[i].load(Ordering::Relaxed);
                assert_eq!((got(0), got(1)), (0, 1));
                a.asserting.store(true, Ordering::Relaxed);
                interrupt(v);
                assert_eq!((got(0), got(1)), (1, 2));
                // With one line left, it is called without asking.
                drop(lb);
                a.asserting.store(false, Ordering::Relaxed);
                interrupt(v);
                assert_eq!((got(0), got(1)), (2, 2));
                drop(la);
                assert_eq!(handler_count(v), 0);
                free_vector(v);
                // A shared vector holds at most MAX_SHARED lines.
                let v = alloc_vector().unwrap();
                let mut lines = alloc::vec::Vec::new();
                for _ in 0..MAX_SHARED {
                    lines.push(IrqLine::new(v, Arc::new(TestSource::default()), false).unwrap());
                }
                assert_eq!(
                    IrqLine::new(v, Arc::new(TestSource::default()), false)
                        .err()
                        .map(|_| ()),
                    Some(())
                );
                drop(lines);
                free_vector(v);
            })
        }

        #[test]
        fn device_vectors_run_out_cleanly() {
            sim::run(|| {
                let mut got = alloc::vec::Vec::new();
                while let Ok(v) = alloc_vector() {
                    got.push(v);
                }
                assert_eq!(got.len(), NVEC);
                assert_eq!(alloc_vector(), Err(Error::NoMemory));
                for v in got {
                    free_vector(v);
                }
            })
        }
    }
}
#[cfg(any(target_os = "none", test))]
pub use device::IrqLine;
#[cfg(any(target_os = "none", test))]
pub(crate) use device::{
    DEVICE_VECTOR_BASE, DEVICE_VECTOR_END, IrqSource, alloc_vector, dispatch, free_vector,
    revoke_domain,
};
