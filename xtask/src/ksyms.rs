//! Fills the kernel's `.ksyms` section with a symbol table for backtraces.
//!
//! Blob layout (all little-endian):
//! `b"KSYM"`, `u32 count`, `count` entries `{u64 addr, u32 name_offset,
//! u32 name_len}` sorted by address, then the names back to back (offsets are
//! relative to the start of the names). Zero padding up to the section size.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Context, Res, run_quiet};

pub const SECTION: &str = ".ksyms";
const MAGIC: &[u8; 4] = b"KSYM";
const HEADER: usize = 8;
const ENTRY: usize = 16;
/// Names are not cut shorter than this before whole symbols are dropped.
const MIN_NAME: usize = 24;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sym {
    pub addr: u64,
    pub name: String,
}

/// Text symbols (`t`, `T`, `W`, `w`) from `nm -C --defined-only -n` output.
/// Demangled names may contain spaces, so the name is the rest of the line.
pub fn parse_nm(out: &str) -> Vec<Sym> {
    let mut syms = Vec::new();
    for line in out.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !matches!(kind, "t" | "T" | "W" | "w") || name.is_empty() {
            continue;
        }
        if let Ok(addr) = u64::from_str_radix(addr, 16) {
            syms.push(Sym {
                addr,
                name: name.to_string(),
            });
        }
    }
    syms.sort_by_key(|s| s.addr);
    syms
}

/// The finished section contents plus what had to be given up to fit.
#[derive(Debug)]
pub struct Blob {
    pub bytes: Vec<u8>,
    pub count: usize,
    pub truncated: usize,
    pub dropped: usize,
}

