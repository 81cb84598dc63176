/**
 * src/cluster — one crawl across N drumcrawl nodes on NATS JetStream (docs/cluster.md). Each node
 * stays a whole IRLbot server; the cluster only decides who owns what and carries URLs between
 * owners. A PLD's partition (its key mod P, P fixed at creation) holds all of its URLs, hosts,
 * robots.txt, URLseen entries, STAR in-degree and BEAST counts; partitions are placed on nodes by
 * rendezvous hashing and owned through leases (compare-and-set in a KV bucket); each partition is a
 * crawler over its own state directory, so it can move between nodes.
 *
 *   partition.ts       partitionOf, rendezvous placement, node/crawl name rules
 *   options.ts         the --cluster flags; crawl-wide vs node-local settings
 *   engine.ts          NATS connection, the stream, consumers, KV bucket and object store
 *   view.ts            the node's watch of the KV bucket: meta, members, leases; lease CAS
 *   batch-codec.ts     the URL + vote batch a node publishes to a partition
 *   router.ts          per-partition batching, Nats-Msg-Id publishes, the bound on RAM
 *   inbox.ts           a partition's pull consumer: admit, hold, acknowledge after the checkpoint
 *   star-link.ts       STAR across nodes: votes to their target's owner; the crawl-wide rank context
 *   ip-slots.ts        per-IP politeness across partitions and nodes
 *   partition-host.ts  one partition: a Crawler on the node's shared parts; the ClusterPort it calls
 *   placement.ts       which partitions a node runs: leases taken, partitions opened and handed off
 *   snapshot.ts        a partition's directory packed into the object store and back (moves)
 *   forget.ts          `cluster forget`: a node lost for good gives up its leases and IP registrations
 *   node.ts            a node: shared parts, heartbeat, leave, the end of the crawl, status surfaces
 *   status.ts          the node's snapshot and metrics, `drumcrawl cluster status`
 *
 * Imports: cli → cluster → crawl (through src/crawl/ports/cluster-port.ts and CrawlerOptions.shared).
 */
export { ClusterNode, type NodeStartOptions, type NodeSummary } from './node.js';
export { splitClusterArgs, defaultNodeId, CLUSTER_FLAGS, NODE_LOCAL_KEYS, type ClusterArgs } from './options.js';
export { partitionOf, ownerOf, placement, DEFAULT_PARTITIONS, MAX_PARTITIONS } from './partition.js';
export { openEngine, names, type Engine } from './engine/engine.js';
export { readClusterTable, formatClusterTable, type ClusterTable, type NodeSnapshot } from './status.js';
export { decodeBatch, BatchBuilder, type Batch } from './engine/batch-codec.js';
export type { CrawlMeta, Lease, MemberStatus } from './engine/view.js';
