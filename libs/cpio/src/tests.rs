use super::*;
use proptest::prelude::*;
use std::format;
use std::vec;
use std::vec::Vec;

/// A member to write with [`Writer`]; the numeric fields get distinct,
/// recognisable values so round-trip tests can tell them apart.
#[derive(Debug, Clone)]
struct Member {
    name: Vec<u8>,
    mode: u32,
    data: Vec<u8>,
}

fn member(name: &str, mode: u32, data: &[u8]) -> Member {
    Member {
        name: name.as_bytes().to_vec(),
        mode,
        data: data.to_vec(),
    }
}

/// Minimal newc writer used to build test archives.
struct Writer {
    buf: Vec<u8>,
    magic: &'static [u8; 6],
    ino: u32,
}

impl Writer {
    fn new() -> Self {
        Self::with_magic(MAGIC_NEWC)
    }

    fn with_magic(magic: &'static [u8; 6]) -> Self {
        Writer {
            buf: Vec::new(),
            magic,
            ino: 0,
        }
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    fn push_raw(&mut self, name: &[u8], mode: u32, data: &[u8]) {
        self.ino += 1;
        let check = if self.magic == MAGIC_CRC {
            checksum(data)
        } else {
            0
        };
        let fields = [
            self.ino,
            mode,
            1000,                  // uid
            100,                   // gid
            1,                     // nlink
            0x5f5e_1000,           // mtime
            data.len() as u32,     // filesize
            8,                     // dev_major
            1,                     // dev_minor
            self.ino * 2,          // rdev_major
            self.ino * 3,          // rdev_minor
            name.len() as u32 + 1, // namesize, with NUL
            check,
        ];
        self.buf.extend_from_slice(self.magic);
        for f in fields {
            self.buf.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.buf.extend_from_slice(name);
        self.buf.push(0);
        self.pad();
        self.buf.extend_from_slice(data);
        self.pad();
    }

    fn push(&mut self, m: &Member) {
        self.push_raw(&m.name, m.mode, &m.data);
    }

    fn trailer(&mut self) {
        self.push_raw(TRAILER_NAME, 0, &[]);
    }

    fn finish(mut self) -> Vec<u8> {
        self.trailer();
        self.buf
    }
}

fn archive(members: &[Member]) -> Vec<u8> {
    let mut w = Writer::new();
    for m in members {
        w.push(m);
    }
    w.finish()
}

fn sample_members() -> Vec<Member> {
    vec![
        member(".", S_IFDIR | 0o755, b""),
        member("./bin", S_IFDIR | 0o755, b""),
        member("./bin/sh", S_IFREG | 0o755, b"#!/bin/true\n"),
        member("/etc/motd", S_IFREG | 0o644, b"hello, world"),
        member("init", S_IFLNK | 0o777, b"bin/sh"),
        member("dev/console", S_IFCHR | 0o600, b""),
        member("x", S_IFREG | 0o600, b"abc"),
    ]
}

fn sample() -> Vec<u8> {
    archive(&sample_members())
}

/// Collect every item; the iterator must be finite and fused.
fn collect(data: &[u8]) -> Vec<Result<Entry<'_>, CpioError>> {
    let mut it = entries(data);
    let mut out = Vec::new();
    for item in it.by_ref() {
        out.push(item);
        assert!(out.len() <= data.len() / HEADER_LEN + 1, "too many entries");
    }
    assert!(it.next().is_none(), "not fused");
    out
}

/// Set the 8-digit header field `index` (0 = ino .. 12 = check) of the
/// member whose header starts at `at`.
fn set_field(buf: &mut [u8], at: usize, index: usize, digits: &[u8; 8]) {
    let off = at + 6 + 8 * index;
    buf[off..off + 8].copy_from_slice(digits);
}

const FILESIZE: usize = 6;
const NAMESIZE: usize = 11;
const CHECK: usize = 12;

#[test]
fn round_trip() {
    let members = sample_members();
    let buf = archive(&members);
    let mut it = entries(&buf);
    for (i, m) in members.iter().enumerate() {
        let e = it.next().expect("entry").expect("valid");
        assert_eq!(e.name, strip_prefix(&m.name));
        assert_eq!(e.mode, m.mode);
        assert_eq!(e.data, &m.data[..]);
        assert_eq!(e.ino, i as u32 + 1);
        assert_eq!((e.uid, e.gid, e.nlink), (1000, 100, 1));
        assert_eq!(e.mtime, 0x5f5e_1000);
        assert_eq!((e.dev_major, e.dev_minor), (8, 1));
        assert_eq!((e.rdev_major, e.rdev_minor), (e.ino * 2, e.ino * 3));
    }
    assert_eq!(it.next(), None);
    assert!(it.saw_trailer());
    assert!(it.rest().is_empty());
}

#[test]
fn names_are_stripped() {
    let buf = sample();
    let names: Vec<&[u8]> = collect(&buf).into_iter().map(|e| e.unwrap().name).collect();
    assert_eq!(
        names,
        [
            &b"."[..],
            b"bin",
            b"bin/sh",
            b"etc/motd",
            b"init",
            b"dev/console",
            b"x"
        ]
    );
    assert_eq!(strip_prefix(b"/./a"), b"a");
    assert_eq!(strip_prefix(b"././/a/./b"), b"a/./b");
    assert_eq!(strip_prefix(b"/"), b"");
    assert_eq!(strip_prefix(b".."), b"..");
    assert_eq!(strip_prefix(b".hidden"), b".hidden");
}

#[test]
fn type_helpers() {
    let buf = sample();
    let es: Vec<Entry<'_>> = collect(&buf).into_iter().map(Result::unwrap).collect();
    assert!(es[1].is_dir() && !es[1].is_file() && !es[1].is_symlink());
    assert!(es[2].is_file() && !es[2].is_dir());
    assert_eq!(es[2].permissions(), 0o755);
    assert!(es[4].is_symlink() && !es[4].is_file());
    assert_eq!(es[4].data, b"bin/sh");
    assert!(es[5].is_char_device() && !es[5].is_block_device());
    assert_eq!(es[5].file_type(), S_IFCHR);
}

#[test]
fn alignment_for_all_name_and_data_lengths() {
    // Cover every residue of name and data length modulo 4.
    let mut members = Vec::new();
    for n in 1..=9 {
        for d in 0..=9 {
            let name: std::string::String = (0..n).map(|i| (b'a' + i as u8) as char).collect();
            let data: Vec<u8> = (0..d).map(|i| i as u8 ^ 0x5a).collect();
            members.push(Member {
                name: name.into_bytes(),
                mode: S_IFREG | 0o644,
                data,
            });
        }
    }
    let buf = archive(&members);
    assert_eq!(buf.len() % 4, 0);
    let got = collect(&buf);
    assert_eq!(got.len(), members.len());
    for (g, m) in got.iter().zip(&members) {
        let g = g.as_ref().unwrap();
        assert_eq!(g.name, &m.name[..]);
        assert_eq!(g.data, &m.data[..]);
    }
}

#[test]
fn empty_inputs() {
    assert!(collect(&[]).is_empty());
    let mut it = entries(&[]);
    assert_eq!(it.next(), None);
    assert!(!it.saw_trailer());

    let only_trailer = archive(&[]);
    let mut it = entries(&only_trailer);
    assert_eq!(it.next(), None);
    assert!(it.saw_trailer());
}

#[test]
fn lowercase_hex_accepted() {
    let mut buf = archive(&[member("f", S_IFREG | 0o644, b"")]);
    set_field(&mut buf, 0, 0, b"0000abcd");
    let e = collect(&buf).remove(0).unwrap();
    assert_eq!(e.ino, 0xabcd);
    assert_eq!(parse_hex(b"FFFFFFFF"), Some(u32::MAX));
    assert_eq!(parse_hex(b"deadBEEF"), Some(0xdead_beef));
    assert_eq!(parse_hex(b"1234567"), None);
    assert_eq!(parse_hex(b"+1234567"), None);
}

#[test]
fn crc_variant() {
    let mut w = Writer::with_magic(MAGIC_CRC);
    w.push(&member("a", S_IFREG | 0o644, &[0xff; 300]));
    let mut buf = w.finish();
    let e = collect(&buf).remove(0).unwrap();
    assert_eq!(e.data.len(), 300);

    set_field(&mut buf, 0, CHECK, b"00000000");
    assert_eq!(collect(&buf), [Err(CpioError::BadChecksum)]);

    // Other file types are not checked (GNU cpio leaves 0 for symlinks).
    let mut w = Writer::with_magic(MAGIC_CRC);
    w.push(&member("l", S_IFLNK | 0o777, b"target"));
    let mut buf = w.finish();
    set_field(&mut buf, 0, CHECK, b"00000000");
    assert_eq!(collect(&buf).remove(0).unwrap().data, b"target");
}

#[test]
fn trailer_stops_and_rest_is_returned() {
    let first = archive(&[member("a", S_IFREG, b"1")]);
    let second = archive(&[member("b", S_IFREG, b"2")]);
    let mut buf = first.clone();
    buf.extend_from_slice(&[0; 512]);
    buf.extend_from_slice(&second);

    let mut it = entries(&buf);
    assert_eq!(it.next().unwrap().unwrap().name, b"a");
    assert!(it.rest().is_empty(), "rest is empty before the trailer");
    assert_eq!(it.next(), None);
    assert!(it.saw_trailer());
    assert_eq!(it.rest().len(), 512 + second.len());
    // Entries after the trailer are not yielded.
    assert_eq!(it.next(), None);
}

#[test]
fn missing_trailer_is_a_clean_end() {
    let mut w = Writer::new();
    for m in &sample_members() {
        w.push(m);
    }
    let buf = w.buf;
    let mut it = entries(&buf);
    assert_eq!(it.by_ref().filter(Result::is_ok).count(), 7);
    assert!(!it.saw_trailer());
}

#[test]
fn missing_final_padding_is_a_clean_end() {
    // A last member whose data is not padded out to 4 bytes.
    let mut w = Writer::new();
    w.push(&member("a", S_IFREG, b"12345"));
    let mut buf = w.buf;
    buf.truncate(buf.len() - 3);
    let got = collect(&buf);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].unwrap().data, b"12345");
}

