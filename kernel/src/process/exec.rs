//! execve(2): loading an ELF executable (ET_EXEC or PIE, with its program
//! interpreter if it names one) or a `#!` script, and building the initial
//! stack (System V x86-64 ABI §3.4).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use core::sync::atomic::Ordering;

use frame::mm::PAGE_SIZE;
use frame::user::UserContext;

use super::{Process, Thread};
use crate::error::{Errno, Error, Result};
use crate::fs::{FsContext, Inode};
use crate::mm::vmar::{FileBacking, Perms, Vma, STACK_INITIAL, STACK_RESERVE, STACK_SIZE, STACK_TOP};
use crate::mm::Vmar;

/// Load address of a static-PIE executable (Linux's ELF_ET_DYN_BASE).
const PIE_BASE: usize = 0x5555_5555_4000;
/// Largest executable we read (also bounds kernel memory per exec).
const MAX_EXEC_SIZE: usize = 256 * 1024 * 1024;
/// Limits on arguments and environment (execve(2): MAX_ARG_STRLEN, ARG_MAX).
pub const MAX_ARG_STRLEN: usize = 32 * PAGE_SIZE;
pub const ARG_MAX: usize = 2 * 1024 * 1024;
const MAX_SHEBANG_DEPTH: usize = 5;

const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_PAGESZ: u64 = 6;
const AT_BASE: u64 = 7;
const AT_FLAGS: u64 = 8;
const AT_ENTRY: u64 = 9;
const AT_UID: u64 = 11;
const AT_EUID: u64 = 12;
const AT_GID: u64 = 13;
const AT_EGID: u64 = 14;
const AT_PLATFORM: u64 = 15;
const AT_HWCAP: u64 = 16;
const AT_CLKTCK: u64 = 17;
const AT_SECURE: u64 = 23;
const AT_RANDOM: u64 = 25;
const AT_HWCAP2: u64 = 26;
const AT_EXECFN: u64 = 31;
const AT_SYSINFO_EHDR: u64 = 33;
const AT_MINSIGSTKSZ: u64 = 51;

/// A loaded image, ready to replace the caller's.
struct Image {
    vm: Vmar,
    entry: usize,
    rsp: usize,
}

/// Reads a whole file (bounded by the executable size limit).
pub fn read_whole(inode: &Arc<dyn Inode>) -> Result<Vec<u8>> {
    let size = inode.size();
    if size > MAX_EXEC_SIZE {
        return Err(Error::new(Errno::ENOMEM));
    }
    let mut data = crate::fallible::zeroed(size)?;
    let mut done = 0;
    while done < size {
        let n = inode.read_at(done, &mut data[done..])?;
        if n == 0 {
            break;
        }
        done += n;
    }
    crate::fs::mount::touch_atime(&**inode);
    data.truncate(done);
    Ok(data)
}

/// The bytes of a file execve looks at for `#!` (Linux's BINPRM_BUF_SIZE).
const SHEBANG_BUF: usize = 256;

/// Parses a `#!interpreter [arg]` line as Linux's binfmt_script does,
/// within the first [`SHEBANG_BUF`] bytes: the interpreter is the first
/// word after `#!` (ended by a space, tab or NUL), the argument the rest
/// of the line with surrounding blanks trimmed. Without a newline in
/// those bytes the line may be cut short, which is fine for the argument
/// but not for the interpreter: ENOEXEC unless a blank or NUL ends it
/// there. ENOEXEC also for a line without an interpreter.
fn parse_shebang(data: &[u8]) -> Result<(String, Option<String>)> {
    let mut buf = [0u8; SHEBANG_BUF];
    let n = data.len().min(SHEBANG_BUF);
    buf[..n].copy_from_slice(&data[..n]);
    let blank = |b: u8| b == b' ' || b == b'\t';
    let terminator = |b: u8| blank(b) || b == 0;
    // Inclusive searches over [from, to], as Linux's helpers.
    let find = |from: usize, to: usize, pred: &dyn Fn(u8) -> bool| (from..=to).find(|&i| pred(buf[i]));
    let last = SHEBANG_BUF - 1;
    let mut end = match buf.iter().position(|&b| b == b'\n') {
        Some(nl) => nl,
        None => {
            let first = find(2, last, &|b| !blank(b)).ok_or(Error::new(Errno::ENOEXEC))?;
            find(first, last, &terminator).ok_or(Error::with_message(Errno::ENOEXEC, "#! interpreter name too long"))?;
            last
        }
    };
    while end > 2 && blank(buf[end - 1]) {
        end -= 1;
    }
    let name = find(2, end, &|b| !blank(b)).filter(|&i| i < end).ok_or(Error::new(Errno::ENOEXEC))?;
    let sep = find(name, end, &terminator);
    let arg = sep.filter(|&i| buf[i] != 0).and_then(|i| find(i, end, &|b| !blank(b))).filter(|&i| i < end);
    let text = |r: core::ops::Range<usize>| {
        core::str::from_utf8(&buf[r]).map(String::from).map_err(|_| Error::new(Errno::ENOEXEC))
    };
    let interp = text(name..sep.unwrap_or(end).min(end))?;
    let arg = arg.map(|a| text(a..end)).transpose()?;
    Ok((interp, arg))
}

