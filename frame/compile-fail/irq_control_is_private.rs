// expect: module `irq` is private
pub fn f() {
    frame::irq::enable_local();
}