#[test]
fn bad_magic() {
    let mut buf = sample();
    buf[5] = b'7';
    assert_eq!(collect(&buf), [Err(CpioError::BadMagic)]);
    // Old binary and odc cpio formats are rejected.
    assert_eq!(collect(b"070707")[0], Err(CpioError::BadMagic));
    assert_eq!(collect(&[0xc7, 0x71])[0], Err(CpioError::BadMagic));
    // Trailing junk after a good member (without trailer) is not accepted.
    let mut w = Writer::new();
    w.push(&member("a", S_IFREG, b"1"));
    let mut buf = w.buf;
    buf.extend_from_slice(b"junk");
    let got = collect(&buf);
    assert!(got[0].is_ok());
    assert_eq!(got[1], Err(CpioError::BadMagic));
}

#[test]
fn bad_hex_in_every_field() {
    for field in 0..13 {
        for bad in [b"0000000g", b"0000 001", b"-0000001", b"0x000001"] {
            let mut buf = sample();
            set_field(&mut buf, 0, field, bad);
            assert_eq!(collect(&buf), [Err(CpioError::BadHex)], "field {field}");
        }
    }
}

#[test]
fn huge_sizes_are_truncation() {
    for size in [b"FFFFFFFF", b"7FFFFFFF", b"00001000"] {
        let mut buf = sample();
        set_field(&mut buf, 0, FILESIZE, size);
        assert_eq!(collect(&buf), [Err(CpioError::Truncated)]);

        let mut buf = sample();
        set_field(&mut buf, 0, NAMESIZE, size);
        assert_eq!(collect(&buf), [Err(CpioError::Truncated)]);
    }
}

