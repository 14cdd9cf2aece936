//! The help that `--help` prints after each command's options: examples, and what the exit
//! codes mean.

pub const EXIT_CODES: &str = "\
Exit codes:
  0  success (for restore without --execute: the plan can be applied)
  1  unexpected error; for diff --exit-code: there are differences
  2  usage error: bad arguments or configuration, nothing selected
  3  Kafka, Kafka Connect or the store could not be reached or refused a request
  4  a named group, connector, snapshot or store directory does not exist
  5  integrity failure: a snapshot's or plan file's checksum, size, id or format does not match
  6  restore or reset blocked: an active group, or a connector that could not be stopped
  7  restore or reset plan not applicable: targets out of range, or partitions missing;
     also an --at TIME (restore, show, diff, export) that the commit-log archive does not cover
  8  restore applied, but the offsets read back differ from the plan
  9  the snapshot was taken on another Kafka cluster
 10  authentication or authorization failed (SASL, ACLs, HTTP 401/403, store credentials)
 11  the plan changed since it was reviewed (--from-plan, or after stopping connectors); nothing changed
 12  the restore (or reset) stopped partway: some offsets may have changed; the undo snapshot restores them
 13  a connector stopped by the restore could not be returned to its state (the command is printed)
 14  restore applied and verified, but offsets moved again during --settle
 15  prune refused a group whose every snapshot the policy would remove (nothing of it deleted)
 16  reset or restore applied and verified, but a connector or task failed during --watch
 17  --from-plan with --require-approvals: too few valid approvals by trusted keys; nothing changed
130  restore or reset interrupted (Ctrl-C) before anything changed; connectors were resumed";

pub const SNAPSHOT_EXAMPLES: &str = "\
Examples:
  # Before a deploy: the connector, its sink group, and a tag to find it again
  offset-vault -b kafka:9092 --connect-url http://connect:8083 --store s3://backups/offsets \\
      snapshot --connector orders-sink --tag deploy=1234

  # Every group and connector, for a cron job; JSON summary for the log
  offset-vault snapshot --all-groups --all-connectors --output json

  # Groups by pattern, one topic only, with last-record timestamps, as JSON files
  offset-vault snapshot --group-pattern 'billing-.*' --topic invoices --with-timestamps --format json

  # Keep the connectors' secrets too, only encrypted to an age key (age-keygen -y KEY_FILE)
  offset-vault snapshot --all-connectors --encrypt-to age1...";

pub const LIST_EXAMPLES: &str = "\
Examples:
  offset-vault --store ./vault list
  offset-vault list --group connect-orders-sink --since 24h
  offset-vault list --tag deploy=1234 --output json";

pub const SHOW_EXAMPLES: &str = "\
Examples:
  offset-vault show 20261201T0930          # a unique prefix of the id is enough
  offset-vault show 20261201T093005.042Z-3f9a1c0b7d2e4a55 --output json

  # A group's offsets exactly as they were at an instant (snapshot + commit-log archive)
  offset-vault show --at 2026-12-03T10:03:17.250Z --group billing
  offset-vault show --at 15m --connector orders-sink --output json";

pub const VERIFY_EXAMPLES: &str = "\
Examples:
  offset-vault verify 20261201T0930
  offset-vault verify --all               # every snapshot, incomplete ones included";

pub const RESTORE_EXAMPLES: &str = "\
Examples:
  # The plan only (a dry run): what would change, per partition
  offset-vault restore --connector orders-sink --before 2026-12-01T10:00:00Z

  # Apply it: stop the connector, take an undo snapshot, reset, verify, resume
  offset-vault restore --connector orders-sink --before 2026-12-01T10:00:00Z \\
      --stop-connectors --execute

  # One group, one topic, from a given snapshot; clamp targets the log no longer holds
  offset-vault restore 20261201T0930 --group billing --topic invoices \\
      --on-out-of-range clamp --execute

  # Onto a recreated topic: translate offsets by record time
  offset-vault restore --latest --group billing --by-timestamp

  # Fail over to a MirrorMaker 2 replica (snapshots taken with --with-timestamps)
  offset-vault -b replica:9092 restore --latest --group billing --allow-other-cluster \\
      --replication-policy default:primary --execute

  # Rehearse on staging first: staging is changed, production only read
  offset-vault -b prod:9092 restore --latest --group billing --rehearse-on staging:9092 \\
      --replication-policy identity

  # A deleted connector, created again with the secrets kept encrypted (snapshot --encrypt-to)
  offset-vault restore --latest --connector orders-sink --recreate-connectors \\
      --identity vault-identity.txt --execute";

