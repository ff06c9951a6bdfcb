#!/bin/bash
# Installs what building and testing Trellis needs on Debian 12.
# Idempotent and silent when everything is already in place. Run as root
# (or as a user with sudo) from anywhere inside the repository.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APT_PACKAGES=(qemu-system-x86 busybox-static musl-tools cpio binutils make gcc libc6-dev bsdutils file e2fsprogs)
# The debian test layer: apt-get download / dpkg-deb -x build its tree, the
# host's own python3.11 and bash run in it, unshare + chroot run the same
# workloads on the host, strace lists their system calls (docs/exec.md).
APT_PACKAGES+=(dpkg apt util-linux python3 strace)
RUSTUP_INIT_URL="https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init"
KERNEL_TARGET="x86_64-unknown-none"

say() { echo "setup: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        say "need root to run: $*"
        exit 1
    fi
}

installed() {
    # No pipe into `grep -q`: with pipefail, grep's early exit could make
    # dpkg die of SIGPIPE and the package look missing (then a concurrent
    # run fights over the apt lock).
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

apt_install() {
    local missing=()
    local pkg
    for pkg in "$@"; do
        installed "$pkg" || missing+=("$pkg")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    say "installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_rustup() {
    # shellcheck disable=SC1091
    [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
    command -v rustup >/dev/null 2>&1 && return 0
    say "installing rustup"
    local init
    init="$(mktemp)"
    if command -v curl >/dev/null 2>&1; then
        curl --proto '=https' --tlsv1.2 -sSf -o "$init" "$RUSTUP_INIT_URL"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$init" "$RUSTUP_INIT_URL"
    else
        apt_install curl ca-certificates
        curl --proto '=https' --tlsv1.2 -sSf -o "$init" "$RUSTUP_INIT_URL"
    fi
    chmod +x "$init"
    "$init" -y --no-modify-path --default-toolchain none >/dev/null
    rm -f "$init"
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
}

# The channel named in rust-toolchain.toml.
toolchain_channel() {
    sed -n 's/^[[:space:]]*channel[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' \
        "$ROOT/rust-toolchain.toml" | head -n 1
}

toolchain_ready() {
    local channel="$1"
    rustup toolchain list 2>/dev/null | grep -q "^${channel}-" || return 1
    rustup target list --installed --toolchain "$channel" 2>/dev/null |
        grep -qx "$KERNEL_TARGET" || return 1
    local components
    components="$(rustup component list --installed --toolchain "$channel" 2>/dev/null)"
    grep -q '^rustfmt' <<<"$components" && grep -q '^clippy' <<<"$components"
}

ensure_toolchain() {
    local channel
    channel="$(toolchain_channel)"
    if [ -n "$channel" ] && toolchain_ready "$channel"; then
        return 0
    fi
    say "installing the Rust toolchain from rust-toolchain.toml${channel:+ ($channel)}"
    (
        cd "$ROOT"
        # Installs what rust-toolchain.toml names (RUSTUP_AUTO_INSTALL=0 means
        # nothing else will). Older rustup lacks the no-argument form.
        rustup toolchain install >/dev/null 2>&1 ||
            rustup toolchain install "$channel" --profile minimal \
                --component rustfmt,clippy >/dev/null
        rustup target add "$KERNEL_TARGET" >/dev/null
    )
}

# Miri over frame/ (and llvm-tools for its unsafe-site coverage) needs a
# pinned nightly. Not fatal: without it `cargo xtask test` reports
# `TEST miri SKIP: <why>`.
MIRI_NIGHTLY="nightly-2026-05-20"
ensure_miri() {
    local components
    components="$(rustup component list --installed --toolchain "$MIRI_NIGHTLY" 2>/dev/null || true)"
    if grep -q '^miri' <<<"$components" && grep -q '^rust-src' <<<"$components" &&
        grep -q '^llvm-tools' <<<"$components"; then
        return 0
    fi
    say "installing $MIRI_NIGHTLY with miri (optional)"
    if rustup toolchain install "$MIRI_NIGHTLY" --profile minimal \
        --component miri,rust-src,llvm-tools >/dev/null 2>&1 &&
        (cd "$ROOT" && cargo "+$MIRI_NIGHTLY" miri setup >/dev/null 2>&1); then
        return 0
    fi
    say "warning: could not install $MIRI_NIGHTLY with miri; the Miri test layer will be skipped"
}

# `cargo xtask rootfs` and the debian layer resolve packages with apt-cache,
# which needs the archive's package lists. Not fatal: without them the
# layer reports `TEST debian SKIP: the Debian archive is not reachable`.
ensure_apt_lists() {
    apt-cache show --no-all-versions python3 >/dev/null 2>&1 && return 0
    say "fetching the Debian package lists (for the debian test layer)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 ||
        say "warning: apt-get update failed; the debian test layer will be skipped"
}

apt_install "${APT_PACKAGES[@]}"
ensure_apt_lists
ensure_rustup
ensure_toolchain
ensure_miri
