//! The container image: `scripts/image build` makes an OCI image from Debian's packages and the
//! binary under test; umoci (an independent OCI implementation) unpacks it into a runtime bundle,
//! and the image's own root file system, entered with chroot as the image's user (no container
//! engine runs here), takes a snapshot of the test broker. The Dockerfile, the Helm chart and the
//! Podman unit describe the same image and user.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::serve::group_with_offsets;
use crate::support::env;
use crate::support::ov::ov_raw;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cmd` on a blocking thread; panics with its output unless it succeeds.
async fn run(what: &str, mut cmd: Command) -> String {
    let what = what.to_string();
    crate::support::blocking(move || {
        let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            out.status.success(),
            "{what} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    })
    .await
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The Dockerfile's value of `instruction` (its last one).
fn dockerfile(instruction: &str) -> String {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).expect("Dockerfile");
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("{instruction} ")))
        .unwrap_or_else(|| panic!("no {instruction} in the Dockerfile"))
        .trim()
        .to_string()
}

fn owner(path: &Path) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (m.uid(), m.gid())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_image_builds_and_its_root_file_system_takes_a_snapshot_as_its_user() {
    if !env::require_kafka() {
        return;
    }
    if !is_root() && !env::unavailable("root", "mmdebstrap and chroot need it") {
        return;
    }
    let group = group_with_offsets("image").await;
    let dir = tempfile::tempdir().unwrap();
    let layout = dir.path().join("oci");
    let mut build = Command::new(repo().join("scripts/image"));
    build
        .args([
            "build",
            "--tag",
            "test",
            "--binary",
            env!("CARGO_BIN_EXE_offset-vault"),
        ])
        .arg("--out")
        .arg(&layout);
    let built = run("scripts/image build", build).await;
    assert_eq!(built.trim(), format!("{}:test", layout.display()));
    assert!(layout.with_extension("tar").is_file(), "the docker-archive");

    // umoci reads the layout (digests checked) and writes a runtime bundle from its config.
    let bundle = dir.path().join("bundle");
    let mut unpack = Command::new("umoci");
    unpack
        .arg("unpack")
        .arg("--image")
        .arg(format!("{}:test", layout.display()))
        .arg(&bundle);
    run("umoci unpack", unpack).await;
    let spec: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("config.json")).unwrap()).unwrap();
    let process = &spec["process"];
    let (uid, gid) = (
        process["user"]["uid"].as_u64().unwrap(),
        process["user"]["gid"].as_u64().unwrap(),
    );
    assert_eq!((uid, gid), (10001, 10001), "a non-root user: {process}");
    let args: Vec<&str> = process["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, ["/usr/local/bin/offset-vault", "--help"]);
    let cwd = process["cwd"].as_str().unwrap().to_string();
    assert_eq!(cwd, "/var/lib/offset-vault");
    let path_env = process["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .find(|e| e.starts_with("PATH="))
        .expect("PATH in the image's environment")
        .to_string();

    // The Dockerfile builds the same image.
    assert_eq!(dockerfile("USER"), format!("{uid}:{gid}"));
    assert_eq!(dockerfile("WORKDIR"), cwd);
    assert_eq!(dockerfile("ENTRYPOINT"), format!("[\"{}\"]", args[0]));
    assert_eq!(dockerfile("CMD"), format!("[\"{}\"]", args[1]));

    // The Helm chart and the systemd unit for Podman run this image as its user.
    let deploy = repo().join("deploy");
    let yaml = |p: &str| -> serde_yaml::Value {
        serde_yaml::from_str(&std::fs::read_to_string(deploy.join(p)).unwrap()).unwrap()
    };
    let chart = yaml("helm/offset-vault/Chart.yaml");
    assert_eq!(
        chart["appVersion"].as_str(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let values = yaml("helm/offset-vault/values.yaml");
    assert_eq!(values["image"]["repository"].as_str(), Some("offset-vault"));
    assert_eq!(
        values["podSecurityContext"]["runAsUser"].as_u64(),
        Some(uid)
    );
    assert_eq!(
        values["podSecurityContext"]["runAsGroup"].as_u64(),
        Some(gid)
    );
    let unit =
        std::fs::read_to_string(deploy.join("systemd/offset-vault-container.service")).unwrap();
    for part in [
        format!("localhost/offset-vault:{}", env!("CARGO_PKG_VERSION")),
        format!("--user {uid}:{gid}"),
        format!("offset-vault:{cwd}"),
    ] {
        assert!(unit.contains(&part), "the container unit lacks {part}");
    }

    let rootfs = bundle.join("rootfs");
    for file in [
        "usr/share/bash-completion/completions/offset-vault",
        "usr/share/zsh/vendor-completions/_offset-vault",
        "usr/share/fish/vendor_completions.d/offset-vault.fish",
        "usr/share/man/man1/offset-vault.1.gz",
        "usr/share/man/man1/offset-vault-snapshot.1.gz",
        "etc/ssl/certs/ca-certificates.crt",
    ] {
        assert!(rootfs.join(file).is_file(), "{file} is in the image");
    }
    assert_eq!(owner(&rootfs.join("usr/local/bin/offset-vault")), (0, 0));
    assert_eq!(owner(&rootfs.join("var/lib/offset-vault")), (10001, 10001));

    // The image's entrypoint, in its root file system, as its user, from its working directory
    // and with its PATH (env from the image's coreutils sets them), against the test broker.
    let mut snapshot = Command::new("chroot");
    snapshot
        .arg(format!("--userspec={uid}:{gid}"))
        .arg(&rootfs)
        .args([
            "/usr/bin/env",
            "-i",
            "-C",
            &cwd,
            &path_env,
            "HOME=/var/lib/offset-vault",
        ])
        .arg(args[0])
        .args([
            "--bootstrap-server",
            &env::bootstrap(),
            "--store",
            "store",
            "--output",
            "json",
            "snapshot",
            "--group",
            &group,
            "--tag",
            "from=image",
        ]);
    let out = run("the image's offset-vault snapshot", snapshot).await;
    let taken: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let id = taken["id"]
        .as_str()
        .or_else(|| taken["manifest"]["id"].as_str())
        .unwrap_or_else(|| panic!("no snapshot id in {out}"))
        .to_string();

    // Written by the image's user into its home, and readable by the binary outside.
    let store = rootfs.join("var/lib/offset-vault/store");
    assert_eq!(owner(&store), (10001, 10001));
    let store = store.to_str().unwrap().to_string();
    let verified = ov_raw(vec![
        "verify".into(),
        id.clone(),
        "--store".into(),
        store.clone(),
    ])
    .await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    let shown = ov_raw(vec![
        "show".into(),
        id,
        "--store".into(),
        store,
        "--output".into(),
        "json".into(),
    ])
    .await;
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let doc: Value = serde_json::from_str(&shown.stdout).unwrap();
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{doc}");
    assert_eq!(groups[0]["group_id"], group.as_str());
    let offsets: Vec<i64> = groups[0]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["offset"].as_i64().unwrap())
        .collect();
    assert_eq!(offsets, [2], "the group's committed offset");
    assert_eq!(doc["manifest"]["tags"]["from"], "image", "{doc}");
}
