//! File names as the kernel stores them: Rust strings that carry any
//! byte sequence.
//!
//! Linux names are bytes (anything but '/' and NUL); the VFS keeps them as
//! `str`. A name from user space that is not valid UTF-8 keeps each byte
//! of an invalid sequence as one character of a private range,
//! U+10FF80..=U+10FFFF (byte 0x80 + n becomes U+10FF80 + n), and a valid
//! character that happens to lie in that range is stored the same way,
//! byte by byte, so that turning a stored name back into bytes
//! ([`to_user`]) gives exactly what user space passed in. Names that are
//! valid UTF-8 outside that range, which is nearly all of them, are
//! stored unchanged.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

/// Where the stand-ins for raw bytes start: byte `b` (0x80..=0xff) is
/// `ESCAPE_BASE + b`.
const ESCAPE_BASE: u32 = 0x10_ff00;
const ESCAPE_FIRST: u32 = ESCAPE_BASE + 0x80;

/// The UTF-8 lead byte of every character in the escape range.
const ESCAPE_LEAD: u8 = 0xf4;

fn escape_byte(out: &mut String, b: u8) {
    // Only bytes 0x80..=0xff reach here (ASCII is always valid UTF-8), so
    // the code point is in range and valid.
    if let Some(c) = char::from_u32(ESCAPE_BASE + u32::from(b)) {
        out.push(c);
    }
}

/// A name or path from user space, as the VFS stores it.
pub fn from_user(bytes: Vec<u8>) -> String {
    let bytes = if bytes.contains(&ESCAPE_LEAD) {
        bytes
    } else {
        match String::from_utf8(bytes) {
            Ok(s) => return s,
            Err(e) => e.into_bytes(),
        }
    };
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if u32::from(c) >= ESCAPE_FIRST {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    escape_byte(&mut out, b);
                }
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            escape_byte(&mut out, b);
        }
    }
    out
}

/// The bytes of `buf` before its first NUL as the VFS stores them, if
/// that is the same bytes (valid UTF-8 with nothing to escape): what
/// [`from_user`] would return, without a copy. None if `buf` holds no NUL
/// or the bytes need a conversion. One scan finds the NUL and the escape
/// lead byte (a path read from user memory).
pub fn stored_as_is_until_nul(buf: &[u8]) -> Option<&str> {
    let end = buf.iter().position(|&b| b == 0 || b == ESCAPE_LEAD)?;
    if buf[end] != 0 {
        return None;
    }
    core::str::from_utf8(&buf[..end]).ok()
}

/// The bytes user space sees for a stored name or path.
pub fn to_user(name: &str) -> Cow<'_, [u8]> {
    if !name.as_bytes().contains(&ESCAPE_LEAD) {
        return Cow::Borrowed(name.as_bytes());
    }
    let mut out = Vec::with_capacity(name.len());
    for c in name.chars() {
        let v = u32::from(c);
        if v >= ESCAPE_FIRST {
            out.push((v - ESCAPE_BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

/// The length in bytes user space sees (what NAME_MAX and PATH_MAX limit).
pub fn user_len(name: &str) -> usize {
    if !name.as_bytes().contains(&ESCAPE_LEAD) {
        return name.len();
    }
    name.chars()
        .map(|c| {
            if u32::from(c) >= ESCAPE_FIRST {
                1
            } else {
                c.len_utf8()
            }
        })
        .sum()
}

/// Generated text that embeds stored names (a mount table, a map of an
/// address space), turned into the bytes user space sees.
pub fn text_to_user(text: String) -> Vec<u8> {
    match to_user(&text) {
        Cow::Borrowed(_) => text.into_bytes(),
        Cow::Owned(bytes) => bytes,
    }
}
