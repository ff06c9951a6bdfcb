//! In-kernel fault checks, run with `ktest=NAME` on the command line. Each
//! one must end in a clean, reported kernel fault or a clean power-off; the
//! `ktest` layer of `cargo xtask test` boots each and checks the report.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use frame::sync::{SpinLock, level};
use frame::task::{Scheduler, Task, TaskOptions};
use policies::sched::RoundRobin;

/// A scheduler policy with a planted bug for `ktest=sched_stale`: once
/// armed, its next `pick_next` returns the task it picked last — the
/// current one — even if that task has just exited. frame must not run an
/// exited task again whatever the policy says (invariant 8's mechanism).
pub struct StaleOnce {
    inner: RoundRobin,
    last: SpinLock<Option<Arc<Task>>, { level::SCHEDULER }>,
    armed: AtomicBool,
}

pub static STALE_SCHEDULER: StaleOnce = StaleOnce {
    inner: RoundRobin::new(),
    last: SpinLock::new(None),
    armed: AtomicBool::new(false),
};

impl Scheduler for StaleOnce {
    fn enqueue(&self, task: Arc<Task>) {
        self.inner.enqueue(task);
    }

    fn pick_next(&self) -> Option<Arc<Task>> {
        if self.armed.swap(false, Ordering::Relaxed) {
            return self.last.lock_irq_disabled().clone();
        }
        let next = self.inner.pick_next();
        let previous = core::mem::replace(&mut *self.last.lock_irq_disabled(), next.clone());
        drop(previous); // outside the lock: it may be the last reference to a task
        next
    }

    fn tick(&self, current: &Task) -> bool {
        self.inner.tick(current)
    }
}

fn pass(name: &str) -> ! {
    frame::println!("trellis: ktest {name}: ok");
    frame::println!("trellis: poweroff status=0");
    frame::power_off(0)
}

/// Ends a ktest made of checks: passes if none of them failed (each
/// failure was printed by the check itself).
fn checks(name: &str, failed: usize) {
    if failed == 0 {
        pass(name);
    }
    frame::println!("trellis: ktest {name}: {failed} checks failed");
}

/// Runs the named check; returns only for unknown names.
pub fn run(name: &str) {
    frame::println!("trellis: ktest {name}");
    match name {
        "panic" => panic!("ktest: deliberate panic"),
        "stack_overflow" => {
            let depth = recurse(0);
            frame::println!("recursion returned {depth}");
        }
        "null_deref" => {
            // Safe code cannot dereference null; read through a user copy of
            // an unmapped kernel address instead, which frame must refuse.
            let vm = frame::mm::VmSpace::new().expect("vmspace");
            let mut buf = [0u8; 8];
            frame::println!(
                "read of unmapped user page: {:?}",
                vm.read_bytes(0, &mut buf).err()
            );
            frame::println!("trellis: poweroff status=0");
            frame::power_off(0);
        }
        // One-shot APIs: each must refuse a second call with a panic that
        // names the invariant (a second init would rebuild the metadata and
        // page table under live pages; a nested first task would abandon
        // the stack it runs on).
        "init_twice" => {
            frame::init(crate::policies());
            frame::println!("trellis: ktest init_twice: the second init returned");
        }
        "run_first_nested" => {
            frame::run_first_task(TaskOptions::new(|| {}));
        }
        // A timer callback runs in interrupt context and must not switch
        // tasks; frame refuses with a panic instead of corrupting the
        // interrupted context.
        "timer_yield" => {
            let now = frame::timer::monotonic_ns();
            frame::timer::call_at(now, Box::new(frame::task::yield_now));
            let waited = wait_ticks(50);
            frame::println!(
                "trellis: ktest timer_yield: callback did not panic after {waited} yields"
            );
        }
        "timer_exit" => {
            let now = frame::timer::monotonic_ns();
            frame::timer::call_at(now, Box::new(|| frame::task::exit_current()));
            let waited = wait_ticks(50);
            frame::println!(
                "trellis: ktest timer_exit: callback did not panic after {waited} yields"
            );
        }
        "sched_stale" => {
            let child = TaskOptions::new(|| STALE_SCHEDULER.armed.store(true, Ordering::Relaxed))
                .spawn()
                .expect("spawn");
            let mut spins = 0u32;
            while child.state() != frame::task::TaskState::Exited && spins < 10_000 {
                frame::task::yield_now();
                spins += 1;
            }
            // A few more switches with the stale entry handled.
            for _ in 0..10 {
                frame::task::yield_now();
            }
            if child.state() == frame::task::TaskState::Exited {
                pass(name);
            }
            frame::println!("trellis: ktest sched_stale: the child never exited");
        }
        // frame's device layer on q35 (kernel/src/ktest_devices.rs).
        "pci" | "pci_irq" | "pci_intx" | "virtio_net" | "virtio_net_intx" => {
            let r = match name {
                "pci" => crate::ktest_devices::pci(),
                "pci_irq" => crate::ktest_devices::pci_irq(),
                "virtio_net" => crate::ktest_devices::virtio_net("MSI-X"),
                "virtio_net_intx" => crate::ktest_devices::virtio_net("INTx"),
                _ => crate::ktest_devices::pci_intx(),
            };
            match r {
                Ok(()) => pass(name),
                Err(why) => {
                    frame::println!("trellis: ktest {name}: FAILED: {why}");
                    frame::println!("trellis: poweroff status=1");
                    frame::power_off(1)
                }
            }
        }
        // The continuation of driver domains (kernel/src/ktest_domains.rs).
        "domain_fault" => match crate::ktest_domains::domain_fault() {
            Ok(()) => pass(name),
            Err(why) => frame::println!("trellis: ktest domain_fault: FAILED: {why}"),
        },
        "domain_fault_locked" => crate::ktest_domains::domain_fault_locked(),
        "domain_heap" => match crate::ktest_domains::domain_heap() {
            Ok(()) => pass(name),
            Err(why) => frame::println!("trellis: ktest domain_heap: FAILED: {why}"),
        },
        "domain_proxy" => match crate::ktest_domains::domain_proxy() {
            Ok(()) => pass(name),
            Err(why) => frame::println!("trellis: ktest domain_proxy: FAILED: {why}"),
        },
        "page_cache" => checks(name, crate::mm::page_cache_ktest::run()),
        "user_copy" => checks(name, crate::mm::user_copy_ktest::run()),
        "exit_placeholder" => checks(name, crate::mm::placeholder_ktest::run()),
        "sig_actions" => checks(name, crate::process::sig_actions_ktest::run()),
        "net_iface" => checks(name, crate::net::iface_ktest::run()),
        _ => frame::println!("trellis: unknown ktest {name}"),
    }
}

/// Yields until `ticks` timer ticks have passed (bounded by jiffies, not
/// wall time); returns how many yields that took.
pub(crate) fn wait_ticks(ticks: u64) -> u64 {
    let until = frame::timer::jiffies() + ticks;
    let mut n = 0;
    while frame::timer::jiffies() < until {
        frame::task::yield_now();
        n += 1;
    }
    n
}

#[inline(never)]
fn recurse(n: u64) -> u64 {
    let mut pad: Vec<u64> = Vec::new();
    let local = [n; 64];
    pad.push(local[(n % 64) as usize]);
    if n == u64::MAX {
        return pad[0];
    }
    recurse(core::hint::black_box(n + 1)) + core::hint::black_box(local[3])
}
