use super::*;
use proptest::prelude::*;
use std::vec;
use std::vec::Vec;

/// A program header to write into a test image.
#[derive(Debug, Clone, Copy)]
struct Ph {
    p_type: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

const fn ph(p_type: u32, flags: u32, offset: u64, vaddr: u64, filesz: u64, memsz: u64) -> Ph {
    Ph {
        p_type,
        flags,
        offset,
        vaddr,
        filesz,
        memsz,
        align: 0x1000,
    }
}

/// Offsets of header fields that tests poke at.
const E_TYPE: usize = 16;
const E_MACHINE: usize = 18;
const E_VERSION: usize = 20;
const E_PHOFF: usize = 32;
const E_PHENTSIZE: usize = 54;
const E_PHNUM: usize = 56;

fn put(buf: &mut [u8], off: usize, bytes: &[u8]) {
    buf[off..off + bytes.len()].copy_from_slice(bytes);
}

/// Build an ELF64 x86-64 image byte by byte: the file header, the program
/// headers right after it (phoff = 64), and a body filled with a position
/// pattern, long enough to hold every segment's file bytes.
fn image(e_type: u16, entry: u64, phdrs: &[Ph]) -> Vec<u8> {
    let table_end = EHDR_LEN + PHDR_LEN * phdrs.len();
    let body_end = phdrs
        .iter()
        .map(|p| (p.offset + p.filesz) as usize)
        .max()
        .unwrap_or(0);
    let len = table_end.max(body_end);
    let mut b: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();

    put(&mut b, 0, &ELF_MAGIC);
    put(&mut b, 4, &[ELFCLASS64, ELFDATA2LSB, EV_CURRENT, 0]);
    put(&mut b, 8, &[0; 8]); // EI_ABIVERSION + padding
    put(&mut b, E_TYPE, &e_type.to_le_bytes());
    put(&mut b, E_MACHINE, &EM_X86_64.to_le_bytes());
    put(&mut b, E_VERSION, &1u32.to_le_bytes());
    put(&mut b, 24, &entry.to_le_bytes());
    put(&mut b, E_PHOFF, &(EHDR_LEN as u64).to_le_bytes());
    put(&mut b, 40, &0u64.to_le_bytes()); // e_shoff
    put(&mut b, 48, &0u32.to_le_bytes()); // e_flags
    put(&mut b, 52, &(EHDR_LEN as u16).to_le_bytes());
    put(&mut b, E_PHENTSIZE, &(PHDR_LEN as u16).to_le_bytes());
    put(&mut b, E_PHNUM, &(phdrs.len() as u16).to_le_bytes());
    put(&mut b, 58, &[0; 6]); // no section headers

    for (i, p) in phdrs.iter().enumerate() {
        let at = EHDR_LEN + PHDR_LEN * i;
        put(&mut b, at, &p.p_type.to_le_bytes());
        put(&mut b, at + 4, &p.flags.to_le_bytes());
        put(&mut b, at + 8, &p.offset.to_le_bytes());
        put(&mut b, at + 16, &p.vaddr.to_le_bytes());
        put(&mut b, at + 24, &p.vaddr.to_le_bytes()); // p_paddr
        put(&mut b, at + 32, &p.filesz.to_le_bytes());
        put(&mut b, at + 40, &p.memsz.to_le_bytes());
        put(&mut b, at + 48, &p.align.to_le_bytes());
    }
    b
}

/// Program headers of a typical small static executable.
fn exec_phdrs() -> Vec<Ph> {
    let mut phdr = ph(PT_PHDR, PF_R, 64, 0x40_0040, 56 * 5, 56 * 5);
    phdr.align = 8;
    let mut stack = ph(PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
    stack.align = 16;
    vec![
        phdr,
        ph(PT_LOAD, PF_R, 0, 0x40_0000, 0x200, 0x200),
        ph(PT_LOAD, PF_R | PF_X, 0x1000, 0x40_1000, 0x100, 0x100),
        ph(PT_LOAD, PF_R | PF_W, 0x1100, 0x40_2100, 0x20, 0x1000),
        stack,
    ]
}

fn exec_image() -> Vec<u8> {
    image(ET_EXEC, 0x40_1000, &exec_phdrs())
}

/// A static-PIE style image based at 0 with an interpreter.
fn dyn_phdrs() -> Vec<Ph> {
    let mut interp = ph(PT_INTERP, PF_R, 0x200, 0x200, 28, 28);
    interp.align = 1;
    vec![
        interp,
        ph(PT_LOAD, PF_R | PF_X, 0, 0, 0x300, 0x300),
        ph(PT_LOAD, PF_R | PF_W, 0x300, 0x1300, 0x40, 0x80),
    ]
}

fn dyn_image() -> Vec<u8> {
    let mut b = image(ET_DYN, 0x120, &dyn_phdrs());
    put(&mut b, 0x200, b"/lib64/ld-linux-x86-64.so.2\0");
    b
}

/// Rewrite one program header of an already built image.
fn set_ph(buf: &mut [u8], index: usize, p: Ph) {
    let at = EHDR_LEN + PHDR_LEN * index;
    put(buf, at, &p.p_type.to_le_bytes());
    put(buf, at + 4, &p.flags.to_le_bytes());
    put(buf, at + 8, &p.offset.to_le_bytes());
    put(buf, at + 16, &p.vaddr.to_le_bytes());
    put(buf, at + 32, &p.filesz.to_le_bytes());
    put(buf, at + 40, &p.memsz.to_le_bytes());
    put(buf, at + 48, &p.align.to_le_bytes());
}

/// Parse an exec image whose load segment `index` (1..=3) is replaced.
fn with_load(index: usize, f: impl FnOnce(&mut Ph)) -> Result<(), ElfError> {
    let mut phdrs = exec_phdrs();
    f(&mut phdrs[index]);
    let mut b = exec_image();
    set_ph(&mut b, index, phdrs[index]);
    parse(&b).map(|_| ())
}

#[test]
fn valid_exec() {
    let b = exec_image();
    let elf = parse(&b).unwrap();
    assert_eq!(elf.kind, ElfKind::Exec);
    assert_eq!(elf.entry, 0x40_1000);
    assert_eq!((elf.phoff, elf.phentsize, elf.phnum), (64, 56, 5));
    assert_eq!(elf.data().len(), b.len());

    let phs: Vec<ProgramHeader> = elf.program_headers().collect();
    assert_eq!(phs.len(), 5);
    assert_eq!(phs[0].p_type, PT_PHDR);
    let text = phs[2];
    assert!(text.is_load());
    assert!(text.flags.readable() && text.flags.executable() && !text.flags.writable());
    assert_eq!(
        (text.offset, text.vaddr, text.filesz, text.memsz, text.align),
        (0x1000, 0x40_1000, 0x100, 0x100, 0x1000)
    );
    assert_eq!(text.vaddr_end(), Some(0x40_1100));
    let data = phs[3];
    assert!(data.flags.writable() && !data.flags.executable());

    assert_eq!(elf.load_segments().count(), 3);
    assert_eq!(elf.interp(), None);
    assert_eq!(elf.phdr_vaddr(), Some(0x40_0040));
    assert_eq!(elf.program_header(4).map(|p| p.p_type), Some(PT_GNU_STACK));
    assert_eq!(elf.program_header(5), None);

    // segment_data returns exactly filesz bytes from offset; bss is not
    // in the file.
    let bytes = elf.segment_data(&data).unwrap();
    assert_eq!(bytes, &b[0x1100..0x1120]);
    assert_eq!(elf.segment_data(&phs[4]).unwrap(), &[] as &[u8]);
}

#[test]
fn valid_dyn_with_interp() {
    let b = dyn_image();
    let elf = parse(&b).unwrap();
    assert_eq!(elf.kind, ElfKind::Dyn);
    assert_eq!(elf.entry, 0x120);
    assert_eq!(elf.interp(), Some(&b"/lib64/ld-linux-x86-64.so.2"[..]));
    // No PT_PHDR: the table at file offset 64 lies in the first PT_LOAD
    // (offset 0, vaddr 0).
    assert_eq!(elf.phdr_vaddr(), Some(64));
    assert_eq!(elf.load_segments().count(), 2);
}

#[test]
fn interp_without_nul() {
    let mut b = dyn_image();
    put(&mut b, 0x200 + 27, b"X");
    let elf = parse(&b).unwrap();
    assert_eq!(elf.interp(), Some(&b"/lib64/ld-linux-x86-64.so.2X"[..]));
}

#[test]
fn interp_outside_file_is_rejected() {
    let mut b = dyn_image();
    let mut interp = dyn_phdrs()[0];
    interp.offset = b.len() as u64;
    set_ph(&mut b, 0, interp);
    assert_eq!(parse(&b), Err(ElfError::BadSegment));
}

#[test]
fn phdr_vaddr_computed_from_load() {
    // Replace PT_PHDR by PT_NOTE: the table (offset 64) is in the first
    // PT_LOAD at vaddr 0x400000.
    let mut b = exec_image();
    let mut p = exec_phdrs()[0];
    p.p_type = PT_NOTE;
    set_ph(&mut b, 0, p);
    assert_eq!(parse(&b).unwrap().phdr_vaddr(), Some(0x40_0040));

    // If no PT_LOAD covers the whole table, there is no answer.
    let mut load = exec_phdrs()[1];
    load.filesz = 100;
    set_ph(&mut b, 1, load);
    assert_eq!(parse(&b).unwrap().phdr_vaddr(), None);
}

#[test]
fn not_elf() {
    assert_eq!(parse(&[]), Err(ElfError::Truncated));
    assert_eq!(parse(b"\x7fEL"), Err(ElfError::Truncated));
    assert_eq!(parse(b"\x7fELF"), Err(ElfError::Truncated));
    assert_eq!(parse(b"MZ"), Err(ElfError::NotElf));
    assert_eq!(parse(b"#!/bin/sh\n"), Err(ElfError::NotElf));
    for i in 0..4 {
        let mut b = exec_image();
        b[i] ^= 0x20;
        assert_eq!(parse(&b), Err(ElfError::NotElf));
    }
}

#[test]
fn unsupported_identity() {
    let cases: &[(usize, &[u8])] = &[
        (4, &[1]),                          // ELFCLASS32
        (4, &[0]),                          // ELFCLASSNONE
        (5, &[2]),                          // big-endian
        (6, &[0]),                          // EI_VERSION
        (E_TYPE, &1u16.to_le_bytes()),      // ET_REL
        (E_TYPE, &4u16.to_le_bytes()),      // ET_CORE
        (E_TYPE, &0u16.to_le_bytes()),      // ET_NONE
        (E_MACHINE, &3u16.to_le_bytes()),   // EM_386
        (E_MACHINE, &183u16.to_le_bytes()), // EM_AARCH64
        (E_VERSION, &0u32.to_le_bytes()),
        (E_VERSION, &2u32.to_le_bytes()),
    ];
    for &(off, bytes) in cases {
        let mut b = exec_image();
        put(&mut b, off, bytes);
        assert_eq!(parse(&b), Err(ElfError::Unsupported), "offset {off}");
    }
}

#[test]
fn osabi_is_not_checked() {
    let mut b = exec_image();
    b[7] = 3; // ELFOSABI_GNU
    assert!(parse(&b).is_ok());
}

#[test]
fn bad_program_header_table() {
    let phentsize = |v: u16| {
        let mut b = exec_image();
        put(&mut b, E_PHENTSIZE, &v.to_le_bytes());
        parse(&b).map(|_| ())
    };
    for v in [0, 32, 55, 57, 64] {
        assert_eq!(phentsize(v), Err(ElfError::BadProgramHeaders), "{v}");
    }

    let phnum = |v: u16| {
        let mut b = exec_image();
        put(&mut b, E_PHNUM, &v.to_le_bytes());
        parse(&b).map(|_| ())
    };
    assert_eq!(phnum(0), Err(ElfError::BadProgramHeaders));
    assert_eq!(phnum(MAX_PHNUM + 1), Err(ElfError::BadProgramHeaders));
    assert_eq!(phnum(0xffff), Err(ElfError::BadProgramHeaders)); // PN_XNUM
    // Fewer headers than written is fine as long as a PT_LOAD remains.
    assert!(phnum(2).is_ok());
    assert_eq!(phnum(1), Err(ElfError::BadProgramHeaders)); // only PT_PHDR

    let phoff = |v: u64| {
        let mut b = exec_image();
        put(&mut b, E_PHOFF, &v.to_le_bytes());
        parse(&b).map(|_| ())
    };
    assert_eq!(phoff(u64::MAX), Err(ElfError::BadProgramHeaders));
    assert_eq!(phoff(u64::MAX - 100), Err(ElfError::BadProgramHeaders));
    assert_eq!(phoff(1 << 40), Err(ElfError::Truncated));
    let len = exec_image().len() as u64;
    assert_eq!(phoff(len - 56 * 5 + 1), Err(ElfError::Truncated));
}

#[test]
fn many_program_headers_up_to_the_limit() {
    let mut phdrs = vec![ph(PT_LOAD, PF_R, 0, 0x40_0000, 0x40, 0x40)];
    phdrs.resize(MAX_PHNUM as usize, ph(PT_NOTE, PF_R, 0, 0, 0, 0));
    let b = image(ET_EXEC, 0x40_0000, &phdrs);
    let elf = parse(&b).unwrap();
    assert_eq!(elf.program_headers().count(), MAX_PHNUM as usize);
}

#[test]
fn no_load_segment() {
    let b = image(ET_EXEC, 0, &[ph(PT_NOTE, PF_R, 0, 0, 0, 0)]);
    assert_eq!(parse(&b), Err(ElfError::BadProgramHeaders));
}

#[test]
fn load_filesz_above_memsz() {
    assert_eq!(with_load(3, |p| p.memsz = 0x10), Err(ElfError::BadSegment));
    // Equal is fine.
    assert_eq!(with_load(3, |p| p.memsz = p.filesz), Ok(()));
}

#[test]
fn load_outside_file() {
    assert_eq!(with_load(3, |p| p.filesz = 0x21), Err(ElfError::BadSegment));
    assert_eq!(
        with_load(3, |p| p.offset = u64::MAX - 0x10),
        Err(ElfError::BadSegment)
    );
    // Even an empty file range must start inside the file.
    assert_eq!(
        with_load(2, |p| {
            p.offset = 0x2000;
            p.vaddr = 0x40_2000;
            p.filesz = 0;
        }),
        Err(ElfError::BadSegment)
    );
    assert_eq!(
        with_load(2, |p| p.filesz = 0x121),
        Err(ElfError::BadSegment)
    );
    // Ending exactly at the end of the file is fine.
    assert_eq!(with_load(3, |p| p.filesz = 0x20), Ok(()));
}

#[test]
fn load_address_range() {
    assert_eq!(
        with_load(3, |p| {
            p.vaddr = u64::MAX - 0xeff;
            p.offset = 0x1100;
        }),
        Err(ElfError::BadSegment)
    );
    // Kernel half.
    assert_eq!(
        with_load(3, |p| p.vaddr = 0xffff_8000_0000_2100),
        Err(ElfError::BadSegment)
    );
    // Crossing USER_END.
    assert_eq!(
        with_load(3, |p| p.vaddr = USER_END - 0xf00),
        Err(ElfError::BadSegment)
    );
    // Ending exactly at USER_END is allowed.
    assert_eq!(
        with_load(3, |p| {
            p.vaddr = USER_END - 0xf00;
            p.memsz = 0xf00;
        }),
        Ok(())
    );
}

#[test]
fn load_alignment() {
    // Not a power of two.
    assert_eq!(
        with_load(2, |p| p.align = 0x1001),
        Err(ElfError::BadSegment)
    );
    assert_eq!(with_load(2, |p| p.align = 3), Err(ElfError::BadSegment));
    // offset and vaddr not congruent modulo align.
    assert_eq!(
        with_load(3, |p| p.vaddr = 0x40_2000),
        Err(ElfError::BadSegment)
    );
    // A larger power-of-two alignment with a congruent address is fine.
    assert_eq!(
        with_load(3, |p| {
            p.align = 0x20_0000;
            p.vaddr = 0x60_1100;
        }),
        Ok(())
    );
    // align 0 and 1 impose nothing.
    for a in [0, 1] {
        assert_eq!(
            with_load(3, |p| {
                p.align = a;
                p.vaddr = 0x40_2123;
            }),
            Ok(())
        );
    }
}

#[test]
fn loads_must_be_sorted_and_disjoint() {
    // Overlaps the text segment.
    assert_eq!(
        with_load(3, |p| {
            p.vaddr = 0x40_1000 + 0x80;
            p.offset = 0x1080;
            p.filesz = 0x20;
            p.align = 0x80;
        }),
        Err(ElfError::BadSegment)
    );
    // Below the previous segment.
    assert_eq!(
        with_load(3, |p| p.vaddr = 0x30_0100),
        Err(ElfError::BadSegment)
    );
    // Directly adjacent is fine.
    assert_eq!(
        with_load(3, |p| {
            p.vaddr = 0x40_1100;
            p.align = 0x100;
        }),
        Ok(())
    );
}

#[test]
fn non_load_segments_are_not_validated() {
    // Garbage in a PT_NOTE or PT_GNU_STACK does not matter to the loader.
    let mut b = exec_image();
    set_ph(
        &mut b,
        4,
        Ph {
            p_type: PT_NOTE,
            flags: 0,
            offset: u64::MAX,
            vaddr: u64::MAX,
            filesz: u64::MAX,
            memsz: 0,
            align: 3,
        },
    );
    let elf = parse(&b).unwrap();
    let note = elf.program_header(4).unwrap();
    assert_eq!(elf.segment_data(&note), Err(ElfError::BadSegment));
}

#[test]
fn tampered_fields_do_not_panic() {
    let b = exec_image();
    let mut elf = parse(&b).unwrap();
    elf.phnum = u16::MAX;
    assert_eq!(
        elf.program_headers().count(),
        5 + (b.len() - 64 - 5 * 56) / 56
    );
    elf.phoff = u64::MAX;
    assert_eq!(elf.program_headers().count(), 0);
    assert_eq!(elf.phdr_vaddr(), None);
    assert_eq!(elf.interp(), None);
    elf.phentsize = 0;
    assert_eq!(elf.program_headers().count(), 0);
    elf.phentsize = u16::MAX;
    elf.phoff = 64;
    assert_eq!(elf.program_headers().count(), 1);
}

#[test]
fn truncation_at_every_length() {
    for img in [exec_image(), dyn_image()] {
        for len in 0..img.len() {
            let r = parse(&img[..len]);
            assert!(r.is_err(), "prefix of len {len} parsed");
            if len < EHDR_LEN {
                assert_eq!(r, Err(ElfError::Truncated), "len {len}");
            }
        }
        assert!(parse(&img).is_ok());
    }
}

/// Exercise every accessor of a parsed file; none may panic.
fn exercise(elf: &ElfFile<'_>) {
    for ph in elf.program_headers() {
        let _ = elf.segment_data(&ph);
        let _ = ph.vaddr_end();
    }
    for ph in elf.load_segments() {
        // Validation guarantees these for every PT_LOAD.
        assert!(elf.segment_data(&ph).is_ok());
        assert!(ph.filesz <= ph.memsz);
        assert!(ph.vaddr_end().is_some_and(|e| e <= USER_END));
    }
    let _ = elf.interp();
    let _ = elf.phdr_vaddr();
}

#[test]
fn host_busybox() {
    const PATH: &str = "/bin/busybox";
    let Ok(bytes) = std::fs::read(PATH) else {
        std::println!("note: {PATH} not found, skipping the real-binary test");
        return;
    };
    let elf = parse(&bytes).expect("busybox parses");
    assert!(elf.load_segments().count() >= 1);
    assert!(elf.phdr_vaddr().is_some());
    exercise(&elf);
    std::println!(
        "busybox: {:?}, entry {:#x}, {} PT_LOADs, interp {:?}",
        elf.kind,
        elf.entry,
        elf.load_segments().count(),
        elf.interp().map(std::string::String::from_utf8_lossy)
    );
}

fn arb_ph() -> impl Strategy<Value = Ph> {
    let small = || prop_oneof![0u64..0x3000, any::<u64>(), Just(u64::MAX)];
    (
        prop_oneof![Just(PT_LOAD), Just(PT_INTERP), Just(PT_PHDR), any::<u32>()],
        any::<u32>(),
        small(),
        prop_oneof![0u64..0x100_0000, any::<u64>(), Just(USER_END - 0x1000)],
        small(),
        small(),
        prop_oneof![Just(0u64), Just(1), Just(0x1000), any::<u64>()],
    )
        .prop_map(|(p_type, flags, offset, vaddr, filesz, memsz, align)| Ph {
            p_type,
            flags,
            offset,
            vaddr,
            filesz,
            memsz,
            align,
        })
}

proptest! {
    // Cheap cases: run more of them than proptest's default 256.
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(elf) = parse(&data) {
            exercise(&elf);
        }
    }

    #[test]
    fn random_bytes_after_valid_ident_never_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut data = exec_image()[..E_PHOFF].to_vec();
        data.extend_from_slice(&tail);
        if let Ok(elf) = parse(&data) {
            exercise(&elf);
        }
    }

