// expect: cannot be shared between threads safely
// `Task` is Send + Sync because what a client attaches must be: its data
// is reachable from every task holding the `Arc<Task>`.
use core::cell::Cell;

pub fn f() {
    let _ = frame::task::TaskOptions::new(|| {}).data(Cell::new(1u8));
}
