//! The commit-log follower across a restart of the broker it reads: it goes on, or stops saying
//! why and its next run completes the chain; nothing is lost or archived twice.

use std::time::{Duration, Instant};

use crate::support::follower::*;
use crate::support::ov::{local_store, ov};
use crate::support::poll::eventually;
use crate::support::services::{start_service, stop_service, Service};
use crate::support::{env, kcg, unique_name};
use crate::SERIAL;

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_rides_out_a_broker_restart_and_archives_what_came_after() {
    if !env::require_kafka() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let topic = topic_with("follow-restart", 40).await;
    let group = unique_name("follow-restart-g");
    let p = offsets_partition(&group).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-restart-f");
    // A member the restarted coordinator no longer knows is replaced only once its session
    // times out (45 s by default): the shortest the broker allows keeps the wait short.
    let mut f = Follower::start(
        &store,
        &follower,
        &["--segment-interval", "2s", "-X", "session.timeout.ms=6000"],
        &[],
    );
    f.reading(p).await;
    commit(&group, &topic, 2).await;
    archived(&store, &group, &commits(&topic, &[2]), &mut [&mut f]).await;

    let revive = Revive(Service::Kafka);
    stop_service(Service::Kafka).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        f.alive(),
        "the follower exited with the broker away:\n{}",
        f.stderr()
    );
    start_service(Service::Kafka).await;
    drop(revive);
    // The group coordinator serves the group again once it has loaded the offsets topic.
    eventually(
        "the restarted broker to serve the group's offsets",
        Duration::from_secs(90),
        || async { (kcg::committed(&group, &topic).await == [(0, 2)].into()).then_some(()) },
    )
    .await;

    commit(&group, &topic, 3).await;
    commit(&group, &topic, 4).await;
    let want = commits(&topic, &[2, 5, 9]);
    // The follower goes on and archives them. When the rebalance after the restart could not
    // learn where the log starts, it stops instead (a follower that read nothing would stall
    // unseen): with a message saying so, and a run after it completes the chain.
    // Well over the consumer's session timeout (librdkafka's default, 45 s): after the
    // restart, the rebalance may wait out the follower's old membership before assigning again,
    // and the assignment then looks up the group's committed positions (up to 30 s) before the
    // first fetch. Seen to take more than 90 s on a loaded 2-core machine.
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut stopped = None;
    loop {
        if history(&store, &group).await.0 == want {
            break;
        }
        if !f.alive() {
            stopped = Some(f.stderr());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the commits after the restart were not archived:\n{}",
            f.stderr()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    if let Some(log) = stopped {
        let exited = f.wait_exit(Duration::from_secs(5)).await;
        assert_ne!(exited.status.code(), Some(0), "{log}");
        assert!(
            log.contains("deciding where to read the commit log")
                && log.contains("run it again: it starts where the archive ends"),
            "{log}"
        );
        eprintln!("the follower stopped after the broker restart; running it again:\n{log}");
        ov(&store, &["follow", "--once", "--group-id", &follower])
            .await
            .ok();
        let (got, h) = history(&store, &group).await;
        assert_eq!(got, want, "{h:#}");
        let all = assert_contiguous(&store);
        assert!(all.values().flatten().all(|e| e.gap.is_none()), "{all:#?}");
        assert_eq!(verified(&store).await, vec![]);
        return;
    }
    assert!(f.alive(), "{}", f.stderr());
    let exited = f.terminate().await;
    assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 5, 9]), "{h:#}");
    assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    let all = assert_contiguous(&store);
    assert!(all.values().flatten().all(|e| e.gap.is_none()), "{all:#?}");
    assert_eq!(verified(&store).await, vec![]);
}
