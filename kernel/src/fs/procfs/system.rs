//! The kernel-wide files of /proc: memory, CPU, load, uptime, version,
//! file system types, and the /proc/sys tree (proc(5)).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use frame::sync::{SpinLock, level};

use crate::error::Result;
use crate::fs::mount;
use crate::fs::pseudo::Node;
use crate::process;
use crate::system::{RELEASE, VERSION};

const NS_PER_SEC: u64 = 1_000_000_000;
/// Clock ticks per second as user space sees them (USER_HZ).
const USER_HZ: u64 = 100;

pub(super) fn cmdline() -> Result<Vec<u8>> {
    Ok(format!("{}\n", frame::boot::cmdline()).into_bytes())
}

pub(super) fn version() -> Result<Vec<u8>> {
    Ok(format!("Linux version {RELEASE} (trellis@trellis) (rustc) {VERSION}\n").into_bytes())
}

pub(super) fn filesystems() -> Result<Vec<u8>> {
    let mut s = String::new();
    for name in mount::filesystem_types() {
        let _ = writeln!(s, "nodev\t{name}");
    }
    Ok(s.into_bytes())
}

pub(super) fn devices() -> Result<Vec<u8>> {
    let text = "Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n  \
                5 /dev/console\n  5 /dev/ptmx\n128 ptm\n136 pts\n\nBlock devices:\n";
    Ok(Vec::from(text.as_bytes()))
}

pub(super) fn partitions() -> Result<Vec<u8>> {
    Ok(Vec::from(&b"major minor  #blocks  name\n\n"[..]))
}

pub(super) fn swaps() -> Result<Vec<u8>> {
    Ok(Vec::from(
        &b"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"[..],
    ))
}

/// /proc/meminfo. Free memory is the frame allocator's free frames; file
/// contents (all in memory) count as cached and shared, as tmpfs pages do
/// on Linux; there is no swap.
pub(super) fn meminfo() -> Result<Vec<u8>> {
    let total = frame::boot::total_ram() as u64 / 1024;
    let free = frame::mm::frame_alloc::free_frames() as u64 * 4;
    let (file_pages, _) = crate::fs::ramfs::page_usage();
    let cached = file_pages as u64 * 4;
    let mut s = String::new();
    let mut kb = |name: &str, v: u64| {
        let _ = writeln!(s, "{:<16}{:>8} kB", format!("{name}:"), v);
    };
    kb("MemTotal", total);
    kb("MemFree", free);
    kb("MemAvailable", free);
    kb("Buffers", 0);
    kb("Cached", cached);
    kb("SwapCached", 0);
    kb("Active", cached);
    kb("Inactive", 0);
    kb("Active(anon)", cached);
    kb("Inactive(anon)", 0);
    kb("Active(file)", 0);
    kb("Inactive(file)", 0);
    kb("Unevictable", 0);
    kb("Mlocked", 0);
    kb("SwapTotal", 0);
    kb("SwapFree", 0);
    kb("Dirty", 0);
    kb("Writeback", 0);
    kb(
        "AnonPages",
        total.saturating_sub(free).saturating_sub(cached),
    );
    kb("Mapped", 0);
    kb("Shmem", cached);
    // The kernel heap (slabs and large blocks; none of it reclaimable),
    // kernel stacks and page tables, as frame counts their frames.
    let k = frame::mm::frame_alloc::kernel_frames();
    let slab = super::slabinfo::heap_pages() as u64 * 4;
    kb("KReclaimable", 0);
    kb("Slab", slab);
    kb("SReclaimable", 0);
    kb("SUnreclaim", slab);
    kb("KernelStack", k.kernel_stack as u64 * 4);
    kb("PageTables", k.page_table as u64 * 4);
    kb("NFS_Unstable", 0);
    kb("Bounce", 0);
    kb("WritebackTmp", 0);
    // The overcommit accounting (mm/commit.rs): what the private
    // writable mappings of every address space charge.
    kb("CommitLimit", crate::mm::commit::commit_limit_pages() as u64 * 4);
    kb("Committed_AS", crate::mm::commit::committed_pages() as u64 * 4);
    kb("VmallocTotal", 0);
    kb("VmallocUsed", 0);
    kb("VmallocChunk", 0);
    kb("HardwareCorrupted", 0);
    kb("AnonHugePages", 0);
    for name in [
        "HugePages_Total",
        "HugePages_Free",
        "HugePages_Rsvd",
        "HugePages_Surp",
    ] {
        let _ = writeln!(s, "{:<16}{:>8}", format!("{name}:"), 0);
    }
    let _ = writeln!(s, "{:<16}{:>8} kB", "Hugepagesize:", 2048);
    Ok(s.into_bytes())
}

