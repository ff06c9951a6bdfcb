// expect: cannot be shared between threads safely
// Every thread gets `&T` from a shared `Once`, so `T` must be `Sync`.
use core::cell::Cell;
use frame::sync::Once;

fn sync<T: Sync>() {}

pub fn f() {
    sync::<Once<Cell<u8>>>();
}
