/**
 * What a cluster shows (docs/cluster.md, "Operating it"): a node's status snapshot — its
 * partitions' crawler snapshots summed, plus the cluster's figures — its Prometheus families, and
 * the whole crawl's table for `drumcrawl cluster status`: every member's progress, each
 * partition's holder, backlog (batches waiting in the stream), in flight (delivered, not yet
 * acknowledged) and redeliveries, read from JetStream's consumer info.
 */
import type { StatusSnapshot } from '../monitor/stats.js';
import { Exposition } from '../monitor/metrics-exposition.js';
import type { Engine } from './engine/engine.js';
import type { Lease, MemberStatus, CrawlMeta, ClusterView } from './engine/view.js';
import { LIVE_MS } from './engine/view.js';

export interface PartitionRow {
  p: number;
  holder: string | null;
  lease: Lease['state'] | null;
  /** batches in the stream not yet delivered */
  backlog: number;
  /** delivered and not yet acknowledged */
  inFlight: number;
  redelivered: number;
}

export interface MemberRow extends MemberStatus {
  live: boolean;
}

export interface ClusterTable {
  crawl: string;
  partitions: number;
  done: boolean;
  /** batches in the stream (waiting or unacknowledged), and their bytes */
  streamMessages: number;
  streamBytes: number;
  members: MemberRow[];
  rows: PartitionRow[];
}

/** The whole crawl's state, read from the KV bucket and JetStream (one consumer info per partition). */
export async function readClusterTable(e: Engine, meta: CrawlMeta, only?: ReadonlySet<number>): Promise<ClusterTable> {
  const members: MemberRow[] = [];
  const now = Date.now();
  const keys: string[] = [];
  for await (const k of await e.kv.keys('node.*')) keys.push(k);
  for (const k of keys.sort()) {
    const en = await e.kv.get(k);
    if (en === null || en.operation !== 'PUT') continue;
    const m = en.json<MemberStatus>();
    // Live: written within LIVE_MS by the server's clock (this reader may be on another machine).
    members.push({ ...m, live: m.state !== 'stopped' && now - en.created.getTime() <= LIVE_MS + 2_000 });
  }
  const rows: PartitionRow[] = [];
  for (let p = 0; p < meta.partitions; p++) {
    if (only !== undefined && !only.has(p)) continue;
    const le = await e.kv.get(`lease.${p}`);
    const l = le !== null && le.operation === 'PUT' ? le.json<Lease>() : null;
    let backlog = 0;
    let inFlight = 0;
    let redelivered = 0;
    try {
      const ci = await e.jsm.consumers.info(e.names.stream, e.names.consumer(p));
      backlog = ci.num_pending;
      inFlight = ci.num_ack_pending;
      redelivered = ci.num_redelivered;
    } catch {
      // consumer not made yet
    }
    rows.push({ p, holder: l?.node ?? null, lease: l?.state ?? null, backlog, inFlight, redelivered });
  }
  const si = await e.jsm.streams.info(e.names.stream);
  const done = (await e.kv.get('done'))?.operation === 'PUT';
  return { crawl: meta.crawl, partitions: meta.partitions, done, streamMessages: si.state.messages, streamBytes: si.state.bytes, members, rows };
}

/** The table as text (what `drumcrawl cluster status` prints). */
export function formatClusterTable(t: ClusterTable): string {
  const lines: string[] = [];
  lines.push(`crawl ${t.crawl}: ${t.partitions} partitions, ${t.done ? 'done' : 'running'}; stream holds ${t.streamMessages} batches (${t.streamBytes} bytes)`);
  lines.push('');
  lines.push('node                 state     live  partitions  pages      pages/s  acked    published  CPU s');
  for (const m of t.members) {
    lines.push(
      `${m.id.padEnd(20)} ${m.state.padEnd(9)} ${(m.live ? 'yes' : 'no').padEnd(5)} ${String(m.hosted.length).padEnd(11)} ${String(m.pages).padEnd(10)} ` +
      `${m.pagesPerSec.toFixed(1).padEnd(8)} ${String(m.acked).padEnd(8)} ${String(m.published).padEnd(10)} ${m.cpuSeconds.toFixed(1)}`,
    );
  }
  lines.push('');
  lines.push('partition  holder               lease  backlog  in-flight  redelivered');
  for (const r of t.rows) {
    lines.push(`${String(r.p).padEnd(10)} ${(r.holder ?? '-').padEnd(20)} ${(r.lease ?? '-').padEnd(6)} ${String(r.backlog).padEnd(8)} ${String(r.inFlight).padEnd(10)} ${r.redelivered}`);
  }
  return lines.join('\n') + '\n';
}

