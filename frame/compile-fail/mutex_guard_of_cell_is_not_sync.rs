// expect: cannot be shared between threads safely
// A guard shares `&T`: a guard over a `Cell` must not be `Sync`, or two
// tasks could mutate the cell at once through `&guard` (the bug found in
// review: a task and a timer callback both holding `&Cell<Option<Box<_>>>`).
use core::cell::Cell;
use frame::sync::MutexGuard;

fn sync<T: Sync>() {}

pub fn f() {
    sync::<MutexGuard<'static, Cell<u64>, 0>>();
}