/// Serialises `syms` (sorted by address) into exactly `size` bytes,
/// truncating long names and then dropping the longest-named symbols if the
/// table does not fit.
pub fn build_blob(syms: &[Sym], size: usize) -> Res<Blob> {
    if size < HEADER {
        return Err(format!(
            "{SECTION} is {size} bytes, too small for the header"
        ));
    }
    let need = |syms: &[&Sym], cap: usize| -> usize {
        HEADER
            + syms
                .iter()
                .map(|s| ENTRY + s.name.len().min(cap))
                .sum::<usize>()
    };
    let mut kept: Vec<&Sym> = syms.iter().collect();
    let longest = kept.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut cap = longest;
    if need(&kept, cap) > size {
        // Largest cap that fits (need() grows with cap), but at least MIN_NAME.
        let (mut lo, mut hi) = (MIN_NAME.min(longest), longest);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if need(&kept, mid) <= size {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        cap = lo;
    }
    let mut dropped = 0;
    if need(&kept, cap) > size {
        // Drop the symbols with the longest names until the rest fits.
        let mut order: Vec<usize> = (0..kept.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(kept[i].name.len()));
        let mut total = need(&kept, cap);
        let mut gone = vec![false; kept.len()];
        for i in order {
            if total <= size {
                break;
            }
            total -= ENTRY + kept[i].name.len().min(cap);
            gone[i] = true;
            dropped += 1;
        }
        let mut flags = gone.into_iter();
        kept.retain(|_| !flags.next().unwrap_or(false));
    }
    let mut names = Vec::new();
    let mut bytes = Vec::with_capacity(size);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    let mut truncated = 0;
    for s in &kept {
        let name = truncate(&s.name, cap);
        truncated += usize::from(name.len() < s.name.len());
        bytes.extend_from_slice(&s.addr.to_le_bytes());
        bytes.extend_from_slice(&(names.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
        names.extend_from_slice(name.as_bytes());
    }
    bytes.extend_from_slice(&names);
    debug_assert!(bytes.len() <= size);
    bytes.resize(size, 0);
    Ok(Blob {
        bytes,
        count: kept.len(),
        truncated,
        dropped,
    })
}

/// `s` cut to at most `max` bytes on a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The size of section `name` in `readelf -S --wide` output.
pub fn section_size(readelf: &str, name: &str) -> Option<u64> {
    readelf.lines().find_map(|line| {
        let (_, rest) = line.split_once(']')?;
        let mut cols = rest.split_whitespace();
        if cols.next()? != name {
            return None;
        }
        // Type, Address, Off, Size.
        let size = cols.nth(3)?;
        u64::from_str_radix(size, 16).ok()
    })
}

/// Fills `.ksyms` of `elf` and returns the image to boot: `<elf>.sym`, or
/// `elf` itself if it has no `.ksyms` section.
pub fn embed(elf: &Path) -> Res<PathBuf> {
    let readelf = run_quiet(Command::new("readelf").args(["-S", "--wide"]).arg(elf))?;
    let Some(size) = section_size(&readelf, SECTION) else {
        eprintln!(
            "xtask: warning: {} has no {SECTION} section; booting it without a symbol table",
            elf.display()
        );
        return Ok(elf.to_path_buf());
    };
    let nm = run_quiet(
        Command::new("nm")
            .args(["-C", "--defined-only", "-n"])
            .arg(elf),
    )?;
    let syms = parse_nm(&nm);
    let size = usize::try_from(size).map_err(|_| format!("{SECTION} is too large"))?;
    let blob = build_blob(&syms, size)?;
    eprintln!(
        "xtask: {SECTION}: {} symbols in {size} bytes -> {}",
        blob.count,
        out_name(elf).display()
    );
    if blob.truncated > 0 || blob.dropped > 0 {
        eprintln!(
            "xtask: warning: {SECTION} ({size} bytes) is too small for {} symbols: \
             truncated {} names, dropped {} symbols",
            syms.len(),
            blob.truncated,
            blob.dropped
        );
    }
    let blob_path = with_suffix(elf, ".ksyms.bin");
    std::fs::write(&blob_path, &blob.bytes).ctx(|| format!("writing {}", blob_path.display()))?;
    let out = out_name(elf);
    let mut update = std::ffi::OsString::from(format!("{SECTION}="));
    update.push(&blob_path);
    run_quiet(
        Command::new("objcopy")
            .arg("--update-section")
            .arg(update)
            .arg(elf)
            .arg(&out),
    )?;
    Ok(out)
}

fn out_name(elf: &Path) -> PathBuf {
    with_suffix(elf, ".sym")
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(addr: u64, name: &str) -> Sym {
        Sym {
            addr,
            name: name.into(),
        }
    }

    /// Decodes a blob back into symbols.
    fn decode(b: &[u8]) -> Vec<Sym> {
        assert_eq!(&b[..4], MAGIC);
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
        let count = u32_at(4);
        let names = HEADER + count * ENTRY;
        (0..count)
            .map(|i| {
                let e = HEADER + i * ENTRY;
                let addr = u64::from_le_bytes(b[e..e + 8].try_into().unwrap());
                let (off, len) = (u32_at(e + 8), u32_at(e + 12));
                let name = std::str::from_utf8(&b[names + off..names + off + len]).unwrap();
                sym(addr, name)
            })
            .collect()
    }

    #[test]
    fn nm_parsing_keeps_text_symbols_sorted() {
        let out = "\
ffffffff80000000 T _start
ffffffff80000100 t <alloc::vec::Vec<T> as core::ops::drop::Drop>::drop
ffffffff80000050 W weak_one
ffffffff80200000 R SOME_RODATA
ffffffff80300000 B __bss_start
ffffffff80000080 w other_weak
garbage line
";
        let syms = parse_nm(out);
        let names: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "_start",
                "weak_one",
                "other_weak",
                "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"
            ]
        );
        assert_eq!(syms[3].addr, 0xffff_ffff_8000_0100);
    }

    #[test]
    fn blob_layout() {
        let syms = [sym(0x1000, "a"), sym(0x2000, "bcd")];
        let blob = build_blob(&syms, 64).unwrap();
        let b = &blob.bytes;
        assert_eq!(b.len(), 64);
        assert_eq!(&b[..8], b"KSYM\x02\0\0\0");
        assert_eq!(&b[8..16], &0x1000u64.to_le_bytes());
        assert_eq!(&b[16..24], &[0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(&b[24..32], &0x2000u64.to_le_bytes());
        assert_eq!(&b[32..40], &[1, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(&b[40..44], b"abcd");
        assert!(b[44..].iter().all(|&x| x == 0));
        assert_eq!(decode(b), syms);
        assert_eq!((blob.truncated, blob.dropped), (0, 0));
    }

    #[test]
    fn long_names_are_truncated_to_fit() {
        let long = "x".repeat(100);
        let syms = [sym(1, &long), sym(2, "short"), sym(3, &long)];
        // Header + 3 entries = 56; room for 5 + 2 * 40 name bytes.
        let blob = build_blob(&syms, 56 + 85).unwrap();
        assert_eq!(blob.bytes.len(), 141);
        assert_eq!((blob.truncated, blob.dropped), (2, 0));
        let back = decode(&blob.bytes);
        assert_eq!(back[0].name, "x".repeat(40));
        assert_eq!(back[1].name, "short");
    }

    #[test]
    fn symbols_are_dropped_when_truncation_is_not_enough() {
        let long = "y".repeat(200);
        let syms = [sym(1, "a"), sym(2, &long), sym(3, "b")];
        let blob = build_blob(&syms, 8 + 32 + 2).unwrap();
        assert_eq!(blob.dropped, 1);
        assert_eq!(decode(&blob.bytes), [sym(1, "a"), sym(3, "b")]);
        assert!(build_blob(&syms, 4).is_err());
        let empty = build_blob(&syms, 8).unwrap();
        assert_eq!(empty.count, 0);
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate("aé", 2), "a");
        assert_eq!(truncate("abc", 10), "abc");
    }

    /// Builds a tiny ELF with a `.ksyms` section using the host binutils,
    /// fills it and reads the section back.
    #[test]
    fn embed_into_a_real_elf() {
        if !["as", "ld", "nm", "readelf", "objcopy"]
            .iter()
            .all(|t| crate::util::on_path(t))
        {
            eprintln!("binutils missing; skipping");
            return;
        }
        let dir = std::env::temp_dir().join(format!("xtask-ksyms-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("k.s");
        std::fs::write(
            &src,
            ".text\n.globl _start\n_start: nop\nhelper: nop\nret\n\
             .section .ksyms,\"a\"\n.fill 256,1,0xaa\n",
        )
        .unwrap();
        let (obj, elf) = (dir.join("k.o"), dir.join("k"));
        run_quiet(Command::new("as").arg(&src).arg("-o").arg(&obj)).unwrap();
        run_quiet(Command::new("ld").arg(&obj).arg("-o").arg(&elf)).unwrap();
        let out = embed(&elf).unwrap();
        assert_eq!(out, dir.join("k.sym"));
        let section = dir.join("section.bin");
        run_quiet(
            Command::new("objcopy")
                .args(["-O", "binary", "--only-section=.ksyms"])
                .arg(&out)
                .arg(&section),
        )
        .unwrap();
        let bytes = std::fs::read(&section).unwrap();
        let original = std::fs::read(&elf).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(bytes.len(), 256);
        let syms = decode(&bytes);
        let names: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["_start", "helper"]);
        assert_eq!(syms[1].addr, syms[0].addr + 1);
        assert!(bytes[8 + 2 * 16 + 12..].iter().all(|&b| b == 0));
        // The original ELF is kept unchanged.
        assert!(original.windows(16).any(|w| w == [0xaa; 16]));
    }

    #[test]
    fn readelf_section_size() {
        let out = "\
Section Headers:
  [Nr] Name              Type            Address          Off    Size   ES Flg Lk Inf Al
  [ 0]                   NULL            0000000000000000 000000 000000 00      0   0  0
  [ 1] .text             PROGBITS        ffffffff80000000 001000 0123ab 00  AX  0   0 16
  [12] .ksyms            PROGBITS        ffffffff80400000 401000 100000 00   A  0   0  8
";
        assert_eq!(section_size(out, ".ksyms"), Some(0x100000));
        assert_eq!(section_size(out, ".text"), Some(0x123ab));
        assert_eq!(section_size(out, ".data"), None);
    }
}
