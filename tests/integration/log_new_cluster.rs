//! `follow` on a cluster where no group has committed yet, against a real brand-new broker
//! (kafka3, see `support/fresh.rs`): `__consumer_offsets` does not exist there. A run with
//! --once says so, archives nothing, writes nothing into the store and exits 0; a continuous
//! follower says that it waits, creates nothing while it waits, and archives the first commit
//! once the broker has created the topic, with the topic's real partition count. No follower
//! asks for DESCRIBE there: nothing is refused, the topic is only not there yet.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::follower::{archived, commits, OFFSETS};
use crate::support::ov::local_store;
use crate::support::{fresh, unique_name};

/// Every file under `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The index manifests of the commit-log archive of a local store.
fn manifests(store: &str) -> Vec<Value> {
    files(&Path::new(store).join("log/index"))
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_on_a_cluster_where_no_group_has_committed_waits_for_the_first_commit() {
    if !fresh::brand_new().await {
        return;
    }
    let (_dir, store) = local_store();
    let follower = unique_name("new-cluster-f");
    let no_commit = "no group has committed on this cluster yet";

    // --once: nothing to archive, said as such, and no failure.
    let once = fresh::ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    assert!(once.stderr.contains(no_commit), "{once:#?}");
    assert!(once.stderr.contains("nothing to archive"), "{once:#?}");
    assert!(
        !once.stderr.contains("DESCRIBE") && !once.stderr.contains("error"),
        "{once:#?}"
    );
    assert!(
        once.stdout.contains("0 segment(s), 0 record(s) archived"),
        "{once:#?}"
    );
    let json = fresh::ov(
        &store,
        &[
            "--output",
            "json",
            "follow",
            "--once",
            "--group-id",
            &follower,
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(json["topic_exists"], false, "{json:#}");
    assert_eq!(json["segments"], serde_json::json!([]), "{json:#}");
    assert_eq!(json["base_snapshot"], Value::Null, "{json:#}");
    assert_eq!(files(Path::new(&store)), Vec::<std::path::PathBuf>::new());
    assert_eq!(
        fresh::offsets_topic().await,
        None,
        "a run with --once made the broker create {OFFSETS}"
    );

    // Continuous: it says it waits, and waiting creates nothing either.
    let mut f = fresh::follower(&store, &follower, &["--segment-interval", "1s"]);
    let waiting = f
        .wait_for(
            "the follower to say that it waits for the first commit",
            Duration::from_secs(40),
            |s| s.lines().find(|l| l.contains(no_commit)).map(String::from),
        )
        .await;
    assert!(waiting.contains("waiting for it"), "{waiting}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        fresh::offsets_topic().await,
        None,
        "the waiting follower made the broker create {OFFSETS}:\n{}",
        f.stderr()
    );
    assert!(f.alive(), "{}", f.stderr());

    // The first commit on the cluster: the broker creates the topic, and the follower archives it.
    let topic = unique_name("new-cluster");
    fresh::create_topic(&topic, 1).await;
    let group = unique_name("new-cluster-g");
    fresh::commit(&group, &topic, &[(0, 3)].into()).await;
    let partitions = fresh::offsets_topic()
        .await
        .expect("the first commit made the broker create the topic");
    f.wait_for(
        &format!("the follower to follow {OFFSETS} now"),
        Duration::from_secs(40),
        |s| {
            s.contains(&format!(
                "{OFFSETS} exists now, with {partitions} partition(s)"
            ))
            .then_some(())
        },
    )
    .await;
    archived(&store, &group, &commits(&topic, &[3]), &mut [&mut f]).await;

    // Its segments record the topic's real partition count (which `history` found the group's
    // partition by).
    let sealed = manifests(&store);
    assert!(!sealed.is_empty(), "no index manifest in {store}");
    for m in &sealed {
        assert_eq!(m["partitions"], partitions, "{m:#}");
        assert_eq!(m["topic"], OFFSETS, "{m:#}");
    }
    let exited = f.terminate().await;
    assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    assert!(
        !exited.stderr.contains("DESCRIBE") && !exited.stderr.contains("error:"),
        "{exited:#?}"
    );
    assert!(exited.stdout.contains("record(s) archived"), "{exited:#?}");
}
