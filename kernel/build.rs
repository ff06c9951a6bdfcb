//! Links the kernel with frame's linker script (bare-metal target only).
#![forbid(unsafe_code)]

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let script = format!("{dir}/../frame/src/arch/x86_64/linker.ld");
    println!("cargo:rerun-if-changed={script}");
    if target == "x86_64-unknown-none" {
        println!("cargo:rustc-link-arg-bins=-T{script}");
        println!("cargo:rustc-link-arg-bins=--no-relax");
    }
}
