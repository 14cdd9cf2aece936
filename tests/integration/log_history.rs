//! `history` against the real broker: the commits that offset-vault's own restore and reset made
//! are of kind `restore` (their records in the store say so), a rewind made by hand with
//! kafka-consumer-groups is a flagged rewind, and `--plot` draws it all.

use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::kcg::{committed, kcg};
use crate::support::ov::{local_store, ov, snapshot};
use crate::support::{env, unique_name};

/// (partition, kind, offset, flagged, the command that made it) of each change, in log order.
type Seen = Vec<(i64, String, Option<i64>, bool, Option<String>)>;

fn seen(h: &Value) -> Seen {
    h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["partition"].as_i64().unwrap(),
                c["kind"].as_str().unwrap().to_string(),
                c["offset"].as_i64(),
                c["flagged"].as_bool().unwrap(),
                c["by"]["command"].as_str().map(String::from),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn restores_and_resets_by_offset_vault_are_restores_and_a_rewind_by_hand_is_flagged() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-kinds");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let group = unique_name("log-kinds-g");
    let (dir, store) = local_store();

    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 5), (1, 4)])).await;
    let id = snapshot(&store, &["--group", &group]).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 6), (1, 6)])).await;
    // Back to the snapshot (5 and 4) with offset-vault: two backward moves it explains.
    ov(
        &store,
        &[
            "restore",
            &id,
            "--group",
            &group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    assert_eq!(committed(&group, &topic).await, [(0, 5), (1, 4)].into());
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3)])).await; // 8
                                                                                     // A reset of partition 1 by offset-vault, and a rewind of partition 0 by hand.
    ov(
        &store,
        &[
            "reset",
            "--group",
            &group,
            "--topic",
            &format!("{topic}:1"),
            "--to-offset",
            "1",
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    let by_hand = kcg(&[
        "--group",
        &group,
        "--topic",
        &format!("{topic}:0"),
        "--reset-offsets",
        "--to-offset",
        "2",
        "--execute",
    ])
    .await;
    assert!(by_hand.success, "{}{}", by_hand.stdout, by_hand.stderr);

    let follower = unique_name("log-kinds-follower");
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    let run = ov(&store, &["history", &group, "--output", "json"])
        .await
        .ok();
    let h = run.json();
    let restore = Some("restore".to_string());
    let reset = Some("reset".to_string());
    let s = |k: &str| k.to_string();
    let mut got = seen(&h);
    // The two partitions' records of one commit are in either order: compare by partition.
    got.sort_by_key(|c| c.0);
    assert_eq!(
        got,
        vec![
            (0, s("commit"), Some(5), false, None),
            (0, s("commit"), Some(11), false, None),
            (0, s("restore"), Some(5), false, restore.clone()),
            (0, s("commit"), Some(8), false, None),
            (0, s("rewind"), Some(2), true, None),
            (1, s("commit"), Some(4), false, None),
            (1, s("commit"), Some(10), false, None),
            (1, s("restore"), Some(4), false, restore),
            (1, s("restore"), Some(1), false, reset),
        ],
        "{h:#}"
    );
    let restored = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["by"]["command"] == "restore")
        .unwrap();
    assert_eq!(restored["by"]["snapshot"], id.as_str(), "{h:#}");
    assert!(restored["by"]["undo_snapshot"].is_string(), "{h:#}");
    assert!(
        run.stderr
            .contains("1 rewind(s) that no restore or reset of offset-vault explains"),
        "{}",
        run.stderr
    );

    // The table marks the flagged rewind; the CSV says it in a column.
    let table = ov(&store, &["history", &group]).await.ok().stdout;
    let flagged: Vec<&str> = table.lines().filter(|l| l.contains("rewind !")).collect();
    assert_eq!(flagged.len(), 1, "{table}");
    assert!(flagged[0].contains("not explained"), "{table}");
    assert_eq!(
        table.matches(&format!("restore of {id}; undo: ")).count(),
        2,
        "{table}"
    );
    assert_eq!(
        table.matches("reset --to-offset 1; undo: ").count(),
        1,
        "{table}"
    );
    let csv = ov(&store, &["history", &group, "--csv"]).await.ok().stdout;
    assert!(
        csv.starts_with(
            "at,kind,topic,partition,offset,previous,delta,flagged,by,record,undo_snapshot\n"
        ),
        "{csv}"
    );
    assert_eq!(csv.matches(",true,").count(), 1, "{csv}");

    // --plot: the table still prints; the SVG has a line per partition and the markers.
    let svg_path = dir.path().join("out.svg");
    let plotted = ov(
        &store,
        &["history", &group, "--plot", svg_path.to_str().unwrap()],
    )
    .await
    .ok();
    assert!(plotted.stdout.contains("rewind !"), "{}", plotted.stdout);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    for label in [
        format!("{topic}[0]"),
        format!("{topic}[1]"),
        "rewind: unexplained (flagged)".to_string(),
        "restore or reset by offset-vault".to_string(),
    ] {
        assert_eq!(
            svg.matches(&format!(">\n{label}\n</text>")).count(),
            1,
            "{label}"
        );
    }
    // Three restores and one rewind marked, plus their legend entries.
    assert_eq!(svg.matches("<circle").count(), 3 + 1, "{svg}");
    assert_eq!(svg.matches("<polygon").count(), 1 + 1, "{svg}");
    // PNG too; a file name that names no format is refused before anything is read.
    let png_path = dir.path().join("out.png");
    ov(
        &store,
        &[
            "history",
            &group,
            "--plot",
            png_path.to_str().unwrap(),
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    assert!(std::fs::read(&png_path).unwrap().starts_with(b"\x89PNG"));
    let refused = ov(&store, &["history", &group, "--plot", "out.gif"])
        .await
        .expect_code(2);
    assert!(
        refused.stderr.contains(".svg or .png"),
        "{}",
        refused.stderr
    );
}
