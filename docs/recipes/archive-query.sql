-- The newest archived committed offset of every (group, topic, partition), across the whole
-- archive, read in place. The date=YYYY-MM-DD folders become a `date` column.
SELECT group_id, topic, "partition",
       arg_max(committed_offset, captured_at) AS committed_offset,
       max(captured_at) AS captured_at,
       count(DISTINCT snapshot_id) AS snapshots
FROM read_parquet('ARCHIVE/snapshots/*/*/offsets.parquet', hive_partitioning = true)
GROUP BY ALL
ORDER BY group_id, topic, "partition";