/// Bytes read up front: enough for the ELF and program headers of any
/// sane executable (segments are paged in from the file on demand).
const HEAD_SIZE: usize = 16 * 1024;

/// Reads the first `n` bytes of the file (fewer if it is shorter).
fn read_head(inode: &Arc<dyn Inode>, n: usize) -> Result<Vec<u8>> {
    let mut head = vec![0u8; n.min(inode.size())];
    let mut done = 0;
    while done < head.len() {
        let got = inode.read_at(done, &mut head[done..])?;
        if got == 0 {
            break;
        }
        done += got;
    }
    head.truncate(done);
    Ok(head)
}

/// How execve lays out the new address space.
#[derive(Clone, Copy)]
struct Layout {
    /// RLIMIT_STACK at exec time.
    stack_size: usize,
    /// Address-space layout randomization of the stack, the PIE base, the
    /// mmap base and so the vDSO (personality ADDR_NO_RANDOMIZE off and
    /// kernel.randomize_va_space not 0).
    randomize: bool,
    /// The start of brk randomized too (kernel.randomize_va_space 2).
    randomize_brk: bool,
}

/// personality(2) flag: no address-space layout randomization.
const ADDR_NO_RANDOMIZE: u32 = 0x0004_0000;
/// Bits of randomness in the PIE base and the mmap base, in pages (Linux's
/// default vm.mmap_rnd_bits on x86-64).
const MMAP_RND_BITS: u32 = 28;

/// Bits of randomness in the stack top, in pages (Linux's x86-64
/// STACK_RND_MASK: up to 16 GiB).
const STACK_RND_BITS: u32 = 22;
/// The start of brk moves up by less than this (Linux's
/// arch_randomize_brk: 32 MiB).
const BRK_RND_RANGE: usize = 32 << 20;

fn random_u64() -> u64 {
    u64::from_le_bytes(crate::system::random_bytes::<8>())
}

/// A random page-aligned offset below 2^(MMAP_RND_BITS + 12).
fn random_offset() -> usize {
    ((random_u64() & ((1u64 << MMAP_RND_BITS) - 1)) as usize) * PAGE_SIZE
}

/// Where the stack ends and where its first byte goes: under ASLR the
/// top moves down by random pages and the initial stack pointer by a
/// random 16-byte-aligned amount within 8 KiB (Linux's randomize_stack_top
/// and arch_align_stack).
fn stack_top(randomize: bool) -> (usize, usize) {
    if !randomize {
        return (STACK_TOP, STACK_TOP);
    }
    let r = random_u64();
    let top = STACK_TOP - ((r & ((1u64 << STACK_RND_BITS) - 1)) as usize) * PAGE_SIZE;
    let sp = top - (((r >> 32) as usize % 8192) & !15);
    (top, sp)
}