pub const GUARD_EXAMPLES: &str = "\
Examples:
  # Snapshot the connector, run the deploy, and record its exit status and what moved
  offset-vault guard --connector orders-sink --tag deploy=1234 -- ./deploy.sh orders-sink

  # The command sees the snapshot id in OFFSET_VAULT_SNAPSHOT
  offset-vault guard --group billing -- sh -c 'echo \"rollback point: $OFFSET_VAULT_SNAPSHOT\"'";

pub const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  offset-vault completions bash > /etc/bash_completion.d/offset-vault
  offset-vault completions zsh > \"${fpath[1]}/_offset-vault\"
  offset-vault completions fish > ~/.config/fish/completions/offset-vault.fish";

pub const MAN_EXAMPLES: &str = "\
Examples:
  offset-vault man | man -l -
  offset-vault man --dir /usr/local/share/man/man1";

pub const DIFF_EXAMPLES: &str = "\
Examples:
  # What moved between two snapshots (ids or unique prefixes; the first is the old side)
  offset-vault diff 20261201T0930 20261201T1030

  # What moved since the newest snapshot, for one connector; 1 if anything did
  offset-vault diff --latest --live --connector orders-sink --exit-code

  # Since an hour ago, every partition listed, as JSON
  offset-vault diff --before 1h --latest --all --output json

  # The offsets exactly as they were at an instant against now; or two instants
  offset-vault diff --at 2026-12-03T10:03:17.250Z --live --group billing
  offset-vault diff --at 2h --at 1h --group billing

With --exit-code: 0 when there are no differences, 1 when there are (other exit codes: offset-vault --help).";

pub const RESET_EXAMPLES: &str = "\
Examples:
  # Reprocess: a sink connector from the first record it can still read (a dry run: the plan)
  offset-vault reset --connector orders-sink --all-topics --to-earliest

  # ... and do it: stop it, snapshot, reset, read back, resume it
  offset-vault reset --connector orders-sink --all-topics --to-earliest --stop-connectors --execute

  # Skip a record a sink task keeps failing on (one partition)
  offset-vault reset --connector orders-sink --topic orders:3 --shift-by 1 --stop-connectors --execute

  # Roll a consumer group back to a time (first record at or after it)
  offset-vault reset --group billing --topic invoices --to-datetime 2026-12-01T10:00:00.000Z --execute

  # A source connector starts again from the beginning of its source (DELETE .../offsets)
  offset-vault reset --connector files-source --to-earliest --stop-connectors --execute

  # Rehearse a reset on staging: targets computed on production (only read), carried to
  # staging's copies of the topics and applied there; prints the command for production
  offset-vault -b prod:9092 reset --group billing --topic invoices --to-datetime 2026-12-01T10:00:00Z \\
      --rehearse-on staging --replication-policy default:prod

The scenarios are kafka-consumer-groups --reset-offsets' (same names and value formats), but a
target outside the log is refused (exit 7) unless --on-out-of-range clamp. --to-datetime means the
first record whose timestamp is at or after TIME; it is not the committed position at TIME (that
is what offset-vault restore --at TIME puts back, from the commit-log archive of follow). Before the first change a
snapshot of kind pre-reset is written; its id is printed, and restoring it undoes the reset.";

pub const FOLLOW_EXAMPLES: &str = "\
Examples:
  # Keep archiving every commit (a Deployment or a systemd service); SIGTERM seals and exits 0
  offset-vault --store s3://backups/offsets follow

  # Archive every commit written since the last run, then exit (a CronJob or a timer)
  offset-vault --store s3://backups/offsets follow --once

  # Two or more followers with one --group-id split the partitions between them
  offset-vault --store s3://backups/offsets follow --group-id offset-vault-follower

  # Also archive Kafka Connect's offsets topic (source connectors' positions)
  offset-vault --store s3://backups/offsets --connect-url http://connect:8083 \
    follow --connect-offsets-topic connect-offsets

The follower reads __consumer_offsets with read_committed (aborted transactional commits never
appear). Each partition starts where the archive of it ends (the log start on the first run,
recorded with a base snapshot of the groups); a segment is sealed when its oldest record has
waited --segment-interval: log/date=YYYY-MM-DD/partition=NN/<start>-<next>-<sha>.parquet, then
its index entry log/index/partition=NN/<start>.json, then the group's position is committed. A
follower killed at any point resumes with no gap and no duplicate. Where the log no longer holds
the archive's end, the skipped offsets are recorded as a gap, a restore into which is refused.
It needs DESCRIBE and READ on the topic __consumer_offsets and READ on its group.

On a new cluster where no group has committed yet, __consumer_offsets does not exist (the broker
creates it at the first commit): the follower waits for it and then archives as usual; with
--once it says so, archives nothing and exits 0.