/// Nanoseconds of CPU time used by every process, living or reaped into
/// a living parent: (user, system).
fn busy_ns() -> (u64, u64) {
    process::all_processes().iter().fold((0, 0), |(u, s), p| {
        let (pu, ps) = p.cpu_times();
        let c = p.children_usage();
        (u + pu + c.utime_ns, s + ps + c.stime_ns)
    })
}

/// Seconds and hundredths.
fn centis(ns: u64) -> String {
    format!("{}.{:02}", ns / NS_PER_SEC, ns % NS_PER_SEC / 10_000_000)
}

/// /proc/uptime: seconds since boot, and seconds the CPU was idle.
pub(super) fn uptime() -> Result<Vec<u8>> {
    let up = frame::timer::monotonic_ns();
    let (u, s) = busy_ns();
    let idle = up.saturating_sub(u + s);
    Ok(format!("{} {}\n", centis(up), centis(idle)).into_bytes())
}

/// Runnable threads and all threads; the most recent pid.
fn thread_counts() -> (usize, usize, u32) {
    let (mut running, mut total, mut last) = (0, 0, 0);
    for p in process::all_processes() {
        last = last.max(p.pid());
        if p.exit_status().is_some() {
            continue;
        }
        let threads = p.threads();
        total += threads.len();
        for t in &threads {
            last = last.max(t.tid());
            let task = t.task.get().and_then(alloc::sync::Weak::upgrade);
            if task.is_some_and(|k| k.state() == frame::task::TaskState::Runnable) {
                running += 1;
            }
        }
    }
    (running, total, last)
}

/// Load averages over 1, 5 and 15 minutes in 1/2048ths (Linux's FSHIFT
/// fixed point), and when they were last brought up to date.
static LOAD: SpinLock<(u64, [u64; 3]), { level::UNRANKED }> = SpinLock::new((0, [0; 3]));

/// Updates the load averages with `running` runnable threads for each
/// 5-second period since the last update (Linux samples every 5 seconds;
/// here the samples are taken lazily, when the averages are read), and
/// returns them.
pub fn load_average(running: usize) -> [u64; 3] {
    const FIXED_1: u64 = 1 << 11;
    const PERIOD_NS: u64 = 5 * NS_PER_SEC;
    /// 2048 / e^(5s / 1min, 5min, 15min).
    const EXP: [u64; 3] = [1884, 2014, 2037];
    let now = frame::timer::monotonic_ns();
    let mut load = LOAD.lock();
    let periods = (now.saturating_sub(load.0) / PERIOD_NS).min(1000);
    if periods > 0 {
        load.0 = now;
    }
    let active = running as u64 * FIXED_1;
    for _ in 0..periods {
        for (avg, e) in load.1.iter_mut().zip(EXP) {
            *avg = (*avg * e + active * (FIXED_1 - e)) / FIXED_1;
        }
    }
    load.1
}

fn load_text(v: u64) -> String {
    // Rounded to hundredths, as Linux's LOAD_INT/LOAD_FRAC do.
    let v = v + (1 << 11) / 200;
    format!("{}.{:02}", v >> 11, ((v & 2047) * 100) >> 11)
}

pub(super) fn loadavg() -> Result<Vec<u8>> {
    let (running, total, last) = thread_counts();
    let l = load_average(running);
    Ok(format!(
        "{} {} {} {running}/{total} {last}\n",
        load_text(l[0]),
        load_text(l[1]),
        load_text(l[2])
    )
    .into_bytes())
}

