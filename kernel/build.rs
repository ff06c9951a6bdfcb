//! Links the kernel with frame's linker script (bare-metal target only).
#![forbid(unsafe_code)]

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let script = format!("{dir}/../frame/src/arch/x86_64/linker.ld");
    println!("cargo:rerun-if-changed={script}");
    build_vdso(&dir);
    if target == "x86_64-unknown-none" {
        println!("cargo:rustc-link-arg-bins=-T{script}");
        println!("cargo:rustc-link-arg-bins=--no-relax");
    }
}

/// Builds the vDSO (kernel/vdso/) with the host's C compiler into
/// OUT_DIR/vdso.so, which the kernel embeds (src/vdso.rs).
fn build_vdso(dir: &str) {
    let src = format!("{dir}/vdso");
    for f in ["vdso.c", "vdso.map", "vdso.lds"] {
        println!("cargo:rerun-if-changed={src}/{f}");
    }
    let out = format!("{}/vdso.so", std::env::var("OUT_DIR").expect("OUT_DIR"));
    let status = std::process::Command::new("gcc")
        .args([
            "-O2",
            "-fPIC",
            "-shared",
            "-nostdlib",
            "-ffreestanding",
            "-fno-builtin",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-Wall",
            "-Werror",
            "-Wl,--hash-style=both",
            "-Wl,--build-id=none",
            "-Wl,-soname=linux-vdso.so.1",
            "-Wl,-z,noexecstack",
        ])
        .arg(format!("-Wl,--version-script={src}/vdso.map"))
        .arg(format!("-Wl,-T,{src}/vdso.lds"))
        .arg("-o")
        .arg(&out)
        .arg(format!("{src}/vdso.c"))
        .status()
        .expect("cannot run gcc to build the vDSO");
    assert!(status.success(), "building the vDSO failed");
}
