// expect: module `trap` is private
// Only `UserContext::execute`, which sanitises the frame, enters ring 3.
pub fn f() {
    let _ = frame::trap::handle_irq;
}
