/** What `Frontier.stats()` reports (frontier.ts): BEAST's queues, the RAM part's fill against its bounds, the politeness heaps. */
export interface FrontierStats {
  /** BEAST: number of queues j, current queue, queues emptied, doublings of j. */
  j: number;
  current: number;
  switches: number;
  doublings: number;
  /** URLs waiting in Q1..Qj, in QF + QH, in QR (all on disk). */
  beastQueued: number;
  /** QF (over budget) + QH (deferred: host full in RAM); `qh` alone below. */
  qf: number;
  qh: number;
  qr: number;
  /** URLs held in RAM (queued per host + in flight) and the cap. */
  ramUrls: number;
  ramCap: number;
  /** Estimated heap bytes of the URLs in RAM (frontierUrlRamBytes) and its bound (maxUrlBytes). */
  ramUrlBytes: number;
  ramUrlBytesCap: number;
  /** Estimated heap bytes of the host table, its bound (maxHostBytes) and its entries' bound (maxHosts). */
  hostBytes: number;
  hostBytesCap: number;
  hostCap: number;
  inFlight: number;
  hosts: number;
  ips: number;
  /** IPs with URLs queued in RAM (the refill's breadth term). */
  ipsWithWork: number;
  hostHeap: number;
  ipHeap: number;
  pendingRobots: number;
  admitted: number;
  released: number;
  robotsReleased: number;
  deferred: number;
  dropped: Record<string, number>;
  qrRescans: number;
  /** Records all QR rescans read (refill.ts: at most 64 per robots answer and 4,096 per second, amortized). */
  qrRescanReads: number;
  /** The last whole QR pass changed nothing (refill.ts rescanPaid). */
  qrFruitless: boolean;
  /** The last QR pass's own time (ms; its pauses left out: refill.ts rescanQr), what the ninth rule compares with. */
  qrPassMs: number;
  /** Hosts handed out for robots/DNS and not answered yet, besides those still in QD. */
  robotsOutstanding: number;
  /** The host table by what keeps each entry (HostTable.hostStates). */
  hostStates: { asking: number; withUrls: number; held: number; evictable: number; other: number };
}
