//! In-kernel fault checks, run with `ktest=NAME` on the command line. Each
//! one must end in a clean, reported kernel fault (xtask checks the report).

use alloc::vec::Vec;

/// Runs the named check; returns only for unknown names.
pub fn run(name: &str) {
    frame::println!("trellis: ktest {name}");
    match name {
        "panic" => panic!("ktest: deliberate panic"),
        "stack_overflow" => {
            let depth = recurse(0);
            frame::println!("recursion returned {depth}");
        }
        "null_deref" => {
            // Safe code cannot dereference null; read through a user copy of
            // an unmapped kernel address instead, which frame must refuse.
            let vm = frame::mm::VmSpace::new().expect("vmspace");
            let mut buf = [0u8; 8];
            frame::println!("read of unmapped user page: {:?}", vm.read_bytes(0, &mut buf).err());
            frame::println!("trellis: poweroff status=0");
            frame::power_off(0);
        }
        _ => frame::println!("trellis: unknown ktest {name}"),
    }
}

#[inline(never)]
fn recurse(n: u64) -> u64 {
    let mut pad: Vec<u64> = Vec::new();
    let local = [n; 64];
    pad.push(local[(n % 64) as usize]);
    if n == u64::MAX {
        return pad[0];
    }
    recurse(core::hint::black_box(n + 1)) + core::hint::black_box(local[3])
}
