// expect: no method named `config_write_u32`
// Configuration space is read-only to clients: frame alone writes the
// command register, the BARs (sizing) and MSI-X control.
pub fn f(dev: &frame::pci::PciDevice) {
    dev.config_write_u32(0x10, 0xffff_ffff);
}
