//! The generated files of a process directory, in the formats proc(5)
//! gives: stat, status, statm, cmdline, environ, comm, maps, limits,
//! mounts, mountinfo.

use alloc::format;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::fmt::Write;

use super::pid::{Target, may_access};
use crate::error::Result;
use crate::fs::inode::{dev_major, dev_minor};
use crate::mm::Vmar;
use crate::process::rlimit::RLIM_NLIMITS;
use crate::process::{Process, Thread};

/// Clock ticks per second as user space sees them (USER_HZ).
const USER_HZ: u64 = 100;
const PAGE: usize = 4096;
/// Longest command name (TASK_COMM_LEN without the NUL).
const COMM_MAX: usize = 15;

fn ticks(ns: u64) -> u64 {
    ns / (1_000_000_000 / USER_HZ)
}

fn comm_of(p: &Process) -> String {
    let mut name = p.name();
    if name.len() > COMM_MAX {
        let mut end = COMM_MAX;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

/// The thread a per-thread file describes: the given one, else the main
/// thread.
fn thread_of(p: &Process, t: Target) -> Option<Arc<Thread>> {
    let threads = p.threads();
    let want = t.tid.unwrap_or(t.pid);
    threads
        .iter()
        .find(|th| th.tid() == want)
        .or(threads.first())
        .cloned()
}

/// The state letter: per thread in task directories.
fn state_char(p: &Process, thread: Option<&Arc<Thread>>, t: Target) -> char {
    let process_state = p.state_char();
    if t.tid.is_none() || matches!(process_state, 'Z' | 'T') {
        return process_state;
    }
    let task = thread.and_then(|th| th.task.get().and_then(Weak::upgrade));
    match task.map(|k| k.state()) {
        Some(frame::task::TaskState::Runnable) => 'R',
        Some(frame::task::TaskState::Sleeping) => 'S',
        _ => 'Z',
    }
}

fn state_name(c: char) -> &'static str {
    match c {
        'R' => "R (running)",
        'S' => "S (sleeping)",
        'T' => "T (stopped)",
        'Z' => "Z (zombie)",
        _ => "D (disk sleep)",
    }
}

/// Sizes of an address space, in bytes unless named pages.
#[derive(Default)]
struct VmStats {
    size: usize,
    rss_pages: usize,
    hiwater_pages: usize,
    data: usize,
    stack: usize,
    exe: usize,
    start_code: usize,
    end_code: usize,
    start_stack: usize,
    brk: (usize, usize),
    args: (usize, usize),
    env: (usize, usize),
}

/// The address space's sizes; all zero for a zombie, whose memory is gone.
fn vm_stats(p: &Process) -> VmStats {
    if p.exit_status().is_some() {
        return VmStats::default();
    }
    let vm = p.vm();
    let mut s = VmStats::default();
    for a in vm.areas() {
        let len = a.end - a.start;
        s.size += len;
        if a.name == "[stack]" {
            s.stack += len;
        } else if a.perms.write && !a.shared {
            s.data += len;
        }
        if a.perms.exec && a.file.is_some() {
            s.exe += len;
            if s.start_code == 0 {
                s.start_code = a.start;
            }
            s.end_code = a.end;
        }
    }
    s.rss_pages = vm.rss_pages();
    s.hiwater_pages = vm.hiwater_pages();
    s.brk = vm.brk_range();
    (s.args, s.env) = vm.arg_env();
    s.start_stack = s.args.0;
    s
}

/// Signal sets as (pending, blocked, ignored, caught).
fn signal_sets(p: &Process, thread: Option<&Arc<Thread>>) -> (u64, u64, u64, u64) {
    let shared = p.signals.shared.lock().mask();
    let (own, blocked) = thread.map_or((0, 0), |t| {
        let own = t.signals.pending.lock().mask();
        (own, t.sigmask.load(core::sync::atomic::Ordering::Relaxed))
    });
    let (mut ignored, mut caught) = (0u64, 0u64);
    for sig in 1..=64usize {
        match p.signals.action(sig).handler {
            0 => {}
            1 => ignored |= 1 << (sig - 1),
            _ => caught |= 1 << (sig - 1),
        }
    }
    (shared | own, blocked, ignored, caught)
}

/// /proc/pid/stat: the 52 fields of proc(5), in order.
pub(super) fn stat(t: Target) -> Result<String> {
    let p = t.process()?;
    let thread = thread_of(&p, t);
    let vm = vm_stats(&p);
    let state = state_char(&p, thread.as_ref(), t);
    // A thread's own usage under task/, the whole process's otherwise;
    // the children's part is the process's either way (as Linux).
    let usage = match (t.tid, thread.as_ref()) {
        (Some(_), Some(th)) => th.usage(),
        _ => p.self_usage(),
    };
    let children = p.children_usage();
    let (pending, blocked, ignored, caught) = signal_sets(&p, thread.as_ref());
    let nice = i64::from(p.nice());
    let exit_code = p.exit_status().unwrap_or(0);
    let (tty_nr, tpgid) = crate::tty::terminal::stat_fields(p.sid());
    let mut s = String::new();
    let _ = write!(
        s,
        "{} ({}) {} {} {} {} {} {} 4194560 {} {} {} {} {} {} {} {} {} {} {} 0 {} {} {} {} ",
        t.tid.unwrap_or(t.pid),
        comm_of(&p),
        state,
        p.ppid(),
        p.pgid(),
        p.sid(),
        tty_nr,
        tpgid,
        usage.minflt,
        children.minflt,
        usage.majflt,
        children.majflt,
        ticks(usage.utime_ns),
        ticks(usage.stime_ns),
        ticks(children.utime_ns),
        ticks(children.stime_ns),
        20 + nice,
        nice,
        p.threads().len().max(1),
        ticks(p.start_ns()),
        vm.size,
        vm.rss_pages,
        u64::MAX,
    );
    // startcode endcode startstack kstkesp kstkeip signal blocked sigignore
    // sigcatch wchan nswap cnswap exit_signal processor rt_priority policy
    // delayacct_blkio_ticks guest_time cguest_time start_data end_data
    // start_brk arg_start arg_end env_start env_end exit_code
    let _ = writeln!(
        s,
        "{} {} {} 0 0 {} {} {} {} 0 0 0 17 0 0 0 0 0 0 {} {} {} {} {} {} {} {}",
        vm.start_code,
        vm.end_code,
        vm.start_stack,
        pending & 0x7fff_ffff,
        blocked & 0x7fff_ffff,
        ignored & 0x7fff_ffff,
        caught & 0x7fff_ffff,
        vm.brk.0,
        vm.brk.0,
        vm.brk.0,
        vm.args.0,
        vm.args.1,
        vm.env.0,
        vm.env.1,
        exit_code,
    );
    Ok(s)
}

/// /proc/pid/statm: sizes in pages (size resident shared text lib data dt).
pub(super) fn statm(t: Target) -> Result<String> {
    let p = t.process()?;
    let vm = vm_stats(&p);
    let text = format!(
        "{} {} 0 {} 0 {} 0\n",
        vm.size / PAGE,
        vm.rss_pages,
        vm.exe / PAGE,
        (vm.data + vm.stack) / PAGE
    );
    Ok(text)
}

/// /proc/pid/status: the human-readable summary.
pub(super) fn status(t: Target) -> Result<String> {
    let p = t.process()?;
    let thread = thread_of(&p, t);
    let c = p.creds();
    let state = state_char(&p, thread.as_ref(), t);
    let umask = p.fs().lock().umask();
    let fd_size = p.files().lock().max_fds();
    let mut s = String::new();
    let _ = writeln!(s, "Name:\t{}", comm_of(&p));
    let _ = writeln!(s, "Umask:\t{umask:04o}");
    let _ = writeln!(s, "State:\t{}", state_name(state));
    let _ = writeln!(s, "Tgid:\t{}", p.pid());
    let _ = writeln!(s, "Ngid:\t0");
    let _ = writeln!(s, "Pid:\t{}", t.tid.unwrap_or(t.pid));
    let _ = writeln!(s, "PPid:\t{}", p.ppid());
    let _ = writeln!(s, "TracerPid:\t0");
    let _ = writeln!(s, "Uid:\t{}\t{}\t{}\t{}", c.ruid, c.euid, c.suid, c.fsuid);
    let _ = writeln!(s, "Gid:\t{}\t{}\t{}\t{}", c.rgid, c.egid, c.sgid, c.fsgid);
    let _ = writeln!(s, "FDSize:\t{fd_size}");
    let _ = write!(s, "Groups:\t");
    for g in &c.groups {
        let _ = write!(s, "{g} ");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "NStgid:\t{}", p.pid());
    let _ = writeln!(s, "NSpid:\t{}", t.tid.unwrap_or(t.pid));
    let _ = writeln!(s, "NSpgid:\t{}", p.pgid());
    let _ = writeln!(s, "NSsid:\t{}", p.sid());
    if p.exit_status().is_none() {
        let vm = vm_stats(&p);
        let kb = |bytes: usize| bytes / 1024;
        let rss = kb(vm.rss_pages * PAGE);
        for (name, v) in [
            ("VmPeak", kb(vm.size)),
            ("VmSize", kb(vm.size)),
            ("VmLck", kb(p.vm().locked_bytes())),
            ("VmPin", 0),
            ("VmHWM", kb(vm.hiwater_pages * PAGE)),
            ("VmRSS", rss),
            ("RssAnon", rss),
            ("RssFile", 0),
            ("RssShmem", 0),
            ("VmData", kb(vm.data)),
            ("VmStk", kb(vm.stack)),
            ("VmExe", kb(vm.exe)),
            ("VmLib", 0),
            ("VmPTE", 0),
            ("VmSwap", 0),
        ] {
            let _ = writeln!(s, "{name}:\t{v:>8} kB");
        }
    }
    let (pending, blocked, ignored, caught) = signal_sets(&p, thread.as_ref());
    let shared = p.signals.shared.lock().mask();
    let _ = writeln!(s, "Threads:\t{}", p.threads().len().max(1));
    let _ = writeln!(s, "SigQ:\t0/{}", RLIMIT_SIGPENDING_DEFAULT);
    let _ = writeln!(s, "SigPnd:\t{:016x}", pending & !shared);
    let _ = writeln!(s, "ShdPnd:\t{shared:016x}");
    let _ = writeln!(s, "SigBlk:\t{blocked:016x}");
    let _ = writeln!(s, "SigIgn:\t{ignored:016x}");
    let _ = writeln!(s, "SigCgt:\t{caught:016x}");
    let _ = writeln!(s, "CapInh:\t{:016x}", c.cap_inheritable);
    let _ = writeln!(s, "CapPrm:\t{:016x}", c.cap_permitted);
    let _ = writeln!(s, "CapEff:\t{:016x}", c.cap_effective);
    let _ = writeln!(s, "CapBnd:\t{:016x}", crate::process::creds::CAP_FULL);
    let _ = writeln!(s, "CapAmb:\t{:016x}", 0);
    let nnp = p.no_new_privs.load(core::sync::atomic::Ordering::Relaxed);
    let _ = writeln!(s, "NoNewPrivs:\t{}", u8::from(nnp));
    let _ = writeln!(s, "Seccomp:\t0");
    let _ = writeln!(s, "Cpus_allowed:\t1");
    let _ = writeln!(s, "Cpus_allowed_list:\t0");
    let _ = writeln!(s, "Mems_allowed:\t1");
    let _ = writeln!(s, "Mems_allowed_list:\t0");
    // Like Linux, the counts of the task described: the thread, or for
    // /proc/pid/status the thread-group leader (here: the first thread).
    let task = thread.clone().or_else(|| p.threads().first().cloned());
    let u = task.map(|t| t.usage()).unwrap_or_default();
    let _ = writeln!(s, "voluntary_ctxt_switches:\t{}", u.nvcsw);
    let _ = writeln!(s, "nonvoluntary_ctxt_switches:\t{}", u.nivcsw);
    Ok(s)
}

/// What SigQ reports as the queue limit.
const RLIMIT_SIGPENDING_DEFAULT: u32 = 3_934;

/// Bytes `[start, end)` of the address space, as far as they are readable.
fn read_range(vm: &Vmar, (start, end): (usize, usize)) -> Vec<u8> {
    let len = end.saturating_sub(start).min(crate::process::ARG_MAX);
    let mut buf = alloc::vec![0u8; len];
    match vm.read_bytes(start, &mut buf) {
        Ok(()) => buf,
        Err(_) => Vec::new(),
    }
}

/// /proc/pid/cmdline: the argument strings, NUL-terminated (empty for a
/// zombie).
pub(super) fn cmdline(t: Target) -> Result<Vec<u8>> {
    let p = t.process()?;
    if p.exit_status().is_some() {
        return Ok(Vec::new());
    }
    let vm = p.vm();
    let (args, _) = vm.arg_env();
    Ok(read_range(&vm, args))
}

/// /proc/pid/auxv: the auxiliary vector the program was started with,
/// as native-endian (key, value) words ending with AT_NULL.
pub(super) fn auxv(t: Target) -> Result<Vec<u8>> {
    let p = t.process()?;
    may_access(&p)?;
    if p.exit_status().is_some() {
        return Ok(Vec::new());
    }
    Ok(p.vm().auxv().iter().flat_map(|w| w.to_ne_bytes()).collect())
}

/// /proc/pid/environ: the environment strings (owner or root only).
pub(super) fn environ(t: Target) -> Result<Vec<u8>> {
    let p = t.process()?;
    may_access(&p)?;
    if p.exit_status().is_some() {
        return Ok(Vec::new());
    }
    let vm = p.vm();
    let (_, env) = vm.arg_env();
    Ok(read_range(&vm, env))
}

pub(super) fn comm(t: Target) -> Result<String> {
    let p = t.process()?;
    Ok(format!("{}\n", comm_of(&p)))
}

/// A write to /proc/pid/comm: renames the process, which must be the
/// caller's own (EINVAL otherwise, as Linux's comm_write); the name is cut
/// at a newline and to 15 bytes.
pub(super) fn set_comm(t: Target, data: &[u8]) -> Result<()> {
    let p = t.process()?;
    let (me, _) = super::caller()?;
    if !Arc::ptr_eq(&me, &p) {
        return Err(crate::error::Error::new(crate::error::Errno::EINVAL));
    }
    let line = data.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let name = crate::fs::name::from_user(line.iter().copied().take(COMM_MAX).collect());
    p.set_name(&name);
    Ok(())
}

/// /proc/pid/make-it-fail: 1 if fault injection may fail the process's
/// allocations (crate::fallible).
pub(super) fn make_it_fail(t: Target) -> Result<Vec<u8>> {
    let p = t.process()?;
    Ok(if p.make_it_fail() {
        b"1\n".to_vec()
    } else {
        b"0\n".to_vec()
    })
}

/// A write of 0 or 1 (EINVAL otherwise); root only, as Linux asks for
/// CAP_SYS_RESOURCE.
pub(super) fn set_make_it_fail(t: Target, data: &[u8]) -> Result<()> {
    let p = t.process()?;
    let (me, _) = super::caller()?;
    if !me.creds().capable(crate::caps::CAP_SYS_RESOURCE) {
        return Err(crate::error::Error::new(crate::error::Errno::EPERM));
    }
    let text = core::str::from_utf8(data)
        .map_err(|_| crate::error::Error::new(crate::error::Errno::EINVAL))?;
    match text.trim() {
        "0" => p.set_make_it_fail(false),
        "1" => {
            crate::fallible::restart_count();
            p.set_make_it_fail(true);
        }
        _ => return Err(crate::error::Error::new(crate::error::Errno::EINVAL)),
    }
    Ok(())
}

/// /proc/pid/oom_score: the badness the OOM killer would give it.
pub(super) fn oom_score(t: Target) -> Result<String> {
    let p = t.process()?;
    Ok(alloc::format!("{}\n", crate::mm::oom::oom_score(&p)))
}

/// /proc/pid/oom_score_adj.
pub(super) fn oom_score_adj(t: Target) -> Result<String> {
    let p = t.process()?;
    Ok(alloc::format!("{}\n", p.oom_score_adj.load(core::sync::atomic::Ordering::Relaxed)))
}

/// A write to /proc/pid/oom_score_adj (proc(5)): one number in
/// -1000..=1000 (EINVAL otherwise). Going below the lowest value a
/// privileged writer set (0 until then) needs privilege (EACCES, Linux's
/// CAP_SYS_RESOURCE rule); a privileged write sets that lowest value.
pub(super) fn set_oom_score_adj(t: Target, data: &[u8]) -> Result<()> {
    use crate::error::{Errno, Error};
    use crate::mm::oom::{OOM_SCORE_ADJ_MAX, OOM_SCORE_ADJ_MIN};
    use core::sync::atomic::Ordering;
    let p = t.process()?;
    let (me, _) = super::caller()?;
    let text = core::str::from_utf8(data).map_err(|_| Error::new(Errno::EINVAL))?;
    let v: i32 = text.trim().parse().map_err(|_| Error::new(Errno::EINVAL))?;
    if !(OOM_SCORE_ADJ_MIN..=OOM_SCORE_ADJ_MAX).contains(&v) {
        return Err(Error::new(Errno::EINVAL));
    }
    let privileged = me.creds().capable(crate::caps::CAP_SYS_RESOURCE);
    if v < p.oom_score_adj_min.load(Ordering::Relaxed) && !privileged {
        return Err(Error::new(Errno::EACCES));
    }
    p.oom_score_adj.store(v, Ordering::Relaxed);
    if privileged {
        p.oom_score_adj_min.store(v, Ordering::Relaxed);
    }
    Ok(())
}

/// /proc/pid/maps: one line per area; file mappings show the device and
/// inode, and the path when it is the program itself.
pub(super) fn maps(t: Target) -> Result<String> {
    let p = t.process()?;
    if p.exit_status().is_some() {
        return Ok(String::new());
    }
    let exe = p.exe();
    let exe_node = {
        let fs = p.fs().lock().clone();
        crate::fs::path::lookup_text_only(&fs, fs.root(), &exe).ok()
    };
    let mut s = String::new();
    for a in p.vm().areas() {
        let (offset, dev, ino, mut name) = match &a.file {
            Some(f) => {
                let m = f.inode.metadata();
                let is_exe = exe_node
                    .as_ref()
                    .is_some_and(|e| crate::fs::inode::same_inode(e, &f.inode));
                let name = match &f.path {
                    _ if is_exe => exe.clone(),
                    Some(path) if m.nlink == 0 => alloc::format!("{path} (deleted)"),
                    Some(path) => String::from(&**path),
                    None => String::new(),
                };
                (f.offset, m.dev, m.ino, name)
            }
            None => (0, 0, 0, String::from(a.name)),
        };
        if name.is_empty() && !a.name.is_empty() {
            name = String::from(a.name);
        }
        let line_start = s.len();
        let _ = write!(
            s,
            "{:08x}-{:08x} {}{}{}{} {:08x} {:02x}:{:02x} {} ",
            a.start,
            a.end,
            if a.perms.read { 'r' } else { '-' },
            if a.perms.write { 'w' } else { '-' },
            if a.perms.exec { 'x' } else { '-' },
            if a.shared { 's' } else { 'p' },
            offset,
            dev_major(dev),
            dev_minor(dev),
            ino
        );
        if !name.is_empty() {
            // Names start in column 73, as Linux pads them.
            while s.len() - line_start < 72 {
                s.push(' ');
            }
            s.push(' ');
            s.push_str(&name);
        }
        s.push('\n');
    }
    Ok(s)
}

/// /proc/pid/limits: the resource limits as a table.
pub(super) fn limits(t: Target) -> Result<String> {
    const NAMES: [(&str, &str); RLIM_NLIMITS] = [
        ("Max cpu time", "seconds"),
        ("Max file size", "bytes"),
        ("Max data size", "bytes"),
        ("Max stack size", "bytes"),
        ("Max core file size", "bytes"),
        ("Max resident set", "bytes"),
        ("Max processes", "processes"),
        ("Max open files", "files"),
        ("Max locked memory", "bytes"),
        ("Max address space", "bytes"),
        ("Max file locks", "locks"),
        ("Max pending signals", "signals"),
        ("Max msgqueue size", "bytes"),
        ("Max nice priority", ""),
        ("Max realtime priority", ""),
        ("Max realtime timeout", "us"),
    ];
    let p = t.process()?;
    let limits = p.rlimits.lock().0;
    let mut s = format!(
        "{:<25} {:<20} {:<20} {:<10}\n",
        "Limit", "Soft Limit", "Hard Limit", "Units"
    );
    let show = |v: u64| {
        if v == u64::MAX {
            String::from("unlimited")
        } else {
            format!("{v}")
        }
    };
    for ((name, unit), l) in NAMES.iter().zip(limits.iter()) {
        let _ = writeln!(
            s,
            "{:<25} {:<20} {:<20} {:<10}",
            name,
            show(l.cur),
            show(l.max),
            unit
        );
    }
    Ok(s)
}