#[test]
fn bad_names() {
    // namesize 0.
    let mut buf = sample();
    set_field(&mut buf, 0, NAMESIZE, b"00000000");
    assert_eq!(collect(&buf), [Err(CpioError::BadName)]);

    // Name not NUL-terminated: namesize one short, so the last byte counted
    // is a name character.
    let mut buf = archive(&[member("abc", S_IFREG, b"")]);
    set_field(&mut buf, 0, NAMESIZE, b"00000003");
    assert_eq!(collect(&buf), [Err(CpioError::BadName)]);

    // Interior NUL.
    let buf = archive(&[Member {
        name: b"a\0b".to_vec(),
        mode: S_IFREG,
        data: vec![],
    }]);
    assert_eq!(collect(&buf), [Err(CpioError::BadName)]);
}

#[test]
fn error_stops_iteration() {
    let members = sample_members();
    let mut buf = archive(&members);
    // Corrupt the third member's magic; the first two still come out.
    let third = {
        let mut w = Writer::new();
        w.push(&members[0]);
        w.push(&members[1]);
        w.buf.len()
    };
    buf[third] = b'X';
    let got = collect(&buf);
    assert_eq!(got.len(), 3);
    assert!(got[0].is_ok() && got[1].is_ok());
    assert_eq!(got[2], Err(CpioError::BadMagic));
}