/// /proc/stat: CPU time by kind (one CPU), boot time, process counts.
pub(super) fn stat() -> Result<Vec<u8>> {
    let ticks = |ns: u64| ns / (NS_PER_SEC / USER_HZ);
    let up = frame::timer::monotonic_ns();
    let (u, s) = busy_ns();
    let idle = up.saturating_sub(u + s);
    let (running, _, last) = thread_counts();
    let cpu = format!("{} 0 {} {} 0 0 0 0 0 0", ticks(u), ticks(s), ticks(idle));
    let mut out = format!("cpu  {cpu}\ncpu0 {cpu}\n");
    let _ = writeln!(out, "intr 0");
    let _ = writeln!(out, "ctxt 0");
    let _ = writeln!(
        out,
        "btime {}",
        crate::time::realtime_at_boot_ns() / NS_PER_SEC
    );
    let _ = writeln!(out, "processes {last}");
    let _ = writeln!(out, "procs_running {}", running.max(1));
    let _ = writeln!(out, "procs_blocked 0");
    let _ = writeln!(out, "softirq 0 0 0 0 0 0 0 0 0 0 0");
    Ok(out.into_bytes())
}

pub(super) fn vmstat() -> Result<Vec<u8>> {
    let free = frame::mm::frame_alloc::free_frames();
    let (file_pages, _) = crate::fs::ramfs::page_usage();
    let mut s = String::new();
    let _ = writeln!(s, "nr_free_pages {free}");
    let _ = writeln!(s, "nr_shmem {file_pages}");
    for name in [
        "pgpgin",
        "pgpgout",
        "pswpin",
        "pswpout",
        "pgfault",
        "pgmajfault",
    ] {
        let _ = writeln!(s, "{name} 0");
    }
    Ok(s.into_bytes())
}

/// cpuinfo flag names of CPUID leaf 1 EDX and ECX, by bit.
const FLAGS_1_EDX: [&str; 32] = [
    "fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "", "sep", "mtrr", "pge",
    "mca", "cmov", "pat", "pse36", "pn", "clflush", "", "dts", "acpi", "mmx", "fxsr", "sse",
    "sse2", "ss", "ht", "tm", "ia64", "pbe",
];
const FLAGS_1_ECX: [&str; 32] = [
    "pni",
    "pclmulqdq",
    "dtes64",
    "monitor",
    "ds_cpl",
    "vmx",
    "smx",
    "est",
    "tm2",
    "ssse3",
    "cid",
    "sdbg",
    "fma",
    "cx16",
    "xtpr",
    "pdcm",
    "",
    "pcid",
    "dca",
    "sse4_1",
    "sse4_2",
    "x2apic",
    "movbe",
    "popcnt",
    "tsc_deadline_timer",
    "aes",
    "xsave",
    "",
    "avx",
    "f16c",
    "rdrand",
    "hypervisor",
];
/// Leaf 0x80000001 EDX bits worth naming.
const FLAGS_EXT_EDX: [(u32, &str); 6] = [
    (11, "syscall"),
    (20, "nx"),
    (26, "pdpe1gb"),
    (27, "rdtscp"),
    (29, "lm"),
    (22, "mmxext"),
];
/// Leaf 7 EBX bits worth naming.
const FLAGS_7_EBX: [(u32, &str); 12] = [
    (0, "fsgsbase"),
    (3, "bmi1"),
    (5, "avx2"),
    (7, "smep"),
    (8, "bmi2"),
    (9, "erms"),
    (10, "invpcid"),
    (16, "avx512f"),
    (18, "rdseed"),
    (19, "adx"),
    (20, "smap"),
    (29, "sha_ni"),
];