/// The span `[first page, end of last page)` of an ELF's PT_LOAD
/// segments, relative to its load base.
fn load_span(elf: &elf::ElfFile<'_>) -> Result<(usize, usize)> {
    let mut lo = usize::MAX;
    let mut hi = 0usize;
    for ph in elf.load_segments() {
        let end = ph.vaddr_end().ok_or(Error::new(Errno::ENOEXEC))? as usize;
        lo = lo.min(ph.vaddr as usize & !(PAGE_SIZE - 1));
        hi = hi.max(end.checked_add(PAGE_SIZE - 1).ok_or(Error::new(Errno::ENOEXEC))? & !(PAGE_SIZE - 1));
    }
    if lo >= hi {
        return Err(Error::with_message(Errno::ENOEXEC, "no loadable segment"));
    }
    Ok((lo, hi))
}

/// Maps the PT_LOAD segments of `elf` (the file `inode`) at `base`, private
/// and backed by the file; returns the end of the highest one.
fn map_segments(vm: &Vmar, inode: &Arc<dyn Inode>, elf: &elf::ElfFile<'_>, base: usize, path: Option<Arc<str>>) -> Result<usize> {
    let mut top = 0usize;
    for ph in elf.load_segments() {
        let vaddr = base.checked_add(ph.vaddr as usize).ok_or(Error::new(Errno::ENOEXEC))?;
        let start = vaddr & !(PAGE_SIZE - 1);
        let lead = vaddr - start;
        let end = vaddr
            .checked_add(ph.memsz as usize)
            .and_then(|e| e.checked_add(PAGE_SIZE - 1))
            .map(|e| e & !(PAGE_SIZE - 1))
            .filter(|e| *e <= STACK_TOP - STACK_RESERVE)
            .ok_or(Error::new(Errno::ENOEXEC))?;
        let perms = Perms { read: ph.flags.readable(), write: ph.flags.writable(), exec: ph.flags.executable() };
        let file_offset = (ph.offset as usize).checked_sub(lead).ok_or(Error::new(Errno::ENOEXEC))?;
        let file = FileBacking {
            inode: inode.clone(),
            offset: file_offset,
            len: lead + ph.filesz as usize,
            // None: named in /proc/pid/maps by the process's exe path.
            path: path.clone(),
            writer: None,
        };
        // A segment may share its first page with the previous one; give
        // that page to the earlier segment's area (it holds both contents
        // only if the file offsets line up, which linkers guarantee).
        let vma = Vma { start, end, perms, shared: false, file: Some(file), name: "", shm: None, locked: false, may_write: true, account: false, noreserve: false };
        if vm.add_area(vma.clone()).is_err() {
            let shifted = start + PAGE_SIZE;
            if shifted >= end {
                top = top.max(end);
                continue;
            }
            let mut v = vma;
            v.start = shifted;
            if let Some(f) = v.file.as_mut() {
                f.offset += PAGE_SIZE;
                f.len = f.len.saturating_sub(PAGE_SIZE);
            }
            vm.add_area(v).map_err(|_| Error::with_message(Errno::ENOEXEC, "overlapping segments"))?;
        }
        top = top.max(end);
    }
    Ok(top)
}

/// Loads the program interpreter `path` (PT_INTERP: the dynamic linker)
/// into `vm` below the mmap base; returns its load base and entry point.
/// A missing interpreter is ENOENT, a malformed one ELIBBAD (execve(2)).
fn load_interp(fs: &FsContext, vm: &Vmar, path: &[u8]) -> Result<(usize, usize)> {
    let path = core::str::from_utf8(path).map_err(|_| Error::new(Errno::ENOEXEC))?;
    if path.is_empty() {
        return Err(Error::new(Errno::ENOEXEC));
    }
    let (inode, _) = crate::fs::open_exec_at(fs, fs.cwd(), path, true)?;
    let mut data = read_head(&inode, HEAD_SIZE)?;
    // Linux reads the ELF header first: a shorter file fails that read.
    if data.len() < elf::EHDR_LEN {
        return Err(Error::with_message(Errno::EIO, "program interpreter shorter than an ELF header"));
    }
    let bad = |_| Error::with_message(Errno::ELIBBAD, "malformed program interpreter");
    if elf::parse_prefix(&data, inode.size()) == Err(elf::ElfError::Truncated) {
        data = read_whole(&inode)?;
    }
    let interp = elf::parse_prefix(&data, inode.size()).map_err(bad)?;
    let (lo, hi) = load_span(&interp).map_err(|_| Error::with_message(Errno::ELIBBAD, "interpreter without segments"))?;
    let base = match interp.kind {
        elf::ElfKind::Exec => 0,
        elf::ElfKind::Dyn => {
            let at = vm.free_range(hi - lo).ok_or(Error::new(Errno::ENOMEM))?;
            at - lo
        }
    };
    map_segments(vm, &inode, &interp, base, Some(Arc::from(path)))?;
    let entry = base.checked_add(interp.entry as usize).ok_or(Error::new(Errno::ELIBBAD))?;
    Ok((base, entry))
}

