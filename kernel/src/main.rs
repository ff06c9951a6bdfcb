//! Trellis kernel: the Linux personality, in safe Rust on top of `frame`.

#![no_std]
#![no_main]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod block;
pub mod net;
pub mod caps;
mod cmdline;
pub mod domains;
pub mod domain_bench;
mod ktest;
mod ktest_devices;
mod ktest_domains;
mod vdso;
mod virtio_pci;
pub mod error;
pub mod fallible;
pub mod fs;
pub mod ipc;
pub mod mm;
pub mod process;
pub mod syscall;
pub mod sysctl;
pub mod system;
pub mod time;
pub mod tty;

use alloc::vec::Vec;

use policies::frame_alloc::LockedFrameAllocator;
use policies::heap::SlabHeap;
use policies::sched::RoundRobin;

static FRAME_ALLOCATOR: LockedFrameAllocator = LockedFrameAllocator::new();
pub(crate) static HEAP: SlabHeap = SlabHeap::new();
static SCHEDULER: RoundRobin = RoundRobin::new();

frame::main!(kernel_main);

/// The policies injected at boot. `ktest=sched_stale` swaps in a scheduler
/// that misbehaves on purpose (see ktest.rs). Runs before the heap exists,
/// so the command line is only scanned, not parsed into `Args`.
pub(crate) fn policies() -> frame::Policies {
    let stale = frame::boot::cmdline().split_ascii_whitespace().any(|w| w == "ktest=sched_stale");
    let scheduler: &'static dyn frame::task::Scheduler = if stale { &ktest::STALE_SCHEDULER } else { &SCHEDULER };
    frame::Policies { frame_alloc: &FRAME_ALLOCATOR, heap: &HEAP, scheduler }
}

fn kernel_main() -> ! {
    frame::init(policies());
    mm::oom::init();
    mm::commit::init();
    vdso::init();
    let args = cmdline::parse(frame::boot::cmdline());
    if let Some(level) = args.loglevel {
        frame::console::set_log_level(level);
    }
    let (smep, smap) = frame::boot::smep_smap_enabled();
    frame::log_info!(
        "memory: {} MiB usable, {} free frames; SMEP {smep}, SMAP {smap}",
        frame::boot::total_ram() >> 20,
        frame::mm::frame_alloc::free_frames()
    );
    frame::run_first_task(frame::task::TaskOptions::new(move || start_init(args)))
}

const DEFAULT_ENV: [&[u8]; 4] = [b"HOME=/root", b"PATH=/sbin:/bin:/usr/sbin:/usr/bin", b"TERM=vt100", b"SHELL=/bin/sh"];

/// Mounts the initramfs and starts init: `init=` from the command line,
/// else the command in `/.trellis/argv`, else `/bin/sh`.
fn start_init(args: cmdline::Args) {
    if let Some(name) = &args.ktest {
        ktest::run(name);
    }
    sysctl::init_threads_max(frame::boot::total_ram() as u64);
    // `root=/dev/X`: the disks are found first and that file system is `/`
    // (the initramfs is left unpacked); without it the initramfs is `/`.
    let disk_root = match &args.root {
        Some(dev) => {
            block::init(frame::boot::cmdline());
            let fstype = args.rootfstype.as_deref().unwrap_or("ext2");
            let flags = args.rootflags.as_deref().unwrap_or("");
            match fs::ext2::mount_root(dev, fstype, !args.root_rw, flags) {
                Ok(root) => {
                    let ro = if args.root_rw { 0 } else { fs::mount::ST_RDONLY };
                    fs::mount::set_root_description("/dev/root", fstype, ro | fs::mount::ST_RELATIME);
                    Some(root)
                }
                Err(e) => {
                    frame::println!("trellis: cannot mount root fs {dev} ({fstype}): {e:?}");
                    frame::println!("trellis: poweroff status=1");
                    frame::power_off(1);
                }
            }
        }
        None => None,
    };
    let booted_from_disk = disk_root.is_some();
    if let Err(e) = fs::init(frame::boot::initrd(), disk_root) {
        frame::println!("trellis: cannot mount the root file system: {e:?}");
        frame::power_off(1);
    }
    if let Err(e) = fs::mount::mount_kernel_filesystems() {
        frame::println!("trellis: cannot mount /dev, /proc, /sys: {e:?}");
    }
    if !booted_from_disk {
        block::init(frame::boot::cmdline());
    }
    net::virtio_net::probe_all();
    let argv: Vec<Vec<u8>> = match args.init {
        Some(init) => core::iter::once(init.into_bytes()).chain(args.init_args.into_iter().map(|a| a.into_bytes())).collect(),
        None => match read_argv_file() {
            Ok(data) => data.split(|&b| b == 0).filter(|s| !s.is_empty()).map(Vec::from).collect(),
            Err(_) => alloc::vec![b"/bin/sh".to_vec()],
        },
    };
    let envp = DEFAULT_ENV.iter().map(|e| e.to_vec()).collect();
    if let Err(e) = process::load_init(argv, envp) {
        frame::println!("trellis: cannot start init: {e:?}");
        frame::println!("trellis: poweroff status=127");
        frame::power_off(127);
    }
}

/// The command `cargo xtask run -- CMD` leaves in the initramfs.
fn read_argv_file() -> error::Result<Vec<u8>> {
    let ctx = fs::FsContext::default();
    let inode = fs::lookup(&ctx, ctx.root(), "/.trellis/argv", true)?;
    process::read_whole(&inode)
}