/// /proc/cpuinfo for the one CPU, from CPUID.
pub(super) fn cpuinfo() -> Result<Vec<u8>> {
    use frame::cpu::cpuid;
    let leaf0 = cpuid(0, 0);
    let mut vendor = Vec::new();
    for r in [leaf0.ebx, leaf0.edx, leaf0.ecx] {
        vendor.extend_from_slice(&r.to_le_bytes());
    }
    let leaf1 = cpuid(1, 0);
    let family_base = (leaf1.eax >> 8) & 0xf;
    let family = if family_base == 0xf {
        family_base + ((leaf1.eax >> 20) & 0xff)
    } else {
        family_base
    };
    let model = ((leaf1.eax >> 4) & 0xf) | (((leaf1.eax >> 16) & 0xf) << 4);
    let mut brand = Vec::new();
    if cpuid(0x8000_0000, 0).eax >= 0x8000_0004 {
        for leaf in 0x8000_0002..=0x8000_0004 {
            let r = cpuid(leaf, 0);
            for v in [r.eax, r.ebx, r.ecx, r.edx] {
                brand.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    let brand = String::from_utf8_lossy(&brand);
    let brand = brand.trim_matches(|c: char| c == '\0' || c == ' ');
    let mut flags: Vec<&str> = Vec::new();
    for (bits, names) in [(leaf1.edx, &FLAGS_1_EDX), (leaf1.ecx, &FLAGS_1_ECX)] {
        flags.extend((0..32).filter(|b| bits & (1 << b) != 0).map(|b| names[b]));
    }
    let ext = cpuid(0x8000_0001, 0).edx;
    flags.extend(
        FLAGS_EXT_EDX
            .iter()
            .filter(|(b, _)| ext & (1 << b) != 0)
            .map(|(_, n)| *n),
    );
    let leaf7 = cpuid(7, 0).ebx;
    flags.extend(
        FLAGS_7_EBX
            .iter()
            .filter(|(b, _)| leaf7 & (1 << b) != 0)
            .map(|(_, n)| *n),
    );
    flags.retain(|f| !f.is_empty());
    let khz = frame::cpu::tsc_hz() / 1000;
    let mhz = format!("{}.{:03}", khz / 1000, khz % 1000);
    let bogo = format!("{}.{:02}", khz * 2 / 1000, (khz * 2 % 1000) / 10);
    let mut s = String::new();
    let _ = writeln!(s, "processor\t: 0");
    let _ = writeln!(s, "vendor_id\t: {}", String::from_utf8_lossy(&vendor));
    let _ = writeln!(s, "cpu family\t: {family}");
    let _ = writeln!(s, "model\t\t: {model}");
    let _ = writeln!(s, "model name\t: {brand}");
    let _ = writeln!(s, "stepping\t: {}", leaf1.eax & 0xf);
    let _ = writeln!(s, "cpu MHz\t\t: {mhz}");
    let _ = writeln!(
        s,
        "physical id\t: 0\nsiblings\t: 1\ncore id\t\t: 0\ncpu cores\t: 1"
    );
    let _ = writeln!(s, "apicid\t\t: 0\ninitial apicid\t: 0");
    let _ = writeln!(s, "fpu\t\t: yes\nfpu_exception\t: yes");
    let _ = writeln!(s, "cpuid level\t: {}\nwp\t\t: yes", leaf0.eax);
    let _ = writeln!(s, "flags\t\t: {}", flags.join(" "));
    let _ = writeln!(s, "bugs\t\t:\nbogomips\t: {bogo}");
    let _ = writeln!(s, "clflush size\t: 64\ncache_alignment\t: 64");
    let _ = writeln!(s, "address sizes\t: 48 bits physical, 48 bits virtual");
    let _ = writeln!(s, "power management:\n");
    Ok(s.into_bytes())
}

/// A random UUID in its text form (random/uuid, random/boot_id).
fn random_uuid() -> String {
    let mut b: [u8; 16] = crate::system::random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let mut s = String::new();
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{byte:02x}");
    }
    s.push('\n');
    s
}

static BOOT_ID: frame::sync::Once<String> = frame::sync::Once::new();

/// /proc/sys: the sysctl values programs commonly read; the tunables
/// of [`crate::sysctl`] are writable by root.
pub(super) const SYS: &[(&str, Node)] = &[
    (
        "debug",
        Node::Dir(&[(
            "failslab",
            Node::Dir(&[
                ("interval", Node::Value(&crate::fallible::INTERVAL)),
                ("probability", Node::Value(&crate::fallible::PROBABILITY)),
                ("times", Node::Value(&crate::fallible::TIMES)),
            ]),
        )]),
    ),
    (
        "fs",
        Node::Dir(&[
            (
                "file-max",
                Node::File(|| String::from("9223372036854775807\n")),
            ),
            ("nr_open", Node::Value(&crate::sysctl::NR_OPEN)),
            ("pipe-max-size", Node::File(|| String::from("1048576\n"))),
            ("protected_hardlinks", Node::Value(&crate::sysctl::PROTECTED_HARDLINKS)),
            ("protected_symlinks", Node::Value(&crate::sysctl::PROTECTED_SYMLINKS)),
        ]),
    ),
    (
        "kernel",
        Node::Dir(&[
            ("cap_last_cap", Node::File(|| String::from("40\n"))),
            // syslog(2) lets anyone read the kernel log (Linux's default).
            ("dmesg_restrict", Node::File(|| String::from("0\n"))),
            ("domainname", Node::File(|| uts_line(&crate::system::domainname()))),
            ("hostname", Node::File(|| uts_line(&crate::system::hostname()))),
            ("msgmax", Node::File(|| format!("{}\n", crate::ipc::msg::MSGMAX))),
            ("msgmnb", Node::File(|| format!("{}\n", crate::ipc::msg::MSGMNB))),
            ("msgmni", Node::File(|| format!("{}\n", crate::ipc::msg::MSGMNI))),
            ("ngroups_max", Node::File(|| String::from("65536\n"))),
            ("osrelease", Node::File(|| format!("{RELEASE}\n"))),
            ("ostype", Node::File(|| String::from("Linux\n"))),
            ("pid_max", Node::Value(&crate::sysctl::PID_MAX)),
            (
                "random",
                Node::Dir(&[
                    (
                        "boot_id",
                        Node::File(|| BOOT_ID.call_once(random_uuid).clone()),
                    ),
                    ("entropy_avail", Node::File(|| String::from("256\n"))),
                    ("poolsize", Node::File(|| String::from("256\n"))),
                    ("uuid", Node::File(random_uuid)),
                ]),
            ),
            ("randomize_va_space", Node::Value(&crate::sysctl::RANDOMIZE_VA_SPACE)),
            (
                "sem",
                Node::File(|| {
                    use crate::ipc::sem::{SEMMNI, SEMMNS, SEMMSL, SEMOPM};
                    format!("{SEMMSL}\t{SEMMNS}\t{SEMOPM}\t{SEMMNI}\n")
                }),
            ),
            ("shmall", Node::File(|| format!("{}\n", crate::ipc::shm::SHMALL))),
            ("shmmax", Node::File(|| format!("{}\n", crate::ipc::shm::SHMMAX))),
            ("shmmni", Node::File(|| format!("{}\n", crate::ipc::shm::SHMMNI))),
            ("threads-max", Node::Value(&crate::sysctl::THREADS_MAX)),
            ("version", Node::File(|| format!("{VERSION}\n"))),
        ]),
    ),
    (
        "vm",
        Node::Dir(&[
            ("max_map_count", Node::File(|| String::from("65530\n"))),
            ("mmap_min_addr", Node::Value(&crate::sysctl::MMAP_MIN_ADDR)),
            ("min_free_kbytes", Node::File(|| format!("{}\n", crate::mm::oom::min_free_kbytes()))),
            ("overcommit_kbytes", Node::Value(&crate::sysctl::OVERCOMMIT_KBYTES)),
            ("overcommit_memory", Node::Value(&crate::sysctl::OVERCOMMIT_MEMORY)),
            ("overcommit_ratio", Node::Value(&crate::sysctl::OVERCOMMIT_RATIO)),
            ("swappiness", Node::File(|| String::from("60\n"))),
        ]),
    ),
];

/// A UTS name as /proc/sys/kernel/{hostname,domainname} show it.
fn uts_line(name: &[u8]) -> String {
    let mut s = String::from_utf8_lossy(name).into_owned();
    s.push('\n');
    s
}

/// /proc/sysvipc: the System V IPC objects, one line each.
pub(super) const SYSVIPC: &[(&str, Node)] = &[
    ("msg", Node::File(crate::ipc::msg::proc_text)),
    ("sem", Node::File(crate::ipc::sem::proc_text)),
    ("shm", Node::File(crate::ipc::shm::proc_text)),
];