#[allow(clippy::too_many_arguments)]
fn load_elf(
    fs: &FsContext,
    inode: &Arc<dyn Inode>,
    data: &[u8],
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
    execfn: &[u8],
    creds: &super::creds::Credentials,
    secure: bool,
    layout: Layout,
) -> Result<Image> {
    let elf = elf::parse_prefix(data, inode.size()).map_err(|_| Error::with_message(Errno::ENOEXEC, "malformed ELF"))?;
    let base = match elf.kind {
        elf::ElfKind::Exec => 0,
        elf::ElfKind::Dyn if layout.randomize => PIE_BASE + random_offset(),
        elf::ElfKind::Dyn => PIE_BASE,
    };
    let vm = Vmar::new()?;
    let brk = map_segments(&vm, inode, &elf, base, None)?;
    // kernel.randomize_va_space 2: the heap starts a random number of
    // pages above the program.
    let brk = if layout.randomize_brk { brk + ((random_u64() as usize % BRK_RND_RANGE) & !(PAGE_SIZE - 1)) } else { brk };
    vm.init_brk(brk);
    vm.set_stack_limit(layout.stack_size);
    // Under ASLR the mmap base moves down by a random offset (Linux's
    // mmap_base); the interpreter and libraries land below it.
    if layout.randomize {
        vm.set_mmap_top(crate::mm::vmar::MMAP_TOP - random_offset());
    }
    let (stack_end, sp) = stack_top(layout.randomize);
    vm.add_area(Vma {
        start: stack_end - STACK_INITIAL,
        end: stack_end,
        perms: Perms::RW,
        shared: false,
        file: None,
        name: "[stack]",
        shm: None,
        locked: false,
        may_write: true,
        account: false,
        noreserve: false,
    })?;
    let entry = base.checked_add(elf.entry as usize).ok_or(Error::new(Errno::ENOEXEC))?;
    let (interp_base, start) = match elf.interp() {
        Some(path) => load_interp(fs, &vm, path)?,
        None if elf.has_segment(elf::PT_INTERP) => return Err(Error::with_message(Errno::ENOEXEC, "bad PT_INTERP")),
        None => (0, entry),
    };
    let vdso = crate::vdso::map_into(&vm)?;
    let phdr = elf.phdr_vaddr().map_or(0, |p| base as u64 + p);
    let mut aux = alloc::vec![
        (AT_PHDR, phdr),
        (AT_PHENT, 56),
        (AT_PHNUM, u64::from(elf.phnum)),
        (AT_PAGESZ, PAGE_SIZE as u64),
        (AT_BASE, interp_base as u64),
        (AT_FLAGS, 0),
        (AT_ENTRY, entry as u64),
        (AT_UID, u64::from(creds.ruid)),
        (AT_EUID, u64::from(creds.euid)),
        (AT_GID, u64::from(creds.rgid)),
        (AT_EGID, u64::from(creds.egid)),
        (AT_HWCAP, crate::system::hwcap()),
        (AT_HWCAP2, 0),
        (AT_CLKTCK, 100),
        (AT_SECURE, u64::from(secure)),
        (AT_MINSIGSTKSZ, super::signal_frame::MAX_FRAME_SIZE),
    ];
    if let Some(ehdr) = vdso {
        aux.push((AT_SYSINFO_EHDR, ehdr as u64));
    }
    let rsp = build_stack(&vm, sp, argv, envp, execfn, &aux)?;
    Ok(Image { vm, entry: start, rsp })
}

