// expect: associated function `new` is private
// Invariant 7: an IoMem exists only for a range frame checked (a PCI BAR,
// never RAM or frame's own registers); clients cannot name an address.
pub fn f() {
    let _ = frame::io::IoMem::new(0xfee0_0000, 4096, &[]);
}
