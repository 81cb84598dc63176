/**
 * src/cluster/engine — the cluster on NATS JetStream (ARCHITECTURE: ride an existing engine, never
 * a home-made transport): the connection and its streams, KV and object store (engine.ts), the
 * hand-off batches of URLs and STAR votes (batch-codec.ts, router.ts, inbox.ts), the members and
 * leases view (view.ts), per-IP slots across nodes (ip-slots.ts) and partition snapshots
 * (snapshot.ts). docs/cluster.md.
 */
export { BatchBuilder, decodeBatch, type Batch } from './batch-codec.js';
export { ensurePartitions, fromJson, isCasConflict, isTransient, jsonBytes, openEngine, type Engine } from './engine.js';
export { Inbox } from './inbox.js';
export { JOIN_MS, NodeIpGate, defaultSlotMs, ipKey, slotStart, type SlotRule } from './ip-slots.js';
export { Router } from './router.js';
export { deleteSnapshot, downloadPartition, packDir, unpackDir, uploadPartition } from './snapshot.js';
export { ClusterView, LIVE_MS, metaOrCreate, releaseLease, restored, takeLease, type CrawlMeta, type Lease, type MemberStatus } from './view.js';
