//! sysfs: a minimal, read-only /sys (sysfs(5)). Trellis has no device
//! model to export yet; the tree holds the directories programs expect and
//! the CPU topology files they read (`/sys/devices/system/cpu/online`).

use alloc::string::String;
use alloc::sync::Arc;

use super::inode::Inode;
use super::mount;
use super::pseudo::{Node, TreeDir};
use crate::error::Result;

/// The one CPU, as a cpulist (cpuset(7) "List format").
fn cpu_list() -> String {
    String::from("0\n")
}

const TREE: &[(&str, Node)] = &[
    ("block", Node::Dynamic(crate::block::sysfs::block_dir)),
    ("bus", Node::Dir(&[])),
    (
        "class",
        Node::Dir(&[("net", Node::Dynamic(crate::net::sysfs::class_net_dir))]),
    ),
    (
        "dev",
        Node::Dir(&[("block", Node::Dir(&[])), ("char", Node::Dir(&[]))]),
    ),
    (
        "devices",
        Node::Dir(&[(
            "system",
            Node::Dir(&[(
                "cpu",
                Node::Dir(&[
                    ("cpu0", Node::Dir(&[])),
                    ("kernel_max", Node::File(|| String::from("0\n"))),
                    ("offline", Node::File(|| String::from("\n"))),
                    ("online", Node::File(cpu_list)),
                    ("possible", Node::File(cpu_list)),
                    ("present", Node::File(cpu_list)),
                ]),
            )]),
        )]),
    ),
    ("firmware", Node::Dir(&[])),
    ("fs", Node::Dir(&[])),
    (
        "kernel",
        Node::Dir(&[
            (
                "debug",
                Node::Dir(&[(
                    "domains",
                    Node::Dir(&[
                        // Cross-domain call costs (the domain_call_* bench rows).
                        ("bench", Node::Dynamic(crate::domain_bench::debug_dir)),
                        (
                            "virtio-blk",
                            Node::Dir(&[
                                // Write N: the driver crashes at the next N
                                // points of its request path (docs/domains.md).
                                ("crash", Node::Value(&crate::domains::VIRTIO_BLK.forced)),
                                // The drivers.crash= period (0: off).
                                ("period_ns", Node::Value(&crate::domains::VIRTIO_BLK.period_ns)),
                                ("injected", Node::File(crate::domains::virtio_blk_injected)),
                                (
                                    "recovery_ns",
                                    Node::File(crate::block::virtio_blk::recovery_text),
                                ),
                            ]),
                        ),
                        (
                            "virtio-net",
                            Node::Dir(&[
                                // The same for the virtio-net driver.
                                ("crash", Node::Value(&crate::domains::VIRTIO_NET.forced)),
                                ("injected", Node::File(crate::domains::virtio_net_injected)),
                                (
                                    "recovery_ns",
                                    Node::File(crate::net::virtio_net::recovery_text),
                                ),
                            ]),
                        ),
                    ]),
                )]),
            ),
            ("mm", Node::Dir(&[])),
            ("uevent_seqnum", Node::File(|| String::from("0\n"))),
        ]),
    ),
    ("module", Node::Dir(&[])),
    ("power", Node::Dir(&[])),
];

/// Makes "sysfs" mountable.
pub fn register() {
    mount::register_filesystem("sysfs", make);
}

fn make(_source: &str, _data: &str) -> Result<Arc<dyn Inode>> {
    Ok(TreeDir {
        dev: mount::anon_dev(),
        ino: 1,
        entries: TREE,
        parent: None,
        dir_perm: 0o755,
        file_perm: 0o444,
    }
    .into_inode())
}
