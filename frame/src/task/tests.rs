//! Tasks, context switches, wait queues, the sleeping mutex and the timer,
//! on the simulated machine (each task a host thread; Miri checks every
//! hand-over between them).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::*;
use crate::mm::frame_alloc::free_frames;
use crate::sim;
use crate::sync::{Mutex, WaitQueue};
use crate::timer::{call_at, cancel, jiffies, monotonic_ns};

fn spawn(f: impl FnOnce() + Send + 'static) -> Arc<Task> {
    TaskOptions::new(f).spawn().unwrap()
}

/// Yields until every task in `tasks` has exited.
fn join(tasks: &[Arc<Task>]) {
    while tasks.iter().any(|t| t.state() != TaskState::Exited) {
        yield_now();
    }
}

#[test]
fn spawned_tasks_run_when_the_current_task_yields_and_exit_cleanly() {
    sim::run(|| {
        let before = free_frames();
        let ran = Arc::new(AtomicU32::new(0));
        let tasks: Vec<Arc<Task>> = (0..3u32)
            .map(|i| {
                let ran = ran.clone();
                TaskOptions::new(move || {
                    let me = current();
                    assert_eq!(me.data().downcast_ref::<u32>(), Some(&i));
                    ran.fetch_add(1 << (8 * i), Ordering::Relaxed);
                })
                .data(i)
                .spawn()
                .unwrap()
            })
            .collect();
        assert_eq!(
            ran.load(Ordering::Relaxed),
            0,
            "spawning does not run a task"
        );
        assert!(tasks.iter().all(|t| t.state() == TaskState::Runnable));
        let (_, involuntary) = current().context_switches();
        // FIFO: one yield lets all three run to their end.
        yield_now();
        assert_eq!(ran.load(Ordering::Relaxed), 0x01_01_01);
        for t in &tasks {
            assert_eq!(t.state(), TaskState::Exited);
            assert_eq!(
                t.context_switches(),
                (1, 0),
                "exiting is a voluntary switch"
            );
        }
        assert_eq!(
            current().context_switches().1,
            involuntary + 1,
            "the yield was involuntary"
        );
        drop(tasks);
        // Their kernel stacks went back with the last reference.
        assert_eq!(free_frames(), before);
    });
}

#[test]
fn wait_queues_and_the_mutex_put_tasks_to_sleep_and_wake_them() {
    sim::run(|| {
        let queue = Arc::new(WaitQueue::new());
        let flag = Arc::new(AtomicBool::new(false));
        let log: Arc<Mutex<Vec<&str>>> = Arc::new(Mutex::new(Vec::new()));
        let waiter = {
            let (queue, flag, log) = (queue.clone(), flag.clone(), log.clone());
            spawn(move || {
                queue.wait_until(|| flag.load(Ordering::Acquire).then_some(()));
                log.lock().push("woken");
            })
        };
        // Holds the mutex across a yield, so the next task has to sleep on it.
        let holder = {
            let log = log.clone();
            spawn(move || {
                let mut g = log.lock();
                g.push("holder");
                yield_now();
                g.push("holder again");
            })
        };
        let contender = {
            let log = log.clone();
            spawn(move || log.lock().push("contender"))
        };
        yield_now();
        assert_eq!(waiter.state(), TaskState::Sleeping);
        assert_eq!(contender.state(), TaskState::Sleeping);
        flag.store(true, Ordering::Release);
        queue.wake_all();
        join(&[waiter, holder, contender]);
        let log = log.lock();
        // Nothing got between the holder's two entries.
        assert_eq!(log[..2], ["holder", "holder again"]);
        let mut rest = log[2..].to_vec();
        rest.sort_unstable();
        assert_eq!(rest, ["contender", "woken"]);
    });
}

