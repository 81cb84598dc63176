/**
 * The cluster's engine: NATS with JetStream (docs/cluster.md, "Engine"). One connection per node;
 * for a crawl named C:
 *
 *   stream  DC_C      subjects dc.C.p.<n> (one per partition), file storage, work-queue retention:
 *                     a batch stays on disk until the owner of its partition acknowledges it;
 *                     publishes carry Nats-Msg-Id, so a publish retried within the duplicate
 *                     window (2 min) is stored once
 *   consumer p<n>     one durable pull consumer per partition, filter dc.C.p.<n>, explicit acks;
 *                     a batch not acknowledged within ACK_WAIT_MS (and not kept alive with
 *                     in-progress acks) is delivered again
 *   KV      dc_C      meta (the crawl: partitions, seeds, config), done, node.<id> (membership and
 *                     each node's figures), lease.<p> (who owns partition p: compare-and-set on
 *                     the revision), hist.<p> (partition p's STAR in-degree histogram), ip.<ip>
 *                     (the nodes that crawl an IP: ip-slots.ts)
 *   objects dc_C_parts  a partition's state while it moves between nodes (snapshot.ts)
 */
import { connect, AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, nanos, type JetStreamClient, type JetStreamManager, type KV, type NatsConnection, type ObjectStore } from 'nats';
import { CrawlError } from '../../errors.js';

/** A batch is delivered again when neither acknowledged nor kept alive within this (ms). */
export const ACK_WAIT_MS = 30_000;
/** Batches delivered to a partition's owner and not yet acknowledged, at most (the server holds more back). */
export const MAX_ACK_PENDING = 1024;
/** Publishes with one Nats-Msg-Id within this window (ms) are stored once. */
export const DUPLICATE_WINDOW_MS = 120_000;

export interface EngineNames {
  stream: string;
  bucket: string;
  objects: string;
  subject(p: number): string;
  consumer(p: number): string;
}

export function names(crawl: string): EngineNames {
  return {
    stream: `DC_${crawl}`,
    bucket: `dc_${crawl}`,
    objects: `dc_${crawl}_parts`,
    subject: (p) => `dc.${crawl}.p.${p}`,
    consumer: (p) => `p${p}`,
  };
}

export interface Engine {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  names: EngineNames;
  objects(): Promise<ObjectStore>;
  close(): Promise<void>;
}

/**
 * Connects (retrying for ever while the server is away: a node outlives a restart of
 * nats-server, its publishes and acks wait) and makes sure the stream and the KV bucket exist.
 * The partitions' consumers are made by ensurePartitions once P is known.
 */
export async function openEngine(url: string, crawl: string, node: string): Promise<Engine> {
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: url, name: `drumcrawl ${crawl}/${node}`, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: false, timeout: 10_000 });
  } catch (e) {
    throw new CrawlError('CRAWL_CLUSTER_UNREACHABLE', `cannot reach the cluster's NATS server at ${url}: ${(e as Error).message}`, { cause: e });
  }
  const n = names(crawl);
  const jsm = await nc.jetstreamManager().catch((e: unknown) => {
    throw new CrawlError('CRAWL_CLUSTER_UNREACHABLE', `${url} has no JetStream (start nats-server with -js): ${(e as Error).message}`, { cause: e });
  });
  try {
    await jsm.streams.info(n.stream);
  } catch {
    await jsm.streams.add({
      name: n.stream,
      subjects: [`dc.${crawl}.p.*`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    }).catch(async (e: unknown) => {
      // Another node made it meanwhile.
      await jsm.streams.info(n.stream).catch(() => { throw e; });
    });
  }
  const js = nc.jetstream();
  const kv = await js.views.kv(n.bucket, { history: 1, allow_direct: false });
  let os: ObjectStore | null = null;
  return {
    nc, js, jsm, kv, names: n,
    objects: async () => (os ??= await js.views.os(n.objects)),
    close: async () => {
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
}

/** The durable pull consumer of each partition (idempotent: an existing one is kept). */
export async function ensurePartitions(e: Engine, P: number): Promise<void> {
  const have = new Set<string>();
  for await (const c of e.jsm.consumers.list(e.names.stream)) have.add(c.name);
  for (let p = 0; p < P; p++) {
    const name = e.names.consumer(p);
    if (have.has(name)) continue;
    await e.jsm.consumers.add(e.names.stream, {
      durable_name: name,
      filter_subject: e.names.subject(p),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ACK_WAIT_MS),
      max_ack_pending: MAX_ACK_PENDING,
      max_deliver: -1,
    }).catch((err: unknown) => {
      // Made by another node meanwhile: fine.
      if (!/already|exists/i.test((err as Error).message)) throw err;
    });
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function jsonBytes(v: unknown): Uint8Array {
  return enc.encode(JSON.stringify(v));
}

export function fromJson<T>(b: Uint8Array): T {
  return JSON.parse(dec.decode(b)) as T;
}

/**
 * An error the engine gives while nats-server is away or slow (a timeout, no responders, a
 * disconnect, JetStream's "not available" answers): the operation is tried again later, never
 * a reason to stop the crawl.
 */
export function isTransient(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && ['TIMEOUT', 'DISCONNECT', 'CONNECTION_CLOSED', 'CONNECTION_REFUSED', 'CONNECTION_TIMEOUT', '503', '408', 'REQUEST_ERROR', 'CANCELLED'].includes(code);
}

/** The error of a compare-and-set that lost (the key changed, or exists, since it was read). */
export function isCasConflict(e: unknown): boolean {
  return /wrong last sequence|key exists/i.test((e as Error).message ?? '');
}