With --connect-offsets-topic, a second consumer (group <GROUP>.connect) archives Connect's offsets
topic the same way under connect-log/, so `restore --at` also puts source connectors back to
their position at the instant; it needs DESCRIBE and READ on that topic and READ on that group.
Connect's REST API does not say the topic's name: it is the workers' offset.storage.topic.";

pub const EXPIRING_EXAMPLES: &str = "\
Every Empty group whose first committed offset the broker removes within the margin
(offsets.retention.minutes after the group became Empty, or after the offset's commit for
groups that only commit) is listed and snapshotted, tagged expiry-guard=true. Without a
selection, every group of the cluster is checked. Exit 0 whether or not groups are found;
scripts read --output json (groups, snapshot_id). Each group comes with the command that
brings its offsets back once the broker expired them: restore --group G --latest --execute
(from this snapshot), or restore --group G --at TIME --execute when the store holds a
commit-log archive (follow) that covers the group's newest commit.

Examples:
  # Which idle groups lose their offsets within a day? Snapshot them.
  offset-vault -b kafka:9092 --store s3://backups/offsets expiring

  # A week ahead, only the billing groups, without a snapshot
  offset-vault expiring --group-pattern 'billing-.*' --expiry-margin 7d --no-snapshot

  # For a cron job: JSON, with a tag on the snapshot
  offset-vault expiring --tag env=prod --output json";

pub const HISTORY_EXAMPLES: &str = "\
Examples:
  offset-vault history connect-orders-sink
  offset-vault history billing --topic invoices --partition 3 --since 2h
  offset-vault history billing --csv > billing-history.csv
  offset-vault history billing --since 1d --plot billing.svg

Kinds: commit; rewind (the offset moved backwards and no restore or reset of offset-vault
explains it: flagged with ! in the table, \"flagged\": true in JSON, and counted in a warning on
stderr); restore (committed by offset-vault restore or reset, as its record in the store says);
deletion (a tombstone: the log writes the same record when an offset is deleted and when it
expires, so the two are not told apart); group-deleted.

--plot FILE draws each partition's committed offset over time (.svg or .png, by the
extension), with rewinds, restores and deletions marked; the table, JSON or CSV is printed too.";

pub const PRUNE_EXAMPLES: &str = "\
Examples:
  # What a policy would delete (a dry run)
  offset-vault prune --keep-hourly 48 --keep-daily 30 --keep-monthly 12

  # Delete; keep every snapshot of the last two days and those tagged release=yes
  offset-vault prune --keep-within 2d --keep-daily 14 --keep-tag release=yes --execute

  # One policy over all snapshots of a cluster, whatever they selected
  offset-vault prune --keep-last 100 --group-by cluster --execute

The rules are those of restic forget: counts are of periods that hold a snapshot, counted
from the newest; weeks are ISO weeks; --keep-within is measured from the newest snapshot;
an unused count also keeps the oldest snapshot. Incomplete snapshots (no manifest) older than
--incomplete-older-than are removed too. With no --keep-* option, prune refuses (exit 2).
A group of which the policy would keep nothing (a mistyped --keep-tag, say) is refused: none
of its snapshots is deleted, the other groups are pruned, and prune exits 15, in the dry run
too. --allow-empty-group lets such a group be emptied.";

pub const EXPORT_EXAMPLES: &str = "\
Examples:
  # One group: topic,partition,offset, as kafka-consumer-groups --from-file reads it
  offset-vault export 20261201T0930 --group billing --file billing.csv
  kafka-consumer-groups --bootstrap-server kafka:9092 --group billing --all-topics \\
      --reset-offsets --from-file billing.csv --execute

  # Several groups: group,topic,partition,offset, on standard output
  offset-vault export 20261201T0930 > offsets.csv

  # The offsets exactly as they were at an instant (snapshot + commit-log archive)
  offset-vault export --at 2026-12-03T10:03:17.250Z --group billing --file billing.csv";

pub const IMPORT_EXAMPLES: &str = "\
Examples:
  # A file exported by kafka-consumer-groups for one group
  kafka-consumer-groups --bootstrap-server kafka:9092 --group billing --all-topics \\
      --reset-offsets --to-current --export --dry-run > billing.csv
  offset-vault import billing.csv --group billing --tag source=runbook

  # Several groups in one file, with a tag; restore it later by its id (restore ID --execute):
  # --latest never picks an import
  offset-vault import all-groups.csv --tag source=runbook";