/// Writes strings, auxv, envp, argv and argc below `sp`.
fn build_stack(vm: &Vmar, sp: usize, argv: &[Vec<u8>], envp: &[Vec<u8>], execfn: &[u8], aux: &[(u64, u64)]) -> Result<usize> {
    let mut sp = sp;
    let mut push_bytes = |bytes: &[u8], nul: bool| -> Result<usize> {
        sp -= bytes.len() + usize::from(nul);
        vm.write_bytes(sp, bytes)?;
        if nul {
            vm.write_bytes(sp + bytes.len(), &[0])?;
        }
        Ok(sp)
    };
    let execfn_addr = push_bytes(execfn, true)?;
    let mut env_ptrs = Vec::with_capacity(envp.len());
    for e in envp.iter().rev() {
        env_ptrs.push(push_bytes(e, true)? as u64);
    }
    env_ptrs.reverse();
    let env_start = env_ptrs.first().map_or(execfn_addr, |p| *p as usize);
    let mut arg_ptrs = Vec::with_capacity(argv.len());
    for a in argv.iter().rev() {
        arg_ptrs.push(push_bytes(a, true)? as u64);
    }
    arg_ptrs.reverse();
    let arg_start = arg_ptrs.first().map_or(env_start, |p| *p as usize);
    vm.set_arg_env((arg_start, env_start), (env_start, execfn_addr));
    let platform = push_bytes(b"x86_64", true)?;
    let random = push_bytes(&crate::system::random_bytes::<16>(), false)?;

    let mut words: Vec<u64> = Vec::new();
    words.push(arg_ptrs.len() as u64);
    words.extend_from_slice(&arg_ptrs);
    words.push(0);
    words.extend_from_slice(&env_ptrs);
    words.push(0);
    for &(k, v) in aux {
        words.extend_from_slice(&[k, v]);
    }
    words.extend_from_slice(&[AT_PLATFORM, platform as u64, AT_RANDOM, random as u64, AT_EXECFN, execfn_addr as u64]);
    words.extend_from_slice(&[AT_NULL, 0]);
    vm.set_auxv(words[arg_ptrs.len() + env_ptrs.len() + 3..].to_vec());
    // argc must sit at a 16-byte-aligned address.
    let mut top = sp & !15;
    top -= words.len() * 8;
    top &= !15;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    vm.write_bytes(top, &bytes)?;
    Ok(top)
}

fn check_args(argv: &[Vec<u8>], envp: &[Vec<u8>]) -> Result<()> {
    let mut total = 0usize;
    for s in argv.iter().chain(envp) {
        if s.len() + 1 > MAX_ARG_STRLEN {
            return Err(Error::new(Errno::E2BIG));
        }
        total += s.len() + 1 + 8;
    }
    if total > ARG_MAX {
        return Err(Error::new(Errno::E2BIG));
    }
    Ok(())
}

/// The credentials a program runs with (credentials(7), execve(2)): a
/// set-user-ID file makes its owner the effective user, a set-group-ID
/// one (with group execute) its group the effective group, unless the
/// file system is nosuid or the process set no_new_privs; the saved and
/// file-system ids follow the effective ones. Also whether the change
/// makes it a secure execution (AT_SECURE).
fn exec_creds(
    inode: &Arc<dyn Inode>,
    creds: &super::creds::Credentials,
    no_new_privs: bool,
) -> (super::creds::Credentials, bool) {
    let meta = inode.metadata();
    let mut c = creds.clone();
    if !no_new_privs && crate::fs::mount::allows_suid(inode) {
        if meta.perm & 0o4000 != 0 {
            c.euid = meta.uid;
        }
        if meta.perm & 0o2010 == 0o2010 {
            c.egid = meta.gid;
        }
    }
    c.suid = c.euid;
    c.fsuid = c.euid;
    c.sgid = c.egid;
    c.fsgid = c.egid;
    c.caps_for_exec();
    let secure = c.euid != c.ruid || c.egid != c.rgid;
    (c, secure)
}