    #[test]
    fn mutations_never_panic(
        dyn_img in any::<bool>(),
        edits in proptest::collection::vec((0usize..400, any::<u8>()), 1..10),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = if dyn_img { dyn_image() } else { exec_image() };
        // Edits are concentrated on the headers, where they matter.
        for (i, v) in edits {
            let i = i % b.len();
            b[i] = v;
        }
        if let Ok(elf) = parse(&b) {
            exercise(&elf);
        }
        let len = cut.index(b.len() + 1);
        if let Ok(elf) = parse(&b[..len]) {
            exercise(&elf);
        }
    }

    #[test]
    fn random_program_headers_never_panic(
        phdrs in proptest::collection::vec(arb_ph(), 1..6),
        kind in prop_oneof![Just(ET_EXEC), Just(ET_DYN)],
    ) {
        // Build with a bounded body, then write the random headers over it.
        let mut b = image(kind, 0, &[ph(PT_NOTE, 0, 0, 0, 0x3000, 0)]);
        b.resize(EHDR_LEN + PHDR_LEN * phdrs.len().max(1) + 0x3000, 0xcc);
        put(&mut b, E_PHNUM, &(phdrs.len() as u16).to_le_bytes());
        for (i, p) in phdrs.iter().enumerate() {
            set_ph(&mut b, i, *p);
        }
        if let Ok(elf) = parse(&b) {
            exercise(&elf);
        }
    }
}

#[test]
fn parse_prefix_checks_segments_against_the_file_length() {
    let img = exec_image();
    let phend = 64 + 56 * exec_phdrs().len();
    let head = &img[..phend];
    // Headers alone validate when the real file length is given...
    let elf = parse_prefix(head, img.len()).unwrap();
    assert_eq!(
        elf.load_segments().count(),
        parse(&img).unwrap().load_segments().count()
    );
    // ...but not when the file is claimed shorter than its segments.
    assert!(parse_prefix(head, phend).is_err());
    // A head cut inside the program header table is truncated.
    assert_eq!(
        parse_prefix(&img[..phend - 1], img.len()),
        Err(ElfError::Truncated)
    );
    // A head longer than the file is a caller error.
    assert_eq!(parse_prefix(&img, img.len() - 1), Err(ElfError::Truncated));
}

#[test]
fn has_segment_reports_interp() {
    let img = dyn_image();
    assert!(parse(&img).unwrap().has_segment(PT_INTERP));
    assert!(!parse(&exec_image()).unwrap().has_segment(PT_INTERP));
}