pub const SERVE_EXAMPLES: &str = "\
Examples:
  # Every group and connector every 5 minutes, prune hourly, verify the last day's snapshots
  offset-vault --store s3://backups/offsets serve \\
      --snapshot-every 5m --all-groups --all-connectors \\
      --prune-every 1h --keep-hourly 48 --keep-daily 30 \\
      --verify-every 6h --listen 0.0.0.0:9464

  # The commit-log follower and a snapshot every hour; metrics also to a textfile
  offset-vault serve --follow --snapshot-every 1h --all-groups \\
      --metrics-textfile /var/lib/node_exporter/textfile/offset_vault.prom

  # Jobs from the configuration file's [serve] section (kill -HUP reloads them)
  offset-vault --config /etc/offset-vault/config.toml serve

A configuration file's [serve] section (beside the contexts):
  [serve]
  listen = \"0.0.0.0:9464\"
  [serve.jobs.hourly-all]            # the job's name
  kind = \"snapshot\"                  # snapshot | prune | verify | expiry-guard
  every = \"1h\"                       # or: cron = \"0 */5 * * * *\" (UTC; exactly one)
  all-groups = true                  # the kind's flags without dashes; lists: groups, tags, ...
  tags = { env = \"prod\" }
  [serve.jobs.retention]
  kind = \"prune\"
  cron = \"0 30 * * * *\"
  keep-hourly = 48
  keep-daily = 30
  [serve.follow]
  enabled = true
  segment-interval = \"1m\"

Each scheduled run takes a lease in the store first (serve/leases/JOB/SLOT.json, create-only):
any number of replicas run each slot once. A run still going when its next slot comes skips
that slot (counted). A failed run is tried again within its slot (3 tries). SIGTERM or SIGINT:
no new runs, running ones finish, the follower seals, exit 0. SIGHUP reloads the file.
Metrics: GET /metrics (Prometheus text); /healthz; /readyz (Kafka and the store answer).";

pub const APPROVE_EXAMPLES: &str = "\
Examples:
  # Review and approve a plan written with restore --plan-file P --signing-key alice.key;
  # restore --from-plan P --require-approvals 1 then applies it
  offset-vault approve billing.plan --key bob.key --trusted-key alice.pub

  # The approver's key from the environment (a path or the PEM text)
  OFFSET_VAULT_APPROVER_KEY=/run/secrets/bob.key offset-vault approve billing.plan";

pub const KEYGEN_EXAMPLES: &str = "\
Examples:
  # A key pair for the CI job that takes snapshots: ci.key (secret, mode 0600) and ci.pub;
  # it then signs with --signing-key ci.key, and readers trust it with --trusted-key ci.pub
  offset-vault keygen --out /etc/offset-vault/ci
  offset-vault keygen --out ./alice --output json";

pub const AUDIT_EXAMPLES: &str = "\
Examples:
  # Everything changed or refused in the last day
  offset-vault audit --since 24h

  # One group's restores and resets, as JSON (the events as stored, CloudEvents 1.0)
  offset-vault audit --since 2026-12-01 --group billing --output json

  # Send the last week's events to a SIEM topic
  offset-vault audit --since 7d --to-kafka security.audit

What is recorded: one event per restore or reset --execute (refusals too), prune --execute,
import, guard, and gap follow records in the commit-log archive. A command writes an opened
marker (audit/open/ID.json) before it changes anything; a marker without its event is listed
as unfinished: the process ended before it wrote its outcome. --audit required (the default)
makes a command fail before any change when the marker cannot be written.";

/// Examples of `config`, with a file to start from.
pub const CONFIG_EXAMPLES: &str = "\
Examples:
  offset-vault config show
  offset-vault --context staging config show --output json
  offset-vault config list-contexts
  offset-vault config use-context prod

A configuration file ($XDG_CONFIG_HOME/offset-vault/config.toml, or --config FILE):
  current-context = \"prod\"

  [contexts.prod]
  bootstrap-server = \"kafka-1:9092,kafka-2:9092\"
  connect-url = [\"http://connect:8083\"]
  store = \"s3://backups/offsets\"
  command-config = \"prod-client.properties\"   # relative to this file
  properties = { \"sasl.mechanism\" = \"SCRAM-SHA-512\" }
  encrypt-to = [\"age1...\"]                     # snapshot --encrypt-to
  identity = \"vault-identity.txt\"              # restore --identity, relative to this file

Precedence, highest first: flags, environment variables, the context, built-in defaults.";

pub const MCP_EXAMPLES: &str = "Examples:
  # For an MCP client that starts servers over stdio (read and plan only)
  offset-vault --context prod mcp

  # Also offer apply_plan (each plan confirmed by the person where the client can ask)
  offset-vault --context prod mcp --allow-apply --require-approvals 1

  # Streamable HTTP on the loopback interface
  offset-vault mcp --listen 127.0.0.1:8765";