#[test]
fn a_mutex_guard_shares_only_the_value_across_threads() {
    sim::run(|| {
        let m: Mutex<Vec<u32>> = Mutex::new(Vec::from([1, 2, 3]));
        let g = m.lock();
        // `&MutexGuard` is `&T` for whoever it is shared with.
        let sums: Vec<u32> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let g = &g;
                    s.spawn(move || g.iter().sum::<u32>())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(sums, [6, 6]);
        drop(g);
        m.lock().push(4);
        assert_eq!(*m.lock(), [1, 2, 3, 4]);
    });
}

#[test]
fn a_deadline_wakes_a_sleeper_with_one_timer_interrupt() {
    sim::run(|| {
        let queue = WaitQueue::new();
        let (t0, j0) = (monotonic_ns(), jiffies());
        let i0 = crate::timer::interrupts();
        // Nothing else runs: the CPU halts with the tick stopped, and the
        // APIC timer is armed for the deadline itself.
        let r = queue.wait_until_or_deadline(|| None::<()>, t0 + 35_000_000);
        assert_eq!(r, None);
        let (t1, j1) = (monotonic_ns(), jiffies());
        assert!(
            (t0 + 35_000_000..t0 + 36_000_000).contains(&t1),
            "{t0} -> {t1}"
        );
        // One interrupt at the deadline, or two if the calibrations of the
        // TSC and of the APIC timer disagree a little and the first comes
        // early (it then re-arms for what is left); three ticks would
        // have passed with the tick running.
        let n = crate::timer::interrupts() - i0;
        assert!((1..=2).contains(&n), "{n} interrupts: no ticks while idle");
        assert!(j1 - j0 >= 3, "jiffies follow the clock: {j0} -> {j1}");
    });
}

#[test]
fn an_earlier_deadline_rearms_the_timer_and_a_passed_one_fires_at_once() {
    sim::run(|| {
        let queue = WaitQueue::new();
        let now = monotonic_ns();
        let _far = call_at(now + 5_000_000_000, alloc::boxed::Box::new(|| {}));
        // 1 ms at 62.5 MHz: 62,500 counts (rounded up), sooner than the
        // tick that was armed.
        let r = queue.wait_until_or_deadline(|| None::<()>, now + 1_000_000);
        assert_eq!(r, None);
        let t1 = monotonic_ns();
        assert!(
            (now + 1_000_000..now + 1_100_000).contains(&t1),
            "{now} -> {t1}"
        );
        // A deadline already passed arms a count of 1.
        let i0 = crate::timer::interrupts();
        let r = queue.wait_until_or_deadline(|| None::<()>, t1);
        assert_eq!(r, None);
        assert!(crate::timer::interrupts() - i0 <= 1);
    });
}

/// Re-arms itself at the present each time it runs, until `stop`.
fn rearm_at_now(runs: Arc<AtomicU32>, stop: Arc<AtomicBool>) {
    call_at(
        monotonic_ns(),
        alloc::boxed::Box::new(move || {
            runs.fetch_add(1, Ordering::Relaxed);
            if !stop.load(Ordering::Relaxed) {
                rearm_at_now(runs, stop);
            }
        }),
    );
}