/** The cluster's figures a node adds to its status snapshot (GET /status `cluster`). */
export interface ClusterFigures {
  crawl: string;
  node: string;
  partitions: number;
  hosted: number[];
  settled: number[];
  done: boolean;
  members: { id: string; state: string; live: boolean; hosted: number }[];
  published: number;
  publishedBytes: number;
  routedUrls: number;
  routedVotes: number;
  publishRetries: number;
  routerPendingBytes: number;
  admitted: number;
  acked: number;
  held: number;
  rows: PartitionRow[];
}

export type NodeSnapshot = StatusSnapshot & { cluster: ClusterFigures };

/** Partitions' snapshots summed into the node's (process-wide figures — RSS, CPU — taken once). */
export function sumSnapshots(parts: readonly StatusSnapshot[], base: StatusSnapshot): StatusSnapshot {
  const s: StatusSnapshot = { ...base, outcomes: {}, topPlds: [] };
  const add = (k: keyof StatusSnapshot): void => {
    (s as unknown as Record<string, number>)[k] = parts.reduce((a, x) => a + ((x as unknown as Record<string, number>)[k] ?? 0), 0);
  };
  for (const k of ['pages', 'requisites', 'pagesOk', 'bytes', 'pagesPerSec', 'mbPerSec', 'urlsSeen', 'urlsDiscovered', 'urlsQueued', 'duplicates', 'inFlight', 'parsing', 'robotsFetches', 'urlsReady', 'checkpoints'] as const) add(k);
  s.beast = { j: Math.max(0, ...parts.map((x) => x.beast.j)), switches: parts.reduce((a, x) => a + (x.beast.switches ?? 0), 0), qfSize: parts.reduce((a, x) => a + x.beast.qfSize, 0), qrSize: parts.reduce((a, x) => a + x.beast.qrSize, 0) };
  s.hosts = { active: parts.reduce((a, x) => a + x.hosts.active, 0), waiting: parts.reduce((a, x) => a + x.hosts.waiting, 0) };
  s.ips = { active: parts.reduce((a, x) => a + x.ips.active, 0), waiting: parts.reduce((a, x) => a + x.ips.waiting, 0) };
  for (const x of parts) for (const [k, v] of Object.entries(x.outcomes)) s.outcomes[k] = (s.outcomes[k] ?? 0) + v;
  s.topPlds = parts.flatMap((x) => x.topPlds).sort((a, b) => b.pages - a.pages).slice(0, 20);
  const cps = parts.map((x) => x.lastCheckpointAt).filter((x): x is string => x !== null).sort();
  s.lastCheckpointAt = cps.length > 0 ? cps[cps.length - 1]! : null;
  s.cpuMsPerPage = s.pages > 0 ? (s.cpuSeconds * 1000) / s.pages : 0;
  return s;
}