/// The file an execve starts from, already checked for execution.
pub struct ExecFile {
    pub inode: Arc<dyn Inode>,
    /// The name it is executed under (Linux's bprm->filename): AT_EXECFN,
    /// and what an interpreter gets as the script's path.
    pub filename: String,
    /// Its absolute path, for /proc/pid/exe.
    pub exe: String,
    /// The process name (comm) it gives.
    pub comm: String,
    /// `filename` is /dev/fd/N of a close-on-exec descriptor, gone by the
    /// time an interpreter would open it: a script fails with ENOENT.
    pub inaccessible: bool,
}

impl ExecFile {
    /// The file `path` names from the cwd (execve(2)).
    pub fn from_path(fs: &FsContext, path: &str) -> Result<ExecFile> {
        let (inode, found) = crate::fs::open_exec_at(fs, fs.cwd(), path, true)?;
        Ok(Self::from_path_found(fs, inode, path, found))
    }

    /// The file `inode` that `path` led to, found under `found` (see
    /// `fs::open_exec_at`); executed under the name `path`.
    pub fn from_path_found(fs: &FsContext, inode: Arc<dyn Inode>, path: &str, found: Option<String>) -> ExecFile {
        ExecFile {
            inode,
            filename: String::from(path),
            // A magic link (/proc/self/exe) names no directory entry:
            // resolve it by its text instead.
            exe: found
                .or_else(|| crate::fs::canonical_path(fs, fs.cwd(), path).ok())
                .unwrap_or_else(|| absolute_path(fs, path)),
            comm: String::from(basename(path)),
            inaccessible: false,
        }
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The credentials and root/cwd an execve by `process` resolves paths with
/// (its file-system ids).
pub fn exec_fs(process: &Process) -> FsContext {
    let creds = process.creds();
    let cred = creds.fs_cred();
    process.fs().lock().clone().with_cred(cred)
}

/// What `load` produced: the image, and the program's exe path and name.
struct Loaded {
    image: Image,
    exe: String,
    comm: String,
    creds: super::creds::Credentials,
}

/// Loads the program in `file`, following `#!` lines.
fn load(
    fs: &FsContext,
    file: ExecFile,
    mut argv: Vec<Vec<u8>>,
    envp: &[Vec<u8>],
    creds: &super::creds::Credentials,
    no_new_privs: bool,
    layout: Layout,
) -> Result<Loaded> {
    let ExecFile { mut inode, filename, mut exe, comm, mut inaccessible } = file;
    // The name of the file at hand: the script an interpreter is given.
    let mut name = filename.clone();
    for depth in 0..=MAX_SHEBANG_DEPTH {
        if depth > 0 {
            let (next, found) = crate::fs::open_exec_at(fs, fs.cwd(), &name, true)?;
            inode = next;
            exe = found.unwrap_or_else(|| absolute_path(fs, &name));
        }
        // A file open for writing cannot be run (ETXTBSY); the program's
        // stays unwritable while the new address space runs it.
        let deny = crate::fs::DenyWrite::get(&*inode)?;
        let mut data = read_head(&inode, HEAD_SIZE)?;
        if !data.starts_with(b"#!") && elf::parse_prefix(&data, inode.size()) == Err(elf::ElfError::Truncated) {
            // Headers beyond the first read: fall back to the whole file.
            data = read_whole(&inode)?;
        }
        if data.starts_with(b"#!") {
            if inaccessible {
                return Err(Error::with_message(Errno::ENOENT, "script from a close-on-exec descriptor"));
            }
            let (interp, arg) = parse_shebang(&data)?;
            // argv becomes: interp [arg] script argv[1..]
            let mut new_argv = vec![interp.clone().into_bytes()];
            if let Some(a) = arg {
                new_argv.push(a.into_bytes());
            }
            new_argv.push(core::mem::take(&mut name).into_bytes());
            new_argv.extend(argv.into_iter().skip(1));
            argv = new_argv;
            name = interp;
            inaccessible = false;
            continue;
        }
        check_args(&argv, envp)?;
        let (new_creds, secure) = exec_creds(&inode, creds, no_new_privs);
        let image = load_elf(fs, &inode, &data, &argv, envp, filename.as_bytes(), &new_creds, secure, layout)?;
        image.vm.set_exe_deny_write(deny);
        return Ok(Loaded { image, exe, comm, creds: new_creds });
    }
    Err(Error::new(Errno::ELOOP))
}

fn commit(process: &Arc<Process>, thread: &Thread, image: Image, exe: String, comm: &str, user: &mut UserContext) {
    let old = process.replace_vm(Arc::new(image.vm));
    drop(old);
    *user = UserContext::new();
    user.set_rip(image.entry as u64);
    user.set_rsp(image.rsp as u64);
    // One descriptor per turn of the lock: closing allocates nothing.
    let files = process.files();
    let mut next = 0;
    loop {
        let taken = files.lock().take_next_cloexec(next);
        let Some((fd, file)) = taken else { break };
        crate::fs::lock::release_posix(process.pid(), &**file.node());
        drop(file);
        next = fd + 1;
    }
    process.signals.reset_for_exec();
    *thread.signals.altstack.lock() = (0, super::signal::SS_DISABLE, 0);
    process.did_exec.store(true, Ordering::Relaxed);
    // Loading a 64-bit ELF clears READ_IMPLIES_EXEC (Linux's
    // set_personality_64bit); the rest of the personality stays.
    process.personality.fetch_and(!READ_IMPLIES_EXEC, Ordering::Relaxed);
    process.set_name(comm);
    process.set_exe(exe);
    thread.clear_child_tid.store(0, Ordering::Relaxed);
    super::fork::release_vfork_parent(process);
}

/// execve(2) of `file` (resolved with `fs`, see [`exec_fs`]). On success
/// the caller's registers are those of the new program; on failure
/// nothing has changed.
pub fn execve(
    process: &Arc<Process>,
    thread: &Thread,
    user: &mut UserContext,
    fs: &FsContext,
    file: ExecFile,
    argv: Vec<Vec<u8>>,
    envp: Vec<Vec<u8>>,
) -> Result<()> {
    let creds = process.creds();
    let nnp = process.no_new_privs.load(Ordering::Relaxed);
    let loaded = load(fs, file, argv, &envp, &creds, nnp, layout(process))?;
    de_thread(process, thread)?;
    // Robust futexes the caller holds are left by their owner, and the
    // new program registers its own list (Linux's futex_exec_release).
    let head = thread.robust_list.swap(0, Ordering::AcqRel);
    if head != 0 {
        super::futex::exit_robust_list(&process.vm(), head as usize, thread.tid());
    }
    // A descriptor table shared with CLONE_FILES relatives is copied first
    // (Linux's unshare_files), so close-on-exec only closes ours.
    process.unshare_files()?;
    let new_creds = loaded.creds;
    commit(process, thread, loaded.image, loaded.exe, &loaded.comm, user);
    if new_creds.euid != creds.euid || new_creds.egid != creds.egid {
        // A privilege change: not dumpable, no parent-death signal (prctl(2)).
        process.dumpable.store(0, Ordering::Relaxed);
        process.pdeathsig.store(0, Ordering::Relaxed);
    } else {
        process.dumpable.store(1, Ordering::Relaxed);
    }
    process.set_creds(new_creds);
    process.exec_takeover.store(false, Ordering::Release);
    Ok(())
}

/// Makes `thread` the only thread of `process` (Linux's de_thread): every
/// other thread is killed and waited for, and the caller takes over the
/// thread-group id as its tid. Fails only if the process is dying, or
/// another thread is exec'ing first (which kills the caller).
fn de_thread(process: &Arc<Process>, thread: &Thread) -> Result<()> {
    let dying = || process.exit_status().is_some() || thread.exiting.load(Ordering::Acquire);
    if process.exec_takeover.swap(true, Ordering::AcqRel) {
        // The other exec'er marks us exiting; wait for that or its end.
        process.threads_changed.wait_until(|| (dying() || !process.exec_takeover.load(Ordering::Acquire)).then_some(()));
        return Err(Error::new(Errno::EAGAIN));
    }
    let is_me = |t: &Arc<Thread>| core::ptr::eq(&**t, thread);
    loop {
        for t in process.threads().iter().filter(|t| !is_me(t) && !t.exiting.load(Ordering::Acquire)) {
            t.exiting.store(true, Ordering::Release);
            super::exit::clear_child_tid(process, t);
            t.wake();
        }
        // Done once alone; back to the loop if a thread was created meanwhile.
        let done = process.threads_changed.wait_until(|| {
            let threads = process.threads();
            if dying() || threads.iter().all(is_me) {
                return Some(true);
            }
            threads.iter().any(|t| !is_me(t) && !t.exiting.load(Ordering::Acquire)).then_some(false)
        });
        if done {
            break;
        }
    }
    if dying() {
        process.exec_takeover.store(false, Ordering::Release);
        process.threads_changed.wake_all();
        return Err(Error::new(Errno::EAGAIN));
    }
    thread.set_tid(process.pid());
    Ok(())
}

/// personality(2) flag: PROT_READ implies PROT_EXEC.
const READ_IMPLIES_EXEC: u32 = 0x0040_0000;

/// Creates the init process running `argv` (pid 1).
pub fn load_init(argv: Vec<Vec<u8>>, envp: Vec<Vec<u8>>) -> Result<()> {
    let path = String::from_utf8(argv.first().cloned().unwrap_or_default()).map_err(|_| Error::new(Errno::EINVAL))?;
    let fs = FsContext::default();
    let file = ExecFile::from_path(&fs, &path)?;
    let loaded = load(&fs, file, argv, &envp, &Default::default(), false, Layout { stack_size: STACK_SIZE, randomize: randomize_va_space() >= 1, randomize_brk: randomize_va_space() >= 2 })?;
    let (image, exe) = (loaded.image, loaded.exe);
    let vm = Arc::new(image.vm);
    let files = super::SharedFiles::new(crate::fs::FileTable::new_with_console());
    let process = Process::new(
        alloc::sync::Weak::new(),
        vm,
        files,
        Arc::new(frame::sync::Mutex::new(fs)),
        super::signal::SignalState::new(),
        None,
        super::alloc_pid()?,
    );
    // Linux's fork_init: init's RLIMIT_NPROC and RLIMIT_SIGPENDING are half
    // of kernel.threads-max, and every process inherits them.
    {
        use super::rlimit::{RLimit, RLIMIT_NPROC, RLIMIT_SIGPENDING};
        let half = crate::sysctl::THREADS_MAX.get() / 2;
        let mut limits = process.rlimits.lock();
        limits.0[RLIMIT_NPROC] = RLimit { cur: half, max: half };
        limits.0[RLIMIT_SIGPENDING] = RLimit { cur: half, max: half };
    }
    process.set_name(path.rsplit('/').next().unwrap_or(&path));
    process.set_exe(exe);
    let mut user = UserContext::new();
    user.set_rip(image.entry as u64);
    user.set_rsp(image.rsp as u64);
    super::spawn_user_thread(&process, process.pid(), user)?;
    Ok(())
}

/// The usable stack: RLIMIT_STACK, at most the reserved area.
fn stack_size(process: &Process) -> usize {
    let cur = process.rlimits.lock().0[super::rlimit::RLIMIT_STACK].cur;
    (cur.min(STACK_RESERVE as u64) as usize).max(128 * 1024) & !(PAGE_SIZE - 1)
}

/// kernel.randomize_va_space: 0 off, 1 stack, mmap, PIE and vDSO, 2
/// also brk.
fn randomize_va_space() -> u64 {
    crate::sysctl::RANDOMIZE_VA_SPACE.get()
}

/// The layout execve gives `process`'s new image.
fn layout(process: &Process) -> Layout {
    let no_rnd = process.personality.load(Ordering::Relaxed) & ADDR_NO_RANDOMIZE != 0;
    let level = if no_rnd { 0 } else { randomize_va_space() };
    Layout { stack_size: stack_size(process), randomize: level >= 1, randomize_brk: level >= 2 }
}

/// `path` made absolute against the working directory of `fs`.
fn absolute_path(fs: &FsContext, path: &str) -> String {
    if path.starts_with('/') {
        return String::from(path);
    }
    match crate::fs::path_of(fs, fs.cwd()) {
        Ok(cwd) if cwd == "/" => alloc::format!("/{path}"),
        Ok(cwd) => alloc::format!("{cwd}/{path}"),
        Err(_) => String::from(path),
    }
}