#[test]
fn truncation_at_every_offset() {
    let full = sample();
    let want = collect(&full);
    for len in 0..full.len() {
        let got = collect(&full[..len]);
        // Everything before the failure point must agree with the full
        // parse; the end is either an error or a clean stop.
        let ok = got.iter().take_while(|r| r.is_ok()).count();
        assert!(ok <= want.len());
        assert_eq!(&got[..ok], &want[..ok], "prefix len {len}");
        assert!(got.len() <= ok + 1);
        if let Some(Err(e)) = got.get(ok) {
            assert_eq!(*e, CpioError::Truncated, "prefix len {len}");
        }
    }
}

#[test]
fn truncation_inside_header_is_reported() {
    let full = sample();
    for len in 1..HEADER_LEN {
        assert_eq!(collect(&full[..len]), [Err(CpioError::Truncated)], "{len}");
    }
}

fn arb_member() -> impl Strategy<Value = Member> {
    (
        proptest::collection::vec(1u8..=255, 1..20),
        prop::sample::select(vec![S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFIFO]),
        0u32..0o7777,
        proptest::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(name, kind, perm, data)| Member {
            name,
            mode: kind | perm,
            data,
        })
        // A member literally named the trailer would end the archive early.
        .prop_filter("not the trailer", |m| m.name != TRAILER_NAME)
}

proptest! {
    // Cheap cases: run more of them than proptest's default 256.
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = collect(&data);
    }

    #[test]
    fn random_bytes_after_magic_never_panic(
        crc in any::<bool>(),
        tail in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut data = if crc { MAGIC_CRC.to_vec() } else { MAGIC_NEWC.to_vec() };
        data.extend_from_slice(&tail);
        let _ = collect(&data);
    }

    #[test]
    fn mutated_archive_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        hex_edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), prop::sample::select(b"0123456789abcdefF".to_vec())),
            0..8,
        ),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut buf = sample();
        for (i, b) in edits {
            let i = i.index(buf.len());
            buf[i] = b;
        }
        // Digit-for-digit edits keep headers well-formed hex, which reaches
        // the size and offset arithmetic rather than stopping at BadHex.
        for (i, b) in hex_edits {
            let i = i.index(buf.len());
            buf[i] = b;
        }
        let _ = collect(&buf);
        let len = cut.index(buf.len() + 1);
        let _ = collect(&buf[..len]);
    }

    #[test]
    fn random_archives_round_trip(members in proptest::collection::vec(arb_member(), 0..12)) {
        let buf = archive(&members);
        let got = collect(&buf);
        prop_assert_eq!(got.len(), members.len());
        for (g, m) in got.iter().zip(&members) {
            let g = g.as_ref().unwrap();
            prop_assert_eq!(g.name, strip_prefix(&m.name));
            prop_assert_eq!(g.mode, m.mode);
            prop_assert_eq!(g.data, &m.data[..]);
        }
    }
}
