// expect: cannot be sent between threads safely
// A held mutex belongs to the task that locked it (its lock levels are
// that task's state); the guard cannot move to another task.
use frame::sync::MutexGuard;

fn send<T: Send>() {}

pub fn f() {
    send::<MutexGuard<'static, u64, 0>>();
}