#[test]
fn a_callback_rearming_itself_at_the_present_does_not_storm() {
    sim::run(|| {
        let runs = Arc::new(AtomicU32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        rearm_at_now(runs.clone(), stop.clone());
        // While it keeps re-arming, a 1 ms sleep still ends (the callback
        // runs at most once per 50 us after each interrupt).
        let queue = WaitQueue::new();
        let t0 = monotonic_ns();
        assert_eq!(
            queue.wait_until_or_deadline(|| None::<()>, t0 + 1_000_000),
            None
        );
        let n = runs.load(Ordering::Relaxed);
        assert!((1..=21).contains(&n), "{n} runs in 1 ms");
        stop.store(true, Ordering::Relaxed);
        queue.wait_until_or_deadline(|| None::<()>, monotonic_ns() + 1_000_000);
        let n = runs.load(Ordering::Relaxed);
        queue.wait_until_or_deadline(|| None::<()>, monotonic_ns() + 1_000_000);
        assert_eq!(runs.load(Ordering::Relaxed), n, "stopped");
    });
}

#[test]
fn timer_callbacks_run_once_at_their_deadline_unless_cancelled() {
    sim::run(|| {
        let fired = Arc::new(AtomicU32::new(0));
        let queue = Arc::new(WaitQueue::new());
        let now = monotonic_ns();
        let cb = |bit: u32| -> crate::timer::TimerCallback {
            let (fired, queue) = (fired.clone(), queue.clone());
            alloc::boxed::Box::new(move || {
                assert!(crate::irq::in_interrupt());
                fired.fetch_or(bit, Ordering::Relaxed);
                queue.wake_all();
            })
        };
        let first = call_at(now + 15_000_000, cb(1));
        let cancelled = call_at(now + 16_000_000, cb(2));
        let _late = call_at(now + 500_000_000, cb(4));
        assert!(cancel(cancelled));
        queue.wait_until(|| (fired.load(Ordering::Relaxed) & 1 != 0).then_some(()));
        assert_eq!(fired.load(Ordering::Relaxed), 1);
        assert!(!cancel(first), "a callback that ran cannot be cancelled");
        assert!(!cancel(cancelled), "nor one cancelled before");
    });
}

#[test]
fn kernel_stacks_sit_above_an_unmapped_guard_page() {
    sim::run(|| {
        let stack = stack::KernelStack::new().unwrap();
        let top = stack.top();
        let base = top - stack::STACK_PAGES * crate::mm::PAGE_SIZE;
        stack.write_words(base, &[1, 2]);
        stack.write_words(top - 16, &[3, 4]);
        assert!(crate::mm::kernel_addr_mapped(base));
        assert!(!crate::mm::kernel_addr_mapped(base - 8));
        assert!(is_stack_guard(base - 8));
        assert!(!is_stack_guard(base));
        let again = {
            drop(stack);
            stack::KernelStack::new().unwrap()
        };
        assert_eq!(again.top(), top, "the slot is reused");
    });
}

#[test]
#[should_panic(expected = "initial frame outside the stack")]
fn writing_below_a_kernel_stack_is_refused() {
    sim::run(|| {
        let stack = stack::KernelStack::new().unwrap();
        let base = stack.top() - stack::STACK_PAGES * crate::mm::PAGE_SIZE;
        stack.write_words(base - 8, &[0]);
    });
}

#[test]
// Safe code only (a counter and the idle loop's bound); natively it spins a
// million times, too slow to interpret.
#[cfg_attr(miri, ignore)]
fn an_idle_cpu_polls_while_io_is_pending_and_still_wakes_at_a_deadline() {
    sim::run(|| {
        assert_eq!(io_pending(), 0);
        let claim = IoPending::new();
        let other = IoPending::new();
        assert_eq!(io_pending(), 2);
        drop(other);
        assert_eq!(io_pending(), 1);
        let queue = WaitQueue::new();
        let t0 = monotonic_ns();
        // Nothing runs and no interrupt comes: the poll ends (1 ms) and
        // the CPU halts until the deadline, which still ends the wait.
        // (The model's APIC timer counts from the halt, not from when it
        // was armed: the wake-up may come up to one poll late here.)
        let r = queue.wait_until_or_deadline(|| None::<()>, t0 + 5_000_000);
        assert_eq!(r, None);
        let t1 = monotonic_ns();
        assert!(
            (t0 + 5_000_000..t0 + 7_000_000).contains(&t1),
            "{t0} -> {t1}"
        );
        drop(claim);
        assert_eq!(io_pending(), 0, "a dropped claim ends the poll");
    });
}

#[test]
fn a_scheduler_tick_while_a_task_runs_asks_for_a_preemption_at_the_next_point() {
    sim::run(|| {
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let other = spawn(move || r.store(true, Ordering::Relaxed));
        NEED_RESCHED.store(false, Ordering::Relaxed);
        preempt_point();
        assert!(!ran.load(Ordering::Relaxed), "no tick yet: no yield");
        // A task is running, so the tick is on; let it fall due and take
        // the timer interrupt where interrupts are enabled again.
        sim::cpu::advance_time(3 * 1_000_000_000 / u64::from(crate::timer::TICK_HZ));
        let i0 = crate::timer::interrupts();
        {
            let _irq = crate::irq::disable_local();
            sim::cpu::raise(crate::arch::apic::TIMER_VECTOR);
        }
        assert_eq!(crate::timer::interrupts(), i0 + 1);
        assert!(
            NEED_RESCHED.load(Ordering::Relaxed),
            "the tick asked for a preemption"
        );
        assert!(!ran.load(Ordering::Relaxed), "but nothing switched in the interrupt");
        preempt_point();
        join(&[other]);
        assert!(ran.load(Ordering::Relaxed));
        assert!(!NEED_RESCHED.load(Ordering::Relaxed), "the switch took the request");
    });
}

/// The empty-queue shortcut of `wake_one`/`wake_all` (no queue lock when
/// nobody waits) must not lose a wake-up: a waker in interrupt context
/// makes the condition true and wakes while the waiter is on its way to
/// sleep, round after round. A waiter that missed its wake-up would sleep
/// to the (simulated, far) deadline and the round would fail.
#[test]
fn wake_ups_from_interrupt_context_are_not_lost_by_the_empty_queue_shortcut() {
    sim::run(|| {
        let queue = Arc::new(WaitQueue::new());
        let fired = Arc::new(AtomicU32::new(0));
        let rounds = if sim::miri_sized() { 5 } else { 200 };
        for round in 1..=rounds {
            let (q, f) = (queue.clone(), fired.clone());
            // Due at once or a little later: the interrupt comes before,
            // during or after the waiter queues itself.
            let at = monotonic_ns() + (round as u64 % 3) * 20_000;
            let _ = call_at(
                at,
                alloc::boxed::Box::new(move || {
                    f.store(round, Ordering::Release);
                    q.wake_all();
                }),
            );
            let deadline = monotonic_ns() + 60_000_000_000;
            let r = queue.wait_until_or_deadline(
                || (fired.load(Ordering::Acquire) >= round).then_some(()),
                deadline,
            );
            // At the deadline the condition holds too: only the time tells
            // a wake-up from a timeout.
            assert_eq!(r, Some(()));
            assert!(
                monotonic_ns() < deadline,
                "round {round}: the wake-up was lost"
            );
        }
        // Nobody waits now: waking takes the shortcut and wakes no one.
        queue.wake_one();
        queue.wake_all();
    });
}

/// Tasks that hold the mutex across a yield make the others sleep on it;
/// each unlock hands it on (one CAS to take it uncontended, `wake_one` to
/// wake the next sleeper): every increment lands and every task ends.
#[test]
fn a_contended_mutex_wakes_every_sleeper_in_turn() {
    sim::run(|| {
        let m: Arc<Mutex<u32>> = Arc::new(Mutex::new(0));
        let (tasks, rounds) = (4u32, if sim::miri_sized() { 3 } else { 50 });
        let all: Vec<Arc<Task>> = (0..tasks)
            .map(|_| {
                let m = m.clone();
                spawn(move || {
                    for _ in 0..rounds {
                        let mut g = m.lock();
                        let v = *g;
                        yield_now();
                        *g = v + 1;
                    }
                })
            })
            .collect();
        // Bounded: a task left asleep by a lost wake-up fails the test
        // instead of hanging it.
        let mut yields = 0u32;
        while all.iter().any(|t| t.state() != TaskState::Exited) {
            yield_now();
            yields += 1;
            assert!(
                yields < 100 * tasks * rounds,
                "a task never woke: {:?}",
                all.iter().map(|t| t.state()).collect::<Vec<_>>()
            );
        }
        assert_eq!(*m.lock(), tasks * rounds);
    });
}
