//! The `ktest` layer: boots the kernel with `ktest=NAME` for each in-kernel
//! check (kernel/src/ktest.rs) and checks that the boot ends the way the
//! check promises: a clean, reported panic naming the broken invariant, or
//! a clean power-off after the check passed.

use std::time::Duration;

use crate::initramfs;
use crate::qemu::{self, Console, Outcome};
use crate::scan::serial_tail;
use crate::test::{BootEnv, Reporter};
use crate::util::target_dir;

const TIMEOUT: Duration = Duration::from_secs(60);

enum Expect {
    /// A kernel panic whose report contains this text.
    Panic(&'static str),
    /// A power-off with status 0 after the output contained this text.
    Poweroff(&'static str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Nic {
    /// QEMU's default NIC (an e1000e).
    Default,
    /// A virtio-net NIC on user networking, with MSI-X ...
    VirtioMsix,
    /// ... or with INTx only.
    VirtioIntx,
}

struct Case {
    name: &'static str,
    expect: Expect,
    nic: Nic,
}

const CASES: &[Case] = &[
    Case {
        name: "panic",
        expect: Expect::Panic("ktest: deliberate panic"),
        nic: Nic::Default,
    },
    Case {
        name: "stack_overflow",
        expect: Expect::Panic("kernel stack overflow: touched the guard page"),
        nic: Nic::Default,
    },
    Case {
        name: "null_deref",
        expect: Expect::Poweroff("read of unmapped user page: Some("),
        nic: Nic::Default,
    },
    Case {
        name: "init_twice",
        expect: Expect::Panic("invariant: frame::init runs once"),
        nic: Nic::Default,
    },
    Case {
        name: "run_first_nested",
        expect: Expect::Panic("invariant: run_first_task runs once, from the boot context"),
        nic: Nic::Default,
    },
    Case {
        name: "timer_yield",
        expect: Expect::Panic("sleeping, yielding or exiting in interrupt context"),
        nic: Nic::Default,
    },
    Case {
        name: "timer_exit",
        expect: Expect::Panic("sleeping, yielding or exiting in interrupt context"),
        nic: Nic::Default,
    },
    Case {
        name: "sched_stale",
        expect: Expect::Poweroff("ktest sched_stale: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "pci",
        expect: Expect::Poweroff("ktest pci: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "pci_irq",
        expect: Expect::Poweroff("ktest pci_irq: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "pci_intx",
        expect: Expect::Poweroff("ktest pci_intx: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "virtio_net",
        expect: Expect::Poweroff("ktest virtio_net: ok"),
        nic: Nic::VirtioMsix,
    },
    Case {
        name: "virtio_net_intx",
        expect: Expect::Poweroff("ktest virtio_net_intx: ok"),
        nic: Nic::VirtioIntx,
    },
    Case {
        name: "domain_fault",
        expect: Expect::Poweroff("ktest domain_fault: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "domain_heap",
        expect: Expect::Poweroff("ktest domain_heap: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "domain_fault_locked",
        expect: Expect::Panic("ktest: domain panics holding a spin lock"),
        nic: Nic::Default,
    },
    Case {
        name: "domain_proxy",
        expect: Expect::Poweroff("ktest domain_proxy: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "page_cache",
        expect: Expect::Poweroff("ktest page_cache: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "user_copy",
        expect: Expect::Poweroff("ktest user_copy: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "exit_placeholder",
        expect: Expect::Poweroff("ktest exit_placeholder: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "sig_actions",
        expect: Expect::Poweroff("ktest sig_actions: ok"),
        nic: Nic::Default,
    },
    Case {
        name: "net_iface",
        expect: Expect::Poweroff("ktest net_iface: ok"),
        nic: Nic::Default,
    },
];

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        r.skip("ktest:boot", "the kernel did not build");
        return;
    };
    let initrd = target_dir(&env.root).join("initramfs-ktest.cpio");
    let spec = initramfs::Spec {
        user: None,
        adds: &[],
        argv: None,
    };
    if let Err(e) = initramfs::write(&spec, &initrd) {
        r.fail("ktest:initramfs", e);
        return;
    }
    for case in CASES {
        let name = format!("ktest:{}", case.name);
        let append = [format!("ktest={}", case.name)];
        let net = qemu::Net {
            forwards: Vec::new(),
            intx: case.nic == Nic::VirtioIntx,
        };
        let boot = qemu::Boot {
            kernel: &env.kernel,
            initrd: &initrd,
            append: &append,
            timeout: Some(TIMEOUT),
            console: Console::Capture,
            watch: None,
            disks: &[],
            net: (case.nic != Nic::Default).then_some(&net),
        };
        let result = match qemu::boot(&boot, &mut |_| {}) {
            Ok(res) => res,
            Err(e) => {
                r.fail(&name, e);
                continue;
            }
        };
        let _ = env.write_log(&name.replace(':', "_"), &result);
        let text = result.lines.join("\n");
        let verdict = match (&case.expect, &result.outcome) {
            (Expect::Panic(want), Outcome::Panic(_)) if text.contains(want) => None,
            (Expect::Poweroff(want), Outcome::Poweroff(0)) if text.contains(want) => None,
            (Expect::Panic(want), outcome) | (Expect::Poweroff(want), outcome) => Some(format!(
                "expected `{want}` and a {} end; got {outcome:?}\n{}",
                if matches!(case.expect, Expect::Panic(_)) {
                    "panic"
                } else {
                    "poweroff 0"
                },
                serial_tail(&result.lines, 15)
            )),
        };
        match verdict {
            None => r.pass(&name),
            Some(why) => r.fail(&name, why),
        }
    }
}