/** The cluster's Prometheus families (docs/operations.md lists them). */
export function clusterMetrics(f: ClusterFigures): Exposition {
  const e = new Exposition();
  e.gauge('drumcrawl_cluster_partitions', 'Partitions of the cluster crawl.', f.partitions);
  e.gauge('drumcrawl_cluster_hosted_partitions', 'Partitions this node holds the lease of and runs.', f.hosted.length);
  e.gauge('drumcrawl_cluster_settled_partitions', 'Hosted partitions with nothing to do, checkpointed, nothing held.', f.settled.length);
  e.gauge('drumcrawl_cluster_live_members', 'Members whose record changed within the liveness window.', f.members.filter((m) => m.live).length);
  e.gauge('drumcrawl_cluster_done', 'The cluster crawl has ended everywhere (1) or not (0).', f.done ? 1 : 0);
  e.counter('drumcrawl_cluster_published_batches_total', 'URL batches this node published (acknowledged by JetStream).', f.published);
  e.counter('drumcrawl_cluster_published_bytes_total', 'Bytes of the URL batches this node published.', f.publishedBytes);
  e.counter('drumcrawl_cluster_routed_urls_total', 'URLs of other partitions this node handed off.', f.routedUrls);
  e.counter('drumcrawl_cluster_routed_votes_total', 'STAR votes for other partitions\' PLDs this node handed off.', f.routedVotes);
  e.counter('drumcrawl_cluster_publish_retries_total', 'Publishes retried (same Nats-Msg-Id) after an error or timeout.', f.publishRetries);
  e.gauge('drumcrawl_cluster_router_pending_bytes', 'Bytes routed and not yet stored in the stream.', f.routerPendingBytes);
  e.counter('drumcrawl_cluster_admitted_batches_total', 'Batches received and admitted into hosted partitions.', f.admitted);
  e.counter('drumcrawl_cluster_acked_batches_total', 'Batches acknowledged after the checkpoint holding them committed.', f.acked);
  e.gauge('drumcrawl_cluster_held_batches', 'Batches admitted, waiting for a checkpoint to be acknowledged.', f.held);
  e.family('drumcrawl_cluster_partition_backlog', 'gauge', 'Batches waiting in the stream for a hosted partition.', f.rows.map((r) => ({ labels: { partition: String(r.p) }, value: r.backlog })));
  e.family('drumcrawl_cluster_partition_in_flight', 'gauge', 'Batches delivered to a hosted partition and not yet acknowledged.', f.rows.map((r) => ({ labels: { partition: String(r.p) }, value: r.inFlight })));
  e.family('drumcrawl_cluster_partition_redelivered', 'gauge', 'Batches JetStream delivered to a hosted partition more than once.', f.rows.map((r) => ({ labels: { partition: String(r.p) }, value: r.redelivered })));
  return e;
}

/**
 * The end of the crawl (node.ts): every partition's lease held by a live node that reports it
 * settled and is quiet, the stream empty, and the same members' figures read again after that —
 * each node writes its acknowledgement count before it acknowledges, so a batch acknowledged
 * between the two reads changes the second; one not acknowledged is still in the stream.
 */
export async function crawlEnded(e: Engine, view: ClusterView, partitions: number, me: string): Promise<boolean> {
  const before = await settledFingerprint(e, view, partitions, me);
  if (before === null) return false;
  const si = await e.jsm.streams.info(e.names.stream);
  if (si.state.messages > 0) return false;
  const after = await settledFingerprint(e, view, partitions, me);
  return after !== null && after === before;
}

/** Each holder's settled partitions and acknowledgement count, or null when not everything is settled. */
async function settledFingerprint(e: Engine, view: ClusterView, P: number, me: string): Promise<string | null> {
  const holder = new Map<number, string>();
  for (let p = 0; p < P; p++) {
    const en = await e.kv.get(`lease.${p}`);
    if (en === null || en.operation !== 'PUT') return null;
    const l = en.json<Lease>();
    if (l.state !== 'held') return null;
    holder.set(p, l.node);
  }
  const parts: string[] = [];
  for (const id of new Set(holder.values())) {
    if (id !== me && !view.isLive(id)) return null;
    const en = await e.kv.get(`node.${id}`);
    if (en === null || en.operation !== 'PUT') return null;
    const m = en.json<MemberStatus>();
    if (!m.quiet) return null;
    for (const [p, h] of holder) if (h === id && !m.settled.includes(p)) return null;
    parts.push(`${id}:${m.acked}:${m.settled.join('.')}`);
  }
  return parts.sort().join('|');
}
